"""Fault injection through the real CLI: for each fault, the command completes, the fault is a named value
(probe, smoke) or finding (check, fleet), nothing else in the report is lost, and the exit code is right.

Faults come from tests/probe_fakes.py (fake pynvml, fake installed distributions whose import misbehaves)
and from kernels written here that misbehave inside smoke's workers. GPUs are faked through NVML only:
torch is the real one installed here (CPU 2.13.0 in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import assert_clean_outcome, run_cli
from probe_fakes import (
    HANG,
    NVML_ERROR_DRIVER_NOT_LOADED,
    NVML_ERROR_GPU_IS_LOST,
    NVML_ERROR_LIBRARY_NOT_FOUND,
    NVML_ERROR_UNKNOWN,
    SEGFAULT,
    UNDEFINED_SYMBOL,
    NVMLError,
    h200,
    make_cutlass_dsl,
    make_dist,
    use_fake_pynvml,
    write_fake_pynvml,
)

from attn_preflight.probe.facts import Facts
from attn_preflight.probe.libraries import CATALOGUE
from attn_preflight.rules.knowledge.cuda_arch import torch_arch_coverage

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
CI_FACTS = TESTS / "fixtures" / "probe-cpu-ci.json"
IMPORT_TIMEOUT_S = "12"  # torch (the witness) must import in time on a loaded 2-core CI box


# ------------------------------------------------------------------------------------------------ helpers


def use_nvml(monkeypatch, tmp_path: Path, devices, **options):
    use_fake_pynvml(monkeypatch, tmp_path / "nvml", devices, **options)


def use_site(monkeypatch, site: Path) -> None:
    """Distributions in `site` are installed for this process and for the import checks' children."""
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))


def probe_facts(*extra: str) -> dict:
    run = run_cli(["probe", "--format", "json", *extra])
    assert_clean_outcome(run)
    assert run.code == 0, run.err
    return json.loads(run.out)


def check_report(*argv: str) -> dict:
    """`check --format json`; the exit code must match the verdict (0 pass/warn, 1 fail)."""
    run = run_cli(["check", "--format", "json", *argv])
    assert_clean_outcome(run, argv)
    assert run.code in (0, 1), run.err
    report = json.loads(run.out)
    assert run.code == (1 if report["verdict"] == "fail" else 0), (run.code, report["verdict"])
    return report


def findings(report: dict, status: str, *words: str) -> list[dict]:
    """Findings of `status` whose message (or fix) mentions every one of `words`, case-insensitively."""

    def text(f):
        return " ".join([f["message"], *f.get("fix", [])]).lower()

    return [f for f in report["findings"] if f["status"] == status and all(w.lower() in text(f) for w in words)]


def by_rule(report: dict, rule_id: str) -> dict:
    return next(f for f in report["findings"] if f["rule_id"] == rule_id)


def libraries(facts: dict) -> dict:
    return {lib["key"]: lib for lib in facts["libraries"]}


def assert_report_complete(facts: dict) -> None:
    """Nothing lost: every section is there, every catalogued library is reported, the installed torch
    was import-checked (it is the witness: its check runs beside the faulty ones)."""
    assert facts["host"]["python_version"] and facts["host"]["cpu_arch"]
    assert [lib["key"] for lib in facts["libraries"]] == [spec.key for spec in CATALOGUE]
    torch = libraries(facts)["torch"]
    if torch["distributions"] and facts["imports_checked"]:
        assert torch["health"]["status"] == "ok", torch["health"]


