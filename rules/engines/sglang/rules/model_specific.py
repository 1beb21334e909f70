"""Model-specific limits: the per-architecture asserts SGLang applies at start-up (the backend lists of model
families are rows: attn_preflight.rules.engines.sglang.constraints.model_specific).

Architectures are matched on config.json's `architectures[0]` (and `model_type` where SGLang keys on the
config class). Verified against the sglang wheels 0.5.5 ... 0.5.23; where a list changed, the check follows
the target's installed (or pinned) SGLang release, and the newest when it is unknown.
"""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import (
    attention_dp_size,
    blackwell_majors,
    declared,
    env_true,
    gpu,
    sglang_release,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.capabilities import (
    IQUEST_Q1_ARCHITECTURES,
)
from attn_preflight.rules.engines.sglang.resolve import (
    RAGGED_VERIFY_ENV,
    effective_page_size,
    hrm_text,
    minimax_m3_nvfp4,
    ragged_verify_mode,
)
from attn_preflight.rules.knowledge import quantization as kb_quant

MODEL_HOOK = "sglang: python/sglang/srt/arg_groups/model_hook.py"
OVERRIDES_DIR = "sglang: python/sglang/srt/arg_groups/model_overrides"
FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"


def _arch(cfg) -> str:
    return cfg.model.architecture or ""


def _backends_found(cfg) -> str:
    return cfg.backend_label() + (" (auto-selected)" if cfg.auto_backend else "")


# --- Llama 4 ------------------------------------------------------------------------------------------------


@rule(
    id="model-llama4-chunk-size",
    title="Llama 4 on fa3/fa4 needs attention_chunk_size in its config",
    engine="sglang",
    versions="sglang>=0.5.8",
    verified=(
        "sglang 0.5.8-0.5.23: the FA backend asserts attention_chunk_size when the model is a local-attention "
        "one, and is_local_attention_model is Llama4ForConditionalGeneration alone in every release "
        "(configs/model_config.py:1195 in 0.5.8, :2549 in 0.5.23); the assert in FlashAttentionBackend.__init__ "
        "(flashattention_backend.py:365 in 0.5.8, :149 in 0.5.10, :235 in 0.5.18, :241 in 0.5.19, :256 in 0.5.21), "
        "in the local-attention metadata builder in 0.5.22-0.5.23 (:395), the block read in every wheel; "
        "0.5.7 reads the chunk size with hasattr and asserts nothing (:356)"
    ),
    backends=("fa3", "fa4"),
    needs_model=True,
    stage="init",
    prevents="Attention chunk size is required for local attention",
    source=f"{FA_BACKEND}, FlashAttentionBackend._maybe_init_local_attn_builder; "
    "configs/model_config.py is_local_attention_model",
    docs="""Checks that a Llama4ForConditionalGeneration config served by fa3 or fa4 carries
`attention_chunk_size` (in its text_config).

SGLang treats Llama4ForConditionalGeneration as a local-attention model; the FlashAttention backend builds
its chunked-attention metadata from `attention_chunk_size` and asserts it is set. A converted or trimmed
config without the field fails when the backend is constructed, after the weights have loaded.""",
    fix_title="Restore attention_chunk_size (8192 for Llama 4 Scout/Maverick) in text_config, or use triton",
)
def model_llama4_chunk_size(cfg, target):
    if _arch(cfg) != "Llama4ForConditionalGeneration":
        return skipped("applies to Llama4ForConditionalGeneration (SGLang's local-attention model)")
    used = sorted(cfg.backends & {"fa3", "fa4"})
    if cfg.model.attention_chunk_size:
        return passed(f"attention_chunk_size {cfg.model.attention_chunk_size}", "attention_chunk_size set")
    return failed(
        f"a Llama 4 config without attention_chunk_size on {', '.join(used)}",
        "text_config.attention_chunk_size (8192 in the released checkpoints)",
        ["--attention-backend triton"],
    )


# --- Soft-capping ---------------------------------------------------------------------------------------


@rule(
    id="model-softcap-backend",
    title="Logit soft-capping (Gemma 2) needs a backend that applies it",
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    verified=(
        "sglang 0.5.0rc2-0.5.5, read in each wheel: flashattention_backend.py, flashinfer_backend.py (:483, "
        ":579) and triton_backend.py (0.5.0rc2 :729, :779) pass layer.logit_cap to their kernels; "
        "trtllm_mha_backend.py, torch_native_backend.py and torch_flex_backend.py (from 0.5.3) never read it "
        "(0.5.5-0.5.23 as the earlier reading); hpc_ops (0.5.17-0.5.23) refuses it with the upstream message (hpc_ops_backend.py; bench/release_walk.py "
        "prevents)"
    ),
    stage="runtime",
    prevents="The hpc_ops attention backend does not support logit cap.",
    source="sglang: python/sglang/srt/layers/attention/hpc_ops_backend.py, _check_layer_supported; "
    "trtllm_mha_backend.py, torch_native_backend.py, torch_flex_backend.py (no logit_cap argument)",
    docs="""Checks that a model with attention logit soft-capping (config.json `attn_logit_softcapping`, e.g.
Gemma 2's 50.0, or `--feature softcap`) is served by a backend that applies it: fa3, fa4, flashinfer or
triton pass the layer's `logit_cap` to their kernels.

hpc_ops refuses such layers at start-up. trtllm_mha, torch_native and flex_attention never read
`layer.logit_cap`: the model runs without its soft-cap and its logits drift from the reference with no
error, so these are reported as a warning. Note that on SM100 SGLang's generic default for an MHA model
is trtllm_mha. Gemma 3 and Gemma 4 configs carry no attention soft-cap (SGLang passes logit_cap=0.0).""",
    fix_title="Use --attention-backend flashinfer, fa3 (SM8x/SM90), fa4 or triton",
)
def model_softcap_backend(cfg, target):
    if "softcap" not in cfg.features:
        return skipped("applies to models with attention logit soft-capping")
    if not cfg.backends:
        return unknown("no attention backend chosen and none can be derived for this target")
    fix = [f"--attention-backend {'fa3' if target.major in (8, 9) else 'flashinfer'}"]
    refusing = sorted(b for b in cfg.backends if "softcap" in declared(target, b).refuses)
    if refusing:
        return failed(f"soft-capped attention on {', '.join(refusing)}", "a backend that applies logit_cap", fix)
    ignored = sorted(b for b in cfg.backends if "softcap" in declared(target, b).drops)
    if ignored:
        return warned(
            f"soft-capped attention on {', '.join(ignored)}, which drops the soft-cap",
            "fa3, fa4, flashinfer or triton",
            fix,
        )
    return passed(_backends_found(cfg), "a backend that applies logit_cap")


# --- Dual chunk (Qwen 1M) -----------------------------------------------------------------------------------


@rule(
    id="model-dual-chunk-backend",
    title="Dual-chunk attention models (Qwen2.5-1M) need dual_chunk_flash_attn",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.1-0.5.23: the refusal is in every release through 0.5.19 (model_runner.py:403-410 in "
        "0.5.1, server_args.py:1307 in 0.5.4.post3, arg_groups/attention_hook.py in 0.5.15-0.5.19); through "
        "0.5.4 it runs before the generic default, so no backend means dual_chunk_flash_attn; the backend is "
        "gone from 0.5.20 (a warning)"
    ),
    needs_model=True,
    stage="startup",
    prevents="Dual chunk attention is enabled, but attention backend is set to {backend}. Please set it to "
    "'dual_chunk_flash_attn'.",
    source="sglang: python/sglang/srt/arg_groups/overrides.py, _attention_backend_dual_chunk (0.5.15-0.5.19; "
    "server_args.py before); python/sglang/srt/arg_groups/choices.py (0.5.20+: backend removed)",
    docs="""Checks the backend of a model whose config has `dual_chunk_attention_config` (Qwen2.5-7B/14B-Instruct-1M).

Through sglang 0.5.19 such a model runs only on `dual_chunk_flash_attn`, and it has to be named: SGLang
fills its generic default backend (`_attention_backend_default`: fa3 on SM90, flashinfer elsewhere) before
the dual-chunk check runs, so that check's "turned on by default" branch is never reached and a launch
without `--attention-backend` is refused like any other backend (read in server_args.py 0.5.4.post3-0.5.14
and arg_groups/attention_hook.py 0.5.15-0.5.19). Through 0.5.4 the check ran in model_runner.py before the
default, so a launch without a backend got dual_chunk_flash_attn. sglang 0.5.20 removed the backend: the model is then served
with ordinary attention and only its dual-chunk rotary embedding is kept, so dual-chunk attention, which
these models rely on beyond their 256K-token native window, no longer applies. That is reported as a
warning.""",
    fix_title="sglang <= 0.5.19: --attention-backend dual_chunk_flash_attn; newer: keep prompts within the native "
    "window",
)
def model_dual_chunk_backend(cfg, target):
    if not cfg.model.dual_chunk:
        return skipped("applies to models with dual_chunk_attention_config")
    if declared(target, "dual_chunk_flash_attn").removed:
        return warned(
            f"a dual-chunk model on sglang {sglang_release(target)}, which has no dual_chunk_flash_attn",
            "sglang <= 0.5.19 for dual-chunk attention",
            ["--context-length 262144"],
        )
    if cfg.attention_backend == "dual_chunk_flash_attn":
        return passed("--attention-backend dual_chunk_flash_attn", "dual_chunk_flash_attn")
    if not cfg.backend_given and sglang_release(target) < DUAL_CHUNK_CHECK_AFTER_DEFAULT_FROM:
        return passed("no --attention-backend (SGLang picks dual_chunk_flash_attn)", "dual_chunk_flash_attn")
    return failed(
        f"a dual-chunk model on {_backends_found(cfg)}",
        "--attention-backend dual_chunk_flash_attn",
        ["--attention-backend dual_chunk_flash_attn"],
    )


# Through 0.5.4 model_runner.py's model_specific_adjustment fills dual_chunk_flash_attn before the generic default
# (0.5.1 :403-410, default at :416); from 0.5.4.post3 server_args.py fills the default first (:1120, check :1307).
DUAL_CHUNK_CHECK_AFTER_DEFAULT_FROM = Version("0.5.4.post3")


@rule(
    id="model-iquest-q1-fa3",
    title="IQuestQ1 runs on fa3 only, its MTP draft too, with EAGLE top-k 1",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: arg_groups/model_overrides/iquest_q1.py is the same in each (diff 0.5.21..0.5.23: "
        "the DP-attention test only); IQuestQ1 first appears in 0.5.21 (bench/release_walk.py grep)"
    ),
    needs_model=True,
    stage="startup",
    prevents="IQuestQ1 applies its attention sink from the softmax LSE and requires FA3 attention for both prefill "
    "and decode.",
    source=f"{OVERRIDES_DIR}/iquest_q1.py, _iquest_q1_overrides",
    docs="""Checks an IQuestQ1 model (IQuestQ1ForCausalLM, its IQuestQ1MTP draft): every named attention backend is
fa3, the MTP draft's too, and EAGLE top-k is 1.

SGLang's override refuses anything else at start-up (iquest_q1.py:13-35 in sglang 0.5.23: "requires FA3 attention
for both prefill and decode", "requires FA3 attention for the MTP draft", "requires --speculative-eagle-topk 1")
and sets fa3 itself where no backend is named, so the model needs a GPU fa3 runs on (SM90, or SM8x).""",
    fix_title="Use --attention-backend fa3 (on SM90)",
)
def model_iquest_q1_fa3(cfg, target):
    if _arch(cfg) not in IQUEST_Q1_ARCHITECTURES:
        return skipped("applies to IQuestQ1 models")
    named = [b for b in (cfg.attention_backend, cfg.prefill_attention_backend, cfg.decode_attention_backend) if b]
    problems = [f"attention backend {b}" for b in dict.fromkeys(named) if b != "fa3"]
    if cfg.draft_attention_backend not in (None, "fa3"):
        problems.append(f"draft attention backend {cfg.draft_attention_backend}")
    if (cfg.speculative_eagle_topk or 0) > 1:
        problems.append(f"--speculative-eagle-topk {cfg.speculative_eagle_topk}")
    required = "fa3 for prefill, decode and the MTP draft; top-k 1"
    if not problems:
        return passed(_backends_found(cfg), required)
    return failed(f"IQuestQ1 with {', '.join(problems)}", required, ["--attention-backend fa3"])


# attn_dp_enabled_of (runtime_context.py: attn_dp_size > 1) from 0.5.22, where `--dp-size N --enable-dp-attention`
# became --attn-dp-size N (parallel_hook.py:39-61 in 0.5.23); until 0.5.21 the overrides read enable_dp_attention.
ATTN_DP_SIZE_FROM = Version("0.5.22")


def _dp_attention(cfg, release: Version) -> str:
    """The DP-attention flags as a model override sees them enabled; "" when it does not."""
    if release >= ATTN_DP_SIZE_FROM:
        dp = attention_dp_size(cfg)
        return f"attention DP {dp}" if dp > 1 else ""
    return "--enable-dp-attention" if cfg.flags.get("enable_dp_attention") else ""


def _dp_attention_off(cfg) -> list[str]:
    """The fix that turns DP attention off, where a flag value can (a store-true flag cannot be unset)."""
    if cfg.flags.get("attn_dp_size"):
        return ["--attn-dp-size 1"]
    return ["--dp-size 1"] if cfg.flags.get("dp_size") and cfg.flags.get("enable_dp_attention") else []


@rule(
    id="model-iquest-q1-parallel",
    title="IQuestQ1 drafts with serial EAGLE / NEXTN only and takes no context, DP-attention or pipeline parallelism",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23 (bench/release_walk.py grep 'IQuest Q1 MTP requires serial', 'IQuestQ1 does not "
        "support context', 'IQuest Q1 does not support DP', '... pipeline'): iquest_q1.py:23-39 in 0.5.21, "
        ":24-40 in 0.5.22 and 0.5.23; the only change is the DP test, cfg.enable_dp_attention in 0.5.21, "
        "attn_dp_enabled_of (attn_dp_size > 1) from 0.5.22"
    ),
    needs_model=True,
    stage="startup",
    prevents="IQuest Q1 MTP requires serial EAGLE or NEXTN drafting.; IQuestQ1 does not support context "
    "parallelism.; IQuest Q1 MTP drafting does not support multi-layer EAGLE.; IQuest Q1 does not support DP "
    "attention.; IQuest Q1 does not support pipeline parallelism.",
    source=f"{OVERRIDES_DIR}/iquest_q1.py, _iquest_q1_overrides",
    docs="""Checks an IQuestQ1 model (IQuestQ1ForCausalLM, its IQuestQ1MTP draft) for what its override refuses
beside the backend (model-iquest-q1-fa3): a speculative algorithm other than EAGLE or NEXTN, context parallelism
(`--attn-cp-size` or `--dcp-size` above 1, `--enable-prefill-cp`), `--enable-multi-layer-eagle`, DP attention
(`--attn-dp-size` above 1; until 0.5.21 `--enable-dp-attention`) and `--pp-size` above 1.

SGLang's IQuestQ1 override raises each of these at start-up (iquest_q1.py:24-40 in sglang 0.5.23), after the
backend checks; the MTP draft is a single-layer serial head (`--speculative-eagle-topk 1`, model-iquest-q1-fa3).""",
    fix_title="Serve IQuestQ1 on plain TP: EAGLE drafting, no CP, DP attention or PP",
)
def model_iquest_q1_parallel(cfg, target):
    if _arch(cfg) not in IQUEST_Q1_ARCHITECTURES:
        return skipped("applies to IQuestQ1 models")
    release = sglang_release(target)
    required = "EAGLE or NEXTN drafting, no context parallelism, multi-layer EAGLE, DP attention or PP"
    algorithm = cfg.speculative_algorithm
    if algorithm and algorithm.upper() not in ("EAGLE", "NEXTN"):
        return failed(f"IQuestQ1 with --speculative-algorithm {algorithm}", required, ["--speculative-algorithm EAGLE"])
    cp_sizes = {
        f"--{d.replace('_', '-')}": cfg.flags[d] for d in ("attn_cp_size", "dcp_size") if (cfg.flags.get(d) or 1) > 1
    }
    found = ", ".join(
        [
            *(["--enable-prefill-cp"] if cfg.flags.get("enable_prefill_cp") else []),
            *(f"{flag} {size}" for flag, size in cp_sizes.items()),
        ]
    )
    if found:
        # --enable-prefill-cp is a store-true flag, which no flag of a fix turns off
        fix = [] if cfg.flags.get("enable_prefill_cp") else [" ".join(f"{flag} 1" for flag in cp_sizes)]
        return failed(f"IQuestQ1 with {found}", required, fix)
    if cfg.flags.get("enable_multi_layer_eagle"):
        return failed("IQuestQ1 with --enable-multi-layer-eagle", required)
    dp = _dp_attention(cfg, release)
    if dp:
        return failed(f"IQuestQ1 with {dp}", required, _dp_attention_off(cfg))
    if cfg.pp_size > 1:
        return failed(f"IQuestQ1 with --pp-size {cfg.pp_size}", required, ["--pp-size 1"])
    return passed(f"IQuestQ1 on TP {cfg.tp_size}" + (f" with {algorithm}" if algorithm else ""), required)


# --- ERNIE 4.5 VL -------------------------------------------------------------------------------------------

ERNIE45_VL_MOE = "Ernie4_5_VLMoeForConditionalGeneration"


@rule(
    id="model-ernie45-vl-dp-attention",
    title="ERNIE 4.5 VL MoE takes no DP attention",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23: model_overrides/ernie45_vl.py:14-18, the same in both (bench/release_walk.py grep "
        "'ERNIE 4.5 VL MoE does not support DP': none before 0.5.22)"
    ),
    needs_model=True,
    stage="startup",
    prevents="ERNIE 4.5 VL MoE does not support DP attention: its attention heads are split over the full TP group.",
    source=f"{OVERRIDES_DIR}/ernie45_vl.py, _ernie45_vl_overrides",
    docs="""Checks that an ERNIE 4.5 VL MoE model (Ernie4_5_VLMoeForConditionalGeneration) runs without DP attention
(`--attn-dp-size` 1, or `--dp-size N --enable-dp-attention`, which SGLang reads as `--attn-dp-size N`).

The model splits its attention heads over the whole TP group, not over an attention-TP subgroup, so SGLang
refuses attention DP at start-up (ernie45_vl.py:14-18 in sglang 0.5.22 and 0.5.23; no such check before 0.5.22).""",
    fix_title="Use --attn-dp-size 1 (plain TP)",
)
def model_ernie45_vl_dp_attention(cfg, target):
    if _arch(cfg) != ERNIE45_VL_MOE:
        return skipped(f"applies to ERNIE 4.5 VL MoE ({ERNIE45_VL_MOE})")
    required = "no DP attention (heads split over the full TP group)"
    dp = _dp_attention(cfg, sglang_release(target))
    if dp:
        return failed(f"ERNIE 4.5 VL MoE with {dp}", required, _dp_attention_off(cfg))
    return passed(f"ERNIE 4.5 VL MoE on TP {cfg.tp_size}", required)


# --- MiMo-V2 ------------------------------------------------------------------------------------------------

MIMO_V2 = "MiMoV2ForCausalLM"
# the attention TP must equal the interleaved TP to 0.5.16, divide it from 0.5.17
MIMO_V2_TP_DIVIDES_FROM = Version("0.5.17")


@rule(
    id="model-mimo-v2-fused-qkv-tp",
    title="MiMo-V2 with fused qkv_proj weights runs at the attention TP they were interleaved for",
    engine="sglang",
    versions="sglang>=0.5.11",
    verified=(
        "sglang 0.5.11-0.5.23, every release (bench/release_walk.py grep 'requires effective attention TP'): "
        "server_args.py:1987-2012 in 0.5.11 to 0.5.18 (:5601-5620), arg_groups/model_hook.py from 0.5.19 (0.5.23 "
        ":573-596); attention TP = tp // attn-DP // attn_cp_size in each (dp_size with enable_dp_attention to "
        "0.5.21, attn_dp_size from 0.5.22); it must equal the checkpoint's size to 0.5.16 and divide it from 0.5.17; "
        "skipped for --encoder-only from 0.5.13; the size is num_key_value_heads under attention_projection_layout "
        "fused_qkv (configs/model_config.py get_mimo_v2_fused_qkv_expected_tp_size, 0.5.11 :49-70, 0.5.23 :124-145)"
    ),
    needs_model=True,
    stage="startup",
    prevents="MiMoV2ForCausalLM requires effective attention TP size {expected} because its fused qkv_proj weights "
    "are TP={expected}-interleaved; got {effective} (tp_size={tp}, attn_dp_size={dp}, attn_cp_size={cp}).",
    source=f"{MODEL_HOOK}, handle_model_specific_adjustments (MiMoV2ForCausalLM branch); "
    "sglang: python/sglang/srt/configs/model_config.py, get_mimo_v2_fused_qkv_expected_tp_size",
    docs="""Checks a MiMo-V2 checkpoint (MiMoV2ForCausalLM) whose config.json sets `attention_projection_layout:
"fused_qkv"`: its attention TP size (`--tp-size` / attention DP / `--attn-cp-size`) divides the TP its qkv_proj
weights are interleaved for, which SGLang takes to be `num_key_value_heads` (equals it, sglang 0.5.11-0.5.16).

The fused weights are stored interleaved for that many ranks, so SGLang refuses any other split at start-up
(model_hook.py:573-596 in sglang 0.5.23). Not read: `--encoder-only`, with which SGLang skips the check (an
unmodelled flag, reported as such), and layouts other than fused_qkv (split or none take no check).""",
    fix_title="Set --tp-size (with attention DP and CP) so the attention TP is the checkpoint's fused-qkv size",
)
def model_mimo_v2_fused_qkv_tp(cfg, target):
    if _arch(cfg) != MIMO_V2:
        return skipped(f"applies to MiMo-V2 ({MIMO_V2})")
    expected = cfg.model.fused_qkv_tp_size
    if expected is None:
        return skipped("applies to a fused_qkv attention_projection_layout with num_key_value_heads")
    dp, cp = attention_dp_size(cfg), cfg.flags.get("attn_cp_size") or 1
    effective = cfg.tp_size // dp // cp
    if effective < 1:
        return skipped(f"--tp-size {cfg.tp_size} is below attention DP {dp} x CP {cp} (a parallel layout rule's)")
    divides = sglang_release(target) >= MIMO_V2_TP_DIVIDES_FROM
    required = f"attention TP {'dividing' if divides else 'equal to'} {expected} (fused qkv_proj interleaving)"
    if (expected % effective == 0) if divides else (effective == expected):
        return passed(f"attention TP {effective} for qkv_proj interleaved for TP {expected}", required)
    return failed(
        f"attention TP {effective} (--tp-size {cfg.tp_size}, attention DP {dp}, CP {cp}) for qkv_proj interleaved "
        f"for TP {expected}",
        required,
        [f"--tp-size {expected * dp * cp}"],
    )


# --- Qwen4-Exp (QSA sparse attention) -----------------------------------------------------------------------

QWEN4_EXP = "Qwen4ExpForConditionalGeneration"
QSA_FP8_FROM = Version("0.5.22")  # --qsa-indexer-dtype first appears in 0.5.22 (fields/model.py)
QSA_FP8_MAJORS = (9, 10)  # get_platform().is_sm90 / is_sm100 (utils/common.py: majors 9 and 10)


@rule(
    id="model-qwen4-exp-serving",
    title="Qwen4-Exp: PD over MORI needs PP 1, no unified memory; an fp8 QSA indexer needs SM90 / SM100 and the "
    "compressed indexer",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23 (bench/release_walk.py grep 'Qwen4-Exp PD with MORI requires', 'Qwen4-Exp does not "
        "support --enable-unified', 'qsa-indexer-dtype fp8_e4m3 requires'): model_overrides/qwen4_exp.py:31-42 in "
        "0.5.20, :28-39 from 0.5.21 (the same tests); the fp8 indexer checks from 0.5.22, where --qsa-indexer-dtype "
        "first appears (:78-88 in 0.5.22 and 0.5.23); layers/attention/qsa/config.py parse_qsa_profile: a profile "
        "when the text config sets indexer_n_heads"
    ),
    needs_model=True,
    stage="startup",
    prevents="Qwen4-Exp PD with MORI requires --pp-size 1; MORI does not yet exchange the global QSA layer metadata "
    "needed to pair compact state descriptors across pipeline stages.; Qwen4-Exp does not support "
    "--enable-unified-memory yet; --qsa-indexer-dtype fp8_e4m3 requires a CUDA SM90/SM100 GPU; --qsa-indexer-dtype "
    "fp8_e4m3 requires the compressed QSA indexer",
    source=f"{OVERRIDES_DIR}/qwen4_exp.py, _qwen4_exp_overrides",
    docs="""Checks a Qwen4-Exp model (Qwen4ExpForConditionalGeneration): PD disaggregation over
`--disaggregation-transfer-backend mori` runs with `--pp-size 1`; no `--enable-unified-memory`; and
`--qsa-indexer-dtype fp8_e4m3` (sglang 0.5.22+) runs on an SM90 or SM100-class GPU (compute capability 9.x or
10.x) with a checkpoint whose text config has the compressed QSA indexer (`indexer_n_heads`).

MORI does not exchange the QSA layer metadata across pipeline stages, unified memory is not wired for QSA, and
the fp8 indexer scores blocks with TileLang fp8 GEMMs validated on Hopper and Blackwell only: SGLang's override
raises each at start-up (qwen4_exp.py:28-88 in sglang 0.5.23). SGLang's platform test also wants a torch built
for CUDA 12.3 (SM90) or 12.8 (SM100), which the install rules judge.""",
    fix_title="Use --pp-size 1 with MORI, drop --enable-unified-memory, --qsa-indexer-dtype bfloat16 elsewhere",
)
def model_qwen4_exp_serving(cfg, target):
    if _arch(cfg) != QWEN4_EXP:
        return skipped(f"applies to Qwen4-Exp ({QWEN4_EXP})")
    required = "PP 1 for PD over MORI, no unified memory, an fp8 QSA indexer on SM90/SM100 with the compressed indexer"
    mode = cfg.flags.get("disaggregation_mode") or "null"
    if mode != "null" and cfg.flags.get("disaggregation_transfer_backend") == "mori" and cfg.pp_size > 1:
        return failed(f"Qwen4-Exp PD {mode} over MORI with --pp-size {cfg.pp_size}", required, ["--pp-size 1"])
    if cfg.flags.get("enable_unified_memory"):
        return failed("Qwen4-Exp with --enable-unified-memory", required)
    fp8 = cfg.flags.get("qsa_indexer_dtype") == "fp8_e4m3" and sglang_release(target) >= QSA_FP8_FROM
    if fp8 and target.major is None:
        return unknown("compute capability unknown")
    if fp8 and target.major not in QSA_FP8_MAJORS:
        return failed(f"--qsa-indexer-dtype fp8_e4m3 on {gpu(target)}", required, ["--qsa-indexer-dtype bfloat16"])
    if fp8 and not cfg.model.qsa_indexer:
        return failed(
            "--qsa-indexer-dtype fp8_e4m3 on a checkpoint without the compressed QSA indexer (no indexer_n_heads)",
            required,
            ["--qsa-indexer-dtype bfloat16"],
        )
    return passed("Qwen4-Exp" + (" with an fp8 QSA indexer" if fp8 else ""), required)


# --- MiniCPM / MiniCPM-SALA ---------------------------------------------------------------------------------

MINICPM_ARCHITECTURES = ("MiniCPMForCausalLM", "MiniCPMSALAForCausalLM")
MINICPM_SPARSE_BACKENDS = ("minicpm_flashattn", "minicpm_flashinfer")
MINICPM_FORCE_DENSE_ENV = "SGLANG_MINICPM_FORCE_DENSE"


@rule(
    id="model-minicpm-serving",
    title="MiniCPM takes no DP attention; MiniCPM-SALA no HiCache, and its sparse attention no PD disaggregation",
    engine="sglang",
    versions="sglang>=0.5.19",
    verified=(
        "sglang 0.5.19-0.5.23 (bench/release_walk.py grep 'MiniCPM does not support DP', 'MiniCPM SALA does not "
        "support hier', 'MiniCPM sparse attention does not support PD'; none before 0.5.19, where MiniCPM-SALA "
        "first appears): model_overrides/minicpm.py:20-29, :55-58 in 0.5.19-0.5.20, :17-26, :53-56 from 0.5.21; "
        "the only change is the DP test, cfg.enable_dp_attention to 0.5.21, attn_dp_enabled_of from 0.5.22; "
        "configs/minicpm.py has_minicpm_sparse_attention / has_lightning_layers the same in 0.5.19-0.5.23"
    ),
    needs_model=True,
    stage="startup",
    prevents="MiniCPM does not support DP attention; MiniCPM SALA does not support hierarchical cache; MiniCPM "
    "sparse attention does not support PD disaggregation",
    source=f"{OVERRIDES_DIR}/minicpm.py, _minicpm_sala_overrides",
    docs="""Checks a MiniCPM model (MiniCPMForCausalLM, MiniCPMSALAForCausalLM): no DP attention; for MiniCPM-SALA
(model_type minicpm_sala) with sparse-attention or lightning layers, no `--enable-hierarchical-cache`; with
sparse attention on its sparse backend (no backend named, or minicpm_flashattn / minicpm_flashinfer), no
`--disaggregation-mode` prefill or decode unless `SGLANG_MINICPM_FORCE_DENSE` is set.

SGLang's MiniCPM override raises each at start-up (minicpm.py:17-56 in sglang 0.5.23). MiniCPM-SALA's layers are
sparse (sparse_config on minicpm4 mixers) or lightning (linear) attention, read from config.json mixer_types as
sglang's MiniCPMHybridConfig reads them; SGLang also turns the radix cache off for them. SGLANG_MINICPM_FORCE_DENSE
turns the sparse backends into dense ones (fa3 / fa4, flashinfer) and lifts the PD refusal; it changes the model's
attention, so it is not offered as a fix.""",
    fix_title="Use --attn-dp-size 1, drop --enable-hierarchical-cache; serve MiniCPM-SALA's sparse attention colocated",
)
def model_minicpm_serving(cfg, target):
    if _arch(cfg) not in MINICPM_ARCHITECTURES:
        return skipped("applies to MiniCPM (MiniCPMForCausalLM, MiniCPMSALAForCausalLM)")
    model = cfg.model
    sparse, lightning = model.minicpm_sparse_attention, model.minicpm_lightning_layers
    required = "no DP attention" + (
        "; no hierarchical cache" + ("; no PD disaggregation on the sparse backend" if sparse else "")
        if sparse or lightning
        else ""
    )
    dp = _dp_attention(cfg, sglang_release(target))
    if dp:
        return failed(f"MiniCPM with {dp}", required, _dp_attention_off(cfg))
    if (sparse or lightning) and cfg.flags.get("enable_hierarchical_cache"):
        return failed("MiniCPM-SALA with --enable-hierarchical-cache", required)
    dense = env_true(cfg, MINICPM_FORCE_DENSE_ENV)
    named = (
        []
        if cfg.auto_backend
        else [b for b in (cfg.attention_backend, cfg.prefill_attention_backend, cfg.decode_attention_backend) if b]
    )
    on_sparse = not named or any(b in MINICPM_SPARSE_BACKENDS for b in named)
    mode = cfg.flags.get("disaggregation_mode") or "null"
    if sparse and not dense and on_sparse and mode != "null":
        return failed(f"MiniCPM sparse attention with --disaggregation-mode {mode}", required)
    kind = "MiniCPM-SALA" if sparse or lightning else "MiniCPM"
    return passed(
        f"{kind} on TP {cfg.tp_size}" + (f", --disaggregation-mode {mode}" if mode != "null" else ""), required
    )


# --- Cross attention ----------------------------------------------------------------------------------------


@rule(
    id="model-fa-swa-cross-attention",
    title="fa3, fa4, flashinfer and triton cannot serve sliding window together with cross attention",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.0rc2-0.5.23 (every release, bench/release_walk.py grep): the same assert in "
        "flashattention_backend.py (0.5.1 :306-309, 0.5.18 :163-166, 0.5.23 :172-175), "
        "flashinfer_backend.py (0.5.1 :99-102, 0.5.23 :406-409) and triton_backend.py (0.5.1 :93-96, "
        "0.5.23 :374-377); torch_native_backend.py has none and serves cross attention (is_cross_attention)"
    ),
    backends=("fa3", "fa4", "flashinfer", "triton"),
    stage="init",
    prevents="Sliding window and cross attention are not supported together",
    source=f"{FA_BACKEND}, FlashAttentionBackend.__init__; flashinfer_backend.py and triton_backend.py, __init__",
    docs="""Checks that a model with both cross attention and sliding-window layers is not served by fa3, fa4, flashinfer or triton.

SGLang's FlashAttention (fa3 and fa4), FlashInfer and Triton backends each assert at construction that a
model is not both encoder-decoder and sliding-window (SGLang derives the window from the model, or from
Llama 4's attention_chunk_size): flashattention_backend.py:172-175, flashinfer_backend.py:406-409 and
triton_backend.py:374-377 in sglang 0.5.23, the same assert in every release from 0.5.0rc2. torch_native
has no such assert and handles both (torch_native_backend.py:293-330), so it is the backend left.""",
    fix_title="Use --attention-backend torch_native",
)
def model_fa_swa_cross_attention(cfg, target):
    if "cross_attention" not in cfg.features:
        return skipped("applies to encoder-decoder (cross-attention) models")
    used = sorted(cfg.backends & {"fa3", "fa4", "flashinfer", "triton"})
    if "sliding_window" not in cfg.features and "chunked_local" not in cfg.features:
        return passed(
            f"cross attention without a sliding window on {', '.join(used)}", "no sliding window with cross attention"
        )
    return failed(
        f"cross attention with a sliding window on {', '.join(used)}",
        "no sliding window with cross attention on fa3/fa4/flashinfer/triton",
        ["--attention-backend torch_native"],
    )


