#!/usr/bin/env python3
"""Ask an installed vLLM release whether a `vllm serve` line would start, on a simulated GPU.

Self-contained (stdlib only on our side): it runs in the engine's own venv, where attn-preflight is not
installed. Request: one JSON object on stdin (probe/engine_ask/child/SCHEMA.md); the answer is written to
request["answer_path"]; nothing of ours is printed on stdout (the engine's own prints are sent to stderr).

What runs is vLLM's own code, in the order a real `vllm serve` runs it, up to the point a GPU would be needed:
  parse            the `vllm serve` argument parser (make_arg_parser) and validate_parsed_serve_args
  config           AsyncEngineArgs.from_cli_args(args).create_engine_config(): ModelConfig (config.json,
                   dtype, quantization minimum capability), CacheConfig (KV dtype), ParallelConfig (world
                   size vs device count), VllmConfig.__post_init__, the platform's check_and_update_config
  validate         the worker's device checks (model dtype vs compute capability)
  backend_selection the model's real class built on the meta device: every attention layer calls vLLM's
                   selector (get_attn_backend -> the platform's get_attn_backend_cls: the backend's
                   validate_configuration / priority list, whichever the release has) and the backend
                   Impl's __init__
  resolve          the platform's update_block_size_for_backend (releases that have it), then the values
                   resolved: backend, block size, KV dtype, max_model_len

The device is always simulated from the request (torch.cuda and NVML answer for it; the wheel's compiled
extensions are stubbed, their op schemas read from the .so files so vLLM's `hasattr(torch.ops._C, ...)`
probes see them, and the capability-query ops answer as their C++ does; a CUDA runtime wrapper that
flashinfer < 0.7 builds at import is a stand-in that fails if used); a CUDA context is never created.
Any release is tried: the entry points are looked up where each release keeps them, and a release whose
internals differ gives status "could_not_ask" with what was missing, never a refusal.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import sys
import time
import traceback
import types
from typing import Any, NoReturn

T0 = time.monotonic()


class SimulationError(Exception):
    """Raised by the simulation (a fence, a kernel call, a missing internal). Not a ValueError/RuntimeError,
    so vLLM's own `except ValueError` paths never swallow it and it never reads as the engine's rejection."""


NOTES: list[str] = []


def note(msg: str) -> None:
    if msg not in NOTES:
        NOTES.append(msg)


def sim_fail(msg: str) -> NoReturn:
    note(msg)
    raise SimulationError(msg)


# ----------------------------------------------------------------------------------------------------------
# The simulated device
# ----------------------------------------------------------------------------------------------------------


def _load_simulated():
    """simulated.py beside this file (what both drivers share: the fence, the simulated device), by path."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "simulated.py")
    spec = importlib.util.spec_from_file_location("_attn_preflight_simulated", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["_attn_preflight_simulated"] = module
    spec.loader.exec_module(module)
    return module


simulated = _load_simulated()

DEV: dict = {}


def set_device(req: dict) -> None:
    gpu = req.get("gpu") or {}
    cc = gpu.get("cc") or [9, 0]
    cc = (int(cc[0]), int(cc[1]))
    name = str(gpu.get("name") or f"NVIDIA GPU sm_{cc[0]}{cc[1]}")
    mib = int(gpu.get("memory_mib") or 81559)
    count = max(1, int(gpu.get("count") or 1))
    given = gpu.get("host_memory_mib")
    assumed = not given
    # a stated assumption where none is given, said in the answer: twice the GPUs' memory, at least 64 GiB
    host_mib = max(HOST_MEMORY_MIN_MIB, 2 * count * mib) if assumed else int(given or 0)
    DEV.update(
        cc=cc,
        name=name,
        bytes=mib * (1 << 20),
        count=count,
        cuda=str(req.get("cuda_version") or default_cuda_version()),
        host_bytes=host_mib * (1 << 20),
        host_assumed=assumed,
    )


HOST_MEMORY_MIN_MIB = 64 << 10


def simulate_host_memory() -> None:
    """psutil.virtual_memory() reports the simulated host's RAM (DEV["host_bytes"]), not this machine's: vLLM
    reads its total for the swap-space check (CacheConfig.verify_with_parallel_config -> get_cpu_memory,
    0.10 - 0.15) and for CPU offload sizes, so the answer does not depend on where the tool runs."""
    try:
        import psutil
    except ImportError:
        return
    real = psutil.virtual_memory
    if getattr(real, "_attn_preflight_sim", False):
        return

    def virtual_memory():
        got = real()
        total = DEV.get("host_bytes")
        if not total:
            return got
        if DEV.get("host_assumed"):  # said only where the engine read it
            note(
                f"host RAM assumed {total >> 30} GiB (2 x the simulated GPUs' memory, at least "
                f"{HOST_MEMORY_MIN_MIB >> 10} GiB; no host memory in the request): vLLM read it (psutil)"
            )
        used = min(int(got.total - got.available), int(total))
        fields = {"total": int(total), "available": int(total) - used}
        if "free" in got._fields:
            fields["free"] = int(total) - used
        return got._replace(**fields)

    virtual_memory._attn_preflight_sim = True  # type: ignore[attr-defined]
    psutil.virtual_memory = virtual_memory


def default_cuda_version() -> str:
    """The CUDA the release's wheels are built for: vLLM's own build metadata where it carries it (a cu13
    requirement), else 12.8 (what the 0.10 - 0.2x wheels on PyPI were built with)."""
    try:
        import importlib.metadata as md

        if any("cu13" in r for r in (md.requires("vllm") or [])):
            return "13.0"
    except Exception:
        pass
    return "12.8"


def cuda_num() -> int:
    parts = [int(x) for x in re.findall(r"\d+", DEV["cuda"])[:2]] + [0]
    return parts[0] * 1000 + parts[1] * 10


def props():
    return simulated.properties(DEV["cc"], DEV["name"], DEV["bytes"])


class _InertStream:
    """torch.cuda.Stream / Event as created in layer constructors; nothing ever runs on it."""

    cuda_stream = 0
    device = None

    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __getattr__(self, name):
        return lambda *a, **k: None


def simulate_torch_cuda() -> None:
    import importlib

    import torch

    # torch modules that test torch.cuda at import: import them while torch still sees no CUDA.
    for m in (
        "torch._dynamo",
        "torch._inductor.config",
        "torch._inductor.utils",
        "torch.distributed",
        "torch._dynamo.device_interface",
        "torch.utils.cpp_extension",
        "torch._inductor.codecache",
    ):
        try:
            importlib.import_module(m)
        except Exception as e:
            note(f"torch module {m} did not import: {type(e).__name__}")
    simulated.simulate_cuda_queries(torch, DEV, sim_fail)
    c = torch.cuda
    c._is_compiled = lambda: True
    c.is_initialized = lambda: False
    c._device_count_nvml = lambda: DEV["count"]
    inert = {  # streams, events and graph pools that do nothing (setattr: they stand in for torch's own types)
        "Stream": _InertStream,
        "Event": _InertStream,
        "ExternalStream": _InertStream,
        "current_stream": lambda device=None: _InertStream(),
        "default_stream": lambda device=None: _InertStream(),
        "stream": lambda s=None: contextlib.nullcontext(s),
        "set_stream": lambda s: None,
        "graph_pool_handle": lambda: ("simulated graph pool",),
    }
    for name, value in inert.items():
        setattr(c, name, value)

    acc = getattr(torch, "accelerator", None)
    if acc is not None:
        acc.is_available = lambda: True
        acc.device_count = lambda: DEV["count"]
        acc.current_accelerator = lambda check_available=False: torch.device("cuda")
        acc.current_device_index = lambda: 0
        acc.set_device_index = lambda device: None
        acc.synchronize = lambda device=None: None
        acc.empty_cache = lambda: None
        acc.get_memory_info = lambda device=None: c.mem_get_info(device)


def simulate_nvml() -> None:
    """vLLM's platform detection asks NVML (its vendored pynvml, or nvidia-ml-py's pynvml)."""
    mods: list[Any] = []
    for name in ("vllm.third_party.pynvml", "pynvml"):
        try:
            mods.append(__import__(name, fromlist=["_"]))
        except Exception:
            pass
    if not mods:
        sim_fail("no pynvml module to simulate NVML with")
    for nv in mods:

        def handle(i, _nv=nv):
            if int(i) >= DEV["count"]:
                raise _nv.NVMLError(_nv.NVML_ERROR_INVALID_ARGUMENT)
            return ("simulated-gpu", int(i))

        def mem(h):
            t = DEV["bytes"]
            return types.SimpleNamespace(total=t, free=int(t * 0.97), used=t - int(t * 0.97))

        nv.nvmlInit = nv.nvmlShutdown = lambda *a, **k: None
        nv.nvmlInitWithFlags = lambda *a, **k: None
        nv.nvmlDeviceGetCount = lambda: DEV["count"]
        nv.nvmlDeviceGetHandleByIndex = handle
        nv.nvmlDeviceGetHandleByUUID = lambda u: ("simulated-gpu", 0)
        nv.nvmlDeviceGetIndex = lambda h: h[1]
        nv.nvmlDeviceGetCudaComputeCapability = lambda h: DEV["cc"]
        nv.nvmlDeviceGetName = lambda h: DEV["name"]
        nv.nvmlDeviceGetMemoryInfo = mem
        nv.nvmlDeviceGetUUID = lambda h: f"GPU-00000000-0000-0000-0000-{h[1]:012d}"
        nv.nvmlDeviceGetP2PStatus = lambda a, b, c, _nv=nv: getattr(_nv, "NVML_P2P_STATUS_OK", 0)
        nv.nvmlDeviceGetNumaNodeId = lambda h: 0
        nv.nvmlSystemGetCudaDriverVersion = nv.nvmlSystemGetCudaDriverVersion_v2 = lambda: cuda_num()
        nv.nvmlSystemGetDriverVersion = lambda: "580.00"
        nv.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=f"00000000:{h[1] + 1:02X}:00.0")


