"""The catalogue of attention-relevant libraries, as data: how each is installed, imported and judged healthy.

Every entry names its upstream source. Versions always come from the distribution's metadata, never from a module's
`__version__` alone (`flash_attn.cute.__version__` says "0.0.0" while flash-attn-4 is 4.0.0b36). Finding
what is installed reads metadata and stats files only: nothing here imports a library.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
from dataclasses import dataclass, field
from typing import Optional

from attn_preflight.probe.children import environment_path
from attn_preflight.probe.facts import HEALTH_SKIPPED, ImportHealth, LibraryFacts

# Prefixes of the notes that say a library is broken (not just informative), for renderers.
SKEW_NOTE = "version skew: "


@dataclass(frozen=True)
class LibrarySpec:
    key: str
    title: str
    # Every distribution name the library ships under, the main one first. A library with several pieces
    # (FlashInfer, the CUTLASS DSL) lists them all; `primary` names the ones whose version is the library's.
    distributions: tuple[str, ...]
    # Modules to import for the health check; the first that exists on sys.path is used.
    imports: tuple[str, ...]
    healthy: str  # what a passing import check means
    source: str  # upstream repo: file(s) these facts were read from
    primary: tuple[str, ...] = ()  # defaults to distributions[:1]
    # Pieces that must carry the primary's version (the library refuses or breaks otherwise).
    companions: tuple[str, ...] = ()
    companion_match: str = "exact"  # "exact", or "release": compare without the local "+cuXYZ" part
    companion_source: str = ""
    # Optional parts imported after the main module, recorded in details["components"]; their failure
    # is reported as a note and does not change the library's status.
    components: dict = field(default_factory=dict)
    # Extra facts read inside the import: name -> Python expression over `mod` (the imported module) and `sys`.
    details: dict = field(default_factory=dict)

    @property
    def primary_distributions(self) -> tuple[str, ...]:
        return self.primary or self.distributions[:1]


# CATALOGUE keys whose distributions ship compiled GPU code, read by probe/binaries.py. torch is judged by its
# own arch list; the CuTe DSL, FA4, quack and triton compile at run time.
SHIPS_GPU_CODE = frozenset(
    ("fa2", "fa3", "sgl_kernel", "flashinfer", "xformers", "flash_mla", "deep_gemm", "hpc_ops", "vllm")
)

CATALOGUE: tuple[LibrarySpec, ...] = (
    LibrarySpec(
        key="torch",
        title="PyTorch",
        distributions=("torch",),
        imports=("torch",),
        healthy="`import torch` works; its CUDA build, compiled arch list and cuDNN are read inside the import "
        "(no CUDA context: the arch list comes from torch._C._cuda_getArchFlags)",
        source="pytorch/pytorch: torch/version.py (generated at build), torch/cuda/__init__.py get_arch_list, "
        "torch/backends/cudnn/__init__.py version",
        details={
            "cuda": "mod.version.cuda",
            "hip": "mod.version.hip",
            "arch_list": "(getattr(mod._C, '_cuda_getArchFlags', lambda: None)() or '').split()",
            "cudnn": "mod.backends.cudnn.version()",
        },
    ),
    LibrarySpec(
        key="fa2",
        title="FlashAttention 2",
        distributions=("flash-attn",),
        # flash_attn alone also exists when only FA4 is installed (a namespace package); the interface
        # module is FA2's own and loads its CUDA extension flash_attn_2_cuda.
        imports=("flash_attn.flash_attn_interface",),
        healthy="flash_attn.flash_attn_interface imports, which loads the compiled flash_attn_2_cuda extension",
        source="Dao-AILab/flash-attention: setup.py (PACKAGE_NAME flash_attn), flash_attn/__init__.py, "
        "flash_attn/flash_attn_interface.py",
    ),
    LibrarySpec(
        key="fa3",
        title="FlashAttention 3",
        distributions=("flash-attn-3", "flashattn-hopper"),
        imports=("flash_attn_interface", "flash_attn_3"),
        healthy="the FA3 interface imports, which loads its compiled extension (flash_attn_3._C)",
        source="Dao-AILab/flash-attention: hopper/setup.py (dist flash_attn_3, earlier flashattn-hopper), "
        "hopper/flash_attn_interface.py, hopper/flash_attn_3/__init__.py",
    ),
    LibrarySpec(
        key="fa4",
        title="FlashAttention 4 (CuTe DSL)",
        distributions=("flash-attn-4", "fa4", "flash-attn-cute", "flash-attn4"),
        primary=("flash-attn-4", "fa4", "flash-attn-cute", "flash-attn4"),
        imports=("flash_attn.cute",),
        healthy="flash_attn.cute imports (which imports the CUTLASS DSL); kernels JIT-compile at first call",
        source="Dao-AILab/flash-attention: flash_attn/cute/pyproject.toml (name flash-attn-4; briefly fa4 / "
        "flash-attn4), flash_attn/cute/__init__.py (__version__ = version('fa4') -> 0.0.0)",
    ),
    LibrarySpec(
        key="sgl_kernel",
        title="sgl-kernel",
        distributions=("sglang-kernel", "sgl-kernel"),
        primary=("sglang-kernel", "sgl-kernel"),
        imports=("sgl_kernel",),
        healthy="sgl_kernel imports; its FA3 ops (sgl_kernel.flash_attn, extension flash_ops) are checked as "
        "the fa3_ops component",
        source="sgl-project/sglang: sgl-kernel/pyproject.toml (renamed sgl-kernel -> sglang-kernel at 0.4.0), "
        "sgl-kernel/python/sgl_kernel/flash_attn.py",
        components={"fa3_ops": "sgl_kernel.flash_attn"},
    ),
    LibrarySpec(
        key="flashinfer",
        title="FlashInfer",
        distributions=("flashinfer-python", "flashinfer", "flashinfer-cubin", "flashinfer-jit-cache"),
        primary=("flashinfer-python", "flashinfer"),
        imports=("flashinfer",),
        healthy="flashinfer imports (it checks flashinfer-cubin / flashinfer-jit-cache versions at import)",
        source="flashinfer-ai/flashinfer: pyproject.toml, flashinfer/jit/env.py (version checks)",
        companions=("flashinfer-cubin", "flashinfer-jit-cache"),
        companion_match="release",
        companion_source="flashinfer-ai/flashinfer: flashinfer/jit/env.py raises RuntimeError when "
        "flashinfer-cubin differs from flashinfer (exact) or flashinfer-jit-cache does (ignoring +cuXYZ); "
        "FLASHINFER_DISABLE_VERSION_CHECK=1 bypasses it",
        # SGLang's --mamba-backend flashinfer imports it at start-up (arg_groups/mamba_hook.py handle_mamba_backend)
        components={"mamba": "flashinfer.mamba"},
    ),
    LibrarySpec(
        key="cutlass_dsl",
        title="CUTLASS CuTe DSL",
        distributions=(
            "nvidia-cutlass-dsl",
            "nvidia-cutlass-dsl-libs-base",
            "nvidia-cutlass-dsl-libs-core",
            "nvidia-cutlass-dsl-libs-cu12",
            "nvidia-cutlass-dsl-libs-cu13",
        ),
        imports=("cutlass.cute",),
        healthy="cutlass.cute imports; `cutlass` lives in nvidia_cutlass_dsl/dsl_packages, put on sys.path by "
        "the nvidia_cutlass_dsl_packages.pth file",
        source="NVIDIA/cutlass: python/CuTeDSL/cutlass/__init__.py; PyPI nvidia-cutlass-dsl 4.8.1 wheel "
        "(nvidia_cutlass_dsl_packages.pth, Requires-Dist nvidia-cutlass-dsl-libs-*)",
        companions=(
            "nvidia-cutlass-dsl-libs-base",
            "nvidia-cutlass-dsl-libs-core",
            "nvidia-cutlass-dsl-libs-cu12",
            "nvidia-cutlass-dsl-libs-cu13",
        ),
        companion_source="PyPI nvidia-cutlass-dsl METADATA pins each libs piece to its own version "
        "(Requires-Dist: nvidia-cutlass-dsl-libs-base==X)",
        details={
            "cutlass_version": "getattr(sys.modules['cutlass'], '__version__', None)",
            "cuda_version": "getattr(sys.modules['cutlass'], 'CUDA_VERSION', None)",
        },
    ),
    LibrarySpec(
        key="cutlass_python",
        title="CUTLASS Python interface",
        distributions=("nvidia-cutlass",),
        # Since 2025-09 the package is cutlass_cppgen (it was `cutlass`, which collided with the DSL).
        imports=("cutlass_cppgen", "cutlass_library"),
        healthy="cutlass_cppgen (older releases: cutlass_library) imports",
        source="NVIDIA/cutlass: setup.cfg (nvidia-cutlass), python/cutlass_cppgen/__init__.py; NVIDIA/cutlass#2446",
    ),
    LibrarySpec(
        key="triton",
        title="Triton",
        distributions=("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-rocm"),
        primary=("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-rocm"),
        imports=("triton",),
        healthy="triton imports",
        source="triton-lang/triton: python/setup.py (name triton); pytorch nightly index ships pytorch-triton",
    ),
    LibrarySpec(
        key="xformers",
        title="xFormers",
        distributions=("xformers",),
        imports=("xformers",),
        healthy="xformers imports; details.cpp_library says whether its C++/CUDA extensions loaded",
        source="facebookresearch/xformers: xformers/__init__.py (_has_cpp_library), xformers/_cpp_lib.py",
        details={"cpp_library": "getattr(mod, '_has_cpp_library', None)"},
    ),
    LibrarySpec(
        key="flash_mla",
        title="FlashMLA",
        distributions=("flash-mla",),
        imports=("flash_mla",),
        healthy="flash_mla imports (loads its flash_mla.cuda extension)",
        source="deepseek-ai/FlashMLA: setup.py (name flash_mla, extension flash_mla.cuda)",
    ),
    LibrarySpec(
        key="deep_gemm",
        title="DeepGEMM",
        distributions=("deep-gemm",),
        imports=("deep_gemm",),
        healthy="deep_gemm imports (loads its deep_gemm_cpp extension)",
        source="deepseek-ai/DeepGEMM: setup.py (name deep_gemm, extension deep_gemm_cpp)",
    ),
    LibrarySpec(
        key="quack",
        title="QuACK kernels",
        distributions=("quack-kernels",),
        imports=("quack",),
        healthy="quack imports (CuTe DSL kernels FA4 depends on)",
        source="PyPI quack-kernels 0.6.5 wheel (package quack); flash-attn-4 METADATA Requires-Dist quack-kernels",
    ),
    LibrarySpec(
        key="fla",
        title="Flash Linear Attention (FLA)",
        distributions=("fla-core", "flash-linear-attention"),
        primary=("fla-core", "flash-linear-attention"),
        imports=("fla",),
        healthy="fla imports; its Triton kernels (GDN, linear attention) JIT-compile at first call",
        source="fla-org/flash-linear-attention: pyproject.toml (fla-core holds the fla package from 0.4; "
        "flash-linear-attention requires fla-core==its version)",
    ),
    LibrarySpec(
        key="hpc_ops",
        title="HPC-Ops (Tencent)",
        distributions=("hpc-ops",),
        imports=("hpc",),
        healthy="hpc imports (loads its hpc._C extension); SGLang's hpc_ops backend needs only that the module "
        "is found (importlib.util.find_spec('hpc'))",
        source="Tencent/hpc-ops: setup.py (name hpc-ops, packages ['hpc'], extension hpc/_C.abi3.so); sglang "
        "layers/attention/hpc_ops_backend.py has_hpc_ops",
    ),
    LibrarySpec(
        key="sglang",
        title="SGLang",
        distributions=("sglang",),
        imports=("sglang",),
        healthy="sglang imports",
        source="sgl-project/sglang: python/pyproject.toml (name sglang)",
    ),
    LibrarySpec(
        key="vllm",
        title="vLLM",
        distributions=("vllm",),
        imports=("vllm",),
        healthy="vllm imports; its bundled FlashAttention (vllm.vllm_flash_attn) is checked as a component",
        source="vllm-project/vllm: pyproject.toml (name vllm), vllm/vllm_flash_attn (from vllm-project/flash-attention)",
        components={"vllm_flash_attn": "vllm.vllm_flash_attn"},
    ),
    LibrarySpec(
        key="transformers",
        title="Transformers",
        distributions=("transformers",),
        imports=("transformers",),
        healthy="transformers imports",
        source="huggingface/transformers: setup.py (name transformers)",
    ),
)


def spec_for(key: str) -> LibrarySpec:
    return next(spec for spec in CATALOGUE if spec.key == key)


def canonical(name: str) -> str:
    """PEP 503 normalised distribution name: flash_attn_3 and Flash.Attn-3 are both flash-attn-3."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class InstalledDistribution:
    name: str  # as the catalogue spells it
    version: Optional[str]
    location: Optional[str]  # the sys.path entry it was found in
    shadowed: list[str] = field(default_factory=list)  # other sys.path entries holding it, not used


