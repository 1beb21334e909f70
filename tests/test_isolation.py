"""Guarantees under attack, through the real CLI in a subprocess (issue 12, items 2, 3 and 6): nothing runs from
the working directory, a libnvidia-ml that hangs, segfaults or aborts costs only its own answer, and Ctrl-C
or SIGTERM leaves no child and no temporary directory behind.

The attn-preflight under test is the one this test imports (its checkout goes on PYTHONPATH), so the same
file can be run against another checkout's code to see it fail there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_run import assert_clean_outcome, run_cli
from probe_fakes import h200, make_dist, write_fake_pynvml

import attn_preflight.probe
from attn_preflight.probe import gpus
from attn_preflight.probe.libraries import CATALOGUE

CODE_ROOT = Path(attn_preflight.probe.__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# Leaves a mark next to itself when imported: nothing of ours may import it.
TRAP = "import pathlib\npathlib.Path(__file__).resolve().parent.joinpath('TRAP-RAN').write_text(__name__)\n"
CONSOLE_SCRIPT = "import sys\nfrom attn_preflight.start import main\nsys.exit(main())\n"


@pytest.fixture
def world(tmp_path):
    """A hostile working directory, a private cache and temp dir, and the environment for the CLI."""
    cwd, cache, tmp, bin_dir = (tmp_path / name for name in ("cwd", "cache", "tmp", "bin"))
    for directory in (cwd, cache, tmp, bin_dir):
        directory.mkdir()
    (bin_dir / "attn-preflight").write_text(CONSOLE_SCRIPT)  # what pip's console script does
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(CODE_ROOT), str(TESTS)]),
        "XDG_CACHE_HOME": str(cache),
        "TMPDIR": str(tmp),
    }
    return {"cwd": cwd, "tmp": tmp, "env": env, "script": bin_dir / "attn-preflight", "root": tmp_path}


def on_path(world, directory: Path) -> None:
    world["env"]["PYTHONPATH"] = os.pathsep.join([str(directory), world["env"]["PYTHONPATH"]])


def attn_preflight(world, *argv: str, as_module: bool = True, timeout: float = 240) -> subprocess.CompletedProcess:
    """`python -m attn_preflight ARGV` (the working directory first on our own sys.path), or the console script."""
    launcher = ["-m", "attn_preflight"] if as_module else [str(world["script"])]
    return subprocess.run(
        [sys.executable, *launcher, *argv],
        cwd=world["cwd"],
        env=world["env"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_trap_untouched(world) -> None:
    ran = list(world["cwd"].rglob("TRAP-RAN"))
    assert not ran, f"code from the working directory ran: {ran}"


def library(report: dict, key: str) -> dict:
    return next(lib for lib in report["libraries"] if lib["key"] == key)


# ------------------------------------------------------------------------------- nothing from the cwd


def test_a_torch_py_in_the_cwd_is_not_run_by_probe_or_check(world):
    pytest.importorskip("torch")
    (world["cwd"] / "torch.py").write_text(TRAP)
    done = attn_preflight(world, "probe", "--format", "json", "--no-cache")
    assert done.returncode == 0, done.stderr
    torch = library(json.loads(done.stdout), "torch")
    assert torch["health"]["status"] == "ok" and not torch["health"]["details"]["origin"].startswith(str(world["cwd"]))
    assert_trap_untouched(world)

    done = attn_preflight(world, "check", "--attention-backend", "fa3", "--format", "json")
    assert done.returncode in (0, 1) and json.loads(done.stdout)["verdict"], done.stderr
    assert_trap_untouched(world)


def test_a_torch_py_in_the_cwd_is_not_run_by_smoke(world):
    pytest.importorskip("torch")
    (world["cwd"] / "torch.py").write_text(TRAP)
    done = attn_preflight(world, "smoke", "--kernel", "sdpa-math", "--format", "json")
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert result["status"] == "ok", result
    assert_trap_untouched(world)


def test_a_probe_package_in_the_cwd_is_not_run_by_smoke_workers(world):
    pytest.importorskip("torch")
    for relative in ("probe/__init__.py", "probe/smoke/__init__.py", "probe/smoke/worker.py"):
        (world["cwd"] / relative).parent.mkdir(parents=True, exist_ok=True)
        (world["cwd"] / relative).write_text(TRAP)
    done = attn_preflight(world, "smoke", "--kernel", "sdpa-math", "--format", "json", as_module=False)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert result["status"] == "ok", result
    assert_trap_untouched(world)


def test_a_stray_flash_attn_interface_in_the_cwd_is_not_an_fa3(world):
    (world["cwd"] / "flash_attn_interface.py").write_text(TRAP)
    done = attn_preflight(world, "probe", "--format", "json", "--no-cache")
    assert done.returncode == 0, done.stderr
    fa3 = library(json.loads(done.stdout), "fa3")
    assert fa3["health"]["status"] == "not_installed" and fa3["module_path"] is None, fa3
    assert_trap_untouched(world)


# ---------------------------------------------------------------------- NVML that hangs or crashes


@pytest.mark.parametrize(
    "fault, reason",
    [("segfault", "NVML query crashed: killed by SIGSEGV"), ("abort", "NVML query crashed: killed by SIGABRT")],
)
def test_nvml_crashing_in_init_is_a_value_in_a_complete_report(world, fault, reason):
    on_path(world, write_fake_pynvml(world["root"] / "nvml", [h200(0)], init_fault=fault))
    done = attn_preflight(world, "probe", "--no-imports", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["gpus"]["devices"] == [] and report["gpus"]["error"].startswith(reason), report["gpus"]
    assert report["host"]["python_version"] and len(report["libraries"]) == len(CATALOGUE)


@pytest.mark.parametrize("fault", ["hang", "segfault", "abort"])
def test_nvml_hanging_or_crashing_does_not_take_down_probe_check_or_smoke(fault, monkeypatch, tmp_path):
    """In this process (so that the NVML deadline can be short); the fake libnvidia-ml is the NVML child's."""
    monkeypatch.setattr(gpus, "NVML_TIMEOUT_S", 2.0)
    monkeypatch.syspath_prepend(str(write_fake_pynvml(tmp_path / "nvml", [h200(0)], init_fault=fault)))
    reason = {
        "hang": "NVML query timed out after 2 s",
        "segfault": "NVML query crashed: killed by SIGSEGV",
        "abort": "NVML query crashed: killed by SIGABRT",
    }
    started = time.monotonic()
    run = run_cli(["probe", "--no-imports", "--format", "json"])
    assert_clean_outcome(run)
    assert run.code == 0 and reason[fault] in json.loads(run.out)["gpus"]["error"]

    run = run_cli(["check", "--attention-backend", "fa3", "--format", "json"])
    assert_clean_outcome(run)
    no_gpu = next(f for f in json.loads(run.out)["findings"] if f["rule_id"] == "install-no-cuda-gpu")
    assert run.code == 1 and no_gpu["status"] == "fail" and reason[fault] in no_gpu["message"]

    run = run_cli(["smoke", "--kernel", "sdpa-flash", "--format", "json"])
    assert_clean_outcome(run)
    report = json.loads(run.out)
    assert reason[fault] in report["machine"]["gpu_error"]
    assert time.monotonic() - started < 90