# ----------------------------------------------------------------------------------------------------------
# The wheel's compiled extensions: stub modules, op schemas, capability-query answers
# ----------------------------------------------------------------------------------------------------------

_SCHEMA_RE = re.compile(rb"([A-Za-z_]\w*(?:\.\w+)?)\((.*)\) -> ([\w\[\]\(\), ?!.]{1,200})")


def op_schemas(data: bytes):
    """(name, schema) of every operator schema string in a compiled extension: NUL-terminated C strings
    `name(args) -> ret`, found from their ` -> ` (a scan of the whole binary with one regex is ten times
    slower)."""
    pos = data.find(b") -> ")
    while pos >= 0:
        start = data.rfind(b"\x00", 0, pos) + 1
        end = data.find(b"\x00", pos)
        m = _SCHEMA_RE.fullmatch(data[start:end]) if 0 <= end - start < 4096 else None
        if m is not None:
            name = m.group(1).decode()
            yield name, f"{name}({m.group(2).decode('latin1')}) -> {m.group(3).decode()}"
        pos = data.find(b") -> ", max(pos + 5, end if end > 0 else pos + 5))


_OPREF_RE = re.compile(r"torch\.ops\.(\w+)\.(\w+)|[\"'](\w+)::(\w+)")


def _vllm_root() -> str:
    import importlib.util

    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.origin:
        sim_fail("vllm is not importable in this interpreter")
    return os.path.dirname(spec.origin)


def extension_modules(root: str) -> list[tuple[str, str]]:
    """(module name, .so path) of every compiled extension in the vllm package."""
    out = []
    for dp, _dn, fns in os.walk(root):
        for fn in fns:
            if fn.endswith(".so"):
                rel = os.path.relpath(os.path.join(dp, fn), os.path.dirname(root))
                mod = rel[: -len(".so")].split(".", 1)[0].replace(os.sep, ".")
                out.append((mod, os.path.join(dp, fn)))
    return out


