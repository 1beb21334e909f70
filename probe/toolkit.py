"""The build side of the machine: torch's build (read from its files, never imported here), nvcc and
CUDA_HOME, and CUTLASS C++ headers. Every probe returns a value with a reason, never raises.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
from typing import Optional

from attn_preflight.probe.children import Child
from attn_preflight.probe.facts import CudaToolkitFacts, CutlassHeaderFacts, TorchFacts
from attn_preflight.probe.libraries import DistributionIndex, locate_module

NVCC_TIMEOUT_S = 10.0
DEFAULT_NVCC = "/usr/local/cuda/bin/nvcc"  # where NVIDIA's installers put it, often off PATH
# pip's cuDNN wheels, newest CUDA first; torch's CUDA wheels depend on one of them.
CUDNN_DISTRIBUTIONS = ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11", "nvidia-cudnn")


def torch_facts(installed: Optional[DistributionIndex] = None) -> TorchFacts:
    """torch's version, CUDA/HIP build and cuDNN, from metadata and torch/version.py (parsed, not run)."""
    try:
        installed = installed or DistributionIndex()
        dist = installed.find("torch")
        if dist is None:
            return TorchFacts(installed=False, error=f"torch is not installed for {sys.executable}")
        facts = TorchFacts(installed=True, version=dist.version)
        version_file = locate_module("torch.version")
        if version_file is None:
            facts.error = "torch/version.py not found: the torch install is incomplete"
        else:
            values = read_assignments(version_file, ("__version__", "cuda", "hip"))
            facts.cuda, facts.hip = values.get("cuda"), values.get("hip")
            # Some torch wheels carry the local build tag only in version.py (seen on the H200: metadata
            # "2.11.0", version.py "2.11.0+cu130"); the tag says which CUDA build it is, so keep it.
            build_version = values.get("__version__")
            if build_version and dist.version and build_version.startswith(dist.version + "+"):
                facts.version = build_version
        cudnn = next(filter(None, (installed.find(name) for name in CUDNN_DISTRIBUTIONS)), None)
        facts.cudnn = cudnn.version if cudnn else None
        return facts
    except Exception as err:
        return TorchFacts(error=f"reading torch's build failed: {type(err).__name__}: {err}")


def read_assignments(path: str, names: tuple[str, ...]) -> dict[str, Optional[str]]:
    """Top-level `name = "literal"` (or annotated) assignments of a Python file, without running it."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    found: dict[str, Optional[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names and isinstance(value, ast.Constant):
                found[target.id] = None if value.value is None else str(value.value)
    return found


def cuda_toolkit_facts() -> CudaToolkitFacts:
    return NvccProbe().result()


class NvccProbe:
    """`nvcc --version`, started at once and read when wanted. A hung nvcc (or the wrapper script an nvcc on
    PATH can be) is killed with whatever it started."""

    def __init__(self) -> None:
        self.facts = CudaToolkitFacts(cuda_home=_cuda_home())
        self.child: Optional[Child] = None
        try:
            self.facts.nvcc_path = _find_nvcc(self.facts.cuda_home)
            if self.facts.nvcc_path is None:
                self.facts.error = "nvcc not found on PATH or under CUDA_HOME"
            else:
                self.child = Child([self.facts.nvcc_path, "--version"], NVCC_TIMEOUT_S)
        except Exception as err:
            self.facts.error = f"running nvcc failed: {type(err).__name__}: {err}"

    def result(self) -> CudaToolkitFacts:
        facts = self.facts
        if self.child is None or facts.nvcc_path is None:
            return facts
        answer = self.child.communicate()
        if answer is None:
            facts.error = f"`nvcc --version` did not finish within {NVCC_TIMEOUT_S:g} s"
            return facts
        out, err = answer
        match = re.search(r"release (\d+\.\d+)", out)
        if match:
            facts.nvcc_version = match.group(1)
        else:
            tail = (out + err).strip().splitlines()[-1:] or [f"exit status {self.child.returncode}"]
            facts.error = f"`nvcc --version` printed no release: {tail[0]}"
        if facts.cuda_home is None:
            facts.cuda_home = _toolkit_root(facts.nvcc_path)
        return facts

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def _cuda_home() -> Optional[str]:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    return None


def _toolkit_root(nvcc_path: str) -> Optional[str]:
    """The toolkit nvcc belongs to (what torch's cpp_extension takes as CUDA_HOME), checked for headers:
    an nvcc on PATH can be a wrapper script outside its toolkit."""
    for candidate in (
        os.path.dirname(os.path.dirname(os.path.realpath(nvcc_path))),
        os.path.dirname(os.path.dirname(DEFAULT_NVCC)),
    ):
        if os.path.isfile(os.path.join(candidate, "include", "cuda.h")):
            return candidate
    return None


def _find_nvcc(cuda_home: Optional[str]) -> Optional[str]:
    if cuda_home and os.access(os.path.join(cuda_home, "bin", "nvcc"), os.X_OK):
        return os.path.join(cuda_home, "bin", "nvcc")
    on_path = shutil.which("nvcc")
    if on_path:
        return on_path
    return DEFAULT_NVCC if os.access(DEFAULT_NVCC, os.X_OK) else None


def cutlass_header_facts() -> CutlassHeaderFacts:
    """CUTLASS C++ headers: $CUTLASS_PATH first (what CUTLASS-based builds use), then nvidia-cutlass's copy."""
    try:
        problems = []
        candidates = []
        if os.environ.get("CUTLASS_PATH"):
            candidates.append(("CUTLASS_PATH", os.environ["CUTLASS_PATH"]))
        library = locate_module("cutlass_library")
        if library:
            # NVIDIA/cutlass python/cutlass_library: the wheel bundles the C++ tree under source/.
            candidates.append(
                ("nvidia-cutlass (cutlass_library/source)", os.path.join(os.path.dirname(library), "source"))
            )
        for source, root in candidates:
            header = os.path.join(root, "include", "cutlass", "version.h")
            if not os.path.isfile(header):
                problems.append(f"{source}={root} has no include/cutlass/version.h")
                continue
            version = cutlass_header_version(header)
            if version is None:
                problems.append(f"{header} defines no CUTLASS_MAJOR/MINOR/PATCH")
                continue
            return CutlassHeaderFacts(path=root, version=version, source=source, error="; ".join(problems) or None)
        return CutlassHeaderFacts(
            error="; ".join(problems) or "no CUTLASS headers: CUTLASS_PATH is unset and nvidia-cutlass is not installed"
        )
    except Exception as err:
        return CutlassHeaderFacts(error=f"looking for CUTLASS headers failed: {type(err).__name__}: {err}")


def cutlass_header_version(header: str) -> Optional[str]:
    with open(header, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    matches = [re.search(rf"#define\s+CUTLASS_{part}\s+(\d+)", text) for part in ("MAJOR", "MINOR", "PATCH")]
    parts = [match.group(1) for match in matches if match]
    if len(parts) != len(matches):
        return None
    return ".".join(parts)
