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
    dsa_checkpoint,
    dsa_model,
    eagle_topk,
    effective_page_size,
    prefill_cp,
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
    verified=(
        "sglang 0.5.13-0.5.23: the --dsa-prefill-backend / --dsa-decode-backend choices of every final release and "
        ".postN wheel read by bench/sglang_choices.py into rules/engines/sglang/choices.json (the flags are "
        "--nsa-* before 0.5.13); bench/oracle_diff.py --space dsa on 0.5.16: each triton or flashinfer_sparse_mla "
        "refused by argparse"
    ),
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


@rule(
    id="dsa-kv-cache-dtype",
    title="A DeepSeek sparse attention model needs a bfloat16 or fp8_e4m3 KV cache",
    engine="sglang",
    versions="sglang>=0.5.4.post3",
    verified=(
        "sglang 0.5.4.post3-0.5.23: the same auto/bf16 handling and assert in every release read (server_args.py "
        ":1077-1080 in 0.5.4.post3 as 'DeepSeek NSA only supports ...', :1440-1443 in 0.5.10, arg_groups/"
        "overrides.py:637-640 in 0.5.19, :612-615 in 0.5.20, :541-544 in 0.5.23); bench/release_walk.py greps the "
        "message in each wheel from 0.5.4.post3"
    ),
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
)
def dsa_kv_cache_dtype(cfg, target):
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    required = "one of " + ", ".join(kb.DSA_KV_DTYPES)
    if cfg.kv_cache_dtype in kb.DSA_KV_DTYPES:
        return passed(f"--kv-cache-dtype {cfg.kv_cache_dtype}", required)
    return failed(
        f"--kv-cache-dtype {cfg.kv_cache_dtype} for a DSA model",
        required,
        ["--kv-cache-dtype fp8_e4m3", "--kv-cache-dtype bfloat16"],
    )


@rule(
    id="dsa-learnable-sink-kv",
    title="DSA learnable attention sinks need a bfloat16 KV cache",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: with hf_config.learnable_sink the same raise for a kv_cache_dtype not in auto/bf16/"
        "bfloat16, the block identical in every wheel (arg_groups/overrides.py:600 in 0.5.20, :503 in 0.5.21, :505 "
        "in 0.5.22, :529 in 0.5.23); 0.5.19 has no learnable-sink check"
    ),
    needs_model=True,
    stage="startup",
    prevents="Learnable DSA attention sinks require a bfloat16 KV cache; got kv_cache_dtype={kv_cache_dtype}.",
    source=f"{kb.OVERRIDES}, _dsa_kv_cache_dtype_default",
    docs="""Checks that a DSA model with learnable attention sinks (config.json `learnable_sink`) is given a
bfloat16 KV cache (auto, bf16 or bfloat16).

SGLang's DSA path keeps sinks only in the bfloat16 pool: an fp8_e4m3 KV cache is refused at start-up, and
auto resolves to bfloat16 for such a model on every GPU.""",
    fix_title="Pass --kv-cache-dtype bfloat16 (or leave it auto)",
)
def dsa_learnable_sink_kv(cfg, target):
    if not dsa_model(cfg, target) or not cfg.model.learnable_sink:
        return skipped("applies to DSA models with learnable attention sinks (learnable_sink)")
    required = "one of " + ", ".join(kb.SINK_KV_DTYPES)
    if cfg.kv_cache_dtype in kb.SINK_KV_DTYPES:
        return passed(f"--kv-cache-dtype {cfg.kv_cache_dtype}", required)
    return failed(
        f"--kv-cache-dtype {cfg.kv_cache_dtype} with learnable DSA sinks", required, ["--kv-cache-dtype bfloat16"]
    )


@rule(
    id="dsa-learnable-sink-backend",
    title="DSA learnable attention sinks need flashmla_sparse for both DSA phases",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: with hf_config.learnable_sink, a --dsa-prefill-backend or --dsa-decode-backend set to "
        "anything but flashmla_sparse raises, the block identical in every wheel (arg_groups/overrides.py:718 in "
        "0.5.20, :622 in 0.5.21, :627 in 0.5.22, :651 in 0.5.23); 0.5.19 has no learnable-sink check"
    ),
    needs_model=True,
    stage="startup",
    prevents="{model_arch} uses learnable attention sinks and requires {option} 'flashmla_sparse'; got {value!r}",
    source=f"{kb.OVERRIDES}, _dsa_split_backend_resolution",
    docs="""Checks that `--dsa-prefill-backend` and `--dsa-decode-backend`, when given for a DSA model with
learnable attention sinks, are flashmla_sparse.

Only FlashMLA's sparse kernels take the sinks; SGLang sets flashmla_sparse for a phase left unset and
refuses any other named backend at start-up.""",
    fix_title="Pass --dsa-prefill-backend flashmla_sparse --dsa-decode-backend flashmla_sparse (or drop them)",
)
def dsa_learnable_sink_backend(cfg, target):
    if not dsa_model(cfg, target) or not cfg.model.learnable_sink:
        return skipped("applies to DSA models with learnable attention sinks (learnable_sink)")
    named = _dsa_backends(cfg)
    wrong = {flag: value for flag, value in named.items() if value != kb.SINK_DSA_BACKEND}
    if not wrong:
        return passed(", ".join(f"{f} {v}" for f, v in named.items()) or "no DSA backend named", kb.SINK_DSA_BACKEND)
    return failed(
        ", ".join(f"{flag} {value}" for flag, value in wrong.items()) + " with learnable DSA sinks",
        f"{kb.SINK_DSA_BACKEND} for both DSA phases",
        [f"{flag} {kb.SINK_DSA_BACKEND}" for flag in wrong],
    )


