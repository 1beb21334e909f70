"""What a failed import check means and what to do, naming both sides ("built against a different torch than
the installed 2.11.0+cu130"): judged from the recorded error text and the facts beside it, when a report is
rendered or checked, so an old report gets today's diagnosis.
"""

from __future__ import annotations

import posixpath
import re
from typing import Optional

from attn_preflight.probe.facts import (
    HEALTH_CRASHED,
    HEALTH_ERROR,
    HEALTH_OK,
    HEALTH_TIMEOUT,
    Facts,
    ImportHealth,
    LibraryFacts,
)

COMPONENT_NOTE = "component "

# Itanium-mangled names in torch's namespaces: functions (_ZN3c10...), const methods (_ZNK2at...),
# typeinfo / vtables (_ZTIN5torch...).
_TORCH_SYMBOL = re.compile(r"^_Z(?:T[ISV])?N?K?(?:3c10|2at|5torch|6caffe2)")
_CUDA_LIBRARY = re.compile(
    r"^lib(cudart|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|cudnn\w*|nccl|nvJitLink|cupti|nvToolsExt)"
    r"\.so\.(\d+)"
)


def diagnose(lib: LibraryFacts, facts: Facts) -> Optional[str]:
    """What a failed import check means and what to do, naming both sides where the facts allow."""
    health = lib.health
    who = lib.label
    if health.status == HEALTH_TIMEOUT:
        where = f" (it was at {health.causes[-1]})" if health.causes else ""
        return (
            f"{who}: the import hung{where}: it may be waiting on a lock, a network filesystem, a GPU or "
            f"a JIT build; see where with `python -X faulthandler -c 'import {health.module}'`, or raise "
            f"--timeout"
        )
    if health.status == HEALTH_CRASHED:
        return _crash_diagnosis(who, health, facts)
    if health.status != HEALTH_ERROR:
        return None
    return error_diagnosis(
        who, [health.error or ""] + list(health.causes), lib, facts, health.details.get("missing_module")
    )


def _torch_side(facts: Facts) -> str:
    if not facts.torch.installed:
        return "torch, which is not installed here"
    return f"the installed torch {facts.torch.version}"


def _crash_diagnosis(who: str, health: ImportHealth, facts: Facts) -> str:
    error = health.error or ""
    where = next((f" at {c}" for c in health.causes if c.startswith("File")), "")
    if "SIGKILL" in error:
        return (
            f"{who}: the import was killed by SIGKILL{where}, most likely by the out-of-memory killer (check `dmesg`)"
        )
    if "SIGILL" in error:
        return (
            f"{who}: illegal instruction while loading{where}: a binary built for a newer CPU than this "
            f"one ({facts.host.cpu_arch}); install a build for this CPU"
        )
    return (
        f"{who}: the import was {error}{where}: a native extension crashed while loading, usually one built "
        f"against a different torch/CUDA/Python than {_torch_side(facts)} "
        f"(Python {facts.host.python_version}); reinstall a build for them, and see where with "
        f"`python -X faulthandler -c 'import {health.module}'`"
    )


