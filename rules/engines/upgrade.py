"""Upgrade preflight: what changes for one config when its engine moves from one release to another, judged
from the per-release knowledge alone (the rules' version ranges, the capability eras, the release files'
flag and choice tables: rules/engines/<engine>/releases/<version>.json); no engine is imported.

`compare(config, target, engine, to_release)` judges the config at the target's pinned release and at
`to_release` and reports:
- the findings that change: new failures, failures the upgrade fixes, new warnings, warnings it clears;
- what the engine resolves differently: the attention backend (its default for this GPU and model), the
  paged-KV page size and the KV dtype the backends run (SGLang);
- the launch flags the config gives whose reading changes: gone from the new release's parser (argparse would
  refuse them; where another option sets the same setting it is named), read as another option there
  (argparse's abbreviation), and choice values the new release no longer lists.
The verdict that counts is the new release's: `fails` is true when the config fails there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Report, Status
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.target import Target


@dataclass(frozen=True)
class Resolved:
    """One setting the engine resolves for this config, at each release."""

    setting: str  # "attention backend", "page size", "KV dtype"
    before: str
    after: str


@dataclass(frozen=True)
class FlagChange:
    flag: str  # as the config gives it
    change: str  # "removed", "read as another option", "choice removed"
    detail: str


@dataclass(frozen=True)
class Upgrade:
    engine: str
    from_release: str
    to_release: str
    before: Report
    after: Report
    new_failures: tuple[str, ...]
    fixed: tuple[str, ...]
    new_warnings: tuple[str, ...]
    cleared_warnings: tuple[str, ...]
    resolved: tuple[Resolved, ...]  # only the settings that differ
    flags: tuple[FlagChange, ...]

    @property
    def fails(self) -> bool:
        return self.after.verdict is Status.FAIL

    @property
    def changes(self) -> bool:
        return bool(
            self.new_failures
            or self.fixed
            or self.new_warnings
            or self.cleared_warnings
            or self.resolved
            or self.flags
            or self.before.verdict is not self.after.verdict
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "from": self.from_release,
            "to": self.to_release,
            "verdict_before": self.before.verdict.value,
            "verdict_after": self.after.verdict.value,
            "new_failures": list(self.new_failures),
            "fixed_failures": list(self.fixed),
            "new_warnings": list(self.new_warnings),
            "cleared_warnings": list(self.cleared_warnings),
            "resolved": [{"setting": r.setting, "before": r.before, "after": r.after} for r in self.resolved],
            "flags": [{"flag": f.flag, "change": f.change, "detail": f.detail} for f in self.flags],
        }


def known_release(engine: str, version: str) -> str:
    """`version` if the project has its release file, else RulesInputError naming the known ones."""
    from attn_preflight.rules.knowledge.flags import releases

    known = releases(engine)
    if version not in known:
        raise RulesInputError(
            f"--upgrade-to {version}: no {engine} release file for it (known: {known[0]} ... {known[-1]})",
            word=version,
            choices=known,
        )
    return version


def compare(config: Config, target: Target, to_release: str) -> Upgrade:
    """The config judged at the target's pinned release of its engine and at `to_release` (both known)."""
    from attn_preflight.rules.core.judge import evaluate

    engine = config.engine
    from_release = target.versions.get(engine)
    if from_release is None:
        raise RulesInputError(f"--upgrade-to needs the release upgraded from: give --engine-version {engine}==VER")
    from attn_preflight.rules.knowledge.flags import table_release

    known_release(engine, to_release)
    # an installed release without a file of its own (a .post, one newer than the newest known) reads the flag
    # and choice tables of the newest release at or before it, as the checks do
    tables_from = table_release(engine, str(from_release)) or known_release(engine, str(from_release))
    target_to = target.with_engine_versions({engine: to_release})
    before, after = evaluate(config, target), evaluate(config, target_to)
    failing = [{f.rule_id for f in r.findings if f.status is Status.FAIL} for r in (before, after)]
    warning = [{f.rule_id for f in r.findings if f.status is Status.WARN} for r in (before, after)]
    return Upgrade(
        engine=engine,
        from_release=str(from_release),
        to_release=to_release,
        before=before,
        after=after,
        new_failures=_ordered(after, failing[1] - failing[0]),
        fixed=_ordered(before, failing[0] - failing[1]),
        new_warnings=_ordered(after, warning[1] - warning[0]),
        cleared_warnings=_ordered(before, warning[0] - warning[1]),
        resolved=tuple(
            Resolved(setting, a, b)
            for (setting, a), (_, b) in zip(_resolved(before.config, target), _resolved(after.config, target_to))
            if a != b
        ),
        flags=tuple(_flag_changes(config, tables_from, to_release)),
    )


