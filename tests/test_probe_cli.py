"""`attn-preflight probe` end to end: formats, --output, bad arguments (one line, exit 2), and a machine
where everything is broken still gets a complete report and exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from probe_fakes import (
    HANG,
    NVML_ERROR_LIBRARY_NOT_FOUND,
    NVML_ERROR_UNKNOWN,
    SEGFAULT,
    UNDEFINED_SYMBOL,
    NVMLError,
    h200,
    make_cutlass_dsl,
    make_dist,
    use_fake_pynvml,
)

from attn_preflight.cli import cli, main
from attn_preflight.probe.facts import SCHEMA_VERSION, Facts
from attn_preflight.probe.libraries import CATALOGUE
from attn_preflight.render.facts import facts_document

REPO = Path(__file__).resolve().parents[1]


def invoke(*args):
    result = CliRunner().invoke(cli, ["probe", *args])
    assert result.exit_code == 0, result.output
    return result.output


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr()


def test_json_has_schema_version_and_round_trips():
    data = json.loads(invoke("--format", "json", "--no-imports"))
    assert data["schema_version"] == SCHEMA_VERSION and data["imports_checked"] is False
    assert facts_document(Facts.from_dict(data)) == data  # written again as read
    assert {lib["health"]["status"] for lib in data["libraries"]} <= {"skipped", "not_installed"}


def test_table_and_markdown_point_at_problems_first():
    table = invoke("--no-imports")
    assert table.index("Problems") < table.index("Host") < table.index("GPUs") < table.index("Libraries")
    assert "imports were not checked (--no-imports)" in table
    markdown = invoke("--no-imports", "--format", "markdown")
    assert markdown.startswith("# attn-preflight probe") and "\n## Problems (" in markdown  # (N): this machine's


def test_output_file(tmp_path):
    target = tmp_path / "facts.json"
    assert invoke("--no-imports", "--format", "json", "-o", str(target)) == ""
    assert json.loads(target.read_text())["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["probe", "--format", "yaml"], "'yaml' is not one of"),
        (["probe", "--timeout", "0"], "must be a positive number of seconds, got 0"),
        (["probe", "--timeout", "-3"], "must be a positive number of seconds, got -3"),
        (["probe", "--timeout", "nan"], "must be a positive number of seconds"),
        (["probe", "--timeout", "soon"], "'soon' is not a valid float"),
        (["probe", "-o", "/no/such/dir/facts.json"], "directory /no/such/dir does not exist"),
        (["probe", "-o", "/"], "is a directory"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(argv, expected, capsys):
    code, out = run_main(argv, capsys)
    assert code == 2
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attn-preflight: error:") and expected in lines[0], out.err
    assert out.out == ""


def test_unwritable_output_is_refused_before_probing(tmp_path, capsys, monkeypatch):
    from attn_preflight.probe import collect

    monkeypatch.setattr(collect, "collect", lambda **kw: pytest.fail("probed before checking --output"))
    code, out = run_main(["probe", "-o", str(tmp_path / "missing" / "x.json")], capsys)
    assert code == 2 and "does not exist" in out.err


def test_python_dash_m_probe_probe(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "attn_preflight", "probe", "--no-imports", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert Facts.from_dict(json.loads(done.stdout)).host.python_executable == sys.executable


def test_a_broken_machine_gets_a_complete_report_and_exit_0(tmp_path):
    """Undefined symbol, segfault, hang and an unprocessed CUTLASS .pth, through `python -m attn_preflight`."""
    site = tmp_path / "site"
    make_dist(site, "flash-mla", "1.0.0", {"flash_mla/__init__.py": UNDEFINED_SYMBOL.format(site=site)})
    make_dist(site, "xformers", "0.0.30", {"xformers/__init__.py": SEGFAULT})
    make_dist(site, "triton", "3.5.0", {"triton/__init__.py": HANG})
    dsl_packages = make_cutlass_dsl(site)
    make_dist(site, "flash-attn-4", "4.0.0b36", {"flash_attn/cute/__init__.py": "import cutlass.cute\n"})
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]),
        "XDG_CACHE_HOME": str(tmp_path),
        "VLLM_ATTENTION_BACKEND": "FLASH_ATTN",
        "SGLANG_API_KEY": "sk-live-123",
    }
    done = subprocess.run(
        [sys.executable, "-m", "attn_preflight", "probe", "--format", "json", "--timeout", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    facts = Facts.from_dict(document)
    status = {lib.key: lib.health for lib in facts.libraries}
    diagnosis = {lib["key"]: lib["health"]["diagnosis"] for lib in document["libraries"]}  # judged when written

    assert status["flash_mla"].status == "error" and "undefined symbol" in status["flash_mla"].error
    assert "built against a different torch than" in diagnosis["flash_mla"]
    assert status["xformers"].status == "crashed" and status["xformers"].error.startswith("killed by SIGSEGV")
    assert status["triton"].status == "timeout" and "hung" in diagnosis["triton"]
    for key in ("cutlass_dsl", "fa4"):  # FA4 fails the same way: it imports the DSL
        assert status[key].status == "error" and status[key].error == "ModuleNotFoundError: No module named 'cutlass'"
        assert diagnosis[key].startswith(
            "No module named cutlass while nvidia-cutlass-dsl 4.8.1 is installed → its .pth file"
        )
        assert f"add {dsl_packages} to sys.path" in diagnosis[key]
    assert facts.environment["VLLM_ATTENTION_BACKEND"] == "FLASH_ATTN"
    assert facts.environment["SGLANG_API_KEY"] == "***" and "sk-live-123" not in done.stdout

    fixed = {**env, "PYTHONPATH": os.pathsep.join([env["PYTHONPATH"], str(dsl_packages)])}
    done = subprocess.run(
        [sys.executable, "-m", "attn_preflight", "probe", "--format", "json", "--timeout", "3"],
        capture_output=True,
        text=True,
        env=fixed,
        timeout=120,
    )
    healed = Facts.from_dict(json.loads(done.stdout))
    assert healed.library("cutlass_dsl").health.status == "ok" and healed.library("fa4").health.status == "ok"
    assert healed.library("cutlass_dsl").health.details["cutlass_version"] == "4.8.1"


def test_torch_missing_is_reported_and_the_report_completes(tmp_path):
    """No site-packages at all (-S): only the CLI's own dependencies, linked into one directory."""
    deps = tmp_path / "deps"
    deps.mkdir()
    import click
    import packaging

    for module in (click, packaging):
        source = Path(module.__file__)
        source = source.parent if source.name == "__init__.py" else source
        (deps / source.name).symlink_to(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(deps)]), "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-S", "-m", "attn_preflight", "probe", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    facts = Facts.from_dict(json.loads(done.stdout))
    assert not facts.torch.installed and facts.torch.error.startswith("torch is not installed for ")
    assert facts.library("torch").health.status == "not_installed"
    assert "nvidia-ml-py (pynvml) cannot be imported" in facts.gpus.error  # not in -S's view either
    table = subprocess.run(
        [sys.executable, "-S", "-m", "attn_preflight", "probe"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert table.returncode == 0 and "Not installed: torch is not installed for" in table.stdout


@pytest.mark.parametrize(
    "nvml, expected",
    [
        (
            ([], {"init_error": NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")}),
            lambda gpus: gpus.devices == [] and gpus.error.startswith("NVML library not found"),
        ),
        (
            ([h200(0)], {"init_error": NVMLError(NVML_ERROR_UNKNOWN, "Unknown Error")}),
            lambda gpus: (
                gpus.devices == [] and gpus.error == "NVML initialisation failed: Unknown Error (NVML error 999)"
            ),
        ),
        (
            ([h200(0), h200(1, cc=NVMLError(NVML_ERROR_UNKNOWN, "Unknown Error")), h200(2)], {}),
            lambda gpus: (
                [d.error for d in gpus.devices] == [None, "compute capability: Unknown Error (NVML error 999)", None]
            ),
        ),
    ],
    ids=["library-missing", "init-error", "one-gpu-query-raising"],
)
def test_nvml_failures_leave_a_complete_report_and_exit_0(nvml, expected, monkeypatch, tmp_path):
    devices, options = nvml
    use_fake_pynvml(monkeypatch, tmp_path, devices, **options)
    facts = Facts.from_dict(json.loads(invoke("--format", "json", "--no-imports")))
    assert expected(facts.gpus)
    assert facts.host.python_version and len(facts.libraries) == len(CATALOGUE)  # the rest of the report stands
    assert "Environment" in invoke("--no-imports")
