"""Installation rules, judged on a live probe or a saved report (--facts); with --gpu they are skipped.

They read the probe's facts through the Target: GPUs (NVML), torch's build (CUDA version, compiled arch
list) and each library's distribution and import health (`libraries[*].health.status`). A library whose
import was not checked (`probe --no-imports`) is reported as unknown, never as healthy.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.checks.common import (
    HEALTH_OK,
    cuda_version,
    declared,
    gpu,
    libraries_found,
    library,
    library_state,
    sglang_release,
)
from attn_preflight.rules.core.constraints import ALWAYS, Flag, Term
from attn_preflight.rules.core.engine import Outcome, failed, passed, rule, skipped, unknown
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.knowledge.cuda_arch import INSTALL_CUDA_TORCH, arch_list_runs_on

# --- attention libraries per backend ------------------------------------------------------------------------

V0_5_16, V0_5_23 = Version("0.5.16"), Version("0.5.23")
FA4_PIP_ENV = "SGLANG_INKLING_FA4_USE_PIP"  # 0.5.16-0.5.22: "1" routes fa4 through the pip flash-attn-4
DIST_NAMES = {"cutlass_dsl": "nvidia-cutlass-dsl", "quack": "quack-kernels", "fa4": "flash-attn-4"}
_PIP_NAMES = {"cutlass_dsl": "'nvidia-cutlass-dsl[cu13]'", "quack": "quack-kernels", "fa4": "flash-attn-4"}


def _fa4_libraries(cfg, target) -> tuple[tuple[str, ...], str]:
    """(the libraries the fa4 backend imports: its declaration's, plus flash-attn-4 where the environment routes it
    there; where its FlashAttention 4 comes from)."""
    release = sglang_release(target)
    libraries = declared(target, "fa4").libraries
    if "fa4" in libraries:
        return libraries, f"sglang {release} imports flash_attn.cute from flash-attn-4"
    if V0_5_16 <= release < V0_5_23 and cfg.env.get(FA4_PIP_ENV) == "1":
        return (*libraries, "fa4"), f"{FA4_PIP_ENV}=1 routes sglang {release}'s fa4 through flash-attn-4"
    return libraries, f"sglang {release} runs its vendored FA4 (CuTe DSL); flash-attn-4 is not imported by it"


@rule(
    id="install-fa4-library",
    title="The fa4 backend needs a working CUTLASS CuTe DSL and quack-kernels (flash-attn-4 on sglang 0.5.10-0.5.15)",
    engine="sglang",
    versions="sglang>=0.5.9",
    backends=("fa4",),
    stage="runtime",
    needs_software=True,
    prevents="FlashAttention-4 CUTE is not available. Install flash-attn-4 with its CUDA/CUTE dependencies, or run "
    "from a source tree where the vendored FA4 package is importable.",
    source="sglang: python/sglang/kernels/ops/attention/flash_attention_v4.py (0.5.23: imports the vendored "
    "sglang.kernels.ops.attention.flash_attn.cute, which imports cutlass.cute and quack); "
    "sglang/jit_kernel/flash_attention_v4.py (0.5.9: sglang.jit_kernel.flash_attention.cute; 0.5.10-0.5.15: "
    "flash_attn.cute from flash-attn-4; 0.5.16: sglang.jit_kernel.flash_attn.cute); sglang 0.5.23 METADATA "
    "Requires-Dist nvidia-cutlass-dsl[cu13]==4.8.0, quack-kernels==0.6.5",
    docs="""Checks, when fa4 serves any phase, that the FlashAttention 4 the target's SGLang release imports is
installed and imports: the CUTLASS CuTe DSL (nvidia-cutlass-dsl, `cutlass.cute`) and quack-kernels always,
and the pip flash-attn-4 (`flash_attn.cute`) on sglang 0.5.10-0.5.15.

