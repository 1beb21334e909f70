"""Import checks through the real subprocess machinery, on tiny fake packages: every way an import can
fail becomes a value; the cache answers a second run; diagnoses name both sides."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from probe_fakes import HANG, SEGFAULT, UNDEFINED_SYMBOL, make_cutlass_dsl, make_dist

from attn_preflight.probe import health
from attn_preflight.probe.facts import (
    HEALTH_CRASHED,
    HEALTH_ERROR,
    HEALTH_OK,
    HEALTH_TIMEOUT,
    Facts,
    GpuFacts,
    HostFacts,
    ImportHealth,
    LibraryFacts,
    TorchFacts,
)
from attn_preflight.probe.health import ImportRequest, check_imports, missing_module_facts
from attn_preflight.rules.knowledge.import_diagnosis import diagnose, error_diagnosis


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A directory on the children's PYTHONPATH (and ours), with a fresh cache."""
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(directory))
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return directory


def module(site, name, text):
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(text)


def test_ok_import_reports_version_origin_details_and_components(site):
    module(site, "goodlib", "__version__ = '1.2.3'\nVALUE = 41\n")
    (site / "goodlib" / "part.py").write_text("")
    request = ImportRequest(
        "good",
        "goodlib",
        details={"answer": "mod.VALUE + 1", "broken": "mod.missing"},
        components={"part": "goodlib.part", "absent": "goodlib.absent"},
    )
    result = check_imports([request], timeout=30, use_cache=False)["good"]
    assert result.status == HEALTH_OK and result.module == "goodlib" and result.error is None
    assert result.details["module_version"] == "1.2.3"
    assert result.details["origin"] == str(site / "goodlib" / "__init__.py")
    assert result.details["answer"] == 42
    assert result.details["broken"] == {"error": "AttributeError: module 'goodlib' has no attribute 'missing'"}
    assert result.details["components"]["part"] == {"module": "goodlib.part", "status": "ok"}
    assert result.details["components"]["absent"]["error"] == "ModuleNotFoundError: No module named 'goodlib.absent'"


def test_import_error_keeps_the_whole_exception_chain(site):
    # sgl_kernel.flash_attn hides its cause behind a generic ImportError: the cause must survive.
    module(
        site,
        "wrapped",
        "try:\n    import missing_ext\nexcept Exception:\n"
        "    raise ImportError('Can not import sgl_kernel. Please check your installation.')\n",
    )
    result = check_imports([ImportRequest("w", "wrapped")], timeout=30, use_cache=False)["w"]
    assert result.status == HEALTH_ERROR
    assert result.error == "ImportError: Can not import sgl_kernel. Please check your installation."
    assert result.causes == ["ModuleNotFoundError: No module named 'missing_ext'"]


def test_undefined_symbol_segfault_and_hang_in_parallel(site):
    module(site, "abi", UNDEFINED_SYMBOL.format(site=site))
    module(site, "crash", SEGFAULT)
    module(site, "stuck", HANG)
    requests = [ImportRequest("abi", "abi"), ImportRequest("crash", "crash"), ImportRequest("stuck", "stuck")]
    results = check_imports(requests, timeout=3, use_cache=False)
    assert results["abi"].status == HEALTH_ERROR and "undefined symbol: _ZN3c105Error" in results["abi"].error
    crash = results["crash"]
    assert crash.status == HEALTH_CRASHED and crash.error.startswith("killed by SIGSEGV")
    assert any('crash/__init__.py", line 2' in cause for cause in crash.causes)  # faulthandler's frame
    stuck = results["stuck"]
    assert stuck.status == HEALTH_TIMEOUT and stuck.error == "the import did not finish within 3 s and was killed"
    assert any('stuck/__init__.py", line 2' in cause for cause in stuck.causes)  # dumped before the kill


