"""KV-cache dtype rules: MXFP8 (FA4 block-scaled), NVFP4 / FP4 (KV4), removed spellings, torch support.

FP8 per backend lives with the backend (fa3-fp8-sm8x, fa4-fp8-sm100, the MLA backends' rules).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.checks.common import (
    attention_dp_size,
    blackwell_majors,
    choice_check,
    chunked_prefill_per_rank,
    cuda_version,
    declared,
    env_true,
    gpu,
    sglang_release,
)
from attn_preflight.rules.core.engine import Status, failed, passed, registry, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang.resolve import (
    DSA_ARCHITECTURES,
    NVFP4_SOURCE,
    dsa_model,
    effective_page_size,
    nvfp4_plan,
)
from attn_preflight.rules.engines.sglang.rules.speculative import NGRAM_DEFAULT_BREADTH, eagle_topk
from attn_preflight.rules.knowledge.kv_dtypes import FIELD, KV_DTYPES

FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
MODEL_HOOK = "sglang: python/sglang/srt/arg_groups/model_hook.py"
POOL = "sglang: python/sglang/srt/mem_cache/memory_pool.py, MXFP8 KV pool"
KV4 = ("nvfp4", "fp4_mx_block16")
MAMBA_HOOK = "sglang: python/sglang/srt/arg_groups/mamba_hook.py"
INT8_MAMBA_LMCACHE_FROM = Version("0.5.21")  # handle_int8_mamba_checkpoint refuses LMCache (mamba_hook.py:96-99)


def _mxfp8(cfg):
    return cfg.kv_cache_dtype == "mxfp8"


@rule(
    id="kv-mxfp8-q-scales",
    title="An MXFP8 KV cache needs a model that supplies per-token Q scales",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16-0.5.23 (MXFP8 KV from 0.5.16): the q_descale RuntimeError follows the FA4 one in every "
        "release (flashattention_backend.py:360-362 in 0.5.16, :455-457 in 0.5.23)"
    ),
    backends=("fa4",),
    stage="runtime",
    prevents="MXFP8 KV cache requires per-token Q scales (q_descale) from the attention layer for the "
    "block-scaled QK^T path.",
    source=f"{FA_BACKEND}, FlashAttentionBackend._mxfp8_sf_kwargs; "
    "sglang: python/sglang/srt/models/inkling_common/attn.py (the only caller passing q_descale)",
    docs="""Checks that a model served with `--kv-cache-dtype mxfp8` on fa4 quantizes its queries and passes the
per-token scales (`q_descale`) to attention.

FA4's block-scaled QK^T needs Q in FP8 with UE8M0 scales (sfq). In sglang 0.5.23 only Inkling's attention
layer produces them (searched: no other model or layer passes q_descale to RadixAttention), so any other
model fails at the first forward.""",
    fix_title="Use --kv-cache-dtype fp8_e4m3 (or auto) for this model",
)
def kv_mxfp8_q_scales(cfg, target):
    if not _mxfp8(cfg):
        return skipped("applies to --kv-cache-dtype mxfp8")
    if cfg.model is None or not cfg.model.architecture:
        return unknown("which models supply Q scales depends on the architecture: give --model")
    if cfg.model.architecture.startswith("Inkling"):
        return passed(cfg.model.architecture, "a model whose attention layer passes q_descale (Inkling)")
    return failed(
        f"{cfg.model.architecture} (passes no q_descale)",
        "a model that supplies per-token Q scales (Inkling)",
        ["--kv-cache-dtype fp8_e4m3", "--kv-cache-dtype auto"],
    )


@rule(
    id="kv-mxfp8-kernel-arch",
    title="MXFP8 passes SGLang's gate on SM110/SM12x, but FA4's block-scaled kernel is SM100-only",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16-0.5.23 (MXFP8 KV from 0.5.16): the vendored FA4's 'FP8 is only supported on SM100' "
        "assert in every release (0.5.16 jit_kernel/flash_attn/cute/interface.py, 0.5.23 "
        "kernels/ops/attention/flash_attn/cute/interface.py:729)"
    ),
    stage="runtime",
    prevents="FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.",
    source="sglang: python/sglang/kernels/ops/attention/flash_attn/cute/interface.py, _flash_attn_fwd "
    "(FP8 V asserts arch // 10 == 10; sfq/sfk/sfv reach only FlashAttentionForwardSm100); "
    "kernels/ops/attention/fa4_sm120 (no FP8 path)",
    docs="""Checks `--kv-cache-dtype mxfp8` on the Blackwell-family GPUs that pass SGLang's start-up gate but
not FA4's kernel: Jetson Thor (SM110) and SM120/SM121 (RTX 50xx, RTX PRO 6000, GB10).

The MXFP8 cache hands FA4 FP8 V tensors, and FA4 asserts `arch // 10 == 10` for FP8 before it picks a
kernel; the block-scale tensors are only threaded into the SM100 kernel anyway. The server starts and the
first forward fails. Derived from the 0.5.23 code, not seen on an SM110 or SM12x GPU.""",
    fix_title="Use --kv-cache-dtype fp8_e4m3 or auto on SM110/SM12x",
)
def kv_mxfp8_kernel_arch(cfg, target):
    if not _mxfp8(cfg) or target.major not in blackwell_majors(target):
        return skipped("applies to --kv-cache-dtype mxfp8 on the GPUs SGLang's gate admits (SM10x-SM12x)")
    if target.major in declared(target, "fa4").kv_dtype_archs["mxfp8"]:
        return passed(gpu(target), "SM100/SM103 for FA4's block-scaled path")
    return failed(
        f"--kv-cache-dtype mxfp8 on {gpu(target)}",
        "SM100/SM103 for FA4's block-scaled path",
        ["--kv-cache-dtype auto", "--kv-cache-dtype fp8_e4m3"],
    )


@rule(
    id="kv-mxfp8-page-size",
    title="An MXFP8 KV cache needs page size 128",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: MHATokenToKVPoolMXFP8 sets mxfp8_sf_interleaved = page_size == 128 and set_kv_buffer "
        "asserts it ('requires the page_size=128 interleaved scale layout'; mem_cache/memory_pool.py 0.5.21 :3551/"
        ":3674, 0.5.22 :3841/:3961, 0.5.23 :3918/:4040); 0.5.16-0.5.20 (:3257 in 0.5.16, :3468 in 0.5.20) have no "
        "assert and write the scales flat when page_size != 128 (_write_scales), so no page size is refused there "
        "(grep of memory_pool.py read from each wheel with unzip -p)"
    ),
    stage="runtime",
    prevents="MXFP8 KV cache requires the page_size=128 interleaved scale layout",
    source=f"{POOL} (set_kv_buffer); sglang: arg_groups/overrides.py, _fa4_page_constraint",
    docs="""Checks that an MXFP8 KV cache ends up with page size 128.

The MXFP8 pool stores its scales interleaved in FA4's BlockScaledBasicChunk layout only when
page_size == 128, and its KV writer asserts that layout. SGLang forces 128 for fa4 on SM100 with non-MLA
models; anywhere else (MLA models, EAGLE top-k > 1, SM12x) the page size must be given.""",
    fix_title="Pass --page-size 128",
)
def kv_mxfp8_page_size(cfg, target):
    if not _mxfp8(cfg):
        return skipped("applies to --kv-cache-dtype mxfp8")
    if target.major is None:
        return unknown("compute capability unknown (the page size SGLang picks depends on it)")
    page = effective_page_size(cfg, target)
    if page == 128:
        return passed("page size 128", "128")
    return failed(f"page size {page}", "128 (interleaved scale layout)", ["--page-size 128"])


@rule(
    id="kv-mxfp8-head-dim",
    title="An MXFP8 KV cache needs head dims divisible by 32",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16-0.5.23: the MXFP8 pool's _create_buffers raises when head_dim or v_head_dim % "
        "MXFP8_SCALE_BLOCK_SIZE (32) != 0, the same in every release (mem_cache/memory_pool.py 0.5.16 :3220, "
        "0.5.17 :3290, 0.5.18 :3312, 0.5.19 :3283, 0.5.20 :3431, 0.5.21 :3514, 0.5.22 :3804, 0.5.23 :3881); "
        "mxfp8 is not a --kv-cache-dtype choice before 0.5.16 and no release before has the pool"
    ),
    needs_model=True,
    stage="load",
    prevents="MXFP8 KV cache requires head_dim divisible by 32, got {head_dim}.",
    source=f"{POOL} (buffer allocation, MXFP8_SCALE_BLOCK_SIZE = 32)",
    docs="""Checks that head_dim and v_head_dim are multiples of 32 for `--kv-cache-dtype mxfp8`.

MXFP8 keeps one UE8M0 scale per 32 elements of each head; the pool refuses other head dims when it
allocates the cache at start-up.""",
    fix_title="Use --kv-cache-dtype fp8_e4m3 for this model",
)
def kv_mxfp8_head_dim(cfg, target):
    if not _mxfp8(cfg):
        return skipped("applies to --kv-cache-dtype mxfp8")
    if cfg.model.head_dim is None:
        return skipped("the model's config gives no head_dim")
    hd, hv = cfg.model.head_dim, cfg.model.v_head_dim or cfg.model.head_dim
    if hd % 32 == 0 and hv % 32 == 0:
        return passed(f"head dims ({hd}, {hv})", "multiples of 32")
    return failed(f"head dims ({hd}, {hv})", "multiples of 32", ["--kv-cache-dtype fp8_e4m3"])


def _prefill_only(cfg):
    return bool(cfg.flags.get("prefill_only_disable_kv_cache"))


@rule(
    id="kv-prefill-only-preconditions",
    title="--prefill-only-disable-kv-cache needs --chunked-prefill-size -1 and --disable-radix-cache",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23, every release (bench/release_walk.py grep 'requires --chunked-prefill-size=-1'): "
        "both ValueErrors first in 0.5.12 (server_args.py:3385-3396) and unchanged through 0.5.23 "
        "(arg_groups/kv_cache_hook.py:904-914), before the prefill-backend check"
    ),
    stage="startup",
    prevents="--prefill-only-disable-kv-cache requires --chunked-prefill-size=-1 so the FA backend takes the "
    "fa_skip_kv_cache path; otherwise the pool would be touched between prefill chunks.",
    source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
    docs="""Checks the two flags `--prefill-only-disable-kv-cache` needs: `--chunked-prefill-size -1` and
`--disable-radix-cache`.

The KV-free prefill path keeps each request in one forward and lets the radix cache index nothing, so SGLang
refuses the flag at start-up unless chunked prefill is off and the radix cache disabled
(kv_cache_hook.py:904-914 in sglang 0.5.23; "... requires --disable-radix-cache because the radix cache
indexes KV pool slots that no longer hold real data."). SGLang's default chunked-prefill size is not -1.""",
    fix_title="Add --chunked-prefill-size -1 --disable-radix-cache",
)
def kv_prefill_only_preconditions(cfg, target):
    if not _prefill_only(cfg):
        return skipped("applies to --prefill-only-disable-kv-cache")
    missing = []
    if cfg.flags.get("chunked_prefill_size") != -1:
        missing.append("--chunked-prefill-size -1")
    if not cfg.flags.get("disable_radix_cache"):
        missing.append("--disable-radix-cache")
    required = "--chunked-prefill-size -1 and --disable-radix-cache"
    if not missing:
        return passed("--chunked-prefill-size -1 and --disable-radix-cache", required)
    return failed(f"--prefill-only-disable-kv-cache without {' and '.join(missing)}", required, [" ".join(missing)])


@rule(
    id="kv-prefill-only-pool-writers",
    title="--prefill-only-disable-kv-cache refuses context parallelism and HiSparse, which write the KV pool",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23, every release (bench/release_walk.py grep 'incompatible with --attn-cp-size', 'the "
        "prefill-CP path stages', 'is incompatible with --enable-hisparse'): the three ValueErrors first in 0.5.12 "
        "(server_args.py:3400-3419, the prefill-CP one naming --enable-prefill-context-parallel, the flag until "
        "0.5.19) and unchanged through 0.5.23 (arg_groups/kv_cache_hook.py:919-937), after the chunked-prefill and "
        "radix-cache preconditions"
    ),
    stage="startup",
    prevents="--prefill-only-disable-kv-cache is incompatible with --attn-cp-size > 1: the context-parallel "
    "attention path writes K/V to the pool via set_kv_buffer, which the no-op pool intentionally rejects.; "
    "--prefill-only-disable-kv-cache is incompatible with --enable-prefill-cp: the prefill-CP path stages K/V "
    "through the paged cache, which the no-op pool does not support.; --prefill-only-disable-kv-cache is "
    "incompatible with --enable-hisparse: HiSparse uses a dedicated pool family that is not the no-op MHA pool.",
    source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
    docs="""Checks that `--prefill-only-disable-kv-cache` comes without `--attn-cp-size` > 1, prefill context
parallelism (`--enable-prefill-cp`, `--enable-prefill-context-parallel` until 0.5.19) or `--enable-hisparse`.

The flag swaps the KV pool for a no-op one that rejects writes; context-parallel attention writes K/V to the
pool and prefill CP stages K/V through it, and HiSparse brings a pool family of its own. SGLang refuses each
at start-up (else the first request would fail on the no-op pool's write).""",
    fix_title="Drop context parallelism / HiSparse, or keep the KV cache",
)
def kv_prefill_only_pool_writers(cfg, target):
    if not _prefill_only(cfg):
        return skipped("applies to --prefill-only-disable-kv-cache")
    cp_size = cfg.flags.get("attn_cp_size") or 1
    switches = [
        f"--{dest.replace('_', '-')}"
        for dest in ("enable_prefill_cp", "enable_prefill_context_parallel", "enable_hisparse")
        if cfg.flags.get(dest)
    ]
    found = ([f"--attn-cp-size {cp_size}"] if cp_size > 1 else []) + switches
    required = "no context parallelism, no HiSparse"
    if found:
        # a switch cannot be turned off by adding a flag; only the CP size can be set back
        fix = ["--attn-cp-size 1"] if not switches else []
        return failed(f"--prefill-only-disable-kv-cache with {', '.join(found)}", required, fix)
    return passed("--prefill-only-disable-kv-cache without context parallelism or HiSparse", required)


@rule(
    id="kv-prefill-only-backend",
    title="--prefill-only-disable-kv-cache needs fa3 or fa4 for prefill",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23, every release (bench/release_walk.py grep): the ValueError on the resolved prefill "
        "backend first appears in 0.5.12 (server_args.py:3439-3445) and is unchanged through 0.5.23 "
        "(arg_groups/kv_cache_hook.py:342-348)"
    ),
    stage="startup",
    prevents="--prefill-only-disable-kv-cache currently requires the FA prefill backend (fa3/fa4), but got prefill "
    "backend {prefill_backend!r}. Other prefill-only workloads and backends may be supported in a future change.",
    source=f"{KV_HOOK}, handle_prefill_only_disable_kv_cache",
    docs="""Checks that `--prefill-only-disable-kv-cache` runs its prefill on fa3 or fa4.

SGLang resolves the backends first (its default included) and then refuses any other prefill backend at
start-up (kv_cache_hook.py:342-348 in sglang 0.5.23): the KV-free prefill path exists only in the
FlashAttention backend. So on SM100, whose default is trtllm_mha, the flag alone is refused.""",
    fix_title="Add --prefill-attention-backend fa3 (SM8x/SM90) or fa4 (SM90/SM100)",
)
def kv_prefill_only_backend(cfg, target):
    if not _prefill_only(cfg):
        return skipped("applies to --prefill-only-disable-kv-cache")
    prefill = cfg.prefill_backend
    if prefill in ("fa3", "fa4"):
        return passed(f"prefill attention backend {prefill}", "fa3 or fa4 for prefill")
    fix = "fa3" if target.major in (8, 9) else "fa4"
    return failed(
        f"--prefill-only-disable-kv-cache with prefill attention backend {prefill}",
        "fa3 or fa4 for prefill",
        [f"--prefill-attention-backend {fix}"],
    )


# EmbeddingGemma (configs/model_config.py is_embedding_gemma: model_type gemma3_text with
# use_bidirectional_attention; embedding_model_spec.py gives it the FULL_ENCODER prefill policy in 0.5.23): on SM90 /
# SM100 with prefill fa3 / fa4 or none named, the model adjustments turn --prefill-only-disable-kv-cache on (with
# --is-embedding, --disable-radix-cache, --chunked-prefill-size -1) and re-run its validation (from 0.5.17).
EMBEDDING_GEMMA_MODEL_TYPE = "gemma3_text"
EMBEDDING_GEMMA_NO_KV_FROM = Version("0.5.17")
EMBEDDING_GEMMA_NO_KV_MAJORS = (9, 10)
# What is_embedding_gemma's rewrite sets before the no-KV validation runs
EMBEDDING_GEMMA_IMPLIED = {
    "prefill_only_disable_kv_cache": True,
    "is_embedding": True,
    "disable_radix_cache": True,
    "chunked_prefill_size": -1,
}
# The no-KV path's rules that can still refuse once those are set (validate_prefill_only_disable_kv_cache_args,
# handle_prefill_only_disable_kv_cache); two of them are constraint rows, so all are looked up by id
NO_KV_RULES = (
    "kv-fp4-prefill-only",
    "kv-mxfp8-prefill-only",
    "kv-prefill-only-pool-writers",
    "kv-prefill-only-backend",
)


