"""SGLang's KV-cache sharding (--enable-kv-cache-sharding): a PD prefill worker striping each cached page
across ranks; its backends, speculative decoding, shard group, page and chunk sizes and refused features (its
transfer backend, tree core and model attention are rows: attn_preflight.rules.engines.sglang.constraints.kv_sharding).
"""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import (
    attention_dp_size,
    chunked_prefill_per_rank,
    sglang_release,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang.resolve import (
    DSA_ARCHITECTURES,
    dsa_model,
    eagle_topk,
    effective_page_size,
)

KV_SHARD_HOOK = "sglang: python/sglang/srt/arg_groups/kv_shard_hook.py"
DSA_KV_SHARDING_FROM = Version("0.5.23")  # DSA models get their own requirements (the dsa backend)
# 0.5.23 admits one speculative shape with sharding (kv_shard_hook.py:105-118; 0.5.22 refuses any, :66-69):
# GLM-5's own single NextN layer as EAGLE (NEXTN is its alias by then), top-k 1, no multi-layer EAGLE
SHARDED_SPEC_FROM = Version("0.5.23")
SHARDED_SPEC_ARCHITECTURE = "GlmMoeDsaForCausalLM"


@rule(
    id="kv-sharding-backend",
    title="--enable-kv-cache-sharding needs an fa3 prefill, or trtllm_mla for a plain-TP MLA model",
    engine="sglang",
    versions="sglang>=0.5.22",
    stage="startup",
    prevents="--enable-kv-cache-sharding currently requires the fa3 prefill attention backend, or trtllm_mla for "
    "plain-TP MLA; got {prefill_backend!r}.",
    source=f"{KV_SHARD_HOOK}, validate_kv_shard_attention_backend",
    docs="""Checks the prefill backend of `--enable-kv-cache-sharding` (a PD prefill worker striping each cached page
across ranks): fa3, or trtllm_mla for an MLA model with `--attn-cp-size` 1 and chunked prefix caching on.

Only those prefill paths read a rank's stripe of each page; SGLang refuses the rest at start-up ("KV
sharding with trtllm_mla requires an MLA model.", "... only supports plain-TP MLA (attn_cp_size must be
1).", "... requires chunked prefix caching."). From 0.5.23 DSA models (DeepSeek V3.2, GLM-5) have their
own requirements on the dsa backend (kv-sharding-dsa); the serving mode is kv-sharding-prefill-worker's.""",
    fix_title="Use --prefill-attention-backend fa3 (SM90), or trtllm_mla for an MLA model on Blackwell",
)
def kv_sharding_backend(cfg, target):
    if not cfg.flags.get("enable_kv_cache_sharding"):
        return skipped("applies to --enable-kv-cache-sharding")
    architecture = cfg.model.architecture if cfg.model else None
    if architecture in DSA_ARCHITECTURES and sglang_release(target) >= DSA_KV_SHARDING_FROM:
        return skipped("DSA KV sharding has its own requirements on the dsa backend (kv-sharding-dsa)")
    prefill = cfg.prefill_backend
    if prefill is None:
        return unknown("no attention backend chosen and none can be derived for this target")
    required = "prefill fa3, or trtllm_mla for a plain-TP MLA model with chunked prefix caching"
    if prefill == "fa3":
        return passed("KV sharding with prefill fa3", required)
    if prefill != "trtllm_mla":
        return failed(f"KV sharding with prefill {prefill}", required, ["--prefill-attention-backend fa3"])
    if not cfg.mla:
        return failed(
            "KV sharding with prefill trtllm_mla on an MHA model", required, ["--prefill-attention-backend fa3"]
        )
    cp_size = cfg.flags.get("attn_cp_size") or 1
    if cp_size > 1:
        return failed(
            f"KV sharding with prefill trtllm_mla and --attn-cp-size {cp_size}", required, ["--attn-cp-size 1"]
        )
    if cfg.flags.get("disable_chunked_prefix_cache"):
        return failed("KV sharding with prefill trtllm_mla and --disable-chunked-prefix-cache", required)
    return passed("KV sharding with prefill trtllm_mla on a plain-TP MLA model", required)


@rule(
    id="kv-sharding-speculative",
    title="--enable-kv-cache-sharding with speculative decoding: only GLM-5's single NextN layer as EAGLE, top-k 1",
    engine="sglang",
    versions="sglang>=0.5.22",
    stage="startup",
    prevents="KV sharding supports speculative decoding only for GLM DSA single-layer NextN MTP with EAGLE and "
    "topk=1.; --enable-kv-cache-sharding does not support speculative decoding. (0.5.22)",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks speculative decoding with `--enable-kv-cache-sharding`: from 0.5.23 only EAGLE (or NEXTN) on a
GLM-5 checkpoint (GlmMoeDsaForCausalLM) with one NextN layer (`num_nextn_predict_layers` 1 in its
config.json), a top-k of 1 (given or SGLang's auto choice) and no `--enable-multi-layer-eagle`; 0.5.22 admits
no speculative decoding at all.

The prefill worker's draft-extend runs on the request's shard plan, wired only for that shape; SGLang refuses
the rest at start-up. A model whose config.json leaves out num_nextn_predict_layers is reported unknown.""",
    fix_title="Serve GLM-5's NextN layer with --speculative-algorithm EAGLE --speculative-eagle-topk 1, or no "
    "speculative decoding",
)
def kv_sharding_speculative(cfg, target):
    algorithm = (cfg.speculative_algorithm or "").upper()
    if not cfg.flags.get("enable_kv_cache_sharding") or not algorithm:
        return skipped("applies to speculative decoding with --enable-kv-cache-sharding")
    if sglang_release(target) < SHARDED_SPEC_FROM:
        return failed(
            f"KV sharding with --speculative-algorithm {algorithm}",
            f"no speculative decoding (sglang {sglang_release(target)})",
        )
    required = "EAGLE on GLM-5's single NextN layer (num_nextn_predict_layers 1), top-k 1, no multi-layer EAGLE"
    if algorithm not in ("EAGLE", "NEXTN"):
        return failed(
            f"KV sharding with --speculative-algorithm {algorithm}", required, ["--speculative-algorithm EAGLE"]
        )
    if cfg.model is None:
        return unknown("needs the model (GLM-5 and its NextN layers): give --model")
    if cfg.model.architecture != SHARDED_SPEC_ARCHITECTURE:
        return failed(f"KV sharding with {algorithm} on {cfg.model.architecture or cfg.model.name}", required)
    layers = cfg.model.num_nextn_predict_layers
    if layers is None:
        return unknown(f"{cfg.model.name}'s config.json does not give num_nextn_predict_layers")
    if layers != 1:
        return failed(f"KV sharding with {algorithm} on {cfg.model.name} ({layers} NextN layers)", required)
    topk = eagle_topk(cfg)
    if topk != 1:
        return failed(f"KV sharding with {algorithm} top-k {topk}", required, ["--speculative-eagle-topk 1"])
    if cfg.flags.get("enable_multi_layer_eagle"):
        return failed(f"KV sharding with {algorithm} and --enable-multi-layer-eagle", required)
    return passed(f"KV sharding with {algorithm} on {cfg.model.name}'s NextN layer, top-k 1", required)


def _sharding(cfg) -> bool:
    return bool(cfg.flags.get("enable_kv_cache_sharding"))


DSA_SHARDING_REFUSED_UNTIL = Version("0.5.23")  # 0.5.22: "does not support DSA models yet" (kv_shard_hook.py:187)


@rule(
    id="kv-sharding-shard-group",
    title="--enable-kv-cache-sharding needs ranks to stripe over: prefill CP for a GQA model, plain TP for MLA",
    engine="sglang",
    versions="sglang>=0.5.22",
    stage="startup",
    prevents="--enable-kv-cache-sharding for GQA models shards across attention-CP ranks and requires "
    "--enable-prefill-cp with attn_cp_size > 1.; --enable-kv-cache-sharding for MLA models without prefill CP "
    "shards across attention-TP ranks and needs tp_size > 1.; ... requires plain TP attention; set "
    "--attn-dp-size=1.; --enable-kv-cache-sharding does not support DSA models yet (indexer buffers are not "
    "striped). (0.5.22)",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` has a group of ranks to stripe each cached page over: for a
GQA / MHA model the attention-CP ranks (`--enable-prefill-cp` with `--attn-cp-size` > 1); for an MLA model
either those, or with `--attn-cp-size` 1 the attention-TP ranks (`--tp-size` > 1 and no attention DP).

The stripe is a rank's share of a page that the whole group otherwise replicates; with one rank, or with
attention-DP groups that each hold their own pages, there is nothing to share and SGLang refuses at start-up.
sglang 0.5.22 also refuses DSA models (DeepSeek-V3.2, GLM-5) here; 0.5.23 shards them under its own terms
(kv-sharding-dsa).""",
    fix_title="Add --enable-prefill-cp --attn-cp-size N (GQA), or serve the MLA model with --tp-size > 1 and no "
    "attention DP",
)
def kv_sharding_shard_group(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    if cfg.model is None:
        return unknown("needs the model (MLA or GQA decides the group): give --model")
    release = sglang_release(target)
    dsa = dsa_model(cfg, target)
    if dsa and release >= DSA_SHARDING_REFUSED_UNTIL:
        return skipped("DSA KV sharding has its own requirements on prefill CP (kv-sharding-dsa)")
    cp_size = cfg.flags.get("attn_cp_size") or 1
    prefill_cp = bool(cfg.flags.get("enable_prefill_cp")) and cp_size > 1
    if dsa:
        return failed(f"KV sharding of the DSA model {cfg.model.name}", f"a non-DSA model (sglang {release})")
    if not cfg.mla:
        required = "--enable-prefill-cp with --attn-cp-size > 1 (a GQA model shards over attention-CP ranks)"
        if prefill_cp:
            return passed(f"KV sharding over {cp_size} prefill-CP ranks", required)
        found = "--enable-prefill-cp" if cfg.flags.get("enable_prefill_cp") else "no prefill CP"
        return failed(
            f"KV sharding of GQA model {cfg.model.name} with {found}, --attn-cp-size {cp_size}",
            required,
            # attn_cp_size must divide tp_size (parallel_hook.py:157-163 in 0.5.23)
            [
                f"--enable-prefill-cp --cp-strategy interleave --attn-cp-size {cfg.tp_size}"
                if cfg.tp_size > 1
                else "--tp-size 2 --enable-prefill-cp --cp-strategy interleave --attn-cp-size 2"
            ],
        )
    required = "prefill CP > 1, or attention TP > 1 with no attention DP (an MLA model)"
    if cp_size > 1:
        return passed(f"KV sharding of MLA model {cfg.model.name} over {cp_size} attention-CP ranks", required)
    dp = attention_dp_size(cfg)
    if dp > 1:
        fix = ["--attn-dp-size 1"] if cfg.flags.get("attn_dp_size") else []
        return failed(f"KV sharding of MLA model {cfg.model.name} with attention DP {dp}", required, fix)
    if cfg.tp_size <= 1:
        return failed(f"KV sharding of MLA model {cfg.model.name} on --tp-size {cfg.tp_size}", required)
    return passed(f"KV sharding of MLA model {cfg.model.name} over {cfg.tp_size} attention-TP ranks", required)


SHARDED_PAGE = 64  # what SGLang's refusal recommends ("--page-size 64 recommended")


def _rounded_to(chunk: int, page: int) -> int:
    """The chunk size SGLang rounds a sharded chunk up to (kv_shard_hook.py:291 in 0.5.23)."""
    return -(-chunk // page) * page


@rule(
    id="kv-sharding-page-chunk",
    title="--enable-kv-cache-sharding needs a page size above 1 and chunked prefill; a chunk is rounded to pages",
    engine="sglang",
    versions="sglang>=0.5.22",
    stage="startup",
    prevents="--enable-kv-cache-sharding requires a real page size (--page-size 64 recommended): the physical page "
    "is the P/D transfer descriptor and gather-copy unit; page_size=1 degenerates both into per-token "
    "operations.; --enable-kv-cache-sharding requires chunked prefill (--chunked-prefill-size > 0).",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` runs on a page size above 1 (given, or the one the backend
snaps to) with chunked prefill on (no `--chunked-prefill-size` <= 0, no `--enable-mis`, which turns it off),
and warns when the chunk size is not a multiple of the page: SGLang rounds it up (and, when
`--mem-fraction-static` was not given, lowers the static memory fraction to pay for the larger chunk).

The physical page is the unit PD transfer and the gather copy move between ranks, and a chunk boundary must
fall on one; SGLang refuses page size 1 and unchunked prefill at start-up. Model-specific turn-offs of chunked
prefill (embedding models, multimodal models without chunked-prefill support, HRM-Text) are not read.""",
    fix_title="Add --page-size 64 and keep chunked prefill on, at a multiple of the page",
)
def kv_sharding_page_chunk(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    page = effective_page_size(cfg, target)
    # the hook runs after attention DP divides the chunk (pipeline.py:274-281 in 0.5.23): it sees each rank's share
    chunk = chunked_prefill_per_rank(cfg)
    dp = attention_dp_size(cfg)
    written = f"--chunked-prefill-size {cfg.flags.get('chunked_prefill_size')}" + (
        f" ({chunk} per attention-DP rank)" if dp > 1 else ""
    )
    required = "page size > 1 and --chunked-prefill-size > 0, a multiple of the page"
    if page <= 1:
        fix = f"--page-size {SHARDED_PAGE}"
        if chunk is not None and chunk > 0 and chunk % SHARDED_PAGE:
            fix += f" --chunked-prefill-size {_rounded_to(chunk, SHARDED_PAGE) * dp}"
        return failed(f"KV sharding on page size {page}", required, [fix])
    if cfg.flags.get("enable_mis"):
        return failed("KV sharding with --enable-mis (it turns chunked prefill off)", required)
    if chunk is not None and chunk <= 0:
        return failed(f"KV sharding with {written}", required, ["--chunked-prefill-size 8192"])
    if chunk is not None and chunk % page:
        rounded = _rounded_to(chunk, page)
        return warned(
            f"{written} on page size {page} (SGLang rounds it up to {rounded})",
            required,
            [f"--chunked-prefill-size {rounded * dp}"],
        )
    return passed(f"KV sharding on page size {page} with chunked prefill", required)


# handle_kv_cache_sharding's refusals of other KV-cache features, in its order: (dest, as the user wrote it)
SHARDING_REFUSED_FEATURES = (
    ("enable_unified_cache_external_linker", "--enable-unified-cache-external-linker"),
    ("enable_streaming_session", "--enable-streaming-session"),
    ("enable_session_radix_cache", "--enable-session-radix-cache"),
    ("enable_flexkv", "--enable-flexkv"),
    ("enable_unified_memory", "--enable-unified-memory"),
    ("enable_lmcache", "--enable-lmcache"),
    ("enable_hisparse", "--enable-hisparse"),
    ("enable_two_batch_overlap", "--enable-two-batch-overlap"),
)
SHARDED_HOST_OFFLOAD_FROM = Version("0.5.23")  # HiCache host offload allowed; 0.5.22 refuses any HiCache
# A sharded DSA model's HiCache (0.5.23): the host memory mode, I/O backend and layouts it takes, and SGLang's
# defaults for them (fields/memory.py)
SHARDED_DSA_HICACHE = {
    "hicache_host_memory_mode": ("cache",),
    "hicache_io_backend": ("kernel",),
    "hicache_mem_layout": ("layer_first", "page_first"),
}
HICACHE_DEFAULTS = {
    "hicache_host_memory_mode": "cache",
    "hicache_io_backend": "kernel",
    "hicache_mem_layout": "page_first",
}


def _sharding_refusals(cfg, target) -> list[str]:
    """The other KV-cache features handle_kv_cache_sharding refuses that the launch turns on, as written."""
    found = [written for dest, written in SHARDING_REFUSED_FEATURES if cfg.flags.get(dest)]
    if (cfg.flags.get("dcp_size") or 1) > 1:
        found.append(f"--dcp-size {cfg.flags['dcp_size']}")
    if cfg.flags.get("enable_dynamic_chunking") and cfg.pp_size > 1:
        found.append(f"--enable-dynamic-chunking with --pp-size {cfg.pp_size}")
    if not cfg.flags.get("enable_hierarchical_cache"):
        return found
    if sglang_release(target) < SHARDED_HOST_OFFLOAD_FROM:
        found.append("--enable-hierarchical-cache")
        return found
    if cfg.flags.get("hicache_storage_backend") is not None:
        found.append(f"--hicache-storage-backend {cfg.flags['hicache_storage_backend']}")
    if dsa_model(cfg, target):
        for dest, allowed in SHARDED_DSA_HICACHE.items():
            value = cfg.flags.get(dest) or HICACHE_DEFAULTS[dest]
            if value not in allowed:
                found.append(f"--{dest.replace('_', '-')} {value} (DSA HiCache)")
    return found


@rule(
    id="kv-sharding-cache-features",
    title="--enable-kv-cache-sharding refuses other KV-cache features (KV offload, sessions, DCP, HiSparse, TBO, …)",
    engine="sglang",
    versions="sglang>=0.5.22",
    stage="startup",
    prevents="--enable-kv-cache-sharding does not support --enable-lmcache.; ... does not support "
    "--enable-flexkv; ... does not support streaming sessions; ... does not support session radix cache yet.; "
    "... does not support --enable-unified-memory; --enable-kv-cache-sharding and decode context parallelism "
    "(--dcp-size) are mutually exclusive users of the widened allocator index space.; --enable-kv-cache-sharding "
    "supports HiCache host offload but not --hicache-storage-backend yet; ... does not support --enable-hisparse; "
    "... does not support dynamic chunk sizing with pipeline parallelism; ... does not support "
    "--enable-two-batch-overlap; CP-sharded DSA HiCache requires host memory mode cache",
    source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
    docs="""Checks that `--enable-kv-cache-sharding` comes without the KV-cache features SGLang refuses beside it:
`--enable-unified-cache-external-linker`, `--enable-streaming-session`, `--enable-session-radix-cache`,
`--enable-flexkv`, `--enable-unified-memory`, `--dcp-size` > 1, `--enable-lmcache`, `--enable-hisparse`,
`--enable-two-batch-overlap`, `--enable-dynamic-chunking` with `--pp-size` > 1, and HiCache: any in sglang
0.5.22; from 0.5.23 host offload is allowed but not `--hicache-storage-backend`, and a DSA model's HiCache
needs host memory mode cache, the kernel I/O backend and the layer_first or page_first layout.

Each of them allocates, loads back or plans KV as whole pages per rank (or rebuilds the one gather plan a
sharded pool keeps), where a sharded rank holds only its stripe of each page; SGLang refuses them at
start-up.""",
    fix_title="Drop the KV-cache feature the sharded prefill worker cannot run with",
)
def kv_sharding_cache_features(cfg, target):
    if not _sharding(cfg):
        return skipped("applies to --enable-kv-cache-sharding")
    required = "no KV offload / session / DCP / HiSparse / TBO feature SGLang refuses with KV sharding"
    refused = _sharding_refusals(cfg, target)
    if refused:
        return failed(f"KV sharding with {', '.join(refused)}", required)
    return passed("KV sharding with none of the features it refuses", required)
