"""FlashAttention 4 (`--attention-backend fa4`): arch, head-dim, dtype and feature limits of flash_attn.cute.

SGLang 0.5.23 runs fa4 on its own vendored copy of FA4 (python/sglang/kernels/ops/attention/flash_attn/cute,
through kernels/ops/attention/flash_attention_v4.py; on SM12x through its SM120 host in
kernels/ops/attention/fa4_sm120), not on the flash-attn-4 wheel. The limits below are the vendored copy's,
so they are keyed on SGLang's version; where the flash-attn-4 4.0.0b36 wheel differs, the rule's docs say so.
The interface dispatches on `arch // 10` with arch = major * 10 + minor (`_get_device_arch`).
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.checks.common import (
    backend_kv_dtype,
    declared,
    gpu,
    kv_found,
    kv_unquantised_fix,
    phases_using,
    sglang_release,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang.capabilities import FA4_IMAGE_MASK_ARCHITECTURES, FA4_IMAGE_MASK_FROM
from attn_preflight.rules.engines.sglang.reasons import Query, declared_words, reasons_of, requirement, working
from attn_preflight.rules.engines.sglang.resolve import effective_page_size, fa4_page_size, prefill_cp
from attn_preflight.rules.knowledge.kv_dtypes import FP8

ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
INTERFACE = "sglang: python/sglang/kernels/ops/attention/flash_attn/cute/interface.py"
FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"


FA4_FP8_TITLE = "fa4 reads an FP8 KV cache only on {fa4.kv_dtype_archs:fp8_e4m3}"
FA4_FP8_DOCS = """Checks that `fa4` with `--kv-cache-dtype` fp8_e4m3 or fp8_e5m2 runs on a GPU of
{fa4.kv_dtype_archs:fp8_e4m3}.

With an FP8 KV cache SGLang casts the query to the KV dtype for decode and calls FA4 with FP8 Q/K/V; FA4's
FP8 path exists only in the SM100 kernel (`arch // 10 == 10`). SM90, SM110, SM12x (SGLang's SM120 host has
no FP8 path either) and SM8x fail at the first decode. Seen on a real H200 with flash-attn-4 4.0.0b36,
whose interface has the same assert.

The assert is in SGLang's vendored FA4 from 0.5.16 (0.5.23 interface.py:729). SGLang 0.5.10-0.5.15 run the
flash-attn-4 wheel instead (jit_kernel/flash_attention_v4.py:10), which has the assert from 4.0.0b10
(interface.py:470); with an older wheel installed there the rule does not judge. The fix drops the FP8 cache,
and names fa3 where its declaration reads the cache on the GPU ({fa3.kv_dtype_archs:fp8_e4m3})."""


@rule(
    id="fa4-fp8-sm100",
    title=FA4_FP8_TITLE,
    engine="sglang",
    versions="sglang>=0.5.10",
    backends=("fa4",),
    stage="runtime",
    prevents="FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.",
    source=f"{INTERFACE}, _flash_attn_fwd; {FA_BACKEND} (decode casts q to the FP8 KV dtype)",
    docs=FA4_FP8_DOCS,
    worded=lambda: declared_words(FA4_FP8_TITLE, FA4_FP8_DOCS),
    fix_title="Use --kv-cache-dtype auto (or bf16) with fa4, or fa3 for FP8 on SM90",
)
def fa4_fp8_sm100(cfg, target):
    kv = backend_kv_dtype(cfg, target)
    if kv not in FP8 or cfg.mla:
        return skipped("applies to non-MLA models with an FP8 KV cache (MLA decode dequantizes)")
    if sglang_release(target) < FA4_VENDORED_FROM and _older_fa4_wheel(target, FA4_WHEEL_FP8_ASSERT_FROM):
        return skipped(
            f"SGLang {sglang_release(target)} runs the flash-attn-4 wheel; "
            f"{target.versions['flash-attn-4']} predates its FP8 assert ({FA4_WHEEL_FP8_ASSERT_FROM})"
        )
    if target.major is None:
        return unknown("compute capability unknown")
    fa4 = declared(target, "fa4")
    fact = f"kv_dtype_archs:{kv}"
    required = f"{requirement(fa4, fact, Query(target.major)) or f'fa4 declared {fact}'} for {kv} on fa4"
    if not reasons_of(fa4, fact, Query(target.major, kv_dtype=kv)):
        return passed(gpu(target), required)
    # fa3 where its declaration reads this KV dtype on the GPU; not fp8_e5m2, with which SGLang replaces fa3 by triton
    # (rule fa3-fp8-e5m2-rewrite)
    fa3 = kv != "fp8_e5m2" and working(target.sglang_backends, ("fa3",), Query(target.major, mla=False, kv_dtype=kv))
    fix = kv_unquantised_fix(cfg, target, cfg.model.dtype if cfg.model else None) + (
        ["--attention-backend fa3"] if fa3 else []
    )
    return failed(f"{kv_found(cfg, target)} on {phases_using(cfg, 'fa4')} on {gpu(target)}", required, fix)


# SGLang runs its vendored FA4 from 0.5.16; 0.5.10-0.5.15 import the flash-attn-4 wheel (flash_attention_v4.py:10).
FA4_VENDORED_FROM = Version("0.5.16")
# flash-attn-4's FP8 assert: not in 4.0.0b9, in 4.0.0b10 (interface.py:470).
FA4_WHEEL_FP8_ASSERT_FROM = Version("4.0.0b10")


def _older_fa4_wheel(target, than):
    """Whether the target's installed flash-attn-4 wheel is known and older than `than`."""
    installed = target.versions.get("flash-attn-4")
    try:
        return installed is not None and Version(installed) < than
    except InvalidVersion:
        return False


