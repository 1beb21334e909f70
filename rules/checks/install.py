"""Installation rules, judged on a live probe or a saved report (--facts); with --gpu they are skipped.

They read the probe's facts through the Target: GPUs (NVML), torch's build (CUDA version, compiled arch
list) and each library's distribution and import health (`libraries[*].health.status`). A library whose
import was not checked (`probe --no-imports`) is reported as unknown, never as healthy.
"""
from __future__ import annotations

from typing import Optional

from packaging.version import InvalidVersion, Version

from rules.checks.common import gpu
from rules.engine import failed, passed, rule, skipped, unknown, warned

HEALTH_OK = "ok"
UNCHECKED = ("skipped",)


def _library(target, key: str):
    return target.facts.library(key) if target.facts is not None else None


def _state(target, key: str) -> tuple[Optional[bool], str]:
    """(healthy, what was found) for a library: True, False, or None when its import was not checked."""
    library = _library(target, key)
    if library is None or not library.installed:
        return False, "not installed"
    version = f" {library.version}" if library.version else ""
    status = library.health.status
    if status == HEALTH_OK:
        return True, f"{version.strip() or 'installed'}, imports"
    if status in UNCHECKED or not target.facts.imports_checked:
        return None, f"installed{version}, import not checked"
    detail = "; ".join(part for part in (library.health.error, library.health.diagnosis) if part)
    return False, f"installed{version} but its import {status}" + (f" ({detail})" if detail else "")


# --- attention libraries per backend ------------------------------------------------------------------------

@rule(
    id="install-fa4-library",
    title="The fa4 backend needs a working CUTLASS CuTe DSL (and quack-kernels)",
    engine="sglang", versions="sglang>=0.5.20", stage="runtime", needs_software=True,
    prevents="FlashAttention-4 CUTE is not available. Install flash-attn-4 with its CUDA/CUTE dependencies, or run "
             "from a source tree where the vendored FA4 package is importable.",
    source="sglang: python/sglang/kernels/ops/attention/flash_attention_v4.py (imports the vendored "
           "sglang.kernels.ops.attention.flash_attn.cute); sglang 0.5.23 METADATA Requires-Dist "
           "nvidia-cutlass-dsl[cu13]==4.8.0, quack-kernels==0.6.5, flash-attn-4>=4.0.0b18",
    docs="""Checks, when fa4 serves any phase, that the CUTLASS CuTe DSL (nvidia-cutlass-dsl, `cutlass.cute`) and
quack-kernels are installed and import, and that flash-attn-4, when installed, imports too.

SGLang's fa4 backend runs its vendored copy of FlashAttention 4 (sglang.kernels.ops.attention.flash_attn.cute),
which imports `cutlass.cute` and `quack`; when that import fails, the first attention call raises the
message above, after the weights have loaded. The pip flash-attn-4 package is a declared dependency
(SGLANG_INKLING_FA4_USE_PIP=1 routes Inkling through it); a missing one is reported as a warning. A
`cutlass` that imports only from a source tree (its .pth file not processed) shows here as a failed
import.""",
    fix_title="pip install 'nvidia-cutlass-dsl[cu13]' quack-kernels flash-attn-4 (the versions your sglang pins)",
)
def install_fa4_library(cfg, target):
    if "fa4" not in cfg.backends:
        return skipped("applies to the fa4 backend")
    states = {key: _state(target, key) for key in ("cutlass_dsl", "quack", "fa4")}
    broken = [(k, s) for k, (ok, s) in states.items() if ok is False and not (k == "fa4" and s == "not installed")]
    found = "; ".join(f"{name} {states[key][1]}" for key, name in
                      (("cutlass_dsl", "nvidia-cutlass-dsl"), ("quack", "quack-kernels"), ("fa4", "flash-attn-4")))
    required = "nvidia-cutlass-dsl and quack-kernels that import (flash-attn-4 too, when installed)"
    fix = ["pip install 'nvidia-cutlass-dsl[cu13]' quack-kernels flash-attn-4"]
    if broken:
        return failed(found, required, fix)
    if any(ok is None for ok, _ in states.values()):
        return unknown(f"import health not checked: {found}")
    if states["fa4"][1] == "not installed":
        return warned(found, "flash-attn-4 installed (a declared sglang dependency)", ["pip install flash-attn-4"])
    return passed(found, required)


