"""The judge: every rule of a config's engine run on one target, the verdict, the fixes that work, the
alternatives and the corrected command (attn_preflight.rules.core.correction).

`evaluate(config, target)` returns a Report; rules of another engine are not run. Rules see the config as the
engine resolves it (attn_preflight.rules.engines.sglang.resolve: default backend, silent rewrites in
Config.rewrites). Outside the versions a rule holds for it is skipped; when the target's version is unknown, the
newest known behaviour applies and the finding says so (attn_preflight.rules.core.registry.VersionGate).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import (
    Alternative,
    Finding,
    Outcome,
    Report,
    Rule,
    Status,
    backend_option,
    display_order,
    skipped,
    unknown,
    verdict_from,
    verdict_of,
)
from attn_preflight.rules.core.registry import Gate, registry
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import kv_dtype_choices
from attn_preflight.rules.engines import backends as engine_backends
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.resolve import UNRESOLVED, resolve
from attn_preflight.rules.knowledge.kv_dtypes import KV_DTYPES
from attn_preflight.rules.knowledge.kv_dtypes import SPELLINGS as KV_DTYPE_SPELLINGS

_SKIP, _FAIL = Status.SKIP, Status.FAIL
_NO_SOFTWARE = skipped("software not probed for a --gpu target: run on the machine or pass --facts")
_NO_GPU = unknown("compute capability unknown")
_NO_MODEL = skipped("needs the model (give --model)")


def default_backends(engine: str, release=None) -> list[str]:
    """Every general-purpose attention backend of the engine (not removed) as declared for an SGLang release
    (the newest verified one when None): the alternatives `check` offers and a grid's rows (attn_preflight.rules.core.grid)."""
    return engine_backends.offered(engine, release)


def _offered(engine: str, target: Target) -> list[str]:
    """default_backends as the target's release spells them: vLLM 0.10.x names some of them its own way
    (TRITON_ATTN_VLLM_V1, CUTLASS_MLA_VLLM_V1: vllm_legacy.spelled)."""
    names = default_backends(engine, backend_kb.release_of(target))
    version = target.versions.get("vllm") if engine == "vllm" else None
    if version is None:
        return names
    from attn_preflight.rules.engines.vllm import (
        legacy as vllm_legacy,  # an SGLang check never loads the vLLM declarations
    )

    return vllm_legacy.spelled(names, version)


def default_kv_dtypes(engine: str) -> list[str]:
    """Every KV-cache dtype the engine accepts (not removed), spellings of one dtype included."""
    return [kv for kv in kv_dtype_choices(engine) if not (kv in KV_DTYPES and KV_DTYPES[kv].removed)]


def _not_applicable(r: Rule, config: Config, target: Target) -> Optional[Outcome]:
    """The engine's answer when a rule's declared applicability does not hold, else None (run the check)."""
    if r.backends and not (r.backends & config.backends):
        return r.not_used
    if r.needs_gpu and target.cc is None:
        return _NO_GPU
    if r.needs_model and config.model is None:
        if config.model_missing:
            return needs_missing_model(config)
        return _NO_MODEL
    return None


def needs_missing_model(config: Config) -> Outcome:
    """The one answer of every rule whose outcome depends on a model named but never read (the renderers collapse
    these into one line)."""
    return unknown(f"{NEEDS_MODEL} {config.model_missing} (general-model-config)")


def _backend_of(config: Config) -> tuple:
    return (config.backends, config.draft_attention_backend, config.env.get("VLLM_ATTENTION_BACKEND"))


NEEDS_MODEL = "needs the model's config.json, not found for"
_ALL_FEATURES: Optional[frozenset[str]] = None


