"""vLLM (`vllm serve … --attention-backend NAME`): the reasons vLLM's own backend validation would give.

Each rule reports one of the reasons `AttentionBackend.validate_configuration` (or a backend's
`supports_combination`, or the platform) returns. The reasons and their conditions are declared once, in
rules/engines/vllm/capabilities.py (REASONS); a rule reads the validator's answer (`rejections`) for its own
key and adds what vLLM does not say: what was found, what is required, and the fix. A named backend that
fails any of them makes vLLM raise "Selected backend … is not valid for this configuration. Reason: [...]"
at start-up; with no backend named, rule vllm-auto-select runs vLLM's priority list instead.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.checks.common import (
    gpu,
    kv_found,
    kv_from_checkpoint,
    kv_unquantised_fix,
    library_state,
    running_flashinfer,
)
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, backend_option, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.flag_tables import setting
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import fa4 as kb_fa4
from attn_preflight.rules.engines.vllm import flashinfer as kb_fi
from attn_preflight.rules.engines.vllm import gemma4 as kb_gemma4
from attn_preflight.rules.engines.vllm import legacy as kb_legacy
from attn_preflight.rules.kernels import flashinfer as kb_flashinfer
from attn_preflight.rules.knowledge import memory
from attn_preflight.rules.knowledge import quantization as kb_quant

# Every fact was read in the vllm 0.33.0 wheel; each rule's `versions` is the oldest of the wheels read
# (0.10.0 to 0.33.0, its `verified` note names them) from which its check and message hold; older capability
# values are applied from vllm_backends.CHANGES and RELEASES. vLLM validates a backend from 0.11.1 on
# (validate_configuration); 0.10.0-0.11.0 return the named backend unchecked and fail in its constructor, so
# those releases have rules of their own (the section "releases before 0.13.0" at the end).
# Stages, as vllm 0.33.0 raises: create_engine_config and the worker's init_device, and backend selection
# (get_attn_backend_cls: validate_configuration, when the model's attention layers are built, before the
# weights load) -> startup; a backend Impl's __init__ -> init; the first forward (profile run) -> runtime.
DOCS_URL = "https://docs.vllm.ai/en/latest/design/attention_backends.html"


# --- what the rules read ---------------------------------------------------------------------------------


def _installed(target: Target) -> Optional[Version]:
    try:
        return Version(target.versions["vllm"]) if "vllm" in target.versions else None
    except InvalidVersion:
        return None


def _use_backend(name: str, target: Target) -> str:
    """The fix that picks a backend on the target's vLLM (the env var before 0.13, which had no flag)."""
    return setting(backend_option("vllm", target), name)


def _model_dtype(cfg: Config, cc: kb.CC) -> Optional[str]:
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


def _uses_mla(cfg: Config) -> bool:
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
    mla = _uses_mla(cfg)
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
        dtype=_model_dtype(cfg, cc) or "bfloat16",
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
        Version(_release(target) or kb.VLLM_VERSION),
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


def _release(target: Target) -> Optional[str]:
    installed = _installed(target)
    return str(installed) if installed is not None else None


def _named(cfg: Config, target: Target) -> tuple[Optional[kb.VllmBackend], Optional[Outcome]]:
    """The backend named on the command line, or the outcome for a rule that cannot judge it."""
    if cfg.attention_backend is None:
        return None, skipped("no backend named: vLLM selects one (rule vllm-auto-select)")
    backend = kb.backend_at(cfg.attention_backend, _release(target))
    if backend is None:
        return None, skipped(f"{cfg.attention_backend} is not a usable backend (rule vllm-backend-name)")
    if backend.platform != "cuda":
        return None, skipped(f"{backend.name} is a {backend.platform} backend (rule vllm-backend-platform)")
    if not backend.modelled:
        return None, skipped(f"{backend.name}'s constraints are not modelled (see vllm-compute-capability)")
    if target.cc is None:
        return None, unknown("no CUDA GPU on the target")
    return backend, None


def _select(q: kb.VllmQuery, target: Target) -> kb.Selection:
    """What vLLM picks with no backend named, in the target's release."""
    return kb.select(q, _release(target))


def _flex_not_used(cfg: Config, target: Target) -> Optional[Outcome]:
    """The skip when FLEX_ATTENTION is neither named nor what vLLM's priority list picks; None when it runs."""
    if cfg.attention_backend is None and target.cc is not None:
        if _select(query(cfg, target), target).chosen != "FLEX_ATTENTION":
            return skipped("vLLM does not select FLEX_ATTENTION for this config")
    elif cfg.attention_backend != "FLEX_ATTENTION":
        return skipped("applies to FLEX_ATTENTION")
    return None


def rejections(backend: kb.VllmBackend, q: kb.VllmQuery, target: Target) -> dict[str, kb.Rejection]:
    """The validator's reasons (vllm_backends.rejections) against the named backend, by key: every rule
    about a validate_configuration / supports_combination reason reads its own key here."""
    release = kb.release_for(_release(target))
    return {r.key: r for r in kb.rejections(backend, q, release)}


def _valid_named(q: kb.VllmQuery, target: Target) -> list[str]:
    """The backends of the release's priority list that would pass validation if named, in its order."""
    release = _release(target)
    named = kb.release_for(release)
    return [
        name
        for name in kb.priorities(q, release)
        if (backend := kb.backend_at(name, release)) is not None
        and backend.modelled
        and not kb.validate(backend, q, named)
    ]


def _instead(q: kb.VllmQuery, target: Target, failing: str) -> list[str]:
    """The backend vLLM would pick for the same config, as the flag that selects it (or dropping the flag)."""
    chosen = _select(q, target).chosen
    if chosen is None or chosen == failing:
        return []
    return [_use_backend(chosen, target)]


def _flash_attn_resolution(q: kb.VllmQuery, target: Target) -> kb.FaResolution:
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
        release=_release(target),
    )


def _cc(target: Target) -> str:
    assert target.cc is not None, "called after _named, which answers unknown without one"
    return f"{target.cc[0]}.{target.cc[1]}"


# --- the backend name ----------------------------------------------------------------------------------------


@rule(
    id="vllm-backend-name",
    title="The vLLM attention backend name exists and can be used",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.33.0, every minor release's x.y.0 and last x.y.z, and 0.10.1.1 and 0.11.1: membership "
        "per release is the wheel's own enum, _Backend in platforms/interface.py (0.10.0-0.11.0) or "
        "AttentionBackendEnum (attention/backends/registry.py 0.11.2-0.13.x, v1/attention/backends/registry.py from "
        "0.14.0); read by bench/release_walk.py and equal to rules/engines/vllm/backend_enum.json "
        "(bench/vllm_backend_enum.py). VLLM_ATTENTION_BACKEND before 0.13.0, as typed (case-sensitive), read in the "
        "0.10.0, 0.10.1.1, 0.10.2, 0.11.0, 0.11.2 and 0.12.0 wheels (vllm_legacy.ENV_CHECKS): 0.10.0 runs its "
        "default for a non-member (selector.py:21-32, :192-195); 0.10.1-0.10.2 raise 'Invalid attention backend: "
        "...' (selector.py:196-202); 0.11.0-0.12.x raise envs.py's 'Invalid value ... for VLLM_ATTENTION_BACKEND' at "
        "its first read (config/model.py:417 in 0.11.0, :472 in 0.12.0), so a '_VLLM_V1' suffix is refused before "
        "the selector could drop it. From 0.13.0 --attention-backend: 'Unknown attention backend' (registry.py)"
    ),
    stage="startup",
    prevents=kb.UNKNOWN_BACKEND.format(name="TREE_ATTN", valid="FLASH_ATTN, FLASH_ATTN_DIFFKV, …"),
    source=kb.UNKNOWN_BACKEND_SOURCE + "; " + kb.src(kb.REGISTRY, "AttentionBackendEnum.get_path"),
    docs="""Checks that the backend named by `--attention-backend` (or `VLLM_ATTENTION_BACKEND`) is a member
of vLLM's AttentionBackendEnum that can serve text attention.

vLLM parses the name with `AttentionBackendEnum[name.upper()]` (config/attention.py
validate_backend_before); a name removed from the enum (TREE_ATTN, PALLAS, IPEX, XFORMERS) raises "Unknown
attention backend: '…'. Valid options are: …". TORCH_SDPA (a tag for vision encoders) and CUSTOM (a
plug-in placeholder) are members with no class path: get_path raises "Backend TORCH_SDPA must be
registered before use." Before 0.13.0 the name is VLLM_ATTENTION_BACKEND's, compared as typed with that
release's own enum: 0.10.1-0.10.2 raise "Invalid attention backend: '…'. Valid backends are: […]", 0.11.0-0.12.x
"Invalid value '…' for VLLM_ATTENTION_BACKEND. Valid options: […]." (so FLASH_ATTN_VLLM_V1 and flash_attn
fail there), and 0.10.0 runs its default (rule vllm-named-backend-runs). Names that no release ever had are
refused by attn-preflight itself (exit 2, with every name of every release).""",
    fix_title="Use a backend vLLM 0.33 builds for CUDA (FLASH_ATTN, FLASHINFER, TRITON_ATTN, FLEX_ATTENTION, "
    "or an MLA backend for DeepSeek-style models), or drop the flag",
    references=(DOCS_URL,),
)
def vllm_backend_name(cfg, target):
    name = cfg.rewrites.get("attention_backend", cfg.attention_backend)  # the name given, not what runs
    if name is None:
        return skipped("no backend named")
    release = _release(target)
    if release is not None and Version(release) < Version(kb.FLAG_SINCE):
        return _env_backend_name(cfg.env.get(kb.ENV_BACKEND, name), release, cfg.env.get(kb_legacy.ENV_USE_V1))
    fix = ["drop --attention-backend (vLLM selects a backend)"]
    if name in kb.UNREGISTERED:
        return failed(
            f"{name} ({kb.UNREGISTERED[name]}, no class path)",
            "a backend with a class",
            fix,
            reason=f"Backend {name} must be registered before use.",
        )
    present = kb.name_in_release(name, release)
    on = f"vllm {release}" if release else f"vllm {kb.VLLM_VERSION} (newest read)"
    if present is None:
        return unknown(f"{name} is {kb.name_history(name)}; the releases around {on} were not read")
    if not present:
        valid = sorted(kb.ENUM_BY_RELEASE[release] if release in kb.ENUM_BY_RELEASE else kb.VALID_NAMES)
        return failed(
            f"{name} on {on} ({kb.name_history(name)})",
            "a member of vLLM's AttentionBackendEnum",
            fix,
            reason=kb.UNKNOWN_BACKEND.format(name=name, valid=", ".join(valid)),
        )
    return passed(f"{name} on {on}", "a member of AttentionBackendEnum with a class")


def _env_backend_name(name: str, release: str, use_v1: Optional[str]) -> Outcome:
    """VLLM_ATTENTION_BACKEND=name before 0.13.0, as the release checks the variable (vllm_legacy.ENV_CHECKS): as
    typed, against the release's own enum."""
    members = kb_legacy.valid_names(release)
    if name in members:
        return passed(f"{kb.ENV_BACKEND}={name} on vllm {release}", "a member of that release's _Backend enum")
    refusal = kb_legacy.env_refusal(name, release, use_v1)
    if refusal is None:
        return skipped(f"vllm {release} runs its default for a name it does not have (rule vllm-named-backend-runs)")
    return failed(
        f"{kb.ENV_BACKEND}={name} on vllm {release} ({kb.name_history(name.upper())})",
        f"one of vllm {release}'s {len(members)} backend names, as spelled there",
        [f"unset {kb.ENV_BACKEND}"],
        reason=refusal,
    )


@rule(
    id="vllm-backend-platform",
    title="The vLLM attention backend is one vLLM's CUDA platform can run",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.14.x (0.11.2, 0.12.0, 0.13.0, 0.14.0, 0.14.1 read): get_attn_backend_cls imports the "
        "named class and validates it (platforms/cuda.py:357 in 0.11.2, :344 in 0.12.0, :302 in 0.13.0-0.14.1), "
        "and supports_compute_capability is True unless a class overrides it (attention/backends/abstract.py:183 "
        "in 0.12.0, v1/attention/backend.py:193 in 0.14.1), which no ROCm or CPU backend of these releases does "
        "against CUDA (rocm_*.py, mla/rocm_*.py, cpu_attn.py; AiterMLABackend returns True, mla/rocm_aiter_mla.py:183 "
        "in 0.12.0): the foreign backend is built and fails at its import or first kernel launch. The names only "
        "these releases have (PALLAS, IPEX, TORCH_SDPA) are not declared by platform here (vllm-backend-name "
        "judges their membership). Not before 0.11.1: what 0.10.0-0.11.0 do with a foreign name (their V1 chain "
        "ignores it, cuda.py:308-330 in 0.10.2, :311-336 in 0.11.0; one outside V1_BACKENDS falls back to V0, whose "
        "chain raises, cuda.py:400-403 in 0.10.2) is rule vllm-named-backend-runs'. vllm>=0.15.0: not walked release by release (no upstream message in the vllm wheels to "
        "grep: the check is a reason, a kernel library's or worded in parts); the range is from the earlier reading"
    ),
    stage="runtime",
    reason="ROCm, CPU and XPU backends are never in vLLM's CUDA priority list; named on an NVIDIA GPU they fail "
    "at import or kernel launch, after the weights load.",
    source=kb.PRIORITY_SOURCE + "; " + kb.src(kb.REGISTRY, "AttentionBackendEnum"),
    docs="""Checks that the named backend is built for NVIDIA CUDA, not for AMD ROCm (ROCM_*, the AITER
backends), Intel XPU (XPU_MLA_SPARSE) or the CPU (CPU_ATTN, CPU_MLA, AMX_MLA).

AttentionBackendEnum lists every platform's backends in one namespace. vLLM's CUDA platform only ever
selects from _get_backend_priorities, so a foreign backend is reached only by naming it, and its kernels
(aiter, SYCL, CPU extensions) are not there on an NVIDIA GPU. Backends that a model selects for its own
layers (the DeepSeek-V4/V4.1 and MiniMax-M3 sparse backends, STEP5_DSA) are not judged here.""",
    fix_title="Name a CUDA backend, or drop --attention-backend",
)
def vllm_backend_platform(cfg, target):
    backend = kb.BY_NAME.get(cfg.attention_backend or "")
    if backend is None:
        return skipped("no usable backend named")
    if backend.platform == "model":
        return skipped(f"{backend.name} is selected by one model's own attention layers")
    if target.cc is None:
        return unknown("no NVIDIA GPU on the target")
    if backend.platform in ("cuda", "any"):
        return passed(f"{backend.name} (CUDA)", "a CUDA backend")
    by_env = backend_option("vllm", target) == kb.ENV_BACKEND  # before 0.13 the variable names it
    return failed(
        f"{backend.name}, a {backend.platform} backend, on {gpu(target)}",
        "a CUDA backend",
        [f"unset {kb.ENV_BACKEND}" if by_env else "drop --attention-backend (vLLM selects a CUDA backend)"],
    )


@rule(
    id="vllm-env-backend",
    title="VLLM_ATTENTION_BACKEND is read by this vLLM",
    engine="vllm",
    versions="vllm>=0.13.0",
    verified=(
        "Begins at 0.13.0, the first release with --attention-backend (engine/arg_utils.py:546, :727 in 0.13.0; none "
        "in 0.12.0); in 0.10.0-0.12.x the variable is the only way to name a backend (attention/selector.py), and "
        "the other rules read it as the named backend. "
        "vllm>=0.13.0: not walked release by release (no upstream message in the vllm wheels to grep: the "
        "check is a reason, a kernel library's or worded in parts); the range is from the earlier reading"
    ),
    stage="startup",
    prevents=kb.ENV_UNKNOWN_WARNING.format(env=kb.ENV_BACKEND),
    source=kb.ENV_SOURCE,
    docs="""Checks whether the VLLM_ATTENTION_BACKEND and VLLM_FLASH_ATTN_VERSION environment variables still
choose anything on the target's vLLM.

vLLM 0.13.0 added `--attention-backend` and `--attention-config.flash_attn_version` and deprecated the
variables ("Using VLLM_ATTENTION_BACKEND environment variable is deprecated and will be removed in v0.14.0
…"); vLLM 0.15.0 removed them (PR #32812). Since then they are ignored: vLLM only logs "Unknown vLLM
environment variable detected: VLLM_ATTENTION_BACKEND" (0.20 and later; 0.15-0.19 say nothing) and
selects its own backend, so the backend the launch line asks for is not the one that runs. attn-preflight
still judges the named backend, since the fix is to pass the same name as a flag. On 0.13-0.14 the variable
still works, with a deprecation warning, but naming a different backend with --attention-backend as well
fails: "attention_backend and attention_config.backend are mutually exclusive".""",
    fix_title="Pass the backend as --attention-backend NAME (and the FA version as "
    "--attention-config.flash_attn_version=N)",
)
def vllm_env_backend(cfg, target):
    env = {k: v for k, v in cfg.env.items() if k in (kb.ENV_BACKEND, kb.ENV_FA_VERSION)}
    if not env:
        return passed("no VLLM_ATTENTION_BACKEND or VLLM_FLASH_ATTN_VERSION", "the command-line flags")
    found = ", ".join(f"{k}={v}" for k, v in sorted(env.items()))
    fix = []
    if kb.ENV_BACKEND in env:
        fix.append(f"--attention-backend {env[kb.ENV_BACKEND].upper()}")
    if kb.ENV_FA_VERSION in env:
        fix.append(f"--attention-config.flash_attn_version={env[kb.ENV_FA_VERSION]}")
    installed = _installed(target)
    if installed is not None and installed < Version(kb.ENV_REMOVED_IN):
        named = env.get(kb.ENV_BACKEND, "").upper()
        if named and cfg.attention_backend not in (None, named):
            return failed(
                f"{found} and --attention-backend {cfg.attention_backend} on vllm {installed}",
                "one of the two",
                [f"unset {kb.ENV_BACKEND}"],
                reason="attention_backend and attention_config.backend are mutually exclusive",
            )
        return warned(f"{found} on vllm {installed}", "the command-line flags", fix, reason=kb.ENV_DEPRECATION)
    return warned(
        found,
        f"the command-line flags (vllm >= {kb.ENV_REMOVED_IN} ignores the variables)",
        fix,
        reason="vLLM ignores the variables and selects its own backend",
    )