@rule(
    id="kv-prefill-only-embedding-gemma",
    title="EmbeddingGemma on SM90 / SM100 with FlashAttention: SGLang turns --prefill-only-disable-kv-cache on",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23: the is_embedding_gemma branch of the model capability adjustments read in each "
        "release (server_args.py:3714-3746 in 0.5.17, :3878-3910 in 0.5.18; arg_groups/model_hook.py:675-720 in "
        "0.5.19, :739-784 in 0.5.20, :799-845 in 0.5.21, :856-902 in 0.5.22, :862-911 in 0.5.23): is_embedding, no "
        "radix cache, chunked prefill -1, and on CUDA SM90 / SM100 with prefill fa3 / fa4 or none named, "
        "prefill_only_disable_kv_cache followed by validate_prefill_only_disable_kv_cache_args; none in 0.5.16 "
        "(bench/release_walk.py grep 'default FA backend can consume raw K/V')"
    ),
    needs_model=True,
    needs_gpu=True,
    stage="startup",
    reason="SGLang serves EmbeddingGemma without a KV pool (prefill-only, raw K/V) although the launch line does "
    "not say so, and the no-KV path's own refusals (FP4 / MXFP8 KV, context parallelism, HiSparse, a non-FA "
    "prefill backend) then apply to a launch that never asked for it.",
    source=f"{MODEL_HOOK}, _handle_model_capability_adjustments (is_embedding_gemma); {KV_HOOK}, "
    "validate_prefill_only_disable_kv_cache_args",
    docs="""Checks an EmbeddingGemma checkpoint (config.json `model_type` gemma3_text with
`use_bidirectional_attention` true) on SM90 or SM100 whose prefill backend is fa3, fa4 or not named: SGLang
turns `--prefill-only-disable-kv-cache` on itself (with `--is-embedding`, `--disable-radix-cache` and
`--chunked-prefill-size -1`) and validates it. A warning says so when the launch does not; a failure when
that validation refuses the launch (kv-fp4-prefill-only, kv-mxfp8-prefill-only, kv-prefill-only-pool-writers,
kv-prefill-only-backend, judged as if the flag were given).

The FlashAttention prefill reads an embedding batch's K/V straight from the projection, so the encoder needs
no paged pool; SGLang takes that path before sizing memory. Naming the flags makes the launch line say what
runs, and the no-KV rules then judge it directly. A backend named for the phase only by a decode flag is
read as none named.""",
    fix_title="Pass --prefill-only-disable-kv-cache --chunked-prefill-size -1 --disable-radix-cache (what SGLang runs)",
)
def kv_prefill_only_embedding_gemma(cfg, target):
    model = cfg.model
    if model.model_type != EMBEDDING_GEMMA_MODEL_TYPE or not model.bidirectional_attention:
        return skipped("applies to EmbeddingGemma (gemma3_text with use_bidirectional_attention)")
    if target.major not in EMBEDDING_GEMMA_NO_KV_MAJORS:
        return skipped("applies on SM90 / SM100, where SGLang serves EmbeddingGemma without a KV pool")
    requested = cfg.prefill_attention_backend or (None if cfg.auto_backend else cfg.attention_backend)
    if requested not in (None, "fa3", "fa4"):
        return skipped(f"prefill {requested} keeps the paged KV cache")
    implied = replace(cfg, flags={**cfg.flags, **EMBEDDING_GEMMA_IMPLIED})
    rules = registry("sglang").by_id
    outcomes = (rules[rule_id].check(implied, target) for rule_id in NO_KV_RULES)
    refusals = [outcome for outcome in outcomes if outcome.status is Status.FAIL]
    required = "a launch the no-KV path accepts"
    if refusals:
        return failed(
            "EmbeddingGemma served without a KV pool (SGLang's own --prefill-only-disable-kv-cache): "
            + "; ".join(o.found for o in refusals),
            required,
            [fix for outcome in refusals for fix in outcome.fix],
        )
    if _prefill_only(cfg):
        return passed(f"EmbeddingGemma with --prefill-only-disable-kv-cache on {cfg.prefill_backend}", required)
    return warned(
        f"EmbeddingGemma on SM{target.major}0 with prefill {requested or 'not named'} (SGLang turns "
        "--prefill-only-disable-kv-cache on: no KV pool, radix cache off, chunked prefill -1)",
        "the launch line naming what runs",
        ["--prefill-only-disable-kv-cache --chunked-prefill-size -1 --disable-radix-cache"],
    )


NVFP4_NATIVE_TRANSFER_CHECK_FROM = Version("0.5.21")


@rule(
    id="kv-nvfp4-native-transfer",
    title="SM100's native NVFP4 on trtllm_mha cannot leave the GPU: no PD disaggregation, HiCache or LMCache",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: handle_kv4_compatibility raises, for --kv-cache-dtype nvfp4 on SM100 with trtllm_mha "
        "on a phase, when --disaggregation-mode is not null and when --enable-hierarchical-cache or --enable-lmcache "
        "is on (kv_cache_hook.py:251-263, the same lines in 0.5.21, 0.5.22 and 0.5.23; bench/release_walk.py grep "
        "'native NVFP4 with trtllm_mha does not yet support' finds it from 0.5.21)"
    ),
    stage="startup",
    prevents="SM100 native NVFP4 with trtllm_mha does not yet support PD disaggregation because its physical "
    "block-scale layout is not implemented by the KV transfer path.; SM100 native NVFP4 with trtllm_mha does not "
    "yet support hierarchical KV cache or LMCache because their host pools do not preserve the physical "
    "block-scale layout.",
    source=f"{KV_HOOK}, handle_kv4_compatibility",
    docs="""Checks that an NVFP4 KV cache in SM100's native layout (trtllm_mha on prefill or decode, which SGLang
picks by default on SM100) stays on the GPU: no `--disaggregation-mode` prefill / decode, no
`--enable-hierarchical-cache`, no `--enable-lmcache`.

trtllm_mha keeps NVFP4 with its kernel-native physical block scales; neither the PD transfer path nor the
host pools of HiCache and LMCache preserve that layout, so SGLang refuses them at start-up.""",
    fix_title="Use an FP8 KV cache for PD disaggregation or host offload, or serve without them",
)
def kv_nvfp4_native_transfer(cfg, target):
    if cfg.kv_cache_dtype != "nvfp4":
        return skipped("applies to --kv-cache-dtype nvfp4")
    if target.major != 10 or "trtllm_mha" not in (cfg.prefill_backend, cfg.decode_backend):
        return skipped("applies to SM100's native NVFP4 layout (trtllm_mha on a phase)")
    mode = cfg.flags.get("disaggregation_mode") or "null"
    found = [f"--disaggregation-mode {mode}"] if mode != "null" else []
    found += [f"--{d.replace('_', '-')}" for d in ("enable_hierarchical_cache", "enable_lmcache") if cfg.flags.get(d)]
    required = "no PD disaggregation, HiCache or LMCache with native NVFP4"
    if found:
        return failed(f"native NVFP4 on trtllm_mha with {', '.join(found)}", required, ["--kv-cache-dtype fp8_e4m3"])
    return passed("native NVFP4 on trtllm_mha, kept on the GPU", required)


@rule(
    id="kv-nvfp4-backends",
    title="An NVFP4 KV cache takes flashinfer or trtllm_mha prefill and trtllm_mha decode",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: handle_nvfp4_prefill_kv_dequant_dtype first appears in 0.5.21 and "
        "arg_groups/kv_cache_hook.py:20-100 is the same code in 0.5.21, 0.5.22 and 0.5.23 (diff: one import "
        "line); rules/engines/sglang/resolve.py applies the plan from 0.5.21 (NVFP4_PLAN_FROM)"
    ),
    stage="startup",
    prevents="NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend {backend!r} provides neither.",
    source=NVFP4_SOURCE,
    docs="""Checks the backends asked for with `--kv-cache-dtype nvfp4` against SGLang's NVFP4 plan: prefill reads
either an FP8 E4M3 dequant workspace (flashinfer) or the NVFP4 cache natively (trtllm_mha, SM100 only);
decode is always trtllm_mha.

SGLang 0.5.23 refuses at start-up any other --attention-backend / --prefill-attention-backend ("... provides
neither"), native NVFP4 prefill off SM100 ("Native NVFP4 prefill currently requires SM100; ..."), a prefill
backend that contradicts --prefill-kv-cache-dequant-dtype, and a decode backend other than trtllm_mha ("NVFP4
decode requires --decode-attention-backend=trtllm_mha; ..."). It runs before SGLang's generic backend default,
so MLA models (whose defaults are MLA backends) and fa4 are refused too. Older SGLang (and older notes) had
no such step and judged NVFP4 by the KV4 lists alone.""",
    fix_title="Give no backend with --kv-cache-dtype nvfp4 (or --attention-backend flashinfer / trtllm_mha)",
)
def kv_nvfp4_backends(cfg, target):
    if cfg.kv_cache_dtype != "nvfp4":
        return skipped("applies to --kv-cache-dtype nvfp4")
    if target.major is None:
        return unknown("compute capability unknown")
    prefill, error = nvfp4_plan(cfg, target)
    if prefill is not None:
        return passed(f"prefill {prefill}, decode trtllm_mha", "flashinfer or trtllm_mha prefill, trtllm_mha decode")
    fix = ["--attention-backend flashinfer"] if target.major != 10 else ["--attention-backend trtllm_mha"]
    return failed(
        f"{cfg.backend_label()} with --kv-cache-dtype nvfp4 on {gpu(target)}",
        "prefill flashinfer (FP8 workspace) or trtllm_mha (native, SM100), decode trtllm_mha",
        fix + ["--kv-cache-dtype fp4_mx_block16"],
        reason=error,
    )


# kv_cache_hook.py handle_kv4_compatibility (0.5.21-0.5.23, :139-232): speculative decoding on SM100's native
# NVFP4 layout (trtllm_mha on a phase).
NVFP4_SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "NGRAM")
NVFP4_SPEC_UNSUPPORTED = ("DFLASH", "DSPARK")
SPEC_ATTENTION_MODE_DEFAULT = "prefill"  # fields/spec.py speculative_attention_mode


@rule(
    id="kv-nvfp4-speculative",
    title="Speculative decoding on SM100's native NVFP4 KV: EAGLE/NEXTN with a trtllm_mha draft, or breadth-1 NGRAM",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: handle_kv4_compatibility's native-NVFP4 speculative checks (kv_cache_hook.py:139-232) "
        "are the same code in 0.5.21, 0.5.22 and 0.5.23 (diff of :125-260: none); the message first appears in "
        "0.5.21 (:227; bench/release_walk.py grep)"
    ),
    needs_gpu=True,
    stage="startup",
    prevents="SM100 native NVFP4 speculative decoding requires --speculative-draft-attention-backend=trtllm_mha so "
    "the draft worker consumes its physical NVFP4 KV layout; got {draft_backend!r}.",
    source=f"{KV_HOOK}, handle_kv4_compatibility",
    docs="""Checks speculative decoding with `--kv-cache-dtype nvfp4` on SM100/SM103, where trtllm_mha serves a phase
from the native NVFP4 layout.

SGLang refuses at start-up (kv_cache_hook.py:165-232 in sglang 0.5.23): DFLASH and DSPARK ("does not yet
support"), any algorithm but EAGLE, EAGLE3, NEXTN and NGRAM, NGRAM with a tree
(--speculative-ngram-max-bfs-breadth other than 1; its default is 10), and a draft model whose
--speculative-draft-attention-backend is not trtllm_mha (unset, SGLang picks trtllm_mha itself and logs it).""",
    fix_title="Use EAGLE/NEXTN with --speculative-draft-attention-backend trtllm_mha, or NGRAM with breadth 1",
)
def kv_nvfp4_speculative(cfg, target):
    algorithm = (cfg.speculative_algorithm or "").upper()
    if cfg.kv_cache_dtype != "nvfp4" or not algorithm:
        return skipped("applies to speculative decoding with --kv-cache-dtype nvfp4")
    if target.major != 10 or "trtllm_mha" not in (cfg.prefill_backend, cfg.decode_backend):
        return skipped("applies to SM100's native NVFP4 layout (trtllm_mha on a phase)")
    required = "EAGLE/EAGLE3/NEXTN with a trtllm_mha draft, or NGRAM with breadth 1"
    if algorithm in NVFP4_SPEC_UNSUPPORTED or algorithm not in NVFP4_SPEC_ALGORITHMS:
        return failed(
            f"--speculative-algorithm {algorithm} on native NVFP4", required, ["--speculative-algorithm EAGLE"]
        )
    if algorithm == "NGRAM":
        breadth = cfg.flags.get("speculative_ngram_max_bfs_breadth", NGRAM_DEFAULT_BREADTH)
        if breadth != 1:
            return failed(
                f"NGRAM with --speculative-ngram-max-bfs-breadth {breadth} on native NVFP4",
                required,
                ["--speculative-ngram-max-bfs-breadth 1"],
            )
        return passed("NGRAM with breadth 1", required)
    if cfg.draft_attention_backend not in (None, "trtllm_mha"):
        return failed(
            f"--speculative-draft-attention-backend {cfg.draft_attention_backend} on native NVFP4",
            required,
            ["--speculative-draft-attention-backend trtllm_mha"],
        )
    return passed(f"{algorithm} with a trtllm_mha draft", required)


@rule(
    id="kv-nvfp4-spec-attention-mode",
    title="Speculative decoding on SM100's mixed NVFP4 KV: target verify is switched to decode attention",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: the warning and the override of speculative_attention_mode first appear in 0.5.21 "
        "(kv_cache_hook.py:242) and are the same code to 0.5.23 (:233-250; bench/release_walk.py grep 'routes "
        "target verify')"
    ),
    needs_gpu=True,
    stage="startup",
    prevents="SM100 mixed NVFP4 speculative decoding routes target verify to trtllm_mha; overriding "
    "--speculative-attention-mode=prefill to decode.",
    source=f"{KV_HOOK}, handle_kv4_compatibility",
    docs="""Warns when speculative decoding on SM100/SM103 with `--kv-cache-dtype nvfp4` runs the mixed NVFP4 pair
(prefill flashinfer on an FP8 dequant workspace, decode trtllm_mha) with `--speculative-attention-mode
prefill`, SGLang's default: SGLang logs a warning and verifies on the decode backend instead.

FlashInfer prefill reads a transient FP8 dequant workspace whose host-built page layout cannot be
refreshed inside a target-verify CUDA graph; the trtllm_mha decode child reads the NVFP4 cache directly.
The mixed pair is what `--prefill-kv-cache-dequant-dtype fp8_e4m3` (or an explicit flashinfer prefill)
gives on SM100; SGLang's own NVFP4 choice there is trtllm_mha for both phases.""",
    fix_title="Pass --speculative-attention-mode decode (what SGLang switches to)",
)
def kv_nvfp4_spec_attention_mode(cfg, target):
    if cfg.kv_cache_dtype != "nvfp4" or not cfg.speculative_algorithm:
        return skipped("applies to speculative decoding with --kv-cache-dtype nvfp4")
    if target.major != 10 or (cfg.prefill_backend, cfg.decode_backend) != ("flashinfer", "trtllm_mha"):
        return skipped("applies to SM100's mixed NVFP4 pair (prefill flashinfer, decode trtllm_mha)")
    mode = cfg.flags.get("speculative_attention_mode", SPEC_ATTENTION_MODE_DEFAULT)
    if mode == "decode":
        return passed("--speculative-attention-mode decode", "decode attention for target verify")
    return warned(
        f"--speculative-attention-mode {mode} on the mixed NVFP4 pair (SGLang switches it to decode)",
        "--speculative-attention-mode decode",
        ["--speculative-attention-mode decode"],
    )


@rule(
    id="kv-nvfp4-rewrite",
    title="An NVFP4 KV cache silently moves decode (and prefill) to SGLang's NVFP4 backends",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: the NVFP4 prefill/decode rewrite (kv_cache_hook.py:84-97) is the same code in "
        "0.5.21, 0.5.22 and 0.5.23 (diff of :20-100: one import line); none in 0.5.20"
    ),
    stage="startup",
    reason="SGLang replaces the backend asked for with its NVFP4 pair (logged at info level only), so the server "
    "runs kernels nobody named.",
    source=NVFP4_SOURCE,
    docs="""Warns when `--kv-cache-dtype nvfp4` makes SGLang run other backends than the ones asked for: decode
always becomes trtllm_mha and prefill becomes flashinfer or trtllm_mha (e.g. --attention-backend flashinfer
runs flashinfer prefill with trtllm_mha decode).

The rest of the config is judged as SGLang runs it. Name the pair explicitly to make it visible in the launch
line.""",
    fix_title="Name the pair: --prefill-attention-backend flashinfer|trtllm_mha --decode-attention-backend trtllm_mha",
)
def kv_nvfp4_rewrite(cfg, target):
    if cfg.kv_cache_dtype != "nvfp4":
        return skipped("applies to --kv-cache-dtype nvfp4")
    changed = {k: v for k, v in cfg.rewrites.items() if k in ("prefill_attention_backend", "decode_attention_backend")}
    if not changed:
        return passed(f"prefill {cfg.prefill_backend}, decode {cfg.decode_backend}", "the backends SGLang runs")
    asked = ", ".join(f"{k.split('_')[0]} {v}" for k, v in changed.items())
    return warned(
        f"asked for {asked}; SGLang runs prefill {cfg.prefill_backend}, decode {cfg.decode_backend}",
        "the NVFP4 backends named in the launch line",
        [f"--prefill-attention-backend {cfg.prefill_backend}", "--decode-attention-backend trtllm_mha"],
    )


# (prefill fa4 or not, MLA model) -> SGLang's message and the declared feature of the backends its list names.
_KV4_MESSAGES = {
    ("fa4", True): (
        "KV4 FA4 MLA expects decode_attention_backend to be one of {choices}, but got {backend}",
        "kv4_fa4_mla_decode",
    ),
    ("fa4", False): (
        "KV4 FA4 MHA expects decode_attention_backend to be one of {choices}, but got {backend}",
        "kv4_fa4_mha_decode",
    ),
    ("other", True): ("KV4 MLA expects attention_backend to be one of {choices}, but got {backend}", "kv4_mla"),
    ("other", False): ("KV4 MHA expects attention_backend to be one of {choices}, but got {backend}", "kv4_mha"),
}


def _kv4_case(cfg) -> Optional[tuple[str, str]]:
    """("fa4"|"other", backend judged) when SGLang's KV4 backend list applies; None for the mixed-phase case."""
    prefill, decode = cfg.prefill_backend, cfg.decode_backend
    if prefill != decode and prefill != "fa4":
        return None
    if prefill == "fa4":
        return "fa4", decode
    return "other", cfg.attention_backend


def _kv4_rule(kind: str, mla: bool):
    template, feature = _KV4_MESSAGES[(kind, mla)]
    shape = "MLA" if mla else "MHA"

    def check(cfg, target):
        if cfg.kv_cache_dtype not in KV4:
            return skipped("applies to an FP4 KV cache (nvfp4, fp4_mx_block16)")
        if cfg.mla != mla:
            return skipped(f"applies to {shape} models")
        if not cfg.backends:
            return unknown("no attention backend known")
        case = _kv4_case(cfg)
        if case is None or case[0] != kind:
            return skipped("applies to " + ("prefill fa4" if kind == "fa4" else "one backend for both phases"))
        backend = case[1]
        choices = backend_kb.with_feature(feature, target.sglang_backends)
        if backend in choices:
            return passed(backend, "one of " + ", ".join(choices))
        flag = "--decode-attention-backend" if kind == "fa4" else "--attention-backend"
        return failed(
            f"{flag.lstrip('-').replace('-', ' ')} {backend} with --kv-cache-dtype {cfg.kv_cache_dtype}",
            "one of " + ", ".join(choices),
            [f"{flag} {choices[0]}"],
        )

    return template.format(choices=list(backend_kb.with_feature(feature)), backend="{backend}"), check


