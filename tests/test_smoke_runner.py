"""The smoke runner through real worker processes, with kernels that misbehave on purpose.

The misbehaving kernels live in a module written to tmp_path and reached through PYTHONPATH, exactly as
the registry's kernels are reached: nothing in probe/ knows about them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace

import pytest

pytest.importorskip("torch")

from attn_preflight.probe.smoke.cases import Case  # noqa: E402
from attn_preflight.probe.smoke.runner import Runner  # noqa: E402
from attn_preflight.smoke_judged import judged_result  # noqa: E402

TEST_KERNELS = '''
"""Kernels that misbehave on purpose (tests/test_smoke_runner.py)."""
import os
import subprocess
import sys
import time

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel

CASE = Case(batch=1, seqlen_q=8, seqlen_k=8, heads_q=2, heads_kv=1, head_dim=16)
POISONED = []  # set by the sticky case: a worker that kept running after it would answer wrongly


def _reference(case, device):
    from attn_preflight.probe.smoke.reference import Inputs, attention_reference
    q, k, v = Inputs(case, device).dense()
    return attention_reference(q, k, v, case)


def _call(run, reference):
    from attn_preflight.probe.smoke.reference import Call
    return Call(run, reference, flops=4096)


def exact(case, device):
    reference = _reference(case, device)
    return _call(lambda: reference + 1 if POISONED else reference.clone(), reference)


def off_by_one(case, device):
    reference = _reference(case, device)
    return _call(lambda: reference + 1, reference)


def nan(case, device):
    reference = _reference(case, device)
    return _call(lambda: reference * float("nan"), reference)


def segfault_at_32(case, device):
    import ctypes
    if case.head_dim != 32:
        return exact(case, device)
    return _call(lambda: ctypes.string_at(0), _reference(case, device))


def hang(case, device):
    def run():
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ["SMOKE_TEST_CHILD_PID"], "w") as handle:
            handle.write(str(child.pid))
        time.sleep(600)
    return _call(run, _reference(case, device))


def sticky_at_32(case, device):
    if case.head_dim != 32:
        return exact(case, device)

    def run():
        POISONED.append(True)
        raise RuntimeError("CUDA error: an illegal memory access was encountered\\n"
                           "CUDA kernel errors might be asynchronously reported at some other API call")
    return _call(run, _reference(case, device))


def refuse(case, device):
    def run():
        raise AssertionError("FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.")
    return _call(run, _reference(case, device))


def raise_plainly(case, device):
    def run():
        raise ValueError("head_dim 16 is not supported\\nsee the docs")
    return _call(run, _reference(case, device))


def missing_library():
    raise ImportError("libfake_attention.so.1: cannot open shared object file: No such file or directory")


def exit_early():
    os._exit(7)


def hang_importing():
    time.sleep(600)


def start_daemon():
    # a library that starts a helper of its own on import and leaves it running (a compile server)
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.environ["SMOKE_TEST_DAEMON_PID"], "w") as handle:
        handle.write(str(helper.pid))


def kernel(name, build, family="test", **extra):
    return Kernel(name=name, family=family, title=name, api="test." + name, quick=CASE, build=build,
                  needs_gpu=False, **extra)


KERNELS = [
    kernel("t-ok", exact),
    kernel("t-wrong", off_by_one),
    kernel("t-nan", nan),
    kernel("t-segv", segfault_at_32),
    kernel("t-hang", hang),
    kernel("t-import", exact, prepare=missing_library),
    kernel("t-sticky", sticky_at_32),
    kernel("t-refuse", refuse, family="fa4"),  # judged by FA4's documented limits (rules/kernels/limits.py)
    kernel("t-error", raise_plainly),
    kernel("t-runs-anyway", exact, family="fa4"),
    kernel("t-exit", exact, prepare=exit_early),
    kernel("t-hang-import", exact, prepare=hang_importing),
    kernel("t-daemon", exact, prepare=start_daemon),
]
'''

# Hanging kernels run apart with a short timeout; the others get a long one, so that a slow `import torch` on
# a loaded CI machine is never mistaken for a hang.
HANG_TIMEOUT_S = 15.0
HANGING = ("t-hang", "t-hang-import")
THREE = [Case(batch=1, seqlen_q=8, seqlen_k=8, heads_q=2, heads_kv=1, head_dim=d) for d in (16, 32, 64)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One run of every misbehaving kernel (in parallel, as the CLI runs them)."""
    where = tmp_path_factory.mktemp("smoke-kernels")
    (where / "smoke_test_kernels.py").write_text(textwrap.dedent(TEST_KERNELS))
    sys.path.insert(0, str(where))
    try:
        import smoke_test_kernels
    finally:
        sys.path.remove(str(where))
    by_name = {k.name: k for k in smoke_test_kernels.KERNELS}
    jobs = [(k, [k.quick]) for k in smoke_test_kernels.KERNELS]
    for name in ("t-segv", "t-sticky", "t-exit", "t-hang-import"):
        jobs = [(k, THREE if k.name == name else cases) for k, cases in jobs]
    child_pid_file = where / "child.pid"
    environ = {
        **os.environ,
        "PYTHONPATH": str(where),
        "SMOKE_TEST_CHILD_PID": str(child_pid_file),
        "SMOKE_TEST_DAEMON_PID": str(where / "daemon.pid"),
    }
    seen = []
    machines = []

    def progress(result, machine):
        seen.append(result)
        machines.append(machine)

    report = Runner(timeout=120, parallel=4, progress=progress, environ=environ).run(
        [(k, cases) for k, cases in jobs if k.name not in HANGING]
    )
    hung = Runner(timeout=HANG_TIMEOUT_S, parallel=2, progress=progress, environ=environ).run(
        [(k, cases) for k, cases in jobs if k.name in HANGING]
    )
    return {
        "report": report,
        "hung": hung,
        "seen": seen,
        "machines": machines,
        "child": child_pid_file,
        "daemon": where / "daemon.pid",
        "kernels": by_name,
        "environ": environ,
    }


