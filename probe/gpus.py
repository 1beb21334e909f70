"""GPUs through NVML (nvidia-ml-py's `pynvml`): never a CUDA context, never torch.

NVML is queried in a forked child (`GpuProbe`): a libnvidia-ml whose init hangs, segfaults or aborts costs
that child, and its fate is reported like any other answer. Every failure becomes a value: no NVML or no
driver gives an empty device list with the reason; one GPU whose query fails gets `error` and the others
stand. NVML numbers devices in PCI order, which is not CUDA's order under CUDA_VISIBLE_DEVICES (that
variable is reported with the environment).
"""

from __future__ import annotations

import ast
import functools
import sys
from typing import Any, Callable, Optional

from attn_preflight.probe.children import ForkedCall, TerminateAsExit, environment_path, signal_name
from attn_preflight.probe.facts import FactsError, GpuDevice, GpuFacts, Schema, to_jsonable

# Generous: without persistence mode, nvmlInit opens every GPU, seconds on a machine of eight.
NVML_TIMEOUT_S = 15.0
GPU_FACTS = Schema(GpuFacts)


def collect_gpus() -> GpuFacts:
    with TerminateAsExit():  # a SIGTERM while NVML hangs still kills its child (Ctrl-C does already)
        return GpuProbe().result()


class GpuProbe:
    """The NVML query in a forked child of its own, started at once so that it runs beside our own work."""

    def __init__(self, timeout: Optional[float] = None):
        self.timeout = NVML_TIMEOUT_S if timeout is None else timeout
        self.child: Optional[ForkedCall] = None
        self.error: Optional[str] = None
        try:
            self.child = ForkedCall(functools.partial(_query_in_child, environment_path()), self.timeout)
        except OSError as err:
            self.error = f"the NVML query could not start: {type(err).__name__}: {err}"

    def result(self) -> GpuFacts:
        if self.child is None:
            return GpuFacts(error=self.error)
        out = self.child.communicate()
        if out is None:
            return GpuFacts(error=f"NVML query timed out after {self.timeout:g} s: libnvidia-ml did not answer")
        code = self.child.returncode or 0
        if code < 0:
            return GpuFacts(error=f"NVML query crashed: killed by {signal_name(-code)}")
        try:
            return GPU_FACTS.read(ast.literal_eval(out), "nvml")
        except (ValueError, SyntaxError, MemoryError, RecursionError, FactsError):
            return GpuFacts(error=f"the NVML query gave no answer (exit status {code})")

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def _query_in_child(path: list[str]) -> str:
    """The NVML child's work: this environment's sys.path without the cwd (a pynvml.py there is not NVML), its
    answer as a Python literal."""
    sys.path[:] = path
    sys.modules.pop("pynvml", None)  # one this process imported (torch.cuda does) is not necessarily that one
    return repr(to_jsonable(query_gpus()))


# NVML error codes (nvml.h nvmlReturn_t), named here so a missing constant in an old binding cannot break us.
_NOT_SUPPORTED = 3
_NO_PERMISSION = 4
_INVALID_ARGUMENT = 2
_DRIVER_NOT_LOADED = 9
_LIBRARY_NOT_FOUND = 12
_LIB_RM_VERSION_MISMATCH = 18
_NOT_FOUND = 6
# nvmlGpuP2PCapsIndex_t / nvmlGpuP2PStatus_t (nvml.h)
_P2P_CAPS_INDEX_READ = 0
_P2P_STATUS_OK = 0

_INIT_REASONS = {
    _LIBRARY_NOT_FOUND: "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed, or it is "
    "not mounted into this container",
    _DRIVER_NOT_LOADED: "NVIDIA driver not loaded (the kernel module is not running)",
    _NO_PERMISSION: "insufficient permission to open the NVIDIA devices (/dev/nvidia*)",
    _LIB_RM_VERSION_MISMATCH: "NVIDIA driver/library version mismatch: the loaded kernel module and "
    "libnvidia-ml.so differ (a driver upgrade without reboot)",
}


def query_gpus() -> GpuFacts:
    """NVML asked in this process: what the NVML child does."""
    try:
        import pynvml
    except Exception as err:  # not installed, or a broken/old binding
        return GpuFacts(error=f"nvidia-ml-py (pynvml) cannot be imported: {type(err).__name__}: {err}")
    try:
        pynvml.nvmlInit()
    except Exception as err:
        return GpuFacts(error=_init_reason(err))
    try:
        return _query(pynvml)
    except Exception as err:  # a bug or a binding we do not know: still a value
        return GpuFacts(error=f"NVML query failed: {_describe(err)}")
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _query(nvml: Any) -> GpuFacts:
    facts = GpuFacts()
    problems: list[str] = []
    facts.driver_version = _text(_system(nvml.nvmlSystemGetDriverVersion, "driver version", problems))
    cuda = _system(nvml.nvmlSystemGetCudaDriverVersion, "CUDA driver version", problems)
    facts.cuda_driver_version = cuda_version_text(cuda) if isinstance(cuda, int) else None
    facts.nvml_version = _text(_system(nvml.nvmlSystemGetNVMLVersion, "NVML version", problems))
    try:
        count = nvml.nvmlDeviceGetCount()
    except Exception as err:
        problems.append(f"device count: {_describe(err)}")
        count = 0
    facts.devices = [_device(nvml, index) for index in range(count)]
    if problems:
        facts.error = "; ".join(problems)
    return facts