@rule(
    id="install-fa3-library",
    title="The fa3 backend needs sgl-kernel with its FlashAttention 3 ops",
    engine="sglang", versions="sglang>=0.5.5", stage="init", needs_software=True,
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
def install_fa3_library(cfg, target):
    if "fa3" not in cfg.backends:
        return skipped("applies to the fa3 backend")
    ok, found = _state(target, "sgl_kernel")
    if ok:
        library = _library(target, "sgl_kernel")
        component = (library.health.details.get("components") or {}).get("fa3_ops")
        if component is not None and component.get("status") != HEALTH_OK:
            ok, found = False, f"sgl-kernel imports but sgl_kernel.flash_attn fails ({component.get('error', '')})"
        else:
            found = f"sgl-kernel {found}"
    else:
        found = f"sgl-kernel {found}"
    required = "sgl-kernel whose sgl_kernel.flash_attn imports"
    if ok is None:
        return unknown(f"import health not checked: {found}")
    if ok:
        return passed(found, required)
    return failed(found, required, ["pip install sglang-kernel"])


FLASHINFER_BACKENDS = ("flashinfer", "trtllm_mha", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla")


@rule(
    id="install-flashinfer-library",
    title="FlashInfer and the TRT-LLM / CuTe DSL MLA backends need a working flashinfer",
    engine="sglang", versions="sglang>=0.5.5", stage="runtime", needs_software=True,
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
def install_flashinfer_library(cfg, target):
    used = sorted(cfg.backends & set(FLASHINFER_BACKENDS))
    if not used:
        return skipped("applies to flashinfer / trtllm_mha / trtllm_mla / cutedsl_mla")
    ok, found = _state(target, "flashinfer")
    found = f"flashinfer {found} (for {', '.join(used)})"
    if ok is None:
        return unknown(f"import health not checked: {found}")
    if ok:
        return passed(found, "flashinfer that imports")
    return failed(found, "flashinfer-python installed and importable", ["pip install flashinfer-python"])


# --- torch and the GPU ----------------------------------------------------------------------------------------

def _cuda_version(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


@rule(
    id="install-no-cuda-gpu",
    title="The machine has a CUDA GPU",
    engine="any", versions="torch>=2.0", stage="startup", needs_software=True,
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
    return failed(f"no CUDA GPU ({target.gpu_note or 'NVML reported none'})", "an NVIDIA GPU visible to NVML",
                  ["docker run --gpus all ..."])


@rule(
    id="install-torch-cpu-only",
    title="torch is a CUDA build",
    engine="any", versions="torch>=2.0", stage="startup", needs_software=True,
    prevents="AssertionError: Torch not compiled with CUDA enabled",
    source="pytorch: torch/cuda/__init__.py _lazy_init; probe: torch.version.cuda read from the install",
    docs="""Checks that the installed torch is a CUDA build (`torch.version.cuda` set).

A CPU wheel (`+cpu`, or the default index on some platforms) imports fine and fails at the first CUDA
call; every serving engine then dies at start-up.""",
    fix_title="pip install torch --index-url https://download.pytorch.org/whl/cu129 (or cu130)",
)
def install_torch_cpu_only(cfg, target):
    torch = target.facts.torch
    if not torch.installed:
        return failed("torch not installed", "a CUDA build of torch",
                      ["pip install torch --index-url https://download.pytorch.org/whl/cu129"])
    if torch.hip:
        return skipped(f"torch {torch.version} is a ROCm build")
    if torch.cuda:
        return passed(f"torch {torch.version} (CUDA {torch.cuda})", "a CUDA build")
    return failed(f"torch {torch.version} without CUDA", "a CUDA build of torch",
                  ["pip install torch --index-url https://download.pytorch.org/whl/cu129"])


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
    engine="any", versions="torch>=2.0", stage="startup", needs_software=True,
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
    fix_title="pip install torch --index-url https://download.pytorch.org/whl/cu129 (or cu130)",
)
def install_torch_cuda_version(cfg, target):
    if target.major is None:
        return skipped("no CUDA GPU (rule install-no-cuda-gpu)")
    needed = _cuda_needed(target.major)
    if needed is None:
        return skipped(f"no CUDA minimum beyond torch's own for {gpu(target)}")
    have = _cuda_version(target.facts.torch.cuda)
    if have is None:
        return skipped("torch is not a CUDA build (rule install-torch-cpu-only)")
    if have >= needed:
        return passed(f"torch CUDA {have} on {gpu(target)}", f"CUDA >= {needed}")
    return failed(f"torch {target.facts.torch.version} (CUDA {have}) on {gpu(target)}", f"a torch CUDA >= {needed} build",
                  ["pip install torch --index-url https://download.pytorch.org/whl/cu129"])


def _code_runs_on(code: int, device: int) -> bool:
    """torch 2.13 torch/cuda/__init__.py DEVICE_REQUIREMENT: which device CCs run code built for `code`.

    Code runs on later minors of its own major, except the integrated parts (5.3, 6.2, 7.2, 8.7) which need
    their exact build, and 10.1 (Thor under CUDA 12.9) which runs only on 10.1 and 11.0."""
    if code in (53, 62, 72, 87):
        return device == code
    if code == 101:
        return device in (101, 110)
    if device in (53, 62, 72, 87) or (device == 101 and code == 100):
        return False
    return device // 10 == code // 10 and device % 10 >= code % 10


def _arch_code(arch: str) -> Optional[int]:
    """'sm_90a' / 'compute_120' -> 90 / 120 (torch's _extract_arch_version)."""
    try:
        return int(arch.split("_", 1)[1].removesuffix("a").removesuffix("f"))
    except (IndexError, ValueError):
        return None


@rule(
    id="install-torch-arch",
    title="torch is compiled for the GPU's architecture",
    engine="any", versions="torch>=2.0", stage="load", needs_software=True,
    prevents="Found GPU0 {name} which is of compute capability (CC) {major}.{minor}. ... Your installed "
             "torch=={version} does not include kernels for this GPU.",
    source="pytorch 2.13: torch/cuda/__init__.py _check_capability, _code_compatible_with_device, DEVICE_REQUIREMENT",
    docs="""Checks that torch's compiled arch list (`torch.cuda.get_arch_list()`) has code that runs on the GPU,
by torch's own rule: code built for X.Y runs on X.Z with Z >= Y, except the integrated GPUs (5.3, 6.2, 7.2,
8.7) and 10.1 (Jetson Thor's CUDA 12.9 name), which need their exact build.

Without it every torch CUDA kernel fails with "no kernel image is available for execution on the device".
Published x86_64 wheels: CUDA 12.6 builds stop at sm_90 (no Blackwell), CUDA 12.9/13.0 builds add sm_100
and sm_120; Jetson Thor (11.0) is covered by aarch64 CUDA 13 builds.""",
    fix_title="pip install torch --index-url https://download.pytorch.org/whl/cu129 (or cu130)",
)
def install_torch_arch(cfg, target):
    if target.cc is None:
        return skipped("no CUDA GPU (rule install-no-cuda-gpu)")
    torch = target.facts.torch
    if not torch.cuda:
        return skipped("torch is not a CUDA build (rule install-torch-cpu-only)")
    if not torch.arch_list:
        return unknown("torch's arch list was not read (import not checked)")
    device = target.arch
    codes = [c for c in (_arch_code(a) for a in torch.arch_list) if c is not None]
    listed = " ".join(torch.arch_list)
    if any(_code_runs_on(code, device) for code in codes):
        return passed(f"torch arch list {listed} on {gpu(target)}", f"code for compute capability {target.cc[0]}.x")
    return failed(f"torch {torch.version} built for {listed}, GPU {gpu(target)}",
                  f"a torch build with sm_{target.cc[0]}{target.cc[1]} (or an earlier {target.cc[0]}.x)",
                  ["pip install torch --index-url https://download.pytorch.org/whl/cu129"])