_KV4_VERIFIED = (
    "sglang 0.5.16-0.5.23: handle_kv4_compatibility gates on ('nvfp4', 'fp4_mx_block16') from 0.5.16 (0.5.15 and "
    "older check fp4_e2m1) with the same MHA lists in every release to 0.5.23 (server_args.py:5078/5114/5135 in "
    "0.5.16, also in 0.5.17-0.5.18; arg_groups/kv_cache_hook.py:41/77/98 in 0.5.19, :42/77/97 in 0.5.20, "
    ":117/287/307 in 0.5.23); the MLA lists add cutlass_mla through 0.5.19 (its era in rules/engines/sglang/capabilities.py). "
    "Checked against sglang 0.5.16's own resolution (bench/oracle_diff.py, bench/results/sglang-release-oracle.md)"
)


def _register_kv4(rule_id: str, title: str, kind: str, mla: bool) -> None:
    prevents, check = _kv4_rule(kind, mla)
    what = "with fa4 prefill, the decode backend" if kind == "fa4" else "the attention backend"
    rule(
        id=rule_id,
        title=title,
        engine="sglang",
        versions="sglang>=0.5.16",
        verified=_KV4_VERIFIED,
        prevents=prevents,
        stage="startup",
        source=f"{KV_HOOK}, handle_kv4_compatibility",
        docs=f"""Checks, for an FP4 KV cache (nvfp4, fp4_mx_block16) and an {"MLA" if mla else "MHA"} model, that
{what} is one SGLang's KV4 list allows.

SGLang asserts these lists at start-up. FA4 reads FP4 KV only for prefill, so with prefill fa4 the decode
backend must be another one; fa4 for both phases is refused. The MLA lists of 0.5.16-0.5.19 also name
cutlass_mla; from 0.5.20 they are flashinfer and trtllm_mla. Before 0.5.16 the check covered fp4_e2m1 only.""",
        fix_title="Pick a backend from SGLang's KV4 list",
    )(check)


_register_kv4("kv-fp4-mha-backend", "FP4 KV (MHA): triton, torch_native, flex_attention or trtllm_mha", "other", False)
_register_kv4("kv-fp4-mla-backend", "FP4 KV (MLA): flashinfer or trtllm_mla", "other", True)
_register_kv4(
    "kv-fp4-fa4-mha-decode", "FP4 KV with fa4 prefill (MHA): decode on triton/torch_native/flex", "fa4", False
)
_register_kv4("kv-fp4-fa4-mla-decode", "FP4 KV with fa4 prefill (MLA): decode on flashinfer or trtllm_mla", "fa4", True)


# kv_cache_hook.py uses_mixed_nvfp4: from this release the NVFP4 flashinfer + trtllm_mha pair is not warned about.
MIXED_NVFP4_RECIPE_SINCE = Version("0.5.21")


@rule(
    id="kv-fp4-mixed-phases",
    title="FP4 KV with different prefill and decode backends is unchecked by SGLang",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16-0.5.23: _handle_kv4_compatibility warns when prefill != decode and prefill is not fa4, "
        "gated on ('nvfp4', 'fp4_mx_block16') from 0.5.16 (server_args.py:5097 in 0.5.16, :5873 in 0.5.17, "
        ":6088 in 0.5.18; arg_groups/kv_cache_hook.py:60 in 0.5.19, :61 in 0.5.20, :270 in 0.5.21-0.5.23); "
        "0.5.7-0.5.15 gave the warning for fp4_e2m1 only; the nvfp4 flashinfer-prefill + trtllm_mha-decode "
        "exemption (uses_mixed_nvfp4) first in 0.5.21 (kv_cache_hook.py:148, the same in 0.5.23), so 0.5.16-0.5.20 "
        "warn for that pair too"
    ),
    stage="startup",
    prevents="Attention: Using KV4 with PREFILL = {prefill} and DECODE = {decode}. Compatibility issues are unlikely, "
    "but may occur in rare edge cases.",
    source=f"{KV_HOOK}, handle_kv4_compatibility",
    docs="""Warns when an FP4 KV cache is used with different prefill and decode backends and prefill is not
fa4 (except the supported NVFP4 flashinfer-prefill + trtllm_mha-decode recipe).

SGLang skips its KV4 backend lists in this case and only logs a warning, so the pair is untested. The NVFP4
flashinfer + trtllm_mha pair is warned about too before sglang 0.5.21, which made it a supported recipe.""",
    fix_title="Use one backend from SGLang's KV4 list for both phases",
)
def kv_fp4_mixed_phases(cfg, target):
    if cfg.kv_cache_dtype not in KV4:
        return skipped("applies to an FP4 KV cache (nvfp4, fp4_mx_block16)")
    prefill, decode = cfg.prefill_backend, cfg.decode_backend
    if not cfg.backends or prefill == decode or prefill == "fa4":
        return skipped("applies to different prefill and decode backends without fa4 prefill")
    recipe = cfg.kv_cache_dtype == "nvfp4" and (prefill, decode) == ("flashinfer", "trtllm_mha")
    if recipe and sglang_release(target) >= MIXED_NVFP4_RECIPE_SINCE:
        return passed("flashinfer prefill + trtllm_mha decode", "SGLang's mixed NVFP4 recipe")
    return warned(
        f"prefill {prefill} and decode {decode} with --kv-cache-dtype {cfg.kv_cache_dtype}",
        "one KV4 backend for both phases",
        [f"--attention-backend {'trtllm_mla' if cfg.mla else 'triton'}"],
    )


@rule(
    id="kv-dtype-removed",
    title="The KV-cache dtype is a choice of the engine's release",
    engine="sglang",
    versions="",  # every release: one older than the tables is judged with the oldest (it says so)
    verified=(
        "sglang 0.5.1-0.5.23: the choices of every final release and .postN wheel (0.5.1, 0.5.1.post3, 0.5.2 ... "
        "0.5.23, 33 releases) read by bench/sglang_choices.py into rules/engines/sglang/choices.json"
    ),
    stage="parse",
    prevents="argument --kv-cache-dtype: invalid choice: 'nvfp4' (choose from ...); the same error for "
    "--speculative-draft-kv-cache-dtype",
    source=f"{choices_kb.SOURCE}; {FIELD}; CPython Lib/argparse.py _check_value",
    docs="""Checks --kv-cache-dtype and --speculative-draft-kv-cache-dtype against the choices of the target's
SGLang release (probed, from a facts file or --engine-version; a .postN or an unlisted patch uses its
release's choices).

sglang 0.5.1 to 0.5.3 list only auto, fp8_e5m2 and fp8_e4m3; bf16 came in 0.5.4, fp4_e2m1 in 0.5.4.post3, mxfp8, nvfp4 and
fp4_mx_block16 in 0.5.16, and 0.5.21 dropped fp4_e2m1 (its new name is fp4_mx_block16). argparse refuses any
other value before anything loads. When the release is unknown the newest choices are used, and the
finding says so.""",
    fix_title="Use a KV dtype that release lists (the nearest is offered)",
)
def kv_dtype_removed(cfg, target):
    given = {
        "--kv-cache-dtype": cfg.kv_cache_dtype,
        "--speculative-draft-kv-cache-dtype": cfg.flags.get("speculative_draft_kv_cache_dtype"),
    }
    check = choice_check(target, given, family=_kv_family)
    required = f"a KV dtype sglang {check.release} lists{check.said}"
    if not check.refused:
        return passed(", ".join(f"{flag} {value}" for flag, value in given.items() if value), required)
    return failed(
        "; ".join(f"{r.flag} {r.value} is not a choice of sglang {check.release}" for r in check.refused),
        required,
        [f"{r.flag} {choice}" for r in check.refused for choice in r.closest],
    )


def _kv_family(name: str) -> str:
    """The kind of KV cache a dtype gives, for the nearest choice: bf16 is nearest auto, fp4_e2m1 fp4_mx_block16."""
    dtype = KV_DTYPES.get(name)
    if dtype is None or dtype.bits in (None, 16):
        return "unquantised"
    return dtype.family


def _torch(target) -> tuple[Optional[Version], Optional[Version]]:
    torch = target.facts.torch if target.facts else None
    if torch is None or not torch.installed or not torch.version:
        return None, None
    try:
        version = Version(torch.version.split("+")[0])
    except InvalidVersion:
        version = None
    return version, cuda_version(torch.cuda)


@rule(
    id="kv-fp4-torch",
    title="An FP4 KV cache needs torch >= 2.8 built for CUDA >= 12.8",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16-0.5.23: --kv-cache-dtype's help says 'Both require CUDA 12.8+ and PyTorch 2.8.0+' of nvfp4 "
        "and fp4_mx_block16 in every release (server_args.py 0.5.16 :614, 0.5.17 :681, 0.5.18 :690, 0.5.19 :602; "
        "arg_groups/fields/model.py 0.5.20 :206, 0.5.21 :199, 0.5.22 :201, 0.5.23 :207); neither dtype is a "
        "choice before 0.5.16. The wheels pin torch 2.11.0 (0.5.16-0.5.17), 2.13.0 (0.5.18-0.5.21), 2.14.1 "
        "(0.5.22-0.5.23) (METADATA Requires-Dist)"
    ),
    stage="load",
    reason="SGLang documents the requirement in --kv-cache-dtype's help; an older torch lacks the FP4 dtypes and "
    "kernels and fails when the pool is allocated or first written.",
    source=FIELD + " ('Both require CUDA 12.8+ and PyTorch 2.8.0+')",
    docs="""Checks, on a live probe or a saved report, that an FP4 KV cache (nvfp4, fp4_mx_block16) has a torch
of version 2.8 or newer built for CUDA 12.8 or newer.

FP4 KV uses torch's FP4 storage types and Blackwell-era kernels. With --gpu the torch build is unknown and
the rule is skipped.""",
    fix_title="Install torch >= 2.8 built for CUDA >= 12.8 (e.g. a cu128/cu130 wheel)",
    needs_software=True,
)
def kv_fp4_torch(cfg, target):
    if cfg.kv_cache_dtype not in KV4:
        return skipped("applies to an FP4 KV cache (nvfp4, fp4_mx_block16)")
    version, cuda = _torch(target)
    if version is None:
        return failed(
            "torch not installed (or its version unreadable)",
            "torch >= 2.8 with CUDA >= 12.8",
            ["pip install 'torch>=2.8'"],
        )
    if version < Version("2.8") or cuda is None or cuda < Version("12.8"):
        cuda_text = f"CUDA {cuda}" if cuda else "no CUDA"
        return failed(f"torch {version} ({cuda_text})", "torch >= 2.8 with CUDA >= 12.8", ["pip install 'torch>=2.8'"])
    return passed(f"torch {version} (CUDA {cuda})", "torch >= 2.8 with CUDA >= 12.8")


@rule(
    id="kv-mxfp8-torch",
    title="An MXFP8 KV cache needs torch with float8_e8m0fnu (>= 2.7)",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16-0.5.23: the MXFP8 pool's _create_buffers raises 'MXFP8 KV cache requires "
        "torch.float8_e8m0fnu support.' when torch lacks the dtype, in every release (mem_cache/memory_pool.py "
        "0.5.16 :3230, 0.5.17 :3300, 0.5.18 :3322, 0.5.19 :3293, 0.5.20 :3441, 0.5.21 :3524, 0.5.22 :3814, "
        "0.5.23 :3891); mxfp8 is not a choice before 0.5.16"
    ),
    stage="load",
    prevents="MXFP8 KV cache requires torch.float8_e8m0fnu support.",
    source=POOL,
    docs="""Checks, on a live probe or a saved report, that torch is new enough to have `torch.float8_e8m0fnu`
(added in PyTorch 2.7), the dtype of MXFP8's block scales.

The MXFP8 pool refuses to allocate without it at start-up. With --gpu the torch build is unknown and the
rule is skipped.""",
    fix_title="Install torch >= 2.7",
    needs_software=True,
)
def kv_mxfp8_torch(cfg, target):
    if not _mxfp8(cfg):
        return skipped("applies to --kv-cache-dtype mxfp8")
    version, _ = _torch(target)
    if version is None:
        return failed("torch not installed (or its version unreadable)", "torch >= 2.7", ["pip install 'torch>=2.7'"])
    if version < Version("2.7"):
        return failed(f"torch {version}", "torch >= 2.7 (float8_e8m0fnu)", ["pip install 'torch>=2.7'"])
    return passed(f"torch {version}", "torch >= 2.7")


# --- unified memory and the page-major KV layout ------------------------------------------------------------


def _unified_memory(cfg) -> bool:
    return bool(cfg.flags.get("enable_unified_memory"))


def _outside_of(cfg, allowed) -> list[str]:
    return sorted(b for b in cfg.backends if b not in allowed)


@rule(
    id="kv-page-major-backends",
    title="The page-major KV layout (and so --enable-unified-memory) admits only stride-aware backends",
    engine="sglang",
    versions="sglang>=0.5.19",
    verified=(
        "sglang 0.5.19-0.5.23: handle_page_major_kv_layout read in each release (kv_cache_hook.py 0.5.19 :290-360, "
        "0.5.20 :347-415, 0.5.21 :665-733, 0.5.22 :775-840, 0.5.23 :771-827): page-major asserts unified memory, "
        "the MLA list (with tokenspeed_mla through 0.5.22) and the MHA list are the same in each; K/V head dims "
        "that differ are refused under unified memory through 0.5.22 and admitted on triton/fa3/fa4 in 0.5.23 "
        "(bench/release_walk.py grep '--enable-page-major-kv-layout: the resolved attention backends')"
    ),
    stage="startup",
    prevents="--enable-page-major-kv-layout: the resolved attention backends {backends} are not in the allowed set "
    "{allowed_full} for this configuration. Pass a compatible --attention-backend.",
    source=backend_kb.PAGE_MAJOR_SOURCE,
    docs="""Checks `--enable-page-major-kv-layout` and `--enable-unified-memory` (which turns the page-major layout
on): page-major needs unified memory, and the resolved prefill and decode backends must be in SGLang's
allow-list: triton, fa3, trtllm_mla, flashinfer, cutedsl_mla, flashmla for MLA models; triton, fa3, fa4,
flashinfer, trtllm_mha for the rest; triton, fa3, fa4 when K and V head dims differ (from 0.5.23; earlier
releases refuse such a model under unified memory).

In the page-major layout one page holds every layer's K/V, so a slot's stride is the whole entry; only
backends whose kernels address the per-layer views by their strides read it correctly, and SGLang refuses
the others at start-up. (The linear-attention and Mamba kernels have their own list:
kv-page-major-linear-attn.)""",
    fix_title="Use --attention-backend triton (or another backend of the list)",
)
def kv_page_major_backends(cfg, target):
    page_major = bool(cfg.flags.get("enable_page_major_kv_layout"))
    if not (page_major or _unified_memory(cfg)):
        return skipped("applies to --enable-page-major-kv-layout or --enable-unified-memory")
    if not _unified_memory(cfg):
        return failed(
            "--enable-page-major-kv-layout without --enable-unified-memory",
            "--enable-unified-memory with it",
            ["--enable-unified-memory"],
        )
    if cfg.attention_backend is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    release = sglang_release(target)
    asymmetric = "asymmetric_kv" in cfg.features and not cfg.mla
    if asymmetric and release < backend_kb.PAGE_MAJOR_ASYMMETRIC_KV_FROM:
        return failed(
            f"--enable-unified-memory with K/V head dims that differ, sglang {release}",
            f"equal K/V head dims before sglang {backend_kb.PAGE_MAJOR_ASYMMETRIC_KV_FROM}",
        )
    if cfg.mla:
        allowed = backend_kb.PAGE_MAJOR_MLA_BACKENDS
        if release < backend_kb.TOKENSPEED_MLA_ALIAS_FROM:
            allowed = backend_kb.PAGE_MAJOR_MLA_BEFORE_ALIAS
    elif asymmetric:
        allowed = backend_kb.PAGE_MAJOR_ASYMMETRIC_KV_BACKENDS
    else:
        allowed = backend_kb.PAGE_MAJOR_MHA_BACKENDS
    required = f"prefill and decode in {', '.join(allowed)}"
    outside = _outside_of(cfg, allowed)
    if not outside:
        return passed(f"the page-major layout on {cfg.backend_label()}", required)
    return failed(f"the page-major layout on {', '.join(outside)}", required, ["--attention-backend triton"])


