"""Fixtures for rules/checks/install.py: variants of a real saved probe report (tests/fixtures/probe-cpu-ci.json).

`facts_file(name)` writes FACTS_VARIANTS[name] applied to that report as a --facts file (once per process,
in a temporary directory) and returns its absolute path. The two real CPU reports are used as they are.
"""

from __future__ import annotations

import atexit
import copy
import json
import shutil
import tempfile
from pathlib import Path

from tests.rule_fixtures import FIXTURES_DIR

BASE_REPORT = FIXTURES_DIR / "probe-cpu-ci.json"
CUDA_129_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]  # torch cu129 x86_64
CUDA_126_ARCHS = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]  # torch cu126 x86_64

GPUS = {
    "H100": {"name": "NVIDIA H100 80GB HBM3", "cc_major": 9, "cc_minor": 0, "memory_total_mib": 81559},
    "B200": {"name": "NVIDIA B200", "cc_major": 10, "cc_minor": 0, "memory_total_mib": 183359},
    "RTX 5090": {"name": "NVIDIA GeForce RTX 5090", "cc_major": 12, "cc_minor": 0, "memory_total_mib": 32607},
    "B300": {"name": "NVIDIA B300 SXM6 AC", "cc_major": 10, "cc_minor": 3, "memory_total_mib": 275040},
}
# sgl_kernel's compiled modules as the probe records them (libraries[].binaries): a build for SM80/SM90 only
SGL_KERNEL_SM90_BUILD = {
    "sgl_kernel/common_ops.abi3.so": {"sass": ["sm_80", "sm_89", "sm_90", "sm_90a"], "ptx": []},
    "sgl_kernel/flash_ops.abi3.so": {"sass": ["sm_80", "sm_86", "sm_90a"], "ptx": []},
}

HEALTHY = {  # key -> (distributions, health details)
    "sglang": ({"sglang": "0.5.23"}, {}),
    "sgl_kernel": (
        {"sglang-kernel": "0.4.10"},
        {"components": {"fa3_ops": {"module": "sgl_kernel.flash_attn", "status": "ok"}}},
    ),
    "flashinfer": (
        {"flashinfer-python": "0.7.2", "flashinfer-cubin": "0.7.2"},
        {"components": {"mamba": {"module": "flashinfer.mamba", "status": "ok"}}},
    ),
    "cutlass_dsl": ({"nvidia-cutlass-dsl": "4.8.0", "nvidia-cutlass-dsl-libs-base": "4.8.0"}, {}),
    "quack": ({"quack-kernels": "0.6.5"}, {}),
    "fa4": ({"flash-attn-4": "4.0.0b36"}, {}),
    "hpc_ops": ({"hpc-ops": "0.1.0.torch291"}, {}),
}


