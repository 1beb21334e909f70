"""Runs kernels in worker processes, each in its own process group with a per-case timeout.

One worker per kernel runs that kernel's cases in order (imports and JIT are paid once per kernel). A case
that segfaults, hangs, or poisons its CUDA context costs only itself: the worker is killed or exits, the
case is recorded as crashed or timeout, and the kernel's remaining cases go on in a fresh worker. Kernels
run in parallel (a small pool: GPU work is milliseconds, the cost is imports and compiles); their steady
timings are serialised by a lock file so that TFLOP/s are measured on a quiet GPU.

The runner records what happened and never judges it: a case's status is what the kernel did (ok, wrong,
error, crashed) or what the runner saw (timeout; skipped for reasons it knows itself: the library or the GPU
is missing, the kernel's API cannot express the case, the worker failed before it). The machine the kernels ran
on is recorded in the report's machine summary. Whether an error confirms a limit the kernel's library
documents is judged where the report is shown (rules/core/smoke.py, applied by attn_preflight/smoke_judged.py).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence

import attn_preflight.probe
from attn_preflight.probe.children import TerminateAsExit, kill_group, probe_argv, scratch_directory, spawn
from attn_preflight.probe.smoke.caches import cache_environment
from attn_preflight.probe.smoke.cases import Case, sweep
from attn_preflight.probe.smoke.kernels import Kernel
from attn_preflight.probe.smoke.results import (
    SKIP_API,
    SKIP_ENVIRONMENT,
    STATUS_CRASHED,
    STATUS_SKIPPED,
    STATUS_TIMEOUT,
    GpuSummary,
    KernelResult,
    MachineSummary,
    SmokeReport,
)

DEFAULT_TIMEOUT_S = 180.0  # per case; the first case of a kernel also pays its imports (FA4: ~10 s) and JIT
# Kernels at once with a GPU (capped by CPUs): enough for every installed family to import and compile side by
# side, since a worker spends seconds importing and compiling and milliseconds on the GPU.
MAX_PARALLEL = 8
STDERR_TAIL_LINES = 60
RESULT_FIELDS = (
    "status",
    "message",
    "details",
    "skip_basis",
    "max_abs_error",
    "tolerance",
    "first_call_s",
    "steady_ms",
    "steady_calls",
    "flops",
    "tflops",
    "import_s",
    "device",
    "notes",
)

# Called once per finished case, with the machine as known so far (filled in when the first worker has imported
# torch: before any kernel's own result).
Progress = Callable[[KernelResult, MachineSummary], None]


def plan(
    kernels: Sequence[Kernel], level: str = "quick", dtypes: Optional[Sequence[str]] = None
) -> list[tuple[Kernel, list[Case]]]:
    """The cases of each kernel: its quick case (once per requested dtype), or its full sweep."""
    jobs = []
    for kernel in kernels:
        if level == "full":
            cases = sweep(kernel.quick, kernel.features, dtypes)
        else:
            cases = [replace(kernel.quick, dtype=d) for d in dtypes] if dtypes else [kernel.quick]
        jobs.append((kernel, cases))
    return jobs


def kernel_module(kernel: Kernel) -> str:
    """The module a worker imports to find `kernel`: the one defining its build function (it lists the kernel
    in KERNELS)."""
    return kernel.build.__module__


def reproduce_command(kernel: Kernel, case: Case) -> str:
    """The case alone, with the interpreter that ran it (a bare `python` may be another environment)."""
    cases = json.dumps([case.to_dict()], separators=(",", ":"))
    worker = f"-m attn_preflight.probe.smoke.worker {kernel_module(kernel)} {kernel.name} {shlex.quote(cases)}"
    return f"{shlex.quote(sys.executable)} {worker}"


@dataclass
class _Worker:
    process: subprocess.Popen
    events: queue.Queue[Optional[dict]]
    stderr: deque = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))
    readers: list = field(default_factory=list)


class Runner:
    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT_S,
        parallel: Optional[int] = None,
        progress: Optional[Progress] = None,
        environ: Optional[Mapping[str, str]] = None,
    ):
        if not timeout > 0:
            raise ValueError("timeout must be positive")
        self.timeout = float(timeout)
        self.parallel = parallel
        self.progress = progress
        self.environ = dict(os.environ if environ is None else environ)
        self._live: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._stopped = False  # set by abort(): no worker may start after it
        self._hello: Optional[dict] = None
        self._machine = MachineSummary()

    # -- the run -------------------------------------------------------------------------------------------
    def run(self, jobs: Sequence[tuple[Kernel, Sequence[Case]]], level: str = "quick") -> SmokeReport:
        started = time.monotonic()
        machine = self._machine = machine_summary()
        cache_vars, root, notes = cache_environment(self.environ)
        machine.cache_dir, machine.cache_notes = (str(root) if root else None), notes
        installed = _installed([kernel for kernel, _ in jobs], machine)
        no_gpu = None if machine.gpus else f"no GPU: {machine.gpu_error or 'NVML reports no devices'}"
        parallel = self.parallel or (min(MAX_PARALLEL, os.cpu_count() or 1) if machine.gpus else 1)

        slots: list[list[Optional[KernelResult]]] = []
        runnable = []
        for number, (kernel, cases) in enumerate(jobs):
            results: list[Optional[KernelResult]] = [None] * len(cases)
            slots.append(results)
            missing = installed.get(kernel.name)
            if missing or (kernel.needs_gpu and no_gpu):
                whole = _result(
                    kernel, None, status=STATUS_SKIPPED, skip_basis=SKIP_ENVIRONMENT, message=missing or no_gpu
                )
                slots[-1] = [whole]
                self._report(whole)
                continue
            todo = []
            for index, case in enumerate(cases):
                why = kernel.inexpressible(case)
                if why:
                    skipped = _result(kernel, case, status=STATUS_SKIPPED, skip_basis=SKIP_API, message=why)
                    results[index] = skipped
                    self._report(skipped)
                else:
                    todo.append((index, case))
            if todo:
                runnable.append((number, kernel, todo))

        with scratch_directory(prefix="attn-preflight-smoke-") as scratch, TerminateAsExit():
            env = self._worker_env(cache_vars, os.path.join(scratch, "gpu.lock"))
            cwd = os.path.join(scratch, "cwd")  # empty: neither our cwd nor anything a worker writes there
            os.mkdir(cwd)
            pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="smoke")
            try:
                # Kernels that import a library (seconds: FA4 ~10 s) start first; torch-only ones fill in.
                runnable.sort(key=lambda job: job[1].prepare is None)
                futures = [
                    (number, pool.submit(self._run_kernel, kernel, todo, env, cwd)) for number, kernel, todo in runnable
                ]
                for number, future in futures:
                    for index, result in future.result().items():
                        slots[number][index] = result
            except BaseException:
                self.abort()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()

        return SmokeReport(
            tool_version=attn_preflight.probe.__version__,
            created_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            level=level,
            timeout_s=self.timeout,
            jobs=parallel,
            wall_s=round(time.monotonic() - started, 3),
            machine=machine,
            results=[r for results in slots for r in results if r is not None],
        )

    def abort(self) -> None:
        """Kills every worker still running, and keeps new ones from starting (Ctrl-C, SIGTERM)."""
        with self._lock:
            self._stopped = True
            for process in list(self._live):
                kill_group(process)

    # -- one kernel --------------------------------------------------------------------------------------------
    def _run_kernel(self, kernel: Kernel, todo: list[tuple[int, Case]], env: dict, cwd: str) -> dict[int, KernelResult]:
        done: dict[int, KernelResult] = {}
        pending = list(todo)
        while pending:
            worker = self._spawn(kernel, [case for _, case in pending], env, cwd)
            current: Optional[int] = None  # position in `pending` of the case the worker is running
            started_any = False
            timed_out = False
            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    event = worker.events.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    timed_out = True
                    kill_group(worker.process)
                    break
                if event is None:
                    break
                kind = event.get("event")
                if kind == "hello":  # torch imported: the library import and first call get a full timeout
                    deadline = time.monotonic() + self.timeout
                    self._note_hello(event)
                elif kind == "start" and isinstance(event.get("case"), int) and event["case"] < len(pending):
                    current, started_any = event["case"], True
                    deadline = time.monotonic() + self.timeout
                elif kind == "result" and current is not None:
                    index, case = pending[current]
                    done[index] = self._finish(kernel, case, event)
                    current = None
                    deadline = time.monotonic() + self.timeout
            returncode = self._reap(worker)
            unfinished = [(i, c) for i, c in pending if i not in done]
            stalled = len(unfinished) == len(pending)  # not one result: never respawn such a worker as is
            if unfinished and (timed_out or current is not None or stalled):
                index, case = pending[current] if current is not None else unfinished[0]
                if timed_out:
                    phase = "" if current is not None else " (before its first call: importing or initialising CUDA)"
                    cause = _result(
                        kernel,
                        case,
                        status=STATUS_TIMEOUT,
                        details=list(worker.stderr)[-15:],
                        message=f"no result within {self.timeout:g} s{phase}; its process group was killed",
                    )
                else:
                    cause = _crash(kernel, case, returncode, worker.stderr)
                done[index] = cause
                self._report(cause)
                if not started_any:  # the worker never got going: running the rest would only repeat this
                    for other, other_case in unfinished[1:]:
                        done[other] = _result(
                            kernel,
                            other_case,
                            status=STATUS_SKIPPED,
                            skip_basis=SKIP_ENVIRONMENT,
                            message=f"not run: the {kernel.name} worker failed before its first "
                            f"case ({cause.status}: {cause.message})",
                        )
                        self._report(done[other])
            pending = [(i, c) for i, c in pending if i not in done]
        return done

    def _finish(self, kernel: Kernel, case: Case, event: dict) -> KernelResult:
        """The kernel's own answer for `case`, as it gave it."""
        fields = {name: event[name] for name in RESULT_FIELDS if event.get(name) is not None}
        result = _result(kernel, case, **fields)
        self._report(result)
        return result

    def _note_hello(self, hello: dict) -> None:
        """The first worker's view of torch and the device: the machine summary's torch and device fields."""
        with self._lock:
            if self._hello:
                return
            self._hello = hello
            machine = self._machine
            machine.torch_version = hello.get("torch")
            machine.torch_cuda = hello.get("torch_cuda")
            machine.cudnn_version = hello.get("cudnn")
            machine.device_name = hello.get("device_name")
            if hello.get("cc"):
                machine.device_capability = "{}.{}".format(*hello["cc"])

    def _report(self, result: KernelResult) -> None:
        if self.progress:
            with self._lock:
                self.progress(result, self._machine)

    # -- processes -----------------------------------------------------------------------------------------------
    def _worker_env(self, cache_vars: Mapping[str, str], lock_path: str) -> dict:
        return {**self.environ, **cache_vars, "ATTN_PREFLIGHT_SMOKE_GPU_LOCK": lock_path}

    def _spawn(self, kernel: Kernel, cases: list[Case], env: dict, cwd: str) -> _Worker:
        command = probe_argv(
            "from attn_preflight.probe.smoke.worker import main\nsys.exit(main(sys.argv[1:]))",
            kernel_module(kernel),
            kernel.name,
            json.dumps([case.to_dict() for case in cases]),
            pythonpath=env.get("PYTHONPATH"),  # -I ignores it: the worker's environment may set its own
        )
        with self._lock:
            if self._stopped:
                raise _Stopped()
            process = spawn(command, cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            self._live.add(process)
        worker = _Worker(process, queue.Queue())
        worker.readers = [
            threading.Thread(target=_read_events, args=(process.stdout, worker.events), daemon=True),
            threading.Thread(target=_read_tail, args=(process.stderr, worker.stderr), daemon=True),
        ]
        for reader in worker.readers:
            reader.start()
        return worker

    def _reap(self, worker: _Worker) -> int:
        try:
            returncode = worker.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # closed its stdout but lingers
            kill_group(worker.process)
            returncode = worker.process.wait()
        # what a kernel library started in the worker's process group (a compile server, a helper) ends with it
        kill_group(worker.process)
        for reader in worker.readers:
            reader.join(timeout=5)
        with self._lock:
            self._live.discard(worker.process)
        return returncode


class _Stopped(Exception):
    """The run was aborted: a kernel's thread ends instead of starting another worker."""


def _read_events(stream, events: queue.Queue[Optional[dict]]) -> None:
    for raw in stream:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.put(event)
    events.put(None)


def _read_tail(stream, tail: deque) -> None:
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip()
        if line:
            tail.append(line[:400])


def _crash(kernel: Kernel, case: Case, returncode: int, stderr: deque) -> KernelResult:
    tail = list(stderr)
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        what = f"killed by {name}"
    else:
        what = f"exited with status {returncode} without a result"
    clue = next(
        (
            line
            for line in reversed(tail)
            if any(mark in line for mark in ("Fatal Python error", "CUDA error", "illegal", "Error", "error"))
        ),
        None,
    )
    return _result(
        kernel, case, status=STATUS_CRASHED, message=f"{what}" + (f": {clue}" if clue else ""), details=tail[-15:]
    )


def _result(kernel: Kernel, case: Optional[Case], **fields: Any) -> KernelResult:
    return KernelResult(
        kernel=kernel.name,
        family=kernel.family,
        title=kernel.title,
        library=kernel.library,
        case=case,
        reproduce=reproduce_command(kernel, case) if case else None,
        **fields,
    )


def machine_summary() -> MachineSummary:
    from attn_preflight.probe.gpus import collect_gpus

    gpus = collect_gpus()
    return MachineSummary(
        hostname=platform.node(),
        platform=platform.platform(),
        python_version=platform.python_version(),
        python_executable=sys.executable,
        driver_version=gpus.driver_version,
        gpu_error=gpus.error if not gpus.devices else None,
        gpus=[GpuSummary(index=d.index, name=d.name, compute_capability=d.compute_capability) for d in gpus.devices],
    )


def _installed(kernels: Sequence[Kernel], machine: MachineSummary) -> dict[str, str]:
    """kernel name -> why it cannot run here for want of a library (torch, or the kernel's own); records the
    versions of what is installed in `machine.libraries`. Reads metadata only: nothing is imported."""
    from attn_preflight.probe.libraries import library_facts, locate_module, spec_for

    facts = {}
    for key in ["torch"] + sorted({k.library for k in kernels if k.library}):
        facts[key] = library_facts(spec_for(key))
        machine.libraries.update(facts[key].distributions)
    missing = {}
    for kernel in kernels:
        for needed in ("torch", kernel.library):
            if needed is None:
                continue
            lib = facts[needed]
            if not lib.installed and not any(locate_module(m) for m in spec_for(needed).imports):
                missing[kernel.name] = f"{lib.title} is not installed (pip: {spec_for(needed).distributions[0]})"
                break
    return missing
