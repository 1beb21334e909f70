"""Fixtures for rules/checks/vision.py."""

from tests.rule_fixtures import FIXTURES_DIR

GEMMA3 = ["--model", "gemma-3-27b"]
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
}
