"""The facts model: everything probe/ learns about a machine, as one typed, JSON-serialisable value.

Facts flow one way: probe -> Facts -> rules -> findings -> render. A report saved with
`attn-preflight probe --format json` is exactly `Facts.to_dict()`; `Facts.from_dict` reads it back
and refuses another schema version. Nothing here does I/O or judges anything.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Optional

SCHEMA_VERSION = 1
MAX_GPUS = 1024  # GPUs listed in one report: attn_preflight.probe.limits states it (this model imports nothing)
# Judgements `probe --format json` writes beside the facts for readers of the JSON (judged by rules/ when
# rendering, so an old report gets today's answer); ignored when a report is read back.
DERIVED_KEYS = {
    "torch": ("gpu_arch_covered",),
    "health": ("diagnosis",),
    "library": ("component_notes", "binaries_cover"),
}

# Import-health states of one library. "not_installed" and "skipped" are facts, never successes.
HEALTH_OK = "ok"
HEALTH_ERROR = "error"
HEALTH_TIMEOUT = "timeout"
HEALTH_CRASHED = "crashed"
HEALTH_SKIPPED = "skipped"
HEALTH_NOT_INSTALLED = "not_installed"
HEALTH_STATES = (HEALTH_OK, HEALTH_ERROR, HEALTH_TIMEOUT, HEALTH_CRASHED, HEALTH_SKIPPED, HEALTH_NOT_INSTALLED)
HEALTH_BROKEN = (HEALTH_ERROR, HEALTH_TIMEOUT, HEALTH_CRASHED)  # installed, and importing it went wrong


class FactsError(ValueError):
    """A saved report that cannot be read as Facts (malformed, or another schema version)."""


# Field metadata: the field is written only when it differs from its default (a field added later, so that
# what was recorded before it reads and writes back unchanged).
OMIT_DEFAULT = {"omit_default": True}


@dataclass
class HostFacts:
    os: Optional[str] = None  # e.g. "Linux-6.8.0-x86_64-with-glibc2.39"
    hostname: Optional[str] = None
    python_version: Optional[str] = None
    python_executable: Optional[str] = None
    virtualenv: Optional[str] = None  # sys.prefix when it differs from sys.base_prefix, or $CONDA_PREFIX
    cpu_arch: Optional[str] = None  # platform.machine()
    # the host's RAM (sysconf SC_PHYS_PAGES x SC_PAGE_SIZE): what `check --ask-engine` simulates for the engine
    memory_total_mib: Optional[int] = field(default=None, metadata=OMIT_DEFAULT)


@dataclass
class GpuDevice:
    index: int
    name: Optional[str] = None
    uuid: Optional[str] = None
    cc_major: Optional[int] = None
    cc_minor: Optional[int] = None
    memory_total_mib: Optional[int] = None
    # NVML's memory used when probed (the driver's reservation, ~0.6 GiB, plus whatever processes hold), MiB
    memory_used_mib: Optional[int] = field(default=None, metadata=OMIT_DEFAULT)
    mig_mode: Optional[str] = None  # "enabled" | "disabled" | "unsupported"
    persistence_mode: Optional[str] = None  # "enabled" | "disabled" | "unsupported"
    nvlink_links_up: Optional[int] = None
    # NVML indices of the other GPUs this one can read from peer to peer (NVLink or PCIe); None: not asked
    peer_to_peer: Optional[list[int]] = None
    mig_devices: Optional[int] = None  # MIG instances carved out of it (MIG enabled); None: MIG off or unknown
    # The memory of each MIG instance (what a process on that slice has), MiB; None: MIG off or not asked
    mig_memory_mib: Optional[list[int]] = field(default=None, metadata=OMIT_DEFAULT)
    error: Optional[str] = None  # a query that failed for this GPU: the rest of the report stands

    @property
    def compute_capability(self) -> Optional[str]:
        if self.cc_major is None or self.cc_minor is None:
            return None
        return f"{self.cc_major}.{self.cc_minor}"

    @property
    def sm(self) -> Optional[str]:
        if self.cc_major is None or self.cc_minor is None:
            return None
        return f"sm_{self.cc_major}{self.cc_minor}"


@dataclass
class GpuFacts:
    """What NVML says. `devices` is empty with `error` set when there is no GPU, driver or NVML."""

    devices: list[GpuDevice] = field(default_factory=list)
    driver_version: Optional[str] = None
    cuda_driver_version: Optional[str] = None  # the highest CUDA the driver supports, e.g. "13.0"
    nvml_version: Optional[str] = None
    error: Optional[str] = None  # e.g. "NVML library not found (libnvidia-ml.so.1): ..."


@dataclass
class CudaToolkitFacts:
    nvcc_path: Optional[str] = None
    nvcc_version: Optional[str] = None  # "13.0"
    cuda_home: Optional[str] = None
    error: Optional[str] = None


@dataclass
class TorchFacts:
    """torch's build, read from its files without importing it; arch_list comes from the import check."""

    installed: bool = False
    version: Optional[str] = None  # "2.11.0+cu130"
    cuda: Optional[str] = None  # torch.version.cuda, None for CPU builds
    hip: Optional[str] = None
    cudnn: Optional[str] = None  # from the nvidia-cudnn-cu* distribution
    arch_list: Optional[list[str]] = None  # torch.cuda.get_arch_list(), e.g. ["sm_80", "sm_90"]
    error: Optional[str] = None