# --- HRM-Text -----------------------------------------------------------------------------------------------


@rule(
    id="model-hrm-text-triton",
    title="HRM-Text runs on triton only: SGLang overrides any other --attention-backend",
    engine="sglang",
    versions="sglang>=0.5.15",
    verified=(
        "sglang 0.5.15-0.5.23, every release (bench/release_walk.py grep 'HRM-Text (prefix_lm) detected'): "
        "model_runner.py:1150-1166 in 0.5.15 (at model-runner start), server_args.py with overrides.py "
        "_hrm_text_attention_force in 0.5.16-0.5.18 (:2218), arg_groups/model_hook.py + overrides.py from 0.5.19 "
        "(0.5.23 model_hook.py:766-813, overrides.py:1773-1783); the same condition (model_type hrm_text or "
        "HrmTextForCausalLM, prefix_lm default true) and the same override in each"
    ),
    needs_model=True,
    stage="startup",
    prevents="Overriding --attention-backend {backend!r} -> 'triton': only the Triton backend supports HRM-Text's "
    "bidirectional prefix attention.",
    source=f"{MODEL_HOOK}, handle_model_capability_adjustments; sglang: python/sglang/srt/arg_groups/overrides.py, "
    "_hrm_text_attention_force",
    docs="""Warns when an HRM-Text model (model_type hrm_text, HrmTextForCausalLM) is given an attention backend
other than triton: SGLang logs a warning and runs triton instead.

HRM-Text attends bidirectionally over the prompt (prefix LM), which only SGLang's Triton kernels honour.
SGLang also sets `--chunked-prefill-size -1`, `--disable-radix-cache` and `--disable-cuda-graph` for it,
whatever the backend. The rest of the config is judged as triton, which is what runs. (SGLang skips all
of this when the config sets prefix_lm false, a key attn-preflight does not read.)""",
    fix_title="Use --attention-backend triton",
)
def model_hrm_text_triton(cfg, target):
    if not hrm_text(cfg):
        return skipped("applies to HRM-Text (model_type hrm_text)")
    asked = cfg.rewrites.get("attention_backend")
    forced = "with chunked prefill, the radix cache and CUDA graphs off"
    if asked and cfg.attention_backend == "triton":
        return warned(
            f"--attention-backend {asked} for HRM-Text (SGLang runs triton instead, {forced})",
            "--attention-backend triton",
            ["--attention-backend triton"],
        )
    return passed(f"HRM-Text on {cfg.backend_label()}", "--attention-backend triton", reason=f"SGLang runs it {forced}")


