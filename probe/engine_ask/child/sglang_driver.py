#!/usr/bin/env python3
"""Ask the installed SGLang whether it accepts a launch line, on a simulated GPU (the engine child's driver).

A self-contained stdlib script, run by attn_preflight.probe.engine_ask.harness in the interpreter that has
sglang (where attn-preflight need not be installed): one JSON request on stdin, one JSON answer written to
the request's answer_path (SCHEMA.md beside this file). It fences itself first (fence.py), then runs SGLang's
own code on a simulated device and reports what that code did; it decides nothing itself.

The stages, as the release has them:

- parse: `sglang.srt.server_args.prepare_server_args(argv)`: SGLang's argument parser, its `--config` file
  merge (stage "config" when the merge raises);
- resolve / backend_selection: before 0.5.20 resolution runs inside that call, in `ServerArgs.__post_init__`
  and its `_handle_*` steps ("post_init" shape); from 0.5.20 `ServerArgs.resolve_once()` runs the
  `arg_groups` resolution pipeline ("pipeline" shape), with the platform facts given through SGLang's own
  `override_platform`. A refusal in a step about the attention backend is stage backend_selection;
- validate: `ServerArgs.check_server_args()`, which the launcher runs next (engine.py);
- backend_init: the attention-backend factory ModelRunner calls at start (attention_registry.py), given a
  stand-in runner: only the factory's up-front checks are seen; where it goes on to build the backend (GPU
  kernels) the probe stops, no rejection.

The device: torch.cuda's queries answer from the request (name, compute capability, memory, count), lazy CUDA
initialisation is refused, `nvidia-smi` queries are answered from the simulation (every other program is
refused by the fence), every lru_cache'd platform probe SGLang read while importing under the CPU view is
cleared, and flashinfer is taken as present (a real sglang install depends on it). Any other release than the
ones this was written against is tried the same way; where its internals differ the answer is could_not_ask
with what was missing.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import io
import json
import logging
import os
import re
import sys
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CUDA = "12.9"  # the CUDA of SGLang's own 0.5.x images, when the request names none and torch is CPU-only

NOTES: list = []  # what the simulation had to stub, for the answer


def _note(text: str) -> None:
    if text not in NOTES:
        NOTES.append(text[:300])


def _load_simulated():
    """simulated.py beside this file (what both drivers share: the fence, the simulated device), by path."""
    spec = importlib.util.spec_from_file_location("_attn_preflight_simulated", os.path.join(HERE, "simulated.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


simulated = _load_simulated()


class CouldNotAsk(Exception):
    """The driver cannot get an answer out of this release (its internals differ, the simulation fell short)."""

    def __init__(self, reason: str, stage: str | None = None):
        super().__init__(reason)
        self.reason, self.stage = reason, stage


# ---------------------------------------------------------------------------------------------------------------
# The simulated device
# ---------------------------------------------------------------------------------------------------------------


DEVICE: dict = {}  # the simulated GPU torch.cuda and nvidia-smi answer for (a batch child re-points it)


def set_device(gpu: dict, cuda_version: str | None = None) -> None:
    cc = tuple(int(x) for x in gpu["cc"])
    DEVICE.update(
        cc=cc,
        name=str(gpu.get("name") or f"NVIDIA GPU sm_{cc[0]}{cc[1]}"),
        bytes=int(gpu.get("memory_mib") or 81920) * (1 << 20),
        count=int(gpu.get("count") or 1),
    )
    if cuda_version:
        DEVICE["cuda"] = cuda_version


def _fail(text: str):
    raise sys.modules[simulated.FENCE_MODULE].FenceError(text)


def install_gpu(torch, gpu: dict, cuda_version: str) -> None:
    """torch.cuda answers from the request; anything that would initialise CUDA for real is refused."""
    set_device(gpu, cuda_version)
    simulated.simulate_cuda_queries(torch, DEVICE, _fail)
    cuda = torch.cuda
    if hasattr(cuda, "_get_nvml_device_index"):
        cuda._get_nvml_device_index = lambda *_a, **_k: (_ for _ in ()).throw(RuntimeError("simulated: no NVML"))
    if hasattr(torch.backends, "cudnn"):
        torch.backends.cudnn.version = lambda: 91000


_SMI_INSTALLED: list = []


def answer_nvidia_smi(gpu: dict) -> None:
    """SGLang asks nvidia-smi for memory and compute capability (0.5.1's get_nvgpu_memory_capacity): answered
    from the simulation before the call reaches the fence; any other program still meets the fence."""
    set_device(gpu)
    if _SMI_INSTALLED:
        return
    _SMI_INSTALLED.append(True)

    def answered(command: str):
        out = simulated.nvidia_smi(command, DEVICE)
        if out is not None:
            _note("nvidia-smi was asked; answered from the simulated device")
        return out

    simulated.answer_programs(answered)


# ---------------------------------------------------------------------------------------------------------------
# Importing SGLang under the CPU view
# ---------------------------------------------------------------------------------------------------------------


class _AbsentKernels(types.ModuleType):
    """sgl_kernel where it is not installed (a GPU package): releases that import it unconditionally (0.5.5)
    find every name; calling one is refused (no kernel runs here)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def kernel(*_a, **_k):
            raise sys.modules[simulated.FENCE_MODULE].FenceError(f"sgl_kernel.{name} called (no kernels here)")

        return kernel


def prepare_imports(torch) -> None:
    """What a CPU-only venv lacks that a GPU host has, stubbed so that SGLang's Python imports complete."""
    cpu = getattr(torch._C, "_cpu", None)
    if cpu is not None and not hasattr(cpu, "_is_amx_tile_supported"):  # torch 2.8's, gone in later torch
        cpu._is_amx_tile_supported = lambda: False
        _note("torch._C._cpu._is_amx_tile_supported absent in this torch: answered False")
    try:
        import torchvision  # noqa: F401
    except ModuleNotFoundError:
        pass
    except Exception:
        # PyPI's torchvision beside a CPU torch: its C ops do not load and its import dies registering fake
        # kernels for two ops. Declaring their schemas lets the pure-Python part (transforms) import.
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        library = torch.library.Library("torchvision", "DEF")
        globals()["_TORCHVISION_LIBRARY"] = library
        for op in ("nms", "qnms"):
            with contextlib.suppress(Exception):
                library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        import torchvision  # noqa: F401,F811

        _note("torchvision's C ops do not load here: two op schemas declared so its Python part imports")


_EXTRA_MODULES = (
    "sglang.srt.configs.model_config",
    "sglang.srt.layers.attention.attention_registry",
    "sglang.srt.utils",
    "sglang.srt.utils.common",
    "sglang.srt.platforms",
    "sglang.srt.runtime_context",
    "sglang.srt.model_executor.cuda_graph_config",
    "sglang.srt.utils.server_args_config_parser",
)


def import_sglang():
    """SGLang's resolution code, imported while torch still says "no CUDA": many kernel modules import GPU
    packages at import time when they see CUDA, and resolution needs none of them. Resolution imports its
    hook modules lazily; they are imported now, under the same view. A release that imports its kernel
    package (sgl_kernel) unconditionally (0.5.5's model_config) is imported again with a stub for it."""
    try:
        return _import_sglang()
    except _NeedsKernelStub:
        pass
    for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
        del sys.modules[name]
    NOTES[:] = [n for n in NOTES if "sgl_kernel" not in n]
    sys.modules["sgl_kernel"] = _AbsentKernels("sgl_kernel")
    _note(
        "sgl_kernel is not installed and this release imports it unconditionally: a stub answers its imports "
        "(calling a kernel is refused)"
    )
    return _import_sglang()


class _NeedsKernelStub(Exception):
    pass


def _missing_kernels(exc) -> bool:
    return isinstance(exc, ModuleNotFoundError) and exc.name == "sgl_kernel" and "sgl_kernel" not in sys.modules


def _import_sglang():
    import pkgutil

    try:
        server_args = importlib.import_module("sglang.srt.server_args")
    except ModuleNotFoundError as exc:
        if _missing_kernels(exc):
            raise _NeedsKernelStub() from exc
        raise
    missing = [name for name in ("prepare_server_args", "ServerArgs") if not hasattr(server_args, name)]
    if missing:
        raise CouldNotAsk(f"sglang.srt.server_args has no {', '.join(missing)}", "import")
    names = list(_EXTRA_MODULES)
    try:
        groups = importlib.import_module("sglang.srt.arg_groups")
        names += [m.name for m in pkgutil.walk_packages(groups.__path__, groups.__name__ + ".")]
    except ModuleNotFoundError:
        pass
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if _missing_kernels(exc):
                raise _NeedsKernelStub() from exc
            if not (name + ".").startswith((exc.name or "") + "."):
                _note(f"pre-import {name}: {exc}")
        except Exception as exc:  # a hook module only a plugin needs; resolution says so if it needs it
            _note(f"pre-import {name}: {type(exc).__name__}: {exc}")
    return server_args


def clear_probe_caches() -> int:
    """Forget the lru_cache'd platform probes SGLang answered under the CPU view."""
    import functools

    cleared = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("sglang"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, functools._lru_cache_wrapper):  # isinstance only: no lazy-import proxy is touched
                with contextlib.suppress(Exception):
                    value.cache_clear()
                    cleared += 1
    platforms = sys.modules.get("sglang.srt.platforms")
    if platforms is not None and hasattr(platforms, "_current_platform"):
        setattr(platforms, "_current_platform", None)  # noqa: B010 (the module is the engine's, untyped)
    return cleared


# Modules whose registries are filled at import time by platform tests (`if is_cuda(): REGISTRY.update(...)`):
# imported under the CPU view they lack the GPU entries (0.5.23's quantization registry: no "mxfp4", so every
# MXFP4 checkpoint would read "Unknown quantization method"). Evaluated again under the simulated GPU.
_PLATFORM_REGISTRIES = ("sglang.srt.layers.quantization",)


def reevaluate_registries() -> None:
    for name in _PLATFORM_REGISTRIES:
        module = sys.modules.get(name)
        if module is None:
            continue
        before = {k: v for k, v in vars(module).items() if k.isupper() and isinstance(v, dict)}
        try:
            with contextlib.redirect_stdout(sys.stderr):
                importlib.reload(module)
        except Exception as exc:
            _note(f"{name} could not be evaluated again under the simulated GPU: {type(exc).__name__}: {exc}")
            continue
        changed = []
        for key, old in before.items():
            new = vars(module).get(key)
            if isinstance(new, dict) and new is not old:
                if new != old:
                    changed.append(key)
                old.clear()
                old.update(new)  # every module that imported the dict sees the GPU host's entries
                vars(module)[key] = old
        if changed:
            _note(f"{name} evaluated again under the simulated GPU ({', '.join(changed)} gained GPU entries)")


def rebind_everywhere(name: str, original, replacement) -> int:
    count = 0
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("sglang"):
            continue
        if vars(module).get(name) is original:
            vars(module)[name] = replacement
            count += 1
    return count


def flashinfer_present() -> None:
    for module_name in ("sglang.srt.utils.common", "sglang.srt.utils"):
        module = sys.modules.get(module_name)
        probe = getattr(module, "is_flashinfer_available", None) if module else None
        if callable(probe):
            rebind_everywhere("is_flashinfer_available", probe, lambda: True)
            _note("flashinfer taken as installed (sglang depends on it; its CUDA wheel is not loaded here)")
            return


def override_platform(cc: tuple, cuda_version: str) -> dict:
    """The pipeline releases read the platform through runtime_context.get_platform(); SGLang's own
    override_platform states its facts (only those this release knows)."""
    context = sys.modules.get("sglang.srt.runtime_context") or importlib.import_module("sglang.srt.runtime_context")
    override = getattr(context, "override_platform", None)
    if override is None:
        raise CouldNotAsk("sglang.srt.runtime_context has no override_platform", "resolve")
    version = tuple(int(x) for x in re.findall(r"\d+", cuda_version)[:2]) or (12, 9)
    major = cc[0]
    facts = dict(
        is_cuda=True,
        is_hip=False,
        is_npu=False,
        is_xpu=False,
        is_musa=False,
        is_mps=False,
        is_sm90=major == 9 and version >= (12, 3),
        is_sm100=major == 10 and version >= (12, 8),
        is_sm100_or_sm110=major in (10, 11) and version >= (12, 8),
        is_sm110=major == 11 and version >= (12, 8),
        is_sm120=major == 12 and version >= (12, 8),
        is_blackwell=major in (10, 11, 12) and version >= (12, 8),
        is_hopper_with_cuda_12_3=major == 9 and version >= (12, 3),
        device_sm=cc[0] * 10 + cc[1],
        device_capability=tuple(cc),
        has_flashinfer=True,
    )
    known = set(getattr(context, "_PLATFORM_PROBES", {})) | set(getattr(context, "_PLATFORM_VALUES", {}))
    if known:
        facts = {k: v for k, v in facts.items() if k in known}
    override(**facts).install()
    return facts


# ---------------------------------------------------------------------------------------------------------------
# Reading what happened
# ---------------------------------------------------------------------------------------------------------------

_DISPATCHERS = {"run_hook", "run_post_process_pass", "__post_init__", "run_resolution_pipeline", "resolve_once"}
_REJECTION_TYPES = (ValueError, AssertionError, RuntimeError, NotImplementedError)
_NOT_REJECTION_TYPES = (ImportError, OSError, AttributeError, TypeError, KeyError, NameError, IndexError)
_HARDWARE = re.compile(
    r"Torch not compiled with CUDA|no NVIDIA driver|NVML|nvidia-smi|CUDA driver|cudaGetDevice|CUDA error|libcuda|"
    r"No CUDA GPUs|HF_HUB_OFFLINE|offline mode|LocalEntryNotFound|couldn't connect|Can't load|"
    r"does not appear to have a file|not a local folder|engine fence",
    re.I,
)
_BACKEND_STEP = re.compile(r"attention|attn|backend|page_size|kv_cache", re.I)


def frames(exc) -> list:
    out, tb = [], exc.__traceback__
    while tb is not None:
        out.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    return out


def chain(exc) -> list:
    seen: list = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def hook_of(exc) -> str | None:
    """The engine's step that raised: the function a dispatcher (run_hook, __post_init__, ...) called, innermost."""
    codes = frames(exc)
    hook = None
    for i, code in enumerate(codes[:-1]):
        if code.co_name in _DISPATCHERS and "/sglang/" in code.co_filename.replace(os.sep, "/"):
            hook = codes[i + 1].co_name
    if hook is None and codes and any(c.co_name == "__post_init__" for c in codes):
        hook = "__post_init__"
    return hook


def engine_refused(exc, sglang_dir: str) -> tuple:
    """(True, "") when SGLang's own code refused the config; (False, why) when no answer can be read from it."""
    fence = sys.modules[simulated.FENCE_MODULE]
    links = chain(exc)
    if any(isinstance(e, fence.FenceError) for e in links):
        return False, "the fence stopped the engine: " + "; ".join(fence.EVENTS[-2:])
    if isinstance(exc, CouldNotAsk):
        return False, exc.reason
    if not isinstance(exc, _REJECTION_TYPES) or isinstance(exc, _NOT_REJECTION_TYPES):
        return False, f"{type(exc).__name__}: {str(exc)[:200]}"
    if _HARDWARE.search(str(exc)):
        return False, f"the engine reached for real hardware or a download: {type(exc).__name__}: {str(exc)[:200]}"
    codes = frames(exc)
    where = codes[-1].co_filename if codes else ""
    if not os.path.realpath(where).startswith(sglang_dir + os.sep):
        return False, f"{type(exc).__name__} raised outside sglang ({where}): {str(exc)[:200]}"
    for e in links[1:]:
        if isinstance(e, _NOT_REJECTION_TYPES) and not isinstance(e, _REJECTION_TYPES):
            return False, f"caused by {type(e).__name__}: {str(e)[:200]}"
    return True, ""


def stage_of(exc, default: str) -> str:
    names = {code.co_name for code in frames(exc)}
    files = {os.path.basename(code.co_filename) for code in frames(exc)}
    if "server_args_config_parser.py" in files or "merge_config_with_args" in names:
        return "config"
    if "check_server_args" in names:
        return "validate"
    hook = hook_of(exc)
    if hook is None:
        return default
    return "backend_selection" if _BACKEND_STEP.search(hook) else "resolve"


class Collector(logging.Handler):
    """SGLang's WARNING lines (the ones about backends, page size, KV cache, dtype, fallbacks)."""

    INTERESTING = re.compile(
        r"backend|page[ _-]?size|kv[ _-]?cache|fp8|dtype|attention|fallback|switch|deterministic|speculative|"
        r"cuda graph|chunked|radix|not supported|deprecat",
        re.I,
    )

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.lines: list = []

    def emit(self, record):
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        if self.INTERESTING.search(message) and len(self.lines) < 40 and message not in self.lines:
            self.lines.append(message[:400])


RESOLVED_KEYS = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "page_size",
    "kv_cache_dtype",
    "context_length",
    "dtype",
    "quantization",
    "sampling_backend",
    "mm_attention_backend",
    "speculative_algorithm",
    "speculative_attention_mode",
    "speculative_eagle_topk",
    "speculative_num_steps",
    "speculative_num_draft_tokens",
    "enable_deterministic_inference",
    "disable_radix_cache",
    "chunked_prefill_size",
    "disable_cuda_graph",
    "cuda_graph_max_bs",
    "mem_fraction_static",
    "max_running_requests",
    "tp_size",
    "dp_size",
    "pp_size",
    "ep_size",
    "enable_dp_attention",
    "moe_runner_backend",
    "linear_attn_backend",
    "mamba_backend",
)


def plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)[:200]


# ---------------------------------------------------------------------------------------------------------------
# One ask
# ---------------------------------------------------------------------------------------------------------------


_PREPARED: dict = {}


def prepare():
    """(torch, sglang.srt.server_args) imported under the CPU view, once per process (a batch forks after it)."""
    if "modules" in _PREPARED:
        return _PREPARED["modules"]
    if "error" in _PREPARED:
        raise _PREPARED["error"]
    try:
        try:
            import torch
        except Exception as exc:
            raise CouldNotAsk(
                f"torch does not import in this interpreter: {type(exc).__name__}: {exc}", "import"
            ) from exc
        prepare_imports(torch)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                server_args_module = import_sglang()
        except CouldNotAsk:
            raise
        except BaseException as exc:
            raise CouldNotAsk(f"sglang does not import here: {type(exc).__name__}: {str(exc)[:300]}", "import") from exc
    except CouldNotAsk as exc:
        _PREPARED["error"] = exc
        raise
    _PREPARED["modules"] = (torch, server_args_module)
    return _PREPARED["modules"]


class Ask:
    def __init__(self, request: dict, answer: dict):
        self.request, self.answer = request, answer
        self.stages: list = []
        self.collector = Collector()

    def refused(self, exc, stage: str, sglang_dir: str) -> None:
        ok, why = engine_refused(exc, sglang_dir)
        if not ok:
            raise CouldNotAsk(why, stage) from exc
        if stage not in self.stages:
            self.stages.append(stage)
        self.answer.update(
            status="rejected", stage=stage, error_type=type(exc).__name__, error=str(exc)[:1000], hook=hook_of(exc)
        )

    def run(self) -> None:
        request, answer = self.request, self.answer
        gpu = request["gpu"]
        cc = tuple(int(x) for x in gpu["cc"])
        answer_nvidia_smi(gpu)
        torch, server_args_module = prepare()
        cuda_version = request.get("cuda_version") or torch.version.cuda or DEFAULT_CUDA
        answer["sim"] = {
            "name": gpu.get("name"),
            "cc": list(cc),
            "memory_mib": gpu.get("memory_mib"),
            "count": gpu.get("count"),
            "cuda_version": cuda_version,
        }
        import sglang

        sglang_dir = os.path.realpath(os.path.dirname(sglang.__file__))
        ServerArgs = server_args_module.ServerArgs
        pipeline = hasattr(ServerArgs, "resolve_once")
        answer["shape"] = "pipeline" if pipeline else "post_init"

        install_gpu(torch, gpu, cuda_version)
        answer["sim"]["probe_caches_cleared"] = clear_probe_caches()
        flashinfer_present()
        reevaluate_registries()

        sys.argv[:1] = ["launch_server.py"]  # the parser's prog, as `python -m sglang.launch_server` names it
        logging.getLogger().addHandler(self.collector)
        real_basic_config = logging.basicConfig

        def basic_config(*args, **kwargs):  # force=True drops the root's handlers: keep the collector on it
            real_basic_config(*args, **kwargs)
            if self.collector not in logging.getLogger().handlers:
                logging.getLogger().addHandler(self.collector)

        logging.basicConfig = basic_config
        parse_errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(parse_errors), contextlib.redirect_stdout(sys.stderr):
                server_args = server_args_module.prepare_server_args(list(request["argv"]))
        except SystemExit as exc:
            lines = [line for line in parse_errors.getvalue().strip().splitlines() if line.strip()]
            message = lines[-1] if lines else f"argument parser exited {exc.code}"
            self.stages.append("parse")
            answer.update(
                status="rejected", stage="parse", error_type="ArgumentError", error=message[:1000], hook="argparse"
            )
            return
        except BaseException as exc:
            self.refused(exc, stage_of(exc, "parse" if pipeline else "resolve"), sglang_dir)
            return
        finally:
            sys.stderr.write(parse_errors.getvalue()[-20000:])
        self.stages += ["parse"] if pipeline else ["parse", "resolve"]
        root = logging.getLogger()
        if self.collector not in root.handlers:  # prepare_server_args' basicConfig(force=True) dropped it
            root.addHandler(self.collector)
        if root.level > logging.WARNING:
            root.setLevel(logging.WARNING)

        if pipeline:
            answer["sim"]["platform"] = override_platform(cc, cuda_version)
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    server_args.resolve_once()
            except BaseException as exc:
                self.refused(exc, stage_of(exc, "resolve"), sglang_dir)
                return
            self.stages.append("resolve")
        answer["resolved"] = self.resolved(server_args, pipeline)
        self.stages.append("backend_selection")

        check = getattr(server_args, "check_server_args", None)
        if callable(check):
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    check()
                self.stages.append("validate")
            except BaseException as exc:
                ok, why = engine_refused(exc, sglang_dir)
                if ok:
                    self.refused(exc, "validate", sglang_dir)
                    return
                _note(f"check_server_args could not run here: {why}")
        if request.get("backend_init", True):
            late = self.backend_init(server_args, pipeline, answer["resolved"])
            if late is not None:
                answer["backend_init"] = late
                self.stages.append("backend_init")
            late = late or {}
            refusals = [(name, v) for name, v in late.items() if v.get("status") == "rejected"]
            if refusals:
                name, v = refusals[0]
                answer.update(
                    status="rejected",
                    stage="backend_init",
                    error_type=v.get("error_type"),
                    error=v.get("error"),
                    hook=f"attention backend factory {name}",
                )
                return
        answer["status"] = "accepted"

    def model_config(self, server_args, pipeline: bool):
        if pipeline:
            base = sys.modules.get("sglang.srt.arg_groups.model_override_base")
            if base is not None and hasattr(base, "model_config_of"):
                return base.model_config_of(server_args)
        from sglang.srt.configs.model_config import ModelConfig

        return ModelConfig.from_server_args(server_args)

    def resolved(self, server_args, pipeline: bool) -> dict:
        view = server_args
        prefill = decode = None
        if pipeline:
            base = sys.modules.get("sglang.srt.arg_groups.model_override_base")
            if base is None or not hasattr(base, "resolving_view"):
                raise CouldNotAsk("sglang.srt.arg_groups.model_override_base has no resolving_view", "resolve")
            view = base.resolving_view(server_args)
            if hasattr(base, "attention_backends_of"):
                prefill, decode = base.attention_backends_of(view)
        out = {}
        for key in RESOLVED_KEYS:
            try:
                out[key] = plain(getattr(view, key))
            except Exception:
                continue
        if prefill is None and decode is None:
            backend = out.get("attention_backend")
            prefill = out.get("prefill_attention_backend") or backend
            decode = out.get("decode_attention_backend") or backend
        out["effective_prefill_attention_backend"] = plain(prefill)
        out["effective_decode_attention_backend"] = plain(decode)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                length = getattr(self.model_config(server_args, pipeline), "context_len", None)
            out["context_length"] = int(length) if length is not None else out.get("context_length")
        except Exception as exc:
            _note(f"the model's context length could not be read: {type(exc).__name__}: {str(exc)[:160]}")
        return out

    def backend_init(self, server_args, pipeline: bool, resolved: dict) -> dict | None:
        """The attention-backend factories ModelRunner calls at start, with a stand-in runner: a refusal by
        the factory itself (attention_registry.py) is the engine's; anything past it is not seen."""
        fence = sys.modules[simulated.FENCE_MODULE]

        class Runner:
            def __init__(self, **facts):
                self.__dict__.update(facts)

            def __getattr__(self, name):
                raise fence.FenceError(f"stand-in runner has no {name!r}")

        try:
            registry = importlib.import_module("sglang.srt.layers.attention.attention_registry")
            factories = registry.ATTENTION_BACKENDS
            model_config = self.model_config(server_args, pipeline)
            if pipeline and hasattr(sys.modules.get("sglang.srt.arg_groups.model_override_base"), "use_mla_backend"):
                use_mla = sys.modules["sglang.srt.arg_groups.model_override_base"].use_mla_backend(server_args)
            else:
                from sglang.srt.configs.model_config import AttentionArch

                use_mla = model_config.attention_arch == AttentionArch.MLA
            runner = Runner(
                server_args=server_args,
                model_config=model_config,
                use_mla_backend=use_mla,
                page_size=resolved.get("page_size"),
                is_draft_worker=False,
                init_new_workspace=False,
            )
        except Exception as exc:
            _note(f"backend factory check not run: {type(exc).__name__}: {str(exc)[:160]}")
            return None
        out: dict = {}
        names = (
            resolved.get("effective_prefill_attention_backend"),
            resolved.get("effective_decode_attention_backend"),
        )
        for name in dict.fromkeys(n for n in names if n):
            factory = factories.get(name)
            if factory is None:
                out[name] = {"status": "not_registered"}
                continue
            seen = len(fence.EVENTS)
            try:
                with contextlib.redirect_stdout(sys.stderr):
                    factory(runner)
                out[name] = {"status": "constructed"}
            except BaseException as exc:
                codes = frames(exc)
                where = os.path.basename(codes[-1].co_filename) if codes else ""
                if (
                    isinstance(exc, (AssertionError, ValueError, NotImplementedError))
                    and where == "attention_registry.py"
                ):
                    out[name] = {"status": "rejected", "error_type": type(exc).__name__, "error": str(exc)[:1000]}
                else:
                    out[name] = {"status": "no_early_rejection", "stopped_at": f"{type(exc).__name__}: {exc}"[:200]}
            del fence.EVENTS[seen:]  # the stand-in's own refusals are expected, not the engine's doing
        return out


