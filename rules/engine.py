"""The rule engine: declarative rules, their findings, the verdict and the alternatives.

A rule is one unit (ansible-lint style): metadata declared in `@rule(...)` and a pure check function
`(Config, Target) -> Outcome`. Write checks with the outcome helpers:

    @rule(id="fa4-mla-arch", title=..., engine="sglang", versions="sglang>=0.5.20", backends=("fa4",),
          prevents="<verbatim upstream message>", source="sglang: <file>, <function>",
          docs="What it checks.\\n\\nWhy.", fix_title="Use fa3 on SM90, triton elsewhere")
    def fa4_mla_arch(cfg, target):
        if not cfg.mla:
            return skipped("applies to MLA models")
        if target.major in declared(target, "fa4").mla_archs:
            return passed(...)
        return failed(found="...", required="...", fix=["--attention-backend fa3"])

Applicability a declaration can say is declared, not written in the check: `backends=` (a phase uses one of
them), `needs_gpu=True` (the compute capability is known), `needs_model=True` (a model is given); the engine
answers skip / unknown in one wording when they do not hold. A backend's capabilities (archs, KV dtypes, page
sizes, features, per SGLang release) are read from rules/knowledge/backends.py through
rules.checks.common.declared(target, name), never restated in a check.

Statuses: pass, warn, fail, skip (does not apply / cannot be judged on this target), unknown (applies, but a
needed fact is missing). Verdict: fail if any fail; warn if any warn or unknown, or nothing could be
judged; pass otherwise. Skip and unknown never count as pass.

`stage=` says when the engine would hit the problem (STAGES: parse, startup, init, load, runtime); every
rule states one (tests/test_rule_registry.py). `explain` shows it and bench/oracle_diff.py uses it:
the oracle sees parse and startup, and of init only the factories' own checks (attention_registry.py).

`evaluate(config, target)` returns a Report; rules of another engine are not run. Rules see the config as
the engine resolves it (rules.resolve: default backend, silent rewrites in Config.rewrites). Each rule states the
versions it holds for (`versions="sglang>=0.5.20"`, or the kernel library's, `"flash-attn-4>=4.0.0b10"`):
outside them it is skipped; when the target's version is unknown, the newest known behaviour applies and
the finding says so.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from rules.config import Config, kv_dtype_choices
from rules.knowledge import NEWEST_KNOWN
from rules.knowledge import backends as backend_kb
from rules.knowledge.kv_dtypes import KV_DTYPES
from rules.knowledge.kv_dtypes import SPELLINGS as KV_DTYPE_SPELLINGS
from rules.resolve import resolve
from rules.target import VERSIONED, Target


class Status(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


# Display order of findings: what needs action first.
_STATUS_ORDER = {Status.FAIL: 0, Status.WARN: 1, Status.UNKNOWN: 2, Status.PASS: 3, Status.SKIP: 4}


class Outcome(NamedTuple):
    """What a check returns; the engine adds the rule's metadata to make a Finding. (A tuple: cheap to make.)"""

    status: Status
    found: str = ""
    required: str = ""
    fix: tuple[str, ...] = ()
    reason: str = ""  # skip/unknown: why; pass/fail/warn: optional detail appended to the message

    @property
    def message(self) -> str:
        if self.status is Status.SKIP or self.status is Status.UNKNOWN:
            return self.reason
        text = f"found {self.found}; required {self.required}" if self.required else f"found {self.found}"
        return f"{text} ({self.reason})" if self.reason else text


def passed(found: str, required: str = "", reason: str = "") -> Outcome:
    return Outcome(Status.PASS, found, required, (), reason)


def failed(found: str, required: str, fix: Sequence[str] = (), reason: str = "") -> Outcome:
    return Outcome(Status.FAIL, found, required, tuple(fix), reason)


def warned(found: str, required: str, fix: Sequence[str] = (), reason: str = "") -> Outcome:
    return Outcome(Status.WARN, found, required, tuple(fix), reason)


def skipped(reason: str) -> Outcome:
    return Outcome(Status.SKIP, "", "", (), reason)


def unknown(reason: str) -> Outcome:
    return Outcome(Status.UNKNOWN, "", "", (), reason)