def query_ops() -> dict:
    """The capability-query ops vLLM calls while configuring, answering as their C++ does for the simulated
    CUDA version (csrc/quantization/.../scaled_mm_entry.cu: cutlass_scaled_mm_supports_fp8 & co.)."""
    v = cuda_num

    def fp8(cap):
        cap = int(cap)
        return v() >= 12000 if cap >= 90 else (v() >= 12040 if cap >= 89 else False)

    def block_fp8(cap):
        cap = int(cap)
        return v() >= 12080 if cap >= 100 else (v() >= 12000 if cap >= 90 else False)

    def group_gemm(cap):
        cap = int(cap)
        return v() >= 12080 if cap >= 100 else (v() >= 12030 if cap >= 90 else False)

    def fp4(cap):
        return int(cap) >= 100 and v() >= 12080

    def smem(device=0):
        return props().shared_memory_per_block_optin

    return {
        "cutlass_scaled_mm_supports_fp8": fp8,
        "cutlass_scaled_mm_supports_block_fp8": block_fp8,
        "cutlass_group_gemm_supported": group_gemm,
        "cutlass_scaled_mm_supports_fp4": fp4,
        "get_max_shared_memory_per_block_device_attribute": smem,
        "moe_permute_unpermute_supported": lambda: v() >= 12000,
    }


_LIBS: list = []


def stub_extensions() -> None:
    """Empty modules for the CUDA-linked extensions, and every op schema they register defined in torch's
    dispatcher under the namespace(s) vLLM's Python code names it with. Running any op other than the
    capability queries raises SimulationError: no kernel runs here."""
    import torch

    root = _vllm_root()
    exts = extension_modules(root)
    schemas: dict = {}
    stems: dict = {}
    for mod, path in exts:
        sys.modules.setdefault(mod, types.ModuleType(mod))
        try:
            with open(path, "rb") as binary:
                data = binary.read()
        except OSError:
            continue
        for name, schema in op_schemas(data):
            schemas.setdefault(name, schema)
            stems.setdefault(name, os.path.basename(path).split(".", 1)[0].replace("_", "").lower())
    refs: dict = {}
    for dp, _dn, fns in os.walk(root):
        for fn in fns:
            if not fn.endswith(".py"):
                continue
            try:
                with open(os.path.join(dp, fn), encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                continue
            if "torch.ops." not in text and "::" not in text:
                continue
            for m in _OPREF_RE.finditer(text):
                ns, op = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                refs.setdefault(op, set()).add(ns)
    skip_ns = {
        "aten",
        "prim",
        "prims",
        "c10d",
        "vllm",
        "higher_order",
        "_c10d_functional",
        "torch",
        "profiler",
        "quantized",
        "inductor",
        "_inductor",
        "mylib",
        "test",
        "_quantized",
    }
    queries = query_ops()
    libs: dict = {}
    defined = 0
    for name in sorted(schemas, key=lambda n: ("." in n, n)):
        base = name.split(".", 1)[0]
        # an extension's namespace: `_C`, `_moe_C`, `_vllm_fa3_C`, ... or one named like its .so
        # (`deep_select` in _deepselect_C); namespaces vLLM defines in Python (vllm_ir, ...) are not
        spaces = {
            ns
            for ns in refs.get(base, set()) - skip_ns
            if ns.startswith("_") or ns.replace("_", "").lower() in stems.get(name, "")
        }
        for ns in sorted(spaces):
            lib = libs.get(ns)
            if lib is None:
                lib = libs[ns] = torch.library.Library(ns, "FRAGMENT")
                _LIBS.append(lib)
            try:
                lib.define(schemas[name])
            except Exception:
                continue
            defined += 1
            if name in queries:
                lib.impl(name, queries[name], "CompositeExplicitAutograd")
                continue

            def kernel(*a, _op=f"{ns}::{name}", **k):
                sim_fail(f"compiled kernel {_op} was called (no kernel runs in the simulation)")

            args = schemas[name].split("(", 1)[1]
            for key in ("CPU", "CUDA", "Meta") if "Tensor" in args else ("CompositeExplicitAutograd",):
                with contextlib.suppress(Exception):
                    lib.impl(name, kernel, key)
    note(f"{len(exts)} compiled extension module(s) stubbed; {defined} op schema(s) defined from them")


# ----------------------------------------------------------------------------------------------------------
# Fences (network, subprocess); a shared fence.py beside this file is installed first when present
# ----------------------------------------------------------------------------------------------------------


FENCE: list = []  # the loaded fence module (fence.py beside this file)


def install_fences(req: dict) -> None:
    """fence.py first (network, programs, writes outside the temp dir, GPU driver libraries: refused), then
    nvidia-smi answered from the simulated device before a call reaches the fence."""
    try:
        fence = simulated.load_fence()
    except FileNotFoundError as e:
        raise CouldNotAsk("import", f"the fence is missing ({e})") from e
    fence.tie_to_parent(req.get("parent_pid"), req.get("deadline_s"))
    fence.install(req.get("temp_dir") or os.environ.get("TMPDIR") or "/tmp")
    FENCE.append(fence)

    def answered(cmd: str):
        """What the simulation answers itself: nvidia-smi (the simulated GPU) and the two probes Python's
        `platform` module makes (`uname -p`, `file -b`), which tell nothing about the GPU."""
        prog = os.path.basename(cmd.split(" ")[0])
        if prog == "nvidia-smi":
            return simulated.nvidia_smi(cmd, DEV)
        if prog == "uname":
            return os.uname().machine + "\n"
        if prog == "file":
            return ""
        return None

    simulated.answer_programs(answered)


def child_env(req: dict) -> None:
    tmp = req.get("temp_dir") or os.environ.get("TMPDIR") or "/tmp"
    for k, v in (req.get("env") or {}).items():
        os.environ[str(k)] = str(v)
    for k, v in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("HF_DATASETS_OFFLINE", "1"),
        ("VLLM_USE_MODELSCOPE", "0"),
        ("VLLM_NO_USAGE_STATS", "1"),
        ("DO_NOT_TRACK", "1"),
        ("VLLM_CACHE_ROOT", os.path.join(tmp, "vllm-cache")),
        ("TRITON_CACHE_DIR", os.path.join(tmp, "triton-cache")),
        ("FLASHINFER_WORKSPACE_BASE", os.path.join(tmp, "flashinfer")),
    ):
        os.environ.setdefault(k, v)
    # A host with FlashInfer's prebuilt kernels (vLLM's release images ship flashinfer-cubin); vLLM's own
    # switch, which the request's env may set to 0.
    if os.environ.setdefault("VLLM_HAS_FLASHINFER_CUBIN", "1") == "1":
        note("assumed FlashInfer's prebuilt kernels are present (VLLM_HAS_FLASHINFER_CUBIN=1)")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(DEV["count"])))


