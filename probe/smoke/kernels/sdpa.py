"""torch SDPA, each backend forced with torch.nn.attention.sdpa_kernel (flash, efficient, cuDNN, math).

KV heads are repeated to the query heads before the call (enable_gqa is not accepted by every backend in
every torch release); SDPA's is_causal is top-left aligned, the same as FlashAttention's for sq == sk,
which these prefill cases keep. Limits: pytorch/pytorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp
(see ../shared/research/backends_matrix.md section 5).
"""

from __future__ import annotations

from probe.smoke.cases import Case, attention_flops
from probe.smoke.kernels import Kernel, MachineView, cc_at_least, cc_text

QUICK = Case()
SOURCE = "pytorch/pytorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp"


def _build(backend: str):
    def build(case: Case, device: str):
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        from probe.smoke.reference import Call, Inputs, attention_reference

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


def _half_precision(case: Case) -> bool:
    return case.dtype in ("bf16", "fp16")


def _flash_limits(case: Case, machine: MachineView):
    if not cc_at_least(machine, 8):
        return (
            f"SDPA flash needs sm80 or newer, not {cc_text(machine)} ({SOURCE} check_flash_attention_hardware_support)"
        )
    if not _half_precision(case):
        return f"SDPA flash takes fp16/bf16 only ({SOURCE} check_dtypes_flash_attention)"
    if case.head_dim > 256:
        return f"SDPA flash takes head_dim <= 256 ({SOURCE} check_head_dim_size_flash)"
    return None


def _efficient_limits(case: Case, machine: MachineView):
    if case.dtype == "fp8_e4m3":
        return f"SDPA memory-efficient takes fp16/bf16/fp32 only ({SOURCE} check_mem_efficient_hardware_support)"
    if case.dtype == "bf16" and not cc_at_least(machine, 8):
        return f"SDPA memory-efficient takes bf16 only on sm80 or newer ({SOURCE})"
    return None


def _cudnn_limits(case: Case, machine: MachineView):
    if not cc_at_least(machine, 8):
        return f"cuDNN SDPA needs sm80 or newer, not {cc_text(machine)} ({SOURCE} check_cudnn_hardware_support)"
    if not _half_precision(case):
        return f"cuDNN SDPA takes fp16/bf16 only ({SOURCE})"
    cc = machine.get("cc")
    wide = cc is not None and cc[0] in (9, 10) and (machine.get("cudnn") or 0) > 92200
    if max(case.head_dim, case.dim_v) > (256 if wide else 128):
        return (
            f"cuDNN SDPA takes head_dim <= 128 (<= 256 on SM90/SM100 with cuDNN > 9.22; this is "
            f"{cc_text(machine)} with cuDNN {machine.get('cudnn')}) ({SOURCE} check_cudnn_tensor_shapes)"
        )
    return None


KERNELS = [
    Kernel(
        name="sdpa-flash",
        family="sdpa",
        title="torch SDPA, flash backend",
        quick=QUICK,
        build=_build("FLASH_ATTENTION"),
        api="torch.nn.functional.scaled_dot_product_attention [SDPBackend.FLASH_ATTENTION]",
        limits=_flash_limits,
    ),
    Kernel(
        name="sdpa-efficient",
        family="sdpa",
        title="torch SDPA, memory-efficient backend",
        quick=QUICK,
        build=_build("EFFICIENT_ATTENTION"),
        limits=_efficient_limits,
        api="torch.nn.functional.scaled_dot_product_attention [SDPBackend.EFFICIENT_ATTENTION]",
    ),
    Kernel(
        name="sdpa-cudnn",
        family="sdpa",
        title="torch SDPA, cuDNN backend",
        quick=QUICK,
        build=_build("CUDNN_ATTENTION"),
        api="torch.nn.functional.scaled_dot_product_attention [SDPBackend.CUDNN_ATTENTION]",
        limits=_cudnn_limits,
    ),
    # The math backend is plain torch: it runs on the CPU when there is no GPU (CI runs it there for real).
    Kernel(
        name="sdpa-math",
        family="sdpa",
        title="torch SDPA, math backend",
        quick=QUICK,
        build=_build("MATH"),
        api="torch.nn.functional.scaled_dot_product_attention [SDPBackend.MATH]",
        needs_gpu=False,
    ),
]
