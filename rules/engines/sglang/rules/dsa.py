"""SGLang's DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5, ...) and DeepSeek-V4: the KV dtypes and DSA
sub-backends (`--dsa-prefill-backend` / `--dsa-decode-backend`) each accepts, per release.

The facts are rules/knowledge/dsa.py; a model is DSA when its architecture takes SGLang's DSA path in the
target's release and its config has `index_topk` (ModelFeatures.dsa).
"""

from __future__ import annotations

from attn_preflight.rules.checks.common import choice_check, gpu, sglang_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang.resolve import (
    dsa_model,
    eagle_topk,
    effective_page_size,
    hisparse_model,
)
from attn_preflight.rules.knowledge import dsa as kb

SKIP_NOT_DSA = "applies to DeepSeek sparse attention models (DeepSeek-V3.2, GLM-5: index_topk)"


def _dsa_backends(cfg) -> dict[str, str]:
    """The DSA sub-backends named, by flag."""
    named = {phase: cfg.flags.get(f"dsa_{phase}_backend") for phase in ("prefill", "decode")}
    return {f"--dsa-{phase}-backend": value for phase, value in named.items() if isinstance(value, str)}


@rule(
    id="dsa-backend-choice",
    title="Each DSA sub-backend named is a choice of the engine's release",
    engine="sglang",
    versions="sglang>=0.5.13",
    stage="parse",
    prevents="argument --dsa-prefill-backend: invalid choice: 'triton' (choose from ...); the same error for "
    "--dsa-decode-backend",
    source=f"{choices_kb.SOURCE}; CPython Lib/argparse.py _check_value",
    docs="""Checks each backend of --dsa-prefill-backend and --dsa-decode-backend against the choices of the
target's SGLang release.

The DSA sub-backends grew release by release (flashinfer_sparse_mla and triton are not choices in 0.5.16,
flashmla_sparse_q8 not in 0.5.13), and argparse refuses a launch line written for a newer release before
anything loads.""",
    fix_title="Use a DSA backend that release lists",
)
def dsa_backend_choice(cfg, target):
    named = _dsa_backends(cfg)
    if not named:
        return skipped("no DSA backend named")
    check = choice_check(target, named)
    required = f"a DSA backend sglang {check.release} lists{check.said}"
    if not check.refused:
        return passed(", ".join(f"{flag} {value}" for flag, value in named.items()), required)
    return failed(
        "; ".join(f"{r.flag} {r.value} is not a choice of sglang {check.release}" for r in check.refused),
        required,
        [f"{r.flag} {choice}" for r in check.refused for choice in r.closest],
    )


def _dsa_kv(cfg, target):
    """The KV dtype the DSA path runs (auto: fp8_e4m3 on SM100+ without learnable sinks, else bfloat16); None
    when auto and the compute capability is unknown."""
    kv = {"bf16": "bfloat16"}.get(cfg.kv_cache_dtype, cfg.kv_cache_dtype)
    if kv != "auto":
        return kv
    if target.major is None:
        return None
    return "fp8_e4m3" if target.major >= 10 and not cfg.model.learnable_sink else "bfloat16"


