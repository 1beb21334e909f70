"""TRT-LLM (MHA and MLA), CuTe DSL MLA, TokenSpeed MLA, FlashMLA and CUTLASS MLA: arch, KV dtype, page size and
MLA/MHA model rules.

SGLang's gates test the compute-capability major only (utils/common.py `_check_cuda_device_version`):
is_sm90 = 9, is_sm100 = 10 (SM103 included), is_sm120 = 12 (SM121 included), is_blackwell = 10, 11, 12 since
0.5.9 (10, 12 from 0.5.4.post3, 10 before). Page-size snaps are SGLang rewrites and reported as warnings, never as passes.
Read in the sglang wheels 0.5.0rc2 ... 0.5.23 (each rule's verified note names the releases); eras are taken from
the target's SGLang release.
"""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import declared, gpu, phases_using, sglang_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang.reasons import declared_words, kv_dtypes_text

ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"
TRTLLM_MHA_BACKEND = "sglang: python/sglang/srt/layers/attention/trtllm_mha_backend.py"
TRTLLM_MLA_BACKEND = "sglang: python/sglang/srt/layers/attention/trtllm_mla_backend.py"
# attention_hook.py: 0.5.19 also counts --enable-prefill-context-parallel as prefill CP; from 0.5.20 attn_cp_size only
CP_SIZE_ONLY_FROM = Version("0.5.20")
DCP_VERIFY_CHECK_FROM = Version("0.5.19")  # trtllm_mla_backend.py refuses q_len > 1 under DCP (verify, draft extend)


def _mla_fallback(target) -> str:
    """The MLA backend to suggest instead: trtllm_mla where is_blackwell admits it and its prefill kernels run
    (SM10x), fa3 on SM90, else triton (SGLang's own MLA default off SM90/SM100)."""
    if _trtllm_mla_runs(target):
        return "trtllm_mla"
    return "fa3" if target.major == 9 else "triton"


def _trtllm_mla_runs(target) -> bool:
    trtllm_mla = declared(target, "trtllm_mla")
    admitted = trtllm_mla.archs is None or target.major in trtllm_mla.archs
    return admitted and target.major in trtllm_mla.kernel_archs["prefill"]


# --- TRT-LLM MHA --------------------------------------------------------------------------------------------


TRTLLM_MHA_ARCH_TITLE = (
    "trtllm_mha runs on {trtllm_mha.archs} (prefill on {trtllm_mha.archs@prefill#0.5.18} before 0.5.19)"
)
TRTLLM_MHA_ARCH_DOCS = """Checks that the trtllm_mha backend (prefill or decode) runs on a GPU of {trtllm_mha.archs}, as the
target's SGLang release allows.

SGLang gates trtllm_mha on its platform probes (major only, torch CUDA >= 12.3 for SM90, >= 12.8 for
SM100/SM120), so other GPUs (SM8x, SM110 Jetson Thor) are refused at start-up. The history: sglang <= 0.5.9
admitted {trtllm_mha.archs#0.5.9} ("TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please
use a different backend."); 0.5.10-0.5.18 admitted {trtllm_mha.archs@decode#0.5.18} for decode and
{trtllm_mha.archs@prefill#0.5.18} for prefill ("TRTLLM MHA backend for prefill is only supported on Blackwell
GPUs (SM100). Please use a different prefill backend."); 0.5.19 and newer admit {trtllm_mha.archs} for both
phases (decode message: "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100)
and (SM120) GPUs. Please use a different decode backend.").

The fix moves each refused phase to SGLang's own MHA default of the arch: fa3 on SM90, flashinfer elsewhere."""