@rule(
    id="dsa-rocm-only-backend",
    title="The triton DSA backend runs on ROCm only",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        'sglang 0.5.20-0.5.23: _check_dsa_backend_constraints\' `rocm_only = {"triton"}` and its message in '
        "every release read (overrides.py:631-637 in 0.5.20, :534-540 in 0.5.21, :537-543 in 0.5.22, :560-566 "
        "in 0.5.23); 0.5.19 has no such check"
    ),
    needs_gpu=True,
    stage="startup",
    prevents="The triton DSA backend is only supported on ROCm/HIP. Pick an alternative DSA backend for CUDA "
    "(flashmla_kv on Hopper, trtllm on Blackwell).",
    source=f"{kb.OVERRIDES}, _check_dsa_backend_constraints",
    docs="""Checks that `--dsa-prefill-backend` / `--dsa-decode-backend` do not name triton on an NVIDIA GPU.

SGLang's triton DSA kernels are the ROCm path; on CUDA the DSA backend resolution refuses them at start-up
and names the CUDA choices: flashmla_kv on Hopper, trtllm on Blackwell.""",
    fix_title="Use --dsa-prefill-backend / --dsa-decode-backend flashmla_kv (SM90) or trtllm (SM100)",
)
def dsa_rocm_only_backend(cfg, target):
    named = _dsa_backends(cfg)
    rocm = {flag: value for flag, value in named.items() if value in kb.ROCM_ONLY_DSA_BACKENDS}
    if not named:
        return skipped("no --dsa-prefill-backend / --dsa-decode-backend given")
    if not rocm:
        return passed(", ".join(f"{f} {v}" for f, v in named.items()), "a CUDA DSA backend")
    cuda = "trtllm" if (target.major or 0) >= 10 else "flashmla_kv"
    return failed(
        ", ".join(f"{flag} {value}" for flag, value in rocm.items()) + f" on {gpu(target)}",
        "a CUDA DSA backend",
        [f"{flag} {cuda}" for flag in rocm],
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
    verified=(
        "sglang 0.5.17-0.5.21: the raise in _check_tilelang_dsa_fp8_kv (overrides.py:1569 in 0.5.17, :1657 in "
        "0.5.18, :661 in 0.5.19) / _check_dsa_backend_constraints (:643 in 0.5.20, :546 in 0.5.21), called after "
        "the DSA defaults (:1654, :1742, :746) and, from 0.5.20, in the HiSparse arm too (:757 and :787 in 0.5.20, "
        ":661 and :691 in 0.5.21); absent from 0.5.16; 0.5.22 replaced it with dsa-tilelang-fp8-kv's checks. "
        "bench/oracle_diff.py --space dsa on 0.5.20: each tilelang launch with an fp8_e4m3 KV rejected with it, the 0.5.20 fixtures too"
    ),
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
    verified=(
        "sglang 0.5.22-0.5.23: the four 'CUDA TileLang FP8 KV ...' messages first appear in 0.5.22 "
        "(arg_groups/overrides.py:549, :553, :559, :668) and are in 0.5.23 (:572, :577, :583, :692); no earlier "
        "release read has them"
    ),
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
    verified=(
        "sglang 0.5.18-0.5.23: HISPARSE_KV_CACHE_DTYPES and HISPARSE_CUDA_DSA_BACKENDS_BY_DTYPE unchanged "
        "(hisparse_hook.py:16-23; bfloat16 -> flashmla_sparse, fp8_e4m3 -> flashmla_kv, flashinfer_sparse_mla) in "
        "every release read from 0.5.18 to 0.5.23; 0.5.17 allowed only flashmla_kv for fp8_e4m3"
    ),
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


def _hisparse_model(cfg, target) -> bool:
    """Whether validate_hisparse's model assert admits the model in the target's release: a DSA checkpoint (its
    is_deepseek_dsa, not the DSA serving path: DeepSeek-V3.2 is admitted in 0.5.10-0.5.11 too, where the model
    adjustments leave it off that path; the 0.5.10 oracle accepts it), or one of HISPARSE_ARCHITECTURES_SINCE
    (DeepSeek-V4, MiniMax-M3)."""
    since = kb.HISPARSE_ARCHITECTURES_SINCE.get(cfg.model.architecture or "")
    return dsa_checkpoint(cfg, target) or (since is not None and sglang_release(target) >= since)


@rule(
    id="dsa-hisparse-serving",
    title="HiSparse serves DSA, DeepSeek-V4 and MiniMax-M3 models, without mixed chunks, with linear, static "
    "speculation",
    engine="sglang",
    versions="sglang>=0.5.10",
    verified=(
        "sglang 0.5.10-0.5.23: validate_hisparse, run at launch by check_server_args, read in each release: the "
        "model assert admits DSA models only in 0.5.10-0.5.11 (server_args.py:6185), DeepSeek-V4 too from 0.5.12 "
        "(hisparse_hook.py:60-64; the DSpark head from 0.5.16, configs/model_config.py is_deepseek_v4), MiniMax-M3 "
        "too from 0.5.21 (:93-98; :101-106 in 0.5.23); --enable-mixed-chunk, a speculative top-k other than 1 and "
        "--speculative-adaptive are refused from 0.5.22 (:80-85, :114-127 in 0.5.22 and 0.5.23; bench/release_walk.py "
        "grep 'does not support --enable-mixed-chunk yet', 'supports linear speculation', 'statically sized swap')"
    ),
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
    if not _hisparse_model(cfg, target):
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
    id="dsa-hisparse-radix-cache",
    title="HiSparse needs the radix cache off",
    engine="sglang",
    versions="sglang>=0.5.10",
    verified=(
        "sglang 0.5.10-0.5.23: the assert in validate_hisparse, run by check_server_args, in every release read "
        "(server_args.py:6191 in 0.5.10; hisparse_hook.py:68 in 0.5.12, :114 in 0.5.14, :101 in 0.5.16, :100 in "
        "0.5.18 and 0.5.20, :110 in 0.5.22 and 0.5.23); 0.5.9 has no --enable-hisparse"
    ),
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
)
def dsa_hisparse_radix_cache(cfg, target):
    if not cfg.flags.get("enable_hisparse"):
        return skipped("applies to --enable-hisparse")
    if not _hisparse_model(cfg, target):
        return skipped("applies to the models HiSparse serves (DSA, DeepSeek-V4, MiniMax-M3)")
    required = "--disable-radix-cache with --enable-hisparse"
    if cfg.flags.get("disable_radix_cache"):
        return passed("--enable-hisparse with --disable-radix-cache", required)
    return failed("--enable-hisparse with the radix cache on", required, ["--disable-radix-cache"])


@rule(
    id="dsa-tbo-index-sharing",
    title="Two-batch overlap cannot run a DSA model whose layers share top-k indices",
    engine="sglang",
    versions="sglang>=0.5.13",
    verified=(
        "sglang 0.5.13-0.5.23: the refusal in the DSA branch of the model adjustments (server_args.py:1867-1878 in "
        "0.5.13, :4394-4407 in 0.5.16, :5352-5364 in 0.5.18; arg_groups/model_hook.py:172-186 in 0.5.19, "
        "_validate_dsa_tbo_index_sharing :48-70 in 0.5.20 and :54-75 in 0.5.23, called for is_deepseek_dsa "
        "models); index_topk_freq > 1 or an 'S' in index_topk_pattern in each, and 'shared' in indexer_types "
        "from 0.5.20 (bench/release_walk.py grep 'index-topk sharing'; none in 0.5.12.post1)"
    ),
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
)
def dsa_tbo_index_sharing(cfg, target):
    if not cfg.flags.get("enable_two_batch_overlap"):
        return skipped("applies to --enable-two-batch-overlap")
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    model = cfg.model
    shared = model.shared_index_topk(read_indexer_types=sglang_release(target) >= kb.SHARED_INDEXER_TYPES_FROM)
    required = "no index-topk sharing under two-batch overlap"
    if not shared:
        return passed(f"--enable-two-batch-overlap on {model.name} (every DSA layer runs its own indexer)", required)
    return failed(f"--enable-two-batch-overlap on {model.name} with {shared}", required)


@rule(
    id="dsv4-kv-cache-dtype",
    title="DeepSeek-V4 needs an fp8_e4m3 KV cache (or bfloat16, from sglang 0.5.14)",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23: the auto -> fp8_e4m3 default and the assert in every release read: fp8_e4m3 only in "
        "0.5.12, 0.5.12.post1, 0.5.13 and 0.5.13.post1 (deepseek_v4_hook.py:27-34 apply_deepseek_v4_defaults), "
        "fp8_e4m3 or bfloat16 in 0.5.14 (:18-40) and from 0.5.15 (overrides.py:1308-1317 in 0.5.15, :922-925 in "
        "0.5.19, :897-910 in 0.5.23; 0.5.15.post1, 0.5.16-0.5.18, 0.5.20-0.5.22 by grep); 0.5.11 has no "
        "DeepSeek-V4 (no deepseek_v4_hook.py)"
    ),
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
)
def dsv4_kv_cache_dtype(cfg, target):
    if cfg.model.architecture != kb.DSV4_ARCHITECTURE:
        return skipped("applies to DeepSeek-V4 (DeepseekV4ForCausalLM)")
    release = sglang_release(target)
    kept = [dtype for dtype, since in kb.DSV4_KV_DTYPES_SINCE.items() if release >= since]
    required = f"one of {', '.join(kept)} (sglang {release})"
    if cfg.kv_cache_dtype in kept:
        return passed(f"--kv-cache-dtype {cfg.kv_cache_dtype}", required)
    return failed(
        f"--kv-cache-dtype {cfg.kv_cache_dtype} for DeepSeek-V4",
        required,
        [f"--kv-cache-dtype {dtype}" for dtype in kept if dtype != "auto"],
    )


