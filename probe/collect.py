"""The one entry point that gathers Facts about this machine. Every probe is wrapped: a failing probe
becomes a value with a reason, never an exception. The NVML and nvcc children start first, then the import
checks (seconds, in the background); the file probes run here meanwhile.
"""

from __future__ import annotations

import datetime
import functools
import os
import platform
import sys
import threading
from typing import TYPE_CHECKING, Callable, Optional, TypeVar

from attn_preflight.probe import __version__
from attn_preflight.probe.children import TerminateAsExit, sweep_stale_scratch
from attn_preflight.probe.environ import relevant_environment
from attn_preflight.probe.facts import (
    HEALTH_NOT_INSTALLED,
    HEALTH_OK,
    HEALTH_SKIPPED,
    CudaToolkitFacts,
    CutlassHeaderFacts,
    Facts,
    GpuFacts,
    HostFacts,
    ImportHealth,
    LibraryFacts,
    TorchFacts,
)

if TYPE_CHECKING:
    from attn_preflight.probe.gpus import GpuProbe
    from attn_preflight.probe.libraries import LibrarySpec
    from attn_preflight.probe.toolkit import NvccProbe

T = TypeVar("T")


def collect(
    check_imports: bool = True, timeout: float = 60.0, use_cache: bool = True, gpu_probe: Optional[GpuProbe] = None
) -> Facts:
    """`gpu_probe`: an NVML query already started (attn_preflight.start forks it before the CLI loads); it is
    closed here like one started here."""
    from attn_preflight.probe import gpus

    if check_imports:  # what a run killed with SIGKILL left in the temp directory (--no-imports makes none)
        sweep_stale_scratch()
    with TerminateAsExit():
        # NVML's init and `nvcc --version` wait on the driver and a process: their children start first and
        # run beside the file probes and the import checks.
        gpu_probe = gpu_probe or gpus.GpuProbe()
        from attn_preflight.probe import toolkit

        nvcc_probe = toolkit.NvccProbe()
        try:
            return _gather(gpu_probe, nvcc_probe, check_imports, timeout, use_cache)
        finally:  # also on Ctrl-C and SIGTERM: no child outlives us
            gpu_probe.close()
            nvcc_probe.close()


def _gather(gpu_probe: GpuProbe, nvcc_probe: NvccProbe, check_imports: bool, timeout: float, use_cache: bool) -> Facts:
    from attn_preflight.probe import libraries, toolkit

    facts = Facts(
        tool_version=__version__,
        imports_checked=check_imports,
        collected_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    )
    installed = libraries.DistributionIndex()
    facts.torch = _guard(functools.partial(toolkit.torch_facts, installed), lambda e: TorchFacts(error=e))
    facts.libraries = [
        _guard(functools.partial(libraries.library_facts, spec, installed), functools.partial(_failed_library, spec))
        for spec in libraries.CATALOGUE
    ]
    present = [lib for lib in facts.libraries if lib.installed or lib.module_path]
    for lib in facts.libraries:
        if lib not in present:
            lib.health = ImportHealth(status=HEALTH_NOT_INSTALLED)

    checks = _start_import_checks(present, timeout, use_cache) if check_imports else None
    try:
        facts.host = _guard(host_facts, lambda e: HostFacts(os=e))
        facts.cutlass_headers = _guard(toolkit.cutlass_header_facts, lambda e: CutlassHeaderFacts(error=e))
        facts.environment = _guard(relevant_environment, lambda e: {"attn-preflight": e})
        _guard(functools.partial(_binaries, facts.libraries, installed, use_cache), lambda e: None)
        facts.gpus = _guard(gpu_probe.result, lambda e: GpuFacts(error=e))
        facts.cuda_toolkit = _guard(nvcc_probe.result, lambda e: CudaToolkitFacts(error=e))
        if checks is not None:
            checks.join()  # ended, not only finished: a fork after this (smoke's NVML query) sees one thread
    except BaseException:  # Ctrl-C, SIGTERM: stop the import checks, whose children would otherwise outlive us
        if checks is not None:
            checks.cancel.set()
            checks.finished.wait()
        raise
    if checks is not None:
        for lib in present:
            lib.health = checks.results.get(lib.key) or ImportHealth(
                status=HEALTH_SKIPPED, module=lib.import_name, error=checks.error or "no result"
            )
            _guard(functools.partial(_interpret, lib, facts), lib.notes.append)
    return facts


def _binaries(libs: list[LibraryFacts], installed, use_cache: bool) -> None:
    """The archs each kernel library's compiled modules ship (headers only, cached): read while the imports run."""
    from attn_preflight.probe.libraries import SHIPS_GPU_CODE

    if not any(lib.installed and lib.key in SHIPS_GPU_CODE for lib in libs):
        return
    from attn_preflight.probe.binaries import collect_binaries

    collect_binaries(libs, installed, use_cache)