class DistributionIndex:
    """Where each installed distribution's metadata lives, by PEP 503 name, in sys.path order: one directory
    listing per sys.path entry (importlib.metadata's lookup by name lists them all again for each name:
    10x slower over the catalogue's 34 names)."""

    def __init__(self, path: Optional[list[str]] = None):
        self.path = environment_path() if path is None else path
        self.found: dict[str, list[tuple[str, str]]] = {}  # name -> [(sys.path entry, metadata dir)]
        for entry in self.path:
            try:
                names = sorted(os.listdir(entry or "."))
            except OSError:
                continue
            for name in names:
                stem, dot, kind = name.rpartition(".")
                if dot and kind in ("dist-info", "egg-info"):
                    self.found.setdefault(canonical(stem.split("-", 1)[0]), []).append((entry, name))

    def find(self, name: str) -> Optional[InstalledDistribution]:
        """The distribution Python would use (first on sys.path), without importing anything."""
        places = self.found.get(canonical(name))
        if not places:
            return None
        entry, directory = places[0]
        locations = [os.path.normpath(os.path.abspath(where or ".")) for where, _ in places]
        shadowed = [loc for loc in dict.fromkeys(locations[1:]) if loc != locations[0]]
        return InstalledDistribution(
            name, metadata_version(os.path.join(entry or ".", directory)), locations[0], shadowed
        )


