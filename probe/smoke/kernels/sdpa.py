"""torch SDPA, each backend forced with torch.nn.attention.sdpa_kernel (flash, efficient, cuDNN, math).

KV heads are repeated to the query heads before the call (enable_gqa is not accepted by every backend in
every torch release); SDPA's is_causal is top-left aligned, the same as FlashAttention's for sq == sk,
which these prefill cases keep. Limits (pytorch/pytorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
see ../shared/research/backends_matrix.md section 5): rules/kernels/limits.py.
"""

from __future__ import annotations

from attn_preflight.probe.smoke.cases import Case, attention_flops
from attn_preflight.probe.smoke.kernels import Kernel

QUICK = Case()


def _build(backend: str):
    def build(case: Case, device: str):
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        from attn_preflight.probe.smoke.reference import Call, Inputs, attention_reference

        q, k, v = Inputs(case, device).dense()
        reference = attention_reference(q, k, v, case)
        qt = q.transpose(1, 2)
        kt = k.repeat_interleave(case.gqa_ratio, dim=2).transpose(1, 2)
        vt = v.repeat_interleave(case.gqa_ratio, dim=2).transpose(1, 2)
        chosen = getattr(SDPBackend, backend)

        def run():
            with sdpa_kernel(chosen):
                return F.scaled_dot_product_attention(qt, kt, vt, is_causal=case.causal)

        return Call(run, reference, attention_flops(case), extract=lambda out: out.transpose(1, 2))

    return build


def _kernel(suffix: str, backend: str, what: str, needs_gpu: bool = True) -> Kernel:
    return Kernel(
        name=f"sdpa-{suffix}",
        family="sdpa",
        title=f"torch SDPA, {what}",
        quick=QUICK,
        build=_build(backend),
        api=f"torch.nn.functional.scaled_dot_product_attention [SDPBackend.{backend}]",
        needs_gpu=needs_gpu,
    )


KERNELS = [
    _kernel("flash", "FLASH_ATTENTION", "flash backend"),
    _kernel("efficient", "EFFICIENT_ATTENTION", "memory-efficient backend"),
    _kernel("cudnn", "CUDNN_ATTENTION", "cuDNN backend"),
    # The math backend is plain torch: it runs on the CPU when there is no GPU (CI runs it there for real).
    _kernel("math", "MATH", "math backend", needs_gpu=False),
]