def _device(nvml: Any, index: int) -> GpuDevice:
    device = GpuDevice(index=index)
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as err:
        device.error = f"handle: {_describe(err)}"
        return device
    problems = []

    def ask(what: str, call: Callable[[], Any], unsupported: Any = None) -> Any:
        try:
            return call()
        except Exception as err:
            if _code(err) == _NOT_SUPPORTED:
                return unsupported
            problems.append(f"{what}: {_describe(err)}")
            return None

    device.name = _text(ask("name", lambda: nvml.nvmlDeviceGetName(handle)))
    device.uuid = _text(ask("uuid", lambda: nvml.nvmlDeviceGetUUID(handle)))
    cc = ask("compute capability", lambda: nvml.nvmlDeviceGetCudaComputeCapability(handle))
    if cc is not None:
        device.cc_major, device.cc_minor = int(cc[0]), int(cc[1])
    memory = ask("memory", lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
    if memory is not None:
        device.memory_total_mib = int(memory.total) // (1024 * 1024)
        used = getattr(memory, "used", None)  # another process's memory is a finding (rules/checks/memory.py)
        device.memory_used_mib = int(used) // (1024 * 1024) if used is not None else None
    mig = ask("MIG mode", lambda: nvml.nvmlDeviceGetMigMode(handle), unsupported="unsupported")
    device.mig_mode = mig if isinstance(mig, str) or mig is None else _enabled(mig[0])
    persistence = ask("persistence mode", lambda: nvml.nvmlDeviceGetPersistenceMode(handle), unsupported="unsupported")
    device.persistence_mode = (
        persistence if isinstance(persistence, str) or persistence is None else _enabled(persistence)
    )
    device.nvlink_links_up = _nvlink_links_up(nvml, handle, problems)
    peers = ask("P2P", lambda: _peer_to_peer(nvml, handle, index))
    device.peer_to_peer = peers
    if device.mig_mode == "enabled":
        instances = ask("MIG devices", lambda: _mig_instances(nvml, handle))
        if instances is not None:
            device.mig_devices = len(instances)
            device.mig_memory_mib = [mib for mib in instances if mib is not None] or None
    if problems:
        device.error = "; ".join(problems)
    return device


def _nvlink_links_up(nvml: Any, handle: Any, problems: list[str]) -> Optional[int]:
    """Links whose state is active; 0 on a GPU without NVLink. Walks links until NVML says there are no more."""
    up = 0
    for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            state = nvml.nvmlDeviceGetNvLinkState(handle, link)
        except Exception as err:
            if _code(err) in (_NOT_SUPPORTED, _INVALID_ARGUMENT):
                break
            problems.append(f"NVLink link {link}: {_describe(err)}")
            return None
        up += 1 if state else 0
    return up


def _peer_to_peer(nvml: Any, handle: Any, index: int) -> list[int]:
    """Other GPUs this one reads from peer to peer (NCCL and custom all-reduce need it between a TP group's GPUs);
    NVML answers from the topology, without a CUDA context."""
    peers = []
    for other in range(nvml.nvmlDeviceGetCount()):
        if other == index:
            continue
        try:
            peer = nvml.nvmlDeviceGetHandleByIndex(other)
        except Exception:  # that GPU's own entry reports its handle error
            continue
        if nvml.nvmlDeviceGetP2PStatus(handle, peer, _P2P_CAPS_INDEX_READ) == _P2P_STATUS_OK:
            peers.append(other)
    return peers


def _mig_instances(nvml: Any, handle: Any) -> list[Optional[int]]:
    """The MIG instances present, each as its memory in MiB (None where NVML does not say): the slots up to the
    maximum that hold one (an empty slot is NOT_FOUND)."""
    instances: list[Optional[int]] = []
    for slot in range(nvml.nvmlDeviceGetMaxMigDeviceCount(handle)):
        try:
            instance = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
        except Exception as err:
            if _code(err) == _NOT_FOUND:
                continue
            raise
        try:
            instances.append(int(nvml.nvmlDeviceGetMemoryInfo(instance).total) // (1024 * 1024))
        except Exception:
            instances.append(None)
    return instances


def _system(call: Callable[[], Any], what: str, problems: list[str]) -> Any:
    try:
        return call()
    except Exception as err:
        problems.append(f"{what}: {_describe(err)}")
        return None


def cuda_version_text(value: int) -> str:
    """NVML's CUDA driver version integer (13000) as text ("13.0")."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _enabled(value: Any) -> str:
    return "enabled" if int(value) == 1 else "disabled"


def _text(value: Any) -> Optional[str]:
    if isinstance(value, bytes):  # nvidia-ml-py before 11.515 returned bytes
        return value.decode("utf-8", "replace")
    return None if value is None else str(value)


def _code(err: Exception) -> Optional[int]:
    value = getattr(err, "value", None)
    return value if isinstance(value, int) else None


def _describe(err: Exception) -> str:
    text = str(err) or type(err).__name__
    return text if _code(err) is None else f"{text} (NVML error {_code(err)})"


def _init_reason(err: Exception) -> str:
    code = _code(err)
    reason = _INIT_REASONS.get(code) if code is not None else None
    return f"{reason} [{_describe(err)}]" if reason else f"NVML initialisation failed: {_describe(err)}"
