"""FlashAttention 2 (`flash-attn`): flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache.

Signatures: Dao-AILab/flash-attention flash_attn/flash_attn_interface.py (v2.8.3). Limits: csrc/flash_attn/
flash_api.cpp ("FlashAttention only supports Ampere GPUs or newer.", "FlashAttention only support fp16 and
bf16 data type", "FlashAttention forward only supports head dimension at most 256", "Paged KV cache block
size must be divisible by 256").
"""

from __future__ import annotations

from probe.smoke.cases import Case, attention_flops
from probe.smoke.kernels import FEATURE_SOFTCAP, FEATURE_WINDOW, Kernel, MachineView, cc_at_least, cc_text

SOURCE = "Dao-AILab/flash-attention csrc/flash_attn/flash_api.cpp"
PREFILL = Case()
DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=256)  # FA2 pages are multiples of 256 tokens


def prepare() -> None:
    import flash_attn.flash_attn_interface  # noqa: F401  (loads the flash_attn_2_cuda extension)


def window(case: Case) -> tuple[int, int]:
    """FlashAttention's (left, right), -1 meaning unbounded; causal forces right = 0."""
    left = -1 if case.window_left is None else case.window_left
    return (left, 0 if case.causal else -1)


def _dense(case: Case, device: str):
    from flash_attn import flash_attn_func

    from probe.smoke.reference import Call, Inputs, attention_reference

    q, k, v = Inputs(case, device).dense()
    reference = attention_reference(q, k, v, case)
    return Call(
        lambda: flash_attn_func(q, k, v, causal=case.causal, window_size=window(case), softcap=case.softcap),
        reference,
        attention_flops(case),
    )


def _varlen(case: Case, device: str):
    from flash_attn import flash_attn_varlen_func

    from probe.smoke.reference import varlen_call

    return varlen_call(
        case,
        device,
        lambda q, k, v, cu, longest: flash_attn_varlen_func(
            q, k, v, cu, cu, longest, longest, causal=case.causal, window_size=window(case), softcap=case.softcap
        ),
    )


def _kvcache(case: Case, device: str):
    from flash_attn import flash_attn_with_kvcache

    from probe.smoke.reference import paged_call

    return paged_call(
        case,
        device,
        lambda q, paged: flash_attn_with_kvcache(
            q,
            paged.k_cache,
            paged.v_cache,
            cache_seqlens=paged.seqlens,
            block_table=paged.page_table,
            causal=case.causal,
            window_size=window(case),
            softcap=case.softcap,
        ),
    )


def limits(case: Case, machine: MachineView):
    if not cc_at_least(machine, 8):
        return f"FA2 needs sm80 or newer, not {cc_text(machine)} ({SOURCE})"
    if case.kv_storage not in ("bf16", "fp16") or case.dtype not in ("bf16", "fp16"):
        return f"FA2 takes fp16/bf16 only ({SOURCE})"
    if max(case.head_dim, case.dim_v) > 256:
        return f"FA2 takes head_dim <= 256 ({SOURCE})"
    if case.page_size is not None and case.page_size % 256:
        return f"FA2 pages must be multiples of 256 tokens ({SOURCE})"
    return None


FEATURES = frozenset({FEATURE_SOFTCAP, FEATURE_WINDOW})
KERNELS = [
    Kernel(
        name="fa2-dense",
        family="fa2",
        title="FlashAttention 2, dense",
        api="flash_attn.flash_attn_func",
        quick=PREFILL,
        build=_dense,
        prepare=prepare,
        library="fa2",
        features=FEATURES,
        limits=limits,
    ),
    Kernel(
        name="fa2-varlen",
        family="fa2",
        title="FlashAttention 2, variable length",
        api="flash_attn.flash_attn_varlen_func",
        quick=PREFILL,
        build=_varlen,
        prepare=prepare,
        library="fa2",
        features=FEATURES,
        limits=limits,
    ),
    Kernel(
        name="fa2-kvcache",
        family="fa2",
        title="FlashAttention 2, paged KV decode",
        api="flash_attn.flash_attn_with_kvcache(block_table=)",
        quick=DECODE,
        build=_kvcache,
        prepare=prepare,
        library="fa2",
        features=FEATURES | {"page:512"},
        limits=limits,
    ),
]