@rule(
    id="kv-page-major-linear-attn",
    title="The page-major KV layout (and so --enable-unified-memory) admits only stride-aware linear-attention and "
    "Mamba kernels",
    engine="sglang",
    versions="sglang>=0.5.19",
    verified=(
        "sglang 0.5.19-0.5.23: handle_page_major_kv_layout read in each release (bench/release_walk.py grep "
        "'linear-attention DECODE backend must'; kv_cache_hook.py 0.5.19 :379, 0.5.20 :436, 0.5.21 :754, 0.5.22 "
        ":861, 0.5.23 :849): decode triton / flashinfer, prefill triton / flashkda (flashinfer added in 0.5.23), "
        "cutedsl and helion added for MLA models, --mamba-backend triton; the same asserts in server_args.py 0.5.17 "
        "(:7988, helion from 0.5.18) behind a triton-only page-major layout, not judged. Oracle (sglang 0.5.23): "
        "Qwen3-Next and Llama with --enable-unified-memory and linear decode cutedsl refused, Qwen3-Next prefill "
        "cutedsl refused, prefill flashinfer accepted, Kimi-K3 (MLA) decode cutedsl accepted"
    ),
    stage="startup",
    prevents="--enable-page-major-kv-layout: linear-attention DECODE backend must be one of {decode_allowed} for the "
    "strided conv/SSM state; got {resolved_linear_decode!r}.",
    source=backend_kb.PAGE_MAJOR_SOURCE,
    docs="""Checks the linear-attention (GDN/KDA) and Mamba kernels under `--enable-page-major-kv-layout` or
`--enable-unified-memory` (which turns the page-major layout on): the decode backend
(`--linear-attn-decode-backend`, else `--linear-attn-backend`) must be triton or flashinfer, the prefill
backend triton, flashkda or (from 0.5.23) flashinfer, MLA models (the KDA hybrids Kimi-Linear and
Kimi-K3) may use cutedsl and helion for both, and `--mamba-backend` must be triton or unset.

The page-major layout stores the conv/SSM state in strided views; only kernels audited for those strides
read it correctly. SGLang asserts the flags whatever the model, so a launch that names another kernel is
refused at start-up even when the model has no linear-attention layers.""",
    fix_title="Use --linear-attn-backend triton and --mamba-backend triton",
)
def kv_page_major_linear_attn(cfg, target):
    if not (cfg.flags.get("enable_page_major_kv_layout") or _unified_memory(cfg)):
        return skipped("applies to --enable-page-major-kv-layout or --enable-unified-memory")
    release = sglang_release(target)
    mla_extra = backend_kb.PAGE_MAJOR_LINEAR_MLA_BACKENDS if cfg.mla else ()
    decode_allowed = (*backend_kb.PAGE_MAJOR_LINEAR_DECODE_BACKENDS, *mla_extra)
    prefill_allowed = (*backend_kb.PAGE_MAJOR_LINEAR_PREFILL_BACKENDS, *mla_extra)
    if release >= backend_kb.PAGE_MAJOR_LINEAR_PREFILL_FLASHINFER_FROM:
        prefill_allowed = (*prefill_allowed, "flashinfer")
    default = cfg.flags.get("linear_attn_backend")
    phases = (
        ("decode", cfg.flags.get("linear_attn_decode_backend") or default, decode_allowed),
        ("prefill", cfg.flags.get("linear_attn_prefill_backend") or default, prefill_allowed),
    )
    problems, fix = [], []
    for phase, backend, allowed in phases:
        if backend not in (None, *allowed):
            problems.append(f"linear-attention {phase} {backend}")
            fix.append(f"--linear-attn-{phase}-backend triton")
    mamba = cfg.flags.get("mamba_backend")
    if mamba not in (None, backend_kb.PAGE_MAJOR_MAMBA_BACKEND):
        problems.append(f"--mamba-backend {mamba}")
        fix.append(f"--mamba-backend {backend_kb.PAGE_MAJOR_MAMBA_BACKEND}")
    required = (
        f"linear-attention decode in {', '.join(decode_allowed)}, prefill in {', '.join(prefill_allowed)}, "
        "--mamba-backend triton"
    )
    if not problems:
        found = ", ".join(f"linear-attention {phase} {backend or 'triton'}" for phase, backend, _ in phases)
        return passed(f"the page-major layout with {found}", required)
    return failed(f"the page-major layout with {', '.join(problems)}", required, [" ".join(fix)])


@rule(
    id="kv-unified-memory-speculative",
    title="--enable-unified-memory with speculative decoding: EAGLE/EAGLE3/DSPARK/DFLASH, a linear chain, audited "
    "backends",
    engine="sglang",
    versions="sglang>=0.5.23",
    verified=(
        "sglang 0.5.23: handle_unified_memory_pool read (kv_cache_hook.py:477-497 the audited sets, :500-526, "
        ":591-654). The checks change in every release from 0.5.18 (0.5.22: no top-k check, EAGLE's MHA set "
        "without trtllm_mha, DSPARK without fa4; 0.5.18-0.5.21 other sets; diffed 0.5.21-0.5.23), so only 0.5.23 "
        "is judged"
    ),
    stage="startup",
    prevents="--enable-unified-memory + EAGLE/EAGLE3 requires the target on the spec-verify-audited attention "
    "backends {eagle_allowed} (got {eagle_backends}).",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE}, _assert_spec_verify_backends",
    docs="""Checks speculative decoding with `--enable-unified-memory`: the algorithm is EAGLE, EAGLE3, DSPARK or
DFLASH; the draft is a linear chain (`--speculative-eagle-topk` 1 or unset); EAGLE/EAGLE3 needs a
hybrid target (sliding-window or Mamba layers: its draft lives inside the target's entries), target
backends among triton/flashinfer/fa3/trtllm_mha (MLA: triton, trtllm_mla, cutedsl_mla, flashmla,
flashinfer, fa3) and a draft backend among triton/flashinfer/fa3/trtllm_mha; DSPARK's backends among the
MLA list plus fa4, DFLASH's among triton/flashinfer/fa3/trtllm_mha; with `--dcp-size` > 1 flashinfer is
not audited for DSPARK/DFLASH verify.

The unified pool hands out virtual KV ids; only these paths translate speculative verify indices to
physical ones, and SGLang asserts the rest at start-up. A model whose every layer is windowed counts as
hybrid here (SGLang's is_hybrid_swa does not).""",
    fix_title="Use EAGLE on a hybrid model with fa3/flashinfer/triton, top-k 1; or drop --enable-unified-memory",
)
def kv_unified_memory_speculative(cfg, target):
    algorithm = (cfg.speculative_algorithm or "").upper()
    if not _unified_memory(cfg) or not algorithm:
        return skipped("applies to speculative decoding with --enable-unified-memory")
    if algorithm not in backend_kb.UNIFIED_MEMORY_SPEC_ALGORITHMS:
        return failed(
            f"--speculative-algorithm {algorithm} with --enable-unified-memory",
            f"one of {', '.join(backend_kb.UNIFIED_MEMORY_SPEC_ALGORITHMS)}",
            ["--speculative-algorithm EAGLE"],
        )
    if cfg.speculative_eagle_topk not in (None, 1):
        return failed(
            f"--speculative-eagle-topk {cfg.speculative_eagle_topk} with --enable-unified-memory",
            "a linear draft chain (top-k 1)",
            ["--speculative-eagle-topk 1"],
        )
    if cfg.attention_backend is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    dcp = (cfg.flags.get("dcp_size") or 1) > 1
    if algorithm in ("EAGLE", "EAGLE3"):
        if cfg.model is None:
            return unknown("EAGLE with --enable-unified-memory needs a hybrid target: give --model")
        if "sliding_window" not in cfg.features and not cfg.model.hybrid_linear:
            return failed(
                f"{algorithm} with --enable-unified-memory on {cfg.model.name} (no sliding-window or Mamba layers)",
                "a hybrid-SWA or Mamba-hybrid target",
            )
        allowed = backend_kb.UNIFIED_SPEC_VERIFY_BACKENDS if cfg.mla else backend_kb.UNIFIED_SPEC_MHA_BACKENDS
        draft = {cfg.draft_attention_backend} if cfg.draft_attention_backend else set(cfg.backends)
        draft_outside = sorted(b for b in draft if b not in backend_kb.UNIFIED_SPEC_MHA_BACKENDS)
    else:
        allowed = backend_kb.UNIFIED_DSPARK_BACKENDS if algorithm == "DSPARK" else backend_kb.UNIFIED_SPEC_MHA_BACKENDS
        if dcp:
            allowed = tuple(b for b in allowed if b != "flashinfer")
        draft_outside = []
    required = f"target backends in {', '.join(allowed)}"
    outside = _outside_of(cfg, allowed)
    if outside:
        return failed(
            f"{algorithm} with --enable-unified-memory on {', '.join(outside)}", required, ["--attention-backend fa3"]
        )
    if draft_outside:
        return failed(
            f"{algorithm} draft on {', '.join(draft_outside)} with --enable-unified-memory",
            f"a draft backend in {', '.join(backend_kb.UNIFIED_SPEC_MHA_BACKENDS)}",
            ["--speculative-draft-attention-backend triton"],
        )
    return passed(f"{algorithm} with --enable-unified-memory on {cfg.backend_label()}", required)


@rule(
    id="kv-unified-memory-dcp",
    title="--enable-unified-memory with --dcp-size > 1: MLA models only, no sliding window, flashinfer / trtllm_mla / "
    "cutedsl_mla",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: _validate_unified_memory_dcp first appears in 0.5.20 (kv_cache_hook.py:300-335) "
        "and keeps its asserts to 0.5.23 (:723-760; bench/release_walk.py grep '--enable-unified-memory with "
        "decode context parallelism'): the MLA, hybrid-SWA, PD and backend asserts read in 0.5.20 (:295-335), "
        "0.5.21 (:613-653), 0.5.22 (:724-764) and 0.5.23; the backend set names tokenspeed_mla too through 0.5.22 "
        "(an alias of cutedsl_mla in 0.5.23)"
    ),
    stage="startup",
    prevents="--enable-unified-memory with decode context parallelism (--dcp-size > 1) supports MLA models only "
    "(e.g. kimi-linear): the MHA unified pool has no DCP-aware masked write path "
    "(UnifiedMHATokenToKVPool.set_kv_buffer asserts dcp_kv_mask is None).",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE}, _validate_unified_memory_dcp",
    docs="""Checks `--enable-unified-memory` with decode context parallelism (`--dcp-size` > 1): the model is MLA,
has no sliding-window layers, and its full-attention layers run flashinfer, trtllm_mla or cutedsl_mla.

Under DCP the unified allocator widens its virtual id space; only the MLA pool has a DCP-aware write
path, the SWA allocator does not widen, and only those three backends translate their block tables
through the unified pool. SGLang asserts each at start-up.""",
    fix_title="Use --attention-backend flashinfer (or trtllm_mla on Blackwell) with an MLA model, or --dcp-size 1",
)
def kv_unified_memory_dcp(cfg, target):
    if not _unified_memory(cfg) or (cfg.flags.get("dcp_size") or 1) <= 1:
        return skipped("applies to --enable-unified-memory with --dcp-size > 1")
    if cfg.model is None:
        return unknown("needs the model (MLA or not, sliding window or not): give --model")
    if not cfg.mla:
        return failed(
            f"--enable-unified-memory --dcp-size {cfg.flags['dcp_size']} on an MHA model",
            "an MLA model",
            ["--dcp-size 1"],
        )
    if "sliding_window" in cfg.features:
        return failed(
            "--enable-unified-memory with DCP on a sliding-window model", "no sliding-window layers", ["--dcp-size 1"]
        )
    allowed = backend_kb.UNIFIED_DCP_BACKENDS
    if sglang_release(target) < backend_kb.TOKENSPEED_MLA_ALIAS_FROM:
        allowed = (*allowed, "tokenspeed_mla")
    outside = _outside_of(cfg, allowed)
    required = f"prefill and decode in {', '.join(allowed)}"
    if outside:
        return failed(
            f"--enable-unified-memory with DCP on {', '.join(outside)}", required, ["--attention-backend flashinfer"]
        )
    return passed(f"--enable-unified-memory with DCP on {cfg.backend_label()}", required)


def _full_prefill_graph_source(cfg) -> Optional[str]:
    """Where SGLang's prefill CUDA-graph backend FULL comes from, if it is FULL: --cuda-graph-config (JSON, first),
    --cuda-graph-backend-prefill, or Inkling's default when neither that flag nor --disable-prefill-cuda-graph
    is given."""
    try:
        graphs = json.loads(cfg.flags.get("cuda_graph_config") or "{}")
    except ValueError:
        graphs = {}
    prefill = graphs.get("prefill") if isinstance(graphs, dict) else None
    if isinstance(prefill, dict) and "backend" in prefill:
        return "--cuda-graph-config" if prefill["backend"] == "full" else None
    named = cfg.flags.get("cuda_graph_backend_prefill")
    if named is not None:
        return "--cuda-graph-backend-prefill full" if named == "full" else None
    architecture = cfg.model.architecture if cfg.model else None
    if architecture in backend_kb.INKLING_FULL_PREFILL_GRAPH_ARCHITECTURES and not cfg.flags.get(
        "disable_prefill_cuda_graph"
    ):
        return f"{architecture}'s default"
    return None


@rule(
    id="kv-unified-memory-full-prefill-graph",
    title="--enable-unified-memory switches the FULL prefill CUDA graph off unless attention is fa3/fa4",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: 'disabling the FULL prefill cuda-graph backend' in handle_unified_memory_pool "
        "(kv_cache_hook.py:285 in 0.5.20, :603 in 0.5.21, :702 in 0.5.22, :709 in 0.5.23; bench/release_walk.py "
        "grep), the fa3/fa4 set the same in each; none before 0.5.20. What makes prefill FULL, read in each: "
        "parse_cuda_graph_config's precedence (JSON, then --cuda-graph-backend-prefill, then the legacy off "
        "switches: diffed 0.5.20-0.5.23, only other keys changed), apply_inkling_prefill_cuda_graph_default (from "
        "0.5.19: cuda_graph_hook.py:500-505 in 0.5.20, :366-371 in 0.5.23), run before handle_cuda_graph_config and "
        "before handle_unified_memory_pool in each pipeline.py (0.5.20 :196, :202, :352); torch_native, "
        "flex_attention and --enable-mis switch both phases off first (attention_hook.py)"
    ),
    stage="startup",
    reason="SGLang replaces the FULL prefill CUDA graph asked for (or Inkling's default) with eager prefill, "
    "logging a warning only, so the server runs without the prefill graph the launch line names.",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE} (the FULL prefill cuda-graph fallback)",
    docs="""Warns when `--enable-unified-memory` makes SGLang switch off a FULL prefill CUDA graph: FULL from
`--cuda-graph-config` (`{"prefill": {"backend": "full"}}`, which wins), `--cuda-graph-backend-prefill full`,
or Inkling's model default (unless `--cuda-graph-backend-prefill` or `--disable-prefill-cuda-graph` is
given), with a prefill or decode attention backend other than fa3 or fa4.

FULL prefill capture builds its block table in a metadata path only the FlashAttention backends have; the
other backends' graph path has no extend branch, so SGLang runs prefill eagerly instead (decode capture is
unaffected). Naming `--cuda-graph-backend-prefill disabled` (or fa3 / fa4) makes the launch line say what
runs. Not modelled: other start-up steps that switch prefill capture off before this one (DSA prefill context
parallelism, Qwen4-Exp CP-TP sharing).""",
    fix_title="Pass --cuda-graph-backend-prefill disabled (what SGLang runs), or serve with fa3 / fa4",
)
def kv_unified_memory_full_prefill_graph(cfg, target):
    if not _unified_memory(cfg):
        return skipped("applies to --enable-unified-memory")
    source = _full_prefill_graph_source(cfg)
    if source is None:
        return skipped("applies to a FULL prefill CUDA graph")
    if cfg.attention_backend in backend_kb.NO_CUDA_GRAPH_BACKENDS or cfg.flags.get("enable_mis"):
        return skipped("CUDA graphs are already off (torch_native / flex_attention backend, or --enable-mis)")
    if not cfg.backends:
        return unknown("no attention backend chosen and none can be derived for this target")
    required = f"attention {' or '.join(backend_kb.FULL_PREFILL_GRAPH_BACKENDS)} for a FULL prefill graph"
    outside = _outside_of(cfg, backend_kb.FULL_PREFILL_GRAPH_BACKENDS)
    if not outside:
        return passed(f"FULL prefill graph ({source}) on {cfg.backend_label()}", required)
    fix = [] if source == "--cuda-graph-config" else ["--cuda-graph-backend-prefill disabled"]
    return warned(
        f"FULL prefill graph ({source}) with --enable-unified-memory on {', '.join(outside)} (SGLang runs prefill "
        "without a CUDA graph)",
        required,
        fix,
    )


# What handle_unified_memory_pool refuses beside --enable-unified-memory, each from the release that added it:
# (dest, as written, first release); bench/release_walk.py grep finds each message first in that release
UNIFIED_MEMORY_REFUSED = (
    ("enable_two_batch_overlap", "--enable-two-batch-overlap", Version("0.5.20")),
    ("enable_lmcache", "--enable-lmcache", Version("0.5.21")),
    ("enable_unified_cache_external_linker", "--enable-unified-cache-external-linker", Version("0.5.22")),
)
UNIFIED_EAGLE_HICACHE_FROM = Version("0.5.22")


@rule(
    id="kv-unified-memory-cache-features",
    title="--enable-unified-memory refuses two-batch overlap, LMCache, the external linker, and HiCache under EAGLE",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: handle_unified_memory_pool asserts no --enable-two-batch-overlap from 0.5.20 "
        "(kv_cache_hook.py:251 in 0.5.20, :654 in 0.5.23), no --enable-lmcache from 0.5.21 (:577, :659), no "
        "--enable-unified-cache-external-linker from 0.5.22 (:658, :665), and with EAGLE / EAGLE3 (NEXTN resolves to "
        "EAGLE before it, pipeline.py) no --enable-hierarchical-cache from 0.5.22 (:675, :682); bench/release_walk.py "
        "grep 'unified-memory does not support --enable-two-batch-overlap', 'is not yet compatible with "
        "--enable-lmcache', 'external-linker: direct L3', 'EAGLE/EAGLE3 does not support'"
    ),
    stage="startup",
    prevents="--enable-unified-memory does not support --enable-two-batch-overlap: the iteration's read tables are "
    "indexed by the whole batch's rows, and a TBO child's readers do not offset into them.; --enable-unified-memory "
    "is not yet compatible with --enable-lmcache; --enable-unified-memory does not support "
    "--enable-unified-cache-external-linker; --enable-unified-memory + EAGLE/EAGLE3 does not support "
    "--enable-hierarchical-cache",
    source=f"{KV_HOOK}, handle_unified_memory_pool",
    docs="""Checks the features `--enable-unified-memory` refuses beside it: `--enable-two-batch-overlap` (from
0.5.20), `--enable-lmcache` (0.5.21), `--enable-unified-cache-external-linker` (0.5.22) and, with EAGLE /
EAGLE3 / NEXTN, `--enable-hierarchical-cache` (0.5.22).

The unified pool hands out virtual KV ids and one whole-batch read table; TBO's half-batches do not offset
into it, LMCache and the external linker index device buffers with the ids they are given, and HiCache keeps
a host pool the fused EAGLE draft does not have. SGLang asserts each at start-up. (Its refusal of
`--disaggregation-decode-retraction-backup host_pool` under EAGLE reads a flag this tool does not model.)""",
    fix_title="Drop the refused feature, or --enable-unified-memory",
)
def kv_unified_memory_cache_features(cfg, target):
    if not _unified_memory(cfg):
        return skipped("applies to --enable-unified-memory")
    release = sglang_release(target)
    refused = [written for dest, written, since in UNIFIED_MEMORY_REFUSED if release >= since and cfg.flags.get(dest)]
    eagle = (cfg.speculative_algorithm or "").upper() in ("EAGLE", "EAGLE3", "NEXTN")
    if eagle and release >= UNIFIED_EAGLE_HICACHE_FROM and cfg.flags.get("enable_hierarchical_cache"):
        refused.append(f"--enable-hierarchical-cache with {cfg.speculative_algorithm.upper()}")
    required = f"none of the features sglang {release} refuses with unified memory"
    if refused:
        return failed(f"--enable-unified-memory with {', '.join(refused)}", required)
    return passed("--enable-unified-memory with none of the features it refuses", required)


