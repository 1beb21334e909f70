"""`attn-preflight smoke` on this machine (CI: no GPU, CPU torch): SDPA math runs for real, the rest skips."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from attn_preflight.cli import cli, main
from attn_preflight.probe.smoke.results import SmokeReport

torch = pytest.importorskip("torch")


def invoke(*args):
    return CliRunner().invoke(cli, ["smoke", *args])


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr()


def _cpu_only():
    from attn_preflight.probe.gpus import collect_gpus

    return not collect_gpus().devices


@pytest.fixture(scope="module")
def every_kernel():
    """`smoke --format json`, every kernel, as CI runs it."""
    return CliRunner().invoke(cli, ["smoke", "--format", "json"])


@pytest.mark.skipif(not _cpu_only(), reason="describes a machine without a GPU")
def test_without_a_gpu_sdpa_math_checks_out_and_everything_else_skips_with_a_reason(every_kernel):
    assert every_kernel.exit_code == 0, every_kernel.output
    report = SmokeReport.from_dict(json.loads(every_kernel.stdout))
    by_name = {r.kernel: r for r in report.results}
    math = by_name.pop("sdpa-math")
    assert math.status == "ok" and math.max_abs_error <= math.tolerance and math.device == "cpu"
    assert math.first_call_s > 0 and math.steady_ms > 0 and math.tflops > 0
    assert by_name and all(r.status == "skipped" and r.message for r in by_name.values())
    assert by_name["sdpa-flash"].message.startswith("no GPU")
    assert report.machine.torch_version == torch.__version__


@pytest.mark.skipif(not _cpu_only(), reason="describes a machine without a GPU")
def test_progress_goes_to_stderr_one_line_per_kernel(every_kernel):
    lines = every_kernel.stderr.strip().splitlines()
    kernels = [r["kernel"] for r in json.loads(every_kernel.stdout)["results"]]
    assert len(lines) == len(kernels)
    assert all(line.startswith("smoke ") for line in lines)
    assert any("sdpa-math" in line and ": pass" in line for line in lines)


def test_table_shows_status_error_and_counts():
    result = invoke("--kernel", "sdpa-math")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("sdpa-math"))
    assert " pass " in row and " / 3e-02" in row
    assert "1 pass" in result.stdout and "no failures" in result.stdout


def test_markdown_is_a_github_table():
    result = invoke("--kernel", "sdpa-math", "--format", "markdown")
    assert result.exit_code == 0
    assert "| sdpa-math " in result.stdout and "|---" in result.stdout.replace(" ", "")


def test_a_kernel_failing_exits_1_and_names_its_own_error(tmp_path):
    out = tmp_path / "smoke.json"
    # The math backend has no fp8 kernel on the CPU: torch raises, and nothing documents that as a limit.
    result = invoke("--kernel", "sdpa-math", "--dtype", "fp8", "--format", "json", "--output", str(out))
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    (failed,) = SmokeReport.from_dict(json.loads(out.read_text())).failed
    assert failed.status == "error" and failed.case.dtype == "fp8_e4m3"
    assert failed.message.startswith("NotImplementedError")


def test_unknown_kernel_is_one_line_with_a_suggestion_and_exit_2(capsys):
    code, out = run_main(["smoke", "--kernel", "fa4-dens"], capsys)
    assert code == 2
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "no such kernel 'fa4-dens'" in lines[0] and "did you mean 'fa4-dense'" in lines[0]


def test_unknown_kernel_without_a_close_name_lists_the_valid_ones(capsys):
    code, out = run_main(["smoke", "--kernel", "xyzzy"], capsys)
    assert code == 2 and "valid:" in out.err and "sdpa-math" in out.err


@pytest.mark.parametrize("value", ["0", "-5", "nan", "soon"])
def test_timeout_must_be_a_positive_number(value, capsys):
    code, out = run_main(["smoke", "--timeout", value], capsys)
    assert code == 2
    assert len(out.err.strip().splitlines()) == 1 and "--timeout" in out.err


def test_family_name_selects_the_whole_family():
    result = invoke("--kernel", "fa4", "--format", "json")
    names = [r["kernel"] for r in json.loads(result.stdout)["results"]]
    assert names == ["fa4-dense", "fa4-varlen", "fa4-paged"]


@pytest.mark.gpu
def test_on_a_gpu_every_sdpa_backend_checks_out():
    result = invoke("--kernel", "sdpa", "--format", "json")
    report = SmokeReport.from_dict(json.loads(result.stdout))
    assert [r.status for r in report.results] == ["ok"] * 4, result.output


def test_jobs_must_be_positive(capsys):
    code, out = run_main(["smoke", "--jobs", "0"], capsys)
    assert code == 2 and "--jobs" in out.err
