"""The rule engine: declarative rules, their outcomes and findings, the verdict and the report.

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
sizes, features, per SGLang release) are read from rules/engines/sglang/capabilities.py through
attn_preflight.rules.checks.common.declared(target, name), never restated in a check.

Statuses: pass, warn, fail, skip (does not apply / cannot be judged on this target), unknown (applies, but a
needed fact is missing). Verdict: fail if any fail; warn if any warn or unknown, or nothing could be
judged; pass otherwise. Skip and unknown never count as pass.

`stage=` says when the engine would hit the problem (STAGES: parse, startup, init, load, runtime); every
rule states one (tests/test_rule_registry.py). `explain` shows it and bench/oracle_diff.py uses it:
the oracle sees parse and startup, and of init only the factories' own checks (attention_registry.py).

Registry: `@rule` adds each rule to the registry as its module is imported; attn_preflight.rules.core.registry
imports every rule module and freezes them once into a RuleIndex (by id, by engine, by version requirement).
Each rule states the versions it holds for (`versions="sglang>=0.5.20"`, or the kernel library's,
`"flash-attn-4>=4.0.0b10"`). attn_preflight.rules.core.judge runs the rules (`evaluate(config, target)`).
"""

from __future__ import annotations

import enum
import functools
import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple, Optional, Protocol, Sequence

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.target import VERSIONED, Target
from attn_preflight.rules.core.versions import InvalidRange, VersionRange
from attn_preflight.rules.knowledge import data_text

if TYPE_CHECKING:
    from attn_preflight.rules.core.correction import Correction


class Status(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


# Display order of findings: what needs action first.
STATUS_ORDER = {Status.FAIL: 0, Status.WARN: 1, Status.UNKNOWN: 2, Status.PASS: 3, Status.SKIP: 4}
# What a status says about running the config: pass and warn run (a warning still serves); fail does not;
# skip and unknown were not judged, so never count as serving.
SERVES = frozenset({Status.PASS, Status.WARN})
# What a reader must look at: a finding with one of these says why a config is not a plain pass.
FLAGGED = frozenset({Status.FAIL, Status.WARN, Status.UNKNOWN})


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
class ReportedCheck(Documented):
    """What a finding made outside the rule registry reports on (`check --smoke`, `check --ask-engine`): the
    metadata a Finding reads from its rule, and the docs `explain` shows; `evaluate` never runs it."""

    id: str
    title: str
    source: str
    docs: str  # first paragraph: what it checks; the rest: why (as a rule's)
    fix_title: str
    reported_by: str  # "check --smoke", "check --ask-engine"
    references: tuple[str, ...] = ()
    stage: str = ""
    prevents: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "reported_by": self.reported_by,
            "docs": self.docs.strip(),
            "fix": self.fix_title,
            "source": self.source,
            "references": list(self.references),
            "stage": self.stage or None,
        }


# Where each engine's rules keep their provenance: how each rule's `versions` was read, release by release, as rows
# (release, wheel, file, function, line, the verbatim message) beside the pack, read only when a rule is explained
# or listed.
PROVENANCE_PACKAGES = {
    "sglang": "attn_preflight.rules.engines.sglang",
    "vllm": "attn_preflight.rules.engines.vllm",
    "any": "attn_preflight.rules.checks",
}


@functools.cache
def provenance(engine: str) -> dict[str, dict[str, Any]]:
    """rule id -> how its range was verified, for the rules of `engine` ("sglang", "vllm", "any"): {"read": the
    releases read, "rows": [{"release" or "releases", "wheel", "file", "function", "line", "end_line", "message",
    "note"}], "notes": [what was read without a site]}."""
    table = json.loads(data_text("provenance.json", PROVENANCE_PACKAGES[engine]))
    table.pop("_doc", None)
    return table


class Worded:
    """A rule's shown fields (title, docs, fix_title) with the declared facts they name worded by `word` when read:
    `word` fills a text's placeholders from the pack's declarations as they are now. One field is worded only when
    it is read, so a finding that shows its title alone never words the docs. The one wording step of every engine
    pack's rules (Rule.worded); a plain class, not a Mapping, since every check defines it."""

    __slots__ = ("fields", "word")

    def __init__(self, fields: Mapping[str, str], word: Callable[[str], str]):
        self.fields, self.word = fields, word

    def __getitem__(self, key: str) -> str:
        text = self.fields[key]
        return self.word(text) if "{" in text else text

    def get(self, key: str, default: str = "") -> str:
        return self[key] if key in self.fields else default


