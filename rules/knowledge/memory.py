"""Weights and KV-cache bytes of a model, from its config.json alone (pure: no I/O, no torch).

`shape_from_config(config)` reads the numbers that size a checkpoint: layers, hidden size, intermediate sizes,
MoE experts, vocabulary, tied embeddings, MTP layers, layer types and `quantization_config`. It returns None
when one of the numbers a count needs is missing (then the memory rules answer unknown, never pass).

`parameters(shape)` counts parameters by part (embedding, lm_head, attention, MLP, experts ...), the way the
Hugging Face checkpoints lay them out; norms and biases are left out (< 0.1% of every model checked).
`weight_bytes_per_gpu(shape, tp, pp)` is what one GPU holds: the linear layers sharded over TP (VocabParallel
embedding and lm_head too), the layers split over PP (the busiest stage: ceil(layers / pp) layers plus the
larger of embedding and lm_head), quantized parts at their packed size plus their scales.
`kv_bytes_per_token(shape, engine, kv_dtype, attn_tp, pp)` follows each engine's own sizing (cited below).

How far off the weight estimate can be: the parameter counts agree with the published counts of the models in
tests/test_memory.py within 2%; per GPU, replicated parts (norms, router, KV heads when TP exceeds them), the
vision tower of multimodal models (not counted) and a quantization's exact packing make the real figure
differ by a few percent more. The rules leave that margin to the engine's own memory fraction.
"""

import json
import math
from typing import Any, Mapping, NamedTuple, Optional

from packaging.version import Version

from attn_preflight.rules.core.versions import VersionRange

GIB = 1 << 30

# Bytes per element the engines serve a checkpoint's torch_dtype in under --dtype auto: float32 checkpoints
# (Gemma 2, and configs without a dtype) are downcast to 16 bits (sglang configs/model_config.py:2303-2318
# _get_and_verify_dtype; vllm does the same).
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 2}

# KV-cache element bytes per SGLang / vLLM --kv-cache-dtype; "auto" is the model dtype.
KV_ELEMENT_BYTES = {
    "bf16": 2,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "fp8_ds_mla": 1,
    "mxfp8": 1,
    "fp4_e2m1": 0.5,
    "nvfp4": 0.5,
}
# Block-scale overhead per KV element: MXFP8 one e8m0 byte per 32 (sglang pool_configurator.py:524-528),
# NVFP4 one fp8 byte per 16 (sglang pool_configurator.py:386-396, scale_block_size = 16).
KV_SCALE_BYTES = {"mxfp8": 1 / 32, "fp4_e2m1": 1 / 16, "nvfp4": 1 / 16}

# vLLM's packed per-token MLA layouts, bytes per layer whatever the latent size: fp8_ds_mla is 512 fp8 NoPE
# values, 4 float32 scales (one per 128) and 64 bf16 RoPE values (vllm 0.33.0 model_executor/layers/attention/
# mla_attention.py:1383-1388 state_content_bytes, v1/attention/backends/mla/flashmla_sparse.py:76-87; 656 from
# 0.11.0, FlashMLASparseBackend.get_kv_cache_shape).
VLLM_PACKED_MLA_BYTES = {"fp8_ds_mla": 656}

# Model types whose transformers config class defaults tie_word_embeddings to True (config.json omits defaults).
TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})

# Architectures SGLang gives a separate sliding-window KV pool (sglang 0.5.23 configs/model_config.py:88-96
# SWA_SINK_ARCHS and 2651-2680 is_hybrid_swa_model); other sliding-window models (Gemma 2/3, Mistral, Phi-3)
# keep every layer's KV for every token there.
SGLANG_HYBRID_SWA = frozenset(
    {
        "GptOssForCausalLM",
        "GraniteSWAForCausalLM",
        "GraniteMoeSWAForCausalLM",
        "Llama4ForConditionalGeneration",
        "Gemma4ForCausalLM",
        "Gemma4ForConditionalGeneration",
    }
)

# The Gated DeltaNet sizes a linear-attention layer's weights and state need (Qwen3-Next / Qwen3.5 config.json).
LINEAR_ATTENTION_SIZES = (
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
)

# Model types whose full-attention q_proj also emits a sigmoid output gate (transformers' Qwen3-Next and
# Qwen3.5 attention; slime scripts/models/qwen3.5-35B-A3B.sh --attention-output-gate).
GATED_ATTENTION_TYPES = frozenset({"qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"})

# Parts every quantization method here leaves unquantized: embeddings, lm_head, the MoE router.
NEVER_QUANTIZED = frozenset({"embed", "lm_head", "router"})


class Quantization(NamedTuple):
    """A checkpoint's weight format: bytes per weight of its quantized linear layers (scales included)."""

    method: str  # "fp8 block 128x128", "mxfp4", "nvfp4", "awq 4-bit g128" ...
    bytes_per_weight: float
    unquantized: frozenset[str] = NEVER_QUANTIZED  # parts kept at the checkpoint dtype


class ModelShape(NamedTuple):
    hidden_size: int
    num_layers: int
    vocab_size: int
    tie_word_embeddings: bool
    dtype_bytes: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    v_head_dim: int
    intermediate_size: int  # dense MLP (0: every layer is MoE)
    # MLA (DeepSeek V2/V3, Kimi K2): low-rank Q and a latent KV of kv_lora_rank + qk_rope_head_dim
    q_lora_rank: int = 0  # 0: a full-rank Q projection
    kv_lora_rank: int = 0  # 0: not MLA
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    # MoE
    num_experts: int = 0
    moe_intermediate_size: int = 0
    experts_per_token: int = 0  # num_experts_per_tok: the routed experts each token runs (0: not given)
    num_shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    dense_layers: int = 0  # first_k_dense_replace: leading layers with a dense MLP
    mtp_layers: int = 0  # num_nextn_predict_layers: loaded only for NEXTN/EAGLE speculative decoding
    # layer types: full attention, sliding window (bounded KV), linear attention / Mamba (state per request)
    sliding_layers: int = 0
    sliding_window: Optional[int] = None
    linear_layers: int = 0
    linear_key_heads: int = 0
    linear_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    gated_attention: bool = False  # Qwen3-Next, Qwen3.5: q_proj also emits an output gate
    lightning_attention: bool = False  # MiniMax-M1: the linear layers are lightning attention, not Gated DeltaNet
    sglang_swa_pool: bool = False  # SGLang keeps the sliding layers in their own, smaller pool (is_hybrid_swa)
    quantization: Optional[Quantization] = None
    max_position_embeddings: Optional[int] = None
    # config.json's max_position_embeddings where it is there but not a positive integer (8192.0, "8192"), as
    # JSON: what each engine makes of it (SGLang's int(factor * value), vLLM's min(..., value)) differs, so the
    # context a request needs is unknown, never "none given"
    max_position_embeddings_unread: Optional[str] = None
    # (layers, hidden size) of config.json's vision_config, SGLang's defaults 24 / 1024 for a missing key; None:
    # no vision tower
    vision_tower: Optional[tuple[int, int]] = None
    index_head_dim: int = 0  # the DSA indexer's key size (DeepSeek-V3.2: 128); 0: no indexer

    @property
    def mla(self) -> bool:
        return bool(self.kv_lora_rank)

    @property
    def full_attention_layers(self) -> int:
        return self.num_layers - self.sliding_layers - self.linear_layers

    @property
    def moe_layers(self) -> int:
        return self.num_layers - self.dense_layers if self.num_experts else 0