def test_checks_run_in_parallel(site):
    for name in ("slow_a", "slow_b", "slow_c"):
        module(
            site,
            name,
            f"import time, pathlib\np = pathlib.Path({str(site)!r}) / '{name}.times'\n"
            "start = time.time(); time.sleep(1.0); p.write_text(f'{start} {time.time()}')\n",
        )
    requests = [ImportRequest(name, name) for name in ("slow_a", "slow_b", "slow_c")]
    assert {r.status for r in check_imports(requests, timeout=30, use_cache=False).values()} == {HEALTH_OK}
    spans = [tuple(map(float, (site / f"{n}.times").read_text().split())) for n in ("slow_a", "slow_b", "slow_c")]
    assert max(start for start, _ in spans) < min(end for _, end in spans)  # all three were importing at once


def test_timeout_kills_the_whole_process_group(site):
    pid_file = site / "grandchild.pid"
    module(
        site,
        "spawner",
        "import subprocess, time\n"
        f"p = subprocess.Popen(['sleep', '600'])\nopen({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n",
    )
    result = check_imports([ImportRequest("s", "spawner")], timeout=2, use_cache=False)["s"]
    assert result.status == HEALTH_TIMEOUT
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_exit_during_import_and_systemexit_are_errors(site):
    module(site, "quits", "import os\nos._exit(3)\n")
    module(site, "exits", "raise SystemExit('no GPU, bye')\n")
    results = check_imports([ImportRequest("q", "quits"), ImportRequest("e", "exits")], timeout=30, use_cache=False)
    assert results["q"].status == HEALTH_ERROR
    assert results["q"].error == "the import check exited with status 3 before reporting"
    assert results["e"].status == HEALTH_ERROR and results["e"].error == "SystemExit: no GPU, bye"


def test_child_has_no_terminal_and_no_stdin(site):
    module(
        site,
        "ttycheck",
        "import os, sys\nassert sys.stdin.read() == ''\n"
        "try:\n    os.open('/dev/tty', os.O_RDWR)\nexcept OSError:\n    pass\n"
        "else:\n    raise RuntimeError('has a controlling terminal')\n",
    )
    assert check_imports([ImportRequest("t", "ttycheck")], timeout=30, use_cache=False)["t"].status == HEALTH_OK


def test_cache_answers_the_second_run_and_is_invalidated_by_an_install(site, tmp_path):
    counter = tmp_path / "imports.count"  # not in a sys.path directory, whose mtime is part of the key
    module(
        site,
        "counted",
        f"import pathlib\np = pathlib.Path({str(counter)!r})\n"
        "p.write_text(str(int(p.read_text() or 0) + 1) if p.exists() else '1')\n",
    )
    module(site, "stuck", HANG)
    requests = [ImportRequest("c", "counted"), ImportRequest("s", "stuck")]
    first = check_imports(requests, timeout=2)
    assert first["c"].status == HEALTH_OK and not first["c"].cached
    second = check_imports(requests, timeout=2)
    assert second["c"].cached and second["c"].status == HEALTH_OK and counter.read_text() == "1"
    assert second["s"].status == HEALTH_TIMEOUT and not second["s"].cached  # timeouts are always re-checked
    make_dist(site, "newdist", "1.0")  # anything installed changes the answer
    third = check_imports(requests[:1], timeout=2)
    assert not third["c"].cached and counter.read_text() == "2"
    fourth = check_imports(requests[:1], timeout=2, use_cache=False)
    assert not fourth["c"].cached and counter.read_text() == "3"


def test_unwritable_or_corrupt_cache_breaks_nothing(site, tmp_path, monkeypatch):
    module(site, "plain", "")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "under-a-file"))  # cannot be created, even by root
    assert check_imports([ImportRequest("p", "plain")], timeout=30)["p"].status == HEALTH_OK
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "corrupt"))
    cache_file = health.ImportCache.open().path
    os.makedirs(os.path.dirname(cache_file))
    with open(cache_file, "w") as handle:
        handle.write("{not json")
    result = check_imports([ImportRequest("p", "plain")], timeout=30)["p"]
    assert result.status == HEALTH_OK and not result.cached
    assert json.load(open(cache_file))  # rewritten


def test_cancel_stops_running_checks(site):
    import threading

    module(site, "stuck", HANG)
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    started = time.monotonic()
    results = check_imports([ImportRequest("s", "stuck")], timeout=60, use_cache=False, cancel=cancel)
    assert results == {} and time.monotonic() - started < 30