Where FA4 comes from, read in the sglang wheels: 0.5.9 vendors it (sglang.jit_kernel.flash_attention.cute);
0.5.10-0.5.15 import `flash_attn.cute` from flash-attn-4 ("Vendored FlashAttention CUTE is not available
(cannot import flash_attn.cute). Please check your source tree."); 0.5.16 vendors it again
(sglang.jit_kernel.flash_attn.cute, sglang.kernels.ops.attention.flash_attn.cute from 0.5.17), with
SGLANG_INKLING_FA4_USE_PIP=1 routing through flash-attn-4 until 0.5.22; 0.5.23 has only the vendored copy
(flash-attn-4 stays a declared dependency, imported by the QSA sparse decode path, not by fa4). Every copy
imports `cutlass.cute` and `quack`. When the import fails, SGLang starts and loads the weights, and the
first attention call raises the message above. A `cutlass` that imports only from a source tree (its .pth
file not processed, e.g. a PYTHONPATH install) shows here as a failed import, with the probe's diagnosis.""",
    fix_title="pip install 'nvidia-cutlass-dsl[cu13]' quack-kernels (the versions your sglang pins; flash-attn-4 too "
    "on sglang 0.5.10-0.5.15)",
)
def install_fa4_library(cfg, target):
    needed, source = _fa4_libraries(cfg, target)
    states = {key: library_state(target, key) for key in DIST_NAMES}
    found = libraries_found({DIST_NAMES[key]: state for key, state in states.items()})
    names = [DIST_NAMES[key] for key in needed]
    required = f"{', '.join(names[:-1])} and {names[-1]} that import"
    missing = [key for key in needed if states[key].summary == "not installed"]
    broken = [key for key in needed if states[key].healthy is False and key not in missing]
    if missing or broken:
        # a broken import (e.g. a --target / PYTHONPATH install whose .pth never ran) is mended by a reinstall
        # into the interpreter's own site-packages
        fix = [f"pip install {' '.join(_PIP_NAMES[key] for key in missing)}"] if missing else []
        fix += [f"pip install --force-reinstall {' '.join(_PIP_NAMES[key] for key in broken)}"] if broken else []
        return failed(found, required, fix, reason=source)
    if any(states[key].healthy is None for key in needed):
        return unknown(f"import health not checked: {found}")
    return passed(found, required, reason=source)


class LibraryNeed(NamedTuple):
    """A library a backend or flag imports, judged by its probed import health (`library_imports`)."""

    label: str  # as the finding names it
    library: str  # the probed library's key ("" : the one `backend`'s declaration names)
    fix: tuple[str, ...]
    backend: str = ""
    component: str = ""  # a module of the library that must import too, as the probe records it
    component_needed: bool = False  # a report without the component's record is unknown (else it passes)
    when: Term = ALWAYS


def library_imports(need: LibraryNeed, cfg, target) -> Outcome:
    """The one check of every LibraryNeed: installed, importing, and its component importing."""
    if not need.when.holds(cfg, target):
        return skipped(f"applies to {need.when.text()}")
    (key,) = (need.library,) if need.library else declared(target, need.backend).libraries
    state = library_state(target, key)
    required = f"{need.label} that imports" + (f", with {need.component}" if need.component else "")
    found = f"{need.label} {state}"
    if state.healthy is None:
        return unknown(f"import health not checked: {found}")
    if not state.healthy:
        return failed(found, required, need.fix)
    component = (library(target, key).health.details.get("components") or {}).get(need.component)
    if component is None and need.component and need.component_needed:
        return unknown(
            f"the probe report does not say whether {need.component} imports (recorded before it was probed)"
        )
    if component is not None and component.get("status") != HEALTH_OK:
        return failed(f"{found} but {need.component} fails ({component.get('error', '')})", required, need.fix)
    return passed(found, required)