@dataclass
class ImportHealth:
    status: str = HEALTH_SKIPPED  # one of HEALTH_STATES
    module: Optional[str] = None  # the module that was imported
    seconds: Optional[float] = None
    error: Optional[str] = None  # the library's own last error line
    causes: list[str] = field(default_factory=list)  # the exceptions behind `error`, innermost last
    details: dict[str, Any] = field(default_factory=dict)  # extra facts read inside the import (e.g. FA3 ops)
    cached: bool = False


@dataclass
class CompiledModule:
    """The GPU code one compiled module of a library ships, read from its fatbin headers (probe/fatbin.py)."""

    sass: list[str] = field(default_factory=list)  # "sm_80", "sm_90a", "sm_100f"
    ptx: list[str] = field(default_factory=list)  # "compute_80"
    ptx_isa: Optional[str] = field(default=None, metadata=OMIT_DEFAULT)  # the newest PTX ISA of its PTX ("9.0")
    files: Optional[int] = field(default=None, metadata=OMIT_DEFAULT)  # a group of standalone cubins: how many
    error: Optional[str] = field(default=None, metadata=OMIT_DEFAULT)  # why its headers could not be read


@dataclass
class LibraryFacts:
    key: str  # stable id: "fa2", "fa3", "fa4", "sgl_kernel", "flashinfer", "cutlass_dsl", ...
    title: str
    distributions: dict[str, str] = field(default_factory=dict)  # installed distribution -> version
    version: Optional[str] = None  # the version of the primary installed distribution
    import_name: Optional[str] = None
    module_path: Optional[str] = None  # where import_name would load from (found without importing it)
    health: ImportHealth = field(default_factory=ImportHealth)
    notes: list[str] = field(default_factory=list)  # e.g. version skew between flashinfer pieces
    # module (its path under site-packages, e.g. "sgl_kernel/flash_ops.abi3.so"; cubins grouped by kernel family)
    # -> the archs it ships, from fatbin headers; None: not read (a report written before this key, or the
    # library has no compiled module to read)
    binaries: Optional[dict[str, CompiledModule]] = field(default=None, metadata=OMIT_DEFAULT)

    @property
    def installed(self) -> bool:
        return bool(self.distributions)

    @property
    def label(self) -> str:
        """ "flash-attn-4 4.0.0b36": the distribution whose version is the library's, or the title."""
        if self.version:
            name = next((n for n, v in self.distributions.items() if v == self.version), None)
            return f"{name} {self.version}" if name else self.version
        return next(iter(self.distributions), None) or self.title


@dataclass
class CutlassHeaderFacts:
    path: Optional[str] = None
    version: Optional[str] = None  # from cutlass/version.h
    source: Optional[str] = None  # where the path came from: "CUTLASS_PATH" or the nvidia-cutlass wheel
    error: Optional[str] = None


