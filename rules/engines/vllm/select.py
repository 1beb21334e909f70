"""How vLLM resolves and selects an attention backend for a config: the query its selector builds from the model
and flags, the backend named (or the one its priority list picks), the FlashAttention version FLASH_ATTN runs,
and the validator's reasons against a backend. Engine modelling, read by the vLLM rule modules; it judges nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.core.config import Config, setting
from attn_preflight.rules.core.engine import Outcome, backend_option, skipped, unknown
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import gemma4 as kb_gemma4

# Every fact was read in the vllm 0.33.0 wheel; each rule's `versions` is the oldest of the wheels read
# (0.10.0 to 0.33.0, its `verified` note names them) from which its check and message hold; older capability
# values are applied from capabilities.CHANGES and RELEASES. vLLM validates a backend from 0.11.1 on
# (validate_configuration); 0.10.0-0.11.0 return the named backend unchecked and fail in its constructor, so
# those releases have rules of their own (rules/legacy.py).
# Stages, as vllm 0.33.0 raises: create_engine_config and the worker's init_device, and backend selection
# (get_attn_backend_cls: validate_configuration, when the model's attention layers are built, before the
# weights load) -> startup; a backend Impl's __init__ -> init; the first forward (profile run) -> runtime.
DOCS_URL = "https://docs.vllm.ai/en/latest/design/attention_backends.html"


def installed(target: Target) -> Optional[Version]:
    try:
        return Version(target.versions["vllm"]) if "vllm" in target.versions else None
    except InvalidVersion:
        return None


def use_backend(name: str, target: Target) -> str:
    """The fix that picks a backend on the target's vLLM (the env var before 0.13, which had no flag)."""
    return setting(backend_option("vllm", target), name)


def model_dtype(cfg: Config, cc: kb.CC) -> Optional[str]:
    """The dtype vLLM runs the model in (config/model.py _get_and_verify_dtype / _resolve_auto_dtype)."""
    if cfg.dtype != "auto":
        return kb.MODEL_DTYPES.get(cfg.dtype)
    supported = ["bfloat16", "float16", "float32"] if cc >= (8, 0) else ["float16", "float32"]
    model_type = cfg.model.model_type if cfg.model else None
    if model_type in kb.FLOAT16_UNSUPPORTED_MODELS:
        supported.remove("float16")
    declared = cfg.model.dtype if cfg.model else None
    if declared is None:
        return None
    declared = {"float": "float32", "half": "float16", "bf16": "bfloat16", "fp16": "float16"}.get(declared, declared)
    if declared == "float32":
        return supported[0]
    return declared if declared in supported else supported[0]


def uses_mla(cfg: Config) -> bool:
    """Whether vLLM runs the model's attention as MLA (ModelConfig.use_mla)."""
    if "mla" not in cfg.features or cfg.env.get(kb.MLA_DISABLE_ENV) == "1":
        return False
    model = cfg.model
    return "mla" in cfg.extra_features or model is None or model.model_type in kb.MLA_MODEL_TYPES


def query(cfg: Config, target: Target) -> kb.VllmQuery:
    """vLLM's AttentionSelectorConfig for this config's attention layers (head size None without a model).

    A pure function of (config, target), computed where a rule needs it: nothing is kept between calls."""
    cc = target.cc
    assert cc is not None, "the rules that ask for a query have checked target.cc"
    model = cfg.model
    mla = uses_mla(cfg)
    head_size = head_size_v = nope = rope = None
    if model is not None:
        if model.kv_lora_rank and model.qk_rope_head_dim is not None:
            rope = model.qk_rope_head_dim
            nope = model.head_dim - rope if model.head_dim is not None else None
        if mla:
            if model.kv_lora_rank and rope is not None:
                head_size = model.kv_lora_rank + rope  # the latent head MLA caches (get_head_size)
        else:
            head_size, head_size_v = model.head_dim, model.v_head_dim  # with MLA disabled: nope + rope
    requested = cfg.flags.get("attention_config.flash_attn_version")
    forced = gemma4_forcing(cfg, target)
    if requested is None and forced is not None:
        requested = forced.fa_version
    return kb.VllmQuery(
        cc=cc,
        head_size=head_size,
        dtype=model_dtype(cfg, cc) or "bfloat16",
        kv_dtype=cfg.kv_cache_dtype,
        block_size=cfg.page_size,
        use_mla=mla,
        use_sparse=bool(mla and model and model.dsa),
        has_sink="sinks" in cfg.features,
        has_sliding_window="sliding_window" in cfg.features,
        softcap="softcap" in cfg.features,
        head_size_v=head_size_v,
        fa_version=int(requested) if requested is not None else None,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=model.v_head_dim if model else None,
        num_heads=model.num_attention_heads if model else None,
    )