# --- Kimi-K3 and Unlimited-OCR ------------------------------------------------------------------------------


@rule(
    id="model-kimi-k3-dcp",
    title="Kimi-K3 with decode context parallelism decodes on cutedsl_mla only",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23, every release (bench/release_walk.py grep 'Decode attention backend for Kimi-K3 DCP "
        "must be'): overrides.py in 0.5.17 (:398-428), arg_groups/model_overrides/kimi_k3.py from 0.5.20 (:129; "
        "0.5.23 :88-113), read in 0.5.17, 0.5.20, 0.5.22 and 0.5.23: cutedsl_mla or no decode backend becomes "
        "prefill trtllm_mla + decode cutedsl_mla; tokenspeed_mla its own pair through 0.5.22; aiter (ROCm) from "
        "0.5.20"
    ),
    needs_model=True,
    stage="startup",
    prevents="Decode attention backend for Kimi-K3 DCP must be 'cutedsl_mla' or 'aiter', got {decode_backend!r}.",
    source=backend_kb.KIMI_K3_DCP_SOURCE,
    docs="""Checks that Kimi-K3 (KimiK3ForConditionalGeneration) with `--dcp-size` > 1 is given no decode backend,
or cutedsl_mla (tokenspeed_mla through 0.5.22; aiter on ROCm).

Kimi-K3's override then sets prefill trtllm_mla and decode cutedsl_mla itself, whatever prefill backend
was named (cutedsl_mla's decode kernel implements the DCP signature); any other decode backend, including
one inherited from `--attention-backend`, is an AssertionError at start-up. (attn-preflight judges the
other rules on the backends as given, not on that pair.)""",
    fix_title="Pass --decode-attention-backend cutedsl_mla (or name no backend)",
)
def model_kimi_k3_dcp(cfg, target):
    if _arch(cfg) != backend_kb.KIMI_K3_ARCHITECTURE:
        return skipped("applies to Kimi-K3 (KimiK3ForConditionalGeneration)")
    dcp = cfg.flags.get("dcp_size") or 1
    if dcp <= 1:
        return skipped("applies to --dcp-size > 1")
    allowed = backend_kb.KIMI_K3_DCP_DECODE_BACKENDS
    if sglang_release(target) < backend_kb.TOKENSPEED_MLA_ALIAS_FROM:
        allowed = (*allowed, "tokenspeed_mla")
    given = None if cfg.auto_backend else cfg.decode_attention_backend or cfg.attention_backend
    required = f"no decode backend, or one of {', '.join(allowed)}"
    if given is None or given in allowed:
        return passed(
            f"Kimi-K3 DCP with decode {given or '(not given)'}",
            required,
            reason="SGLang runs prefill trtllm_mla, decode cutedsl_mla" if given in (None, "cutedsl_mla") else "",
        )
    return failed(
        f"Kimi-K3 with --dcp-size {dcp} and decode {given}", required, ["--decode-attention-backend cutedsl_mla"]
    )


