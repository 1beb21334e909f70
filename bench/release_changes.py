"""What a release changes, derived from the release files and the rules: its flags, choices and check sites against
the release before it (rules/engines/<engine>/releases/), the rules whose range starts or ends there, and the
capability deltas its file holds, with the backend declarations that differ once they are folded
(rules/engines/sglang/capabilities.py, rules/engines/vllm/changes.py).

    python3 bench/release_changes.py sglang 0.5.23
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

import release_files
from packaging.version import Version

sys.path.insert(0, str(release_files.ROOT))


def _signature(site: dict) -> tuple:
    return site["file"], site["function"], site["kind"], site["message"]


def changes(engine: str, release: str) -> list[str]:
    names = release_files.releases(engine)
    if release not in names:
        raise SystemExit(f"{engine} {release}: no release file")
    new = release_files.read(engine, release)
    if names.index(release) == 0:
        return [f"{engine} {release} is the oldest release read: {len(new['flags'])} flags"]
    previous = names[names.index(release) - 1]
    old = release_files.read(engine, previous)
    lines = [f"{engine} {release} against {previous}:"]
    added = sorted(set(new["flags"]) - set(old["flags"]))
    removed = sorted(set(old["flags"]) - set(new["flags"]))
    changed = sorted(o for o in set(new["flags"]) & set(old["flags"]) if new["flags"][o] != old["flags"][o])
    lines += [f"  flag added: {o} {new['flags'][o]}" for o in added]
    lines += [f"  flag removed: {o}" for o in removed]
    lines += [f"  flag changed: {o} {old['flags'][o]} -> {new['flags'][o]}" for o in changed]
    if new["allow_abbrev"] != old["allow_abbrev"]:
        lines.append(f"  allow_abbrev: {old['allow_abbrev']} -> {new['allow_abbrev']}")
    lines += _choice_changes(old.get("choices"), new.get("choices"))
    lines += _site_changes(engine, previous, release)
    lines += _rule_changes(engine, previous, release)
    lines += _capability_deltas(new)
    lines += _capability_changes(engine, previous, release)
    return lines if len(lines) > 1 else [*lines, "  nothing read differs"]


def _choice_changes(old: dict | None, new: dict | None) -> list[str]:
    if old is None or new is None:
        return [] if old is new else ["  choices: read in one of the two releases only"]
    lines = []
    for flag in sorted(set(old) | set(new)):
        before, after = (old.get(flag) or {}).get("choices"), (new.get(flag) or {}).get("choices")
        if before is not None and after is not None:
            lines += [f"  {flag} accepts {value}" for value in sorted(set(after) - set(before))]
            lines += [f"  {flag} no longer accepts {value}" for value in sorted(set(before) - set(after))]
        elif before != after or (flag in old) != (flag in new):
            lines.append(f"  {flag} choices: {_values(old, flag)} -> {_values(new, flag)}")
        if flag in old and flag in new and old[flag]["file"] != new[flag]["file"]:
            lines.append(f"  {flag} moved: {old[flag]['file']} -> {new[flag]['file']}")
    return lines


def _rule_changes(engine: str, previous: str, release: str) -> list[str]:
    """Rules (hand-written, rows, declared gates) of the engine that hold at one of the two releases only."""
    from attn_preflight.rules.core.registry import registry

    lines = []
    for rule in registry(engine).by_id.values():
        if rule.package != engine:
            continue
        before, after = rule.version_range.contains(previous), rule.version_range.contains(release)
        if before != after:
            kind = "generated" if rule.generated else "hand-written"
            lines.append(f"  rule {'starts' if after else 'ends'}: {rule.id} ({rule.versions}, {kind})")
    return sorted(lines)


def _capability_deltas(content: dict) -> list[str]:
    """The release file's own capability deltas: each backend whose facts this release changed, as written."""
    lines = []
    for delta in content.get("capability_deltas", ()):
        since = f" (from {delta['since']})" if delta.get("since") else ""
        if "field" in delta:  # vLLM: one field of one backend
            value = json.dumps(delta["value"])
            lines.append(f"  capability delta: {delta['backend']}.{delta['field']} before this release{since}: {value}")
            continue
        before = ", ".join(f"{fact}={json.dumps(value)}" for fact, value in delta.get("facts", {}).items())
        if delta.get("drop_features"):
            before = ", ".join(filter(None, [before, f"without {'/'.join(delta['drop_features'])}"]))
        lines.append(f"  capability delta: {delta['backend']} before this release{since}: {before}")
    return lines


def _capability_changes(engine: str, previous: str, release: str) -> list[str]:
    """Each backend declaration fact that differs between the two releases."""
    if engine == "vllm":
        return _vllm_capability_changes(previous, release)
    from attn_preflight.rules.engines.sglang.capabilities import declarations

    old, new = declarations(Version(previous)), declarations(Version(release))
    lines = [f"  backend added: {name}" for name in sorted(set(new) - set(old))]
    lines += [f"  backend removed: {name}" for name in sorted(set(old) - set(new))]
    for name in sorted(set(old) & set(new)):
        for fact in old[name]._fields:
            if fact != "eras" and getattr(old[name], fact) != getattr(new[name], fact):
                lines.append(f"  {name}.{fact}: {getattr(old[name], fact)} -> {getattr(new[name], fact)}")
    return lines


def _vllm_capability_changes(previous: str, release: str) -> list[str]:
    from dataclasses import fields

    from attn_preflight.rules.engines.vllm.capabilities import RELEASES
    from attn_preflight.rules.engines.vllm.changes import backend_at

    lines = []
    for name in sorted({name for declared in RELEASES for name in declared.backends}):
        old, new = backend_at(name, previous), backend_at(name, release)
        if old is None or new is None:
            lines += [f"  backend {'added' if old is None else 'removed'}: {name}"] if old is not new else []
            continue
        for fact in fields(old):
            if fact.name not in ("sources", "notes") and getattr(old, fact.name) != getattr(new, fact.name):
                lines.append(f"  {name}.{fact.name}: {getattr(old, fact.name)} -> {getattr(new, fact.name)}")
    return lines


def _values(choices: dict, flag: str) -> str:
    if flag not in choices:
        return "no such flag"
    return "any value" if choices[flag]["choices"] is None else ", ".join(choices[flag]["choices"])


def _site_changes(engine: str, previous: str, release: str) -> list[str]:
    if engine != "sglang":
        return []
    new, old = release_files.read_census(release), release_files.read_census(previous)
    if new is None:
        return [] if old is None else ["  check sites: no census taken (bench/check_sites.py)"]
    before = Counter(_signature(s) for s in old["sites"]) if old else Counter()
    lines = []
    for site in new["sites"]:
        if before[_signature(site)]:
            before[_signature(site)] -= 1
        elif old:
            lines.append(f"  new check site: {site['file']}:{site['line']} {site['function']}: {site['message'][:90]}")
    lines += [f"  check site gone: {file} {function}: {message[:90]}" for (file, function, _, message) in +before]
    uncovered = [s for s in new["sites"] if not s["covered_by"]]
    lines += [f"  not yet covered: {s['file']}:{s['line']} {s['message'][:90]}" for s in uncovered]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=("sglang", "vllm"))
    parser.add_argument("release")
    args = parser.parse_args()
    print("\n".join(changes(args.engine, args.release)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
