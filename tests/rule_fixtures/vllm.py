"""Pass/fail fixtures for the vLLM rules (rules/engines/vllm/reasons.py, rules/engines/vllm/rules/): pasted
`vllm serve` commands and flags.

No preset has MLA dimensions other than DeepSeek-R1's, so two synthetic config.json files (written once to a
temporary directory) give the MLA-dimension rules their failing models.
"""

import json
from pathlib import Path

from tests.rule_fixtures import FIXTURES_DIR, written_model
from tests.rule_fixtures.install import on


def _mla_model(name, qk_nope, qk_rope, v_head):
    """A DeepSeek-V3-shaped config.json with the given MLA head dims; returns its directory."""
    config = {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "torch_dtype": "bfloat16",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": qk_nope,
        "qk_rope_head_dim": qk_rope,
        "v_head_dim": v_head,
    }
    return written_model(name, config)


GEMMA4 = str(FIXTURES_DIR / "incident-models" / "gemma-4")
# DeepSeek-R1's attention with ModelOpt's hf_quant_config.json (NVFP4 weights, kv_cache_quant_algo FP8): from
# vllm 0.14.0 --kv-cache-dtype auto runs an fp8_e4m3 KV cache (rules/knowledge/checkpoint_kv.py)
DSR1_NVFP4 = str(FIXTURES_DIR / "incident-models" / "deepseek-r1-nvfp4")
MLA_NOPE_96 = _mla_model("mla-nope96", 96, 64, 128)
MLA_NOPE_64 = _mla_model("mla-nope64", 64, 64, 128)
MLA_NOPE_192_V256 = _mla_model("mla-nope192-v256", 192, 64, 256)
# vllm#51405's model: only its architecture is known, which is what selects Inkling's own attention
INKLING = str(Path(__file__).resolve().parent.parent / "fixtures" / "incident-models" / "inkling-small")


SPEC_MTP = '{"method": "mtp", "num_speculative_tokens": 2}'
SPEC_EAGLE3 = '{"model":"nvidia/gpt-oss-120b-Eagle3-v3","num_speculative_tokens":7,"method":"eagle3","draft_tensor_parallel_size":1}'


def _eagle_head(name):
    """A dense Llama-style EAGLE head's config.json (vllm model_executor/models/llama_eagle3.py: one decoder layer),
    with gpt-oss-120b's head dims; returns its directory."""
    config = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "torch_dtype": "bfloat16",
        "hidden_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "num_hidden_layers": 1,
        "intermediate_size": 17280,
        "vocab_size": 201088,
    }
    return written_model(name, config)


def _draft_spec(head, **extra):
    return json.dumps({"method": "eagle", "model": head, "num_speculative_tokens": 3, **extra})


SPEC_MEDUSA = '{"method":"medusa","model":"someone/medusa-head","num_speculative_tokens":3}'


def serve(model, *flags):
    return ["vllm", "serve", model, *flags]


def vllm(*argv):
    return ["--engine", "vllm", *argv]


