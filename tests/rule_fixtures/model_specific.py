"""Fixtures for rules/engines/sglang/rules/model_specific.py.

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
    # baidu/ERNIE-4.5-VL-28B-A3B-PT (text fields; vision and MoE fields dropped)
    "ernie-4.5-vl": {
        **_COMMON,
        "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"],
        "model_type": "ernie4_5_moe_vl",
        "hidden_size": 2560,
        "intermediate_size": 12288,
        "num_attention_heads": 20,
        "num_key_value_heads": 4,
        "num_hidden_layers": 4,
    },
    # openbmb/MiniCPM-2B-sft-bf16 (layers trimmed)
    "minicpm-2b": {
        **_COMMON,
        "architectures": ["MiniCPMForCausalLM"],
        "model_type": "minicpm",
        "hidden_size": 2304,
        "intermediate_size": 5760,
        "num_attention_heads": 36,
        "num_key_value_heads": 36,
        "num_hidden_layers": 4,
    },
    # MiniCPM-SALA: synthetic, the fields sglang configs/minicpm.py MiniCPMHybridConfig reads (one sparse minicpm4
    # layer in four, the rest lightning attention)
    "minicpm-sala": {
        **_COMMON,
        "architectures": ["MiniCPMSALAForCausalLM"],
        "model_type": "minicpm_sala",
        "hidden_size": 4096,
        "intermediate_size": 16384,
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "num_hidden_layers": 4,
        "mixer_types": ["minicpm4", "lightning", "lightning", "lightning"],
        "lightning_nh": 32,
        "lightning_nkv": 32,
        "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "topk": 64, "block_size": 64},
    },
    # tests/fixtures/models/synthetic-minimax-m3 as its vision-language wrapper (what M3.1 NVFP4 drafting needs)
    "minimax-m3-vl": {
        "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
        "model_type": "minimax_m3",
        "hidden_size": 6144,
        "num_attention_heads": 48,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 4,
        "vocab_size": 200064,
        "torch_dtype": "bfloat16",
    },
    # MiMoV2ForCausalLM with fused qkv_proj weights: synthetic (heads as XiaomiMiMo/MiMo-V2-Flash's full attention),
    # the layout key as sglang configs/model_config.py get_mimo_v2_fused_qkv_expected_tp_size reads it
    "mimo-v2-fused-qkv": {
        **_COMMON,
        "architectures": ["MiMoV2ForCausalLM"],
        "model_type": "mimo_v2",
        "attention_projection_layout": "fused_qkv",
        "hidden_size": 4096,
        "num_attention_heads": 64,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "num_hidden_layers": 4,
    },
    # Qwen4-Exp with Qwen's compressed QSA indexer: synthetic, the text_config key sglang layers/attention/qsa/
    # config.py parse_qsa_profile tests (indexer_n_heads); "qwen4-exp-dense" lacks it
    "qwen4-exp": {
        "architectures": ["Qwen4ExpForConditionalGeneration"],
        "model_type": "qwen4_exp",
        "torch_dtype": "bfloat16",
        "text_config": {
            **_COMMON,
            "model_type": "qwen4_exp_text",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "num_hidden_layers": 4,
            "indexer_n_heads": 16,
        },
    },
    "qwen4-exp-dense": {
        "architectures": ["Qwen4ExpForConditionalGeneration"],
        "model_type": "qwen4_exp",
        "torch_dtype": "bfloat16",
        "text_config": {
            **_COMMON,
            "model_type": "qwen4_exp_text",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "num_hidden_layers": 4,
        },
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
    # nvidia/NVIDIA-Nemotron-Nano-9B-v2, trimmed: Mamba2 layers with the older `chunk_size` key (SGLang's
    # NemotronHConfig reads it as mamba_chunk_size: 128, 256 when absent)
    "nemotron-h": {
        **_COMMON,
        "architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h",
        "hidden_size": 4480,
        "intermediate_size": 15680,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 4,
        "hybrid_override_pattern": "M-M*",
        "mamba_num_heads": 128,
        "mamba_head_dim": 80,
        "n_groups": 8,
        "ssm_state_size": 128,
        "conv_kernel": 4,
        "chunk_size": 128,
        "mlp_hidden_act": "relu2",
        "vocab_size": 131072,
    },
    # Falcon-H1: synthetic, no mamba_chunk_size (SGLang's FalconH1Config fills 256)
    "falcon-h1": {
        **_COMMON,
        "architectures": ["FalconH1ForCausalLM"],
        "model_type": "falcon_h1",
        "hidden_size": 1024,
        "intermediate_size": 2048,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "num_hidden_layers": 4,
        "mamba_d_conv": 4,
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


def serve_dir(model: str, *flags: str) -> list[str]:
    """A pasted `sglang serve` launch of the MODEL_CONFIGS entry `model` with `flags`."""
    return ["sglang", "serve", "--model-path", model_dir(model), *flags]


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

M3_VL_NVFP4 = ["sglang", "serve", "--model-path", model_dir("minimax-m3-vl"), "--quantization", "minimax_m3_nvfp4"]

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
    "model-iquest-q1-parallel": {
        "pass": [
            {"gpu": "H100", "command": serve_dir("iquest-q1", "--tp-size", "2", "--speculative-algorithm", "EAGLE")},
            # 0.5.22+: --enable-dp-attention with --dp-size 1 is attention DP 1 (parallel_hook.py:39-61)
            {"gpu": "H100", "command": serve_dir("iquest-q1", "--enable-dp-attention", "--dp-size", "1")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve_dir("iquest-q1", "--speculative-algorithm", "NGRAM")},
            {"gpu": "H100", "command": serve_dir("iquest-q1", "--tp-size", "4", "--attn-cp-size", "2")},
            {
                "gpu": "H100",
                "command": serve_dir("iquest-q1", "--speculative-algorithm", "EAGLE", "--enable-multi-layer-eagle"),
            },
            {"gpu": "H100", "command": serve_dir("iquest-q1", "--tp-size", "4", "--attn-dp-size", "2")},
            {"gpu": "H100", "command": serve_dir("iquest-q1", "--tp-size", "2", "--pp-size", "2")},
            {  # 0.5.21 reads enable_dp_attention itself (iquest_q1.py:36)
                "gpu": "H100",
                "command": serve_dir("iquest-q1", "--enable-dp-attention"),
                "engine_version": ["sglang==0.5.21"],
            },
        ],
    },
    "model-ernie45-vl-dp-attention": {
        "pass": [
            {"gpu": "H100", "command": serve_dir("ernie-4.5-vl", "--tp-size", "4")},
            {"gpu": "H100", "command": serve_dir("ernie-4.5-vl", "--tp-size", "4", "--dp-size", "2")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve_dir("ernie-4.5-vl", "--tp-size", "4", "--attn-dp-size", "2")},
            {
                "gpu": "H100",
                "command": serve_dir("ernie-4.5-vl", "--tp-size", "4", "--dp-size", "2", "--enable-dp-attention"),
            },
        ],
    },
    "model-mimo-v2-fused-qkv-tp": {
        "pass": [
            {"gpu": "H100", "command": serve_dir("mimo-v2-fused-qkv", "--tp-size", "4")},
            # 0.5.17+: an attention TP dividing the interleaved TP (model_hook.py:584 in 0.5.23)
            {"gpu": "H100", "command": serve_dir("mimo-v2-fused-qkv", "--tp-size", "2")},
            {"gpu": "H100", "command": serve_dir("mimo-v2-fused-qkv", "--tp-size", "8", "--attn-dp-size", "2")},
        ],
        "fail": [
            {"gpu": "H100", "command": serve_dir("mimo-v2-fused-qkv", "--tp-size", "8")},
            {  # 0.5.11-0.5.16: equal (server_args.py:4641 in 0.5.16)
                "gpu": "H100",
                "command": serve_dir("mimo-v2-fused-qkv", "--tp-size", "2"),
                "engine_version": ["sglang==0.5.16"],
            },
        ],
    },
    "model-qwen4-exp-serving": {
        "pass": [
            {"gpu": "H100", "command": serve_dir("qwen4-exp", "--qsa-indexer-dtype", "fp8_e4m3")},
            {"gpu": "B200", "command": serve_dir("qwen4-exp", "--qsa-indexer-dtype", "fp8_e4m3", "--tp-size", "2")},
            {
                "gpu": "H100",
                "command": serve_dir(
                    "qwen4-exp",
                    "--disaggregation-mode",
                    "prefill",
                    "--disaggregation-transfer-backend",
                    "mooncake",
                    "--pp-size",
                    "2",
                ),
            },
            {"gpu": "A100", "command": serve_dir("qwen4-exp-dense", "--qsa-indexer-dtype", "bfloat16")},
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": serve_dir(
                    "qwen4-exp",
                    "--disaggregation-mode",
                    "decode",
                    "--disaggregation-transfer-backend",
                    "mori",
                    "--pp-size",
                    "2",
                ),
            },
            {"gpu": "H100", "command": serve_dir("qwen4-exp", "--enable-unified-memory")},
            {"gpu": "A100", "command": serve_dir("qwen4-exp", "--qsa-indexer-dtype", "fp8_e4m3")},
            {"gpu": "RTX 5090", "command": serve_dir("qwen4-exp", "--qsa-indexer-dtype", "fp8_e4m3")},
            {"gpu": "H100", "command": serve_dir("qwen4-exp-dense", "--qsa-indexer-dtype", "fp8_e4m3")},
        ],
    },
    "model-minicpm-serving": {
        "pass": [
            {"gpu": "H100", "command": serve_dir("minicpm-2b", "--tp-size", "2", "--enable-hierarchical-cache")},
            {"gpu": "H100", "command": serve_dir("minicpm-sala", "--tp-size", "2")},
            # dense attention on a named dense backend, or forced dense, may be disaggregated (minicpm.py:28-56)
            {
                "gpu": "H100",
                "command": serve_dir("minicpm-sala", "--attention-backend", "fa3", "--disaggregation-mode", "prefill"),
            },
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_MINICPM_FORCE_DENSE=1",
                    *serve_dir("minicpm-sala", "--disaggregation-mode", "decode"),
                ],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": serve_dir("minicpm-2b", "--tp-size", "4", "--attn-dp-size", "2")},
            {"gpu": "H100", "command": serve_dir("minicpm-sala", "--enable-hierarchical-cache")},
            {"gpu": "H100", "command": serve_dir("minicpm-sala", "--disaggregation-mode", "prefill")},
            {
                "gpu": "B200",
                "command": serve_dir(
                    "minicpm-sala", "--attention-backend", "minicpm_flashinfer", "--disaggregation-mode", "decode"
                ),
            },
            {  # 0.5.19-0.5.21 read enable_dp_attention itself (minicpm.py:20 in 0.5.19)
                "gpu": "H100",
                "command": serve_dir("minicpm-2b", "--enable-dp-attention"),
                "engine_version": ["sglang==0.5.20"],
            },
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
            {"gpu": "B200", "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DFLASH"]},
        ],
        "fail": [
            {"gpu": "B200", "command": [*M3_NVFP4, "--kv-cache-dtype", "bf16"]},
            {"gpu": "H100", "command": [*M3_NVFP4, "--page-size", "64"]},
            {"gpu": "B200", "command": [*M3_NVFP4, "--speculative-algorithm", "EAGLE"]},
        ],
    },
    "model-minimax-m3-nvfp4-speculation": {
        "pass": [
            {"gpu": "B200", "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DSPARK"]},
            {"gpu": "B200", "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DFLASH", "--tp-size", "4"]},
            {
                "gpu": "B200",
                "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DSPARK", "--disaggregation-mode", "decode"],
            },
        ],
        "fail": [
            {"gpu": "B200", "command": [*M3_NVFP4, "--speculative-algorithm", "DSPARK"]},
            {"gpu": "H200", "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DSPARK"]},
            {
                "gpu": "B200",
                "command": ["SGLANG_RAGGED_VERIFY_MODE=compact", *M3_VL_NVFP4, "--speculative-algorithm", "DFLASH"],
            },
            {"gpu": "B200", "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DSPARK", "--pp-size", "2"]},
            {
                "gpu": "B200",
                "command": [*M3_VL_NVFP4, "--speculative-algorithm", "DFLASH", "--disaggregation-mode", "prefill"],
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
