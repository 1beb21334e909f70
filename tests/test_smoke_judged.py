"""Smoke results are judged against the kernels' documented limits from the recorded facts, where a report is shown:
the runner records what happened (a raw error), and `smoke`, `check --smoke` and `report --smoke` classify it
(rules/kernels/limits.py, rules/core/smoke.py, attn_preflight/smoke_judged.py). Reports saved when the runner
still judged (tests/fixtures/*h200*.json) read and render exactly as before, and so does their raw form."""

from __future__ import annotations

import copy
import json
from dataclasses import fields, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from attn_preflight.check_smoke import with_smoke
from attn_preflight.cli import cli
from attn_preflight.commands.report import smoke_table
from attn_preflight.inputs import load_model
from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel, registry
from attn_preflight.probe.smoke.results import KernelResult, MachineSummary, SmokeReport
from attn_preflight.render.smoke import progress_line, render_smoke
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.judge import evaluate
from attn_preflight.rules.core.smoke import CONFIRMED, CONTRADICTED, CROSSED, judge_limits
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import make_config
from attn_preflight.rules.engines.sglang import capabilities as backends
from attn_preflight.rules.kernels import limits as kernel_limits
from attn_preflight.rules.kernels.limits import MachineView
from attn_preflight.smoke_judged import judged, judged_result

FIXTURES = Path(__file__).parent / "fixtures"
FP8_REFUSAL = "AssertionError: FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe."
FP8 = Case(dtype="fp8_e4m3")


def raw_fa4_fp8(status="error", message=FP8_REFUSAL, **extra) -> KernelResult:
    """fa4-dense on an fp8 case, as the runner records it: what the kernel did, nothing judged."""
    return KernelResult(
        kernel="fa4-dense",
        family="fa4",
        title="FlashAttention 4, dense",
        status=status,
        library="fa4",
        case=FP8,
        message=message,
        details=["  File interface.py, line 1"],
        reproduce="python -m attn_preflight.probe.smoke.worker attn_preflight.probe.smoke.kernels.fa4 fa4-dense '[...]'",
        **extra,
    )


def on(capability, *results, cudnn=91900) -> SmokeReport:
    machine = MachineSummary(device_name="a GPU", device_capability=capability, cudnn_version=cudnn)
    return SmokeReport(level="quick", machine=machine, results=list(results))


# --- the judgement, from the recorded facts ---------------------------------------------------------------------


def test_a_raw_error_crossing_fa4s_fp8_limit_on_sm90_is_the_kernel_confirming_its_limit():
    (result,) = judged(on("9.0", raw_fa4_fp8())).results
    assert result.status == "skipped" and result.skip_basis == "kernel" and not result.failed
    assert result.documented_limit.startswith("FA4 fp8 is SM100-only, not sm_90")
    assert result.message == f"not supported here, and the kernel says so: {FP8_REFUSAL} ({result.documented_limit})"
    assert result.details == [FP8_REFUSAL, "  File interface.py, line 1"]  # the kernel's words first


def test_the_same_raw_error_on_sm100_stays_an_error():
    report = on("10.0", raw_fa4_fp8())
    (result,) = judged(report).results
    assert result.status == "error" and result.failed and result.documented_limit is None
    assert judged(report) is report  # nothing crossed: the report as it was recorded


def test_an_ok_run_crossing_a_documented_limit_says_the_knowledge_is_stale():
    (result,) = judged(on("9.0", raw_fa4_fp8(status="ok", max_abs_error=0.01, tolerance=0.15))).results
    assert result.status == "ok" and result.documented_limit
    assert result.notes == [f"ran although documented as unsupported here: {result.documented_limit}"]


@pytest.mark.parametrize("status", ["wrong", "crashed"])
def test_a_wrong_result_or_a_crash_crossing_a_limit_stands_with_the_limit_named(status):
    (result,) = judged(on("9.0", raw_fa4_fp8(status=status, message="boom"))).results
    assert result.status == status and result.failed and result.message == "boom"
    assert result.documented_limit.startswith("FA4 fp8 is SM100-only")


@pytest.mark.parametrize("status", ["timeout", "skipped"])
def test_what_the_kernel_never_answered_is_not_judged(status):
    raw = raw_fa4_fp8(status=status, message="no result within 180 s")
    assert judged_result(raw, on("9.0").machine) is raw