@rule(
    id="dsv4-backend-override",
    title="SGLang runs DeepSeek-V4 on the dsv4 backend at page 256, whatever --attention-backend and --page-size say",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23, every release read: apply_deepseek_v4_defaults assigns attention_backend dsv4 and "
        "page_size 256 (deepseek_v4_hook.py:15-16 in 0.5.12, 0.5.12.post1, 0.5.13, 0.5.13.post1; :16-17 in 0.5.14); "
        "_deepseek_v4_overrides declares them (overrides.py:692-704 in 0.5.15 and 0.5.15.post1, :793-805 in 0.5.16, "
        ":1090-1102 in 0.5.17, :1146-1158 in 0.5.18; model_overrides/deepseek_v4.py:30-42 in 0.5.19, :29-41 in "
        "0.5.20, :24-61 in 0.5.21, 0.5.22, 0.5.23); bench/sglang_release_oracle.py on SM90, SM100 and SM120 in 0.5.16, "
        "0.5.20 and 0.5.23: --attention-backend fa3 or flashinfer resolves to dsv4, --page-size 64 to 256; 0.5.11 "
        "has no DeepSeek-V4"
    ),
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


@rule(
    id="dsv4-speculative",
    title="DeepSeek-V4 speculative decoding: EAGLE with --speculative-eagle-topk 1 (or DSPARK, from sglang 0.5.16)",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23, apply_deepseek_v4_defaults read in every release: EAGLE only, with "
        "speculative_eagle_topk == 1 (deepseek_v4_hook.py:36-42 in 0.5.12, 0.5.12.post1, 0.5.13, 0.5.13.post1; "
        ":48-54 in 0.5.14; :55-61 in 0.5.15 and 0.5.15.post1), EAGLE or DSPARK from 0.5.16 (:55-63 in 0.5.16, "
        ":147-155 in 0.5.17, :144-152 in 0.5.18, :147-155 in 0.5.19, :188-197 in 0.5.20, :96-105 in 0.5.21, :102-111 "
        "in 0.5.22, :148-157 in 0.5.23); bench/sglang_release_oracle.py in 0.5.16, 0.5.20 and 0.5.23 on SM90 refuses "
        "NEXTN, EAGLE3 and NGRAM, and EAGLE with no --speculative-eagle-topk or with 2, and accepts EAGLE with top-k 1; "
        "0.5.11 has no DeepSeek-V4"
    ),
    needs_model=True,
    stage="startup",
    prevents="Only EAGLE speculative algorithm with topk == 1 is supported for DeepseekV4ForCausalLM; Only EAGLE and "
    "DSPARK speculative algorithms are supported for DeepseekV4ForCausalLM",
    source=f"{kb.DSV4_HOOK}, apply_deepseek_v4_defaults",
    docs="""Checks a DeepSeek-V4 (DeepseekV4ForCausalLM) launch with `--speculative-algorithm`: EAGLE with
`--speculative-eagle-topk 1` given, or DSPARK from sglang 0.5.16.

SGLang asserts this in DeepSeek-V4's model defaults, which run before its speculative-decoding step: NEXTN is not
yet renamed EAGLE there and EAGLE's top-k not yet filled in, so `--speculative-algorithm NEXTN`, and EAGLE without
`--speculative-eagle-topk`, are refused at start-up although they start for DeepSeek-V3. DeepSeek-V4's MTP layer is
drafted through EAGLE one token per step.""",
    fix_title="Pass --speculative-algorithm EAGLE --speculative-eagle-topk 1",
)
def dsv4_speculative(cfg, target):
    if cfg.model.architecture != kb.DSV4_ARCHITECTURE:
        return skipped("applies to DeepSeek-V4 (DeepseekV4ForCausalLM)")
    algorithm = cfg.speculative_algorithm
    if algorithm is None:
        return skipped("applies to speculative decoding")
    release = sglang_release(target)
    if release < kb.DSV4_FROM:
        return skipped(f"sglang {release} has no DeepSeek-V4 defaults")
    kept = [name for name, since in kb.DSV4_SPECULATIVE_SINCE.items() if release >= since]
    required = f"{' or '.join(kept)} (EAGLE with --speculative-eagle-topk {kb.DSV4_EAGLE_TOPK} given)"
    fix = [f"--speculative-algorithm EAGLE --speculative-eagle-topk {kb.DSV4_EAGLE_TOPK}"]
    if algorithm not in kept:
        return failed(f"--speculative-algorithm {algorithm} for DeepSeek-V4", required, fix)
    topk = cfg.speculative_eagle_topk
    if algorithm == "EAGLE" and topk != kb.DSV4_EAGLE_TOPK:
        given = "no --speculative-eagle-topk" if topk is None else f"--speculative-eagle-topk {topk}"
        return failed(f"EAGLE with {given} for DeepSeek-V4", required, fix)
    return passed(
        f"--speculative-algorithm {algorithm}" + (f", top-k {topk}" if algorithm == "EAGLE" else ""), required
    )


