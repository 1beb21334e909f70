"""Tiny real packages and a fake pynvml, for exercising probe/ without GPUs or kernel libraries.

A fake distribution is what pip leaves behind: <name>-<version>.dist-info with METADATA and RECORD, plus
its files, in a directory that goes on sys.path / PYTHONPATH. The import checks then run through the
real subprocess machinery.
"""

from __future__ import annotations

import ctypes
import os
import re
import time
import types
from pathlib import Path
from typing import Optional

UNDEFINED_SYMBOL = (
    "raise ImportError('{site}/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE')\n"
)
SEGFAULT = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
HANG = "import time\ntime.sleep(600)\n"
# nvidia-cutlass-dsl 4.8.1's own .pth line (PyPI wheel, nvidia_cutlass_dsl_packages.pth)
CUTLASS_PTH = (
    "import sys, os, nvidia_cutlass_dsl; sys.path.insert(0, os.path.join(nvidia_cutlass_dsl.__path__[0], "
    "'dsl_packages'))\n"
)


def make_dist(site: Path, name: str, version: str, files: Optional[dict] = None) -> Path:
    """Installs distribution `name` `version` with `files` ({relative path: text}) into `site`."""
    site.mkdir(parents=True, exist_ok=True)
    files = dict(files or {})
    dist_info = site / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    record = [f"{relative},," for relative in files] + [f"{dist_info.name}/METADATA,,", f"{dist_info.name}/RECORD,,"]
    (dist_info / "RECORD").write_text("\n".join(record) + "\n")
    return dist_info


def make_cutlass_dsl(site: Path, version: str = "4.8.1", with_pth: bool = True) -> Path:
    """nvidia-cutlass-dsl laid out as its wheels install it: the `cutlass` package lives in
    nvidia_cutlass_dsl/dsl_packages, which only the .pth file puts on sys.path."""
    files = {
        "nvidia_cutlass_dsl/__init__.py": "",
        "nvidia_cutlass_dsl/dsl_packages/cutlass/__init__.py": f"__version__ = '{version}'\n",
        "nvidia_cutlass_dsl/dsl_packages/cutlass/cute/__init__.py": "",
    }
    if with_pth:
        files["nvidia_cutlass_dsl_packages.pth"] = CUTLASS_PTH
    make_dist(site, "nvidia-cutlass-dsl", version, files)
    if not with_pth:  # RECORD still lists it: deleted after install, as a racing pip upgrade does
        record = next(site.glob("nvidia_cutlass_dsl-*.dist-info")) / "RECORD"
        record.write_text(record.read_text() + "nvidia_cutlass_dsl_packages.pth,,\n")
    return site / "nvidia_cutlass_dsl" / "dsl_packages"


# ------------------------------------------------------------------------------------------- fake pynvml


class NVMLError(Exception):
    def __init__(self, value: int, text: str = ""):
        super().__init__(text or f"NVML error {value}")
        self.value = value

    def __repr__(self) -> str:  # source that rebuilds it, for write_fake_pynvml
        return f"NVMLError({self.value!r}, {str(self)!r})"


NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_UNKNOWN = 999
NVML_ERROR_GPU_IS_LOST = 15


def _segfault() -> None:
    ctypes.string_at(0)  # a read of address 0 in C: a real SIGSEGV, as a broken libnvidia-ml gives


# What a libnvidia-ml whose init misbehaves does to the process that calls nvmlInit.
INIT_FAULTS = {"hang": lambda: time.sleep(600), "segfault": _segfault, "abort": os.abort}


