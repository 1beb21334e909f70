"""Model features from a Hugging Face config.json, read as JSON: model code is never imported or executed.

`features_from_config(dict, name, source)` reads a config.json already parsed (the face reads the file:
attn_preflight/inputs.py `load_model`); `load_preset(name)` a built-in preset (rules/knowledge/model_presets.json
holds excerpts of real configs, parsed by the same code).

The numbers attention depends on are checked, never coerced: transformers' PretrainedConfig stores each key as
given (configuration_utils.py, `setattr(self, key, value)` for every kwarg), so `"head_dim": "512"` reaches the
engine as a string and `0` or `NaN` as that number. A value of the wrong type or range is a RulesInputError
naming the field (exit 2), rather than read as absent and judged as a model without it.
"""

import json
import math
from types import MappingProxyType
from typing import Any, NamedTuple, Optional

from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.knowledge import data_text
from attn_preflight.rules.knowledge.memory import ModelShape, shape_from_config, total_parameters

# --feature names: what a config.json cannot say (or to force a feature on).
FEATURES = {
    "score_mod": "the model passes a custom score_mod to attention (e.g. Inkling relative attention)",
    "rel_bias": "the model passes a sheared relative bias (rel_bias) to attention (Inkling)",
    "sinks": "learnable attention sinks (e.g. GPT-OSS)",
    "softcap": "attention logit soft-capping (e.g. Gemma 2)",
    "sliding_window": "sliding-window (local) attention on some or all layers",
    "mla": "multi-head latent attention (DeepSeek V2/V3 family)",
    "cross_attention": "encoder-decoder cross attention",
    "chunked_local": "chunked local attention (Llama 4 attention_chunk_size)",
    "asymmetric_kv": "K and V head dims differ",
}

# Architectures SGLang treats as absorbed-MLA "DeepSeek family" for deterministic inference
# (sglang 0.5.23 python/sglang/srt/arg_groups/attention_hook.py, handle_deterministic_inference).
DEEPSEEK_FAMILY = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "Glm5NextForConditionalGeneration",
    }
)

# Model type -> the `index_topk` its transformers config class defaults to, so that every such model has a
# DeepSeek sparse attention (DSA) indexer whether or not its config.json names the field: transformers
# src/transformers/models/glm_moe_dsa/configuration_glm_moe_dsa.py (GlmMoeDsaConfig, `index_topk: int = 2048`).
DEFAULT_INDEX_TOPK = MappingProxyType({"glm_moe_dsa": 2048})

# Preset name -> {"hub_id": "org/name", "aliases": [...], "source": "...", "config": {...config.json excerpt...}}.
PRESETS: dict[str, dict[str, Any]] = json.loads(data_text("model_presets.json"))["presets"]


class CheckpointKvQuant(NamedTuple):
    """The KV-cache quantization a checkpoint's quantization_config (or ModelOpt's hf_quant_config.json) declares:
    ModelOpt's `kv_cache_quant_algo` string or a `kv_cache_scheme` mapping, read where vLLM reads them
    (utils/torch_utils.py get_kv_cache_quant_algo_string: the `quantization` section first, then the top level;
    a scheme before an algo). What an engine makes of it is the engine's (rules/knowledge/checkpoint_kv.py)."""

    quant_method: str  # as vLLM names it: "modelopt", "modelopt_fp4", "compressed-tensors", ...
    algo: Optional[str] = None  # kv_cache_quant_algo as written ("FP8")
    nested: bool = False  # read from hf_quant_config.json's `quantization` section (SGLang reads that one apart)
    scheme_type: Optional[str] = None  # kv_cache_scheme's type ("float"), num_bits and dynamic
    scheme_bits: Optional[int] = None
    scheme_dynamic: Optional[bool] = None

    @property
    def declared(self) -> str:
        """What the checkpoint says, as a person reads it in its config."""
        if self.algo is not None:
            return f"kv_cache_quant_algo {self.algo!r}"
        dynamic = {True: ", dynamic", False: ", static", None: ""}[self.scheme_dynamic]
        return f"kv_cache_scheme {self.scheme_bits}-bit {self.scheme_type}{dynamic}"