def _ordered(report: Report, ids: set[str]) -> tuple[str, ...]:
    return tuple(f.rule_id for f in report.findings if f.rule_id in ids)


def _resolved(config: Config, target: Target) -> list[tuple[str, str]]:
    """What the engine runs for the (resolved) config on the target's release."""
    out = [("attention backend", config.backend_label())]
    if config.engine == "sglang":
        from attn_preflight.rules.checks.common import backend_kv_dtype
        from attn_preflight.rules.engines.sglang.resolve import effective_page_size

        page = effective_page_size(config, target)
        out.append(("page size", str(page) if page is not None else "unknown"))
        out.append(("KV dtype", backend_kv_dtype(config, target)))
    return out


def _given_flags(config: Config) -> list[tuple[str, Optional[str]]]:
    """The options the config gives, with the value of those the release files list choices for: a pasted
    command's own tokens, else the flags `check` was given in SGLang's (or vLLM's) spelling."""
    values = {
        "--attention-backend": config.attention_backend,
        "--prefill-attention-backend": config.prefill_attention_backend,
        "--decode-attention-backend": config.decode_attention_backend,
        "--kv-cache-dtype": None if config.kv_cache_dtype == "auto" else config.kv_cache_dtype,
        "--speculative-algorithm": config.speculative_algorithm,
    }
    if config.options:
        return [(option, values.get(option)) for option in dict.fromkeys(config.options)]
    given: list[tuple[str, Optional[str]]] = [(option, value) for option, value in values.items() if value]
    if config.page_size is not None:
        given.append(("--page-size", None))
    if config.deterministic:
        given.append(("--enable-deterministic-inference", None))
    return given


def _flag_changes(config: Config, from_release: str, to_release: str) -> list[FlagChange]:
    from attn_preflight.rules.engines.releases import release
    from attn_preflight.rules.knowledge.flags import FlagError, flag_table

    engine = config.engine
    old, new = flag_table(engine, from_release), flag_table(engine, to_release)
    new_choices = release(engine, to_release).get("choices") or {}
    old_choices = release(engine, from_release).get("choices") or {}
    out: list[FlagChange] = []
    for option, value in _given_flags(config):
        if not option.startswith("-"):
            continue
        try:
            was = old.resolve(option).option
        except FlagError:
            continue  # refused before the upgrade as well: general-flags-known says so
        try:
            now = new.resolve(option).option
        except FlagError as err:
            dest = old.options[was].dest
            same = sorted(o for o, spec in new.options.items() if spec.dest == dest and o.startswith("--"))
            detail = f"{engine} {to_release}'s parser refuses it ({err})"
            if same:
                detail += f"; {', '.join(same)} sets the same setting ({dest}) there"
            out.append(FlagChange(option, "removed", detail))
            continue
        if now != was:
            out.append(FlagChange(option, "read as another option", f"{engine} {to_release} reads it as {now}"))
        listed = (new_choices.get(now) or {}).get("choices")
        before = (old_choices.get(was) or {}).get("choices")
        if value is not None and listed is not None and value not in listed and (before is None or value in before):
            out.append(
                FlagChange(f"{option} {value}", "choice removed", f"{engine} {to_release} lists {', '.join(listed)}")
            )
    return out