LAZY_COMPACTION_ENV = "SGLANG_DISABLE_LAZY_COMPACTION"
UNIFIED_PD_TRANSFER_BACKENDS = ("mooncake",)  # server_args.py _unified_memory_pd_transfer_backends, 0.5.21-0.5.23
# handle_unified_memory_pool's PD checks added in 0.5.21 (kv_cache_hook.py:496-545): Mooncake with a speculative
# algorithm, and the decode host pools' model limits (0.5.21 also refuses hybrid-SWA with the host_pool backup)
UNIFIED_PD_HOST_POOLS_FROM = Version("0.5.21")
UNIFIED_HOST_POOL_SWA_UNTIL = Version("0.5.22")
# What a decode host pool's H2D/D2H copies cannot translate under the unified pool (use_mla_backend, mambaish_config,
# model_config.is_hybrid_swa)
HOST_POOL_MODEL_KINDS = {
    "mla": "MLA",
    "hybrid_linear": "Mamba / linear-attention layers",
    "sliding_window": "sliding-window layers",
}


def _host_pool_model_kinds(cfg) -> set[str]:
    model = cfg.model
    on = {"mla": cfg.mla, "hybrid_linear": model.hybrid_linear, "sliding_window": "sliding_window" in cfg.features}
    return {kind for kind, present in on.items() if present}


@rule(
    id="kv-unified-memory-pd",
    title="--enable-unified-memory with PD disaggregation: Mooncake without speculation, no PP, lazy compaction, no "
    "HiSparse; decode host pools on plain models",
    engine="sglang",
    versions="sglang>=0.5.18",
    verified=(
        "sglang 0.5.18-0.5.23: the PD block of _handle_unified_memory_pool / handle_unified_memory_pool read in each "
        "release: mooncake only, --pp-size 1, lazy compaction and no --enable-hisparse from 0.5.18 (server_args.py:"
        "8289-8310 in 0.5.18, kv_cache_hook.py:202-225 in 0.5.20); from 0.5.21 the transfer set comes from "
        "server_args._unified_memory_pd_transfer_backends ({'mooncake'} in 0.5.21-0.5.23), Mooncake refuses a "
        "speculative algorithm, decode KV offload needs file storage and no MLA / hybrid-Mamba / hybrid-SWA model, "
        "and the host_pool backup no hybrid-Mamba model (kv_cache_hook.py:482-545 in 0.5.21, where the backup also "
        "refuses hybrid-SWA and the decode radix cache; 0.5.22 :530-590 and 0.5.23 :533-593 the same, diffed)"
    ),
    stage="startup",
    prevents="--enable-unified-memory with PD disaggregation supports only these transfer backends: mooncake; got "
    "{backend!r}.; --enable-unified-memory with PD disaggregation does not support pipeline parallelism "
    "(whole-envelope transfer has no per-layer entries to subset).; --enable-unified-memory with PD "
    "disaggregation does not support speculative decoding with the Mooncake transfer backend.; "
    "--enable-unified-memory with PD disaggregation requires lazy compaction; unset SGLANG_DISABLE_LAZY_COMPACTION.; "
    "--enable-unified-memory with PD disaggregation is not compatible with --enable-hisparse: ...; "
    "--enable-unified-memory with decode KV offload currently supports --hicache-storage-backend=file only.; "
    "--enable-unified-memory decode KV offload does not support MLA models yet.; ... does not support hybrid-Mamba "
    "models.; ... does not support hybrid-SWA H2D/D2H transfers yet.; --enable-unified-memory host-pool decode "
    "retraction does not support hybrid-Mamba models.",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE} (PD disaggregation)",
    docs="""Checks `--enable-unified-memory` on a PD server (`--disaggregation-mode` prefill or decode): the transfer
backend is mooncake, `--pp-size` is 1, SGLANG_DISABLE_LAZY_COMPACTION is not set, `--enable-hisparse` is not
given, and from 0.5.21 no speculative algorithm rides Mooncake; decode KV offload
(`--disaggregation-decode-enable-offload-kvcache`) takes `--hicache-storage-backend file` and a model with no
MLA, Mamba / linear or sliding-window layers; the host_pool retraction backup a model with no Mamba / linear
layers (0.5.21: no sliding-window layers either).

PD ships the unified pool's whole entries (every layer's K/V of a slot) in one transfer, which only Mooncake's
path implements and which has no per-layer subset for pipeline stages; its ids are virtual, and the HiSparse
prealloc path, a draft's KV and the host pools' H2D/D2H copies of MLA, Mamba and SWA rows do not translate
them. SGLang asserts each at start-up. A model whose every layer is windowed counts as hybrid-SWA here. The
0.5.21 refusal of the decode radix cache under the host_pool backup reads a flag this tool does not model.""",
    fix_title="Use --disaggregation-transfer-backend mooncake, --pp-size 1, no speculative decoding or HiSparse (or "
    "drop --enable-unified-memory)",
)
def kv_unified_memory_pd(cfg, target):
    flags = cfg.flags
    mode = flags.get("disaggregation_mode") or "null"
    if not _unified_memory(cfg) or mode == "null":
        return skipped("applies to --enable-unified-memory with PD disaggregation")
    release = sglang_release(target)
    transfer = flags.get("disaggregation_transfer_backend") or DEFAULT_TRANSFER_BACKEND
    problems, fix = [], []
    if transfer not in UNIFIED_PD_TRANSFER_BACKENDS:
        problems.append(f"--disaggregation-transfer-backend {transfer}")
        fix.append("--disaggregation-transfer-backend mooncake")
    if cfg.pp_size > 1:
        problems.append(f"--pp-size {cfg.pp_size}")
        fix.append("--pp-size 1")
    if release >= UNIFIED_PD_HOST_POOLS_FROM and _speculative(cfg):
        problems.append(f"--speculative-algorithm {cfg.speculative_algorithm} over Mooncake")
    if env_true(cfg, LAZY_COMPACTION_ENV):
        problems.append(f"{LAZY_COMPACTION_ENV}={cfg.env[LAZY_COMPACTION_ENV]}")
        fix.append(f"unset {LAZY_COMPACTION_ENV}")
    if flags.get("enable_hisparse"):
        problems.append("--enable-hisparse")
    host_pool_limits = []
    if release >= UNIFIED_PD_HOST_POOLS_FROM and flags.get("disaggregation_decode_enable_offload_kvcache"):
        if flags.get("hicache_storage_backend") != "file":
            problems.append(f"decode KV offload to --hicache-storage-backend {flags.get('hicache_storage_backend')}")
            fix.append("--hicache-storage-backend file")
        host_pool_limits.append(("decode KV offload", ("mla", "hybrid_linear", "sliding_window")))
    if release >= UNIFIED_PD_HOST_POOLS_FROM and flags.get("disaggregation_decode_retraction_backup") == "host_pool":
        backup_limits = (
            ("hybrid_linear", "sliding_window") if release < UNIFIED_HOST_POOL_SWA_UNTIL else ("hybrid_linear",)
        )
        host_pool_limits.append(("the host_pool backup", backup_limits))
    if host_pool_limits and cfg.model is None:
        return unknown("the decode host pool's limits depend on the model (MLA, Mamba, sliding window): give --model")
    kinds = _host_pool_model_kinds(cfg) if host_pool_limits else set()
    problems.extend(
        f"{pool} on a model with {HOST_POOL_MODEL_KINDS[kind]}"
        for pool, limits in host_pool_limits
        for kind in limits
        if kind in kinds
    )
    required = "what the unified pool's whole-entry PD transfer supports"
    found = f"--enable-unified-memory on a PD {mode} server"
    if problems:
        return failed(f"{found} with {', '.join(problems)}", required, [" ".join(fix)] if fix else [])
    return passed(f"{found} over {transfer}", required)


# --- host cache tiers: HiCache, LMCache, the decode host pool (handle_cache_compatibility) -------------------


def _speculative(cfg) -> bool:
    """SpeculativeAlgorithm.from_string(...).is_speculative(): an algorithm other than NONE."""
    return (cfg.speculative_algorithm or "NONE").upper() != "NONE"


@rule(
    id="kv-lmcache-compatibility",
    title="--enable-lmcache: the radix cache on, colocated serving, no HiCache, linker, speculative decoding, DP "
    "attention, DCP or streaming sessions",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: the --enable-lmcache block of handle_cache_compatibility (kv_cache_hook.py:433-475), "
        "diffed 0.5.21-0.5.23: the same checks, DP attention read as --enable-dp-attention through 0.5.22 and "
        "attn_dp_enabled_of in 0.5.23; bench/release_walk.py grep 'LMCacheUnifiedRadixCache' finds none before "
        "0.5.21 (0.5.17-0.5.20 refuse LMCache only with HiCache under DCP, hicache_hook.py)"
    ),
    stage="startup",
    prevents="--enable-lmcache and --enable-hierarchical-cache are mutually exclusive; --enable-lmcache and "
    "--enable-unified-cache-external-linker are mutually exclusive; --enable-lmcache requires radix cache to be "
    "enabled; LMCacheUnifiedRadixCache does not yet support speculative decoding; LMCacheUnifiedRadixCache does not "
    "yet support DP attention; --enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware "
    "index translation; LMCacheUnifiedRadixCache does not yet support streaming sessions; "
    "--hicache-host-memory-mode=buffer_only is a HiCache-only mode; LMCacheUnifiedRadixCache currently supports "
    "colocated prefill/decode scheduling only",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks what `--enable-lmcache` refuses beside it: `--enable-hierarchical-cache`,
`--enable-unified-cache-external-linker`, `--disable-radix-cache`, a speculative algorithm, DP attention,
`--dcp-size` > 1, `--enable-streaming-session`, `--hicache-host-memory-mode buffer_only` and a
`--disaggregation-mode` other than null.

LMCache replaces the radix cache with its own LMCacheUnifiedRadixCache, which keeps one tree per
colocated server and indexes device KV with the plain ids it is given: another cache tier, a draft
model's pool, DP-attention groups, DCP's widened ids, streaming sessions and PD transfer are not wired
into it yet, and SGLang refuses each at start-up.""",
    fix_title="Drop the feature LMCache refuses (or --enable-lmcache)",
)
def kv_lmcache_compatibility(cfg, target):
    if not cfg.flags.get("enable_lmcache"):
        return skipped("applies to --enable-lmcache")
    flags = cfg.flags
    refused = [
        flag
        for flag, given in (
            ("--enable-hierarchical-cache", flags.get("enable_hierarchical_cache")),
            ("--enable-unified-cache-external-linker", flags.get("enable_unified_cache_external_linker")),
            ("--disable-radix-cache", flags.get("disable_radix_cache")),
            (f"--speculative-algorithm {cfg.speculative_algorithm}", _speculative(cfg)),
            (f"DP attention ({attention_dp_size(cfg)} groups)", attention_dp_size(cfg) > 1),
            (f"--dcp-size {flags.get('dcp_size')}", (flags.get("dcp_size") or 1) > 1),
            ("--enable-streaming-session", flags.get("enable_streaming_session")),
            ("--hicache-host-memory-mode buffer_only", flags.get("hicache_host_memory_mode") == "buffer_only"),
            (
                f"--disaggregation-mode {flags.get('disaggregation_mode')}",
                (flags.get("disaggregation_mode") or "null") != "null",
            ),
        )
        if given
    ]
    required = "LMCache on a colocated server with the radix cache and none of the features it refuses"
    if refused:
        return failed(f"--enable-lmcache with {', '.join(refused)}", required)
    return passed("--enable-lmcache with none of the features it refuses", required)


HICACHE_HOOK = "sglang: python/sglang/srt/arg_groups/hicache_hook.py"
# resolve_hicache_dcp_compatibility (server_args.py in 0.5.17-0.5.18): its refusals, by the releases they hold
HICACHE_DCP_FROM = Version("0.5.17")
HICACHE_DCP_DSPARK_FROM = Version("0.5.18")  # 0.5.17 refuses every speculative algorithm
HICACHE_DCP_STORAGE_BUFFER_ONLY_FROM = Version("0.5.23")  # 0.5.17-0.5.22 refuse any L3 storage backend


@rule(
    id="kv-hicache-dcp",
    title="HiCache with --dcp-size > 1: MLA models only, no LMCache / HiSparse, DSPARK as the only draft, L3 "
    "storage limits",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23: resolve_hicache_dcp_compatibility read in each release (server_args.py:7160-7195 in "
        "0.5.17, :7397-7430 in 0.5.18; arg_groups/hicache_hook.py:71-105 in 0.5.19, :110-145 in 0.5.21 and "
        "0.5.22, :130-165 in 0.5.23): LMCache, HiSparse and an MHA model refused in each; every speculative "
        "algorithm in 0.5.17, all but DSPARK from 0.5.18; any --hicache-storage-backend through 0.5.22, only with "
        "--hicache-host-memory-mode buffer_only in 0.5.23 (bench/release_walk.py grep 'HiSparse host pool is "
        "constructed without DCP', 'only supports DSPARK speculative'); none before 0.5.17"
    ),
    stage="startup",
    prevents="--enable-hisparse with --dcp-size > 1 is not supported: the HiSparse host pool is constructed without "
    "DCP translation.; --enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware index "
    "translation.; HiCache L3 with DCP does not support buffer_only host memory.; HiCache with --dcp-size > 1 only "
    "supports DSPARK speculative decoding; other draft-model host pools have no DCP index translation.; HiCache with --dcp-size > 1 is only supported for MLA models: the index translation lives in "
    "MLATokenToKVPoolHost, and the MHA host pool has none.",
    source=f"{HICACHE_HOOK}, resolve_hicache_dcp_compatibility",
    docs="""Checks `--enable-hierarchical-cache` with decode context parallelism (`--dcp-size` > 1): an MLA model,
no `--enable-lmcache` or `--enable-hisparse`, no speculative algorithm but DSPARK (0.5.17: none at all), and
no `--hicache-storage-backend` (0.5.17-0.5.22) or, in 0.5.23, none with `--hicache-host-memory-mode
buffer_only`.

Under DCP each rank holds an interleaved shard of every page and the host pool widens its slot ids; only the
MLA host pool translates them to each rank's physical slots, and the draft-model, LMCache and HiSparse host
pools do not. SGLang refuses each at start-up.""",
    fix_title="Serve an MLA model, drop the refused feature, or --dcp-size 1",
)
def kv_hicache_dcp(cfg, target):
    flags = cfg.flags
    if not flags.get("enable_hierarchical_cache") or (flags.get("dcp_size") or 1) <= 1:
        return skipped("applies to --enable-hierarchical-cache with --dcp-size > 1")
    if cfg.model is None:
        return unknown("HiCache with DCP needs an MLA model: give --model")
    release = sglang_release(target)
    refused = []
    storage = flags.get("hicache_storage_backend")
    if storage is not None and release < HICACHE_DCP_STORAGE_BUFFER_ONLY_FROM:
        refused.append(f"--hicache-storage-backend {storage}")
    elif storage is not None and flags.get("hicache_host_memory_mode") == "buffer_only":
        refused.append(f"--hicache-storage-backend {storage} with --hicache-host-memory-mode buffer_only")
    algorithm = (cfg.speculative_algorithm or "NONE").upper()
    allowed_drafts = ("NONE", "DSPARK") if release >= HICACHE_DCP_DSPARK_FROM else ("NONE",)
    if algorithm not in allowed_drafts:
        refused.append(f"--speculative-algorithm {cfg.speculative_algorithm}")
    refused += [flag for flag in ("--enable-lmcache", "--enable-hisparse") if flags.get(flag[2:].replace("-", "_"))]
    if not cfg.mla:
        refused.append(f"an MHA model ({cfg.model.name})")
    required = "an MLA model without the host pools DCP cannot translate"
    found = f"HiCache with --dcp-size {flags['dcp_size']}"
    if refused:
        return failed(f"{found} with {', '.join(refused)}", required, ["--dcp-size 1"])
    return passed(f"{found} on {cfg.model.name}", required)


# handle_hicache's checks of the unified cache's external linker (direct L3), by the first release holding them
EXTERNAL_LINKER_FROM = Version("0.5.20")  # no HiCache, no --hicache-storage-backend (hicache_hook.py:24-33)
LINKER_MLA_DEDUP_FROM = Version("0.5.21")  # --enable-linker-mla-dedup needs the Mooncake linker (:25-30)
LINKER_RADIX_CACHE_FROM = Version("0.5.23")  # the default radix cache, on (:44-48)
LINKER_MLA_DEDUP_BACKEND = "mooncake"
DEFAULT_LINKER_BACKEND = "mooncake"  # fields/memory.py unified_cache_external_linker_backend, 0.5.21-0.5.23


@rule(
    id="kv-external-linker",
    title="--enable-unified-cache-external-linker: the default radix cache on, no HiCache or HiCache storage; MLA "
    "dedup needs the Mooncake linker",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: handle_hicache read in each release: the linker refuses --enable-hierarchical-cache "
        "and --hicache-storage-backend from 0.5.20 (hicache_hook.py:24-33 in 0.5.20, :29-38 in 0.5.21 and 0.5.22, "
        ":49-58 in 0.5.23); --enable-linker-mla-dedup needs the linker on the mooncake backend from 0.5.21 (:25-30, "
        ":39-43 in 0.5.23); --disable-radix-cache and --radix-cache-backend are refused in 0.5.23 only (:44-48; "
        "bench/release_walk.py grep 'requires the default'); 0.5.19 has no linker flag"
    ),
    stage="startup",
    prevents="--enable-unified-cache-external-linker and --enable-hierarchical-cache are mutually exclusive.; "
    "--enable-unified-cache-external-linker does not use --hicache-storage-backend.; --enable-linker-mla-dedup "
    "requires the Mooncake linker.; --enable-unified-cache-external-linker requires the default UnifiedRadixCache "
    "with radix caching enabled.",
    source=f"{HICACHE_HOOK}, handle_hicache",
    docs="""Checks the unified cache's external linker (direct L3): `--enable-unified-cache-external-linker` comes