def write_answer(path: str, answer: dict) -> None:
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as out:
        json.dump(answer, out, default=str)
    os.replace(partial, path)


def answer_one(request: dict, started: float) -> dict:
    fence = sys.modules[simulated.FENCE_MODULE]
    answer = simulated.blank_answer("sglang")
    try:
        from importlib.metadata import PackageNotFoundError, version

        try:
            answer["engine_version"] = version("sglang")
        except PackageNotFoundError:
            raise CouldNotAsk(f"sglang is not installed for {sys.executable}", "import") from None
        ask = Ask(request, answer)
        try:
            ask.run()
        finally:
            answer["stages"] = ask.stages
            answer["warnings"] = ask.collector.lines
    except CouldNotAsk as exc:
        answer.update(status="could_not_ask", stage=exc.stage, reason=f"could not ask: {exc.reason}")
    except BaseException as exc:  # the driver's own failure: still an answer
        tail = traceback.format_exception(type(exc), exc, exc.__traceback__)[-2:]
        answer.update(status="could_not_ask", reason=f"could not ask: the driver failed: {''.join(tail).strip()}"[:600])
    answer["notes"] = list(NOTES)
    answer["fence"] = list(fence.EVENTS)
    answer["seconds"] = round(time.monotonic() - started, 3)
    return answer


