"""SGLang's unified memory pool (--enable-unified-memory) and the page-major KV layout it turns on:
the backends, speculative decoding, CUDA graphs and PD disaggregation it admits (its refused features and its DCP
terms are rows: attn_preflight.rules.engines.sglang.constraints.unified_memory).
"""

from __future__ import annotations

from typing import Optional

from packaging.version import Version

from attn_preflight.rules.checks.common import (
    env_true,
    sglang_release,
    speculative,
)
from attn_preflight.rules.core import jsontext
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.knowledge.parallel import DEFAULT_TRANSFER_BACKEND

# --- unified memory and the page-major KV layout ------------------------------------------------------------


def _unified_memory(cfg) -> bool:
    return bool(cfg.flags.get("enable_unified_memory"))


def _outside_of(cfg, allowed) -> list[str]:
    return sorted(b for b in cfg.backends if b not in allowed)


@rule(
    id="kv-page-major-backends",
    title="The page-major KV layout (and so --enable-unified-memory) admits only stride-aware backends",
    engine="sglang",
    versions="sglang>=0.5.19",
    stage="startup",
    prevents="--enable-page-major-kv-layout: the resolved attention backends {backends} are not in the allowed set "
    "{allowed_full} for this configuration. Pass a compatible --attention-backend.",
    source=backend_kb.PAGE_MAJOR_SOURCE,
    docs="""Checks `--enable-page-major-kv-layout` and `--enable-unified-memory` (which turns the page-major layout
on): page-major needs unified memory, and the resolved prefill and decode backends must be in SGLang's
allow-list: triton, fa3, trtllm_mla, flashinfer, cutedsl_mla, flashmla for MLA models; triton, fa3, fa4,
flashinfer, trtllm_mha for the rest; triton, fa3, fa4 when K and V head dims differ (from 0.5.23; earlier
releases refuse such a model under unified memory).

In the page-major layout one page holds every layer's K/V, so a slot's stride is the whole entry; only
backends whose kernels address the per-layer views by their strides read it correctly, and SGLang refuses
the others at start-up. (The linear-attention and Mamba kernels have their own list:
kv-page-major-linear-attn.)""",
    fix_title="Use --attention-backend triton (or another backend of the list)",
)
def kv_page_major_backends(cfg, target):
    page_major = bool(cfg.flags.get("enable_page_major_kv_layout"))
    if not (page_major or _unified_memory(cfg)):
        return skipped("applies to --enable-page-major-kv-layout or --enable-unified-memory")
    if not _unified_memory(cfg):
        return failed(
            "--enable-page-major-kv-layout without --enable-unified-memory",
            "--enable-unified-memory with it",
            ["--enable-unified-memory"],
        )
    if cfg.attention_backend is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    release = sglang_release(target)
    asymmetric = "asymmetric_kv" in cfg.features and not cfg.mla
    if asymmetric and release < backend_kb.PAGE_MAJOR_ASYMMETRIC_KV_FROM:
        return failed(
            f"--enable-unified-memory with K/V head dims that differ, sglang {release}",
            f"equal K/V head dims before sglang {backend_kb.PAGE_MAJOR_ASYMMETRIC_KV_FROM}",
        )
    if cfg.mla:
        allowed = backend_kb.PAGE_MAJOR_MLA_BACKENDS
        if release < backend_kb.TOKENSPEED_MLA_ALIAS_FROM:
            allowed = backend_kb.PAGE_MAJOR_MLA_BEFORE_ALIAS
    elif asymmetric:
        allowed = backend_kb.PAGE_MAJOR_ASYMMETRIC_KV_BACKENDS
    else:
        allowed = backend_kb.PAGE_MAJOR_MHA_BACKENDS
    required = f"prefill and decode in {', '.join(allowed)}"
    outside = _outside_of(cfg, allowed)
    if not outside:
        return passed(f"the page-major layout on {cfg.backend_label()}", required)
    return failed(f"the page-major layout on {', '.join(outside)}", required, ["--attention-backend triton"])


