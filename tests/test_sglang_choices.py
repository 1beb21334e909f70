"""The choices of rules/engines/sglang/releases/<version>.json against the world: the sglang wheels it was read from, and the other
knowledge files that name the same values (backends.py, kv_dtypes.py, the config's input checks)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from attn_preflight.rules.core.validation import SGLANG_SPECULATIVE_ALGORITHMS
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang.capabilities import MM_ATTENTION_BACKENDS, SGLANG_BACKENDS, declaration
from attn_preflight.rules.knowledge import NEWEST_KNOWN, OLDEST_KNOWN
from attn_preflight.rules.knowledge.kv_dtypes import KV_DTYPES

ROOT = Path(__file__).resolve().parent.parent
NEWEST = NEWEST_KNOWN["sglang"]


def _union(flag: str) -> set[str]:
    return {value for release in choices_kb.releases() for value in choices_kb.accepted(release, flag) or ()}


def test_the_releases_run_from_the_oldest_to_the_newest_known():
    releases = choices_kb.releases()
    assert releases[0] == OLDEST_KNOWN["sglang"] and releases[-1] == NEWEST


def test_newest_backend_choices_are_the_declared_backends_not_removed():
    listed = choices_kb.accepted(NEWEST, "--attention-backend")
    assert listed == {name for name, info in SGLANG_BACKENDS.items() if not info.removed}


@pytest.mark.parametrize("release", choices_kb.releases())
def test_a_backend_declared_removed_in_a_release_is_not_among_its_choices(release):
    listed = choices_kb.accepted(release, "--attention-backend")
    removed = {name for name in SGLANG_BACKENDS if declaration(name, release).removed}
    assert not removed & listed, f"sglang {release} lists {sorted(removed & listed)}, declared removed"


def test_newest_kv_choices_are_the_kv_dtypes_not_removed():
    assert choices_kb.accepted(NEWEST, "--kv-cache-dtype") == {n for n, d in KV_DTYPES.items() if not d.removed}


def test_every_value_some_release_lists_is_one_the_config_accepts():
    # else `check --engine-version` of that release would refuse as bad input what its argparse takes
    assert _union("--kv-cache-dtype") <= set(KV_DTYPES)
    assert _union("--mm-attention-backend") <= set(MM_ATTENTION_BACKENDS)
    assert _union("--speculative-algorithm") <= set(SGLANG_SPECULATIVE_ALGORITHMS)


def test_fa4_is_a_choice_from_0_5_3():
    first = next(r for r in choices_kb.releases() if "fa4" in choices_kb.accepted(r, "--attention-backend"))
    assert first == "0.5.3"


def _extractor():
    sys.path.insert(0, str(ROOT / "bench"))  # its own imports: release_files, wheel_ranges
    spec = importlib.util.spec_from_file_location("sglang_choices_bench", ROOT / "bench" / "sglang_choices.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("release", ["0.5.1", "0.5.12", "0.5.14", NEWEST])
def test_the_table_is_what_the_wheel_says(release):
    # 0.5.1: a list local to add_cli_args; 0.5.12: --speculative-algorithm open; 0.5.14: dataclass fields;
    # the newest: arg_groups/fields and choices.py
    bench = _extractor()
    from wheel_ranges import cache_root  # bench/, on the path from _extractor

    wheel = cache_root() / "sglang" / "extracted" / release
    if not wheel.is_dir():
        pytest.skip(f"sglang {release}'s files are not in the wheel cache (bench/sglang_choices.py {release})")
    extracted = bench.release_choices(wheel)
    assert {flag: entry["choices"] for flag, entry in extracted.items()} == {
        flag: sorted(choices_kb.accepted(release, flag) or ()) or None for flag in extracted
    }
    assert all(choices_kb.defined_in(release, flag) == entry["file"] for flag, entry in extracted.items())
