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
raise). Applicability the engine states in one wording (`backends`, `needs_gpu`, `needs_model`) is declared on the
row as on a hand-written rule. Terms: Flag, Range, Arch, Backends, Phases, Since, Feature, Model, Declares,
BackendArch, Env, Rewritten, ModelRead, and Not / All / AnyOf over them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence, Union

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import parse_version
from attn_preflight.rules.knowledge import NEWEST_KNOWN

_FIELDS = frozenset(Config.__dataclass_fields__)


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _value(cfg: Config, name: str) -> Any:
    """A flag's value: a Config field, else Config.flags by the engine's dest name (None: not given)."""
    return getattr(cfg, name) if name in _FIELDS else cfg.flags.get(name)


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


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
        if value is None or value is False:
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
        return f"{_option(self.name)} in {'(' if self.open_low else '['}{_shown(self.low)}, {_shown(self.high)}]"

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
    term: Term

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        held = self.term.holds(cfg, target)
        return None if held is None else not held

    def text(self) -> str:
        return f"no {self.term.text()}"

    def found(self, cfg: Config) -> list[str]:
        return self.term.found(cfg)


class All(NamedTuple):
    terms: tuple[Term, ...]

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        held = [term.holds(cfg, target) for term in self.terms]
        return False if False in held else None if None in held else True

    def text(self) -> str:
        return " with ".join(term.text() for term in self.terms)

    def found(self, cfg: Config) -> list[str]:
        return [text for term in self.terms for text in term.found(cfg)]


class AnyOf(NamedTuple):
    terms: tuple[Term, ...]

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
        return self.name in cfg.features

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
    model was read."""

    architectures: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()

    def holds(self, cfg: Config, target: Target) -> Optional[bool]:
        if cfg.model is None:
            return None
        return cfg.model.architecture in self.architectures or cfg.model.model_type in self.model_types

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


class ModelRead(NamedTuple):
    """The model's config.json was read: a row that, as the engine, passes over a model it cannot read names it
    in `when` (Model alone makes such a row unknown)."""

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
    ModelRead,
]


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
    verified: str = ""
    severity: str = "fail"  # "warn": the engine starts but rewrites or degrades
    engine: str = "sglang"
    references: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()  # as @rule's: applies when a phase uses one of them (the engine's skip)
    needs_gpu: bool = False
    needs_model: bool = False
    reason: str = ""  # why the row exists when there is no upstream message (a silent rewrite, a launch failure)
    first_only: bool = False  # report the first requirement that fails, as an engine that stops at its first raise

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        if isinstance(self.requires, tuple) and self.requires and isinstance(self.requires[0], Requirement):
            return self.requires  # type: ignore[return-value]  # every term is a NamedTuple: no narrowing
        return (Requirement(self.requires, self.fix),)  # type: ignore[arg-type]


def judge(row: Constraint, cfg: Config, target: Target) -> Outcome:
    """The one evaluator of constraint rows: skip where `when` does not hold, unknown where a term cannot be
    judged, else fail (or warn) naming every requirement that does not hold."""
    applies = row.when.holds(cfg, target)
    if applies is None:
        return unknown(f"cannot tell whether it applies ({row.when.text()} not known)")
    if not applies:
        return skipped(f"applies to {row.when.text()}")
    requirements = row.requirements
    held = [requirement.holds.holds(cfg, target) for requirement in requirements]
    required = "; ".join(requirement.holds.text() for requirement in requirements)
    given = list(dict.fromkeys(row.when.found(cfg) + [t for r in requirements for t in r.holds.found(cfg)]))
    found = " with ".join(given) or row.when.text()
    broken = [requirement for requirement, ok in zip(requirements, held) if ok is False]
    if broken and row.first_only:
        first = broken[0]
        return (warned if row.severity == "warn" else failed)(found, first.holds.text(), list(first.fix))
    if broken:
        fix = [step for requirement in broken for step in requirement.fix]
        return (warned if row.severity == "warn" else failed)(found, required, list(dict.fromkeys(fix)))
    if None in held:
        return unknown(f"{found}: cannot tell whether {required} holds")
    return passed(found, required)


def constraint_rules(module: str, rows: Sequence[Constraint]) -> None:
    """Registers each row as the rule of its id, judged by `judge`, reported under `module`'s subject."""
    for row in rows:

        def check(cfg: Config, target: Target, row: Constraint = row) -> Outcome:
            return judge(row, cfg, target)

        check.__module__ = module
        rule(
            id=row.id,
            title=row.title,
            engine=row.engine,
            versions=row.versions,
            source=row.source,
            docs=row.docs,
            verified=row.verified,
            fix_title=row.fix_title,
            prevents=row.prevents,
            reason=row.reason,
            references=row.references,
            stage=row.stage,
            backends=row.backends,
            needs_gpu=row.needs_gpu,
            needs_model=row.needs_model,
            generated=True,
        )(check)