@rule(
    id="dsv4-attn-backend",
    title="DeepSeek-V4's trtllm and flashmla_mega attention backends: SM100, FP8 KV, no HiSparse or CP",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: the six '--dsv4-attn-backend trtllm ...' asserts first appear in 0.5.20 "
        "(arg_groups/deepseek_v4_hook.py:138-171, PD disaggregation :163) and are in 0.5.21, 0.5.22 and 0.5.23 "
        "(:110-132, PD disaggregation :71 in 0.5.21, :77 in 0.5.22, :123-126 in 0.5.23); the "
        "flashmla_mega assert only in 0.5.23 (:101-107); 0.5.19 has no --dsv4-attn-backend "
        "(rules/knowledge/sglang_flags.json)"
    ),
    needs_model=True,
    stage="startup",
    prevents="--dsv4-attn-backend trtllm requires an SM100/SM103 (Blackwell) GPU.",
    source=f"{kb.DSV4_HOOK}, validate_hisparse (the DeepSeek-V4 attention-backend asserts)",
    docs="""Checks `--dsv4-attn-backend trtllm` and `flashmla_mega` for DeepSeek-V4: trtllm needs an SM100/SM103
GPU, an fp8_e4m3 (or auto) KV cache, no `--enable-hisparse`, no context parallelism (`--attn-cp-size`,
`--dcp-size`, prefill CP), no PD disaggregation (`--disaggregation-mode`) and chunked prefill on; flashmla_mega needs DeepSeek-V4.1 on SM100/SM103.

trtllm switches the SWA and compressed KV pools to a uniform 512-dim FP8 layout served by FlashInfer's
trtllm-gen sparse MLA kernel, which exists for SM100 only; its semaphore buffer is sized from the prefill
chunk. SGLang asserts each of these at start-up.""",
    fix_title="Use --dsv4-attn-backend flashmla (or auto)",
)
def dsv4_attn_backend(cfg, target):
    backend = cfg.flags.get("dsv4_attn_backend")
    if backend not in ("trtllm", "flashmla_mega"):
        return skipped("applies to --dsv4-attn-backend trtllm / flashmla_mega")
    if cfg.model.architecture != kb.DSV4_ARCHITECTURE:
        return skipped("applies to DeepSeek-V4 (DeepseekV4ForCausalLM)")
    if target.major is None:
        return unknown("compute capability unknown")
    problems = []
    if target.major != kb.DSV4_SM100_MAJOR:
        problems.append(f"{gpu(target)}, not SM100/SM103")
    if backend == "flashmla_mega":
        if cfg.model.model_type != kb.DSV41_MODEL_TYPE:
            problems.append(f"model_type {cfg.model.model_type}, not DeepSeek-V4.1 ({kb.DSV41_MODEL_TYPE})")
    else:
        if cfg.kv_cache_dtype not in kb.DSV4_TRTLLM_KV_DTYPES:
            problems.append(f"--kv-cache-dtype {cfg.kv_cache_dtype}")
        if cfg.flags.get("enable_hisparse"):
            problems.append("--enable-hisparse")
        for name in ("attn_cp_size", "dcp_size"):
            size = cfg.flags.get(name)
            if isinstance(size, int) and size > 1:
                problems.append(f"--{name.replace('_', '-')} {size}")
        if prefill_cp(cfg, target)[0]:
            problems.append("prefill context parallelism")
        mode = cfg.flags.get("disaggregation_mode") or "null"
        if mode != "null":
            problems.append(f"--disaggregation-mode {mode}")
        chunk = cfg.flags.get("chunked_prefill_size")
        if isinstance(chunk, int) and chunk <= 0:
            problems.append(f"--chunked-prefill-size {chunk}")
    required = (
        "SM100/SM103, fp8_e4m3 KV, no HiSparse, context parallelism or PD disaggregation, chunked prefill"
        if backend == "trtllm"
        else "DeepSeek-V4.1 on SM100/SM103"
    )
    if not problems:
        return passed(f"--dsv4-attn-backend {backend} on {gpu(target)}", required)
    return failed(f"--dsv4-attn-backend {backend}: {', '.join(problems)}", required, ["--dsv4-attn-backend flashmla"])