def test_judging_is_idempotent_so_old_classified_reports_read_as_saved():
    once = judged(on("9.0", raw_fa4_fp8()))
    assert judged(once) is once
    assert judged(replace(once, machine=replace(once.machine, device_capability="10.0"))).results == once.results


def test_the_rules_judgement_is_pure_over_the_recorded_fields():
    sm90, sm100 = MachineView.of("9.0", None), MachineView.of("10.0", None)
    confirmed = judge_limits("fa4-dense", "fa4", FP8, sm90, raised=True, ran=False, message="x")
    assert confirmed.verdict == CONFIRMED and confirmed.message.startswith("not supported here, and the kernel")
    assert judge_limits("fa4-dense", "fa4", FP8, sm90, raised=False, ran=True).verdict == CONTRADICTED
    assert judge_limits("fa4-dense", "fa4", FP8, sm90, raised=False, ran=False).verdict == CROSSED
    assert judge_limits("fa4-dense", "fa4", FP8, sm100, raised=True, ran=False) is None
    assert MachineView.of(None, None) == MachineView() and MachineView.of("12.1", 91000).cc == (12, 1)
    assert MachineView.of("sm90", None).cc is None and MachineView.of("9", None).cc == (9, 0)


# --- the limits: knowledge in rules/, none of it in probe/ --------------------------------------------------------


def test_every_smoke_kernel_that_has_documented_limits_finds_them_by_name_or_family():
    without = {name for name, k in registry().items() if kernel_limits.limits_for(k.name, k.family) is None}
    # plain torch; Triton and FLA's Triton kernels document no arch floor here (SM75 reports for FLA: issue 21)
    assert without == {"sdpa-math", "triton-add", "fla-gdn-chunk", "fla-gdn-recurrent"}
    assert kernel_limits.limits_for("t-unknown", "test") is None


def test_probe_smoke_declares_no_limits():
    assert not [f.name for f in fields(Kernel) if "limit" in f.name]
    assert not [n for n in dir(Kernel) if "limit" in n]
    source = "".join(p.read_text() for p in (Path(__file__).parent.parent / "probe" / "smoke").rglob("*.py"))
    for judged_words in ("kernel says so", "documented as unsupported", "SKIP_KERNEL,", "def limits", "sm_90a only"):
        assert judged_words not in source, judged_words


def test_fa4s_smoke_limits_and_the_fa4_rules_read_one_table():
    """The wheel the smoke kernels call and SGLang's vendored copy share their FA4 facts; where they differ (paged KV
    on SM12x, (512, 512) on SM90) the table holds both."""
    assert backends.SGLANG_BACKENDS["fa4"].archs is backends.FA4_ARCHS
    assert backends.SGLANG_BACKENDS["fa4"].kv_dtype_archs["fp8_e4m3"] is backends.FA4_FP8_ARCHS
    assert backends.FA4_WHEEL_HEAD_DIMS[10] is backends.FA4_HEAD_DIMS[10]
    assert backends.FA4_HEAD_DIMS[9].takes(512, 512) and not backends.FA4_WHEEL_HEAD_DIMS[9].takes(512, 512)
    paged = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=16)
    assert kernel_limits.fa4(paged, MachineView(cc=(12, 0))) is not None  # the wheel: no paged KV on SM12x
    assert 12 in backends.SGLANG_BACKENDS["fa4"].feature_archs["paged_kv"]  # SGLang 0.5.23: its SM120 host


# --- the face: every place a smoke report is shown ----------------------------------------------------------------


def unjudged(data: dict) -> dict:
    """A saved (judged) smoke report's JSON as the runner records it now: the judged fields undone."""
    data = copy.deepcopy(data)
    for r in data["results"]:
        limit = r.pop("documented_limit", None)
        if limit is None:
            continue
        if r["status"] == "skipped" and r["skip_basis"] == "kernel":
            r["status"], r["skip_basis"] = "error", None
            r["message"], r["details"] = r["details"][0], r["details"][1:]
        else:
            r["notes"] = [n for n in r["notes"] if n != f"ran although documented as unsupported here: {limit}"]
    return data