def _depends_on_missing_model(r: Rule, config: Config, target: Target, outcome: Outcome) -> bool:
    """Whether a rule's outcome on a config whose model was named but never read would change with the model's
    features (an MLA model, or one with every feature): then the outcome is a guess about the model."""
    global _ALL_FEATURES
    if _ALL_FEATURES is None:
        from attn_preflight.rules.core.models import FEATURES

        _ALL_FEATURES = frozenset(FEATURES)
    if outcome.status is Status.UNKNOWN and not config.backends and config.auto_backend.startswith(UNRESOLVED):
        return True  # the engine's default backend depends on the model (sglang resolve._default_without_model)
    for features in (frozenset({"mla"}), _ALL_FEATURES):
        if features <= config.extra_features:
            continue
        variant = replace(config, extra_features=config.extra_features | features)
        if (_not_applicable(r, variant, target) or r.check(variant, target)).status is not outcome.status:
            return True
    return False


class _Judgement:
    """One config's findings so far, in registry order: rules run up to `ran`, and stop early where only whether
    it fails is asked (Judge.fails) and a rule failed; the rest run when its findings are asked."""

    __slots__ = ("config", "found", "ran", "failed", "ordered")

    def __init__(self, config: Config):
        self.config = config
        self.found: list[Finding] = []
        self.ran = 0
        self.failed = False
        self.ordered: Optional[list[Finding]] = None  # every finding in display order, once all rules ran