RULE_ENGINES = ("sglang", "vllm", "any")
# When the engine would hit the problem a rule catches (optional; "" = not stated):
STAGES = {
    "parse": "argument parsing, before anything runs",
    "startup": "start-up argument resolution, before the model loads",
    "init": "attention-backend construction when the model runner starts",
    "load": "model or KV-pool construction, after weights start loading",
    "runtime": "the first forward pass (first request or CUDA-graph capture)",
}
Check = Callable[[Config, Target], Outcome]


class Documented:
    """What `explain` reads of anything with an `id` and `docs` (first paragraph: what it checks; the rest: why)."""

    id: str
    docs: str

    @property
    def what(self) -> str:
        return self.docs.strip().split("\n\n", 1)[0]

    @property
    def why(self) -> str:
        parts = self.docs.strip().split("\n\n", 1)
        return parts[1] if len(parts) > 1 else ""

    @property
    def docs_ref(self) -> str:
        return f"attn-preflight explain {self.id}"


@dataclass(frozen=True)
class Rule(Documented):
    id: str
    title: str
    engine: str
    versions: str  # "sglang>=0.5.20": the range this rule holds for (the engine's or a kernel library's)
    source: str  # "owner/repo: path, function"
    docs: str  # first paragraph: what it checks; the rest: why
    fix_title: str
    check: Check
    prevents: str = ""  # the verbatim upstream message this rule catches before launch
    reason: str = ""  # why the rule exists when there is no upstream message (a silent rewrite, a launch failure)
    references: tuple[str, ...] = ()
    needs_software: bool = False  # judged only when the target's software is known (live probe, --facts)
    backends: frozenset[str] = frozenset()  # applies when a phase (prefill/decode) uses one of these
    needs_gpu: bool = False  # judged only when the target's compute capability is known
    needs_model: bool = False  # judged only when the config names a model
    stage: str = ""  # one of STAGES: when the engine would fail (or rewrite) without this check
    subject: str = ""  # the checks module, e.g. "fa4"
    package: str = field(init=False, default="")
    specifier: SpecifierSet = field(init=False, default=SpecifierSet())

    def __post_init__(self) -> None:
        try:
            requirement = Requirement(self.versions)
        except InvalidRequirement as err:
            raise ValueError(f"rule {self.id}: versions {self.versions!r} is not 'package<specifier>': {err}") from None
        if self.stage and self.stage not in STAGES:
            raise ValueError(f"rule {self.id}: stage {self.stage!r} is not one of {sorted(STAGES)}")
        if requirement.name not in VERSIONED:
            raise ValueError(f"rule {self.id}: versions name {requirement.name!r} is not one of {sorted(VERSIONED)}")
        object.__setattr__(self, "package", requirement.name)
        object.__setattr__(self, "specifier", requirement.specifier)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "engine": self.engine,
            "versions": self.versions,
            "prevents": self.prevents or None,
            "reason": self.reason or None,
            "source": self.source,
            "docs": self.docs.strip(),
            "fix": self.fix_title,
            "references": list(self.references),
            "needs_software": self.needs_software,
            "backends": sorted(self.backends),
            "needs_gpu": self.needs_gpu,
            "needs_model": self.needs_model,
            "stage": self.stage or None,
            "subject": self.subject,
        }


_REGISTRY: dict[str, Rule] = {}


def rule(
    *,
    id: str,
    title: str,
    engine: str,
    versions: str,
    source: str,
    docs: str,
    fix_title: str,
    prevents: str = "",
    reason: str = "",
    references: Iterable[str] = (),
    needs_software: bool = False,
    backends: Iterable[str] = (),
    needs_gpu: bool = False,
    needs_model: bool = False,
    stage: str = "",
) -> Callable[[Check], Check]:
    """Registers the decorated check as a rule. Ids are unique, kebab-case, prefixed by subject.

    Applicability is declared, not written in the check: the engine skips a rule whose `backends` no phase
    uses, answers unknown when `needs_gpu` and the target's compute capability is unknown, and skips when
    `needs_model` and no model is given; the check runs only where all of them hold."""
    if engine not in RULE_ENGINES:
        raise ValueError(f"rule {id}: engine {engine!r} is not one of {RULE_ENGINES}")

    def register(check: Check) -> Check:
        if id in _REGISTRY:
            raise ValueError(f"duplicate rule id {id!r}")
        subject = check.__module__.rsplit(".", 1)[-1]
        _REGISTRY[id] = Rule(
            id=id,
            title=title,
            engine=engine,
            versions=versions,
            source=source,
            docs=docs,
            fix_title=fix_title,
            check=check,
            prevents=prevents,
            reason=reason,
            references=tuple(references),
            needs_software=needs_software,
            backends=frozenset(backends),
            needs_gpu=needs_gpu,
            needs_model=needs_model,
            stage=stage,
            subject=subject,
        )
        return check

    return register