# ----------------------------------------------------------------------------------------------------------
# Where each release keeps the entry points
# ----------------------------------------------------------------------------------------------------------


def first_attr(candidates: list[tuple[str, str]]):
    """The first (module, attribute) that imports; SimulationError naming all tried when none does."""
    import importlib

    errors = []
    for mod, attr in candidates:
        try:
            obj = getattr(importlib.import_module(mod), attr)
            return obj
        except SimulationError:
            raise
        except Exception as e:
            errors.append(f"{mod}.{attr} ({type(e).__name__})")
    sim_fail("this release keeps none of: " + ", ".join(errors))


# ----------------------------------------------------------------------------------------------------------
# Classification: the engine's rejection vs a limit of the simulation
# ----------------------------------------------------------------------------------------------------------

_REJECT_TYPES = (ValueError, AssertionError, RuntimeError, NotImplementedError)
_SIM_TYPES = (ImportError, OSError, AttributeError, TypeError, KeyError, NameError, IndexError)
_HOST_MSG = re.compile(
    r"Torch not compiled with CUDA|no NVIDIA driver|NVML|nvidia-smi|CUDA driver|cudaGetDevice|CUDA error|"
    r"libcuda|No CUDA GPUs|HF_HUB_OFFLINE|offline mode|LocalEntryNotFound|couldn't connect|Can't load|"
    r"does not appear to have a file|not a local folder|failed to be inspected|Invalid repository ID|"
    r"Could not run '|undefined symbol|Tried to register an operator|dummy base class|Could not load this library|Current vLLM config is not set",
    re.I,
)


def chain(exc) -> list:
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    return out


def raised_at(exc) -> str | None:
    tb, frames = exc.__traceback__, []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    for fn, ln, name in reversed(frames):
        i = fn.rfind("/vllm/")
        if i >= 0:
            return f"{fn[i + 1 :]}:{ln} {name}"
    return f"{frames[-1][0]}:{frames[-1][1]} {frames[-1][2]}" if frames else None


def is_rejection(exc) -> tuple[bool, str]:
    """(True, '') when vLLM itself refused the config; (False, why) when the simulation could not go on."""
    fence_error = FENCE[0].FenceError if FENCE else ()
    for e in chain(exc):
        if isinstance(e, SimulationError):
            return False, f"simulation limit: {e}"
        if fence_error and isinstance(e, fence_error):
            return False, f"the fence stopped the engine: {e}"
    if isinstance(exc, _SIM_TYPES) or not isinstance(exc, _REJECT_TYPES):
        return False, f"{type(exc).__name__} inside the engine: {str(exc)[:300]}"
    if _HOST_MSG.search(str(exc)):
        return False, f"needs the real host (GPU driver, kernels or downloads): {str(exc)[:300]}"
    validation = type(exc).__name__ == "ValidationError" and "pydantic" in type(exc).__module__
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    origin = tb.tb_frame.f_code.co_filename if tb is not None else ""
    if not validation and "/vllm/" not in origin:
        return False, f"{type(exc).__name__} raised outside vLLM ({origin}): {str(exc)[:300]}"
    for e in chain(exc)[1:]:
        if isinstance(e, _SIM_TYPES) and not isinstance(e, _REJECT_TYPES):
            return False, f"caused by {type(e).__name__}: {str(e)[:300]}"
    return True, ""


# ----------------------------------------------------------------------------------------------------------
# Log capture (vLLM reconfigures its loggers; a hook on Logger.handle survives that)
# ----------------------------------------------------------------------------------------------------------

RECORDS: list[tuple[int, str]] = []
_WARN_WORTHY = re.compile(
    r"backend|attention|attn|block.?size|kv.?cache|fp8|dtype|flash|mla|sink|sliding|softcap|capabilit|"
    r"not supported|fall(ing)? ?back|defaulting|max_model_len|context",
    re.I,
)


def capture_logs() -> None:
    orig = logging.Logger.handle

    def handle(self, record):
        if record.name.startswith("vllm") and record.levelno >= logging.INFO:
            with contextlib.suppress(Exception):
                RECORDS.append((record.levelno, record.getMessage()[:800]))
        return orig(self, record)

    logging.Logger.handle = handle  # type: ignore[method-assign]


# ----------------------------------------------------------------------------------------------------------
# Worker-side simulation: parallel groups, model on the meta device
# ----------------------------------------------------------------------------------------------------------


