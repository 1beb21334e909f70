"""One validator over SGLang's backend declarations: every reason a backend refuses a query.

As vLLM's validate_configuration (rules/engines/vllm/capabilities.py `rejections`): a backend's declaration for
one release (capabilities.declaration) and what a launch asks of it (a Query) give every declared fact that
refuses it, each with what the declaration requires, in words derived from the declaration. The rules generated
from the declarations (declared/*.py) and the backends their fixes suggest read it; none restates a fact.
"""

import re
from typing import Callable, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence, TypeVar

from attn_preflight.rules.core.engine import Worded
from attn_preflight.rules.engines.sglang.capabilities import (
    SGLANG_BACKENDS,
    BackendInfo,
    HeadDims,
    declaration,
    declarations,
)


class Query(NamedTuple):
    """What a launch asks of a backend; a field left at its default is not asked."""

    major: Optional[int]  # the GPU's compute-capability major; None: not known (arch facts cannot be judged)
    mla: Optional[bool] = None
    phase: str = ""  # "prefill" or "decode": that phase only; "": every phase the backend serves
    kv_dtype: Optional[str] = None
    page_size: Optional[int] = None
    head_dims: tuple[tuple[int, int], ...] = ()  # (head_dim, v_head_dim) of every layer type
    features: frozenset[str] = frozenset()


class Reason(NamedTuple):
    """One declared fact that refuses the query: `fact` is the declaration's field (with its key after a colon:
    "feature_archs:score_mod"), `required` what it requires. `unknown`: the query lacks the GPU to judge it."""

    fact: str
    required: str
    unknown: bool = False


def majors_text(majors: Iterable[int]) -> str:
    return "compute capability " + ", ".join(f"{m}.x" for m in sorted(majors))


def head_dims_text(dims: HeadDims, multiple: int) -> str:
    shapes = "".join(f", ({hd}, {hv})" for hd, hv in dims.shapes)
    return f"{dims.lo}..{dims.hi}{shapes}; multiples of {multiple}"


def page_sizes_text(page_sizes: Iterable[int]) -> str:
    *rest, last = (str(p) for p in page_sizes)
    return "page size " + (f"{', '.join(rest)} or {last}" if rest else last)


def kv_dtypes_text(kv_dtypes: Iterable[str]) -> str:
    return "one of " + ", ".join(kv_dtypes)


def admitted_archs(info: BackendInfo, phase: str = "") -> Optional[frozenset[int]]:
    """The majors the backend is admitted on for one phase, or (phase "") for every phase it serves: a backend
    whose prefill is admitted on fewer majors (trtllm_mha 0.5.10-0.5.18) serves a whole launch on those only."""
    majors = info.archs_for(phase)
    if phase or info.prefill_archs is None or "prefill" not in info.phases:
        return majors
    return info.prefill_archs if majors is None else majors & info.prefill_archs


def requirement(info: BackendInfo, fact: str, q: Query) -> str:
    """What the declaration requires for `fact`, worded as its refusal would be ("" where it restricts nothing
    this validator words)."""
    kind, _, key = fact.partition(":")
    majors = {
        "archs": admitted_archs(info, q.phase),
        "mla_archs": info.mla_archs,
        "kv_dtype_archs": info.kv_dtype_archs.get(key),
        "feature_archs": info.feature_archs.get(key),
        "kernel_archs": info.kernel_archs.get(key),
    }
    if kind in majors:
        listed = majors[kind]
        return "" if listed is None else majors_text(listed)
    if kind == "page_sizes" and info.page_sizes is not None:
        return page_sizes_text(info.page_sizes)
    if kind == "kv_dtypes" and info.kv_dtypes is not None:
        return kv_dtypes_text(info.kv_dtypes)
    if kind == "min_cc" and info.min_cc is not None:
        return "compute capability {}.{} or newer".format(*info.min_cc)
    return ""


def _on(fact: str, majors: Optional[frozenset[int]], major: Optional[int]) -> Iterator[Reason]:
    if majors is None:
        return
    if major is None:
        yield Reason(fact, majors_text(majors), unknown=True)
    elif major not in majors:
        yield Reason(fact, majors_text(majors))


def reasons(info: BackendInfo, q: Query) -> tuple[Reason, ...]:
    """Every reason the declaration gives for refusing the query, in the declaration's field order."""
    return tuple(_reasons(info, q))


def _reasons(info: BackendInfo, q: Query) -> Iterator[Reason]:
    if info.removed:
        yield Reason("removed", f"a release that has {info.name} ({info.removed})")
    yield from _on("archs", admitted_archs(info, q.phase), q.major)
    if q.mla and not info.mla:
        yield Reason("mla", "a non-MLA model")
    if q.mla is False and not info.mha:
        yield Reason("mha", "an MLA model (kv_lora_rank)")
    if q.mla and info.mla_archs is not None:
        yield from _on("mla_archs", info.mla_archs, q.major)
    if q.kv_dtype is not None:
        if info.kv_dtypes is not None and q.kv_dtype not in info.kv_dtypes:
            yield Reason("kv_dtypes", kv_dtypes_text(info.kv_dtypes))
        yield from _on(f"kv_dtype_archs:{q.kv_dtype}", info.kv_dtype_archs.get(q.kv_dtype), q.major)
    if q.page_size is not None and info.page_sizes is not None and q.page_size not in info.page_sizes:
        yield Reason("page_sizes", page_sizes_text(info.page_sizes))
    asymmetric = {"asymmetric_kv"} if any(hd != hv for hd, hv in q.head_dims) else set()
    for feature in sorted(q.features | asymmetric | {"paged_kv"}):  # SGLang always pages its KV cache
        yield from _on(f"feature_archs:{feature}", info.feature_archs.get(feature), q.major)
    dims = info.head_dims.get(q.major) if q.major is not None else None
    if dims is not None and q.head_dims and refused_head_dims(info, q.major, q.head_dims):
        yield Reason("head_dims", head_dims_text(dims, info.head_dim_multiple))
    for feature in sorted(q.features & info.refuses):
        yield Reason(f"refuses:{feature}", f"no {feature}")
    for phase in (q.phase,) if q.phase else sorted(info.phases):
        yield from _on(f"kernel_archs:{phase}", info.kernel_archs.get(phase), q.major)
    if q.phase and q.phase not in info.phases:
        yield Reason("phases", " or ".join(sorted(info.phases)))


