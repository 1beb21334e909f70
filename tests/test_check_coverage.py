"""The coverage table of SGLang's attention checks (tests/fixtures/sglang-0.5.23-check-coverage.json) holds:
every rule it names exists, every resolution step it names is in rules/resolve.py, and a check nothing covers
is listed as uncovered, with why, rather than left out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rules.resolve
from rules.engine import all_rules

TABLE = json.loads((Path(__file__).resolve().parent / "fixtures" / "sglang-0.5.23-check-coverage.json").read_text())
CHECKS = TABLE["checks"]
RULE_IDS = {r.id for r in all_rules()}


@pytest.mark.parametrize("row", CHECKS, ids=lambda row: row["row"])
def test_each_check_is_covered_or_listed_as_uncovered(row):
    assert re.match(r"sglang/\S+\.py", row["check"]), "a check names the upstream file (and lines) it is"
    covered = row.get("rules", []) or row.get("resolve")
    assert bool(covered) != bool(row.get("uncovered")), "either covered (rules / resolve) or uncovered, not both"
    assert sorted(set(row.get("rules", [])) - RULE_IDS) == [], "a rule named as coverage exists"
    if "resolve" in row:
        assert callable(getattr(rules.resolve, row["resolve"], None)), f"rules/resolve.py has {row['resolve']}"


def test_rows_are_unique():
    rows = [row["row"] for row in CHECKS]
    assert len(rows) == len(set(rows))
