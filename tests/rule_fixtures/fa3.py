"""Fixtures for rules/engines/sglang/rules/fa3.py."""

from tests.rule_fixtures import FIXTURES_DIR
from tests.rule_fixtures.model_specific import model_dir

LLAMA = ["--model", "llama-3.1-8b"]
DSV3 = ["--model", "deepseek-v3"]
MODELOPT_FP8_KV = ["--model", str(FIXTURES_DIR / "models" / "synthetic-modelopt-fp8-kv")]

FIXTURES = {
    "fa3-arch": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3"]},
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "fa3"]},
            {"gpu": "L40S", "argv": [*LLAMA, "--decode-attention-backend", "fa3"]},
        ],
        "fail": [
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "fa3"]},
            {
                "gpu": "RTX 5090",
                "argv": [*LLAMA, "--prefill-attention-backend", "fa3", "--decode-attention-backend", "triton"],
            },
            # deterministic inference with no backend falls back to fa3 on Thor
            {"gpu": "Jetson Thor", "argv": [*LLAMA, "--enable-deterministic-inference"]},
            # EXAONE 4 / OLMo 3 with no backend: SGLang's model default is fa3 on every GPU of SM80 or newer
            # (model_overrides/exaone.py, olmo2.py), which fa3 refuses on SM12x/SM110 (oracle: rejected at
            # backend init)
            {"gpu": "RTX 5090", "argv": ["--model", model_dir("exaone-4")]},
            {"gpu": "Jetson Thor", "argv": ["--model", model_dir("olmo-3")]},
        ],
    },
    "fa3-mla-sm8x": {
        "pass": [{"gpu": "H200", "argv": [*DSV3, "--attention-backend", "fa3"]}],
        "fail": [
            {"gpu": "A100", "argv": [*DSV3, "--attention-backend", "fa3"]},
            # deterministic inference with no backend falls back to fa3 on SM8x as well
            {"gpu": "L40S", "argv": ["--model", "deepseek-v2-lite", "--deterministic"]},
        ],
    },
    "fa3-score-mod": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3"]},
            {"gpu": "H100", "argv": ["--model", "gemma-2-9b", "--attention-backend", "fa3"]},
        ],
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--feature", "score_mod"]},
            {
                "gpu": "A100",
                "argv": [
                    "--feature",
                    "score_mod",
                    "--prefill-attention-backend",
                    "fa3",
                    "--decode-attention-backend",
                    "triton",
                ],
            },
        ],
    },
    "fa3-rel-bias": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3"]}],
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--feature", "rel_bias"]},
            {
                "gpu": "H20",
                "command": [
                    "python3",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "fa3",
                ],
                "argv": ["--feature", "rel_bias"],
            },
        ],
    },
    "fa3-fp8-e5m2-rewrite": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e4m3"]}],
        "fail": [
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"],
                "expect": "warn",
            },
            {  # the same rewrite in 0.5.10.post1 server_args.py:2399
                "gpu": "H100",
                "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"],
                "engine_version": ["sglang==0.5.10.post1"],
                "expect": "warn",
            },
            {
                "gpu": "H100",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "fa3",
                    "--decode-attention-backend",
                    "fa3",
                    "--kv-cache-dtype",
                    "fp8_e5m2",
                ],
                "expect": "warn",
            },
        ],
    },
    "fa3-fp8-sm8x": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e4m3"]},
            # the checkpoint's FP8 E4M3 (for auto) on SM90, where fa3 reads it
            {"gpu": "H100", "argv": [*MODELOPT_FP8_KV, "--attention-backend", "fa3"]},
        ],
        "fail": [
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e4m3"]},
            # auto: the model runner writes the checkpoint's FP8 E4M3 over it before the backend is built
            {"gpu": "A100", "argv": [*MODELOPT_FP8_KV, "--attention-backend", "fa3"]},
            {
                "gpu": "RTX 4090",
                "argv": [
                    *LLAMA,
                    "--decode-attention-backend",
                    "fa3",
                    "--prefill-attention-backend",
                    "flashinfer",
                    "--kv-cache-dtype",
                    "fp8_e4m3",
                ],
            },
            # the oldest release read: the same q cast and sgl-kernel FA3
            {
                "gpu": "A100",
                "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e4m3"],
                "engine_version": ["sglang==0.5.0rc2"],
            },
        ],
    },
    "fa3-head-dim": {
        "pass": [{"gpu": "H100", "argv": ["--model", "gemma-2-9b", "--attention-backend", "fa3"]}],
        "fail": [
            # Gemma-4's full-attention layers: global_head_dim 512
            {
                "gpu": "H100",
                "argv": ["--model", "tests/fixtures/incident-models/gemma-4", "--attention-backend", "fa3"],
            },
            {
                "gpu": "H100",
                "argv": [
                    "--model",
                    "tests/fixtures/models/synthetic-head-dim-320/config.json",
                    "--attention-backend",
                    "fa3",
                ],
            },
            {
                "gpu": "H100",
                "argv": [
                    "--model",
                    "tests/fixtures/models/synthetic-head-dim-320/config.json",
                    "--attention-backend",
                    "fa3",
                ],
                "engine_version": ["sglang==0.5.0rc2"],
            },
            {
                "gpu": "A100",
                "argv": [
                    "--model",
                    "tests/fixtures/models/synthetic-asymmetric-kv/config.json",
                    "--attention-backend",
                    "fa3",
                ],
            },
        ],
    },
    "fa3-dtype": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--dtype", "bfloat16"]}],
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--dtype", "float32"]},
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--attention-backend", "fa3", "--dtype", "float32"],
                "engine_version": ["sglang==0.5.0rc2"],
            },
        ],
    },
}