@rule(
    id="dsa-tilelang-cuda-fp8-kv",
    title="TileLang DSA on CUDA needs a bfloat16 KV cache (sglang 0.5.17-0.5.21)",
    engine="sglang",
    versions="sglang>=0.5.17,<0.5.22",
    needs_model=True,
    stage="startup",
    prevents="The tilelang DSA prefill/decode kernels only support an fp8_e4m3 KV cache on ROCm/HIP; on CUDA they "
    "require a bfloat16 KV cache.",
    source=f"{kb.OVERRIDES}, _check_tilelang_dsa_fp8_kv (_check_dsa_backend_constraints from 0.5.20), called by "
    "_dsa_split_backend_resolution",
    docs="""Checks a DSA model whose `--dsa-prefill-backend` or `--dsa-decode-backend` is tilelang, in sglang
0.5.17 to 0.5.21: the KV cache must be bfloat16 (given, or auto below SM100).

In those releases TileLang's fp8 KV path is ROCm-only (the CUDA kernel hardcodes bfloat16), and SGLang refuses
tilelang with an fp8_e4m3 KV cache at start-up instead of crashing at decode CUDA-graph capture. Through 0.5.19
the check is skipped with `--enable-hisparse` (its branch returns first); 0.5.20 and 0.5.21 check it there
too. From 0.5.22 CUDA TileLang has an FP8 KV layout (dsa-tilelang-fp8-kv).""",
    fix_title="Use --kv-cache-dtype bfloat16 with tilelang, or an fp8-capable DSA backend",
)
def dsa_tilelang_cuda_fp8_kv(cfg, target):
    named = _dsa_backends(cfg)
    if kb.TILELANG_DSA_BACKEND not in named.values():
        return skipped("applies to the tilelang DSA backend")
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    if cfg.flags.get("enable_hisparse") and sglang_release(target) < kb.TILELANG_CUDA_FP8_HISPARSE_CHECKED_FROM:
        return skipped("with --enable-hisparse, SGLang before 0.5.20 does not check it")
    kv = _dsa_kv(cfg, target)
    if kv is None:
        return unknown("compute capability unknown: SGLang resolves auto by it")
    required = "a bfloat16 KV cache with tilelang on CUDA"
    if kv != "fp8_e4m3":
        return passed(f"tilelang with a {kv} KV cache", required)
    others = "flashmla_kv" if (target.major or 0) < 10 else "trtllm"
    return failed(
        f"tilelang with an fp8_e4m3 KV cache{' (auto on ' + gpu(target) + ')' if cfg.kv_cache_dtype == 'auto' else ''}",
        required,
        ["--kv-cache-dtype bfloat16"] + [f"{flag} {others}" for flag, value in named.items() if value == "tilelang"],
    )


@rule(
    id="dsa-tilelang-fp8-kv",
    title="TileLang DSA with an FP8 KV cache: both phases, no decode CP, SM89+, no HiSparse",
    engine="sglang",
    versions="sglang>=0.5.22",
    needs_model=True,
    stage="startup",
    prevents="CUDA TileLang FP8 KV requires both DSA backends to be tilelang; raw and scaled FP8 KV layouts cannot "
    "be mixed.",
    source=f"{kb.OVERRIDES}, _check_dsa_backend_constraints, _dsa_split_backend_resolution (HiSparse arm)",
    docs="""Checks a DSA model whose `--dsa-prefill-backend` or `--dsa-decode-backend` is tilelang with an
fp8_e4m3 KV cache (given, or auto on SM100+): tilelang must serve both phases, `--dcp-size` must be 1, the
GPU SM89 or newer, and `--enable-hisparse` off.

TileLang's CUDA FP8 KV pool uses a raw FP8 layout the other DSA backends (scaled FP8) cannot read, and its
kernels need SM89's FP8; SGLang refuses each of these at start-up ("CUDA TileLang FP8 KV does not support
--dcp-size > 1.", "... requires SM89 or newer.", "... does not support HiSparse.").""",
    fix_title="Name tilelang for both DSA phases, or use a bfloat16 KV cache",
)
def dsa_tilelang_fp8_kv(cfg, target):
    named = _dsa_backends(cfg)
    if kb.TILELANG_DSA_BACKEND not in named.values():
        return skipped("applies to the tilelang DSA backend")
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    kv = _dsa_kv(cfg, target)
    if kv is None:
        return unknown("compute capability unknown: SGLang resolves auto by it")
    if kv != "fp8_e4m3":
        return passed(f"tilelang with a {kv} KV cache", "no FP8 KV constraint")
    problems, fix = [], []
    others = [flag for flag in ("--dsa-prefill-backend", "--dsa-decode-backend") if named.get(flag) != "tilelang"]
    if others:
        problems.append(" and ".join(others) + " not tilelang")
        fix += [f"{flag} tilelang" for flag in others]
    dcp = cfg.flags.get("dcp_size")
    if isinstance(dcp, int) and dcp > 1:
        problems.append(f"--dcp-size {dcp}")
        fix.append("--dcp-size 1")
    if target.cc is not None and target.cc < kb.TILELANG_FP8_MIN_CC:
        problems.append(f"{gpu(target)} below SM89")
    if cfg.flags.get("enable_hisparse"):
        problems.append("--enable-hisparse")
    required = "tilelang for both phases, --dcp-size 1, SM89+, no HiSparse"
    if not problems:
        return passed("tilelang for both DSA phases with an fp8_e4m3 KV cache", required)
    return failed(
        f"tilelang with an fp8_e4m3 KV cache: {', '.join(problems)}", required, fix or ["--kv-cache-dtype bfloat16"]
    )