def init_groups(vllm_config) -> None:
    """One process joins a 1-rank gloo group; the group coordinators are then told they are rank 0 of the
    configured sizes (what layer constructors read to shard heads and experts)."""
    from vllm.distributed import parallel_state as ps

    set_cfg = first_attr([("vllm.config", "set_current_vllm_config")])
    pc = vllm_config.parallel_config
    path = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"vllm-dist-{os.getpid()}")
    hidden = {k: getattr(pc, k) for k in ("data_parallel_size", "nnodes") if hasattr(pc, k)}
    try:
        # with DP > 1 vLLM would wait on a cross-DP store for the other ranks: hide it while joining
        for k in hidden:
            object.__setattr__(pc, k, 1)
        with set_cfg(vllm_config):
            ps.init_distributed_environment(
                world_size=1, rank=0, distributed_init_method=f"file://{path}", local_rank=0, backend="gloo"
            )
            ps.initialize_model_parallel(1, 1)
    finally:
        for k, v in hidden.items():
            object.__setattr__(pc, k, v)
    tp, pp, dp = pc.tensor_parallel_size, pc.pipeline_parallel_size, pc.data_parallel_size
    pcp = getattr(pc, "prefill_context_parallel_size", 1) or 1
    dcp = getattr(pc, "decode_context_parallel_size", 1) or 1
    sizes = {"_TP": tp, "_PP": pp, "_DP": dp, "_PCP": pcp, "_DCP": dcp, "_EP": tp * dp * pcp, "_ETP": tp}
    for name, n in sizes.items():
        g = getattr(ps, name, None)
        if g is not None and n > 1:
            g.world_size, g.rank_in_group, g.ranks = n, 0, list(range(n))