@rule(
    id="kv-page-major-linear-attn",
    title="The page-major KV layout (and so --enable-unified-memory) admits only stride-aware linear-attention and "
    "Mamba kernels",
    engine="sglang",
    versions="sglang>=0.5.19",
    stage="startup",
    prevents="--enable-page-major-kv-layout: linear-attention DECODE backend must be one of {decode_allowed} for the "
    "strided conv/SSM state; got {resolved_linear_decode!r}.",
    source=backend_kb.PAGE_MAJOR_SOURCE,
    docs="""Checks the linear-attention (GDN/KDA) and Mamba kernels under `--enable-page-major-kv-layout` or
`--enable-unified-memory` (which turns the page-major layout on): the decode backend
(`--linear-attn-decode-backend`, else `--linear-attn-backend`) must be triton or flashinfer, the prefill
backend triton, flashkda or (from 0.5.23) flashinfer, MLA models (the KDA hybrids Kimi-Linear and
Kimi-K3) may use cutedsl and helion for both, and `--mamba-backend` must be triton or unset.

The page-major layout stores the conv/SSM state in strided views; only kernels audited for those strides
read it correctly. SGLang asserts the flags whatever the model, so a launch that names another kernel is
refused at start-up even when the model has no linear-attention layers.""",
    fix_title="Use --linear-attn-backend triton and --mamba-backend triton",
)
def kv_page_major_linear_attn(cfg, target):
    if not (cfg.flags.get("enable_page_major_kv_layout") or _unified_memory(cfg)):
        return skipped("applies to --enable-page-major-kv-layout or --enable-unified-memory")
    release = sglang_release(target)
    mla_extra = backend_kb.PAGE_MAJOR_LINEAR_MLA_BACKENDS if cfg.mla else ()
    decode_allowed = (*backend_kb.PAGE_MAJOR_LINEAR_DECODE_BACKENDS, *mla_extra)
    prefill_allowed = (*backend_kb.PAGE_MAJOR_LINEAR_PREFILL_BACKENDS, *mla_extra)
    if release >= backend_kb.PAGE_MAJOR_LINEAR_PREFILL_FLASHINFER_FROM:
        prefill_allowed = (*prefill_allowed, "flashinfer")
    default = cfg.flags.get("linear_attn_backend")
    phases = (
        ("decode", cfg.flags.get("linear_attn_decode_backend") or default, decode_allowed),
        ("prefill", cfg.flags.get("linear_attn_prefill_backend") or default, prefill_allowed),
    )
    problems, fix = [], []
    for phase, backend, allowed in phases:
        if backend not in (None, *allowed):
            problems.append(f"linear-attention {phase} {backend}")
            fix.append(f"--linear-attn-{phase}-backend triton")
    mamba = cfg.flags.get("mamba_backend")
    if mamba not in (None, backend_kb.PAGE_MAJOR_MAMBA_BACKEND):
        problems.append(f"--mamba-backend {mamba}")
        fix.append(f"--mamba-backend {backend_kb.PAGE_MAJOR_MAMBA_BACKEND}")
    required = (
        f"linear-attention decode in {', '.join(decode_allowed)}, prefill in {', '.join(prefill_allowed)}, "
        "--mamba-backend triton"
    )
    if not problems:
        found = ", ".join(f"linear-attention {phase} {backend or 'triton'}" for phase, backend, _ in phases)
        return passed(f"the page-major layout with {found}", required)
    return failed(f"the page-major layout with {', '.join(problems)}", required, [" ".join(fix)])