@rule(
    id="dsa-hisparse",
    title="HiSparse needs a bfloat16 or fp8_e4m3 KV cache and a DSA backend it supports for that dtype",
    engine="sglang",
    versions="sglang>=0.5.18",
    needs_model=True,
    stage="startup",
    prevents="HiSparse requires one of ('bfloat16', 'fp8_e4m3') KV cache dtypes, but got "
    "--kv-cache-dtype={kv_cache_dtype}. Please use --kv-cache-dtype=bfloat16 or --kv-cache-dtype=fp8_e4m3.",
    source=f"{kb.HISPARSE_HOOK}, validate_hisparse_kv_cache_dtype, validate_hisparse_dsa_backend (run at launch by "
    "check_server_args, after resolution: arg_groups/validation_hook.py:312 in 0.5.23, :203 in 0.5.20, "
    "server_args.py:9278 in 0.5.18)",
    docs="""Checks, with `--enable-hisparse` on a DSA model, that the KV cache is bfloat16 or fp8_e4m3 and that a
named DSA backend is one HiSparse supports for it on CUDA: flashmla_sparse for bfloat16; flashmla_kv or
flashinfer_sparse_mla for fp8_e4m3.

SGLang checks both after it resolves the DSA KV dtype (auto: fp8_e4m3 on SM100+, bfloat16 below) and
refuses the launch ("HiSparse supports DSA {label} backend(s) [...] on this platform with
--kv-cache-dtype=..., but got --dsa-{label}-backend=...").""",
    fix_title="Pass --kv-cache-dtype bfloat16 or fp8_e4m3, and a DSA backend HiSparse takes for it (or drop it)",
)
def dsa_hisparse(cfg, target):
    if not cfg.flags.get("enable_hisparse"):
        return skipped("applies to --enable-hisparse")
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    kv = _dsa_kv(cfg, target)
    if kv is None:
        return unknown("compute capability unknown: SGLang resolves auto by it")
    if kv not in kb.HISPARSE_KV_DTYPES:
        return failed(
            f"--enable-hisparse with --kv-cache-dtype {cfg.kv_cache_dtype}",
            "bfloat16 or fp8_e4m3",
            ["--kv-cache-dtype fp8_e4m3", "--kv-cache-dtype bfloat16"],
        )
    allowed = kb.HISPARSE_CUDA_BACKENDS[kv]
    wrong = {flag: value for flag, value in _dsa_backends(cfg).items() if value not in allowed}
    required = f"DSA backends {', '.join(sorted(allowed))} for a {kv} KV cache"
    if not wrong:
        return passed(f"--enable-hisparse with a {kv} KV cache", required)
    return failed(
        ", ".join(f"{flag} {value}" for flag, value in wrong.items()) + f" with --enable-hisparse and a {kv} KV cache",
        required,
        [f"{flag} {sorted(allowed)[0]}" for flag in wrong],
    )