class ModelFeatures(NamedTuple):
    name: str
    source: str  # "preset <name>" or the config.json path
    architecture: Optional[str] = None
    model_type: Optional[str] = None
    dtype: Optional[str] = None
    num_attention_heads: Optional[int] = None
    num_key_value_heads: Optional[int] = None
    head_dim: Optional[int] = None  # Q/K head dim of the attention kernel (MLA: nope + rope, the prefill shape)
    v_head_dim: Optional[int] = None
    # (head_dim, v_head_dim) of every layer type, distinct, the default layers' first: Gemma-4's full-attention
    # layers use global_head_dim (vllm gemma4.py Gemma4Attention, `getattr(config, "global_head_dim", ...)`)
    layer_head_dims: tuple[tuple[int, int], ...] = ()
    mla: bool = False
    kv_lora_rank: Optional[int] = None
    qk_rope_head_dim: Optional[int] = None
    sliding_window: Optional[int] = None
    sliding_window_layers: bool = False  # some or all layers use a sliding window
    attention_sinks: bool = False
    learnable_sink: bool = False  # config.json `learnable_sink`: DSA models with learnable sinks (SGLang overrides.py)
    index_topk: Optional[int] = None  # the DSA indexer's top-k: DeepSeek-V3.2, GLM-5 (sparse MLA)
    # the DSA indexer's key pooling, absent meaning 1 and uncompressed (sglang model_config.py get_dsa_index_kpool,
    # get_dsa_index_kpool_compress)
    index_kpool: Optional[int] = None
    index_kpool_compress: bool = False
    # DSA index-topk sharing: layers that reuse an earlier layer's top-k indices (sglang model_config.py
    # is_dsa_shared_topk_layer reads index_topk_freq, an "S" in index_topk_pattern, "shared" in indexer_types)
    index_topk_freq: Optional[int] = None
    index_topk_pattern: Optional[str] = None
    indexer_types: tuple[str, ...] = ()
    num_nextn_predict_layers: Optional[int] = None  # MTP / NextN draft layers shipped in the checkpoint
    softcap: Optional[float] = None
    attention_chunk_size: Optional[int] = None
    cross_attention: bool = False
    # config.json `use_bidirectional_attention`: EmbeddingGemma's Gemma3TextModel encodes bidirectionally (sglang
    # configs/model_config.py is_embedding_gemma reads it with model_type gemma3_text)
    bidirectional_attention: bool = False
    dual_chunk: bool = False
    hybrid_linear: bool = False  # GDN / Mamba / linear-attention layers beside full attention
    # linear attention's head counts by config key, as SGLang's CP-TP group sharing reads them
    # (cp_tp_group_sharing_hook.py: linear_num_key_heads / linear_num_value_heads, else linear_attn_config's num_heads)
    linear_heads: tuple[tuple[str, int], ...] = ()
    # GDN's (linear_key_head_dim, linear_value_head_dim) (Qwen3-Next, Qwen3.5): the FLA kernels' shape in smoke
    linear_head_dims: Optional[tuple[int, int]] = None
    quant_method: Optional[str] = None  # the checkpoint's quantization method, as vLLM names it (_quant_method)
    # ModelOpt's weight `quant_algo` ("NVFP4", "W4A16_NVFP4", "FP8", ...), upper-cased (_quant_algo): a
    # W4A16_NVFP4 checkpoint is modelopt_fp4 too but runs the weight-only GEMMs
    quant_algo: Optional[str] = None
    # quantization_config.weight_block_size ([128, 128] for DeepSeek-style block FP8): vLLM's Fp8Config block_quant
    # (fp8.py from_config:163, Fp8LinearMethod.__init__:257-258, 0.33.0); () when it declares none
    weight_block_size: tuple[int, ...] = ()
    # config.json `canvas_length`: DiffusionGemma's diffusion block (sglang dllm/config.py DLLM_PARAMS reads it)
    canvas_length: Optional[int] = None
    # config.json `mamba_chunk_size` and `chunk_size` (Nemotron-H's older name), at the top level where SGLang's
    # mamba_cache_chunk_size reads hf_config (rules/engines/sglang/capabilities.py mamba_chunk_size)
    mamba_chunk_size: Optional[int] = None
    ssm_chunk_size: Optional[int] = None
    kv_quant: Optional[CheckpointKvQuant] = None  # the KV-cache quantization the checkpoint declares
    # MiniCPM-SALA (model_type minicpm_sala): sglang configs/minicpm.py MiniCPMHybridConfig's
    # has_minicpm_sparse_attention and has_lightning_layers, from config.json mixer_types and sparse_config
    minicpm_sparse_attention: bool = False
    minicpm_lightning_layers: bool = False
    # config.json attention_projection_layout "fused_qkv" (MiMoV2): the attention TP its qkv_proj weights are
    # interleaved for, num_key_value_heads (sglang model_config.py get_mimo_v2_fused_qkv_expected_tp_size)
    fused_qkv_tp_size: Optional[int] = None
    # text config indexer_n_heads set: Qwen's compressed QSA indexer (sglang layers/attention/qsa/config.py
    # parse_qsa_profile)
    qsa_indexer: bool = False
    features: frozenset[str] = frozenset()
    shape: Optional[ModelShape] = None  # what sizes weights and KV (rules/knowledge/memory.py); None: unknown

    @property
    def gqa_ratio(self) -> Optional[int]:
        if self.num_attention_heads and self.num_key_value_heads:
            return self.num_attention_heads // self.num_key_value_heads
        return None

    @property
    def dsa(self) -> bool:
        """DeepSeek sparse attention: an MLA model with an `index_topk` indexer (vllm deepseek_v2.py
        `is_v32 = hasattr(config, "index_topk")`; sglang model_config.py is_deepseek_dsa)."""
        return self.mla and self.index_topk is not None

    def shared_index_topk(self, read_indexer_types: bool = True) -> str:
        """The config fields that make some DSA layers reuse an earlier layer's top-k indices, as written; "" when
        none do (sglang 0.5.23 arg_groups/model_hook.py _validate_dsa_tbo_index_sharing; releases before 0.5.20
        do not read indexer_types)."""
        shared = []
        if (self.index_topk_freq or 1) > 1:
            shared.append(f"index_topk_freq={self.index_topk_freq}")
        if self.index_topk_pattern is not None and "S" in self.index_topk_pattern:
            shared.append(f"index_topk_pattern={self.index_topk_pattern!r}")
        if read_indexer_types and "shared" in self.indexer_types:
            shared.append("indexer_types with 'shared' layers")
        return ", ".join(shared)

    @property
    def deepseek_family(self) -> bool:
        return self.architecture in DEEPSEEK_FAMILY

    @property
    def absorbed_mla_head_dims(self) -> Optional[tuple[int, int]]:
        """(head_dim, head_dim_v) of the absorbed-MLA decode kernel: (rope dim, kv_lora_rank), FA4's `qv` path."""
        if self.mla and self.kv_lora_rank and self.qk_rope_head_dim:
            return self.qk_rope_head_dim, self.kv_lora_rank
        return None

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self._fields if k not in ("features", "shape", "kv_quant")}
        out["features"] = sorted(self.features)
        out["kv_cache_quantization"] = self.kv_quant.declared if self.kv_quant else None
        out["gqa_ratio"] = self.gqa_ratio
        out["parameters"] = total_parameters(self.shape) if self.shape else None
        quantization = self.shape.quantization if self.shape else None
        out["weight_format"] = quantization.method if quantization else None
        return out