@rule(
    id="kv-unified-memory-speculative",
    title="--enable-unified-memory with speculative decoding: EAGLE/EAGLE3/DSPARK/DFLASH, a linear chain, audited "
    "backends",
    engine="sglang",
    versions="sglang>=0.5.23",
    stage="startup",
    prevents="--enable-unified-memory + EAGLE/EAGLE3 requires the target on the spec-verify-audited attention "
    "backends {eagle_allowed} (got {eagle_backends}).",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE}, _assert_spec_verify_backends",
    docs="""Checks speculative decoding with `--enable-unified-memory`: the algorithm is EAGLE, EAGLE3, DSPARK or
DFLASH; the draft is a linear chain (`--speculative-eagle-topk` 1 or unset); EAGLE/EAGLE3 needs a
hybrid target (sliding-window or Mamba layers: its draft lives inside the target's entries), target
backends among triton/flashinfer/fa3/trtllm_mha (MLA: triton, trtllm_mla, cutedsl_mla, flashmla,
flashinfer, fa3) and a draft backend among triton/flashinfer/fa3/trtllm_mha; DSPARK's backends among the
MLA list plus fa4, DFLASH's among triton/flashinfer/fa3/trtllm_mha; with `--dcp-size` > 1 flashinfer is
not audited for DSPARK/DFLASH verify.

The unified pool hands out virtual KV ids; only these paths translate speculative verify indices to
physical ones, and SGLang asserts the rest at start-up. A model whose every layer is windowed counts as
hybrid here (SGLang's is_hybrid_swa does not).""",
    fix_title="Use EAGLE on a hybrid model with fa3/flashinfer/triton, top-k 1; or drop --enable-unified-memory",
)
def kv_unified_memory_speculative(cfg, target):
    algorithm = (cfg.speculative_algorithm or "").upper()
    if not _unified_memory(cfg) or not algorithm:
        return skipped("applies to speculative decoding with --enable-unified-memory")
    if algorithm not in backend_kb.UNIFIED_MEMORY_SPEC_ALGORITHMS:
        return failed(
            f"--speculative-algorithm {algorithm} with --enable-unified-memory",
            f"one of {', '.join(backend_kb.UNIFIED_MEMORY_SPEC_ALGORITHMS)}",
            ["--speculative-algorithm EAGLE"],
        )
    if cfg.speculative_eagle_topk not in (None, 1):
        return failed(
            f"--speculative-eagle-topk {cfg.speculative_eagle_topk} with --enable-unified-memory",
            "a linear draft chain (top-k 1)",
            ["--speculative-eagle-topk 1"],
        )
    if cfg.attention_backend is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    dcp = (cfg.flags.get("dcp_size") or 1) > 1
    if algorithm in ("EAGLE", "EAGLE3"):
        if cfg.model is None:
            return unknown("EAGLE with --enable-unified-memory needs a hybrid target: give --model")
        if "sliding_window" not in cfg.features and not cfg.model.hybrid_linear:
            return failed(
                f"{algorithm} with --enable-unified-memory on {cfg.model.name} (no sliding-window or Mamba layers)",
                "a hybrid-SWA or Mamba-hybrid target",
            )
        allowed = backend_kb.UNIFIED_SPEC_VERIFY_BACKENDS if cfg.mla else backend_kb.UNIFIED_SPEC_MHA_BACKENDS
        draft = {cfg.draft_attention_backend} if cfg.draft_attention_backend else set(cfg.backends)
        draft_outside = sorted(b for b in draft if b not in backend_kb.UNIFIED_SPEC_MHA_BACKENDS)
    else:
        allowed = backend_kb.UNIFIED_DSPARK_BACKENDS if algorithm == "DSPARK" else backend_kb.UNIFIED_SPEC_MHA_BACKENDS
        if dcp:
            allowed = tuple(b for b in allowed if b != "flashinfer")
        draft_outside = []
    required = f"target backends in {', '.join(allowed)}"
    outside = _outside_of(cfg, allowed)
    if outside:
        return failed(
            f"{algorithm} with --enable-unified-memory on {', '.join(outside)}", required, ["--attention-backend fa3"]
        )
    if draft_outside:
        return failed(
            f"{algorithm} draft on {', '.join(draft_outside)} with --enable-unified-memory",
            f"a draft backend in {', '.join(backend_kb.UNIFIED_SPEC_MHA_BACKENDS)}",
            ["--speculative-draft-attention-backend triton"],
        )
    return passed(f"{algorithm} with --enable-unified-memory on {cfg.backend_label()}", required)


def _full_prefill_graph_source(cfg) -> Optional[str]:
    """Where SGLang's prefill CUDA-graph backend FULL comes from, if it is FULL: --cuda-graph-config (JSON, first),
    --cuda-graph-backend-prefill, or Inkling's default when neither that flag nor --disable-prefill-cuda-graph
    is given."""
    try:
        graphs = jsontext.loads(cfg.flags.get("cuda_graph_config") or "{}")
    except ValueError:
        graphs = {}
    prefill = graphs.get("prefill") if isinstance(graphs, dict) else None
    if isinstance(prefill, dict) and "backend" in prefill:
        return "--cuda-graph-config" if prefill["backend"] == "full" else None
    named = cfg.flags.get("cuda_graph_backend_prefill")
    if named is not None:
        return "--cuda-graph-backend-prefill full" if named == "full" else None
    architecture = cfg.model.architecture if cfg.model else None
    if architecture in backend_kb.INKLING_FULL_PREFILL_GRAPH_ARCHITECTURES and not cfg.flags.get(
        "disable_prefill_cuda_graph"
    ):
        return f"{architecture}'s default"
    return None


