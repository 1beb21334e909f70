"""Small helpers shared by rule modules: how targets and configs are named in findings, which SGLang release
(and so which platform probes) a target is judged by, the health of its probed libraries, and the FlashInfer that
runs it."""

from typing import Callable, Mapping, NamedTuple, Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.constraints import ENV_TRUE
from attn_preflight.rules.core.engine import Outcome, failed, skipped, unknown
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import table_for
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang.capabilities import BackendInfo
from attn_preflight.rules.engines.sglang.resolve import attention_dp_size
from attn_preflight.rules.knowledge import NEWEST_KNOWN, checkpoint_kv
from attn_preflight.rules.knowledge import quantization as kb_quant


def sglang_release(target: Target) -> Version:
    """The target's SGLang release; the newest verified one when it is not known (--gpu, not installed)."""
    return backend_kb.release_of(target)


def vllm_release(target: Target) -> Version:
    """The target's vLLM release; the newest verified one when it is not known (--gpu, not installed)."""
    return Version(target.versions.get("vllm") or NEWEST_KNOWN["vllm"])


def declared(target: Target, backend: str) -> BackendInfo:
    """An SGLang backend's declaration (rules/engines/sglang/capabilities.py) as it holds in the target's release."""
    return target.sglang_backends[backend]


def blackwell_majors(target: Target) -> frozenset[int]:
    """Compute-capability majors SGLang's is_blackwell accepts in the target's release."""
    return backend_kb.blackwell_majors(backend_kb.release_of(target))


class Refused(NamedTuple):
    """A flag value the release's argparse refuses ("invalid choice"), and the valid choices nearest to it."""

    flag: str
    value: str
    closest: tuple[str, ...]


class ChoiceCheck(NamedTuple):
    release: str  # the release whose choices judged (rules/engines/sglang/choices.json)
    said: str  # how the finding says which table stood in: "" when the target's own release
    refused: list[Refused]


def choice_check(
    target: Target, given: Mapping[str, Optional[str]], usable=lambda value: True, family=lambda value: ""
) -> ChoiceCheck:
    """argparse's `choices` test of the target's SGLang release on the values `given` by flag (None: not given).
    `closest` holds up to three of the release's choices `usable` accepts, nearest first: those of the refused
    value's `family` before the rest, each group by spelling compared as lower-case (an 'eagle' is nearest
    'EAGLE')."""
    release, said = table_for(choices_kb.releases(), target.versions.get("sglang"))
    refused = []
    for flag, value in given.items():
        allowed = choices_kb.accepted(release, flag)
        if value is None or allowed is None or value in allowed:
            continue
        import difflib  # only for a refused value: its nearest choices

        by_lower = {choice.lower(): choice for choice in sorted(allowed) if usable(choice)}
        # its first 64 characters: difflib is quadratic in length, and no choice is that long
        spelled = difflib.get_close_matches(value.lower()[:64], by_lower, n=len(by_lower), cutoff=0)
        nearest = sorted((by_lower[n] for n in spelled), key=lambda choice: family(choice) != family(value))
        refused.append(Refused(flag, value, tuple(nearest[:3])))
    return ChoiceCheck(release, said, refused)


def gpu(target: Target) -> str:
    """'H100 (SM90)' or 'SM90' for findings."""
    return f"{target.gpu_name} ({target.sm})" if target.gpu_name and target.gpu_name != target.sm.lower() else target.sm


# The values SGLang's EnvBool reads as true (sglang/srt/environ.py EnvBool.parse; "false", "0", "no", "n" are
# false and anything else raises)
ENV_BOOL_TRUE = ENV_TRUE


def env_true(cfg, name: str) -> bool:
    """An SGLang boolean environment variable of the launch, as EnvBool reads it."""
    return (cfg.env.get(name) or "").strip().lower() in ENV_BOOL_TRUE


def cuda_version(text: Optional[str]) -> Optional[Version]:
    """A torch build's CUDA version ("12.8"), or None when it has none or it cannot be read."""
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def phases_using(config: Config, backend: str) -> str:
    """'--attention-backend fa4', or the phase flags that name it."""
    if config.prefill_backend == backend and config.decode_backend == backend:
        return f"attention backend {backend}" + (" (auto-selected)" if config.auto_backend else "")
    phases = [p for p, b in (("prefill", config.prefill_backend), ("decode", config.decode_backend)) if b == backend]
    return f"{' and '.join(phases)} attention backend {backend}"