def metadata_version(metadata_dir: str) -> Optional[str]:
    """The `Version:` header of a .dist-info's METADATA or an .egg-info's PKG-INFO (an .egg-info may be that
    file itself), read as importlib.metadata reads it but without loading the email package for one header."""
    path = metadata_dir
    if os.path.isdir(metadata_dir):
        path = os.path.join(metadata_dir, "PKG-INFO" if metadata_dir.endswith(".egg-info") else "METADATA")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break  # the headers end at the first blank line
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip() or None
    except OSError:
        return None
    return None


def locate_module(dotted: str, search: Optional[list[str]] = None) -> Optional[str]:
    """Where `dotted` would be imported from, found by walking `search` (default: the environment's sys.path,
    as the import checks see it) without importing any package."""
    path: Optional[list[str]] = environment_path() if search is None else search
    spec = None
    parts = dotted.split(".")
    for depth in range(1, len(parts) + 1):
        try:
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth]), path)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        path = spec.submodule_search_locations
        if depth < len(parts) and path is None:
            return None
    assert spec is not None  # `parts` is never empty, and a None spec returned above
    if spec.origin and spec.origin != "namespace":
        return spec.origin
    return next(iter(spec.submodule_search_locations or []), None)


def library_facts(spec: LibrarySpec, index: Optional[DistributionIndex] = None) -> LibraryFacts:
    """What is installed of one library, from metadata and the filesystem; health is filled in later."""
    index = index or DistributionIndex()
    facts = LibraryFacts(key=spec.key, title=spec.title, health=ImportHealth(status=HEALTH_SKIPPED))
    installed = {}
    for name in spec.distributions:
        dist = index.find(name)
        if dist is None:
            continue
        installed[name] = dist
        facts.distributions[name] = dist.version or "unknown"
        for other in dist.shadowed:
            facts.notes.append(f"{name} is also installed in {other}, shadowed by {dist.location}")
    primary = next((installed[n] for n in spec.primary_distributions if n in installed), None)
    facts.version = primary.version if primary else None
    located = [(module, locate_module(module, index.path)) for module in spec.imports]
    facts.import_name, facts.module_path = next(((m, where) for m, where in located if where), (spec.imports[0], None))
    if not installed and facts.module_path:
        facts.notes.append(
            f"{facts.import_name} is importable from {facts.module_path} but no distribution metadata names "
            f"it (a source checkout or PYTHONPATH copy): its version is unknown"
        )
    if primary is not None:
        facts.notes.extend(companion_skew(spec, primary, installed))
    return facts


def companion_skew(spec: LibrarySpec, primary: InstalledDistribution, installed: dict) -> list[str]:
    notes = []
    for name in spec.companions:
        piece = installed.get(name)
        if piece is None or piece is primary or piece.version is None or primary.version is None:
            continue
        if _release(piece.version, spec.companion_match) != _release(primary.version, spec.companion_match):
            notes.append(
                f"{SKEW_NOTE}{name} {piece.version} does not match {primary.name} {primary.version} "
                f"({spec.companion_source})"
            )
    return notes


def _release(version: str, match: str) -> str:
    return version.split("+", 1)[0] if match == "release" else version
