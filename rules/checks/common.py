"""Small helpers shared by rule modules: how targets and configs are named in findings."""
from __future__ import annotations

from rules.config import Config
from rules.target import Target

SGLANG_NEWEST = "sglang>=0.5.20"


def gpu(target: Target) -> str:
    """'H100 (SM90)' or 'SM90' for findings."""
    return f"{target.gpu_name} ({target.sm})" if target.gpu_name and target.gpu_name != target.sm.lower() else target.sm


def phases_using(config: Config, backend: str) -> str:
    """'--attention-backend fa4', or the phase flags that name it."""
    if config.prefill_backend == backend and config.decode_backend == backend:
        return f"attention backend {backend}" + (" (auto-selected)" if config.auto_backend else "")
    phases = [p for p, b in (("prefill", config.prefill_backend), ("decode", config.decode_backend)) if b == backend]
    return f"{' and '.join(phases)} attention backend {backend}"
