"""GPUs through NVML (nvidia-ml-py's `pynvml`): never a CUDA context, never torch.

NVML is queried in a child process (`GpuProbe`): a libnvidia-ml whose init hangs, segfaults or aborts costs
that child, and its fate is reported like any other answer. Every failure becomes a value: no NVML or no
driver gives an empty device list with the reason; one GPU whose query fails gets `error` and the others
stand. NVML numbers devices in PCI order, which is not CUDA's order under CUDA_VISIBLE_DEVICES (that
variable is reported with the environment).
"""

from __future__ import annotations

import ast
import os
from typing import Any, Optional

from probe.children import Child, TerminateAsExit, environment_path, python_script_argv, signal_name
from probe.facts import FactsError, GpuFacts, Schema

NVML_CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvml_child.py")  # run, not imported here
# Generous: without persistence mode, nvmlInit opens every GPU, seconds on a machine of eight.
NVML_TIMEOUT_S = 15.0
GPU_FACTS = Schema(GpuFacts)


def collect_gpus() -> GpuFacts:
    with TerminateAsExit():  # a SIGTERM while NVML hangs still kills its child (Ctrl-C does already)
        return GpuProbe().result()


class GpuProbe:
    """The NVML query in its own child (`python -I`), started at once so that it runs beside our own work."""

    def __init__(self, timeout: Optional[float] = None):
        self.timeout = NVML_TIMEOUT_S if timeout is None else timeout
        self.child: Optional[Child] = None
        self.error: Optional[str] = None
        try:
            # -S: site's .pth hooks cost the child 26 ms here, and it is given its sys.path.
            argv = python_script_argv(NVML_CHILD, *environment_path(), site=False)
            self.child = Child(argv, self.timeout)
        except OSError as err:
            self.error = f"the NVML query could not start: {type(err).__name__}: {err}"

    def result(self) -> GpuFacts:
        if self.child is None:
            return GpuFacts(error=self.error)
        answer = self.child.communicate()
        if answer is None:
            return GpuFacts(error=f"NVML query timed out after {self.timeout:g} s: libnvidia-ml did not answer")
        out, err = answer
        code = self.child.returncode or 0
        if code < 0:
            return GpuFacts(error=f"NVML query crashed: killed by {signal_name(-code)}")
        try:
            return _read(ast.literal_eval(out))
        except (ValueError, SyntaxError, MemoryError, RecursionError, FactsError):
            tail = err.strip().splitlines()[-1:] or [f"exit status {code}"]
            return GpuFacts(error=f"the NVML query gave no answer: {tail[0][:300]}")

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def query_gpus() -> GpuFacts:
    """NVML asked in this process: what the NVML child does, read into the Facts model."""
    from probe import nvml_child

    return _read(nvml_child.query())


def _read(answer: Any) -> GpuFacts:
    return GPU_FACTS.read(answer, "nvml")
