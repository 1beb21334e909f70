"""Hybrid Mamba / linear-attention models (Qwen3-Next, Qwen3.5, Nemotron-H, Kimi-Linear, ...): the Mamba radix-cache
strategies, the linear-attention (GDN/KDA) kernel backends and ReplaySSM, as SGLang checks them at start-up.

Verified against the sglang wheels 0.5.10 ... 0.5.23; where a check changed, it follows the target's installed (or
pinned) SGLang release, and the newest when it is unknown.
"""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import cuda_version, gpu, sglang_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.capabilities import MAMBA_RADIX_CACHE_ARCHITECTURES, MAMBA_RADIX_CACHE_SOURCE
from attn_preflight.rules.engines.sglang.resolve import RAGGED_VERIFY_ENV, ragged_verify_mode

MODEL_HOOK = "sglang: python/sglang/srt/arg_groups/model_hook.py"


def _arch(cfg) -> str:
    return cfg.model.architecture or ""


@rule(
    id="model-mamba-no-buffer",
    title="--mamba-radix-cache-strategy no_buffer needs page size 1, --disable-overlap-schedule and no trtllm_mha",
    engine="sglang",
    versions="sglang>=0.5.14",
    needs_model=True,
    stage="startup",
    prevents="no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.",
    source=f"sglang: python/sglang/srt/arg_groups/mamba_hook.py, validate_mamba_no_buffer; {MAMBA_RADIX_CACHE_SOURCE}",
    docs="""Checks an explicit `--mamba-radix-cache-strategy no_buffer` on a hybrid Mamba / linear-attention model
whose state rides the radix cache (Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, Kimi-Linear, ...): it
needs `--page-size 1` (or none), `--disable-overlap-schedule`, and an `--attention-backend` other than
trtllm_mha.

SGLang asserts all three at start-up, before it picks a default backend or page size, so they are
judged on the flags as given ("no_buffer only supports page_size=1.", "no_buffer do not support overlap
schedule. Try to set disable_overlap_schedule=True.", "no_buffer do not support trtllm_mha attention
backend."). Only its `auto` strategy turns overlap scheduling off by itself; with `--disable-radix-cache`
no strategy applies.""",
    fix_title="Add --disable-overlap-schedule (and --page-size 1, another backend), or use the auto strategy",
)
def model_mamba_no_buffer(cfg, target):
    if _arch(cfg) not in MAMBA_RADIX_CACHE_ARCHITECTURES:
        return skipped("applies to hybrid Mamba / linear-attention models on the radix cache")
    if cfg.flags.get("mamba_radix_cache_strategy") != "no_buffer":
        return skipped("applies to --mamba-radix-cache-strategy no_buffer")
    if cfg.flags.get("disable_radix_cache"):
        return skipped("--disable-radix-cache: no Mamba radix-cache strategy applies")
    problems, fix = [], []
    if cfg.page_size not in (None, 1):
        problems.append(f"--page-size {cfg.page_size}")
        fix.append("--page-size 1")
    if not cfg.flags.get("disable_overlap_schedule"):
        problems.append("overlap scheduling on")
        fix.append("--disable-overlap-schedule")
    if cfg.attention_backend == "trtllm_mha" and not cfg.auto_backend:
        problems.append("--attention-backend trtllm_mha")
        fix.append("--attention-backend triton")
    required = "page size 1, --disable-overlap-schedule, a backend other than trtllm_mha"
    if not problems:
        return passed("no_buffer with page size 1 and overlap scheduling off", required)
    return failed(f"no_buffer with {', '.join(problems)}", required, [" ".join(fix)])


def _mamba_state(cfg) -> bool:
    """The model keeps Mamba / linear-attention state on the radix cache (overrides.py _mamba_radix_cache_resolution,
    Inkling's override)."""
    arch = _arch(cfg)
    if arch == backend_kb.GRANITE_HYBRID_ARCHITECTURE:
        return cfg.model.hybrid_linear  # only with mamba layers in layer_types
    return arch in MAMBA_RADIX_CACHE_ARCHITECTURES or arch in backend_kb.INKLING_ARCHITECTURES