FIXTURES = {
    "vllm-backend-name": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--attention-backend", "flash_attn")},
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "TREE_ATTN"),
                "engine_version": ["vllm==0.20.0"],
            },
            # 0.10.2's _Backend has TRITON_ATTN_VLLM_V1 (platforms/interface.py:44)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
            },
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.12.0"],
            },
        ],
        "fail": [
            # envs.py env_with_choices refuses the suffix at the variable's first read (config/model.py:472), before
            # the selector's removesuffix (attention/selector.py:138-146) is reached
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.12.0"],
            },
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.11.0"],
            },
            # 0.11.0's spelling on 0.10.2: "Invalid attention backend: 'TRITON_ATTN'" (attention/selector.py:196-202)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
            },
            # compared as typed (backend_name_to_enum: `backend_name in _Backend.__members__`, selector.py:31)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=flash_attn", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--attention-backend", "TREE_ATTN")},
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--attention-backend", "TORCH_SDPA")},
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--attention-backend", "TOKENSPEED_MLA", "--kv-cache-dtype", "fp8"),
                "engine_version": ["vllm==0.20.0"],
            },
        ],
    },
    "vllm-backend-platform": {
        "pass": [{"gpu": "H100", "command": serve("qwen3-8b", "--attention-backend", "FLASHINFER")}],
        "fail": [
            {"gpu": "H100", "command": serve("qwen3-8b", "--attention-backend", "ROCM_ATTN")},
            {"gpu": "B200", "argv": vllm("--model", "deepseek-v3", "--attention-backend", "CPU_MLA")},
            # 0.12.0 validates the named class (cuda.py:344) and no ROCm class refuses a CUDA arch
            {
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=ROCM_ATTN", *serve("qwen3-8b")],
                "engine_version": ["vllm==0.12.0"],
            },
        ],
    },
    "vllm-env-backend": {
        "pass": [{"gpu": "H100", "command": serve("qwen3-8b", "--attention-backend", "FLASH_ATTN")}],
        "fail": [
            {"gpu": "H100", "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("qwen3-8b")], "expect": "warn"},
            {
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHINFER", *serve("qwen3-8b")],
                "engine_version": ["vllm==0.14.1"],
                "expect": "warn",
            },
            {
                "gpu": "H100",
                "command": [
                    "VLLM_ATTENTION_BACKEND=FLASHINFER",
                    *serve("qwen3-8b", "--attention-backend", "TRITON_ATTN"),
                ],
                "engine_version": ["vllm==0.14.1"],
            },
        ],
    },
    "vllm-compute-capability": {
        "pass": [
            {"gpu": "B200", "command": serve("deepseek-v3", "--attention-backend", "FLASHINFER_MLA")},
            {"gpu": "B300", "command": serve("deepseek-r1", "--attention-backend", "CUTLASS_MLA")},
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASH_ATTN_MLA")},
            {"gpu": "RTX 5090", "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER")},
            {
                "gpu": "T4",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--dtype", "half"),
                "engine_version": ["vllm==0.20.0"],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASHINFER_MLA")},
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "CUTLASS_MLA")},
            {"gpu": "Jetson Thor", "command": serve("deepseek-v3", "--attention-backend", "CUTLASS_MLA")},
            {"gpu": "RTX 5090", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA")},
            {"gpu": "A100", "command": serve("deepseek-v3", "--attention-backend", "FLASH_ATTN_MLA")},
            {"gpu": "A100", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA_SPARSE")},
            {"gpu": "T4", "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--dtype", "half")},
            {"gpu": "T4", "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--dtype", "half")},
        ],
    },
    "vllm-flashmla-dense-hopper": {
        "pass": [{"gpu": "H200", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA")}],
        "fail": [{"gpu": "B200", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA")}],
    },
    "vllm-flash-attn-version": {
        "pass": [
            {"gpu": "H100", "command": serve("qwen3-8b", "--attention-config.flash_attn_version=3")},
            {
                "gpu": "H100",
                "command": serve(
                    "qwen3-8b", "--attention-backend", "FLASH_ATTN", "--attention-config.flash_attn_version", "4"
                ),
            },
        ],
        "fail": [
            {"gpu": "A100", "command": serve("qwen3-8b", "--attention-config.flash_attn_version=3")},
            {"gpu": "RTX 5090", "command": serve("qwen3-8b", "-ac.flash_attn_version=4")},
            {"gpu": "B200", "command": serve("qwen3-8b", "--attention-config.flash_attn_version=3"), "expect": "warn"},
            # before 0.17.0: flash_attn_version is Literal[2, 3], and FA3 on 10.x becomes FA2 (fa_utils.py:90-95)
            {
                "gpu": "B200",
                "command": serve("qwen3-8b", "--attention-config.flash_attn_version=4"),
                "engine_version": ["vllm==0.13.0", "vllm==0.16.0"],
            },
            # the Literal is checked when the flags are parsed, whatever backend then runs
            {
                "gpu": "B200",
                "command": serve(
                    "qwen3-8b", "--attention-backend", "FLASHINFER", "--attention-config.flash_attn_version=4"
                ),
                "engine_version": ["vllm==0.16.0"],
            },
            {
                "gpu": "B200",
                "command": serve("qwen3-8b", "--attention-config.flash_attn_version=3"),
                "engine_version": ["vllm==0.13.0"],
                "expect": "warn",
            },
        ],
    },
    "vllm-flash-attn-fallback": {
        "pass": [
            {"gpu": "B200", "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN")},
            {"gpu": "B200", "command": serve("qwen3-next-80b-a3b", "--attention-backend", "FLASH_ATTN")},
        ],
        "fail": [
            {"gpu": "B200", "command": serve("gemma-2-9b", "--attention-backend", "FLASH_ATTN"), "expect": "warn"},
            {
                "gpu": "B200",
                "command": serve("qwen3-next-80b-a3b", "--attention-backend", "FLASH_ATTN", "--block-size", "16"),
                "expect": "warn",
            },
            # the oldest release whose get_flash_attn_version reads as 0.33.0's (fa_utils.py, the hd256 kernel)
            {
                "gpu": "B200",
                "command": serve("qwen3-next-80b-a3b", "--attention-backend", "FLASH_ATTN", "--block-size", "16"),
                "engine_version": ["vllm==0.29.0"],
                "expect": "warn",
            },
        ],
    },
    "vllm-head-size": {
        "pass": [
            {"gpu": "H100", "command": serve("gemma-2-9b", "--attention-backend", "FLASHINFER")},
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA")},
            # Gemma-4: sliding layers head_dim 256, full-attention layers global_head_dim 512 (FLASHINFER: 512
            # from vllm 0.26.0)
            {"gpu": "RTX PRO 6000", "command": serve(GEMMA4, "--attention-backend", "FLASHINFER")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASHINFER")},
            {"gpu": "A100", "command": serve("deepseek-v3", "--attention-backend", "FLASH_ATTN")},
            {
                "gpu": "RTX PRO 6000",
                "command": serve(GEMMA4, "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.19.1"],
            },
        ],
    },
    "vllm-dtype": {
        "pass": [
            {
                "gpu": "A100",
                "command": serve("llama-3.1-8b", "--attention-backend", "TRITON_ATTN", "--dtype", "float32"),
            },
            {"gpu": "A100", "command": serve("gemma-2-9b", "--attention-backend", "FLASH_ATTN")},
        ],
        "fail": [
            {
                "gpu": "A100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--dtype", "float32"),
            },
            {
                "gpu": "T4",
                "command": serve("gemma-2-9b", "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.20.0"],
            },
            {
                "gpu": "H100",
                "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA_SPARSE", "--dtype", "float16"),
            },
        ],
    },
    "vllm-bf16-arch": {
        "pass": [{"gpu": "A10", "command": serve("llama-3.1-8b", "--dtype", "bfloat16")}],
        "fail": [
            {"gpu": "T4", "command": serve("llama-3.1-8b", "--dtype", "bfloat16")},
            {"gpu": "V100", "command": serve("llama-3.1-8b"), "expect": "warn"},
            # vllm 0.10.0 v1/worker/gpu_worker.py:601
            {"gpu": "T4", "command": serve("llama-3.1-8b", "--dtype", "bfloat16"), "engine_version": ["vllm==0.10.0"]},
        ],
    },
    "vllm-fp16-model": {
        "pass": [{"gpu": "A100", "command": serve("gemma-3-27b", "--dtype", "bfloat16")}],
        "fail": [
            {"gpu": "A100", "command": serve("gemma-2-9b", "--dtype", "half")},
            {"gpu": "T4", "command": serve("gemma-3-27b", "--dtype", "float16")},
            # vllm 0.10.2 config/__init__.py:2615-2622
            {"gpu": "A100", "command": serve("gemma-2-9b", "--dtype", "half"), "engine_version": ["vllm==0.10.2"]},
        ],
    },
    "vllm-kv-cache-dtype-choice": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--kv-cache-dtype", "fp8")},
            # nvfp4 joins CacheDType in 0.20.0 (config/cache.py)
            {
                "gpu": "B200",
                "command": serve("llama-3.1-8b", "--kv-cache-dtype", "nvfp4"),
                "engine_version": ["vllm==0.20.0"],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": serve("llama-3.1-8b", "--kv-cache-dtype", "nvfp4"),
                "engine_version": ["vllm==0.19.1"],
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--kv-cache-dtype", "bfloat16"),
                "engine_version": ["vllm==0.10.2"],
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--kv-cache-dtype", "octave_k3v4"),
                "engine_version": ["vllm==0.32.0"],
            },
        ],
    },
    "vllm-kv-cache-dtype": {
        "pass": [
            # 0.13.0 hands auto to CacheConfig as given (no checkpoint resolution before 0.14.0)
            {
                "gpu": "RTX PRO 6000",
                "command": serve(DSR1_NVFP4, "--attention-backend", "TRITON_MLA"),
                "engine_version": ["vllm==0.13.0"],
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"),
            },
            {
                "gpu": "A100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "fp8_e5m2"),
            },
            {
                "gpu": "B200",
                "command": serve(
                    "llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "nvfp4_4over6"
                ),
            },
        ],
        "fail": [
            {
                "gpu": "A100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"),
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8_e5m2"),
            },
            {
                "gpu": "H100",
                "command": serve("deepseek-v3", "--attention-backend", "FLASH_ATTN_MLA", "--kv-cache-dtype", "fp8"),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "nvfp4_4over6"
                ),
            },
            {"gpu": "B200", "command": serve("deepseek-v3", "--attention-backend", "TOKENSPEED_MLA")},
            {
                "gpu": "B200",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLEX_ATTENTION", "--kv-cache-dtype", "fp8"),
            },
        ],
    },
    "vllm-flash-attn-fp8-kv": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8_e4m3"),
            },
            {
                "gpu": "B200",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"),
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": serve("qwen3-next-80b-a3b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"),
            },
            {
                "gpu": "L4",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--kv-cache-dtype", "fp8"),
            },
        ],
    },
    "vllm-flashinfer-nvfp4-head64": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "nvfp4"),
            }
        ],
        "fail": [
            {
                "gpu": "RTX 5090",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "nvfp4"),
            }
        ],
    },
    "vllm-flashinfer-nvfp4-sinks": {
        "pass": [
            {
                "gpu": "A100",
                "command": serve("qwen3-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "nvfp4"),
            }
        ],
        "fail": [
            {
                "gpu": "H200",
                "command": serve("gpt-oss-120b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "nvfp4"),
            }
        ],
    },
    "vllm-flashinfer-fp8-kv-sm90": {
        "pass": [
            {  # vllm 0.17.0 pins flashinfer-python 0.6.4, whose auto backend sends the pair to FA2
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "fp8"),
                "engine_version": ["vllm==0.17.0"],
            },
            {
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHINFER", *serve("llama-3.1-8b", "--kv-cache-dtype", "fp8")],
                "engine_version": ["vllm==0.11.0", "flashinfer==0.6.4"],
            },
            on(  # a probed machine: its flashinfer 0.7.2 runs, not the 0.3.1 vllm 0.11.0 pins
                "h100-ok",
                command=["VLLM_ATTENTION_BACKEND=FLASHINFER", *serve("llama-3.1-8b", "--kv-cache-dtype", "fp8")],
                engine_version=["vllm==0.11.0"],
            ),
        ],
        "fail": [
            {  # vllm#27604: vllm 0.11.0 (flashinfer 0.3.1) on an H100
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHINFER", "vllm", "serve", "--kv-cache-dtype", "fp8"],
                "engine_version": ["vllm==0.11.0"],
            },
            {  # vllm#31843: flashinfer 0.5.3, which vllm 0.12.0-0.14.1 pin
                "gpu": "H200",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "fp8_e4m3"),
                "engine_version": ["vllm==0.14.1"],
            },
            {  # a newer vLLM over an older FlashInfer installed
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--kv-cache-dtype", "fp8_e5m2"),
                "engine_version": ["vllm==0.20.0", "flashinfer==0.6.3"],
            },
        ],
    },
    "vllm-sinks": {
        "pass": [
            # 0.12.0: FlashInfer takes sinks through TRT-LLM on SM 10.0 only (utils/flashinfer.py:267)
            {
                "gpu": "B200",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHINFER", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.12.0"],
            },
            {"gpu": "H100", "command": serve("gpt-oss-20b", "--attention-backend", "FLASH_ATTN")},
            {"gpu": "A100", "command": serve("gpt-oss-20b", "--attention-backend", "TRITON_ATTN")},
            {"gpu": "RTX 5090", "command": serve("gpt-oss-20b", "--attention-backend", "FLASHINFER")},
            # 0.16/0.17: FlashInfer sinks through TRT-LLM on SM100 only; FLASH_ATTN sinks where FA3 runs (SM90)
            {
                "gpu": "B200",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.16.0"],
            },
            {
                "gpu": "H100",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASH_ATTN"),
                "engine_version": ["vllm==0.17.0"],
            },
        ],
        "fail": [
            # 0.11.1rc7 (vllm#28589): "sink setting not supported" for FLASHINFER on a GB10 (SM121)
            {
                "gpu": "GB10",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHINFER", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.11.1rc7"],
            },
            {"gpu": "A100", "command": serve("gpt-oss-20b", "--attention-backend", "FLASH_ATTN")},
            {
                "gpu": "H100",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.16.0"],
            },
            {
                "gpu": "RTX 5090",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.17.0"],
            },
            {  # FA4 on SM100 takes no sinks before 0.20.0 (fa_utils.flash_attn_supports_sinks: version == 3)
                "gpu": "B200",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASH_ATTN"),
                "engine_version": ["vllm==0.19.0"],
            },
            {"gpu": "RTX 5090", "command": serve("gpt-oss-20b", "--attention-backend", "FLASH_ATTN")},
            {"gpu": "H100", "command": serve("gpt-oss-20b", "--attention-backend", "FLEX_ATTENTION")},
            {
                "gpu": "H100",
                "command": serve("gpt-oss-20b", "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.26.0"],
            },
        ],
    },
    "vllm-mla-model-backend": {
        "pass": [{"gpu": "A100", "command": serve("deepseek-v2-lite", "--attention-backend", "TRITON_MLA")}],
        "fail": [
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASH_ATTN")},
            {"gpu": "B200", "argv": vllm("--model", "kimi-k2", "--attention-backend", "FLASHINFER")},
        ],
    },
    "vllm-non-mla-model-backend": {
        "pass": [{"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA")}],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--attention-backend", "FLASHMLA")},
            {
                "gpu": "B200",
                "command": ["VLLM_MLA_DISABLE=1", *serve("deepseek-v3", "--attention-backend", "CUTLASS_MLA")],
            },
        ],
    },
    "vllm-sparse-mla-backend": {
        "pass": [{"gpu": "B200", "command": serve("deepseek-v3", "--attention-backend", "CUTLASS_MLA")}],
        "fail": [{"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA_SPARSE")}],
    },
    "vllm-block-size": {
        "pass": [
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--attention-backend", "CUTLASS_MLA", "--block-size", "256"),
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--block-size", "128"),
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--attention-backend", "CUTLASS_MLA", "--block-size", "64"),
            },
            {"gpu": "H100", "command": serve("deepseek-v3", "--attention-backend", "FLASHMLA", "--block-size", "32")},
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--attention-backend", "FLASHINFER_MLA", "--block-size", "16"),
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--block-size", "8")},
        ],
    },
    "vllm-sliding-window": {
        "pass": [{"gpu": "H100", "command": serve("gemma-3-27b", "--attention-backend", "FLASHINFER")}],
        "fail": [
            {
                "gpu": "H100",
                "argv": vllm(
                    "--model", "deepseek-v3", "--feature", "sliding_window", "--attention-backend", "FLASHMLA"
                ),
            }
        ],
    },
    "vllm-flashinfer-mla-qk-nope": {
        # flashinfer_mla.py supports_combination: 128 only in 0.15.0-0.17.x, [64, 128] in 0.18.x, [64, 128, 192]
        # from 0.19.0
        "pass": [
            {"gpu": "B200", "command": serve("kimi-k2", "--attention-backend", "FLASHINFER_MLA")},
            {
                "gpu": "B200",
                "engine_version": ["vllm==0.18.0"],
                "command": serve(MLA_NOPE_64, "--attention-backend", "FLASHINFER_MLA"),
            },
            {
                "gpu": "B200",
                "engine_version": ["vllm==0.19.0"],
                "command": serve(MLA_NOPE_192_V256, "--attention-backend", "FLASHINFER_MLA"),
            },
        ],
        "fail": [
            {"gpu": "B200", "command": serve(MLA_NOPE_96, "--attention-backend", "FLASHINFER_MLA")},
            {
                "gpu": "B200",
                "engine_version": ["vllm==0.17.0"],
                "command": serve(MLA_NOPE_64, "--attention-backend", "FLASHINFER_MLA"),
            },
            {
                "gpu": "B200",
                "engine_version": ["vllm==0.18.1"],
                "command": serve(MLA_NOPE_192_V256, "--attention-backend", "FLASHINFER_MLA"),
            },
        ],
    },
    "vllm-tokenspeed-mla-dims": {
        "pass": [
            {
                "gpu": "B200",
                "command": serve("deepseek-r1", "--attention-backend", "TOKENSPEED_MLA", "--kv-cache-dtype", "fp8"),
            }
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": serve(MLA_NOPE_192_V256, "--attention-backend", "TOKENSPEED_MLA", "--kv-cache-dtype", "fp8"),
            },
            {
                "gpu": "B300",
                "command": serve(MLA_NOPE_96, "--attention-backend", "TOKENSPEED_MLA", "--kv-cache-dtype", "fp8_e4m3"),
            },
        ],
    },
    "vllm-triton-mla-fp8-kv-arch": {
        "pass": [
            {
                "gpu": "L4",
                "command": serve("deepseek-v2-lite", "--attention-backend", "TRITON_MLA", "--kv-cache-dtype", "fp8"),
            },
            {"gpu": "A100", "command": serve("deepseek-v2-lite", "--kv-cache-dtype", "bfloat16")},
            # a named dtype is not resolved: the checkpoint's FP8 KV is then not used
            {"gpu": "A100", "command": serve(DSR1_NVFP4, "--kv-cache-dtype", "bfloat16")},
        ],
        "fail": [
            # auto runs the checkpoint's fp8_e4m3 KV, on TRITON_MLA (the one MLA backend vLLM lists for SM8x)
            {"gpu": "A100", "command": serve(DSR1_NVFP4)},
            {
                "gpu": "A100",
                "command": serve("deepseek-v2-lite", "--attention-backend", "TRITON_MLA", "--kv-cache-dtype", "fp8"),
            },
            {
                "gpu": "T4",
                "command": serve(
                    "deepseek-v2-lite",
                    "--attention-backend",
                    "TRITON_MLA",
                    "--kv-cache-dtype",
                    "bfloat16",
                    "--dtype",
                    "half",
                ),
            },
        ],
    },
    "vllm-triton-fp8-kv-arch": {
        "pass": [
            {
                "gpu": "L4",
                "command": serve("llama-3.1-8b", "--attention-backend", "TRITON_ATTN", "--kv-cache-dtype", "fp8"),
            },
            {"gpu": "A100", "command": serve("llama-3.1-8b", "--attention-backend", "TRITON_ATTN")},
        ],
        "fail": [
            {
                "gpu": "A100",
                "command": serve("llama-3.1-8b", "--attention-backend", "TRITON_ATTN", "--kv-cache-dtype", "fp8"),
            },
            # no backend named: Gemma4Config forces TRITON_ATTN on SM8x (no FA4 there)
            {"gpu": "A100", "command": serve(GEMMA4, "--kv-cache-dtype", "fp8")},
            {  # PR #35720: a crash at the first forward in 0.16.0
                "gpu": "A100",
                "command": serve("llama-3.1-8b", "--attention-backend", "TRITON_ATTN", "--kv-cache-dtype", "fp8"),
                "engine_version": ["vllm==0.16.0"],
            },
        ],
    },
    "vllm-auto-select": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b")},
            {"gpu": "RTX 5090", "command": serve("deepseek-v3")},
            {"gpu": "A100", "command": serve("gpt-oss-20b")},
            # Gemma4Config (config.py:301 in 0.33.0): FA4 for every layer on SM90, FLASH_ATTN takes 256 and 512
            {"gpu": "H100", "command": serve(GEMMA4)},
            # FLASHINFER's FA2 path takes nvfp4 KV on SM12x from 0.32.0
            {
                "gpu": "RTX 5090",
                "command": serve("qwen3-8b", "--kv-cache-dtype", "nvfp4"),
                "engine_version": ["vllm==0.32.0"],
            },
            {"gpu": "B200", "command": serve("deepseek-v3"), "engine_version": ["vllm==0.13.0"]},
            {"gpu": "H100", "command": serve("llama-3.1-8b"), "engine_version": ["vllm==0.12.0"]},
        ],
        "fail": [
            {"gpu": "A100", "command": serve("deepseek-v3", "--kv-cache-dtype", "nvfp4")},
            # vllm#49011: FlashInferBackend.supports_kv_cache_dtype takes nvfp4 on SM100 only in 0.25.0-0.31.x
            {
                "gpu": "RTX 5090",
                "command": serve("qwen3-8b", "--kv-cache-dtype", "nvfp4"),
                "engine_version": ["vllm==0.25.1"],
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--block-size", "8")},
            {"gpu": "B200", "command": serve("deepseek-v3", "--block-size", "16"), "expect": "warn"},
            # vLLM 0.33.0 (the shared oracle): "No valid attention backend ... {TRITON_MLA: [kv_cache_dtype not
            # supported], FLASHINFER_MLA_SPARSE_SM120: [..., non-sparse not supported, ...]}"
            {"gpu": "RTX PRO 6000", "command": serve("deepseek-v3", "--kv-cache-dtype", "fp8_e5m2")},
            # Gemma4Config forces TRITON_ATTN where FA4 is not supported (SM12x), which stores no nvfp4 KV
            {"gpu": "RTX PRO 6000", "command": serve(GEMMA4, "--kv-cache-dtype", "nvfp4")},
            # 0.13.0-0.14.x name CUTLASS_MLA themselves for dense MLA on SM10x (platforms/cuda.py:183-192), which
            # takes no fp8_e5m2 KV; 0.15.0-0.17.x name FLASHINFER_MLA for qk_nope_head_dim 128 (:185-201)
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--kv-cache-dtype", "fp8_e5m2"),
                "engine_version": ["vllm==0.13.0"],
            },
            {
                "gpu": "B200",
                "command": serve("deepseek-v3", "--kv-cache-dtype", "fp8_e5m2"),
                "engine_version": ["vllm==0.16.0"],
            },
            # 0.12.0's list (platforms/cuda.py:46-83) has nothing for fp8_e5m2 on an H100 either
            {
                "gpu": "H100",
                "command": serve("deepseek-v3", "--kv-cache-dtype", "fp8_e5m2"),
                "engine_version": ["vllm==0.12.0"],
            },
        ],
    },
    "vllm-fa4-library": {
        # FLASH_ATTN defaults to FA4 on 10.x; on the H200 (9.x) FA4 is asked for. 0.17.0 is the first release with
        # vllm_flash_attn/cute/interface.py (flash_attn_interface.py:38) and FA4 by default on 10.x (fa_utils.py:77)
        "pass": [
            on("b200-ok", command=serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN")),
            on(
                "b200-ok",
                command=serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN"),
                engine_version=["vllm==0.17.0"],
            ),
            on(
                "probe-h200.json",
                command=serve(
                    "llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--attention-config.flash_attn_version", "4"
                ),
            ),
        ],
        "fail": [
            on("b200-cutlass-dsl-broken", command=serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN")),
            on(
                "b200-cutlass-dsl-broken",
                command=serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN"),
                engine_version=["vllm==0.17.0"],
            ),
            # 0.17.0's cute/interface.py imports quack through flash_fwd.py:23
            on(
                "b200-no-quack",
                command=serve("llama-3.1-8b", "--attention-backend", "FLASH_ATTN"),
                engine_version=["vllm==0.17.0"],
            ),
            on(
                "probe-h200-nopth.json",
                command=serve(
                    "llama-3.1-8b", "--attention-backend", "FLASH_ATTN", "--attention-config.flash_attn_version", "4"
                ),
            ),
        ],
    },
    "vllm-dcp-gqa-tp": {  # vllm 0.33.0 config/model.py: DCP on GQA/MQA needs TP above the KV heads
        "pass": [
            {"gpu": "8xH100", "command": serve("qwen3-30b-a3b", "-tp", "8", "-dcp", "2")},  # 4 KV heads
            {"gpu": "8xH100", "command": serve("qwen3-30b-a3b", "-tp", "8", "-dcp", "4")},
        ],
        "fail": [
            {"gpu": "8xH100", "command": serve("llama-3.1-8b", "-tp", "8", "--decode-context-parallel-size", "2")},
            {"gpu": "8xH100", "command": serve("qwen3-30b-a3b", "-tp", "8", "-dcp", "3")},  # TP not divisible
        ],
    },
    "vllm-tp-heads": {
        "pass": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--tensor-parallel-size", "8")},
            {"gpu": "H100", "command": serve("qwen2.5-7b", "-tp", "4")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("qwen2.5-7b", "--tensor-parallel-size", "8")},  # 28 heads
            # vllm 0.10.0 config.py:1210
            {
                "gpu": "H100",
                "command": serve("qwen2.5-7b", "--tensor-parallel-size", "8"),
                "engine_version": ["vllm==0.10.0"],
            },
        ],
    },
    # vLLM 0.33.0 (the shared oracle): gemma-2-9b on FLEX_ATTENTION is refused by FlexAttentionImpl.__init__,
    # llama-3.1-8b (no soft cap) is accepted on it.
    "vllm-inkling-paged-kv": {
        "pass": [
            {"gpu": "H100", "command": serve(INKLING), "engine_version": ["vllm==0.27.0"]},
            {"gpu": "B200", "command": serve(INKLING), "engine_version": ["vllm==0.26.0"]},
        ],
        "fail": [
            # vllm#51405: "AssertionError: Paged KV not supported on SM 12.0 in this PR"
            {"gpu": "RTX PRO 6000", "command": serve(INKLING), "engine_version": ["vllm==0.27.0"]},
            {
                "gpu": "GB10",
                "command": serve(INKLING, "--attention-backend", "FLASHINFER"),
                "engine_version": ["vllm==0.26.0"],
            },
            {"gpu": "A100", "command": serve(INKLING), "engine_version": ["vllm==0.27.1"]},
        ],
    },
    "vllm-flex-softcap": {
        "pass": [{"gpu": "A100", "command": serve("llama-3.1-8b", "--attention-backend", "FLEX_ATTENTION")}],
        "fail": [
            {"gpu": "A100", "command": serve("gemma-2-9b", "--attention-backend", "FLEX_ATTENTION")},
            # vllm 0.11.0 picks FlexAttention below SM80 (platforms/cuda.py:370-373); flex_attention.py:693 raises
            {"gpu": "T4", "command": serve("gemma-2-9b"), "engine_version": ["vllm==0.11.0"]},
        ],
    },
    # Expectations from vLLM 0.33.0's own config creation (bench/vllm_oracle_diff.py, the shared oracle):
    # 'kv_cache_dtype="bfloat16" is incompatible with dtype="float16"' / '... dtype="float32"'.
    "vllm-float-kv-dtype": {
        "pass": [
            {"gpu": "H100", "command": serve("qwen3-8b", "--kv-cache-dtype", "bfloat16")},
            {"gpu": "T4", "command": serve("llama-3.1-8b", "--kv-cache-dtype", "float16")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve("qwen3-8b", "--kv-cache-dtype", "bfloat16", "--dtype", "float16")},
            {"gpu": "T4", "command": serve("gemma-2-9b", "--kv-cache-dtype", "bfloat16")},  # runs in float32
        ],
    },
    # vLLM 0.12.0 forces CUTLASS_MLA for MLA on SM 10.0 (platforms/cuda.py:184-190); vllm PR #30195 reports
    # "Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid ... 'sparse not supported'" for DeepSeek-V3.2
    "vllm-cutlass-mla-forced": {
        "pass": [{"gpu": "B200", "command": serve("deepseek-v3"), "engine_version": ["vllm==0.12.0"]}],
        "fail": [{"gpu": "B200", "command": serve("deepseek-v3.2-exp"), "engine_version": ["vllm==0.12.0"]}],
    },
    # vLLM 0.10.2 picks FlexAttention below SM80, which raises for a sliding window (flex_attention.py:646;
    # vllm#24358: gpt-oss-20b on an RTX 2080)
    "vllm-flex-sliding-window": {
        "pass": [{"gpu": "T4", "command": serve("llama-3.1-8b"), "engine_version": ["vllm==0.10.2"]}],
        "fail": [{"gpu": "T4", "command": serve("gpt-oss-20b"), "engine_version": ["vllm==0.10.2"]}],
    },
    # vllm 0.10.2/0.11.0 FlashAttentionImpl: "Sinks are only supported in FlashAttention 3" (flash_attn.py:415-417);
    # FlashInferMetadataBuilder: "FlashInfer backend currently does not support attention sinks" (flashinfer.py:321-325)
    # rules/engines/vllm/legacy.py: the selection chains of platforms/cuda.py get_attn_backend_cls and the V1
    # oracle of engine/arg_utils.py, read in the 0.10.0, 0.10.1.1, 0.10.2 and 0.11.0 wheels
    "vllm-named-backend-runs": {
        "pass": [
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
            },
            # 0.10.x's own spelling: the V1 chain takes TRITON_ATTN_VLLM_V1 (cuda.py:318-320 in 0.10.2)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
            },
            # the MLA chain takes FLASHMLA, whose block size 64 check_and_update_config forces on Hopper
            {
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHMLA", *serve("deepseek-v2-lite")],
                "engine_version": ["vllm==0.11.0"],
            },
        ],
        "fail": [
            # XFORMERS is not in 0.10.2's V1_BACKENDS (arg_utils.py:1502-1521): the V0 engine runs it, with a warning
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=XFORMERS", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
                "expect": "warn",
            },
            # ... and with VLLM_USE_V1=1 _raise_or_fallback raises instead (arg_utils.py:1792-1795)
            {
                "gpu": "A100",
                "command": ["VLLM_USE_V1=1", "VLLM_ATTENTION_BACKEND=XFORMERS", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.2"],
            },
            # FLASHMLA is no name of the non-MLA chain: the default runs (a warning naming FLASH_ATTN)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHMLA", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.11.0"],
                "expect": "warn",
            },
            # 0.10.0's MLA chain runs TRITON_MLA for any name below block size 64 (cuda.py:209-216)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("deepseek-v2-lite")],
                "engine_version": ["vllm==0.10.0"],
                "expect": "warn",
            },
            # 0.10.2's MLA chain does not take FLASH_ATTN; the non-MLA chain returns FlashAttentionBackend, whose
            # Impl refuses the MLA layer's q_lora_rank (vllm PR #13092)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("deepseek-v2-lite")],
                "engine_version": ["vllm==0.10.2"],
            },
            # 0.10.0 has no TRITON_ATTN (0.11's name): the oracle falls back to V0 (arg_utils.py:1419-1423) and the
            # selector's backend_name_to_enum gives None (selector.py:21-32): V0's default runs
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.10.0"],
                "expect": "warn",
            },
            # 0.11.0 has no V0 engine: a name outside V1_BACKENDS stops at api_server.py:209
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=DUAL_CHUNK_FLASH_ATTN", *serve("llama-3.1-8b")],
                "engine_version": ["vllm==0.11.0"],
            },
            # 0.11.0's FlashAttentionImpl refuses an fp8 KV cache off FA3 (flash_attn.py:408-412)
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("llama-3.1-8b", "--kv-cache-dtype", "fp8")],
                "engine_version": ["vllm==0.11.0"],
            },
        ],
    },
    "vllm-sinks-unvalidated": {
        "pass": [
            {
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.10.2"],
            },
            {
                "gpu": "A100",
                "command": ["VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.10.2"],
            },
            # FLASH_ATTN_VLLM_V1 is not in 0.10.1's V1 chain (platforms/cuda.py:274-295 in 0.10.1.1): the default
            # runs, TRITON_ATTN for a sink model off SM 9.0 (:313-315), which takes sinks (vllm-named-backend-runs warns)
            {
                "gpu": "A10",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN_VLLM_V1", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.10.1"],
            },
        ],
        "fail": [
            {
                "gpu": "RTX 4090",
                "command": ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.10.2"],
            },
            {
                "gpu": "H100",
                "command": ["VLLM_ATTENTION_BACKEND=FLASHINFER", *serve("gpt-oss-20b")],
                "engine_version": ["vllm==0.11.0"],
            },
        ],
    },
    # vllm 0.10.2 sizes Qwen3-Next's attention blocks to hold a Gated DeltaNet state (models/config.py:381-389):
    # 544 tokens at TP 2, which TRT-LLM decode refuses (vllm#25811: "numTokensPerPage <= 128 ... 544")
    "vllm-hybrid-flashinfer-page": {
        "pass": [
            {
                "gpu": "B200",
                "command": ["VLLM_USE_TRTLLM_ATTENTION=0", *serve("qwen3-next-80b-a3b", "-tp", "2")],
                "engine_version": ["vllm==0.10.2"],
            },
        ],
        "fail": [
            {"gpu": "B200", "command": serve("qwen3-next-80b-a3b", "-tp", "2"), "engine_version": ["vllm==0.10.2"]},
        ],
    },
    "vllm-sparse-mla-arch": {
        "pass": [
            {"gpu": "H100", "command": serve("deepseek-v3.2-exp"), "engine_version": ["vllm==0.13.0"]},
            {"gpu": "RTX PRO 6000", "command": serve("glm-5"), "engine_version": ["vllm==0.24.0"]},
        ],
        "fail": [
            {"gpu": "RTX PRO 6000", "command": serve("deepseek-v3.2-exp"), "engine_version": ["vllm==0.13.0"]},
            {"gpu": "GB10", "command": serve("glm-5"), "engine_version": ["vllm==0.22.1"]},
            {"gpu": "A100", "command": serve("deepseek-v3.2-exp")},
        ],
    },
    "vllm-flex-block-size": {
        "pass": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLEX_ATTENTION", "--block-size", "16"),
                "engine_version": ["vllm==0.19.1"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--attention-backend", "FLEX_ATTENTION", "--block-size", "8"),
                "engine_version": ["vllm==0.19.1"],
            },
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--block-size", "8"),
                "engine_version": ["vllm==0.20.0"],
            },
        ],
    },
    "vllm-flashinfer-unsplit-page-size": {
        "pass": [
            {
                "gpu": "A100",
                "command": ["VLLM_KV_CACHE_LAYOUT=BLNHC", *serve("llama-3.1-8b", "--attention-backend", "FLASHINFER")],
            },
            {
                "gpu": "A100",
                "command": [
                    "VLLM_KV_CACHE_LAYOUT=BLNHC",
                    *serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--block-size", "64"),
                ],
            },
        ],
        "fail": [
            {
                "gpu": "A100",
                "command": [
                    "VLLM_KV_CACHE_LAYOUT=BLNHC",
                    *serve("llama-3.1-8b", "--attention-backend", "FLASHINFER", "--block-size", "256"),
                ],
            },
            # FLASHINFER picked: FLASH_ATTN takes no fp8 KV cache on SM86
            {
                "gpu": "A10",
                "command": [
                    "VLLM_KV_CACHE_LAYOUT=BLHNC",
                    *serve("llama-3.1-8b", "--kv-cache-dtype", "fp8", "--block-size", "128"),
                ],
            },
        ],
    },
    "vllm-quantization-arch": {
        "pass": [
            {"gpu": "A100", "command": serve("gpt-oss-20b")},
            {"gpu": "T4", "command": serve("deepseek-v3"), "engine_version": ["vllm==0.19.1"]},
        ],
        "fail": [
            {"gpu": "T4", "command": serve("gpt-oss-20b")},
            {"gpu": "H100", "command": serve("gpt-oss-20b", "--dtype", "float16")},
            {"gpu": "T4", "command": serve("deepseek-v3"), "engine_version": ["vllm==0.13.0"]},
        ],
    },
    # --speculative-config (rules/engines/vllm/rules/speculative.py; rules/engines/vllm/speculative.json read from the
    # wheels). Pass lines are the recipes': vllm-project/recipes@8959cf64 Qwen/Qwen3.5.md#L52 (mtp, 2 tokens),
    # OpenAI/GPT-OSS.md#L254 (eagle3 head nvidia/gpt-oss-120b-Eagle3-v3, draft TP 1).
    "vllm-spec-method": {
        "pass": [
            {"gpu": "H100", "command": serve("deepseek-r1", "-tp", "8", "--speculative-config", SPEC_MTP)},
            {"gpu": "H100", "command": serve("gpt-oss-120b", "-tp", "2", "--speculative-config", SPEC_EAGLE3)},
            # "medusa" is accepted up to vllm 0.32.0 (speculative.json)
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--speculative-config", SPEC_MEDUSA),
                "engine_version": ["vllm==0.32.0"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve("llama-3.1-8b", "--speculative-config", SPEC_MEDUSA),
                "engine_version": ["vllm==0.33.0"],
            },
            # "mtp" came in vllm 0.11.0 (before it, deepseek_mtp)
            {
                "gpu": "H100",
                "command": serve("deepseek-r1", "-tp", "8", "--speculative-config", SPEC_MTP),
                "engine_version": ["vllm==0.10.2"],
            },
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--speculative-config", "mtp")},  # not JSON
        ],
    },
    "vllm-spec-tokens": {
        "pass": [
            {"gpu": "H100", "command": serve("deepseek-r1", "-tp", "8", "--speculative-config", SPEC_MTP)},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", "--speculative-config", '{"method":"ngram","num_speculative_tokens":3}'
                ),
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve("llama-3.1-8b", "--speculative-config", '{"method":"ngram"}')},
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b", "--speculative-config", '{"method":"eagle3","num_speculative_tokens":3}'
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-r1", "-tp", "8", "--speculative-config", '{"method":"mtp","num_speculative_tokens":0}'
                ),
            },
        ],
    },
    "vllm-spec-draft-tp": {
        "pass": [
            {"gpu": "H100", "command": serve("gpt-oss-120b", "-tp", "2", "--speculative-config", SPEC_EAGLE3)},
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-120b",
                    "-tp",
                    "4",
                    "--speculative-config",
                    SPEC_EAGLE3.replace('"draft_tensor_parallel_size":1', '"draft_tensor_parallel_size":2'),
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-120b", "-tp", "2", "--speculative-config", SPEC_EAGLE3.replace("draft_tensor", "tensor")
                ),
            },
        ],
    },
    "vllm-spec-mtp-layers": {
        "pass": [{"gpu": "H100", "command": serve("deepseek-r1", "-tp", "8", "--speculative-config", SPEC_MTP)}],
        "fail": [{"gpu": "H100", "command": serve("llama-3.1-8b", "--speculative-config", SPEC_MTP)}],
    },
    "vllm-spec-eagle3-target": {  # vllm 0.15.0 config/speculative.py:666 eagle3_target_supported
        "pass": [
            {
                "gpu": "H100",
                "command": serve("gpt-oss-120b", "-tp", "2", "--speculative-config", SPEC_EAGLE3),
                "engine_version": ["vllm==0.15.0"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-r1",
                    "-tp",
                    "8",
                    "--speculative-config",
                    '{"method":"eagle3","model":"someone/DeepSeek-R1-eagle3","num_speculative_tokens":3}',
                ),
                "engine_version": ["vllm==0.15.0"],
            },
        ],
    },
    "vllm-spec-draft-backend": {  # v1/spec_decode/llm_base_proposer.py: before 0.21.0 the draft inherits the backend
        "pass": [
            {
                "gpu": "H100",
                "command": serve(
                    "gpt-oss-120b",
                    "-tp",
                    "2",
                    "--attention-backend",
                    "TRITON_ATTN",
                    "--speculative-config",
                    _draft_spec(_eagle_head("eagle-head-pass")),
                ),
                "engine_version": ["vllm==0.20.0"],
            },
            {
                "gpu": "H100",
                "command": serve(
                    "deepseek-r1",
                    "-tp",
                    "8",
                    "--speculative-config",
                    _draft_spec(_eagle_head("eagle-head-own"), attention_backend="FLASH_ATTN"),
                ),
            },
        ],
        "fail": [
            # a dense EAGLE head inherits DeepSeek's MLA-only backend on vllm 0.20.0
            {
                "gpu": "B200",
                "command": serve(
                    "deepseek-r1",
                    "-tp",
                    "8",
                    "--attention-backend",
                    "FLASHINFER_MLA",
                    "--speculative-config",
                    _draft_spec(_eagle_head("eagle-head-mla")),
                ),
                "engine_version": ["vllm==0.20.0"],
            },
            {
                "gpu": "B200",
                "command": serve(
                    "deepseek-r1",
                    "-tp",
                    "8",
                    "--speculative-config",
                    _draft_spec(_eagle_head("eagle-head-mla-own"), attention_backend="FLASHINFER_MLA"),
                ),
            },
            {
                "gpu": "H100",
                "command": serve(
                    "llama-3.1-8b",
                    "--speculative-config",
                    _draft_spec("yuhuili/EAGLE-LLaMA3.1-Instruct-8B", attention_backend="FLASH_ATTN"),
                ),
                "engine_version": ["vllm==0.20.0"],
            },
        ],
    },
}