@pytest.mark.parametrize("name", ["quick", "full", "fa4-fp8"])
def test_a_raw_h200_report_renders_as_the_saved_judged_one(name, tmp_path):
    saved = json.loads((FIXTURES / f"smoke-h200-{name}.json").read_text())
    raw = unjudged(saved)
    assert raw != saved or name == "quick"
    old, new = SmokeReport.from_dict(saved), SmokeReport.from_dict(raw)
    assert judged(new).to_dict() == saved and judged(old).to_dict() == saved
    for fmt in ("table", "markdown", "json"):
        assert render_smoke(new, fmt) == render_smoke(old, fmt)
    assert json.loads(render_smoke(new, "json")) == saved  # the judged fields stay in the JSON, for readers
    (tmp_path / "raw.json").write_text(json.dumps(raw))
    assert smoke_table(str(tmp_path / "raw.json")).rows == smoke_table(str(FIXTURES / f"smoke-h200-{name}.json")).rows


def test_the_progress_line_is_judged_with_the_machine_known_so_far():
    machine = on("9.0").machine
    line = progress_line(raw_fa4_fp8(), 1.0, machine)  # a skip leaves its reason to the report (said once)
    assert line.endswith(": skipped") and "kernel says so" not in line
    assert f": error: {FP8_REFUSAL}" in progress_line(raw_fa4_fp8(), 1.0, replace(machine, device_capability="10.0"))


@pytest.mark.parametrize("capability, code, status", [("9.0", 0, "skipped"), ("10.0", 1, "ERROR")])
def test_smoke_exit_code_fails_only_a_kernel_that_ran_and_failed(monkeypatch, capability, code, status):
    import attn_preflight.probe.smoke.runner

    def run(self, jobs, level="quick"):
        report = on(capability, raw_fa4_fp8())
        for result in report.results:
            self.progress(result, report.machine)
        return report

    monkeypatch.setattr(attn_preflight.probe.smoke.runner.Runner, "run", run)
    result = CliRunner().invoke(cli, ["smoke", "--kernel", "fa4-dense", "--dtype", "fp8"])
    assert result.exit_code == code, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("fa4-dense"))
    assert f" {status} " in row
    assert ("kernel says so" in result.stdout) == (code == 0)  # the judged reason, once, in the report


def _raw_results_of(check_report: dict) -> list[KernelResult]:
    """The smoke results behind a saved `check --smoke` report's smoke-kernel findings, as the runner records them."""
    kernels = registry()
    results = []
    for finding in check_report["findings"]:
        data = finding.get("smoke") or {}
        if finding["rule_id"] != "smoke-kernel" or not data.get("kernel"):
            continue
        status, message, limit = data["result"], data["message"], data["documented_limit"]
        if data["skip_basis"] == "kernel":
            prefix, suffix = "not supported here, and the kernel says so: ", f" ({limit})"
            assert message.startswith(prefix) and message.endswith(suffix)
            status, message = "error", message[len(prefix) : -len(suffix)]
        kernel = kernels[data["kernel"]]
        keep = ("max_abs_error", "tolerance", "first_call_s", "steady_ms", "tflops", "device", "reproduce")
        results.append(
            KernelResult(
                kernel=kernel.name,
                family=kernel.family,
                title=kernel.title,
                status=status,
                library=kernel.library,
                case=Case.from_dict(data["case"]),
                message=message,
                **{key: data[key] for key in keep},
            )
        )
    return results


@pytest.mark.parametrize("name", ["llama-fa4", "gemma2-fa4", "llama-fa4-fp8"])
def test_check_smoke_judges_raw_results_as_the_saved_h200_reports_show(name):
    saved = json.loads((FIXTURES / f"check-smoke-h200-{name}.json").read_text())
    config = saved["config"]
    report = evaluate(
        make_config(
            model=load_model(config["model"]["name"]),
            attention_backend=config["attention_backend"],
            kv_cache_dtype=config["kv_cache_dtype"],
        ),
        Target.from_gpu("H200"),
        alternatives=False,
    )
    smoke = on("9.0", *_raw_results_of(saved))
    smoke.level = "shape"
    judged_here = ("status", "message", "note", "smoke")  # (the docs pointer has changed since the recording)
    today = [f.to_dict() for f in with_smoke(report, smoke).findings if f.rule_id == "smoke-kernel"]
    there = [f for f in saved["findings"] if f["rule_id"] == "smoke-kernel"]
    assert [{k: f[k] for k in judged_here} for f in today] == [{k: f[k] for k in judged_here} for f in there]
    if name == "llama-fa4-fp8":
        assert {f["status"] for f in today} == {Status.FAIL.value}  # the kernel refused the config