def main_batch(request: dict) -> int:
    """Several configs in one child (the bench): SGLang imported once, then one fork per config, which starts
    from the untouched post-import state (resolution writes process globals). Answers: JSON lines, in order."""
    import signal

    fence = sys.modules[simulated.FENCE_MODULE]
    items = request["batch"]
    timeout = float(request.get("item_timeout") or 120)
    if items:
        answer_nvidia_smi(items[0]["gpu"])
    started = time.monotonic()
    try:
        prepare()
    except CouldNotAsk:
        pass  # every item says so
    shared_import = round(time.monotonic() - started, 3)
    with open(request["answer_path"] + ".partial", "w", encoding="utf-8") as out:
        for n, item in enumerate(items):
            sub = {**request, **item, "answer_path": os.path.join(request["temp_dir"], f"item-{n}.json")}
            sub.pop("batch", None)
            t0 = time.monotonic()
            with fence.permit("fork"):
                pid = os.fork()
            if pid == 0:  # the child: one config, then out without running the parent's cleanup
                code = 1
                try:
                    del NOTES[len(NOTES) :]
                    write_answer(sub["answer_path"], answer_one(sub, time.monotonic()))
                    code = 0
                finally:
                    os._exit(code)
            while True:
                done, _status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() - t0 > timeout:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.05)
            try:
                with open(sub["answer_path"], encoding="utf-8") as handle:
                    answer = json.load(handle)
            except (OSError, ValueError):
                answer = simulated.blank_answer("sglang")
                answer["reason"] = f"could not ask: the batch child gave no answer within {timeout:g} s"
            answer["id"] = item.get("id")
            answer["shared_import_seconds"] = shared_import
            out.write(json.dumps(answer, default=str) + "\n")
            out.flush()
    os.replace(request["answer_path"] + ".partial", request["answer_path"])
    return 0


def main() -> int:
    started = time.monotonic()
    # No cyclic garbage collection in this short-lived child: importing torch, transformers and SGLang builds a heap
    # of millions of objects that each collection walks again (measured: ~25% of the per-call time on 2 cores);
    # reference counting still frees what is dropped, and the process ends seconds later.
    gc.disable()
    request = json.loads(sys.stdin.read())
    fence = simulated.load_fence()
    fence.tie_to_parent(request.get("parent_pid"), request.get("deadline_s"))
    fence.install(request["temp_dir"])
    if "batch" in request:
        return main_batch(request)
    write_answer(request["answer_path"], answer_one(request, started))
    return 0


if __name__ == "__main__":
    code = main()
    # The answer is written: leave without the interpreter's teardown (atexit hooks, freeing torch's and SGLang's
    # modules one by one: seconds, for nothing), as vllm_driver does.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
