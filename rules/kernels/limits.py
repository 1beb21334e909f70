"""The documented limits of the kernels `attn-preflight smoke` calls, each with its source: knowledge, read when a
smoke result is judged (rules/core/smoke.py), never while the kernels run.

One pure function per kernel family (torch SDPA: per forced backend), keyed by the smoke kernel's family or
name (probe/smoke/kernels/*.py declares the kernels and their APIs; this module declares what their libraries
say they cannot do). Each takes the case's fields (a attn_preflight.probe.smoke.cases.Case, read through `CaseFields`) and the
machine the kernel ran on, and returns the limit the case crosses there, with its source, or None.

FA4's facts are rules/engines/sglang/capabilities.py's FA4 table (the same facts the fa4 rules read): the smoke kernels
call the flash-attn-4 4.0.0b36 wheel, SGLang its vendored copy; where the two differ the table has both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Protocol

from attn_preflight.rules.engines.sglang.capabilities import (
    FA4_ARCHS,
    FA4_FP8_ARCHS,
    FA4_WHEEL,
    FA4_WHEEL_HEAD_DIMS,
    FA4_WHEEL_PAGED_KV_ARCHS,
)


class CaseFields(Protocol):
    """What the limits read of a smoke case (attn_preflight.probe.smoke.cases.Case)."""

    @property
    def dtype(self) -> str: ...

    @property
    def kv_storage(self) -> str: ...

    @property
    def head_dim(self) -> int: ...

    @property
    def dim_v(self) -> int: ...

    @property
    def heads_kv(self) -> int: ...

    @property
    def page_size(self) -> Optional[int]: ...

    @property
    def softcap(self) -> float: ...

    @property
    def sinks(self) -> bool: ...

    @property
    def score_mod(self) -> Optional[str]: ...

    @property
    def qv(self) -> bool: ...


@dataclass(frozen=True)
class MachineView:
    """The machine a smoke run's kernels ran on, as its worker saw it (SmokeReport.machine)."""

    cc: Optional[tuple[int, int]] = None  # torch device 0's compute capability; None: not known (no CUDA)
    cudnn: Optional[int] = None  # torch.backends.cudnn.version(), e.g. 91900

    @classmethod
    def of(cls, capability: Optional[str], cudnn: Optional[int]) -> MachineView:
        """From a smoke report's machine summary: device_capability "9.0" and cudnn_version (a capability that is
        not "major.minor", as in a hand-edited report, is not known)."""
        major, _, minor = (capability or "").partition(".")
        known = major.isdigit() and (minor or "0").isdigit()
        return cls(cc=(int(major), int(minor or 0)) if known else None, cudnn=cudnn)


Limit = Callable[[CaseFields, MachineView], Optional[str]]


def cc_at_least(machine: MachineView, major: int, minor: int = 0) -> bool:
    """Whether the machine is at least `major.minor`; True when its capability is not known."""
    return machine.cc is None or tuple(machine.cc) >= (major, minor)


def cc_text(machine: MachineView) -> str:
    cc = machine.cc
    return f"sm_{cc[0]}{cc[1]}" if cc else "this machine"


# -- FlashAttention 2 ------------------------------------------------------------------------------------------------
FA2_SOURCE = "Dao-AILab/flash-attention csrc/flash_attn/flash_api.cpp"


def fa2(case: CaseFields, machine: MachineView) -> Optional[str]:
    """flash_api.cpp (v2.8.3): "FlashAttention only supports Ampere GPUs or newer.", "FlashAttention only support
    fp16 and bf16 data type", "FlashAttention forward only supports head dimension at most 256", "Paged KV cache
    block size must be divisible by 256"."""
    if not cc_at_least(machine, 8):
        return f"FA2 needs sm80 or newer, not {cc_text(machine)} ({FA2_SOURCE})"
    if case.kv_storage not in ("bf16", "fp16") or case.dtype not in ("bf16", "fp16"):
        return f"FA2 takes fp16/bf16 only ({FA2_SOURCE})"
    if max(case.head_dim, case.dim_v) > 256:
        return f"FA2 takes head_dim <= 256 ({FA2_SOURCE})"
    if case.page_size is not None and case.page_size % 256:
        return f"FA2 pages must be multiples of 256 tokens ({FA2_SOURCE})"
    return None


# -- FlashAttention 3 (upstream hopper/ and sgl-kernel's build) -------------------------------------------------------
FA3_HOPPER = (
    "FA3 builds its Hopper kernels for sm_90a only and dispatches newer GPUs to them, where the launch "
    "fails (Dao-AILab/flash-attention hopper/setup.py, hopper/static_switch.h; issue #1987)"
)


