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
    gpu,
    quantization_gate,
    sglang_release,
)
from attn_preflight.rules.core.engine import Outcome, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.reasons import (
    Query,
    backends_declaring,
    declared_words,
    names_text,
    working,
)
from attn_preflight.rules.engines.sglang.resolve import (
    RAGGED_VERIFY_ENV,
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


# --- Soft-capping ---------------------------------------------------------------------------------------


SOFTCAP_DOCS = """Checks that a model with attention logit soft-capping (config.json `attn_logit_softcapping`, e.g.
Gemma 2's 50.0, or `--feature softcap`) is served by a backend that applies it: {features:softcap} pass the
layer's `logit_cap` to their kernels.

{refuses:softcap} refuses such layers at start-up. {drops:softcap} never read `layer.logit_cap`: the model runs
without its soft-cap and its logits drift from the reference with no error, so these are reported as a warning.
Note that on SM100 SGLang's generic default for an MHA model is trtllm_mha. Gemma 3 and Gemma 4 configs carry no
attention soft-cap (SGLang passes logit_cap=0.0). The fix names the first of fa3 and flashinfer the declarations
admit on the GPU."""
# The backend a soft-capped model moves to: the first of these the declarations admit on the GPU.
SOFTCAP_INSTEAD = ("fa3", "flashinfer")


@rule(
    id="model-softcap-backend",
    title="Logit soft-capping (Gemma 2) needs a backend that applies it",
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    stage="runtime",
    prevents="The hpc_ops attention backend does not support logit cap.",
    source="sglang: python/sglang/srt/layers/attention/hpc_ops_backend.py, _check_layer_supported; "
    "trtllm_mha_backend.py, torch_native_backend.py, torch_flex_backend.py (no logit_cap argument)",
    docs=SOFTCAP_DOCS,
    worded=lambda: declared_words("Logit soft-capping (Gemma 2) needs a backend that applies it", SOFTCAP_DOCS),
    fix_title="Use --attention-backend flashinfer, fa3 (SM8x/SM90), fa4 or triton",
)
def model_softcap_backend(cfg, target):
    if "softcap" not in cfg.features:
        return skipped("applies to models with attention logit soft-capping")
    if not cfg.backends:
        return unknown("no attention backend chosen and none can be derived for this target")
    instead = working(target.sglang_backends, SOFTCAP_INSTEAD, Query(target.major, features=frozenset({"softcap"})))
    fix = [f"--attention-backend {name}" for name in instead[:1]]
    refusing = sorted(b for b in cfg.backends if "softcap" in declared(target, b).refuses)
    if refusing:
        return failed(f"soft-capped attention on {', '.join(refusing)}", "a backend that applies logit_cap", fix)
    ignored = sorted(b for b in cfg.backends if "softcap" in declared(target, b).drops)
    if ignored:
        return warned(
            f"soft-capped attention on {', '.join(ignored)}, which drops the soft-cap",
            names_text(backends_declaring("features", "softcap", target.sglang_backends)),
            fix,
        )
    return passed(_backends_found(cfg), "a backend that applies logit_cap")


# --- Dual chunk (Qwen 1M) -----------------------------------------------------------------------------------


@rule(
    id="model-dual-chunk-backend",
    title="Dual-chunk attention models (Qwen2.5-1M) need dual_chunk_flash_attn",
    engine="sglang",
    versions="sglang>=0.5.1",
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


# --- MiMo-V2 ------------------------------------------------------------------------------------------------

MIMO_V2 = "MiMoV2ForCausalLM"
# the attention TP must equal the interleaved TP to 0.5.16, divide it from 0.5.17
MIMO_V2_TP_DIVIDES_FROM = Version("0.5.17")


@rule(
    id="model-mimo-v2-fused-qkv-tp",
    title="MiMo-V2 with fused qkv_proj weights runs at the attention TP they were interleaved for",
    engine="sglang",
    versions="sglang>=0.5.11",
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


# --- HRM-Text -----------------------------------------------------------------------------------------------


@rule(
    id="model-hrm-text-triton",
    title="HRM-Text runs on triton only: SGLang overrides any other --attention-backend",
    engine="sglang",
    versions="sglang>=0.5.15",
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


# --- MiniMax-M3.1 NVFP4 -------------------------------------------------------------------------------------


MINIMAX_M3_DRAFT_HOST = "MiniMaxM3SparseForConditionalGeneration"  # the wrapper that captures the draft's states


@rule(
    id="model-minimax-m3-nvfp4-speculation",
    title="MiniMax-M3.1 NVFP4 drafts with DSPARK / DFLASH only on Blackwell, its VL architecture, static ragged "
    "verify, PP 1; DFLASH colocated",
    engine="sglang",
    versions="sglang>=0.5.23",
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
    if not minimax_m3_nvfp4(cfg, target):
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
    gated = quantization_gate(cfg, target, "sglang", str(sglang_release(target)))
    if isinstance(gated, Outcome):
        return gated
    method, gate = gated
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
