"""Fixtures for rules/engines/sglang/rules/kv_cache.py. Two config.json excerpts are written to the session's temporary directory (written_model): an
EmbeddingGemma one (the two keys SGLang's is_embedding_gemma reads, model_type gemma3_text and
use_bidirectional_attention, with an illustrative Gemma-3 text shape) and a Step-3.5 one (the architecture SGLang's
_step3p_overrides keys on, with an illustrative shape)."""

from tests.rule_fixtures import written_model

LLAMA = ["--model", "llama-3.1-8b"]
DSV3 = ["--model", "deepseek-v3"]
INKLING = ["--model", "tests/fixtures/models/synthetic-inkling"]
MXFP8 = ["--kv-cache-dtype", "mxfp8"]
PREFILL_ONLY = [
    "--",
    "python",
    "-m",
    "sglang.launch_server",
    "--model-path",
    "llama-3.1-8b",
    "--is-embedding",
    "--prefill-only-disable-kv-cache",
    "--chunked-prefill-size",
    "-1",
    "--disable-radix-cache",
    "--attention-backend",
    "fa3",
]

# SM100 NVFP4 with an FP8 E4M3 prefill workspace: prefill flashinfer, decode trtllm_mha (the mixed pair)
NVFP4_MIXED_EAGLE = [
    "python",
    "-m",
    "sglang.launch_server",
    "--model-path",
    "llama-3.1-8b",
    "--kv-cache-dtype",
    "nvfp4",
    "--prefill-kv-cache-dequant-dtype",
    "fp8_e4m3",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "llama-3.1-8b",
]


def serve(model: str, *flags: str) -> list[str]:
    """A pasted `sglang serve` launch of `model` with `flags`."""
    return ["sglang", "serve", "--model-path", model, *flags]


EMBEDDING_GEMMA = written_model(
    "embedding-gemma",
    {
        "architectures": ["Gemma3TextModel"],
        "model_type": "gemma3_text",
        "use_bidirectional_attention": True,
        "hidden_size": 768,
        "num_attention_heads": 3,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "num_hidden_layers": 24,
        "sliding_window": 512,
    },
)
BUFFER_ONLY = ("--enable-hierarchical-cache", "--hicache-host-memory-mode", "buffer_only")


def hicache_layout(layout: str, io: str) -> tuple[str, ...]:
    return ("--enable-hierarchical-cache", "--hicache-mem-layout", layout, "--hicache-io-backend", io)


TLRU = ("--radix-eviction-policy", "tlru", "--radix-eviction-policy-config")
LINKER = "--enable-unified-cache-external-linker"
HICACHE_DCP = ("--enable-hierarchical-cache", "--tp-size", "8", "--dcp-size", "2")
# Step-3.5's architecture (overrides.py _step3p_overrides keys on it) with an illustrative attention shape
STEP3P5 = written_model(
    "step3p5",
    {
        "architectures": ["Step3p5ForCausalLM"],
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 32,
        "sliding_window": 512,
    },
)
NO_KV = ("--prefill-only-disable-kv-cache", "--chunked-prefill-size", "-1", "--disable-radix-cache")
UNIFIED = "--enable-unified-memory"
INT8_MAMBA = "--enable-int8-mamba-checkpoint"
STOCHASTIC = ("--enable-mamba-cache-stochastic-rounding",)
DECODE = ("--disaggregation-mode", "decode")
DECODE_OFFLOAD = ("--disaggregation-decode-enable-offload-kvcache", "--hicache-storage-backend", "file")
SHARDED = ("--enable-kv-cache-sharding", "--attention-backend", "fa3")
SHARDED_PD = ("--enable-kv-cache-sharding", "--disaggregation-mode", "prefill", "--tp-size", "8")
GLM5_NEXTN = "tests/fixtures/models/synthetic-glm-5-nextn"
# a GQA prefill worker sharding over 4 prefill-CP ranks at page 64: what kv_shard_hook.py asks of a GQA model
SHARDED_CP = (
    *SHARDED,
    "--disaggregation-mode",
    "prefill",
    "--tp-size",
    "4",
    "--enable-prefill-cp",
    "--cp-strategy",
    "interleave",
    "--attn-cp-size",
    "4",
    "--page-size",
    "64",
)
FULL_PREFILL_GRAPH = ("--cuda-graph-backend-prefill", "full")
ASYMMETRIC = "tests/fixtures/models/synthetic-asymmetric-kv"

