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
import re
from dataclasses import dataclass
from typing import Any, Optional

from attn_preflight.rules.knowledge import data_text
from attn_preflight.rules.knowledge.cuda_arch import code_runs_on, parse_arch

TABLES_PACKAGE = "attn_preflight.rules.kernels.binary_tables"
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
    builds = table["releases"].get(version)
    if not builds:
        return None
    build: Optional[dict[str, Any]] = builds.get(platform)
    return build


def shipped_archs(library: str, version: str, platform: str = DEFAULT_PLATFORM) -> Optional[dict[str, ArchSupport]]:
    """Module path -> the archs it ships, for one release of one library as its wheel for `platform` on PyPI has
    them; None when the table has no such release (unknown, never "no code"). A version with a local part
    ("0.4.10+cu130") is a build off the index, which the table does not describe: None."""
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


# --- an installed library against a GPU -------------------------------------------------------------------------

# The compiled module each library loads when it is imported (a regular expression over module paths): without
# code for the GPU there, every kernel of the library fails at its first launch with "no kernel image is available
# for execution on the device". Libraries not listed (flashinfer-cubin's kernel families, sgl-kernel's FA3 and
# FlashMLA ops) load a module only for the op that needs it: a gap there is a note, judged per op by the dispatch
# model (rules/kernels), not a broken install.
PRIMARY_MODULES: dict[str, tuple[str, str]] = {
    "sgl_kernel": (
        r"(^|/)common_ops\.",
        "sgl-project/sglang: sgl-kernel/python/sgl_kernel/__init__.py loads common_ops at import (from 0.4.x the "
        "sm90/ or sm100/ build of it, by the GPU's arch)",
    ),
    "vllm": (
        r"^vllm/_C(_stable_libtorch)?\.",
        "vllm-project/vllm: vllm/_custom_ops.py imports vllm._C (built as _C_stable_libtorch.abi3.so in the 0.33.0 "
        "and 0.34.0 wheels, which ship no _C.abi3.so)",
    ),
    "fa2": (
        r"^flash_attn_2_cuda",
        "Dao-AILab/flash-attention: flash_attn/flash_attn_interface.py imports flash_attn_2_cuda",
    ),
    "fa3": (
        r"^(flash_attn_3/_C|flash_attn_3_cuda|flashattn_hopper_cuda)",
        "Dao-AILab/flash-attention: hopper/flash_attn_interface.py imports its compiled extension",
    ),
    "flash_mla": (r"^flash_mla.*cuda", "deepseek-ai/FlashMLA: flash_mla/flash_mla_interface.py imports flash_mla.cuda"),
    "xformers": (r"^xformers/_C\.", "facebookresearch/xformers: xformers/_cpp_lib.py loads xformers._C"),
}
# Which table holds a probed library's releases, and under which of its distributions' versions.
TABLE_OF: dict[str, tuple[str, str]] = {
    "sgl_kernel": ("sgl-kernel", ""),
    "vllm": ("vllm", "vllm"),
    "flashinfer": ("flashinfer-cubin", "flashinfer-cubin"),
}
NO_KERNEL_IMAGE = "CUDA error: no kernel image is available for execution on the device"


@dataclass
class LibraryCoverage:
    key: str
    version: Optional[str]
    source: str  # "probe: the installed files" or the table's wheel
    cc: tuple[int, int]
    modules: dict[str, ArchSupport]
    uncovered: dict[str, ArchSupport]
    primary: dict[str, ArchSupport]  # the modules its import loads (PRIMARY_MODULES)

    @property
    def primary_covered(self) -> Optional[bool]:
        """Whether a module its import loads has code for the GPU; None when none is declared or found."""
        if not self.primary:
            return None
        return any(module not in self.uncovered for module in self.primary)


def _support(module: Any, source: str) -> ArchSupport:
    return ArchSupport(sass=tuple(module.sass), ptx=tuple(module.ptx), ptx_isa=module.ptx_isa, source=source)