def host_facts() -> HostFacts:
    virtualenv = sys.prefix if sys.prefix != getattr(sys, "base_prefix", sys.prefix) else None
    return HostFacts(
        os=os_description(),
        hostname=platform.node(),  # uname's nodename: socket.gethostname() without importing socket
        python_version=platform.python_version(),
        python_executable=sys.executable,
        virtualenv=virtualenv or os.environ.get("CONDA_PREFIX"),
        cpu_arch=platform.machine(),
        memory_total_mib=host_memory_mib(),
    )


def host_memory_mib() -> Optional[int]:
    """The host's physical RAM in MiB (sysconf; no file read), None where the platform does not say."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) >> 20
    except (AttributeError, ValueError, OSError):
        return None


def os_description() -> str:
    """'Linux-6.8.0-x86_64-with-glibc2.39', as platform.platform() spells it on Linux, from uname and the C
    library's confstr: platform.platform() runs `uname -p` in a subprocess and scans the interpreter binary
    for glibc's version (7 ms, a tenth of `probe --no-imports`)."""
    name = os.uname()
    parts = [name.sysname, name.release, name.machine]
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.39"
    except (AttributeError, ValueError, OSError):
        libc = ""
    if libc:
        parts += ["with", libc.replace(" ", "")]
    return "-".join(part for part in parts if part)


class _ImportChecks(threading.Thread):
    def __init__(self, requests, timeout: float, use_cache: bool):
        super().__init__(name="attn-preflight-imports", daemon=True)
        self.requests, self.timeout, self.use_cache = requests, timeout, use_cache
        self.results: dict = {}
        self.error: Optional[str] = None
        self.cancel = threading.Event()
        # Waited on after an interrupt instead of a second join(): a join interrupted by Ctrl-C marks the thread
        # stopped while it still runs (CPython's bpo-45274 fix), and would return before its children are killed.
        self.finished = threading.Event()

    def run(self) -> None:
        from attn_preflight.probe import health

        try:
            self.results = health.check_imports(self.requests, self.timeout, self.use_cache, cancel=self.cancel)
        except Exception as err:  # the machinery itself failed (no fork, no temp dir): a value, not a crash
            self.error = f"import checks could not run: {type(err).__name__}: {err}"
        finally:
            self.finished.set()


def _start_import_checks(present: list[LibraryFacts], timeout: float, use_cache: bool) -> _ImportChecks:
    from attn_preflight.probe.health import ImportRequest
    from attn_preflight.probe.libraries import spec_for

    requests = []
    for lib in present:
        spec = spec_for(lib.key)
        requests.append(
            ImportRequest(
                key=lib.key,
                module=lib.import_name or spec.imports[0],
                details=dict(spec.details),
                components=dict(spec.components),
            )
        )
    checks = _ImportChecks(requests, timeout, use_cache)
    checks.start()
    return checks


def _failed_library(spec: LibrarySpec, error: str) -> LibraryFacts:
    """What is reported of a library whose probe raised."""
    return LibraryFacts(key=spec.key, title=spec.title, notes=[error])


def _interpret(lib: LibraryFacts, facts: Facts) -> None:
    """Adds the facts read inside the import check to the rest of the report (torch's arch list, cuDNN)."""
    module_version = lib.health.details.get("module_version")
    if lib.version and module_version and module_version.split("+")[0] != lib.version.split("+")[0]:
        lib.notes.append(
            f"{lib.health.module} reports __version__ {module_version}; the installed "
            f"distribution is {lib.version} (the version shown here)"
        )
    if lib.key == "torch" and lib.health.status == HEALTH_OK:
        details = lib.health.details
        if isinstance(details.get("arch_list"), list):
            facts.torch.arch_list = details["arch_list"]
        if facts.torch.cudnn is None and isinstance(details.get("cudnn"), int):
            facts.torch.cudnn = cudnn_version_text(details["cudnn"])


def cudnn_version_text(value: int) -> str:
    """torch.backends.cudnn.version() (91002 for cuDNN 9.10.2; 8902 for 8.9.2) as text."""
    if value >= 90000:
        return f"{value // 10000}.{(value % 10000) // 100}.{value % 100}"
    return f"{value // 1000}.{(value % 1000) // 100}.{value % 100}"


def _guard(probe: Callable[[], T], on_error: Callable[[str], T]) -> T:
    try:
        return probe()
    except Exception as err:
        return on_error(f"probe failed: {type(err).__name__}: {err}")
