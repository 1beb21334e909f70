"""Fixtures for rules/engines/sglang/rules/fa4.py."""

LLAMA = ["--model", "llama-3.1-8b"]
DSV3 = ["--model", "deepseek-v3"]
FA4 = ["--attention-backend", "fa4"]
GEMMA4 = ("--model", "tests/fixtures/incident-models/gemma-4")
GEMMA4_LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", GEMMA4[1]]
MODELOPT_FP8_KV = ("--model", "tests/fixtures/models/synthetic-modelopt-fp8-kv")

FIXTURES = {
    "fa4-arch": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, *FA4]}, {"gpu": "GB10", "argv": [*LLAMA, *FA4]}],
        "fail": [
            {"gpu": "T4", "argv": [*LLAMA, *FA4]},
            {"gpu": "V100", "argv": [*LLAMA, "--decode-attention-backend", "fa4"]},
        ],
    },
    "fa4-paged-kv-sm8x": {
        "pass": [{"gpu": "H200", "argv": [*LLAMA, *FA4]}],
        "fail": [{"gpu": "A100", "argv": [*LLAMA, *FA4]}, {"gpu": "sm_89", "argv": [*LLAMA, *FA4]}],
    },
    "fa4-fp8-sm100": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, *FA4, "--kv-cache-dtype", "fp8_e4m3"]},
            {"gpu": "B300", "argv": [*LLAMA, *FA4, "--kv-cache-dtype", "fp8_e5m2"]},
        ],
        "fail": [
            {"gpu": "H200", "argv": [*LLAMA, *FA4, "--kv-cache-dtype", "fp8_e4m3"]},
            # auto runs the checkpoint's FP8 E4M3 in the backends (sglang 0.5.9+ model_runner writes it back)
            {"gpu": "H200", "argv": [*MODELOPT_FP8_KV, *FA4]},
            {"gpu": "RTX PRO 6000", "argv": [*LLAMA, *FA4, "--kv-cache-dtype", "fp8_e4m3"]},
            {"gpu": "Jetson Thor", "argv": [*LLAMA, *FA4, "--kv-cache-dtype", "fp8_e5m2"]},
            # 0.5.10-0.5.15 run the flash-attn-4 wheel, which asserts the same from 4.0.0b10
            {
                "gpu": "H200",
                "argv": [*LLAMA, *FA4, "--kv-cache-dtype", "fp8_e4m3"],
                "engine_version": ["sglang==0.5.14", "flash-attn-4==4.0.0b15"],
            },
        ],
    },
    "fa4-head-dim-sm90": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "gemma-2-9b", *FA4]},
            {"gpu": "H100", "argv": [*DSV3, *FA4]},
            # Gemma-4: sliding layers (256, 256), full-attention layers global_head_dim (512, 512), SM90 from 0.5.22
            {"gpu": "H100", "argv": [*GEMMA4, *FA4], "engine_version": ["sglang==0.5.22"]},
        ],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "tests/fixtures/models/synthetic-head-dim-320", *FA4]},
            {"gpu": "H100", "argv": [*GEMMA4, *FA4], "engine_version": ["sglang==0.5.21"]},
        ],
    },
    "fa4-head-dim-sm100": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, *FA4]},
            {"gpu": "B200", "argv": [*DSV3, *FA4]},
            {"gpu": "GB200", "argv": ["--model", "gemma-2-9b", *FA4]},
        ],
        "fail": [
            {"gpu": "B200", "argv": ["--model", "tests/fixtures/models/synthetic-head-dim-320", *FA4]},
            {"gpu": "Jetson Thor", "argv": ["--model", "tests/fixtures/models/synthetic-head-dim-160", *FA4]},
        ],
    },
    "fa4-hd256-sm100": {
        "pass": [{"gpu": "B200", "argv": [*LLAMA, *FA4]}],
        "fail": [
            {"gpu": "B200", "argv": ["--model", "gemma-2-9b", *FA4]},
            {"gpu": "B300", "argv": ["--model", "qwen3-next-80b-a3b", *FA4]},
        ],
    },
    "fa4-mla-arch": {
        "pass": [{"gpu": "B200", "argv": [*DSV3, *FA4]}, {"gpu": "Jetson Thor", "argv": [*DSV3, *FA4]}],
        "fail": [{"gpu": "H100", "argv": [*DSV3, *FA4]}, {"gpu": "RTX 5090", "argv": ["--model", "kimi-k2", *FA4]}],
    },
    "fa4-deterministic-mla-arch": {
        "pass": [
            {"gpu": "B200", "argv": [*DSV3, *FA4, "--enable-deterministic-inference"]},
            {"gpu": "Jetson Thor", "argv": ["--model", "deepseek-r1", "--backend", "fa4", "--deterministic"]},
        ],
        "fail": [
            {"gpu": "H100", "argv": [*DSV3, *FA4, "--enable-deterministic-inference"]},
            {"gpu": "RTX 5090", "argv": ["--model", "deepseek-v2-lite", *FA4, "--deterministic"]},
            {
                "gpu": "sm_90",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "deepseek-v3",
                    "--attention-backend",
                    "fa4",
                    "--enable-deterministic-inference",
                ],
            },
        ],
    },
    "fa4-score-mod-sm8x": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, *FA4, "--feature", "score_mod"]}],
        "fail": [
            {"gpu": "A100", "argv": [*LLAMA, *FA4, "--feature", "score_mod"]},
            {
                "gpu": "A10G",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "fa4",
                    "--decode-attention-backend",
                    "triton",
                    "--feature",
                    "score_mod",
                ],
            },
        ],
    },
    "fa4-softcap-score-mod": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, *FA4, "--feature", "score_mod"]}],
        "fail": [{"gpu": "H100", "argv": ["--model", "gemma-2-9b", *FA4, "--feature", "score_mod"]}],
    },
    "fa4-rel-bias-arch": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, *FA4, "--feature", "rel_bias"]},
            {"gpu": "RTX 5090", "argv": [*LLAMA, *FA4, "--feature", "rel_bias"]},
            {"gpu": "H100", "argv": [*LLAMA, *FA4, "--feature", "rel_bias"], "engine_version": ["sglang==0.5.16"]},
        ],
        "fail": [
            {"gpu": "A100", "argv": [*LLAMA, *FA4, "--feature", "rel_bias"]},
            {"gpu": "RTX 5090", "argv": ["--model", "gemma-2-9b", *FA4, "--feature", "rel_bias"]},
            # before the SM120 host (0.5.18) rel_bias asserts SM9x-SM11x (0.5.17 interface.py:866-870)
            {"gpu": "RTX 5090", "argv": [*LLAMA, *FA4, "--feature", "rel_bias"], "engine_version": ["sglang==0.5.17"]},
        ],
    },
    "fa4-prefill-only": {
        "pass": [
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--prefill-attention-backend", "fa4", "--decode-attention-backend", "fa3"],
                "engine_version": ["sglang==0.5.7"],
            }
        ],
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, *FA4], "engine_version": ["sglang==0.5.5"]},
            {
                "gpu": "B200",
                "argv": [*LLAMA, "--prefill-attention-backend", "triton", "--decode-attention-backend", "fa4"],
                "engine_version": ["sglang==0.5.4"],
            },
        ],
    },
    "fa4-page-size-128": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, *FA4, "--page-size", "128"]},
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--prefill-attention-backend", "fa4", "--page-size", "128"],
                "engine_version": ["sglang==0.5.8"],
            },
        ],
        "fail": [
            {"gpu": "B200", "argv": [*LLAMA, *FA4], "expect": "warn"},
            {"gpu": "B300", "argv": [*LLAMA, *FA4, "--page-size", "16"], "expect": "warn"},
            # before 0.5.10 an explicit prefill fa4 is rewritten on every GPU (0.5.8 server_args.py:1779)
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--prefill-attention-backend", "fa4", "--decode-attention-backend", "fa3"],
                "engine_version": ["sglang==0.5.8"],
                "expect": "warn",
            },
        ],
    },
    "fa4-sm12x-paged-kv": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, *FA4], "engine_version": ["sglang==0.5.17"]},
        ],
        "fail": [
            {"gpu": "RTX 5090", "argv": [*LLAMA, *FA4], "engine_version": ["sglang==0.5.17"]},
            {"gpu": "GB10", "argv": [*LLAMA, *FA4], "engine_version": ["sglang==0.5.13"]},
        ],
    },
    "fa4-sinks-dtype": {
        "pass": [
            {"gpu": "B200", "argv": ["--model", "gpt-oss-20b", "--attention-backend", "fa4"]},
            {
                "gpu": "B200",
                "argv": [
                    "--model",
                    "gpt-oss-20b",
                    "--attention-backend",
                    "triton",
                    "--prefill-attention-backend",
                    "fa4",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "argv": [
                    "--model",
                    "gpt-oss-20b",
                    "--attention-backend",
                    "trtllm_mha",
                    "--prefill-attention-backend",
                    "fa4",
                ],
            },
            {
                "gpu": "H100",
                "argv": [
                    "--model",
                    "gpt-oss-20b",
                    "--attention-backend",
                    "trtllm_mha",
                    "--decode-attention-backend",
                    "fa4",
                ],
            },
        ],
    },
    "fa4-image-masks": {
        "pass": [
            {"gpu": "H200", "argv": [*GEMMA4, *FA4]},
            # prefill CP with one CP rank shards nothing (init_cp_strategy's cp_size is --attn-cp-size)
            {"gpu": "H200", "command": [*GEMMA4_LAUNCH, *FA4, "--enable-prefill-cp", "--cp-strategy", "interleave"]},
            # embedding mode keeps the paged KV cache while chunked prefill is on
            {"gpu": "H200", "command": [*GEMMA4_LAUNCH, *FA4, "--is-embedding", "--disable-radix-cache"]},
        ],
        "fail": [
            {
                "gpu": "8xH200",
                "command": [
                    *GEMMA4_LAUNCH,
                    *FA4,
                    "--tp",
                    "8",
                    "--enable-prefill-cp",
                    "--cp-strategy",
                    "zigzag",
                    "--attn-cp-size",
                    "8",
                ],
            },
            # fa_skip_kv_cache: embedding mode without chunked prefill or the radix cache
            {
                "gpu": "H200",
                "command": [
                    *GEMMA4_LAUNCH,
                    *FA4,
                    "--is-embedding",
                    "--chunked-prefill-size",
                    "-1",
                    "--disable-radix-cache",
                ],
            },
            {"gpu": "B200", "argv": [*GEMMA4, *FA4, "--feature", "score_mod"]},
        ],
    },
}