def test_children_import_from_our_sys_path_and_never_from_the_working_directory(tmp_path, monkeypatch):
    """The child gets this process's sys.path (not PYTHONPATH: -I ignores it) without the cwd, where a module
    of the same name must not be what is imported."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    only_on_sys_path, cwd = tmp_path / "env", tmp_path / "cwd"
    only_on_sys_path.mkdir(), cwd.mkdir()
    module(only_on_sys_path, "extra", "WHERE = 'sys.path'\n")
    monkeypatch.syspath_prepend(str(only_on_sys_path))
    module(cwd, "cwdonly", "")
    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend("")  # what `python -c` and `python -m` put first
    monkeypatch.syspath_prepend(str(cwd))
    requests = [ImportRequest("extra", "extra", details={"where": "mod.WHERE"}), ImportRequest("cwd", "cwdonly")]
    results = check_imports(requests, timeout=30, use_cache=False)
    assert results["extra"].status == HEALTH_OK and results["extra"].details["where"] == "sys.path"
    assert (
        results["cwd"].status == HEALTH_ERROR
        and results["cwd"].error == "ModuleNotFoundError: No module named 'cwdonly'"
    )


# ------------------------------------------------------------------------------------------------ diagnoses


def facts_with(torch_version="2.11.0+cu130", torch_cuda="13.0", driver="580.95.05", cuda_driver="13.0"):
    return Facts(
        host=HostFacts(python_version="3.12.3", cpu_arch="x86_64"),
        gpus=GpuFacts(driver_version=driver, cuda_driver_version=cuda_driver),
        torch=TorchFacts(installed=torch_version is not None, version=torch_version, cuda=torch_cuda),
    )


FA2 = LibraryFacts(
    key="fa2",
    title="FlashAttention 2",
    distributions={"flash-attn": "2.8.3"},
    version="2.8.3",
    import_name="flash_attn.flash_attn_interface",
)


def diag(*texts, lib=FA2, facts=None, sys_path=None):
    """The diagnosis of an error chain, as a report records it (probe: what would provide a missing module)
    and a render judges it (rules)."""
    missing = missing_module_facts(list(texts), sys_path or [])
    return error_diagnosis("flash-attn 2.8.3", list(texts), lib, facts or facts_with(), missing)


def test_undefined_torch_symbol_names_both_sides():
    text = (
        "ImportError: /x/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEa"
    )
    got = diag(text)
    assert "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so needs torch symbol _ZN3c104cuda9SetDeviceEa" in got
    assert "built against a different torch than the installed torch 2.11.0+cu130" in got
    assert "reinstall a build of it for torch 2.11, CUDA 13.0" in got
    assert "torch, which is not installed here" in diag(text, facts=facts_with(torch_version=None))


def test_other_undefined_symbols():
    assert "built for a different Python than 3.12.3" in diag("ImportError: x.so: undefined symbol: PyCode_New")
    assert "different CUDA than torch's 13.0" in diag("ImportError: x.so: undefined symbol: cudaGetDriverEntryPoint")
    assert "symbol foo_bar that no loaded library provides" in diag("ImportError: x.so: undefined symbol: foo_bar")


def test_missing_cuda_runtime_of_another_major_is_a_cuda_mismatch():
    got = diag("ImportError: libcudart.so.12: cannot open shared object file: No such file or directory")
    assert "libcudart.so.12 is missing → built for CUDA 12, but torch here is built for CUDA 13.0" in got
    assert "install its build for CUDA 13" in got
    same = diag("ImportError: libcublas.so.13: cannot open shared object file: No such file or directory")
    assert "not on the loader path" in same and "nvidia-*-cu13" in same
    assert "NVIDIA driver's CUDA library" in diag("OSError: libcuda.so.1: cannot open shared object file")


def test_driver_too_old_names_driver_and_cuda():
    got = diag(
        "RuntimeError: The NVIDIA driver on your system is too old (found version 12040).",
        facts=facts_with(driver="550.54.15", cuda_driver="12.4"),
    )
    assert "driver 550.54.15 (supports CUDA up to 12.4)" in got and "torch is built for CUDA 13.0" in got


def test_glibcxx_and_flashinfer_skew_and_unknown():
    assert "GLIBCXX_3.4.32 from libstdc++" in diag(
        "ImportError: /lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found"
    )
    flashinfer = LibraryFacts(
        key="flashinfer",
        title="FlashInfer",
        version="0.7.4",
        distributions={"flashinfer-python": "0.7.4", "flashinfer-cubin": "0.7.3"},
    )
    got = diag(
        "RuntimeError: flashinfer-cubin version (0.7.3) does not match flashinfer version (0.7.4)", lib=flashinfer
    )
    assert "flashinfer-python 0.7.4, flashinfer-cubin 0.7.3" in got
    assert diag("ValueError: something new") is None


def test_missing_dependency_and_broken_own_module():
    assert "needs module einops, which is not installed" in diag("ModuleNotFoundError: No module named 'einops'")
    own = diag("ModuleNotFoundError: No module named 'flash_attn'")
    assert "is installed but its module flash_attn is not importable" in own


def test_cutlass_pth_not_processed_names_the_directory(site):
    dsl_packages = make_cutlass_dsl(site)
    got = diag("ModuleNotFoundError: No module named 'cutlass'", sys_path=[str(site)])
    assert got.startswith(
        "No module named cutlass while nvidia-cutlass-dsl 4.8.1 is installed → its .pth file "
        "(nvidia_cutlass_dsl_packages.pth) was not processed (installed with --target / PYTHONPATH"
    )
    assert f"add {dsl_packages} to sys.path" in got
    # with the directory on sys.path the .pth is not the explanation
    assert "not processed" not in diag(
        "ModuleNotFoundError: No module named 'cutlass'", sys_path=[str(site), str(dsl_packages)]
    )


def test_cutlass_pth_deleted_by_an_upgrade(site):
    dsl_packages = make_cutlass_dsl(site, with_pth=False)
    got = diag("ModuleNotFoundError: No module named 'cutlass'", sys_path=[str(site)])
    assert "nvidia-cutlass-dsl 4.8.1 is installed → its .pth file" in got and "is missing" in got
    assert f"add {dsl_packages} to sys.path" in got


def test_crash_and_timeout_diagnoses():
    lib = LibraryFacts(
        key="xformers",
        title="xFormers",
        distributions={"xformers": "0.0.30"},
        version="0.0.30",
        health=ImportHealth(
            status=HEALTH_CRASHED,
            module="xformers",
            error=f"killed by {health.signal_name(signal.SIGSEGV)}",
            causes=['File "/s/xformers/__init__.py", line 2 in <module>'],
        ),
    )
    got = diagnose(lib, facts_with())
    assert got.startswith("xformers 0.0.30: the import was killed by SIGSEGV (Segmentation fault) at File")
    assert "the installed torch 2.11.0+cu130" in got and "python -X faulthandler -c 'import xformers'" in got
    lib.health = ImportHealth(status=HEALTH_TIMEOUT, module="xformers", error="...", causes=[])
    assert "the import hung" in diagnose(lib, facts_with())
    lib.health = ImportHealth(status=HEALTH_OK)
    assert diagnose(lib, facts_with()) is None


def test_a_hand_edited_missing_module_fact_is_not_trusted():
    """A report whose recorded .pth fact lost a key (or is not an object) gets the plain diagnosis, not a crash."""
    texts = ["ModuleNotFoundError: No module named 'cutlass'"]
    broken = {"module": "cutlass", "providers": "nvidia-cutlass-dsl", "pth": {"distribution": "x", "version": "1"}}
    got = error_diagnosis("flash-attn 2.8.3", texts, FA2, facts_with(), broken)
    assert got == "flash-attn 2.8.3 needs module cutlass, which is not installed (a missing dependency): install it"
    assert error_diagnosis("flash-attn 2.8.3", texts, FA2, facts_with(), ["not", "a", "dict"]) == got