def _head_dims(cfg) -> tuple[tuple[int, int], ...]:
    """(head_dim, head_dim_v) of every layer type (Gemma-4: head_dim and global_head_dim); () without them."""
    model = cfg.model
    if model is None or model.head_dim is None:
        return ()
    return model.layer_head_dims


def _shapes(dims) -> str:
    return " and ".join(f"({hd}, {hv})" for hd, hv in dims)


@rule(
    id="fa4-hd256-sm100",
    title="fa4's hd256 kernel on SM100/SM110 lacks softcap, sinks and paged decode",
    engine="sglang",
    versions="sglang>=0.5.16",
    backends=("fa4",),
    needs_model=True,
    stage="runtime",
    prevents="SM100 forward with head_dim=256 does not support seqused_q/seqused_k",
    source=f"{INTERFACE}, _flash_attn_fwd (use_dedicated_hd256_kernel); kernels/ops/attention/"
    "flash_attention_v4.py, flash_attn_with_kvcache (cache_seqlens -> seqused_k)",
    docs="""Checks models with head_dim = v_head_dim = 256 (Gemma 2, Gemma 3 small, Qwen3-Next full-attention
layers, ...) on `fa4` on SM100/SM103/SM110.

FA4 routes every (256, 256) call on these archs to a dedicated 2-CTA kernel that refuses softcap
("... does not support softcap"), learnable sinks ("... does not support learnable_sink"), block sparsity and
seqused_q/seqused_k. SGLang's decode passes the cache lengths as seqused_k (flash_attn_with_kvcache), so
decode fails even without softcap or sinks; this last step is read from the code path, not seen on a GPU.""",
    fix_title="Use --attention-backend trtllm_mha or flashinfer for head_dim 256 on SM100",
)
def fa4_hd256_sm100(cfg, target):
    if target.major not in (10, 11):
        return skipped("applies to SM100/SM110")
    dims = _head_dims(cfg)
    if not dims:
        return skipped("the model's config gives no head_dim")
    if (256, 256) not in dims:
        return passed(f"(head_dim, head_dim_v) = {_shapes(dims)}", "not the hd256 kernel")
    extras = [f for f in ("softcap", "sinks") if f in cfg.features]
    found = "head_dim 256" + (f" with {' and '.join(extras)}" if extras else "") + f" on {gpu(target)}"
    return failed(
        found,
        "no hd256 on fa4 (decode passes seqused_k)",
        ["--attention-backend trtllm_mha", "--attention-backend flashinfer"],
    )


DETERMINISTIC_MLA_TITLE = "Deterministic absorbed-MLA on fa4 needs {fa4.mla_archs}"
DETERMINISTIC_MLA_DOCS = """Checks that deterministic inference (`--enable-deterministic-inference`) of a DeepSeek-family
absorbed-MLA model on `--attention-backend fa4` runs on a GPU of {fa4.mla_archs}.

SGLang runs such models through FA4's absorbed-MLA path (the `qv` argument), which flash_attn.cute
implements only on SM100/SM110 ("only support Blackwell arch with qv"). SGLang refuses the config at
start-up on any other GPU (platform probe is_sm100_or_sm110: major 10 or 11, torch CUDA >= 12.8).
The DeepSeek family is the architecture list in handle_deterministic_inference (DeepSeek V2/V3/V3.2,
Mistral Large 3, Pixtral, GLM MoE DSA / 4 MoE Lite / 5 Next). The fix names fa3 where the declarations
admit it for MLA on the GPU, else triton."""
# An MLA model's backend instead of fa4: the first the declarations admit for MLA on the GPU.
MLA_INSTEAD = ("fa3", "triton")


