"""SGLang's DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5, ...) and DeepSeek-V4: which architectures take
the DSA path per release, and the KV dtypes and DSA sub-backends each path accepts. Read from the sglang wheels
(each sglang wheel, unpacked, not installed); each value names where.
"""

from __future__ import annotations

from types import MappingProxyType

from packaging.version import Version

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
HISPARSE_HOOK = "sglang: python/sglang/srt/arg_groups/hisparse_hook.py"
# _validate_dsa_tbo_index_sharing reads indexer_types from this release (model_hook.py:55 in 0.5.20; 0.5.19 reads
# index_topk_freq and index_topk_pattern only, :172-186)
SHARED_INDEXER_TYPES_FROM = Version("0.5.20")

# Architecture -> the first release whose is_deepseek_dsa (configs/model_config.py; is_deepseek_nsa before
# 0.5.11) lists it; the model is DSA when it also has index_topk. Read in 0.5.4.post3, 0.5.6, 0.5.7, 0.5.8,
# 0.5.9, 0.5.10, 0.5.12-0.5.17, 0.5.19, 0.5.20, 0.5.22, 0.5.23 (the NextN draft heads left out: never a
# served model's architecture).
DSA_ARCHITECTURES_SINCE = MappingProxyType(
    {
        "DeepseekV3ForCausalLM": "0.5.4.post3",
        "DeepseekV32ForCausalLM": "0.5.4.post3",
        "MistralLarge3ForCausalLM": "0.5.7",
        "PixtralForConditionalGeneration": "0.5.7",
        "GlmMoeDsaForCausalLM": "0.5.9",
        "LongcatFlashForCausalLM": "0.5.16",
        "Dots3NoteForCausalLM": "0.5.19",
        "Glm5NextForConditionalGeneration": "0.5.20",
        "HYV4ForCausalLM": "0.5.20",
    }
)

