"""The attention backends either engine accepts: one lookup over both packs' declarations
(attn_preflight.rules.engines.sglang.capabilities, attn_preflight.rules.engines.vllm.capabilities), so that
neither pack answers for the other. vLLM's declarations load only when a vLLM name is asked for."""

from __future__ import annotations

from typing import Optional, Union

from packaging.version import Version

from attn_preflight.rules.engines.sglang import capabilities as sglang_backends
from attn_preflight.rules.engines.sglang.capabilities import BackendInfo


def choices(engine: str) -> dict[str, BackendInfo]:
    """The backends one engine accepts, by name."""
    if engine == "vllm":
        from attn_preflight.rules.engines.vllm import capabilities as vllm_backends

        return vllm_backends.BACKENDS
    return sglang_backends.SGLANG_BACKENDS


def canonical(engine: str, name: str) -> Optional[str]:
    """The spelling the engine uses for `name` (SGLang: lower case; vLLM: upper case), or None."""
    table = choices(engine)
    for candidate in (name, name.lower(), name.upper()):
        if candidate in table:
            return candidate
    return None


def offered(engine: str, release: Union[Version, str, None] = None) -> list[str]:
    """The backends offered as alternatives and as matrix / fleet columns: general-purpose and not removed, as
    declared for an SGLang release (the newest verified one when None; vLLM: its table)."""
    declared = choices(engine) if engine == "vllm" else sglang_backends.declarations(release)
    return [name for name, info in declared.items() if info.general and not info.removed]