@rule(
    id="dsa-hisparse-serving",
    title="HiSparse serves DSA, DeepSeek-V4 and MiniMax-M3 models, without mixed chunks, with linear, static "
    "speculation",
    engine="sglang",
    versions="sglang>=0.5.10",
    needs_model=True,
    stage="startup",
    prevents="--enable-hisparse is only supported for DSA (DeepSeek Sparse Attention) models ... (the models "
    "listed grow by release); --enable-hisparse does not support --enable-mixed-chunk yet.; The "
    "minimal HiSparse spec integration supports linear speculation only; use --speculative-eagle-topk 1.; HiSparse "
    "speculative decoding uses statically sized swap state; --speculative-adaptive is not supported.",
    source=f"{kb.HISPARSE_HOOK}, validate_hisparse, validate_hisparse_feature_combos",
    docs="""Checks `--enable-hisparse`: the model is one HiSparse serves in the target's release (DSA models:
DeepSeek-V3.2, GLM-5; DeepSeek-V4 from 0.5.12; MiniMax-M3 from 0.5.21), and from 0.5.22 there is no
`--enable-mixed-chunk`, a speculative draft is a linear chain (top-k 1, as SGLang resolves it) and not
`--speculative-adaptive`.

HiSparse keeps most of the KV cache in host memory and swaps the top-k selected pages in per decode step;
only these models' sparse indexers choose those pages, a mixed prefill-decode batch cannot merge its decode
batch, and its speculative swap state is sized once for a linear draft. SGLang refuses each at start-up.
(Its ROCm DeepSeek-V4 unified-KV refusal is not judged: a ROCm path.)""",
    fix_title="Serve a model HiSparse supports; drop --enable-mixed-chunk / --speculative-adaptive; use "
    "--speculative-eagle-topk 1",
)
def dsa_hisparse_serving(cfg, target):
    if not cfg.flags.get("enable_hisparse"):
        return skipped("applies to --enable-hisparse")
    release = sglang_release(target)
    required = f"a model HiSparse serves in sglang {release}, no mixed chunks, a linear static draft"
    if not hisparse_model(cfg, target):
        return failed(
            f"--enable-hisparse on {cfg.model.name} ({cfg.model.architecture or 'no architecture'})", required
        )
    if release < kb.HISPARSE_FEATURE_CHECKS_FROM:
        return passed(f"--enable-hisparse on {cfg.model.name}", required)
    refused, fix = [], []
    if cfg.flags.get("enable_mixed_chunk"):
        refused.append("--enable-mixed-chunk")
    if (cfg.speculative_algorithm or "NONE").upper() != "NONE":
        topk = eagle_topk(cfg)
        if topk != 1:
            refused.append(f"speculative top-k {topk}")
            fix.append("--speculative-eagle-topk 1")
        if cfg.flags.get("speculative_adaptive"):
            refused.append("--speculative-adaptive")
    if refused:
        return failed(f"--enable-hisparse with {', '.join(refused)}", required, fix)
    return passed(f"--enable-hisparse on {cfg.model.name}", required)


@rule(
    id="dsv4-backend-override",
    title="SGLang runs DeepSeek-V4 on the dsv4 backend at page 256, whatever --attention-backend and --page-size say",
    engine="sglang",
    versions="sglang>=0.5.12",
    needs_model=True,
    stage="startup",
    reason="SGLang replaces the flag with only an info line ('Use dsv4 attention backend for DeepseekV4ForCausalLM, "
    "setting page_size to 256.'): the launch line names a backend or page size that does not run.",
    source=kb.DSV4_OVERRIDE_SOURCE,
    docs="""Warns when a DeepSeek-V4 launch (DeepseekV4ForCausalLM) names an `--attention-backend` other than dsv4 or a
`--page-size` other than 256: SGLang's DeepSeek-V4 override replaces both on CUDA.

DeepSeek-V4's compressed sparse attention (a 128-token sliding window plus 4x and 128x compressed KV with an
indexer) is served by SGLang's dsv4 backend only, whose KV pools are laid out in 256-token pages; the model
override declares both and a declaration wins over the flag. The rest of the config is judged on dsv4 at page 256,
what runs. `--prefill-attention-backend` and `--decode-attention-backend` are kept, and equal ones replace dsv4
as for any model. Which kernels dsv4 uses is `--dsv4-attn-backend` (dsv4-attn-backend).""",
    fix_title="Drop --attention-backend / --page-size (or pass dsv4 and 256)",
)
def dsv4_backend_override(cfg, target):
    if cfg.model.architecture != kb.DSV4_ARCHITECTURE:
        return skipped("applies to DeepSeek-V4 (DeepseekV4ForCausalLM)")
    if sglang_release(target) < kb.DSV4_FROM:
        return skipped(f"sglang {sglang_release(target)} has no DeepSeek-V4 override")
    required = f"--attention-backend {kb.DSV4_BACKEND} at page size {kb.DSV4_PAGE_SIZE} (or neither flag)"
    replaced = [
        (f"--{field.replace('_', '-')}", cfg.rewrites[field], value)
        for field, value in (("attention_backend", cfg.attention_backend), ("page_size", cfg.page_size))
        if field in cfg.rewrites
    ]
    if not replaced:
        return passed(f"{cfg.backend_label()} at page size {cfg.page_size}", required)
    return warned(
        "; ".join(f"{flag} {asked} (SGLang runs {runs} instead)" for flag, asked, runs in replaced),
        required,
        [" ".join(f"{flag} {runs}" for flag, _, runs in replaced)],
    )