@dataclass
class Facts:
    schema_version: int = SCHEMA_VERSION
    tool_version: Optional[str] = None
    collected_at: Optional[str] = None  # ISO-8601 UTC
    host: HostFacts = field(default_factory=HostFacts)
    gpus: GpuFacts = field(default_factory=GpuFacts)
    cuda_toolkit: CudaToolkitFacts = field(default_factory=CudaToolkitFacts)
    torch: TorchFacts = field(default_factory=TorchFacts)
    libraries: list[LibraryFacts] = field(default_factory=list)
    cutlass_headers: CutlassHeaderFacts = field(default_factory=CutlassHeaderFacts)
    environment: dict[str, str] = field(default_factory=dict)  # relevant variables, secrets redacted
    imports_checked: bool = False  # False with --no-imports: import health is unknown, not healthy

    def library(self, key: str) -> Optional[LibraryFacts]:
        return next((lib for lib in self.libraries if lib.key == key), None)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)

    @classmethod
    def from_dict(cls, data: Any) -> Facts:
        if not isinstance(data, dict):
            raise FactsError("a facts report must be a JSON object")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise FactsError(
                f"schema_version {version!r} is not supported (this attn-preflight reads schema_version "
                f"{SCHEMA_VERSION}); re-run `attn-preflight probe --format json` with this version"
            )
        devices = data["gpus"].get("devices") if isinstance(data.get("gpus"), dict) else None
        if isinstance(devices, list) and len(devices) > MAX_GPUS:  # before the model reads each one
            raise FactsError(
                f"gpus.devices lists {len(devices):,} GPUs, more than {MAX_GPUS:,} (a node has at most 16)"
            )
        facts = FACTS_SCHEMA.read(data, "facts")
        seen: set = set()  # one pass: list.count per key was quadratic in the libraries listed
        repeated: list = []
        for lib in facts.libraries:
            if lib.key in seen:
                repeated.append(lib.key)
            seen.add(lib.key)
        repeated.sort()
        if repeated:  # probe writes each once: which entry would be the library?
            raise FactsError(f"facts.libraries: key {repeated[0]!r} appears more than once")
        return facts


def to_jsonable(value: Any) -> Any:
    """A dataclass tree as JSON-ready dicts, lists and scalars (GpuDevice adds its derived fields)."""
    if dataclasses.is_dataclass(value):
        out = {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get("omit_default") and getattr(value, f.name) == f.default)
        }
        if isinstance(value, GpuDevice):  # derived, written for readers of the JSON
            out["compute_capability"] = value.compute_capability
            out["sm"] = value.sm
        return out
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


_SCALARS = {int: (int,), float: (int, float), str: (str,), bool: (bool,)}


class Schema:
    """How to read one dataclass tree back from JSON, checking types so that a bad report fails with its path.

    Made once per root type, at import of the module that defines it (FACTS_SCHEMA below; SMOKE_SCHEMA in
    attn_preflight.probe.smoke.results): every dataclass reachable from the root, with its fields and their resolved types,
    is indexed then. Resolving string annotations is most of the cost of reading a report, and fleet reads
    thousands."""

    def __init__(self, root: type):
        self.root = root
        self.fields: dict[type, tuple[tuple[str, Any, bool], ...]] = {}  # type -> (name, type, required)
        self._index(root)

    def _index(self, tp: Any) -> None:
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a dataclass type (hints are never instances)
            if tp in self.fields:
                return
            hints = typing.get_type_hints(tp)
            fields = tuple(
                (f.name, hints[f.name], f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
                for f in dataclasses.fields(tp)
            )
            self.fields[tp] = fields
            for _, hint, _ in fields:
                self._index(hint)
        for arg in typing.get_args(tp):
            self._index(arg)

    def read(self, data: Any, where: str) -> Any:
        """An instance of the root type built from `data`; FactsError names the first bad path."""
        return self._read(self.root, data, where)

    def _read(self, tp: Any, data: Any, where: str) -> Any:
        origin = typing.get_origin(tp)
        if origin is typing.Union:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if data is None:
                return None
            return self._read(args[0], data, where)
        if origin is list:
            if not isinstance(data, list):
                raise FactsError(f"{where}: expected a list")
            (item,) = typing.get_args(tp)
            return [self._read(item, v, f"{where}[{i}]") for i, v in enumerate(data)]
        if origin is dict:
            if not isinstance(data, dict):
                raise FactsError(f"{where}: expected an object")
            _, val = typing.get_args(tp)
            return {str(k): self._read(val, v, f"{where}.{k}") for k, v in data.items()}
        if tp is Any:
            return data
        fields = self.fields.get(tp)
        if fields is not None:
            if not isinstance(data, dict):
                raise FactsError(f"{where}: expected an object")
            kwargs = {}
            for name, hint, required in fields:
                if name in data:
                    kwargs[name] = self._read(hint, data[name], f"{where}.{name}")
                elif required:
                    raise FactsError(f"{where}: missing required key {name!r}")
            return tp(**kwargs)
        if tp in _SCALARS:
            if isinstance(data, bool) and tp is not bool or not isinstance(data, _SCALARS[tp]):
                raise FactsError(f"{where}: expected {tp.__name__}, got {type(data).__name__}")
            return data
        raise FactsError(f"{where}: cannot read type {tp!r}")  # pragma: no cover - a bug in this module


FACTS_SCHEMA = Schema(Facts)
