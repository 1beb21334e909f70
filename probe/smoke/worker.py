"""One kernel's cases, in a process of their own: `python -m attn_preflight.probe.smoke.worker MODULE KERNEL CASES_JSON`.

MODULE holds a `KERNELS` list naming KERNEL; CASES_JSON is a list of cases (attn_preflight.probe.smoke.cases.Case).
The worker speaks JSON lines on its original stdout: `hello` (torch and the device, after importing torch),
then `start` and `result` for each case. Everything else the libraries print goes to stderr, which the
runner keeps the tail of. A CUDA error that poisons the context (illegal memory access, ...) ends the
worker right after its result, so that later cases run in a fresh process.
"""

from __future__ import annotations

import faulthandler
import fcntl
import json
import os
import statistics
import sys
import time
import traceback
import warnings
from typing import IO, Any, Callable, Optional

from attn_preflight.probe.smoke.cases import Case, tolerance

EXIT_USAGE = 2
EXIT_CONTEXT_LOST = 3  # a sticky CUDA error: the runner restarts the remaining cases in a new worker

# CUDA errors after which the context is unusable (cudaErrorIllegalAddress, LaunchFailure, MisalignedAddress,
# IllegalInstruction, Assert, HardwareStackError): the kernel crashed even though Python saw an exception.
STICKY_CUDA_ERRORS = (
    "illegal memory access",
    "unspecified launch failure",
    "misaligned address",
    "illegal instruction",
    "device-side assert",
    "hardware stack error",
)
# Lines torch appends to every CUDA error; they are advice, not the kernel's words.
BOILERPLATE = (
    "CUDA kernel errors might be asynchronously reported",
    "For debugging consider passing",
    "Compile with `TORCH_USE_CUDA_DSA`",
    "Search for `cudaError",
)

STEADY_MAX_CALLS = 5
STEADY_MIN_SECONDS = 0.25  # stop repeating once the steady calls took this long (slow CPU cases)
LOCK_WAIT_SECONDS = 60.0


def own_words(exc: BaseException) -> tuple[str, list[str]]:
    """The kernel's message as `Type: first line`, and its other lines (torch's advice dropped)."""
    lines = [line.strip() for line in str(exc).splitlines()]
    lines = [line for line in lines if line and not line.startswith(BOILERPLATE)]
    head = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return head[:500], [line[:300] for line in lines[1:8]]


def is_sticky(message: str) -> bool:
    return any(marker in message.lower() for marker in STICKY_CUDA_ERRORS)


def failure(exc: BaseException, caught: Optional[list] = None, phase: str = "") -> dict[str, Any]:
    message, details = own_words(exc)
    seen = []
    for warning in caught or []:  # e.g. SDPA's "Flash attention kernel not used because: ..."
        text = " ".join(str(warning.message).split())[:300]
        if text not in seen:
            seen.append(text)
    details += seen[-3:]
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        details.append(f"raised at {frames[-1].filename}:{frames[-1].lineno} ({frames[-1].name})")
    status = "crashed" if is_sticky(message) else "error"
    return {"status": status, "message": f"{phase}{message}", "details": details, "sticky": status == "crashed"}


class GpuLock:
    """Serialises the steady-state timing across parallel workers, so TFLOP/s are measured on a quiet GPU."""

    def __init__(self, path: Optional[str]):
        self.path = path
        self.handle: Optional[IO[str]] = None
        self.held = False

    def __enter__(self) -> GpuLock:
        if not self.path:
            return self
        try:
            self.handle = open(self.path, "a")
            deadline = time.monotonic() + LOCK_WAIT_SECONDS
            while True:
                try:
                    fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    self.held = True
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
        except OSError:
            pass
        return self

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.close()  # releases the lock


