"""FlashAttention 2 (`flash-attn`): flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache.

Signatures: Dao-AILab/flash-attention flash_attn/flash_attn_interface.py (v2.8.3). Its documented limits
(csrc/flash_attn/flash_api.cpp) are in rules/kernels/limits.py.
"""

from __future__ import annotations

from typing import Optional

from attn_preflight.probe.smoke.cases import Case, attention_flops
from attn_preflight.probe.smoke.kernels import FEATURE_SOFTCAP, FEATURE_WINDOW, Kernel

PREFILL = Case()
DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=256)  # FA2 pages are multiples of 256 tokens


def prepare() -> None:
    import flash_attn.flash_attn_interface  # noqa: F401  (loads the flash_attn_2_cuda extension)


def window(case: Case) -> tuple[int, int]:
    """FlashAttention's (left, right), -1 meaning unbounded; causal forces right = 0."""
    left = -1 if case.window_left is None else case.window_left
    return (left, 0 if case.causal else -1)


def dense_call(case: Case, device: str, flash_attn_func, q_dtype: Optional[str] = None):
    """`flash_attn_func(q, k, v, causal=, window_size=, softcap=)`, FA2's and FA3's shared signature, on dense
    inputs (the query in `q_dtype`, else the case's dtype); the output may be out or (out, lse, ...)."""
    from attn_preflight.probe.smoke.reference import Call, Inputs, attention_reference, first

    q, k, v = Inputs(case, device).dense(q_dtype=q_dtype)
    reference = attention_reference(q, k, v, case)
    return Call(
        lambda: flash_attn_func(q, k, v, causal=case.causal, window_size=window(case), softcap=case.softcap),
        reference,
        attention_flops(case),
        extract=first,
    )


def kvcache_call(case: Case, device: str, with_kvcache, table: str, q_dtype: Optional[str] = None):
    """`flash_attn_with_kvcache` over a paged KV cache, FA2's and sgl-kernel FA3's shared signature but for the
    page table's keyword (`table`: FA2 block_table=, sgl-kernel page_table=)."""
    from attn_preflight.probe.smoke.reference import paged_call

    return paged_call(
        case,
        device,
        lambda q, paged: with_kvcache(
            q,
            paged.k_cache,
            paged.v_cache,
            cache_seqlens=paged.seqlens,
            causal=case.causal,
            window_size=window(case),
            softcap=case.softcap,
            **{table: paged.page_table},
        ),
        q_dtype=q_dtype,
    )


def _dense(case: Case, device: str):
    from flash_attn import flash_attn_func

    return dense_call(case, device, flash_attn_func)


def _varlen(case: Case, device: str):
    from flash_attn import flash_attn_varlen_func

    from attn_preflight.probe.smoke.reference import varlen_call

    return varlen_call(
        case,
        device,
        lambda q, k, v, cu, longest: flash_attn_varlen_func(
            q, k, v, cu, cu, longest, longest, causal=case.causal, window_size=window(case), softcap=case.softcap
        ),
    )


def _kvcache(case: Case, device: str):
    from flash_attn import flash_attn_with_kvcache

    return kvcache_call(case, device, flash_attn_with_kvcache, "block_table")


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
    ),
]