# ------------------------------------------------------------------------- nothing left behind

# An import that never ends, having started a grandchild of its own; both write their pids first.
SLOW_IMPORT = """import os, subprocess, time
helper = subprocess.Popen(["sleep", "600"])
with open({pids!r}, "a") as out:
    out.write(f"{{os.getpid()}} {{helper.pid}}\\n")
time.sleep(600)
"""
# nvmlInit that never returns, its pid written first.
HANGING_NVML = """import os, time
def nvmlInit():
    with open({pids!r}, "a") as out:
        out.write(f"{{os.getpid()}}\\n")
    time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def wait_for(predicate, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.mark.parametrize("nvml_hangs", [False, True], ids=["nvml-answers", "nvml-hangs"])
@pytest.mark.parametrize(
    "signum",
    [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT],
    ids=["ctrl-c", "sigterm", "sighup", "sigquit"],
)
def test_interrupting_probe_mid_import_leaves_no_child_and_no_temp_dir(world, signum, nvml_hangs):
    site = world["root"] / "site"
    import_pids, nvml_pids = world["root"] / "import.pids", world["root"] / "nvml.pids"
    make_dist(site, "xformers", "0.0.30", {"xformers/__init__.py": SLOW_IMPORT.format(pids=str(import_pids))})
    if nvml_hangs:
        (site / "pynvml.py").write_text(HANGING_NVML.format(pids=str(nvml_pids)))
    else:
        write_fake_pynvml(site, [h200(0)])
        nvml_pids.write_text("")
    on_path(world, site)
    process = subprocess.Popen(
        [sys.executable, "-m", "attn_preflight", "probe", "--format", "json"],
        cwd=world["cwd"],
        env=world["env"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: [
            signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)
        ],  # nohup, a background job
    )
    pids: list[int] = []
    try:
        wait_for(lambda: import_pids.exists() and nvml_pids.exists() and len(import_pids.read_text().split()) == 2)
        pids = [int(p) for p in import_pids.read_text().split() + nvml_pids.read_text().split()]
        assert all(alive(pid) for pid in pids)
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
        assert "Traceback" not in err, err
        wait_for(lambda: not any(alive(pid) for pid in pids), seconds=10)
        assert list(world["tmp"].iterdir()) == []
    finally:  # what a failing run left behind, by pid: these are this test's own processes
        process.kill()
        for pid in filter(alive, pids):
            os.kill(pid, signal.SIGKILL)


# A tool that starts a probe child (as smoke starts its workers) whose code starts a grandchild and hangs.
TOOL_WITH_A_WORKER = """
import sys
from attn_preflight.probe.children import probe_argv, spawn
worker = (
    "import subprocess, time\\n"
    "helper = subprocess.Popen(['sleep', '600'])\\n"
    f"open({sys.argv[1]!r}, 'w').write(f'{{os.getpid()}} {{helper.pid}}')\\n"
    "time.sleep(600)\\n"
)
spawn(probe_argv("import os\\n" + worker), "/")
import time; time.sleep(600)
"""


def test_what_a_worker_started_dies_with_a_tool_killed_by_sigkill(tmp_path):
    """PR_SET_PDEATHSIG reaches only the worker: the guard each probe child forks first kills its process group
    (what a kernel library started in it) when the worker ends."""
    pids = tmp_path / "pids"
    tool = subprocess.Popen([sys.executable, "-c", TOOL_WITH_A_WORKER, str(pids)])
    started: list[int] = []
    try:
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
        started = [int(pid) for pid in pids.read_text().split()]
        assert all(alive(pid) for pid in started)
        tool.kill()
        tool.wait()
        wait_for(lambda: not any(alive(pid) for pid in started), seconds=10)
    finally:  # what a failing run left behind, by pid: this test's own processes
        tool.kill()
        for pid in filter(alive, started):
            os.kill(pid, signal.SIGKILL)


# nvmlInit that notes what the NVML child had loaded when it began, then answers as an H200 would.
NOTING_NVML = """import sys
from probe_fakes import fake_pynvml, h200
_nvml = fake_pynvml([h200(0)])
def _init():
    with open({mark!r}, "w") as out:
        out.write(repr(sorted(name for name in ("click", "attn_preflight.cli", "attn_preflight.rules") if name in sys.modules)))
