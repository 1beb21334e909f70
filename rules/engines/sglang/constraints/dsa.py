"""DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5, ...), DeepSeek-V4 and HYV4 flag constraints of SGLang
(rows; the logic rules of the subject are attn_preflight.rules.engines.sglang.rules.dsa). Whether a model is on
the DSA path, whether prefill CP is on and its strategy are SGLang's resolution (resolve.py), asked by the rows."""

from typing import Mapping

from packaging.version import Version

from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    Arch,
    Capability,
    Constraint,
    Flag,
    Model,
    ModelField,
    Not,
    Range,
    Requirement,
    Resolved,
    Since,
    Term,
    constraint_rules,
    unset_or,
)
from attn_preflight.rules.engines.sglang.resolve import (
    dsa_index_sharing,
    dsa_model,
    hisparse_model,
    pooled_index_key,
    prefill_cp_on,
    prefill_cp_strategy,
)
from attn_preflight.rules.knowledge import dsa as kb

DEEPSEEK_V2_OVERRIDES = "sglang: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py"
INF = float("inf")

DSA = Resolved(dsa_model, "a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5: index_topk)")
PREFILL_CP = Resolved(prefill_cp_on, "prefill context parallelism")
DSV4 = Model(architectures=(kb.DSV4_ARCHITECTURE,))
DCP = Not(Range("dcp_size", -INF, 1))  # --dcp-size above 1
HYV4_ARCHITECTURES = ("HYV4ForCausalLM", "HYV4ForCausalLMNextN")
LAYER_SPLIT_TRANSFER = "mooncake"  # model_hook.py:392-400 in 0.5.23 (mooncake_tcp is mooncake's own mode)
DSA_PREFILL_CP_MAX_TP = 8  # one machine: cross-machine CP has precision issues


def listed_since(name: str, since: Mapping[str, Version]) -> Term:
    """A flag's value is one the target's release lists (`since`: value -> the first release listing it)."""
    return AnyOf(tuple(All((Since(str(release)), Flag(name, (value,)))) for value, release in since.items()))


def sink_backend(phase: str) -> Requirement:
    flag = f"dsa_{phase}_backend"
    return Requirement(unset_or(flag, kb.SINK_DSA_BACKEND), (f"--dsa-{phase}-backend {kb.SINK_DSA_BACKEND}",))


def cuda_dsa_backend(phase: str, backend: str, capability: Capability) -> Requirement:
    """No ROCm-only DSA backend for `phase`, on GPUs of `capability` whose CUDA choice is `backend`."""
    rocm = All((Flag(f"dsa_{phase}_backend", tuple(kb.ROCM_ONLY_DSA_BACKENDS)), capability))
    return Requirement(Not(rocm), (f"--dsa-{phase}-backend {backend}",))


DSV4_KEPT_KV = listed_since("kv_cache_dtype", kb.DSV4_KV_DTYPES_SINCE)
DSV4_KEPT_SPECULATIVE = listed_since("speculative_algorithm", kb.DSV4_SPECULATIVE_SINCE)
DSV4_EAGLE_FIX = (f"--speculative-algorithm EAGLE --speculative-eagle-topk {kb.DSV4_EAGLE_TOPK}",)
DSV4_TRTLLM = All(
    (
        Flag("kv_cache_dtype", kb.DSV4_TRTLLM_KV_DTYPES),
        Not(Flag("enable_hisparse")),
        Range("attn_cp_size", -INF, 1),
        Range("dcp_size", -INF, 1),
        Not(PREFILL_CP),
        unset_or("disaggregation_mode", "null"),
        Range("chunked_prefill_size", 0, INF, open_low=True),
    )
)
DSV4_CP_STRATEGY = Resolved(prefill_cp_strategy, f"the {kb.DSV4_CP_STRATEGY} CP strategy", (kb.DSV4_CP_STRATEGY,))
CP_STRATEGY_FLAG = Since(str(kb.CP_STRATEGY_FLAG_FROM))

