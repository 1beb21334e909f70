"""smoke: run each kernel once, isolated in its own process, against an fp32 reference.

`attn-preflight smoke` uses `plan` + `Runner` (runner.py). `check --smoke` uses `run_for_shape`: the chosen
attention backend's kernels at a model's real shapes, as a SmokeReport (results.py) to turn into findings.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping, Optional

from attn_preflight.probe.smoke.cases import DTYPES, Case
from attn_preflight.probe.smoke.kernels import Kernel, registry
from attn_preflight.probe.smoke.results import SmokeReport
from attn_preflight.probe.smoke.runner import DEFAULT_TIMEOUT_S, Progress, Runner

# Serving engines' --attention-backend values -> the kernels that backend calls. SGLang's "fa3" runs
# sgl-kernel's FA3 build (sgl_kernel.flash_attn), "fa4" runs flash_attn.cute (dense/varlen prefill, paged
# decode), "flashinfer" its prefill and paged decode, "flashmla" FlashMLA's decode, "torch_native" torch SDPA.
BACKEND_KERNELS: dict[str, tuple[str, ...]] = {
    "fa3": ("sgl-fa3-kvcache", "fa3-dense"),
    "fa4": ("fa4-dense", "fa4-paged"),
    "flashinfer": ("flashinfer-prefill", "flashinfer-decode"),
    "flashmla": ("flashmla-decode",),
    "torch_native": ("sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "sdpa-math"),
    "flash_attn": ("fa2-dense", "fa2-kvcache"),  # vLLM's FLASH_ATTN on an upstream flash-attn install
    "fla": ("fla-gdn-chunk", "fla-gdn-recurrent"),  # a hybrid model's GDN layers (check --smoke adds them)
}


@dataclass(frozen=True)
class ModelShape:
    """What a model puts through attention on one GPU (heads already divided by tensor parallelism)."""

    head_dim: int
    heads_q: int
    heads_kv: int
    head_dim_v: Optional[int] = None  # None: head_dim (MLA: 576 / 512)
    dtype: str = "bf16"  # the model's activation dtype: one of cases.DTYPES
    kv_dtype: Optional[str] = None  # the KV cache's; None ("auto"): dtype
    softcap: float = 0.0  # attention logit softcap (Gemma-2, Grok); 0: none
    window_left: Optional[int] = None  # sliding window (Mistral, Gemma); None: none
    page_size: Optional[int] = None  # the engine's --page-size; None: each kernel's own default
    sinks: bool = False  # learnable attention sinks (gpt-oss)
    score_mod: Optional[str] = None  # a custom score_mod, as one of cases.SCORE_MODS standing in for the model's
    qv: bool = False  # absorbed-MLA decode through a separate qv input (FA4)

    def case_fields(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def kernels_for_backend(backend: str) -> list[Kernel]:
    """The kernels an attention backend runs; KeyError for a backend smoke has no kernel for."""
    kernels = registry()
    return [kernels[name] for name in BACKEND_KERNELS[backend]]


def shape_cases(backend: str, shape: ModelShape) -> list[tuple[Kernel, list[Case]]]:
    """Each of the backend's kernels at the model's shape (ValueError for a shape no kernel can take)."""
    if shape.dtype not in DTYPES or (shape.kv_dtype is not None and shape.kv_dtype not in DTYPES):
        raise ValueError(f"dtypes must be among {', '.join(DTYPES)}, got {shape.dtype} / {shape.kv_dtype}")
    return [(kernel, [kernel.with_shape(**shape.case_fields())]) for kernel in kernels_for_backend(backend)]


def run_for_shape(
    backend: str,
    shape: ModelShape,
    timeout: float = DEFAULT_TIMEOUT_S,
    progress: Optional[Progress] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> SmokeReport:
    """Run `backend`'s kernels at `shape` on this machine, one isolated worker each; the report's level is
    "shape". Per result: status ok / wrong / error / timeout / crashed / skipped (skip_basis says whether the
    machine lacks the library or GPU, or the kernel's API cannot express the shape), as it happened: whether an
    error confirms a documented limit is judged where the report is shown (attn_preflight/smoke_judged.py).
    KeyError: unknown backend; ValueError: bad shape."""
    return Runner(timeout=timeout, progress=progress, environ=environ).run(shape_cases(backend, shape), level="shape")