def kimi_k3_dcp_size(cfg) -> int:
    """--dcp-size of a Kimi-K3 launch (1 for any other model): above 1, its DCP override runs."""
    if _arch(cfg) != backend_kb.KIMI_K3_ARCHITECTURE:
        return 1
    return cfg.flags.get("dcp_size") or 1


@rule(
    id="model-kimi-k3-dcp-dspark",
    title="Kimi-K3 DCP with DSPARK needs SGLANG_RAGGED_VERIFY_MODE=static",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23 (bench/release_walk.py grep 'SGLANG_RAGGED_VERIFY_MODE=static'): Kimi-K3's DCP "
        "override raises for DSPARK unless read_ragged_verify_mode() is STATIC (overrides.py:380-390 in 0.5.17, "
        ":446-455 in 0.5.18; arg_groups/model_overrides/kimi_k3.py:62-74 from 0.5.19 to 0.5.23); the variable "
        "defaults to static (environ.py:1572 in 0.5.23) and another value than static / compact / cap-accept is "
        "a ValueError of its own (speculative/ragged_verify.py:19-27)"
    ),
    needs_model=True,
    stage="startup",
    prevents="Kimi-K3 DCP + DSPARK currently requires SGLANG_RAGGED_VERIFY_MODE=static; compact/cap-accept are not "
    "validated under DCP (got {mode!r}).",
    source=f"{backend_kb.KIMI_K3_DCP_SOURCE}; sglang: python/sglang/srt/speculative/ragged_verify.py, "
    "read_ragged_verify_mode",
    docs="""Checks that Kimi-K3 with `--dcp-size` > 1 and `--speculative-algorithm DSPARK` keeps
SGLANG_RAGGED_VERIFY_MODE at static (its default).

The compact and cap-accept ragged-verify modes are not validated under decode context parallelism, so Kimi-K3's
override refuses them at start-up (and routes DSPARK's verify to the decode backend).""",
    fix_title="Unset SGLANG_RAGGED_VERIFY_MODE (or set it to static)",
)
def model_kimi_k3_dcp_dspark(cfg, target):
    dcp = kimi_k3_dcp_size(cfg)
    if dcp <= 1 or (cfg.speculative_algorithm or "").upper() != "DSPARK":
        return skipped("applies to Kimi-K3 with --dcp-size > 1 and DSPARK")
    mode = ragged_verify_mode(cfg)
    required = f"{RAGGED_VERIFY_ENV}=static"
    if mode == "static":
        return passed(f"Kimi-K3 DCP + DSPARK with ragged verify {mode}", required)
    return failed(f"Kimi-K3 DCP + DSPARK with {RAGGED_VERIFY_ENV}={mode}", required, [required])


