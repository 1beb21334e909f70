"""Older values of vLLM's backend declarations, release by release: each `Change` is one capability as it held
for releases in [since, until), read from the backend classes of the vllm 0.11.1-0.30.0 wheels; `backend_at`
applies them to the newest declarations (attn_preflight.rules.engines.vllm.capabilities).

The changes live in the release files: the `capability_deltas` of rules/engines/vllm/releases/<until>.json, one
entry per change (backend, field, the value before that release, since, the releases seen, source), gathered into
capability_deltas.json by bench/release_files.py and folded here once, when an older release is first asked."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Optional

from attn_preflight.rules.engines.vllm.capabilities import (
    VALIDATE_SINCE,
    Archs,
    HeadSizes,
    MultipleOf,
    VllmBackend,
    release_for,
    release_numbers,
)


@dataclass(frozen=True)
class Change:
    """An older value of one declared capability: it held for releases in [since, until). Read from the same
    backend classes in the vllm 0.11.1, 0.11.2, 0.12.0, 0.13.0, 0.14.1, 0.15.0-0.19.1, 0.20.0, 0.26.0 and 0.30.0
    wheels (FLASHINFER's also in 0.21.0-0.25.1; a pre-release `since` is judged as its release)."""

    backend: str
    field: str
    value: object
    until: str  # the first release read with today's value
    since: str = "0.15.0"  # the oldest release read with this value
    seen: str = ""  # the releases read that show it
    source: str = ""


def _archs(value: dict) -> Archs:
    return Archs(
        lo=tuple(value["lo"]) if "lo" in value else None,
        hi=tuple(value["hi"]) if "hi" in value else None,
        majors=frozenset(value.get("majors", ())),
        exact=frozenset(tuple(cc) for cc in value.get("exact", ())),
    )


def _value(field: str, value: Any) -> Any:
    """A VllmBackend field's value as a release file writes it (JSON) -> as the declaration holds it."""
    if value is None:
        return None
    if field in ("archs", "sinks"):
        return _archs(value)
    if field == "head_sizes":
        sizes = HeadSizes(
            allowed=frozenset(value["allowed"]) if "allowed" in value else None,
            minimum=value.get("minimum"),
            maximum=value.get("maximum"),
            multiple_of=value.get("multiple_of"),
            wide_max=value.get("wide_max"),
        )
        return replace(sizes, wide_archs=_archs(value["wide_archs"])) if "wide_archs" in value else sizes
    if field == "kv_dtype_archs":
        return tuple((kv, _archs(archs)) for kv, archs in value)
    if field == "block_sizes":
        return tuple(MultipleOf(b["multiple_of"]) if isinstance(b, dict) else b for b in value)
    if field in ("kv_dtypes", "dtypes", "sink_fa_versions"):
        return frozenset(value)
    return tuple(value) if isinstance(value, list) else value


def fold(deltas: dict[str, list]) -> tuple[Change, ...]:
    """The changes the release files' capability deltas make, oldest release first."""
    releases = sorted(deltas, key=release_numbers)
    return tuple(
        Change(
            delta["backend"],
            delta["field"],
            _value(delta["field"], delta["value"]),
            until=release,
            since=VALIDATE_SINCE if delta["since"] == "@VALIDATE_SINCE" else delta["since"],
            seen=delta.get("seen", ""),
            source=delta["source"],
        )
        for release in releases
        for delta in deltas[release]
    )


@functools.cache
def changes() -> tuple[Change, ...]:
    """Every change, read from the release files (capability_deltas.json) once."""
    from attn_preflight.rules.engines.releases import capability_deltas

    return fold(capability_deltas("vllm"))


@functools.cache
def _newest_delta() -> tuple[int, ...]:
    """The newest release with a capability delta: from it on no change holds (each ends at its release)."""
    from attn_preflight.rules.engines.releases import index

    with_deltas = index("vllm")["with_deltas"]
    return release_numbers(with_deltas[-1]) if with_deltas else ()


def backend_at(name: str, version: Optional[str]) -> Optional[VllmBackend]:
    """The backend as the given vLLM release declares it (the newest read when the version is unknown)."""
    backend = release_for(version).backends.get(name)
    if backend is None or version is None:
        return backend
    wanted = release_numbers(version)[:3]
    if wanted >= _newest_delta():  # the newest releases: nothing to fold
        return backend
    # each Change.value has the type of the field it names (`object` in Change: the fields differ)
    updates: dict[str, Any] = {
        c.field: c.value
        for c in changes()
        if c.backend == name and release_numbers(c.since) <= wanted < release_numbers(c.until)
    }
    return replace(backend, **updates) if updates else backend