def _machine(
    gpu="H100",
    torch_cuda="12.9",
    arch_list=CUDA_129_ARCHS,
    broken=(),
    missing=(),
    unchecked=False,
    fa3_ops_error=None,
    flashinfer_mamba_error=None,
    flashinfer_version=None,
    gpu_error=None,
    sgl_kernel_version=None,
    sgl_kernel_binaries=None,
) -> dict:
    """A GPU machine with SGLang 0.5.23's stack installed and healthy, then the changes asked for."""
    report = json.loads(BASE_REPORT.read_text())
    if gpu_error:
        report["gpus"] = {**report["gpus"], "devices": [], "error": gpu_error}
    else:
        report["gpus"]["devices"] = [{"index": 0, "uuid": "GPU-00000000-fixture", **GPUS[gpu]}]
        report["gpus"]["driver_version"] = "580.65.06"
        report["gpus"]["cuda_driver_version"] = "13.0"
        report["gpus"]["error"] = None
    torch_version = "2.9.1" + (f"+cu{torch_cuda.replace('.', '')}" if torch_cuda else "+cpu")
    report["torch"].update(version=torch_version, cuda=torch_cuda, arch_list=list(arch_list) if torch_cuda else [])
    report["imports_checked"] = True
    if not any(library["key"] == "hpc_ops" for library in report["libraries"]):  # a report from before it was probed
        absent = copy.deepcopy(next(lib for lib in report["libraries"] if lib["key"] == "quack"))
        report["libraries"].append({**absent, "key": "hpc_ops", "title": "HPC-Ops (Tencent)", "import_name": "hpc"})
    for library in report["libraries"]:
        key = library["key"]
        if key == "torch":
            library["distributions"] = {"torch": torch_version}
            library["version"] = torch_version
        if key not in HEALTHY or key in missing:
            continue
        distributions, details = HEALTHY[key]
        if key == "flashinfer" and flashinfer_version:
            distributions = {name: flashinfer_version for name in distributions}
        if key == "sgl_kernel" and sgl_kernel_version:
            name = "sglang-kernel" if sgl_kernel_version.startswith("0.4") else "sgl-kernel"
            distributions = {name: sgl_kernel_version}
        if key == "sgl_kernel" and sgl_kernel_binaries:
            library["binaries"] = copy.deepcopy(sgl_kernel_binaries)
        library["distributions"] = dict(distributions)
        library["version"] = next(iter(distributions.values()))
        health = {"status": "ok", "module": key, "seconds": 0.5, "details": copy.deepcopy(details)}
        if key in broken:
            health.update(status="error", error="ImportError: libcuda.so.1: cannot open shared object file")
        if unchecked:
            health.update(status="skipped", details={})
        if key == "sgl_kernel" and fa3_ops_error:
            health["details"]["components"]["fa3_ops"] = {
                "module": "sgl_kernel.flash_attn",
                "status": "error",
                "error": fa3_ops_error,
            }
        if key == "flashinfer" and flashinfer_mamba_error:
            health["details"]["components"]["mamba"] = {
                "module": "flashinfer.mamba",
                "status": "error",
                "error": flashinfer_mamba_error,
            }
        library["health"] = {**library["health"], **health}
    if unchecked:
        report["imports_checked"] = False
    return report


FACTS_VARIANTS = {
    "h100-ok": _machine("H100"),
    "b200-ok": _machine("B200"),
    "b200-torch-cu130": _machine("B200", torch_cuda="13.0"),
    "rtx5090-ok": _machine("RTX 5090"),
    "b200-cutlass-dsl-broken": _machine("B200", broken=("cutlass_dsl", "fa4")),
    "b200-no-quack": _machine("B200", missing=("quack",)),
    "b200-no-flash-attn-4": _machine("B200", missing=("fa4",)),
    "b200-no-import-check": _machine("B200", unchecked=True),
    "h100-no-sgl-kernel": _machine("H100", missing=("sgl_kernel",)),
    "h100-no-hpc-ops": _machine("H100", missing=("hpc_ops",)),
    "h100-fa3-ops-broken": _machine("H100", fa3_ops_error="ImportError: undefined symbol: _ZN3c104cuda9SetDeviceEi"),
    "b200-no-flashinfer": _machine("B200", missing=("flashinfer",)),
    "b200-flashinfer-0.6.8": _machine("B200", flashinfer_version="0.6.8"),
    "h100-no-flashinfer-mamba": _machine(
        "H100", flashinfer_mamba_error="ModuleNotFoundError: No module named 'flashinfer.mamba'"
    ),
    "rtx5090-flashinfer-broken": _machine("RTX 5090", broken=("flashinfer",)),
    "b200-torch-cu126": _machine("B200", torch_cuda="12.6", arch_list=CUDA_126_ARCHS),
    "h100-torch-cu122": _machine("H100", torch_cuda="12.2", arch_list=CUDA_126_ARCHS),
    "rtx5090-torch-cu126": _machine("RTX 5090", torch_cuda="12.6", arch_list=CUDA_126_ARCHS),
    "b200-torch-sm90-only": _machine("B200", torch_cuda="12.8", arch_list=["sm_90"]),
    "h100-torch-cpu": _machine("H100", torch_cuda=None),
    "rtx5090-sgl-kernel-sm90-build": _machine("RTX 5090", sgl_kernel_binaries=SGL_KERNEL_SM90_BUILD),
    "b300-sgl-kernel-0.3.21": _machine("B300", sgl_kernel_version="0.3.21"),
    "no-driver": _machine(gpu_error="NVML library not found (libnvidia-ml.so.1): cannot open shared object file"),
}