def fake_pynvml(
    devices: list[dict],
    init_error: Optional[NVMLError] = None,
    driver: str = "580.95.05",
    cuda: int = 13000,
    init_fault: Optional[str] = None,
) -> types.ModuleType:
    """A pynvml stand-in. Each device is a dict of answers (name, uuid, cc, memory_mib, mig, persistence,
    nvlink_up, and mig_devices / mig_memory_mib for its MIG instances); an answer that is an exception instance is raised instead, as NVML would. `init_fault` (a key
    of INIT_FAULTS) is what nvmlInit does instead of answering."""
    nvml = types.ModuleType("pynvml")
    nvml.NVMLError = NVMLError
    nvml.NVML_NVLINK_MAX_LINKS = 18
    nvml.shutdown_calls = 0

    def answer(index: int, key: str):
        value = devices[index][key]
        if isinstance(value, BaseException):
            raise value
        return value

    def init():
        if init_fault is not None:
            INIT_FAULTS[init_fault]()
        if init_error is not None:
            raise init_error

    def shutdown():
        nvml.shutdown_calls += 1

    def handle(index):
        if isinstance(devices[index].get("handle"), BaseException):
            raise devices[index]["handle"]
        return index

    def nvlink_state(index, link):
        up = answer(index, "nvlink_up")
        if link >= 18:
            raise NVMLError(2)
        return 1 if link < up else 0

    nvml.nvmlInit = init
    nvml.nvmlShutdown = shutdown
    nvml.nvmlSystemGetDriverVersion = lambda: driver
    nvml.nvmlSystemGetCudaDriverVersion = lambda: cuda
    nvml.nvmlSystemGetNVMLVersion = lambda: "13.580.95.05"
    nvml.nvmlDeviceGetCount = lambda: len(devices)
    nvml.nvmlDeviceGetHandleByIndex = handle
    nvml.nvmlDeviceGetName = lambda i: answer(i, "name")
    nvml.nvmlDeviceGetUUID = lambda i: answer(i, "uuid")
    nvml.nvmlDeviceGetCudaComputeCapability = lambda i: answer(i, "cc")
    nvml.nvmlDeviceGetMemoryInfo = lambda i: types.SimpleNamespace(total=memory_mib(i) * 1024 * 1024)
    nvml.nvmlDeviceGetMigMode = lambda i: answer(i, "mig")
    nvml.nvmlDeviceGetPersistenceMode = lambda i: answer(i, "persistence")
    nvml.nvmlDeviceGetNvLinkState = nvlink_state
    # P2P: the peers listed under "p2p" (default: every other device) read OK (0), others are unsupported (2)
    nvml.nvmlDeviceGetP2PStatus = lambda i, j, caps: 0 if j in devices[i].get("p2p", range(len(devices))) else 2
    nvml.nvmlDeviceGetMaxMigDeviceCount = lambda i: 7
    nvml.nvmlDeviceGetMigDeviceHandleByIndex = lambda i, slot: mig_handle(i, slot)

    def memory_mib(handle):
        """A GPU's memory, or a MIG instance's ((index, slot) handles): "mig_memory_mib", one per slot."""
        if isinstance(handle, tuple):
            index, slot = handle
            return devices[index]["mig_memory_mib"][slot]
        return answer(handle, "memory_mib")

    def mig_handle(index, slot):
        if slot >= devices[index].get("mig_devices", 0):
            raise NVMLError(6)  # NVML_ERROR_NOT_FOUND: an empty slot
        return (index, slot)

    return nvml


def write_fake_pynvml(directory: Path, devices: list[dict], **options) -> Path:
    """A `pynvml.py` in `directory` that is fake_pynvml(devices, **options): what the NVML child imports when
    `directory` is on our sys.path (tests/ must be too, for probe_fakes)."""
    directory.mkdir(parents=True, exist_ok=True)
    arguments = "".join(f", {name}={value!r}" for name, value in options.items())
    (directory / "pynvml.py").write_text(
        "import sys\nfrom probe_fakes import NVMLError, fake_pynvml\n"
        f"sys.modules[__name__] = fake_pynvml({devices!r}{arguments})\n"
    )
    return directory


def use_fake_pynvml(monkeypatch, directory: Path, devices: list[dict], **options) -> None:
    """NVML as write_fake_pynvml makes it, for the NVML child of this process."""
    monkeypatch.syspath_prepend(str(write_fake_pynvml(directory, devices, **options)))


def h200(index: int, **overrides) -> dict:
    device = {
        "name": "NVIDIA H200",
        "uuid": f"GPU-0000000{index}-h200",
        "cc": (9, 0),
        "memory_mib": 143771,
        "mig": [0, 0],
        "persistence": 1,
        "nvlink_up": 18,
    }
    device.update(overrides)
    return device