FIXTURES = {
    "kv-mxfp8-requires-fa4": {
        "pass": [{"gpu": "B200", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8, "--page-size", "128"]}],
        "fail": [
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "fa3", *MXFP8]},
            {
                "gpu": "B200",
                "argv": [*LLAMA, "--prefill-attention-backend", "fa4", "--decode-attention-backend", "triton", *MXFP8],
            },
            {
                "gpu": "H100",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "./m",
                    "--attention-backend",
                    "fa3",
                    "--kv-cache-dtype",
                    "mxfp8",
                ],
                "argv": LLAMA,
            },
        ],
    },
    "kv-mxfp8-q-scales": {
        "pass": [{"gpu": "B200", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]}],
        "fail": [{"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "fa4", *MXFP8]}],
    },
    "kv-mxfp8-arch": {
        "pass": [
            {"gpu": "B200", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
            {"gpu": "Jetson Thor", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
        ],
        "fail": [
            {"gpu": "H100", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
            {"gpu": "A100", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
        ],
    },
    "kv-mxfp8-kernel-arch": {
        "pass": [{"gpu": "B300", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]}],
        "fail": [
            {"gpu": "RTX 5090", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
            {"gpu": "Jetson Thor", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
        ],
    },
    "kv-mxfp8-page-size": {
        "pass": [{"gpu": "B200", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]}],
        "fail": [
            {
                "gpu": "B200",
                "argv": [
                    *INKLING,
                    "--attention-backend",
                    "fa4",
                    *MXFP8,
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-eagle-topk",
                    "4",
                ],
            },
            {"gpu": "RTX PRO 6000", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]},
            # 0.5.21 is the first release whose set_kv_buffer asserts the interleaved (page 128) layout
            {
                "gpu": "RTX PRO 6000",
                "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8],
                "engine_version": ["sglang==0.5.21"],
            },
        ],
    },
    "kv-mxfp8-head-dim": {
        "pass": [{"gpu": "B200", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]}],
        "fail": [
            {"gpu": "B200", "argv": ["--model", "tests/fixtures/models/phi-2", "--attention-backend", "fa4", *MXFP8]},
            {
                "gpu": "B200",
                "argv": ["--model", "tests/fixtures/models/phi-2", "--attention-backend", "fa4", *MXFP8],
                "engine_version": ["sglang==0.5.16"],
            },
        ],
    },
    "kv-mxfp8-prefill-only": {
        "pass": [{"gpu": "H100", "argv": PREFILL_ONLY}],
        "fail": [
            {"gpu": "B200", "argv": [*MXFP8, *PREFILL_ONLY]},
            {"gpu": "B200", "argv": [*MXFP8, *PREFILL_ONLY], "engine_version": ["sglang==0.5.16"]},
        ],
    },
    "kv-prefill-only-preconditions": {
        "pass": [{"gpu": "H100", "argv": PREFILL_ONLY}],
        "fail": [
            {"gpu": "H100", "argv": [*PREFILL_ONLY[:-5], "--attention-backend", "fa3"]},
            {"gpu": "H100", "argv": [*PREFILL_ONLY[:-3], "--attention-backend", "fa3"]},
        ],
    },
    "kv-prefill-only-embedding": {
        "pass": [
            {"gpu": "H100", "argv": PREFILL_ONLY},
            {"gpu": "H100", "argv": PREFILL_ONLY, "engine_version": ["sglang==0.5.12"]},
        ],
        "fail": [
            {"gpu": "H100", "argv": [token for token in PREFILL_ONLY if token != "--is-embedding"]},
            {
                "gpu": "H100",
                "argv": [token for token in PREFILL_ONLY if token != "--is-embedding"],
                "engine_version": ["sglang==0.5.12"],
            },
        ],
    },
    "kv-prefill-only-backend": {
        "pass": [
            {"gpu": "H100", "argv": PREFILL_ONLY},
            {"gpu": "B200", "argv": [*PREFILL_ONLY[:-2], "--prefill-attention-backend", "fa4"]},
        ],
        "fail": [
            # SM100's default is trtllm_mha
            {"gpu": "B200", "argv": PREFILL_ONLY[:-2]},
            {"gpu": "H100", "argv": [*PREFILL_ONLY[:-2], "--attention-backend", "flashinfer"]},
        ],
    },
    "kv-fp4-prefill-only": {
        "pass": [{"gpu": "H100", "argv": PREFILL_ONLY}],
        "fail": [
            {"gpu": "B200", "argv": ["--kv-cache-dtype", "fp4_mx_block16", *PREFILL_ONLY]},
            {"gpu": "B200", "argv": ["--kv-cache-dtype", "nvfp4", *PREFILL_ONLY], "engine_version": ["sglang==0.5.16"]},
        ],
    },
    "kv-nvfp4-native-transfer": {
        "pass": [{"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"]}],
        "fail": [
            {
                "gpu": "B200",
                "command": serve("llama-3.1-8b", "--kv-cache-dtype", "nvfp4", "--disaggregation-mode", "prefill"),
            },
            {
                "gpu": "B200",
                "command": serve("llama-3.1-8b", "--kv-cache-dtype", "nvfp4", "--enable-hierarchical-cache"),
            },
        ],
    },
    "kv-fp4-unified-memory": {
        "pass": [{"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"]}],
        "fail": [
            {"gpu": "B200", "command": serve("llama-3.1-8b", UNIFIED, "--kv-cache-dtype", "nvfp4")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--kv-cache-dtype", "fp4_mx_block16")},
        ],
    },
    "kv-nvfp4-arch": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"]},
            {"gpu": "GB10", "argv": [*LLAMA, "--kv-cache-dtype", "nvfp4"]},
        ],
        # (off Hopper, SGLang's NVFP4 plan puts trtllm_mha on decode, which other rules refuse first)
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, "--kv-cache-dtype", "nvfp4"]},
            {"gpu": "H20", "argv": [*LLAMA, "--attention-backend", "flashinfer", "--kv-cache-dtype", "nvfp4"]},
        ],
    },
    "kv-nvfp4-dequant-dtype": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "fp8_e4m3"]},
            {
                "gpu": "B200",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--kv-cache-dtype",
                    "nvfp4",
                    "--prefill-kv-cache-dequant-dtype",
                    "fp8_e4m3",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--kv-cache-dtype",
                    "fp8_e4m3",
                    "--prefill-kv-cache-dequant-dtype",
                    "fp8_e4m3",
                ],
            },
        ],
    },
    "kv-nvfp4-speculative": {
        "pass": [
            {
                "gpu": "B200",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--kv-cache-dtype",
                    "nvfp4",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-draft-model-path",
                    "llama-3.1-8b",
                ],
            },
            {
                "gpu": "B200",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--kv-cache-dtype",
                    "nvfp4",
                    "--speculative-algorithm",
                    "NGRAM",
                    "--speculative-ngram-max-bfs-breadth",
                    "1",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--kv-cache-dtype",
                    "nvfp4",
                    "--speculative-algorithm",
                    "NGRAM",
                ],
            },
            {
                "gpu": "B200",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--kv-cache-dtype",
                    "nvfp4",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-draft-model-path",
                    "llama-3.1-8b",
                    "--speculative-draft-attention-backend",
                    "fa4",
                ],
            },
        ],
    },
    "kv-nvfp4-backends": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "nvfp4"]},
            {"gpu": "RTX 5090", "argv": [*LLAMA, "--attention-backend", "flashinfer", "--kv-cache-dtype", "nvfp4"]},
        ],
        "fail": [
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "triton", "--kv-cache-dtype", "nvfp4"]},
            {"gpu": "RTX 5090", "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"]},
            # DeepSeek's SM100 default (trtllm_mla) is set before the NVFP4 step
            {"gpu": "B200", "argv": [*DSV3, "--kv-cache-dtype", "nvfp4"]},
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--attention-backend",
                    "flashinfer",
                    "--decode-attention-backend",
                    "flashinfer",
                    "--kv-cache-dtype",
                    "nvfp4",
                ],
            },
        ],
    },
    "kv-nvfp4-rewrite": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "nvfp4"]},
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "flashinfer",
                    "--decode-attention-backend",
                    "trtllm_mha",
                    "--kv-cache-dtype",
                    "nvfp4",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "B300",
                "argv": ["--model", "qwen3-8b", "--attention-backend", "flashinfer", "--kv-cache-dtype", "nvfp4"],
                "expect": "warn",
            }
        ],
    },
    "kv-fp4-mha-backend": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"]},
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "triton", "--kv-cache-dtype", "fp4_mx_block16"]},
        ],
        "fail": [
            {
                "gpu": "B200",
                "argv": [*LLAMA, "--attention-backend", "flashinfer", "--kv-cache-dtype", "fp4_mx_block16"],
            },
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3", "--kv-cache-dtype", "fp4_mx_block16"]},
            # sglang 0.5.16's own resolution (bench/sglang_release_oracle.py): "KV4 MHA expects attention_backend
            # to be one of ['triton', 'torch_native', 'flex_attention', 'trtllm_mha'], but got flashinfer"
            {
                "gpu": "B200",
                "argv": [*LLAMA, "--attention-backend", "flashinfer", "--kv-cache-dtype", "nvfp4"],
                "engine_version": ["sglang==0.5.16"],
            },
        ],
    },
    "kv-fp4-mla-backend": {
        # sglang 0.5.16's own resolution (bench/sglang_release_oracle.py): cutlass_mla accepted, triton refused
        # with "KV4 MLA expects attention_backend to be one of ['cutlass_mla', 'flashinfer', 'trtllm_mla'], ..."
        "pass": [
            {"gpu": "B200", "argv": [*DSV3, "--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp4_mx_block16"]},
            {
                "gpu": "B200",
                "argv": [*DSV3, "--attention-backend", "cutlass_mla", "--kv-cache-dtype", "nvfp4"],
                "engine_version": ["sglang==0.5.16"],
            },
        ],
        "fail": [
            {"gpu": "B200", "argv": [*DSV3, "--attention-backend", "triton", "--kv-cache-dtype", "fp4_mx_block16"]},
            {"gpu": "B200", "argv": [*DSV3, "--attention-backend", "flashmla", "--kv-cache-dtype", "fp4_mx_block16"]},
            {
                "gpu": "B200",
                "argv": [*DSV3, "--attention-backend", "triton", "--kv-cache-dtype", "nvfp4"],
                "engine_version": ["sglang==0.5.16"],
            },
        ],
    },
    "kv-fp4-fa4-mha-decode": {
        "pass": [
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "fa4",
                    "--decode-attention-backend",
                    "triton",
                    "--kv-cache-dtype",
                    "fp4_mx_block16",
                ],
            }
        ],
        "fail": [
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "fa4", "--kv-cache-dtype", "fp4_mx_block16"]},
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "fa4",
                    "--decode-attention-backend",
                    "trtllm_mha",
                    "--kv-cache-dtype",
                    "fp4_mx_block16",
                ],
            },
        ],
    },
    "kv-fp4-fa4-mla-decode": {
        "pass": [
            {
                "gpu": "B200",
                "argv": [
                    *DSV3,
                    "--prefill-attention-backend",
                    "fa4",
                    "--decode-attention-backend",
                    "trtllm_mla",
                    "--kv-cache-dtype",
                    "fp4_mx_block16",
                ],
            }
        ],
        "fail": [{"gpu": "B200", "argv": [*DSV3, "--attention-backend", "fa4", "--kv-cache-dtype", "fp4_mx_block16"]}],
    },
    "kv-fp4-mixed-phases": {
        "pass": [
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "flashinfer",
                    "--decode-attention-backend",
                    "trtllm_mha",
                    "--kv-cache-dtype",
                    "nvfp4",
                ],
            }
        ],
        "fail": [
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "triton",
                    "--decode-attention-backend",
                    "trtllm_mha",
                    "--kv-cache-dtype",
                    "fp4_mx_block16",
                ],
                "expect": "warn",
            },
            # the NVFP4 flashinfer + trtllm_mha recipe is warned about before 0.5.21 (no uses_mixed_nvfp4)
            {
                "gpu": "B200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "flashinfer",
                    "--decode-attention-backend",
                    "trtllm_mha",
                    "--kv-cache-dtype",
                    "nvfp4",
                ],
                "engine_version": ["sglang==0.5.20"],
                "expect": "warn",
            },
        ],
    },
    "kv-dtype-removed": {
        "pass": [
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "fp4_mx_block16"]},
            {"gpu": "H100", "argv": [*LLAMA, "--kv-cache-dtype", "fp8_e4m3"], "engine_version": ["sglang==0.5.1"]},
            # fp4_e2m1 is a choice from 0.5.4.post3 through 0.5.20
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "fp4_e2m1"], "engine_version": ["sglang==0.5.20"]},
        ],
        "fail": [
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "fp4_e2m1"]},
            # sglang 0.5.1 lists auto, fp8_e5m2, fp8_e4m3; nvfp4 and mxfp8 came in 0.5.16
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "nvfp4"], "engine_version": ["sglang==0.5.1"]},
            {"gpu": "B200", "argv": [*LLAMA, "--kv-cache-dtype", "mxfp8"], "engine_version": ["sglang==0.5.15"]},
            {"gpu": "H100", "argv": [*LLAMA, "--kv-cache-dtype", "bf16"], "engine_version": ["sglang==0.5.3"]},
        ],
    },
    "kv-fp4-torch": {
        "pass": [
            {
                "facts": "facts/b200-torch-2.9-cu128.json",
                "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"],
            }
        ],
        # that machine has sglang 0.5.10; the pin says it will run 0.5.23
        "fail": [
            {
                "facts": "facts/b200-torch-2.6-cu124.json",
                "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"],
                "engine_version": ["sglang==0.5.23"],
            }
        ],
    },
    "kv-mxfp8-torch": {
        "pass": [
            {"facts": "facts/b200-torch-2.9-cu128.json", "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8]}
        ],
        "fail": [
            {
                "facts": "facts/b200-torch-2.6-cu124.json",
                "argv": [*INKLING, "--attention-backend", "fa4", *MXFP8],
                "engine_version": ["sglang==0.5.23"],
            }
        ],
    },
    "kv-nvfp4-spec-attention-mode": {
        "pass": [{"gpu": "B200", "command": [*NVFP4_MIXED_EAGLE, "--speculative-attention-mode", "decode"]}],
        "fail": [
            {"gpu": "B200", "command": NVFP4_MIXED_EAGLE, "expect": "warn"},
            {
                "gpu": "B300",
                "command": [*NVFP4_MIXED_EAGLE, "--speculative-attention-mode", "prefill"],
                "expect": "warn",
            },
        ],
    },
    "kv-page-major-backends": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--attention-backend", "fa3")},
            {"gpu": "B200", "command": serve("deepseek-v3", UNIFIED, "--enable-page-major-kv-layout")},
            {"gpu": "H100", "command": serve(ASYMMETRIC, UNIFIED, "--attention-backend", "fa3")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--enable-page-major-kv-layout")},
            {"gpu": "A100", "command": serve("llama-3.1-8b", UNIFIED, "--attention-backend", "torch_native")},
            {"gpu": "H100", "command": serve(ASYMMETRIC, UNIFIED, "--attention-backend", "flashinfer")},
            {
                "gpu": "H100",
                "command": serve(ASYMMETRIC, UNIFIED, "--attention-backend", "fa3"),
                "engine_version": ["sglang==0.5.22"],
            },
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-v3",
                    UNIFIED,
                    "--attention-backend",
                    "flashinfer",
                    "--decode-attention-backend",
                    "trtllm_mha",
                ),
                "engine_version": ["sglang==0.5.19"],
            },
        ],
    },
    "kv-page-major-linear-attn": {
        "pass": [
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", UNIFIED)},
            {
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", UNIFIED, "--linear-attn-prefill-backend", "flashinfer"),
            },
            {  # MLA (KDA-hybrid) models may decode on cutedsl
                "gpu": "B200",
                "command": serve(
                    "tests/fixtures/models/synthetic-kimi-k3", UNIFIED, "--linear-attn-decode-backend", "cutedsl"
                ),
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", UNIFIED, "--linear-attn-decode-backend", "cutedsl")},
            {
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", UNIFIED, "--linear-attn-prefill-backend", "cutedsl"),
            },
            # asserted whatever the model
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--linear-attn-decode-backend", "cutedsl")},
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", UNIFIED, "--mamba-backend", "flashinfer")},
            {  # prefill flashinfer is admitted from 0.5.23
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", UNIFIED, "--linear-attn-prefill-backend", "flashinfer"),
                "engine_version": ["sglang==0.5.22"],
            },
        ],
    },
    "kv-unified-memory-speculative": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-20b", UNIFIED, "--attention-backend", "fa3", "--speculative-algorithm", "EAGLE3"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", UNIFIED, "--attention-backend", "fa3", "--speculative-algorithm", "DFLASH"
                ),
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", UNIFIED, "--attention-backend", "fa3", "--speculative-algorithm", "EAGLE"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-20b", UNIFIED, "--attention-backend", "fa3", "--speculative-algorithm", "NGRAM"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-20b",
                    UNIFIED,
                    "--attention-backend",
                    "fa3",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-eagle-topk",
                    "4",
                    "--speculative-num-steps",
                    "3",
                ),
            },
            {
                "gpu": "B200",
                "command": serve(
                    "gpt-oss-20b", UNIFIED, "--attention-backend", "fa4", "--speculative-algorithm", "EAGLE"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-20b",
                    UNIFIED,
                    "--attention-backend",
                    "fa3",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-draft-attention-backend",
                    "fa4",
                ),
            },
        ],
    },
    "kv-unified-memory-dcp": {
        "pass": [
            {"gpu": "B200", "command": serve("deepseek-v3", UNIFIED, "--tp-size", "8", "--dcp-size", "8")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--tp-size", "2", "--dcp-size", "2")},
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-v3", UNIFIED, "--tp-size", "8", "--dcp-size", "8", "--attention-backend", "fa3"
                ),
            },
        ],
    },
    "kv-prefill-only-pool-writers": {
        "pass": [{"gpu": "H100", "argv": PREFILL_ONLY}],
        "fail": [
            {"gpu": "H100", "argv": [*PREFILL_ONLY, "--tp-size", "2", "--attn-cp-size", "2"]},
            {
                "gpu": "H100",
                "argv": [*PREFILL_ONLY, "--enable-prefill-context-parallel"],
                "engine_version": ["sglang==0.5.13"],
            },
            {"gpu": "H100", "argv": [*PREFILL_ONLY, "--enable-hisparse"]},
        ],
    },
    "kv-unified-memory-cache-features": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--attention-backend", "fa3")}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--enable-two-batch-overlap")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--enable-lmcache")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, "--enable-unified-cache-external-linker")},
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-20b", UNIFIED, "--speculative-algorithm", "EAGLE", "--enable-hierarchical-cache"
                ),
            },
        ],
    },
    "kv-prefill-only-embedding-gemma": {
        "pass": [
            {"gpu": "H100", "command": serve(EMBEDDING_GEMMA, *NO_KV)},
            {"gpu": "B200", "command": serve(EMBEDDING_GEMMA, *NO_KV, "--attention-backend", "fa4")},
        ],
        "fail": [
            {"expect": "warn", "gpu": "H100", "command": serve(EMBEDDING_GEMMA)},
            {"expect": "warn", "gpu": "H200", "command": serve(EMBEDDING_GEMMA, "--attention-backend", "fa3")},
            # the re-validation refuses what the rewrite brings (kv_cache_hook.py:919-937)
            {"gpu": "H100", "command": serve(EMBEDDING_GEMMA, "--tp-size", "2", "--attn-cp-size", "2")},
            {"gpu": "H100", "command": serve(EMBEDDING_GEMMA, "--enable-hisparse")},
        ],
    },
    "kv-unified-memory-pd": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, *DECODE, "--attention-backend", "fa3")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, *DECODE, *DECODE_OFFLOAD)},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", UNIFIED, *DECODE, "--disaggregation-decode-retraction-backup", "host_pool"
                ),
            },
            # the decode host pools are judged from 0.5.21 (kv_cache_hook.py:512-545)
            {
                "gpu": "H100",
                "command": serve("deepseek-v3", UNIFIED, *DECODE, *DECODE_OFFLOAD, "--tp-size", "8"),
                "engine_version": ["sglang==0.5.20"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", UNIFIED, *DECODE, "--disaggregation-transfer-backend", "nixl"),
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, *DECODE, "--pp-size", "2")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", UNIFIED, *DECODE, "--enable-hisparse")},
            {
                "gpu": "H100",
                "command": ["SGLANG_DISABLE_LAZY_COMPACTION=1", *serve("llama-3.1-8b", UNIFIED, *DECODE)],
            },
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-20b", UNIFIED, "--disaggregation-mode", "prefill", "--speculative-algorithm", "EAGLE"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    UNIFIED,
                    *DECODE,
                    "--disaggregation-decode-enable-offload-kvcache",
                    "--hicache-storage-backend",
                    "mooncake",
                ),
            },
            {"gpu": "H100", "command": serve("deepseek-v3", UNIFIED, *DECODE, *DECODE_OFFLOAD, "--tp-size", "8")},
            {"gpu": "H100", "command": serve("gpt-oss-20b", UNIFIED, *DECODE, *DECODE_OFFLOAD)},
            {
                "gpu": "H100",
                "command": serve(
                    "qwen3-next-80b-a3b", UNIFIED, *DECODE, "--disaggregation-decode-retraction-backup", "host_pool"
                ),
            },
        ],
    },
    "kv-hicache-radix-cache": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", "--enable-hierarchical-cache")}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--enable-hierarchical-cache", "--disable-radix-cache")}
        ],
    },
    "kv-lmcache-compatibility": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", "--enable-lmcache")}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--enable-lmcache", *refused)}
            for refused in (
                ["--enable-hierarchical-cache"],
                ["--enable-unified-cache-external-linker"],
                ["--disable-radix-cache"],
                ["--speculative-algorithm", "NGRAM"],
                ["--tp-size", "2", "--attn-dp-size", "2"],
                ["--tp-size", "2", "--dcp-size", "2"],
                ["--enable-streaming-session"],
                ["--hicache-host-memory-mode", "buffer_only"],
                ["--disaggregation-mode", "prefill"],
            )
        ],
    },
    "kv-hicache-dcp": {
        "pass": [
            {"gpu": "H200", "command": serve("deepseek-v3", *HICACHE_DCP)},
            {"gpu": "H200", "command": serve("deepseek-v3", *HICACHE_DCP, "--hicache-storage-backend", "file")},
            {
                "gpu": "H200",
                "command": serve("deepseek-v3", *HICACHE_DCP, "--speculative-algorithm", "DSPARK"),
                "engine_version": ["sglang==0.5.18"],
            },
        ],
        "fail": [
            {
                "gpu": "H200",
                "command": serve("llama-3.1-8b", "--enable-hierarchical-cache", "--tp-size", "8", "--dcp-size", "2"),
            },
            {"gpu": "H200", "command": serve("deepseek-v3", *HICACHE_DCP, "--enable-hisparse")},
            {"gpu": "H200", "command": serve("deepseek-v3", *HICACHE_DCP, "--speculative-algorithm", "EAGLE")},
            {
                "gpu": "H200",
                "command": serve(
                    "deepseek-v3",
                    *HICACHE_DCP,
                    "--hicache-storage-backend",
                    "file",
                    "--hicache-host-memory-mode",
                    "buffer_only",
                ),
            },
            # 0.5.17-0.5.22 refuse any L3 storage under DCP; 0.5.17 any draft (server_args.py:7160-7177)
            {
                "gpu": "H200",
                "command": serve("deepseek-v3", *HICACHE_DCP, "--hicache-storage-backend", "file"),
                "engine_version": ["sglang==0.5.22"],
            },
            {
                "gpu": "H200",
                "command": serve("deepseek-v3", *HICACHE_DCP, "--speculative-algorithm", "DSPARK"),
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
    "kv-external-linker": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", LINKER)},
            {"gpu": "H100", "command": serve("deepseek-v3", LINKER, "--enable-linker-mla-dedup", "--tp-size", "8")},
            # the radix-cache refusal is 0.5.23's (hicache_hook.py:44-48)
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", LINKER, "--disable-radix-cache"),
                "engine_version": ["sglang==0.5.22"],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", LINKER, "--enable-hierarchical-cache")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", LINKER, "--hicache-storage-backend", "file")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", LINKER, "--disable-radix-cache")},
            {"gpu": "H100", "command": serve("deepseek-v3", "--enable-linker-mla-dedup", "--tp-size", "8")},
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-v3",
                    LINKER,
                    "--unified-cache-external-linker-backend",
                    "mori",
                    "--enable-linker-mla-dedup",
                    "--tp-size",
                    "8",
                ),
            },
        ],
    },
    "kv-hicache-buffer-only": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", *BUFFER_ONLY, "--hicache-storage-backend", "file")}],
        "fail": [
            {
                "expect": "warn",
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *BUFFER_ONLY,
                    "--hicache-storage-backend",
                    "file",
                    "--hicache-write-policy",
                    "write_back",
                ),
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", *BUFFER_ONLY)},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *DECODE,
                    "--hicache-host-memory-mode",
                    "buffer_only",
                    "--hicache-storage-backend",
                    "file",
                ),
            },
            # write_back is refused before 0.5.22 (hicache_hook.py:237-242 in 0.5.21)
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *BUFFER_ONLY,
                    "--hicache-storage-backend",
                    "file",
                    "--hicache-write-policy",
                    "write_back",
                ),
                "engine_version": ["sglang==0.5.21"],
            },
        ],
    },
    "kv-hicache-layout-rewrite": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--enable-hierarchical-cache")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *hicache_layout("page_first_direct", "direct"))},
            # Mooncake keeps layer_first under DCP (hicache_hook.py:197-200)
            {
                "gpu": "H200",
                "command": serve(
                    "deepseek-v3",
                    *hicache_layout("layer_first", "kernel"),
                    "--hicache-storage-backend",
                    "mooncake",
                    "--tp-size",
                    "8",
                    "--dcp-size",
                    "2",
                ),
            },
        ],
        "fail": [
            {
                "expect": "warn",
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *hicache_layout("page_first_direct", "kernel")),
            },
            {
                "expect": "warn",
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *hicache_layout("page_first", "direct")),
            },
            {
                "expect": "warn",
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *hicache_layout("layer_first", "kernel"), "--hicache-storage-backend", "mooncake"
                ),
            },
            {
                "expect": "warn",
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *hicache_layout("page_first_direct", "direct"),
                    UNIFIED,
                    "--attention-backend",
                    "fa3",
                ),
            },
        ],
    },
    "kv-radix-tlru-config": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *TLRU, '{"threshold": 4096, "next_prompt_estimate": 512}'),
            }
        ],
        "fail": [
            # no config: threshold and next_prompt_estimate both 0 (kv_cache_hook.py:377-379)
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--radix-eviction-policy", "tlru")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *TLRU, '{"threshold": 512, "next_prompt_estimate": 512}')},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *TLRU, '{"threshold": -1}')},
        ],
    },
    "kv-hicache-host-memory-fraction": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", "--hicache-host-memory-fraction", "0.5")}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--hicache-host-memory-fraction", value)}
            for value in ("0", "1.5")
        ],
    },
    "kv-swa-ratio-range": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("gpt-oss-20b", "--swa-full-tokens-ratio", "0.5", "--swa-prefix-tails", "0"),
            },
            # Step-3.5 with HiCache runs 1.0 whatever is given (overrides.py:351-355)
            {
                "gpu": "H100",
                "command": serve(STEP3P5, "--enable-hierarchical-cache", "--swa-full-tokens-ratio", "1.5"),
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("gpt-oss-20b", "--swa-full-tokens-ratio", value)} for value in ("0", "1.5")
        ]
        + [{"gpu": "H100", "command": serve("gpt-oss-20b", "--swa-prefix-tails", "-1")}],
    },
    "kv-decode-host-pool": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *DECODE, "--disaggregation-decode-retraction-backup", "host_pool"),
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", *DECODE, *DECODE_OFFLOAD)},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *DECODE,
                    "--disaggregation-decode-retraction-backup",
                    "host_pool",
                    "--enable-priority-scheduling",
                    "--disable-priority-preemption",
                ),
            },
            # the host_pool backup is checked from 0.5.18 (server_args.py:8128-8168)
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *DECODE, *DECODE_OFFLOAD, "--disaggregation-decode-retraction-backup", "host_pool"
                ),
                "engine_version": ["sglang==0.5.17"],
            },
            # decode offload needs a storage backend from 0.5.10 (server_args.py:3415)
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *DECODE, "--disaggregation-decode-enable-offload-kvcache"),
                "engine_version": ["sglang==0.5.9"],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--disaggregation-decode-retraction-backup", "host_pool")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *DECODE_OFFLOAD)},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *DECODE, "--disaggregation-decode-retraction-backup", "host_pool", "--dcp-size", "2"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *DECODE,
                    "--disaggregation-decode-retraction-backup",
                    "host_pool",
                    "--enable-priority-scheduling",
                ),
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *DECODE, "--disaggregation-decode-enable-offload-kvcache"),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *DECODE, *DECODE_OFFLOAD, "--disaggregation-decode-retraction-backup", "host_pool"
                ),
            },
        ],
    },
    "kv-sharding-backend": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--enable-kv-cache-sharding", "--attention-backend", "fa3"),
            },
            {"gpu": "B200", "command": serve("deepseek-v3", "--enable-kv-cache-sharding", "--tp-size", "8")},
        ],
        "fail": [
            {"gpu": "B200", "command": serve("llama-3.1-8b", "--enable-kv-cache-sharding")},
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--enable-kv-cache-sharding", "--tp-size", "8", "--attn-cp-size", "2"),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-v3", "--enable-kv-cache-sharding", "--tp-size", "8", "--attention-backend", "flashinfer"
                ),
                "engine_version": ["sglang==0.5.22"],
            },
        ],
    },
    "kv-sharding-prefill-worker": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED, "--disaggregation-mode", "prefill")}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED)},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED, "--disaggregation-mode", "decode")},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *SHARDED, "--disaggregation-mode", "prefill", "--radix-cache-backend", "lmcache"
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *SHARDED, "--disaggregation-mode", "prefill", "--dllm-algorithm", "LowConfidence"
                ),
                "engine_version": ["sglang==0.5.22"],
            },
        ],
    },
    "kv-sharding-shard-group": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP)},
            {"gpu": "B200", "command": serve("deepseek-v3", *SHARDED_PD)},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED, "--disaggregation-mode", "prefill")},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    *SHARDED,
                    "--disaggregation-mode",
                    "prefill",
                    "--tp-size",
                    "4",
                    "--enable-prefill-cp",
                ),
            },
            {"gpu": "B200", "command": serve("deepseek-v3", *SHARDED_PD, "--attn-dp-size", "8")},
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--enable-kv-cache-sharding", "--disaggregation-mode", "prefill"),
            },
            {
                "gpu": "B200",
                "command": serve("deepseek-v3.2-exp", *SHARDED_PD, "--attn-cp-size", "8"),
                "engine_version": ["sglang==0.5.22"],
            },
        ],
    },
    "kv-sharding-page-chunk": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP)},
            # trtllm_mla snaps the page to 64 before the sharding hook reads it
            {"gpu": "B200", "command": serve("deepseek-v3", *SHARDED_PD)},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP[:-2])},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP[:-2], "--chunked-prefill-size", "4000")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--chunked-prefill-size", "-1")},
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *SHARDED_CP, "--chunked-prefill-size", "1000"),
                "expect": "warn",
            },
        ],
    },
    "kv-sharding-transfer-backend": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP)},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--disaggregation-transfer-backend", "nixl")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--disaggregation-transfer-backend", "fake")},
            {"gpu": "H100", "command": ["SGLANG_DISAGG_STAGING_BUFFER=1", *serve("llama-3.1-8b", *SHARDED_CP)]},
        ],
    },
    "kv-sharding-radix-tree-core": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP)},
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *SHARDED_CP, "--disable-radix-cache"),
                "engine_version": ["sglang==0.5.22"],
            },
            {
                "gpu": "H100",
                "command": ["SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python", *serve("llama-3.1-8b", *SHARDED_CP)],
                "engine_version": ["sglang==0.5.22"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *SHARDED_CP),
                "engine_version": ["sglang==0.5.22"],
            },
            {
                "gpu": "H100",
                "command": ["SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=rust", *serve("llama-3.1-8b", *SHARDED_CP)],
            },
        ],
    },
    "kv-sharding-cache-features": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP)},
            # 0.5.23 lets HiCache offload to host memory under sharding
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--enable-hierarchical-cache")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--enable-lmcache")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--enable-two-batch-overlap")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP, "--enable-session-radix-cache")},
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *SHARDED_CP, "--enable-dynamic-chunking", "--pp-size", "2"),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", *SHARDED_CP, "--enable-hierarchical-cache", "--hicache-storage-backend", "file"
                ),
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", *SHARDED_CP, "--enable-hierarchical-cache"),
                "engine_version": ["sglang==0.5.22"],
            },
            {
                "gpu": "B200",
                "command": serve(
                    "deepseek-v3.2-exp",
                    *SHARDED_PD,
                    "--enable-hierarchical-cache",
                    "--hicache-mem-layout",
                    "page_first_direct",
                ),
            },
        ],
    },
    "kv-sharding-model-attention": {
        "pass": [{"gpu": "H100", "command": serve("llama-3.1-8b", *SHARDED_CP)}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-4-scout", *SHARDED_CP)},
            {"gpu": "H100", "command": serve("llama-3.2-11b-vision", *SHARDED_CP)},
        ],
    },
    "kv-sharding-speculative": {
        "pass": [
            {"gpu": "B200", "command": serve(GLM5_NEXTN, *SHARDED_PD, "--speculative-algorithm", "EAGLE")},
            {
                "gpu": "B200",
                "command": serve(
                    GLM5_NEXTN, *SHARDED_PD, "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "1"
                ),
            },
        ],
        "fail": [
            {"gpu": "B200", "command": serve("deepseek-v3.2-exp", *SHARDED_PD, "--speculative-algorithm", "EAGLE")},
            {
                "gpu": "B200",
                "command": serve(
                    GLM5_NEXTN,
                    *SHARDED_PD,
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-eagle-topk",
                    "4",
                    "--speculative-num-steps",
                    "3",
                    "--speculative-num-draft-tokens",
                    "8",
                ),
            },
            {"gpu": "B200", "command": serve(GLM5_NEXTN, *SHARDED_PD, "--speculative-algorithm", "DFLASH")},
            {
                "gpu": "B200",
                "command": serve(GLM5_NEXTN, *SHARDED_PD, "--speculative-algorithm", "EAGLE"),
                "engine_version": ["sglang==0.5.22"],
            },
        ],
    },
    "kv-unified-memory-full-prefill-graph": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", UNIFIED, "--attention-backend", "fa3", *FULL_PREFILL_GRAPH),
            },
            {"gpu": "B200", "command": serve(INKLING[1], UNIFIED, "--attention-backend", "fa4")},
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", UNIFIED, "--attention-backend", "triton", *FULL_PREFILL_GRAPH),
                "expect": "warn",
            },
            # Inkling declares FULL prefill capture itself
            {"gpu": "H100", "command": serve(INKLING[1], UNIFIED, "--attention-backend", "triton"), "expect": "warn"},
            # the JSON wins over --cuda-graph-backend-prefill
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    UNIFIED,
                    "--attention-backend",
                    "flashinfer",
                    "--cuda-graph-backend-prefill",
                    "breakable",
                    "--cuda-graph-config",
                    '{"prefill": {"backend": "full"}}',
                ),
                "expect": "warn",
            },
        ],
    },
    "kv-int8-mamba-checkpoint-cache": {
        "pass": [
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", INT8_MAMBA)},
            # 0.5.14-0.5.20 do not check LMCache
            {
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", INT8_MAMBA, "--enable-lmcache"),
                "engine_version": ["sglang==0.5.20"],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", INT8_MAMBA, "--enable-hierarchical-cache")},
            {
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", INT8_MAMBA, "--radix-cache-backend", "lmcache"),
                "engine_version": ["sglang==0.5.14"],
            },
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", INT8_MAMBA, "--enable-lmcache")},
        ],
    },
    "kv-mamba-cache-flags": {
        "pass": [
            {"gpu": "B200", "command": serve("qwen3-next-80b-a3b", *STOCHASTIC, "--mamba-ssm-dtype", "float16")},
            {
                "gpu": "H100",
                "command": serve(
                    "qwen3-next-80b-a3b", *STOCHASTIC, "--mamba-ssm-dtype", "float16", "--mamba-backend", "flashinfer"
                ),
            },
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", "--mamba-max-states-per-path", "-1")},
            # 0.5.15-0.5.16 have no states-per-path check (the flag is 0.5.17's)
            {
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", "--mamba-cache-philox-rounds", "10"),
                "engine_version": ["sglang==0.5.15"],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", "--mamba-cache-philox-rounds", "-1")},
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", "--mamba-max-states-per-path", "0")},
            {"gpu": "B200", "command": serve("qwen3-next-80b-a3b", *STOCHASTIC)},
            {"gpu": "H100", "command": serve("qwen3-next-80b-a3b", *STOCHASTIC, "--mamba-ssm-dtype", "float16")},
            {
                "gpu": "H100",
                "command": serve("qwen3-next-80b-a3b", *STOCHASTIC, "--mamba-ssm-dtype", "float16"),
                "engine_version": ["sglang==0.5.15"],
            },
        ],
    },
}
