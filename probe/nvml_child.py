"""The NVML query as the NVML child runs it: `python -I -S probe/nvml_child.py SYS_PATH_ENTRY...`.

Standard library and pynvml only, nothing of probe/ (the child is started for every probe: it must start in
milliseconds), so its answers are plain dicts and lists shaped as probe.facts.GpuFacts, written with repr()
on its stdout; probe/gpus.py reads them back into the Facts model.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time: the child's start-up is what it costs
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

# NVML error codes (nvml.h nvmlReturn_t), named here so a missing constant in an old binding cannot break us.
_NOT_SUPPORTED = 3
_NO_PERMISSION = 4
_INVALID_ARGUMENT = 2
_DRIVER_NOT_LOADED = 9
_LIBRARY_NOT_FOUND = 12
_FUNCTION_NOT_FOUND = 13
_LIB_RM_VERSION_MISMATCH = 18
_GPU_IS_LOST = 15

_INIT_REASONS = {
    _LIBRARY_NOT_FOUND: "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed, or it is "
    "not mounted into this container",
    _DRIVER_NOT_LOADED: "NVIDIA driver not loaded (the kernel module is not running)",
    _NO_PERMISSION: "insufficient permission to open the NVIDIA devices (/dev/nvidia*)",
    _LIB_RM_VERSION_MISMATCH: "NVIDIA driver/library version mismatch: the loaded kernel module and "
    "libnvidia-ml.so differ (a driver upgrade without reboot)",
}


def query() -> dict:
    """What NVML says, as GpuFacts fields; every failure is a value."""
    try:
        import pynvml
    except Exception as err:  # not installed, or a broken/old binding
        return {"error": f"nvidia-ml-py (pynvml) cannot be imported: {type(err).__name__}: {err}"}
    try:
        pynvml.nvmlInit()
    except Exception as err:
        return {"error": _init_reason(err)}
    try:
        return _query(pynvml)
    except Exception as err:  # a bug or a binding we do not know: still a value
        return {"error": f"NVML query failed: {_describe(err)}"}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _query(nvml: Any) -> dict:
    facts: dict[str, Any] = {}
    problems: list[str] = []
    facts["driver_version"] = _text(_system(nvml.nvmlSystemGetDriverVersion, "driver version", problems))
    cuda = _system(nvml.nvmlSystemGetCudaDriverVersion, "CUDA driver version", problems)
    facts["cuda_driver_version"] = cuda_version_text(cuda) if isinstance(cuda, int) else None
    facts["nvml_version"] = _text(_system(nvml.nvmlSystemGetNVMLVersion, "NVML version", problems))
    try:
        count = nvml.nvmlDeviceGetCount()
    except Exception as err:
        problems.append(f"device count: {_describe(err)}")
        count = 0
    facts["devices"] = [_device(nvml, index) for index in range(count)]
    if problems:
        facts["error"] = "; ".join(problems)
    return facts


def _device(nvml: Any, index: int) -> dict:
    device: dict[str, Any] = {"index": index}
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as err:
        device["error"] = f"handle: {_describe(err)}"
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

    device["name"] = _text(ask("name", lambda: nvml.nvmlDeviceGetName(handle)))
    device["uuid"] = _text(ask("uuid", lambda: nvml.nvmlDeviceGetUUID(handle)))
    cc = ask("compute capability", lambda: nvml.nvmlDeviceGetCudaComputeCapability(handle))
    if cc is not None:
        device["cc_major"], device["cc_minor"] = int(cc[0]), int(cc[1])
    memory = ask("memory", lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
    if memory is not None:
        device["memory_total_mib"] = int(memory.total) // (1024 * 1024)
    mig = ask("MIG mode", lambda: nvml.nvmlDeviceGetMigMode(handle), unsupported="unsupported")
    device["mig_mode"] = mig if isinstance(mig, str) or mig is None else _enabled(mig[0])
    persistence = ask("persistence mode", lambda: nvml.nvmlDeviceGetPersistenceMode(handle), unsupported="unsupported")
    device["persistence_mode"] = (
        persistence if isinstance(persistence, str) or persistence is None else _enabled(persistence)
    )
    device["nvlink_links_up"] = _nvlink_links_up(nvml, handle, problems)
    if problems:
        device["error"] = "; ".join(problems)
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


def main(path: list[str]) -> None:
    """Answers on the original stdout; fd 1 itself goes to stderr while NVML runs, so that nothing the library
    prints can garble the answer. Leaves without teardown hooks (a driver's atexit cannot hang it)."""
    sys.path[:] = path
    answer = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    answer.write(repr(query()))
    answer.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
