"""Fixtures for rules/checks/parallel.py: the GPUs a layout takes, MIG, and P2P within a TP group."""

H200X8 = "facts/h200x8-nvlink.json"
H200X4_PCIE = "facts/h200x4-pcie-no-p2p.json"
MIG = "facts/h200x2-mig.json"
QWEN = ["--model", "qwen3-8b"]
SGLANG_SERVE = ["sglang", "serve", "--model-path"]

FIXTURES = {
    "parallel-gpu-count": {
        "pass": [
            {"gpu": "8xH100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "8"]},
            {"gpu": "H100", "argv": ["--gpu-count", "4", "--tp-size", "2", "--pp-size", "2"]},
        ],
        "fail": [
            {"gpu": "4xH100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "8"]},
            {  # DP replicas beside TP: 16 GPUs
                "gpu": "H100",
                "argv": ["--gpu-count", "8"],
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "qwen3-8b",
                    "--tp",
                    "8",
                    "--dp",
                    "2",
                ],
            },
        ],
    },
    "parallel-mig-tp": {
        "pass": [{"facts": H200X8, "argv": [*QWEN, "--tp-size", "2"]}, {"facts": MIG, "argv": QWEN}],
        "fail": [{"facts": MIG, "argv": [*QWEN, "--tp-size", "2"]}],
    },
    "parallel-p2p": {
        "pass": [{"facts": H200X8, "argv": [*QWEN, "--tp-size", "8"]}],
        "fail": [
            {"facts": H200X4_PCIE, "argv": [*QWEN, "--tp-size", "4"], "expect": "warn"},
            {"facts": H200X4_PCIE, "argv": [*QWEN, "--tp-size", "2"], "expect": "warn"},  # two GPUs, still no P2P
        ],
    },
    "parallel-cp-decode-attn-tp-model": {
        "pass": [
            {"gpu": "8xB200", "command": [*SGLANG_SERVE, "glm-5", "--tp-size", "8", "--enable-cp-decode-attn-tp"]},
            {
                "gpu": "8xB200",
                "command": [*SGLANG_SERVE, "glm-5", "--tp-size", "8", "--enable-cp-decode-attn-tp"],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
        "fail": [
            {
                "gpu": "8xB200",
                "command": [*SGLANG_SERVE, "deepseek-v3", "--tp-size", "8", "--enable-cp-decode-attn-tp"],
            },
            {
                "gpu": "8xH100",
                "command": [*SGLANG_SERVE, "llama-3.1-70b", "--tp-size", "8", "--enable-cp-decode-attn-tp"],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
}