def library_rule(need: LibraryNeed, **metadata: Any) -> None:
    """Registers the rule of one LibraryNeed, judged by `library_imports`."""

    def check(cfg, target, need: LibraryNeed = need) -> Outcome:
        return library_imports(need, cfg, target)

    rule(**metadata, generated=True)(check)


# The backends whose declaration names flashinfer as their kernel library (see the rule's source).
FLASHINFER_BACKENDS = tuple(n for n, b in backend_kb.SGLANG_BACKENDS.items() if "flashinfer" in b.libraries)
FA3_NEED = LibraryNeed("sgl-kernel", "", ("pip install sglang-kernel",), backend="fa3", component="fa3_ops")
FLASHINFER_NEED = LibraryNeed("flashinfer", "flashinfer", ("pip install flashinfer-python",))
MAMBA_NEED = LibraryNeed(
    "flashinfer",
    "flashinfer",
    ("--mamba-backend triton",),
    component="mamba",
    component_needed=True,
    when=Flag("mamba_backend", ("flashinfer",)),
)


library_rule(
    FA3_NEED,
    id="install-fa3-library",
    title="The fa3 backend needs sgl-kernel with its FlashAttention 3 ops",
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    backends=("fa3",),
    stage="init",
    needs_software=True,
    prevents="Can not import sgl_kernel. Please check your installation.",
    source="sglang: python/sglang/srt/layers/attention/flashattention_backend.py (fa_impl_ver 3: "
    "from sgl_kernel.flash_attn import ...); sgl-kernel/python/sgl_kernel/flash_attn.py",
    docs="""Checks, when fa3 serves any phase, that sgl-kernel (distribution sglang-kernel, formerly sgl-kernel) is
installed, imports, and its FA3 ops module `sgl_kernel.flash_attn` (extension flash_ops) imports.

SGLang's fa3 backend calls FA3 only through sgl-kernel; the standalone flash_attn_3 / flashattn-hopper
package is not used by SGLang (it is by other code), so it does not satisfy this rule. A wheel built
for another torch or CUDA fails here with an undefined-symbol or "no kernel image" import error.""",
    fix_title="pip install sglang-kernel matching your sglang (0.4.10 for sglang 0.5.23) and torch build",
)


library_rule(
    FLASHINFER_NEED,
    id="install-flashinfer-library",
    title="FlashInfer and the TRT-LLM / CuTe DSL MLA backends need a working flashinfer",
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    backends=FLASHINFER_BACKENDS,
    stage="runtime",
    needs_software=True,
    reason="SGLang imports flashinfer only when is_flashinfer_available(); without it these backends fail at "
    "their first kernel call (NameError on `flashinfer`), after the weights have loaded.",
    prevents="NameError: name 'flashinfer' is not defined",
    source="sglang: python/sglang/srt/layers/attention/{flashinfer_backend,trtllm_mha_backend,trtllm_mla_backend,"
    "cutedsl_mla_backend}.py (`if is_flashinfer_available(): import flashinfer`); utils/common.py "
    "is_flashinfer_available",
    docs="""Checks, when flashinfer, trtllm_mha, trtllm_mla or cutedsl_mla (tokenspeed_mla) serves any phase,
that flashinfer-python is installed and imports (its flashinfer-cubin / flashinfer-jit-cache pieces must
match its version, which flashinfer checks at import).

The TRT-LLM backends call trtllm-gen kernels through FlashInfer, and cutedsl_mla uses FlashInfer's MLA
helpers; SGLang imports flashinfer only when it is available, so a missing or broken install surfaces at
the first forward. Without flashinfer SGLang's default backends also change (triton instead of flashinfer).""",
    fix_title="pip install flashinfer-python (with flashinfer-cubin of the same version)",
)