def gemma4_forcing(cfg: Config, target: Target) -> Optional[kb_gemma4.Gemma4Forcing]:
    """What vLLM's Gemma4Config forces for this launch (rules/engines/vllm/gemma4.py), before any selection."""
    model = cfg.model
    if model is None or target.cc is None:
        return None
    requested = cfg.flags.get("attention_config.flash_attn_version")
    return kb_gemma4.forcing(
        model.architecture,
        frozenset(hd for hd, _ in model.layer_head_dims),
        target.cc,
        cfg.kv_cache_dtype,
        cfg.attention_backend,
        int(requested) if requested is not None else None,
        Version(release_of(target) or kb.VLLM_VERSION),
    )


def layer_queries(cfg: Config, target: Target) -> tuple[kb.VllmQuery, ...]:
    """One query per distinct head size of the model's attention layers: vLLM validates the backend for each
    layer with its own head size (Gemma-4's full-attention layers: global_head_dim, gemma4.py
    Gemma4Attention.__init__). MLA layers have one latent head size."""
    q = query(cfg, target)
    model = cfg.model
    if q.use_mla or model is None or len(model.layer_head_dims) < 2:
        return (q,)
    return tuple(replace(q, head_size=hd, head_size_v=hv) for hd, hv in model.layer_head_dims)


def release_of(target: Target) -> Optional[str]:
    version = installed(target)
    return str(version) if version is not None else None


def named_backend(cfg: Config, target: Target) -> tuple[Optional[kb.VllmBackend], Optional[Outcome]]:
    """The backend named on the command line, or the outcome for a rule that cannot judge it."""
    if cfg.attention_backend is None:
        return None, skipped("no backend named: vLLM selects one (rule vllm-auto-select)")
    backend = kb.backend_at(cfg.attention_backend, release_of(target))
    if backend is None:
        return None, skipped(f"{cfg.attention_backend} is not a usable backend (rule vllm-backend-name)")
    if backend.platform != "cuda":
        return None, skipped(f"{backend.name} is a {backend.platform} backend (rule vllm-backend-platform)")
    if not backend.modelled:
        return None, skipped(f"{backend.name}'s constraints are not modelled (see vllm-compute-capability)")
    if target.cc is None:
        return None, unknown("no CUDA GPU on the target")
    return backend, None


def selected(q: kb.VllmQuery, target: Target) -> kb.Selection:
    """What vLLM picks with no backend named, in the target's release."""
    return kb.select(q, release_of(target))


def rejections(backend: kb.VllmBackend, q: kb.VllmQuery, target: Target) -> dict[str, kb.Rejection]:
    """The validator's reasons (vllm_backends.rejections) against the named backend, by key: every rule
    about a validate_configuration / supports_combination reason reads its own key here."""
    release = kb.release_for(release_of(target))
    return {r.key: r for r in kb.rejections(backend, q, release)}


def valid_named(q: kb.VllmQuery, target: Target) -> list[str]:
    """The backends of the release's priority list that would pass validation if named, in its order."""
    release = release_of(target)
    named = kb.release_for(release)
    return [
        name
        for name in kb.priorities(q, release)
        if (backend := kb.backend_at(name, release)) is not None
        and backend.modelled
        and not kb.validate(backend, q, named)
    ]


def instead(q: kb.VllmQuery, target: Target, failing: str) -> list[str]:
    """The backend vLLM would pick for the same config, as the flag that selects it (or dropping the flag)."""
    chosen = selected(q, target).chosen
    if chosen is None or chosen == failing:
        return []
    return [use_backend(chosen, target)]


def flash_attn_resolution(q: kb.VllmQuery, target: Target) -> kb.FaResolution:
    """The FlashAttention version FLASH_ATTN runs for this query in the target's release: what
    FlashAttentionImpl.__init__ gets from fa_utils.get_flash_attn_version, which it passes no head_size_v
    (flash_attn.py:583-586 in 0.17.0, :1104-1110 in 0.33.0)."""
    return kb.flash_attn_version(
        q.cc,
        q.head_size,
        None,
        q.fa_version,
        q.has_sink,
        q.softcap,
        kv_dtype=q.kv_dtype,
        block_size=q.block_size,
        release=release_of(target),
    )
