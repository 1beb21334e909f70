"""What smoke measured on the lent H200 (SM90, torch 2.11+cu130, FA4 4.0.0b36, CUTLASS DSL 4.8.1), saved by
bench/device_smoke.sh as fixtures: the issue's real-hardware acceptance, checked on every CI run."""

from __future__ import annotations

import json
import os

import pytest

from attn_preflight.probe.smoke.results import SmokeReport
from attn_preflight.render.smoke import render_smoke

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
QUICK = os.path.join(FIXTURES, "smoke-h200-quick.json")
FA4_FP8 = os.path.join(FIXTURES, "smoke-h200-fa4-fp8.json")
MUST_PASS = (
    "sdpa-flash",
    "sdpa-efficient",
    "sdpa-cudnn",
    "sdpa-math",
    "fa4-dense",
    "fa4-varlen",
    "fa4-paged",
    "cutlass-dsl-add",
    "triton-add",
)


def load(path: str) -> SmokeReport:
    if not os.path.exists(path):
        pytest.skip(f"{os.path.basename(path)} is not recorded yet (bench/device_smoke.sh on the H200 writes it)")
    with open(path, encoding="utf-8") as handle:
        return SmokeReport.from_dict(json.load(handle))


def test_h200_quick_run_every_installed_kernel_checks_out():
    report = load(QUICK)
    assert report.machine.device_capability == "9.0" and "H200" in (report.machine.device_name or "")
    by_name = {r.kernel: r for r in report.results}
    for name in MUST_PASS:
        result = by_name[name]
        assert result.status == "ok", f"{name}: {result.status} {result.message}"
        assert result.max_abs_error <= result.tolerance
        assert result.first_call_s > 0 and result.steady_ms > 0
        if result.case.kind == "attention":
            assert result.tflops > 0
    assert not report.failed


def test_h200_fa4_fp8_is_refused_by_the_kernel_as_documented():
    report = load(FA4_FP8)
    (result,) = report.results
    assert result.kernel == "fa4-dense" and result.case.dtype == "fp8_e4m3"
    assert result.status == "skipped" and result.skip_basis == "kernel"
    assert "FP8 is only supported on SM100" in result.message
    assert "SM100-only" in result.documented_limit


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_h200_reports_render(fmt):
    report = load(QUICK)
    text = render_smoke(report, fmt)
    assert "fa4-dense" in text
