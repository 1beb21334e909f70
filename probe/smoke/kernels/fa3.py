"""FlashAttention 3: upstream `flash_attn_interface` (hopper/) and sgl-kernel's build of it.

Signatures: Dao-AILab/flash-attention hopper/flash_attn_interface.py (flash_attn_func: window_size, softcap,
fp8 via q/k/v dtype); sgl-project/sglang sgl-kernel/python/sgl_kernel/flash_attn.py (flash_attn_with_kvcache
with page_table=, cache_seqlens=; is_fa3_supported: compute capability 9.x and CUDA >= 12.3). With an fp8
KV cache the query is cast to the cache dtype, as SGLang's FA3 backend does
(python/sglang/srt/layers/attention/flashattention_backend.py: `q = q.to(self.kv_cache_dtype)`). Both builds'
documented limits are in rules/kernels/limits.py.
"""

from __future__ import annotations

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import (
    FEATURE_FP8,
    FEATURE_SOFTCAP,
    FEATURE_WINDOW,
    Kernel,
)
from attn_preflight.probe.smoke.kernels.fa2 import dense_call, kvcache_call

PREFILL = Case()
DECODE = Case(batch=4, seqlen_q=1, seqlen_k=1024, page_size=16)


def interface():
    """FA3's Python interface: a top-level module, or inside the flash_attn_3 package since 2026-07."""
    try:
        import flash_attn_interface
    except ImportError:
        from flash_attn_3 import flash_attn_interface
    return flash_attn_interface


def _dense(case: Case, device: str):
    return dense_call(case, device, interface().flash_attn_func, q_dtype=case.kv_storage)


def _sgl_prepare() -> None:
    import sgl_kernel.flash_attn  # noqa: F401  (loads the flash_ops extension)


def _sgl_kvcache(case: Case, device: str):
    from sgl_kernel.flash_attn import flash_attn_with_kvcache

    return kvcache_call(case, device, flash_attn_with_kvcache, "page_table", q_dtype=case.kv_storage)


FEATURES = frozenset({FEATURE_SOFTCAP, FEATURE_WINDOW, FEATURE_FP8})
KERNELS = [
    Kernel(
        name="fa3-dense",
        family="fa3",
        title="FlashAttention 3, dense",
        api="flash_attn_interface.flash_attn_func",
        quick=PREFILL,
        build=_dense,
        prepare=interface,
        library="fa3",
        features=FEATURES,
    ),
    Kernel(
        name="sgl-fa3-kvcache",
        family="sgl-kernel",
        title="sgl-kernel FA3, paged KV decode",
        api="sgl_kernel.flash_attn.flash_attn_with_kvcache(page_table=)",
        quick=DECODE,
        build=_sgl_kvcache,
        prepare=_sgl_prepare,
        library="sgl_kernel",
        features=FEATURES | {"page:1", "page:64"},
    ),
]