@rule(
    id="fa4-deterministic-mla-arch",
    title=DETERMINISTIC_MLA_TITLE,
    engine="sglang",
    versions="sglang>=0.5.18",
    stage="startup",
    prevents="Deterministic inference with absorbed-MLA models on the fa4 attention backend requires SM100/SM110: "
    "it runs absorbed MLA, whose qv argument flash_attn.cute only implements on those archs.",
    source=f"{ATTENTION_HOOK}, handle_deterministic_inference",
    docs=DETERMINISTIC_MLA_DOCS,
    worded=lambda: declared_words(DETERMINISTIC_MLA_TITLE, DETERMINISTIC_MLA_DOCS),
    fix_title="Use --attention-backend fa3 on SM90 (triton elsewhere), or run on SM100/SM110",
)
def fa4_deterministic_mla_arch(cfg, target):
    if not (cfg.deterministic and cfg.attention_backend == "fa4"):
        return skipped("applies to deterministic inference on --attention-backend fa4")
    if cfg.model is None:
        if not cfg.mla:
            return skipped("applies to DeepSeek-family MLA models (give --model)")
    elif not cfg.model.deepseek_family:
        return skipped(f"applies to DeepSeek-family models ({cfg.model.architecture} is not one)")
    if target.major is None:
        return unknown("compute capability unknown")
    fa4 = declared(target, "fa4")
    required = requirement(fa4, "mla_archs", Query(target.major)) or "fa4's declared MLA archs"
    if fa4.mla_archs is None or target.major in fa4.mla_archs:
        return passed(gpu(target), required)
    instead = working(target.sglang_backends, MLA_INSTEAD, Query(target.major, mla=True))[:1]
    fix = [f"--attention-backend {name}" for name in instead]
    return failed(f"deterministic absorbed-MLA on fa4 on {gpu(target)}", required, fix)


REL_BIAS_TITLE = "rel_bias on fa4: {fa4.feature_archs:rel_bias} (SM12x with head dims <= 128)"
REL_BIAS_DOCS = """Checks where a sheared relative bias (`rel_bias`, Inkling) can run on `fa4`: {fa4.feature_archs:rel_bias},
SM12x through SGLang's SM120 host when head_dim and v_head_dim are at most 128 ("SM120 relative bias
currently supports head_dim and head_dim_v up to 128").

rel_bias exists only in SGLang's vendored FA4 (from 0.5.16), not in the flash-attn-4 wheel. On SM8x the
interface asserts. 0.5.16 and 0.5.17 admit {fa4.feature_archs:rel_bias#0.5.17} ("rel_bias (sheared bias) is
only supported on SM9x/10x", 0.5.17 interface.py:866-870); 0.5.18 adds SGLang's SM120 forward host
(interface.py:997-1000)."""


@rule(
    id="fa4-rel-bias-arch",
    title=REL_BIAS_TITLE,
    engine="sglang",
    versions="sglang>=0.5.16",
    backends=("fa4",),
    stage="runtime",
    prevents="rel_bias requires SM9x/10x/11x or an architecture-owned forward implementation",
    source=f"{INTERFACE}, _flash_attn_fwd; kernels/ops/attention/fa4_sm120/runtime.py, select_config",
    docs=REL_BIAS_DOCS,
    worded=lambda: declared_words(REL_BIAS_TITLE, REL_BIAS_DOCS),
    fix_title="Use --attention-backend triton",
)
def fa4_rel_bias_arch(cfg, target):
    if "rel_bias" not in cfg.features:
        return skipped("applies to a sheared rel_bias")
    if target.major is None:
        return unknown("compute capability unknown")
    fa4 = declared(target, "fa4")
    required = requirement(fa4, "feature_archs:rel_bias", Query(target.major)) or "fa4's declared rel_bias archs"
    if target.major not in fa4.feature_archs["rel_bias"]:
        return failed(
            f"rel_bias on {phases_using(cfg, 'fa4')} on {gpu(target)}", required, ["--attention-backend triton"]
        )
    if target.major == 12:  # SGLang's SM120 forward host
        dims = _head_dims(cfg)
        if not dims:
            return unknown("SM12x needs head dims <= 128 for rel_bias: give --model")
        if max(max(shape) for shape in dims) <= 128:
            return passed(f"head dims {_shapes(dims)} on {gpu(target)}", "<= 128 on SM12x")
        return failed(
            f"rel_bias with head dims {_shapes(dims)} on {gpu(target)}",
            "head dims <= 128 on SM12x",
            ["--attention-backend triton"],
        )
    return passed(gpu(target), required)