def error_diagnosis(
    who: str, texts: list[str], lib: LibraryFacts, facts: Facts, missing: Optional[dict] = None
) -> Optional[str]:
    """Diagnosis of an exception chain (`texts`, outermost first); the innermost cause usually says most."""
    text = "\n".join(texts)
    symbol = re.search(r"(?:([^\s:]+\.so[^\s:]*): )?undefined symbol: (\S+)", text)
    if symbol:
        return _undefined_symbol(who, symbol.group(1), symbol.group(2), facts)
    missing_lib = re.search(r"(lib[\w+.-]+\.so(?:\.[\d.]+)?): cannot open shared object file", text)
    if missing_lib:
        return _missing_shared_library(who, missing_lib.group(1), facts)
    if re.search(
        r"driver version is insufficient|driver on your system is too old|InsufficientDriver|"
        r"CUDA_ERROR_COMPAT_NOT_SUPPORTED|forward compatibility was attempted",
        text,
        re.I,
    ):
        driver = facts.gpus.driver_version or "unknown"
        supports = facts.gpus.cuda_driver_version or "unknown"
        return (
            f"{who}: the NVIDIA driver {driver} (supports CUDA up to {supports}) is older than the CUDA this "
            f"build needs (torch is built for CUDA {facts.torch.cuda or 'unknown'}); upgrade the driver or "
            f"install builds for CUDA {supports}"
        )
    glibc = re.search(r"version `((GLIBCXX|GLIBC|CXXABI)_[\d.]+)' not found", text)
    if glibc:
        library = "libstdc++" if glibc.group(2) != "GLIBC" else "glibc"
        return (
            f"{who} needs {glibc.group(1)} from {library}, newer than this system's; use a newer base image "
            f"or put a newer {library} first on LD_LIBRARY_PATH (e.g. conda's)"
        )
    missing_name = re.search(r"No module named '([\w.]+)'", text)
    if missing_name:
        return _missing_module(who, missing_name.group(1), lib, facts, missing if isinstance(missing, dict) else {})
    if re.search(r"does not match flashinfer version|flashinfer-(cubin|jit-cache).*version", text):
        pieces = ", ".join(f"{n} {v}" for n, v in lib.distributions.items())
        return (
            f"{who}: FlashInfer's pieces have different versions ({pieces}); install matching versions "
            f"(or set FLASHINFER_DISABLE_VERSION_CHECK=1 at your own risk)"
        )
    if "GPUModuleOp" in text:
        return (
            f"{who}: nvidia-cutlass-dsl-libs-base and -libs-cu13 were installed over each other "
            f"(vLLM #40082); reinstall nvidia-cutlass-dsl with only the libs piece for your CUDA"
        )
    return None


def _undefined_symbol(who: str, shared_object: Optional[str], symbol: str, facts: Facts) -> str:
    where = f"{posixpath.basename(shared_object)} needs " if shared_object else "needs "
    if _TORCH_SYMBOL.search(symbol) or re.search(r"\b(c10|at|torch)::", symbol):
        fix = "reinstall a build of it for that torch"
        if facts.torch.installed and facts.torch.version:
            release = facts.torch.version.split("+")[0].rsplit(".", 1)[0]
            cuda = f", CUDA {facts.torch.cuda}" if facts.torch.cuda else ""
            fix = f"reinstall a build of it for torch {release}{cuda} (or build it from source against it)"
        return f"{who}: {where}torch symbol {symbol} → built against a different torch than {_torch_side(facts)}; {fix}"
    if symbol.startswith(("Py", "_Py")):
        return (
            f"{who}: {where}Python symbol {symbol} → built for a different Python than "
            f"{facts.host.python_version}; install the build for this Python"
        )
    if re.search(r"cuda|cublas|cudnn|nccl|nvrtc|cufft|curand|cusparse", symbol, re.I):
        return (
            f"{who}: {where}CUDA symbol {symbol} → built against a different CUDA than torch's "
            f"{facts.torch.cuda or 'CPU-only build'}; install the build for that CUDA"
        )
    return (
        f"{who}: {where}symbol {symbol} that no loaded library provides → built against different "
        f"versions of its dependencies than installed here ({_torch_side(facts)}); reinstall a matching build"
    )