library_rule(
    MAMBA_NEED,
    id="install-flashinfer-mamba",
    title="--mamba-backend flashinfer needs FlashInfer's mamba module",
    engine="sglang",
    versions="sglang>=0.5.9",
    stage="startup",
    needs_software=True,
    prevents="FlashInfer mamba module not available, please check the FlashInfer installation.",
    source="sglang: python/sglang/srt/arg_groups/mamba_hook.py, handle_mamba_backend (server_args.py "
    "_handle_mamba_backend before 0.5.19)",
    docs="""Checks, with `--mamba-backend flashinfer`, that flashinfer imports and so does its `flashinfer.mamba`
module (the probe imports it as a component of flashinfer).

SGLang imports the module while resolving its arguments and refuses to start without it; FlashInfer builds
older than its Mamba kernels have no such module.""",
    fix_title="Install a flashinfer-python with flashinfer.mamba, or use --mamba-backend triton",
)


@rule(
    id="install-hpc-ops-library",
    title="The hpc_ops backend needs Tencent's HPC-Ops (the hpc package)",
    engine="sglang",
    versions="sglang>=0.5.17",
    backends=("hpc_ops",),
    stage="init",
    needs_software=True,
    prevents="The hpc_ops attention backend requires the `hpc` package. Install it from "
    "https://github.com/Tencent/hpc-ops",
    source="sglang: python/sglang/srt/layers/attention/hpc_ops_backend.py, has_hpc_ops, HPCOpsAttnBackend.__init__",
    docs="""Checks, when hpc_ops serves any phase, that the `hpc` module of Tencent's HPC-Ops is on the path.

SGLang looks only for the module (find_spec), when the model runner builds the attention backend after the
weights load; the probe finds it without importing it, by its distribution hpc-ops or a source checkout.""",
    fix_title="Build and install HPC-Ops from https://github.com/Tencent/hpc-ops (pip install . in its checkout)",
)
def install_hpc_ops_library(cfg, target):
    probed = library(target, "hpc_ops")
    if probed is None:
        return unknown("the probe report does not list the hpc package (recorded before it was probed)")
    required = "the hpc package (HPC-Ops) on the path"
    if probed.installed or probed.module_path:
        return passed(f"hpc {probed.label if probed.installed else 'found at ' + probed.module_path}", required)
    return failed("no hpc module (hpc-ops not installed)", required)


@rule(
    id="install-kimi-k3-dcp-flashinfer",
    title="Kimi-K3 DCP decoding on cutedsl_mla needs FlashInfer 0.6.17+ (enable_dcp in its MLA decode kernel)",
    engine="sglang",
    versions="sglang>=0.5.17",
    stage="startup",
    needs_software=True,
    needs_model=True,
    prevents="Kimi-K3 DCP with decode_attention_backend='cutedsl_mla' requires FlashInfer 0.6.17 or newer with "
    "trtllm_batch_decode_with_kv_cache_mla exposing enable_dcp.",
    source=f"{backend_kb.KIMI_K3_DCP_SOURCE}, _require_kimi_k3_cutedsl_dcp_support",
    docs="""Checks, for Kimi-K3 with `--dcp-size` > 1 decoding on cutedsl_mla (named, or no decode backend given),
that flashinfer is installed at 0.6.17 or newer.

SGLang inspects FlashInfer's trtllm_batch_decode_with_kv_cache_mla for its `enable_dcp` parameter while resolving
the arguments and refuses to start without it; the probe reads the installed version, the release SGLang names
for that signature (the signature itself is not probed).""",
    fix_title=f"pip install 'flashinfer-python>={backend_kb.KIMI_K3_DCP_FLASHINFER}' (with its flashinfer-cubin)",
)
def install_kimi_k3_dcp_flashinfer(cfg, target):
    architecture = cfg.model.architecture if cfg.model else None
    dcp = cfg.flags.get("dcp_size") or 1
    if architecture != backend_kb.KIMI_K3_ARCHITECTURE or dcp <= 1:
        return skipped("applies to Kimi-K3 with --dcp-size > 1")
    decode = None if cfg.auto_backend else cfg.decode_attention_backend or cfg.attention_backend
    if decode not in (None, "cutedsl_mla"):
        return skipped(f"decode {decode}: SGLang inspects FlashInfer for cutedsl_mla only (model-kimi-k3-dcp)")
    required = f"flashinfer {backend_kb.KIMI_K3_DCP_FLASHINFER} or newer (enable_dcp in its MLA decode kernel)"
    fix = [f"pip install 'flashinfer-python>={backend_kb.KIMI_K3_DCP_FLASHINFER}'"]
    probed = library(target, "flashinfer")
    if probed is None or not probed.installed:
        return failed("flashinfer not installed", required, fix)
    try:
        version = Version(probed.version or "")
    except InvalidVersion:
        return unknown(f"flashinfer version {probed.version!r} unreadable")
    if version.release >= Version(backend_kb.KIMI_K3_DCP_FLASHINFER).release:
        return passed(f"flashinfer {probed.version}", required)
    return failed(f"flashinfer {probed.version}", required, fix)