@rule(
    id="kv-unified-memory-full-prefill-graph",
    title="--enable-unified-memory switches the FULL prefill CUDA graph off unless attention is fa3/fa4",
    engine="sglang",
    versions="sglang>=0.5.20",
    stage="startup",
    reason="SGLang replaces the FULL prefill CUDA graph asked for (or Inkling's default) with eager prefill, "
    "logging a warning only, so the server runs without the prefill graph the launch line names.",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE} (the FULL prefill cuda-graph fallback)",
    docs="""Warns when `--enable-unified-memory` makes SGLang switch off a FULL prefill CUDA graph: FULL from
`--cuda-graph-config` (`{"prefill": {"backend": "full"}}`, which wins), `--cuda-graph-backend-prefill full`,
or Inkling's model default (unless `--cuda-graph-backend-prefill` or `--disable-prefill-cuda-graph` is
given), with a prefill or decode attention backend other than fa3 or fa4.

FULL prefill capture builds its block table in a metadata path only the FlashAttention backends have; the
other backends' graph path has no extend branch, so SGLang runs prefill eagerly instead (decode capture is
unaffected). Naming `--cuda-graph-backend-prefill disabled` (or fa3 / fa4) makes the launch line say what
runs. Not modelled: other start-up steps that switch prefill capture off before this one (DSA prefill context
parallelism, Qwen4-Exp CP-TP sharing).""",
    fix_title="Pass --cuda-graph-backend-prefill disabled (what SGLang runs), or serve with fa3 / fa4",
)
def kv_unified_memory_full_prefill_graph(cfg, target):
    if not _unified_memory(cfg):
        return skipped("applies to --enable-unified-memory")
    source = _full_prefill_graph_source(cfg)
    if source is None:
        return skipped("applies to a FULL prefill CUDA graph")
    if cfg.attention_backend in backend_kb.NO_CUDA_GRAPH_BACKENDS or cfg.flags.get("enable_mis"):
        return skipped("CUDA graphs are already off (torch_native / flex_attention backend, or --enable-mis)")
    if not cfg.backends:
        return unknown("no attention backend chosen and none can be derived for this target")
    required = f"attention {' or '.join(backend_kb.FULL_PREFILL_GRAPH_BACKENDS)} for a FULL prefill graph"
    outside = _outside_of(cfg, backend_kb.FULL_PREFILL_GRAPH_BACKENDS)
    if not outside:
        return passed(f"FULL prefill graph ({source}) on {cfg.backend_label()}", required)
    fix = [] if source == "--cuda-graph-config" else ["--cuda-graph-backend-prefill disabled"]
    return warned(
        f"FULL prefill graph ({source}) with --enable-unified-memory on {', '.join(outside)} (SGLang runs prefill "
        "without a CUDA graph)",
        required,
        fix,
    )


LAZY_COMPACTION_ENV = "SGLANG_DISABLE_LAZY_COMPACTION"
UNIFIED_PD_TRANSFER_BACKENDS = ("mooncake",)  # server_args.py _unified_memory_pd_transfer_backends, 0.5.21-0.5.23
# handle_unified_memory_pool's PD checks added in 0.5.21 (kv_cache_hook.py:496-545): Mooncake with a speculative
# algorithm, and the decode host pools' model limits (0.5.21 also refuses hybrid-SWA with the host_pool backup)
UNIFIED_PD_HOST_POOLS_FROM = Version("0.5.21")
UNIFIED_HOST_POOL_SWA_UNTIL = Version("0.5.22")
# What a decode host pool's H2D/D2H copies cannot translate under the unified pool (use_mla_backend, mambaish_config,
# model_config.is_hybrid_swa)
HOST_POOL_MODEL_KINDS = {
    "mla": "MLA",
    "hybrid_linear": "Mamba / linear-attention layers",
    "sliding_window": "sliding-window layers",
}


def _host_pool_model_kinds(cfg) -> set[str]:
    model = cfg.model
    on = {"mla": cfg.mla, "hybrid_linear": model.hybrid_linear, "sliding_window": "sliding_window" in cfg.features}
    return {kind for kind, present in on.items() if present}


