"""FlashInfer: single-request prefill and batch decode over a paged KV cache.

Signatures: flashinfer-ai/flashinfer flashinfer/prefill.py single_prefill_with_kv_cache(q, k, v, causal=,
kv_layout="NHD", window_left=, logits_soft_cap=) with q (sq, hq, d), k/v (sk, hkv, d); flashinfer/decode.py
BatchDecodeWithPagedKVCacheWrapper(workspace, kv_layout="NHD").plan(indptr, indices, last_page_len,
num_qo_heads, num_kv_heads, head_dim, page_size, window_left=, logits_soft_cap=, q_data_type=,
kv_data_type=) then .run(q, (k_cache, v_cache)) with q (b, hq, d) and caches (pages, page_size, hkv, d).
An fp8 case keeps the query in bf16 and stores the KV cache in fp8 (FlashInfer's fp8 KV decode).
"""

from __future__ import annotations

from dataclasses import replace

from attn_preflight.probe.smoke.cases import Case, attention_flops
from attn_preflight.probe.smoke.kernels import FEATURE_FP8, FEATURE_SOFTCAP, FEATURE_WINDOW, Kernel

PREFILL = Case(batch=1, seqlen_q=2048, seqlen_k=2048)
DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=16)
WORKSPACE_BYTES = 128 * 1024 * 1024


def prepare() -> None:
    import flashinfer  # noqa: F401


def _soft_cap(case: Case):
    return case.softcap or None


def _window_left(case: Case) -> int:
    return -1 if case.window_left is None else case.window_left


def _prefill(case: Case, device: str):
    import flashinfer

    from attn_preflight.probe.smoke.reference import Call, Inputs, attention_reference

    q, k, v = Inputs(case, device).dense()
    reference = attention_reference(q, k, v, case)
    return Call(
        lambda: flashinfer.single_prefill_with_kv_cache(
            q[0],
            k[0],
            v[0],
            causal=case.causal,
            kv_layout="NHD",
            window_left=_window_left(case),
            logits_soft_cap=_soft_cap(case),
        ),
        reference,
        attention_flops(case),
        extract=lambda out: out.unsqueeze(0),
    )


def _decode(case: Case, device: str):
    import flashinfer
    import torch

    from attn_preflight.probe.smoke.reference import (
        Call,
        Inputs,
        PagedKV,
        attention_reference,
        ragged_lengths,
        torch_dtype,
    )

    q_dtype = "bf16" if case.dtype == "fp8_e4m3" else case.dtype
    kv = replace(case, dtype=q_dtype, kv_dtype=case.kv_storage)
    inputs = Inputs(kv, device)
    q, k, v = inputs.dense()
    lengths = ragged_lengths(case.seqlen_k, case.batch)
    paged = PagedKV(inputs, k, v, lengths)
    assert case.page_size is not None  # PagedKV has checked it
    reference = attention_reference(q, k, v, kv, kv_lens=lengths)
    pages = [-(-n // case.page_size) for n in lengths]
    indices = torch.cat([paged.page_table[i, :count] for i, count in enumerate(pages)])
    indptr = torch.tensor([sum(pages[:i]) for i in range(len(pages) + 1)], dtype=torch.int32, device=device)
    last = torch.tensor(
        [n - (count - 1) * case.page_size for n, count in zip(lengths, pages)], dtype=torch.int32, device=device
    )
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=device)
    wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, kv_layout="NHD")
    wrapper.plan(
        indptr,
        indices,
        last,
        case.heads_q,
        case.heads_kv,
        case.head_dim,
        case.page_size,
        window_left=_window_left(case),
        logits_soft_cap=_soft_cap(case),
        q_data_type=torch_dtype(q_dtype),
        kv_data_type=torch_dtype(case.kv_storage),
    )
    flops = attention_flops(kv, [(1, n) for n in lengths])
    return Call(
        lambda: wrapper.run(q[:, 0], (paged.k_cache, paged.v_cache)),
        reference,
        flops,
        extract=lambda out: out.unsqueeze(1),
    )


FEATURES = frozenset({FEATURE_SOFTCAP, FEATURE_WINDOW})
KERNELS = [
    Kernel(
        name="flashinfer-prefill",
        family="flashinfer",
        title="FlashInfer, single prefill",
        api="flashinfer.single_prefill_with_kv_cache",
        quick=PREFILL,
        build=_prefill,
        prepare=prepare,
        library="flashinfer",
        features=FEATURES,
    ),
    Kernel(
        name="flashinfer-decode",
        family="flashinfer",
        title="FlashInfer, paged KV decode",
        api="flashinfer.BatchDecodeWithPagedKVCacheWrapper.run",
        quick=DECODE,
        build=_decode,
        prepare=prepare,
        library="flashinfer",
        features=FEATURES | {FEATURE_FP8, "page:1", "page:64"},
    ),
]
