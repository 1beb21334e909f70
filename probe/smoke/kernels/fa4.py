"""FlashAttention 4 (`flash-attn-4`, flash_attn.cute on the CUTLASS CuTe DSL): dense, varlen, paged decode.

Signatures from the flash-attn-4 4.0.0b36 wheel, flash_attn/cute/interface.py: flash_attn_func(q, k, v,
causal=, window_size=(left, right), softcap=, learnable_sink=, score_mod=, qv=) and flash_attn_varlen_func(q, k, v, cu_seqlens_q=,
cu_seqlens_k=, max_seqlen_q=, max_seqlen_k=, seqused_k=, page_table=, ...); both return (out, lse). Paged
decode is flash_attn_varlen_func with q (b, sq, h, d), k/v (num_pages, page_size, h_kv, d), page_table
(b, pages) int32 and seqused_k (b,) int32: FA4 has no separate kvcache entry point. Kernels JIT-compile at
the first call (2.4-8.4 s each on the H200); caches.py turns on FA4's persistent cache. The wheel's documented
limits are in rules/kernels/limits.py (read from rules/engines/sglang/capabilities.py's FA4 table).
"""

from __future__ import annotations

from attn_preflight.probe.smoke.cases import Case, attention_flops
from attn_preflight.probe.smoke.kernels import (
    FEATURE_FP8,
    FEATURE_QV,
    FEATURE_SCORE_MOD,
    FEATURE_SINKS,
    FEATURE_SOFTCAP,
    FEATURE_WINDOW,
    Kernel,
)

PREFILL = Case()
DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=128)


def prepare() -> None:
    import flash_attn.cute  # noqa: F401  (imports the CUTLASS DSL: ~10 s on the H200)


def score_mod(case: Case):
    """The case's score_mod as FA4 takes it: a @cute.jit callable (flash-attn-4 4.0.0b36 softmax.py
    call_score_mod passes score, batch_idx, head_idx and q_idx=, kv_idx=, seqlen_info=, aux_tensors= by keyword;
    as Dao-AILab/flash-attention tests/cute score_mod_rel_bias, with cute.where for the absolute value). None when the case has none."""
    if case.score_mod is None:
        return None
    import operator

    import cutlass
    import cutlass.cute as cute

    @cute.jit
    def rel_bias(tSrS_ssa, b_idx, h_idx, q_idx, kv_idx, seqlen_info, aux_tensors):
        diff = q_idx - kv_idx
        zero = cute.full_like(diff, 0)
        distance = cute.where(operator.ge(diff, zero), diff, zero - diff).to(cutlass.Float32)  # |q_idx - kv_idx|
        return tSrS_ssa - distance * cute.full_like(distance, 0.01)

    return {"rel_bias": rel_bias}[case.score_mod]


def window(case: Case) -> tuple:
    """FA4 spells an unbounded side None (interface.py window_size: Tuple[Optional[int], Optional[int]])."""
    return (case.window_left, 0 if case.causal else None)


def _dense(case: Case, device: str):
    from flash_attn.cute import flash_attn_func

    from attn_preflight.probe.smoke.reference import Call, Inputs, attention_reference, extras, first

    inputs = Inputs(case, device)
    q, k, v = inputs.dense()
    extra = extras(inputs)
    reference = attention_reference(q, k, v, case, sink=extra.get("learnable_sink"), qv=extra.get("qv"))
    mod = score_mod(case)
    return Call(
        lambda: flash_attn_func(
            q, k, v, causal=case.causal, window_size=window(case), softcap=case.softcap, score_mod=mod, **extra
        ),
        reference,
        attention_flops(case),
        extract=first,
    )


def _varlen(case: Case, device: str):
    from flash_attn.cute import flash_attn_varlen_func

    from attn_preflight.probe.smoke.reference import varlen_call

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

    from attn_preflight.probe.smoke.reference import paged_call

    mod = score_mod(case)
    return paged_call(
        case,
        device,
        lambda q, paged, **extra: flash_attn_varlen_func(
            q,
            paged.k_cache,
            paged.v_cache,
            seqused_k=paged.seqlens,
            page_table=paged.page_table,
            causal=case.causal,
            window_size=window(case),
            softcap=case.softcap,
            score_mod=mod,
            **extra,
        ),
    )


FEATURES = frozenset({FEATURE_SOFTCAP, FEATURE_WINDOW, FEATURE_FP8})
# dense and paged decode also take learnable_sink=, score_mod= and qv= (interface.py flash_attn_func and
# flash_attn_varlen_func); smoke's varlen kernel keeps the plain form
EXTENDED = FEATURES | {FEATURE_SINKS, FEATURE_SCORE_MOD, FEATURE_QV}
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
        features=EXTENDED,
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
        features=EXTENDED | {"page:16"},
    ),
]
