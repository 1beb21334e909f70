"""How vLLM resolves and selects an attention backend for a config: the query its selector builds from the model
and flags, the backend named (or the one its priority list picks), the FlashAttention version FLASH_ATTN runs,
and the validator's reasons against a backend. Engine modelling, read by the vLLM rule modules; it judges nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping, Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, backend_option, skipped, unknown
from attn_preflight.rules.core.flag_tables import setting
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import parse_version
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import changes
from attn_preflight.rules.engines.vllm import gemma4 as kb_gemma4

# Every fact was read in the vllm 0.33.0 wheel; each rule's `versions` is the oldest of the wheels read
# (0.10.0 to 0.33.0, its `verified` note names them) from which its check and message hold; older capability
# values are applied from the release files' capability deltas (changes.py) and RELEASES. vLLM validates a backend from 0.11.1 on
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
    backend = changes.backend_at(cfg.attention_backend, release_of(target))
    if backend is None:
        return None, skipped(f"{cfg.attention_backend} is not a usable backend (rule vllm-backend-name)")
    if backend.platform != "cuda":
        return None, skipped(f"{backend.name} is a {backend.platform} backend (rule vllm-backend-platform)")
    if not backend.modelled:
        return None, skipped(f"{backend.name}'s constraints are not modelled (see vllm-compute-capability)")
    if target.cc is None:
        return None, unknown("no CUDA GPU on the target")
    return backend, None


def selected(q: kb.VllmQuery, target: Target) -> Selection:
    """What vLLM picks with no backend named, in the target's release."""
    return select(q, release_of(target))


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
        for name in priorities(q, release)
        if (backend := changes.backend_at(name, release)) is not None
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


# --- the priority list vLLM selects from, with no backend named ----------------------------------------------
PRIORITY_SOURCE = kb.src(kb.CUDA_PY, "_get_backend_priorities")


def priorities(q: kb.VllmQuery, version: Optional[str] = None) -> tuple[str, ...]:
    """The CUDA priority list for a layer in a release (multimodal-prefix and non-causal variants left out):
    platforms/cuda.py _get_backend_priorities (:45 in 0.13.0, :79 in 0.20.0, :84 in 0.33.0), read in the
    wheels from 0.11.1 to 0.33.0 (the newest when None)."""
    release = parse_version(version).release[:3] if version is not None else parse_version(kb.VLLM_VERSION).release[:3]
    if release < (0, 13, 0):
        # vllm 0.11.1-0.12.x, platforms/cuda.py _get_backend_priorities (:46-83 in 0.12.0, :46-85 in 0.11.1/0.11.2)
        if q.use_mla:
            if q.cc[0] == 10:
                return "CUTLASS_MLA", "FLASHINFER_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA", "FLASHMLA_SPARSE"
            return "FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA", "FLASHMLA_SPARSE"
        first = ("FLASHINFER", "FLASH_ATTN") if q.cc[0] == 10 else ("FLASH_ATTN", "FLASHINFER")
        return (*first, "TRITON_ATTN", "FLEX_ATTENTION")
    if q.use_mla:
        return _mla_priorities(q, release)
    # TURBOQUANT last from 0.20.0 (absent in 0.13.0-0.19.1)
    turboquant = ("TURBOQUANT",) if release >= (0, 20, 0) else ()
    first = ("FLASHINFER", "FLASH_ATTN") if q.cc[0] == 10 else ("FLASH_ATTN", "FLASHINFER")
    return (*first, "TRITON_ATTN", "FLEX_ATTENTION", *turboquant)