def _extra_buffer_supported(cfg) -> bool:
    """overrides.py supports_mamba_cache_extra_buffer: a listed architecture on --linear-attn-backend triton."""
    backend = cfg.flags.get("linear_attn_backend") or "triton"
    return _arch(cfg) in backend_kb.MAMBA_EXTRA_BUFFER_ARCHITECTURES and backend == "triton"


def _mamba_strategy(cfg) -> str:
    """The strategy SGLang settles on: the one given, else (auto) extra_buffer where overlap scheduling or a page
    above 1 wants it and the model takes it, no_buffer otherwise; Inkling's override pins extra_buffer."""
    given = cfg.flags.get("mamba_radix_cache_strategy") or "auto"
    if given != "auto":
        return given
    if _arch(cfg) in backend_kb.INKLING_ARCHITECTURES:
        return "extra_buffer"
    wants = not cfg.flags.get("disable_overlap_schedule") or (cfg.page_size or 1) > 1
    return "extra_buffer" if wants and _extra_buffer_supported(cfg) else "no_buffer"


def _divides(a: int, b: int) -> bool:
    return max(a, b) % min(a, b) == 0


def _fitting_page(page: int, chunk: int, track: int) -> int:
    """The largest power of two up to `page` that divides (or is divided by) the chunk and divides the interval."""
    size = 1 << (page.bit_length() - 1)
    while size > 1 and not (_divides(size, chunk) and track % size == 0):
        size //= 2
    return size


