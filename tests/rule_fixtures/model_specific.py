"""Fixtures for rules/checks/model_specific.py.

Models that are not built-in presets are written once per process as config.json files (attention fields
of the real Hugging Face configs) into a temporary directory; `model_dir(name)` returns the path. The
same directories feed bench/oracle_extra.py, which runs these cases through SGLang's own resolution.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

from .install import on

_COMMON = {
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "torch_dtype": "bfloat16",
}

# name -> config.json (attention-relevant fields of the public configs, sizes trimmed where irrelevant)
MODEL_CONFIGS = {
    # google/gemma-4 (text): sliding + full layers; head_dim == global_head_dim keeps transformers 5.x happy
    "gemma-4": {
        **_COMMON,
        "architectures": ["Gemma4ForCausalLM"],
        "model_type": "gemma4_text",
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "global_head_dim": 256,
        "num_hidden_layers": 6,
        "sliding_window": 512,
        "vocab_size": 262144,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
    },
    # LGAI-EXAONE/EXAONE-4.0-32B
    "exaone-4": {
        **_COMMON,
        "architectures": ["Exaone4ForCausalLM"],
        "model_type": "exaone4",
        "hidden_size": 5120,
        "intermediate_size": 27392,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 4,
        "sliding_window": 4096,
        "sliding_window_pattern": "LLLG",
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
    },
    # allenai/Olmo-3-7B
    "olmo-3": {
        **_COMMON,
        "architectures": ["Olmo3ForCausalLM"],
        "model_type": "olmo3",
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "num_hidden_layers": 4,
        "sliding_window": 4096,
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
    },
    # LiquidAI/LFM2-1.2B
    "lfm2": {
        **_COMMON,
        "architectures": ["Lfm2ForCausalLM"],
        "model_type": "lfm2",
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "block_ff_dim": 8192,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 6,
        "conv_L_cache": 3,
        "conv_bias": False,
        "vocab_size": 65536,
        "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention"],
        "full_attn_idxs": [2, 5],
    },
    # LFM2-MoE: synthetic, the LFM2 layout under the MoE architecture name (only the name is judged)
    "lfm2-moe": {
        **_COMMON,
        "architectures": ["Lfm2MoeForCausalLM"],
        "model_type": "lfm2_moe",
        "num_hidden_layers": 6,
        "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention"],
    },
    # IQuestQ1 (sglang 0.5.21+ arg_groups/model_overrides/iquest_q1.py): synthetic, only its architecture matters
    "iquest-q1": {
        **_COMMON,
        "architectures": ["IQuestQ1ForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 4,
    },
    "inkling": {
        "architectures": ["InklingForConditionalGeneration"],
        "model_type": "inkling_model",
        "torch_dtype": "bfloat16",
    },
    "moss-vl": {
        "architectures": ["MossVLForConditionalGeneration"],
        "model_type": "moss_vl",
        "is_encoder_decoder": True,
        "torch_dtype": "bfloat16",
    },
    # openai/whisper-large-v3
    "whisper": {
        "architectures": ["WhisperForConditionalGeneration"],
        "model_type": "whisper",
        "d_model": 1280,
        "decoder_attention_heads": 20,
        "encoder_attention_heads": 20,
        "decoder_layers": 4,
        "encoder_layers": 4,
        "decoder_ffn_dim": 5120,
        "encoder_ffn_dim": 5120,
        "vocab_size": 51866,
        "num_mel_bins": 128,
        "max_source_positions": 1500,
        "max_target_positions": 448,
        "is_encoder_decoder": True,
        "torch_dtype": "float16",
    },
    # Qwen/Qwen2.5-7B-Instruct-1M
    "qwen2.5-7b-1m": {
        **_COMMON,
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "num_hidden_layers": 4,
        "max_position_embeddings": 1010000,
        "dual_chunk_attention_config": {
            "chunk_size": 262144,
            "local_size": 8192,
            "original_max_position_embeddings": 262144,
        },
    },
    # meta-llama/Llama-4-Scout with attention_chunk_size dropped (a trimmed conversion)
    "llama-4-no-chunk": {
        "architectures": ["Llama4ForConditionalGeneration"],
        "model_type": "llama4",
        "text_config": {
            "model_type": "llama4_text",
            "hidden_size": 5120,
            "num_attention_heads": 40,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "num_hidden_layers": 4,
            "intermediate_size": 8192,
            "intermediate_size_mlp": 16384,
            "num_local_experts": 16,
            "vocab_size": 202048,
            "torch_dtype": "bfloat16",
        },
        "vision_config": {"model_type": "llama4_vision_model"},
        "torch_dtype": "bfloat16",
    },
    # meta-llama/Llama-2-7b-hf: multi-head attention, one query head per KV head
    "llama-2-7b": {
        **_COMMON,
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "num_hidden_layers": 4,
        "max_position_embeddings": 4096,
    },
    # inclusionAI/LLaDA2.0-mini: a block-diffusion MoE (its architecture decides SGLang's dLLM block size, 32)
    "llada2-mini": {
        **_COMMON,
        "architectures": ["LLaDA2MoeModelLM"],
        "model_type": "llada2_moe",
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "num_hidden_layers": 4,
    },
    # DiffusionGemma: the dLLM block is config.json canvas_length (sglang dllm/config.py, 256 when absent)
    "diffusion-gemma": {
        **_COMMON,
        "architectures": ["DiffusionGemmaForBlockDiffusion"],
        "model_type": "gemma4_text",
        "canvas_length": 64,
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "num_hidden_layers": 4,
    },
}

_ROOT = None


def model_dir(name: str) -> str:
    """A directory holding MODEL_CONFIGS[name] as config.json (written once per process)."""
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="attn-preflight-models-"))
        atexit.register(shutil.rmtree, _ROOT, True)  # the test session's, gone with it
        for model, config in MODEL_CONFIGS.items():
            (_ROOT / model).mkdir()
            (_ROOT / model / "config.json").write_text(json.dumps(config, indent=1))
    return str(_ROOT / name)


def case(gpu: str, *argv: str, model: str = "", **extra) -> dict:
    """A fixture case: `model` names a MODEL_CONFIGS entry (a local dir); other models go in argv as presets."""
    args = list(argv) + (["--model", model_dir(model)] if model else [])
    return {"gpu": gpu, "argv": args, **extra}


QWEN3_NEXT = ["sglang", "serve", "--model-path", "qwen3-next-80b-a3b"]
KIMI_K3 = ["sglang", "serve", "--model-path", "tests/fixtures/models/synthetic-kimi-k3"]
KIMI_K3_DCP_DSPARK = ["--tp-size", "8", "--dcp-size", "8", "--speculative-algorithm", "DSPARK"]
UNLIMITED_OCR = ["--model", "tests/fixtures/models/synthetic-unlimited-ocr"]
M3_NVFP4 = [
    "sglang",
    "serve",
    "--model-path",
    "tests/fixtures/models/synthetic-minimax-m3",
    "--quantization",
    "minimax_m3_nvfp4",
]

FIXTURES = {
    "model-gpt-oss-backends": {
        "pass": [
            case("H100", "--model", "gpt-oss-20b", "--attention-backend", "fa3"),
            case("B200", "--model", "gpt-oss-120b"),
            case("A100", "--model", "gpt-oss-20b", "--attention-backend", "triton"),
        ],
        "fail": [
            case("H100", "--model", "gpt-oss-20b", "--attention-backend", "flashinfer"),
            # fa4 joins the list in 0.5.3.post3
            case("B200", "--model", "gpt-oss-20b", "--attention-backend", "fa4", engine_version=["sglang==0.5.3"]),
            case(
                "B200",
                "--model",
                "gpt-oss-120b",
                "--prefill-attention-backend",
                "trtllm_mha",
                "--decode-attention-backend",
                "flashinfer",
            ),
        ],
    },
    "model-llama4-backends": {
        "pass": [
            case("H100", "--model", "llama-4-scout", "--attention-backend", "fa3"),
            case("B200", "--model", "llama-4-scout"),
            case("H100", "--model", "llama-4-scout", "--attention-backend", "fa3", engine_version=["sglang==0.5.1"]),
        ],
        "fail": [
            case("B200", "--model", "llama-4-scout", "--attention-backend", "fa4"),
            case("H100", "--model", "llama-4-scout", "--attention-backend", "flashinfer"),
            # before 0.5.6 the list is asserted on --attention-backend as given (sglang 0.5.5's own resolution)
            case("H100", "--model", "llama-4-scout", engine_version=["sglang==0.5.5"]),
            case(
                "B200",
                "--model",
                "llama-4-scout",
                "--attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.4"],
            ),
        ],
    },
    "model-llama4-chunk-size": {
        "pass": [case("H100", "--model", "llama-4-scout", "--attention-backend", "fa3")],
        "fail": [case("H100", "--attention-backend", "fa3", model="llama-4-no-chunk")],
    },
    "model-gemma4-backends": {
        "pass": [
            case("H100", model="gemma-4"),
            case("B200", "--attention-backend", "fa4", model="gemma-4"),
            case("B200", "--attention-backend", "trtllm_mha", model="gemma-4"),
            case("H100", "--attention-backend", "triton", model="gemma-4", engine_version=["sglang==0.5.13"]),
            # ascend joined the accepted tuple in 0.5.14 (general-backend-platform judges it on NVIDIA)
            case("H100", "--attention-backend", "ascend", model="gemma-4", engine_version=["sglang==0.5.14"]),
        ],
        "fail": [
            case("H100", "--attention-backend", "fa3", model="gemma-4"),
            case("H100", "--attention-backend", "ascend", model="gemma-4", engine_version=["sglang==0.5.13"]),
            case("B200", "--attention-backend", "fa4", model="gemma-4", engine_version=["sglang==0.5.21"]),
            case("B200", "--attention-backend", "flashinfer", model="gemma-4"),
        ],
    },
    "model-softcap-backend": {
        "pass": [
            case("H100", "--model", "gemma-2-9b", "--attention-backend", "fa3"),
            case("B200", "--model", "gemma-2-9b", "--attention-backend", "flashinfer"),
            case("A100", "--model", "gemma-2-9b", "--attention-backend", "triton", engine_version=["sglang==0.5.1"]),
        ],
        "fail": [
            case("B200", "--model", "gemma-2-9b", expect="warn"),
            case(
                "B200",
                "--model",
                "gemma-2-9b",
                "--attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.1"],
                expect="warn",
            ),
            case("H100", "--model", "gemma-2-9b", "--attention-backend", "hpc_ops", "--page-size", "64"),
        ],
    },
    "model-exaone-swa-backends": {
        "pass": [
            case("H100", model="exaone-4"),
            case("A100", model="exaone-4"),  # exaone.py: fa3 on SM80+ (the generic default is flashinfer)
            case("T4", model="exaone-4"),  # triton below SM80
            case("A100", "--attention-backend", "fa3", model="exaone-4"),
            case("H100", "--attention-backend", "fa3", model="exaone-4", engine_version=["sglang==0.5.9"]),
            # from 0.5.15 the assert reads the resolved default
            case("H100", model="exaone-4", engine_version=["sglang==0.5.15"]),
        ],
        "fail": [
            case("H100", "--attention-backend", "flashinfer", model="exaone-4"),
            case("B200", "--attention-backend", "fa4", model="exaone-4"),
            # 0.5.9-0.5.14 assert --attention-backend as given, before any default ("but got None")
            case("H100", model="exaone-4", engine_version=["sglang==0.5.14"]),
        ],
    },
    "model-olmo-flashinfer": {
        "pass": [
            case("A100", model="olmo-3"),  # olmo2.py: fa3 on SM80+, where the generic default is flashinfer
            case("RTX 5090", model="olmo-3"),
            case("L40S", "--attention-backend", "triton", model="olmo-3"),
        ],
        "fail": [case("A100", "--attention-backend", "flashinfer", model="olmo-3")],
    },
    "model-lfm2-triton": {
        "pass": [
            case("B200", model="lfm2"),  # lfm2.py: flashinfer on SM100
            # ... with speculative decoding too (a draft tree, which flashinfer verifies on paged KV)
            case(
                "B200",
                command=[
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    model_dir("lfm2"),
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-num-steps",
                    "3",
                    "--speculative-eagle-topk",
                    "4",
                    "--speculative-num-draft-tokens",
                    "8",
                ],
            ),
            case("H100", "--attention-backend", "fa3", model="lfm2"),
        ],
        "fail": [
            case("H100", "--attention-backend", "triton", model="lfm2"),
            # the branch names Lfm2MoeForCausalLM from 0.5.17
            case("H100", "--attention-backend", "triton", model="lfm2-moe", engine_version=["sglang==0.5.17"]),
        ],
    },
    "model-inkling-backends": {
        "pass": [case("B200", model="inkling"), case("RTX 5090", "--attention-backend", "triton", model="inkling")],
        "fail": [
            case("H100", "--attention-backend", "fa3", model="inkling"),
            case("B200", "--attention-backend", "trtllm_mha", model="inkling"),
        ],
    },
    "model-moss-vl-prefill": {
        "pass": [
            case("H100", model="moss-vl"),  # moss_vl.py: prefill flashinfer, decode the default (fa3)
            case("B200", "--enable-deterministic-inference", model="moss-vl"),
            case(
                "H100",
                "--prefill-attention-backend",
                "flashinfer",
                "--decode-attention-backend",
                "fa3",
                model="moss-vl",
            ),
        ],
        "fail": [case("H100", "--attention-backend", "fa3", model="moss-vl")],
    },
    "model-dual-chunk-backend": {
        "pass": [
            case(
                "H100",
                "--attention-backend",
                "dual_chunk_flash_attn",
                model="qwen2.5-7b-1m",
                engine_version=["sglang==0.5.15"],
            )
        ],
        # no backend: SGLang fills fa3 (its generic default) before the dual-chunk check, which then refuses it
        "fail": [
            case("H100", model="qwen2.5-7b-1m", engine_version=["sglang==0.5.19"]),
            case("H100", "--attention-backend", "fa3", model="qwen2.5-7b-1m", engine_version=["sglang==0.5.19"]),
            case("H100", model="qwen2.5-7b-1m", expect="warn"),
        ],
    },
    "model-hybrid-gdn-blackwell": {
        "pass": [
            case("B200", "--model", "qwen3-next-80b-a3b", "--attention-backend", "fa4"),
            case("RTX 5090", "--model", "qwen3-next-80b-a3b", "--attention-backend", "flashinfer"),
            case("B200", "--model", "qwen3-next-80b-a3b"),
            case(
                "B200",
                "--model",
                "qwen3-next-80b-a3b",
                "--attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.3"],
            ),
        ],
        "fail": [
            case("RTX 5090", "--model", "qwen3-next-80b-a3b", "--attention-backend", "fa4"),
            case(
                "B200",
                "--model",
                "qwen3-next-80b-a3b",
                "--attention-backend",
                "flashinfer",
                engine_version=["sglang==0.5.20"],
            ),
            case("B300", "--model", "qwen3-next-80b-a3b", "--attention-backend", "fa3"),
            # 0.5.3.post3-0.5.5: triton only (attention_registry.py, 'triton backend is the only supported backend')
            case(
                "B200",
                "--model",
                "qwen3-next-80b-a3b",
                "--attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.4"],
            ),
        ],
    },
    "model-fa-swa-cross-attention": {
        "pass": [
            case("H100", "--model", "llama-3.2-11b-vision", "--attention-backend", "fa3"),
            case("H100", "--model", "llama-3.2-11b-vision", "--attention-backend", "flashinfer"),
        ],
        "fail": [
            case("H100", "--attention-backend", "fa3", "--feature", "sliding_window", model="whisper"),
            case("H100", "--attention-backend", "flashinfer", "--feature", "sliding_window", model="whisper"),
            case("A100", "--attention-backend", "triton", "--feature", "sliding_window", model="whisper"),
        ],
    },
    "model-iquest-q1-fa3": {
        "pass": [
            case("H100", model="iquest-q1"),
            case("H100", "--attention-backend", "fa3", model="iquest-q1"),
        ],
        "fail": [
            case("H100", "--attention-backend", "flashinfer", model="iquest-q1"),
            case(
                "H100", "--prefill-attention-backend", "fa3", "--decode-attention-backend", "triton", model="iquest-q1"
            ),
        ],
    },
    "model-hrm-text-triton": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "tests/fixtures/models/synthetic-hrm-text"]},
            {
                "gpu": "B200",
                "argv": ["--model", "tests/fixtures/models/synthetic-hrm-text", "--attention-backend", "triton"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "argv": ["--model", "tests/fixtures/models/synthetic-hrm-text", "--attention-backend", "fa3"],
                "expect": "warn",
            },
            {  # model_runner.py:1150-1166 in 0.5.15
                "gpu": "B200",
                "argv": ["--model", "tests/fixtures/models/synthetic-hrm-text", "--attention-backend", "flashinfer"],
                "engine_version": ["sglang==0.5.15"],
                "expect": "warn",
            },
        ],
    },
    "model-mamba-no-buffer": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "qwen3-next-80b-a3b",
                    "--mamba-radix-cache-strategy",
                    "no_buffer",
                    "--disable-overlap-schedule",
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
                    "qwen3-next-80b-a3b",
                    "--mamba-radix-cache-strategy",
                    "no_buffer",
                ],
            },
            {
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "qwen3.5-35b-a3b",
                    "--mamba-radix-cache-strategy",
                    "no_buffer",
                    "--disable-overlap-schedule",
                    "--attention-backend",
                    "trtllm_mha",
                    "--page-size",
                    "64",
                ],
                "engine_version": ["sglang==0.5.14"],
            },
        ],
    },
    "model-linear-attn-flashkda-decode": {
        "pass": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--linear-attn-backend", "flashkda"]},
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--linear-attn-prefill-backend",
                    "flashkda",
                    "--linear-attn-decode-backend",
                    "triton",
                ],
            },
        ],
        "fail": [{"gpu": "H100", "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashkda"]}],
    },
    "model-linear-attn-flashinfer-ssm-dtype": {
        "pass": [
            {
                "gpu": "B200",
                "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashinfer", "--mamba-ssm-dtype", "bfloat16"],
            },
        ],
        "fail": [
            {"gpu": "B200", "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashinfer"]},
            {
                "gpu": "B300",
                "command": [*QWEN3_NEXT, "--linear-attn-backend", "flashinfer", "--mamba-ssm-dtype", "float32"],
            },
            {"gpu": "RTX 5090", "command": [*QWEN3_NEXT, "--linear-attn-verify-backend", "flashinfer"]},
            {
                "gpu": "B200",
                "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashinfer"],
                "engine_version": ["sglang==0.5.10"],
            },
        ],
    },
    "model-linear-attn-flashinfer-cuda13": {
        "pass": [
            on("b200-torch-cu130", command=[*QWEN3_NEXT, "--linear-attn-prefill-backend", "flashinfer"]),
        ],
        "fail": [
            on("b200-ok", command=[*QWEN3_NEXT, "--linear-attn-prefill-backend", "flashinfer"]),
            on(
                "b200-ok", command=[*QWEN3_NEXT, "--linear-attn-backend", "flashinfer", "--mamba-ssm-dtype", "bfloat16"]
            ),
        ],
    },
    "model-kimi-k3-dcp": {
        "pass": [
            {"gpu": "B200", "command": [*KIMI_K3, "--tp-size", "8", "--dcp-size", "8"]},
            {
                "gpu": "B200",
                "command": [*KIMI_K3, "--tp-size", "8", "--dcp-size", "8", "--decode-attention-backend", "cutedsl_mla"],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "command": [*KIMI_K3, "--tp-size", "8", "--dcp-size", "8", "--attention-backend", "trtllm_mla"],
            },
            {
                "gpu": "B200",
                "command": [*KIMI_K3, "--tp-size", "8", "--dcp-size", "8", "--decode-attention-backend", "flashinfer"],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
    "model-kimi-k3-dcp-dspark": {
        "pass": [
            {"gpu": "B200", "command": [*KIMI_K3, *KIMI_K3_DCP_DSPARK]},
            {"gpu": "B200", "command": ["env", "SGLANG_RAGGED_VERIFY_MODE=static", *KIMI_K3, *KIMI_K3_DCP_DSPARK]},
        ],
        "fail": [
            {"gpu": "B200", "command": ["env", "SGLANG_RAGGED_VERIFY_MODE=compact", *KIMI_K3, *KIMI_K3_DCP_DSPARK]},
            {
                "gpu": "B200",
                "command": ["env", "SGLANG_RAGGED_VERIFY_MODE=cap-accept", *KIMI_K3, *KIMI_K3_DCP_DSPARK],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
    "model-prefill-aware-swa-page": {
        "pass": [{"gpu": "H100", "argv": [*UNLIMITED_OCR, "--attention-backend", "fa3"]}],
        "fail": [
            {"gpu": "H100", "argv": [*UNLIMITED_OCR, "--attention-backend", "fa3", "--page-size", "16"]},
            {"gpu": "B200", "argv": [*UNLIMITED_OCR, "--attention-backend", "fa4"]},
            {
                "gpu": "H100",
                "command": ["sglang", "serve", "--model-path", UNLIMITED_OCR[1], "--enable-unified-memory"],
            },
        ],
    },
    "model-minimax-m3-nvfp4": {
        "pass": [
            {"gpu": "B200", "command": M3_NVFP4},
            {"gpu": "H100", "command": [*M3_NVFP4, "--page-size", "128"]},
            {"gpu": "B200", "command": [*M3_NVFP4, "--speculative-algorithm", "DFLASH"]},
        ],
        "fail": [
            {"gpu": "B200", "command": [*M3_NVFP4, "--kv-cache-dtype", "bf16"]},
            {"gpu": "H100", "command": [*M3_NVFP4, "--page-size", "64"]},
            {"gpu": "B200", "command": [*M3_NVFP4, "--speculative-algorithm", "EAGLE"]},
        ],
    },
    "model-linear-replayssm": {
        "pass": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--enable-linear-replayssm"]},
            {
                "gpu": "B200",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm-spec", "--mamba-ssm-dtype", "bfloat16"],
            },
            # the decode server of a PD pair runs spec verify; a ragged mode with DFLASH and a ring-writing kernel
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_RAGGED_VERIFY_MODE=compact",
                    *QWEN3_NEXT,
                    "--enable-linear-replayssm-spec",
                    "--disaggregation-mode",
                    "decode",
                    "--speculative-algorithm",
                    "DFLASH",
                    "--linear-attn-verify-backend",
                    "triton",
                ],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--enable-linear-replayssm-spec"]},
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--disaggregation-mode", "decode"]},
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--linear-replayssm-cache-len", "0"],
                "engine_version": ["sglang==0.5.15"],
            },
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm-spec", "--disaggregation-mode", "prefill"],
            },
            # SGLang reads --linear-attn-verify-backend itself: with none named a ragged mode is refused
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_RAGGED_VERIFY_MODE=cap-accept",
                    *QWEN3_NEXT,
                    "--enable-linear-replayssm-spec",
                    "--speculative-algorithm",
                    "DFLASH",
                ],
            },
            {
                "gpu": "H100",
                "command": ["SGLANG_RAGGED_VERIFY_MODE=ragged", *QWEN3_NEXT, "--enable-linear-replayssm-spec"],
                "engine_version": ["sglang==0.5.17"],
            },
            # SM100 + bfloat16 SSM state: SGLang's linear-attention decode default is flashinfer
            {"gpu": "B200", "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--mamba-ssm-dtype", "bfloat16"]},
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--mamba-radix-cache-strategy", "extra_buffer"],
            },
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--enable-linear-replayssm-spec",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-eagle-topk",
                    "4",
                    "--speculative-num-steps",
                    "3",
                ],
            },
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--linear-attn-decode-backend", "flashinfer"],
                "engine_version": ["sglang==0.5.15"],
            },
        ],
    },
    "model-quantization-arch": {
        "pass": [case("A100", "--model", "gpt-oss-20b"), case("H100", "--model", "gpt-oss-20b", "--dtype", "float16")],
        "fail": [
            case("T4", "--model", "gpt-oss-20b"),
            case("H100", "--model", "gpt-oss-20b", "--dtype", "float32"),
        ],
    },
}