# --- installed libraries (live probe or --facts) ------------------------------------------------------------

HEALTH_OK = "ok"
UNCHECKED = ("skipped",)


def library(target: Target, key: str):
    """The probed library (attn_preflight.probe.facts) under `key`, or None (a --gpu target, or not in the report)."""
    return target.facts.library(key) if target.facts is not None else None


class LibraryState(NamedTuple):
    healthy: Optional[bool]  # None when its import was not checked
    summary: str  # "4.8.1, imports", "not installed", "installed 4.8.1 but its import error"
    detail: str = ""  # the import error and the probe's diagnosis

    def __str__(self) -> str:
        return f"{self.summary} ({self.detail})" if self.detail else self.summary


def library_state(target: Target, key: str) -> LibraryState:
    """A probed library's health: installed, importing, and if not, why."""
    facts = target.facts
    probed = facts.library(key) if facts is not None else None
    if facts is None or probed is None or not probed.installed:
        return LibraryState(False, "not installed")
    version = f" {probed.version}" if probed.version else ""
    status = probed.health.status
    if status == HEALTH_OK:
        return LibraryState(True, f"{version.strip() or 'installed'}, imports")
    if status in UNCHECKED or not facts.imports_checked:
        return LibraryState(None, f"installed{version}, import not checked")
    from attn_preflight.rules.knowledge.import_diagnosis import (
        diagnose,
    )  # only where software was probed: --gpu never loads it

    detail = "; ".join(part for part in (probed.health.error, diagnose(probed, facts)) if part)
    return LibraryState(False, f"installed{version} but its import {status}", detail)


def libraries_found(states: "dict[str, LibraryState]") -> str:
    """Several libraries' states in one line, display name -> state: each summary, then each distinct detail once
    (two libraries failing on one missing dependency share their diagnosis)."""
    details = dict.fromkeys(state.detail for state in states.values() if state.detail)
    return "; ".join(f"{name} {state.summary}" for name, state in states.items()) + "".join(
        f" ({detail})" for detail in details
    )


def quantization_gate(
    cfg: Config, target: Target, engine: str, release: Optional[str]
) -> "tuple[str, kb_quant.QuantGate] | Outcome":
    """(the quantization method, its gate in `release`) when the GPU meets the gate's minimum capability; else the
    outcome: skipped (no method, or one not modelled), unknown (the release not read), failed (below the minimum).
    The method is --quantization, else the checkpoint's quant_method. Needs a GPU (the rule's needs_gpu)."""
    flag = cfg.flags.get("quantization")
    method = flag.lower() if isinstance(flag, str) else cfg.model.quant_method if cfg.model else None
    if method is None:
        return skipped("the checkpoint is not quantized")
    gate, known = kb_quant.gate_for(engine, method, release)
    if not known:
        return skipped(f"quantization method {method} is not modelled" + (" for SGLang" if engine == "sglang" else ""))
    if gate is None:
        return unknown(f"quantization method {method}: {engine} {release} was not read")
    assert target.cc is not None, "needs_gpu"
    current = target.cc[0] * 10 + target.cc[1]
    if current < gate.min_capability:
        return failed(
            f"quantization {method} on {gpu(target)} (capability {current})",
            f"capability {gate.min_capability} or newer",
            [],
            reason=kb_quant.MIN_CAPABILITY_MESSAGE.format(method=method, minimum=gate.min_capability, current=current),
        )
    return method, gate


def auto_kv_dtype(cfg: Config, target: Target) -> str:
    """The KV dtype the attention backends run for --kv-cache-dtype auto: the checkpoint's quantized one where the
    engine takes it (rules/knowledge/checkpoint_kv.py), else "auto" (the model's dtype)."""
    kv_quant = cfg.model.kv_quant if cfg.model is not None else None
    if cfg.engine == "vllm":
        return checkpoint_kv.vllm_auto_kv_dtype(kv_quant, vllm_release(target)) or "auto"
    return checkpoint_kv.sglang_auto_kv_dtype(kv_quant, sglang_release(target)) or "auto"


