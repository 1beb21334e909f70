"""vLLM: the attention backend the launch names (--attention-backend, or VLLM_ATTENTION_BACKEND before 0.13.0),
the platform it is built for, and, with none named, the backend vLLM's priority list picks (the validator's
reasons against a named backend are attn_preflight.rules.engines.vllm.reasons)."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from packaging.version import Version

from attn_preflight.rules.checks.common import gpu, kv_found, kv_from_checkpoint, kv_unquantised_fix
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, backend_option, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import changes
from attn_preflight.rules.engines.vllm import gemma4 as kb_gemma4
from attn_preflight.rules.engines.vllm import legacy as kb_legacy
from attn_preflight.rules.engines.vllm import select as vllm


@rule(
    id="vllm-backend-name",
    title="The vLLM attention backend name exists and can be used",
    engine="vllm",
    versions="vllm>=0.10.0",
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
    references=(vllm.DOCS_URL,),
)
def vllm_backend_name(cfg, target):
    name = cfg.rewrites.get("attention_backend", cfg.attention_backend)  # the name given, not what runs
    if name is None:
        return skipped("no backend named")
    release = vllm.release_of(target)
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
    stage="runtime",
    reason="ROCm, CPU and XPU backends are never in vLLM's CUDA priority list; named on an NVIDIA GPU they fail "
    "at import or kernel launch, after the weights load.",
    source=vllm.PRIORITY_SOURCE + "; " + kb.src(kb.REGISTRY, "AttentionBackendEnum"),
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
    stage="startup",
    prevents=kb.ENV_UNKNOWN_WARNING.format(env=kb.ENV_BACKEND),
    source=kb.ENV_SOURCE,
    docs="""Checks whether the VLLM_ATTENTION_BACKEND and VLLM_FLASH_ATTN_VERSION environment variables still
choose anything on the target's vLLM.

vLLM 0.13.0 added `--attention-backend` and `--attention-config.flash_attn_version` and deprecated the
variables ("Using VLLM_ATTENTION_BACKEND environment variable is deprecated and will be removed in v0.14.0
…"); vLLM 0.15.0 removed them (PR #32812). Since then they are ignored: vLLM only logs "Unknown vLLM
environment variable detected: VLLM_ATTENTION_BACKEND" (0.20 and later; 0.15-0.19 say nothing) and
selects its own backend, so the backend the launch line asks for is not the one that runs: attn-preflight
judges vLLM's own choice (the launch starts with it), and offers the name as a flag only where that works. On 0.13-0.14 the variable
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
    installed = vllm.installed(target)
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
        [*fix, " ".join(f"unset {name}" for name in sorted(env))],  # the flag only where it works (re-checked)
        reason="vLLM ignores the variables and selects its own backend, which the other rules judge",
    )


@rule(
    id="vllm-auto-select",
    title="vLLM finds a valid attention backend by itself",
    engine="vllm",
    versions="vllm>=0.11.1rc7",
    stage="startup",
    prevents=kb.NONE_VALID.format(config="AttentionSelectorConfig(…)", reasons="{FLASH_ATTN: […], …}"),
    source=kb.SELECT_SOURCE + "; " + vllm.PRIORITY_SOURCE,
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
    references=(vllm.DOCS_URL,),
)
def vllm_auto_select(cfg, target):
    if cfg.attention_backend is not None:
        return skipped("a backend is named")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    if cfg.model is None:
        return skipped("needs the model (--model or `vllm serve MODEL`) to run vLLM's selection")
    queries = vllm.layer_queries(cfg, target)
    if any(q.head_size is None for q in queries):
        return unknown("the model's head size could not be read from its config")
    release = vllm.release_of(target)
    if (
        queries[0].use_mla
        and target.cc == (10, 0)
        and release is not None
        and Version(release) < Version(kb.FLAG_SINCE)
    ):
        return skipped(f"vllm {release} forces CUTLASS_MLA for MLA on {gpu(target)} (rule vllm-cutlass-mla-forced)")
    forced = vllm.gemma4_forcing(cfg, target)
    if forced is not None and forced.backend is not None:
        return _gemma4_forced_backend(cfg, forced, queries, target)
    said = f"{forced.said}; " if forced is not None else ""
    selections = [(q, vllm.selected(q, target)) for q in queries]
    every_layer = len(selections) > 1

    def layer(q: kb.VllmQuery) -> str:
        return f" for the head-size-{q.head_size} layers" if every_layer else ""

    def tried(selection: vllm.Selection) -> str:
        return "; ".join(f"{name}: {', '.join(reasons)}" for name, reasons in selection.rejected.items())

    q, selection = selections[0]
    if selection.forced:  # 0.13-0.17: check_and_update_config names the backend for dense MLA on SM10x
        found = f"{selection.forced}, which vllm {release} names itself for dense MLA on {gpu(target)}"
        if selection.chosen is None:
            fix = [vllm.use_backend(name, target) for name in vllm.valid_named(q, target)][:1]
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
        fix = [f for f in unquantised if vllm.selected(replace(q, kv_dtype=f.split()[-1]), target).chosen]
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
    backend = changes.backend_at(forced.backend, vllm.release_of(target))
    assert backend is not None, "TRITON_ATTN is in every release Gemma4Config forces it in"
    for q in queries:
        rejected = vllm.rejections(backend, q, target)
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