# --- compute capability and FlashAttention versions ----------------------------------------------------------


@rule(
    id="vllm-compute-capability",
    title="The vLLM attention backend supports this GPU's compute capability",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:209 in 0.11.1 "
        "and 0.11.2, :235 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "0.13.0-0.19.x: the backends' declarations read in the 0.13.0, 0.14.1, 0.15.0, 0.15.1, 0.16.0, 0.17.0, "
        "0.17.1, 0.18.0, 0.18.1, 0.19.0 and 0.19.1 wheels (their differences from 0.33.0 are CHANGES). "
        "vllm>=0.20.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents). The range's start was set from "
        "the earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.R_CC,
    source=kb.VALIDATE_SOURCE + "; each backend's supports_compute_capability",
    docs="""Checks the GPU's compute capability against the named backend's `supports_compute_capability`.

vLLM 0.33.0 declares: FLASH_ATTN >= 8.0; FLASHINFER 8.0 to 12.1 (SM75 is excluded until flashinfer#3621
lands); TRITON_ATTN, FLEX_ATTENTION and TRITON_MLA any; FLASHMLA and FLASHMLA_SPARSE 9.x or 10.x (dense
FlashMLA is further limited to Hopper, rule vllm-flashmla-dense-hopper); FLASH_ATTN_MLA,
FLASH_ATTN_MLA_SPARSE and FLASHINFER_MLA_SPARSE_SM90 9.x; CUTLASS_MLA, FLASHINFER_MLA, TOKENSPEED_MLA,
FLASHINFER_MLA_SPARSE and FLASH_ATTN_MLA_SPARSE_FA4 10.x only (SM100/SM103, not SM110 or SM12x); B12X 12.0
and 12.1; HPC_ATTN exactly 9.0.

An explicitly named backend that fails raises "Selected backend … is not valid for this configuration.
Reason: ['compute capability not supported']" at start-up; vLLM does not fall back to another backend.
The FA versions inside FLASH_ATTN have their own arch limits (rule vllm-flash-attn-version).""",
    fix_title="Use the backend vLLM would pick on this GPU (shown in the fix), or drop --attention-backend",
    references=(DOCS_URL,),
)
def vllm_compute_capability(cfg, target):
    named = kb.BY_NAME.get(cfg.attention_backend or "")
    if named is not None and named.platform == "cuda" and not named.modelled:
        return unknown(
            f"{named.name}: attn-preflight does not model this backend's constraints; vLLM validates it at start-up"
        )
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    required = f"compute capability {backend.archs.describe()}"
    q = query(cfg, target)
    if "cc" not in rejections(backend, q, target):
        return passed(f"{backend.name} on {gpu(target)}", required)
    return failed(
        f"{backend.name} on {gpu(target)} (compute capability {_cc(target)})",
        required,
        _instead(q, target, backend.name),
    )