without `--enable-hierarchical-cache` or `--hicache-storage-backend` (from 0.5.20) and, in 0.5.23, without
`--disable-radix-cache` or `--radix-cache-backend`; `--enable-linker-mla-dedup` (from 0.5.21) needs the linker on
with `--unified-cache-external-linker-backend mooncake` (the default).

The linker links SGLang's UnifiedRadixCache straight to an external KV store with no host tier, so HiCache and
its storage backend are a second path to the same store, and a replaced or disabled radix cache has nothing
to link; MLA dedup (rank 0 loads the replicated MLA KV and broadcasts each layer) exists only in the Mooncake
linker. SGLang refuses each at start-up.""",
    fix_title="Use the linker alone on the default radix cache (or HiCache alone)",
)
def kv_external_linker(cfg, target):
    flags = cfg.flags
    linker = bool(flags.get("enable_unified_cache_external_linker"))
    dedup = bool(flags.get("enable_linker_mla_dedup"))
    if not (linker or dedup):
        return skipped("applies to --enable-unified-cache-external-linker or --enable-linker-mla-dedup")
    release = sglang_release(target)
    backend = flags.get("unified_cache_external_linker_backend") or DEFAULT_LINKER_BACKEND
    refused, fix = [], []
    if dedup and release >= LINKER_MLA_DEDUP_FROM and not (linker and backend == LINKER_MLA_DEDUP_BACKEND):
        refused.append(f"--enable-linker-mla-dedup on the {backend} linker" if linker else "--enable-linker-mla-dedup")
        fix.append("--enable-unified-cache-external-linker --unified-cache-external-linker-backend mooncake")
    if linker and release >= LINKER_RADIX_CACHE_FROM:
        if flags.get("disable_radix_cache"):
            refused.append("--disable-radix-cache")
        if flags.get("radix_cache_backend") is not None:
            refused.append(f"--radix-cache-backend {flags['radix_cache_backend']}")
    if linker and flags.get("enable_hierarchical_cache"):
        refused.append("--enable-hierarchical-cache")
    if linker and flags.get("hicache_storage_backend") is not None:
        refused.append(f"--hicache-storage-backend {flags['hicache_storage_backend']}")
    required = "the linker alone on the default radix cache; MLA dedup on the Mooncake linker"
    found = "the external linker" if linker else "the unified cache without its external linker"
    if refused:
        return failed(f"{found} with {', '.join(refused)}", required, [" ".join(fix)] if fix else [])
    return passed(f"the external linker on the {backend} backend", required)


HOST_MEMORY_MODE_FROM = Version("0.5.19")  # validate_hicache_host_memory_mode (hicache_hook.py:167-210 in 0.5.19)
BUFFER_ONLY_WRITE_BACK_REWRITE_FROM = Version("0.5.22")  # write_back becomes write_through; refused in 0.5.19-0.5.21


def _host_cache_path(cfg) -> bool:
    """Whether handle_hicache validates the host pool: HiCache, decode KV offload, or a PD decode server whose
    retraction backup is unset or host_pool (and the external linker, which returns before, is off)."""
    flags = cfg.flags
    decode_pool = flags.get("disaggregation_mode") == "decode" and flags.get(
        "disaggregation_decode_retraction_backup"
    ) in (None, "host_pool")
    active = flags.get("enable_hierarchical_cache") or flags.get("disaggregation_decode_enable_offload_kvcache")
    return bool((active or decode_pool) and not flags.get("enable_unified_cache_external_linker"))


@rule(
    id="kv-hicache-buffer-only",
    title="--hicache-host-memory-mode buffer_only needs a storage backend, a write-through policy and a non-decode "
    "server",
    engine="sglang",
    versions="sglang>=0.5.19",
    verified=(
        "sglang 0.5.19-0.5.23: validate_hicache_host_memory_mode, run by handle_hicache when HiCache, decode KV "
        "offload or a decode host pool is on, read in each release (hicache_hook.py:167-210 in 0.5.19, :180-223 in "
        "0.5.20, :206-249 in 0.5.21, :206-254 in 0.5.22, :247-295 in 0.5.23): buffer_only without "
        "--hicache-storage-backend and on a decode server refused in each; --hicache-write-policy write_back refused "
        "in 0.5.19-0.5.21 and rewritten to write_through from 0.5.22 (bench/release_walk.py grep 'buffer_only "
        "requires a storage backend', 'buffer_only is not supported on')"
    ),
    stage="startup",
    prevents="--hicache-host-memory-mode buffer_only requires a storage backend (--hicache-storage-backend): host "
    "memory is only a staging buffer and all cached data lives in storage.; --hicache-host-memory-mode buffer_only "
    "does not support --hicache-write-policy write_back; ...; --hicache-host-memory-mode buffer_only is not "
    "supported on decode instances: ...",
    source=f"{HICACHE_HOOK}, validate_hicache_host_memory_mode",
    docs="""Checks `--hicache-host-memory-mode buffer_only` where SGLang builds a host pool (HiCache, decode KV offload,
a PD decode server): it needs a `--hicache-storage-backend`, runs on a prefill or colocated server only, and
takes `--hicache-write-policy write_back` as write_through from 0.5.22 (a warning; 0.5.19-0.5.21 refuse it).

In buffer_only mode host memory is only a staging buffer: every cached page lives in the storage tier, so
there must be one, and there is no host tier to write back to. The decode server's prefetch and offload paths
bypass the buffer pipeline, so SGLang refuses the mode there.""",
    fix_title="Add --hicache-storage-backend (file, mooncake, ...) and --hicache-write-policy write_through, or "
    "--hicache-host-memory-mode cache",
)
def kv_hicache_buffer_only(cfg, target):
    flags = cfg.flags
    if flags.get("hicache_host_memory_mode") != "buffer_only" or not _host_cache_path(cfg):
        return skipped("applies to --hicache-host-memory-mode buffer_only where SGLang builds a host pool")
    release = sglang_release(target)
    refused, fix = [], []
    if flags.get("hicache_storage_backend") is None:
        refused.append("no --hicache-storage-backend")
        fix.append("--hicache-storage-backend file")
    write_back = flags.get("hicache_write_policy") == "write_back"
    if write_back and release < BUFFER_ONLY_WRITE_BACK_REWRITE_FROM:
        refused.append("--hicache-write-policy write_back")
        fix.append("--hicache-write-policy write_through")
    if flags.get("disaggregation_mode") == "decode":
        refused.append("a PD decode server")
        fix = ["--hicache-host-memory-mode cache"]
    required = "a storage backend, write-through, a prefill or colocated server"
    if refused:
        return failed(f"--hicache-host-memory-mode buffer_only with {', '.join(refused)}", required, [" ".join(fix)])
    if write_back:
        return warned(
            "--hicache-host-memory-mode buffer_only with --hicache-write-policy write_back (SGLang writes through)",
            required,
            ["--hicache-write-policy write_through"],
        )
    return passed("--hicache-host-memory-mode buffer_only over a storage backend", required)


# handle_hicache's layout / I/O normalisation in 0.5.23 (hicache_hook.py:168-244), with the defaults of fields/
# memory.py:128-146: page_first layout, kernel I/O
HICACHE_LAYOUT_FROM = Version("0.5.23")
DEFAULT_HICACHE_LAYOUT = "page_first"
DEFAULT_HICACHE_IO = "kernel"
LAYER_FIRST_REFUSING_STORAGE = ("mooncake", "npu_memcache")


def _hicache_layout(cfg) -> tuple[str, str]:
    """(layout, I/O backend) after resolve_layout_io_compatibility, resolve_storage_layout_compatibility and
    resolve_unified_memory_layout_io, in that order."""
    flags = cfg.flags
    layout = flags.get("hicache_mem_layout") or DEFAULT_HICACHE_LAYOUT
    io = flags.get("hicache_io_backend") or DEFAULT_HICACHE_IO
    if layout == "page_first_direct" and io == "kernel":
        io = "direct"
    if layout == "page_first" and io == "direct":
        layout = "page_first_direct"
    storage = flags.get("hicache_storage_backend")
    mooncake_dcp = storage == "mooncake" and (flags.get("dcp_size") or 1) > 1
    if storage in LAYER_FIRST_REFUSING_STORAGE and layout == "layer_first" and not mooncake_dcp:
        layout = {"direct": "page_first_direct", "kernel": "page_first"}.get(io, layout)
    if _unified_memory(cfg) and layout == "page_first_direct":
        layout, io = "page_first", "kernel"
    return layout, io


@rule(
    id="kv-hicache-layout-rewrite",
    title="SGLang rewrites a HiCache host layout / I/O backend pair it cannot run",
    engine="sglang",
    versions="sglang>=0.5.23",
    verified=(
        "sglang 0.5.23: handle_hicache's resolve_layout_io_compatibility, resolve_storage_layout_compatibility and "
        "resolve_unified_memory_layout_io read (hicache_hook.py:168-244). Each release differs before it (diffed "
        "0.5.19-0.5.22: no unified-memory step, no Mooncake-under-DCP exception, npu_memcache from 0.5.20; the "
        "layout defaults and the first two steps reach back to 0.5.8 and 0.5.10 in server_args.py), so only 0.5.23 "
        "is judged"
    ),
    stage="startup",
    reason="SGLang replaces the --hicache-mem-layout / --hicache-io-backend the launch names with another pair, "
    "logging a warning only, so the host tier runs with a layout or copy path the launch line does not say.",
    source=f"{HICACHE_HOOK}, resolve_layout_io_compatibility, resolve_storage_layout_compatibility, "
    "resolve_unified_memory_layout_io",
    docs="""Warns when SGLang rewrites the host cache's layout or I/O backend where it builds a host pool (HiCache,
decode KV offload, a PD decode server): page_first_direct with the kernel I/O backend runs direct I/O;
page_first with direct I/O runs page_first_direct; layer_first with a mooncake or npu_memcache storage backend
runs page_first_direct (direct I/O) or page_first (kernel I/O), except mooncake under `--dcp-size` > 1; under
`--enable-unified-memory`, page_first_direct runs page_first with kernel I/O.

The direct copies read whole pages, the kernel copies strided rows, and the L3 backends and the unified pool
each accept only some of the layouts, so SGLang picks the pair that works. Naming that pair makes the launch
line say what runs. (A `--disaggregation-decode-host-receive-threshold` below 1, which forces layer_first, is not
modelled.)""",
    fix_title="Name the layout and I/O backend SGLang runs",
)
def kv_hicache_layout_rewrite(cfg, target):
    if not _host_cache_path(cfg):
        return skipped("applies where SGLang builds a host pool (HiCache, decode KV offload, a PD decode server)")
    given = (
        cfg.flags.get("hicache_mem_layout") or DEFAULT_HICACHE_LAYOUT,
        cfg.flags.get("hicache_io_backend") or DEFAULT_HICACHE_IO,
    )
    layout, io = _hicache_layout(cfg)
    required = "a layout and I/O backend SGLang runs as named"
    if (layout, io) == given:
        return passed(f"host layout {layout} with {io} I/O", required)
    return warned(
        f"host layout {given[0]} with {given[1]} I/O (SGLang runs {layout} with {io} I/O)",
        required,
        [f"--hicache-mem-layout {layout} --hicache-io-backend {io}"],
    )


TLRU_CONFIG_FROM = Version("0.5.21")  # handle_cache_compatibility's tlru checks (kv_cache_hook.py:376-392)


def _tlru_config(cfg) -> Optional[dict]:
    """--radix-eviction-policy-config as SGLang's json.loads reads it; None when it is not a JSON object."""
    text = cfg.flags.get("radix_eviction_policy_config")
    if text is None:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


@rule(
    id="kv-radix-tlru-config",
    title="--radix-eviction-policy tlru needs a threshold above next_prompt_estimate in --radix-eviction-policy-config",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: the tlru checks of handle_cache_compatibility (kv_cache_hook.py:376-392, diffed "
        "0.5.21-0.5.23: unchanged); --radix-eviction-policy-config a JSON object (fields/memory.py, json.loads); "
        "bench/release_walk.py grep \"needs 'threshold' greater\" finds it first in 0.5.21"
    ),
    stage="startup",
    prevents="--radix-eviction-policy tlru requires non-negative 'threshold' and 'next_prompt_estimate' in "
    "--radix-eviction-policy-config, got {threshold} and {next_prompt_estimate}.; --radix-eviction-policy tlru needs "
    "'threshold' greater than 'next_prompt_estimate' in --radix-eviction-policy-config, got {threshold} <= "
    "{next_prompt_estimate}; otherwise no tokens are ever TEL-safe and T-LRU is exactly LRU.",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks `--radix-eviction-policy tlru`: `--radix-eviction-policy-config` holds a non-negative
`threshold` greater than its non-negative `next_prompt_estimate` (each 0 when absent, so tlru without a config
is refused).

Tail-optimized LRU evicts first the tokens of a conversation that cannot affect its tail time-to-first-token,
those beyond `threshold` less the next prompt's estimate; with a threshold at or below the estimate no token
qualifies and the policy is plain LRU, so SGLang refuses it at start-up.""",
    fix_title="Pass --radix-eviction-policy-config with a threshold above next_prompt_estimate",
)
def kv_radix_tlru_config(cfg, target):
    if cfg.flags.get("radix_eviction_policy") != "tlru":
        return skipped("applies to --radix-eviction-policy tlru")
    config = _tlru_config(cfg)
    required = "0 <= next_prompt_estimate < threshold"
    fix = ['--radix-eviction-policy-config \'{"threshold": 4096, "next_prompt_estimate": 512}\'']
    if config is None:
        return failed("--radix-eviction-policy-config that is not a JSON object", required, fix)
    threshold, estimate = config.get("threshold", 0), config.get("next_prompt_estimate", 0)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (threshold, estimate))
    if not numbers:
        return failed(f"threshold {threshold!r} and next_prompt_estimate {estimate!r}", required, fix)
    found = f"tlru with threshold {threshold} and next_prompt_estimate {estimate}"
    if threshold < 0 or estimate < 0 or threshold <= estimate:
        return failed(found, required, fix)
    return passed(found, required)


SWA_RANGE_FROM = Version("0.5.23")
# The model overrides that replace a given --swa-full-tokens-ratio in 0.5.23: _step3p_overrides sets 1.0 under
# HiCache (overrides.py:331-359); DeepSeek-V4's and Inkling's 0.1 fill an unset ratio only
SWA_RATIO_RESET_ARCHITECTURES = ("Step3p5ForCausalLM", "Step3p7ForConditionalGeneration")


@rule(
    id="kv-swa-ratio-range",
    title="--swa-full-tokens-ratio lies in (0, 1] and --swa-prefix-tails is not negative",
    engine="sglang",
    versions="sglang>=0.5.23",
    verified=(
        "sglang 0.5.23: handle_cache_compatibility range-checks the effective ratio and the prefix tails "
        "(kv_cache_hook.py:416-432), after the model overrides (Step3p5 / Step3p7 with HiCache: 1.0, overrides.py:"
        "331-359). The ratio check exists from 0.5.7 (server_args.py:2290) and the tails check from 0.5.21 "
        "(kv_cache_hook.py:431), but the models that reset the ratio differ by release (MiMo-V2-Flash in 0.5.7, "
        "server_args.py:1228-1231; bench/release_walk.py grep 'Reset swa_full_tokens_ratio to 1.0'), so only 0.5.23 "
        "is judged"
    ),
    stage="startup",
    prevents="--swa-full-tokens-ratio should be in range (0, 1.0].; --swa-prefix-tails should be a non-negative "
    "integer.",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks `--swa-full-tokens-ratio` (the sliding-window layers' KV tokens per full-attention layer token)
is above 0 and at most 1, as SGLang resolves it (Step3p5 / Step3p7 with HiCache run 1.0 whatever is given), and
that `--swa-prefix-tails` is not negative.

The ratio sizes the sliding-window pool against the full-attention pool, and the tails how many cached
prefix windows it keeps; SGLang refuses a value outside the range at start-up, for every model.""",
    fix_title="Pass --swa-full-tokens-ratio in (0, 1] (0.8 is the default) and a non-negative --swa-prefix-tails",
)
def kv_swa_ratio_range(cfg, target):
    flags = cfg.flags
    ratio, tails = flags.get("swa_full_tokens_ratio"), flags.get("swa_prefix_tails")
    if ratio is None and tails is None:
        return skipped("applies to --swa-full-tokens-ratio or --swa-prefix-tails")
    architecture = cfg.model.architecture if cfg.model else None
    if ratio is not None and architecture in SWA_RATIO_RESET_ARCHITECTURES and flags.get("enable_hierarchical_cache"):
        ratio = 1.0
    refused, fix = [], []
    if ratio is not None and not 0 < ratio <= 1:
        refused.append(f"--swa-full-tokens-ratio {ratio:g}")
        fix.append("--swa-full-tokens-ratio 0.8")
    if tails is not None and tails < 0:
        refused.append(f"--swa-prefix-tails {tails}")
        fix.append("--swa-prefix-tails 0")
    required = "a ratio in (0, 1], prefix tails >= 0"
    if refused:
        return failed(", ".join(refused), required, [" ".join(fix)])
    given = ", ".join(
        f"{flag} {value:g}"
        for flag, value in (("--swa-full-tokens-ratio", ratio), ("--swa-prefix-tails", tails))
        if value is not None
    )
    return passed(given, required)


# The decode host pool's checks in handle_cache_compatibility, each from the release that added it
# (bench/release_walk.py grep of each message: server_args.py through 0.5.18, kv_cache_hook.py after)
HOST_POOL_BACKUP_FROM = Version("0.5.18")
DECODE_OFFLOAD_STORAGE_FROM = Version("0.5.10")


