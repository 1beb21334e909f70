"""Constraint rows: what an engine refuses of its flags, stated as data and judged by one evaluator.

A row says when it applies and what must then hold, as terms over the config and the target:

    Constraint(
        id="kv-hicache-radix-cache", title=..., versions="sglang>=0.5.1", stage="startup",
        when=Flag("enable_hierarchical_cache"), requires=Not(Flag("disable_radix_cache")),
        prevents="<the upstream message, verbatim>", source="sglang: <file>, <function>", docs=..., fix_title=...,
    )

`constraint_rules(module, rows)` registers one rule per row, with the same id, docs and metadata a hand-written
`@rule` has (attn_preflight.rules.core.engine.rule); its check is `judge`, the one evaluator of every row. The
finding's words come from the terms: found names the flags as given, required the term that must hold, and a
row that does not apply is skipped with "applies to <when>". A term that cannot be judged (a GPU or a model
fact the target or config lacks) makes the finding unknown, never a pass.

Several requirements of one upstream check keep one id: `requires` may list them, each a `Requirement` with its
own fix; every one that fails is reported, or with `first_only` the first (as an engine that stops at its first
raise); with `together` their fixes are joined into one command. Applicability the engine states in one wording
(`backends`, `needs_gpu`, `needs_model`) is declared on the row as on a hand-written rule. Terms: Flag, Range,
Arch, Backends, Phases, Since, Feature, Model, ModelRead, HasModel, Declares, BackendArch, DeclaredArch, Listed,
Env, EnvTrue, Rewritten, Above, Speculative, DraftTopk, PageSize, DraftBackend, Platform, BackendFeature, Uses,
Resolved, ModelField, Capability, and Not / All / AnyOf over them.
"""

from dataclasses import replace
from typing import Any, Callable, NamedTuple, Optional, Sequence, Union

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, Worded, failed, generated_rule, passed, skipped, unknown, warned
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import parse_version
from attn_preflight.rules.engines.sglang.resolve import eagle_topk, effective_page_size
from attn_preflight.rules.knowledge import NEWEST_KNOWN

_FIELDS = frozenset(Config.__dataclass_fields__)


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _value(cfg: Config, name: str) -> Any:
    """A flag's value: a Config field, else Config.flags by the engine's dest name (None: not given)."""
    return getattr(cfg, name) if name in _FIELDS else cfg.flags.get(name)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(getattr(value, "name", value))  # a model read from its config.json is named, not dumped


# Config fields a row may read that are no launch flag: findings do not show them as one.
_NOT_FLAGS = frozenset({"auto_backend", "rewrites", "model_missing", "features"})


class Flag(NamedTuple):
    """A flag is given (a store_true flag on, any value of another), or, with `values`, has one of them."""

    name: str
    values: tuple[Any, ...] = ()

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        value = _value(cfg, self.name)
        return value in self.values if self.values else value is not None and value is not False

    def text(self) -> str:
        if not self.values:
            return _option(self.name)
        return f"{_option(self.name)} {' or '.join(_shown(v) for v in self.values)}"

    def found(self, cfg: Config) -> list[str]:
        value = _value(cfg, self.name)
        if value is None or value is False or self.name in _NOT_FLAGS:
            return []
        return [_option(self.name) if value is True else f"{_option(self.name)} {_shown(value)}"]


class Range(NamedTuple):
    """A numeric flag, when given, lies in [low, high] (`open_low`: above low)."""

    name: str
    low: float
    high: float
    open_low: bool = False

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        value = _value(cfg, self.name)
        if value is None:
            return True
        above = value > self.low if self.open_low else value >= self.low
        return above and value <= self.high

    def text(self) -> str:
        option = _option(self.name)
        if self.low == float("-inf"):
            return f"{option} <= {_shown(self.high)}"
        if self.high == float("inf"):
            return f"{option} {'>' if self.open_low else '>='} {_shown(self.low)}"
        return f"{option} in {'(' if self.open_low else '['}{_shown(self.low)}, {_shown(self.high)}]"

    def found(self, cfg: Config) -> list[str]:
        return Flag(self.name).found(cfg)