def reasons_of(info: BackendInfo, fact: str, q: Query) -> tuple[Reason, ...]:
    """The reasons the declaration gives for refusing the query on one fact ("kv_dtype_archs:fp8_e4m3")."""
    return tuple(r for r in _reasons(info, q) if r.fact == fact)


def refused_head_dims(info: BackendInfo, major: Optional[int], shapes: Iterable[tuple[int, int]]) -> list:
    """The (head_dim, v_head_dim) shapes the backend's kernels do not take on this major (none where the
    declaration does not validate that major)."""
    dims = info.head_dims.get(major) if major is not None else None
    if dims is None:
        return []
    multiple = info.head_dim_multiple
    return [(hd, hv) for hd, hv in shapes if not (dims.takes(hd, hv) and hd % multiple == 0 and hv % multiple == 0)]


def working(declared: Mapping[str, BackendInfo], candidates: Iterable[str], q: Query) -> list[str]:
    """The candidates the declarations give no reason to refuse for the query (unknowns refuse), in order."""
    return [name for name in candidates if not reasons(declared[name], q)]


# A declared fact named in a rule's title or docs: {backend.fact} (a fact as `requirement` words it, e.g.
# {trtllm_mha.page_sizes}, {fa3.kv_dtype_archs:fp8_e4m3}; {backend.page_snap} the size SGLang snaps to),
# {backend.fact@phase} for one phase's archs, and {backend.fact#release} as one release declares it; filled in from
# the declaration when the rule is shown. Patterns, compiled by `re` when a rule is first shown (never by a check).
DECLARED_FACT = r"\{([a-z0-9_]+)\.([a-z_]+(?::[a-z0-9_]+)?)(?:@([a-z]+))?(?:#([0-9a-z.]+))?\}"
# {features:softcap}, {drops:softcap}, {refuses:softcap}: the general CUDA backends (every backend, for drops and
# refuses) whose declaration lists the feature there, in declaration order.
DECLARED_BACKENDS = r"\{(features|drops|refuses):([a-z0-9_]+)\}"


def names_text(names: Sequence[str], conjunction: str = "or") -> str:
    """The names in words: "a, b or c" (or "a, b and c")."""
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}" if len(names) > 1 else "".join(names)


def backends_declaring(field: str, feature: str, declared: Mapping[str, BackendInfo]) -> list[str]:
    """The backends whose declared `field` ("features", "drops", "refuses") lists `feature`: for "features" the
    general CUDA ones (those a fix may name), for the others every backend."""
    return [
        name
        for name, info in declared.items()
        if feature in getattr(info, field) and (field != "features" or (info.general and info.platform == "cuda"))
    ]


_T = TypeVar("_T")
_WORDED: dict[str, tuple[tuple[BackendInfo, ...], object]] = {}


def while_declared(key: str, compute: Callable[[], _T]) -> _T:
    """`compute()`, computed again only once a declaration has changed since (a finding's title is worded each
    time it is read): the cache keeps the declarations it was worded from and compares them by identity."""
    now = tuple(SGLANG_BACKENDS.values())
    hit = _WORDED.get(key)
    if hit is not None and len(hit[0]) == len(now) and all(a is b for a, b in zip(hit[0], now)):
        return hit[1]  # type: ignore[return-value]  # stored by this function under this key
    value = compute()
    _WORDED[key] = (now, value)
    return value


def worded(text: str) -> str:
    """`text` with every {backend.fact} placeholder worded from the declaration as it is now (the newest
    verified release's unless the placeholder names one)."""
    return while_declared(text, lambda: _worded(text)) if "{" in text else text


def _worded(text: str) -> str:

    def fact(match: "re.Match[str]") -> str:
        backend, name, phase, release = match.groups()
        info = declaration(backend, release)
        if name == "page_snap" and info.page_snap is not None:
            return str(info.page_snap)
        if name == "head_dims" or name.startswith("head_dims:"):
            major = int(name.partition(":")[2] or 0)
            return head_dims_text(info.head_dims[major], info.head_dim_multiple)
        said = requirement(info, name, Query(None, phase=phase or ""))
        if not said:
            raise ValueError(f"{match.group(0)}: {backend} declares nothing this validator words for {name}")
        return said

    def listed(match: "re.Match[str]") -> str:
        names = backends_declaring(match.group(1), match.group(2), declarations())
        return names_text(names, "or" if match.group(1) == "features" else "and")

    return re.sub(DECLARED_BACKENDS, listed, re.sub(DECLARED_FACT, fact, text))


def declared_words(title: str, docs: str, fix_title: str = "") -> Worded:
    """A rule's title, docs and (when given) fix title worded from the declarations when shown
    (attn_preflight.rules.core.engine.Rule.shown)."""
    fields = {"title": title, "docs": docs, **({"fix_title": fix_title} if fix_title else {})}
    return Worded(fields, worded)