class Judge:
    """Judges configs on one target. What the target alone settles is computed once per engine, the first time
    a config of it is judged (each version requirement's gate, and the finding of a rule the gate or the unknown
    software skips), and every config judged with it (the config, its alternatives, a grid's cells) reads it.
    Each distinct config is judged once: a failing config's fix re-checks, alternatives and corrected-command
    search meet the same configs again (rules are pure)."""

    __slots__ = ("target", "_plans", "_by_backends", "_judged")

    def __init__(self, target: Target):
        self.target = target.as_oldest_known()
        # by engine: each rule with the finding the target settles it with (None: run it) and its gate's note
        self._plans: dict[str, tuple[tuple[Rule, Optional[Finding], str], ...]] = {}
        # by (engine, the backends a config's phases use): the plan with the rules for other backends settled
        self._by_backends: dict[tuple[str, frozenset[str]], tuple[tuple[Rule, Optional[Finding], str], ...]] = {}
        self._judged: dict[str, _Judgement] = {}  # by repr(config): Config holds mappings, so it has no hash

    def gates(self, engine: str) -> Mapping[str, Gate]:
        """versions requirement -> its gate on the target, for every requirement of `engine`'s rules."""
        return {req.versions: req.gate(self.target) for req in registry(engine).requirements}

    def _plan(self, engine: str) -> tuple[tuple[Rule, Optional[Finding], str], ...]:
        if engine not in self._plans:
            gates, software = self.gates(engine), self.target.software_known
            plan: list[tuple[Rule, Optional[Finding], str]] = []
            for r in registry(engine).by_engine[engine]:
                applies, note = gates[r.versions]
                if not applies:
                    plan.append((r, Finding(r, skipped(note)), note))
                elif r.needs_software and not software:
                    plan.append((r, Finding(r, _NO_SOFTWARE), note))
                else:
                    plan.append((r, None, note))
            self._plans[engine] = tuple(plan)
        return self._plans[engine]

    def _plan_for(self, config: Config) -> tuple[tuple[Rule, Optional[Finding], str], ...]:
        """The engine's plan with each rule for backends the config does not use settled as not used: what
        _not_applicable answers first, the same for every config using the same backends (the corrected-command
        search judges dozens)."""
        key = (config.engine, config.backends)
        plan = self._by_backends.get(key)
        if plan is None:
            plan = self._by_backends[key] = tuple(
                (r, Finding(r, r.not_used, "" if r.not_used.status is Status.SKIP else note), note)
                if settled is None and r.backends and not (r.backends & config.backends)
                else (r, settled, note)
                for r, settled, note in self._plan(config.engine)
            )
        return plan

    def _judgement(self, config: Config) -> _Judgement:
        key = repr(config)
        judgement = self._judged.get(key)
        if judgement is None or judgement.config != config:
            judgement = self._judged[key] = _Judgement(config)
        return judgement

    def _run(self, judgement: _Judgement, until_failure: bool) -> None:
        """Runs the rules `judgement` has not run yet, in registry order; with `until_failure`, up to a failure."""
        config, target, append = judgement.config, self.target, judgement.found.append
        plan = self._plan_for(config)
        ran, failed, end = judgement.ran, judgement.failed, len(plan)
        try:  # the loop of every re-check: its state in locals, written back however it ends
            while ran < end and not (until_failure and failed):
                r, settled, note = plan[ran]
                ran += 1
                if settled is None:
                    outcome = _not_applicable(r, config, target) or r.check(config, target)
                    if (
                        config.model_missing
                        and not outcome.message.startswith(NEEDS_MODEL)
                        and r.id != "general-model-config"
                        and _depends_on_missing_model(r, config, target, outcome)
                    ):
                        outcome = needs_missing_model(config)
                    status = outcome.status
                    settled = Finding(r, outcome, "" if status is _SKIP else note)
                    failed = failed or status is _FAIL
                append(settled)
        finally:
            judgement.ran, judgement.failed = ran, failed

    def fails(self, config: Config) -> bool:
        """Whether a rule fails `config` (as resolved): its rules run only up to the first failure."""
        judgement = self._judgement(config)
        self._run(judgement, until_failure=True)
        return judgement.failed

    def findings(self, config: Config) -> list[Finding]:
        """Every rule of `config`'s engine judged on the target, in display order (`config` as resolved)."""
        judgement = self._judgement(config)
        if judgement.ordered is None:
            self._run(judgement, until_failure=False)
            judgement.ordered = sorted(judgement.found, key=display_order)
        return list(judgement.ordered)

    def evaluate(self, config: Config, alternatives: bool = True) -> Report:
        """See `evaluate`."""
        target = self.target
        resolved = resolve(config, target)
        findings = self.findings(resolved)
        verdict = verdict_of(findings)
        report = Report(config=resolved, target=target, findings=findings, verdict=verdict)
        if not alternatives or verdict is Status.PASS:
            return report
        # only what is to fix pays for the search and the flag tables
        from attn_preflight.rules.core.correction import correct, flag_moves
        from attn_preflight.rules.core.flag_tables import setting

        report.findings = self._working_fixes(config, findings)
        if config.model_missing:  # a model never read: no other backend or command is offered until it is
            return report
        candidates = self._candidates(config, resolved) if target.cc is not None else []
        report.alternatives = self._alternatives(config, candidates, findings)
        if verdict is Status.FAIL or flag_moves(config, report.findings):  # a failure, or a fix that works
            ranked = [a.setting for a in report.alternatives]
            rest = [setting(option, value) for option, value, _ in candidates]
            report.correction = correct(self, config, list(dict.fromkeys(ranked + rest)))
        return report

    def _working_fixes(self, config: Config, findings: list[Finding]) -> list[Finding]:
        """Each finding with only the fixes that work: applied to the config as given and re-checked, a fix must
        make its finding pass (or not apply) and add no failure. A fix that is not a flag change (an install, a
        download) cannot be re-checked here and is kept as it is."""
        failing = {f.rule_id for f in findings if f.status is Status.FAIL}
        if config.model_missing:  # a fix must not turn a rule into a guess about the model never read
            failing |= {f"unknown:{f.rule_id}" for f in findings if f.status is Status.UNKNOWN}
        out = []
        for finding in findings:
            if finding.status not in (Status.FAIL, Status.WARN) or not finding.fix:
                out.append(finding)
                continue
            kept = tuple(fix for fix in finding.fix if self._fix_works(config, finding.rule_id, fix, failing))
            out.append(
                finding
                if kept == finding.fix
                else Finding(finding.rule, finding.outcome._replace(fix=kept), finding.note)
            )
        return out

    def _fix_works(self, config: Config, rule_id: str, fix: str, failing: set[str]) -> bool:
        from attn_preflight.rules.core.flag_tables import apply_flags  # loaded once something is to fix

        fixed = apply_flags(config, fix)
        if fixed is None:
            return True
        if config.model_missing and _backend_of(fixed) != _backend_of(config):
            return False  # which backend serves a model never read is a guess (MLA or not, its head dims)
        for again in self.findings(resolve(fixed, self.target)):
            if again.rule_id == rule_id and again.status in (Status.FAIL, Status.WARN):
                return False  # the finding still stands
            if again.status is Status.FAIL and again.rule_id not in failing:
                return False  # the fix breaks something else
            if (
                config.model_missing
                and again.status is Status.UNKNOWN
                and f"unknown:{again.rule_id}" not in failing
                and again.outcome.message.startswith(NEEDS_MODEL)
            ):
                return False  # whether it works depends on the model never read
        return True

    def _candidates(self, config: Config, resolved: Config) -> list[tuple[str, str, Config]]:
        """Single changes of the config as given, each applied as the fix that makes it (apply_flags): each other
        backend (same KV dtype), each other KV dtype (same backend), in the engine's declaration order."""
        from attn_preflight.rules.core.flag_tables import apply_flags, setting  # loaded once something is to fix

        option = backend_option(config.engine, self.target)
        moves = [
            (option, name)
            for name in _offered(config.engine, self.target)
            if name not in resolved.backends | config.backends
        ] + [
            ("--kv-cache-dtype", kv)
            for kv in default_kv_dtypes(config.engine)
            if kv != config.kv_cache_dtype and kv not in KV_DTYPE_SPELLINGS
        ]
        applied = [(option, value, apply_flags(config, setting(option, value))) for option, value in moves]
        return [(option, value, candidate) for option, value, candidate in applied if candidate is not None]

    def _alternatives(
        self, config: Config, candidates: list[tuple[str, str, Config]], findings: list[Finding]
    ) -> list[Alternative]:
        """The candidates that would not fail, each with the verdict of what it changes: a warning or unknown
        the config has anyway (an unmodelled flag, an unknown version) is not the alternative's. A backend the
        engine would replace by another is not offered; a KV dtype that makes the engine replace the backend says
        what it becomes. Ranked: the engine's own choice for this GPU and model first,
        then passes before warnings, then changes the engine keeps before those it silently replaces (shown as
        what they become), then the engine's declaration order."""
        anyway = {(f.rule_id, f.status) for f in findings if f.status in (Status.WARN, Status.UNKNOWN)}
        runs = resolve(config, self.target).backend_label()
        out = []
        for option, value, candidate in candidates:
            judged = resolve(candidate, self.target)
            if option == backend_option(config.engine, self.target) and value not in judged.backends:
                continue  # the engine would run another backend: not an alternative that picks this one
            if self.fails(judged):
                continue
            verdict = verdict_from(f.status for f in self.findings(judged) if (f.rule_id, f.status) not in anyway)
            rewritten = judged.backend_label() != runs and any(k.endswith("attention_backend") for k in judged.rewrites)
            out.append(Alternative(option, value, verdict, judged.backend_label() if rewritten else ""))
        preferred = resolve(config.with_backend(None), self.target).backends  # what the engine picks itself
        order = {(a.option, a.value): i for i, a in enumerate(out)}
        out.sort(
            key=lambda a: (
                not a.picks_backend,  # backends first, then KV dtypes
                not (a.picks_backend and a.value in preferred),
                a.verdict is not Status.PASS,
                bool(a.becomes),
                order[(a.option, a.value)],
            )
        )
        return out


def evaluate(config: Config, target: Target, alternatives: bool = True) -> Report:
    """Every finding for `config` on `target`, the verdict, and (unless it passes) what would pass instead.

    `config` is judged as the engine resolves it (default backend, silent rewrites: attn_preflight.rules.engines.sglang.resolve); the
    report carries the resolved config. Alternatives change the config as given, one option at a time."""
    return Judge(target).evaluate(config, alternatives)