@rule(
    id="model-prefill-aware-swa-page",
    title="Unlimited-OCR on fa3/fa4 (prefill-aware sliding window) needs page size 1 and no unified memory",
    engine="sglang",
    versions="sglang>=0.5.15",
    verified=(
        "sglang 0.5.15-0.5.23, every release (bench/release_walk.py grep 'Prefill-aware SWA requires page_size=1'): "
        "flashattention_backend.py (0.5.15 :293-297, 0.5.23 :257-268); models/unlimited_ocr.py is the only model "
        "with is_prefill_aware_swa in the 0.5.15, 0.5.19 and 0.5.23 wheels; the unified-memory assert from 0.5.19"
    ),
    needs_model=True,
    backends=("fa3", "fa4"),
    stage="init",
    prevents="Prefill-aware SWA requires page_size=1, got page_size={page_size}",
    source="sglang: python/sglang/srt/layers/attention/flashattention_backend.py, FlashAttentionBackend.__init__",
    docs="""Checks that Unlimited-OCR (UnlimitedOCRForCausalLM), whose sliding window keeps the prompt's tokens
during decode ("prefill-aware SWA"), runs fa3/fa4 with page size 1 (after SGLang's page-size snaps:
fa4 on SM100 forces 128) and, from 0.5.19, without `--enable-unified-memory`.

SGLang's FlashAttention backend builds the prefill-aware window's page table token by token; it asserts
both when the backend is constructed ("--enable-unified-memory does not support the prefill-aware SWA
decode mode; disable it for this model.").""",
    fix_title="Use --page-size 1 (fa3), or drop --enable-unified-memory",
)
def model_prefill_aware_swa_page(cfg, target):
    if _arch(cfg) not in backend_kb.PREFILL_AWARE_SWA_ARCHITECTURES:
        return skipped("applies to Unlimited-OCR (prefill-aware sliding window)")
    page = effective_page_size(cfg, target)
    required = "page size 1, no --enable-unified-memory"
    if page != 1:
        fix = ["--page-size 1"] if cfg.page_size not in (None, 1) else ["--attention-backend fa3"]
        return failed(f"prefill-aware SWA on {cfg.backend_label()} with page size {page}", required, fix)
    unified = cfg.flags.get("enable_unified_memory")
    if unified and sglang_release(target) >= backend_kb.PREFILL_AWARE_SWA_UNIFIED_FROM:
        return failed("prefill-aware SWA with --enable-unified-memory", required, ["--enable-unified-memory false"])
    return passed(f"prefill-aware SWA on {cfg.backend_label()} with page size 1", required)