@dataclass(frozen=True)
class Rule(Documented):
    id: str
    title: str
    engine: str
    versions: str  # "sglang>=0.5.20": the range this rule holds for (the engine's or a kernel library's);
    # "" for a rule about the user's input rather than an engine's code: it holds for every release
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
    generated: bool = False  # made from a declaration or a constraint row, judged by a shared validator
    # a generated rule's title, docs and fix title worded from its declaration as it is when asked (`shown`)
    worded: Optional[Callable[[], Worded]] = field(default=None, compare=False, repr=False)
    package: str = field(init=False, default="")
    version_range: VersionRange = field(init=False, default=VersionRange("", ()))
    not_used: Outcome = field(init=False, default=Outcome(Status.SKIP))  # the skip when no phase uses `backends`

    def __post_init__(self) -> None:
        try:
            requirement = VersionRange.parse(self.versions) if self.versions else VersionRange("", ())
        except InvalidRange as err:
            raise ValueError(f"rule {self.id}: versions {err}") from None
        if self.stage and self.stage not in STAGES:
            raise ValueError(f"rule {self.id}: stage {self.stage!r} is not one of {sorted(STAGES)}")
        if self.versions and requirement.package not in VERSIONED:
            raise ValueError(f"rule {self.id}: versions name {requirement.package!r} is not one of {sorted(VERSIONED)}")
        object.__setattr__(self, "package", requirement.package)
        object.__setattr__(self, "version_range", requirement)
        names = sorted(self.backends)
        plural = "s" if len(names) > 1 else ""
        object.__setattr__(self, "not_used", skipped(f"applies to the {' / '.join(names)} backend{plural}"))

    def shown(self) -> Rule:
        """The rule as `explain`, `rules` and a finding show it: a rule worded from a declaration reads the
        declaration now, so a fact changed after import (a new release's, a test's) shows in its title, docs and fix
        title."""
        if self.worded is None:
            return self
        words = self.worded()
        return replace(
            self,
            title=words.get("title", self.title),
            docs=words.get("docs", self.docs),
            fix_title=words.get("fix_title", self.fix_title),
        )

    @property
    def verified(self) -> Mapping[str, Any]:
        """How `versions` was read release by release: the releases read, each site read (release, wheel, file,
        function, line, message) and notes; {} when not recorded."""
        return provenance(self.engine).get(self.id, {})

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "engine": self.engine,
            "versions": self.versions,
            "verified": self.verified or None,
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
            "generated": self.generated,
        }


_REGISTRY: dict[str, Rule] = {}  # filled by @rule while the rule modules import; read through registry()


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
    generated: bool = False,
    worded: Optional[Callable[[], Worded]] = None,
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
            generated=generated,
            worded=worded,
        )
        return check

    return register


# The metadata a declaration or constraint row states under the names `rule` takes.
_ROW_METADATA = (
    "id",
    "title",
    "engine",
    "versions",
    "source",
    "docs",
    "fix_title",
    "prevents",
    "reason",
    "references",
    "stage",
    "backends",
    "needs_gpu",
    "needs_model",
)


def generated_rule(module: str, row: Any, check: Check, **stated: Any) -> None:
    """Registers `check` as the rule a row (a declaration's or a constraint's record) states: the metadata of the
    row's fields named as `rule`'s arguments, then `stated` (what the row type fixes for all its rows), reported
    under `module`'s subject and marked generated: its check is a validator shared by the rows of its type."""
    check.__module__ = module
    metadata = {name: getattr(row, name) for name in _ROW_METADATA if hasattr(row, name)}
    rule(**{**metadata, **stated}, generated=True)(check)


def registered_rules() -> tuple[Rule, ...]:
    """The rules registered so far, in registration order (attn_preflight.rules.core.registry freezes them once all are in)."""
    return tuple(_REGISTRY.values())


def _title(rule: Any) -> str:
    """A reported rule's title as shown: worded from its declaration when it is (without re-making the Rule)."""
    worded = getattr(rule, "worded", None)
    return str(worded().get("title", rule.title)) if worded is not None else str(rule.title)


