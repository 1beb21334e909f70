"""bench/release_changes.py: what a release changes, derived from the release files, the rules' ranges and the
SGLang declarations (issue 19: one answer to "what does release X change?")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))  # its own imports: release_files

import release_changes  # noqa: E402

from attn_preflight.rules.core.registry import registry  # noqa: E402
from attn_preflight.rules.engines.sglang.capabilities import declarations  # noqa: E402


def test_a_release_lists_the_rules_its_range_starts_and_ends():
    lines = release_changes.changes("sglang", "0.5.23")
    started = {line.split(": ")[1].split(" ")[0] for line in lines if line.startswith("  rule starts:")}
    expected = {
        r.id
        for r in registry("sglang").by_id.values()
        if r.package == "sglang" and r.version_range.contains("0.5.23") and not r.version_range.contains("0.5.22")
    }
    assert started == expected and expected


def test_a_release_lists_each_declaration_fact_that_changed():
    lines = release_changes.changes("sglang", "0.5.23")
    old, new = declarations("0.5.22"), declarations("0.5.23")
    changed = {f"{n}.{f}" for n in new if n in old for f in new[n]._fields if getattr(old[n], f) != getattr(new[n], f)}
    assert changed and all(any(line.startswith(f"  {fact}:") for line in lines) for fact in changed)