def _mla_priorities(q: kb.VllmQuery, release: tuple[int, ...]) -> tuple[str, ...]:
    """_get_backend_priorities for an MLA layer from 0.13.0, as each wheel reads (the lists differ between
    0.13.0/0.14.1, 0.15.0/0.16.0, 0.17.0/0.18.0, 0.19.0, 0.20.0, 0.21.0-0.23.0, 0.24.0, 0.25.0, 0.26.0-0.29.0,
    0.30.0-0.32.0 and 0.33.0; releases between two read alike are taken as they read)."""
    if q.cc[0] == 10:
        # CUTLASS_MLA first until 0.14.x, after FLASHINFER_MLA from 0.15.0; TOKENSPEED_MLA second from 0.21.0
        dense = ["FLASHINFER_MLA", "CUTLASS_MLA"] if release >= (0, 15, 0) else ["CUTLASS_MLA", "FLASHINFER_MLA"]
        if release >= (0, 21, 0):
            dense.insert(1, "TOKENSPEED_MLA")
        return (*dense, "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA", *_sm100_sparse(q, release))
    if q.cc[0] == 12 and release >= (0, 24, 0):  # an SM12x branch of its own from 0.24.0
        return "TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120"
    if release < (0, 25, 0):
        tail = ["FLASHMLA_SPARSE"]
    else:  # FLASH_ATTN_MLA_SPARSE first from 0.25.0; FLASHINFER_MLA_SPARSE_SM90 from 0.30.0
        tail = ["FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE"]
        if release >= (0, 30, 0):
            tail.insert(0 if q.head_size == 512 else 2, "FLASHINFER_MLA_SPARSE_SM90")
    return ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA", *tail)


def _sm100_sparse(q: kb.VllmQuery, release: tuple[int, ...]) -> tuple[str, ...]:
    """The sparse MLA backends at the end of the SM10x list: FLASHMLA_SPARSE alone until 0.16.x; from 0.17.0
    FLASHINFER_MLA_SPARSE first for 16 heads or fewer; from 0.19.0 also for an fp8* KV cache (0.19.x:
    kv_cache_dtype.startswith("fp8"), from 0.20.0 any quantised one); from 0.33.0 FLASH_ATTN_MLA_SPARSE_FA4 first
    for 16 heads or fewer."""
    if release < (0, 17, 0):
        return ("FLASHMLA_SPARSE",)
    quantised = release >= (0, 19, 0) and (
        q.kv_dtype.startswith("fp8") if release < (0, 20, 0) else kb.is_quantised_kv(q.kv_dtype)
    )
    if quantised:
        return "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE"
    if q.num_heads is not None and q.num_heads <= 16:
        fa4 = ("FLASH_ATTN_MLA_SPARSE_FA4",) if release >= (0, 33, 0) else ()
        return (*fa4, "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")
    return "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE"


@dataclass(frozen=True)
class Selection:
    chosen: Optional[str]
    rejected: Mapping[str, tuple[str, ...]]  # backend -> vLLM's reasons, in priority order (read-only)
    unmodelled: tuple[str, ...] = ()  # backends in the list whose constraints this module does not know
    forced: str = ""  # the backend vLLM names itself before the list is read (forced_mla), validated as named


FORCED_MLA_SOURCE = kb.src(kb.CUDA_PY, "CudaPlatformBase.check_and_update_config") + (
    " (0.13.0 :183-192 and 0.14.1: CUTLASS_MLA for a dense MLA model on SM10x; 0.15.0 :185-201 through 0.17.1: "
    "FLASHINFER_MLA when qk_nope_head_dim is 128; none from 0.18.0)"
)


def forced_mla(q: kb.VllmQuery, version: Optional[str]) -> Optional[str]:
    """The backend check_and_update_config names for a dense MLA model on SM10x when none is given, from 0.13.0
    (0.11.1-0.12.x force CUTLASS_MLA on SM 10.0 for every MLA model: rule vllm-cutlass-mla-forced)."""
    if version is None or not q.use_mla or q.use_sparse or q.cc[0] != 10:
        return None
    release = parse_version(version).release[:3]
    if not (0, 13, 0) <= release < (0, 18, 0):
        return None
    if release < (0, 15, 0):
        return "CUTLASS_MLA"
    return "FLASHINFER_MLA" if q.qk_nope_head_dim == 128 else None


LEGACY_SELECT_SOURCE = (
    "vllm-project/vllm@v0.11.0: vllm/platforms/cuda.py, CudaPlatformBase.get_attn_backend_cls, the V1 defaults "
    "(:336-388; 0.10.0 :264-312, 0.10.2 :333-384)"
)