def results(run, name):
    return [r for r in run["report"].results + run["hung"].results if r.kernel == name]


def only(run, name):
    (result,) = results(run, name)
    return result


def test_exact_kernel_is_ok_with_error_timings_and_tflops(run):
    r = only(run, "t-ok")
    assert r.status == "ok" and not r.failed
    assert r.max_abs_error == 0.0 and r.tolerance == 3e-2
    assert r.first_call_s > 0 and r.steady_ms > 0 and 1 <= r.steady_calls <= 5
    assert r.flops == 4096 and r.tflops == pytest.approx(4096 / (r.steady_ms / 1e3) / 1e12)
    assert r.device == "cpu"


def test_wrong_answer_is_wrong_with_error_and_tolerance(run):
    r = only(run, "t-wrong")
    assert r.status == "wrong" and r.failed
    assert r.max_abs_error == pytest.approx(1.0)
    assert "above the tolerance 0.03" in r.message


def test_nan_output_is_wrong(run):
    r = only(run, "t-nan")
    assert r.status == "wrong" and r.max_abs_error is None
    assert "NaN" in r.message


def test_segfault_is_crashed_with_signal_and_spares_the_kernels_other_cases(run):
    first, crashed, last = results(run, "t-segv")
    assert crashed.status == "crashed" and crashed.case.head_dim == 32
    assert crashed.message.startswith("killed by SIGSEGV")
    assert any("Segmentation fault" in line for line in crashed.details)  # faulthandler's report, from stderr
    assert first.status == "ok" and last.status == "ok"  # the last case ran in a fresh worker


def test_hang_times_out_and_its_process_group_is_killed(run):
    r = only(run, "t-hang")
    assert r.status == "timeout" and r.failed
    assert f"no result within {HANG_TIMEOUT_S:g} s" in r.message
    child = int(run["child"].read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child), "the hung kernel's own child process survived the timeout"