# --- reading config.json -------------------------------------------------------------------------------------


# Larger than any real dimension, layer or expert count (10M-token contexts aside): a config.json past it is
# not a model's, and sizing it would overflow floats.
_MAX_SIZE = 1 << 24


def _int(value: Any) -> Optional[int]:
    """A size from config.json: a positive integer below _MAX_SIZE, else None (absent, junk, absurd)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < _MAX_SIZE else None


def _context(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 40 else None


def _unread_context(value: Any) -> Optional[str]:
    if value is None or _context(value) is not None:
        return None
    text = json.dumps(value) if isinstance(value, (str, int, float, bool)) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _first_int(section: Mapping[str, Any], *keys: str) -> Optional[int]:
    return next((v for v in (_int(section.get(k)) for k in keys) if v is not None), None)


def _part_of(module: str) -> Optional[str]:
    """The part a `modules_to_not_convert` / `ignore` entry names ("lm_head", "model.layers.*.self_attn")."""
    name = module.lower().removeprefix("re:")
    if "lm_head" in name:
        return "lm_head"
    if "embed" in name:
        return "embed"
    if "shared_expert" in name:
        return "shared_experts"
    if "expert" in name:
        return "experts"
    if "linear_attn" in name or "mamba" in name:
        return "linear_attention"
    if "attn" in name or "attention" in name:
        return "attention"
    if name.rstrip("$").endswith("mlp.gate") or "router" in name:
        return "router"
    if "mlp" in name:
        return "dense_mlp"
    return None


def _scaled(bits: float, group: Optional[int], scale_bytes: float) -> float:
    """Bytes per weight of `bits`-bit weights with one scale of `scale_bytes` per `group` weights."""
    return bits / 8 + (scale_bytes / group if group else 0.0)


def quantization_from_config(config: Mapping[str, Any]) -> Optional[Quantization]:
    """The checkpoint's weight format from `quantization_config` (None: not quantized, or not a format known here)."""
    quant = config.get("quantization_config")
    if not isinstance(quant, dict):
        return None
    method = str(quant.get("quant_method", "")).lower()
    algo = str(quant.get("quant_algo", "")).upper()
    skipped = [
        *(quant.get("modules_to_not_convert") or []),
        *(quant.get("ignore") or []),
        *(quant.get("ignored_layers") or []),
        *(quant.get("exclude_modules") or []),
    ]
    unquantized = NEVER_QUANTIZED | {p for p in (_part_of(m) for m in skipped if isinstance(m, str)) if p}
    if method == "fp8" or (method == "modelopt" and algo == "FP8"):
        block = quant.get("weight_block_size")
        if isinstance(block, list) and len(block) == 2 and all(_int(b) for b in block):
            # one float32 scale_inv per block (DeepSeek V3's 128x128)
            return Quantization(f"fp8 block {block[0]}x{block[1]}", 1 + 4 / (block[0] * block[1]), unquantized)
        return Quantization("fp8 per tensor", 1.0, unquantized)
    if method == "mxfp4":
        # gpt-oss: 4-bit e2m1 with one e8m0 scale per 32; attention stays bf16 (modules_to_not_convert)
        return Quantization("mxfp4", _scaled(4, 32, 1), unquantized)
    if method == "modelopt" and algo in ("NVFP4", "FP4"):
        group = _int(quant.get("group_size")) or 16
        return Quantization("nvfp4", _scaled(4, group, 1), unquantized)
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        bits = _int(quant.get("bits")) or _int(quant.get("w_bit")) or 4
        size = _int(quant.get("group_size")) or _int(quant.get("q_group_size"))
        if size is None and quant.get("group_size") != -1:  # -1: one scale per output channel
            size = 128
        # fp16 scale plus a packed zero point per group
        return Quantization(f"{method} {bits}-bit", _scaled(bits, size, 2 + bits / 8), unquantized)
    if method == "compressed-tensors":
        groups = quant.get("config_groups")
        schemes = [g.get("weights") for g in groups.values() if isinstance(g, dict)] if isinstance(groups, dict) else []
        weights = schemes[0] if schemes else None
        if isinstance(weights, dict) and _int(weights.get("num_bits")):
            bits = weights["num_bits"]
            scale = 1 if str(weights.get("type")) == "float" and bits == 4 else 2
            return Quantization(
                f"compressed-tensors {bits}-bit", _scaled(bits, _int(weights.get("group_size")), scale), unquantized
            )
    return None


def quantization_from_flag(name: str) -> Optional[Quantization]:
    """The weight format `--quantization NAME` gives a checkpoint that carries none (quantized as it loads); None
    for a method not sized here."""
    method = name.lower()
    if method in ("fp8", "w8a8_fp8", "modelopt_fp8", "fbgemm_fp8", "ptpc_fp8"):
        return Quantization(f"fp8 ({name})", 1.0)
    if method in ("modelopt_fp4", "nvfp4", "w4a4_nvfp4"):
        return Quantization(f"nvfp4 ({name})", _scaled(4, 16, 1))
    if method == "mxfp4":
        return Quantization("mxfp4", _scaled(4, 32, 1))
    if method in ("w8a8_int8", "int8"):
        return Quantization(f"int8 ({name})", 1.0)
    return None


def with_quantization_flag(s: ModelShape, name: Optional[str]) -> ModelShape:
    """The shape with `--quantization NAME` applied. It wins over config.json's: the engines refuse a method
    that contradicts the checkpoint's, so a run with the flag is of a checkpoint in that format (a preset
    standing for an FP4 release of an FP8 model, say); the parts config.json leaves unquantized stay so."""
    quantization = quantization_from_flag(name) if name else None
    if quantization is None:
        return s
    unquantized = s.quantization.unquantized if s.quantization else quantization.unquantized
    return s._replace(quantization=quantization._replace(unquantized=unquantized))


# Model types whose experts are sized by moe_intermediate_size (their intermediate_size is the dense MLP's):
# transformers' configuration_deepseek_v3 / qwen2_moe / qwen3_moe / qwen3_next / glm4_moe. Without it their expert
# size is unknown (Mixtral, gpt-oss, OLMoE, Llama 4 size their experts by intermediate_size).
MOE_SIZE_FIELD_TYPES = frozenset(
    {
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "kimi_k2",
        "qwen2_moe",
        "qwen3_moe",
        "qwen3_next",
        "qwen3_5_moe",
        "qwen3_5_moe_text",
        "qwen3_vl_moe",
        "qwen3_vl_moe_text",
        "glm4_moe",
        "glm_moe_dsa",
    }
)