def run_case(kernel, case: Case, device: str, sync: Callable[[], None], lock_path: Optional[str]) -> dict[str, Any]:
    import torch

    result: dict[str, Any] = {"tolerance": tolerance(case)}
    try:
        call = kernel.build(case, device)
    except Exception as exc:
        return {**result, **failure(exc, phase="preparing inputs: ")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            start = time.perf_counter()
            out = call.run()
            sync()
            result["first_call_s"] = time.perf_counter() - start
            times: list[float] = []
            with GpuLock(lock_path if device != "cpu" else None) as lock:
                while len(times) < STEADY_MAX_CALLS and (not times or sum(times) < STEADY_MIN_SECONDS):
                    start = time.perf_counter()
                    out = call.run()
                    sync()
                    times.append(time.perf_counter() - start)
            if lock.path and not lock.held:
                result["notes"] = ["steady time measured while other kernels shared the GPU (lock wait timed out)"]
            output = call.extract(out)
            sync()
        except Exception as exc:
            return {**result, **failure(exc, caught)}
    steady = statistics.median(times)
    result.update(steady_ms=steady * 1e3, steady_calls=len(times), flops=call.flops)
    if call.flops and steady > 0:
        result["tflops"] = call.flops / steady / 1e12
    reference = call.reference
    if tuple(output.shape) != tuple(reference.shape):
        return {
            **result,
            "status": "error",
            "message": f"output shape {tuple(output.shape)} differs from the reference's {tuple(reference.shape)}",
        }
    output = output.float()
    finite = bool(torch.isfinite(output).all())
    error = float((output - reference).abs().max()) if output.numel() else 0.0
    result["max_abs_error"] = error if finite else None
    if not finite:
        result.update(status="wrong", message="the output holds NaN or Inf")
    elif not error <= result["tolerance"]:
        result.update(
            status="wrong", message=f"max abs error {error:.3g} is above the tolerance {result['tolerance']:g}"
        )
    else:
        result["status"] = "ok"
    return result


def find_kernel(module: str, name: str):
    import importlib

    kernels = importlib.import_module(module).KERNELS
    for kernel in kernels:
        if kernel.name == name:
            return kernel
    raise LookupError(f"{module} has no kernel {name!r}")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m attn_preflight.probe.smoke.worker MODULE KERNEL CASES_JSON", file=sys.stderr)
        return EXIT_USAGE
    module, name, cases_json = argv
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the libraries print (Python or C) goes to stderr, not into the protocol
    faulthandler.enable()  # a segfault leaves its Python stack on stderr for the runner's tail

    def emit(event: str, **fields: Any) -> None:
        protocol.write(json.dumps({"event": event, **fields}) + "\n")

    cases = [Case.from_dict(case) for case in json.loads(cases_json)]
    lock_path = os.environ.get("ATTN_PREFLIGHT_SMOKE_GPU_LOCK")

    def every_case(**fields: Any) -> int:
        for index in range(len(cases)):
            emit("start", case=index)
            emit("result", case=index, **fields)
        return 0

    try:
        kernel = find_kernel(module, name)
        import torch
    except Exception as exc:
        return every_case(**failure(exc, phase="loading the kernel: "))
    hello: dict[str, Any] = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "cuda": False}
    try:
        hello["cudnn"] = torch.backends.cudnn.version()
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(0)
            hello.update(cuda=True, cc=[major, minor], device_name=torch.cuda.get_device_name(0))
    except Exception as exc:
        hello["cuda_error"] = own_words(exc)[0]
    emit("hello", **hello)

    sync: Callable[[], None]
    if hello["cuda"]:
        device = "cuda"
        described = f"cuda:0 {hello['device_name']} (sm_{hello['cc'][0]}{hello['cc'][1]})"
        sync = torch.cuda.synchronize
    elif kernel.needs_gpu:
        why = hello.get("cuda_error") or (
            f"torch {torch.__version__} is a CPU build"
            if torch.version.cuda is None
            else f"torch {torch.__version__} sees no CUDA device"
        )
        return every_case(status="skipped", skip_basis="environment", message=f"no GPU: {why}")
    else:
        device, described = "cpu", "cpu"

        def sync() -> None:
            return None

    import_s = None
    if kernel.prepare is not None:
        start = time.perf_counter()
        try:
            kernel.prepare()
        except Exception as exc:
            return every_case(**failure(exc, phase="importing: "), device=described)
        import_s = time.perf_counter() - start

    for index, case in enumerate(cases):
        emit("start", case=index)
        result = run_case(kernel, case, device, sync, lock_path)
        sticky = result.pop("sticky", False)
        emit("result", case=index, device=described, import_s=import_s, **result)
        if sticky:  # skip interpreter teardown: CUDA finalisers on a poisoned context can hang or abort
            protocol.flush()
            sys.stderr.flush()
            os._exit(EXIT_CONTEXT_LOST)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
