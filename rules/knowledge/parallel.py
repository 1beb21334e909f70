"""SGLang's context parallelism (prefill CP, decode CP) and attention data parallelism: the sizes, strategies and
transfer backends its start-up checks accept, per release. Read from the sglang wheels
(each sglang wheel, unpacked, not installed); each value names where.
"""

from __future__ import annotations

from types import MappingProxyType

from packaging.version import Version

PARALLEL_HOOK = "sglang: python/sglang/srt/arg_groups/parallel_hook.py"
PD_HOOK = "sglang: python/sglang/srt/arg_groups/pd_disaggregation_hook.py"
CP_TP_HOOK = "sglang: python/sglang/srt/arg_groups/cp_tp_group_sharing_hook.py"

# --disaggregation-transfer-backend's default in every release (server_args.py:2995 in 0.5.17,
# arg_groups/fields/disagg.py:71 in 0.5.23).
DEFAULT_TRANSFER_BACKEND = "mooncake"
# A PD decode worker with --dcp-size > 1 needs a transfer backend that relays out DCP pages, from the release
# named on (handle_pd_disaggregation: pd_disaggregation_hook.py:37-43 in 0.5.17-0.5.18, :53-65 with fake in
# 0.5.19-0.5.21, :82-96 with mori and ascend in 0.5.22-0.5.23).
PD_DECODE_DCP_TRANSFERS = (
    (Version("0.5.17"), ("mooncake", "nixl")),
    (Version("0.5.19"), ("mooncake", "nixl", "fake")),
    (Version("0.5.22"), ("mooncake", "nixl", "mori", "ascend", "fake")),
)

# --dcp-comm-backend: "ag_rs" by default in 0.5.17-0.5.19 (server_args.py:1088 in 0.5.17, :1029 in 0.5.19);
# from 0.5.20 unset, resolved before the DCP checks (_dcp_comm_backend_default, overrides.py:1430-1450 in 0.5.20,
# :1374-1396 in 0.5.23): ag_rs at --dcp-size 1, else fi_a2a where FlashInfer's MNNVL all-to-all is supported and
# a2a on CUDA otherwise: an all-to-all backend either way.
DCP_COMM_BACKEND_RESOLVED_FROM = Version("0.5.20")
DCP_COMM_BACKEND_OLD_DEFAULT = "ag_rs"
DCP_ALL_TO_ALL = ("a2a", "fi_a2a")
# --dcp-size > 1 refuses --enable-prefill-cp from 0.5.22 (parallel_hook.py:243-244 in 0.5.22, :249-250 in 0.5.23).
DCP_WITHOUT_PREFILL_CP_FROM = Version("0.5.22")

# Attention DP (--attn-dp-size, 0.5.22+) is not combined with --dp-size replicas (handle_data_parallelism,
# parallel_hook.py:279-286 in 0.5.22, :285-292 in 0.5.23; context_parallel_attn_dp_size asserts the same,
# model_override_base.py:235-239 in 0.5.22-0.5.23).
ATTN_DP_SIZE_FROM = Version("0.5.22")

# The tp_size divisibility of prefill CP reads the data-parallel width as dp_size through 0.5.21 ("tp_size must
# be divisible by dp_size * attn_cp_size", parallel_hook.py:106-112 in 0.5.21) and as attn_dp_size from 0.5.22
# (:151-157 in 0.5.22, :157-163 in 0.5.23).
CP_DIVISOR_ATTN_DP_FROM = Version("0.5.22")
# The architectures whose model overrides set attn_cp_size themselves under prefill CP, tp_size // attention-DP
# width (the DeepSeek family: model_overrides/deepseek_v2.py:37-50 and :99-215 in 0.5.23, DSA models and MLA
# ones; DeepSeek-V4: deepseek_v4_hook.py:217-221), so --attn-cp-size is not what the CP checks see. From 0.5.22 a
# DSA model with --cp-strategy interleave keeps a given --attn-cp-size > 1 (deepseek_v2.py:126-134 in 0.5.22 and
# 0.5.23; through 0.5.21 always tp_size // dp_size, :107 in 0.5.21).
CP_SIZE_SET_BY_MODEL = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "KimiK25ForConditionalGeneration",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
        "Glm5NextForConditionalGeneration",
        "HYV4ForCausalLM",
        "LongcatFlashForCausalLM",
        "Dots3NoteForCausalLM",
        "DeepseekV4ForCausalLM",
    }
)
DSA_INTERLEAVE_KEEPS_CP_SIZE_FROM = Version("0.5.22")

