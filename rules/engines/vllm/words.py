"""The vLLM declarations in words, for the reason rules' titles, docs and fix titles (reasons.py): each placeholder
a row names is worded here from capabilities.py (the newest declared range), changes.py (the older values) and the
selection (select.py) as they are when the rule is shown, so that a declaration change reaches `explain` and
`rules` with nothing restated by hand. Imported only when a rule is shown: `check` never loads it.

Placeholders (Worded, attn_preflight.rules.core.engine):
- {release}: the release the declarations were read from ({tokenspeed_dims}, which titles name, is reasons.py's)
- {FIELD:BACKEND}: one backend's FIELD (archs, head_sizes, block_sizes, dtypes, kv_dtypes, sinks,
  qk_nope_head_dims)
- {each:FIELD} or {each:FIELD|KIND}: the backends of KIND grouped by their FIELD ("A and B: x; C: y")
- {with:FIELD}, {without:FIELD} (also FIELD=VALUE, and |KIND): the backends of KIND that declare it, or do not
- {backends:KIND}: the backends of KIND; KIND is all (the default), mha, mla, dense (MLA) or sparse (MLA)
- {history:FIELD} or {history:FIELD:BACKEND}: the older values changes.changes() declares, with their releases
- {picks:KIND}: what vLLM's priority list picks per GPU for a model of KIND (mha, mla, sparse, sinks, sliding)
- {kv_since}: the release each --kv-cache-dtype value is first in; {float16_refused}: the model types vLLM refuses
  to run in float16; {inkling_majors}: the GPUs whose Inkling attention kernel reads a paged KV cache
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import changes
from attn_preflight.rules.engines.vllm import select as vllm

KINDS: dict[str, Callable[[kb.VllmBackend], bool]] = {
    "all": lambda b: True,
    "mha": lambda b: not b.mla,
    "mla": lambda b: b.mla,
    "dense": lambda b: b.mla and not b.sparse,
    "sparse": lambda b: b.mla and b.sparse,
}

# One GPU of each family the picks are worded for, and the model each kind of pick is asked for (DeepSeek-V3's
# MLA dimensions, a Llama-like head of 128, GPT-OSS's head of 64 with sinks and sliding windows).
GPUS = ((8, 0), (8, 9), (9, 0), (10, 0), (12, 0))
_MLA = dict(head_size=576, use_mla=True, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, num_heads=128)
PICK_QUERIES: dict[str, dict[str, Any]] = {
    "mha": dict(head_size=128),
    "mla": _MLA,
    "sparse": {**_MLA, "use_sparse": True},
    "sinks": dict(head_size=64, has_sink=True, has_sliding_window=True),
    "sliding": dict(head_size=128, has_sliding_window=True),
}
DTYPE_ORDER = ("float16", "bfloat16", "float32")


def listed(items: Iterable[str], last: str = "and") -> str:
    """'A', 'A and B', 'A, B and C'."""
    items = list(items)
    if len(items) < 2:
        return "".join(items) or "none"
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def archs_text(archs: kb.Archs) -> str:
    if archs == kb.ANY_ARCH:
        return "any"
    return "none" if archs == kb.NO_ARCH else archs.describe()


def head_sizes_text(sizes: kb.HeadSizes) -> str:
    if sizes.allowed is not None:
        return listed((str(h) for h in sorted(sizes.allowed)), "or")
    parts = [f"a multiple of {sizes.multiple_of}"] if sizes.multiple_of else []
    if sizes.minimum is not None:
        parts.append(f"{sizes.minimum} or more")
    if sizes.maximum is not None:
        parts.append(f"up to {sizes.maximum}")
    text = " ".join(parts) or "any"
    if sizes.wide_max is not None:
        text += f" ({sizes.wide_max} on {archs_text(sizes.wide_archs)})"
    return text


def block_sizes_text(sizes: tuple[kb.BlockSize, ...]) -> str:
    fixed = [str(s) for s in sizes if not isinstance(s, kb.MultipleOf)]
    multiples = [f"multiples of {s.base}" for s in sizes if isinstance(s, kb.MultipleOf)]
    if multiples == ["multiples of 1"] and not fixed:
        return "any"
    return listed([*([listed(fixed, "or")] if fixed else []), *multiples], "or")


def kv_dtypes_text(backend: kb.VllmBackend, kv_dtypes: Optional[frozenset[str]] = None) -> str:
    kv = backend.kv_dtypes if kv_dtypes is None else kv_dtypes
    if kv is None:
        return "any"
    limited = dict(backend.kv_dtype_archs)
    quantised = [
        name + (f" ({archs_text(limited[name])})" if name in limited else "")
        for name in kb.KV_CACHE_DTYPES
        if name in kv and kb.is_quantised_kv(name)
    ]
    return listed(quantised) if quantised else "no quantised KV"


def value_text(field: str, value: Any, backend: kb.VllmBackend) -> str:
    """One declared value of `field` in words."""
    if field in ("archs", "sinks"):
        return archs_text(value)
    if field == "head_sizes":
        return head_sizes_text(value)
    if field == "block_sizes":
        return block_sizes_text(value)
    if field == "dtypes":
        return listed(d for d in DTYPE_ORDER if d in value)
    if field == "kv_dtypes":
        return kv_dtypes_text(backend, value)
    if field == "qk_nope_head_dims":
        return "any (not checked)" if value is None else listed((str(d) for d in value), "or")
    raise KeyError(f"no wording for the declared field {field!r}")


def declared(kind: str = "all") -> list[kb.VllmBackend]:
    """The modelled CUDA backends of `kind` that the newest declared range holds, in the declaration's order."""
    keep = KINDS[kind]
    return [b for b in kb.RELEASES[-1].backends.values() if b.platform == "cuda" and b.modelled and keep(b)]