def _fa3_common(case: CaseFields, machine: MachineView, name: str) -> Optional[str]:
    if max(case.head_dim, case.dim_v) > 256:
        return f"{name} takes head_dim <= 256 (hopper/flash_api.cpp)"
    if "fp8_e4m3" in (case.dtype, case.kv_storage) and machine.cc and machine.cc[0] != 9:
        return f"{name} fp8 runs on SM90 only, not {cc_text(machine)} (hopper/flash_api.cpp)"
    return None


def fa3(case: CaseFields, machine: MachineView) -> Optional[str]:
    """Dao-AILab/flash-attention hopper/ (flash_attn_interface): SM80 and newer, Hopper kernels for sm_90a only."""
    if not cc_at_least(machine, 8):
        return f"FA3 needs sm80 or newer, not {cc_text(machine)} (hopper/flash_api.cpp)"
    if machine.cc and machine.cc[0] >= 10:
        return FA3_HOPPER
    return _fa3_common(case, machine, "FA3")


def sgl_fa3(case: CaseFields, machine: MachineView) -> Optional[str]:
    """sgl-kernel's FA3 build: sgl-kernel/python/sgl_kernel/flash_attn.py is_fa3_supported (compute capability 9.x
    and CUDA >= 12.3), and hopper/flash_api.cpp's limits."""
    if machine.cc and machine.cc[0] != 9:
        return (
            f"sgl-kernel builds FA3 for sm90a only, not {cc_text(machine)} (sgl-kernel/python/sgl_kernel/"
            f"flash_attn.py is_fa3_supported)"
        )
    return _fa3_common(case, machine, "sgl-kernel FA3")


# -- FlashAttention 4 (the flash-attn-4 wheel; rules/engines/sglang/capabilities.py FA4 table) ---------------------------------
def fa4(case: CaseFields, machine: MachineView) -> Optional[str]:
    """The flash-attn-4 4.0.0b36 wheel's flash_attn/cute/interface.py (_flash_attn_fwd, _validate_head_dims; the
    qv, score_mod and learnable_sink asserts) and flash_fwd.py (FlashAttentionForwardSm80: no learnable sink)."""
    cc = machine.cc
    if cc is None:
        return None
    major = cc[0]
    if major not in FA4_ARCHS:
        return f"FA4 supports compute capability 8.x-12.x, not {cc_text(machine)} ({FA4_WHEEL})"
    if "fp8_e4m3" in (case.dtype, case.kv_storage) and major not in FA4_FP8_ARCHS:
        return (
            f"FA4 fp8 is SM100-only, not {cc_text(machine)}: 'FP8 is only supported on SM100 (compute "
            f"capability 10.x) for FA4 CuTe.' ({FA4_WHEEL})"
        )
    if case.qv and major not in (10, 11):
        return f"FA4 takes qv (absorbed MLA) on SM100/SM110 only: 'only support Blackwell arch with qv' ({FA4_WHEEL})"
    if case.score_mod and case.softcap:
        return f"FA4: 'softcap and score_mod cannot be used together' ({FA4_WHEEL})"
    if case.score_mod and major == 8:
        return f"FA4: 'Custom user-provided score_mod is not supported on SM8x architectures.' ({FA4_WHEEL})"
    if case.sinks and major == 8:
        return f"FA4's SM80 kernel: 'Learnable sink is not supported in this kernel' ({FA4_WHEEL} flash_fwd.py)"
    head_dims = FA4_WHEEL_HEAD_DIMS.get(major)
    if head_dims is not None and not head_dims.takes(case.head_dim, case.dim_v):
        if major == 9:
            return f"FA4 on SM90 takes head dims 8..256 ({FA4_WHEEL} _validate_head_dims)"
        return f"FA4 on SM100/SM110 takes head dims <= 128, (192, 128) or (256, 256) ({FA4_WHEEL} _validate_head_dims)"
    if case.page_size is not None and major not in FA4_WHEEL_PAGED_KV_ARCHS:
        return f"FA4 has no paged KV on {cc_text(machine)} ({FA4_WHEEL}: 'paged KV not supported on SM 8.0' / SM 12.0)"
    return None


# -- FlashInfer, FlashMLA, the CuTe DSL ------------------------------------------------------------------------------
def flashinfer(case: CaseFields, machine: MachineView) -> Optional[str]:
    if not cc_at_least(machine, 7, 5):
        return f"FlashInfer needs sm75 or newer, not {cc_text(machine)} (flashinfer-ai/flashinfer README)"
    return None


FLASHMLA_SOURCE = "deepseek-ai/FlashMLA README (support matrix) and flash_mla/flash_mla_interface.py"