def test_a_process_a_kernel_library_started_does_not_outlive_smoke(run):
    assert only(run, "t-daemon").status == "ok"
    helper = int(run["daemon"].read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(helper):
        time.sleep(0.1)
    assert not _alive(helper), "a helper the kernel's library started outlived its worker"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return "zombie" not in handle.read()
    except FileNotFoundError:
        return False


def test_import_failure_is_an_error_with_the_librarys_own_words(run):
    r = only(run, "t-import")
    assert r.status == "error"
    assert r.message == (
        "importing: ImportError: libfake_attention.so.1: cannot open shared object file: No such file or directory"
    )


def test_sticky_cuda_error_is_crashed_and_later_cases_run_in_a_fresh_worker(run):
    first, crashed, last = results(run, "t-sticky")
    assert crashed.status == "crashed"
    assert crashed.message == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert not any("asynchronously reported" in line for line in crashed.details)  # torch's advice is dropped
    assert first.status == "ok"
    assert last.status == "ok", "the case after a sticky CUDA error ran in the poisoned process"


def test_the_runner_records_a_refusal_as_the_kernel_gave_it_and_judges_nothing(run):
    r = only(run, "t-refuse")
    assert r.status == "error" and r.skip_basis is None and r.documented_limit is None and r.failed
    assert r.message == "AssertionError: FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe."


def test_a_recorded_refusal_is_judged_against_the_documented_limits_of_the_machine_it_ran_on(run):
    """The same raw result, judged: on SM75 FA4 documents no support at all, so the kernel confirmed its limit (a
    skip with the kernel's words); on SM90 nothing documented excludes the case, so the error stands."""
    r = only(run, "t-refuse")
    old = replace(run["report"].machine, device_capability="7.5")
    skipped = judged_result(r, old)
    assert skipped.status == "skipped" and skipped.skip_basis == "kernel" and not skipped.failed
    assert "compute capability 8.x-12.x, not sm_75" in skipped.documented_limit
    assert skipped.message.startswith("not supported here, and the kernel says so: AssertionError: FP8 is only")
    assert skipped.details[0] == r.message
    assert judged_result(r, replace(old, device_capability="9.0")) is r


def test_error_without_a_documented_limit_stays_an_error_with_its_first_line(run):
    r = only(run, "t-error")
    assert r.status == "error" and r.failed
    assert r.message == "ValueError: head_dim 16 is not supported"
    assert "see the docs" in r.details


def test_a_kernel_running_against_its_documented_limit_says_the_knowledge_is_stale(run):
    r = only(run, "t-runs-anyway")
    assert r.status == "ok" and not r.notes and r.documented_limit is None  # as it ran
    judged = judged_result(r, replace(run["report"].machine, device_capability="7.5"))
    assert judged.status == "ok"
    assert any("ran although documented as unsupported" in note for note in judged.notes)


def test_worker_dying_before_its_first_case_is_crashed_once_and_the_rest_not_run(run):
    crashed, *rest = results(run, "t-exit")
    assert crashed.status == "crashed" and "exited with status 7" in crashed.message
    assert [r.status for r in rest] == ["skipped", "skipped"]
    assert all("failed before its first case" in r.message for r in rest)


def test_hang_while_importing_is_one_timeout_and_the_rest_not_run(run):
    timed_out, *rest = results(run, "t-hang-import")
    assert timed_out.status == "timeout" and "before its first call" in timed_out.message
    assert [r.status for r in rest] == ["skipped", "skipped"]


def test_every_result_was_reported_as_progress_once(run):
    everything = run["report"].results + run["hung"].results
    assert sorted(id(r) for r in run["seen"]) == sorted(id(r) for r in everything)
    assert {id(m) for m in run["machines"]} == {id(run["report"].machine), id(run["hung"].machine)}


def test_results_keep_job_and_case_order(run):
    names = [r.kernel for r in run["report"].results]
    assert names == sorted(names, key=list(run["kernels"]).index)  # though kernels ran 4 at once
    assert [r.case.head_dim for r in results(run, "t-segv")] == [16, 32, 64]


def test_failures_are_counted_and_skips_never_count_as_ok(run):
    report = run["report"]
    counts = report.counts()
    assert counts["ok"] == sum(1 for r in report.results if r.status == "ok")
    assert counts["skipped"] == 2  # t-exit's two cases that never ran: none counted as ok
    assert {r.kernel for r in report.failed} == {
        "t-refuse",  # as recorded: judged, it may be a skip (see above)
        "t-wrong",
        "t-nan",
        "t-segv",
        "t-import",
        "t-sticky",
        "t-error",
        "t-exit",
    }
    assert {r.kernel for r in run["hung"].failed} == set(HANGING)


def test_reproduce_command_runs_the_case_alone(run):
    r = only(run, "t-wrong")
    done = subprocess.run(
        r.reproduce,
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=run["environ"],
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events] == ["hello", "start", "result"]
    assert events[-1]["status"] == "wrong"


GPU_KERNELS = '''
"""A kernel that writes far outside its buffer on the GPU (tests/test_smoke_runner.py, GPU only)."""
import torch
import triton
import triton.language as tl

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel


@triton.jit
def _wild_store(pointer):
    tl.store(pointer + 1099511627776, 1.0)  # 4 TiB past the buffer: an illegal address


def wild_at_2048(case, device):
    from attn_preflight.probe.smoke.reference import Call, elementwise_add
    a, b, reference = elementwise_add(case, device)
    if case.numel != 2048:
        return Call(lambda: a + b, reference)

    def run():
        _wild_store[(1,)](a)
        return a + b
    return Call(run, reference)


KERNELS = [Kernel(name="t-illegal-address", family="test", title="wild store", api="triton", build=wild_at_2048,
                  quick=Case(kind="elementwise", numel=1024, dtype="fp32"))]
'''


@pytest.mark.gpu
def test_illegal_memory_access_on_the_gpu_is_crashed_and_the_next_case_gets_a_fresh_context(tmp_path):
    pytest.importorskip("triton")
    (tmp_path / "smoke_gpu_kernels.py").write_text(textwrap.dedent(GPU_KERNELS))
    sys.path.insert(0, str(tmp_path))
    try:
        import smoke_gpu_kernels
    finally:
        sys.path.remove(str(tmp_path))
    (kernel,) = smoke_gpu_kernels.KERNELS
    cases = [Case(kind="elementwise", numel=n, dtype="fp32") for n in (1024, 2048, 4096)]
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p),
    }
    report = Runner(timeout=120, environ=environ).run([(kernel, cases)])
    before, crashed, after = report.results
    assert crashed.status == "crashed" and "illegal memory access" in crashed.message, crashed
    assert before.status == "ok" and after.status == "ok"