def backend_kv_dtype(cfg: Config, target: Target) -> str:
    """The KV dtype the attention backends run. vLLM's is the config's (attn_preflight.rules.engines.sglang.resolve applied the checkpoint's
    to --kv-cache-dtype auto); SGLang takes the checkpoint's after every server-args check has seen "auto", so
    only rules about the backends' kernels and the pool read it here."""
    if cfg.engine == "sglang" and cfg.kv_cache_dtype == "auto":
        return auto_kv_dtype(cfg, target)
    return cfg.kv_cache_dtype


def kv_from_checkpoint(cfg: Config, target: Target) -> bool:
    """Whether the engine took the KV dtype its backends run from the checkpoint, for --kv-cache-dtype auto."""
    if cfg.model is None or cfg.model.kv_quant is None:
        return False
    return cfg.rewrites.get("kv_cache_dtype") == "auto" or backend_kv_dtype(cfg, target) != cfg.kv_cache_dtype


def kv_found(cfg: Config, target: Target) -> str:
    """The KV dtype the backends run, as a finding states it: the flag as given, or where the engine took it from."""
    kv = backend_kv_dtype(cfg, target)
    if kv_from_checkpoint(cfg, target):
        assert cfg.model is not None and cfg.model.kv_quant is not None, "kv_from_checkpoint checked both"
        return f"KV {kv} (--kv-cache-dtype auto takes the checkpoint's {cfg.model.kv_quant.declared})"
    return f"--kv-cache-dtype {kv}"


def kv_unquantised_fix(cfg: Config, target: Target, model_dtype: Optional[str]) -> list[str]:
    """The flag that turns the KV cache back to the model's dtype: auto, or the model's dtype named where auto
    takes the checkpoint's quantized KV (none when that dtype is unknown)."""
    if not kv_from_checkpoint(cfg, target):
        return ["--kv-cache-dtype auto"]
    named = {"float16": "float16", "bfloat16": "bfloat16" if cfg.engine == "vllm" else "bf16"}.get(model_dtype or "")
    return [f"--kv-cache-dtype {named}"] if named else []


class FlashinferRun(NamedTuple):
    """The flashinfer-python that runs a target, as a finding names it, and whether it takes FA3 for the case judged;
    `outcome` is the skip or unknown to answer instead when there is no readable version to judge."""

    said: str  # "flashinfer 0.6.1 (the flashinfer-python sglang 0.5.8 pins)"
    fa3: bool
    outcome: Optional[Outcome] = None


def running_flashinfer(
    target: Target, engine: str, release: str, pin: Optional[str], takes_fa3: Callable[[str], bool]
) -> FlashinferRun:
    """The flashinfer-python that runs: the installed (or --engine-version) one, else the one the engine release
    pins (`pin`); judged by `takes_fa3` (rules/kernels/flashinfer.py)."""
    installed = target.versions.get("flashinfer")
    if installed is None and target.software_known:
        return FlashinferRun("", False, skipped("flashinfer-python is not installed on the target"))
    version = installed if installed is not None else pin
    if version is None:
        return FlashinferRun("", False, skipped(f"{engine} {release} pins no flashinfer-python"))
    said = f"flashinfer {version}" + ("" if installed else f" (the flashinfer-python {engine} {release} pins)")
    try:
        return FlashinferRun(said, takes_fa3(version))
    except InvalidVersion:
        return FlashinferRun(said, False, unknown(f"flashinfer version {version!r} cannot be read"))


def speculative(cfg) -> bool:
    """SpeculativeAlgorithm.from_string(...).is_speculative(): an SGLang algorithm other than NONE."""
    return (cfg.speculative_algorithm or "NONE").upper() != "NONE"


def chunked_prefill_per_rank(cfg) -> Optional[int]:
    """--chunked-prefill-size as each attention-DP rank runs it: SGLang divides it by the attention-DP size in
    every release (server_args.py:538 in 0.5.1, arg_groups/parallel_hook.py:326-334 in 0.5.23), before the
    checks that read it. None when not given."""
    size = cfg.flags.get("chunked_prefill_size")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        return size
    return size // attention_dp_size(cfg)
