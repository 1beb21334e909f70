"""KV-cache dtypes SGLang accepts (`--kv-cache-dtype`), each with what it is and its source."""

from __future__ import annotations

from typing import NamedTuple, Optional

FIELD = "sglang: python/sglang/srt/arg_groups/fields/model.py, kv_cache_dtype (choices and help)"


class KvDtype(NamedTuple):
    name: str
    family: str  # "model" (auto), "bf16", "fp8", "mxfp8", "fp4"
    bits: Optional[int]
    title: str
    source: str = FIELD
    removed: str = ""  # no longer an accepted choice in the newest SGLang


KV_DTYPES: dict[str, KvDtype] = {
    d.name: d
    for d in (
        KvDtype("auto", "model", None, "the model's dtype"),
        KvDtype("bf16", "bf16", 16, "BF16"),
        KvDtype("bfloat16", "bf16", 16, "BF16 (long spelling; some MLA backends accept only 'bf16')"),
        KvDtype("fp8_e4m3", "fp8", 8, "FP8 E4M3 (per-tensor scales)"),
        KvDtype("fp8_e5m2", "fp8", 8, "FP8 E5M2"),
        KvDtype("mxfp8", "mxfp8", 8, "MXFP8: FP8 E4M3 data with UE8M0 block scales, one per 32 elements (FA4 only)"),
        KvDtype("nvfp4", "fp4", 4, "NVFP4: FP4 E2M1 with FP8 scales per 16 elements"),
        KvDtype("fp4_mx_block16", "fp4", 4, "FP4 E2M1 with MX-style scales per 16 elements"),
        KvDtype(
            "fp4_e2m1",
            "fp4",
            4,
            "FP4 E2M1 (old name of fp4_mx_block16)",
            removed="not a --kv-cache-dtype choice in sglang 0.5.23; use fp4_mx_block16",
        ),
    )
}

FP8 = frozenset(n for n, d in KV_DTYPES.items() if d.family == "fp8")
FP4 = frozenset(n for n, d in KV_DTYPES.items() if d.family == "fp4")

# Second spellings of the same dtype (not offered as alternatives).
SPELLINGS = frozenset({"bfloat16"})