@rule(
    id="kv-unified-memory-pd",
    title="--enable-unified-memory with PD disaggregation: Mooncake without speculation, no PP, lazy compaction, no "
    "HiSparse; decode host pools on plain models",
    engine="sglang",
    versions="sglang>=0.5.18",
    stage="startup",
    prevents="--enable-unified-memory with PD disaggregation supports only these transfer backends: mooncake; got "
    "{backend!r}.; --enable-unified-memory with PD disaggregation does not support pipeline parallelism "
    "(whole-envelope transfer has no per-layer entries to subset).; --enable-unified-memory with PD "
    "disaggregation does not support speculative decoding with the Mooncake transfer backend.; "
    "--enable-unified-memory with PD disaggregation requires lazy compaction; unset SGLANG_DISABLE_LAZY_COMPACTION.; "
    "--enable-unified-memory with PD disaggregation is not compatible with --enable-hisparse: ...; "
    "--enable-unified-memory with decode KV offload currently supports --hicache-storage-backend=file only.; "
    "--enable-unified-memory decode KV offload does not support MLA models yet.; ... does not support hybrid-Mamba "
    "models.; ... does not support hybrid-SWA H2D/D2H transfers yet.; --enable-unified-memory host-pool decode "
    "retraction does not support hybrid-Mamba models.",
    source=f"{backend_kb.UNIFIED_MEMORY_SOURCE} (PD disaggregation)",
    docs="""Checks `--enable-unified-memory` on a PD server (`--disaggregation-mode` prefill or decode): the transfer
backend is mooncake, `--pp-size` is 1, SGLANG_DISABLE_LAZY_COMPACTION is not set, `--enable-hisparse` is not
given, and from 0.5.21 no speculative algorithm rides Mooncake; decode KV offload
(`--disaggregation-decode-enable-offload-kvcache`) takes `--hicache-storage-backend file` and a model with no
MLA, Mamba / linear or sliding-window layers; the host_pool retraction backup a model with no Mamba / linear
layers (0.5.21: no sliding-window layers either).

PD ships the unified pool's whole entries (every layer's K/V of a slot) in one transfer, which only Mooncake's
path implements and which has no per-layer subset for pipeline stages; its ids are virtual, and the HiSparse
prealloc path, a draft's KV and the host pools' H2D/D2H copies of MLA, Mamba and SWA rows do not translate
them. SGLang asserts each at start-up. A model whose every layer is windowed counts as hybrid-SWA here. The
0.5.21 refusal of the decode radix cache under the host_pool backup reads a flag this tool does not model.""",
    fix_title="Use --disaggregation-transfer-backend mooncake, --pp-size 1, no speculative decoding or HiSparse (or "
    "drop --enable-unified-memory)",
)
def kv_unified_memory_pd(cfg, target):
    flags = cfg.flags
    mode = flags.get("disaggregation_mode") or "null"
    if not _unified_memory(cfg) or mode == "null":
        return skipped("applies to --enable-unified-memory with PD disaggregation")
    release = sglang_release(target)
    transfer = flags.get("disaggregation_transfer_backend") or DEFAULT_TRANSFER_BACKEND
    problems, fix = [], []
    if transfer not in UNIFIED_PD_TRANSFER_BACKENDS:
        problems.append(f"--disaggregation-transfer-backend {transfer}")
        fix.append("--disaggregation-transfer-backend mooncake")
    if cfg.pp_size > 1:
        problems.append(f"--pp-size {cfg.pp_size}")
        fix.append("--pp-size 1")
    if release >= UNIFIED_PD_HOST_POOLS_FROM and speculative(cfg):
        problems.append(f"--speculative-algorithm {cfg.speculative_algorithm} over Mooncake")
    if env_true(cfg, LAZY_COMPACTION_ENV):
        problems.append(f"{LAZY_COMPACTION_ENV}={cfg.env[LAZY_COMPACTION_ENV]}")
        fix.append(f"unset {LAZY_COMPACTION_ENV}")
    if flags.get("enable_hisparse"):
        problems.append("--enable-hisparse")
    host_pool_limits = []
    if release >= UNIFIED_PD_HOST_POOLS_FROM and flags.get("disaggregation_decode_enable_offload_kvcache"):
        if flags.get("hicache_storage_backend") != "file":
            problems.append(f"decode KV offload to --hicache-storage-backend {flags.get('hicache_storage_backend')}")
            fix.append("--hicache-storage-backend file")
        host_pool_limits.append(("decode KV offload", ("mla", "hybrid_linear", "sliding_window")))
    if release >= UNIFIED_PD_HOST_POOLS_FROM and flags.get("disaggregation_decode_retraction_backup") == "host_pool":
        backup_limits = (
            ("hybrid_linear", "sliding_window") if release < UNIFIED_HOST_POOL_SWA_UNTIL else ("hybrid_linear",)
        )
        host_pool_limits.append(("the host_pool backup", backup_limits))
    if host_pool_limits and cfg.model is None:
        return unknown("the decode host pool's limits depend on the model (MLA, Mamba, sliding window): give --model")
    kinds = _host_pool_model_kinds(cfg) if host_pool_limits else set()
    problems.extend(
        f"{pool} on a model with {HOST_POOL_MODEL_KINDS[kind]}"
        for pool, limits in host_pool_limits
        for kind in limits
        if kind in kinds
    )
    required = "what the unified pool's whole-entry PD transfer supports"
    found = f"--enable-unified-memory on a PD {mode} server"
    if problems:
        return failed(f"{found} with {', '.join(problems)}", required, [" ".join(fix)] if fix else [])
    return passed(f"{found} over {transfer}", required)