def _load() -> dict[str, Rule]:
    if not _REGISTRY:
        import rules.checks  # noqa: F401  (registers every rule module)
    return _REGISTRY


def all_rules() -> list[Rule]:
    return list(_load().values())


def get_rule(rule_id: str) -> Optional[Rule]:
    return _load().get(rule_id)


def rule_ids() -> list[str]:
    return list(_load())


class Finding:
    """One rule's answer for one config: the rule's metadata plus its Outcome (fields computed on access)."""

    __slots__ = ("rule", "outcome", "note")

    def __init__(self, rule: Rule, outcome: Outcome, note: str = ""):
        self.rule = rule
        self.outcome = outcome
        self.note = note  # e.g. "sglang version unknown: newest known behaviour (sglang 0.5.23) applied"

    rule_id = property(lambda self: self.rule.id)
    title = property(lambda self: self.rule.title)
    status = property(lambda self: self.outcome.status)
    message = property(lambda self: self.outcome.message)
    fix = property(lambda self: self.outcome.fix)
    prevents = property(lambda self: self.rule.prevents)
    source = property(lambda self: self.rule.source)
    docs = property(lambda self: self.rule.docs_ref)

    def __repr__(self) -> str:
        return f"Finding({self.rule_id!r}, {self.status.value!r}, {self.message!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "title": self.title,
            "status": self.status.value,
            "message": self.message,
            "fix": list(self.fix),
            "prevents": self.prevents or None,
            "source": self.source,
            "docs": self.docs,
            "stage": self.rule.stage or None,
            "note": self.note or None,
        }


@dataclass(frozen=True)
class Alternative:
    option: str  # "--attention-backend" | "--kv-cache-dtype"
    value: str
    verdict: str

    def to_dict(self) -> dict[str, str]:
        return {"option": self.option, "value": self.value, "verdict": self.verdict}


@dataclass
class Report:
    config: Config
    target: Target
    findings: list[Finding]
    verdict: str
    alternatives: list[Alternative] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for finding in self.findings:
            counts[finding.status.value] += 1
        return counts

    def exit_code(self, strict: bool = False) -> int:
        if self.verdict == "fail" or (strict and self.verdict == "warn"):
            return 1
        return 0


# --- evaluation ----------------------------------------------------------------------------------------------

_gate_cache: dict[tuple, dict[str, tuple[bool, str]]] = {}


def _gates(target: Target) -> dict[str, tuple[bool, str]]:
    """rule id -> (applies, note) for this target's versions; computed once per distinct version set."""
    key = (tuple(sorted(target.versions.items())), target.software_known, target.version_origin)
    gates = _gate_cache.get(key)
    if gates is None:
        gates = {}
        for r in _load().values():
            installed = target.versions.get(r.package)
            newest = NEWEST_KNOWN.get(r.package)
            if installed is None:
                state = "not installed on the target" if target.software_known else "version unknown"
                judged = f" ({r.package} {newest})" if newest else ""
                note = f"{r.package} {state}: newest known behaviour{judged} applied"
                if newest and not r.specifier.contains(newest, prereleases=True):
                    gates[r.id] = (False, f"holds for {r.versions}; {note}")
                else:
                    gates[r.id] = (True, note)
            elif r.specifier.contains(installed, prereleases=True):
                gates[r.id] = (True, "")
            else:
                gates[r.id] = (False, f"holds for {r.versions}; target has {r.package} {installed}")
        _gate_cache[key] = gates
    return gates