# Model-specific prefill-CP refusals (handle_context_parallelism and _boundary_parallelism_overrides): the
# strategy a model refuses or needs, from the release named.
# "DeepSeek V3.2 prefill CP does not support --cp-strategy zigzag; use interleave." (parallel_hook.py:45-53 in
# 0.5.20, :123-131 in 0.5.23)
CP_STRATEGY_REFUSED = MappingProxyType({"DeepseekV32ForCausalLM": ("zigzag", "interleave", Version("0.5.20"))})
# "MiMo V2 prefill CP only supports --cp-strategy zigzag." (parallel_hook.py:55-62 in 0.5.20, :132-139 in 0.5.23)
CP_STRATEGY_REQUIRED = MappingProxyType(
    {arch: ("zigzag", Version("0.5.20")) for arch in ("MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM")}
)
# model_type -> the first release that refuses context parallelism for it: Nemotron-H any --attn-cp-size > 1,
# LongCat-Flash prefill CP over more than one rank (parallel_hook.py:32-40 in 0.5.21, :64-80 in 0.5.23).
NO_CP_MODEL_TYPES = MappingProxyType({"nemotron_h": Version("0.5.21"), "nemotron_h_puzzle": Version("0.5.21")})
NO_PREFILL_CP_MODEL_TYPES = MappingProxyType({"longcat_flash": Version("0.5.21")})

# CP-TP group sharing (resolve_cp_tp_group_sharing, cp_tp_group_sharing_hook.py:27-130 in 0.5.23): prefill CP over
# attn_cp_size > 1 for these architectures makes the CP group the TP group. Architecture -> (the first release
# that lists it, the --cp-strategy it requires). Glm5Next from 0.5.22 (:20, :37-43 in 0.5.22), Qwen4-Exp from 0.5.23
# (:21-24, :41-47 in 0.5.23).
CP_TP_GROUP_SHARING = MappingProxyType(
    {
        "Glm5NextForConditionalGeneration": (Version("0.5.22"), "interleave"),
        "Qwen4ExpForConditionalGeneration": (Version("0.5.23"), "zigzag"),
    }
)
GLM5_NEXT = "Glm5NextForConditionalGeneration"
# What CP-TP group sharing accepts beside it (cp_tp_group_sharing_hook.py):
# - speculative decoding: GLM-5-Next only, native MTP (EAGLE / NEXTN on the target's own checkpoint) with top-k
#   None or 1 (:45-54 in 0.5.22), and DFLASH from 0.5.23 (:53-65); another architecture refuses any algorithm;
CP_TP_NATIVE_MTP = ("EAGLE", "NEXTN")
CP_TP_DFLASH_FROM = Version("0.5.23")
# - refused in every release: --enable-dsa-cache-layer-split, --dcp-size > 1 (and --enable-mixed-chunk,
#   --moe-dp-size > 1, unmodelled) (:56-60 in 0.5.22, :67-72 in 0.5.23); any PD disaggregation in 0.5.22 (:61);
CP_TP_NO_PD_UNTIL = Version("0.5.23")
# - 0.5.23: Qwen4-Exp refuses --pp-size > 1 and a PD decode worker (and EP, an all-to-all MoE backend,
#   --enable-waterfill, unmodelled) (:73-83); a PD GLM-5-Next refuses a decode worker, another transfer backend
#   than mooncake, speculative decoding other than DFLASH, --pp-size > 1, --dp-size > 1 (and EP) (:84-96); a PD
#   prefill worker refuses SGLANG_DISAGG_STAGING_BUFFER (:100-105, an EnvBool: environ.py:859, true for
#   "true", "1", "yes", "y" in any case);
CP_TP_PD_TRANSFER = "mooncake"
STAGING_BUFFER_ENV = "SGLANG_DISAGG_STAGING_BUFFER"
ENV_TRUE = ("true", "1", "yes", "y")
# - each linear-attention head count divides by --tp-size (:107-120 in 0.5.23, :67-80 in 0.5.22); GLM-5-Next's
#   KDA heads default to 64 without linear_attn_config or linear_num_heads (configs/glm5_next.py:130, :198-225).
GLM5_NEXT_DEFAULT_LINEAR_HEADS = 64

# --dcp-comm-backend fi_a2a: the model runner allocates FlashInfer's MNNVL all-to-all workspace before CUDA-graph
# capture and refuses a target is_fi_a2a_supported rejects (layers/dcp/comm.py init_fi_a2a_workspace, :429-442 in
# 0.5.20, :435-448 in 0.5.23): an SM100 GPU (is_sm100_supported: compute capability major 10, CUDA 12.8;
# utils/common.py:309-313 in 0.5.23) whose DCP group shares an MNNVL domain (MNNVL fabric memory, or the DCP group
# inside one node: tp_size per node divisible by dcp_size; utils/common.py:1056-1064). 0.5.17-0.5.19 require MNNVL
# fabric memory itself (comm.py:418-422 in 0.5.17), which a GPU name does not tell.
FI_A2A_MAJOR = 10