@rule(
    id="model-mamba-extra-buffer",
    title="--mamba-radix-cache-strategy extra_buffer needs a model and linear-attention backend that take it, a "
    "track interval that fits, a page that divides the Mamba chunk",
    engine="sglang",
    versions="sglang>=0.5.14",
    needs_model=True,
    stage="startup",
    prevents="extra_buffer is not supported for {architecture}; use no_buffer.",
    source=f"{backend_kb.MAMBA_EXTRA_BUFFER_SOURCE}; sglang: python/sglang/srt/arg_groups/overrides.py, "
    f"mamba_cache_chunk_size; {MODEL_HOOK}, handle_mamba_radix_cache",
    docs="""Checks the extra-buffer Mamba radix-cache strategy (`--mamba-radix-cache-strategy extra_buffer` or
`extra_buffer_lazy`, or what SGLang's `auto` strategy picks on a hybrid model with overlap scheduling on or a
page above 1) against SGLang's start-up asserts:

- the model must take it (Qwen3-Next, Qwen3.5, Kimi-Linear, Nemotron-H, Falcon-H1, ...; not LFM2, ZAYA1 or
  Jet-Nemotron) and `--linear-attn-backend` must be triton ("extra_buffer is not supported for X; use
  no_buffer.");
- `extra_buffer_lazy` is refused under PD disaggregation (0.5.17+) and with speculative decoding (before);
- `--mamba-track-interval` (256 by default) must be at least `--speculative-num-draft-tokens` and a
  multiple of `--page-size`;
- the page and the model's `mamba_chunk_size` (config.json; 64 when absent, 256 for Nemotron-H, Falcon-H1
  and Granite-4.0-H) must divide one another ("For SSM models, either chunk_size or page_size must be
  divisible by the other").

The page judged is the one given or a model override's (Qwen3.5 on Blackwell): a backend's default page
comes after these asserts. From 0.5.21 an explicit extra-buffer strategy on a model without Mamba state is
refused too ("--mamba-radix-cache-strategy extra_buffer needs mamba state"); `--disable-radix-cache` turns
every strategy off. A draft-token count SGLang fills in itself is not judged.""",
    fix_title="Use --linear-attn-backend triton, a track interval of the page, a page that divides the chunk",
)
def model_mamba_extra_buffer(cfg, target):
    arch = _arch(cfg)
    given = cfg.flags.get("mamba_radix_cache_strategy")
    radix = not cfg.flags.get("disable_radix_cache")
    strategies = backend_kb.MAMBA_EXTRA_BUFFER_STRATEGIES
    release = sglang_release(target)
    if not _mamba_state(cfg):
        if given in strategies and radix and release >= backend_kb.MAMBA_NEEDS_STATE_FROM:
            return failed(
                f"--mamba-radix-cache-strategy {given} on {arch or cfg.model.name}, a model without Mamba state",
                "a hybrid Mamba / linear-attention model",
                ["--mamba-radix-cache-strategy auto"],
            )
        return skipped("applies to hybrid Mamba / linear-attention models on the radix cache")
    if not radix:
        return skipped("--disable-radix-cache: no Mamba radix-cache strategy applies")
    strategy = _mamba_strategy(cfg)
    if strategy not in strategies:
        return skipped(f"SGLang runs the {strategy} strategy here")
    named = f"--mamba-radix-cache-strategy {strategy}" if given == strategy else f"{strategy} (SGLang's choice)"
    required = "a model that takes it on --linear-attn-backend triton"
    if not _extra_buffer_supported(cfg):
        if arch in backend_kb.MAMBA_EXTRA_BUFFER_ARCHITECTURES:
            backend = cfg.flags.get("linear_attn_backend")
            return failed(f"{named} with --linear-attn-backend {backend}", required, ["--linear-attn-backend triton"])
        return failed(f"{named} on {arch}", required, ["--mamba-radix-cache-strategy no_buffer"])
    lazy_refused = ""
    if strategy == "extra_buffer_lazy":
        mode = cfg.flags.get("disaggregation_mode")
        if release >= backend_kb.MAMBA_LAZY_PD_CHECK_FROM and mode not in (None, "null"):
            lazy_refused = f"--disaggregation-mode {mode}"
        elif release < backend_kb.MAMBA_LAZY_PD_CHECK_FROM and cfg.speculative_algorithm:
            lazy_refused = f"--speculative-algorithm {cfg.speculative_algorithm}"
    if lazy_refused:
        return failed(
            f"{named} with {lazy_refused}", "extra_buffer_lazy alone", ["--mamba-radix-cache-strategy extra_buffer"]
        )
    track = cfg.flags.get("mamba_track_interval") or backend_kb.MAMBA_TRACK_INTERVAL_DEFAULT
    draft = cfg.flags.get("speculative_num_draft_tokens")
    page = cfg.page_size
    model = cfg.model
    chunk = backend_kb.mamba_chunk_size(arch, model.mamba_chunk_size, model.ssm_chunk_size)
    required = (
        "--mamba-track-interval >= the draft tokens and a multiple of the page; page and mamba_chunk_size "
        "dividing one another"
    )
    problems = []
    if draft is not None and track < draft:
        problems.append(f"--mamba-track-interval {track} below {draft} draft tokens")
    if page is not None and track % page:
        problems.append(f"--mamba-track-interval {track} not a multiple of page size {page}")
    if page is not None and not _divides(chunk, page):
        problems.append(f"page size {page} and mamba_chunk_size {chunk} not dividing one another")
    found = f"{named}, --mamba-track-interval {track}, page size {page or '(not set yet)'}, mamba_chunk_size {chunk}"
    if not problems:
        return passed(found, required)
    fix = []
    if page is not None and not _divides(chunk, page):
        page = _fitting_page(page, chunk, track)
        fix.append(f"--page-size {page}")
    step = page or 1
    fitting = max(track, draft or 1)
    fitting = -(-fitting // step) * step
    if fitting != track:
        fix.append(f"--mamba-track-interval {fitting}")
    return failed(f"{named} with {'; '.join(problems)}", required, [" ".join(fix)])


@rule(
    id="model-mamba2-track-interval",
    title="Nemotron-H / Falcon-H1 with the Mamba extra buffer need --mamba-track-interval of at least the Mamba chunk",
    engine="sglang",
    versions="sglang>=0.5.14",
    needs_model=True,
    stage="init",
    prevents="mamba_track_interval ({mamba_track_interval}) must be >= mamba_chunk_size ({mamba_chunk_size})",
    source="sglang: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py, Mamba2AttnBackend.__init__",
    docs="""Checks that a Nemotron-H or Falcon-H1 model (whose SSM layers run SGLang's Mamba2 backend) on the
extra-buffer Mamba radix cache (`--mamba-radix-cache-strategy extra_buffer`, or SGLang's auto choice with
overlap scheduling on) keeps `--mamba-track-interval` (256 by default) at least its `mamba_chunk_size`
(config.json, Nemotron-H's older `chunk_size`, else 256).

The Mamba2 backend snapshots the SSM state at chunk boundaries; it asserts the interval when the model
runner builds it. It also asserts the conv state (conv_kernel - 1, 3 in the released configs) below the
chunk, which holds for every chunk size these configs carry (128, 256) and is not read here.""",
    fix_title="Raise --mamba-track-interval to the model's mamba_chunk_size (or leave it at 256)",
)
def model_mamba2_track_interval(cfg, target):
    arch = _arch(cfg)
    if arch not in backend_kb.MAMBA2_BACKEND_ARCHITECTURES:
        return skipped("applies to Nemotron-H and Falcon-H1 (the Mamba2 backend)")
    if cfg.flags.get("disable_radix_cache"):
        return skipped("--disable-radix-cache: no Mamba extra buffer")
    strategy = _mamba_strategy(cfg)
    if strategy not in backend_kb.MAMBA_EXTRA_BUFFER_STRATEGIES or not _extra_buffer_supported(cfg):
        return skipped("applies to the Mamba extra buffer")
    model = cfg.model
    chunk = backend_kb.mamba_chunk_size(arch, model.mamba_chunk_size, model.ssm_chunk_size)
    track = cfg.flags.get("mamba_track_interval") or backend_kb.MAMBA_TRACK_INTERVAL_DEFAULT
    found = f"{strategy} with --mamba-track-interval {track}, mamba_chunk_size {chunk}"
    required = f"--mamba-track-interval >= {chunk}"
    if track >= chunk:
        return passed(found, required)
    page = cfg.page_size or 1
    return failed(found, required, [f"--mamba-track-interval {-(-chunk // page) * page}"])


ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
LINEAR_VERIFY_CHECK_FROM = Version("0.5.17")  # the verify-backend twin of the decode check


def _linear_attn(cfg, phase: str) -> str:
    """The linear-attention (GDN/KDA) kernel backend of a phase: its own flag, else --linear-attn-backend (triton)."""
    return cfg.flags.get(f"linear_attn_{phase}_backend") or cfg.flags.get("linear_attn_backend") or "triton"


@rule(
    id="model-linear-attn-flashinfer-ssm-dtype",
    title="FlashInfer linear-attention decode / verify on SM100+ needs --mamba-ssm-dtype bfloat16",
    engine="sglang",
    versions="sglang>=0.5.10",
    needs_gpu=True,
    stage="startup",
    prevents="--linear-attn-decode-backend flashinfer on SM100+ requires --mamba-ssm-dtype bfloat16, got "
    "{mamba_ssm_dtype!r}",
    source=f"{ATTENTION_HOOK}, handle_linear_attn_backend",
    docs="""Checks that FlashInfer's linear-attention (GDN/KDA) decode kernels on a compute capability 10.x or
newer GPU get `--mamba-ssm-dtype bfloat16`: `--linear-attn-decode-backend flashinfer` (or
`--linear-attn-backend flashinfer`), and from 0.5.17 the target-verify backend, which follows decode
when not given.

FlashInfer's SM100+ GDN decode keeps its recurrent state in bfloat16 (SM90 uses float32). SGLang refuses
any other --mamba-ssm-dtype at start-up, including none: the flag is not filled from the model's config
before this check. (SGLang itself picks flashinfer decode on SM100 only when bfloat16 is given.)""",
    fix_title="Add --mamba-ssm-dtype bfloat16, or use --linear-attn-decode-backend triton",
)
def model_linear_attn_flashinfer_ssm_dtype(cfg, target):
    if target.major < 10:
        return skipped("applies to compute capability 10.x and newer")
    decode = _linear_attn(cfg, "decode")
    verify = cfg.flags.get("linear_attn_verify_backend") or ("flashinfer" if decode == "flashinfer" else None)
    phases = ["decode"] if decode == "flashinfer" else []
    if verify == "flashinfer" and sglang_release(target) >= LINEAR_VERIFY_CHECK_FROM and decode != "flashinfer":
        phases.append("verify")
    if not phases:
        return skipped("applies to FlashInfer linear-attention decode or verify")
    dtype = cfg.flags.get("mamba_ssm_dtype")
    found = f"linear-attention {' and '.join(phases)} on flashinfer, --mamba-ssm-dtype {dtype or '(not given)'}"
    if dtype == "bfloat16":
        return passed(found, "--mamba-ssm-dtype bfloat16")
    return failed(f"{found} on {gpu(target)}", "--mamba-ssm-dtype bfloat16", ["--mamba-ssm-dtype bfloat16"])


@rule(
    id="model-linear-attn-flashinfer-cuda13",
    title="FlashInfer linear-attention prefill on SM100+ needs a CUDA 13 torch",
    engine="sglang",
    versions="sglang>=0.5.13",
    needs_gpu=True,
    needs_software=True,
    stage="startup",
    prevents="--linear-attn-prefill-backend flashinfer on SM100+ requires CUDA 13+, got CUDA {cuda_version}",
    source=f"{ATTENTION_HOOK}, handle_linear_attn_backend",
    docs="""Checks that FlashInfer's linear-attention (GDN) prefill (`--linear-attn-prefill-backend flashinfer`,
or `--linear-attn-backend flashinfer`) on a compute capability 10.x or newer GPU runs with a torch built
for CUDA 13 or newer.

The SM100+ GDN prefill kernel is a CuTe DSL kernel that needs CUDA 13; SGLang reads torch.version.cuda
and refuses an older build at start-up. Judged on the probed torch (a live probe or --facts).""",
    fix_title="Install a CUDA 13 torch (cu130), or use --linear-attn-prefill-backend triton",
)
def model_linear_attn_flashinfer_cuda13(cfg, target):
    if target.major < 10:
        return skipped("applies to compute capability 10.x and newer")
    if _linear_attn(cfg, "prefill") != "flashinfer":
        return skipped("applies to FlashInfer linear-attention prefill")
    cuda = target.facts.torch.cuda if target.facts is not None else None
    version = cuda_version(cuda)
    found = f"linear-attention prefill on flashinfer with torch CUDA {cuda or 'unknown'} on {gpu(target)}"
    if version is not None and version.major >= 13:
        return passed(found, "torch CUDA 13+")
    return failed(found, "torch CUDA 13+", ["--linear-attn-prefill-backend triton"])


# attention_hook.py handle_linear_attn_backend: on SM100 with --mamba-ssm-dtype bfloat16 and no decode backend
# named, linear-attention decode defaults to flashinfer (server_args.py from 0.5.11; 0.5.23 :285-307).
LINEAR_FLASHINFER_DECODE_DEFAULT_FROM = Version("0.5.11")
REPLAYSSM_DECODE = ((Version("0.5.18"), ("triton", "helion")), (Version("0.5.15"), ("triton",)))
REPLAYSSM_NO_EXTRA_BUFFER_FROM = Version("0.5.16")
REPLAYSSM_SPEC_FROM = Version("0.5.17")
REPLAYSSM_SPEC_DECODE = ("triton", "flashinfer")
# SGLANG_RAGGED_VERIFY_MODE (speculative/ragged_verify.py RaggedVerifyMode; environ.py default "static"): a ragged
# mode needs the KDA fold-every-commit algorithms and a ring-writing verify kernel, named by the flag itself
REPLAYSSM_CACHE_LEN_DEFAULT = 16  # fields/exec_.py linear_replayssm_cache_len, 0.5.15-0.5.23
RAGGED_VERIFY_MODES = ("static", "cap-accept", "compact")
RAGGED_VERIFY_ALGORITHMS = ("DSPARK", "DFLASH")
RAGGED_VERIFY_KERNELS = ("triton", "nv_cutedsl")


def _linear_decode(cfg, target) -> str:
    """The linear-attention decode backend SGLang settles on (its SM100 flashinfer default included)."""
    if (
        cfg.flags.get("linear_attn_decode_backend") is None
        and cfg.flags.get("linear_attn_backend") != "helion"
        and target.major == 10
        and cfg.flags.get("mamba_ssm_dtype") == "bfloat16"
        and sglang_release(target) >= LINEAR_FLASHINFER_DECODE_DEFAULT_FROM
    ):
        return "flashinfer"
    return _linear_attn(cfg, "decode")


@rule(
    id="model-linear-replayssm",
    title="--enable-linear-replayssm(-spec): the linear-attention decode backend, draft shape and serving mode they "
    "need",
    engine="sglang",
    versions="sglang>=0.5.15",
    needs_gpu=True,
    stage="startup",
    prevents="--enable-linear-replayssm requires Triton, or Helion for KDA, as the linear-attn decode backend; got "
    "--linear-attn-decode-backend={decode!r}; --enable-linear-replayssm is not supported under PD "
    "disaggregation yet (follow-up); --linear-replayssm-cache-len must be >= 1; --enable-linear-replayssm-spec "
    "with SGLANG_RAGGED_VERIFY_MODE={mode} requires the KDA fold-every-commit family (DSPARK/DFLASH) and a "
    "ring-writing verify kernel; invalid SGLANG_RAGGED_VERIFY_MODE={value!r}; expected one of 'static', "
    "'cap-accept', 'compact'; --enable-linear-replayssm-spec is not supported on a PD prefill server",
    source=f"{ATTENTION_HOOK}, handle_linear_attn_backend",
    docs="""Checks the ReplaySSM options of hybrid linear-attention models: `--enable-linear-replayssm` needs a
triton linear-attention decode backend (or helion, for KDA, from 0.5.18), no
`--mamba-radix-cache-strategy extra_buffer` / `extra_buffer_lazy` (from 0.5.16), no PD disaggregation
(`--disaggregation-mode` prefill or decode) and a `--linear-replayssm-cache-len` of at least 1;
`--enable-linear-replayssm-spec` (from 0.5.17) needs a linear draft chain (`--speculative-eagle-topk` 1
or unset), a triton or flashinfer decode backend, with `SGLANG_RAGGED_VERIFY_MODE` other than `static`
the DSPARK or DFLASH algorithm and `--linear-attn-verify-backend` triton or nv_cutedsl (named: SGLang reads
the flag, not its default), no PD prefill server, and is not combined with the first.

The decode backend is SGLang's: on SM100 with `--mamba-ssm-dtype bfloat16` and no decode backend named
it is flashinfer. The disaggregated decode pool is not wired for the ReplaySSM ring, a ragged verify
layout needs a kernel that writes the ring, and a prefill server never runs spec verify: SGLang refuses
each at start-up. Not judged: the `auto` strategy resolving to extra_buffer.""",
    fix_title="Pass --linear-attn-decode-backend triton (and --speculative-eagle-topk 1 for the -spec option); "
    "drop the option on a PD server",
)
def model_linear_replayssm(cfg, target):
    release = sglang_release(target)
    replay = cfg.flags.get("enable_linear_replayssm")
    spec = cfg.flags.get("enable_linear_replayssm_spec") and release >= REPLAYSSM_SPEC_FROM
    if not replay and not spec:
        return skipped("applies to --enable-linear-replayssm or --enable-linear-replayssm-spec")
    decode = _linear_decode(cfg, target)
    pd_mode = cfg.flags.get("disaggregation_mode") or "null"
    if replay:
        allowed = next(backends for since, backends in REPLAYSSM_DECODE if release >= since)
        strategy = cfg.flags.get("mamba_radix_cache_strategy")
        cache_len = cfg.flags.get("linear_replayssm_cache_len")
        required = f"linear-attention decode {' or '.join(allowed)}, no extra_buffer strategy, no PD disaggregation"
        if decode not in allowed:
            return failed(
                f"--enable-linear-replayssm with linear-attention decode {decode}",
                required,
                ["--linear-attn-decode-backend triton"],
            )
        if strategy in ("extra_buffer", "extra_buffer_lazy") and release >= REPLAYSSM_NO_EXTRA_BUFFER_FROM:
            return failed(
                f"--enable-linear-replayssm with --mamba-radix-cache-strategy {strategy}",
                required,
                ["--mamba-radix-cache-strategy no_buffer"],
            )
        if pd_mode != "null":
            return failed(f"--enable-linear-replayssm with --disaggregation-mode {pd_mode}", required)
        if cache_len is not None and cache_len < 1:
            return failed(
                f"--enable-linear-replayssm with --linear-replayssm-cache-len {cache_len}",
                f"{required}, a cache length of at least 1",
                [f"--linear-replayssm-cache-len {REPLAYSSM_CACHE_LEN_DEFAULT}"],
            )
        if not spec:
            return passed(f"--enable-linear-replayssm with linear-attention decode {decode}", required)
    required = f"a linear draft chain (top-k 1), linear-attention decode {' or '.join(REPLAYSSM_SPEC_DECODE)}"
    if cfg.speculative_eagle_topk not in (None, 1):
        return failed(
            f"--enable-linear-replayssm-spec with --speculative-eagle-topk {cfg.speculative_eagle_topk}",
            required,
            ["--speculative-eagle-topk 1"],
        )
    if decode not in REPLAYSSM_SPEC_DECODE:
        return failed(
            f"--enable-linear-replayssm-spec with linear-attention decode {decode}",
            required,
            ["--linear-attn-decode-backend triton"],
        )
    ragged = _ragged_verify(cfg)
    if ragged is not None:
        return ragged
    if pd_mode == "prefill":
        return failed("--enable-linear-replayssm-spec on a PD prefill server", f"{required}, not a PD prefill server")
    if replay:
        return failed("--enable-linear-replayssm-spec with --enable-linear-replayssm", f"{required}, one of the two")
    return passed(f"--enable-linear-replayssm-spec with linear-attention decode {decode}", required)


def _ragged_verify(cfg):
    """The failure of --enable-linear-replayssm-spec under SGLANG_RAGGED_VERIFY_MODE, if any."""
    mode = ragged_verify_mode(cfg)
    static = f"{RAGGED_VERIFY_ENV}=static"
    if mode not in RAGGED_VERIFY_MODES:
        return failed(f"{RAGGED_VERIFY_ENV}={mode}", f"one of {', '.join(RAGGED_VERIFY_MODES)}", [static])
    algorithm = (cfg.speculative_algorithm or "").upper()
    verify = cfg.flags.get("linear_attn_verify_backend")
    if mode == "static" or (algorithm in RAGGED_VERIFY_ALGORITHMS and verify in RAGGED_VERIFY_KERNELS):
        return None
    return failed(
        f"--enable-linear-replayssm-spec with {RAGGED_VERIFY_ENV}={mode}, algorithm {algorithm or 'none'}, "
        f"--linear-attn-verify-backend {verify or 'not named'}",
        f"{static}, or algorithm {' or '.join(RAGGED_VERIFY_ALGORITHMS)} with --linear-attn-verify-backend "
        f"{' or '.join(RAGGED_VERIFY_KERNELS)}",
        [static],
    )
