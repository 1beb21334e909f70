"""KV-cache dtype rules: MXFP8 (FA4 block-scaled), NVFP4 / FP4 (KV4), removed spellings, torch support.

FP8 per backend lives with the backend (fa3-fp8-sm8x, fa4-fp8-sm100, the MLA backends' rules); the flag
constraints of the subject are rows (attn_preflight.rules.engines.sglang.constraints.kv_cache); unified memory,
HiCache / LMCache, the radix cache, KV sharding and the Mamba cache have modules of their own beside this one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.checks.common import (
    blackwell_majors,
    choice_check,
    cuda_version,
    declared,
    gpu,
    sglang_release,
)
from attn_preflight.rules.core.engine import Status, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.registry import registry
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang.reasons import Query, declared_words, requirement
from attn_preflight.rules.engines.sglang.resolve import (
    NVFP4_SOURCE,
    effective_page_size,
    nvfp4_plan,
)
from attn_preflight.rules.knowledge.kv_dtypes import FIELD, KV_DTYPES

FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
MODEL_HOOK = "sglang: python/sglang/srt/arg_groups/model_hook.py"
POOL = "sglang: python/sglang/srt/mem_cache/memory_pool.py, MXFP8 KV pool"
KV4 = ("nvfp4", "fp4_mx_block16")


def _mxfp8(cfg):
    return cfg.kv_cache_dtype == "mxfp8"


@rule(
    id="kv-mxfp8-q-scales",
    title="An MXFP8 KV cache needs a model that supplies per-token Q scales",
    engine="sglang",
    versions="sglang>=0.5.16",
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


KV_MXFP8_KERNEL_TITLE = (
    "MXFP8 passes SGLang's gate on SM110/SM12x, but FA4's block-scaled kernel needs {fa4.kv_dtype_archs:mxfp8}"
)
KV_MXFP8_KERNEL_DOCS = """Checks `--kv-cache-dtype mxfp8` on the Blackwell-family GPUs that pass SGLang's start-up gate but
not FA4's kernel ({fa4.kv_dtype_archs:mxfp8}): Jetson Thor (SM110) and SM120/SM121 (RTX 50xx, RTX PRO 6000,
GB10).

The MXFP8 cache hands FA4 FP8 V tensors, and FA4 asserts `arch // 10 == 10` for FP8 before it picks a
kernel; the block-scale tensors are only threaded into the SM100 kernel anyway. The server starts and the
first forward fails. Derived from the 0.5.23 code, not seen on an SM110 or SM12x GPU."""


@rule(
    id="kv-mxfp8-kernel-arch",
    title=KV_MXFP8_KERNEL_TITLE,
    worded=lambda: declared_words(KV_MXFP8_KERNEL_TITLE, KV_MXFP8_KERNEL_DOCS),
    engine="sglang",
    versions="sglang>=0.5.16",
    stage="runtime",
    prevents="FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.",
    source="sglang: python/sglang/kernels/ops/attention/flash_attn/cute/interface.py, _flash_attn_fwd "
    "(FP8 V asserts arch // 10 == 10; sfq/sfk/sfv reach only FlashAttentionForwardSm100); "
    "kernels/ops/attention/fa4_sm120 (no FP8 path)",
    docs=KV_MXFP8_KERNEL_DOCS,
    fix_title="Use --kv-cache-dtype fp8_e4m3 or auto on SM110/SM12x",
)
def kv_mxfp8_kernel_arch(cfg, target):
    if not _mxfp8(cfg) or target.major not in blackwell_majors(target):
        return skipped("applies to --kv-cache-dtype mxfp8 on the GPUs SGLang's gate admits (SM10x-SM12x)")
    fa4 = declared(target, "fa4")
    required = f"{requirement(fa4, 'kv_dtype_archs:mxfp8', Query(target.major))} for FA4's block-scaled path"
    if target.major in fa4.kv_dtype_archs.get("mxfp8", (target.major,)):  # not declared: not restricted
        return passed(gpu(target), required)
    return failed(
        f"--kv-cache-dtype mxfp8 on {gpu(target)}",
        required,
        ["--kv-cache-dtype auto", "--kv-cache-dtype fp8_e4m3"],
    )


@rule(
    id="kv-mxfp8-page-size",
    title="An MXFP8 KV cache needs page size 128",
    engine="sglang",
    versions="sglang>=0.5.21",
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
    id="kv-prefill-only-backend",
    title="--prefill-only-disable-kv-cache needs fa3 or fa4 for prefill",
    engine="sglang",
    versions="sglang>=0.5.12",
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


@rule(
    id="kv-nvfp4-native-transfer",
    title="SM100's native NVFP4 on trtllm_mha cannot leave the GPU: no PD disaggregation, HiCache or LMCache",
    engine="sglang",
    versions="sglang>=0.5.21",
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


@rule(
    id="kv-nvfp4-rewrite",
    title="An NVFP4 KV cache silently moves decode (and prefill) to SGLang's NVFP4 backends",
    engine="sglang",
    versions="sglang>=0.5.21",
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


def _register_kv4(rule_id: str, title: str, kind: str, mla: bool) -> None:
    prevents, check = _kv4_rule(kind, mla)
    what = "with fa4 prefill, the decode backend" if kind == "fa4" else "the attention backend"
    rule(
        id=rule_id,
        title=title,
        engine="sglang",
        versions="sglang>=0.5.16",
        prevents=prevents,
        stage="startup",
        source=f"{KV_HOOK}, handle_kv4_compatibility",
        docs=f"""Checks, for an FP4 KV cache (nvfp4, fp4_mx_block16) and an {"MLA" if mla else "MHA"} model, that
{what} is one SGLang's KV4 list allows.

SGLang asserts these lists at start-up. FA4 reads FP4 KV only for prefill, so with prefill fa4 the decode
backend must be another one; fa4 for both phases is refused. The MLA lists of 0.5.16-0.5.19 also name
cutlass_mla; from 0.5.20 they are flashinfer and trtllm_mla. Before 0.5.16 the check covered fp4_e2m1 only.""",
        fix_title="Pick a backend from SGLang's KV4 list",
        generated=True,  # one check over the KV4 lists of the declarations
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