# The KV page size the DSA path sets on CUDA, replacing --page-size (see rules/engines/sglang/resolve.py effective_page_size for
# where, per release).
DSA_PAGE_SIZE = 64
# Releases whose model adjustments leave an architecture off the DSA path although is_deepseek_dsa lists it:
# 0.5.6-0.5.11 gate the DSA arm of _handle_model_specific_adjustments on a DeepSeek list without
# DeepseekV32ForCausalLM (server_args.py:939-940 in 0.5.6, :1507-1515 in 0.5.10, :1673-1681 in 0.5.11; 0.5.5
# runs the arm for every is_deepseek_nsa model, 0.5.12 adds it to the list), so SGLang resolves it like
# DeepSeek-V3 there: the generic default backend, page 1, no DSA KV assert (oracle, 0.5.10).
DSA_PATH_GAPS = MappingProxyType({"DeepseekV32ForCausalLM": (Version("0.5.6"), Version("0.5.12"))})
# `--kv-cache-dtype` values the DSA path keeps: auto becomes fp8_e4m3 on SM100+ (bfloat16 below, and with
# learnable sinks), bf16 becomes bfloat16, and anything else fails "DeepSeek DSA only supports bf16/bfloat16 or
# fp8_e4m3 kv_cache_dtype" (server_args.py:1077-1080 in 0.5.4.post3, "NSA" in the message through 0.5.9;
# :1440-1443 in 0.5.10; overrides.py:637-640 in 0.5.19, :541-544 in 0.5.23).
DSA_KV_DTYPES = ("auto", "bf16", "bfloat16", "fp8_e4m3")
# Learnable DSA sinks (config.json learnable_sink) need a bfloat16 KV cache and flashmla_sparse for both DSA
# phases (overrides.py:527-531 and :645-654 in 0.5.23; from 0.5.20).
SINK_KV_DTYPES = ("auto", "bf16", "bfloat16")
SINK_DSA_BACKEND = "flashmla_sparse"
# DSA sub-backends that exist only on ROCm/HIP (_check_dsa_backend_constraints: `rocm_only = {"triton"}`,
# overrides.py:631 in 0.5.20, :534 in 0.5.21, :537 in 0.5.22, :560 in 0.5.23).
ROCM_ONLY_DSA_BACKENDS = frozenset({"triton"})
# TileLang's CUDA FP8 KV layout (_check_dsa_backend_constraints, overrides.py:545-559 in 0.5.22, :568-583 in
# 0.5.23; the HiSparse arm :668 in 0.5.22, :692 in 0.5.23): with fp8_e4m3 KV, tilelang must serve both DSA
# phases, without decode context parallelism, on SM89 or newer, and without HiSparse.
TILELANG_DSA_BACKEND = "tilelang"
# 0.5.17-0.5.21: tilelang with an fp8_e4m3 KV cache is refused on CUDA (the CUDA kernel is bfloat16 only;
# overrides.py:1569 in 0.5.17, :643 in 0.5.20); the HiSparse branch checks it from 0.5.20 (:757 in 0.5.20).
TILELANG_CUDA_FP8_HISPARSE_CHECKED_FROM = Version("0.5.20")
TILELANG_FP8_MIN_CC = (8, 9)
# HiSparse (--enable-hisparse): KV dtypes, and the CUDA DSA backends per KV dtype (hisparse_hook.py:16-23 from
# 0.5.18 to 0.5.23; 0.5.17 had only flashmla_kv for fp8_e4m3).
HISPARSE_KV_DTYPES = ("bfloat16", "fp8_e4m3")
HISPARSE_CUDA_BACKENDS = MappingProxyType(
    {"bfloat16": frozenset({"flashmla_sparse"}), "fp8_e4m3": frozenset({"flashmla_kv", "flashinfer_sparse_mla"})}
)
# The models --enable-hisparse serves besides DSA ones (validate_hisparse's assert: is_deepseek_v4 from 0.5.12,
# hisparse_hook.py:60-64 in 0.5.12; is_minimax_sparse from 0.5.21, :93-98 in 0.5.21, :101-106 in 0.5.23; DSA only in
# 0.5.10-0.5.11, server_args.py:6185), by architecture and the first release serving it (configs/model_config.py:
# DeepseekV4ForCausalLMDSpark in is_deepseek_v4 from 0.5.16)
HISPARSE_ARCHITECTURES_SINCE = MappingProxyType(
    {
        "DeepseekV4ForCausalLM": Version("0.5.12"),
        "DeepseekV4ForCausalLMNextN": Version("0.5.12"),
        "DeepseekV4ForCausalLMDSpark": Version("0.5.16"),
        "MiniMaxM3SparseForCausalLM": Version("0.5.21"),
        "MiniMaxM3SparseForConditionalGeneration": Version("0.5.21"),
    }
)
# validate_hisparse refuses --enable-mixed-chunk, a speculative top-k other than 1 and --speculative-adaptive from
# 0.5.22 (hisparse_hook.py:80-85, :114-127 in 0.5.22 and 0.5.23; none of the three in 0.5.21)
HISPARSE_FEATURE_CHECKS_FROM = Version("0.5.22")
# DeepSeek-V4 (DeepseekV4ForCausalLM, from 0.5.12; 0.5.11 has no DeepSeek-V4): auto becomes fp8_e4m3; the KV
# dtypes kept, by the first release keeping them: fp8_e4m3 only in 0.5.12-0.5.13.post1 (apply_deepseek_v4_defaults,
# deepseek_v4_hook.py:27-34), bfloat16 too from 0.5.14 (:18-40 in 0.5.14; _deepseek_v4_kv_cache_dtype from 0.5.15,
# overrides.py:1308-1317 in 0.5.15, :922-925 in 0.5.19, :897-910 in 0.5.23).
DSV4_ARCHITECTURE = "DeepseekV4ForCausalLM"
DSV4_FROM = Version("0.5.12")
DSV4_KV_DTYPES_SINCE = MappingProxyType({"auto": DSV4_FROM, "fp8_e4m3": DSV4_FROM, "bfloat16": Version("0.5.14")})
DSV4_AUTO_KV = "fp8_e4m3"
DSV4_HOOK = "sglang: python/sglang/srt/arg_groups/deepseek_v4_hook.py"
# On CUDA SGLang runs DeepSeek-V4 on the dsv4 backend at page 256 whatever --attention-backend and --page-size say:
# apply_deepseek_v4_defaults assigns both in 0.5.12-0.5.14 (deepseek_v4_hook.py:15-16 in 0.5.12-0.5.13.post1,
# :16-17 in 0.5.14, run by _handle_model_specific_adjustments before the default backend and page-size steps);
# from 0.5.15 the model override _deepseek_v4_overrides declares them, and a declaration wins over the flag
# (overrides.py:692-704 in 0.5.15 and 0.5.15.post1, :793-805 in 0.5.16, :1090-1102 in 0.5.17, :1146-1158 in
# 0.5.18; model_overrides/deepseek_v4.py:30-42 in 0.5.19, :29-41 in 0.5.20, :24-61 in 0.5.21-0.5.23). Only NPU
# differs (page 128, dsv4 for both phases). Equal --prefill- and --decode-attention-backend still replace it
# (the default-backend step that follows, as for any model). SGLang's oracle agrees on SM90, SM100 and SM120 in
# 0.5.16, 0.5.20 and 0.5.23 (dsv4, page 256 with no flag, --attention-backend fa3 / flashinfer, --page-size 64).
DSV4_BACKEND = "dsv4"
DSV4_PAGE_SIZE = 256
DSV4_OVERRIDE_SOURCE = (
    "sglang: python/sglang/srt/arg_groups/model_overrides/deepseek_v4.py, _deepseek_v4_overrides "
    "(arg_groups/overrides.py in 0.5.15-0.5.18, deepseek_v4_hook.py apply_deepseek_v4_defaults in 0.5.12-0.5.14)"
)
# Speculative decoding of DeepSeek-V4 (apply_deepseek_v4_defaults, before SGLang turns NEXTN into EAGLE or fills
# a default top-k): the algorithms kept, by the first release keeping them, EAGLE only with
# --speculative-eagle-topk 1 given (deepseek_v4_hook.py:36-42 in 0.5.12-0.5.13.post1, :48-54 in 0.5.14, :55-61 in
# 0.5.15 and 0.5.15.post1; DSPARK too from 0.5.16, :55-63 in 0.5.16, :147-155 in 0.5.17, :144-152 in 0.5.18,
# :147-155 in 0.5.19, :188-197 in 0.5.20, :96-105 in 0.5.21, :102-111 in 0.5.22, :148-157 in 0.5.23). The oracle
# (0.5.16, 0.5.20, 0.5.23) refuses NEXTN, EAGLE3, NGRAM, and EAGLE without a top-k or with top-k 2.
DSV4_SPECULATIVE_SINCE = MappingProxyType({"EAGLE": DSV4_FROM, "DSPARK": Version("0.5.16")})
DSV4_EAGLE_TOPK = 1
# --dsv4-attn-backend trtllm (from 0.5.20): SM100/SM103 (is_sm100_supported), an fp8_e4m3 (or auto) KV cache, no
# HiSparse, no context parallelism, no PD disaggregation, chunked prefill on (deepseek_v4_hook.py:138-171 in
# 0.5.20, :110-132 in 0.5.23); flashmla_mega (0.5.23, :101-107): DeepSeek-V4.1 (model_type deepseek_v41) on
# SM100/SM103.
DSV4_TRTLLM_KV_DTYPES = ("auto", "fp8_e4m3")
DSV4_SM100_MAJOR = 10
DSV41_MODEL_TYPE = "deepseek_v41"
# --enable-cp-decode-attn-tp (0.5.17+): the architectures whose attention linears are replicated across CP ranks,
# CP_DECODE_ATTN_TP_SUPPORTED_ARCHS (layers/cp/cp_decode_attn_tp.py:29-37, the same tuple in every release
# 0.5.17-0.5.23), checked against config.json's architectures[0] (server_args.py:5062-5072 in 0.5.17,
# arg_groups/model_hook.py:193-205 in 0.5.23).
CP_DECODE_ATTN_TP_ARCHITECTURES = (
    "DeepseekV4ForCausalLM",
    "DeepseekV4ForCausalLMNextN",
    "DeepseekV4ForCausalLMDSpark",
    "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN",
)
# --enable-encoder-swa-bounded-replay (0.5.21+) requires DeepSeek-V4.1: refused for a DeepseekV4ForCausalLM of
# another model_type in validate_deepseek_v41_features (deepseek_v4_hook.py:176-179 in 0.5.21, :211-214 in 0.5.22,
# run for that architecture only: model_hook.py:432-441 in 0.5.21), and for any other model from 0.5.23
# (handle_model_capability_adjustments, model_hook.py:1038-1045).
ENCODER_SWA_REPLAY_ANY_MODEL_FROM = Version("0.5.23")
# --enable-deepseek-v4-fp4-indexer (0.5.13+), for any model: SM100 (is_sm100_supported, server_args.py:4164 in
# 0.5.13 to :6676 in 0.5.16 and 0.5.17), SM100 or SM120 from 0.5.18 (server_args.py:8091-8093; serving_hook.py
# :421-423 in 0.5.19-0.5.20), gfx95 too from 0.5.21 (:423-425; :464-466 in 0.5.23): compute-capability majors on
# CUDA, by the first release accepting them.
FP4_INDEXER_MAJORS_SINCE = MappingProxyType({10: Version("0.5.13"), 12: Version("0.5.18")})
# DSA with --enable-kv-cache-sharding (0.5.23 kv_shard_hook.py:33-67, validate_kv_shard_attention_backend; 0.5.22
# has no DSA branch): the dsa prefill backend, interleaved prefill CP over more than one rank on PP 1, trtllm for
# both DSA phases, an fp8_e4m3 KV cache at page 64, the Mooncake transfer backend, no DSA cache layer split, and
# an uncompressed index_kpool of 1.
KV_SHARD_DSA_CP_STRATEGY = "interleave"
KV_SHARD_DSA_BACKEND = "trtllm"
KV_SHARD_DSA_KV = "fp8_e4m3"
KV_SHARD_DSA_TRANSFER = "mooncake"
# The DSA sub-backends 0.5.23 fills in where none is named (overrides.py:600-720 _dsa_split_backend_resolution,
# CUDA): learnable sinks take SINK_DSA_BACKEND; GLM-5 with fp8_e4m3 on SM12x flashinfer_sparse_mla; fp8_e4m3
# trtllm on SM100+ and flashmla_kv below; otherwise flashmla_sparse prefill with trtllm (SM100+) or fa3 decode.
GLM_SM12_FP8_DSA_BACKEND = "flashinfer_sparse_mla"
GLM_DSA_ARCHITECTURE = "GlmMoeDsaForCausalLM"