_nvml.nvmlInit = _init
sys.modules[__name__] = _nvml
"""


@pytest.mark.parametrize("as_module", [True, False], ids=["python-m", "console-script"])
def test_probe_forks_the_nvml_query_before_the_cli_loads(world, as_module):
    """NVML's init is most of a quick probe's time: it runs beside click's and the tool's imports (issue 9)."""
    site, mark = world["root"] / "site", world["root"] / "loaded"
    site.mkdir()
    (site / "pynvml.py").write_text(NOTING_NVML.format(mark=str(mark)))
    on_path(world, site)
    done = attn_preflight(world, "probe", "--no-imports", "--format", "json", as_module=as_module)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["gpus"]["devices"][0]["name"] == "NVIDIA H200"
    assert mark.read_text() == "[]"


def test_a_probe_usage_error_leaves_no_nvml_child(world):
    site, nvml_pids = world["root"] / "site", world["root"] / "nvml.pids"
    site.mkdir()
    (site / "pynvml.py").write_text(HANGING_NVML.format(pids=str(nvml_pids)))
    on_path(world, site)
    started = time.monotonic()
    done = attn_preflight(world, "probe", "--format", "nope", timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert time.monotonic() - started < 10  # not NVML's 15 s deadline: the child was killed, not waited for
    pids = [int(pid) for pid in nvml_pids.read_text().split()] if nvml_pids.exists() else []
    wait_for(lambda: not any(alive(pid) for pid in pids), seconds=5)


def test_a_probe_killed_with_sigkill_leaves_no_child_and_the_next_run_sweeps_its_temp_dir(world):
    """SIGKILL cannot be caught: each child dies with its parent (PR_SET_PDEATHSIG, set by the child itself), a
    process the library started with it (the child's guard kills its process group), and the temporary directory the killed run held is removed by the next run (its lock died with it)."""
    site = world["root"] / "site"
    import_pids, nvml_pids = world["root"] / "import.pids", world["root"] / "nvml.pids"
    make_dist(site, "xformers", "0.0.30", {"xformers/__init__.py": SLOW_IMPORT.format(pids=str(import_pids))})
    (site / "pynvml.py").write_text(HANGING_NVML.format(pids=str(nvml_pids)))
    on_path(world, site)
    process = subprocess.Popen(
        [sys.executable, "-m", "attn_preflight", "probe", "--format", "json", "--timeout", "300"],
        cwd=world["cwd"],
        env=world["env"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pids: list[int] = []
    try:
        wait_for(lambda: import_pids.exists() and nvml_pids.exists() and len(import_pids.read_text().split()) == 2)
        child, _grandchild = (int(p) for p in import_pids.read_text().split())
        pids = [child, _grandchild, *(int(p) for p in nvml_pids.read_text().split())]
        assert len(list(world["tmp"].iterdir())) == 1
        process.kill()
        process.wait()
        # our children (the import check, the NVML query) end with us, and what the library started with them
        wait_for(lambda: not any(alive(pid) for pid in pids), seconds=10)
        world["env"]["PYTHONPATH"] = world["env"]["PYTHONPATH"].split(os.pathsep, 1)[1]  # a healthy machine now
        done = attn_preflight(world, "probe", "--format", "json")
        assert done.returncode == 0, done.stderr
        assert list(world["tmp"].iterdir()) == []
    finally:
        process.kill()
        for pid in filter(alive, pids):
            os.kill(pid, signal.SIGKILL)