def installed_support(
    lib: Any, platform: Optional[str] = DEFAULT_PLATFORM
) -> Optional[tuple[dict[str, ArchSupport], str, Optional[str]]]:
    """(module -> archs, where they were read, the version judged) for a probed library (LibraryFacts): the probe's
    own reading of the installed files, else the table's row for the installed release's wheel for `platform`
    (the host's CPU: the tables hold x86_64 wheels); None when neither has it."""
    if lib.binaries is not None:
        shipped = {
            name: _support(module, f"installed: {name}")
            for name, module in lib.binaries.items()
            if module.error is None
        }
        return shipped, "the installed files' fatbin headers", lib.version
    table, distribution = TABLE_OF.get(lib.key, ("", ""))
    version = lib.distributions.get(distribution) if distribution else lib.version
    if not table or not version or not platform:
        return None
    shipped_rows = shipped_archs(table, version, platform)
    if shipped_rows is None:
        return None
    return shipped_rows, f"{wheel(table, version, platform)} (rules/kernels/binary_tables/{table}.json)", version


def library_coverage(
    lib: Any, cc: tuple[int, int], driver_cuda: Optional[tuple[int, int]] = None, platform: Optional[str] = None
) -> Optional[LibraryCoverage]:
    """How an installed library's compiled modules cover a GPU; None when nothing says what they ship. `platform`:
    the host's CPU (facts.host.cpu_arch), which picks the table's wheel when the probe did not read the files."""
    found = installed_support(lib, platform)
    if found is None:
        return None
    shipped, source, version = found
    pattern = PRIMARY_MODULES.get(lib.key, ("", ""))[0]
    primary = {m: s for m, s in shipped.items() if pattern and re.search(pattern, m) and s.archs}
    return LibraryCoverage(
        key=lib.key,
        version=version,
        source=source,
        cc=cc,
        modules=shipped,
        uncovered=uncovered_modules(shipped, cc, driver_cuda),
        primary=primary,
    )


def release_with_code(key: str, cc: tuple[int, int], after: Optional[str] = None) -> Optional[str]:
    """The oldest release in the table, newer than `after`, whose import-time module has code for `cc`."""
    table, _ = TABLE_OF.get(key, ("", ""))
    pattern = PRIMARY_MODULES.get(key, ("", ""))[0]
    if not table or not pattern:
        return None
    from packaging.version import InvalidVersion, Version

    for version in releases(table):
        try:
            if after is not None and Version(version) <= Version(after):
                continue
        except InvalidVersion:
            continue
        shipped = shipped_archs(table, version) or {}
        if any(re.search(pattern, m) and has_code_for(s, cc) for m, s in shipped.items()):
            return version
    return None


def pip_fix(key: str, version: str) -> str:
    """ "pip install sglang-kernel==0.4.10" (sgl-kernel was renamed sglang-kernel at 0.4.0)."""
    from packaging.version import Version

    name = {"vllm": "vllm", "flashinfer": "flashinfer-cubin"}.get(key, "")
    if key == "sgl_kernel":
        name = "sglang-kernel" if Version(version) >= Version("0.4.0") else "sgl-kernel"
    return f"pip install {name}=={version}"


def driver_cuda_of(text: Optional[str]) -> Optional[tuple[int, int]]:
    """ "13.0" -> (13, 0); None for anything else."""
    try:
        major, minor = (text or "").split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def coverage_problems(facts: Any) -> list[str]:
    """probe's Problems: each installed library whose import-time module has no code for a GPU of the report."""
    found = []
    driver = driver_cuda_of(facts.gpus.cuda_driver_version)
    ccs = sorted(
        {(d.cc_major, d.cc_minor) for d in facts.gpus.devices if d.cc_major is not None and d.cc_minor is not None}
    )
    for lib in facts.libraries:
        if not lib.installed:
            continue
        for cc in ccs:
            coverage = library_coverage(lib, cc, driver, facts.host.cpu_arch)
            if coverage is None or coverage.primary_covered is not False:
                continue
            found.append(coverage_message(lib, coverage))
    return found


def coverage_message(lib: Any, coverage: LibraryCoverage) -> str:
    cc = coverage.cc
    shown = "; ".join(f"{m}: {s.describe()}" for m, s in sorted(coverage.primary.items()))
    text = (
        f"{lib.title} {coverage.version or ''} has no code for sm_{cc[0]}{cc[1]} in the module its import loads "
        f'({shown}; read from {coverage.source}): every kernel fails with "{NO_KERNEL_IMAGE}"'
    )
    newer = release_with_code(lib.key, cc, coverage.version)
    if newer:
        text += f"\n  → {pip_fix(lib.key, newer)} (the first release read with code for it)"
    else:
        text += f"\n  → no release read has code for sm_{cc[0]}{cc[1]}: build it from source for this GPU"
    return text