def _moe_sizes_missing(text: Mapping[str, Any], experts: int, moe_intermediate: int) -> bool:
    """A config that says it is MoE (an expert size, shared experts, experts per token, DeepSeek's routed experts, or
    a model type that sizes experts apart) without both the expert count and the expert size it needs."""
    says_moe = any(
        text.get(k) is not None
        for k in ("moe_intermediate_size", "n_shared_experts", "n_routed_experts", "num_experts_per_tok", "moe_topk")
    )
    if moe_intermediate and not experts:
        return True
    if not says_moe and not experts:
        return False  # dense
    if text.get("n_routed_experts") is not None or text.get("model_type") in MOE_SIZE_FIELD_TYPES:
        return not (experts and moe_intermediate)
    return not experts


def shape_from_config(config: Mapping[str, Any]) -> Optional[ModelShape]:
    """The numbers that size a checkpoint (multimodal configs: the language model's `text_config`)."""
    text_config = config.get("text_config")
    text: Mapping[str, Any] = text_config if isinstance(text_config, dict) else config
    hidden = _first_int(text, "hidden_size", "d_model")
    layers = _first_int(text, "num_hidden_layers", "num_layers")
    vocab = _int(text.get("vocab_size"))
    heads = _first_int(text, "num_attention_heads")
    dtype = text.get("torch_dtype") or text.get("dtype") or config.get("torch_dtype") or config.get("dtype")
    # No dtype in config.json (gpt-oss) reads as float32, served in 16 bits.
    dtype_bytes = DTYPE_BYTES.get(dtype, 0) if isinstance(dtype, str) else 2
    if not (hidden and layers and vocab and heads and dtype_bytes):
        return None
    kv_heads = _first_int(text, "num_key_value_heads") or heads
    kv_lora = _int(text.get("kv_lora_rank"))
    if kv_lora:
        nope, rope = _int(text.get("qk_nope_head_dim")), _int(text.get("qk_rope_head_dim"))
        v_head_dim = _int(text.get("v_head_dim"))
        if nope is None or rope is None or v_head_dim is None:
            return None
        head_dim = nope + rope
    else:
        nope, rope = 0, 0
        head_dim = _int(text.get("head_dim")) or hidden // heads
        v_head_dim = _int(text.get("v_head_dim")) or head_dim

    experts = _first_int(text, "n_routed_experts", "num_local_experts", "num_experts") or 0
    moe_intermediate = _first_int(text, "moe_intermediate_size") or 0
    intermediate = _first_int(text, "intermediate_size") or 0
    if _moe_sizes_missing(text, experts, moe_intermediate):
        return None  # a MoE model whose expert count or expert size is not given: unknown, not a dense guess
    if experts and not moe_intermediate:
        # Mixtral and gpt-oss name the expert size intermediate_size; Llama 4 keeps the dense one apart
        moe_intermediate, intermediate = intermediate, _first_int(text, "intermediate_size_mlp") or 0
    if not intermediate and not experts:
        return None
    shared = _first_int(text, "n_shared_experts", "num_shared_experts") or 0
    shared_size = _first_int(text, "shared_expert_intermediate_size") or 0
    if shared_size and not shared:
        shared = 1  # Qwen2-MoE / Qwen3-Next: one shared expert of its own size
    elif shared and not shared_size:
        shared_size = moe_intermediate
    if experts and intermediate and not shared and _int(text.get("interleave_moe_layer_step")):
        shared, shared_size = 1, moe_intermediate  # Llama 4: one shared expert beside the routed ones
    elif experts and intermediate and not shared and text.get("residual_moe") is True:
        # Grok: a dense MLP of intermediate_size beside the experts in every layer (sglang models/grok.py, 0.5.23
        # :480, :527-531 Grok1MLP(intermediate_size=config.intermediate_size)): sized as a shared expert
        shared, shared_size = 1, intermediate
    dense_layers = _first_int(text, "first_k_dense_replace") or 0
    mlp_only = text.get("mlp_only_layers")
    if isinstance(mlp_only, list):
        dense_layers += len(mlp_only)
    step = _int(text.get("interleave_moe_layer_step")) or _int(text.get("decoder_sparse_step")) or 1
    if experts and step > 1:
        dense_layers += layers - layers // step

    types = text.get("layer_types")
    layer_types = [t for t in types if isinstance(t, str)] if isinstance(types, list) else []
    sliding_layers = sum("sliding" in t for t in layer_types)
    linear_layers = sum(t in ("linear_attention", "mamba", "gdn") for t in layer_types)
    interval = _int(text.get("full_attention_interval"))
    if interval and not layer_types:
        linear_layers = layers - layers // interval
    # MiniMax-M1 config.json: attn_type_list, 0 = lightning (linear) attention, 1 = softmax attention
    attn_types = text.get("attn_type_list")
    lightning = isinstance(attn_types, list) and not layer_types
    if isinstance(attn_types, list) and lightning:
        linear_layers = sum(t == 0 for t in attn_types)
    linear_sizes = [_int(text.get(k)) for k in LINEAR_ATTENTION_SIZES]
    if linear_layers and not lightning and not all(linear_sizes):
        return None  # linear-attention layers whose weights and state cannot be sized
    window = _int(text.get("sliding_window"))
    pattern = _int(text.get("sliding_window_pattern"))
    if window and not layer_types and pattern:  # Gemma 3: every pattern-th layer global
        sliding_layers = layers - layers // pattern
    elif window and not layer_types and text.get("model_type") == "gemma2":  # alternating local / global
        sliding_layers = layers // 2
    elif window and not layer_types and text.get("use_sliding_window") is not False and not linear_layers:
        sliding_layers = layers  # Mistral v0.1: every layer sliding
    chunk = _int(text.get("attention_chunk_size"))
    if chunk and text.get("model_type") == "llama4_text":
        # Llama 4: chunked local attention on every layer but each fourth (sglang configs/model_config.py:2705-2711)
        sliding_layers, window = layers - layers // 4, chunk
    if not sliding_layers:
        window = None
    architectures = config.get("architectures")
    architecture = architectures[0] if isinstance(architectures, list) and architectures else None

    return ModelShape(
        hidden_size=hidden,
        num_layers=layers,
        vocab_size=vocab,
        tie_word_embeddings=bool(
            text.get(
                "tie_word_embeddings", config.get("tie_word_embeddings", text.get("model_type") in TIED_BY_DEFAULT)
            )
        ),
        dtype_bytes=dtype_bytes,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        intermediate_size=intermediate,
        q_lora_rank=_int(text.get("q_lora_rank")) or 0,
        kv_lora_rank=kv_lora or 0,
        qk_nope_head_dim=nope or 0,
        qk_rope_head_dim=rope or 0,
        num_experts=experts,
        moe_intermediate_size=moe_intermediate,
        experts_per_token=_first_int(text, "num_experts_per_tok", "moe_topk", "num_experts_per_token") or 0,
        num_shared_experts=shared,
        shared_expert_intermediate_size=shared_size,
        dense_layers=dense_layers if experts else 0,
        mtp_layers=_first_int(text, "num_nextn_predict_layers", "mtp_num_hidden_layers") or 0,
        sliding_layers=sliding_layers,
        sliding_window=window,
        linear_layers=linear_layers,
        # a lightning layer keeps heads x head_dim x head_dim per request (modeling_minimax_m1.py; sglang
        # layers/attention/linear/lightning_backend.py:55-57 kv_history (h, d, e = d)), like a DeltaNet state
        linear_key_heads=heads if lightning else linear_sizes[0] or 0,
        linear_value_heads=heads if lightning else linear_sizes[1] or 0,
        linear_key_head_dim=head_dim if lightning else linear_sizes[2] or 0,
        linear_value_head_dim=head_dim if lightning else linear_sizes[3] or 0,
        linear_conv_kernel=0 if lightning else _int(text.get("linear_conv_kernel_dim")) or 0,
        gated_attention=text.get("model_type") in GATED_ATTENTION_TYPES,
        lightning_attention=lightning,
        sglang_swa_pool=architecture in SGLANG_HYBRID_SWA,
        # multimodal wrappers may keep it in text_config, where the language model's loader finds it
        quantization=quantization_from_config(config) or quantization_from_config(text),
        max_position_embeddings=_context(text.get("max_position_embeddings")),
        max_position_embeddings_unread=_unread_context(text.get("max_position_embeddings")),
        vision_tower=_vision_tower(config.get("vision_config")),
        index_head_dim=_int(text.get("index_head_dim")) or 0,
    )


