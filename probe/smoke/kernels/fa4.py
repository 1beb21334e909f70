"""FlashAttention 4 (`flash-attn-4`, flash_attn.cute on the CUTLASS CuTe DSL): dense, varlen, paged decode.

Signatures from the flash-attn-4 4.0.0b36 wheel, flash_attn/cute/interface.py: flash_attn_func(q, k, v,
causal=, window_size=(left, right), softcap=) and flash_attn_varlen_func(q, k, v, cu_seqlens_q=,
cu_seqlens_k=, max_seqlen_q=, max_seqlen_k=, seqused_k=, page_table=, ...); both return (out, lse). Paged
decode is flash_attn_varlen_func with q (b, sq, h, d), k/v (num_pages, page_size, h_kv, d), page_table
(b, pages) int32 and seqused_k (b,) int32: FA4 has no separate kvcache entry point. Kernels JIT-compile at
the first call (2.4-8.4 s each on the H200); caches.py turns on FA4's persistent cache. The wheel's documented
limits are in rules/knowledge/kernel_limits.py (read from rules/knowledge/backends.py's FA4 table).
"""

from __future__ import annotations

from probe.smoke.cases import Case, attention_flops
from probe.smoke.kernels import (
    FEATURE_FP8,
    FEATURE_SOFTCAP,
    FEATURE_WINDOW,
    Kernel,
)

PREFILL = Case()
DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=128)


def prepare() -> None:
    import flash_attn.cute  # noqa: F401  (imports the CUTLASS DSL: ~10 s on the H200)


def window(case: Case) -> tuple:
    """FA4 spells an unbounded side None (interface.py window_size: Tuple[Optional[int], Optional[int]])."""
    return (case.window_left, 0 if case.causal else None)


def _dense(case: Case, device: str):
    from flash_attn.cute import flash_attn_func

    from probe.smoke.reference import Call, Inputs, attention_reference, first

    q, k, v = Inputs(case, device).dense()
    reference = attention_reference(q, k, v, case)
    return Call(
        lambda: flash_attn_func(q, k, v, causal=case.causal, window_size=window(case), softcap=case.softcap),
        reference,
        attention_flops(case),
        extract=first,
    )


def _varlen(case: Case, device: str):
    from flash_attn.cute import flash_attn_varlen_func

    from probe.smoke.reference import varlen_call

    return varlen_call(
        case,
        device,
        lambda q, k, v, cu, longest: flash_attn_varlen_func(
            q,
            k,
            v,
            cu_seqlens_q=cu,
            cu_seqlens_k=cu,
            max_seqlen_q=longest,
            max_seqlen_k=longest,
            causal=case.causal,
            window_size=window(case),
            softcap=case.softcap,
        ),
    )


def _paged(case: Case, device: str):
    from flash_attn.cute import flash_attn_varlen_func

    from probe.smoke.reference import paged_call

    return paged_call(
        case,
        device,
        lambda q, paged: flash_attn_varlen_func(
            q,
            paged.k_cache,
            paged.v_cache,
            seqused_k=paged.seqlens,
            page_table=paged.page_table,
            causal=case.causal,
            window_size=window(case),
            softcap=case.softcap,
        ),
    )


FEATURES = frozenset({FEATURE_SOFTCAP, FEATURE_WINDOW, FEATURE_FP8})
KERNELS = [
    Kernel(
        name="fa4-dense",
        family="fa4",
        title="FlashAttention 4, dense",
        api="flash_attn.cute.flash_attn_func",
        quick=PREFILL,
        build=_dense,
        prepare=prepare,
        library="fa4",
        features=FEATURES,
    ),
    Kernel(
        name="fa4-varlen",
        family="fa4",
        title="FlashAttention 4, variable length",
        api="flash_attn.cute.flash_attn_varlen_func(cu_seqlens_q=, cu_seqlens_k=)",
        quick=PREFILL,
        build=_varlen,
        prepare=prepare,
        library="fa4",
        features=FEATURES,
    ),
    Kernel(
        name="fa4-paged",
        family="fa4",
        title="FlashAttention 4, paged KV decode",
        api="flash_attn.cute.flash_attn_varlen_func(page_table=, seqused_k=)",
        quick=DECODE,
        build=_paged,
        prepare=prepare,
        library="fa4",
        features=FEATURES | {"page:16"},
    ),
]
