"""Fixtures for rules/engines/sglang/rules/mla_backends.py."""

from tests.rule_fixtures.model_specific import case

LLAMA = ("--model", "llama-3.1-8b")
DEEPSEEK = ("--model", "deepseek-v3")

FIXTURES = {
    "trtllm-mha-arch": {
        "pass": [
            case("RTX 5090", *LLAMA, "--attention-backend", "trtllm_mha"),
            case("H100", *LLAMA, "--attention-backend", "trtllm_mha"),
            case("B200", *LLAMA, "--attention-backend", "trtllm_mha", engine_version=["sglang==0.5.9"]),
            case("B200", *LLAMA, "--attention-backend", "trtllm_mha", engine_version=["sglang==0.5.1"]),
            case(
                "RTX 5090",
                *LLAMA,
                "--prefill-attention-backend",
                "flashinfer",
                "--decode-attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.12"],
            ),
        ],
        "fail": [
            case("A100", *LLAMA, "--attention-backend", "trtllm_mha"),
            case("Jetson Thor", *LLAMA, "--attention-backend", "trtllm_mha"),
            # the SM120 history: refused before 0.5.19 for prefill, before 0.5.10 for decode too
            case("RTX 5090", *LLAMA, "--attention-backend", "trtllm_mha", engine_version=["sglang==0.5.18"]),
            case("RTX 5090", *LLAMA, "--attention-backend", "trtllm_mha", engine_version=["sglang==0.5.1"]),
            case(
                "H100",
                *LLAMA,
                "--decode-attention-backend",
                "trtllm_mha",
                "--prefill-attention-backend",
                "fa3",
                engine_version=["sglang==0.5.9"],
            ),
        ],
    },
    "trtllm-mha-sm120-fp8-prefill": {
        "pass": [
            case("RTX 5090", *LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "bf16"),
            case("RTX PRO 6000", *LLAMA, "--attention-backend", "trtllm_mha"),
        ],
        "fail": [
            case("RTX 5090", *LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3"),
            case(
                "DGX Spark",
                *LLAMA,
                "--prefill-attention-backend",
                "trtllm_mha",
                "--decode-attention-backend",
                "trtllm_mha",
                "--kv-cache-dtype",
                "fp8_e4m3",
            ),
        ],
    },
    "trtllm-mha-page": {
        "pass": [
            case("B200", *LLAMA, "--attention-backend", "trtllm_mha", "--page-size", "32"),
            case("B200", *LLAMA, "--attention-backend", "trtllm_mha"),
        ],
        "fail": [
            case("B200", *LLAMA, "--attention-backend", "trtllm_mha", "--page-size", "8", expect="warn"),
            case(
                "B200",
                *LLAMA,
                "--attention-backend",
                "trtllm_mha",
                "--page-size",
                "128",
                engine_version=["sglang==0.5.16"],
                expect="warn",
            ),
            case(
                "B200",
                *LLAMA,
                "--attention-backend",
                "trtllm_mha",
                "--page-size",
                "128",
                engine_version=["sglang==0.5.1"],
                expect="warn",
            ),
        ],
    },
    "trtllm-mha-page128-gqa": {
        "pass": [case("B200", *LLAMA, "--attention-backend", "trtllm_mha", "--page-size", "128")],
        "fail": [
            case("B200", "--attention-backend", "trtllm_mha", "--page-size", "128", model="llama-2-7b"),
            # 64 query / 8 KV heads over TP 64: one query head and one (replicated) KV head per rank
            case(
                "B200",
                "--model",
                "llama-3.1-70b",
                "--attention-backend",
                "trtllm_mha",
                "--page-size",
                "128",
                "--tp-size",
                "64",
            ),
        ],
    },
    "trtllm-mha-mla-model": {
        "pass": [case("B200", *LLAMA, "--attention-backend", "trtllm_mha")],
        "fail": [
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mha"),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "trtllm_mha"),
            case(
                "H100",
                "--model",
                "deepseek-v2-lite",
                "--decode-attention-backend",
                "trtllm_mha",
                "--prefill-attention-backend",
                "fa3",
            ),
        ],
    },
    "mla-backend-mha-model": {
        "pass": [
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            case("B200", *DEEPSEEK, "--attention-backend", "cutedsl_mla"),
        ],
        "fail": [
            case("B200", *LLAMA, "--attention-backend", "trtllm_mla"),
            case("B200", "--model", "qwen3-8b", "--decode-attention-backend", "cutedsl_mla"),
        ],
    },
    "flashmla-mha-model": {
        "pass": [
            case("H100", "--model", "kimi-k2", "--attention-backend", "flashmla"),
            case("B200", *DEEPSEEK, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.19"]),
        ],
        "fail": [
            case("H100", *LLAMA, "--attention-backend", "flashmla"),
            case("B200", "--model", "qwen3-8b", "--decode-attention-backend", "flashmla"),
            case("B200", *LLAMA, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.1"]),
        ],
    },
    "trtllm-mla-arch": {
        "pass": [
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            case("RTX PRO 6000", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
        ],
        "fail": [
            case("H100", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            case(
                "A100", *DEEPSEEK, "--decode-attention-backend", "trtllm_mla", "--prefill-attention-backend", "triton"
            ),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "trtllm_mla", engine_version=["sglang==0.5.8"]),
            # is_sm100_supported() through 0.5.4 (0.5.1 server_args.py:479-481): SM12x is refused too
            case("RTX PRO 6000", *DEEPSEEK, "--attention-backend", "trtllm_mla", engine_version=["sglang==0.5.3"]),
        ],
    },
    "trtllm-mla-sm100-prefill": {
        "pass": [
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            case("B300", *DEEPSEEK, "--attention-backend", "trtllm_mla", engine_version=["sglang==0.5.10"]),
            case(
                "B200", *DEEPSEEK, "--prefill-attention-backend", "trtllm_mla", "--decode-attention-backend", "triton"
            ),
        ],
        "fail": [
            # sglang#24633 (0.5.10) and sglang#17880 (0.5.8): admitted at start-up, "Unsupported architecture" at prefill
            case("RTX PRO 6000", *DEEPSEEK, "--attention-backend", "trtllm_mla", engine_version=["sglang==0.5.10"]),
            case("RTX 5090", *DEEPSEEK, "--attention-backend", "trtllm_mla", engine_version=["sglang==0.5.8"]),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            case(
                "GB10", *DEEPSEEK, "--prefill-attention-backend", "trtllm_mla", "--decode-attention-backend", "triton"
            ),
        ],
    },
    "trtllm-mla-kv-dtype": {
        "pass": [
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp8_e4m3"),
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "trtllm_mla",
                "--kv-cache-dtype",
                "fp4_e2m1",
                engine_version=["sglang==0.5.20"],
            ),
        ],
        "fail": [
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "bfloat16"),
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp8_e5m2"),
            case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "nvfp4"),
        ],
    },
    "trtllm-mla-page": {
        "pass": [case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla", "--page-size", "32")],
        "fail": [case("B200", *DEEPSEEK, "--attention-backend", "trtllm_mla", "--page-size", "16", expect="warn")],
    },
    "cutedsl-mla-decode-only": {
        "pass": [case("B200", *DEEPSEEK, "--attention-backend", "cutedsl_mla")],
        "fail": [
            case(
                "B200",
                *DEEPSEEK,
                "--prefill-attention-backend",
                "cutedsl_mla",
                "--decode-attention-backend",
                "cutedsl_mla",
            )
        ],
    },
    "cutedsl-mla-arch": {
        "pass": [
            case("B300", *DEEPSEEK, "--attention-backend", "cutedsl_mla"),
            case("B200", *DEEPSEEK, "--attention-backend", "tokenspeed_mla"),
        ],
        "fail": [
            case("RTX PRO 6000", *DEEPSEEK, "--attention-backend", "cutedsl_mla"),
            case("H100", *DEEPSEEK, "--decode-attention-backend", "cutedsl_mla", "--prefill-attention-backend", "fa3"),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "tokenspeed_mla"),
        ],
    },
    "cutedsl-mla-kv-dtype": {
        "pass": [case("B200", *DEEPSEEK, "--attention-backend", "cutedsl_mla", "--kv-cache-dtype", "bfloat16")],
        "fail": [case("B200", *DEEPSEEK, "--attention-backend", "cutedsl_mla", "--kv-cache-dtype", "fp8_e5m2")],
    },
    "cutedsl-mla-page": {
        "pass": [case("B200", *DEEPSEEK, "--attention-backend", "cutedsl_mla", "--page-size", "64")],
        "fail": [case("B200", *DEEPSEEK, "--attention-backend", "cutedsl_mla", "--page-size", "1", expect="warn")],
    },
    "tokenspeed-mla-arch": {
        "pass": [
            case(
                "RTX 5090",
                *DEEPSEEK,
                "--attention-backend",
                "tokenspeed_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                engine_version=["sglang==0.5.22"],
            ),
            # is_blackwell has admitted SM110 since 0.5.9, before tokenspeed_mla existed (0.5.12)
            case(
                "Jetson Thor",
                *DEEPSEEK,
                "--attention-backend",
                "tokenspeed_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                engine_version=["sglang==0.5.12"],
            ),
        ],
        "fail": [
            case(
                "H100",
                *DEEPSEEK,
                "--attention-backend",
                "tokenspeed_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                engine_version=["sglang==0.5.22"],
            )
        ],
    },
    "tokenspeed-mla-kv-dtype": {
        "pass": [
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "tokenspeed_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                engine_version=["sglang==0.5.15"],
            )
        ],
        "fail": [
            case("B200", *DEEPSEEK, "--attention-backend", "tokenspeed_mla", engine_version=["sglang==0.5.22"]),
            case("B200", *DEEPSEEK, "--attention-backend", "tokenspeed_mla", expect="warn"),
        ],
    },
    "tokenspeed-mla-page": {
        "pass": [
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "tokenspeed_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                "--page-size",
                "32",
                engine_version=["sglang==0.5.22"],
            )
        ],
        "fail": [
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "tokenspeed_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                "--page-size",
                "16",
                engine_version=["sglang==0.5.22"],
                expect="warn",
            )
        ],
    },
    "flashmla-arch": {
        "pass": [
            case("H100", *DEEPSEEK, "--attention-backend", "flashmla"),
            case("H200", *DEEPSEEK, "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3"),
        ],
        "fail": [
            # FlashMLA's SM100 kernels are sparse only (the kernel: "FP8 Dence MLA is not supported on SM100")
            case("B200", *DEEPSEEK, "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3"),
            case("B200", *DEEPSEEK, "--attention-backend", "flashmla", engine_version=["sglang==0.5.4.post3"]),
            case("RTX 5090", *DEEPSEEK, "--attention-backend", "flashmla"),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "flashmla"),
            case("A100", *DEEPSEEK, "--attention-backend", "flashmla"),
        ],
    },
    "flashmla-page": {
        "pass": [
            case("H100", *DEEPSEEK, "--attention-backend", "flashmla", "--page-size", "64"),
            case("H100", *DEEPSEEK, "--attention-backend", "flashmla"),
        ],
        "fail": [case("H100", *DEEPSEEK, "--attention-backend", "flashmla", "--page-size", "16", expect="warn")],
    },
    "cutlass-mla-arch": {
        "pass": [case("B200", *DEEPSEEK, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.19"])],
        "fail": [
            case("H100", *DEEPSEEK, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.19"]),
            case("Jetson Thor", *DEEPSEEK, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.19"]),
            case("RTX 5090", *DEEPSEEK, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.10"]),
        ],
    },
    "cutlass-mla-fp8-kv": {
        "pass": [case("B200", *DEEPSEEK, "--attention-backend", "cutlass_mla", engine_version=["sglang==0.5.4"])],
        "fail": [
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "cutlass_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                engine_version=["sglang==0.5.4"],
            ),
            case(
                "B200",
                *DEEPSEEK,
                "--decode-attention-backend",
                "cutlass_mla",
                "--kv-cache-dtype",
                "fp8_e4m3",
                engine_version=["sglang==0.5.19"],
            ),
        ],
    },
    "cutlass-mla-page": {
        "pass": [
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "cutlass_mla",
                "--page-size",
                "128",
                engine_version=["sglang==0.5.19"],
            )
        ],
        "fail": [
            case(
                "B200",
                *DEEPSEEK,
                "--attention-backend",
                "cutlass_mla",
                "--page-size",
                "64",
                engine_version=["sglang==0.5.19"],
                expect="warn",
            )
        ],
    },
    "trtllm-mha-prefill-cp": {
        "pass": [
            {
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "trtllm_mha",
                    "--tp-size",
                    "2",
                    "--attn-cp-size",
                    "2",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "trtllm_mha",
                    "--tp-size",
                    "2",
                    "--attn-cp-size",
                    "2",
                ],
            },
            {
                "gpu": "RTX PRO 6000",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "trtllm_mha",
                    "--enable-prefill-context-parallel",
                ],
                "engine_version": ["sglang==0.5.19"],
            },
        ],
    },
    "trtllm-mla-dcp-speculative": {
        "pass": [
            {
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "deepseek-v3",
                    "--tp-size",
                    "8",
                    "--dcp-size",
                    "8",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--prefill-attention-backend",
                    "trtllm_mla",
                    "--decode-attention-backend",
                    "cutedsl_mla",
                    "--speculative-attention-mode",
                    "decode",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "deepseek-v3",
                    "--tp-size",
                    "8",
                    "--dcp-size",
                    "8",
                    "--speculative-algorithm",
                    "EAGLE",
                ],
            },
            {
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "deepseek-v3",
                    "--tp-size",
                    "8",
                    "--dcp-size",
                    "8",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--prefill-attention-backend",
                    "trtllm_mla",
                    "--decode-attention-backend",
                    "cutedsl_mla",
                ],
            },
        ],
    },
    "flashmla-fp8-dcp": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "deepseek-v3",
                    "--tp-size",
                    "8",
                    "--dcp-size",
                    "8",
                    "--attention-backend",
                    "flashmla",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "deepseek-v3",
                    "--tp-size",
                    "8",
                    "--dcp-size",
                    "8",
                    "--attention-backend",
                    "flashmla",
                    "--kv-cache-dtype",
                    "fp8_e4m3",
                ],
            },
        ],
    },
}