@rule(
    id="kv-decode-host-pool",
    title="The PD decode host pool: host_pool retraction backup and KV offload on a decode server, one of them, "
    "offload with a storage backend",
    engine="sglang",
    versions="sglang>=0.5.3",
    verified=(
        "sglang 0.5.3-0.5.23: handle_cache_compatibility (_handle_cache_compatibility in server_args.py before "
        "0.5.19) read in each release: --disaggregation-decode-enable-offload-kvcache refused off a decode server "
        "from 0.5.3 (server_args.py:1243 in 0.5.3, kv_cache_hook.py:402 in 0.5.23), without "
        "--hicache-storage-backend from 0.5.10 (:3415 in 0.5.10, :406 in 0.5.23); host_pool retraction backup off "
        "a decode server, with --dcp-size > 1, with priority preemption, and with offload from 0.5.18 "
        "(server_args.py:8128-8168 in 0.5.18; kv_cache_hook.py:149-186 in 0.5.19, :354-415 in 0.5.21-0.5.23); "
        "bench/release_walk.py grep of each message"
    ),
    stage="startup",
    prevents="The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side.; The "
    "argument disaggregation-decode-enable-offload-kvcache is only supported when hicache-storage-backend is "
    "provided.; --disaggregation-decode-retraction-backup=host_pool is only supported on a PD decode server.; "
    "--disaggregation-decode-retraction-backup=host_pool does not support --dcp-size > 1.; "
    "--disaggregation-decode-retraction-backup=host_pool requires --disable-priority-preemption when priority "
    "scheduling is enabled.; The arguments disaggregation-decode-enable-offload-kvcache and "
    "disaggregation-decode-retraction-backup=host_pool are mutually exclusive: both build a decode host pool.",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks the decode host pool a PD decode server builds: `--disaggregation-decode-retraction-backup
host_pool` (from 0.5.18) needs `--disaggregation-mode decode`, `--dcp-size` 1, and
`--disable-priority-preemption` with `--enable-priority-scheduling`; `--disaggregation-decode-enable-offload-
kvcache` needs `--disaggregation-mode decode`, a `--hicache-storage-backend` (from 0.5.10), and not the
host_pool backup (from 0.5.18).

Both keep decode KV in a reserved HiCache host pool that only a decode server has; the backup pool has no
DCP index translation and cannot hand slots back to a preempting request, and two host pools on one server
would each claim the same memory. SGLang refuses each at start-up. Only the named backup is judged: a
`--disaggregation-decode-host-receive-threshold` below 1 makes SGLang pick host_pool itself (not modelled).""",
    fix_title="Run the host pool on a decode server (--disaggregation-mode decode), with what it needs",
)
def kv_decode_host_pool(cfg, target):
    flags = cfg.flags
    backup = flags.get("disaggregation_decode_retraction_backup") == "host_pool"
    offload = bool(flags.get("disaggregation_decode_enable_offload_kvcache"))
    release = sglang_release(target)
    backup = backup and release >= HOST_POOL_BACKUP_FROM
    if not (backup or offload):
        return skipped("applies to a decode host pool (host_pool retraction backup, decode KV offload)")
    decode = flags.get("disaggregation_mode") == "decode"
    problems, fix = [], []
    if not decode:
        problems.append(f"--disaggregation-mode {flags.get('disaggregation_mode') or 'null'}")
        fix.append("--disaggregation-mode decode")
    if backup and (flags.get("dcp_size") or 1) > 1:
        problems.append(f"--dcp-size {flags['dcp_size']}")
        fix.append("--dcp-size 1")
    if backup and flags.get("enable_priority_scheduling") and not flags.get("disable_priority_preemption"):
        problems.append("priority preemption (--enable-priority-scheduling)")
        fix.append("--disable-priority-preemption")
    if offload and release >= DECODE_OFFLOAD_STORAGE_FROM and flags.get("hicache_storage_backend") is None:
        problems.append("no --hicache-storage-backend")
        fix.append("--hicache-storage-backend file")
    if offload and backup:
        problems.append("both at once (two host pools)")
    pool = " and ".join(name for name, on in (("host_pool backup", backup), ("decode KV offload", offload)) if on)
    required = "a PD decode server, and what its host pool needs"
    if problems:
        return failed(f"{pool} with {', '.join(problems)}", required, [" ".join(fix)] if fix else [])
    return passed(f"{pool} on a PD decode server", required)


KV_SHARD_HOOK = "sglang: python/sglang/srt/arg_groups/kv_shard_hook.py"
DSA_KV_SHARDING_FROM = Version("0.5.23")  # DSA models get their own requirements (the dsa backend)
# 0.5.23 admits one speculative shape with sharding (kv_shard_hook.py:105-118; 0.5.22 refuses any, :66-69):
# GLM-5's own single NextN layer as EAGLE (NEXTN is its alias by then), top-k 1, no multi-layer EAGLE
SHARDED_SPEC_FROM = Version("0.5.23")
SHARDED_SPEC_ARCHITECTURE = "GlmMoeDsaForCausalLM"


@rule(
    id="kv-sharding-backend",
    title="--enable-kv-cache-sharding needs an fa3 prefill, or trtllm_mla for a plain-TP MLA model",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: validate_kv_shard_attention_backend first appears in 0.5.22 (kv_shard_hook.py:26-45) "
        "and keeps its fa3 / trtllm_mla branch in 0.5.23 (:64-88), which adds a DSA branch before it (:33-66; "
        "bench/release_walk.py grep '--enable-kv-cache-sharding currently requires the fa3')"
    ),
    stage="startup",
    prevents="--enable-kv-cache-sharding currently requires the fa3 prefill attention backend, or trtllm_mla for "
    "plain-TP MLA; got {prefill_backend!r}.",
    source=f"{KV_SHARD_HOOK}, validate_kv_shard_attention_backend",
    docs="""Checks the prefill backend of `--enable-kv-cache-sharding` (a PD prefill worker striping each cached page
across ranks): fa3, or trtllm_mla for an MLA model with `--attn-cp-size` 1 and chunked prefix caching on.

Only those prefill paths read a rank's stripe of each page; SGLang refuses the rest at start-up ("KV
sharding with trtllm_mla requires an MLA model.", "... only supports plain-TP MLA (attn_cp_size must be
1).", "... requires chunked prefix caching."). From 0.5.23 DSA models (DeepSeek V3.2, GLM-5) have their
own requirements on the dsa backend (kv-sharding-dsa); the serving mode is kv-sharding-prefill-worker's.""",
    fix_title="Use --prefill-attention-backend fa3 (SM90), or trtllm_mla for an MLA model on Blackwell",
)
def kv_sharding_backend(cfg, target):
    if not cfg.flags.get("enable_kv_cache_sharding"):
        return skipped("applies to --enable-kv-cache-sharding")
    architecture = cfg.model.architecture if cfg.model else None
    if architecture in DSA_ARCHITECTURES and sglang_release(target) >= DSA_KV_SHARDING_FROM:
        return skipped("DSA KV sharding has its own requirements on the dsa backend (kv-sharding-dsa)")
    prefill = cfg.prefill_backend
    if prefill is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    required = "prefill fa3, or trtllm_mla for a plain-TP MLA model with chunked prefix caching"
    if prefill == "fa3":
        return passed("KV sharding with prefill fa3", required)
    if prefill != "trtllm_mla":
        return failed(f"KV sharding with prefill {prefill}", required, ["--prefill-attention-backend fa3"])
    if not cfg.mla:
        return failed(
            "KV sharding with prefill trtllm_mla on an MHA model", required, ["--prefill-attention-backend fa3"]
        )
    cp_size = cfg.flags.get("attn_cp_size") or 1
    if cp_size > 1:
        return failed(
            f"KV sharding with prefill trtllm_mla and --attn-cp-size {cp_size}", required, ["--attn-cp-size 1"]
        )
    if cfg.flags.get("disable_chunked_prefix_cache"):
        return failed("KV sharding with prefill trtllm_mla and --disable-chunked-prefix-cache", required)
    return passed("KV sharding with prefill trtllm_mla on a plain-TP MLA model", required)


@rule(
    id="kv-sharding-speculative",
    title="--enable-kv-cache-sharding with speculative decoding: only GLM-5's single NextN layer as EAGLE, top-k 1",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22: '--enable-kv-cache-sharding does not support speculative decoding.' for any algorithm "
        "(kv_shard_hook.py:66-69); 0.5.23: 'KV sharding supports speculative decoding only for GLM DSA' "
        "(:105-118) unless EAGLE (NEXTN resolved to it in handle_speculative_decoding, run before it: "
        "pipeline.py), GlmMoeDsaForCausalLM, model_config.num_nextn_predict_layers 1 (the config's field: "
        "configs/model_config.py:1602), speculative_eagle_topk 1 (after _auto_choose_speculative_params: 1 for "
        "GlmMoeDsaForCausalLM) and no --enable-multi-layer-eagle"
    ),
    stage="startup",
    prevents="KV sharding supports speculative decoding only for GLM DSA single-layer NextN MTP with EAGLE and "
    "topk=1.; --enable-kv-cache-sharding does not support speculative decoding. (0.5.22)",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks speculative decoding with `--enable-kv-cache-sharding`: from 0.5.23 only EAGLE (or NEXTN) on a