# Integer fields: the smallest value that means something (0 is "none" where the config uses it that way).
_INT_MINIMUM = {
    "num_attention_heads": 1,
    "decoder_attention_heads": 1,
    "num_key_value_heads": 1,
    "head_dim": 1,
    "v_head_dim": 1,
    "hidden_size": 1,
    "d_model": 1,
    "qk_nope_head_dim": 0,
    "qk_rope_head_dim": 0,
    "kv_lora_rank": 0,
    "sliding_window": 0,
    "sliding_window_pattern": 0,
    "attention_chunk_size": 0,
    "global_head_dim": 1,
    "index_topk": 1,
    "index_kpool": 1,
    "index_topk_freq": 0,  # 0 is read as 1 (`getattr(hf_config, "index_topk_freq", 1) or 1`)
    "num_nextn_predict_layers": 0,
    "canvas_length": 1,
    "mamba_chunk_size": 1,
    "chunk_size": 1,
    # linear attention's heads (_linear_heads)
    "linear_num_key_heads": 1,
    "linear_num_value_heads": 1,
    "linear_num_heads": 1,
    "linear_key_head_dim": 1,
    "linear_value_head_dim": 1,
    "num_heads": 1,
}


def _checked_int(section: dict[str, Any], key: str, where: str) -> Optional[int]:
    """`section[key]` as an integer of its range; None when absent or null; RulesInputError otherwise."""
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise RulesInputError(f"{where}{key} must be an integer, got {type(value).__name__} {_shown(value)}")
    if value < _INT_MINIMUM[key]:
        raise RulesInputError(f"{where}{key} must be at least {_INT_MINIMUM[key]}, got {value}")
    return value


