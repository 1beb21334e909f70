"""What the engine drivers share: the fence loaded beside them, and the simulated device (stdlib only).

Like fence.py, this file is loaded from its path beside the driver (`load_sibling`), never imported as part of the
package: a driver runs in an interpreter where attn-preflight may not be installed (`--engine-python`). It
holds what both drivers simulate alike; what only one engine needs (vLLM's streams, accelerator API and NVML,
SGLang's cuDNN version) stays in that driver.

- `load_fence()`: fence.py, as the module `_attn_preflight_fence` (one per process, whoever loads it first).
- `properties()`, `SMS`: what `torch.cuda.get_device_properties()` answers for a compute capability.
- `simulate_cuda_queries(torch, ...)`: torch.cuda's device queries answered from the request; anything that
  would create a CUDA context calls the driver's `fail` instead.
- `answer_programs(answered)`: `subprocess.run` / `check_output` give the simulation's answer for the programs
  `answered` knows (`nvidia_smi()`: `nvidia-smi` about the simulated GPU) before a call reaches the fence, which
  refuses every other program.
- `blank_answer(engine, engine_version)`: the answer before anything was asked (SCHEMA.md: could_not_ask), which
  each driver fills in; `SCHEMA` is the answer format's version.
- `defer_import_time_cudart(fail, note)`: a module that builds a CUDA runtime wrapper at import
  (`cudart = CudaRTLibrary()`: flashinfer < 0.7's `flashinfer.comm.cuda_ipc`) gets a stand-in there instead,
  which calls `fail` when used; no libcudart is looked for or loaded.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
FENCE_MODULE = "_attn_preflight_fence"
SCHEMA = 1  # the request / answer format (SCHEMA.md)


def blank_answer(engine: str, engine_version=None) -> dict:
    """The answer of a driver that has asked nothing yet: could_not_ask, every finding empty."""
    return {
        "schema": SCHEMA,
        "driver": f"{engine}_driver/{SCHEMA}",
        "engine": engine,
        "engine_version": engine_version,
        "status": "could_not_ask",
        "stage": None,
        "error_type": None,
        "error": None,
        "resolved": None,
        "warnings": [],
        "reason": None,
        "seconds": 0.0,
    }


# SM count by compute capability (get_device_properties().multi_processor_count; planners and memory
# heuristics read it), 132 for one not listed.
SMS = {
    (7, 0): 80,
    (7, 5): 40,
    (8, 0): 108,
    (8, 6): 84,
    (8, 7): 16,
    (8, 9): 142,
    (9, 0): 132,
    (10, 0): 148,
    (10, 3): 148,
    (11, 0): 20,
    (12, 0): 188,
    (12, 1): 48,
}
_INTEGRATED = ((8, 7), (11, 0), (12, 1))  # Jetson Orin, Thor, GB10: one memory for CPU and GPU


def load_sibling(name: str, module_name: str):
    """`<name>.py` beside this file, loaded by path as `module_name` (kept in sys.modules: loaded once)."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = os.path.join(HERE, f"{name}.py")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None or not os.path.isfile(path):
        raise FileNotFoundError(f"{path} is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def load_fence():
    return load_sibling("fence", FENCE_MODULE)


def properties(cc: tuple, name: str, total_bytes: int) -> types.SimpleNamespace:
    """torch.cuda.get_device_properties() of the simulated GPU."""
    big = cc[0] in (9, 10, 11)
    return types.SimpleNamespace(
        name=name,
        major=cc[0],
        minor=cc[1],
        total_memory=total_bytes,
        multi_processor_count=SMS.get((cc[0], cc[1]), 132),
        is_integrated=int((cc[0], cc[1]) in _INTEGRATED),
        is_multi_gpu_board=0,
        max_threads_per_multi_processor=2048 if cc[0] < 12 else 1536,
        max_threads_per_block=1024,
        warp_size=32,
        regs_per_multiprocessor=65536,
        shared_memory_per_block=49152,
        shared_memory_per_block_optin=232448 if big else 101376,
        shared_memory_per_multiprocessor=233472 if big else 102400,
        L2_cache_size=50 << 20,
        gcnArchName="",
        uuid="GPU-00000000-0000-0000-0000-000000000000",
        pci_bus_id=0,
        pci_device_id=0,
        pci_domain_id=0,
        clock_rate=1980000,
        memory_clock_rate=2619000,
        memory_bus_width=5120,
    )


def device_index(device, count: int, fail) -> int:
    """The index a torch device argument names (None, an int, "cuda", "cuda:N", a torch.device); `fail(text)`
    (which raises) for one past the simulated count."""
    if device is None or device == "cuda":
        i = 0
    elif isinstance(device, int):
        i = device
    elif getattr(device, "index", None) is not None:
        i = device.index
    elif isinstance(device, str) and ":" in device:
        i = int(device.rsplit(":", 1)[1])
    else:
        i = 0
    if i >= count:
        fail(f"device index {i} asked of a simulated host with {count} GPU(s)")
    return i


def simulate_cuda_queries(torch, device: dict, fail) -> None:
    """torch.cuda's queries answer for `device` ({"cc": (major, minor), "name", "bytes", "count", "cuda"}, read at
    each call: a batch child re-points it); torch.cuda's lazy init (a CUDA context) calls `fail(text)`."""
    cuda = torch.cuda

    def index(d=None) -> int:
        return device_index(d, device["count"], fail)

    def no_context(*_a, **_k):
        fail("something tried to create a CUDA context (torch.cuda lazy init; the device is simulated)")

    cuda.is_available = lambda: True
    cuda.device_count = lambda: device["count"]
    cuda.get_device_capability = lambda d=None: (index(d), device["cc"])[1]
    cuda.get_device_name = lambda d=None: (index(d), device["name"])[1]
    cuda.get_device_properties = lambda d=None: (index(d), properties(device["cc"], device["name"], device["bytes"]))[1]
    cuda.mem_get_info = lambda d=None: (index(d), (int(device["bytes"] * 0.97), device["bytes"]))[1]
    cuda.current_device = lambda: 0
    cuda.set_device = lambda d: None
    cuda.is_bf16_supported = lambda including_emulation=True: device["cc"][0] >= 8
    cuda.get_arch_list = lambda: [f"sm_{device['cc'][0]}{device['cc'][1]}"]
    for fn in ("synchronize", "empty_cache", "reset_peak_memory_stats"):
        setattr(cuda, fn, lambda *_a, **_k: None)
    for counter in ("memory_allocated", "memory_reserved", "max_memory_allocated"):
        setattr(cuda, counter, lambda *_a, **_k: 0)
    cuda._lazy_init = no_context
    if hasattr(cuda, "init"):
        cuda.init = no_context
    torch.version.cuda = device["cuda"]
    torch.version.hip = None


def nvidia_smi(command: str, device: dict):
    """What `nvidia-smi --query-gpu=...` prints about the simulated GPU, one line per device; None for a command
    that is not nvidia-smi."""
    if os.path.basename(command.split(" ")[0]) != "nvidia-smi":
        return None
    if "memory.total" in command:
        value = str(device["bytes"] >> 20)
    elif "compute_cap" in command:
        value = f"{device['cc'][0]}.{device['cc'][1]}"
    elif "name" in command:
        value = str(device["name"])
    else:
        return ""
    return "\n".join([value] * device["count"]) + "\n"


def answer_programs(answered) -> None:
    """`subprocess.run` and `subprocess.check_output` return `answered(command line)` where it is not None (as a
    program that printed it and exited 0); any other command goes on to the real call (and meets the fence)."""
    import subprocess

    real_run, real_check_output = subprocess.run, subprocess.check_output

    def line(args) -> str:
        return " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)

    def as_text(kw) -> bool:
        return bool(kw.get("text") or kw.get("universal_newlines") or kw.get("encoding"))

    def run(args, *a, **kw):
        out = answered(line(args))
        if out is not None:
            text = as_text(kw)
            return subprocess.CompletedProcess(args, 0, out if text else out.encode(), "" if text else b"")
        return real_run(args, *a, **kw)

    def check_output(args, *a, **kw):
        out = answered(line(args))
        if out is not None:
            return out if as_text(kw) else out.encode()
        return real_check_output(args, *a, **kw)

    subprocess.run, subprocess.check_output = run, check_output


# Modules that build a CUDA runtime wrapper when imported. flashinfer 0.2 - 0.6's flashinfer/comm/cuda_ipc.py ends
# in `cudart = CudaRTLibrary()`, whose __init__ asserts libcudart is already mapped in the process (it reads
# /proc/self/maps) and then ctypes-loads it: on a CPU torch nothing maps it, so `import flashinfer.comm` (vLLM
# 0.11 - 0.15's vllm/compilation/collective_fusion.py, `except ImportError` only) fails with an AssertionError.
# flashinfer 0.7 made it lazy upstream (`cudart = _LazyCudaRTLibrary()`); the stand-in does the same, and fails
# instead of loading anything when used.
CUDART_AT_IMPORT = ("flashinfer.comm.cuda_ipc",)
_CUDART_CLASS = "CudaRTLibrary"
_STAND_IN = "__attn_preflight_cudart_stand_in__"


class DeferredCudaRT:
    """Stands where a module built a CUDA runtime wrapper at import; any use calls `fail(text)` (which raises)."""

    def __init__(self, where: str, fail) -> None:
        self._where = where
        self._fail = fail

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self._fail(
            f"{self._where}.{name} was used: the CUDA runtime wrapper built at import is a stand-in "
            "(no libcudart in the simulation)"
        )


def cudart_built_at_import(tree: ast.Module) -> list[ast.Assign]:
    """The module-level `NAME = CudaRTLibrary()` statements (no arguments: the wrapper looks libcudart up)."""
    return [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == _CUDART_CLASS
        and not node.value.args
        and not node.value.keywords
    ]


class _DeferringLoader(importlib.abc.Loader):
    def __init__(self, real, fullname: str, fail, note) -> None:
        self._real, self._name, self._fail, self._note = real, fullname, fail, note

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module) -> None:
        try:
            tree = ast.parse(self._real.get_source(self._name) or "")
        except Exception:
            tree = ast.Module(body=[], type_ignores=[])
        found = cudart_built_at_import(tree)
        if not found:  # another shape (a lazy wrapper already), or no source: the module as it is
            self._real.exec_module(module)
            return
        for node in found:
            target = node.targets[0]
            assert isinstance(target, ast.Name)
            where = f"{self._name}.{target.id}"
            node.value = ast.copy_location(
                ast.Call(ast.Name(_STAND_IN, ast.Load()), [ast.Constant(where)], []), node.value
            )
        ast.fix_missing_locations(tree)
        module.__dict__[_STAND_IN] = lambda where: DeferredCudaRT(where, self._fail)
        code = compile(tree, module.__spec__.origin or self._name, "exec")
        exec(code, module.__dict__)
        names = ", ".join(f"{self._name}.{n.targets[0].id}" for n in found)  # type: ignore[attr-defined]
        self._note(f"{names} (a CUDA runtime wrapper built at import) is a stand-in that fails if used")


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self, names, fail, note) -> None:
        self._names, self._fail, self._note = set(names), fail, note

    def find_spec(self, fullname, path, target=None):
        if fullname not in self._names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _DeferringLoader(spec.loader, fullname, self._fail, self._note)
        return spec


def defer_import_time_cudart(fail, note, names=CUDART_AT_IMPORT) -> None:
    """Before the engine is imported: each module of `names` that builds a CUDA runtime wrapper at import gets
    a `DeferredCudaRT` there instead (and `note(text)` says so when it is imported); others load unchanged."""
    if not any(isinstance(f, _DeferringFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _DeferringFinder(names, fail, note))