@rule(
    id="fa4-page-size-128",
    title="fa4 on SM100 silently forces page size 128 (non-MLA models)",
    engine="sglang",
    versions="sglang>=0.5.4",
    backends=("fa4",),
    stage="startup",
    prevents="FA4 backend only supports page size 128 for non-MLA model architectures, changing page_size from "
    "{page_size} to 128.",
    source="sglang: python/sglang/srt/arg_groups/overrides.py, _fa4_page_constraint",
    docs="""Warns when `fa4` (any phase) serves a non-MLA model on SM100/SM103 with a page size other than 128:
SGLang logs a warning and uses 128, changing prefix-cache granularity and KV memory rounding.

The rewrite applies only on SM100 (is_sm100) and only when EAGLE top-k <= 1 (the top-k > 1 page-tree
cascade needs page size 1). Passing --page-size 128 makes the choice explicit. Older releases rewrite
differently: through 0.5.14 only an explicit `--prefill-attention-backend fa4` triggers it; 0.5.10-0.5.14 on
SM100 only, 0.5.5.post3-0.5.9 on every GPU, and 0.5.4-0.5.5 for MLA models too.""",
    fix_title="Pass --page-size 128",
)
def fa4_page_size_128(cfg, target):
    forced = fa4_page_size(cfg, target)
    if forced is None:
        return skipped(
            "SGLang does not rewrite the page size here (non-MLA models on SM100/SM103 with EAGLE top-k <= 1 "
            "from 0.5.15; an explicit prefill fa4 before)"
        )
    if cfg.page_size == forced:
        return passed(f"--page-size {forced}", f"{forced} on SM100 fa4")
    given = "no --page-size (default 1)" if cfg.page_size is None else f"--page-size {cfg.page_size}"
    return warned(
        f"{given}; SGLang changes it to {effective_page_size(cfg, target)}",
        f"--page-size {forced}",
        [f"--page-size {forced}"],
    )


# models/gpt_oss.py GptOssAttention: sinks are float32 when the (resolved) --attention-backend is trtllm_mha,
# bfloat16 otherwise (sglang 0.5.16 :389-390 ... 0.5.23 :427-431).
FLOAT32_SINKS_ARCHITECTURES = frozenset({"GptOssForCausalLM"})
FLOAT32_SINKS_BACKEND = "trtllm_mha"
SM120_HOST_FROM = Version("0.5.18")  # flashattention_backend.py routes SM12x to flash_attention_v4_sm120


@rule(
    id="fa4-sinks-dtype",
    title="fa4 takes bfloat16 attention sinks only: GPT-OSS with --attention-backend trtllm_mha has float32 ones",
    engine="sglang",
    versions="sglang>=0.5.16",
    backends=("fa4",),
    needs_model=True,
    stage="runtime",
    prevents="learnable_sink must be bfloat16",
    source=f"{INTERFACE}, _flash_attn_fwd; sglang: python/sglang/srt/models/gpt_oss.py, GptOssAttention.__init__",
    docs="""Checks that fa4 is not handed float32 attention sinks: a GPT-OSS model whose `--attention-backend` is
trtllm_mha while fa4 serves prefill or decode (a split `--prefill-attention-backend fa4`).

GPT-OSS allocates its sinks as float32 when the server's attention backend is trtllm_mha (the TRT-LLM
kernels read float32) and as bfloat16 otherwise. SGLang's FA4 forward asserts bfloat16 sinks, so the split
config loads and then fails at the first fa4 forward (or CUDA-graph capture). On SM12x from sglang 0.5.18
fa4 runs SGLang's SM120 host, which does not go through that assert.""",
    fix_title="Use fa4 for both phases (--attention-backend fa4), or trtllm_mha for both",
)
def fa4_sinks_dtype(cfg, target):
    if cfg.model.architecture not in FLOAT32_SINKS_ARCHITECTURES:
        return skipped("applies to GPT-OSS (GptOssForCausalLM), whose sinks dtype follows --attention-backend")
    if target.major == 12 and sglang_release(target) >= SM120_HOST_FROM:
        return skipped("SM12x runs fa4 through SGLang's SM120 host, not the interface that asserts the sinks dtype")
    if cfg.attention_backend != FLOAT32_SINKS_BACKEND:
        return passed(f"bfloat16 sinks (--attention-backend {cfg.attention_backend})", "bfloat16 sinks on fa4")
    phase = "prefill" if cfg.prefill_backend == "fa4" else "decode"  # resolved: equal phases would name fa4 overall
    return failed(
        f"float32 sinks (--attention-backend trtllm_mha) on {phases_using(cfg, 'fa4')}",
        "bfloat16 sinks on fa4: --attention-backend other than trtllm_mha",
        ["--attention-backend fa4", f"--{phase}-attention-backend trtllm_mha"],
    )