def backend(name: str) -> kb.VllmBackend:
    found = kb.RELEASES[-1].backends.get(name)
    if found is None:
        raise KeyError(f"no declared vLLM backend {name!r}")
    return found


def declares(b: kb.VllmBackend, spec: str) -> bool:
    """Whether the backend declares `spec`: a field that holds (an Archs other than none), or FIELD=VALUE, a value
    the field's set holds (a KV dtype on every arch the backend runs on)."""
    field, _, value = spec.partition("=")
    held = getattr(b, field)
    if value:
        if field == "kv_dtypes":
            return (held is None or value in held) and value not in dict(b.kv_dtype_archs)
        return value in held
    if isinstance(held, kb.Archs):
        return held != kb.NO_ARCH
    return bool(held)


def each(field: str, kind: str = "all") -> str:
    groups: dict[str, list[str]] = {}
    for b in declared(kind):
        groups.setdefault(value_text(field, getattr(b, field), b), []).append(b.name)
    return "; ".join(f"{listed(names)}: {text}" for text, names in groups.items())


def history(field: str, name: str = "") -> str:
    """The older values of `field` changes.changes() declares (of one backend, or of each backend that has some),
    with the releases they held for, then today's value."""
    names = [name] if name else list(dict.fromkeys(c.backend for c in changes.changes() if c.field == field))
    texts: dict[str, list[str]] = {}
    for backend_name in names:
        b = backend(backend_name)
        older = sorted(
            (c for c in changes.changes() if c.backend == backend_name and c.field == field),
            key=lambda c: kb.release_numbers(c.since),
        )
        parts = [f"{value_text(field, c.value, b)} in {c.since} up to {c.until}" for c in older]
        contiguous = all(a.until == z.since for a, z in zip(older, older[1:]))
        now = value_text(field, getattr(b, field), b)
        if not older:
            parts.append(now)
        else:
            parts.append(f"{now} from {older[-1].until}" if contiguous else f"{now} otherwise")
        texts.setdefault("; ".join(parts), []).append(backend_name)
    if name:
        return next(iter(texts))
    return ". ".join(f"{listed(group)}: {text}" for text, group in texts.items())


def picks(kind: str) -> str:
    """What vLLM's priority list picks with no backend named, on one GPU of each family: "X on SM90, Y on SM100,
    Z elsewhere" (the pick of most families is "elsewhere")."""
    chosen = {cc: vllm.select(kb.VllmQuery(cc=cc, **PICK_QUERIES[kind])).chosen or "no modelled backend" for cc in GPUS}
    counts = {name: sum(1 for c in chosen.values() if c == name) for name in chosen.values()}
    common = max(counts, key=lambda name: counts[name])
    named = list(dict.fromkeys(c for c in chosen.values() if c != common))
    text = [f"{n} on " + "/".join(f"SM{a}{b}" for (a, b), c in chosen.items() if c == n) for n in named]
    return ", ".join(text + [f"{common} elsewhere"]) if named else f"{common} on every GPU"


def kv_since() -> str:
    """The release each --kv-cache-dtype value is first in (capabilities.KV_CACHE_DTYPE_SINCE), after the oldest."""
    oldest = min(kb.KV_CACHE_DTYPE_SINCE.values(), key=kb.release_numbers)
    by_release: dict[str, list[str]] = {}
    for kv, since in kb.KV_CACHE_DTYPE_SINCE.items():
        if since != oldest:
            by_release.setdefault(since, []).append(kv)
    ordered = sorted(by_release, key=kb.release_numbers)
    return ", ".join(f"{listed(by_release[r])} from {r}" for r in ordered)


def fact(name: str) -> str:
    """The placeholder `name` (the text between the braces) in words."""
    head, _, rest = name.partition(":")
    argument, _, kind = rest.partition("|")
    if head == "release":
        return kb.VLLM_VERSION
    if head == "each":
        return each(argument, kind or "all")
    if head in ("with", "without"):
        wanted = head == "with"
        return listed(b.name for b in declared(kind or "all") if declares(b, argument) == wanted)
    if head == "backends":
        return listed(b.name for b in declared(argument or "all"))
    if head == "history":
        field, _, backend_name = argument.partition(":")
        return history(field, backend_name)
    if head == "picks":
        return picks(argument)
    if head == "kv_since":
        return kv_since()
    if head == "float16_refused":  # the model types vLLM refuses to run in float16
        return listed(kb.FLOAT16_UNSUPPORTED_MODELS)
    if head == "inkling_majors":
        return listed((f"SM{m}x" for m in sorted(kb.INKLING_PAGED_KV_MAJORS)), "and")
    b = backend(argument)
    return value_text(head, getattr(b, head), b)