ROWS = (
    Constraint(
        id="dsa-kv-cache-dtype",
        title="A DeepSeek sparse attention model needs a bfloat16 or fp8_e4m3 KV cache",
        versions="sglang>=0.5.4.post3",
        needs_model=True,
        stage="startup",
        prevents="DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype",
        source=f"{kb.OVERRIDES}, _dsa_kv_cache_dtype_default (server_args.py _handle_model_specific_adjustments "
        "before 0.5.15)",
        docs="""Checks that a model with DeepSeek sparse attention (DeepSeek-V3.2(-Exp), GLM-5, Mistral Large 3, ...:
an architecture on SGLang's DSA path with `index_topk`) is given `--kv-cache-dtype` auto, bf16, bfloat16 or
fp8_e4m3.

SGLang resolves auto to fp8_e4m3 on SM100 and newer (bfloat16 below, and for learnable sinks) and asserts
that the DSA KV pool is bfloat16 or fp8_e4m3: FP8 E5M2, MXFP8 and FP4 caches are refused at start-up.""",
        fix_title="Pass --kv-cache-dtype fp8_e4m3 (or bfloat16)",
        when=DSA,
        requires=Flag("kv_cache_dtype", kb.DSA_KV_DTYPES),
        fix=("--kv-cache-dtype fp8_e4m3", "--kv-cache-dtype bfloat16"),
    ),
    Constraint(
        id="dsa-learnable-sink-kv",
        title="DSA learnable attention sinks need a bfloat16 KV cache",
        versions="sglang>=0.5.20",
        needs_model=True,
        stage="startup",
        prevents="Learnable DSA attention sinks require a bfloat16 KV cache; got kv_cache_dtype={kv_cache_dtype}.",
        source=f"{kb.OVERRIDES}, _dsa_kv_cache_dtype_default",
        docs="""Checks that a DSA model with learnable attention sinks (config.json `learnable_sink`) is given a
bfloat16 KV cache (auto, bf16 or bfloat16).

SGLang's DSA path keeps sinks only in the bfloat16 pool: an fp8_e4m3 KV cache is refused at start-up, and
auto resolves to bfloat16 for such a model on every GPU.""",
        fix_title="Pass --kv-cache-dtype bfloat16 (or leave it auto)",
        when=All((DSA, ModelField("learnable_sink"))),
        requires=Flag("kv_cache_dtype", kb.SINK_KV_DTYPES),
        fix=("--kv-cache-dtype bfloat16",),
    ),
    Constraint(
        id="dsa-learnable-sink-backend",
        title="DSA learnable attention sinks need flashmla_sparse for both DSA phases",
        versions="sglang>=0.5.20",
        needs_model=True,
        stage="startup",
        prevents="{model_arch} uses learnable attention sinks and requires {option} 'flashmla_sparse'; got {value!r}",
        source=f"{kb.OVERRIDES}, _dsa_split_backend_resolution",
        docs="""Checks that `--dsa-prefill-backend` and `--dsa-decode-backend`, when given for a DSA model with
learnable attention sinks, are flashmla_sparse.

Only FlashMLA's sparse kernels take the sinks; SGLang sets flashmla_sparse for a phase left unset and
refuses any other named backend at start-up.""",
        fix_title="Pass --dsa-prefill-backend flashmla_sparse --dsa-decode-backend flashmla_sparse (or drop them)",
        when=All((DSA, ModelField("learnable_sink"))),
        requires=(sink_backend("prefill"), sink_backend("decode")),
    ),
    Constraint(
        id="dsa-rocm-only-backend",
        title="The triton DSA backend runs on ROCm only",
        versions="sglang>=0.5.20",
        needs_gpu=True,
        stage="startup",
        prevents="The triton DSA backend is only supported on ROCm/HIP. Pick an alternative DSA backend for CUDA "
        "(flashmla_kv on Hopper, trtllm on Blackwell).",
        source=f"{kb.OVERRIDES}, _check_dsa_backend_constraints",
        docs="""Checks that `--dsa-prefill-backend` / `--dsa-decode-backend` do not name triton on an NVIDIA GPU.

SGLang's triton DSA kernels are the ROCm path; on CUDA the DSA backend resolution refuses them at start-up
and names the CUDA choices: flashmla_kv on Hopper, trtllm on Blackwell.""",
        fix_title="Use --dsa-prefill-backend / --dsa-decode-backend flashmla_kv (SM90) or trtllm (SM100)",
        when=AnyOf((Flag("dsa_prefill_backend"), Flag("dsa_decode_backend"))),
        requires=tuple(
            cuda_dsa_backend(phase, backend, capability)
            for phase in ("prefill", "decode")
            for backend, capability in (("trtllm", Capability((10, 0))), ("flashmla_kv", Capability((0, 0), (9, 9))))
        ),
    ),
    Constraint(
        id="dsa-hisparse-radix-cache",
        title="HiSparse needs the radix cache off",
        versions="sglang>=0.5.10",
        needs_model=True,
        stage="startup",
        prevents="Hierarchical sparse attention currently requires --disable-radix-cache.",
        source=f"{kb.HISPARSE_HOOK}, validate_hisparse (run at launch by check_server_args, after resolution: "
        "arg_groups/validation_hook.py:312 in 0.5.23, server_args.py:6191 in 0.5.10)",
        docs="""Checks that `--enable-hisparse` on a model HiSparse serves (DSA, DeepSeek-V4, MiniMax-M3:
dsa-hisparse-serving) comes with `--disable-radix-cache`.

SGLang asserts it when the server starts, right after checking the model is one HiSparse serves, so every
HiSparse launch that keeps the (default) radix cache fails before loading weights. bench/oracle_diff.py --space
dsa drew such launches; SGLang's resolution accepts them and the assert comes later, at check_server_args.""",
        fix_title="Add --disable-radix-cache",
        when=All((Flag("enable_hisparse"), Resolved(hisparse_model, "a model HiSparse serves"))),
        requires=Flag("disable_radix_cache"),
        fix=("--disable-radix-cache",),
    ),
    Constraint(
        id="dsa-tbo-index-sharing",
        title="Two-batch overlap cannot run a DSA model whose layers share top-k indices",
        versions="sglang>=0.5.13",
        needs_model=True,
        stage="startup",
        prevents="--enable-two-batch-overlap is not supported with DSA index-topk sharing: the TBO op path does not "
        "propagate topk indices across layers, so shared layers would run sparse attention without indices. Got "
        "index_topk_freq={index_topk_freq!r}, index_topk_pattern={index_topk_pattern!r}, and "
        "indexer_types={indexer_types!r}.",
        source="sglang: python/sglang/srt/arg_groups/model_hook.py, _validate_dsa_tbo_index_sharing",
        docs="""Checks `--enable-two-batch-overlap` on a DSA model whose config.json makes some layers reuse an
earlier layer's top-k indices: `index_topk_freq` > 1, an `S` in `index_topk_pattern`, or (from 0.5.20)
`shared` in `indexer_types`.

A shared layer runs sparse attention with the indices its predecessor's indexer chose; the TBO operation
path does not carry them from layer to layer, so SGLang refuses the pair at start-up.""",
        fix_title="Drop --enable-two-batch-overlap",
        when=All((Flag("enable_two_batch_overlap"), DSA)),
        requires=Not(Resolved(dsa_index_sharing, "index-topk sharing between DSA layers")),
    ),
    Constraint(
        id="dsv4-kv-cache-dtype",
        title="DeepSeek-V4 needs an fp8_e4m3 KV cache (or bfloat16, from sglang 0.5.14)",
        versions="sglang>=0.5.12",
        needs_model=True,
        stage="startup",
        prevents="{kv_cache_dtype} is not supported for DeepseekV4ForCausalLM",
        source=f"{kb.OVERRIDES}, _deepseek_v4_kv_cache_dtype (deepseek_v4_hook.py apply_deepseek_v4_defaults before "
        "0.5.15)",
        docs="""Checks that DeepSeek-V4 (DeepseekV4ForCausalLM) is given `--kv-cache-dtype` auto or fp8_e4m3, or
bfloat16 from sglang 0.5.14.

SGLang resolves auto to fp8_e4m3 for it (bfloat16 on NPU) and asserts the dtype at start-up; 0.5.12-0.5.13.post1
keep fp8_e4m3 only. Unlike the DSA path it does not rewrite the `bf16` spelling, so `--kv-cache-dtype bf16` is
refused too.""",
        fix_title="Pass --kv-cache-dtype fp8_e4m3 (or bfloat16, from sglang 0.5.14)",
        when=DSV4,
        # one requirement per dtype a fix may name: it is named where the release keeps it
        requires=tuple(
            Requirement(AnyOf((DSV4_KEPT_KV, Not(Since(str(release))))), (f"--kv-cache-dtype {dtype}",))
            for dtype, release in kb.DSV4_KV_DTYPES_SINCE.items()
            if dtype != "auto"
        ),
    ),
    Constraint(
        id="dsv4-speculative",
        title="DeepSeek-V4 speculative decoding: EAGLE with --speculative-eagle-topk 1 (or DSPARK, from sglang 0.5.16)",
        versions="sglang>=0.5.12",
        needs_model=True,
        stage="startup",
        prevents="Only EAGLE speculative algorithm with topk == 1 is supported for DeepseekV4ForCausalLM; Only EAGLE "
        "and DSPARK speculative algorithms are supported for DeepseekV4ForCausalLM",
        source=f"{kb.DSV4_HOOK}, apply_deepseek_v4_defaults",
        docs="""Checks a DeepSeek-V4 (DeepseekV4ForCausalLM) launch with `--speculative-algorithm`: EAGLE with
`--speculative-eagle-topk 1` given, or DSPARK from sglang 0.5.16.

SGLang asserts this in DeepSeek-V4's model defaults, which run before its speculative-decoding step: NEXTN is not
yet renamed EAGLE there and EAGLE's top-k not yet filled in, so `--speculative-algorithm NEXTN`, and EAGLE without
`--speculative-eagle-topk`, are refused at start-up although they start for DeepSeek-V3. DeepSeek-V4's MTP layer is
drafted through EAGLE one token per step.""",
        fix_title="Pass --speculative-algorithm EAGLE --speculative-eagle-topk 1",
        when=All((DSV4, Flag("speculative_algorithm"))),
        requires=(
            Requirement(DSV4_KEPT_SPECULATIVE, DSV4_EAGLE_FIX),
            Requirement(
                AnyOf((Not(Flag("speculative_algorithm", ("EAGLE",))), Flag("speculative_eagle_topk", (1,)))),
                DSV4_EAGLE_FIX,
            ),
        ),
    ),
    Constraint(
        id="dsv4-attn-backend",
        title="DeepSeek-V4's trtllm and flashmla_mega attention backends: SM100, FP8 KV, no HiSparse or CP",
        versions="sglang>=0.5.20",
        needs_model=True,
        stage="startup",
        prevents="--dsv4-attn-backend trtllm requires an SM100/SM103 (Blackwell) GPU.",
        source=f"{kb.DSV4_HOOK}, validate_hisparse (the DeepSeek-V4 attention-backend asserts)",
        docs="""Checks `--dsv4-attn-backend trtllm` and `flashmla_mega` for DeepSeek-V4: trtllm needs an SM100/SM103
GPU, an fp8_e4m3 (or auto) KV cache, no `--enable-hisparse`, no context parallelism (`--attn-cp-size`,
`--dcp-size`, prefill CP), no PD disaggregation (`--disaggregation-mode`) and chunked prefill on; flashmla_mega
needs DeepSeek-V4.1 on SM100/SM103.

trtllm switches the SWA and compressed KV pools to a uniform 512-dim FP8 layout served by FlashInfer's
trtllm-gen sparse MLA kernel, which exists for SM100 only; its semaphore buffer is sized from the prefill
chunk. SGLang asserts each of these at start-up.""",
        fix_title="Use --dsv4-attn-backend flashmla (or auto)",
        # the GPU first: without it SGLang's answer is not known, whatever else holds
        when=All((Flag("dsv4_attn_backend", ("trtllm", "flashmla_mega")), DSV4, Capability((0, 0)))),
        requires=(
            Requirement(Arch((kb.DSV4_SM100_MAJOR,)), ("--dsv4-attn-backend flashmla",)),
            Requirement(
                AnyOf((Not(Flag("dsv4_attn_backend", ("flashmla_mega",))), Model(model_types=(kb.DSV41_MODEL_TYPE,)))),
                ("--dsv4-attn-backend flashmla",),
            ),
            Requirement(
                AnyOf((Not(Flag("dsv4_attn_backend", ("trtllm",))), DSV4_TRTLLM)), ("--dsv4-attn-backend flashmla",)
            ),
        ),
    ),
    Constraint(
        id="dsv4-encoder-swa-replay-model",
        title="--enable-encoder-swa-bounded-replay requires DeepSeek-V4.1",
        versions="sglang>=0.5.21",
        stage="startup",
        prevents="--enable-encoder-swa-bounded-replay requires DeepSeek-V4.1",
        source="sglang: python/sglang/srt/arg_groups/deepseek_v4_hook.py, validate_deepseek_v41_features; "
        "python/sglang/srt/arg_groups/model_hook.py, handle_model_capability_adjustments",
        docs="""Checks that `--enable-encoder-swa-bounded-replay` serves DeepSeek-V4.1 (config.json `model_type`
deepseek_v41).

The encoder's bounded sliding-window replay is a DeepSeek-V4.1 path. SGLang 0.5.21 and 0.5.22 refuse the flag
for a DeepSeek-V4 checkpoint of another model_type (and ignore it for other architectures); 0.5.23 refuses it
for every model but DeepSeek-V4.1.""",
        fix_title="Drop --enable-encoder-swa-bounded-replay unless the model is DeepSeek-V4.1",
        when=Flag("enable_encoder_swa_bounded_replay"),
        requires=AnyOf(
            (
                Model(model_types=(kb.DSV41_MODEL_TYPE,)),
                All((Not(DSV4), Not(Since(str(kb.ENCODER_SWA_REPLAY_ANY_MODEL_FROM))))),
            )
        ),
    ),
    Constraint(
        id="dsv4-fp4-indexer-gpu",
        title="--enable-deepseek-v4-fp4-indexer needs an SM100 or (from 0.5.18) SM120 GPU",
        versions="sglang>=0.5.13",
        stage="startup",
        prevents="--enable-deepseek-v4-fp4-indexer requires SM100, SM120, or gfx95 GPUs with FP4 indexer support.; "
        "--enable-deepseek-v4-fp4-indexer requires SM100 GPUs with FP4 indexer support. (0.5.13-0.5.17)",
        source="sglang: python/sglang/srt/arg_groups/serving_hook.py, handle_environment_variables "
        "(server_args.py before 0.5.19)",
        docs="""Checks the GPU of `--enable-deepseek-v4-fp4-indexer`: SM100/SM103, or SM120 from SGLang 0.5.18
(ROCm gfx95 from 0.5.21, outside what this tool judges).

The FP4 indexer kernels exist for those architectures only; SGLang refuses the flag at start-up on any other
GPU, whatever the model.""",
        fix_title="Drop --enable-deepseek-v4-fp4-indexer on this GPU (the default indexer runs)",
        when=Flag("enable_deepseek_v4_fp4_indexer"),
        requires=AnyOf(
            tuple(All((Since(str(release)), Arch((major,)))) for major, release in kb.FP4_INDEXER_MAJORS_SINCE.items())
        ),
    ),
    Constraint(
        id="dsv4-prefill-cp-strategy",
        title="DeepSeek-V4 prefill context parallelism on CUDA takes the interleave strategy only",
        versions="sglang>=0.5.12",
        needs_model=True,
        stage="startup",
        prevents="DeepSeekV4 zigzag CP requires the NPU backend; CUDA/HIP backends reindex with interleave order.",
        source=f"{kb.DSV4_HOOK}, validate_deepseek_v4_cp",
        docs="""Checks that DeepSeek-V4 (DeepseekV4ForCausalLM) with prefill context parallelism (`--enable-prefill-cp`;
before 0.5.20 also the legacy `--enable-prefill-context-parallel` / `--enable-nsa-prefill-context-parallel`) uses
`--cp-strategy interleave`.

DeepSeek-V4's CUDA attention reindexes the split sequence in interleave (round-robin) order; SGLang refuses zigzag
at start-up ("DeepSeekV4 zigzag CP requires the NPU backend", from 0.5.21; "DeepSeekV4 only supports interleave CP
strategy" in 0.5.14-0.5.20, "... round-robin-split CP mode" in 0.5.12-0.5.13), and --enable-prefill-cp without a
--cp-strategy is refused the same way (got None). Before 0.5.20 the legacy --enable-prefill-context-parallel maps
to zigzag unless --prefill-cp-mode round-robin-split is given. SGLang's other branch here, prefill CP on HIP
needing the dsv4 backend for both phases, is ROCm's and never reached on an NVIDIA GPU.""",
        fix_title="Pass --cp-strategy interleave",
        when=All((DSV4, PREFILL_CP)),
        # the flag that sets the strategy: --cp-strategy from 0.5.14, the NSA CP mode before
        requires=(
            Requirement(AnyOf((DSV4_CP_STRATEGY, Not(CP_STRATEGY_FLAG))), (f"--cp-strategy {kb.DSV4_CP_STRATEGY}",)),
            Requirement(AnyOf((DSV4_CP_STRATEGY, CP_STRATEGY_FLAG)), ("--nsa-prefill-cp-mode round-robin-split",)),
        ),
    ),
    Constraint(
        id="dsa-cache-layer-split",
        title="--enable-dsa-cache-layer-split: a DSA model on a PD prefill worker with interleaved prefill CP, "
        "mooncake, PP 1",
        versions="sglang>=0.5.20",
        needs_model=True,
        stage="startup",
        prevents="--enable-dsa-cache-layer-split is only supported for DSA (DeepSeek Sparse Attention) models.; "
        "--enable-dsa-cache-layer-split is only supported on PD prefill workers.; --enable-dsa-cache-layer-split "
        "requires --enable-prefill-cp and --cp-strategy interleave.; --enable-dsa-cache-layer-split currently only "
        "supports the mooncake transfer backend; --enable-dsa-cache-layer-split is not supported with pipeline "
        "parallelism (pp_size > 1) yet.",
        source="sglang: python/sglang/srt/arg_groups/model_hook.py, handle_model_specific_adjustments",
        docs="""Checks `--enable-dsa-cache-layer-split`: a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5),
`--disaggregation-mode prefill`, `--enable-prefill-cp --cp-strategy interleave`,
`--disaggregation-transfer-backend mooncake` (the default) and `--pp-size` 1.

Layer split keeps each prefill-CP rank's share of the DSA cache by layer and hands full shards to the decode
side through Mooncake; a decode or colocated worker needs the whole local cache, and CP with PP is not
validated. SGLang refuses the rest at start-up.""",
        fix_title="Serve a DSA model's prefill worker with --disaggregation-mode prefill --enable-prefill-cp "
        "--cp-strategy interleave",
        when=Flag("enable_dsa_cache_layer_split"),
        first_only=True,
        requires=(
            Requirement(DSA),
            Requirement(Flag("disaggregation_mode", ("prefill",)), ("--disaggregation-mode prefill",)),
            Requirement(
                All((Flag("enable_prefill_cp"), Flag("cp_strategy", (kb.KV_SHARD_DSA_CP_STRATEGY,)))),
                (f"--enable-prefill-cp --cp-strategy {kb.KV_SHARD_DSA_CP_STRATEGY}",),
            ),
            Requirement(
                unset_or("disaggregation_transfer_backend", LAYER_SPLIT_TRANSFER),
                (f"--disaggregation-transfer-backend {LAYER_SPLIT_TRANSFER}",),
            ),
            Requirement(Range("pp_size", -INF, 1), ("--pp-size 1",)),
        ),
    ),
    Constraint(
        id="model-hyv4-context-parallel",
        title="HYV4 takes no prefill context parallelism and no decode context parallelism",
        versions="sglang>=0.5.20",
        needs_model=True,
        stage="startup",
        prevents="--enable-prefill-cp is not supported for HYV4 because its attention path does not implement DSA "
        "context-parallel metadata and sharding.; --dcp-size > 1 is not supported for HYV4 because decode context "
        "parallelism gathers query heads across DCP ranks but does not provide single-owner semantics for "
        "learnable attention sinks.",
        source=f"{DEEPSEEK_V2_OVERRIDES}, _deepseek_family_overrides",
        docs="""Checks that an HYV4 model (HYV4ForCausalLM, its HYV4ForCausalLMNextN draft) runs without
`--enable-prefill-cp` and with `--dcp-size` 1.

HYV4's DSA attention path implements no context-parallel metadata or sharding, and decode CP would gather query
heads across ranks without one owner for its learnable attention sinks: SGLang's DeepSeek-family override raises
both at start-up (deepseek_v2.py:61-76 in sglang 0.5.23).""",
        fix_title="Serve HYV4 without --enable-prefill-cp, with --dcp-size 1",
        when=Model(architectures=HYV4_ARCHITECTURES),
        first_only=True,
        requires=(
            Requirement(Not(Flag("enable_prefill_cp"))),
            Requirement(Range("dcp_size", -INF, 1), ("--dcp-size 1",)),
        ),
    ),
    Constraint(
        id="dsa-dcp",
        title="DSA decode context parallelism: no HiSparse / HiCache, no PD, EAGLE top-k 1, an unpooled index key",
        versions="sglang>=0.5.22",
        needs_model=True,
        stage="startup",
        prevents="DSA DCP does not support HiSparse or HiCache.; DSA DCP does not support PD disaggregation.; DSA DCP "
        "requires --speculative-eagle-topk 1.; --dcp-size > 1 is not supported for DSA with "
        "index_kpool={index_kpool}: a pooled index key spans positions owned by different DCP ranks.",
        source=f"{DEEPSEEK_V2_OVERRIDES}, _dsa_dcp_overrides, _deepseek_family_overrides",
        docs="""Checks a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5, ...) with `--dcp-size` above 1: no
`--enable-hisparse` or `--enable-hierarchical-cache`, no `--disaggregation-mode` prefill or decode,
`--speculative-eagle-topk` 1 or unset, and a checkpoint whose DSA indexer does not pool keys (`index_kpool` 1 or
absent).

SGLang's DSA decode CP splits the KV sequence over DCP ranks; the host caches, the PD transfer and tree drafting
are not wired for that split, and a pooled index key would span positions owned by different ranks: SGLang raises
each at start-up (deepseek_v2.py:18-34 and :162-168 in sglang 0.5.23). With DCP it also names trtllm for the DSA
sub-backends not given (judged by the DSA backend rules).""",
        fix_title="Drop --dcp-size (or keep it with no HiCache / HiSparse, colocated, top-k 1)",
        when=All((DSA, DCP)),
        first_only=True,
        requires=(
            Requirement(Not(AnyOf((Flag("enable_hisparse"), Flag("enable_hierarchical_cache")))), ("--dcp-size 1",)),
            Requirement(unset_or("disaggregation_mode", "null"), ("--dcp-size 1",)),
            Requirement(unset_or("speculative_eagle_topk", 1), ("--speculative-eagle-topk 1",)),
            Requirement(Not(Resolved(pooled_index_key, "a pooled DSA index key (index_kpool > 1)")), ("--dcp-size 1",)),
        ),
    ),
    Constraint(
        id="dsa-prefill-cp-single-node",
        title="DSA prefill context parallelism runs on one machine: --tp-size 8 at most",
        versions="sglang>=0.5.13",
        needs_model=True,
        stage="startup",
        prevents="Context parallel only supports single machine (tp_size <= 8). Cross-machine CP has precision issues.",
        source=f"{DEEPSEEK_V2_OVERRIDES}, _deepseek_family_overrides (the DSA prefill-CP arm)",
        docs="""Checks that a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5, ...) served with prefill context
parallelism (`--enable-prefill-cp`, or its legacy spellings in older releases) has `--tp-size` 8 or less.

SGLang asserts it on the DSA prefill-CP path at start-up (deepseek_v2.py:123-125 in sglang 0.5.23): its CP
gather and reduce-scatter are validated inside one machine, and across machines they lose precision.""",
        fix_title="Use --tp-size 8 (one machine) for DSA prefill CP",
        when=All((DSA, PREFILL_CP)),
        requires=Range("tp_size", -INF, DSA_PREFILL_CP_MAX_TP),
        fix=(f"--tp-size {DSA_PREFILL_CP_MAX_TP}",),
    ),
)

constraint_rules(__name__, ROWS)