@rule(
    id="dsv4-encoder-swa-replay-model",
    title="--enable-encoder-swa-bounded-replay requires DeepSeek-V4.1",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23 (bench/release_walk.py grep 'requires DeepSeek-V4.1'): the flag is new in 0.5.21; "
        "validate_deepseek_v41_features refuses it for a DeepseekV4ForCausalLM whose model_type is not "
        "deepseek_v41 (deepseek_v4_hook.py:176-179 in 0.5.21, :211-214 in 0.5.22, :277-280 in 0.5.23), called for "
        "that architecture only (model_hook.py:432-441 in 0.5.21, :464-473 in 0.5.22); 0.5.23 refuses it for "
        "every other model too (handle_model_capability_adjustments, model_hook.py:1038-1045)"
    ),
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
)
def dsv4_encoder_swa_replay_model(cfg, target):
    if not cfg.flags.get("enable_encoder_swa_bounded_replay"):
        return skipped("applies to --enable-encoder-swa-bounded-replay")
    required = "DeepSeek-V4.1 (model_type deepseek_v41)"
    if cfg.model is None:
        return unknown("model unknown")
    if cfg.model.model_type == kb.DSV41_MODEL_TYPE:
        return passed(f"model_type {cfg.model.model_type}", required)
    release = sglang_release(target)
    if cfg.model.architecture != kb.DSV4_ARCHITECTURE and release < kb.ENCODER_SWA_REPLAY_ANY_MODEL_FROM:
        return passed(
            f"{cfg.model.architecture}: sglang {release} checks the flag for {kb.DSV4_ARCHITECTURE} only", required
        )
    return failed(f"--enable-encoder-swa-bounded-replay on model_type {cfg.model.model_type}", required)