class Reported(Protocol):
    """What a Finding reads of what it reports on: a Rule, or a ReportedCheck (`check --smoke`, `--ask-engine`)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def prevents(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def docs_ref(self) -> str: ...
    @property
    def stage(self) -> str: ...


class Finding:
    """One rule's answer for one config: the rule's metadata plus its Outcome (fields computed on access)."""

    __slots__ = ("rule", "outcome", "note")

    def __init__(self, rule: Reported, outcome: Outcome, note: str = ""):
        self.rule = rule
        self.outcome = outcome
        self.note = note  # e.g. "sglang version unknown: newest known behaviour (sglang 0.5.23) applied"

    rule_id = property(lambda self: self.rule.id)
    title = property(lambda self: _title(self.rule))
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


class ReportedFinding(Finding):
    """A finding of a ReportedCheck (`check --smoke`, `check --ask-engine`): a plain message, and what was run for
    JSON under the subclass's `key`. Listed even when skipped: it was asked for."""

    __slots__ = ("data",)
    key = ""
    listed_when_skipped = True

    def __init__(self, check: ReportedCheck, status: Status, message: str, data: dict[str, Any], note: str = ""):
        super().__init__(check, Outcome(status, reason=message), note)
        self.data = data

    message = property(lambda self: self.outcome.reason)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), self.key: self.data}


def backend_option(engine: str, target: Target) -> str:
    """What names the attention backend on the target's release of the engine: the flag, or for vLLM before
    0.13 the VLLM_ATTENTION_BACKEND environment variable (vllm_backends.backend_option)."""
    if engine != "vllm":
        return "--attention-backend"
    from attn_preflight.rules.engines.vllm import (
        capabilities as vllm_backends,  # an SGLang check never loads the vLLM declarations
    )

    return vllm_backends.backend_option(target.versions.get("vllm"))


class Alternative(NamedTuple):
    option: str  # "--attention-backend" | "--kv-cache-dtype" | "VLLM_ATTENTION_BACKEND" (vLLM before 0.13)
    value: str
    verdict: Status
    becomes: str = ""  # the backends the engine would run instead, when it silently replaces the choice

    @property
    def setting(self) -> str:
        """The fix that applies it: "--attention-backend fa3", "VLLM_ATTENTION_BACKEND=FLASH_ATTN"."""
        from attn_preflight.rules.core.flag_tables import setting  # a passing check never loads the flag tables

        return setting(self.option, self.value)

    @property
    def picks_backend(self) -> bool:
        return not self.option.startswith("--") or self.option == "--attention-backend"  # the flag, or vLLM's env var

    def to_dict(self) -> dict[str, Any]:
        return {
            "option": self.option,
            "value": self.value,
            "verdict": self.verdict.value,
            "becomes": self.becomes or None,
        }


@dataclass
class Report:
    config: Config
    target: Target
    findings: list[Finding]
    verdict: Status  # verdict_of(findings)
    alternatives: list[Alternative] = field(default_factory=list)
    correction: Optional[Correction] = None  # the fewest-change corrected command, when something is to fix
    engine_answer: Optional[dict[str, Any]] = None  # `check --ask-engine`: the engine's own answer (a probe fact)
    # findings left out by --ignore / --select (the face's filter), each as (rule id, the status it had)
    ignored_rules: tuple[tuple[str, str], ...] = ()

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for finding in self.findings:
            counts[finding.status.value] += 1
        return counts

    def exit_code(self, strict: bool = False) -> int:
        if self.verdict is Status.FAIL or (strict and self.verdict is Status.WARN):
            return 1
        return 0


def display_order(finding: Finding) -> int:
    """Sort key of findings: what needs action first (STATUS_ORDER)."""
    return STATUS_ORDER[finding.outcome.status]


def verdict_from(statuses: Iterable[Status]) -> Status:
    """The one verdict rule: fail if any fail; warn if any warn or unknown, or nothing passed; pass otherwise."""
    statuses = set(statuses)
    if Status.FAIL in statuses:
        return Status.FAIL
    if Status.WARN in statuses or Status.UNKNOWN in statuses or Status.PASS not in statuses:
        return Status.WARN
    return Status.PASS


def verdict_of(findings: Iterable[Finding]) -> Status:
    return verdict_from(f.status for f in findings)
