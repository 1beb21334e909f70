"""The rule registry, frozen: `registry(engine)` imports the rule modules that engine's check needs (each `@rule`
registers itself with attn_preflight.rules.core.engine; attn_preflight.rules.checks.MODULES names each module's engine)
and indexes their rules, once per engine; `registry()` holds every rule; nothing adds to an index later. A
target's version gates are computed once per evaluation from an index's distinct requirements
(attn_preflight.rules.core.judge.Judge).
"""

import functools
import importlib
from types import MappingProxyType
from typing import Iterable, Mapping, NamedTuple, Optional

from attn_preflight.rules.checks import MODULES
from attn_preflight.rules.core.engine import Rule, registered_rules
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import VersionRange
from attn_preflight.rules.knowledge import NEWEST_KNOWN

_ORDER = {module: position for position, module in enumerate(MODULES)}


class Gate(NamedTuple):
    applies: bool
    note: str  # why it does not apply, or which behaviour was assumed ("" when the target's version is in range)


class VersionGate(NamedTuple):
    """One distinct `versions=` of the rules ("sglang>=0.5.20"), with its gate where the version is not installed."""

    versions: str
    package: str
    version_range: VersionRange
    unknown: Gate  # software not probed: newest known behaviour
    absent: Gate  # software probed, package not installed: newest known behaviour
    unreadable: Gate  # installed, its version cannot be read: newest known behaviour (general-engine-version: unknown)

    @classmethod
    def of(cls, r: Rule) -> "VersionGate":
        if not r.package:  # every release
            return cls(r.versions, "", r.version_range, Gate(True, ""), Gate(True, ""), Gate(True, ""))
        newest = NEWEST_KNOWN.get(r.package)
        judged = f" ({r.package} {newest})" if newest else ""
        holds = not newest or r.version_range.contains(newest)

        def gate(state: str) -> Gate:
            note = f"{r.package} {state}: newest known behaviour{judged} applied"
            return Gate(True, note) if holds else Gate(False, f"holds for {r.versions}; {note}")

        return cls(
            r.versions,
            r.package,
            r.version_range,
            gate("version unknown"),
            gate("not installed on the target"),
            gate("version unreadable"),
        )

    def gate(self, target: Target) -> Gate:
        installed = target.versions.get(self.package)
        if installed is None:
            if self.package in target.unreadable_versions:
                return self.unreadable
            return self.absent if target.software_known else self.unknown
        if self.version_range.contains(installed):
            return Gate(True, "")
        return Gate(False, f"holds for {self.versions}; target has {self.package} {installed}")


class RuleIndex(NamedTuple):
    """Every rule, frozen once: by id, the rules each engine runs (registry order), and the distinct version
    requirements (a target's gates judge each requirement once, not each rule)."""

    by_id: Mapping[str, Rule]
    by_engine: Mapping[str, tuple[Rule, ...]]
    requirements: tuple[VersionGate, ...]

    @classmethod
    def build(cls, rules: Iterable[Rule]) -> "RuleIndex":
        rules = tuple(rules)
        requirements: dict[str, VersionGate] = {}
        for r in rules:
            if r.versions not in requirements:
                requirements[r.versions] = VersionGate.of(r)
        return cls(
            by_id=MappingProxyType({r.id: r for r in rules}),
            by_engine=MappingProxyType(
                {e: tuple(r for r in rules if r.engine in (e, "any")) for e in ("sglang", "vllm")}
            ),
            requirements=tuple(requirements.values()),
        )


@functools.cache
def registry(engine: Optional[str] = None) -> RuleIndex:
    """The frozen index of every rule of `engine` and of either engine ("any"); every rule when None. In MODULES
    order, then each module's own, whichever engine's modules were imported first."""
    for module, for_engine in MODULES.items():
        if engine is None or for_engine in (engine, "any"):
            importlib.import_module(module)
    wanted = (engine, "any") if engine else ("sglang", "vllm", "any")
    rules = [r for r in registered_rules() if r.engine in wanted]
    return RuleIndex.build(sorted(rules, key=lambda r: _ORDER[r.check.__module__]))  # sorted() keeps ties' order


def all_rules() -> list[Rule]:
    return list(registry().by_id.values())


def get_rule(rule_id: str) -> Optional[Rule]:
    return registry().by_id.get(rule_id)


def rule_ids() -> list[str]:
    return list(registry().by_id)