GLM-5 checkpoint (GlmMoeDsaForCausalLM) with one NextN layer (`num_nextn_predict_layers` 1 in its
config.json), a top-k of 1 (given or SGLang's auto choice) and no `--enable-multi-layer-eagle`; 0.5.22 admits
no speculative decoding at all.

The prefill worker's draft-extend runs on the request's shard plan, wired only for that shape; SGLang refuses
the rest at start-up. A model whose config.json leaves out num_nextn_predict_layers is reported unknown.""",
    fix_title="Serve GLM-5's NextN layer with --speculative-algorithm EAGLE --speculative-eagle-topk 1, or no "
    "speculative decoding",
)
def kv_sharding_speculative(cfg, target):
    algorithm = (cfg.speculative_algorithm or "").upper()
    if not cfg.flags.get("enable_kv_cache_sharding") or not algorithm:
        return skipped("applies to speculative decoding with --enable-kv-cache-sharding")
    if sglang_release(target) < SHARDED_SPEC_FROM:
        return failed(
            f"KV sharding with --speculative-algorithm {algorithm}",
            f"no speculative decoding (sglang {sglang_release(target)})",
        )
    required = "EAGLE on GLM-5's single NextN layer (num_nextn_predict_layers 1), top-k 1, no multi-layer EAGLE"
    if algorithm not in ("EAGLE", "NEXTN"):
        return failed(
            f"KV sharding with --speculative-algorithm {algorithm}", required, ["--speculative-algorithm EAGLE"]
        )
    if cfg.model is None:
        return unknown("needs the model (GLM-5 and its NextN layers): give --model")
    if cfg.model.architecture != SHARDED_SPEC_ARCHITECTURE:
        return failed(f"KV sharding with {algorithm} on {cfg.model.architecture or cfg.model.name}", required)
    layers = cfg.model.num_nextn_predict_layers
    if layers is None:
        return unknown(f"{cfg.model.name}'s config.json does not give num_nextn_predict_layers")
    if layers != 1:
        return failed(f"KV sharding with {algorithm} on {cfg.model.name} ({layers} NextN layers)", required)
    topk = eagle_topk(cfg)
    if topk != 1:
        return failed(f"KV sharding with {algorithm} top-k {topk}", required, ["--speculative-eagle-topk 1"])
    if cfg.flags.get("enable_multi_layer_eagle"):
        return failed(f"KV sharding with {algorithm} and --enable-multi-layer-eagle", required)
    return passed(f"KV sharding with {algorithm} on {cfg.model.name}'s NextN layer, top-k 1", required)


def _sharding(cfg) -> bool:
    return bool(cfg.flags.get("enable_kv_cache_sharding"))


DSA_SHARDING_REFUSED_UNTIL = Version("0.5.23")  # 0.5.22: "does not support DSA models yet" (kv_shard_hook.py:187)


@rule(
    id="kv-sharding-shard-group",
    title="--enable-kv-cache-sharding needs ranks to stripe over: prefill CP for a GQA model, plain TP for MLA",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: handle_kv_cache_sharding, after the backend and transfer checks: an MLA model "
        "without prefill CP needs attention DP off and --tp-size > 1, any other model --enable-prefill-cp with "
        "--attn-cp-size > 1 (kv_shard_hook.py:192-210 in 0.5.22, :251-270 in 0.5.23; bench/release_walk.py grep "
        "'for GQA models shards across'); 0.5.22 refuses a DSA model there outright (:187-191), 0.5.23 sends it "
        "down validate_kv_shard_attention_backend's DSA branch (kv-sharding-dsa)"
    ),
    stage="startup",
    prevents="--enable-kv-cache-sharding for GQA models shards across attention-CP ranks and requires "
    "--enable-prefill-cp with attn_cp_size > 1.; --enable-kv-cache-sharding for MLA models without prefill CP "
    "shards across attention-TP ranks and needs tp_size > 1.; ... requires plain TP attention; set "
    "--attn-dp-size=1.; --enable-kv-cache-sharding does not support DSA models yet (indexer buffers are not "
    "striped). (0.5.22)",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` has a group of ranks to stripe each cached page over: for a
GQA / MHA model the attention-CP ranks (`--enable-prefill-cp` with `--attn-cp-size` > 1); for an MLA model
either those, or with `--attn-cp-size` 1 the attention-TP ranks (`--tp-size` > 1 and no attention DP).

The stripe is a rank's share of a page that the whole group otherwise replicates; with one rank, or with
attention-DP groups that each hold their own pages, there is nothing to share and SGLang refuses at start-up.
sglang 0.5.22 also refuses DSA models (DeepSeek-V3.2, GLM-5) here; 0.5.23 shards them under its own terms
(kv-sharding-dsa).""",
    fix_title="Add --enable-prefill-cp --attn-cp-size N (GQA), or serve the MLA model with --tp-size > 1 and no "
    "attention DP",
)
def kv_sharding_shard_group(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    if cfg.model is None:
        return unknown("needs the model (MLA or GQA decides the group): give --model")
    release = sglang_release(target)
    dsa = dsa_model(cfg, target)
    if dsa and release >= DSA_SHARDING_REFUSED_UNTIL:
        return skipped("DSA KV sharding has its own requirements on prefill CP (kv-sharding-dsa)")
    cp_size = cfg.flags.get("attn_cp_size") or 1
    prefill_cp = bool(cfg.flags.get("enable_prefill_cp")) and cp_size > 1
    if dsa:
        return failed(f"KV sharding of the DSA model {cfg.model.name}", f"a non-DSA model (sglang {release})")
    if not cfg.mla:
        required = "--enable-prefill-cp with --attn-cp-size > 1 (a GQA model shards over attention-CP ranks)"
        if prefill_cp:
            return passed(f"KV sharding over {cp_size} prefill-CP ranks", required)
        found = "--enable-prefill-cp" if cfg.flags.get("enable_prefill_cp") else "no prefill CP"
        return failed(
            f"KV sharding of GQA model {cfg.model.name} with {found}, --attn-cp-size {cp_size}",
            required,
            # attn_cp_size must divide tp_size (parallel_hook.py:157-163 in 0.5.23)
            [
                f"--enable-prefill-cp --cp-strategy interleave --attn-cp-size {cfg.tp_size}"
                if cfg.tp_size > 1
                else "--tp-size 2 --enable-prefill-cp --cp-strategy interleave --attn-cp-size 2"
            ],
        )
    required = "prefill CP > 1, or attention TP > 1 with no attention DP (an MLA model)"
    if cp_size > 1:
        return passed(f"KV sharding of MLA model {cfg.model.name} over {cp_size} attention-CP ranks", required)
    dp = attention_dp_size(cfg)
    if dp > 1:
        fix = ["--attn-dp-size 1"] if cfg.flags.get("attn_dp_size") else []
        return failed(f"KV sharding of MLA model {cfg.model.name} with attention DP {dp}", required, fix)
    if cfg.tp_size <= 1:
        return failed(f"KV sharding of MLA model {cfg.model.name} on --tp-size {cfg.tp_size}", required)
    return passed(f"KV sharding of MLA model {cfg.model.name} over {cfg.tp_size} attention-TP ranks", required)


SHARDED_PAGE = 64  # what SGLang's refusal recommends ("--page-size 64 recommended")


def _rounded_to(chunk: int, page: int) -> int:
    """The chunk size SGLang rounds a sharded chunk up to (kv_shard_hook.py:291 in 0.5.23)."""
    return -(-chunk // page) * page


@rule(
    id="kv-sharding-page-chunk",
    title="--enable-kv-cache-sharding needs a page size above 1 and chunked prefill; a chunk is rounded to pages",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: handle_kv_cache_sharding raises for page size <= 1 (kv_shard_hook.py:212-219 in "
        "0.5.22, :272-279 in 0.5.23) and for --chunked-prefill-size None or <= 0 (:220-225, :280-285), then "
        "rounds a chunk size that is not a multiple of the page up, lowering mem_fraction_static when it was not "
        "given (:227-265, :287-325); it runs after _page_size_default and the backends' page snaps "
        "(pipeline.py:256, :270-272 in 0.5.23; bench/release_walk.py grep 'requires a real page size')"
    ),
    stage="startup",
    prevents="--enable-kv-cache-sharding requires a real page size (--page-size 64 recommended): the physical page "
    "is the P/D transfer descriptor and gather-copy unit; page_size=1 degenerates both into per-token "
    "operations.; --enable-kv-cache-sharding requires chunked prefill (--chunked-prefill-size > 0).",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` runs on a page size above 1 (given, or the one the backend
snaps to) with chunked prefill on (no `--chunked-prefill-size` <= 0, no `--enable-mis`, which turns it off),
and warns when the chunk size is not a multiple of the page: SGLang rounds it up (and, when
`--mem-fraction-static` was not given, lowers the static memory fraction to pay for the larger chunk).

The physical page is the unit PD transfer and the gather copy move between ranks, and a chunk boundary must
fall on one; SGLang refuses page size 1 and unchunked prefill at start-up. Model-specific turn-offs of chunked
prefill (embedding models, multimodal models without chunked-prefill support, HRM-Text) are not read.""",
    fix_title="Add --page-size 64 and keep chunked prefill on, at a multiple of the page",
)
def kv_sharding_page_chunk(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    page = effective_page_size(cfg, target)
    # the hook runs after attention DP divides the chunk (pipeline.py:274-281 in 0.5.23): it sees each rank's share
    chunk = chunked_prefill_per_rank(cfg)
    dp = attention_dp_size(cfg)
    written = f"--chunked-prefill-size {cfg.flags.get('chunked_prefill_size')}" + (
        f" ({chunk} per attention-DP rank)" if dp > 1 else ""
    )
    required = "page size > 1 and --chunked-prefill-size > 0, a multiple of the page"
    if page <= 1:
        fix = f"--page-size {SHARDED_PAGE}"
        if chunk is not None and chunk > 0 and chunk % SHARDED_PAGE:
            fix += f" --chunked-prefill-size {_rounded_to(chunk, SHARDED_PAGE) * dp}"
        return failed(f"KV sharding on page size {page}", required, [fix])
    if cfg.flags.get("enable_mis"):
        return failed("KV sharding with --enable-mis (it turns chunked prefill off)", required)
    if chunk is not None and chunk <= 0:
        return failed(f"KV sharding with {written}", required, ["--chunked-prefill-size 8192"])
    if chunk is not None and chunk % page:
        rounded = _rounded_to(chunk, page)
        return warned(
            f"{written} on page size {page} (SGLang rounds it up to {rounded})",
            required,
            [f"--chunked-prefill-size {rounded * dp}"],
        )
    return passed(f"KV sharding on page size {page} with chunked prefill", required)


SHARDED_TRANSFER_BACKENDS = ("mooncake", "nixl")
DEFAULT_TRANSFER_BACKEND = "mooncake"  # fields/disagg.py:71 in 0.5.22 and 0.5.23
STAGING_BUFFER_ENV = "SGLANG_DISAGG_STAGING_BUFFER"


@rule(
    id="kv-sharding-transfer-backend",
    title="--enable-kv-cache-sharding sends pages over mooncake or nixl only, without the staging buffer",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: handle_kv_cache_sharding refuses a --disaggregation-transfer-backend other than "
        "mooncake / nixl and a true SGLANG_DISAGG_STAGING_BUFFER (kv_shard_hook.py:171-184 in 0.5.22, :236-249 "
        "in 0.5.23; bench/release_walk.py grep 'only supports the mooncake'); the transfer default is mooncake "
        "(fields/disagg.py:71 in both), the variable an EnvBool defaulting to False (environ.py:798 in 0.5.22, "
        ":859 in 0.5.23)"
    ),
    stage="startup",
    prevents="--enable-kv-cache-sharding currently only supports the mooncake and nixl transfer backends: both "
    "route sends through CommonKVSender._prepare_send_indices and pair destinations by fancy index. Got "
    "--disaggregation-transfer-backend {backend!r}.; --enable-kv-cache-sharding is incompatible with "
    "SGLANG_DISAGG_STAGING_BUFFER (the staging path assumes contiguous send slices).",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` moves its pages to the decode side with
`--disaggregation-transfer-backend` mooncake (the default) or nixl, and without `SGLANG_DISAGG_STAGING_BUFFER`
set true.

Only those two senders pick each rank's stripe out of a page by index; the staging path copies contiguous
slices, which a stripe is not. SGLang refuses both at start-up.""",
    fix_title="Use --disaggregation-transfer-backend mooncake (or nixl) and leave SGLANG_DISAGG_STAGING_BUFFER unset",
)
def kv_sharding_transfer_backend(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    transfer = cfg.flags.get("disaggregation_transfer_backend") or DEFAULT_TRANSFER_BACKEND
    required = f"--disaggregation-transfer-backend {' or '.join(SHARDED_TRANSFER_BACKENDS)}, no staging buffer"
    if transfer not in SHARDED_TRANSFER_BACKENDS:
        return failed(
            f"KV sharding over --disaggregation-transfer-backend {transfer}",
            required,
            [f"--disaggregation-transfer-backend {DEFAULT_TRANSFER_BACKEND}"],
        )
    if env_true(cfg, STAGING_BUFFER_ENV):
        return failed(
            f"KV sharding with {STAGING_BUFFER_ENV}={cfg.env[STAGING_BUFFER_ENV]}",
            required,
            [f"unset {STAGING_BUFFER_ENV}"],
        )
    return passed(f"KV sharding over {transfer}", required)


TREE_CORE_ENV = "SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND"
SHARDING_SETS_PYTHON_TREE_CORE_FROM = Version("0.5.23")  # before it the variable's default, "rust", stands


@rule(
    id="kv-sharding-radix-tree-core",
    title="--enable-kv-cache-sharding with the radix cache on needs the Python tree core (0.5.22 defaults to Rust)",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22: handle_kv_cache_sharding reads SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND (kv_shard_hook.py:83) "
        "and refuses anything but python unless --disable-radix-cache (:86-91), and the variable defaults to "
        "'rust' (environ.py:688; nothing in the wheel sets it: a prefill worker keeps its radix cache, "
        "pd_disaggregation_hook.py:128-133 turns it off on decode servers only). 0.5.23 sets it to python when "
        "unset (:132-135) before the same check (:136-144), so only an explicit non-python value fails"
    ),
    stage="startup",
    prevents="--enable-kv-cache-sharding requires the Python UnifiedTreeCore: "
    "SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND={tree_core_backend!r} is not supported for sharded KV.",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding; sglang: python/sglang/srt/environ.py",
    docs="""Checks the radix tree core a sharded prefill worker runs: with the radix cache on (no
`--disable-radix-cache`, no `--enable-mis`), SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND must be python. In sglang
0.5.22 the variable defaults to rust, so every sharded launch that keeps the radix cache fails unless it sets
the variable; 0.5.23 sets python itself when the variable is unset.

Only the Python tree core carries the rotation base of a sharded page; a disabled radix cache never matches
or inserts, so it never needs one. SGLang refuses the rest at start-up.""",
    fix_title="Set SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python, or pass --disable-radix-cache",
)
def kv_sharding_radix_tree_core(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    required = f"{TREE_CORE_ENV}=python, or --disable-radix-cache"
    if cfg.flags.get("disable_radix_cache") or cfg.flags.get("enable_mis"):
        return passed("KV sharding with the radix cache off", required)
    release = sglang_release(target)
    given = cfg.env.get(TREE_CORE_ENV)
    core = given or ("python" if release >= SHARDING_SETS_PYTHON_TREE_CORE_FROM else "rust")
    if core == "python":
        return passed(
            f"KV sharding on the python tree core ({'given' if given else f'sglang {release} sets it'})", required
        )
    found = f"{TREE_CORE_ENV}={core}" + ("" if given else f" (sglang {release}'s default)")
    return failed(f"KV sharding with the radix cache on and {found}", required, [f"{TREE_CORE_ENV}=python"])


# handle_kv_cache_sharding's refusals of other KV-cache features, in its order: (dest, as the user wrote it)
SHARDING_REFUSED_FEATURES = (
    ("enable_unified_cache_external_linker", "--enable-unified-cache-external-linker"),
    ("enable_streaming_session", "--enable-streaming-session"),
    ("enable_session_radix_cache", "--enable-session-radix-cache"),
    ("enable_flexkv", "--enable-flexkv"),
    ("enable_unified_memory", "--enable-unified-memory"),
    ("enable_lmcache", "--enable-lmcache"),
    ("enable_hisparse", "--enable-hisparse"),
    ("enable_two_batch_overlap", "--enable-two-batch-overlap"),
)
SHARDED_HOST_OFFLOAD_FROM = Version("0.5.23")  # HiCache host offload allowed; 0.5.22 refuses any HiCache
# A sharded DSA model's HiCache (0.5.23): the host memory mode, I/O backend and layouts it takes, and SGLang's
# defaults for them (fields/memory.py)
SHARDED_DSA_HICACHE = {
    "hicache_host_memory_mode": ("cache",),
    "hicache_io_backend": ("kernel",),
    "hicache_mem_layout": ("layer_first", "page_first"),
}
HICACHE_DEFAULTS = {
    "hicache_host_memory_mode": "cache",
    "hicache_io_backend": "kernel",
    "hicache_mem_layout": "page_first",
}


def _sharding_refusals(cfg, target) -> list[str]:
    """The other KV-cache features handle_kv_cache_sharding refuses that the launch turns on, as written."""
    found = [written for dest, written in SHARDING_REFUSED_FEATURES if cfg.flags.get(dest)]
    if (cfg.flags.get("dcp_size") or 1) > 1:
        found.append(f"--dcp-size {cfg.flags['dcp_size']}")
    if cfg.flags.get("enable_dynamic_chunking") and cfg.pp_size > 1:
        found.append(f"--enable-dynamic-chunking with --pp-size {cfg.pp_size}")
    if not cfg.flags.get("enable_hierarchical_cache"):
        return found
    if sglang_release(target) < SHARDED_HOST_OFFLOAD_FROM:
        found.append("--enable-hierarchical-cache")
        return found
    if cfg.flags.get("hicache_storage_backend") is not None:
        found.append(f"--hicache-storage-backend {cfg.flags['hicache_storage_backend']}")
    if dsa_model(cfg, target):
        for dest, allowed in SHARDED_DSA_HICACHE.items():
            value = cfg.flags.get(dest) or HICACHE_DEFAULTS[dest]
            if value not in allowed:
                found.append(f"--{dest.replace('_', '-')} {value} (DSA HiCache)")
    return found


@rule(
    id="kv-sharding-cache-features",
    title="--enable-kv-cache-sharding refuses other KV-cache features (KV offload, sessions, DCP, HiSparse, TBO, …)",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: handle_kv_cache_sharding refuses, in this order, the unified-cache external "
        "linker, streaming sessions, the session radix cache, FlexKV, unified memory, --dcp-size > 1, HiCache, "
        "LMCache, HiSparse, dynamic chunking with PP > 1 and two-batch overlap (kv_shard_hook.py:92-154 in "
        "0.5.22, :145-219 in 0.5.23; bench/release_walk.py grep 'does not support --enable-lmcache'). 0.5.22 "
        "refuses any --enable-hierarchical-cache (:123-128); 0.5.23 only with --hicache-storage-backend "
        "(:176-181) and, for a DSA model, a host memory mode other than cache or an I/O backend other than "
        "kernel or a layout other than layer_first / page_first (:182-193; defaults cache, kernel, page_first: "
        "fields/memory.py)"
    ),
    stage="startup",
    prevents="--enable-kv-cache-sharding does not support --enable-lmcache.; ... does not support "
    "--enable-flexkv; ... does not support streaming sessions; ... does not support session radix cache yet.; "
    "... does not support --enable-unified-memory; --enable-kv-cache-sharding and decode context parallelism "
    "(--dcp-size) are mutually exclusive users of the widened allocator index space.; --enable-kv-cache-sharding "
    "supports HiCache host offload but not --hicache-storage-backend yet; ... does not support --enable-hisparse; "
    "... does not support dynamic chunk sizing with pipeline parallelism; ... does not support "
    "--enable-two-batch-overlap; CP-sharded DSA HiCache requires host memory mode cache",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` comes without the KV-cache features SGLang refuses beside it:
`--enable-unified-cache-external-linker`, `--enable-streaming-session`, `--enable-session-radix-cache`,
`--enable-flexkv`, `--enable-unified-memory`, `--dcp-size` > 1, `--enable-lmcache`, `--enable-hisparse`,
`--enable-two-batch-overlap`, `--enable-dynamic-chunking` with `--pp-size` > 1, and HiCache: any in sglang
0.5.22; from 0.5.23 host offload is allowed but not `--hicache-storage-backend`, and a DSA model's HiCache
needs host memory mode cache, the kernel I/O backend and the layer_first or page_first layout.

Each of them allocates, loads back or plans KV as whole pages per rank (or rebuilds the one gather plan a
sharded pool keeps), where a sharded rank holds only its stripe of each page; SGLang refuses them at
start-up.""",
    fix_title="Drop the KV-cache feature the sharded prefill worker cannot run with",
)
def kv_sharding_cache_features(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    required = "no KV offload / session / DCP / HiSparse / TBO feature SGLang refuses with KV sharding"
    refused = _sharding_refusals(cfg, target)
    if refused:
        return failed(f"KV sharding with {', '.join(refused)}", required)
    return passed("KV sharding with none of the features it refuses", required)


# configs/model_config.py is_encoder_decoder_model, what the refusal reads (:2425-2431 in 0.5.22, :2540-2546 in 0.5.23)
ENCODER_DECODER_ARCHITECTURES = (
    "WhisperForConditionalGeneration",
    "MllamaForConditionalGeneration",
    "MossVLForConditionalGeneration",
)


@rule(
    id="kv-sharding-model-attention",
    title="--enable-kv-cache-sharding refuses encoder-decoder and chunked local-attention models",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: handle_kv_cache_sharding refuses model_config.is_encoder_decoder and an "
        "attention_chunk_size (kv_shard_hook.py:156-168 in 0.5.22, :221-233 in 0.5.23; bench/release_walk.py "
        "grep 'does not support encoder-decoder'); is_encoder_decoder is an architecture list, the same three in "
        "both (configs/model_config.py:2425-2431, :2540-2546)"
    ),
    needs_model=True,
    stage="startup",
    prevents="--enable-kv-cache-sharding does not support encoder-decoder models: cross-attention uses a separate "
    "encoder page table that is not part of the sharded gather plan.; --enable-kv-cache-sharding does not "
    "support chunked/local-attention models yet: local-attention metadata is built from the page table before "
    "the scratch translation.",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that a model served with `--enable-kv-cache-sharding` is not one SGLang runs as encoder-decoder
(Whisper, Mllama, Moss-VL: the architectures its is_encoder_decoder lists) and has no chunked local attention
(`attention_chunk_size` in its config.json: Llama 4).

Cross attention reads a separate encoder page table, and local attention builds its metadata from the page
table before the sharded scratch translation; neither is part of the sharded gather plan, and SGLang refuses
both at start-up.""",
    fix_title="Serve this model without --enable-kv-cache-sharding",
)
def kv_sharding_model_attention(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    required = "a decoder-only model without chunked local attention"
    if cfg.model.architecture in ENCODER_DECODER_ARCHITECTURES:
        return failed(f"KV sharding of {cfg.model.name} (encoder-decoder {cfg.model.architecture})", required)
    if cfg.model.attention_chunk_size:
        return failed(
            f"KV sharding of {cfg.model.name} (attention_chunk_size {cfg.model.attention_chunk_size})", required
        )
    return passed(f"KV sharding of {cfg.model.name}", required)


MAMBA_STATES_PER_PATH_FROM = Version("0.5.17")  # --mamba-max-states-per-path (server_args.py:5955-5960 in 0.5.17)
MAMBA_STOCHASTIC_TRITON_MAJOR = 10  # the triton kernel's cvt.rs.f16x2.f32 (is_sm100_supported)


@rule(
    id="kv-mamba-cache-flags",
    title="Mamba SSM cache flags: Philox rounds >= 0, states per path -1 or positive, stochastic rounding on float16 "
    "(SM100 on triton)",
    engine="sglang",
    versions="sglang>=0.5.15",
    verified=(
        "sglang 0.5.15-0.5.23 (bench/release_walk.py grep 'philox-rounds must be non-negative', "
        "'max-states-per-path must be -1', 'cvt.rs.f16x2.f32'): _handle_mamba_backend refuses negative Philox "
        "rounds and, with --enable-mamba-cache-stochastic-rounding, a --mamba-ssm-dtype other than float16 (unset "
        "included: nothing fills it before this hook) and --mamba-backend triton off SM100 (server_args.py:4589-4614 "
        "in 0.5.15, :6168-6198 in 0.5.18; arg_groups/mamba_hook.py:19-52 in 0.5.19-0.5.23); "
        "--mamba-max-states-per-path 0 or below -1 from 0.5.17 (server_args.py:5957, mamba_hook.py:24-28 in "
        "0.5.23); for every model"
    ),
    stage="startup",
    prevents="--mamba-cache-philox-rounds must be non-negative.; --mamba-max-states-per-path must be -1 (unlimited) "
    "or a positive integer, got {n}.; Stochastic rounding for the Mamba SSM cache requires --mamba-ssm-dtype "
    "float16, got {dtype!r}. ...; Stochastic rounding for the Mamba SSM cache with --mamba-backend triton requires "
    "SM100 with CUDA >= 12.8 because it uses the cvt.rs.f16x2.f32 PTX instruction. ...",
    source=f"{MAMBA_HOOK}, handle_mamba_backend (server_args.py _handle_mamba_backend before 0.5.19)",
    docs="""Checks the Mamba SSM cache flags SGLang validates for every model: `--mamba-cache-philox-rounds`
non-negative, `--mamba-max-states-per-path` -1 or positive, and `--enable-mamba-cache-stochastic-rounding` only
with `--mamba-ssm-dtype float16` and, on the default triton Mamba backend, an SM100 GPU.

Stochastic rounding writes FP16 states; the triton kernel rounds with an SM100-only PTX instruction, so SGLang
points SM90 users to `--mamba-backend flashinfer`. (FlashInfer's mamba module is install-flashinfer-mamba.)""",
    fix_title="Add --mamba-ssm-dtype float16 (and --mamba-backend flashinfer off SM100) for stochastic rounding",
)
def kv_mamba_cache_flags(cfg, target):
    release = sglang_release(target)
    rounds = cfg.flags.get("mamba_cache_philox_rounds")
    states = cfg.flags.get("mamba_max_states_per_path")
    stochastic = cfg.flags.get("enable_mamba_cache_stochastic_rounding")
    if rounds is None and states is None and not stochastic:
        return skipped("applies to the Mamba SSM cache flags")
    required = "rounds >= 0, states per path -1 or positive, stochastic rounding on float16 (SM100 on triton)"
    if rounds is not None and rounds < 0:
        return failed(f"--mamba-cache-philox-rounds {rounds}", required, ["--mamba-cache-philox-rounds 0"])
    if states is not None and release >= MAMBA_STATES_PER_PATH_FROM and (states == 0 or states < -1):
        return failed(f"--mamba-max-states-per-path {states}", required, ["--mamba-max-states-per-path -1"])
    if stochastic:
        dtype = cfg.flags.get("mamba_ssm_dtype")
        if dtype != "float16":
            return failed(
                f"stochastic rounding with --mamba-ssm-dtype {dtype or 'unset'}",
                required,
                ["--mamba-ssm-dtype float16"],
            )
        backend = cfg.flags.get("mamba_backend") or "triton"
        if target.major is None:
            return unknown("compute capability unknown")
        if backend == "triton" and target.major != MAMBA_STOCHASTIC_TRITON_MAJOR:
            return failed(
                f"stochastic rounding on --mamba-backend triton on {gpu(target)}",
                required,
                ["--mamba-backend flashinfer"],
            )
    return passed("Mamba SSM cache flags", required)