@rule(
    id="dsv4-fp4-indexer-gpu",
    title="--enable-deepseek-v4-fp4-indexer needs an SM100 or (from 0.5.18) SM120 GPU",
    engine="sglang",
    versions="sglang>=0.5.13",
    verified=(
        "sglang 0.5.13-0.5.23 (bench/release_walk.py grep 'enable-deepseek-v4-fp4-indexer requires'): "
        "is_sm100_supported only in 0.5.13-0.5.17 (server_args.py:4164 in 0.5.13, :6676 in 0.5.16), SM100 or SM120 "
        "from 0.5.18 (server_args.py:8091-8095; arg_groups/serving_hook.py:421-425 in 0.5.19-0.5.20), gfx95 too "
        "from 0.5.21 (:423-427; :464-470 in 0.5.23); the check reads no model"
    ),
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
)
def dsv4_fp4_indexer_gpu(cfg, target):
    if not cfg.flags.get("enable_deepseek_v4_fp4_indexer"):
        return skipped("applies to --enable-deepseek-v4-fp4-indexer")
    if target.major is None:
        return unknown("compute capability unknown")
    release = sglang_release(target)
    majors = sorted(major for major, since in kb.FP4_INDEXER_MAJORS_SINCE.items() if release >= since)
    required = " or ".join(f"SM{major}x" for major in majors)
    if target.major in majors:
        return passed(f"--enable-deepseek-v4-fp4-indexer on {gpu(target)}", required)
    return failed(f"--enable-deepseek-v4-fp4-indexer on {gpu(target)}", required)


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
    verified=(
        "sglang 0.5.23: validate_kv_shard_attention_backend's DSA branch (kv_shard_hook.py:33-65) and its refusal "
        "of a DSA model on another prefill backend (:66-67); absent from 0.5.22, whose only branch asks for fa3 "
        "or trtllm_mla (kv-sharding-backend); bench/release_walk.py grep 'DSA KV sharding requires' finds "
        "0.5.23 only. The DSA defaults it sees: overrides.py:600-720 (sub-backends), deepseek_v2.py:129-134 "
        "(attn_cp_size under prefill CP) and :162-173 (page 64 x index_kpool)"
    ),
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


@rule(
    id="dsv4-prefill-cp-strategy",
    title="DeepSeek-V4 prefill context parallelism on CUDA takes the interleave strategy only",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23: validate_deepseek_v4_cp, called for DeepseekV4ForCausalLM by the model adjustments "
        "(server_args.py:2005 in 0.5.12, :3785 in 0.5.14, :5295 in 0.5.17; arg_groups/model_hook.py:332 in 0.5.19, "
        ":381 in 0.5.20, :480 in 0.5.23), raises for any mode but round-robin-split in 0.5.12-0.5.13.post1 "
        "(deepseek_v4_hook.py:67 in 0.5.12, :60 in 0.5.12.post1, 0.5.13, 0.5.13.post1), for any --cp-strategy but "
        "interleave in 0.5.14-0.5.20 (:79 in 0.5.14, :69 in 0.5.15 and 0.5.15.post1, :71 in 0.5.16, :163 in 0.5.17, "
        ":160 in 0.5.18, :164 in 0.5.19, :207 in 0.5.20), for zigzag off NPU (and any strategy but interleave or "
        "zigzag) in 0.5.21-0.5.23 (:117-125 in 0.5.21, :123-131 in 0.5.22, :167-177 in 0.5.23); 0.5.11 has no "
        "DeepSeek-V4 (no deepseek_v4_hook.py, no DeepseekV4ForCausalLM in server_args.py)"
    ),
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
)
def dsv4_prefill_cp_strategy(cfg, target):
    if cfg.model.architecture != kb.DSV4_ARCHITECTURE:
        return skipped("applies to DeepSeek-V4 (DeepseekV4ForCausalLM)")
    enabled, strategy = prefill_cp(cfg, target)
    if not enabled:
        return skipped("applies to prefill context parallelism")
    required = f"the {kb.DSV4_CP_STRATEGY} CP strategy on CUDA"
    if strategy == kb.DSV4_CP_STRATEGY:
        return passed(f"DeepSeek-V4 prefill CP with the {strategy} strategy", required)
    found = f"the {strategy} strategy" if strategy else "no --cp-strategy"
    fix = (
        "--nsa-prefill-cp-mode round-robin-split"
        if sglang_release(target) < kb.CP_STRATEGY_FLAG_FROM
        else (f"--cp-strategy {kb.DSV4_CP_STRATEGY}")
    )
    return failed(f"DeepSeek-V4 prefill CP with {found}", required, [fix])


LAYER_SPLIT_TRANSFER = "mooncake"  # model_hook.py:392-400 in 0.5.23 (mooncake_tcp is mooncake's own mode)


