"""Versions told plainly (issue 10, part 4): a release older than the oldest the rules were checked against, or
newer than the newest, is named and warned about; an older one is judged with the oldest known behaviour
(Target.as_oldest_known), newer with the newest; unreadable is unknown. Never a bare PASS of skips."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import check_json, finding

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def check(*argv):
    return check_json(argv)


def test_an_older_release_is_judged_as_the_oldest_known_and_warned_about():
    argv = ("--gpu", "B200", "--model", "llama-3.1-8b", "--attention-backend", "fa3")
    run, report = check(*argv, "--engine-version", "sglang==0.4.6.post5")
    version = finding(report, "general-engine-version")
    assert version["status"] == "warn"
    assert "sglang 0.4.6.post5, older than 0.5.1: every rule judged as sglang 0.5.1" in version["message"]
    # judged, not skipped: 0.5.1's create_flashattention_v3_backend asserts SM8x/SM90, as 0.4.6's did
    assert run.code == 1 and finding(report, "fa3-arch")["status"] == "fail"
    assert report["target"]["versions"]["sglang"] == "0.4.6.post5"
    assert report["target"]["judged_as"] == {"sglang": "0.5.1"}
    _, at_oldest = check(*argv, "--engine-version", "sglang==0.5.1")
    judged = {f["rule_id"]: f["status"] for f in report["findings"] if f["rule_id"] != "general-engine-version"}
    assert judged == {
        f["rule_id"]: f["status"] for f in at_oldest["findings"] if f["rule_id"] != "general-engine-version"
    }


def test_an_older_release_with_nothing_wrong_warns_not_passes():
    run, report = check("--gpu", "H100", "--model", "llama-3.1-8b", "--engine-version", "sglang==0.4.6.post5")
    assert run.code == 0 and report["verdict"] == "warn"
    assert finding(report, "general-engine-version")["status"] == "warn"


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


def test_fa4_fp8_before_the_vendored_copy_follows_the_installed_wheel():
    """sglang 0.5.10-0.5.15 import flash-attn-4 (jit_kernel/flash_attention_v4.py:10); its FP8 assert arrived in
    4.0.0b10 (interface.py:470; absent from 4.0.0b9), so an older wheel is not judged by it."""
    argv = ("--gpu", "H200", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--kv-cache-dtype", "fp8_e4m3")
    _, old_wheel = check(*argv, "--engine-version", "sglang==0.5.12", "--engine-version", "flash-attn-4==4.0.0b9")
    assert finding(old_wheel, "fa4-fp8-sm100")["status"] == "skip"
    _, new_wheel = check(*argv, "--engine-version", "sglang==0.5.12", "--engine-version", "flash-attn-4==4.0.0b10")
    assert finding(new_wheel, "fa4-fp8-sm100")["status"] == "fail"
    _, vendored = check(*argv, "--engine-version", "sglang==0.5.16", "--engine-version", "flash-attn-4==4.0.0b9")
    assert finding(vendored, "fa4-fp8-sm100")["status"] == "fail"


def test_releases_from_0_5_1_are_known():
    """Every sglang release from 0.5.1 was read (bench/release_walk.py); 0.5.0 was never a final release."""
    _, report = check("--gpu", "H100", "--model", "llama-3.1-8b", "--engine-version", "sglang==0.5.3")
    assert finding(report, "general-engine-version")["status"] == "pass"
    # and rules read that far judge it: 0.5.3's create_flashattention_v3_backend has the same assert
    _, report = check(
        "--gpu", "B200", "--model", "llama-3.1-8b", "--attention-backend", "fa3", "--engine-version", "sglang==0.5.3"
    )
    assert finding(report, "fa3-arch")["status"] == "fail"
