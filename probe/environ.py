"""Environment variables that change which attention backend or kernel build gets used, secrets redacted."""

from __future__ import annotations

import os
import re
from typing import Mapping, Optional

# Prefixes read by the serving engines and kernel libraries when they pick or build kernels.
RELEVANT_PREFIXES = (
    "SGLANG_",
    "SGL_",
    "VLLM_",
    "FLASH_ATTENTION_",
    "FLASHINFER_",
    "CUTE_DSL_",
    "CUTLASS_",
    "TORCH_",
    "PYTORCH_",
    "TORCHINDUCTOR_",
    "CUDA_",
    "CUDNN_",
    "CUBLAS_",
    "NVIDIA_",
    "NCCL_",
    "TRITON_",
    "XFORMERS_",
    "DG_",  # DeepGEMM (DG_JIT_*)
)
RELEVANT_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "CUDA_HOME", "CUDA_PATH")

SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
REDACTED = "***"
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^@/\s]*@")


def is_relevant(name: str) -> bool:
    return name in RELEVANT_NAMES or name.startswith(RELEVANT_PREFIXES)


def redact(name: str, value: str) -> str:
    if any(word in name.upper() for word in SECRET_WORDS):
        return REDACTED
    return _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{REDACTED}@", value)


def relevant_environment(environ: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {name: redact(name, value) for name, value in sorted(environ.items()) if is_relevant(name)}
