"""Small helpers shared by rule modules: how targets and configs are named in findings, and which SGLang
release (and so which platform probes) a target is judged by."""
from __future__ import annotations

from packaging.version import Version

from rules.config import Config
from rules.knowledge import NEWEST_KNOWN
from rules.target import Target

SGLANG_NEWEST = "sglang>=0.5.20"
# utils/common.py is_blackwell(_supported): majors [10, 12] through 0.5.8, [10, 11, 12] (Jetson Thor) since 0.5.9.
BLACKWELL_SM110_SINCE = Version("0.5.9")


def sglang_release(target: Target) -> Version:
    """The target's SGLang release; the newest verified one when it is not known (--gpu, not installed)."""
    return Version(target.versions.get("sglang") or NEWEST_KNOWN["sglang"])


def blackwell_majors(target: Target) -> tuple[int, ...]:
    """Compute-capability majors SGLang's is_blackwell accepts in the target's release."""
    return (10, 11, 12) if sglang_release(target) >= BLACKWELL_SM110_SINCE else (10, 12)


def gpu(target: Target) -> str:
    """'H100 (SM90)' or 'SM90' for findings."""
    return f"{target.gpu_name} ({target.sm})" if target.gpu_name and target.gpu_name != target.sm.lower() else target.sm


def phases_using(config: Config, backend: str) -> str:
    """'--attention-backend fa4', or the phase flags that name it."""
    if config.prefill_backend == backend and config.decode_backend == backend:
        return f"attention backend {backend}" + (" (auto-selected)" if config.auto_backend else "")
    phases = [p for p, b in (("prefill", config.prefill_backend), ("decode", config.decode_backend)) if b == backend]
    return f"{' and '.join(phases)} attention backend {backend}"