@rule(
    id="dsa-cache-layer-split",
    title="--enable-dsa-cache-layer-split: a DSA model on a PD prefill worker with interleaved prefill CP, mooncake, PP 1",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: handle_model_specific_adjustments refuses the flag for a non-DSA model "
        "(model_hook.py:187-191 in 0.5.23) and, for a DSA model, off a PD prefill worker, without --enable-prefill-cp "
        "--cp-strategy interleave, over a transfer backend other than mooncake, and with --pp-size > 1 "
        "(:366-410); the block is identical in 0.5.20 (:265-315), 0.5.21 (:322-372) and 0.5.22 (:354-404). "
        "0.5.16-0.5.19 also accept the legacy --enable-nsa-prefill-context-parallel --nsa-prefill-cp-mode "
        "round-robin-split (server_args.py:4436-4485 in 0.5.16), flags this tool does not model, so they are not "
        "judged"
    ),
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
)
def dsa_cache_layer_split(cfg, target):
    if not cfg.flags.get("enable_dsa_cache_layer_split"):
        return skipped("applies to --enable-dsa-cache-layer-split")
    required = "a DSA model on a PD prefill worker, interleaved prefill CP, mooncake, PP 1"
    if not dsa_model(cfg, target):
        return failed(f"--enable-dsa-cache-layer-split on {cfg.model.name} (not a DSA model)", required)
    mode = cfg.flags.get("disaggregation_mode") or "null"
    if mode != "prefill":
        found = "not disaggregated" if mode == "null" else f"--disaggregation-mode {mode}"
        return failed(f"DSA cache layer split {found}", required, ["--disaggregation-mode prefill"])
    if not cfg.flags.get("enable_prefill_cp") or cfg.flags.get("cp_strategy") != kb.KV_SHARD_DSA_CP_STRATEGY:
        strategy = cfg.flags.get("cp_strategy") or "none"
        found = f"--cp-strategy {strategy}" if cfg.flags.get("enable_prefill_cp") else "no --enable-prefill-cp"
        return failed(
            f"DSA cache layer split with {found}",
            required,
            [f"--enable-prefill-cp --cp-strategy {kb.KV_SHARD_DSA_CP_STRATEGY}"],
        )
    transfer = cfg.flags.get("disaggregation_transfer_backend") or LAYER_SPLIT_TRANSFER
    if transfer != LAYER_SPLIT_TRANSFER:
        return failed(
            f"DSA cache layer split over {transfer}",
            required,
            [f"--disaggregation-transfer-backend {LAYER_SPLIT_TRANSFER}"],
        )
    if cfg.pp_size > 1:
        return failed(f"DSA cache layer split with --pp-size {cfg.pp_size}", required, ["--pp-size 1"])
    return passed(
        f"DSA cache layer split of {cfg.model.name} on a PD prefill worker with interleaved prefill CP", required
    )


DEEPSEEK_V2_OVERRIDES = "sglang: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py"
HYV4_ARCHITECTURES = ("HYV4ForCausalLM", "HYV4ForCausalLMNextN")


@rule(
    id="model-hyv4-context-parallel",
    title="HYV4 takes no prefill context parallelism and no decode context parallelism",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23 (bench/release_walk.py grep 'is not supported for HYV4 because its', '--dcp-size > 1 "
        "is not supported for HYV4'): model_overrides/deepseek_v2.py:47-61 in 0.5.20, :40-54 in 0.5.21, :61-76 in "
        "0.5.22 and 0.5.23, the same two tests (enable_prefill_cp, dcp_size > 1) in each; HYV4 first appears in "
        "0.5.20"
    ),
    needs_model=True,
    stage="startup",
    prevents="--enable-prefill-cp is not supported for HYV4 because its attention path does not implement DSA "
    "context-parallel metadata and sharding.; --dcp-size > 1 is not supported for HYV4 because decode context "
    "parallelism gathers query heads across DCP ranks but does not provide single-owner semantics for learnable "
    "attention sinks.",
    source=f"{DEEPSEEK_V2_OVERRIDES}, _deepseek_family_overrides",
    docs="""Checks that an HYV4 model (HYV4ForCausalLM, its HYV4ForCausalLMNextN draft) runs without
`--enable-prefill-cp` and with `--dcp-size` 1.

HYV4's DSA attention path implements no context-parallel metadata or sharding, and decode CP would gather query
heads across ranks without one owner for its learnable attention sinks: SGLang's DeepSeek-family override raises
both at start-up (deepseek_v2.py:61-76 in sglang 0.5.23).""",
    fix_title="Serve HYV4 without --enable-prefill-cp, with --dcp-size 1",
)
def model_hyv4_context_parallel(cfg, target):
    if cfg.model.architecture not in HYV4_ARCHITECTURES:
        return skipped("applies to HYV4 (HYV4ForCausalLM)")
    required = "no --enable-prefill-cp, --dcp-size 1"
    if cfg.flags.get("enable_prefill_cp"):
        return failed("HYV4 with --enable-prefill-cp", required)
    dcp = cfg.flags.get("dcp_size") or 1
    if dcp > 1:
        return failed(f"HYV4 with --dcp-size {dcp}", required, ["--dcp-size 1"])
    return passed(f"HYV4 on TP {cfg.tp_size} without context parallelism", required)