@rule(
    id="trtllm-mha-arch",
    title=TRTLLM_MHA_ARCH_TITLE,
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    backends=("trtllm_mha",),
    needs_gpu=True,
    stage="startup",
    prevents="TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. Please use a "
    "different prefill backend.",
    source=f"{ATTENTION_HOOK}, handle_attention_backend_compatibility",
    docs=TRTLLM_MHA_ARCH_DOCS,
    worded=lambda: declared_words(TRTLLM_MHA_ARCH_TITLE, TRTLLM_MHA_ARCH_DOCS),
    fix_title="Use --attention-backend fa3 (SM90), flashinfer or triton; or upgrade to sglang >= 0.5.19 on SM90/SM120",
)
def trtllm_mha_arch(cfg, target):
    phases = [p for p, b in (("prefill", cfg.prefill_backend), ("decode", cfg.decode_backend)) if b == "trtllm_mha"]
    release = sglang_release(target)
    trtllm_mha = declared(target, "trtllm_mha")
    refused = [p for p in phases if target.major not in trtllm_mha.archs_for(p)]
    need = " and ".join(f"{p}: SM{'/SM'.join(f'{m}x' for m in sorted(trtllm_mha.archs_for(p)))}" for p in phases)
    if not refused:
        return passed(f"trtllm_mha ({', '.join(phases)}) on {gpu(target)}", need)
    fix = "fa3" if target.major == 9 else "flashinfer"  # get_default_attn_backend's MHA pick (resolve.py)
    flags = (
        [f"--{p}-attention-backend {fix}" for p in refused]
        if len(phases) < 2 or len(refused) < 2
        else [f"--attention-backend {fix}"]
    )
    return failed(f"trtllm_mha ({', '.join(refused)}) on {gpu(target)} with sglang {release}", need, flags)


@rule(
    id="trtllm-mha-prefill-cp",
    title="Prefill context parallelism on trtllm_mha prefill needs SM100",
    engine="sglang",
    versions="sglang>=0.5.19",
    backends=("trtllm_mha",),
    needs_gpu=True,
    stage="startup",
    prevents="Prefill context parallelism with the TRTLLM MHA prefill backend requires SM100 (trtllm-gen context "
    "kernel): the SM90/SM120 fmha_v2 prefill path does not implement CP shard masking.",
    source=f"{ATTENTION_HOOK}, handle_attention_backend_compatibility",
    docs="""Checks that trtllm_mha prefill with attention context parallelism (`--attn-cp-size` > 1; in 0.5.19
also `--enable-prefill-context-parallel`) runs on SM100/SM103.

On SM90 and SM120 trtllm_mha prefill runs the fmha_v2 kernels, which cannot mask a context-parallel shard;
only SM100's trtllm-gen context kernel can, and SGLang refuses the rest at start-up.""",
    fix_title="Use --attn-cp-size 1, or another prefill backend (fa3 on SM90, flashinfer elsewhere)",
)
def trtllm_mha_prefill_cp(cfg, target):
    if cfg.prefill_backend != "trtllm_mha":
        return skipped("applies to prefill on trtllm_mha")
    cp_size = cfg.flags.get("attn_cp_size") or 1
    enabled = cfg.flags.get("enable_prefill_context_parallel") and sglang_release(target) < CP_SIZE_ONLY_FROM
    if cp_size <= 1 and not enabled:
        return skipped("applies to prefill context parallelism (--attn-cp-size > 1)")
    found = f"--attn-cp-size {cp_size}" if cp_size > 1 else "--enable-prefill-context-parallel"
    if target.major == 10:
        return passed(f"{found} on trtllm_mha prefill, {gpu(target)}", "SM100")
    other = "fa3" if target.major == 9 else "flashinfer"
    return failed(
        f"{found} on trtllm_mha prefill, {gpu(target)}",
        "SM100 for context-parallel trtllm_mha prefill",
        ["--attn-cp-size 1", f"--prefill-attention-backend {other}"],
    )