def _checked_softcap(section: dict[str, Any], where: str) -> Optional[float]:
    """attn_logit_softcapping: None (absent, null or 0: no capping) or a positive finite number."""
    key = "attn_logit_softcapping"
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise RulesInputError(f"{where}{key} must be a number, got {type(value).__name__} {_shown(value)}")
    try:
        cap = float(value)
    except OverflowError:
        raise RulesInputError(f"{where}{key} is too large to be a number ({len(str(value))} digits)") from None
    if not math.isfinite(cap) or cap < 0:
        raise RulesInputError(f"{where}{key} must be a positive finite number, got {cap:g}")
    return cap or None


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _strings(value: Any) -> tuple[str, ...]:
    """A config.json list of names (per-layer types), its strings only; () when it is not a list."""
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def features_from_config(config: dict[str, Any], name: str, source: str) -> ModelFeatures:
    """ModelFeatures from a parsed config.json (multimodal configs: attention lives in `text_config`)."""
    if not isinstance(config, dict):
        raise RulesInputError(f"{source}: config.json must be a JSON object")
    text_config = config.get("text_config")
    text: dict[str, Any] = text_config if isinstance(text_config, dict) else config
    where = f"{source}: " + ("text_config." if text is not config else "")

    def _int(key: str) -> Optional[int]:
        return _checked_int(text, key, where)

    architectures = config.get("architectures") or []
    architecture = _str(architectures[0]) if isinstance(architectures, list) and architectures else None
    # Some multimodal configs keep the dtype only at the top level.
    dtype = text.get("torch_dtype") or text.get("dtype") or config.get("torch_dtype") or config.get("dtype")

    heads = _int("num_attention_heads") or _int("decoder_attention_heads")
    kv_heads = _int("num_key_value_heads") or heads
    kv_lora_rank = _int("kv_lora_rank")
    mla = kv_lora_rank is not None and kv_lora_rank > 0
    if mla:
        nope, rope = _int("qk_nope_head_dim"), _int("qk_rope_head_dim")
        head_dim = nope + rope if nope is not None and rope is not None else None
        v_head_dim = _int("v_head_dim")
    else:
        rope = None
        head_dim = _int("head_dim")
        hidden = _int("hidden_size") or _int("d_model")
        if head_dim is None and hidden and heads:
            head_dim = hidden // heads
        v_head_dim = _int("v_head_dim") or head_dim

    layer_head_dims = _layer_head_dims(head_dim, v_head_dim, _int("global_head_dim"), text.get("layer_types"))
    model_type = _str(text.get("model_type")) or _str(config.get("model_type"))
    index_topk = _int("index_topk")
    if index_topk is None and mla:
        index_topk = DEFAULT_INDEX_TOPK.get(model_type or "")

    listed_layer_types = text.get("layer_types")
    layer_types: list[Any] = listed_layer_types if isinstance(listed_layer_types, list) else []
    sliding_layers = any(isinstance(t, str) and "sliding" in t for t in layer_types)
    sliding_window = _int("sliding_window")
    if text.get("use_sliding_window") is False and not sliding_layers:
        sliding_window = None  # Qwen2/3 configs carry a window they do not use
    sliding = sliding_layers or sliding_window is not None or _int("sliding_window_pattern") is not None

    softcap = _checked_softcap(text, where)
    sinks = bool(architecture and architecture.startswith("GptOss")) or bool(text.get("attention_sinks"))
    chunk = _int("attention_chunk_size")
    cross = bool(config.get("is_encoder_decoder")) or "cross_attention_layers" in text
    attn_types = text.get("attn_type_list")
    hybrid = (
        any(isinstance(t, str) and t in ("linear_attention", "mamba", "gdn") for t in layer_types)
        or text.get("full_attention_interval") is not None
        # MiniMax-M1 / Text-01: 0 = lightning (linear) attention, 1 = softmax (modeling_minimax_m1.py)
        or (isinstance(attn_types, list) and 0 in attn_types)
    )

    features: set[str] = set()
    if architecture and architecture.startswith("Inkling"):
        # models/inkling_common/attn.py: sheared rel_bias on fa4 (score_mod when deterministic), score_mod on triton
        features.update(("rel_bias", "score_mod"))
    if mla:
        features.add("mla")
    if sinks:
        features.add("sinks")
    if softcap:
        features.add("softcap")
    if sliding:
        features.add("sliding_window")
    if chunk:
        features.add("chunked_local")
    if cross:
        features.add("cross_attention")
    if head_dim and v_head_dim and head_dim != v_head_dim and not mla:
        features.add("asymmetric_kv")
    return ModelFeatures(
        name=name,
        source=source,
        architecture=architecture,
        model_type=model_type,
        dtype=dtype if isinstance(dtype, str) else None,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        layer_head_dims=layer_head_dims,
        mla=mla,
        kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=rope,
        sliding_window=sliding_window,
        sliding_window_layers=sliding,
        attention_sinks=sinks,
        learnable_sink=text.get("learnable_sink") is True,
        index_topk=index_topk,
        index_kpool=_int("index_kpool"),
        index_kpool_compress=text.get("index_kpool_compress") is True,
        index_topk_freq=_int("index_topk_freq"),
        index_topk_pattern=_str(text.get("index_topk_pattern")),
        indexer_types=_strings(text.get("indexer_types")),
        num_nextn_predict_layers=_int("num_nextn_predict_layers"),
        softcap=softcap,
        attention_chunk_size=chunk,
        cross_attention=cross,
        bidirectional_attention=text.get("use_bidirectional_attention") is True,
        dual_chunk=isinstance(text.get("dual_chunk_attention_config"), dict),
        hybrid_linear=hybrid,
        linear_heads=_linear_heads(text, where),
        linear_head_dims=_linear_head_dims(text, where),
        quant_method=_quant_method(config),
        quant_algo=_quant_algo(config),
        weight_block_size=_weight_block_size(config),
        canvas_length=_checked_int(config, "canvas_length", f"{source}: "),  # the top level: getattr(hf_config, ...)
        mamba_chunk_size=_checked_int(config, "mamba_chunk_size", f"{source}: "),
        # another model's chunk_size can mean something else: read for Nemotron-H only (configs/nemotron_h.py)
        ssm_chunk_size=_checked_int(config, "chunk_size", f"{source}: ") if model_type == "nemotron_h" else None,
        kv_quant=_kv_quant(config),
        **_minicpm_sala_layers(text if model_type == "minicpm_sala" else {}),
        fused_qkv_tp_size=_fused_qkv_tp_size(config, source),
        qsa_indexer=text.get("indexer_n_heads") is not None,
        features=frozenset(features),
        shape=shape_from_config(config),
    )