def _by_engine() -> dict[str, tuple[Rule, ...]]:
    """engine -> the rules that run for its configs, in registry order (computed once)."""
    global _engine_rules
    if _engine_rules is None:
        rules = tuple(_load().values())
        _engine_rules = {e: tuple(r for r in rules if r.engine in (e, "any")) for e in ("sglang", "vllm")}
    return _engine_rules


_engine_rules: Optional[dict[str, tuple[Rule, ...]]] = None
_NO_SOFTWARE = skipped("software not probed for a --gpu target: run on the machine or pass --facts")
_NO_GPU = unknown("compute capability unknown")
_NO_MODEL = skipped("needs the model (give --model)")


_NOT_USED: dict[frozenset[str], Outcome] = {}


def _not_used(backends: frozenset[str]) -> Outcome:
    outcome = _NOT_USED.get(backends)
    if outcome is None:
        names = sorted(backends)
        outcome = _NOT_USED[backends] = skipped(
            f"applies to the {' / '.join(names)} backend{'s' if len(names) > 1 else ''}"
        )
    return outcome


def _not_applicable(r: Rule, config: Config, target: Target) -> Optional[Outcome]:
    """The engine's answer when a rule's declared applicability does not hold, else None (run the check)."""
    if r.backends and not (r.backends & config.backends):
        return _not_used(r.backends)
    if r.needs_gpu and target.cc is None:
        return _NO_GPU
    if r.needs_model and config.model is None:
        return _NO_MODEL
    return None


def _run(config: Config, target: Target) -> list[Finding]:
    gates = _gates(target)
    software = target.software_known
    findings = []
    for r in _by_engine()[config.engine]:
        applies, note = gates[r.id]
        if not applies:
            findings.append(Finding(r, skipped(note)))
        elif r.needs_software and not software:
            findings.append(Finding(r, _NO_SOFTWARE))
        else:
            outcome = _not_applicable(r, config, target) or r.check(config, target)
            findings.append(Finding(r, outcome, "" if outcome.status is Status.SKIP else note))
    findings.sort(key=_display_order)
    return findings


def _display_order(finding: Finding) -> int:
    return _STATUS_ORDER[finding.outcome.status]


def verdict_of(findings: Iterable[Finding]) -> str:
    statuses = {f.status for f in findings}
    if Status.FAIL in statuses:
        return "fail"
    if Status.WARN in statuses or Status.UNKNOWN in statuses or Status.PASS not in statuses:
        return "warn"
    return "pass"


def _alternatives(config: Config, resolved: Config, target: Target) -> list[Alternative]:
    """Single changes that would not fail: each other backend (same KV dtype), each other KV dtype (same backend)."""
    out = []
    current = resolved.backends
    for name in backend_kb.offered(config.engine, backend_kb.release_of(target)):
        if name in current:
            continue
        verdict = verdict_of(_run(resolve(config.with_backend(name), target), target))
        if verdict != "fail":
            out.append(Alternative("--attention-backend", name, verdict))
    for kv in kv_dtype_choices(config.engine):
        if kv == config.kv_cache_dtype or kv in KV_DTYPE_SPELLINGS or (kv in KV_DTYPES and KV_DTYPES[kv].removed):
            continue
        verdict = verdict_of(_run(resolve(config.with_kv_dtype(kv), target), target))
        if verdict != "fail":
            out.append(Alternative("--kv-cache-dtype", kv, verdict))
    out.sort(key=lambda a: (a.option, a.verdict != "pass"))
    return out


def evaluate(config: Config, target: Target, alternatives: bool = True) -> Report:
    """Every finding for `config` on `target`, the verdict, and (unless it passes) what would pass instead.

    `config` is judged as the engine resolves it (default backend, silent rewrites: rules.resolve); the
    report carries the resolved config. Alternatives change the config as given, one option at a time."""
    resolved = resolve(config, target)
    findings = _run(resolved, target)
    verdict = verdict_of(findings)
    alts = (
        _alternatives(config, resolved, target) if alternatives and verdict != "pass" and target.cc is not None else []
    )
    return Report(config=resolved, target=target, findings=findings, verdict=verdict, alternatives=alts)