def save(tmp_path: Path, facts: dict, name: str = "facts.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(facts))
    return str(path)


def ci_facts_with(gpus: list[tuple[str, int, int, int]], **torch) -> dict:
    """The real CI probe report, on the machine whose GPUs are `gpus` (name, cc major, minor, MiB)."""
    facts = json.loads(CI_FACTS.read_text())
    facts["gpus"] = {
        "devices": [
            {
                "index": i,
                "name": name,
                "uuid": f"GPU-{i}",
                "cc_major": major,
                "cc_minor": minor,
                "memory_total_mib": mib,
                "mig_mode": "disabled",
                "persistence_mode": "enabled",
                "nvlink_links_up": 18,
                "error": None,
            }
            for i, (name, major, minor, mib) in enumerate(gpus)
        ],
        "driver_version": "580.95.05",
        "cuda_driver_version": "13.0",
        "nvml_version": None,
        "error": None,
    }
    facts["torch"].update(torch)
    return facts


# ------------------------------------------------------------------------------------------------ NVML


def test_no_nvml_library(monkeypatch, tmp_path):
    use_nvml(
        monkeypatch, tmp_path, [], init_error=NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")
    )
    facts = probe_facts()
    assert facts["gpus"]["devices"] == []
    assert facts["gpus"]["error"].startswith("NVML library not found (libnvidia-ml.so.1)")
    assert_report_complete(facts)

    report = check_report("--attention-backend", "fa3")
    assert report["target"]["gpu"] is None and report["target"]["software_known"] is True
    no_gpu = by_rule(report, "install-no-cuda-gpu")
    assert no_gpu["status"] == "fail" and "NVML library not found" in no_gpu["message"]
    assert report["verdict"] == "fail"


def test_nvml_pynvml_binding_missing(monkeypatch, tmp_path):
    (tmp_path / "pynvml.py").write_text("raise ImportError('a broken nvidia-ml-py')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    facts = probe_facts("--no-imports")
    assert facts["gpus"]["devices"] == []
    assert facts["gpus"]["error"].startswith("nvidia-ml-py (pynvml) cannot be imported: ")
    assert_report_complete(facts)


@pytest.mark.parametrize(
    "code, text, reason",
    [
        (NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded", "NVIDIA driver not loaded"),
        (NVML_ERROR_UNKNOWN, "Unknown Error", "NVML initialisation failed: Unknown Error (NVML error 999)"),
    ],
)
def test_nvml_init_error(monkeypatch, tmp_path, code, text, reason):
    use_nvml(monkeypatch, tmp_path, [h200(0)], init_error=NVMLError(code, text))
    facts = probe_facts("--no-imports")
    assert facts["gpus"]["devices"] == [] and facts["gpus"]["error"].startswith(reason)
    assert_report_complete(facts)


def test_nvml_query_error_on_one_of_several_gpus(monkeypatch, tmp_path):
    lost = NVMLError(NVML_ERROR_GPU_IS_LOST, "GPU is lost")
    use_nvml(monkeypatch, tmp_path, [h200(0), h200(1), h200(2, memory_mib=lost, cc=lost), h200(3)])
    facts = probe_facts()
    devices = facts["gpus"]["devices"]
    assert [d["index"] for d in devices] == [0, 1, 2, 3]
    broken = devices[2]
    assert "memory: GPU is lost (NVML error 15)" in broken["error"] and broken["compute_capability"] is None
    assert broken["name"] == "NVIDIA H200" and broken["uuid"] == "GPU-00000002-h200"  # what did answer is kept
    for device in (devices[0], devices[1], devices[3]):
        assert device["error"] is None and device["compute_capability"] == "9.0"
        assert device["memory_total_mib"] == 143771 and device["nvlink_links_up"] == 18
    assert facts["gpus"]["driver_version"] == "580.95.05" and facts["gpus"]["error"] is None
    assert_report_complete(facts)

    # The saved report is still judged as the H200 it is, by check and by fleet.
    path = save(tmp_path, facts)
    report = check_report("--facts", path, "--attention-backend", "fa3")
    assert report["target"]["compute_capability"] == "9.0" and report["target"]["gpu_count"] == 3
    fleet = run_cli(["fleet", path, "--format", "json", "--attention-backend", "fa3"])
    assert_clean_outcome(fleet)
    assert fleet.code in (0, 1) and json.loads(fleet.out)["nodes"] == 1


# ------------------------------------------------------------------------------------------------ torch


def _bare_python_env(tmp_path: Path) -> dict:
    """No site-packages at all (python -S): the CLI's own pure-Python dependencies linked into one
    directory, and a fake NVML with one H200 (a file, so the subprocess imports it as `pynvml`)."""
    deps = tmp_path / "deps"
    deps.mkdir()
    import click
    import packaging

    for module in (click, packaging):
        source = Path(module.__file__)
        source = source.parent if source.name == "__init__.py" else source
        (deps / source.name).symlink_to(source)
    write_fake_pynvml(deps, [h200(0)])
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(deps), str(TESTS)]),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }


def test_torch_missing(tmp_path):
    env = _bare_python_env(tmp_path)

    def attn_preflight(*argv):
        return subprocess.run(
            [sys.executable, "-S", "-m", "attn_preflight", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=tmp_path,
        )

    done = attn_preflight("probe", "--format", "json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    facts = json.loads(done.stdout)
    assert facts["torch"]["installed"] is False and facts["torch"]["error"].startswith("torch is not installed for ")
    assert libraries(facts)["torch"]["health"]["status"] == "not_installed"
    assert [d["name"] for d in facts["gpus"]["devices"]] == ["NVIDIA H200"]  # the rest of the probe stands
    assert_report_complete(facts)

    done = attn_preflight("check", "--format", "json", "--attention-backend", "fa4", "--kv-cache-dtype", "mxfp8")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "fail" and report["target"]["gpu"] == "NVIDIA H200"
    torch_finding = next(f for f in report["findings"] if f["rule_id"] == "kv-mxfp8-torch")
    assert torch_finding["status"] == "fail" and "torch not installed" in torch_finding["message"]


def test_cpu_only_torch_on_a_gpu_machine(monkeypatch, tmp_path):
    """The torch installed here is a CPU build; NVML says there is an H200."""
    pytest.importorskip("torch")
    import torch

    if torch.version.cuda is not None:
        pytest.skip("needs a CPU-only torch (CI installs torch 2.13.0 CPU)")
    use_nvml(monkeypatch, tmp_path, [h200(0)])
    facts = probe_facts()
    assert facts["torch"]["installed"] and facts["torch"]["cuda"] is None
    assert torch_arch_coverage(Facts.from_dict(facts)) == {"sm_90": False}  # a value, not a guess
    assert [d["sm"] for d in facts["gpus"]["devices"]] == ["sm_90"]
    assert_report_complete(facts)

    report = check_report("--attention-backend", "fa3")
    assert report["verdict"] == "fail"
    cpu_only = by_rule(report, "install-torch-cpu-only")
    assert cpu_only["status"] == "fail" and "2.13.0+cpu without CUDA" in cpu_only["message"]


def test_torch_cuda_build_older_than_the_gpu_needs(tmp_path):
    """SM100 needs a torch built for CUDA >= 12.8; cu124 has no sm_100 kernels."""
    facts = ci_facts_with(
        [("NVIDIA B200", 10, 0, 183359)] * 8,
        version="2.6.0+cu124",
        cuda="12.4",
        arch_list=["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    )
    report = check_report(
        "--facts",
        save(tmp_path, facts),
        "--attention-backend",
        "fa4",
        "--model",
        str(TESTS / "fixtures" / "models" / "Llama-3.1-8B-Instruct"),
    )
    assert report["verdict"] == "fail" and report["target"]["sm"] == "SM100"
    old_cuda = by_rule(report, "install-torch-cuda-version")
    assert old_cuda["status"] == "fail" and "CUDA 12.4" in old_cuda["message"] and "12.8" in old_cuda["message"]
    assert report["config"]["attention_backend"] == "fa4"  # the rest of the report stands

    fixed = ci_facts_with(
        [("NVIDIA B200", 10, 0, 183359)] * 8,
        version="2.9.1+cu128",
        cuda="12.8",
        arch_list=["sm_80", "sm_90", "sm_100", "sm_120"],
    )
    healthy = check_report(
        "--facts",
        save(tmp_path, fixed, "fixed.json"),
        "--attention-backend",
        "fa4",
        "--model",
        str(TESTS / "fixtures" / "models" / "Llama-3.1-8B-Instruct"),
    )
    assert by_rule(healthy, "install-torch-cuda-version")["status"] == "pass"


# --------------------------------------------------------------------------------- kernel library imports


def _probe_then_check(monkeypatch, tmp_path, site: Path, backend: str):
    """probe (import checks with a short timeout) saved to a file, then check of `backend` on that file."""
    use_site(monkeypatch, site)
    use_nvml(monkeypatch, tmp_path, [h200(0)])
    path = str(tmp_path / "facts.json")
    run = run_cli(["probe", "--format", "json", "--timeout", IMPORT_TIMEOUT_S, "-o", path])
    assert_clean_outcome(run)
    assert run.code == 0 and run.out == ""
    facts = json.loads(Path(path).read_text())
    assert_report_complete(facts)
    return facts, check_report("--facts", path, "--attention-backend", backend)


def test_kernel_library_import_raises_undefined_symbol(monkeypatch, tmp_path):
    site = tmp_path / "site"
    make_dist(site, "flash-attn-4", "4.0.0b36", {"flash_attn/cute/__init__.py": UNDEFINED_SYMBOL.format(site=site)})
    facts, report = _probe_then_check(monkeypatch, tmp_path, site, "fa4")
    health = libraries(facts)["fa4"]["health"]
    assert health["status"] == "error" and "undefined symbol: _ZN3c105Error" in health["error"]
    assert "built against a different torch than" in health["diagnosis"]
    assert findings(report, "fail", "flash-attn-4", "undefined symbol"), [f["message"] for f in report["findings"]]


def test_kernel_library_segfaults_on_import(monkeypatch, tmp_path):
    site = tmp_path / "site"
    make_dist(site, "sglang-kernel", "0.4.10", {"sgl_kernel/__init__.py": SEGFAULT})
    facts, report = _probe_then_check(monkeypatch, tmp_path, site, "fa3")
    health = libraries(facts)["sgl_kernel"]["health"]
    assert health["status"] == "crashed" and health["error"].startswith("killed by SIGSEGV")
    assert findings(report, "fail", "sgl-kernel", "sigsegv"), [f["message"] for f in report["findings"]]


def test_kernel_library_hangs_on_import(monkeypatch, tmp_path):
    site = tmp_path / "site"
    make_dist(site, "flashinfer-python", "0.5.3", {"flashinfer/__init__.py": HANG})
    facts, report = _probe_then_check(monkeypatch, tmp_path, site, "flashinfer")
    health = libraries(facts)["flashinfer"]["health"]
    assert health["status"] == "timeout" and f"within {IMPORT_TIMEOUT_S} s" in health["error"]
    assert findings(report, "fail", "flashinfer", "timeout") or findings(
        report, "fail", "flashinfer", "did not finish"
    ), [f["message"] for f in report["findings"]]


def test_probe_timeout_cuts_a_hanging_import_in_a_live_check(monkeypatch, tmp_path):
    """check with no --gpu/--facts probes this machine: --probe-timeout is the limit the hanging import meets."""
    site = tmp_path / "site"
    make_dist(site, "flash-attn-4", "4.0.0b36", {"flash_attn/cute/__init__.py": HANG})
    use_site(monkeypatch, site)
    use_nvml(monkeypatch, tmp_path, [h200(0)])
    report = check_report("--probe-timeout", "2", "--model", "llama-3.1-8b", "--attention-backend", "fa4")
    assert report["target"]["kind"] == "live"
    finding = by_rule(report, "install-fa4-library")
    assert finding["status"] == "fail" and "did not finish within 2 s" in finding["message"], finding["message"]


def test_cutlass_dsl_installed_without_its_pth(monkeypatch, tmp_path):
    site = tmp_path / "site"
    dsl_packages = make_cutlass_dsl(site, with_pth=False)
    make_dist(site, "flash-attn-4", "4.0.0b36", {"flash_attn/cute/__init__.py": "import cutlass.cute\n"})
    facts, report = _probe_then_check(monkeypatch, tmp_path, site, "fa4")
    for key in ("cutlass_dsl", "fa4"):
        health = libraries(facts)[key]["health"]
        assert health["status"] == "error" and "its .pth file" in health["diagnosis"]
        assert str(dsl_packages) in health["diagnosis"]
    assert findings(report, "fail", ".pth"), [f["message"] for f in report["findings"]]


# ------------------------------------------------------------------------------------------------ smoke

# Kernels that misbehave inside smoke's worker processes, beside a healthy one (the witness that the others
# still run and check out). CPU-only, tiny shapes: the cost is each worker's `import torch`.
FAULT_KERNELS = """
import os, signal, time
from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel

CASE = Case(dtype="fp32", batch=1, seqlen_q=32, seqlen_k=32, heads_q=2, heads_kv=2, head_dim=32)


def _build(fault):
    def build(case, device):
        from attn_preflight.probe.smoke.reference import Call, Inputs, attention_reference

        q, k, v = Inputs(case, device).dense()
        reference = attention_reference(q, k, v, case)

        def run():
            if fault == "segfault":
                os.kill(os.getpid(), signal.SIGSEGV)
            if fault == "hang":
                time.sleep(600)
            return reference + 0.5 if fault == "wrong" else reference.clone()

        return Call(run, reference)
    return build


def _import_fails():
    raise ImportError("libcudart.so.13: cannot open shared object file: No such file or directory")


KERNELS = [Kernel(name="injected-" + fault, family="injected", title="injected " + fault, api="tests/test_faults.py",
                  quick=CASE, build=_build(fault), needs_gpu=False) for fault in ("segfault", "hang", "wrong", "healthy")]
KERNELS.append(Kernel(name="injected-import", family="injected", title="injected import failure",
                      api="tests/test_faults.py", quick=CASE, build=_build("none"), prepare=_import_fails,
                      needs_gpu=False))
"""


@pytest.fixture
def fault_kernels(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from attn_preflight.probe.smoke import kernels

    site = tmp_path / "kernels"
    site.mkdir()
    (site / "fault_kernels.py").write_text(FAULT_KERNELS)
    use_site(monkeypatch, site)
    monkeypatch.setattr(kernels, "FAMILY_MODULES", ("attn_preflight.probe.smoke.kernels.sdpa", "fault_kernels"))


def smoke(kernel: str, timeout: str = "60"):
    run = run_cli(
        [
            "smoke",
            "--kernel",
            kernel,
            "--kernel",
            "injected-healthy",
            "--timeout",
            timeout,
            "--jobs",
            "2",
            "--format",
            "json",
        ]
    )
    assert_clean_outcome(run)
    report = json.loads(run.out)
    results = {r["kernel"]: r for r in report["results"]}
    witness = results["injected-healthy"]
    assert witness["status"] == "ok" and witness["max_abs_error"] == 0.0, witness  # still ran, and checks out
    progress = [line for line in run.err_lines if line.strip()]
    assert any(kernel in line for line in progress) and any("injected-healthy" in line for line in progress)
    return run.code, results[kernel]


def test_smoke_kernel_segfaults(fault_kernels):
    code, result = smoke("injected-segfault")
    assert code == 1
    assert result["status"] == "crashed" and result["message"].startswith("killed by SIGSEGV")
    assert result["reproduce"].startswith(
        f"{sys.executable} -m attn_preflight.probe.smoke.worker fault_kernels injected-segfault "
    )


def test_smoke_kernel_hangs(fault_kernels):
    code, result = smoke("injected-hang", timeout="8")
    assert code == 1
    assert result["status"] == "timeout" and result["message"].startswith("no result within 8 s")


def test_smoke_kernel_returns_wrong_numbers(fault_kernels):
    code, result = smoke("injected-wrong")
    assert code == 1
    assert result["status"] == "wrong" and result["max_abs_error"] == pytest.approx(0.5)
    assert "above the tolerance" in result["message"]


def test_smoke_kernel_library_fails_to_import(fault_kernels):
    code, result = smoke("injected-import")
    assert code == 1
    assert result["status"] == "error" and "libcudart.so.13: cannot open shared object file" in result["message"]


# ------------------------------------------------------------------------------------- read-only HOME/cache


@pytest.fixture(params=["xdg-cache-unwritable", "home-unwritable"])
def unwritable_cache(request, monkeypatch, tmp_path):
    """No cache directory can be created. A path below a regular file cannot be a directory for anyone,
    root included (CI runs as root, where chmod 0o555 alone would not stop a write)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o555)
    if request.param == "xdg-cache-unwritable":
        monkeypatch.setenv("HOME", str(read_only))
        monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
    else:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv("HOME", str(blocker))
    yield blocker
    read_only.chmod(0o755)


def test_read_only_home_and_cache_probe_and_check(unwritable_cache, monkeypatch, tmp_path):
    use_nvml(monkeypatch, tmp_path, [h200(0)])
    for _ in range(2):  # the second run finds no cache either, and must not pretend it did
        facts = probe_facts()
        assert_report_complete(facts)
        assert not any(lib["health"]["cached"] for lib in facts["libraries"])
    report = check_report("--attention-backend", "fa3")
    assert report["target"]["gpu"] == "NVIDIA H200"


def test_read_only_home_and_cache_smoke(unwritable_cache, fault_kernels):
    run = run_cli(["smoke", "--kernel", "injected-healthy", "--format", "json"])
    assert_clean_outcome(run)
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert [r["status"] for r in report["results"]] == ["ok"]
    notes = report["machine"]["cache_notes"]
    assert notes and all("cannot write" in note for note in notes)  # each cache left out is named


# ------------------------------------------------------------------------------------------ bad input files

GARBAGE_CONFIGS = {
    "not-json": b"{'architectures': ['LlamaForCausalLM'],",
    "empty": b"",
    "binary": bytes(range(256)),
    "json-array": b"[1, 2, 3]",
    "json-string": b'"LlamaForCausalLM"',
    "truncated": b'{"architectures": ["LlamaForCausalLM"], "num_attention_heads": 3',
}


@pytest.mark.parametrize("kind", sorted(GARBAGE_CONFIGS))
def test_garbage_config_json(tmp_path, kind):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_bytes(GARBAGE_CONFIGS[kind])
    for argv in (
        ["check", "--gpu", "H100", "--model", str(model), "--attention-backend", "fa3"],
        ["fleet", str(CI_FACTS), "--model", str(model)],
    ):
        run = run_cli(argv)
        assert_clean_outcome(run, argv)
        assert run.code == 2 and run.out == ""
        assert str(model / "config.json") in run.err_lines[0]


def test_facts_file_from_a_newer_schema(tmp_path):
    newer = json.loads(CI_FACTS.read_text())
    newer["schema_version"] = 2
    newer["gpus"]["accelerators"] = []  # what a future schema might add
    path = save(tmp_path, newer, "newer.json")

    run = run_cli(["check", "--facts", path, "--attention-backend", "fa3"])
    assert_clean_outcome(run)
    assert run.code == 2 and run.out == ""
    assert path in run.err_lines[0] and "schema_version 2 is not supported" in run.err_lines[0]

    # In a fleet, the newer report is named and left out; the others are still merged and judged.
    good = save(tmp_path, ci_facts_with([("NVIDIA H200", 9, 0, 143771)]), "good.json")
    shutil.copy(CI_FACTS, tmp_path / "ci.json")
    run = run_cli(["fleet", good, str(tmp_path / "ci.json"), path, "--format", "json"])
    assert "Traceback" not in run.err
    assert run.code == 2  # a node that was not judged is never a pass
    assert run.err_lines == [
        f"attn-preflight: skipped {path}: schema_version 2 is not supported (this "
        "attn-preflight reads schema_version 1); re-run `attn-preflight probe --format json` "
        "with this version"
    ]
    fleet = json.loads(run.out)
    assert fleet["reports"] == 3 and fleet["nodes"] == 2 and [s["file"] for s in fleet["skipped"]] == [path]
    assert len(fleet["groups"]) == 2