# sglang configs/minicpm.py _MIXER_TYPE_ALIASES (0.5.19-0.5.23): config.json mixer_types spellings -> the layer kind
_MINICPM_MIXERS = {
    **dict.fromkeys(("minicpm4", "minicpm", "standard", "attention", "attn"), "minicpm4"),
    **dict.fromkeys(("lightning", "lightning_attn", "lightning-attn"), "lightning-attn"),
}


def _minicpm_sala_layers(text: dict[str, Any]) -> dict[str, bool]:
    """MiniCPMHybridConfig's layer kinds: mixer_types (default ["minicpm4"]), sparse attention when sparse_config is
    set and a minicpm4 layer exists (has_minicpm_sparse_attention), lightning layers (has_lightning_layers)."""
    if not text:
        return {}
    mixers = text.get("mixer_types") or ["minicpm4"]
    kinds = {_MINICPM_MIXERS.get(m) for m in mixers if isinstance(m, str)} if isinstance(mixers, list) else set()
    return {
        "minicpm_sparse_attention": text.get("sparse_config") is not None and "minicpm4" in kinds,
        "minicpm_lightning_layers": "lightning-attn" in kinds,
    }


def _fused_qkv_tp_size(config: dict[str, Any], source: str) -> Optional[int]:
    """get_mimo_v2_fused_qkv_expected_tp_size: with the top-level attention_projection_layout "fused_qkv", the
    top-level num_key_value_heads, else text_config's."""
    if config.get("attention_projection_layout") != "fused_qkv":
        return None
    kv_heads = _checked_int(config, "num_key_value_heads", f"{source}: ")
    text = config.get("text_config")
    if kv_heads is None and isinstance(text, dict):
        kv_heads = _checked_int(text, "num_key_value_heads", f"{source}: text_config.")
    return kv_heads