def _legacy_select(q: kb.VllmQuery, version: str) -> Selection:
    """vLLM 0.10.0-0.11.0 chose a non-MLA layer's V1 backend with no validation: FLASHINFER on SM 10.0 where it
    takes the head size and dtype, FLASH_ATTN from SM80 (TRITON_ATTN off SM 9.0 for a sink model from 0.10.1
    and for an FP8 KV cache in 0.11.0), FLEX_ATTENTION below SM80 or where FLASH_ATTN does not take the head
    size or dtype (selector.is_attn_backend_supported). Its MLA defaults, and the V0 engine 0.10.x falls back
    to, are not modelled."""
    if q.use_mla:
        return Selection(None, MappingProxyType({}), ("the MLA defaults of vllm < 0.11.1",))
    release = parse_version(version).release[:3]
    if release < (0, 11, 0) and kb.is_quantised_kv(q.kv_dtype) and q.cc[0] != 9 and q.cc != (10, 0):
        # EngineArgs._is_v1_supported_oracle falls back to V0 for a KV dtype CudaPlatform.is_kv_cache_dtype_supported
        # refuses: SM 10.0 takes any, the default FLASH_ATTN fp8 only with FA3 (platforms/cuda.py:522-561 in 0.10.2)
        return Selection(None, MappingProxyType({}), ("the V0 engine (vllm 0.10 falls back to it for this KV cache)",))
    if q.cc == (10, 0) and q.head_size in (64, 128, 256) and q.dtype in kb.HALF:
        return Selection("FLASHINFER", MappingProxyType({}))
    if q.cc < (8, 0):
        return Selection("FLEX_ATTENTION", MappingProxyType({}))
    to_triton = (q.has_sink and release >= (0, 10, 1)) or (kb.is_quantised_kv(q.kv_dtype) and release >= (0, 11, 0))
    if to_triton and q.cc != (9, 0):
        return Selection("TRITON_ATTN", MappingProxyType({}))
    if q.head_size is None:
        return Selection(None, MappingProxyType({}), ("FLASH_ATTN (needs the head size)",))
    # FlashAttentionBackend.get_supported_head_sizes in 0.10.x-0.11.0: 32 to 256 in steps of 32
    if q.head_size in range(32, 257, 32) and q.dtype in kb.HALF:
        return Selection("FLASH_ATTN", MappingProxyType({}))
    return Selection("FLEX_ATTENTION", MappingProxyType({}))


def select(q: kb.VllmQuery, version: Optional[str] = None) -> Selection:
    """CudaPlatformBase.get_valid_backends + the first valid one: what vLLM picks with no backend named, on
    the given release (the newest read when None)."""
    if version is not None and parse_version(version).release[:3] < parse_version(kb.VALIDATE_SINCE).release[:3]:
        return _legacy_select(q, version)
    release = kb.release_for(version)
    if version is not None and parse_version(version).release[:3] < (0, 18, 0):
        # 0.11.1-0.17.x kb.validate without the block size (cuda.py:373 in 0.12.0; `attn_selector_config._replace(
        # block_size=None)` at :298 in 0.13.0 and 0.14.1, :311 in 0.15.0, :314 in 0.16.0, :351 in 0.17.1; none in
        # 0.18.0, whose selection warns "--block-size %d precluded higher-priority backend(s)" instead, :308)
        q = replace(q, block_size=None)
    forced = forced_mla(q, version)
    if forced is not None:
        backend = changes.backend_at(forced, version)
        assert backend is not None, f"{forced} is in every release that forces it"
        reasons = tuple(kb.validate(backend, q, release))
        return Selection(
            None if reasons else forced, MappingProxyType({forced: reasons} if reasons else {}), (), forced
        )
    rejected: dict[str, tuple[str, ...]] = {}
    unmodelled = []
    chosen = None
    for name in priorities(q, version):
        backend = changes.backend_at(name, version)
        assert backend is not None, f"{name} is in the priority list of its release"
        if not backend.modelled:
            # Its constraints are not declared, but its sparseness is: validate_configuration refuses a
            # sparse backend for a dense layer (use_sparse != is_sparse()) whatever else it supports.
            if backend.sparse and not q.use_sparse:
                rejected[name] = (kb.R_NON_SPARSE,)
            else:
                unmodelled.append(name)
            continue
        reasons = tuple(kb.validate(backend, q, release))
        if not reasons:
            chosen = name
            break
        rejected[name] = reasons
    return Selection(chosen, MappingProxyType(rejected), tuple(unmodelled))