@rule(
    id="fa4-image-masks",
    title="Gemma-4 image prefill on fa4: no prefill CP, no skipped KV cache, no score_mod",
    engine="sglang",
    versions="sglang>=0.5.22",
    needs_model=True,
    stage="runtime",
    prevents="FA4 image masks require standard paged MHA prefill without context parallelism, full prefill graphs, "
    "speculative metadata, or score modifiers.",
    source=f"{FA_BACKEND}, FlashAttentionBackend.forward_extend; models/gemma4_mm.py, prepare_attn_masks",
    docs="""Checks a Gemma-4 multimodal model (Gemma4ForConditionalGeneration, Gemma4UnifiedForConditionalGeneration,
DiffusionGemmaForBlockDiffusion) whose prefill runs on fa4: its first image request fails when that prefill runs
with prefill context parallelism (`--enable-prefill-cp` with `--attn-cp-size` > 1), skips the KV cache (embedding
mode: `--is-embedding` with `--chunked-prefill-size -1` and `--disable-radix-cache`), or passes a score_mod
(`--feature score_mod`).

Gemma-4 attends bidirectionally within each image; on FA4 SGLang builds that as a mask_mod over per-token image
ranges, which only its standard paged MHA prefill takes: FlashAttentionBackend raises NotImplementedError at the
forward otherwise. Text-only requests are unaffected. The raise's other conditions are never met on such a forward:
cascade attention and the SWA speculative metadata belong to target-verify forwards (images are masked on EXTEND
forwards only), the FULL prefill CUDA graph runs FA4 multimodal batches eagerly, Gemma-4 has neither MLA nor
chunked local attention, and only an fa4 prefill sets the ranges.""",
    fix_title="Use --prefill-attention-backend triton (its bidirectional image mask), or drop what the forward refuses",
)
def fa4_image_masks(cfg, target):
    if cfg.model.architecture not in FA4_IMAGE_MASK_ARCHITECTURES:
        return skipped("applies to Gemma-4 multimodal models")
    if cfg.prefill_backend != "fa4":
        return skipped("applies to an fa4 prefill")
    if sglang_release(target) < FA4_IMAGE_MASK_FROM:
        return skipped(f"sglang {sglang_release(target)} sets no FA4 image masks")
    refused, fix = [], []
    cp_size = cfg.flags.get("attn_cp_size") or 1
    if prefill_cp(cfg, target)[0] and cp_size > 1:
        refused.append(f"prefill context parallelism (--attn-cp-size {cp_size})")
        fix.append("--attn-cp-size 1")
    flags = cfg.flags
    if flags.get("is_embedding") and flags.get("chunked_prefill_size") == -1 and flags.get("disable_radix_cache"):
        refused.append("a skipped KV cache (--is-embedding, --chunked-prefill-size -1, --disable-radix-cache)")
        fix.append("--chunked-prefill-size 8192")
    if "score_mod" in cfg.features:
        refused.append("a score_mod")
    required = "standard paged MHA prefill for FA4's image masks"
    if not refused:
        return passed("fa4 prefill without prefill CP, a skipped KV cache or a score_mod", required)
    return failed(
        f"an fa4 image prefill with {', '.join(refused)}",
        required,
        ["--prefill-attention-backend triton", *fix],
        "raised at the first request with an image",
    )
