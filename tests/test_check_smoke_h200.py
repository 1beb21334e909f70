"""`check --smoke` as it ran on the lent H200 (SM90, flash-attn-4 4.0.0b36, CUTLASS DSL 4.8.1), recorded by
bench/device_final.sh: the kernels confirm the rules, and today's rules still judge those configs the same
way when given the same machine's saved probe report."""

import json
from pathlib import Path

import pytest
from cli_run import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
CASES = {
    "llama-fa4": (["--model", "llama-3.1-8b", "--attention-backend", "fa4"], "pass"),
    "gemma2-fa4": (["--model", "gemma-2-9b", "--attention-backend", "fa4"], "pass"),
    "llama-fa4-fp8": (
        ["--model", "llama-3.1-8b", "--attention-backend", "fa4", "--kv-cache-dtype", "fp8_e4m3"],
        "fail",
    ),
}


# FA4's extended arguments (bench/device_smoke_extended.sh). Expected from the flash-attn-4 4.0.0b36 wheel: sinks and
# a custom score_mod run on SM90; absorbed-MLA qv does not ('only support Blackwell arch with qv').
EXTENDED = {
    "gpt-oss-sinks": (["--model", "gpt-oss-20b", "--attention-backend", "fa4"], "pass", {"sinks"}),
    "llama-score-mod": (
        ["--model", "llama-3.1-8b", "--attention-backend", "fa4", "--feature", "score_mod"],
        "pass",
        {"score_mod=rel_bias"},
    ),
    "deepseek-qv": (["--model", "deepseek-v3", "--attention-backend", "fa4", "--tp", "8"], "fail", {"qv"}),
}


def recorded(name):
    return json.loads((FIXTURES / f"check-smoke-h200-{name}.json").read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernels_on_the_h200_agreed_with_the_rules(name):
    report = recorded(name)
    _, verdict = CASES[name]
    assert report["target"]["gpu"] == "NVIDIA H200" and report["verdict"] == verdict
    smoke = [f for f in report["findings"] if f["rule_id"] == "smoke-kernel"]
    assert len(smoke) == 2  # prefill (fa4-dense) and decode (fa4-paged)
    assert {f["status"] for f in smoke} == {"pass" if verdict == "pass" else "fail"}
    assert not [f for f in report["findings"] if f["rule_id"] == "smoke-disagrees"]
    if verdict == "fail":  # the rule and the kernel name the same limit
        failed_rules = {f["rule_id"] for f in report["findings"] if f["status"] == "fail"}
        assert "fa4-fp8-sm100" in failed_rules
        assert any("FP8 is only supported on SM100" in f["message"] for f in smoke)


@pytest.mark.parametrize("name", sorted(EXTENDED))
def test_fa4_sinks_score_mod_and_qv_ran_on_the_h200_as_the_wheel_says(name):
    report = recorded(name)
    _, verdict, words = EXTENDED[name]
    assert report["target"]["gpu"] == "NVIDIA H200" and report["verdict"] == verdict
    smoke = {f["message"].split(" ")[0]: f for f in report["findings"] if f["rule_id"] == "smoke-kernel"}
    assert set(smoke) == {"fa4-dense", "fa4-paged"}
    assert not [f for f in report["findings"] if f["rule_id"] == "smoke-disagrees"]
    decode = smoke["fa4-paged"]
    assert all(f" {word}" in decode["message"] for word in words), decode["message"]  # the feature was smoked
    if verdict == "pass":
        assert {f["status"] for f in smoke.values()} == {"pass"}
        assert all("within tolerance" in f["message"] for f in smoke.values())
    else:  # MLA prefill runs the model's head dims; the absorbed decode through qv is refused, as fa4-mla-arch says
        assert smoke["fa4-dense"]["status"] == "pass" and decode["status"] == "fail"
        assert "is not supported on SM90" in decode["message"]
        assert any(f["rule_id"] == "fa4-mla-arch" and f["status"] == "fail" for f in report["findings"])


def test_the_fa4_sweep_ran_sinks_and_score_mod_and_refused_qv_on_sm90():
    sweep = json.loads((FIXTURES / "smoke-h200-fa4-extended.json").read_text())
    by = {}
    for result in sweep["results"]:
        case = result["case"]
        feature = "qv" if case["qv"] else "sinks" if case["sinks"] else "score_mod" if case["score_mod"] else None
        if feature:
            by.setdefault(feature, set()).add((result["kernel"], result["status"]))
    assert by["sinks"] == {("fa4-dense", "ok"), ("fa4-paged", "ok")}
    assert by["score_mod"] == {("fa4-dense", "ok"), ("fa4-paged", "ok")}
    assert by["qv"] == {("fa4-dense", "skipped"), ("fa4-paged", "skipped")}  # the documented limit, confirmed


@pytest.mark.parametrize("name", sorted(CASES) + sorted(EXTENDED))
def test_rules_today_judge_the_h200_as_they_did_there(name):
    argv, verdict = (CASES.get(name) or EXTENDED[name])[:2]
    run = run_cli(["check", "--facts", str(FIXTURES / "probe-h200.json"), *argv, "--format", "json"])
    judged = {f["rule_id"]: f["status"] for f in recorded(name)["findings"]}  # rules added since have fixtures
    today = {
        f["rule_id"]: f["status"]
        for f in json.loads(run.out)["findings"]
        if f["status"] in ("pass", "fail") and f["rule_id"] in judged
    }
    there = {
        f["rule_id"]: f["status"]
        for f in recorded(name)["findings"]
        if f["status"] in ("pass", "fail") and not f["rule_id"].startswith("smoke-")
    }
    assert today == there
    assert run.code == (0 if verdict == "pass" else 1)