# --- torch and the GPU ----------------------------------------------------------------------------------------


@rule(
    id="install-no-cuda-gpu",
    title="The machine has a CUDA GPU",
    engine="any",
    versions="torch>=2.0",
    stage="startup",
    needs_software=True,
    prevents="RuntimeError: No CUDA GPUs are available",
    reason="Without an NVIDIA GPU (or its driver / NVML) nothing CUDA-based can start.",
    source="probe: NVML (nvmlDeviceGetCount); torch/cuda/__init__.py _lazy_init",
    docs="""Checks that the probed machine has at least one NVIDIA GPU that NVML can see.

No GPU, no driver, or an NVML that cannot load (e.g. a container started without the NVIDIA runtime)
means every CUDA attention backend fails at start-up. The finding carries NVML's own error.""",
    fix_title="Run on a GPU node; in containers pass --gpus all (NVIDIA Container Toolkit)",
)
def install_no_cuda_gpu(cfg, target):
    if target.cc is not None:
        return passed(f"{target.gpu_count} GPU(s), GPU 0 {gpu(target)}", "a CUDA GPU")
    return failed(
        f"no CUDA GPU ({target.gpu_note or 'NVML reported none'})",
        "an NVIDIA GPU visible to NVML",
        ["docker run --gpus all ..."],
    )


@rule(
    id="install-torch-cpu-only",
    title="torch is a CUDA build",
    engine="any",
    versions="torch>=2.0",
    stage="startup",
    needs_software=True,
    prevents="AssertionError: Torch not compiled with CUDA enabled",
    source="pytorch: torch/cuda/__init__.py _lazy_init; probe: torch.version.cuda read from the install",
    docs="""Checks that the installed torch is a CUDA build (`torch.version.cuda` set).

A CPU wheel (`+cpu`, or the default index on some platforms) imports fine and fails at the first CUDA
call; every serving engine then dies at start-up.""",
    fix_title=f"{INSTALL_CUDA_TORCH} (or cu130)",
)
def install_torch_cpu_only(cfg, target):
    torch = target.facts.torch
    if not torch.installed:
        return failed("torch not installed", "a CUDA build of torch", [INSTALL_CUDA_TORCH])
    if torch.hip:
        return skipped(f"torch {torch.version} is a ROCm build")
    if torch.cuda:
        return passed(f"torch {torch.version} (CUDA {torch.cuda})", "a CUDA build")
    return failed(f"torch {torch.version} without CUDA", "a CUDA build of torch", [INSTALL_CUDA_TORCH])


def _cuda_needed(major: int) -> Optional[Version]:
    """torch CUDA SGLang's platform probes need for this arch (utils/common.py, partial(...cuda_version=))."""
    if major >= 10:
        return Version("12.8")
    if major == 9:
        return Version("12.3")
    return None