def _dsa_sub_backends(cfg, target, kv: str) -> tuple[str, str]:
    """The (prefill, decode) DSA sub-backends SGLang 0.5.23 runs on CUDA: each named one, else its default."""
    major = target.major or 0
    if cfg.model.learnable_sink:
        default = (kb.SINK_DSA_BACKEND, kb.SINK_DSA_BACKEND)
    elif cfg.model.architecture == kb.GLM_DSA_ARCHITECTURE and major == 12 and kv == "fp8_e4m3":
        default = (kb.GLM_SM12_FP8_DSA_BACKEND, kb.GLM_SM12_FP8_DSA_BACKEND)
    elif kv == "fp8_e4m3":
        default = ("trtllm", "trtllm") if major >= 10 else ("flashmla_kv", "flashmla_kv")
    else:
        default = ("flashmla_sparse", "trtllm" if major >= 10 else "fa3")
    prefill = cfg.flags.get("dsa_prefill_backend") or default[0]
    return prefill, cfg.flags.get("dsa_decode_backend") or default[1]


def _dsa_cp_size(cfg) -> int:
    """Prefill CP ranks of a DSA model with --enable-prefill-cp: --attn-cp-size when interleaved and above 1, else
    the TP ranks per attention-DP group (model_overrides/deepseek_v2.py:129-134 in 0.5.23)."""
    given = cfg.flags.get("attn_cp_size") or 1
    if cfg.flags.get("cp_strategy") == kb.KV_SHARD_DSA_CP_STRATEGY and given > 1:
        return given
    return cfg.tp_size // max(cfg.flags.get("attn_dp_size") or 1, 1)


