"""FlashMLA dense decode (DeepSeek MLA: one KV head of 576 = 512 latent + 64 rope, V the first 512).

Signatures: deepseek-ai/FlashMLA flash_mla/flash_mla_interface.py: get_mla_metadata(cache_seqlens,
s_q * h_q // h_k, h_k) (ignored since 2026-01: it returns an empty FlashMLASchedMeta) and
flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
num_splits, causal=) -> (out, lse), k_cache (blocks, 64, 1, 576). README support matrix: dense decoding
is SM90, BF16 (rules/kernels/limits.py).
"""

from __future__ import annotations

from typing import Any

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel

DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, heads_q=16, heads_kv=1, head_dim=576, head_dim_v=512, page_size=64)


def prepare() -> None:
    import flash_mla  # noqa: F401  (loads its CUDA extension)


def _decode(case: Case, device: str):
    from flash_mla import flash_mla_with_kvcache, get_mla_metadata

    from attn_preflight.probe.smoke.reference import paged_call

    planned: list[Any] = []  # the scheduler metadata, planned by the first call and reused, as a serving engine does

    def call(q, paged):
        if not planned:
            planned.extend(
                get_mla_metadata(paged.seqlens, case.seqlen_q * case.heads_q // case.heads_kv, case.heads_kv)
            )
        return flash_mla_with_kvcache(
            q, paged.k_cache, paged.page_table, paged.seqlens, case.dim_v, *planned, causal=case.causal
        )

    return paged_call(case, device, call, v_from_k=True)


KERNELS = [
    Kernel(
        name="flashmla-decode",
        family="flashmla",
        title="FlashMLA, dense MLA decode",
        api="flash_mla.flash_mla_with_kvcache",
        quick=DECODE,
        build=_decode,
        prepare=prepare,
        library="flash_mla",
    ),
]