@rule(
    id="install-torch-cuda-version",
    title="torch's CUDA build is new enough for the GPU (SM100/SM110/SM120 need 12.8, SM90 12.3)",
    engine="any",
    versions="torch>=2.0",
    stage="startup",
    needs_software=True,
    prevents="TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different backend.",
    source="sglang: python/sglang/srt/utils/common.py _check_cuda_device_version (is_sm100/is_sm120/is_blackwell "
    "cuda_version=(12, 8); is_sm90/is_hopper_with_cuda_12_3 (12, 3))",
    docs="""Checks that `torch.version.cuda` is at least 12.8 on compute capability 10.x/11.x/12.x and at least 12.3
on 9.x.

SGLang's platform probes compare torch's CUDA version as well as the arch: with an older build is_sm100,
is_sm120 and is_blackwell read False on a Blackwell GPU, so SGLang picks other default backends and
refuses trtllm_mha/trtllm_mla/cutedsl_mla, MXFP8 and NVFP4 KV with "only supported on Blackwell" errors
(on Hopper, fa3 defaults and sgl-kernel's FA3 need 12.3). CUDA 12.8 is also the first toolkit that builds
sm_100/sm_120 code at all (see install-torch-arch).""",
    fix_title=f"{INSTALL_CUDA_TORCH} (or cu130)",
)
def install_torch_cuda_version(cfg, target):
    if target.major is None:
        return skipped("no CUDA GPU (rule install-no-cuda-gpu)")
    needed = _cuda_needed(target.major)
    if needed is None:
        return skipped(f"no CUDA minimum beyond torch's own for {gpu(target)}")
    have = cuda_version(target.facts.torch.cuda)
    if have is None:
        return skipped("torch is not a CUDA build (rule install-torch-cpu-only)")
    if have >= needed:
        return passed(f"torch CUDA {have} on {gpu(target)}", f"CUDA >= {needed}")
    return failed(
        f"torch {target.facts.torch.version} (CUDA {have}) on {gpu(target)}",
        f"a torch CUDA >= {needed} build",
        [INSTALL_CUDA_TORCH],
    )


@rule(
    id="install-torch-arch",
    title="torch is compiled for the GPU's architecture",
    engine="any",
    versions="torch>=2.0",
    stage="load",
    needs_software=True,
    prevents="Found GPU0 {name} which is of compute capability (CC) {major}.{minor}. ... Your installed "
    "torch=={version} does not include kernels for this GPU.",
    source="pytorch 2.13: torch/cuda/__init__.py _check_capability, _code_compatible_with_device, DEVICE_REQUIREMENT",
    docs="""Checks that torch's compiled arch list (`torch.cuda.get_arch_list()`) has code that runs on the GPU,
by CUDA's rules with torch's exceptions (rules/knowledge/cuda_arch.py): code built for X.Y runs on X.Z with
Z >= Y, except the integrated GPUs (5.3, 6.2, 7.2, 8.7) and 10.1 (Jetson Thor's CUDA 12.9 name), which need
their exact build; `sm_XYa` runs on X.Y only, `sm_XYf` on the X.Z family, PTX `compute_XY` on X.Y and newer.

Without it every torch CUDA kernel fails with "no kernel image is available for execution on the device".
Published x86_64 wheels: CUDA 12.6 builds stop at sm_90 (no Blackwell), CUDA 12.9/13.0 builds add sm_100
and sm_120; Jetson Thor (11.0) is covered by aarch64 CUDA 13 builds.""",
    fix_title=f"{INSTALL_CUDA_TORCH} (or cu130)",
)
def install_torch_arch(cfg, target):
    if target.cc is None:
        return skipped("no CUDA GPU (rule install-no-cuda-gpu)")
    torch = target.facts.torch
    if not torch.cuda:
        return skipped("torch is not a CUDA build (rule install-torch-cpu-only)")
    if not torch.arch_list:
        return unknown("torch's arch list was not read (import not checked)")
    listed = " ".join(torch.arch_list)
    if arch_list_runs_on(torch.arch_list, target.cc):
        return passed(f"torch arch list {listed} on {gpu(target)}", f"code for compute capability {target.cc[0]}.x")
    return failed(
        f"torch {torch.version} built for {listed}, GPU {gpu(target)}",
        f"a torch build with sm_{target.cc[0]}{target.cc[1]} (or an earlier {target.cc[0]}.x)",
        [INSTALL_CUDA_TORCH],
    )