def cuda_to_meta():
    """A TorchFunctionMode that turns explicit device='cuda' tensors (workspaces made in constructors) into
    meta tensors; nothing is ever computed on them."""
    import torch
    from torch.overrides import TorchFunctionMode

    def is_cuda(d) -> bool:
        if isinstance(d, torch.device):
            return d.type == "cuda"
        if isinstance(d, str):
            return d.startswith("cuda")
        return isinstance(d, int) and not isinstance(d, bool)

    class CudaToMeta(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if is_cuda(kwargs.get("device")):
                kwargs["device"] = torch.device("meta")
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
            name = getattr(func, "__name__", "")
            if args and isinstance(args[0], torch.Tensor):
                if name == "cuda":
                    return args[0].to("meta")
                if name == "pin_memory":
                    return args[0]
                if name == "to" and len(args) > 1 and is_cuda(args[1]) and not isinstance(args[1], int):
                    args = (args[0], torch.device("meta"), *args[2:])
            return func(*args, **kwargs)

    return CudaToMeta


def build_model(vllm_config):
    import torch

    initialize_model = first_attr([("vllm.model_executor.model_loader.utils", "initialize_model")])
    default_dtype = first_attr(
        [
            ("vllm.utils.torch_utils", "set_default_torch_dtype"),
            ("vllm.model_executor.model_loader.utils", "set_default_torch_dtype"),
        ]
    )
    set_cfg = first_attr([("vllm.config", "set_current_vllm_config")])
    with set_cfg(vllm_config), default_dtype(vllm_config.model_config.dtype), torch.device("meta"), cuda_to_meta()():
        return initialize_model(vllm_config=vllm_config)


def backend_name(layer) -> str | None:
    """The attention backend a built layer uses, as vLLM names it: the backend class's get_name() (0.11 on:
    `attn_backend` / `get_attn_backend()`), else the layer's backend enum (0.10: `layer.backend`); the V1
    suffix of 0.10's names (FLASH_ATTN_VLLM_V1) dropped."""
    backend = getattr(layer, "attn_backend", None)
    if backend is None and hasattr(layer, "get_attn_backend"):
        with contextlib.suppress(Exception):
            backend = layer.get_attn_backend()
    name = None
    if backend is not None and hasattr(backend, "get_name"):
        with contextlib.suppress(Exception):
            name = backend.get_name()
    elif backend is not None and hasattr(backend, "name"):
        name = backend.name
    if name is None and hasattr(layer, "impl") and hasattr(getattr(layer, "backend", None), "name"):
        name = layer.backend.name
    return re.sub(r"_VLLM_V1$", "", str(name)) if name is not None else None


def attention_layers(vllm_config) -> list[tuple[str, str]]:
    """(layer name, backend name) of every attention layer the model registered."""
    ctx = getattr(vllm_config.compilation_config, "static_forward_context", {}) or {}
    out = []
    for name, layer in ctx.items():
        backend = backend_name(layer)
        if backend is not None:
            out.append((name, backend))
    return out


def build_metadata_builders(vllm_config) -> tuple:
    """What the model runner does once the KV cache is laid out: per (backend, KV-cache spec, heads) group of
    attention layers, vLLM's AttentionGroup.create_metadata_builders, whose builder __init__ holds checks
    of its own (FlashInfer's page size without TRTLLM, its KV dtypes). Buffers go to the meta device; the
    KV-cache memory plan is not simulated (each layer's own spec, the resolved block size). Returns the
    number of groups built; SimulationError where the release keeps no AttentionGroup with that method."""
    import torch

    group_cls = first_attr([("vllm.v1.worker.utils", "AttentionGroup")])
    if not hasattr(group_cls, "create_metadata_builders"):
        sim_fail("this release's AttentionGroup has no create_metadata_builders")
    try:
        from vllm.v1.worker.utils import customize_attention_spec  # 0.2x on
    except ImportError:
        customize_attention_spec = None
    try:
        from vllm.v1.kv_cache_interface import AttentionSpec
    except ImportError:
        AttentionSpec = None
    set_cfg = first_attr([("vllm.config", "set_current_vllm_config")])
    ctx = getattr(vllm_config.compilation_config, "static_forward_context", {}) or {}
    groups: dict = {}
    with set_cfg(vllm_config):
        for name, layer in ctx.items():
            if not hasattr(layer, "get_kv_cache_spec") or getattr(layer, "kv_sharing_target_layer_name", None):
                continue
            backend = getattr(layer, "attn_backend", None)
            if backend is None and hasattr(layer, "get_attn_backend"):
                backend = layer.get_attn_backend()
            if backend is None or not hasattr(backend, "get_builder_cls"):
                continue
            spec = layer.get_kv_cache_spec(vllm_config)
            if spec is None:
                continue
            if customize_attention_spec is not None and AttentionSpec is not None and isinstance(spec, AttentionSpec):
                spec = customize_attention_spec(backend, spec)
            groups.setdefault((backend, spec, getattr(layer, "num_heads", 0)), []).append(name)
    kernels: list = []
    for gid, ((backend, spec, _heads), names) in enumerate(groups.items()):
        group = group_cls(backend, names, spec, gid)
        with set_cfg(vllm_config):
            kernel = kernel_block_size(backend, spec)
        kernels.append(kernel)
        with set_cfg(vllm_config), torch.device("meta"), cuda_to_meta()():
            group.create_metadata_builders(vllm_config, torch.device("cuda"), kernel_block_size=kernel)
    return len(groups), kernels


def kernel_block_size(backend, spec):
    """The kernel block size the model runner hands a group's metadata builders (GPUModelRunner.initialize_kv_cache
    -> prepare_kernel_block_sizes -> select_common_block_size, v1/worker/utils.py in 0.33.0): the KV manager's
    block size where the backend declares it (an exact size, or a multiple of a MultipleOf), else the largest of
    the backend's exact sizes dividing it (FlashInfer without TRT-LLM: 64 for --block-size 256). None (the
    builder keeps the spec's block size) where the release has no select_common_block_size taking the backends.
    Not simulated: block-outermost KV layouts (kept unsplit there), groups mixing backends."""
    block = getattr(spec, "block_size", None)
    try:
        from vllm.v1.worker.utils import select_common_block_size
    except ImportError:
        return None
    if block is None:
        return None
    for args in ((block, [backend], [spec]), (block, [backend])):
        try:
            return int(select_common_block_size(*args))
        except TypeError:
            continue
    return None


# ----------------------------------------------------------------------------------------------------------
# The pipeline
# ----------------------------------------------------------------------------------------------------------


class Rejected(Exception):
    def __init__(self, stage: str, exc: BaseException | None, error_type: str, error: str):
        super().__init__(error)
        self.stage, self.exc, self.error_type, self.error = stage, exc, error_type, error


class CouldNotAsk(Exception):
    def __init__(self, stage: str, reason: str):
        super().__init__(reason)
        self.stage, self.reason = stage, reason


STAGES_RUN: list[str] = []


def guarded(stage: str, fn, *a, **k):
    try:
        return fn(*a, **k)
    except (Rejected, CouldNotAsk):
        raise
    except SystemExit as e:
        raise CouldNotAsk(stage, f"the engine exited ({e.code}) at {stage}") from e
    except BaseException as e:
        ok, why = is_rejection(e)
        if ok:
            raise Rejected(stage, e, type(e).__name__, str(e)[:2000]) from e
        raise CouldNotAsk(stage, why) from e


def parse(argv: list[str]):
    make_arg_parser = first_attr(
        [
            ("vllm.entrypoints.common.cli_args", "make_arg_parser"),
            ("vllm.entrypoints.openai.cli_args", "make_arg_parser"),
        ]
    )
    validate = first_attr(
        [
            ("vllm.entrypoints.common.cli_args", "validate_parsed_serve_args"),
            ("vllm.entrypoints.openai.cli_args", "validate_parsed_serve_args"),
        ]
    )
    parser_cls = first_attr(
        [("vllm.utils.argparse_utils", "FlexibleArgumentParser"), ("vllm.utils", "FlexibleArgumentParser")]
    )
    argv = list(argv)
    if argv[:1] == ["vllm"]:
        argv = argv[1:]
    if argv[:1] == ["serve"]:
        argv = argv[1:]
    err = io.StringIO()
    parser = parser_cls(prog="vllm")
    sub = parser.add_subparsers(required=False, dest="subparser")
    make_arg_parser(sub.add_parser("serve", usage="vllm serve [model_tag] [options]"))
    try:
        with contextlib.redirect_stderr(err):
            args = parser.parse_args(["serve", *argv])
    except SystemExit as e:
        lines = [ln for ln in err.getvalue().strip().splitlines() if ln.strip()]
        # argparse prints usage, then "vllm serve: error: ..."; a config flag's pydantic error continues over
        # the following lines (the field, "Unexpected keyword argument", a docs link): keep all of it, not
        # only the link that ends it.
        start = max((i for i, ln in enumerate(lines) if ": error:" in ln), default=len(lines) - 1)
        msg = "\n".join(lines[start:]) if lines else f"argument parser exited ({e.code})"
        raise Rejected("parse", None, "ArgumentError", msg[:2000]) from None
    if getattr(args, "model_tag", None) is not None:
        args.model = args.model_tag
    guarded("parse", validate, args)
    return args


def run_pipeline(req: dict, answer: dict) -> None:
    resolved: dict = {}
    answer["resolved"] = None
    args = guarded("parse", parse, list(req.get("argv") or []))
    STAGES_RUN.append("parse")

    from vllm.platforms import current_platform

    if not getattr(current_platform, "is_cuda", lambda: False)():
        raise CouldNotAsk(
            "config", f"vLLM chose the {type(current_platform).__name__} platform, not CUDA, on the simulated GPU"
        )
    AsyncEngineArgs = first_attr([("vllm.engine.arg_utils", "AsyncEngineArgs")])
    UsageContext = first_attr([("vllm.usage.usage_lib", "UsageContext")])

    def make_config():
        engine_args = AsyncEngineArgs.from_cli_args(args)
        return engine_args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)

    vllm_config = guarded("config", make_config)
    STAGES_RUN.append("config")
    mc, cc = vllm_config.model_config, vllm_config.cache_config
    resolved.update(
        model_dtype=str(mc.dtype).replace("torch.", ""),
        context_length=mc.max_model_len,
        kv_cache_dtype=str(cc.cache_dtype),
        page_size=cc.block_size,
        quantization=getattr(mc, "quantization", None),
        use_mla=bool(getattr(mc, "use_mla", False)),
        tensor_parallel_size=vllm_config.parallel_config.tensor_parallel_size,
    )
    answer["resolved"] = resolved

    def device_checks():
        check = getattr(current_platform, "check_if_supports_dtype", None)
        if check is None:
            check = first_attr([("vllm.v1.worker.gpu_worker", "_check_if_gpu_supports_dtype")])
        check(mc.dtype)

    guarded("validate", device_checks)
    STAGES_RUN.append("validate")
    guarded("backend_selection", init_groups, vllm_config)

    selections: list[dict] = []
    cls = type(current_platform)
    orig = cls.get_attn_backend_cls.__func__

    def traced(klass, *a, **k):
        rec = {"requested": None}
        sel = a[0] if a else k.get("selected_backend")
        rec["requested"] = getattr(sel, "name", None) if sel is not None else "auto"
        selections.append(rec)
        try:
            path = orig(klass, *a, **k)
        except BaseException as e:
            rec["error"] = f"{type(e).__name__}: {e}"[:600]
            raise
        rec["selected"] = str(path)
        return path

    cls.get_attn_backend_cls = classmethod(traced)
    try:
        model = guarded("backend_selection", build_model, vllm_config)
    finally:
        cls.get_attn_backend_cls = classmethod(orig)
        layers = attention_layers(vllm_config)
        per_layer: dict = {}
        for _name, backend in layers:
            per_layer[backend] = per_layer.get(backend, 0) + 1
        if per_layer:
            names = list(per_layer)
            resolved["attention_backend"] = names[0] if len(names) == 1 else names
            resolved["attention_layers"] = per_layer
        ctx = getattr(vllm_config.compilation_config, "static_forward_context", {}) or {}
        fa = {getattr(getattr(ctx[n], "impl", None), "vllm_flash_attn_version", None) for n, _b in layers}
        versions = sorted(v for v in fa if v is not None)
        if versions:
            resolved["flash_attn_version"] = versions[0] if len(versions) == 1 else versions
        if selections:
            resolved["selector_calls"] = [{k: v for k, v in s.items()} for s in selections[:8]]
    STAGES_RUN.append("backend_selection")
    del model
    if not layers:
        resolved["attention_backend"] = None
        note("the model built no attention layer the driver recognises")

    update = getattr(current_platform, "update_block_size_for_backend", None)
    if update is not None:
        set_cfg = first_attr([("vllm.config", "set_current_vllm_config")])

        def resolve_block():
            with set_cfg(vllm_config):
                update(vllm_config)

        guarded("resolve", resolve_block)
        STAGES_RUN.append("resolve")
    resolved["page_size"] = cc.block_size
    resolved["kv_cache_dtype"] = str(cc.cache_dtype)
    resolved["context_length"] = mc.max_model_len
    if req.get("backend_init", True):
        try:
            groups, kernels = guarded("backend_init", build_metadata_builders, vllm_config)
            STAGES_RUN.append("backend_init")
            resolved["metadata_builder_groups"] = groups
            sizes = sorted({k for k in kernels if k is not None})
            if sizes:
                resolved["kernel_block_size"] = sizes[0] if len(sizes) == 1 else sizes
        except CouldNotAsk as c:  # the earlier stages' answer stands; this one is said to be unchecked
            note(f"attention metadata builders not checked: {c.reason}"[:400])