def _vision_tower(vision: Any) -> Optional[tuple[int, int]]:
    """(layers, hidden size) as SGLang reads them off vision_config: getattr(..., "num_hidden_layers", 24),
    getattr(..., "hidden_size", 1024) (0.5.23 arg_groups/memory_hook.py:440-441)."""
    if not isinstance(vision, dict):
        return None
    return _int(vision.get("num_hidden_layers")) or 24, _int(vision.get("hidden_size")) or 1024


# --- parameters and weight bytes ----------------------------------------------------------------------------


def _attention_parameters(s: ModelShape) -> int:
    h = s.hidden_size
    if s.mla:
        q_dim = s.num_heads * (s.qk_nope_head_dim + s.qk_rope_head_dim)
        q = h * s.q_lora_rank + s.q_lora_rank * q_dim if s.q_lora_rank else h * q_dim
        kv_a = h * (s.kv_lora_rank + s.qk_rope_head_dim)
        kv_b = s.kv_lora_rank * s.num_heads * (s.qk_nope_head_dim + s.v_head_dim)
        return q + kv_a + kv_b + s.num_heads * s.v_head_dim * h
    q = h * s.num_heads * s.head_dim * (2 if s.gated_attention else 1)
    kv = h * s.num_kv_heads * (s.head_dim + s.v_head_dim)
    return q + kv + s.num_heads * s.v_head_dim * h


def _linear_attention_parameters(s: ModelShape) -> int:
    """A Gated DeltaNet layer (Qwen3-Next): in_proj_qkvz, in_proj_ba, conv1d, out_proj; a lightning layer
    (MiniMax-M1 modeling_minimax_m1.py MiniMaxM1LightningAttention): qkv_proj, output_gate, out_proj."""
    if s.lightning_attention:
        return 5 * s.hidden_size * s.linear_value_heads * s.linear_value_head_dim
    key_dim = s.linear_key_heads * s.linear_key_head_dim
    value_dim = s.linear_value_heads * s.linear_value_head_dim
    in_proj = s.hidden_size * (2 * key_dim + 2 * value_dim) + s.hidden_size * 2 * s.linear_value_heads
    conv = (2 * key_dim + value_dim) * s.linear_conv_kernel
    return in_proj + conv + value_dim * s.hidden_size


def parameters(s: ModelShape) -> dict[str, int]:
    """Parameters by part: embed, lm_head, attention, linear_attention, dense_mlp, experts, shared_experts,
    router (a quantization_config may leave any of them at the checkpoint dtype), and mtp (the
    speculative-decoding layers)."""
    h = s.hidden_size
    attention_layers = s.num_layers - s.linear_layers
    dense_mlp_layers = s.dense_layers if s.num_experts else s.num_layers
    expert = 3 * h * s.moe_intermediate_size  # gate, up and down projections
    moe_layer = (
        s.num_experts * expert + s.num_shared_experts * 3 * h * s.shared_expert_intermediate_size + h * s.num_experts
    )
    parts = {
        "embed": s.vocab_size * h,
        "lm_head": 0 if s.tie_word_embeddings else s.vocab_size * h,
        "attention": attention_layers * _attention_parameters(s),
        "linear_attention": s.linear_layers * _linear_attention_parameters(s) if s.linear_layers else 0,
        "dense_mlp": dense_mlp_layers * 3 * h * s.intermediate_size,
        "experts": s.moe_layers * s.num_experts * expert,
        "shared_experts": s.moe_layers * s.num_shared_experts * 3 * h * s.shared_expert_intermediate_size,
        "router": s.moe_layers * h * s.num_experts,
    }
    # An MTP layer is one more decoder layer (MoE where the model is) plus its eh_proj (2h -> h).
    mtp_layer = _attention_parameters(s) + (moe_layer if s.num_experts else 3 * h * s.intermediate_size) + 2 * h * h
    parts["mtp"] = s.mtp_layers * mtp_layer
    return parts


def total_parameters(s: ModelShape) -> int:
    """Parameters of the served model, without the MTP layers (as model cards count them)."""
    return sum(v for k, v in parameters(s).items() if k != "mtp")


def _bytes_per_weight(s: ModelShape, part: str) -> float:
    q = s.quantization
    return s.dtype_bytes if q is None or part in q.unquantized else q.bytes_per_weight