class Arch(NamedTuple):
    """The target GPU's compute-capability major is one of `majors` (unknown when the GPU is not known)."""

    majors: tuple[int, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return None if target.major is None else target.major in self.majors

    def text(self) -> str:
        return "compute capability " + " or ".join(f"{m}.x" for m in self.majors)

    def found(self, cfg: Config) -> list[str]:
        return []


class Not(NamedTuple):
    term: "Term"

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        held = self.term.holds(cfg, target)
        return None if held is None else not held

    def text(self) -> str:
        if isinstance(self.term, Not):
            return self.term.term.text()
        if isinstance(self.term, Range) and (self.term.low == float("-inf") or self.term.high == float("inf")):
            bound = self.term.high if self.term.low == float("-inf") else self.term.low
            sign = ">" if self.term.low == float("-inf") else "<" if not self.term.open_low else "<="
            return f"{_option(self.term.name)} {sign} {_shown(bound)}"
        return f"no {self.term.text()}"

    def found(self, cfg: Config) -> list[str]:
        return self.term.found(cfg)


class All(NamedTuple):
    terms: tuple["Term", ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        held = [term.holds(cfg, target) for term in self.terms]
        return False if False in held else None if None in held else True

    def text(self) -> str:
        return " with ".join(term.text() for term in self.terms)

    def found(self, cfg: Config) -> list[str]:
        return [text for term in self.terms for text in term.found(cfg)]


class AnyOf(NamedTuple):
    terms: tuple["Term", ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        held = [term.holds(cfg, target) for term in self.terms]
        return True if True in held else None if None in held else False

    def text(self) -> str:
        return " or ".join(term.text() for term in self.terms)

    def found(self, cfg: Config) -> list[str]:
        return [text for term in self.terms for text in term.found(cfg)]


# A row with no condition of its own: it applies wherever its rule runs (its backends, GPU and model hold).
ALWAYS = All(())


class Backends(NamedTuple):
    """Every attention backend a phase uses (prefill and decode, as resolved) is one of `names` (unknown when
    no backend is known)."""

    names: tuple[str, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return None if not cfg.backends else cfg.backends <= set(self.names)

    def text(self) -> str:
        return "attention backend " + " or ".join(self.names)

    def found(self, cfg: Config) -> list[str]:
        return [f"attention backend {name}" for name in sorted(cfg.backends)]


class Since(NamedTuple):
    """The target's `engine` release is `version` or newer (the newest known release when it is not known): a
    requirement that starts inside a row's own range."""

    version: str
    engine: str = "sglang"

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        release = target.versions.get(self.engine) or NEWEST_KNOWN[self.engine]
        return parse_version(release) >= parse_version(self.version)

    def text(self) -> str:
        return f"{self.engine} {self.version}+"

    def found(self, cfg: Config) -> list[str]:
        return []


class Feature(NamedTuple):
    """The model (or --feature) has a feature of ModelFeatures: mla, sliding_window, cross_attention, ..."""

    name: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if self.name in cfg.features:
            return True
        # a model named but never read (a hub id not in the cache) may have it: unknown, never a guess
        return None if cfg.model is None and cfg.model_missing else False

    def text(self) -> str:
        return self.name.replace("_", " ")

    def found(self, cfg: Config) -> list[str]:
        return [self.text()] if self.name in cfg.features else []


class Declares(NamedTuple):
    """An SGLang backend's declaration, as it holds in the target's release, has `value` in its `fact`
    ("refuses", "cross_attention"), or, with no value, has `fact` set ("mla": it serves MLA models)."""

    backend: str
    fact: str
    value: str = ""

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        declared = getattr(target.sglang_backends[self.backend], self.fact)
        return self.value in declared if self.value else bool(declared)

    def text(self) -> str:
        return f"{self.backend} declared with {self.fact} {self.value}".rstrip()

    def found(self, cfg: Config) -> list[str]:
        return []


class BackendArch(NamedTuple):
    """The target GPU is one an SGLang backend's declaration admits: its `archs` majors and its `min_cc`
    (unknown when the GPU is not known)."""

    backend: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if target.cc is None:
            return None
        declared = target.sglang_backends[self.backend]
        in_archs = declared.archs is None or target.cc[0] in declared.archs
        return in_archs and (declared.min_cc is None or target.cc >= declared.min_cc)

    def text(self) -> str:
        return f"a GPU {self.backend} is built for"

    def found(self, cfg: Config) -> list[str]:
        return []


class Phases(NamedTuple):
    """Prefill and decode both run one of `backends` (unknown when no backend is chosen or derived)."""

    backends: tuple[str, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if cfg.attention_backend is None:
            return None
        return cfg.prefill_backend in self.backends and cfg.decode_backend in self.backends

    def text(self) -> str:
        return f"{' or '.join(self.backends)} for prefill and decode"

    def found(self, cfg: Config) -> list[str]:
        return [cfg.backend_label()] if cfg.attention_backend else []


class Model(NamedTuple):
    """The model's config.json names one of `architectures` (architectures[0]) or `model_types`; unknown when no
    model was read, or when architectures are asked of a config.json that names none."""

    architectures: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if cfg.model is None:
            return None
        if cfg.model.architecture in self.architectures or cfg.model.model_type in self.model_types:
            return True
        if self.architectures and cfg.model.architecture is None:
            return None  # a config.json without `architectures`: which one SGLang loads is not known
        return False

    def text(self) -> str:
        return " or ".join(self.architectures + self.model_types)

    def found(self, cfg: Config) -> list[str]:
        return [cfg.model.architecture or cfg.model.model_type or "the model"] if cfg.model else []


class Env(NamedTuple):
    """An environment variable of the launch is set, or, with `values`, set to one of them."""

    name: str
    values: tuple[str, ...] = ()

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        value = cfg.env.get(self.name)
        return value is not None and (not self.values or value.strip() in self.values)

    def text(self) -> str:
        return f"{self.name}={' or '.join(self.values)}" if self.values else self.name

    def found(self, cfg: Config) -> list[str]:
        value = cfg.env.get(self.name)
        return [] if value is None else [f"{self.name}={value}"]


class Rewritten(NamedTuple):
    """The engine replaced the config's `field` as given (`value`: what was given) while resolving it."""

    field: str
    value: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return cfg.rewrites.get(self.field) == self.value

    def text(self) -> str:
        return f"{_option(self.field)} {self.value} replaced by the engine"

    def found(self, cfg: Config) -> list[str]:
        return []


class Above(NamedTuple):
    """A numeric flag is given and above `bound` (--dcp-size > 1)."""

    name: str
    bound: float

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        value = _value(cfg, self.name)
        return value is not None and value > self.bound

    def text(self) -> str:
        return f"{_option(self.name)} > {_shown(self.bound)}"

    def found(self, cfg: Config) -> list[str]:
        return Flag(self.name).found(cfg)


class Speculative(NamedTuple):
    """The speculative algorithm, as SGLang upper-cases it (NONE when not given), is one of `names`."""

    names: tuple[str, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return (cfg.speculative_algorithm or "NONE").upper() in self.names

    def text(self) -> str:
        return "--speculative-algorithm " + " or ".join(self.names)

    def found(self, cfg: Config) -> list[str]:
        return Flag("speculative_algorithm").found(cfg)


class DraftTopk(NamedTuple):
    """The EAGLE draft-tree top-k SGLang settles on (its auto choice when none is given) is at most `high`."""

    high: int

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return eagle_topk(cfg) <= self.high

    def text(self) -> str:
        return f"draft top-k <= {self.high}"

    def found(self, cfg: Config) -> list[str]:
        given = cfg.speculative_eagle_topk is not None
        return [
            f"--speculative-eagle-topk {eagle_topk(cfg)}" if given else f"top-k {eagle_topk(cfg)} (SGLang's choice)"
        ]


class PageSize(NamedTuple):
    """The KV page size SGLang settles on, after its snaps, is at most `high` (unknown when no attention backend
    is chosen or derived: the backend decides it)."""

    high: int

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return None if cfg.attention_backend is None else effective_page_size(cfg, target) <= self.high

    def text(self) -> str:
        return f"page size <= {self.high}"

    def found(self, cfg: Config) -> list[str]:
        return Flag("page_size").found(cfg)


class DraftBackend(NamedTuple):
    """The draft decodes on one of `names`: --speculative-draft-attention-backend, else the decode backend."""

    names: tuple[str, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return (cfg.draft_attention_backend or cfg.decode_backend) in self.names

    def text(self) -> str:
        return f"draft backend {' or '.join(self.names)}"

    def found(self, cfg: Config) -> list[str]:
        return [f"draft backend {cfg.draft_attention_backend or cfg.decode_backend}"]


class Uses(NamedTuple):
    """A phase (prefill or decode, as resolved) runs `backend`."""

    backend: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return self.backend in cfg.backends

    def text(self) -> str:
        return f"attention backend {self.backend}"

    def found(self, cfg: Config) -> list[str]:
        return [self.text()] if self.backend in cfg.backends else []


class BackendFeature(NamedTuple):
    """The attention backend's declaration, as it holds in the target's release, lists `feature` (unknown when
    no attention backend is chosen or derived)."""

    feature: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if cfg.attention_backend is None:
            return None
        declared = target.sglang_backends.get(cfg.attention_backend)
        return declared is not None and self.feature in declared.features

    def text(self) -> str:
        return f"a backend declared with {self.feature.replace('_', ' ')}"

    def found(self, cfg: Config) -> list[str]:
        return Flag("attention_backend").found(cfg)


class Platform(NamedTuple):
    """Every attention backend a phase uses is declared for one of `platforms` (unknown when no GPU is known:
    the platform is the target's)."""

    platforms: tuple[str, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if target.cc is None:
            return None
        return all(target.sglang_backends[name].platform in self.platforms for name in cfg.backends)

    def text(self) -> str:
        return f"backends built for {' or '.join(self.platforms)}"

    def found(self, cfg: Config) -> list[str]:
        return Backends(()).found(cfg)


class DeclaredArch(NamedTuple):
    """The target GPU's major is one an SGLang backend's declaration, as it holds in the target's release, lists
    for an arch fact: "mla_archs", or a key of a mapping ("feature_archs:paged_kv", "kv_dtype_archs:fp8_e4m3");
    a fact it does not restrict holds on every GPU (unknown when the GPU is not known)."""

    backend: str
    fact: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if target.major is None:
            return None
        field, _, key = self.fact.partition(":")
        declared = getattr(target.sglang_backends[self.backend], field)
        majors = declared.get(key) if key else declared
        return majors is None or target.major in majors

    def text(self) -> str:
        return f"a GPU {self.backend}'s {self.fact.replace(':', ' ')} lists"

    def found(self, cfg: Config) -> list[str]:
        return []


# What SGLang's EnvBool reads as true (environ.py), case aside
ENV_TRUE = ("true", "1", "yes", "y")


class EnvTrue(NamedTuple):
    """A boolean environment variable of the launch is true, as SGLang's EnvBool reads it."""

    name: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return (cfg.env.get(self.name) or "").strip().lower() in ENV_TRUE

    def text(self) -> str:
        return f"{self.name} true"

    def found(self, cfg: Config) -> list[str]:
        return Env(self.name).found(cfg)


class ModelRead(NamedTuple):
    """A model's config.json was read (unknown otherwise): in `when`, a row that needs the model to judge answers
    unknown without one, where it applies."""

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return None if cfg.model is None else True

    def text(self) -> str:
        return "the model"

    def found(self, cfg: Config) -> list[str]:
        return []


class Listed(NamedTuple):
    """A flag's value is one an SGLang backend's declaration lists for `fact` ("kv_dtypes", "page_sizes") in the
    target's release; a fact it does not restrict takes any value."""

    backend: str
    fact: str
    flag: str

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        listed = getattr(target.sglang_backends[self.backend], self.fact)
        return listed is None or _value(cfg, self.flag) in listed

    def text(self) -> str:
        return f"{_option(self.flag)} among {self.backend}'s declared {self.fact.replace('_', ' ')}"

    def found(self, cfg: Config) -> list[str]:
        return Flag(self.flag).found(cfg)


class Resolved(NamedTuple):
    """What the engine's own resolution makes of the config: `resolve` (a function of the pack's resolve module,
    as `describes` names it) returns a true value, or, with `values`, one of them."""

    resolve: Callable[[Config, Target], Any]
    describes: str
    values: tuple[Any, ...] = ()

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        value = self.resolve(cfg, target)
        return value in self.values if self.values else bool(value)

    def text(self) -> str:
        return self.describes

    def found(self, cfg: Config) -> list[str]:
        return []


class ModelField(NamedTuple):
    """A field of the model's config (ModelFeatures: learnable_sink, attention_chunk_size, ...) is set, or, with
    `values`, one of them; unknown when no model was read."""

    name: str
    values: tuple[Any, ...] = ()

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if cfg.model is None:
            return None
        value = getattr(cfg.model, self.name)
        return value in self.values if self.values else bool(value)

    def text(self) -> str:
        return f"config.json {self.name}" + (f" {' or '.join(_shown(v) for v in self.values)}" if self.values else "")

    def found(self, cfg: Config) -> list[str]:
        return []


class Capability(NamedTuple):
    """The target GPU's compute capability lies in [low, high] (unknown when the GPU is not known; `low` (0, 0):
    any known GPU)."""

    low: tuple[int, int]
    high: tuple[int, int] = (99, 9)

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return None if target.cc is None else self.low <= target.cc <= self.high

    def text(self) -> str:
        return f"compute capability {self.low[0]}.{self.low[1]} to {self.high[0]}.{self.high[1]}"

    def found(self, cfg: Config) -> list[str]:
        return []


class HasModel(NamedTuple):
    """The model's config.json was read: a row that, as the engine, passes over a model it cannot read names it
    in `when` (skipped without one; ModelRead makes a row unknown instead)."""

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        return cfg.model is not None

    def text(self) -> str:
        return "a model whose config.json was read"

    def found(self, cfg: Config) -> list[str]:
        return []


Term = Union[
    Flag,
    Range,
    Arch,
    Not,
    All,
    AnyOf,
    Backends,
    Since,
    Feature,
    Model,
    Declares,
    BackendArch,
    Phases,
    Env,
    Rewritten,
    DraftTopk,
    PageSize,
    DraftBackend,
    Platform,
    BackendFeature,
    Uses,
    DeclaredArch,
    Listed,
    Above,
    Speculative,
    EnvTrue,
    ModelRead,
    Resolved,
    ModelField,
    Capability,
    HasModel,
]


def unset_or(name: str, *values: Any) -> AnyOf:
    """A flag is not given, or has one of `values` (a check that reads the flag only when it is given)."""
    return AnyOf((Not(Flag(name)), Flag(name, values)))


class Requirement(NamedTuple):
    """One thing a row requires, with the fix that makes it hold ("" message: the row's own)."""

    holds: Term
    fix: tuple[str, ...] = ()


class Constraint(NamedTuple):
    id: str
    title: str
    versions: str
    stage: str
    when: Term
    requires: Union[Term, tuple[Requirement, ...]]
    prevents: str
    source: str
    docs: str
    fix_title: str
    fix: tuple[str, ...] = ()  # the fix of a single `requires` term
    severity: str = "fail"  # "warn": the engine starts but rewrites or degrades
    engine: str = "sglang"
    references: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()  # as @rule's: applies when a phase uses one of them (the engine's skip)
    needs_gpu: bool = False
    needs_model: bool = False
    reason: str = ""  # why the row exists when there is no upstream message (a silent rewrite, a launch failure)
    first_only: bool = False  # report the first requirement that fails, as an engine that stops at its first raise
    together: bool = False  # the fixes of the failing requirements are one command (each alone leaves a refusal)
    required: str = ""  # what a finding says is required, where the terms' own words would not read well

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        if isinstance(self.requires, tuple) and self.requires and isinstance(self.requires[0], Requirement):
            return self.requires  # type: ignore[return-value]  # every term is a NamedTuple: no narrowing
        return (Requirement(self.requires, self.fix),)  # type: ignore[arg-type]


def judge(row: Constraint, cfg: Config, target: Target, skip: Optional[Outcome] = None) -> Outcome:
    """The one evaluator of constraint rows: skip where `when` does not hold (`skip`: the row's skip, worded
    once), unknown where a term cannot be judged, else fail (or warn) naming every requirement that does not
    hold."""
    applies = row.when.holds(cfg, target)
    if applies is None:
        return unknown(f"cannot tell whether it applies ({row.when.text()} not known)")
    if not applies:
        return skip or skipped(f"applies to {row.when.text()}")
    requirements = row.requirements
    held = [requirement.holds.holds(cfg, target) for requirement in requirements]
    required = _required(row, requirements)
    given = list(dict.fromkeys(row.when.found(cfg) + [t for r in requirements for t in r.holds.found(cfg)]))
    found = " with ".join(given) or row.when.text() or f"attention backend {cfg.backend_label()}"
    if cfg.model is None:  # no model given: a requirement only a model's feature breaks is not known to fail
        held = [_model_could_hold(r.holds, cfg, target) if ok is False else ok for r, ok in zip(requirements, held)]
    broken = [requirement for requirement, ok in zip(requirements, held) if ok is False]
    if broken and row.first_only:
        first = broken[0]
        return (warned if row.severity == "warn" else failed)(found, _required(row, (first,)), list(first.fix))
    if broken:
        fix = list(dict.fromkeys(step for requirement in broken for step in requirement.fix))
        if row.together and fix:
            fix = [" ".join(fix)]
        return (warned if row.severity == "warn" else failed)(found, _required(row, broken), fix)
    if None in held:
        return unknown(f"{found}: cannot tell whether {required} holds")
    return passed(found, required)


def _features_of(term: Any) -> set[str]:
    """The model features a term reads, at any depth."""
    if isinstance(term, Feature):
        return {term.name}
    inner = getattr(term, "terms", None) or ((term.term,) if isinstance(term, Not) else ())
    return {name for sub in inner for name in _features_of(sub)}


def _model_could_hold(term: Term, cfg: Config, target: Target) -> Optional[bool]:
    """False where `term` fails whatever model is served, None where a model with the features it reads (not given by
    --feature) would make it hold: a config with no model is never failed for what the model may have."""
    names = _features_of(term) - cfg.features
    if not names:
        return False
    with_them = replace(cfg, extra_features=cfg.extra_features | names)
    return None if term.holds(with_them, target) else False


READABLE = 160  # characters: a longer requirement, worded from its terms, is said by the row's title instead


def _required(row: Constraint, requirements: Sequence[Requirement]) -> str:
    """What a finding says is required: the row's own words, else the requirements' terms (those that failed,
    on a failure), else, where the terms run long, the row's title."""
    if row.required:
        return row.required
    worded = "; ".join(requirement.holds.text() for requirement in requirements)
    return worded if len(worded) <= READABLE else row.title


def constraint_rules(
    module: str, rows: Sequence[Constraint], worded: Optional[Callable[[Constraint], Worded]] = None
) -> None:
    """Registers each row as the rule of its id, judged by `judge`, reported under `module`'s subject; with
    `worded`, a row's docs and fix title name declared facts that `worded(row)` words when the rule is shown
    (attn_preflight.rules.core.engine.Rule.shown)."""
    for row in rows:

        def check(
            cfg: Config, target: Target, row: Constraint = row, skip: Outcome = skipped(f"applies to {row.when.text()}")
        ) -> Outcome:
            return judge(row, cfg, target, skip)

        if worded is None:
            generated_rule(module, row, check)
        else:
            generated_rule(module, row, check, worded=lambda row=row: worded(row))