@rule(
    id="vllm-flashmla-dense-hopper",
    title="Dense FlashMLA runs on Hopper only",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: FlashMLABackend.supports_combination returns is_flashmla_dense_supported()'s "
        "reason (mla/flashmla.py:69-83 in 0.12.0, :66-80 in 0.11.2; attention/ops/flashmla.py:59 in 0.11.1, "
        "0.11.2 and 0.12.0), the validator of 0.11.1rc7 on (vllm#28589). "
        "vllm>=0.15.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/ops/flashmla.py; bench/release_walk.py prevents). The range's start was set from the "
        "earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.FLASHMLA_DENSE_REASON,
    source=kb.FLASHMLA_DENSE_SOURCE,
    docs="""Checks that `--attention-backend FLASHMLA` with a dense (non-sparse) MLA model runs on SM90.

FlashMLABackend.supports_compute_capability accepts 9.x and 10.x, but its supports_combination asks
is_flashmla_dense_supported(), which allows Hopper only; on SM100 the dense kernels are not there. Sparse
MLA models (DeepSeek-V3.2) use FLASHMLA_SPARSE, which does run on SM100. (The backends matrix of
2026-05 listed FLASHMLA as 9.x-10.x from supports_compute_capability alone; the combination check is
what decides.)""",
    fix_title="On SM100 use FLASHINFER_MLA or CUTLASS_MLA; on other GPUs TRITON_MLA",
    backends=("FLASHMLA",),
)
def vllm_flashmla_dense_hopper(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    q = query(cfg, target)
    if q.use_sparse:
        return skipped("a sparse MLA model: FLASHMLA's sparse path is judged by vllm-sparse-mla-backend")
    if "flashmla_dense" not in rejections(backend, q, target):
        return passed(f"dense FLASHMLA on {gpu(target)}", "Hopper (9.x)")
    return failed(f"dense FLASHMLA on {gpu(target)}", "Hopper (9.x)", _instead(q, target, "FLASHMLA"))


@rule(
    id="vllm-flash-attn-version",
    title="The requested FlashAttention version runs on this GPU",
    engine="vllm",
    versions="vllm>=0.13.0",
    verified=(
        "vllm 0.13.0-0.33.0, release by release (fa_utils.get_flash_attn_version, config/attention.py and the "
        "vllm_flash_attn interface's _is_fa*_supported, read with bench/wheel_ranges.py). Begins at 0.13.0, the "
        "first release with --attention-config (engine/arg_utils.py:546 in 0.13.0; until 0.12.x the version is "
        "VLLM_FLASH_ATTN_VERSION alone, attention/utils/fa_utils.py:53-55 in 0.12.0). 0.13.0-0.16.0: "
        "flash_attn_version is Literal[2, 3] (config/attention.py:24 in 0.13.0, :19 in 0.16.0), FA3 on 10.x "
        "becomes FA2 and on 12.x is refused (attention/utils/fa_utils.py:59-79 in 0.13.0, "
        "v1/attention/backends/fa_utils.py:90-110 in 0.16.0; 0.14.0, 0.15.0 the same; FA3 only on 9.x, "
        "flash_attn_interface.py:51-54). 0.17.0-0.33.0: Literal[2, 3, 4] (config/attention.py:19 in 0.17.0), FA3 "
        "on >= 10.x becomes FA4 if supported, else FA2 (fa_utils.py:95-100 in 0.17.0, :96-101 in 0.19.1, :99-104 "
        "in 0.20.0, the same text through 0.33.0), FA4 on 9.x, 10.x and 11.x (flash_attn_interface.py:84)"
    ),
    stage="runtime",
    prevents="Cannot use FA version 3 is not supported due to " + kb.FA_UNSUPPORTED_REASON[3],
    source=kb.FA_VERSION_SOURCE + "; " + kb.FA_SUPPORT_SOURCE,
    docs="""Checks `--attention-config.flash_attn_version=N` (FLASH_ATTN only) against the archs the
vllm_flash_attn build runs each version on: FA2 >= 8.0, FA3 9.x only (built for sm_90a), FA4 9.x, 10.x
or 11.x.

get_flash_attn_version takes the requested version, switches FA3 on Blackwell (>= 10.x) to FA4 (or FA2)
with the warning "Cannot use FA version 3 on Blackwell platform, …", and otherwise asserts that the
version is supported: on failure it logs "Cannot use FA version N is not supported due to …" and returns
None, and the FlashAttention layer fails with "FlashAttention version not detected." Without the flag
vLLM picks FA3 on 9.x, FA4 on 10.x and FA2 elsewhere.

Before 0.17.0 there is no FA4: version 4 is refused when the config is parsed (flash_attn_version is
Literal[2, 3]), FA3 on 10.x becomes FA2, and FA3 on 12.x is refused.

Where sources disagree: the 2026-05 backends matrix read vLLM's pinned FA fork, whose _is_fa4_supported
accepted 10.x only; the fork shipped from vllm 0.17.0 accepts 9.x, 10.x and 11.x. This rule follows the wheels.""",
    fix_title="Drop --attention-config.flash_attn_version, or request a version this GPU runs",
)
def vllm_flash_attn_version(cfg, target):
    requested = cfg.flags.get("attention_config.flash_attn_version")
    if requested is None:
        return skipped("no FA version requested")
    requested = int(requested)
    fix = ["drop --attention-config.flash_attn_version"]
    accepted = kb.fa_versions_accepted(_release(target))
    if requested not in accepted:
        return failed(
            f"--attention-config.flash_attn_version={requested} at vllm {_release(target) or kb.VLLM_VERSION}",
            f"one of {', '.join(map(str, accepted))}" + ("" if 4 in accepted else " (4 from vllm 0.17.0)"),
            fix,
        )
    if cfg.attention_backend not in (None, "FLASH_ATTN"):
        return skipped(f"the FA version applies to FLASH_ATTN, not {cfg.attention_backend}")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    resolution = kb.flash_attn_version(target.cc, requested=requested, release=_release(target))
    if resolution.version is None:
        return failed(f"FA{requested} on {gpu(target)}", kb.FA_UNSUPPORTED_REASON.get(requested, "FA 2, 3 or 4"), fix)
    if resolution.version != requested:
        return warned(
            f"FA{requested} on {gpu(target)}: vLLM runs FA{resolution.version}",
            kb.FA_UNSUPPORTED_REASON[requested],
            fix,
            reason=resolution.notes[0],
        )
    return passed(f"FA{requested} on {gpu(target)}", f"FA{requested} runs on {kb.FA_SUPPORTED[requested].describe()}")


@rule(
    id="vllm-flash-attn-fallback",
    title="FLASH_ATTN runs the FlashAttention version this GPU is best at",
    engine="vllm",
    versions="vllm>=0.29.0",
    verified=(
        "vllm 0.29.0-0.33.0, release by release: fa_utils.get_flash_attn_version reads the same in every wheel "
        "(the function, comments aside, is one text in 0.29.0, 0.30.0, 0.31.0, 0.32.0 and 0.33.0; the TMEM "
        "message at v1/attention/backends/fa_utils.py:205 in each), and FlashAttentionBackend/Impl call it with "
        "supports_fa4_hd256=True from 0.29.0 (flash_attn.py:104, :225 in 0.29.0; :349, :492 in 0.33.0); "
        "fa_utils.py of 0.31.0-0.33.0 differs from 0.30.0's only in flash_attn_supports_kv_cache_dtype and "
        "an XPU case. Not before 0.29.0: 0.28.0 turns FA4 off for every head_size 256 on Blackwell ('FA4 on "
        "Blackwell is temporarily disabled for head_size=256', no hd256 kernel), which flash_attn_version "
        "does not model"
    ),
    stage="init",
    prevents=kb.FA4_TMEM_MESSAGE.format(head_size=192),
    reason="vLLM silently falls back to FA2 (a warning in the log), which runs but is slower than FA3/FA4.",
    source=kb.FA_VERSION_SOURCE,
    docs="""Warns when FLASH_ATTN would resolve FlashAttention 2 on a GPU whose default is FA4 (10.x) or
FA3 (9.x), because of the model's head size or features.

On Blackwell, FA4's tensor-memory budget limits head sizes: above 128 only 256 (hd256 kernel) and 192/128
are kept (192/128 only for a caller passing head_size_v, which FlashAttentionImpl never does: an MLA-disabled
DeepSeek's head size 192 runs FA2), anything else logs "FA4 on Blackwell does not support head_size=N due to TMEM capacity limits,
defaulting to FA version 2." The hd256 kernel itself falls back to FA2 for attention sinks, logit soft-cap,
a quantised KV cache or a block size that is not a multiple of 128. ALiBi forces FA2 on any arch.""",
    fix_title="Accept FA2, or use FLASHINFER (the default on SM100) for this model",
)
def vllm_flash_attn_fallback(cfg, target):
    if cfg.attention_backend not in (None, "FLASH_ATTN"):
        return skipped("applies to FLASH_ATTN")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    q = query(cfg, target)
    if cfg.attention_backend is None and _select(q, target).chosen != "FLASH_ATTN":
        return skipped("vLLM does not select FLASH_ATTN for this config")
    if q.head_size is None:
        return skipped("needs the model's head size (--model)")
    default = kb.flash_attn_version(target.cc).version
    resolution = _flash_attn_resolution(q, target)
    wanted = q.fa_version or default
    if resolution.version == 2 and wanted in (3, 4):
        return warned(
            f"FLASH_ATTN resolves FA2 for head size {q.head_size} on {gpu(target)}",
            f"FA{wanted}",
            _instead(q, target, "FLASH_ATTN") if cfg.attention_backend else [],
            reason=resolution.notes[-1],
        )
    return passed(f"FLASH_ATTN resolves FA{resolution.version} on {gpu(target)}", f"FA{wanted or 2}")


@rule(
    id="vllm-fa4-library",
    title="FLASH_ATTN on FA4 needs a working CUTLASS CuTe DSL and quack-kernels",
    engine="vllm",
    versions=f"vllm>={kb_fa4.FA4_SINCE}",
    verified=(
        "vllm 0.17.0-0.33.0, release by release (every x.y.0 and last x.y.z; vllm_flash_attn/**/*.py and METADATA "
        "read by bench/wheel_ranges.py). Begins at 0.17.0: no wheel from 0.10.0 to 0.16.0 ships "
        "vllm_flash_attn/cute/ (0.11.2-0.16.0 point FA4 at the pip flash_attn.cute.interface, "
        "flash_attn_interface.py:29), and their get_flash_attn_version never picks 4 (VLLM_FLASH_ATTN_VERSION "
        "asserted in [2, 3], attention/utils/fa_utils.py:41 in 0.11.0, :54 in 0.12.0; "
        "AttentionConfig.flash_attn_version Literal[2, 3] in 0.13.0-0.16.0, config/attention.py:24 in 0.13.0, "
        ":19 in 0.16.0; the default FA3 on 9.x, else FA2); Literal[2, 3, 4] from 0.17.0 (:19 in 0.17.0, :57 in 0.33.0), "
        "the only spelling --attention-config.flash_attn_version (VLLM_FLASH_ATTN_VERSION is gone from 0.15.0). "
        "In every release from "
        "0.17.0 to 0.33.0: FA4_AVAILABLE is only os.path.exists(cute/interface.py) (flash_attn_interface.py:38), "
        "_is_fa4_supported takes 9.x, 10.x and 11.x (:84), and flash_attn_varlen_func imports "
        "vllm.vllm_flash_attn.cute.interface when fa_version == 4 (:377 in 0.17.0-0.19.1, :370 in 0.20.0-0.23.0, "
        ":389 in 0.24.0-0.26.0, :400 in 0.27.x, :405 in 0.28.0-0.30.0, :435 in 0.31.0-0.32.0, :454 in 0.33.0); "
        "cute/interface.py imports cutlass (:32 in 0.17.0-0.19.1, with quack through flash_fwd.py:23; :33 and "
        "quack.compile_utils :36 in 0.20.0-0.21.0; :15/:18 in 0.22.0-0.25.1; :14/:17 in 0.26.0-0.33.0), after "
        "cuda.bindings.driver through 0.25.1 (:30, :31, :13; the DSL's own dependency). fa_utils.get_flash_attn_version defaults to FA4 on 10.x from 0.17.0 "
        "(fa_utils.py:77 in 0.17.x, :78 in 0.18.0-0.19.1, :81 in 0.20.0-0.24.0, :157 in 0.25.0-0.26.0, :166 in "
        "0.27.x, :95 in 0.28.0, :102 in 0.29.0-0.33.0); which head sizes keep FA4 per release is "
        "vllm_fa4.FA_ERAS. The METADATA pins differ by release: vllm_fa4.PINS"
    ),
    stage="runtime",
    needs_software=True,
    prevents="ModuleNotFoundError: No module named 'cutlass'",
    source=kb.src(
        kb.FA_IFACE,
        "flash_attn_varlen_func (imports vllm.vllm_flash_attn.cute.interface at the first FA4 "
        "call; FA4_AVAILABLE only checks that cute/interface.py exists)",
    )
    + "; "
    + kb_fa4.PINS_SOURCE,
    docs="""Checks, when FLASH_ATTN resolves FlashAttention 4 (by default on 10.x, or by
--attention-config.flash_attn_version=4), that the CUTLASS CuTe DSL (nvidia-cutlass-dsl, `cutlass.cute`) and
quack-kernels are installed and import.

vLLM runs FA4 from its own vllm_flash_attn build (vllm/vllm_flash_attn/cute, from vLLM 0.17.0), not from the pip
flash-attn-4 package. vLLM counts FA4 as available when cute/interface.py exists, so it starts and loads the
weights; the first FA4 call imports the interface, which imports `cutlass` and `quack`, and fails there. A
`cutlass` that imports only from a source tree (its .pth file not processed) shows here as a failed import.
Which head sizes above 128 keep FA4 on Blackwell changed by release: none in 0.17.x; 192 in 0.18-0.26; 256 in
0.27 (not on its sliding-window layers); none in 0.28; 256 through its own kernel from 0.29 (not with sinks,
soft-cap, a quantised KV cache or a block size that is not a multiple of 128). The fix installs the versions
the target's vLLM release requires (from nvidia-cutlass-dsl>=4.4.0.dev1 and quack-kernels>=0.2.7
in 0.17.0 to nvidia-cutlass-dsl[cu13]==4.8.0 and quack-kernels==0.6.5 in 0.32.0 and 0.33.0).""",
    fix_title="Install the nvidia-cutlass-dsl and quack-kernels versions the vLLM release requires",
)
def vllm_fa4_library(cfg, target):
    if cfg.attention_backend not in (None, "FLASH_ATTN"):
        return skipped("applies to FLASH_ATTN")
    if target.cc is None:
        return skipped("no CUDA GPU (rule install-no-cuda-gpu)")
    q = query(cfg, target)
    if cfg.attention_backend is None and _select(q, target).chosen != "FLASH_ATTN":
        return skipped("vLLM does not select FLASH_ATTN for this config")
    version = _flash_attn_resolution(q, target).version
    if version != 4:
        return skipped(
            f"applies to FA4; FLASH_ATTN resolves {f'FA{version}' if version else 'no FA version'} on {gpu(target)}"
        )
    states = {
        name: library_state(target, key)
        for key, name in (("cutlass_dsl", "nvidia-cutlass-dsl"), ("quack", "quack-kernels"))
    }
    details = list(dict.fromkeys(state.detail for state in states.values() if state.detail))
    found = "; ".join(f"{name} {state.summary}" for name, state in states.items()) + "".join(
        f" ({detail})" for detail in details
    )
    required = "nvidia-cutlass-dsl and quack-kernels that import (FA4 on vllm_flash_attn)"
    if any(state.healthy is False for state in states.values()):
        return failed(found, required, [kb_fa4.pins(_release(target)).install()])
    if any(state.healthy is None for state in states.values()):
        return unknown(f"import health not checked: {found}")
    return passed(found, required)


# --- the reasons of validate_configuration -------------------------------------------------------------------


@rule(
    id="vllm-head-size",
    title="The vLLM attention backend supports the model's head size",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:189 in 0.11.1 "
        "and 0.11.2, :215 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "0.13.0-0.14.x: the declarations read in the 0.13.0 and 0.14.1 wheels (CHANGES). "
        "vllm 0.15.0-0.33.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents); the head sizes of FLASH_ATTN "
        "(<= 256 before 0.20.0), FLASHINFER, TRITON_ATTN, FLEX_ATTENTION, MLACommonBackend ([576] before 0.18.0; "
        "TRITON_MLA its own from 0.18.0), FLASHMLA_SPARSE and FLASHINFER_MLA_SPARSE read in 0.15.0, 0.16.0, "
        "0.17.0, 0.17.1, 0.18.0, 0.19.0, 0.19.1, 0.20.0, 0.22.1, 0.26.0, 0.30.0, 0.33.0 "
        "(rules/engines/vllm/capabilities.py CHANGES)"
    ),
    stage="startup",
    prevents=kb.R_HEAD_SIZE,
    source=kb.VALIDATE_SOURCE + "; each backend's supports_head_size / get_supported_head_sizes",
    docs="""Checks the head size of every attention layer of the model against the named backend's supported
head sizes (vLLM validates the backend for each layer: Gemma-4's full-attention layers have global_head_dim 512).

FLASH_ATTN: a multiple of 8 up to 256, or up to 512 where FA4 runs (9.x, 10.x, 11.x). FLASHINFER: 64, 128,
256 or 512. TRITON_ATTN: 32 or more. FLEX_ATTENTION and TRITON_MLA: any. MLA backends see the latent head
(kv_lora_rank + qk_rope_head_dim: 576 for DeepSeek V2/V3): FLASHMLA, CUTLASS_MLA, FLASH_ATTN_MLA,
FLASHINFER_MLA and TOKENSPEED_MLA take 320, 512 or 576 (MLACommonBackend); FLASHMLA_SPARSE and
FLASHINFER_MLA_SPARSE 512 or 576. Older releases take fewer: FLASH_ATTN at most 256 before 0.20, FLASHINFER
64, 128 or 256 before 0.26, the MLA backends 576 only before 0.18 (320 or 576 until 0.30).""",
    fix_title="Use a backend that takes this head size (TRITON_ATTN takes any head size >= 32)",
)
def vllm_head_size(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    queries = layer_queries(cfg, target)
    if queries[0].head_size is None:
        return skipped("needs the model's head size (--model)")
    required = f"head size {backend.head_sizes.describe(target.cc)}"
    sizes = " and ".join(str(q.head_size) for q in queries)
    refused = [q for q in queries if "head_size" in rejections(backend, q, target)]
    if not refused:
        return passed(f"head size {sizes}", required)
    return failed(
        f"head size {' and '.join(str(q.head_size) for q in refused)} on {backend.name}"
        + (f" (the model's layers: {sizes})" if len(queries) > 1 else ""),
        required,
        _instead(refused[0], target, backend.name),
    )


@rule(
    id="vllm-dtype",
    title="The vLLM attention backend supports the model dtype",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:191 in 0.11.1 "
        "and 0.11.2, :217 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "0.13.0-0.19.x: the backends' declarations read in the 0.13.0, 0.14.1, 0.15.0, 0.15.1, 0.16.0, 0.17.0, "
        "0.17.1, 0.18.0, 0.18.1, 0.19.0 and 0.19.1 wheels (their differences from 0.33.0 are CHANGES). "
        "vllm>=0.20.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents). The range's start was set from "
        "the earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.R_DTYPE,
    source=kb.VALIDATE_SOURCE + "; each backend's supported_dtypes",
    docs="""Checks the dtype vLLM runs the model in (`--dtype`, or the config's torch_dtype resolved as
vLLM does) against the named backend's supported_dtypes.

Only TRITON_ATTN and FLEX_ATTENTION take float32; every other backend takes float16 and bfloat16, and
FLASHMLA_SPARSE, FLASH_ATTN_MLA_SPARSE_FA4, FLASHINFER_MLA_SPARSE_SM90 and B12X bfloat16 only. With
`--dtype auto`, vLLM downcasts a float32 checkpoint to bfloat16 (float16 below SM80).""",
    fix_title="Use --dtype bfloat16 (float16 below SM80), or TRITON_ATTN / FLEX_ATTENTION for float32",
)
def vllm_dtype(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    dtype = _model_dtype(cfg, target.cc)
    if dtype is None:
        if cfg.dtype != "auto":
            return unknown(f"--dtype {cfg.dtype} is not one of vLLM's dtypes ({', '.join(kb.MODEL_DTYPES)})")
        return skipped("needs the model's dtype (--model or --dtype)")
    required = " or ".join(sorted(backend.dtypes))
    q = query(cfg, target)  # carries this dtype
    if "dtype" not in rejections(backend, q, target):
        return passed(f"{dtype} on {backend.name}", required)
    model_type = cfg.model.model_type if cfg.model else None
    usable = [
        d
        for d in ("bfloat16", "float16")
        if "dtype" not in rejections(backend, replace(q, dtype=d), target)
        and (d != "bfloat16" or target.cc >= (8, 0))
        and not (d == "float16" and model_type in kb.FLOAT16_UNSUPPORTED_MODELS)
    ]
    fix = [f"--dtype {usable[0]}"] if usable else []
    if dtype == "float32" and not _uses_mla(cfg):
        fix.append(_use_backend("TRITON_ATTN", target))
    return failed(f"{dtype} on {backend.name}", required, fix)


@rule(
    id="vllm-bf16-arch",
    title="bfloat16 needs compute capability 8.0",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.13.0 read: the worker raises it for --dtype bfloat16 below SM80 (v1/worker/gpu_worker.py:601 in "
        "0.10.0, :629 in 0.10.1.1; platforms/cuda.py:577 in 0.10.2, :510 in 0.11.0, :478 in 0.11.2, :463 in 0.12.0, "
        ":439 in 0.13.0) and --dtype auto resolves from the platform's supported dtypes (config.py _resolve_auto_dtype "
        ":3357-3373 in 0.10.0). "
        "vllm>=0.15.0: the upstream message is in every vllm release read from 0.10.2 to 0.33.0 (0.10.2: "
        "vllm/platforms/cuda.py; bench/release_walk.py prevents). The range's start was set from the earlier "
        "reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.BF16_ARCH_MESSAGE.format(gpu="Tesla T4", cc="7.5"),
    source=kb.BF16_ARCH_SOURCE,
    docs="""Checks that bfloat16 is not asked of a GPU older than Ampere (V100, T4).

With `--dtype bfloat16` vLLM's worker raises "Bfloat16 is only supported on GPUs with compute capability of
at least 8.0. …" before the model loads. With `--dtype auto` a bfloat16 checkpoint is silently run in
float16 instead ("Your device … doesn't support torch.bfloat16. Falling back to torch.float16 for
compatibility."), which this rule reports as a warning: some models overflow in float16.""",
    fix_title="Use --dtype half (or a GPU with compute capability 8.0 or newer)",
    needs_gpu=True,
)
def vllm_bf16_arch(cfg, target):
    explicit = kb.MODEL_DTYPES.get(cfg.dtype) == "bfloat16"
    declared = cfg.model.dtype if cfg.model else None
    if not explicit and not (cfg.dtype == "auto" and declared == "bfloat16"):
        return skipped("bfloat16 is not requested")
    if target.cc >= (8, 0):
        return passed(f"bfloat16 on {gpu(target)}", "compute capability >= 8.0")
    if explicit:
        return failed(f"--dtype {cfg.dtype} on {gpu(target)}", "compute capability >= 8.0", ["--dtype half"])
    return warned(
        f"a bfloat16 checkpoint on {gpu(target)}",
        "compute capability >= 8.0",
        ["--dtype half"],
        reason="vLLM falls back to float16",
    )


@rule(
    id="vllm-fp16-model",
    title="The model accepts float16",
    engine="vllm",
    versions="vllm>=0.10.2",
    verified=(
        "vllm 0.10.2-0.16.0 read: _FLOAT16_NOT_SUPPORTED_MODELS has gemma2, gemma3, gemma3_text, plamo2 and glm4 "
        "(config/__init__.py:2615-2622 in 0.10.2, config/model.py:1581-1588 in 0.11.0, :1937-1943 in 0.12.0, :1853 in "
        "0.13.0; the same in 0.14.0-0.16.0), 0.33.0 gemma2, gemma3, gemma3_text and glm4: the rule omits plamo2 (lax "
        "for "
        "it). 0.10.0 and 0.10.1.1 lack gemma3_text (config.py:3293-3298, config/__init__.py:2669-2674), so the range "
        "starts at 0.10.2. "
        "vllm>=0.15.0: not walked release by release (no upstream message in the vllm wheels to grep: the "
        "check is a reason, a kernel library's or worded in parts); the range is from the earlier reading"
    ),
    stage="startup",
    prevents=kb.FLOAT16_MODEL_MESSAGE.format(model_type="gemma2", reason=kb.FLOAT16_UNSUPPORTED_MODELS["gemma2"]),
    source=kb.FLOAT16_MODEL_SOURCE,
    docs="""Checks that `--dtype half` / `float16` is not asked of a model vLLM refuses to run in float16:
Gemma 2, Gemma 3 and GLM-4 (numerical instability).

Below SM80 these models have no half-precision dtype vLLM accepts (no bfloat16, no float16), so they run
in float32, which only TRITON_ATTN and FLEX_ATTENTION take.""",
    fix_title="Use --dtype bfloat16 (float32 below SM80)",
)
def vllm_fp16_model(cfg, target):
    model_type = cfg.model.model_type if cfg.model else None
    if model_type not in kb.FLOAT16_UNSUPPORTED_MODELS:
        return skipped("applies to gemma2, gemma3, gemma3_text and glm4 models")
    if kb.MODEL_DTYPES.get(cfg.dtype) != "float16":
        return passed(f"{model_type} with --dtype {cfg.dtype}", "not float16")
    fix = "--dtype bfloat16" if target.cc is None or target.cc >= (8, 0) else "--dtype float32"
    return failed(f"{model_type} with --dtype {cfg.dtype}", "bfloat16 or float32", [fix])


@rule(
    id="vllm-kv-cache-dtype-choice",
    title="The --kv-cache-dtype value is one the vLLM release has",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.33.0, every release's wheel read (0.10.1.x not: 0.10.0 and 0.10.2 hold the same "
        "five): CacheDType's Literal (vllm/config.py:1609 in 0.10.0; vllm/config/cache.py from 0.10.2, :44-67 in "
        "0.33.0) gains values and loses none "
        "(vllm_backends.KV_CACHE_DTYPE_SINCE); EngineArgs.kv_cache_dtype is typed CacheDType through 0.32.0, so "
        "argparse refuses any other value (engine/arg_utils.py:282 in 0.10.0, :500 in 0.32.0), and "
        "CacheDType | str in 0.33.0, refused by CacheConfig._validate_cache_dtype (config/cache.py:468-474)"
    ),
    stage="parse",
    prevents="argument --kv-cache-dtype: invalid choice: 'nvfp4' (choose from auto, bfloat16, fp8, ...); "
    "Invalid kv_cache_dtype: 'X'. Valid values are: [...]",
    source=kb.KV_CACHE_DTYPE_SOURCE,
    docs="""Checks that `--kv-cache-dtype` names a KV-cache dtype the target's vLLM release has. Each release's
CacheDType lists them, and the list only grows: bfloat16 from 0.11.0, fp8_ds_mla from 0.11.2, float16 from 0.18.0,
nvfp4, the turboquant and per-token-head dtypes from 0.20.0, int4_per_token_head from 0.25.0, nvfp4_4over6 from
0.28.0, nvfp4_ds_mla from 0.30.0, ultraquant_4bit from 0.32.0 and the octave dtypes from 0.33.0.

Through 0.32.x argparse refuses another value before anything loads; 0.33.0 takes any string on the command line
(a platform may register its own dtype) and CacheConfig refuses an unknown one when the engine config is built.""",
    fix_title="Use a KV-cache dtype of this release (auto, fp8, ...), or a newer vLLM",
)
def vllm_kv_cache_dtype_choice(cfg, target):
    release = _release(target)
    accepted = kb.kv_cache_dtypes_at(release)
    required = f"one of vllm {release or kb.VLLM_VERSION}'s {len(accepted)} KV-cache dtypes"
    if cfg.kv_cache_dtype in accepted:
        return passed(f"--kv-cache-dtype {cfg.kv_cache_dtype}", required)
    since = kb.KV_CACHE_DTYPE_SINCE.get(cfg.kv_cache_dtype)
    newer = f" (from vllm {since})" if since else ""
    return failed(
        f"--kv-cache-dtype {cfg.kv_cache_dtype}{newer} at vllm {release}", required, ["--kv-cache-dtype auto"]
    )


@rule(
    id="vllm-kv-cache-dtype",
    title="The vLLM attention backend supports the KV-cache dtype",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:193 in 0.11.1 "
        "and 0.11.2, :219 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "0.13.0-0.19.x: the backends' declarations read in the 0.13.0, 0.14.1, 0.15.0, 0.15.1, 0.16.0, 0.17.0, "
        "0.17.1, 0.18.0, 0.18.1, 0.19.0 and 0.19.1 wheels (their differences from 0.33.0 are CHANGES). "
        "vllm>=0.20.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents). The range's start was set from "
        "the earlier reading and the condition was not re-read release by release. "
        "--kv-cache-dtype auto is judged as the checkpoint's KV dtype from 0.14.0 (engine/arg_utils.py:1398 in "
        "0.14.0 to :2297 in 0.33.0, each release's line in rules/knowledge/checkpoint_kv.py VLLM_READ)"
    ),
    stage="startup",
    prevents=kb.R_KV_DTYPE,
    source=kb.VALIDATE_SOURCE + "; each backend's supported_kv_cache_dtypes / supports_kv_cache_dtype",
    docs="""Checks `--kv-cache-dtype` against the named backend's supported KV-cache dtypes on this GPU.

FLASH_ATTN: auto/float16/bfloat16, plus fp8 and fp8_e4m3 only on 9.x (FA3) and 10.x (FA4), never fp8_e5m2.
FLASHINFER: fp8, fp8_e4m3, fp8_e5m2, and nvfp4 (SM8x/9x/12x through its FA2 path, SM10x through TRT-LLM;
nvfp4_4over6 on SM10x only). TRITON_ATTN: fp8 variants and the per-token-head int4/int8/fp8 modes.
FLEX_ATTENTION and FLASH_ATTN_MLA: no quantised KV. FLASHMLA, CUTLASS_MLA, TRITON_MLA, FLASHINFER_MLA: fp8
and fp8_e4m3. TOKENSPEED_MLA: fp8/fp8_e4m3 only. FLASHMLA_SPARSE: fp8_ds_mla (alias fp8) and
nvfp4_ds_mla.""",
    fix_title="Use --kv-cache-dtype auto, or a backend that stores this KV dtype (shown in the fix)",
)
def vllm_kv_cache_dtype(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    q = query(cfg, target)
    if "kv_cache_dtype" not in rejections(backend, q, target):
        return passed(f"{kv_found(cfg, target)} on {backend.name}", "a dtype the backend stores")
    accepted = [
        d
        for d in sorted(backend.kv_dtypes or ())
        if "kv_cache_dtype" not in rejections(backend, replace(q, kv_dtype=d), target)
    ]
    unquantised = kv_unquantised_fix(cfg, target, q.dtype)
    fix = [f for f in unquantised if f.split()[-1] in accepted]
    required = "one of " + ", ".join(accepted)
    if kv_from_checkpoint(cfg, target) and "auto" in accepted:
        required += f" (auto, with this checkpoint, is {cfg.kv_cache_dtype})"
    return failed(
        f"{kv_found(cfg, target)} on {backend.name} ({gpu(target)})",
        required,
        fix + _instead(q, target, backend.name),
    )


@rule(
    id="vllm-flash-attn-fp8-kv",
    title="FLASH_ATTN stores an FP8 KV cache only with FA3 on SM90 or FA4 on SM100",
    engine="vllm",
    versions="vllm>=0.30.0",
    verified=(
        "vllm 0.30.0-0.33.0 (bench/release_walk.py grep 'FP8 KV cache requires'): "
        "FlashAttentionBackend.supports_combination refuses an FP8 KV cache off FA3-on-SM90 / FA4-on-SM100 in "
        "each (flash_attn.py:434 in 0.30.0, :489 in 0.31.0); 0.30.0 does not yet take FA4 with head_size 512 "
        "on SM90 (added in 0.31.0), which the rule allows there: lax for that one shape in 0.30.x. Before "
        "0.30 the fp8 KV limit is the FLASH_ATTN kv_dtype_archs Change (SM90 only)"
    ),
    stage="startup",
    prevents=kb.FA_FP8_KV_REASON,
    source=kb.FA_FP8_KV_SOURCE,
    docs="""Checks that FLASH_ATTN with `--kv-cache-dtype fp8`/`fp8_e4m3` resolves a FlashAttention version
that reads FP8 KV for this model: FA3 on SM90, FA4 with head size 512 on SM90, or FA4 on SM100.

The FA version depends on the head size: on SM100, FA4 keeps head sizes up to 128, 192/128 and 256 (the
hd256 kernel, which itself falls back to FA2 with a quantised KV cache), so e.g. head size 256 with fp8 KV
on a B200 resolves FA2 and fails. vLLM raises "Selected backend FLASH_ATTN is not valid … Reason: ['FP8 KV
cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100']".""",
    fix_title="Use FLASHINFER or TRITON_ATTN for FP8 KV, or --kv-cache-dtype auto",
    backends=("FLASH_ATTN",),
)
def vllm_flash_attn_fp8_kv(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if not kb.is_quantised_kv(cfg.kv_cache_dtype):
        return skipped("the KV cache is not quantised")
    q = query(cfg, target)
    if q.head_size is None:
        return skipped("needs the model's head size (--model)")
    fa = kb.flash_attn_for_kv(q)
    runs = f"FA{fa.version}" if fa.version else "no FlashAttention version (rule vllm-flash-attn-version)"
    found = f"{kv_found(cfg, target)} with {runs} (head size {q.head_size}) on {gpu(target)}"
    if "fa_fp8_kv" not in rejections(backend, q, target):
        return passed(found, "FA3 on SM90 or FA4 on SM100")
    return failed(
        found,
        "FA3 on SM90, FA4 with head size 512 on SM90, or FA4 on SM100",
        [*kv_unquantised_fix(cfg, target, q.dtype), *_instead(q, target, "FLASH_ATTN")],
    )


@rule(
    id="vllm-flashinfer-nvfp4-head64",
    title="FlashInfer's FA2 path cannot read an NVFP4 KV cache at head size 64",
    engine="vllm",
    versions="vllm>=0.32.0",
    verified=(
        "vllm 0.32.0-0.33.0 (bench/release_walk.py prevents): FlashInferBackend.supports_combination returns "
        "this reason for an NVFP4 KV cache on majors 8/9/12 in both (flashinfer.py:554-560 in 0.32.0, "
        ":679-685 in 0.33.0); 0.31.0 takes NVFP4 on the SM100 family only (:499-506), refused by the KV-dtype "
        "check instead"
    ),
    stage="startup",
    prevents=kb.FI_NVFP4_HEAD64_REASON,
    source=kb.FI_NVFP4_SOURCE,
    docs="""Checks FLASHINFER with an NVFP4 KV cache and head size 64 on SM8x, SM9x or SM12x.

There FlashInfer serves NVFP4 KV through its FA2 prefill path, which misreads an NVFP4 cache at head size
64; SM10x uses TRT-LLM kernels instead and is not affected.""",
    fix_title="Use --kv-cache-dtype fp8 on this GPU, or run NVFP4 KV on SM100",
    backends=("FLASHINFER",),
)
def vllm_flashinfer_nvfp4_head64(cfg, target):
    return _flashinfer_nvfp4(cfg, target, "head size 64", "fi_nvfp4_head64")


@rule(
    id="vllm-flashinfer-nvfp4-sinks",
    title="FlashInfer's sink prefill cannot read an NVFP4 KV cache",
    engine="vllm",
    versions="vllm>=0.32.0",
    verified=(
        "vllm 0.32.0-0.33.0 (bench/release_walk.py prevents): FlashInferBackend.supports_combination returns "
        "this reason for an NVFP4 KV cache with sinks on majors 8/9/12 in both (flashinfer.py:561-562 in "
        "0.32.0, :686-687 in 0.33.0); 0.31.0 takes NVFP4 on the SM100 family only (:499-506)"
    ),
    stage="startup",
    prevents=kb.FI_NVFP4_SINK_REASON,
    source=kb.FI_NVFP4_SOURCE,
    docs="""Checks FLASHINFER with an NVFP4 KV cache for a model with attention sinks (GPT-OSS) on SM8x,
SM9x or SM12x.

Below SM100 FlashInfer serves NVFP4 KV through its FA2 path, and the prefill wrapper that applies sinks
cannot read NVFP4 pages, so vLLM rejects the combination in FlashInferBackend.supports_combination. On
SM100/SM103 the TRT-LLM kernels handle both.""",
    fix_title="Use --kv-cache-dtype fp8 on this GPU, or run NVFP4 KV on SM100",
    backends=("FLASHINFER",),
)
def vllm_flashinfer_nvfp4_sinks(cfg, target):
    return _flashinfer_nvfp4(cfg, target, "attention sinks", "fi_nvfp4_sinks")


def _flashinfer_nvfp4(cfg, target, what, key):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if not cfg.kv_cache_dtype.startswith("nvfp4"):
        return skipped("applies to FLASHINFER with an NVFP4 KV cache")
    q = query(cfg, target)
    if not kb.flashinfer_nvfp4_fa2(q):
        return skipped(f"{gpu(target)} does not use FlashInfer's FA2 path for NVFP4")
    if what == "head size 64" and q.head_size is None:
        return skipped("needs the model's head size (--model)")
    if key not in rejections(backend, q, target):
        return passed(f"NVFP4 KV without {what} on {gpu(target)}", f"no {what}")
    return failed(
        f"{kv_found(cfg, target)} with {what} on {gpu(target)}",
        f"no {what} with NVFP4 KV below SM100",
        ["--kv-cache-dtype fp8"],
    )


@rule(
    id="vllm-flashinfer-fp8-kv-sm90",
    title="FlashInfer before 0.6.4 compiles its SM90 (FA3) prefill for a 16-bit query over an FP8 KV cache, and fails",
    engine="vllm",
    versions="vllm>=0.10.2",
    verified=(
        "vllm 0.10.2-0.16.0, each wheel read: off SM100 FlashInferMetadataBuilder keeps the query in the model's "
        "dtype (q_data_type: flashinfer.py:297-305 in 0.11.0, :570-581 in 0.14.0; supports_trtllm_attention is "
        "SM100 only in utils/flashinfer.py) and builds the prefill wrapper with FlashInfer's backend auto "
        "(flashinfer.py:347 in 0.10.2, :367 in 0.11.0, :597 in 0.11.2, :680 in 0.15.0, :718 in 0.16.0); they pin "
        "flashinfer-python 0.3.0 (0.10.2), 0.3.1 (0.11.0), 0.5.2, 0.5.3, 0.6.1 and 0.6.3 (0.16.0), whose "
        "is_fa3_backend_supported ignores the dtypes (utils.py in each of those wheels). 0.17.0-0.33.0 pin 0.6.4 ... "
        "0.7.2.post1, whose test refuses the pair so FA2 serves it: there the rule fails only an older FlashInfer "
        "installed. Before 0.10.2 V1 does not take an FP8 KV cache on FLASHINFER off SM100 (platforms/cuda.py "
        "is_kv_cache_dtype_supported: 0.10.0:460-470; 0.10.2 accepts FLASHINFER, :557-558, vLLM PR #24577)"
    ),
    needs_gpu=True,
    stage="runtime",
    prevents=kb_flashinfer.FA3_FP8_KV_JIT_ERROR,
    source=f"{kb_flashinfer.FA3_DTYPE_CHECK_SOURCE}; vllm: vllm/v1/attention/backends/flashinfer.py, "
    f"FlashInferMetadataBuilder (q_data_type, _get_prefill_wrapper); the pins: {kb_fi.PINS_SOURCE}",
    references=(
        "https://github.com/vllm-project/vllm/issues/27604",
        "https://github.com/vllm-project/vllm/issues/31843",
        "https://github.com/flashinfer-ai/flashinfer/issues/2348",
        "https://github.com/flashinfer-ai/flashinfer/pull/2536",
    ),
    docs="""Checks FLASHINFER with an FP8 KV cache (fp8, fp8_e4m3, fp8_e5m2) on an SM90 GPU (H100, H200, H20)
against the FlashInfer that runs it: the installed one when the target's software is known (a probe,
--facts, --engine-version flashinfer==X), else the flashinfer-python the vLLM release pins.

Off SM100 vLLM keeps the query in the model's dtype (bf16/fp16) and asks FlashInfer for its prefill
kernels with backend "auto". Up to FlashInfer 0.6.3, "auto" picks the FA3 (SM90) kernels on Hopper whatever
the dtypes, and the FA3 kernel has no tensor-core MMA for a 16-bit query over an FP8 cache: its JIT build
fails (cute::make_tiled_mma / rs_op_selector, vllm#27604 on vLLM 0.11.0, vllm#31843 on FlashInfer 0.5.3) and
the engine dies at its first prefill. FlashInfer 0.6.4 (PR #2536) sends that pair to its FA2 kernel instead;
vLLM 0.17.0 is the first release to pin it. FLASH_ATTN reads an FP8 KV cache on SM90 with FA3.""",
    fix_title="Use FLASH_ATTN (FA3 reads an FP8 KV cache on SM90) or --kv-cache-dtype auto; or FlashInfer 0.6.4+ "
    "(pinned from vLLM 0.17.0)",
)
def vllm_flashinfer_fp8_kv_sm90(cfg, target):
    q = query(cfg, target)
    if cfg.attention_backend is None:
        if _select(q, target).chosen != "FLASHINFER":
            return skipped("vLLM does not select FLASHINFER for this config")
    elif cfg.attention_backend != "FLASHINFER":
        return skipped("applies to FLASHINFER")
    if target.major != 9:
        return skipped(f"FlashInfer's FA3 prefill kernels run on SM90 only, not on {gpu(target)}")
    if cfg.kv_cache_dtype not in kb_fi.FP8_KV_DTYPES:
        return skipped("applies to an FP8 KV cache")
    if q.use_mla:
        return skipped("FLASHINFER serves non-MLA attention (vllm-non-mla-model-backend)")
    release = _release(target) or kb.VLLM_VERSION
    run = running_flashinfer(
        target, "vllm", release, kb_fi.pinned(release), kb_flashinfer.fa3_takes_16bit_query_over_fp8
    )
    if run.outcome is not None:
        return run.outcome
    found = f"{kv_found(cfg, target)} on FLASHINFER, {gpu(target)}, {run.said}"
    required = f"flashinfer {kb_flashinfer.FA3_DTYPE_CHECK_FROM}+ (FA2 serves a 16-bit query over an FP8 KV cache)"
    if not run.fa3:
        return passed(found, required)
    flash_attn = _use_backend("FLASH_ATTN", target)
    return failed(found, required, [flash_attn, *kv_unquantised_fix(cfg, target, q.dtype)])


@rule(
    id="vllm-sinks",
    title="The vLLM attention backend supports attention sinks",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:202 in 0.11.1 "
        "and 0.11.2, :228 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "vllm 0.15.0-0.33.0 (bench/release_walk.py grep): FlashInferBackend.supports_sink is "
        "supports_trtllm_attention(), SM100 family only (0.16.0 flashinfer.py:360-373, utils/flashinfer.py:277-289; "
        "0.20.0 flashinfer.py:411-424; 0.26.0 :481-484 is_device_capability_family(100)); 0.30.0 adds SM90 and "
        "SM12x XQA decode (:528-533). FLASH_ATTN: flash_attn_supports_sinks is get_flash_attn_version() == 3 "
        "through 0.19.x (0.16.0 fa_utils.py:123-127, 0.19.0 :164-168), (3, 4) from 0.20.0 (:200-203). The reason "
        "reads 'sink setting not supported' through 0.17.x (0.16.0 backend.py:249-250), 'attention sinks not "
        "supported' from 0.18.0 (backend.py:284)"
    ),
    stage="startup",
    prevents=kb.R_SINKS,
    source=kb.VALIDATE_SOURCE + "; each backend's supports_sink",
    docs="""Checks that a model with learnable attention sinks (GPT-OSS) is served by a backend whose
supports_sink() holds on this GPU.

FLASH_ATTN: only where FA3 or FA4 resolves (9.x, 10.x; also "sink not supported on compute capability <
9.0"); before vLLM 0.20.0 only FA3, so SM90 (fa_utils.flash_attn_supports_sinks: version == 3). FLASHINFER:
through TRT-LLM kernels on SM100/SM103 (SM 10.0 only before 0.13.0: vllm#28589, gpt-oss on a GB10 with vLLM
0.11.1), and from 0.30.0 XQA decode on SM90 and SM12x (needs FlashInfer's cubins). TRITON_ATTN: everywhere.
FLEX_ATTENTION and every MLA backend: never. Through 0.17.x vLLM words the refusal "sink setting not
supported". Before 0.11.1 no named backend is validated (rule vllm-sinks-unvalidated).""",
    fix_title="Use TRITON_ATTN (sinks on every GPU), or FLASH_ATTN on SM90/SM100",
)
def vllm_sinks(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if "sinks" not in cfg.features:
        return skipped("the model has no attention sinks")
    q = query(cfg, target)
    if "sinks" not in rejections(backend, q, target):
        return passed(f"sinks on {backend.name} ({gpu(target)})", "supports_sink()")
    return failed(
        f"a model with attention sinks on {backend.name} ({gpu(target)})",
        "a backend with sink support on this GPU",
        _instead(q, target, backend.name) or [_use_backend("TRITON_ATTN", target)],
    )


@rule(
    id="vllm-mla-model-backend",
    title="An MLA model needs an MLA backend",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:198 in 0.11.1 "
        "and 0.11.2, :224 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "vllm>=0.15.0: the upstream message is in every vllm release read from 0.10.2 to 0.33.0 except "
        "['0.11.0'] (0.10.2: vllm/v1/attention/backends/mla/cutlass_mla.py; bench/release_walk.py prevents). "
        "The range's start was set from the earlier reading and the condition was not re-read release by "
        "release"
    ),
    stage="startup",
    prevents=kb.R_MLA,
    source=kb.VALIDATE_SOURCE + " (use_mla != cls.is_mla())",
    docs="""Checks that a multi-head-latent-attention model (DeepSeek V2/V3/R1, Kimi K2, GLM-4.7-Flash, …)
is not given a non-MLA backend (FLASH_ATTN, FLASHINFER, TRITON_ATTN, FLEX_ATTENTION).

vLLM runs these models' attention as MLA (unless VLLM_MLA_DISABLE=1) and validate_configuration rejects a
non-MLA backend with "MLA not supported". The MLA backends are FLASH_ATTN_MLA and FLASHMLA (SM90),
FLASHINFER_MLA, CUTLASS_MLA and TOKENSPEED_MLA (SM100), TRITON_MLA (any GPU), and the *_SPARSE variants
for DeepSeek-V3.2-style sparse attention.""",
    fix_title="Use an MLA backend: FLASH_ATTN_MLA on SM90, FLASHINFER_MLA on SM100, TRITON_MLA elsewhere",
)
def vllm_mla_model_backend(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if not _uses_mla(cfg):
        return skipped("vLLM does not run this model with MLA")
    q = query(cfg, target)
    if "mla" not in rejections(backend, q, target):
        return passed(f"an MLA model on {backend.name}", "an MLA backend")
    return failed(f"an MLA model on {backend.name}", "an MLA backend", _instead(q, target, backend.name))


@rule(
    id="vllm-non-mla-model-backend",
    title="An MLA backend needs an MLA model",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:200 in 0.11.1 "
        "and 0.11.2, :226 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), read with "
        "the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 validate no "
        "named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "vllm>=0.15.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents). The range's start was set from "
        "the earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.R_NON_MLA,
    source=kb.VALIDATE_SOURCE + " (use_mla != cls.is_mla())",
    docs="""Checks that an MLA backend (FLASHMLA, FLASH_ATTN_MLA, CUTLASS_MLA, FLASHINFER_MLA, TRITON_MLA, …)
is not named for a model without multi-head latent attention (Llama, Qwen, Mistral, GPT-OSS, …).

validate_configuration rejects it with "non-MLA not supported"; the same happens for an MLA model with
VLLM_MLA_DISABLE=1.""",
    fix_title="Drop --attention-backend, or name FLASH_ATTN / FLASHINFER / TRITON_ATTN",
    backends=kb.MLA_BACKENDS,
)
def vllm_non_mla_model_backend(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if cfg.model is None and "mla" not in cfg.features:
        return skipped("needs the model (--model) to know whether it uses MLA")
    q = query(cfg, target)
    if "non_mla" not in rejections(backend, q, target):
        return passed(f"an MLA model on {backend.name}", "an MLA model")
    return failed(f"a model without MLA on {backend.name}", "an MLA model", _instead(q, target, backend.name))


@rule(
    id="vllm-sparse-mla-backend",
    title="A sparse-attention MLA model needs a sparse MLA backend, and a dense one a dense backend",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.12.x: validate_configuration gives it (attention/backends/abstract.py:205-207 in "
        "0.11.1 and 0.11.2, :231-233 in 0.12.0; 0.11.1rc7 is the first build known to have it, vllm#28589), "
        "read with the 0.11.1-0.12.0 capabilities (vllm_backends.RELEASES[0] and CHANGES); 0.10.0-0.11.0 "
        "validate no named backend (platforms/cuda.py get_attn_backend_cls returns it as asked). "
        "vllm>=0.15.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents). The range's start was set from "
        "the earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.R_SPARSE,
    source=kb.VALIDATE_SOURCE + " (use_sparse != cls.is_sparse()); "
    "vllm/model_executor/models/deepseek_v2.py (is_v32 = hasattr(config, 'index_topk'))",
    docs="""Checks that an MLA model with DeepSeek sparse attention (an `index_topk` indexer: DeepSeek-V3.2,
GLM-5) is on a sparse MLA backend (FLASHMLA_SPARSE, FLASHINFER_MLA_SPARSE, FLASH_ATTN_MLA_SPARSE, …), and
that a dense MLA model is not ("non-sparse not supported").

vLLM marks the layers sparse when the model's config has index_topk (config.json, or the default of
transformers' GlmMoeDsaConfig for glm_moe_dsa).""",
    fix_title="Sparse models: FLASHMLA_SPARSE (SM90/SM100); dense models: FLASH_ATTN_MLA / FLASHINFER_MLA / TRITON_MLA",
    backends=kb.MLA_BACKENDS,
)
def vllm_sparse_mla_backend(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if not _uses_mla(cfg):
        return skipped("applies to MLA models on MLA backends")
    q = query(cfg, target)
    kind = "a sparse-attention" if q.use_sparse else "a dense"
    found = rejections(backend, q, target)
    rejection = found.get("sparse") or found.get("non_sparse")
    if rejection is None:
        return passed(f"{kind} MLA model on {backend.name}", "matching sparsity")
    required = "a sparse MLA backend" if q.use_sparse else "a dense MLA backend"
    return failed(
        f"{kind} MLA model on {backend.name}", required, _instead(q, target, backend.name), reason=rejection.text
    )


@rule(
    id="vllm-block-size",
    title="--block-size is a multiple of the backend's kernel block size",
    engine="vllm",
    versions="vllm>=0.20.0",
    verified=(
        "Not before: 0.11.1-0.12.x validate without the block size (get_attn_backend_cls passes block_size=None, "
        "platforms/cuda.py:349 and :373 in 0.12.0, :362 in 0.11.1). "
        "vllm>=0.20.0: the upstream message is in every vllm release read from 0.11.2 to 0.33.0 (0.11.2: "
        "vllm/attention/backends/abstract.py; bench/release_walk.py prevents). The range's start was set from "
        "the earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.R_BLOCK_SIZE,
    source=kb.VALIDATE_SOURCE + "; AttentionBackend.supports_block_size; each backend's "
    "get_supported_kernel_block_sizes",
    docs="""Checks `--block-size` against the named backend's kernel block sizes: the block size must be a
multiple of one of them (vLLM splits larger blocks into kernel pages).

FLASH_ATTN, TRITON_ATTN, FLEX_ATTENTION, TRITON_MLA, FLASH_ATTN_MLA: multiples of 16. FLASHINFER: 16, 32 or
64 (so multiples of 16). FLASHMLA and FLASHMLA_SPARSE: 64. CUTLASS_MLA: 128. FLASHINFER_MLA and
TOKENSPEED_MLA: 32 or 64 (multiples of 32). Without --block-size vLLM picks a size each backend accepts.""",
    fix_title="Drop --block-size, or use a multiple of the backend's kernel block size",
)
def vllm_block_size(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if cfg.page_size is None:
        return skipped("no --block-size given: vLLM picks one the backend accepts")
    required = backend.describe_block_sizes()
    if "block_size" not in rejections(backend, query(cfg, target), target):
        return passed(f"--block-size {cfg.page_size} on {backend.name}", required)
    return failed(f"--block-size {cfg.page_size} on {backend.name}", required, ["drop --block-size"])


@rule(
    id="vllm-sliding-window",
    title="The vLLM attention backend supports sliding-window attention",
    engine="vllm",
    versions="vllm>=0.26.0",
    verified=(
        "vllm>=0.26.0: the upstream message is in every vllm release read from 0.26.0 to 0.33.0 (0.26.0: "
        "vllm/v1/attention/backend.py; bench/release_walk.py prevents). The range's start was set from the "
        "earlier reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.R_SLIDING_WINDOW,
    source=kb.VALIDATE_SOURCE + "; each backend's supports_sliding_window",
    docs="""Checks that a model with sliding-window layers (Mistral, Gemma 2/3, GPT-OSS, …) is on a backend
whose supports_sliding_window() holds.

FLASH_ATTN, FLASHINFER, TRITON_ATTN, FLEX_ATTENTION and B12X declare it; the MLA backends and TURBOQUANT do
not, and validate_configuration (since vllm 0.26; 0.20 had no such reason) rejects them with "sliding window
not supported".""",
    fix_title="Use FLASH_ATTN, FLASHINFER or TRITON_ATTN",
)
def vllm_sliding_window(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if "sliding_window" not in cfg.features:
        return skipped("the model has no sliding-window layers")
    q = query(cfg, target)
    if "sliding_window" not in rejections(backend, q, target):
        return passed(f"sliding window on {backend.name}", "supports_sliding_window()")
    return failed(
        f"a sliding-window model on {backend.name}",
        "a backend with sliding-window support",
        _instead(q, target, backend.name),
    )


@rule(
    id="vllm-flashinfer-mla-qk-nope",
    title="FLASHINFER_MLA takes the model's qk_nope_head_dim",
    engine="vllm",
    versions="vllm>=0.15.0",
    verified=(
        "vllm 0.15.0-0.33.0, release by release in vllm/v1/attention/backends/mla/flashinfer_mla.py "
        "FlashInferMLABackend.supports_combination: `qk_nope_head_dim != 128` in 0.15.0, 0.15.1, 0.16.0, 0.17.0 "
        "and 0.17.1 (:85-88); `not in [64, 128]` in 0.18.0 and 0.18.1 (:87-90); `not in [64, 128, 192]` in "
        "0.19.0, 0.19.1 and 0.20.0 (:87-90) and 0.33.0 (:245-248); no such check in 0.11.2-0.14.1 "
        "(vllm_backends.CHANGES, each release's wording: fi_mla_qk_nope_reason)"
    ),
    stage="startup",
    prevents=kb.FI_MLA_QK_NOPE_REASON.format(got=96),
    source=kb.FI_MLA_QK_NOPE_SOURCE,
    docs="""Checks the MLA model's qk_nope_head_dim (the non-rotary part of the query/key head) for
FLASHINFER_MLA, against the values the target's vLLM release accepts.

FlashInfer's TRT-LLM MLA kernels are built for a few qk_nope_head_dim values (DeepSeek V2/V3/R1 and Kimi K2
use 128); FlashInferMLABackend.supports_combination rejects any other value. vLLM 0.15-0.17 accept 128 only,
0.18 adds 64, 0.19 and later 192 as well; 0.11.1-0.14 do not check.""",
    fix_title="Use CUTLASS_MLA or TRITON_MLA for this model",
    backends=("FLASHINFER_MLA",),
)
def vllm_flashinfer_mla_qk_nope(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if not _uses_mla(cfg):
        return skipped("applies to MLA models on FLASHINFER_MLA")
    q = query(cfg, target)
    if q.qk_nope_head_dim is None:
        return skipped("needs the model's qk_nope_head_dim (--model)")
    if backend.qk_nope_head_dims is None:
        return skipped(f"FLASHINFER_MLA checks no qk_nope_head_dim in vllm {_release(target)}")
    dims = backend.qk_nope_head_dims
    required = " or ".join([", ".join(map(str, dims[:-1])), str(dims[-1])] if len(dims) > 1 else [str(dims[0])])
    found = f"qk_nope_head_dim {q.qk_nope_head_dim}"
    if "fi_mla_qk_nope" not in rejections(backend, q, target):
        return passed(found, required)
    return failed(found, required, _instead(q, target, backend.name))


@rule(
    id="vllm-tokenspeed-mla-dims",
    title="TOKENSPEED_MLA needs DeepSeek-R1 MLA dimensions",
    engine="vllm",
    versions="vllm>=0.21.0",
    verified=(
        "vllm 0.21.0-0.33.0 (TOKENSPEED_MLA's first release is 0.21.0: registry.py:66, none in 0.20.2): "
        "TokenspeedMLABackend.supports_combination refuses dims other than (128, 64, 128) in every release "
        "read (mla/tokenspeed_mla.py:118 in 0.21.0, :139 in 0.26.0, :165 in 0.33.0)"
    ),
    stage="startup",
    prevents=kb.TOKENSPEED_DIMS_REASON.format(got="192, 64, 128"),
    source=kb.TOKENSPEED_SOURCE,
    docs="""Checks that TOKENSPEED_MLA serves a model with qk_nope_head_dim 128, qk_rope_head_dim 64 and
v_head_dim 128 (DeepSeek V3/R1, Kimi K2).

The tokenspeed-mla kernels exist for those dimensions only, and TokenspeedMLABackend.supports_combination
rejects others. The backend also needs an FP8 KV cache (rule vllm-kv-cache-dtype) and the tokenspeed-mla
package, and runs on SM100/SM103 only.""",
    fix_title="Use FLASHINFER_MLA or CUTLASS_MLA",
    backends=("TOKENSPEED_MLA",),
)
def vllm_tokenspeed_mla_dims(cfg, target):
    backend, outcome = _named(cfg, target)
    if outcome:
        return outcome
    if not _uses_mla(cfg):
        return skipped("applies to MLA models on TOKENSPEED_MLA")
    q = query(cfg, target)
    dims = (q.qk_nope_head_dim, q.qk_rope_head_dim, q.v_head_dim)
    if None in dims:
        return skipped("needs the model's MLA dimensions (--model)")
    found = "qk_nope/qk_rope/v head dims " + "/".join(str(d) for d in dims)
    if "tokenspeed_dims" not in rejections(backend, q, target):
        return passed(found, "128/64/128")
    return failed(found, "128/64/128", _instead(q, target, backend.name))


def _triton_kv_dtype_arch(cfg: Config, target: Target, backend: str) -> Outcome:
    """TRITON_ATTN / TRITON_MLA's constructor: an FP8 KV cache needs SM89 (Triton's fp8e4nv), bfloat16 SM80."""
    if cfg.attention_backend is None and target.cc is not None:
        forced = gemma4_forcing(cfg, target)
        chosen = forced.backend if forced and forced.backend else _select(query(cfg, target), target).chosen
        if chosen != backend:
            return skipped(f"vLLM does not select {backend} for this config")
    elif cfg.attention_backend != backend:
        return skipped(f"applies to {backend}")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    kv = cfg.kv_cache_dtype
    suggested = "float16" if target.cc < (8, 0) else "bfloat16"
    if kv.startswith("fp8") and target.cc < (8, 9):
        return failed(
            f"{kv_found(cfg, target)} on {backend} ({gpu(target)})",
            "compute capability >= 8.9",
            [f"--kv-cache-dtype {suggested}"],
        )
    if kv == "bfloat16" and target.cc < (8, 0):
        return failed(
            f"--kv-cache-dtype bfloat16 on {backend} ({gpu(target)})",
            "compute capability >= 8.0",
            ["--kv-cache-dtype float16"],
        )
    return passed(f"{kv_found(cfg, target)} on {backend} ({gpu(target)})", "fp8 on SM89+, bfloat16 on SM80+")


@rule(
    id="vllm-triton-mla-fp8-kv-arch",
    title="TRITON_MLA reads an FP8 KV cache only on SM89 and newer",
    engine="vllm",
    versions="vllm>=0.26.0",
    verified=(
        "vllm 0.26.0-0.33.0 (bench/release_walk.py grep 'requires SM89+'): TritonMLAImpl.__init__ raises in every "
        "one (mla/triton_mla.py:196 in 0.26.0, :243 in 0.30.0, :212 in 0.33.0); no such check in 0.25.x"
    ),
    stage="init",
    prevents="FP8 KV cache is not supported by the Triton MLA backend on NVIDIA A100-SXM4-80GB (compute "
    "capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.",
    source=kb.src(f"{kb.BACKENDS_DIR}/mla/triton_mla.py", "TritonMLAImpl.__init__"),
    docs="""Checks TRITON_MLA with an FP8 KV cache on GPUs older than SM89 (A100, A10, V100, T4), and a
bfloat16 KV cache below SM80.

validate_configuration accepts fp8 for TRITON_MLA on every GPU, but TritonMLAImpl raises when the layer is
built: Triton's native FP8 type (fp8e4nv) needs SM89, and bfloat16 needs SM80. This happens after backend
selection, while the model is being constructed.""",
    fix_title="Use --kv-cache-dtype bfloat16 (float16 below SM80)",
)
def vllm_triton_mla_fp8_kv_arch(cfg, target):
    return _triton_kv_dtype_arch(cfg, target, "TRITON_MLA")


@rule(
    id="vllm-triton-fp8-kv-arch",
    title="TRITON_ATTN reads an FP8 KV cache only on SM89 and newer",
    engine="vllm",
    versions="vllm>=0.11.0",
    verified=(
        "vllm 0.11.0-0.15.x: no check, and the Triton kernel reads the cache as fp8e4nv "
        "(attention/ops/triton_unified_attention.py:17, float8_info = torch.finfo(current_platform.fp8_dtype()), "
        "in 0.11.0 and 0.12.0), which fails below SM89 at the first forward (vllm#26431 on 0.11.0, RTX 3090: "
        "'type fp8e4nv not supported in this architecture'); 0.11.0 picks TRITON_ATTN by itself for an FP8 KV "
        "cache off SM 9.0 (platforms/cuda.py:358-362). 0.10.x sent FP8 KV below SM 9.0 to FLASH_ATTN or V0. "
        "vllm 0.24.0-0.33.0 (bench/release_walk.py grep 'requires SM89+'): TritonAttentionImpl.__init__ raises "
        "(triton_attn.py:480 in 0.24.0, :530 in 0.26.0, :523 in 0.33.0). vllm 0.16.0-0.23.x accept fp8 for "
        "TRITON_ATTN on every GPU and the Triton kernel fails to compile fp8e4nv below SM89 at the first forward "
        "(vllm-project/vllm PR #35720, reported on 0.16.0)"
    ),
    stage="init",
    prevents="FP8 KV cache is not supported by the Triton attention backend on NVIDIA A100-SXM4-80GB (compute "
    "capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.",
    source=kb.src(f"{kb.BACKENDS_DIR}/triton_attn.py", "TritonAttentionImpl.__init__"),
    references=("https://github.com/vllm-project/vllm/pull/35720",),
    docs="""Checks TRITON_ATTN with an FP8 KV cache on GPUs older than SM89 (A100, A10, V100, T4), and a
bfloat16 KV cache below SM80.

validate_configuration accepts fp8 for TRITON_ATTN on every GPU. From vLLM 0.24.0 TritonAttentionImpl
raises when the layer is built (triton_attn.py:510-533 in 0.33.0): Triton's native FP8 type (fp8e4nv)
needs SM89, and bfloat16 needs SM80. Before that (0.16.0, PR #35720) the same config crashed at the first
forward, when Triton compiled the FP8 kernel.""",
    fix_title="Use --kv-cache-dtype bfloat16 (float16 below SM80)",
)
def vllm_triton_fp8_kv_arch(cfg, target):
    return _triton_kv_dtype_arch(cfg, target, "TRITON_ATTN")


# --- no backend named ----------------------------------------------------------------------------------------


@rule(
    id="vllm-auto-select",
    title="vLLM finds a valid attention backend by itself",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    verified=(
        "vllm 0.11.1rc7-0.33.0 (0.11.1rc7: the first build with validate_configuration), release by release: the priority list is each wheel's platforms/cuda.py "
        "_get_backend_priorities (bench/vllm_priorities.py runs the function of the 0.11.2-0.33.0 wheels: 6144 "
        "lists, none differ from vllm_backends.priorities), validated with each range's reasons (RELEASES) and "
        "the backends' older values (CHANGES); the 'No valid attention backend found' raise is in "
        "get_attn_backend_cls of every wheel from 0.11.2 (cuda.py:412 in 0.11.2, :399 in 0.12.0, :339 in 0.13.0, "
        ":393 in 0.17.0, :333 in 0.20.0, :447 in 0.26.0); 0.11.1-0.17.x validate without the block size (the "
        "'--block-size precluded' warning is new in 0.18.0, cuda.py:308); check_and_update_config names the "
        "backend itself for dense MLA on SM10x in 0.13.0-0.17.x (vllm_backends.forced_mla) and for MLA on SM 10.0 "
        "in 0.11.1-0.12.x (rule vllm-cutlass-mla-forced judges that). "
        "Gemma-4 (rules/engines/vllm/gemma4.py): Gemma4Config.verify_and_update_config read in every wheel "
        "0.18.0-0.33.0 (model_executor/models/config.py:198 in 0.25.0-0.27.0, :199 in 0.28.0, :209 in 0.29.0-0.31.0, "
        ":229 in 0.32.0, :301 in 0.33.0): TRITON_ATTN or FA4 forced before selection; every layer's head size "
        "(head_dim, global_head_dim) is then validated (gemma4.py Gemma4Attention)"
    ),
    stage="startup",
    prevents=kb.NONE_VALID.format(config="AttentionSelectorConfig(…)", reasons="{FLASH_ATTN: […], …}"),
    source=kb.SELECT_SOURCE + "; " + kb.PRIORITY_SOURCE,
    docs="""With no --attention-backend, runs vLLM's CUDA priority list for the model on this GPU and
reports the backend vLLM would pick, or that none is valid.

Non-MLA models: FLASHINFER first on SM10x, FLASH_ATTN first elsewhere, then TRITON_ATTN, FLEX_ATTENTION.
MLA models: FLASHINFER_MLA, TOKENSPEED_MLA, CUTLASS_MLA first on SM10x; FLASH_ATTN_MLA, FLASHMLA on SM90;
TRITON_MLA on SM12x and elsewhere. vLLM validates each in order and takes the first valid one; when none is
valid it raises "No valid attention backend found for cuda with …". A --block-size that rules out
higher-priority backends is warned about ("--block-size N precluded higher-priority backend(s) …") from
0.18.0; before it the selection ignores the block size. The list is the target release's own (TOKENSPEED_MLA from
0.21, TURBOQUANT from 0.20, CUTLASS_MLA first on SM10x until 0.14, ...). vLLM 0.13-0.17 skip the list for a
dense MLA model on SM10x: they name CUTLASS_MLA (0.13-0.14) or, for qk_nope_head_dim 128, FLASHINFER_MLA
(0.15-0.17) themselves, and a refusal reads "Selected backend … is not valid for this configuration".""",
    fix_title="Change what the reasons name (dtype, KV dtype, block size), or run on a GPU a backend supports",
    references=(DOCS_URL,),
)
def vllm_auto_select(cfg, target):
    if cfg.attention_backend is not None:
        return skipped("a backend is named")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    if cfg.model is None:
        return skipped("needs the model (--model or `vllm serve MODEL`) to run vLLM's selection")
    queries = layer_queries(cfg, target)
    if any(q.head_size is None for q in queries):
        return unknown("the model's head size could not be read from its config")
    release = _release(target)
    if (
        queries[0].use_mla
        and target.cc == (10, 0)
        and release is not None
        and Version(release) < Version(kb.FLAG_SINCE)
    ):
        return skipped(f"vllm {release} forces CUTLASS_MLA for MLA on {gpu(target)} (rule vllm-cutlass-mla-forced)")
    forced = gemma4_forcing(cfg, target)
    if forced is not None and forced.backend is not None:
        return _gemma4_forced_backend(cfg, forced, queries, target)
    said = f"{forced.said}; " if forced is not None else ""
    selections = [(q, _select(q, target)) for q in queries]
    every_layer = len(selections) > 1

    def layer(q: kb.VllmQuery) -> str:
        return f" for the head-size-{q.head_size} layers" if every_layer else ""

    def tried(selection: kb.Selection) -> str:
        return "; ".join(f"{name}: {', '.join(reasons)}" for name, reasons in selection.rejected.items())

    q, selection = selections[0]
    if selection.forced:  # 0.13-0.17: check_and_update_config names the backend for dense MLA on SM10x
        found = f"{selection.forced}, which vllm {release} names itself for dense MLA on {gpu(target)}"
        if selection.chosen is None:
            fix = [_use_backend(name, target) for name in _valid_named(q, target)][:1]
            return failed(
                f"{found}: {tried(selection)}",
                "a backend named that serves the model",
                fix or (kv_unquantised_fix(cfg, target, q.dtype) if kb.is_quantised_kv(q.kv_dtype) else []),
                reason=f"Selected backend AttentionBackendEnum.{selection.forced} is not valid for this configuration. "
                f"Reason: {list(selection.rejected[selection.forced])}",
            )
        return passed(found, "a valid backend")
    for q, selection in selections:
        if selection.chosen is not None:
            continue
        if selection.unmodelled:
            return unknown(
                f"{said}no modelled backend is valid{layer(q)} ({tried(selection)}); not modelled: "
                f"{', '.join(selection.unmodelled)}"
            )
        unquantised = kv_unquantised_fix(cfg, target, q.dtype) if kb.is_quantised_kv(q.kv_dtype) else []
        # offered only where the list then finds a backend (0.14.0's TRITON_MLA takes "auto" alone)
        fix = [f for f in unquantised if _select(replace(q, kv_dtype=f.split()[-1]), target).chosen]
        if cfg.page_size is not None:
            fix.append("drop --block-size")
        kv = f", {kv_found(cfg, target)}" if kv_from_checkpoint(cfg, target) else ""
        return failed(
            f"{said}no valid backend{layer(q)} on {gpu(target)}{kv} ({tried(selection)})",
            "one valid backend in vLLM's priority list" + (" for every layer" if every_layer else ""),
            fix,
        )
    blocked = sorted(
        {
            name
            for _, selection in selections
            for name, reasons in selection.rejected.items()
            if reasons == (kb.R_BLOCK_SIZE,)
        }
    )
    picks = {selection.chosen for _, selection in selections}
    chosen = (
        str(picks.pop())
        + (f" for every layer (head sizes {', '.join(str(q.head_size) for q in queries)})" if every_layer else "")
        if len(picks) == 1
        else ", ".join(f"{selection.chosen}{layer(q)}" for q, selection in selections)
    )
    if blocked:
        return warned(
            f"--block-size {cfg.page_size}: vLLM picks {chosen}",
            f"a block size {', '.join(blocked)} accept",
            ["drop --block-size"],
            reason=f"--block-size {cfg.page_size} precluded higher-priority backend(s) {', '.join(blocked)}",
        )
    passed_over = "; ".join(t for t in dict.fromkeys(tried(selection) for _, selection in selections) if t)
    return passed(
        f"{said}vLLM selects {chosen} on {gpu(target)}" + (f" (skipped: {passed_over})" if passed_over else ""),
        "a valid backend" + (" for every layer" if every_layer else ""),
    )


def _gemma4_forced_backend(
    cfg: Config, forced: kb_gemma4.Gemma4Forcing, queries: tuple[kb.VllmQuery, ...], target: Target
) -> Outcome:
    """Gemma4Config named the backend: vLLM validates it for each layer as if it had been named (get_attn_backend_cls
    raises "Selected backend … is not valid for this configuration")."""
    assert forced.backend is not None, "called for a forced backend"
    backend = kb.backend_at(forced.backend, _release(target))
    assert backend is not None, "TRITON_ATTN is in every release Gemma4Config forces it in"
    for q in queries:
        rejected = rejections(backend, q, target)
        if rejected:
            reasons = [r.text for r in rejected.values()]
            return failed(
                f"{forced.said}; {backend.name} on {gpu(target)} for the head-size-{q.head_size} layers: "
                f"{', '.join(reasons)}",
                f"a configuration {backend.name} takes",
                kv_unquantised_fix(cfg, target, q.dtype) if "kv_cache_dtype" in rejected else [],
                reason=f"Selected backend {backend.name} is not valid for this configuration. Reason: {reasons}",
            )
    return passed(f"{forced.said} on {gpu(target)}", "a valid backend for every layer")


@rule(
    id="vllm-tp-heads",
    title="vLLM: attention heads split evenly over tensor-parallel ranks",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.13.0 read: ModelConfig.verify_with_parallel_config raises it (config.py:1210 in 0.10.0, "
        "config/__init__.py:1307 in 0.10.1.1, :1357 in 0.10.2, config/model.py:1051 in 0.11.0, :1153 in 0.11.2, :1146 "
        "in 0.12.0, :1036 in 0.13.0). "
        "vllm>=0.13.0: the upstream message is in every vllm release read from 0.10.2 to 0.33.0 (0.10.2: "
        "vllm/config/__init__.py; bench/release_walk.py prevents). The range's start was set from the earlier "
        "reading and the condition was not re-read release by release"
    ),
    needs_model=True,
    stage="startup",
    prevents="Total number of attention heads ({total_num_attention_heads}) must be divisible by tensor parallel "
    "size ({tensor_parallel_size}).",
    source="vllm-project/vllm: vllm/config/model.py, ModelConfig.verify_with_parallel_config",
    docs="""Checks that the model's attention-head count is divisible by `--tensor-parallel-size`.

vLLM checks it when it builds its config, before any weight loads, and refuses to start otherwise (Qwen2.5-7B's
28 heads at `--tensor-parallel-size 8`). Data parallelism replicates the whole model, so only TP counts.""",
    fix_title="Use a --tensor-parallel-size that divides the head count",
)
def vllm_tp_heads(cfg, target):
    heads = cfg.model.num_attention_heads
    if not heads:
        return skipped("the model's config gives no attention-head count")
    found = f"{heads} attention heads at --tensor-parallel-size {cfg.tp_size}"
    if heads % cfg.tp_size == 0:
        return passed(found, "the head count divisible by the TP size")
    sizes = [t for t in (1, 2, 4, 8, 16, 32) if t < cfg.tp_size and heads % t == 0]
    return failed(found, "the head count divisible by the TP size", [f"--tensor-parallel-size {sizes[-1]}"])


@rule(
    id="vllm-float-kv-dtype",
    title="A float16/bfloat16 KV cache matches the model dtype",
    engine="vllm",
    versions="vllm>=0.33.0",
    verified=(
        "vllm 0.33.0: VllmConfig._reject_mismatched_float_kv_cache (config/vllm.py:1492-1508, called at :1540); "
        "grep '_reject_mismatched_float_kv_cache' finds nothing in config/vllm.py of 0.11.1-0.32.0 "
        "(the extracted wheels of bench/release_walk.py)"
    ),
    needs_gpu=True,
    stage="startup",
    prevents='kv_cache_dtype="{cache_dtype}" is incompatible with dtype="{model_dtype}". Please set '
    "`--kv-cache-dtype` to `auto` or `{model_dtype}`.",
    source="vllm-project/vllm@v0.33.0: vllm/config/vllm.py:1492-1508, VllmConfig._reject_mismatched_float_kv_cache "
    "(called from VllmConfig.__post_init__, :1540)",
    docs="""Checks that an explicit `--kv-cache-dtype float16` or `bfloat16` is the dtype the model runs in.

vLLM 0.33.0 builds its config with VllmConfig.__post_init__, which refuses an unquantised KV dtype other
than the model's (vllm/config/vllm.py:1492-1508): `--kv-cache-dtype bfloat16` with `--dtype float16`, or
with a bfloat16 checkpoint on a GPU below SM80 (vLLM runs it in float16, or float32 for Gemma 2/3). The
model dtype is vLLM's resolution (rule vllm-bf16-arch). Not in vllm 0.32.0 or older (config/vllm.py of
0.11.1-0.32.0 has no such check); found by bench/vllm_oracle_diff.py.""",
    fix_title="Use --kv-cache-dtype auto (or the model's dtype)",
)
def vllm_float_kv_dtype(cfg, target):
    kv = cfg.kv_cache_dtype
    if kv not in ("float16", "bfloat16"):
        return skipped("applies to --kv-cache-dtype float16 / bfloat16")
    model_dtype = _model_dtype(cfg, target.cc)
    if model_dtype is None:
        return unknown("the model's dtype could not be read from its config")
    found = f"--kv-cache-dtype {kv} with the model in {model_dtype} on {gpu(target)}"
    if model_dtype == kv:
        return passed(found, "the model's dtype")
    required = f"auto or {model_dtype}" if model_dtype in ("float16", "bfloat16") else "auto"
    return failed(found, required, ["--kv-cache-dtype auto"])


@rule(
    id="vllm-inkling-paged-kv",
    title="vLLM's Inkling attention pages its KV cache, which its FA4 kernel cannot read on SM8x/SM12x",
    engine="vllm",
    versions="vllm>=0.26.0,<0.28.0",
    verified=(
        "vllm 0.26.0, 0.27.0 and 0.27.1 wheels: Inkling registered from 0.26.0 (model_executor/models/"
        "registry.py:162-165; not in 0.25.1); fa4_rel_attention.py _use_sheared_bias is major in (10, 11) and "
        "inkling_fa4_rel_attention passes page_table=block_table (0.26.0 :152, 0.27.0/0.27.1 :159); the "
        "vendored FA4 asserts page_table is None on SM12x (vllm_flash_attn/cute/interface.py:1091 in 0.26.0, "
        ":1101 in 0.27.0/0.27.1) and SM8x (:942 in 0.26.0, :952 in 0.27.0/0.27.1). 0.28.0 has a new SM120 "
        "forward without that assert (not judged)"
    ),
    needs_model=True,
    needs_gpu=True,
    stage="runtime",
    prevents="Paged KV not supported on SM 12.0 in this PR",
    source=kb.INKLING_SOURCE + "; vllm/vllm_flash_attn/cute/interface.py, _flash_attn_fwd",
    references=("https://github.com/vllm-project/vllm/issues/51405",),
    docs="""Checks that an Inkling model (InklingForConditionalGeneration / InklingForCausalLM) is served by
vLLM 0.26-0.27 on a GPU whose Inkling attention kernel reads a paged KV cache: SM90, SM100, SM110.

Inkling brings its own relative attention, whatever --attention-backend names: on SM10x/SM11x the bundled
tml_fa4 with a sheared bias, elsewhere vLLM's vendored FA4 with a score_mod, and always with the paged KV
cache's block table. The vendored FA4 has no paged KV on SM12x ("Paged KV not supported on SM 12.0 in this
PR") or SM8x ("paged KV not supported on SM 8.0"), so on an RTX 50xx / RTX PRO 6000 / GB10 or an A100 the
server dies in its first forward (the start-up profile run). vLLM 0.28.0 replaces the SM120 forward.""",
    fix_title="Serve Inkling on SM90/SM100 with vLLM 0.26-0.27, or use another engine release",
)
def vllm_inkling_paged_kv(cfg, target):
    if cfg.model.architecture not in kb.INKLING_ARCHITECTURES:
        return skipped("applies to Inkling models")
    found = f"Inkling on {gpu(target)}"
    required = "SM90, SM100 or SM110 (a kernel that reads the paged KV cache)"
    if target.major in kb.INKLING_PAGED_KV_MAJORS:
        return passed(found, required)
    return failed(found, required, [])


@rule(
    id="vllm-flex-softcap",
    title="FLEX_ATTENTION cannot serve a model with attention logit soft-capping",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.12.0 too: the same raise (flex_attention.py:368 in 0.10.0, :653 in 0.10.2, :693 in 0.11.0, "
        ":725 in 0.11.2, :750 in 0.12.0); 0.10.0-0.11.0 pick FLEX_ATTENTION by themselves below SM80 "
        "(vllm_backends._legacy_select). "
        "vllm 0.13.0-0.33.0: FlexAttentionImpl.__init__ raises 'FlexAttention does not support logits soft cap "
        "yet.' (flex_attention.py:812 in 0.13.0, :808 in 0.16.0, :960 in 0.20.0, :1060 in 0.24.0, :1209 in "
        "0.26.0, :1222 in 0.30.0, :1188 in 0.33.0; the releases between them not read)"
    ),
    needs_model=True,
    stage="init",
    prevents="FlexAttention does not support logits soft cap yet.",
    source=kb.src(f"{kb.BACKENDS_DIR}/flex_attention.py", "FlexAttentionImpl.__init__"),
    docs="""Checks that a model whose attention logits are soft-capped (Gemma 2's attn_logit_softcapping) is not
served by FLEX_ATTENTION, named or picked by vLLM's priority list.

validate_configuration accepts the combination; FlexAttentionImpl.__init__ raises NotImplementedError when
the layer is built, before the weights load (flex_attention.py:1185-1189 in vllm 0.33.0; the same raise at
:812 in 0.13.0, :808 in 0.16.0, :960 in 0.20.0, :1060 in 0.24.0, :1209 in 0.26.0, :1222 in 0.30.0 — the
wheels read). Found by bench/vllm_oracle_diff.py (gemma-2-9b, FLEX_ATTENTION).""",
    fix_title="Use FLASH_ATTN, FLASHINFER or TRITON_ATTN (they take a soft cap)",
)
def vllm_flex_softcap(cfg, target):
    off = _flex_not_used(cfg, target)
    if off is not None:
        return off
    if "softcap" not in cfg.features:
        return passed("FLEX_ATTENTION, no logit soft cap", "no logit soft cap")
    return failed(
        f"FLEX_ATTENTION with the model's logit soft cap ({cfg.model.softcap})",
        "no logit soft cap, or another backend",
        [_use_backend("TRITON_ATTN", target)],
    )


# --- releases before 0.13.0 ------------------------------------------------------------------------------------


@rule(
    id="vllm-cutlass-mla-forced",
    title="vLLM 0.11-0.12 forces CUTLASS_MLA for an MLA model on SM 10.0",
    engine="vllm",
    versions="vllm>=0.11.1rc7,<0.13.0",
    verified=(
        "vllm 0.11.1rc7-0.12.x: CudaPlatformBase.check_and_update_config sets VLLM_ATTENTION_BACKEND="
        "'CUTLASS_MLA' for an MLA model on SM 10.0 when no backend is named (platforms/cuda.py:184-190 in "
        "0.12.0, :186-192 in 0.11.1 and 0.11.2), and get_attn_backend_cls then validates it as a named "
        "backend (:342-362 in 0.12.0); 0.13.0 skips it for sparse models (:186, 'unless sparse, i.e. "
        "DSv3.2'). 0.10.2-0.11.0 force it too (:154-159, :145-150) but validate nothing: not judged there"
    ),
    stage="startup",
    prevents="Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: "
    "['kv_cache_dtype not supported', 'sparse not supported']",
    source="vllm-project/vllm@v0.12.0: vllm/platforms/cuda.py, CudaPlatformBase.check_and_update_config (:182-190) "
    "and get_attn_backend_cls (:342-362); fixed for sparse models by vllm PR #30195",
    references=("https://github.com/vllm-project/vllm/pull/30195",),
    docs="""Checks, on vLLM 0.11.1-0.12.x with no backend named, that CUTLASS_MLA can serve an MLA model on an SM
10.0 GPU (B200, GB200), since vLLM picks it without looking further.

check_and_update_config sets VLLM_ATTENTION_BACKEND=CUTLASS_MLA for every MLA model on SM 10.0 and forces
the block size to 128; the selector then validates it as if the user had named it. CUTLASS_MLA is dense:
DeepSeek-V3.2's sparse attention fails with "Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid
for this configuration. Reason: [... 'sparse not supported']" instead of falling back to FLASHMLA_SPARSE
(vllm PR #30195, in 0.13.0).""",
    fix_title="Name the backend vLLM's priority list would pick (VLLM_ATTENTION_BACKEND=FLASHMLA_SPARSE for "
    "DeepSeek-V3.2), or upgrade to vLLM 0.13",
)
def vllm_cutlass_mla_forced(cfg, target):
    if cfg.attention_backend is not None:
        return skipped("a backend is named")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    if not _uses_mla(cfg):
        return skipped("vLLM does not run this model with MLA")
    if target.cc != (10, 0):
        return skipped(f"vLLM forces CUTLASS_MLA on SM 10.0 only, not on {gpu(target)}")
    release = _release(target)
    q = replace(query(cfg, target), block_size=None)  # validated without the block size (cuda.py:349 in 0.12.0)
    backend = kb.backend_at("CUTLASS_MLA", release)
    assert backend is not None, "CUTLASS_MLA is in every release of this range"
    reasons = kb.validate(backend, q, kb.release_for(release))
    required = "an MLA model CUTLASS_MLA serves, or a backend named"
    if not reasons:
        return passed(f"CUTLASS_MLA (forced on {gpu(target)})", required)
    return failed(
        f"CUTLASS_MLA, which vllm {release} forces for MLA on {gpu(target)}: {', '.join(reasons)}",
        required,
        _instead(q, target, "CUTLASS_MLA"),
        reason=f"Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: "
        f"{reasons}",
    )


@rule(
    id="vllm-flex-sliding-window",
    title="FLEX_ATTENTION in vLLM 0.10 cannot serve a sliding-window model",
    engine="vllm",
    versions="vllm>=0.10.0,<0.11.0",
    verified=(
        "vllm 0.10.0-0.10.x: FlexAttentionImpl.__init__ raises 'FlexAttention does not support sliding window "
        "yet.' (flex_attention.py:361 in 0.10.0, :392 in 0.10.1.1, :646 in 0.10.2); grep finds it in no "
        "flex_attention.py of the 0.11.0-0.33.0 wheels"
    ),
    needs_model=True,
    stage="init",
    prevents="FlexAttention does not support sliding window yet.",
    source="vllm-project/vllm@v0.10.2: vllm/v1/attention/backends/flex_attention.py, FlexAttentionImpl.__init__ "
    "(:644-646); " + kb.LEGACY_SELECT_SOURCE,
    references=("https://github.com/vllm-project/vllm/issues/24358",),
    docs="""Checks that a model with sliding-window layers (gpt-oss, Mistral, Gemma 2/3) is not served by
FLEX_ATTENTION on vLLM 0.10, named or picked by vLLM's default.

vLLM 0.10.x picks FlexAttention for every model on GPUs below SM80 (V100, T4, RTX 20xx), and on newer GPUs
where FLASH_ATTN does not take the head size or dtype; FlexAttentionImpl raises NotImplementedError for a
sliding window when the layer is built, before the weights load (vllm#24358: gpt-oss-20b on an RTX 2080).
vLLM 0.11.0 implements sliding windows in FlexAttention.""",
    fix_title="Upgrade to vLLM 0.11, or name TRITON_ATTN_VLLM_V1",
)
def vllm_flex_sliding_window(cfg, target):
    off = _flex_not_used(cfg, target)
    if off is not None:
        return off
    if "sliding_window" not in cfg.features:
        return passed("FLEX_ATTENTION, no sliding window", "no sliding-window layers")
    return failed(
        f"FLEX_ATTENTION with the model's sliding-window layers on vllm {_release(target)}",
        "no sliding window, or another backend",
        [f"{kb.ENV_BACKEND}=TRITON_ATTN_VLLM_V1"],
    )


@rule(
    id="vllm-sinks-unvalidated",
    title="vLLM 0.10-0.11.0: the named backend takes the model's attention sinks",
    engine="vllm",
    versions="vllm>=0.10.1,<0.11.1rc7",
    verified=(
        "vllm 0.10.1-0.11.0 validate no named backend (platforms/cuda.py get_attn_backend_cls returns it as "
        "asked); FlashAttentionImpl.__init__ asserts 'Sinks are only supported in FlashAttention 3' "
        "(v1/attention/backends/flash_attn.py:423-425 in 0.10.1.1, :415-417 in 0.10.2 and 0.11.0), FA3 being "
        "the version on 9.x only (attention/utils/fa_utils.py:36-37); FlashInferMetadataBuilder raises "
        "'FlashInfer backend currently does not support attention sinks' off SM 10.0 with TRT-LLM "
        "(flashinfer.py:301-305 in 0.10.2, :321-325 in 0.11.0; 0.10.1.1 has no such check: not judged); "
        "TRITON_ATTN takes sinks. 0.10.0 has no sink models (gpt-oss support is 0.10.1); from 0.11.1rc7 "
        "validate_configuration refuses these (rule vllm-sinks)"
    ),
    stage="init",
    prevents="AssertionError: Sinks are only supported in FlashAttention 3",
    source="vllm-project/vllm@v0.11.0: vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl.__init__ "
    "(:415-417); vllm/v1/attention/backends/flashinfer.py, FlashInferMetadataBuilder.__init__ (:321-325)",
    references=("https://github.com/vllm-project/vllm/issues/22331",),
    docs="""Checks, on vLLM 0.10.1-0.11.0, that a backend named for a model with learnable attention sinks
(gpt-oss) serves sinks on this GPU: FLASH_ATTN only where FlashAttention 3 runs (SM 9.x), FLASHINFER only
through TRT-LLM on SM 10.0 (from 0.10.2), TRITON_ATTN everywhere.

These releases validate no named backend at start-up; the layer's constructor fails instead ("Sinks are
only supported in FlashAttention 3", vllm#22331 on an RTX 4090), before the weights load. With no backend
named they pick TRITON_ATTN for a sink model off SM 9.0 by themselves. From 0.11.1 the same limits are
validate_configuration's "sink setting not supported" (rule vllm-sinks).""",
    fix_title="Name TRITON_ATTN (VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1 in 0.10.x, TRITON_ATTN in 0.11.0), or drop "
    "VLLM_ATTENTION_BACKEND",
)
def vllm_sinks_unvalidated(cfg, target):
    if cfg.attention_backend is None:
        return skipped("no backend named: these releases send a sink model to TRITON_ATTN off SM 9.0")
    if "sinks" not in cfg.features:
        return skipped("the model has no attention sinks")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    release = _release(target)
    name = cfg.attention_backend
    # TRITON_ATTN_VLLM_V1 (0.10.x): TRITON_ATTN; FLASH_ATTN_VLLM_V1 / FLASHINFER_VLLM_V1 are no names of the V1 chain,
    # so attn_preflight.rules.engines.sglang.resolve has already replaced them by the default that runs (vllm-named-backend-runs)
    backend = name.removesuffix("_VLLM_V1")
    if backend == "FLASH_ATTN":
        takes, required = target.cc[0] == 9, "FlashAttention 3 (SM 9.x)"
    elif backend == "FLASHINFER" and Version(release) >= Version("0.10.2"):
        takes, required = target.cc == (10, 0), "TRT-LLM attention (SM 10.0)"
    elif backend == "TRITON_ATTN":
        takes, required = True, "a backend with sinks"
    else:
        return skipped(f"the sink support of {name} in vllm {release} is not read")
    found = f"a model with attention sinks on {name} ({gpu(target)})"
    if takes:
        return passed(found, required)
    triton = kb_legacy.spelling("TRITON_ATTN", release)  # TRITON_ATTN_VLLM_V1 in 0.10.x, refused by 0.11.0
    return failed(found, required, [f"{kb.ENV_BACKEND}={triton}", f"unset {kb.ENV_BACKEND}"])


@rule(
    id="vllm-named-backend-runs",
    title="vLLM 0.10-0.11.0 runs the backend VLLM_ATTENTION_BACKEND names",
    engine="vllm",
    versions="vllm>=0.10.0,<0.11.1rc7",
    verified=(
        "vllm 0.10.0, 0.10.1.1, 0.10.2 and 0.11.0, each wheel read (rules/engines/vllm/legacy.py LEGACY_RELEASES, "
        "file:line per release): the V1_BACKENDS list of EngineArgs._is_v1_supported_oracle (engine/arg_utils.py:1404 "
        "in 0.10.0, :1456 in 0.10.1.1, :1502 in 0.10.2, :1491 in 0.11.0), the MLA and non-MLA if/elif chains of "
        "CudaPlatformBase.get_attn_backend_cls (platforms/cuda.py:201-260 in 0.10.0, :226-295 in 0.10.1.1, :236-329 "
        "in 0.10.2, :252-332 in 0.11.0) and their V0 chain (:314-341, :352-379, :386-403; 0.11.0 asserts "
        "VLLM_USE_V1 in entrypoints/openai/api_server.py:209); the non-MLA Impls' __init__ take no **kwargs but "
        "FlexAttentionImpl from 0.10.2 (v1/attention/backends/*.py, attention/backends/*.py). From 0.11.1rc7 a "
        "named backend is validated (validate_configuration: rules vllm-mla-model-backend, "
        "vllm-non-mla-model-backend)"
    ),
    needs_model=True,
    stage="startup",
    prevents=kb_legacy.MLA_KWARGS.format(impl="FlashAttentionImpl")
    + "; "
    + kb_legacy.V0_FALLBACK.format(name="XFORMERS")
    + "; "
    + kb_legacy.FA_FP8_KV_REFUSED,
    source="vllm-project/vllm@v0.10.2: vllm/platforms/cuda.py, CudaPlatformBase.get_attn_backend_cls (:226-403); "
    "vllm/engine/arg_utils.py, EngineArgs._is_v1_supported_oracle (:1502-1525) and _raise_or_fallback (:1792-1800)",
    references=("https://github.com/vllm-project/vllm/pull/13092",),
    docs="""Checks, on vLLM 0.10.0-0.11.0, what the backend named by VLLM_ATTENTION_BACKEND really becomes for
the model: these releases validate no named backend.

get_attn_backend_cls picks from two if/elif chains, one for MLA models (DeepSeek, Kimi) and one for the rest.
A name the chain does not handle falls through to the default without a word (FLASHMLA for Llama runs
FLASH_ATTN; in 0.10.0-0.10.1 any name but CUTLASS MLA runs TRITON_MLA for an MLA model below block size 64):
a warning naming what runs. An MLA model whose name falls through the MLA chain gets a non-MLA backend, whose
Impl refuses the MLA layer's arguments ("FlashAttentionImpl.__init__() got an unexpected keyword argument
'q_lora_rank'"). In 0.10.x a name outside the V1 engine's list (XFORMERS, ROCM_FLASH, ...) falls back to the V0
engine with a warning, or fails with VLLM_USE_V1=1; 0.11.0 has no V0 engine and stops. A name the release
does not have at all is rule vllm-backend-name's.""",
    fix_title="Unset VLLM_ATTENTION_BACKEND, or name the backend that release dispatches for the model",
)
def vllm_named_backend_runs(cfg, target):
    asked = cfg.rewrites.get("attention_backend", cfg.attention_backend)
    if asked is None:
        return skipped("no backend named")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    release = _release(target)
    name = cfg.env.get(kb.ENV_BACKEND, asked)  # as typed: these releases compare names case-sensitively
    if kb_legacy.env_refusal(name, release):
        return skipped(f"{name} is not a backend of vllm {release} (rule vllm-backend-name)")
    q, use_v1 = query(cfg, target), cfg.env.get(kb_legacy.ENV_USE_V1)
    outcome = kb_legacy.named(name, q, release, use_v1)
    kind = "MLA" if q.use_mla else "not MLA"
    found = f"{kb.ENV_BACKEND}={name} for this model ({kind}) on {gpu(target)}"
    # VLLM_USE_V1=0 asks for the V0 engine: undoing that is the fix, not dropping the name
    unset = f"unset {kb_legacy.ENV_USE_V1 if kb_legacy.forced_v1(use_v1) is False else kb.ENV_BACKEND}"
    if outcome.error:
        when = "when the attention layers are built" if outcome.stage == "init" else "at start-up"
        required = f"a backend vllm {release} runs for the model"
        return failed(f"{found}: vLLM stops {when}", required, [unset], reason=outcome.error)
    if outcome.runs is None:
        return unknown(f"{found}: {outcome.note}")
    named_as = kb_legacy.spelling(outcome.runs, release)
    fix = [f"{kb.ENV_BACKEND}={named_as}"] if named_as else []
    if outcome.v0:
        return warned(
            f"{kb.ENV_BACKEND}={name}: vLLM {release} "
            + ("runs it" if outcome.as_named else f"ignores it and runs {outcome.runs}")
            + " on its V0 engine",
            "a backend the V1 engine takes",
            [unset],
            reason=outcome.fallback,
        )
    if not outcome.as_named:
        return warned(
            f"vLLM {release} ignores {kb.ENV_BACKEND}={name} for this model ({kind}) and runs {outcome.runs}",
            f"a name vLLM {release} dispatches for {'MLA' if q.use_mla else 'non-MLA'} models",
            [*fix, unset],
        )
    return passed(f"{found}: vLLM {release} runs {outcome.runs}", "a name the selection dispatches")


# TRT-LLM-gen's FMHA kernels take a KV page of at most 128 tokens: TllmGenFmhaKernel.hashID checks
# "Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128)" (NVIDIA/TensorRT-LLM fmhaKernels.h, the kernels
# FlashInfer's trtllm-gen decode launches).
TRTLLM_MAX_PAGE_TOKENS = 128
# vllm 0.10.2 utils/flashinfer.py supports_trtllm_attention (:160-176): set, the variable decides; "0" keeps
# FlashInfer's own kernels, which take any page size.
TRTLLM_ENV = "VLLM_USE_TRTLLM_ATTENTION"


def _gated_deltanet_attention_block_size(cfg: Config) -> Optional[int]:
    """The attention block size vLLM 0.10.2-0.11.0 sets for Qwen3-Next, so that one attention page holds a Gated
    DeltaNet state: 16 x ceil(state bytes / (16 x one token's K and V bytes)) (HybridAttentionMambaModelConfig,
    model_executor/models/config.py:358-389 in 0.10.2; the state shapes are Qwen3NextForCausalLM's
    get_mamba_state_shape_from_config, qwen3_next.py:1184-1200 -> layers/mamba/mamba_utils.py:177-202, both
    in the model dtype, mamba_utils.py:74-80)."""
    shape = cfg.model.shape if cfg.model else None
    if shape is None or not shape.linear_layers or not shape.linear_key_heads or not shape.linear_conv_kernel:
        return None
    # the cache dtype's element: the model's for "auto", one byte for an FP8 cache (STR_DTYPE_TO_TORCH_DTYPE)
    kv = cfg.kv_cache_dtype
    element = (
        shape.dtype_bytes if kv == "auto" else 2 if kv in ("float16", "bfloat16") else 1 if kv.startswith("fp8") else 0
    )
    if not element:
        return None
    tp = cfg.tp_size
    token = 2 * memory.kv_heads_per_rank(shape, tp) * shape.head_dim * element
    conv_dim = (
        2 * shape.linear_key_heads * shape.linear_key_head_dim + shape.linear_value_heads * shape.linear_value_head_dim
    )
    conv = conv_dim // tp * (shape.linear_conv_kernel - 1)
    temporal = shape.linear_value_heads // tp * shape.linear_key_head_dim * shape.linear_value_head_dim
    state = (conv + temporal) * shape.dtype_bytes
    return 16 * -(-state // (16 * token))


@rule(
    id="vllm-hybrid-flashinfer-page",
    title="vLLM 0.10.2-0.11.0: FlashInfer's TRT-LLM decode on SM 10.0 takes Qwen3-Next's attention pages",
    engine="vllm",
    versions="vllm>=0.10.2,<0.11.1rc7",
    verified=(
        "vllm 0.10.2-0.11.0: HybridAttentionMambaModelConfig sets the attention block size to 16 x ceil(mamba page / "
        "(16 x attention page per token)) (model_executor/models/config.py:381-389 in 0.10.2, the same formula in "
        "0.11.0; called for hybrid models from config/__init__.py:3695-3701 in 0.10.2), and FlashInfer on SM 10.0 "
        "decodes through TRT-LLM (utils/flashinfer.py:157-178 supports_trtllm_attention, is_device_capability(100)) "
        "with that page. From 0.11.1 FlashInferBackend splits a block into kernel blocks of 16, 32 or 64 "
        "(supported_kernel_block_sizes, flashinfer.py:281 in 0.11.1 and 0.11.2); its pre-releases before "
        "0.11.1rc7 were not read. Qwen3-Next is first in 0.10.2"
    ),
    needs_model=True,
    stage="runtime",
    prevents="RuntimeError: Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128), got headDimPerCtaV=256, "
    "headDimQk=256, headDimV=256, numTokensPerPage=544",
    source="vllm-project/vllm@v0.10.2: vllm/model_executor/models/config.py, "
    "HybridAttentionMambaModelConfig.verify_and_update_config (:327-414); vllm/utils/flashinfer.py, "
    "supports_trtllm_attention / use_trtllm_attention; the trtllm-gen FMHA page limit (NVIDIA/TensorRT-LLM "
    "fmhaKernels.h, TllmGenFmhaKernel.hashID)",
    references=("https://github.com/vllm-project/vllm/issues/25811",),
    docs="""Checks, on vLLM 0.10.2-0.11.0, that FLASHINFER on an SM 10.0 GPU (B200, GB200) is not given a
Qwen3-Next model, whose attention block size vLLM raises past what FlashInfer's TRT-LLM decode kernels take.

vLLM sizes a hybrid model's attention block so that one attention page holds a Gated DeltaNet state; for
Qwen3-Next-80B that is 544 tokens at TP 1 or 2 (272 at TP 4). On SM 10.0 FlashInfer decodes through TRT-LLM-gen,
whose kernels take at most 128 tokens per page, so the first decode fails with "Expect (32 <= headDim <= 2048)
&& (numTokensPerPage <= 128)" (vllm#25811); FLASHINFER is the default there (vLLM's own comment says FA does not
serve mamba layers yet, models/config.py:377-380). VLLM_USE_TRTLLM_ATTENTION=0 keeps FlashInfer's own kernels;
vLLM 0.11.1 splits the block into kernel blocks of at most 64 tokens.""",
    fix_title="Set VLLM_USE_TRTLLM_ATTENTION=0 (FlashInfer's own decode kernels), or upgrade to vLLM 0.11.1",
)
def vllm_hybrid_flashinfer_page(cfg, target):
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    if cfg.attention_backend is None:
        if _select(query(cfg, target), target).chosen != "FLASHINFER":
            return skipped("vLLM does not select FLASHINFER for this config")
    elif cfg.attention_backend != "FLASHINFER":
        return skipped("applies to FLASHINFER")
    if target.cc != (10, 0):
        return skipped(f"FlashInfer decodes through TRT-LLM on SM 10.0 only, not on {gpu(target)}")
    if cfg.env.get(TRTLLM_ENV) == "0":
        return passed(
            f"{TRTLLM_ENV}=0: FlashInfer's own decode kernels", "no TRT-LLM decode, or pages of <= 128 tokens"
        )
    if cfg.model.model_type != "qwen3_next":
        return skipped("applies to Qwen3-Next (the hybrid model whose state shapes are read)")
    block = _gated_deltanet_attention_block_size(cfg)
    if block is None:
        return unknown(
            f"the model's Gated DeltaNet dimensions or the KV dtype ({cfg.kv_cache_dtype}) could not be read"
        )
    found = f"attention blocks of {block} tokens (Qwen3-Next at TP {cfg.tp_size}) on FLASHINFER ({gpu(target)})"
    required = f"at most {TRTLLM_MAX_PAGE_TOKENS} tokens per page (TRT-LLM decode)"
    if block <= TRTLLM_MAX_PAGE_TOKENS:
        return passed(found, required)
    return failed(found, required, [f"{TRTLLM_ENV}=0"])


# --- what real models ask of a release: DSA backends per arch, FlexAttention block size, quantization --------


@rule(
    id="vllm-sparse-mla-arch",
    title="A DeepSeek sparse attention (DSA) model needs a GPU one of the release's sparse MLA backends runs on",
    engine="vllm",
    versions="vllm>=0.11.2",
    verified=(
        "vllm 0.11.2-0.33.0: the sparse MLA entries of platforms/cuda.py _get_backend_priorities and each sparse "
        "backend's supports_compute_capability, read in 0.11.2, 0.12.0, 0.13.0, 0.14.1, 0.16.0, 0.17.0, 0.19.1, "
        "0.20.0, 0.22.1, 0.23.0 (FLASHMLA_SPARSE majors 9/10, FLASHINFER_MLA_SPARSE 10: no SM12x branch) and "
        "0.24.0, 0.25.0, 0.26.0, 0.30.0, 0.33.0 (an SM12x branch with FLASHINFER_MLA_SPARSE_SM120, major 12); "
        "rules/engines/vllm/capabilities.py SPARSE_MLA_ARCHS"
    ),
    needs_gpu=True,
    needs_model=True,
    stage="startup",
    prevents=kb.NONE_VALID.format(
        config="AttentionSelectorConfig(head_size=576, use_mla=True, use_sparse=True)",
        reasons="{FLASHMLA_SPARSE: [compute capability not supported]}",
    ),
    source=kb.SPARSE_MLA_ARCHS_SOURCE + "; " + kb.VALIDATE_SOURCE + " (use_sparse != cls.is_sparse())",
    docs="""Checks that a model with DeepSeek sparse attention (an `index_topk` indexer: DeepSeek-V3.2(-Exp),
GLM-5/5.1) runs on a GPU where some sparse MLA backend of the target's vLLM release runs.

vLLM marks such layers sparse, and only a sparse MLA backend validates them ("sparse not supported" for the
dense ones). Through vLLM 0.23 the sparse backends were FLASHMLA_SPARSE (SM90, SM100) and, from 0.17,
FLASHINFER_MLA_SPARSE (SM100), so an SM12x GPU (RTX PRO 6000, RTX 5090, GB10 / DGX Spark) or anything below
SM90 gets "No valid attention backend found" when the layers are built (vllm#31480 on 0.13, vllm#45317 on
0.22). vLLM 0.24.0 added FLASHINFER_MLA_SPARSE_SM120 to the SM12x list.""",
    fix_title="Run on SM90/SM100, or upgrade to vllm >= 0.24.0 on SM12x (FLASHINFER_MLA_SPARSE_SM120)",
)
def vllm_sparse_mla_arch(cfg, target):
    if not cfg.model.dsa or not _uses_mla(cfg):
        return skipped("applies to models with DeepSeek sparse attention (index_topk) run as MLA")
    entry = kb.sparse_mla_archs(_release(target))
    need = "compute capability " + " or ".join(f"{m}.x" for m in sorted(entry.majors))
    if target.major in entry.majors:
        return passed(f"a DSA model on {gpu(target)}", need)
    newer = kb.SPARSE_MLA_ARCHS[-1]
    fix = [f"upgrade to vllm >= {newer.since}"] if target.major in newer.majors else ["run on an SM90 or SM100 GPU"]
    release = _release(target) or f"{kb.VLLM_VERSION} (newest read)"
    return failed(f"a DSA model on {gpu(target)} with vllm {release}", f"{need} ({entry.backends})", fix)


@rule(
    id="vllm-flex-block-size",
    title="FLEX_ATTENTION with a --block-size below 16 crashes in its Triton kernel (vllm < 0.21.0)",
    engine="vllm",
    versions="vllm>=0.15.0,<0.21.0",
    verified=(
        "vllm 0.15.0-0.20.2: flex_attention.py has no get_supported_kernel_block_sizes, so FLEX_ATTENTION takes "
        "the base [MultipleOf(1)] (v1/attention/backend.py:60-61 in 0.15.0, :64-65 in 0.19.1), read in 0.15.0, "
        "0.19.0, 0.19.1, 0.20.0, 0.20.2; from 0.21.0 it declares [MultipleOf(16)] (flex_attention.py:143-144, "
        "vllm PR #41363) and validate_configuration refuses it (rules vllm-block-size, vllm-auto-select)"
    ),
    needs_gpu=True,
    stage="runtime",
    reason="Before vllm 0.21.0 FlexAttention accepts any block size at start-up; below 16, the kernel's minimum, "
    "the first forward fails in torch.compile's Triton codegen (vllm#39807, vllm#41339). With no backend named, "
    "FLASH_ATTN, FLASHINFER and TRITON_ATTN refuse such a block size, so vLLM silently falls back to "
    "FLEX_ATTENTION.",
    source=kb.src(
        f"{kb.BACKENDS_DIR}/flex_attention.py", "FlexAttentionBackend (get_supported_kernel_block_sizes from 0.21.0)"
    )
    + "; "
    + kb.SELECT_SOURCE,
    docs="""Checks that FLEX_ATTENTION, named or reached by vLLM's fallback, is not given a `--block-size`
below 16 on vLLM releases before 0.21.0.

FlexAttentionBackend declared no kernel block sizes until vllm PR #41363 (released in 0.21.0), so it
inherited MultipleOf(1) and passed backend selection with `--block-size 8`; the crash came in the Triton
code generation of the first forward. Every other non-MLA CUDA backend takes only multiples of 16, so a
small block size also sends an unnamed config to FLEX_ATTENTION.""",
    fix_title="Drop --block-size (or use 16 or a multiple of 16)",
)
def vllm_flex_block_size(cfg, target):
    if cfg.page_size is None:
        return skipped("no --block-size given")
    if cfg.attention_backend is None:
        chosen = _select(query(cfg, target), target).chosen
        if chosen != "FLEX_ATTENTION":
            return skipped(f"vLLM selects {chosen or 'no modelled backend'}, not FLEX_ATTENTION")
        where = f"vLLM falls back to FLEX_ATTENTION for --block-size {cfg.page_size}"
    elif cfg.attention_backend != "FLEX_ATTENTION":
        return skipped("applies to FLEX_ATTENTION")
    else:
        where = f"FLEX_ATTENTION with --block-size {cfg.page_size}"
    if cfg.page_size >= 16:
        return passed(where, "a block size of at least 16")
    return failed(where, "a block size of at least 16 (FlexAttention's kernel minimum)", ["drop --block-size"])


@rule(
    id="vllm-quantization-arch",
    title="The checkpoint's quantization method runs on this GPU and in this model dtype",
    engine="vllm",
    versions="vllm>=0.10.1",
    verified=(
        "vllm 0.10.1-0.33.0: VllmConfig._get_quantization_config raises both messages (config/__init__.py:3455 "
        "in 0.10.1, :264 in 0.11.0; config/vllm.py:374 in 0.12.0, :393 in 0.13.0, :422 in 0.15.0, :513 in 0.17.0, :525 in 0.19.1, :940 in 0.33.0); each method's "
        "get_min_capability / get_supported_act_dtypes per range in rules/knowledge/vllm_quantization.py, read in "
        "0.10.1, 0.11.0, 0.12.0, 0.13.0, 0.14.1, 0.15.0, 0.17.0, 0.19.1 and 0.33.0 (a release in no range read is unknown)"
    ),
    needs_gpu=True,
    needs_model=True,
    stage="startup",
    prevents=kb_quant.MIN_CAPABILITY_MESSAGE.format(method="mxfp4", minimum=80, current=75),
    source=kb_quant.SOURCE["vllm"],
    docs="""Checks that the checkpoint's quantization method (config.json `quantization_config`, or
`--quantization`) accepts this GPU's compute capability and the model dtype vLLM runs in.

vLLM refuses, when it builds its config and before any weight loads, a GPU below the method's minimum
capability (gpt-oss's mxfp4 needs SM80, fp8 SM75 from vllm 0.14.1 and SM80 in 0.13, ModelOpt FP8 SM89
before 0.20 and SM80 in 0.33, ModelOpt NVFP4 SM75) and a model dtype the method cannot take ("torch.float16
is not supported for quantization method gpt_oss_mxfp4": mxfp4 runs in bfloat16 only).""",
    fix_title="Use a GPU of the method's minimum compute capability, or a dtype it supports (--dtype bfloat16)",
)
def vllm_quantization_arch(cfg, target):
    flag = cfg.flags.get("quantization")
    method = flag.lower() if isinstance(flag, str) else cfg.model.quant_method
    if method is None:
        return skipped("the checkpoint is not quantized")
    gate, known = kb_quant.gate_for("vllm", method, _release(target))
    if not known:
        return skipped(f"quantization method {method} is not modelled")
    if gate is None:
        return unknown(f"quantization method {method}: vllm {_release(target)} was not read")
    assert target.cc is not None, "needs_gpu"
    current = target.cc[0] * 10 + target.cc[1]
    if current < gate.min_capability:
        return failed(
            f"quantization {method} on {gpu(target)} (capability {current})",
            f"capability {gate.min_capability} or newer",
            [],
            reason=kb_quant.MIN_CAPABILITY_MESSAGE.format(method=method, minimum=gate.min_capability, current=current),
        )
    dtype = _model_dtype(cfg, target.cc)
    if dtype is None:
        return unknown("the model's dtype could not be read from its config")
    dtypes = ", ".join(sorted(gate.act_dtypes))
    if dtype not in gate.act_dtypes:
        fix = ["--dtype bfloat16"] if "bfloat16" in gate.act_dtypes and target.cc >= (8, 0) else []
        return failed(
            f"quantization {method} with the model in {dtype}",
            f"a dtype of {dtypes}",
            fix,
            reason=kb_quant.ACT_DTYPE_MESSAGE.format(dtype=f"torch.{dtype}", method=method, dtypes=dtypes),
        )
    return passed(f"quantization {method} on {gpu(target)} in {dtype}", f"capability >= {gate.min_capability}")