def weight_bytes_per_gpu(
    s: ModelShape, tp: int = 1, pp: int = 1, attn_tp: Optional[int] = None, moe_tp: Optional[int] = None
) -> float:
    """Weight bytes on the busiest GPU of a TP x PP group (attn_tp: attention's TP under DP attention; moe_tp: the
    ranks the routed experts are split over, vLLM's TP x DP)."""
    attn_tp = attn_tp or tp
    divisors = {"attention": attn_tp, "experts": moe_tp or tp}
    parts = parameters(s)
    layer_parts = ("attention", "linear_attention", "dense_mlp", "experts", "shared_experts")
    layers_bytes = sum(parts[p] * _bytes_per_weight(s, p) / divisors.get(p, tp) for p in layer_parts)
    layers_bytes += parts["router"] * _bytes_per_weight(s, "router")  # replicated
    per_stage = layers_bytes * math.ceil(s.num_layers / pp) / s.num_layers
    embed = parts["embed"] * _bytes_per_weight(s, "embed") / tp
    head = (parts["lm_head"] or parts["embed"]) * _bytes_per_weight(s, "lm_head") / tp
    # Tied embeddings are one tensor when one stage holds both ends; with PP each end keeps its copy.
    ends = embed + (parts["lm_head"] * _bytes_per_weight(s, "lm_head") / tp) if pp == 1 else max(embed, head)
    return per_stage + ends


def mtp_bytes_per_gpu(s: ModelShape, tp: int = 1) -> float:
    """The NEXTN/EAGLE draft layers' weights on one GPU (embedding and head are shared with the model)."""
    return parameters(s)["mtp"] * _bytes_per_weight(s, "experts") / tp


# --- KV cache -----------------------------------------------------------------------------------------------


def kv_element_bytes(s: ModelShape, kv_dtype: str) -> float:
    """Bytes of one KV element under --kv-cache-dtype (block scales included); "auto" is the model dtype."""
    if kv_dtype == "auto":
        return s.dtype_bytes
    return KV_ELEMENT_BYTES[kv_dtype] + KV_SCALE_BYTES.get(kv_dtype, 0.0)