# DeepSeek-V4 prefill context parallelism on CUDA (validate_deepseek_v4_cp, run by the model adjustments for
# DeepseekV4ForCausalLM) takes the interleave strategy only: any other is refused at start-up. How a launch
# asks for prefill CP, per release:
# - 0.5.12-0.5.13.post1: --enable-nsa-prefill-context-parallel (--enable-dsa-prefill-context-parallel from
#   0.5.13) with --nsa-prefill-cp-mode, default round-robin-split (interleave); "DeepSeekV4 only supports
#   round-robin-split CP mode" (deepseek_v4_hook.py:67-71 in 0.5.12, :60-64 in 0.5.12.post1-0.5.13.post1);
# - 0.5.14-0.5.19: --enable-prefill-cp with --cp-strategy (no default), the legacy flags mapped onto them first
#   by _handle_legacy_cp_arguments (server_args.py:4932-4952 in 0.5.14, parallel_hook.py:562-591 in 0.5.19, run
#   before the model adjustments): --enable-prefill-context-parallel's mode defaults to in-seq-split (zigzag),
#   the DSA flag's to round-robin-split; "DeepSeekV4 only supports interleave CP strategy" (:79-83 in 0.5.14,
#   :207-210 in 0.5.20);
# - 0.5.20 on: --enable-prefill-cp and --cp-strategy only (the legacy flags are gone); from 0.5.21 zigzag has a
#   message of its own, "DeepSeekV4 zigzag CP requires the NPU backend" (:122 in 0.5.21, :172-176 in 0.5.23).
DSV4_CP_STRATEGY = "interleave"
CP_LEGACY_MODES = MappingProxyType({"in-seq-split": "zigzag", "round-robin-split": "interleave"})
CP_STRATEGY_FLAG_FROM = Version("0.5.14")
CP_LEGACY_FLAGS_GONE_FROM = Version("0.5.20")
