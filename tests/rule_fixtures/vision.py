"""Fixtures for rules/checks/vision.py."""

GEMMA3 = ["--model", "gemma-3-27b"]

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
}
