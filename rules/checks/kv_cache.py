"""KV-cache dtype rules: MXFP8, NVFP4/FP4, FP8 per backend and arch."""
from __future__ import annotations

from rules.checks.common import SGLANG_NEWEST
from rules.engine import failed, passed, rule, skipped

FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"


@rule(
    id="kv-mxfp8-requires-fa4",
    title="An MXFP8 KV cache needs the FA4 backend",
    engine="sglang", versions=SGLANG_NEWEST,
    prevents="MXFP8 KV cache requires the FA4 backend.",
    source=f"{FA_BACKEND}, FlashAttentionBackend._mxfp8_sf_kwargs",
    docs="""Checks that `--kv-cache-dtype mxfp8` is served by fa4 for both prefill and decode.

An MXFP8 cache stores FP8 E4M3 values with UE8M0 scales (one per 32 elements) in separate buffers; only
FA4's block-scaled QK^T (mxf8f6f4) path reads them, through the sfq/sfk/sfv arguments. The fa3 backend
raises this message at the first forward; other backends have no reader for the scale buffers at all.""",
    fix_title="Use --attention-backend fa4 (on SM100), or another --kv-cache-dtype",
)
def kv_mxfp8_requires_fa4(cfg, target):
    if cfg.kv_cache_dtype != "mxfp8":
        return skipped("applies to --kv-cache-dtype mxfp8")
    others = sorted(cfg.backends - {"fa4"})
    if not cfg.backends or not others:
        return passed("mxfp8 KV on fa4", "fa4 for prefill and decode")
    return failed(f"mxfp8 KV cache with {', '.join(others)}", "--attention-backend fa4",
                  ["--attention-backend fa4", "--kv-cache-dtype fp8_e4m3"])