def _linear_head_dims(text: dict[str, Any], where: str) -> Optional[tuple[int, int]]:
    """GDN's key and value head dims (config.json linear_key_head_dim / linear_value_head_dim); None without both."""
    key, value = _checked_int(text, "linear_key_head_dim", where), _checked_int(text, "linear_value_head_dim", where)
    return (key, value) if key and value else None


def _linear_heads(text: dict[str, Any], where: str) -> tuple[tuple[str, int], ...]:
    """Linear attention's head counts, named as SGLang reads them: GDN's linear_num_key_heads and
    linear_num_value_heads, else KDA's linear_attn_config num_heads (GLM-5-Next builds it from linear_num_heads,
    sglang 0.5.23 configs/glm5_next.py:198-225)."""
    gdn = [(key, _checked_int(text, key, where)) for key in ("linear_num_key_heads", "linear_num_value_heads")]
    if gdn[0][1] is not None:
        return tuple((key, count) for key, count in gdn if count is not None)
    linear = text.get("linear_attn_config")
    if isinstance(linear, dict):
        count = _checked_int(linear, "num_heads", f"{where}linear_attn_config.")
    else:
        count = _checked_int(text, "linear_num_heads", where)
    return (("num_heads", count),) if count is not None else ()


def _quant_method(config: dict[str, Any]) -> Optional[str]:
    """config.json quantization_config.quant_method, lowercased; ModelOpt's NVFP4 checkpoints are vLLM's
    modelopt_fp4 (vllm modelopt.py ModelOptNvFp4Config.override_quantization_method, by quant_algo). A ModelOpt
    hf_quant_config.json (`producer.name` "modelopt", no quant_method) gets the method vLLM sets from its
    quant_algo (vllm transformers_utils/model_arch_config_convertor.py _normalize_quantization_config, 0.14.0)."""
    quant = config.get("quantization_config")
    if not isinstance(quant, dict):
        return None
    if not isinstance(quant.get("quant_method"), str):
        producer = quant.get("producer")
        section = quant.get("quantization")
        if not (isinstance(producer, dict) and producer.get("name") == "modelopt" and isinstance(section, dict)):
            return None
        algo = str(section.get("quant_algo", "")).upper()
        methods = {"NVFP4": "modelopt_fp4", "MIXED_PRECISION": "modelopt_mixed"}
        return methods.get(algo) or ("modelopt" if algo.startswith("FP8") else None)
    method = quant["quant_method"].lower()
    if method == "modelopt" and "FP4" in str(quant.get("quant_algo", "")).upper():
        return "modelopt_fp4"
    return method