def _missing_shared_library(who: str, library: str, facts: Facts) -> str:
    cuda = _CUDA_LIBRARY.match(library)
    if library.startswith("libcuda.so"):
        return (
            f"{who}: {library} (the NVIDIA driver's CUDA library) is not found: no driver here, or it is "
            f"not mounted into this container ({facts.gpus.error or 'NVML sees the driver'})"
        )
    if cuda:
        major = cuda.group(2)
        torch_cuda = facts.torch.cuda
        if torch_cuda and torch_cuda.split(".")[0] != major:
            return (
                f"{who}: {library} is missing → built for CUDA {major}, but torch here is built for CUDA "
                f"{torch_cuda} and no CUDA {major} runtime is installed; install its build for CUDA "
                f"{torch_cuda.split('.')[0]}"
            )
        return (
            f"{who}: {library} (CUDA {major}) is not on the loader path; torch is built for CUDA "
            f"{torch_cuda or 'nothing (CPU-only build)'}; install the matching nvidia-*-cu{major} wheels or "
            f"add the CUDA {major} libraries to LD_LIBRARY_PATH"
        )
    if re.match(r"lib(c10|torch)\w*\.so", library):
        return (
            f"{who}: {library} (part of torch) is not found: the extension was loaded without torch "
            f"({_torch_side(facts)})"
        )
    return (
        f"{who}: needs {library}, which is not on the loader path "
        f"(LD_LIBRARY_PATH={facts.environment.get('LD_LIBRARY_PATH', '')!r})"
    )


def _missing_module(who: str, module: str, lib: LibraryFacts, facts: Facts, missing: dict) -> str:
    """`missing` is what the probe found installed that would provide the module (attn_preflight.probe.health.missing_module_facts)."""
    top = module.split(".")[0]
    pth = _recorded_pth(missing.get("pth"))
    if pth:
        if pth.get("pth_missing"):
            why = f"its .pth file {pth['pth_path']} is missing (a pip upgrade can delete it: NVIDIA/cutlass#3001)"
        else:
            why = (
                f"its .pth file ({pth['pth']}) was not processed (installed with --target / PYTHONPATH: Python "
                f"runs .pth files only in site-packages)"
            )
        adds = pth["adds"]
        return (
            f"No module named {module} while {pth['distribution']} {pth['version']} is installed → {why}; add "
            f"{adds} to sys.path, e.g. export PYTHONPATH={adds}:$PYTHONPATH"
        )
    own_top = (lib.import_name or "").split(".")[0]
    if top == own_top and lib.installed:
        return (
            f"{who} is installed but its module {module} is not importable (files missing, or a "
            f"partial install); reinstall it"
        )
    recorded = missing.get("providers")
    providers = [p for p in recorded if isinstance(p, str) and p] if isinstance(recorded, list) else []
    if providers:
        provider = providers[0]
        return (
            f"{who} needs module {module}; {provider} provides it but it is not importable here (a broken "
            f"install); reinstall {provider.split()[0]}"
        )
    return f"{who} needs module {module}, which is not installed (a missing dependency): install it"


_PTH_KEYS = ("distribution", "version", "pth", "pth_path", "adds")


def _recorded_pth(pth: object) -> Optional[dict]:
    """The .pth fact as attn_preflight.probe.health.pth_facts records it, or None when a (hand-edited, old) report lacks it."""
    if isinstance(pth, dict) and all(isinstance(pth.get(key), str) for key in _PTH_KEYS):
        return pth
    return None


def component_notes(lib: LibraryFacts, facts: Facts) -> list[str]:
    """'component fa3_ops (sgl_kernel.flash_attn) does not load: <error> → <diagnosis>' for each optional part of
    a library whose import failed while the library itself loads."""
    notes = []
    components = lib.health.details.get("components")
    for name, part in components.items() if isinstance(components, dict) else ():
        if not isinstance(part, dict) or part.get("status") == HEALTH_OK:
            continue
        causes = part.get("causes")
        texts = [str(part.get("error") or "")] + ([str(c) for c in causes] if isinstance(causes, list) else [])
        why = error_diagnosis(f"{lib.title} {name}", texts, lib, facts, part.get("missing_module"))
        notes.append(
            f"{COMPONENT_NOTE}{name} ({part.get('module')}) does not load: {texts[0]}" + (f" → {why}" if why else "")
        )
    return notes
