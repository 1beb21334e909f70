"""Which GPU architectures each kernel library's compiled modules ship code for, per release: read from the wheels.

The tables (rules/kernels/binary_tables/<library>.json, listed in its index.json) are written by bench/kernel_tables.py, which downloads each
release's wheel and reads the fatbin headers of every compiled module in it (attn_preflight/probe/fatbin.py, checked
against cuobjdump in bench/fatbin_vs_cuobjdump.py). Each release names the wheel file read and each module its path
inside that wheel. A table is loaded the first time it is asked for (never at import): `check` pays for it only
when a rule needs it.

What runs where is CUDA's rule set, in one place (attn_preflight.rules.knowledge.cuda_arch.code_runs_on; CUDA C++
Programming Guide, "Binary Compatibility", "PTX Compatibility" and the arch- and family-specific feature sets of
CUDA 12.9+): SASS `sm_XY` runs on X.Z with Z >= Y (same major); `sm_XYa` on X.Y only; `sm_XYf` on X.Z with
Z >= Y; PTX `compute_XY` is JIT-compiled by the driver for any compute capability >= X.Y, provided the driver
knows the PTX ISA it was written in (`ptx_isa`: ISA 9.0 needs a CUDA 13 driver).

What binaries cannot say stays out of these tables: kernels JIT-compiled at run time (FlashInfer's JIT, Triton,
DeepGEMM's NVRTC, the CuTe DSL of FA4 and quack), `#if`-guarded stubs compiled for an arch but trapping on it, and
the host-side checks a kernel makes before launching.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Optional

from attn_preflight.rules.knowledge import data_text
from attn_preflight.rules.knowledge.cuda_arch import code_runs_on, parse_arch

TABLES_PACKAGE = "attn_preflight.rules.kernels.binary_tables"
TABLE_SOURCE = "bench/kernel_tables.py: the wheels' fatbin headers (attn_preflight/probe/fatbin.py)"
DEFAULT_PLATFORM = "x86_64"


@dataclass(frozen=True)
class ArchSupport:
    """The code one compiled module ships."""

    sass: tuple[str, ...]  # "sm_80", "sm_90a", "sm_100f", ...
    ptx: tuple[str, ...] = ()  # "compute_80", ...
    ptx_isa: Optional[str] = None  # the newest PTX ISA among its PTX entries, "9.0"
    source: str = ""  # "<wheel file>!<module path>" (or "installed: <path>" for a probed module)

    @property
    def archs(self) -> tuple[str, ...]:
        return self.sass + self.ptx

    def describe(self) -> str:
        """ "sm_80 sm_90a + PTX compute_80 (ISA 9.0)" """
        text = " ".join(self.sass) or "no SASS"
        if self.ptx:
            text += " + PTX " + " ".join(self.ptx) + (f" (ISA {self.ptx_isa})" if self.ptx_isa else "")
        return text


def sass_for(support: ArchSupport, cc: tuple[int, int]) -> list[str]:
    """The SASS builds in `support` that run on a GPU of compute capability `cc`."""
    return [arch for arch in support.sass if code_runs_on(arch, cc)]


# The CUDA release that introduced each PTX ISA version (NVIDIA PTX ISA, "Release Notes" / "PTX ISA Version"
# table): a driver older than it cannot JIT-compile PTX written in that ISA ("the provided PTX was compiled with
# an unsupported toolchain").
PTX_ISA_CUDA = {
    "7.0": (11, 0), "7.1": (11, 1), "7.2": (11, 2), "7.3": (11, 3), "7.4": (11, 4), "7.5": (11, 5),
    "7.6": (11, 6), "7.7": (11, 7), "7.8": (11, 8), "8.0": (12, 0), "8.1": (12, 1), "8.2": (12, 2),
    "8.3": (12, 3), "8.4": (12, 4), "8.5": (12, 5), "8.6": (12, 7), "8.7": (12, 8), "8.8": (12, 9),
    "9.0": (13, 0), "9.1": (13, 1), "9.2": (13, 2),
}  # fmt: skip


def ptx_needs_driver(isa: Optional[str]) -> Optional[tuple[int, int]]:
    """The CUDA driver version that can JIT PTX of this ISA; None when the ISA is unknown to this table."""
    return PTX_ISA_CUDA.get(isa) if isa else None


def ptx_for(support: ArchSupport, cc: tuple[int, int], driver_cuda: Optional[tuple[int, int]] = None) -> list[str]:
    """The PTX in `support` the driver can JIT-compile for `cc` (compute_XY for X.Y <= cc; `a`/`f` PTX only on
    its own arch / family). With `driver_cuda` (the driver's CUDA version), PTX of an ISA newer than that driver
    knows is left out."""
    if driver_cuda is not None:
        needed = ptx_needs_driver(support.ptx_isa)
        if needed is not None and driver_cuda < needed:
            return []
    return [arch for arch in support.ptx if code_runs_on(_as_compute(arch), cc)]


def has_code_for(support: ArchSupport, cc: tuple[int, int], driver_cuda: Optional[tuple[int, int]] = None) -> bool:
    """Whether the module has code that runs on `cc`: SASS that runs there, or PTX the driver can JIT (judged
    against `driver_cuda`'s PTX ISA when given)."""
    return bool(sass_for(support, cc) or ptx_for(support, cc, driver_cuda))


def _as_compute(arch: str) -> str:
    parsed = parse_arch(arch)
    if parsed is None:
        return arch
    return f"compute_{parsed[1]}{parsed[2]}"


# --- the tables ------------------------------------------------------------------------------------------------


@functools.cache
def _index() -> dict[str, Any]:
    index: dict[str, Any] = json.loads(data_text("index.json", TABLES_PACKAGE))
    return index


@functools.cache
def _table(library: str) -> Optional[dict[str, Any]]:
    if library not in _index()["libraries"]:
        return None
    data: dict[str, Any] = json.loads(data_text(f"{library}.json", TABLES_PACKAGE))
    return data


def libraries() -> list[str]:
    """The libraries with a table."""
    return sorted(_index()["libraries"])


def table_info(library: str) -> Optional[dict[str, Any]]:
    """The table's header: distributions it covers, its source, what it does not cover (no releases)."""
    table = _table(library)
    if table is None:
        return None
    return {key: value for key, value in table.items() if key != "releases"}


def releases(library: str, platform: str = DEFAULT_PLATFORM) -> list[str]:
    """The releases the table has read (in the table's order: oldest first) for `platform`."""
    table = _table(library)
    if table is None:
        return []
    return [version for version, builds in table["releases"].items() if platform in builds]


def wheel(library: str, version: str, platform: str = DEFAULT_PLATFORM) -> Optional[str]:
    """The wheel file a release's row was read from."""
    build = _build(library, version, platform)
    return build["wheel"] if build else None


def _build(library: str, version: str, platform: str) -> Optional[dict[str, Any]]:
    table = _table(library)
    if table is None:
        return None
    builds = table["releases"].get(_local_free(version)) or table["releases"].get(version)
    if not builds:
        return None
    build: Optional[dict[str, Any]] = builds.get(platform)
    return build


def _local_free(version: str) -> str:
    """ "0.7.2+cu130" -> "0.7.2": tables are keyed by release (a CUDA-variant build off the index differs, and
    the caller says so when it matters)."""
    return version.split("+", 1)[0]


def shipped_archs(library: str, version: str, platform: str = DEFAULT_PLATFORM) -> Optional[dict[str, ArchSupport]]:
    """Module path -> the archs it ships, for one release of one library as its wheel for `platform` has them;
    None when the table has no such release (unknown, never "no code")."""
    build = _build(library, version, platform)
    if build is None:
        return None
    wheel_name = build["wheel"]
    return {
        module: ArchSupport(
            sass=tuple(row.get("sass", ())),
            ptx=tuple(row.get("ptx", ())),
            ptx_isa=row.get("ptx_isa"),
            source=f"{wheel_name}!{module}",
        )
        for module, row in build["modules"].items()
    }


def module_archs(library: str, version: str, module: str, platform: str = DEFAULT_PLATFORM) -> Optional[ArchSupport]:
    """One module of a release (its path in the wheel, e.g. "sgl_kernel/flash_ops.abi3.so"); None if not read."""
    shipped = shipped_archs(library, version, platform)
    return None if shipped is None else shipped.get(module)


def first_release_with_code(
    library: str, module: str, cc: tuple[int, int], after: Optional[str] = None, platform: str = DEFAULT_PLATFORM
) -> Optional[str]:
    """The oldest release in the table (newer than `after`, when given) whose `module` has code for `cc`: the fix
    "upgrade to X" points at it. None when no release read has it."""
    from packaging.version import InvalidVersion, Version

    try:
        floor = Version(after) if after else None
    except InvalidVersion:
        floor = None
    for version in releases(library, platform):
        try:
            if floor is not None and Version(version) <= floor:
                continue
        except InvalidVersion:
            continue
        support = module_archs(library, version, module, platform)
        if support is not None and has_code_for(support, cc):
            return version
    return None


def uncovered_modules(
    shipped: dict[str, ArchSupport], cc: tuple[int, int], driver_cuda: Optional[tuple[int, int]] = None
) -> dict[str, ArchSupport]:
    """The modules of a release (or of an installed library) with no code for `cc` (modules with no GPU code at
    all, e.g. a CPU-only helper `.so`, are left out)."""
    return {
        module: support
        for module, support in shipped.items()
        if support.archs and not has_code_for(support, cc, driver_cuda)
    }