def kv_heads_per_rank(s: ModelShape, attn_tp: int) -> int:
    """KV heads on one GPU: sharded over attention TP, one kept when TP exceeds them (sglang
    configs/model_config.py:1700-1711 get_num_kv_heads; vllm shards the same way)."""
    return max(1, s.num_kv_heads // attn_tp)


class KvCost(NamedTuple):
    """What the KV cache costs on one GPU: bytes per token (full-attention layers, and the sliding-window layers
    scaled as the engine sizes them), and the fixed state per request of linear-attention layers."""

    bytes_per_token: float
    state_bytes_per_request: float
    formula: str
    full_bytes_per_token: float  # the full-attention layers alone
    sliding_bytes_per_token: float  # the sliding-window layers, unweighted
    window: Optional[int] = None

    def request_bytes(self, tokens: int) -> float:
        """KV bytes one request of `tokens` holds: full layers for every token, sliding ones up to the window."""
        sliding_tokens = min(tokens, self.window) if self.window else tokens
        return self.full_bytes_per_token * tokens + self.sliding_bytes_per_token * sliding_tokens


# The DSA indexer keeps, per token and layer, index_head_dim fp8 keys plus one float32 scale per 128 of them, not
# divided by TP. SGLang counts it in the pool's cell size from 0.5.3.post3 (model_runner.py profile_max_num_token,
# then model_runner_kv_cache_mixin.py, pool_configurator.py; 0.5.23 pool_configurator.py:399-408, :560-636 with
# DSATokenToKVPool.quant_block_size 128, uint8 elements); vLLM gives each layer a DeepseekV32IndexerCache of
# MLAAttentionSpec(head_size = index_head_dim + index_head_dim // 128 * 4, uint8) (0.33.0 model_executor/models/
# deepseek_v2.py:658-666, :731-736) whose page adds to the latent's in one uniform-type group
# (v1/kv_cache_interface.py:1319-1320, v1/core/kv_cache_planning.py UniformTypeKVCacheSpecs.from_specs).
DSA_INDEXER_SCALE_BLOCK = 128


def dsa_indexer_bytes(s: ModelShape) -> int:
    """Bytes of the DSA indexer cache per token and layer (DeepSeek-V3.2: 128 + 4 = 132)."""
    return s.index_head_dim + s.index_head_dim // DSA_INDEXER_SCALE_BLOCK * 4


def kv_cost(
    s: ModelShape, engine: str, kv_dtype: str, attn_tp: int = 1, pp: int = 1, dsa_indexer: bool = False
) -> KvCost:
    """KV bytes per token on one GPU of one PP stage.

    MHA/GQA: kv heads per rank x (head_dim + v_head_dim) x element bytes per layer (sglang
    model_executor/pool_configurator.py:491-497 _compute_cell_size; vllm v1/kv_cache_interface.py:586-594
    AttentionSpec page_size_bytes / block_size). MLA: (kv_lora_rank + qk_rope_head_dim) x element bytes per layer,
    one latent for all heads, not divided by TP (sglang pool_configurator.py:379-385 with
    mem_cache/kv_cache_configurator.py:3419 calculate_mla_kv_cache_dim; vllm MLAAttentionSpec head_size_v = 0,
    kv_cache_interface.py:743); vLLM's fp8_ds_mla packs a layer's token in 656 bytes (VLLM_PACKED_MLA_BYTES). Sliding-window layers: SGLang's hybrid-SWA models give them swa_full_tokens_ratio
    (0.8, arg_groups/fields/schedule.py:150) tokens per full-layer token (pool_configurator.py:797-802), other
    models a full layer's; vLLM's hybrid allocator frees their blocks past the window, so per token they count
    whole and a request holds at most the window of them (KvCost.request_bytes).
    Linear-attention (Gated DeltaNet) layers keep a state per request: conv (kernel - 1) x conv dim and the
    float32 recurrent state value heads x key dim x value dim, sharded over TP.
    """
    element = kv_element_bytes(s, kv_dtype)
    layers_per_stage = math.ceil(s.num_layers / pp) / s.num_layers
    packed = VLLM_PACKED_MLA_BYTES.get(kv_dtype) if engine == "vllm" and s.mla else None
    if packed:
        per_layer = float(packed)
        formula = f"{packed} B ({kv_dtype}: {s.kv_lora_rank} fp8 + scales + {s.qk_rope_head_dim} bf16)"
    elif s.mla:
        per_layer = (s.kv_lora_rank + s.qk_rope_head_dim) * element
        formula = f"({s.kv_lora_rank} + {s.qk_rope_head_dim}) x {element:g} B"
    else:
        heads = kv_heads_per_rank(s, attn_tp)
        per_layer = heads * (s.head_dim + s.v_head_dim) * element
        formula = f"{heads} kv heads x ({s.head_dim} + {s.v_head_dim}) x {element:g} B"
    if dsa_indexer and s.index_head_dim:
        per_layer += dsa_indexer_bytes(s)
        formula = f"({formula} + {dsa_indexer_bytes(s)} B DSA indexer)"
    sliding_weight = 0.8 if engine == "sglang" and s.sglang_swa_pool else 1.0
    layers = s.full_attention_layers + sliding_weight * s.sliding_layers
    formula += f" x {s.full_attention_layers} full layers"
    if s.sliding_layers:
        formula += f" + {sliding_weight:g} x {s.sliding_layers} sliding layers"
    state = 0.0
    if s.linear_layers:
        key_dim = s.linear_key_heads * s.linear_key_head_dim
        value_dim = s.linear_value_heads * s.linear_value_head_dim
        conv = (2 * key_dim + value_dim) * max(s.linear_conv_kernel - 1, 0) * s.dtype_bytes
        recurrent = s.linear_value_heads * s.linear_key_head_dim * s.linear_value_head_dim * 4
        state = s.linear_layers * (conv + recurrent) / attn_tp * layers_per_stage
    return KvCost(
        per_layer * layers * layers_per_stage,
        state,
        formula,
        per_layer * s.full_attention_layers * layers_per_stage,
        per_layer * s.sliding_layers * layers_per_stage,
        s.sliding_window if engine == "vllm" else None,
    )


# --- the engines' memory budgets -----------------------------------------------------------------------------

# vLLM's --gpu-memory-utilization default, newest first: (release range, default, where it was read).
VLLM_GPU_MEMORY_UTILIZATION = (
    ("vllm>=0.20.0", 0.92, "vllm 0.20.0-0.33.0 vllm/config/cache.py (0.33.0: :215 Field(default=0.92))"),
    ("vllm<0.20.0", 0.9, "vllm 0.10.0-0.19.1 vllm/config.py CacheConfig, then vllm/config/cache.py (default 0.9)"),
)


def vllm_gpu_memory_utilization(release: Optional[Version] = None) -> float:
    """vLLM's default --gpu-memory-utilization in `release` (None: the newest)."""
    if release is None:
        return VLLM_GPU_MEMORY_UTILIZATION[0][1]
    return next(value for bound, value, _ in VLLM_GPU_MEMORY_UTILIZATION if VersionRange.parse(bound).contains(release))


class SglangMemoryFlags(NamedTuple):
    """The launch flags SGLang's default --mem-fraction-static reads; None: not given, the release's default."""

    chunked_prefill_size: Optional[int] = None  # --chunked-prefill-size; -1 turns chunking off
    max_prefill_tokens: Optional[int] = None  # --max-prefill-tokens (16384), the activation term when chunking is off
    cuda_graph_max_bs: Optional[int] = None  # --cuda-graph-max-bs (0.5.3-0.5.19), --cuda-graph-max-bs-decode (0.5.14+)
    max_running_requests: Optional[int] = None  # --max-running-requests
    # The prefill graphs' largest capture size: --piecewise-cuda-graph-max-tokens (0.5.3.post2-0.5.19),
    # --cuda-graph-max-bs-prefill (0.5.14+); the chunked prefill size (capped as the release caps it) when not given
    prefill_graph_max_bs: Optional[int] = None
    disable_cuda_graph: bool = False  # --disable-cuda-graph
    # The graph phases a per-phase flag turns off: "prefill" (--disable-piecewise-cuda-graph 0.5.10-0.5.13,
    # --disable-prefill-cuda-graph 0.5.14+), "decode" (--disable-decode-cuda-graph 0.5.14+)
    disabled_graph_phases: frozenset[str] = frozenset()
    context_length: Optional[int] = None  # --context-length


# Every release from 0.5.3 to 0.5.23 defaults --max-prefill-tokens to 16384 (server_args.py 0.5.3 :191, 0.5.13
# :430; arg_groups/fields/schedule.py:71-81 in 0.5.23).
SGLANG_MAX_PREFILL_TOKENS = 16384


class SglangFractionHeuristic(NamedTuple):
    """How a range of SGLang releases sets --mem-fraction-static when it is not given, on CUDA for one model
    without DP attention or PD disaggregation: (GPU memory - reserved) / GPU memory, rounded to 3 places (then
    the vision factor for a multimodal model, sglang_vision_factor)."""

    releases: str  # a release range, rules/core/versions.py
    source: str
    # (below GiB, chunked_prefill_size, decode CUDA-graph max_bs at TP < 4, at TP >= 4); the last has no bound. The
    # tier's chunk and max_bs are defaults: --chunked-prefill-size and --cuda-graph-max-bs(-decode) replace them.
    # reserved MiB = 512 + 1.5 x max(chunked_prefill_size, or max_prefill_tokens when chunking is off, 2048)
    # + 2 x max_bs + TP x PP / 8 x 1024 (+ the prefill graphs), at least 10 GiB on GPUs over 60 GiB, then the
    # speculative reserve.
    tiers: tuple[tuple[float, int, int, int], ...] = ()
    # Before 0.5.3 a fixed reserve instead: (below GiB, GiB, GiB per TP x PP rank); the last has no bound.
    fixed: tuple[tuple[float, float, float], ...] = ()
    # The prefill (piecewise / breakable) CUDA graphs, on by default: 8 MiB per capture size up to the chunked
    # prefill size, a flat 1.5 GiB for MLA models.
    prefill_graphs: bool = False
    prefill_graphs_capped_at_context: bool = False  # the prefill capture sizes stop at --context-length
    # What turns the default prefill graphs (and their reserve) off before the fraction is computed:
    # "speculative", "pp" (pp_size > 1), "mla", "mla_non_dsa" (an MLA model without DeepSeek sparse attention).
    prefill_graphs_off_under: frozenset[str] = frozenset()
    # The reserves --disable-cuda-graph drops: "prefill", "decode" (before 0.5.14 it drops none).
    disabled_graphs_unreserved: frozenset[str] = frozenset()
    # A default decode max_bs above --max-running-requests is lowered to it.
    max_bs_capped_at_running_requests: bool = False
    # MiB reserved for speculative decoding: (STANDALONE, NGRAM, any other algorithm).
    speculative_mib: tuple[int, int, int] = (0, 0, 0)


_UNBOUNDED = float("inf")
# The decode max_bs / chunked prefill tiers, as three eras of SGLang wrote them (A10-class GPUs moved most).
_TIERS_0_5_3 = (
    (20, 2048, 8, 8),
    (35, 2048, 16, 80),
    (60, 4096, 32, 160),
    (160, 8192, 256, 512),
    (_UNBOUNDED, 16384, 512, 512),
)
_TIERS_0_5_4_POST3 = (
    (20, 2048, 8, 8),
    (35, 2048, 24, 80),
    (60, 4096, 32, 160),
    (160, 8192, 256, 512),
    (_UNBOUNDED, 16384, 512, 512),
)
_TIERS_0_5_20 = (
    (20, 2048, 8, 8),
    (35, 4096, 48, 160),
    (60, 4096, 32, 160),
    (160, 8192, 256, 512),
    (_UNBOUNDED, 16384, 512, 512),
)
_FIXED_0_5_1 = ((35, 2.8, 0.1), (90, 9.5, 0.5), (160, 12, 0.5), (_UNBOUNDED, 32, 0))
_BOTH_GRAPHS = frozenset({"prefill", "decode"})

# Newest first; each range read in every wheel it names (the function diffed release to release, unchanged
# within a range but for NPU / CPU / XPU branches, PD-disaggregation and DP-attention terms not modelled here).
SGLANG_FRACTION_HEURISTICS = (
    SglangFractionHeuristic(
        "sglang>=0.5.22",
        "sglang 0.5.22-0.5.23 arg_groups/memory_hook.py handle_gpu_memory_settings (0.5.23: tiers :89-180, a "
        "default max_bs lowered to --max-running-requests :182-188, prefill max_bs :233-263, reserve :297-315, "
        "reserve_for_graph_mb :357-399); run after handle_cuda_graph_config (pipeline.py:191, :218), where "
        "--disable-cuda-graph sets both graph backends DISABLED (cuda_graph_hook.py:55-57) and PP > 1 the default "
        "breakable prefill graphs (:150-161; the 8192-token PP cap of memory_hook.py:243-250 is for an explicit "
        "--cuda-graph-backend-prefill breakable)",
        tiers=_TIERS_0_5_20,
        prefill_graphs=True,
        prefill_graphs_off_under=frozenset({"pp"}),
        disabled_graphs_unreserved=_BOTH_GRAPHS,
        max_bs_capped_at_running_requests=True,
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.20,<0.5.22",
        "sglang 0.5.20-0.5.21 arg_groups/memory_hook.py handle_gpu_memory_settings (A10-class tier: chunk 4096, "
        "max_bs 48 / 160; --max-running-requests does not lower max_bs; PP > 1 turns the prefill graphs off: "
        "0.5.20 cuda_graph_hook.py:122)",
        tiers=_TIERS_0_5_20,
        prefill_graphs=True,
        prefill_graphs_off_under=frozenset({"pp"}),
        disabled_graphs_unreserved=_BOTH_GRAPHS,
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.19,<0.5.20",
        "sglang 0.5.19 arg_groups/memory_hook.py handle_gpu_memory_settings (A10-class tier: chunk 2048, max_bs "
        "24), after handle_cuda_graph_config (pipeline.py:192, :228), which turns the prefill graphs off under PP "
        "> 1 (cuda_graph_hook.py:122)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_off_under=frozenset({"pp"}),
        disabled_graphs_unreserved=_BOTH_GRAPHS,
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.18,<0.5.19",
        "sglang 0.5.18 server_args.py _handle_gpu_memory_settings with reserve_for_graph_mb (breakable prefill "
        "graphs by default on CUDA, model_executor/cuda_graph_config.py default_prefill_backend; "
        "_disable_breakable_cudagraph_if_incompatible :4666 names neither PP nor MLA)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        disabled_graphs_unreserved=_BOTH_GRAPHS,
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.17,<0.5.18",
        "sglang 0.5.17 server_args.py _handle_gpu_memory_settings (the prefill capture sizes no longer stop at "
        "--context-length; breakable prefill graphs off for MLA models other than DSA ones: "
        "_disable_breakable_cudagraph_if_incompatible :4466-4472)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_off_under=frozenset({"mla_non_dsa"}),
        disabled_graphs_unreserved=_BOTH_GRAPHS,
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.15,<0.5.17",
        "sglang 0.5.15-0.5.16 server_args.py _handle_gpu_memory_settings (a DISABLED decode graph, which "
        "--disable-cuda-graph sets, reserves nothing from 0.5.15; the prefill default turns breakable on CUDA, "
        "model_executor/cuda_graph_config.py default_prefill_backend, and off for MLA models: 0.5.15 "
        "server_args.py:3352)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_capped_at_context=True,
        prefill_graphs_off_under=frozenset({"mla"}),
        disabled_graphs_unreserved=_BOTH_GRAPHS,
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.14,<0.5.15",
        "sglang 0.5.14 server_args.py _handle_gpu_memory_settings :3122-3329 (tc_piecewise prefill graphs by "
        "default, model_executor/cuda_graph_config.py:91, off under PP > 1 :3009; --disable-cuda-graph turns them "
        "off in _handle_cuda_graph_config :2942-2944 but the decode max_bs x 2 stays; the speculative reserve no "
        "longer here)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_capped_at_context=True,
        prefill_graphs_off_under=frozenset({"pp"}),
        disabled_graphs_unreserved=frozenset({"prefill"}),
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.13,<0.5.14",
        "sglang 0.5.13-0.5.13.post1 server_args.py _handle_gpu_memory_settings :1444-1654 (the piecewise capture "
        "sizes stop at --context-length; PP > 1 turns piecewise graphs off in _handle_piecewise_cuda_graph "
        ":1358-1360)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_capped_at_context=True,
        prefill_graphs_off_under=frozenset({"pp"}),
        speculative_mib=(6144, 0, 4096),
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.11,<0.5.13",
        "sglang 0.5.11-0.5.12 server_args.py _handle_gpu_memory_settings (PP > 1 turns piecewise graphs off in "
        "_handle_piecewise_cuda_graph, 0.5.11 :1210-1212; speculative decoding no longer does)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_off_under=frozenset({"pp"}),
        speculative_mib=(6144, 0, 4096),
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.10,<0.5.11",
        "sglang 0.5.10-0.5.10.post1 server_args.py _handle_gpu_memory_settings :1141-1343 (piecewise CUDA graphs on "
        "by default: disable_piecewise_cuda_graph False, but _handle_piecewise_cuda_graph :1078-1099, run before "
        "it, turns them off under speculative decoding and PP > 1; speculative + 4 GiB, STANDALONE + 6 GiB)",
        tiers=_TIERS_0_5_4_POST3,
        prefill_graphs=True,
        prefill_graphs_off_under=frozenset({"speculative", "pp"}),
        speculative_mib=(6144, 0, 4096),
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.4.post3,<0.5.10",
        "sglang 0.5.4.post3-0.5.9 server_args.py _handle_gpu_memory_settings (piecewise CUDA graphs off by default: "
        "enable_piecewise_cuda_graph False; speculative + 2 GiB, STANDALONE + 6 GiB)",
        tiers=_TIERS_0_5_4_POST3,
        speculative_mib=(6144, 0, 2048),
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.3,<0.5.4.post3",
        "sglang 0.5.3-0.5.4 server_args.py _handle_gpu_memory_settings (0.5.3: tiers :566-629, reserve :637-675, "
        "A10-class tier at TP < 4: max_bs 16)",
        tiers=_TIERS_0_5_3,
        speculative_mib=(6144, 0, 2048),
    ),
    SglangFractionHeuristic(
        "sglang>=0.5.2,<0.5.3",
        "sglang 0.5.2 server_args.py __post_init__ (a fixed reserve per GPU-memory tier, whatever the flags; "
        "STANDALONE + 6 GiB, other speculative + 2 GiB)",
        fixed=_FIXED_0_5_1,
        speculative_mib=(6144, 2048, 2048),
    ),
    SglangFractionHeuristic(
        "sglang<0.5.2",
        "sglang 0.5.0rc2-0.5.1.post3 server_args.py __post_init__ (a fixed reserve per GPU-memory tier, whatever "
        "the flags; speculative + 2 GiB)",
        fixed=_FIXED_0_5_1,
        speculative_mib=(2048, 2048, 2048),
    ),
)


# Multimodal architectures SGLang serves text-only unless --enable-multimodal (configs/model_config.py
# mm_disabled_models: 0.5.3 :123-127, 0.5.23 :692-702; Inkling from 0.5.16): no vision reduction for them.
SGLANG_MULTIMODAL_OFF_BY_DEFAULT = (
    (
        "sglang>=0.5.0rc2",
        frozenset(
            {"Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration", "Step3VLForConditionalGeneration"}
        ),
    ),
    ("sglang>=0.5.16", frozenset({"InklingForConditionalGeneration"})),
)


def sglang_multimodal_by_default(architecture: Optional[str], release: Optional[Version] = None) -> bool:
    """Whether `release` serves a multimodal architecture with its vision tower when --enable-multimodal is not
    given (None: the newest)."""
    return not any(
        architecture in archs and (release is None or VersionRange.parse(bound).contains(release))
        for bound, archs in SGLANG_MULTIMODAL_OFF_BY_DEFAULT
    )


def sglang_vision_factor(vision_tower: tuple[int, int]) -> float:
    """What SGLang multiplies its default fraction by for a vision model: 0.95 x (1 - 0.1 x (the tower's layers x
    hidden^2 over ViT-L/14's 24 x 1024^2, less 1)) clamped to 0.8-1.05, the same in every release (0.5.0rc2
    server_args.py adjust_mem_fraction_for_vlm, 0.5.23 arg_groups/memory_hook.py:417-462), not rounded after."""
    layers, hidden = vision_tower
    ratio = layers * hidden**2 / (24 * 1024**2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def sglang_fraction_heuristic(release: Optional[Version] = None) -> SglangFractionHeuristic:
    """The rule `release` computes its default --mem-fraction-static by; the newest for None."""
    if release is None:
        return SGLANG_FRACTION_HEURISTICS[0]
    return next(r for r in SGLANG_FRACTION_HEURISTICS if VersionRange.parse(r.releases).contains(release))


def sglang_default_mem_fraction(
    gpu_mib: float,
    tp: int = 1,
    pp: int = 1,
    mla: bool = False,
    release: Optional[Version] = None,
    speculative: Optional[str] = None,
    flags: SglangMemoryFlags = SglangMemoryFlags(),
    dsa: bool = False,
    vision_tower: Optional[tuple[int, int]] = None,
) -> float:
    """SGLang's --mem-fraction-static when not given, as `release` computes it from the GPU memory and the launch
    flags (SGLANG_FRACTION_HEURISTICS; None: the newest); `dsa`: an MLA model with DeepSeek sparse attention;
    `vision_tower`: the (layers, hidden size) of a multimodal model served with it (sglang_vision_factor).
    DP-attention, PD-disaggregation and DeepEP extras are left out."""
    heuristic = sglang_fraction_heuristic(release)
    gib = gpu_mib / 1024
    if heuristic.fixed:
        _, base, per_rank = next(t for t in heuristic.fixed if gib < t[0])
        reserved = (base + per_rank * tp * pp) * 1024
    else:
        reserved = _sglang_graph_and_activation_mib(heuristic, gib, tp, pp, mla, dsa, speculative, flags)
        if gpu_mib > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
    if speculative:
        standalone, ngram, other = heuristic.speculative_mib
        reserved += {"STANDALONE": standalone, "NGRAM": ngram}.get(speculative.upper(), other)
    fraction = round((gpu_mib - reserved) / gpu_mib, 3)
    return fraction * sglang_vision_factor(vision_tower) if vision_tower else fraction


def _sglang_graph_and_activation_mib(
    heuristic: SglangFractionHeuristic,
    gib: float,
    tp: int,
    pp: int,
    mla: bool,
    dsa: bool,
    speculative: Optional[str],
    flags: SglangMemoryFlags,
) -> float:
    """The tiered releases' reserve before the 10 GiB floor: the metadata constant, the activations of one
    prefill, the parallel slack and the decode and prefill CUDA graphs."""
    _, tier_chunk, small_tp_bs, large_tp_bs = next(t for t in heuristic.tiers if gib < t[0])
    chunk = tier_chunk if flags.chunked_prefill_size is None else flags.chunked_prefill_size
    max_bs = flags.cuda_graph_max_bs
    if max_bs is None:
        max_bs = small_tp_bs if tp < 4 else large_tp_bs
        if heuristic.max_bs_capped_at_running_requests and flags.max_running_requests is not None:
            max_bs = min(max_bs, flags.max_running_requests)
    activation_tokens = chunk if chunk > 0 else (flags.max_prefill_tokens or SGLANG_MAX_PREFILL_TOKENS)
    reserved = 512 + max(activation_tokens, 2048) * 1.5 + tp * pp / 8 * 1024
    # a phase's own flag always drops its prefill reserve (disable_piecewise_cuda_graph, then a DISABLED prefill
    # backend); a DISABLED decode graph reserves nothing only where --disable-cuda-graph's does (0.5.15+)
    graphs_off = (heuristic.disabled_graphs_unreserved if flags.disable_cuda_graph else frozenset()) | (
        flags.disabled_graph_phases & (heuristic.disabled_graphs_unreserved | {"prefill"})
    )
    if "decode" not in graphs_off:
        reserved += max_bs * 2
    prefill_off = {"speculative": bool(speculative), "pp": pp > 1, "mla": mla, "mla_non_dsa": mla and not dsa}
    if (
        heuristic.prefill_graphs
        and "prefill" not in graphs_off
        and not any(prefill_off[cause] for cause in heuristic.prefill_graphs_off_under)
    ):
        prefill_max = chunk if flags.prefill_graph_max_bs is None else flags.prefill_graph_max_bs
        if flags.prefill_graph_max_bs is None and heuristic.prefill_graphs_capped_at_context and flags.context_length:
            prefill_max = min(prefill_max, flags.context_length)
        reserved += 1.5 * 1024 if mla else _prefill_capture_sizes(prefill_max) * 8
    return reserved


def _prefill_capture_sizes(max_bs: int) -> int:
    """How many prefill CUDA-graph sizes SGLang captures up to `max_bs` (the same list in 0.5.10-0.5.23:
    server_args.py _generate_piecewise_cuda_graph_tokens, then arg_groups/cuda_graph_hook.py:480-497)."""
    sizes = [
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, max_bs + 1, 512),
    ]
    return sum(size <= max_bs for size in sizes)