# --- the kernel libraries' compiled code and the GPU ------------------------------------------------------------

# The kernel library each engine imports at start-up on CUDA (sglang: srt/layers imports sgl_kernel ops at model
# load; vllm: vllm/_custom_ops.py imports vllm._C), judged by rules/kernels/binaries.py.
ENGINE_KERNEL_LIBRARIES = {"sglang": ("sgl_kernel",), "vllm": ("vllm",)}


@rule(
    id="install-kernel-arch",
    title="The engine's kernel library ships code for the GPU's architecture",
    engine="any",
    versions="torch>=2.0",
    stage="load",
    needs_software=True,
    prevents="CUDA error: no kernel image is available for execution on the device",
    source="the installed library's fatbin headers (attn_preflight/probe/binaries.py), else the release's wheel "
    "(rules/kernels/binary_tables/, bench/kernel_tables.py); CUDA C++ Programming Guide, Binary and PTX "
    "Compatibility; rules/kernels/binaries.py PRIMARY_MODULES for the module each import loads",
    docs="""Checks that the compiled module the engine's kernel library loads at import (sgl-kernel's common_ops
for SGLang, vllm/_C for vLLM) ships code that runs on the GPU: SASS of the same major arch and an equal or
lower minor (`sm_XYa` only on X.Y, `sm_XYf` on the X.Z family) or PTX of an equal or lower arch that the
driver can JIT (its PTX ISA no newer than the driver).

The archs come from the probe's reading of the installed files (headers only, before any import); a report
written before the probe read them is judged from the table of the installed release, read from its PyPI
wheel (a version with a local part, "+cu128", is a build off the index the table does not describe: skipped).
Without such code, the library imports and every kernel fails at its first launch (e.g. sgl-kernel up to
0.3.21 built `sm_100a`, which B300's 10.3 cannot run).""",
    fix_title="Install a release of the kernel library built for this GPU (the table names the first)",
)
def install_kernel_arch(cfg, target):
    from attn_preflight.rules.kernels.binaries import (
        driver_cuda_of,
        library_coverage,
        pip_fix,
        release_with_code,
    )

    if target.cc is None:
        return skipped("no CUDA GPU (rule install-no-cuda-gpu)")
    keys = ENGINE_KERNEL_LIBRARIES.get(cfg.engine, ())
    judged, passing = [], []
    for key in keys:
        lib = library(target, key)
        if lib is None or not lib.installed:
            continue
        facts = target.facts
        coverage = library_coverage(lib, target.cc, driver_cuda_of(facts.gpus.cuda_driver_version), facts.host.cpu_arch)
        if coverage is None or coverage.primary_covered is None:  # nothing read, or no module its import loads
            continue
        judged.append(key)
        shown = "; ".join(f"{m}: {s.describe()}" for m, s in sorted(coverage.primary.items()))
        found = f"{lib.label}: {shown} (from {coverage.source}), GPU {gpu(target)}"
        if coverage.primary_covered is False:
            newer = release_with_code(key, target.cc, coverage.version)
            sm = f"sm_{target.cc[0]}{target.cc[1]}"
            fix = [pip_fix(key, newer)] if newer else []
            return failed(found, f"code for {sm} (SASS of {target.cc[0]}.x or PTX the driver can JIT)", fix)
        passing.append(found)
    if not judged:
        return skipped("no engine kernel library whose compiled code was read (probe or table)")
    return passed("; ".join(passing), f"code for compute capability {target.cc[0]}.{target.cc[1]}")