@rule(
    id="dsa-dcp",
    title="DSA decode context parallelism: no HiSparse / HiCache, no PD, EAGLE top-k 1, an unpooled index key",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified=(
        "sglang 0.5.22-0.5.23 (bench/release_walk.py grep 'DSA DCP does not support HiSparse', '... PD', 'DSA DCP "
        "requires --speculative-eagle-topk 1', 'is not supported for DSA with'; none before 0.5.22): "
        "model_overrides/deepseek_v2.py _dsa_dcp_overrides :18-34 and the index_kpool test :162-168 (:163-169 in "
        "0.5.22), the same in both; the kpool test sits on the CUDA arm (not NPU / XPU, not ROCm's legacy path)"
    ),
    needs_model=True,
    stage="startup",
    prevents="DSA DCP does not support HiSparse or HiCache.; DSA DCP does not support PD disaggregation.; DSA DCP "
    "requires --speculative-eagle-topk 1.; --dcp-size > 1 is not supported for DSA with index_kpool={index_kpool}: "
    "a pooled index key spans positions owned by different DCP ranks.",
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
)
def dsa_dcp(cfg, target):
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    dcp = cfg.flags.get("dcp_size") or 1
    if dcp <= 1:
        return skipped("applies to --dcp-size > 1")
    required = "no HiSparse / HiCache, no PD disaggregation, EAGLE top-k 1, index_kpool 1"
    caches = [f"--{d.replace('_', '-')}" for d in ("enable_hisparse", "enable_hierarchical_cache") if cfg.flags.get(d)]
    if caches:
        return failed(f"DSA DCP {dcp} with {', '.join(caches)}", required, ["--dcp-size 1"])
    mode = cfg.flags.get("disaggregation_mode") or "null"
    if mode != "null":
        return failed(f"DSA DCP {dcp} with --disaggregation-mode {mode}", required, ["--dcp-size 1"])
    if cfg.speculative_eagle_topk not in (None, 1):
        return failed(
            f"DSA DCP {dcp} with --speculative-eagle-topk {cfg.speculative_eagle_topk}",
            required,
            ["--speculative-eagle-topk 1"],
        )
    kpool = cfg.model.index_kpool or 1
    if kpool > 1:
        return failed(f"DSA DCP {dcp} with index_kpool {kpool}", required, ["--dcp-size 1"])
    return passed(f"DSA DCP {dcp}", required)


# the TP the DSA prefill-CP path asserts: one machine (cross-machine CP has precision issues)
DSA_PREFILL_CP_MAX_TP = 8


@rule(
    id="dsa-prefill-cp-single-node",
    title="DSA prefill context parallelism runs on one machine: --tp-size 8 at most",
    engine="sglang",
    versions="sglang>=0.5.13",
    verified=(
        "sglang 0.5.13-0.5.23, every release (bench/release_walk.py grep 'Context parallel only supports single "
        "machine'): the assert on the DSA prefill-CP arm, server_args.py:1901-1903 in 0.5.13 (0.5.14 :3579-3581), "
        "arg_groups/overrides.py :351 in 0.5.15, :367 in 0.5.16, :595 in 0.5.17, :637 in 0.5.18, "
        "model_overrides/deepseek_v2.py :67 in 0.5.19, :109 in 0.5.20, :102 in 0.5.21, :123-125 in 0.5.22 and "
        "0.5.23; the CP flag per release as rules/engines/sglang/resolve.py prefill_cp reads it (0.5.12's "
        "--enable-nsa-prefill-context-parallel, with the same assert at server_args.py:1842, is an unmodelled flag)"
    ),
    needs_model=True,
    stage="startup",
    prevents="Context parallel only supports single machine (tp_size <= 8). Cross-machine CP has precision issues.",
    source=f"{DEEPSEEK_V2_OVERRIDES}, _deepseek_family_overrides (the DSA prefill-CP arm)",
    docs="""Checks that a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5, ...) served with prefill context
parallelism (`--enable-prefill-cp`, or its legacy spellings in older releases) has `--tp-size` 8 or less.

SGLang asserts it on the DSA prefill-CP path at start-up (deepseek_v2.py:123-125 in sglang 0.5.23): its CP
gather and reduce-scatter are validated inside one machine, and across machines they lose precision.""",
    fix_title="Use --tp-size 8 (one machine) for DSA prefill CP",
)
def dsa_prefill_cp_single_node(cfg, target):
    if not dsa_model(cfg, target):
        return skipped(SKIP_NOT_DSA)
    if not prefill_cp(cfg, target)[0]:
        return skipped("applies to prefill context parallelism (--enable-prefill-cp)")
    required = f"--tp-size {DSA_PREFILL_CP_MAX_TP} or less (one machine)"
    if cfg.tp_size > DSA_PREFILL_CP_MAX_TP:
        return failed(f"DSA prefill CP with --tp-size {cfg.tp_size}", required, [f"--tp-size {DSA_PREFILL_CP_MAX_TP}"])
    return passed(f"DSA prefill CP on --tp-size {cfg.tp_size}", required)
