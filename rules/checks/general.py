"""Rules about the backend choice itself: platform, removed names, the engine's own default."""
from __future__ import annotations

from rules.checks.common import SGLANG_NEWEST
from rules.engine import failed, passed, rule, skipped, unknown
from rules.knowledge.backends import CHOICES, SGLANG_BACKENDS


@rule(
    id="general-backend-platform",
    title="The attention backend is built for NVIDIA CUDA",
    engine="sglang", versions=SGLANG_NEWEST,
    reason="A ROCm, NPU, XPU or CPU backend on an NVIDIA GPU fails at import or kernel launch, after weights load.",
    source=CHOICES,
    docs="""Checks that each chosen attention backend is one SGLang builds for NVIDIA CUDA GPUs.

ATTENTION_BACKEND_CHOICES mixes platforms: aiter and wave are AMD ROCm, ascend is Huawei NPU, intel_xpu
is Intel GPU, intel_amx is CPU. On an NVIDIA GPU they fail when their kernels are imported or launched.""",
    fix_title="Pick a CUDA backend (fa3, fa4, flashinfer, triton, trtllm_mha, ...)",
)
def general_backend_platform(cfg, target):
    if not cfg.backends:
        return skipped("no attention backend chosen")
    if target.cc is None:
        return unknown("no NVIDIA GPU on the target")
    foreign = sorted(b for b in cfg.backends if SGLANG_BACKENDS[b].platform not in ("cuda", "any"))
    if not foreign:
        return passed(", ".join(sorted(cfg.backends)), "NVIDIA CUDA backends")
    platforms = ", ".join(f"{b} ({SGLANG_BACKENDS[b].platform})" for b in foreign)
    return failed(f"{platforms} on an NVIDIA GPU", "a CUDA attention backend",
                  ["--attention-backend triton"])