_ROOT = None


def facts_file(name: str) -> str:
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="attn-preflight-facts-"))
        atexit.register(shutil.rmtree, _ROOT, True)  # the test session's, gone with it
        for variant, report in FACTS_VARIANTS.items():
            (_ROOT / f"{variant}.json").write_text(json.dumps(report, indent=1))
    return str(_ROOT / f"{name}.json")


def on(facts: str, *argv: str, **extra) -> dict:
    """A case judged on a facts variant (or a real report under tests/fixtures/ when it ends in .json)."""
    path = facts if facts.endswith(".json") else facts_file(facts)
    return {"facts": path, "argv": list(argv), **extra}


LLAMA = ("--model", "llama-3.1-8b")
DEEPSEEK = ("--model", "deepseek-v3")
KIMI_K3_MODEL = "tests/fixtures/models/synthetic-kimi-k3"
KIMI_K3_DCP = ["sglang", "serve", "--model-path", KIMI_K3_MODEL, "--tp-size", "8", "--dcp-size", "8"]
MAMBA_FLASHINFER = ["sglang", "serve", "--model-path", "qwen3-next-80b-a3b", "--mamba-backend", "flashinfer"]

FIXTURES = {
    "install-fa4-library": {
        "pass": [
            on("b200-ok", *LLAMA, "--attention-backend", "fa4"),
            # recorded on the H200: flash-attn-4 4.0.0b36, nvidia-cutlass-dsl 4.8.1 and quack import
            on("probe-h200.json", *LLAMA, "--attention-backend", "fa4"),
            # sglang >= 0.5.16 runs its vendored FA4: the pip flash-attn-4 is not needed
            on("b200-no-flash-attn-4", *LLAMA, "--attention-backend", "fa4"),
            on("b200-no-flash-attn-4", *LLAMA, "--attention-backend", "fa4", engine_version=["sglang==0.5.9"]),
        ],
        "fail": [
            on("b200-cutlass-dsl-broken", *LLAMA, "--attention-backend", "fa4"),
            on(
                "b200-no-quack",
                *DEEPSEEK,
                "--prefill-attention-backend",
                "fa4",
                "--decode-attention-backend",
                "trtllm_mla",
            ),
            # recorded on the H200: `import cutlass` fails, nvidia-cutlass-dsl's .pth never ran
            on("probe-h200-nopth.json", *LLAMA, "--attention-backend", "fa4"),
            # sglang 0.5.10-0.5.15 import flash_attn.cute from flash-attn-4
            on("b200-no-flash-attn-4", *LLAMA, "--attention-backend", "fa4", engine_version=["sglang==0.5.15"]),
            # ... as does 0.5.16-0.5.22 with the pip escape hatch
            on(
                "b200-no-flash-attn-4",
                *LLAMA,
                engine_version=["sglang==0.5.22"],
                command=[
                    "env",
                    "SGLANG_INKLING_FA4_USE_PIP=1",
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "fa4",
                ],
            ),
        ],
    },
    "install-fa3-library": {
        "pass": [on("h100-ok", *LLAMA, "--attention-backend", "fa3"), on("h100-ok", *LLAMA)],
        "fail": [
            on("h100-no-sgl-kernel", *LLAMA, "--attention-backend", "fa3"),
            on("h100-fa3-ops-broken", *LLAMA),
            # the oldest release read imports sgl_kernel.flash_attn the same way
            on("h100-no-sgl-kernel", *LLAMA, "--attention-backend", "fa3", engine_version=["sglang==0.5.0rc2"]),
        ],
    },
    "install-hpc-ops-library": {
        "pass": [
            on("h100-ok", *LLAMA, "--attention-backend", "hpc_ops"),
            on("h100-ok", *LLAMA, "--attention-backend", "hpc_ops", engine_version=["sglang==0.5.17"]),
        ],
        "fail": [
            on("h100-no-hpc-ops", *LLAMA, "--attention-backend", "hpc_ops"),
            on("h100-no-hpc-ops", *LLAMA, "--attention-backend", "hpc_ops", engine_version=["sglang==0.5.17"]),
        ],
    },
    "install-flashinfer-library": {
        "pass": [
            on("b200-ok", *DEEPSEEK, "--attention-backend", "trtllm_mla"),
            on("rtx5090-ok", *LLAMA, "--attention-backend", "flashinfer"),
        ],
        "fail": [
            on("b200-no-flashinfer", *LLAMA, "--attention-backend", "trtllm_mha"),
            on("rtx5090-flashinfer-broken", *LLAMA),
            on("b200-no-flashinfer", *LLAMA, "--attention-backend", "flashinfer", engine_version=["sglang==0.5.1"]),
        ],
    },
    "install-flashinfer-mamba": {
        "pass": [
            on("h100-ok", "--model", "qwen3-next-80b-a3b", command=MAMBA_FLASHINFER),
            on("h100-ok", "--model", "qwen3-next-80b-a3b", command=MAMBA_FLASHINFER, engine_version=["sglang==0.5.9"]),
        ],
        "fail": [
            on("h100-no-flashinfer-mamba", "--model", "qwen3-next-80b-a3b", command=MAMBA_FLASHINFER),
            on("b200-no-flashinfer", "--model", "qwen3-next-80b-a3b", command=MAMBA_FLASHINFER),
        ],
    },
    "install-kimi-k3-dcp-flashinfer": {
        "pass": [
            on("b200-ok", "--model", KIMI_K3_MODEL, command=KIMI_K3_DCP),
            on(
                "b200-ok", "--model", KIMI_K3_MODEL, command=[*KIMI_K3_DCP, "--decode-attention-backend", "cutedsl_mla"]
            ),
        ],
        "fail": [
            on("b200-flashinfer-0.6.8", "--model", KIMI_K3_MODEL, command=KIMI_K3_DCP),
            on("b200-no-flashinfer", "--model", KIMI_K3_MODEL, command=KIMI_K3_DCP, engine_version=["sglang==0.5.17"]),
        ],
    },
    "install-no-cuda-gpu": {
        "pass": [on("h100-ok", *LLAMA, "--attention-backend", "fa3")],
        "fail": [on("no-driver", *LLAMA, "--attention-backend", "fa3"), on("probe-cpu-ci.json", *LLAMA)],
    },
    "install-torch-cpu-only": {
        "pass": [on("b200-ok", *LLAMA)],
        "fail": [on("h100-torch-cpu", *LLAMA, "--attention-backend", "fa3"), on("probe-cpu-broken.json", *LLAMA)],
    },
    "install-torch-cuda-version": {
        "pass": [on("b200-ok", *LLAMA), on("h100-ok", *LLAMA)],
        "fail": [
            on("b200-torch-cu126", *LLAMA, "--attention-backend", "triton"),
            on("h100-torch-cu122", *LLAMA, "--attention-backend", "fa3"),
            on("rtx5090-torch-cu126", *LLAMA, "--attention-backend", "flashinfer"),
        ],
    },
    "install-kernel-arch": {
        "pass": [on("b200-ok", *LLAMA), on("h100-ok", *LLAMA), on("rtx5090-ok", *LLAMA)],
        "fail": [
            on("rtx5090-sgl-kernel-sm90-build", *LLAMA, "--attention-backend", "triton"),
            on("b300-sgl-kernel-0.3.21", *LLAMA, "--attention-backend", "triton"),
        ],
    },
    "install-torch-arch": {
        "pass": [on("rtx5090-ok", *LLAMA), on("h100-torch-cu122", *LLAMA)],
        "fail": [
            on("b200-torch-cu126", *LLAMA, "--attention-backend", "triton"),
            on("b200-torch-sm90-only", *LLAMA, "--attention-backend", "triton"),
        ],
    },
}