def _quant_algo(config: dict[str, Any]) -> Optional[str]:
    """ModelOpt's weight quant_algo, upper-cased: quantization_config's `quantization` section's (hf_quant_config.json
    format) when it has one, else its top-level quant_algo, as vLLM reads it (modelopt.py
    ModelOptQuantConfigBase.from_config:324-365, 0.33.0); an "NVFP4" whose config_groups all have null
    input_activations is weight-only, "W4A16_NVFP4" (ModelOptNvFp4Config.from_config:797-811); None when it
    declares none."""
    quant = config.get("quantization_config")
    if not isinstance(quant, dict):
        return None
    section = quant.get("quantization")
    algo = section.get("quant_algo") if isinstance(section, dict) else quant.get("quant_algo")
    if not isinstance(algo, str):
        return None
    groups = quant.get("config_groups")
    if (
        algo.upper() == "NVFP4"
        and isinstance(groups, dict)
        and groups
        and all(isinstance(g, dict) and g.get("input_activations") is None for g in groups.values())
    ):
        return "W4A16_NVFP4"
    return algo.upper()


def _weight_block_size(config: dict[str, Any]) -> tuple[int, ...]:
    """quantization_config.weight_block_size as a tuple of ints; () when absent or not a list of ints."""
    quant = config.get("quantization_config")
    block = quant.get("weight_block_size") if isinstance(quant, dict) else None
    if not isinstance(block, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in block):
        return ()
    return tuple(block)


def _kv_quant(config: dict[str, Any]) -> Optional[CheckpointKvQuant]:
    """The checkpoint's declared KV-cache quantization (CheckpointKvQuant), None when it declares none."""
    method = _quant_method(config)
    quant = config.get("quantization_config")
    if method is None or not isinstance(quant, dict):
        return None
    inner = quant.get("quantization")
    section: dict[str, Any] = inner if isinstance(inner, dict) else quant
    # vLLM's order: `a or b or c or d`, so an empty value falls through to the next
    declared = (
        section.get("kv_cache_scheme")
        or quant.get("kv_cache_scheme")
        or section.get("kv_cache_quant_algo")
        or quant.get("kv_cache_quant_algo")
    )
    nested = section is not quant
    if isinstance(declared, str):
        return CheckpointKvQuant(method, algo=declared, nested=nested)
    if isinstance(declared, dict):
        bits = declared.get("num_bits")
        dynamic = declared.get("dynamic")
        return CheckpointKvQuant(
            method,
            scheme_type=_str(declared.get("type")),
            scheme_bits=bits if isinstance(bits, int) and not isinstance(bits, bool) else None,
            scheme_dynamic=dynamic if isinstance(dynamic, bool) else None,
            nested=nested,
        )
    return None


def _layer_head_dims(
    head_dim: Optional[int], v_head_dim: Optional[int], global_head_dim: Optional[int], layer_types: Any
) -> tuple[tuple[int, int], ...]:
    """The distinct (head_dim, v_head_dim) of the model's layer types. `global_head_dim` is the head dim of the
    full-attention layers (Gemma-4; K and V alike), on every layer when the config lists no layer types."""
    dims: list[tuple[int, int]] = []
    if head_dim is not None:
        dims.append((head_dim, v_head_dim or head_dim))
    full_layers = not isinstance(layer_types, list) or "full_attention" in layer_types
    if global_head_dim is not None and full_layers and (global_head_dim, global_head_dim) not in dims:
        dims.append((global_head_dim, global_head_dim))
    return tuple(dims)


def presets() -> dict[str, dict[str, Any]]:
    """Preset name -> {"hub_id": ..., "aliases": [...], "source": ..., "config": {...}}."""
    return PRESETS


def _preset_spellings(key: str, preset: dict[str, Any]) -> set[str]:
    """A preset's name, its aliases, its hub id and the aliases under the hub id's organisation."""
    organisation = preset["hub_id"].split("/")[0]
    aliases = [alias.lower() for alias in preset["aliases"]]
    return {key.lower(), preset["hub_id"].lower(), *aliases, *(f"{organisation.lower()}/{a}" for a in aliases)}


def _preset_key(name: str) -> Optional[str]:
    """The preset named exactly (case aside) by `name`: its key, an alias or a hub id; never a path's last part."""
    wanted = name.strip().lower()
    return next((key for key, preset in presets().items() if wanted in _preset_spellings(key, preset)), None)


def load_preset(name: str) -> Optional[ModelFeatures]:
    key = _preset_key(name)
    if key is None:
        return None
    preset = presets()[key]
    return features_from_config(preset["config"], key, f"preset {key} ({preset['hub_id']})")