# --- MiniMax-M3.1 NVFP4 -------------------------------------------------------------------------------------


@rule(
    id="model-minimax-m3-nvfp4",
    title="MiniMax-M3.1 NVFP4 needs page size 128, an fp8_e4m3 KV cache on Blackwell, and DSPARK/DFLASH speculation",
    engine="sglang",
    versions="sglang>=0.5.23",
    verified=(
        "sglang 0.5.23: model_overrides/minimax_m3.py is new in 0.5.23 (bench/release_walk.py grep 'M3.1 NVFP4 "
        "requires --page-size 128': only 0.5.23, :93; the KV dtype check :119, the speculation check :59)"
    ),
    needs_model=True,
    stage="startup",
    prevents="M3.1 NVFP4 requires --page-size 128",
    source=backend_kb.MINIMAX_M3_SOURCE,
    docs="""Checks a MiniMax-M3.1 NVFP4 launch (a MiniMaxM3Sparse architecture with `--quantization
minimax_m3_nvfp4`): `--page-size` 128 or none, on Blackwell `--kv-cache-dtype fp8_e4m3` or auto, and
`--speculative-algorithm` DSPARK, DFLASH or none.

SGLang's M3 override refuses each other value at start-up ("M3.1 NVFP4 requires --kv-cache-dtype
fp8_e4m3", "M3.1 NVFP4 only supports DSPARK or DFLASH speculation") and otherwise sets page size 128,
the fp8_e4m3 KV cache (Blackwell) and trtllm_mha (Blackwell) or fa3 where no backend is named: the rest
of the config is judged on those. A checkpoint whose own quantization_config makes it M3.1 NVFP4 is
recognised only with the --quantization flag (attn-preflight does not read that field).""",
    fix_title="Drop --page-size (or 128), use --kv-cache-dtype fp8_e4m3, DSPARK/DFLASH speculation",
)
def model_minimax_m3_nvfp4(cfg, target):
    if _arch(cfg) not in backend_kb.MINIMAX_M3_ARCHITECTURES:
        return skipped("applies to MiniMax-M3 (MiniMaxM3Sparse*)")
    if not minimax_m3_nvfp4(cfg, sglang_release(target)):
        return skipped("applies to --quantization minimax_m3_nvfp4 (M3.1 NVFP4)")
    page, kv = backend_kb.MINIMAX_M3_NVFP4_PAGE, backend_kb.MINIMAX_M3_NVFP4_KV
    allowed = backend_kb.MINIMAX_M3_NVFP4_SPECULATIVE
    required = f"page size {page}, --kv-cache-dtype {kv} on Blackwell, speculation {' or '.join(allowed)} or none"
    if cfg.page_size not in (None, page):
        return failed(f"M3.1 NVFP4 with --page-size {cfg.page_size}", required, [f"--page-size {page}"])
    if cfg.speculative_algorithm and cfg.speculative_algorithm not in allowed:
        return failed(
            f"M3.1 NVFP4 with --speculative-algorithm {cfg.speculative_algorithm}",
            required,
            [f"--speculative-algorithm {allowed[0]}"],
        )
    blackwell = target.major in blackwell_majors(target)
    if blackwell and cfg.kv_cache_dtype != kv:
        return failed(
            f"M3.1 NVFP4 on {gpu(target)} with --kv-cache-dtype {cfg.kv_cache_dtype}",
            required,
            [f"--kv-cache-dtype {kv}"],
        )
    return passed(f"M3.1 NVFP4 with page size {page}, KV {cfg.kv_cache_dtype}", required)


