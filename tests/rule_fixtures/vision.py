"""Fixtures for rules/engines/sglang/constraints/vision.py."""

from tests.rule_fixtures import FIXTURES_DIR

GEMMA3 = ["--model", "gemma-3-27b"]
DSV4_SERVE = ["sglang", "serve", "--model-path", "tests/fixtures/models/DeepSeek-V4-Flash-Base"]
QWEN3_VL = ["--model", str(FIXTURES_DIR / "incident-models" / "qwen3-vl-4b")]

FIXTURES = {
    "vision-fa3-blackwell": {
        "pass": [{"gpu": "H100", "argv": [*GEMMA3, "--mm-attention-backend", "fa3"]}],
        "fail": [
            {"gpu": "B200", "argv": [*GEMMA3, "--mm-attention-backend", "fa3"]},
            {"gpu": "Jetson Thor", "argv": [*GEMMA3, "--mm-attention-backend", "fa3"]},
            {
                "gpu": "RTX 5090",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "gemma-3-27b",
                    "--mm-attention-backend",
                    "fa3",
                ],
            },
        ],
    },
    "vision-qwen3-vl-fa3": {
        "pass": [
            {"gpu": "H100", "argv": QWEN3_VL, "engine_version": ["sglang==0.5.4"]},
            {"gpu": "A100", "argv": QWEN3_VL, "engine_version": ["sglang==0.5.5"]},
        ],
        "fail": [
            {"gpu": "B200", "argv": QWEN3_VL, "engine_version": ["sglang==0.5.4"]},
            {"gpu": "RTX 5090", "argv": QWEN3_VL, "engine_version": ["sglang==0.5.5"]},
        ],
    },
    "model-language-model-only": {
        "pass": [
            {"gpu": "B200", "command": [*DSV4_SERVE, "--language-model-only"]},
            {"gpu": "B200", "command": [*DSV4_SERVE, "--language-model-only", "--tp-size", "8"]},
        ],
        "fail": [
            # DeepSeek-V4 joins the list in 0.5.22
            {"gpu": "B200", "command": [*DSV4_SERVE, "--language-model-only"], "engine_version": ["sglang==0.5.21"]},
            {"gpu": "B200", "command": [*DSV4_SERVE, "--language-model-only", "--encoder-only"]},
            {"gpu": "B200", "command": [*DSV4_SERVE, "--language-model-only", "--disaggregation-mode", "decode"]},
            {"gpu": "H100", "command": ["sglang", "serve", "--model-path", "gemma-3-27b", "--language-model-only"]},
        ],
    },
}
