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


def test_each_sglang_release_file_carries_its_capability_deltas_and_the_index_folds_them():
    """One home per fact (issue 19): an older release's backend facts are its file's capability_deltas, which
    capability_deltas.json gathers (bench/release_files.py) and capabilities.py folds into each backend's eras."""
    import release_files

    from attn_preflight.rules.engines.releases import capability_deltas, index
    from attn_preflight.rules.engines.sglang import capabilities
    from attn_preflight.rules.engines.sglang.capabilities import SGLANG_BACKENDS

    files = {release: release_files.read("sglang", release) for release in release_files.releases("sglang")}
    assert all(isinstance(content.get("capability_deltas"), list) for content in files.values())
    written = {release: c["capability_deltas"] for release, c in reversed(files.items()) if c["capability_deltas"]}
    assert capability_deltas("sglang") == written, "capability_deltas.json is stale: run bench/release_files.py"
    assert index("sglang")["with_deltas"] == list(reversed(written))
    named: dict[str, int] = {}
    for entries in written.values():
        for delta in entries:
            named[delta["backend"]] = named.get(delta["backend"], 0) + 1
    assert {name: len(capabilities.eras_of(name)) for name in SGLANG_BACKENDS if capabilities.eras_of(name)} == named


def test_a_capability_delta_reaches_the_releases_before_it_only(monkeypatch):
    from attn_preflight.rules.engines.sglang import capabilities

    delta = {"backend": "fa3", "since": "0.5.20", "facts": {"archs": [9]}, "source": "{OVERRIDES} (a test)"}
    folded = capabilities._fold({"0.5.22": [delta]})
    monkeypatch.setitem(
        capabilities.SGLANG_BACKENDS, "fa3", capabilities.SGLANG_BACKENDS["fa3"]._replace(eras=folded["fa3"])
    )
    assert capabilities.declaration("fa3", "0.5.21").archs == frozenset({9})
    assert capabilities.declaration("fa3", "0.5.19").archs == capabilities.declaration("fa3", "0.5.22").archs
    assert capabilities.declaration("fa3", "0.5.22").archs == frozenset({8, 9})
    assert folded["fa3"][-1].source == f"{capabilities.OVERRIDES} (a test)"


def test_each_vllm_release_file_carries_its_capability_deltas():
    """vLLM's older backend values are the release files' capability deltas, one entry per field, in the file of
    the first release with today's value; changes.py folds capability_deltas.json's copy."""
    import release_files

    from attn_preflight.rules.engines.releases import capability_deltas, index
    from attn_preflight.rules.engines.vllm import changes

    files = {release: release_files.read("vllm", release) for release in release_files.releases("vllm")}
    assert all(isinstance(content.get("capability_deltas"), list) for content in files.values())
    written = {release: c["capability_deltas"] for release, c in reversed(files.items()) if c["capability_deltas"]}
    assert capability_deltas("vllm") == written, "capability_deltas.json is stale: run bench/release_files.py"
    assert index("vllm")["with_deltas"] == list(reversed(written))
    folded = changes.changes()
    assert len(folded) == sum(map(len, written.values()))
    assert {(c.backend, c.field, c.until) for c in folded} == {
        (d["backend"], d["field"], release) for release, entries in written.items() for d in entries
    }


def test_a_vllm_capability_delta_reaches_its_releases_only(monkeypatch):
    from attn_preflight.rules.engines.vllm import changes

    delta = {"backend": "FLASH_ATTN", "field": "sliding_window", "value": False, "since": "0.27.0", "source": "test"}
    monkeypatch.setattr(changes, "changes", lambda: changes.fold({"0.29.0": [delta]}))
    assert changes.backend_at("FLASH_ATTN", "0.28.0").sliding_window is False
    assert changes.backend_at("FLASH_ATTN", "0.29.0").sliding_window is True
    assert changes.backend_at("FLASH_ATTN", "0.26.0").sliding_window is True