MINIMAX_M3_DRAFT_HOST = "MiniMaxM3SparseForConditionalGeneration"  # the wrapper that captures the draft's states


@rule(
    id="model-minimax-m3-nvfp4-speculation",
    title="MiniMax-M3.1 NVFP4 drafts with DSPARK / DFLASH only on Blackwell, its VL architecture, static ragged "
    "verify, PP 1; DFLASH colocated",
    engine="sglang",
    versions="sglang>=0.5.23",
    verified=(
        "sglang 0.5.23: model_overrides/minimax_m3.py is new in 0.5.23 (bench/release_walk.py grep 'M3.1 NVFP4 "
        "only supports DSPARK': only 0.5.23, :58; the checks of a DSPARK / DFLASH launch :59-78); "
        "SGLANG_RAGGED_VERIFY_MODE = EnvStr('static') in environ.py"
    ),
    needs_model=True,
    stage="startup",
    prevents="M3.1 NVFP4 {algorithm} requires MiniMaxM3SparseForConditionalGeneration, got {arch}; M3.1 NVFP4 "
    "{algorithm} requires Blackwell; M3.1 NVFP4 {algorithm} requires SGLANG_RAGGED_VERIFY_MODE=static; M3.1 NVFP4 "
    "{algorithm} requires PP=1; M3.1 NVFP4 DFLASH currently requires colocated serving",
    source=backend_kb.MINIMAX_M3_SOURCE,
    docs="""Checks a MiniMax-M3.1 NVFP4 launch (`--quantization minimax_m3_nvfp4`) that drafts with
`--speculative-algorithm` DSPARK or DFLASH: the checkpoint's architecture is
MiniMaxM3SparseForConditionalGeneration, the GPU is a Blackwell one, `SGLANG_RAGGED_VERIFY_MODE` is static (its
default), `--pp-size` is 1, and DFLASH runs without `--disaggregation-mode`.

Only the vision-language wrapper captures the hidden states the draft reads, and the NVFP4 draft path is built
for Blackwell, a static verify layout and one pipeline stage: SGLang's M3 override raises each of these at
start-up (minimax_m3.py:59-78 in sglang 0.5.23). Which algorithms are allowed at all is model-minimax-m3-nvfp4's.""",
    fix_title="Draft on a Blackwell GPU with the VL checkpoint, SGLANG_RAGGED_VERIFY_MODE=static and --pp-size 1",
)
def model_minimax_m3_nvfp4_speculation(cfg, target):
    if not minimax_m3_nvfp4(cfg, sglang_release(target)):
        return skipped("applies to MiniMax-M3 with --quantization minimax_m3_nvfp4 (M3.1 NVFP4)")
    algorithm = cfg.speculative_algorithm
    if algorithm not in backend_kb.MINIMAX_M3_NVFP4_SPECULATIVE:
        return skipped(f"applies to {' or '.join(backend_kb.MINIMAX_M3_NVFP4_SPECULATIVE)} speculation")
    required = f"{MINIMAX_M3_DRAFT_HOST}, a Blackwell GPU, {RAGGED_VERIFY_ENV}=static, PP 1" + (
        ", colocated serving" if algorithm == "DFLASH" else ""
    )
    if _arch(cfg) != MINIMAX_M3_DRAFT_HOST:
        return failed(f"M3.1 NVFP4 {algorithm} on {_arch(cfg)}", required)
    if target.major is None:
        return unknown("compute capability unknown")
    if target.major not in blackwell_majors(target):
        return failed(f"M3.1 NVFP4 {algorithm} on {gpu(target)}", required)
    mode = ragged_verify_mode(cfg)
    if mode != "static":
        return failed(
            f"M3.1 NVFP4 {algorithm} with {RAGGED_VERIFY_ENV}={mode}", required, [f"{RAGGED_VERIFY_ENV}=static"]
        )
    if cfg.pp_size != 1:
        return failed(f"M3.1 NVFP4 {algorithm} with --pp-size {cfg.pp_size}", required, ["--pp-size 1"])
    pd_mode = cfg.flags.get("disaggregation_mode") or "null"
    if algorithm == "DFLASH" and pd_mode != "null":
        return failed(f"M3.1 NVFP4 DFLASH with --disaggregation-mode {pd_mode}", required)
    return passed(f"M3.1 NVFP4 {algorithm} on {gpu(target)}", required)