def flashmla(case: CaseFields, machine: MachineView) -> Optional[str]:
    """FlashMLA's README support matrix: dense decoding is SM90, BF16, one 576 = 512 + 64 KV head, pages of 64."""
    if machine.cc and machine.cc[0] != 9:
        return f"FlashMLA dense decoding runs on SM90 only, not {cc_text(machine)} ({FLASHMLA_SOURCE})"
    if case.dtype != "bf16" or case.kv_storage != "bf16":
        return f"FlashMLA dense decoding takes bf16 ({FLASHMLA_SOURCE})"
    if (case.head_dim, case.dim_v, case.heads_kv, case.page_size) != (576, 512, 1, 64):
        return f"FlashMLA dense decoding takes head dims (576, 512), one KV head, pages of 64 ({FLASHMLA_SOURCE})"
    return None


def cutlass_dsl(case: CaseFields, machine: MachineView) -> Optional[str]:
    """nvidia-cutlass-dsl 4.8.1: "CuTe DSL will support all NVIDIA GPU architectures starting with NVIDIA Ampere
    (SM80)"."""
    if not cc_at_least(machine, 8):
        return (
            f"the CuTe DSL targets sm80 or newer, not {cc_text(machine)} (NVIDIA/cutlass media/docs/pythonDSL/faqs.rst)"
        )
    return None


# -- torch SDPA, per forced backend ----------------------------------------------------------------------------------
SDPA_SOURCE = "pytorch/pytorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp"


def _half_precision(case: CaseFields) -> bool:
    return case.dtype in ("bf16", "fp16")


def sdpa_flash(case: CaseFields, machine: MachineView) -> Optional[str]:
    if not cc_at_least(machine, 8):
        return (
            f"SDPA flash needs sm80 or newer, not {cc_text(machine)} ({SDPA_SOURCE} "
            "check_flash_attention_hardware_support)"
        )
    if not _half_precision(case):
        return f"SDPA flash takes fp16/bf16 only ({SDPA_SOURCE} check_dtypes_flash_attention)"
    if case.head_dim > 256:
        return f"SDPA flash takes head_dim <= 256 ({SDPA_SOURCE} check_head_dim_size_flash)"
    return None


def sdpa_efficient(case: CaseFields, machine: MachineView) -> Optional[str]:
    if case.dtype == "fp8_e4m3":
        return f"SDPA memory-efficient takes fp16/bf16/fp32 only ({SDPA_SOURCE} check_mem_efficient_hardware_support)"
    if case.dtype == "bf16" and not cc_at_least(machine, 8):
        return f"SDPA memory-efficient takes bf16 only on sm80 or newer ({SDPA_SOURCE})"
    return None


def sdpa_cudnn(case: CaseFields, machine: MachineView) -> Optional[str]:
    if not cc_at_least(machine, 8):
        return f"cuDNN SDPA needs sm80 or newer, not {cc_text(machine)} ({SDPA_SOURCE} check_cudnn_hardware_support)"
    if not _half_precision(case):
        return f"cuDNN SDPA takes fp16/bf16 only ({SDPA_SOURCE})"
    cc = machine.cc
    wide = cc is not None and cc[0] in (9, 10) and (machine.cudnn or 0) > 92200
    if max(case.head_dim, case.dim_v) > (256 if wide else 128):
        return (
            f"cuDNN SDPA takes head_dim <= 128 (<= 256 on SM90/SM100 with cuDNN > 9.22; this is "
            f"{cc_text(machine)} with cuDNN {machine.cudnn}) ({SDPA_SOURCE} check_cudnn_tensor_shapes)"
        )
    return None


# Smoke kernel family -> its limits; a kernel named in BY_KERNEL has its own instead (None: no documented limit).
BY_FAMILY: Mapping[str, Limit] = {
    "fa2": fa2,
    "fa3": fa3,
    "sgl-kernel": sgl_fa3,
    "fa4": fa4,
    "flashinfer": flashinfer,
    "flashmla": flashmla,
    "cutlass-dsl": cutlass_dsl,
}
BY_KERNEL: Mapping[str, Optional[Limit]] = {
    "sdpa-flash": sdpa_flash,
    "sdpa-efficient": sdpa_efficient,
    "sdpa-cudnn": sdpa_cudnn,
    "sdpa-math": None,  # plain torch: runs anything, on the CPU too
}


def limits_for(kernel: str, family: str) -> Optional[Limit]:
    """The limits of one smoke kernel (by name, else by family), or None when nothing is documented for it."""
    if kernel in BY_KERNEL:
        return BY_KERNEL[kernel]
    return BY_FAMILY.get(family)


def documented_limit(kernel: str, family: str, case: CaseFields, machine: MachineView) -> Optional[str]:
    """The documented limit `case` crosses on `machine` for this kernel, with its source; None when it crosses none
    (or nothing is documented for the kernel)."""
    limits = limits_for(kernel, family)
    return limits(case, machine) if limits else None