@rule(
    id="kv-sharding-dsa",
    title="KV sharding of a DSA model: the dsa backend, interleaved prefill CP, TRTLLM DSA with FP8 KV, Mooncake",
    engine="sglang",
    versions="sglang>=0.5.23",
    needs_model=True,
    stage="startup",
    prevents="DSA KV sharding requires CUDA interleave prefill CP > 1 and PP1.; DSA KV sharding requires TRTLLM "
    "prefill/decode with fp8_e4m3 KV and page size 64.; DSA KV sharding requires Mooncake, uncompressed "
    "index_kpool=1 and no DSA cache layer splitting.; DSA KV sharding requires the dsa attention backend.",
    source="sglang: python/sglang/srt/arg_groups/kv_shard_hook.py, validate_kv_shard_attention_backend",
    docs="""Checks `--enable-kv-cache-sharding` on a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5): prefill
runs the dsa backend; `--enable-prefill-cp` with `--cp-strategy interleave` over more than one rank and
`--pp-size` 1; trtllm for both DSA phases (named, or SGLang's default with fp8_e4m3 on SM100+), an fp8_e4m3
KV cache (given, or auto on SM100+) at page 64; `--disaggregation-transfer-backend mooncake` (the default),
no `--enable-dsa-cache-layer-split`, and a checkpoint whose indexer pools one key (`index_kpool` 1 or
absent, `index_kpool_compress` off).

Only TRTLLM's sparse MLA reads a rank's stripe of the DSA KV and indexer caches, through Mooncake's all-rank
transfer; SGLang refuses the rest at start-up.""",
    fix_title="Use --enable-prefill-cp --cp-strategy interleave with --dsa-prefill-backend / --dsa-decode-backend "
    "trtllm and --kv-cache-dtype fp8_e4m3 on Blackwell",
)
def kv_sharding_dsa(cfg, target):
    if not cfg.flags.get("enable_kv_cache_sharding"):
        return skipped("applies to --enable-kv-cache-sharding")
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    if cfg.prefill_backend is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    if cfg.prefill_backend != "dsa":
        return failed(
            f"KV sharding of {cfg.model.name} with prefill {cfg.prefill_backend}",
            "the dsa prefill backend",
            ["--attention-backend dsa"],
        )
    kv = _dsa_kv(cfg, target)
    if kv is None:
        return unknown("compute capability unknown: SGLang resolves auto by it")
    required = (
        f"interleaved prefill CP > 1 on PP 1, DSA {kb.KV_SHARD_DSA_BACKEND} for both phases, {kb.KV_SHARD_DSA_KV} "
        f"KV at page {kb.DSA_PAGE_SIZE}, {kb.KV_SHARD_DSA_TRANSFER}, index_kpool 1, no DSA cache layer split"
    )
    strategy = cfg.flags.get("cp_strategy")
    cp = _dsa_cp_size(cfg) if cfg.flags.get("enable_prefill_cp") else 1
    if cp <= 1 or strategy != kb.KV_SHARD_DSA_CP_STRATEGY or cfg.pp_size != 1:
        found = f"prefill CP {cp} ({strategy or 'no strategy'}), PP {cfg.pp_size}"
        fix = [f"--enable-prefill-cp --cp-strategy {kb.KV_SHARD_DSA_CP_STRATEGY}"] if cfg.pp_size == 1 else []
        return failed(f"DSA KV sharding with {found}", required, fix)
    phases = _dsa_sub_backends(cfg, target, kv)
    page = effective_page_size(cfg, target)
    if set(phases) != {kb.KV_SHARD_DSA_BACKEND} or kv != kb.KV_SHARD_DSA_KV or page != kb.DSA_PAGE_SIZE:
        return failed(
            f"DSA KV sharding with DSA prefill {phases[0]}, decode {phases[1]}, {kv} KV, page {page}",
            required,
            [
                f"--dsa-prefill-backend {kb.KV_SHARD_DSA_BACKEND} --dsa-decode-backend {kb.KV_SHARD_DSA_BACKEND} "
                f"--kv-cache-dtype {kb.KV_SHARD_DSA_KV}"
            ],
        )
    transfer = cfg.flags.get("disaggregation_transfer_backend") or kb.KV_SHARD_DSA_TRANSFER
    if transfer != kb.KV_SHARD_DSA_TRANSFER:
        return failed(
            f"DSA KV sharding over {transfer}",
            required,
            [f"--disaggregation-transfer-backend {kb.KV_SHARD_DSA_TRANSFER}"],
        )
    if cfg.flags.get("enable_dsa_cache_layer_split"):
        return failed("DSA KV sharding with --enable-dsa-cache-layer-split", required)
    if (cfg.model.index_kpool or 1) != 1 or cfg.model.index_kpool_compress:
        compressed = ", compressed" if cfg.model.index_kpool_compress else ""
        return failed(
            f"DSA KV sharding of {cfg.model.name} (index_kpool {cfg.model.index_kpool or 1}{compressed})", required
        )
    return passed(f"DSA KV sharding with interleaved prefill CP {cp}, TRTLLM DSA, {kv} KV", required)