# SGLang's `--dtype` spellings (server_args.py / fields choices: auto, half, float16, bfloat16, float, float32).
_SGLANG_DTYPES = {
    "half": "float16",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float": "float32",
    "float32": "float32",
}


@rule(
    id="model-quantization-arch",
    title="The checkpoint's quantization method runs on this GPU (SGLang's model loader)",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.1-0.5.23: model_loader/loader.py _get_quantization_config raises both messages in every "
        "release read (0.5.1, 0.5.5 :199-205, 0.5.10, 0.5.15, 0.5.20, 0.5.23 :259-265); mxfp4's minimum and "
        "dtypes in rules/knowledge/quantization.py SGLANG_GATES, read in the same six wheels"
    ),
    needs_gpu=True,
    needs_model=True,
    stage="load",
    prevents=kb_quant.MIN_CAPABILITY_MESSAGE.format(method="mxfp4", minimum=80, current=75),
    source=kb_quant.SOURCE["sglang"],
    docs="""Checks that the checkpoint's quantization method (config.json `quantization_config`, or
`--quantization`) accepts this GPU's compute capability and the `--dtype` given.

SGLang's model loader refuses a GPU below the method's get_min_capability() and a dtype outside
get_supported_act_dtypes() when it builds the quantization config, before the weights load: gpt-oss's mxfp4
needs SM80 (bfloat16 or float16). Only mxfp4 is modelled for SGLang; fp8's minimum depends on the
checkpoint's scheme (MXFP8: SM100) and is not judged here.""",
    fix_title="Use a GPU of the method's minimum compute capability (SM80 for mxfp4)",
)
def model_quantization_arch(cfg, target):
    flag = cfg.flags.get("quantization")
    method = flag.lower() if isinstance(flag, str) else cfg.model.quant_method
    if method is None:
        return skipped("the checkpoint is not quantized")
    gate, known = kb_quant.gate_for("sglang", method, str(sglang_release(target)))
    if not known:
        return skipped(f"quantization method {method} is not modelled for SGLang")
    if gate is None:
        return unknown(f"quantization method {method}: sglang {sglang_release(target)} was not read")
    assert target.cc is not None, "needs_gpu"
    current = target.cc[0] * 10 + target.cc[1]
    if current < gate.min_capability:
        return failed(
            f"quantization {method} on {gpu(target)} (capability {current})",
            f"capability {gate.min_capability} or newer",
            [],
            reason=kb_quant.MIN_CAPABILITY_MESSAGE.format(method=method, minimum=gate.min_capability, current=current),
        )
    dtype = _SGLANG_DTYPES.get(cfg.dtype)
    if dtype is not None and dtype not in gate.act_dtypes:
        dtypes = ", ".join(sorted(gate.act_dtypes))
        return failed(
            f"quantization {method} with --dtype {cfg.dtype}",
            f"a dtype of {dtypes}",
            ["--dtype bfloat16"],
            reason=kb_quant.ACT_DTYPE_MESSAGE.format(dtype=f"torch.{dtype}", method=method, dtypes=dtypes),
        )
    return passed(f"quantization {method} on {gpu(target)}", f"capability >= {gate.min_capability}")