@rule(
    id="trtllm-mha-page128-gqa",
    title="trtllm_mha with page size 128 on SM100 needs GQA and equal K/V head dims",
    engine="sglang",
    versions="sglang>=0.5.17",
    backends=("trtllm_mha",),
    stage="init",
    prevents="trtllm_mha with page_size={page_size} requires trtllm-gen's dynamic tokens-per-page kernels, which only "
    "support GQA (q heads per kv head > 1, got {q}/{kv}) with equal QK/V head dims (got {d}/{dv}) and a "
    "power-of-2 page size. Use --page-size 64 instead.",
    source=f"{TRTLLM_MHA_BACKEND}, TRTLLMHAAttnBackend.__init__",
    docs="""Checks that trtllm_mha with `--page-size 128` on SM100 serves a GQA model (more than one query head
per KV head on each tensor-parallel rank) with equal Q/K and V head dims.

On SM100 trtllm-gen serves pages of 128 tokens only through its dynamic tokens-per-page kernels, which
exist for that shape only; SGLang checks it when the backend is built (after the weights have loaded),
rather than as a "Missing TRTLLM-GEN kernel" error during CUDA-graph capture. SM90/SM120 decode (XQA) has
native page-128 kernels and is not affected. Read in sglang 0.5.23; page 128 is accepted since 0.5.17.""",
    fix_title="Pass --page-size 64",
)
def trtllm_mha_page128_gqa(cfg, target):
    if cfg.page_size is None or cfg.page_size < 128:
        return skipped("applies to --page-size 128")
    if target.major is None:
        return unknown("compute capability unknown")
    if target.major != 10:
        return skipped(f"applies on SM100 (trtllm-gen); {gpu(target)} uses XQA")
    model = cfg.model
    if model is None or not model.num_attention_heads or not model.num_key_value_heads:
        return unknown("needs the model's head counts (give --model)")
    q = max(1, model.num_attention_heads // cfg.tp_size)
    kv = max(1, model.num_key_value_heads // cfg.tp_size)
    equal_dims = model.head_dim == model.v_head_dim
    if q // kv > 1 and equal_dims:
        return passed(
            f"{q}/{kv} query/KV heads per rank, head dims {model.head_dim}/{model.v_head_dim}",
            "GQA with equal head dims",
        )
    return failed(
        f"page size 128 with {q}/{kv} query/KV heads per rank and head dims {model.head_dim}/{model.v_head_dim}",
        "GQA (> 1 query head per KV head) and equal head dims",
        ["--page-size 64"],
    )


# --- TRT-LLM MLA ----------------------------------------------------------------------------------------------


@rule(
    id="trtllm-mla-sm100-prefill",
    title="trtllm_mla prefill runs FlashInfer's trtllm-gen FMHA, which has SM100/SM103 kernels only",
    engine="sglang",
    versions="sglang>=0.5.4.post3",
    backends=("trtllm_mla",),
    needs_gpu=True,
    stage="runtime",
    prevents="TllmGenFmhaRunner: Unsupported architecture",
    source="sglang: python/sglang/srt/layers/attention/trtllm_mla_backend.py, forward_extend; "
    "flashinfer-ai/flashinfer: include/flashinfer/trtllm/fmha/fmhaRunner.cuh, TllmGenFmhaRunner",
    references=(
        "https://github.com/sgl-project/sglang/issues/24633",
        "https://github.com/sgl-project/sglang/issues/17880",
    ),
    docs="""Checks that trtllm_mla serves prefill only on SM100/SM103 (B200, GB200, B300), although SGLang
admits it on every GPU its is_blackwell probe accepts (SM100, SM110, SM12x; trtllm-mla-arch).

For an extend without speculative decoding SGLang's DeepSeek attention takes the MHA path on trtllm_mla
(handle_attention_trtllm_mla: MHA_CHUNKED_KV), which calls FlashInfer's trtllm_ragged_attention_deepseek.
That kernel's runner (TllmGenFmhaRunner) has cubins for SM100/SM103 only and throws "Unsupported
architecture" elsewhere, so on an RTX 50xx / RTX PRO 6000 / GB10 (SM12x) or Jetson Thor (SM110) the server
starts and dies at its first prefill. SGLang itself defaults MLA models to triton on those GPUs
(get_default_attn_backend: fa3 on SM90, flashinfer on SM100, triton otherwise; DeepSeek's trtllm_mla
default is is_sm100 only).""",
    fix_title="Use --attention-backend triton (SGLang's MLA default on SM11x/SM12x)",
)
def trtllm_mla_sm100_prefill(cfg, target):
    if cfg.prefill_backend != "trtllm_mla":
        return skipped("applies to trtllm_mla prefill")
    trtllm_mla = declared(target, "trtllm_mla")
    if trtllm_mla.archs is not None and target.major not in trtllm_mla.archs:
        return skipped(f"SGLang refuses trtllm_mla on {gpu(target)} at start-up (trtllm-mla-arch)")
    kernels = trtllm_mla.kernel_archs["prefill"]
    need = "compute capability " + ", ".join(f"{m}.x" for m in sorted(kernels)) + " (trtllm-gen FMHA cubins)"
    if target.major in kernels:
        return passed(f"trtllm_mla prefill on {gpu(target)}", need)
    flag = "--prefill-attention-backend" if cfg.prefill_attention_backend else "--attention-backend"
    return failed(f"trtllm_mla prefill on {gpu(target)}", need, [f"{flag} {_mla_fallback(target)}"])


# --- CuTe DSL MLA and TokenSpeed MLA ------------------------------------------------------------------------


NOT_CUTEDSL = "applies to the cutedsl_mla backend (tokenspeed_mla is its own backend before sglang 0.5.23)"


def _renamed(target) -> bool:
    """Whether the target's SGLang treats tokenspeed_mla as an alias of cutedsl_mla (0.5.23 and newer)."""
    return declared(target, "tokenspeed_mla").alias_of == "cutedsl_mla"


def _cutedsl_phases(cfg, target) -> set[str]:
    """Where cutedsl_mla runs; sglang 0.5.23 renames tokenspeed_mla to it (serving_hook.handle_deprecated_args)."""
    names = {"cutedsl_mla"} | ({"tokenspeed_mla"} if _renamed(target) else set())
    return {p for p, b in (("prefill", cfg.prefill_backend), ("decode", cfg.decode_backend)) if b in names}


@rule(
    id="cutedsl-mla-decode-only",
    title="cutedsl_mla is decode-only",
    engine="sglang",
    versions="sglang>=0.5.13",
    backends=("cutedsl_mla", "tokenspeed_mla"),
    stage="startup",
    prevents="CuteDSL MLA only supports decoding for now",
    source=f"{OVERRIDES}, _cutedsl_prefill_backend_fill",
    docs="""Checks that cutedsl_mla is not the prefill backend (an explicit `--prefill-attention-backend cutedsl_mla`).

SGLang's CuTe DSL MLA backend implements decode only and asserts against it for prefill. With
`--attention-backend cutedsl_mla` SGLang fills prefill with trtllm_mla itself.""",
    fix_title="Use --prefill-attention-backend trtllm_mla --decode-attention-backend cutedsl_mla",
)
def cutedsl_mla_decode_only(cfg, target):
    phases = _cutedsl_phases(cfg, target)
    if not phases:
        return skipped(NOT_CUTEDSL)
    explicit_prefill = cfg.prefill_attention_backend in ("cutedsl_mla", "tokenspeed_mla") and "prefill" in phases
    if not explicit_prefill or "prefill" in declared(target, "cutedsl_mla").phases:
        return passed("cutedsl_mla for decode (prefill: trtllm_mla or as given)", "cutedsl_mla for decode only")
    return failed(
        "--prefill-attention-backend cutedsl_mla",
        "cutedsl_mla for decode only",
        ["--prefill-attention-backend trtllm_mla"],
    )


def _tokenspeed(cfg) -> bool:
    return "tokenspeed_mla" in (cfg.attention_backend, cfg.decode_backend)


TOKENSPEED_KV_TITLE = "tokenspeed_mla's KV cache: {tokenspeed_mla.kv_dtypes}"
TOKENSPEED_KV_FIX = (
    "Pass a --kv-cache-dtype it declares ({tokenspeed_mla.kv_dtypes}; on 0.5.23: --attention-backend cutedsl_mla)"
)
TOKENSPEED_KV_DOCS = """Checks that tokenspeed_mla is used with a `--kv-cache-dtype` it declares: {tokenspeed_mla.kv_dtypes}.

sglang 0.5.12-0.5.22 refuse any other KV dtype at start-up ({tokenspeed_mla.kv_dtypes#0.5.22} there). sglang
0.5.23 renames tokenspeed_mla to cutedsl_mla and silently sets the KV dtype to fp8_e4m3 ("tokenspeed_mla
required FP8 KV; setting --kv-cache-dtype=fp8_e4m3."): reported as a warning there."""


@rule(
    id="tokenspeed-mla-kv-dtype",
    title=TOKENSPEED_KV_TITLE,
    engine="sglang",
    versions="sglang>=0.5.12",
    stage="startup",
    prevents="tokenspeed_mla backend requires kv-cache-dtype=fp8_e4m3, got {kv_cache_dtype}.",
    source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks (0.5.12-0.5.22); serving_hook.py handle_deprecated_args (0.5.23)",
    docs=TOKENSPEED_KV_DOCS,
    worded=lambda: declared_words(TOKENSPEED_KV_TITLE, TOKENSPEED_KV_DOCS, TOKENSPEED_KV_FIX),
    fix_title=TOKENSPEED_KV_FIX,
)
def tokenspeed_mla_kv_dtype(cfg, target):
    if not _tokenspeed(cfg):
        return skipped("applies to the tokenspeed_mla backend")
    tokenspeed = declared(target, "tokenspeed_mla")
    required = kv_dtypes_text(tokenspeed.kv_dtypes)
    if cfg.kv_cache_dtype in tokenspeed.kv_dtypes:
        return passed(f"--kv-cache-dtype {cfg.kv_cache_dtype}", required)
    first = next(iter(tokenspeed.kv_dtypes))  # the one SGLang names in its message and sets in 0.5.23
    kv_fix = f"--kv-cache-dtype {first}"
    if tokenspeed.alias_of:  # 0.5.23: serving_hook.handle_deprecated_args renames it and sets the KV dtype
        return warned(
            f"--kv-cache-dtype {cfg.kv_cache_dtype} with tokenspeed_mla, which sglang {sglang_release(target)} "
            f"rewrites to {tokenspeed.alias_of} with {first}",
            required,
            [f"--attention-backend {tokenspeed.alias_of}", kv_fix],
        )
    return failed(f"--kv-cache-dtype {cfg.kv_cache_dtype} on tokenspeed_mla", required, [kv_fix])


# --- decode context parallelism (--dcp-size > 1) on the MLA decode kernels ----------------------------------


def _dcp_size(cfg) -> int:
    return cfg.flags.get("dcp_size") or 1


@rule(
    id="trtllm-mla-dcp-speculative",
    title="trtllm_mla cannot serve speculative decoding under decode context parallelism",
    engine="sglang",
    versions="sglang>=0.5.17",
    backends=("trtllm_mla",),
    stage="init",
    prevents="trtllm_mla cannot serve decode context parallelism with speculative decoding: it does not forward the "
    "cyclic DCP metadata to its decode kernel and returns no rank-local LSE for the cross-rank merge. Select "
    "cutedsl_mla.",
    source=f"{REGISTRY}, create_trtllm_mla_backend; {TRTLLM_MLA_BACKEND}, _run_decode_kernel",
    docs="""Checks that speculative decoding with decode context parallelism (`--dcp-size` > 1) does not run
trtllm_mla where a draft is verified: as the decode backend SGLang refuses it when the backend is built;
as the prefill backend under `--speculative-attention-mode prefill` (the default, which verifies the
draft on the prefill backend) the first target verify fails ("trtllm_mla cannot forward a global
causal bound to its decode kernel, which is required for DCP with q_len > 1 ...", from 0.5.19).

Under DCP each rank holds a shard of the KV cache and the ranks merge their partial results by LSE;
trtllm_mla's kernel takes neither the cyclic DCP metadata nor returns the rank-local LSE for more than
one query token. cutedsl_mla implements both.""",
    fix_title="Use --decode-attention-backend cutedsl_mla --speculative-attention-mode decode (SM100)",
)
def trtllm_mla_dcp_speculative(cfg, target):
    if _dcp_size(cfg) <= 1 or not cfg.speculative_algorithm:
        return skipped("applies to speculative decoding with --dcp-size > 1")
    mode = cfg.flags.get("speculative_attention_mode", "prefill")
    verifies_on_prefill = cfg.prefill_backend == "trtllm_mla" and mode != "decode"
    runtime_check = sglang_release(target) >= DCP_VERIFY_CHECK_FROM
    required = "cutedsl_mla decode, verifying on it (--speculative-attention-mode decode)"
    if cfg.decode_backend != "trtllm_mla" and not (verifies_on_prefill and runtime_check):
        return passed(f"decode {cfg.decode_backend}, --speculative-attention-mode {mode} under DCP", required)
    fix = [] if cfg.decode_backend != "trtllm_mla" else ["--decode-attention-backend cutedsl_mla"]
    if verifies_on_prefill:
        fix.append("--speculative-attention-mode decode")
    found = f"{phases_using(cfg, 'trtllm_mla')} with --dcp-size {_dcp_size(cfg)} and speculative decoding"
    if verifies_on_prefill:
        found += f" (--speculative-attention-mode {mode} verifies on trtllm_mla)"
    return failed(found, required, [" ".join(fix)])
