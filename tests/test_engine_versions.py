"""Versions told plainly (issue 10, part 4): a release older than the oldest the rules were checked against, or
newer than the newest, is named; newer is a warning, older or unreadable is unknown. Never a bare PASS of skips.
Rules keep their own ranges (a range's start can be where a behaviour begins: see OLDEST_KNOWN)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import check_json, finding

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def check(*argv):
    return check_json(argv)


def test_an_older_release_is_unknown():
    run, report = check("--gpu", "H100", "--model", "llama-3.1-8b", "--engine-version", "sglang==0.4.6.post5")
    assert run.code == 0 and report["verdict"] == "warn"
    version = finding(report, "general-engine-version")
    assert version["status"] == "unknown" and "sglang 0.4.6.post5 is older than 0.5.5" in version["message"]
    assert "holds for sglang>=0.5.20; target has sglang 0.4.6.post5" in finding(report, "fa3-arch")["message"]


def test_a_newer_release_is_warned_about():
    run, report = check("--gpu", "H100", "--model", "llama-3.1-8b", "--engine-version", "sglang==0.9.0")
    assert run.code == 0 and report["verdict"] == "warn"
    assert "newer than 0.5.23" in finding(report, "general-engine-version")["message"]


def test_an_unreadable_version_in_a_report_is_unknown(tmp_path):
    facts = json.loads((FIXTURES / "probe-cpu-ci.json").read_text())
    sglang = next(lib for lib in facts["libraries"] if lib["key"] == "sglang")
    sglang["distributions"], sglang["version"] = {"sglang": "garbage"}, "garbage"
    path = tmp_path / "garbage.json"
    path.write_text(json.dumps(facts))
    run, report = check("--facts", str(path), "--model", "llama-3.1-8b", "--attention-backend", "triton")
    version = finding(report, "general-engine-version")
    assert version["status"] == "unknown" and "'garbage' cannot be read" in version["message"]
    assert report["verdict"] != "pass"