def engine_version() -> str | None:
    try:
        import importlib.metadata as md

        return md.version("vllm")
    except Exception:
        return None


def prepare(req: dict) -> None:
    """Environment, fences, the simulated device, and vLLM imported under it (once per process)."""
    if req.get("engine") not in (None, "vllm"):
        raise CouldNotAsk("import", f"this driver asks vllm, not {req.get('engine')!r}")
    if engine_version() is None:
        raise CouldNotAsk("import", "vllm is not installed in this interpreter")
    set_device(req)
    child_env(req)
    install_fences(req)
    capture_logs()
    try:
        simulate_torch_cuda()
        simulated.defer_import_time_cudart(sim_fail, note)
        stub_extensions()
        simulate_nvml()
        simulate_host_memory()
        import vllm  # noqa: F401
        from vllm.platforms import current_platform  # noqa: F401

        # vLLM inspects model classes in a fresh subprocess, which would not see the simulation
        reg: Any = __import__("vllm.model_executor.models.registry", fromlist=["_"])
        if hasattr(reg, "_run_in_subprocess"):
            reg._run_in_subprocess = lambda fn: fn()
    except SimulationError as e:
        raise CouldNotAsk("import", f"simulation limit at import: {e}") from e
    except Exception as e:
        raise CouldNotAsk(
            "import", f"vllm {engine_version()} did not import on the simulated GPU: {type(e).__name__}: {str(e)[:300]}"
        ) from e


def forget_device_answers() -> None:
    """Device answers vLLM cached before this request (functools caches on the platform class)."""
    try:
        from vllm.platforms import current_platform
    except Exception:
        return
    cls = type(current_platform)
    for name in dir(cls):
        with contextlib.suppress(Exception):
            f = getattr(cls, name)
            if hasattr(f, "cache_clear"):
                f.cache_clear()


