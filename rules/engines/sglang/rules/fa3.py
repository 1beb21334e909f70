"""FlashAttention 3 (`--attention-backend fa3`, sgl-kernel's FA3): arch limits, dtypes, features only FA4 has.

SGLang's FlashAttentionBackend serves fa3 (fa_impl_ver=3, kernels from sgl_kernel.flash_attn, built from
flash-attention's hopper/ sources) and fa4 (fa_impl_ver=4, flash_attn.cute).
"""

from __future__ import annotations

from attn_preflight.rules.checks.common import (
    backend_kv_dtype,
    declared,
    gpu,
    kv_found,
    kv_unquantised_fix,
    phases_using,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown
from attn_preflight.rules.engines.sglang.reasons import Query, declared_words, reasons_of, requirement, working
from attn_preflight.rules.knowledge.kv_dtypes import FP8

FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
# How the FA3 kernel rules (fa3-fp8-sm8x, fa3-head-dim, fa3-dtype) were read: SGLang's side in every wheel, the
# kernel's checks in the sgl-kernel builds those wheels pin (METADATA Requires-Dist).
FA3_KERNEL_WALK = (
    "fa3 calls sgl_kernel.flash_attn in every release (flashattention_backend.py:21 in 0.5.0rc2, :25 in 0.5.9, "
    "imported lazily from 0.5.10 :162 to 0.5.23 :282) on SM80-SM90 (the 'FlashAttention v3 Backend requires "
    "SM>=80 and SM<=90' assert: model_runner.py:1532 in 0.5.0rc2, :1654 in 0.5.2; attention_registry.py:122 in "
    "0.5.3, :244 in 0.5.23). The limits are FA3's hopper/flash_api.cpp checks compiled into sgl-kernel, pinned "
    "0.3.5 (0.5.0rc2, 0.5.1), 0.3.7, 0.3.9.post2, 0.3.14.post1, 0.3.15, 0.3.16.post3-post5 (0.5.4-0.5.5), "
    "0.3.17.post1, 0.3.18.post2, 0.3.19, 0.3.20 (0.5.7), 0.3.21 (0.5.8-0.5.9), then sglang-kernel 0.4.1 "
    "(0.5.10), 0.4.2, 0.4.2.post2, 0.4.3, 0.4.4 (0.5.14-0.5.15.post1), 0.4.5, 0.4.6.post1, 0.4.7 (0.5.20-0.5.21), "
    "0.4.9, 0.4.10 (0.5.23); its messages read (strings of sgl_kernel/flash_ops.abi3.so) in the two ends, "
    "sgl-kernel 0.3.5 and sglang-kernel 0.4.10, the same in both; the pins between were not downloaded"
)
FA3_API = "Dao-AILab/flash-attention: hopper/flash_api.cpp, mha_fwd (sgl-kernel builds its FA3 from it)"


FA3_FP8_TITLE = "fa3 reads an FP8 KV cache on {fa3.kv_dtype_archs:fp8_e4m3} only"
FA3_FP8_DOCS = """Checks that `fa3` is given an FP8 KV cache only on a GPU of {fa3.kv_dtype_archs:fp8_e4m3}.

With `--kv-cache-dtype` other than auto, SGLang's FlashAttention backend casts the query to the KV dtype
and calls FA3 with FP8 Q/K/V (head_dim <= 256). FA3's FP8 kernels are Hopper-only: on Ampere/Ada the
call is refused at the first forward. (MLA models dequantize instead, but fa3 does not run MLA on SM8x.)
The fix drops the FP8 cache, or moves to the first of flashinfer and triton whose declaration reads it there."""
# Where an FP8 KV cache goes instead: the first of these the declarations admit on the GPU for the KV dtype.
FP8_KV_INSTEAD = ("flashinfer", "triton")


@rule(
    id="fa3-fp8-sm8x",
    title=FA3_FP8_TITLE,
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    backends=("fa3",),
    stage="runtime",
    prevents="FlashAttention on Ampere/Ada cards only supports fp16 and bf16 data type",
    source=f"{FA3_API}; {FA_BACKEND}, FlashAttentionBackend (casts q to the KV dtype when --kv-cache-dtype "
    "is not auto)",
    docs=FA3_FP8_DOCS,
    worded=lambda: declared_words(FA3_FP8_TITLE, FA3_FP8_DOCS),
    fix_title="Use --kv-cache-dtype auto on SM8x with fa3, or flashinfer/triton for an FP8 KV cache",
)
def fa3_fp8_sm8x(cfg, target):
    kv = backend_kv_dtype(cfg, target)
    if kv not in FP8:
        return skipped("applies to an FP8 KV cache")
    if target.major is None:
        return unknown("compute capability unknown")
    fa3 = declared(target, "fa3")
    fact = f"kv_dtype_archs:{kv}"
    required = requirement(fa3, fact, Query(target.major)) or f"fa3's declared {fact}"
    if target.major not in fa3.archs:
        return passed(gpu(target), "fa3's own archs (fa3-arch judges the rest)")
    if not reasons_of(fa3, fact, Query(target.major, kv_dtype=kv)):
        return passed(gpu(target), f"{required} for {kv} on fa3")
    instead = working(target.sglang_backends, FP8_KV_INSTEAD, Query(target.major, kv_dtype=kv))[:1]
    return failed(
        f"{kv_found(cfg, target)} on {phases_using(cfg, 'fa3')} on {gpu(target)}",
        f"{required} for {kv} on fa3",
        [
            *kv_unquantised_fix(cfg, target, cfg.model.dtype if cfg.model else None),
            *(f"--attention-backend {name}" for name in instead),
        ],
    )


@rule(
    id="fa3-head-dim",
    title="fa3 head dims: at most 256, different V head dim only on Hopper",
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    backends=("fa3",),
    needs_model=True,
    stage="runtime",
    prevents="FlashAttention forward only supports head dimension at most 256",
    source=FA3_API,
    docs="""Checks every layer type's (head_dim, v_head_dim) against FA3's forward: head_dim <= 256, multiples of 8,
and K/V head dims that differ only on Hopper and only in FA3's two asymmetric families ((128, 192] with V
in (96, 128], or Q/K <= 64 with V <= 512).

FA3 instantiates kernels for these shapes only and refuses others when the first batch runs
("Only Hopper supports different V headdim"; "If V headdim is different from Q/K dim, we only support
..."). MLA models are judged by fa3-mla-sm8x instead (SGLang runs them through the absorbed qv path).""",
    fix_title="Use flashinfer or triton for this model",
)
def fa3_head_dim(cfg, target):
    if cfg.mla:
        return skipped("applies to non-MLA models")
    model = cfg.model
    if model.head_dim is None:
        return skipped("the model's config gives no head_dim")
    fa3 = declared(target, "fa3")
    for hd, hv in model.layer_head_dims:  # every layer type (Gemma-4: head_dim and global_head_dim)
        shape = f"(head_dim, v_head_dim) = ({hd}, {hv})"
        if hd > fa3.max_head_dim or hd % 8 or hv % 8:
            required = f"head_dim <= {fa3.max_head_dim} and multiples of 8"
            return failed(shape, required, ["--attention-backend flashinfer"])
        if hd != hv:
            if target.major is None:
                return unknown("compute capability unknown")
            family = (128 < hd <= 192 and 96 < hv <= 128) or (hd <= 64 and hv <= 512)
            if target.major not in fa3.feature_archs["asymmetric_kv"] or not family:
                return failed(
                    f"{shape} on {gpu(target)}",
                    "equal K/V head dims, or Hopper with FA3's asymmetric shapes",
                    ["--attention-backend flashinfer", "--attention-backend triton"],
                )
    shapes = " and ".join(f"({hd}, {hv})" for hd, hv in model.layer_head_dims)
    return passed(f"(head_dim, v_head_dim) = {shapes}", f"head_dim <= {fa3.max_head_dim}, multiples of 8")
