"""The coverage table of SGLang's attention checks (tests/fixtures/sglang-0.5.23-check-coverage.json) holds:
every rule it names exists, every resolution step it names is in rules/engines/sglang/resolve.py, a check nothing covers is
listed as uncovered, with why, rather than left out, and every raise / assert / declared rewrite of the files
bench/check_sites.py audits (its census, rules/engines/sglang/releases/0.5.23.sites.json) lies in a row, as the
census records."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

import attn_preflight.rules.engines.sglang.resolve
from attn_preflight.rules.core.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
TABLE = json.loads((ROOT / "tests" / "fixtures" / "sglang-0.5.23-check-coverage.json").read_text())
SITES = json.loads((ROOT / "rules" / "engines" / "sglang" / "releases" / "0.5.23.sites.json").read_text())
CHECKS = TABLE["checks"]
RULE_IDS = {r.id for r in all_rules()}


@pytest.mark.parametrize("row", CHECKS, ids=lambda row: row["row"])
def test_each_check_is_covered_or_listed_as_uncovered(row):
    assert re.match(r"sglang/\S+\.py", row["check"]), "a check names the upstream file (and lines) it is"
    covered = row.get("rules", []) or row.get("resolve")
    assert bool(covered) != bool(row.get("uncovered")), "either covered (rules / resolve) or uncovered, not both"
    assert sorted(set(row.get("rules", [])) - RULE_IDS) == [], "a rule named as coverage exists"
    if "resolve" in row:
        assert callable(getattr(attn_preflight.rules.engines.sglang.resolve, row["resolve"], None)), (
            f"rules/engines/sglang/resolve.py has {row['resolve']}"
        )


def test_rows_are_unique():
    rows = [row["row"] for row in CHECKS]
    assert len(rows) == len(set(rows))


def _check_sites():
    sys.path.insert(0, str(ROOT / "bench"))  # its own imports: release_files, wheel_ranges
    spec = importlib.util.spec_from_file_location("check_sites_bench", ROOT / "bench" / "check_sites.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_audited_site_lies_in_a_row():
    """A raise, assert or rewrite of an audited file that no row's lines hold (nor not_attention excuses) is a
    check the table misses."""
    assert SITES["sites"], "the listing holds the audited files' sites"
    assert _check_sites().uncovered(TABLE, SITES["sites"]) == []


def test_a_site_outside_every_row_is_reported():
    """Taking a row out leaves its sites uncovered: the containment test above can fail."""
    table = copy.deepcopy(TABLE)
    table["checks"] = [row for row in table["checks"] if row["row"] != "N9g"]
    missing = _check_sites().uncovered(table, SITES["sites"])
    assert [site["line"] for site in missing] == [254, 260, 266]
    assert all("enable-kv-cache-sharding for" in site["message"] for site in missing)


def test_row_lines_read_ranges_lists_and_sibling_files():
    lines = _check_sites().row_lines("sglang/srt/arg_groups/model_hook.py:808 + overrides.py:1775-1777,1790")
    assert lines == {
        "sglang/srt/arg_groups/model_hook.py": {808},
        "sglang/srt/arg_groups/overrides.py": {1775, 1776, 1777, 1790},
    }


def test_the_census_records_the_coverage_the_table_gives():
    """covered_by of each site is what the table's rows (or a not_attention entry) hold; none is left uncovered."""
    bench = _check_sites()
    assert bench.with_coverage(SITES["sites"], TABLE, []) == SITES["sites"]
    assert bench.not_yet_covered(SITES["sites"]) == []


def test_a_later_release_carries_coverage_and_lists_a_new_site_as_not_yet_covered():
    bench = _check_sites()
    moved = [{**site, "line": site["line"] + 3, "covered_by": []} for site in SITES["sites"][:2]]
    added = {**moved[0], "message": "a check 0.5.24 adds", "covered_by": []}
    found = bench.with_coverage([*moved, added], None, SITES["sites"])
    assert [site["covered_by"] for site in found] == [
        SITES["sites"][0]["covered_by"],
        SITES["sites"][1]["covered_by"],
        [],
    ]


def test_the_census_is_what_the_wheel_says():
    bench = _check_sites()
    from wheel_ranges import cache_root  # bench/, on the path from _check_sites

    extracted = cache_root() / "sglang" / "extracted" / "0.5.23"
    if not extracted.is_dir():
        pytest.skip("sglang 0.5.23's files are not in the wheel cache (bench/new_release.py sglang 0.5.23)")
    listing = bench.listing(extracted)
    assert listing["audited"] == SITES["audited"]
    assert listing["sites"] == [{k: v for k, v in site.items() if k != "covered_by"} for site in SITES["sites"]]


def test_each_not_attention_entry_excuses_a_listed_site_and_says_why():
    """An entry's lines hold at least one raise / assert / rewrite of the listing; a stale one would excuse nothing."""
    row_lines = _check_sites().row_lines
    for entry in TABLE["not_attention"]:
        lines = row_lines(entry["check"])
        assert any(site["line"] in lines.get(site["file"], ()) for site in SITES["sites"]), entry
        assert entry["reason"].strip(), entry