def ask(req: dict, answer: dict, prepared: BaseException | None = None) -> dict:
    """Run the pipeline for one request and fill `answer` (never raises)."""
    t0 = time.monotonic()
    try:
        if prepared is not None:
            raise prepared
        quiet = not os.environ.get("ATTN_PREFLIGHT_CHILD_LOG")
        with contextlib.redirect_stderr(io.StringIO()) if quiet else contextlib.nullcontext():
            run_pipeline(req, answer)
        answer["status"], answer["stage"] = "accepted", None
    except Rejected as r:
        answer.update(status="rejected", stage=r.stage, error_type=r.error_type, error=r.error)
        if r.exc is not None:
            answer["raised_at"] = raised_at(r.exc)
    except CouldNotAsk as c:
        answer.update(status="could_not_ask", stage=c.stage, reason=c.reason)
        cause = c.__cause__
        if cause is not None:
            answer["error_type"] = type(cause).__name__
            answer["raised_at"] = raised_at(cause)
            answer["traceback_tail"] = [ln.rstrip() for ln in traceback.format_exception(cause)[-3:]]
    except BaseException as e:  # a bug of ours: still an answer, never our traceback
        answer.update(status="could_not_ask", reason=f"driver error: {type(e).__name__}: {str(e)[:300]}")
    answer["warnings"] = [m for lvl, m in RECORDS if lvl >= logging.WARNING and _WARN_WORTHY.search(m)][:40]
    answer["info"] = [
        m
        for lvl, m in RECORDS
        if lvl < logging.WARNING
        and re.search(r"Using .*backend|attention backend|FlashAttention version|block size", m, re.I)
    ][:20]
    answer["sim"] = {
        "gpu": DEV.get("name"),
        "cc": list(DEV.get("cc") or []),
        "count": DEV.get("count"),
        "memory_mib": (DEV.get("bytes") or 0) >> 20,
        "cuda_version": DEV.get("cuda"),
        "host_memory_mib": (DEV.get("host_bytes") or 0) >> 20,
        "host_memory_assumed": DEV.get("host_assumed"),
    }
    answer["notes"] = NOTES[:20]
    answer["stages"] = STAGES_RUN[:]
    answer["fence"] = list(FENCE[0].EVENTS)[:20] if FENCE else []
    answer["seconds"] = round(time.monotonic() - t0, 3)
    return answer


def write_answer(answer: dict, path: str | None, fd: int) -> None:
    data = json.dumps(answer, default=str)
    if path:
        tmp = f"{path}.part"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, path)
    else:
        os.write(fd, (data + "\n").encode())


def batch(reqs: list[dict], emit, timeout: float) -> None:
    """Bench mode: import once, then one forked child per request, each from the untouched post-import state
    (config creation writes process globals). `emit(answer)` gets each answer, in input order. Two ways in:
    `--batch` with one request per stdin line (answers as lines on stdout), or a request with "batch": [{"id",
    "argv", "gpu", "cuda_version"}, ...] (harness.ask_batch; answers as lines in its answer_path)."""
    import select
    import signal

    t_import = time.monotonic()
    prepared: BaseException | None = None
    first = next((r for r in reqs if "_bad" not in r), {})
    if first.get("temp_dir"):
        os.environ["TMPDIR"] = str(first["temp_dir"])
    try:
        prepare(first)
    except BaseException as e:
        prepared = e
    t_import = time.monotonic() - t_import
    import gc

    gc.collect()
    gc.freeze()
    for req in reqs:
        answer = simulated.blank_answer("vllm", engine_version())
        answer["import_seconds"] = answer["shared_import_seconds"] = round(t_import, 3)
        if "_bad" in req:
            answer["reason"] = f"bad request: {req['_bad']}"
            emit(answer)
            continue
        rfd, wfd = os.pipe()
        with FENCE[0].permit("fork") if FENCE else contextlib.nullcontext():
            pid = os.fork()
        if pid == 0:
            os.close(rfd)
            try:
                set_device(req)
                for k, v in (req.get("env") or {}).items():
                    os.environ[str(k)] = str(v)
                os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(DEV["count"]))
                forget_device_answers()
                ask(req, answer, prepared)
                write_answer(answer, None, wfd)
            finally:
                os._exit(0)
        os.close(wfd)
        chunks, t0 = [], time.monotonic()
        while True:
            left = timeout - (time.monotonic() - t0)
            ready, _, _ = select.select([rfd], [], [], max(0.0, left))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                answer["reason"] = f"timed out after {timeout:g} s"
                break
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(rfd)
        os.waitpid(pid, 0)
        if chunks:
            try:
                answer = json.loads(b"".join(chunks).decode())
            except ValueError:
                answer["reason"] = "the child's answer was not JSON"
        elif answer["reason"] is None:
            answer["reason"] = "the child died without an answer"
        answer["seconds"] = round(time.monotonic() - t0, 3)
        if "id" in req:  # the bench's own key, echoed
            answer = {"id": req["id"], **answer}
        emit(answer)


def main() -> int:
    real_stdout = os.dup(1)
    os.dup2(2, 1)  # the engine's prints (and C-level output) go to stderr, never to our stdout
    sys.stdout = sys.stderr

    def to_stdout(answer: dict) -> None:
        write_answer(answer, None, real_stdout)

    if "--batch" in sys.argv[1:]:
        timeout = float(os.environ.get("ATTN_PREFLIGHT_BATCH_TIMEOUT", "300"))
        reqs: list[dict] = []
        for ln in sys.stdin.read().splitlines():
            if ln.strip():
                try:
                    reqs.append(json.loads(ln))
                except ValueError as e:
                    reqs.append({"_bad": str(e)})
        batch(reqs, to_stdout, timeout)
        sys.stderr.flush()
        os._exit(0)
    answer = simulated.blank_answer("vllm", engine_version())
    try:
        req = json.loads(sys.stdin.read() or "{}")
        if not isinstance(req, dict):
            raise ValueError("the request is not a JSON object")
    except ValueError as e:
        req = {}
        answer["reason"] = f"bad request: {e}"
    if isinstance(req.get("batch"), list):
        path = req.get("answer_path")
        items = [{**req, "batch": None, "answer_path": None, **item} for item in req["batch"]]

        def to_file(answer: dict) -> None:
            with open(str(path), "a", encoding="utf-8") as f:
                f.write(json.dumps(answer, default=str) + "\n")

        batch(items, to_file if path else to_stdout, float(req.get("item_timeout") or 300))
        sys.stderr.flush()
        os._exit(0)
    if req.get("temp_dir"):
        os.environ["TMPDIR"] = str(req["temp_dir"])
    prepared: BaseException | None = None
    if answer["reason"] is None:
        try:
            prepare(req)
        except BaseException as e:
            prepared = e
        ask(req, answer, prepared)
    answer["seconds"] = round(time.monotonic() - T0, 3)
    write_answer(answer, req.get("answer_path"), real_stdout)
    sys.stderr.flush()
    # vLLM leaves threads and atexit hooks behind (gloo, logging); the answer is written: leave now.
    os._exit(0)


if __name__ == "__main__":
    main()
