"""SGLang's host cache tiers: HiCache (DCP, buffer_only host memory, layout rewrites), LMCache, the unified
cache's external linker and the PD decode host pool (handle_cache_compatibility, handle_hicache).
"""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import (
    attention_dp_size,
    sglang_release,
    speculative,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned

KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
HICACHE_HOOK = "sglang: python/sglang/srt/arg_groups/hicache_hook.py"


# --- host cache tiers: HiCache, LMCache, the decode host pool (handle_cache_compatibility) -------------------


@rule(
    id="kv-lmcache-compatibility",
    title="--enable-lmcache: the radix cache on, colocated serving, no HiCache, linker, speculative decoding, DP "
    "attention, DCP or streaming sessions",
    engine="sglang",
    versions="sglang>=0.5.21",
    verified=(
        "sglang 0.5.21-0.5.23: the --enable-lmcache block of handle_cache_compatibility (kv_cache_hook.py:433-475), "
        "diffed 0.5.21-0.5.23: the same checks, DP attention read as --enable-dp-attention through 0.5.22 and "
        "attn_dp_enabled_of in 0.5.23; bench/release_walk.py grep 'LMCacheUnifiedRadixCache' finds none before "
        "0.5.21 (0.5.17-0.5.20 refuse LMCache only with HiCache under DCP, hicache_hook.py)"
    ),
    stage="startup",
    prevents="--enable-lmcache and --enable-hierarchical-cache are mutually exclusive; --enable-lmcache and "
    "--enable-unified-cache-external-linker are mutually exclusive; --enable-lmcache requires radix cache to be "
    "enabled; LMCacheUnifiedRadixCache does not yet support speculative decoding; LMCacheUnifiedRadixCache does not "
    "yet support DP attention; --enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware "
    "index translation; LMCacheUnifiedRadixCache does not yet support streaming sessions; "
    "--hicache-host-memory-mode=buffer_only is a HiCache-only mode; LMCacheUnifiedRadixCache currently supports "
    "colocated prefill/decode scheduling only",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks what `--enable-lmcache` refuses beside it: `--enable-hierarchical-cache`,
`--enable-unified-cache-external-linker`, `--disable-radix-cache`, a speculative algorithm, DP attention,
`--dcp-size` > 1, `--enable-streaming-session`, `--hicache-host-memory-mode buffer_only` and a
`--disaggregation-mode` other than null.

LMCache replaces the radix cache with its own LMCacheUnifiedRadixCache, which keeps one tree per
colocated server and indexes device KV with the plain ids it is given: another cache tier, a draft
model's pool, DP-attention groups, DCP's widened ids, streaming sessions and PD transfer are not wired
into it yet, and SGLang refuses each at start-up.""",
    fix_title="Drop the feature LMCache refuses (or --enable-lmcache)",
)
def kv_lmcache_compatibility(cfg, target):
    if not cfg.flags.get("enable_lmcache"):
        return skipped("applies to --enable-lmcache")
    flags = cfg.flags
    refused = [
        flag
        for flag, given in (
            ("--enable-hierarchical-cache", flags.get("enable_hierarchical_cache")),
            ("--enable-unified-cache-external-linker", flags.get("enable_unified_cache_external_linker")),
            ("--disable-radix-cache", flags.get("disable_radix_cache")),
            (f"--speculative-algorithm {cfg.speculative_algorithm}", speculative(cfg)),
            (f"DP attention ({attention_dp_size(cfg)} groups)", attention_dp_size(cfg) > 1),
            (f"--dcp-size {flags.get('dcp_size')}", (flags.get("dcp_size") or 1) > 1),
            ("--enable-streaming-session", flags.get("enable_streaming_session")),
            ("--hicache-host-memory-mode buffer_only", flags.get("hicache_host_memory_mode") == "buffer_only"),
            (
                f"--disaggregation-mode {flags.get('disaggregation_mode')}",
                (flags.get("disaggregation_mode") or "null") != "null",
            ),
        )
        if given
    ]
    required = "LMCache on a colocated server with the radix cache and none of the features it refuses"
    if refused:
        return failed(f"--enable-lmcache with {', '.join(refused)}", required)
    return passed("--enable-lmcache with none of the features it refuses", required)


# resolve_hicache_dcp_compatibility (server_args.py in 0.5.17-0.5.18): its refusals, by the releases they hold
HICACHE_DCP_FROM = Version("0.5.17")
HICACHE_DCP_DSPARK_FROM = Version("0.5.18")  # 0.5.17 refuses every speculative algorithm
HICACHE_DCP_STORAGE_BUFFER_ONLY_FROM = Version("0.5.23")  # 0.5.17-0.5.22 refuse any L3 storage backend


@rule(
    id="kv-hicache-dcp",
    title="HiCache with --dcp-size > 1: MLA models only, no LMCache / HiSparse, DSPARK as the only draft, L3 "
    "storage limits",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23: resolve_hicache_dcp_compatibility read in each release (server_args.py:7160-7195 in "
        "0.5.17, :7397-7430 in 0.5.18; arg_groups/hicache_hook.py:71-105 in 0.5.19, :110-145 in 0.5.21 and "
        "0.5.22, :130-165 in 0.5.23): LMCache, HiSparse and an MHA model refused in each; every speculative "
        "algorithm in 0.5.17, all but DSPARK from 0.5.18; any --hicache-storage-backend through 0.5.22, only with "
        "--hicache-host-memory-mode buffer_only in 0.5.23 (bench/release_walk.py grep 'HiSparse host pool is "
        "constructed without DCP', 'only supports DSPARK speculative'); none before 0.5.17"
    ),
    stage="startup",
    prevents="--enable-hisparse with --dcp-size > 1 is not supported: the HiSparse host pool is constructed without "
    "DCP translation.; --enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware index "
    "translation.; HiCache L3 with DCP does not support buffer_only host memory.; HiCache with --dcp-size > 1 only "
    "supports DSPARK speculative decoding; other draft-model host pools have no DCP index translation.; HiCache with --dcp-size > 1 is only supported for MLA models: the index translation lives in "
    "MLATokenToKVPoolHost, and the MHA host pool has none.",
    source=f"{HICACHE_HOOK}, resolve_hicache_dcp_compatibility",
    docs="""Checks `--enable-hierarchical-cache` with decode context parallelism (`--dcp-size` > 1): an MLA model,
no `--enable-lmcache` or `--enable-hisparse`, no speculative algorithm but DSPARK (0.5.17: none at all), and
no `--hicache-storage-backend` (0.5.17-0.5.22) or, in 0.5.23, none with `--hicache-host-memory-mode
buffer_only`.

Under DCP each rank holds an interleaved shard of every page and the host pool widens its slot ids; only the
MLA host pool translates them to each rank's physical slots, and the draft-model, LMCache and HiSparse host
pools do not. SGLang refuses each at start-up.""",
    fix_title="Serve an MLA model, drop the refused feature, or --dcp-size 1",
)
def kv_hicache_dcp(cfg, target):
    flags = cfg.flags
    if not flags.get("enable_hierarchical_cache") or (flags.get("dcp_size") or 1) <= 1:
        return skipped("applies to --enable-hierarchical-cache with --dcp-size > 1")
    if cfg.model is None:
        return unknown("HiCache with DCP needs an MLA model: give --model")
    release = sglang_release(target)
    refused = []
    storage = flags.get("hicache_storage_backend")
    if storage is not None and release < HICACHE_DCP_STORAGE_BUFFER_ONLY_FROM:
        refused.append(f"--hicache-storage-backend {storage}")
    elif storage is not None and flags.get("hicache_host_memory_mode") == "buffer_only":
        refused.append(f"--hicache-storage-backend {storage} with --hicache-host-memory-mode buffer_only")
    algorithm = (cfg.speculative_algorithm or "NONE").upper()
    allowed_drafts = ("NONE", "DSPARK") if release >= HICACHE_DCP_DSPARK_FROM else ("NONE",)
    if algorithm not in allowed_drafts:
        refused.append(f"--speculative-algorithm {cfg.speculative_algorithm}")
    refused += [flag for flag in ("--enable-lmcache", "--enable-hisparse") if flags.get(flag[2:].replace("-", "_"))]
    if not cfg.mla:
        refused.append(f"an MHA model ({cfg.model.name})")
    required = "an MLA model without the host pools DCP cannot translate"
    found = f"HiCache with --dcp-size {flags['dcp_size']}"
    if refused:
        return failed(f"{found} with {', '.join(refused)}", required, ["--dcp-size 1"])
    return passed(f"{found} on {cfg.model.name}", required)


# handle_hicache's checks of the unified cache's external linker (direct L3), by the first release holding them
EXTERNAL_LINKER_FROM = Version("0.5.20")  # no HiCache, no --hicache-storage-backend (hicache_hook.py:24-33)
LINKER_MLA_DEDUP_FROM = Version("0.5.21")  # --enable-linker-mla-dedup needs the Mooncake linker (:25-30)
LINKER_RADIX_CACHE_FROM = Version("0.5.23")  # the default radix cache, on (:44-48)
LINKER_MLA_DEDUP_BACKEND = "mooncake"
DEFAULT_LINKER_BACKEND = "mooncake"  # fields/memory.py unified_cache_external_linker_backend, 0.5.21-0.5.23


@rule(
    id="kv-external-linker",
    title="--enable-unified-cache-external-linker: the default radix cache on, no HiCache or HiCache storage; MLA "
    "dedup needs the Mooncake linker",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified=(
        "sglang 0.5.20-0.5.23: handle_hicache read in each release: the linker refuses --enable-hierarchical-cache "
        "and --hicache-storage-backend from 0.5.20 (hicache_hook.py:24-33 in 0.5.20, :29-38 in 0.5.21 and 0.5.22, "
        ":49-58 in 0.5.23); --enable-linker-mla-dedup needs the linker on the mooncake backend from 0.5.21 (:25-30, "
        ":39-43 in 0.5.23); --disable-radix-cache and --radix-cache-backend are refused in 0.5.23 only (:44-48; "
        "bench/release_walk.py grep 'requires the default'); 0.5.19 has no linker flag"
    ),
    stage="startup",
    prevents="--enable-unified-cache-external-linker and --enable-hierarchical-cache are mutually exclusive.; "
    "--enable-unified-cache-external-linker does not use --hicache-storage-backend.; --enable-linker-mla-dedup "
    "requires the Mooncake linker.; --enable-unified-cache-external-linker requires the default UnifiedRadixCache "
    "with radix caching enabled.",
    source=f"{HICACHE_HOOK}, handle_hicache",
    docs="""Checks the unified cache's external linker (direct L3): `--enable-unified-cache-external-linker` comes
without `--enable-hierarchical-cache` or `--hicache-storage-backend` (from 0.5.20) and, in 0.5.23, without
`--disable-radix-cache` or `--radix-cache-backend`; `--enable-linker-mla-dedup` (from 0.5.21) needs the linker on
with `--unified-cache-external-linker-backend mooncake` (the default).

The linker links SGLang's UnifiedRadixCache straight to an external KV store with no host tier, so HiCache and
its storage backend are a second path to the same store, and a replaced or disabled radix cache has nothing
to link; MLA dedup (rank 0 loads the replicated MLA KV and broadcasts each layer) exists only in the Mooncake
linker. SGLang refuses each at start-up.""",
    fix_title="Use the linker alone on the default radix cache (or HiCache alone)",
)
def kv_external_linker(cfg, target):
    flags = cfg.flags
    linker = bool(flags.get("enable_unified_cache_external_linker"))
    dedup = bool(flags.get("enable_linker_mla_dedup"))
    if not (linker or dedup):
        return skipped("applies to --enable-unified-cache-external-linker or --enable-linker-mla-dedup")
    release = sglang_release(target)
    backend = flags.get("unified_cache_external_linker_backend") or DEFAULT_LINKER_BACKEND
    refused, fix = [], []
    if dedup and release >= LINKER_MLA_DEDUP_FROM and not (linker and backend == LINKER_MLA_DEDUP_BACKEND):
        refused.append(f"--enable-linker-mla-dedup on the {backend} linker" if linker else "--enable-linker-mla-dedup")
        fix.append("--enable-unified-cache-external-linker --unified-cache-external-linker-backend mooncake")
    if linker and release >= LINKER_RADIX_CACHE_FROM:
        if flags.get("disable_radix_cache"):
            refused.append("--disable-radix-cache")
        if flags.get("radix_cache_backend") is not None:
            refused.append(f"--radix-cache-backend {flags['radix_cache_backend']}")
    if linker and flags.get("enable_hierarchical_cache"):
        refused.append("--enable-hierarchical-cache")
    if linker and flags.get("hicache_storage_backend") is not None:
        refused.append(f"--hicache-storage-backend {flags['hicache_storage_backend']}")
    required = "the linker alone on the default radix cache; MLA dedup on the Mooncake linker"
    found = "the external linker" if linker else "the unified cache without its external linker"
    if refused:
        return failed(f"{found} with {', '.join(refused)}", required, [" ".join(fix)] if fix else [])
    return passed(f"the external linker on the {backend} backend", required)


HOST_MEMORY_MODE_FROM = Version("0.5.19")  # validate_hicache_host_memory_mode (hicache_hook.py:167-210 in 0.5.19)
BUFFER_ONLY_WRITE_BACK_REWRITE_FROM = Version("0.5.22")  # write_back becomes write_through; refused in 0.5.19-0.5.21


def _host_cache_path(cfg) -> bool:
    """Whether handle_hicache validates the host pool: HiCache, decode KV offload, or a PD decode server whose
    retraction backup is unset or host_pool (and the external linker, which returns before, is off)."""
    flags = cfg.flags
    decode_pool = flags.get("disaggregation_mode") == "decode" and flags.get(
        "disaggregation_decode_retraction_backup"
    ) in (None, "host_pool")
    active = flags.get("enable_hierarchical_cache") or flags.get("disaggregation_decode_enable_offload_kvcache")
    return bool((active or decode_pool) and not flags.get("enable_unified_cache_external_linker"))


@rule(
    id="kv-hicache-buffer-only",
    title="--hicache-host-memory-mode buffer_only needs a storage backend, a write-through policy and a non-decode "
    "server",
    engine="sglang",
    versions="sglang>=0.5.19",
    verified=(
        "sglang 0.5.19-0.5.23: validate_hicache_host_memory_mode, run by handle_hicache when HiCache, decode KV "
        "offload or a decode host pool is on, read in each release (hicache_hook.py:167-210 in 0.5.19, :180-223 in "
        "0.5.20, :206-249 in 0.5.21, :206-254 in 0.5.22, :247-295 in 0.5.23): buffer_only without "
        "--hicache-storage-backend and on a decode server refused in each; --hicache-write-policy write_back refused "
        "in 0.5.19-0.5.21 and rewritten to write_through from 0.5.22 (bench/release_walk.py grep 'buffer_only "
        "requires a storage backend', 'buffer_only is not supported on')"
    ),
    stage="startup",
    prevents="--hicache-host-memory-mode buffer_only requires a storage backend (--hicache-storage-backend): host "
    "memory is only a staging buffer and all cached data lives in storage.; --hicache-host-memory-mode buffer_only "
    "does not support --hicache-write-policy write_back; ...; --hicache-host-memory-mode buffer_only is not "
    "supported on decode instances: ...",
    source=f"{HICACHE_HOOK}, validate_hicache_host_memory_mode",
    docs="""Checks `--hicache-host-memory-mode buffer_only` where SGLang builds a host pool (HiCache, decode KV offload,
a PD decode server): it needs a `--hicache-storage-backend`, runs on a prefill or colocated server only, and
takes `--hicache-write-policy write_back` as write_through from 0.5.22 (a warning; 0.5.19-0.5.21 refuse it).

In buffer_only mode host memory is only a staging buffer: every cached page lives in the storage tier, so
there must be one, and there is no host tier to write back to. The decode server's prefetch and offload paths
bypass the buffer pipeline, so SGLang refuses the mode there.""",
    fix_title="Add --hicache-storage-backend (file, mooncake, ...) and --hicache-write-policy write_through, or "
    "--hicache-host-memory-mode cache",
)
def kv_hicache_buffer_only(cfg, target):
    flags = cfg.flags
    if flags.get("hicache_host_memory_mode") != "buffer_only" or not _host_cache_path(cfg):
        return skipped("applies to --hicache-host-memory-mode buffer_only where SGLang builds a host pool")
    release = sglang_release(target)
    refused, fix = [], []
    if flags.get("hicache_storage_backend") is None:
        refused.append("no --hicache-storage-backend")
        fix.append("--hicache-storage-backend file")
    write_back = flags.get("hicache_write_policy") == "write_back"
    if write_back and release < BUFFER_ONLY_WRITE_BACK_REWRITE_FROM:
        refused.append("--hicache-write-policy write_back")
        fix.append("--hicache-write-policy write_through")
    if flags.get("disaggregation_mode") == "decode":
        refused.append("a PD decode server")
        fix = ["--hicache-host-memory-mode cache"]
    required = "a storage backend, write-through, a prefill or colocated server"
    if refused:
        return failed(f"--hicache-host-memory-mode buffer_only with {', '.join(refused)}", required, [" ".join(fix)])
    if write_back:
        return warned(
            "--hicache-host-memory-mode buffer_only with --hicache-write-policy write_back (SGLang writes through)",
            required,
            ["--hicache-write-policy write_through"],
        )
    return passed("--hicache-host-memory-mode buffer_only over a storage backend", required)


# handle_hicache's layout / I/O normalisation in 0.5.23 (hicache_hook.py:168-244), with the defaults of fields/
# memory.py:128-146: page_first layout, kernel I/O
HICACHE_LAYOUT_FROM = Version("0.5.23")
DEFAULT_HICACHE_LAYOUT = "page_first"
DEFAULT_HICACHE_IO = "kernel"
LAYER_FIRST_REFUSING_STORAGE = ("mooncake", "npu_memcache")


def _hicache_layout(cfg) -> tuple[str, str]:
    """(layout, I/O backend) after resolve_layout_io_compatibility, resolve_storage_layout_compatibility and
    resolve_unified_memory_layout_io, in that order."""
    flags = cfg.flags
    layout = flags.get("hicache_mem_layout") or DEFAULT_HICACHE_LAYOUT
    io = flags.get("hicache_io_backend") or DEFAULT_HICACHE_IO
    if layout == "page_first_direct" and io == "kernel":
        io = "direct"
    if layout == "page_first" and io == "direct":
        layout = "page_first_direct"
    storage = flags.get("hicache_storage_backend")
    mooncake_dcp = storage == "mooncake" and (flags.get("dcp_size") or 1) > 1
    if storage in LAYER_FIRST_REFUSING_STORAGE and layout == "layer_first" and not mooncake_dcp:
        layout = {"direct": "page_first_direct", "kernel": "page_first"}.get(io, layout)
    if cfg.flags.get("enable_unified_memory") and layout == "page_first_direct":
        layout, io = "page_first", "kernel"
    return layout, io


@rule(
    id="kv-hicache-layout-rewrite",
    title="SGLang rewrites a HiCache host layout / I/O backend pair it cannot run",
    engine="sglang",
    versions="sglang>=0.5.23",
    verified=(
        "sglang 0.5.23: handle_hicache's resolve_layout_io_compatibility, resolve_storage_layout_compatibility and "
        "resolve_unified_memory_layout_io read (hicache_hook.py:168-244). Each release differs before it (diffed "
        "0.5.19-0.5.22: no unified-memory step, no Mooncake-under-DCP exception, npu_memcache from 0.5.20; the "
        "layout defaults and the first two steps reach back to 0.5.8 and 0.5.10 in server_args.py), so only 0.5.23 "
        "is judged"
    ),
    stage="startup",
    reason="SGLang replaces the --hicache-mem-layout / --hicache-io-backend the launch names with another pair, "
    "logging a warning only, so the host tier runs with a layout or copy path the launch line does not say.",
    source=f"{HICACHE_HOOK}, resolve_layout_io_compatibility, resolve_storage_layout_compatibility, "
    "resolve_unified_memory_layout_io",
    docs="""Warns when SGLang rewrites the host cache's layout or I/O backend where it builds a host pool (HiCache,
decode KV offload, a PD decode server): page_first_direct with the kernel I/O backend runs direct I/O;
page_first with direct I/O runs page_first_direct; layer_first with a mooncake or npu_memcache storage backend
runs page_first_direct (direct I/O) or page_first (kernel I/O), except mooncake under `--dcp-size` > 1; under
`--enable-unified-memory`, page_first_direct runs page_first with kernel I/O.

The direct copies read whole pages, the kernel copies strided rows, and the L3 backends and the unified pool
each accept only some of the layouts, so SGLang picks the pair that works. Naming that pair makes the launch
line say what runs. (A `--disaggregation-decode-host-receive-threshold` below 1, which forces layer_first, is not
modelled.)""",
    fix_title="Name the layout and I/O backend SGLang runs",
)
def kv_hicache_layout_rewrite(cfg, target):
    if not _host_cache_path(cfg):
        return skipped("applies where SGLang builds a host pool (HiCache, decode KV offload, a PD decode server)")
    given = (
        cfg.flags.get("hicache_mem_layout") or DEFAULT_HICACHE_LAYOUT,
        cfg.flags.get("hicache_io_backend") or DEFAULT_HICACHE_IO,
    )
    layout, io = _hicache_layout(cfg)
    required = "a layout and I/O backend SGLang runs as named"
    if (layout, io) == given:
        return passed(f"host layout {layout} with {io} I/O", required)
    return warned(
        f"host layout {given[0]} with {given[1]} I/O (SGLang runs {layout} with {io} I/O)",
        required,
        [f"--hicache-mem-layout {layout} --hicache-io-backend {io}"],
    )


# The decode host pool's checks in handle_cache_compatibility, each from the release that added it
# (bench/release_walk.py grep of each message: server_args.py through 0.5.18, kv_cache_hook.py after)
HOST_POOL_BACKUP_FROM = Version("0.5.18")
DECODE_OFFLOAD_STORAGE_FROM = Version("0.5.10")


@rule(
    id="kv-decode-host-pool",
    title="The PD decode host pool: host_pool retraction backup and KV offload on a decode server, one of them, "
    "offload with a storage backend",
    engine="sglang",
    versions="sglang>=0.5.3",
    verified=(
        "sglang 0.5.3-0.5.23: handle_cache_compatibility (_handle_cache_compatibility in server_args.py before "
        "0.5.19) read in each release: --disaggregation-decode-enable-offload-kvcache refused off a decode server "
        "from 0.5.3 (server_args.py:1243 in 0.5.3, kv_cache_hook.py:402 in 0.5.23), without "
        "--hicache-storage-backend from 0.5.10 (:3415 in 0.5.10, :406 in 0.5.23); host_pool retraction backup off "
        "a decode server, with --dcp-size > 1, with priority preemption, and with offload from 0.5.18 "
        "(server_args.py:8128-8168 in 0.5.18; kv_cache_hook.py:149-186 in 0.5.19, :354-415 in 0.5.21-0.5.23); "
        "bench/release_walk.py grep of each message"
    ),
    stage="startup",
    prevents="The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side.; The "
    "argument disaggregation-decode-enable-offload-kvcache is only supported when hicache-storage-backend is "
    "provided.; --disaggregation-decode-retraction-backup=host_pool is only supported on a PD decode server.; "
    "--disaggregation-decode-retraction-backup=host_pool does not support --dcp-size > 1.; "
    "--disaggregation-decode-retraction-backup=host_pool requires --disable-priority-preemption when priority "
    "scheduling is enabled.; The arguments disaggregation-decode-enable-offload-kvcache and "
    "disaggregation-decode-retraction-backup=host_pool are mutually exclusive: both build a decode host pool.",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks the decode host pool a PD decode server builds: `--disaggregation-decode-retraction-backup
host_pool` (from 0.5.18) needs `--disaggregation-mode decode`, `--dcp-size` 1, and
`--disable-priority-preemption` with `--enable-priority-scheduling`; `--disaggregation-decode-enable-offload-
kvcache` needs `--disaggregation-mode decode`, a `--hicache-storage-backend` (from 0.5.10), and not the
host_pool backup (from 0.5.18).

Both keep decode KV in a reserved HiCache host pool that only a decode server has; the backup pool has no
DCP index translation and cannot hand slots back to a preempting request, and two host pools on one server
would each claim the same memory. SGLang refuses each at start-up. Only the named backup is judged: a
`--disaggregation-decode-host-receive-threshold` below 1 makes SGLang pick host_pool itself (not modelled).""",
    fix_title="Run the host pool on a decode server (--disaggregation-mode decode), with what it needs",
)
def kv_decode_host_pool(cfg, target):
    flags = cfg.flags
    backup = flags.get("disaggregation_decode_retraction_backup") == "host_pool"
    offload = bool(flags.get("disaggregation_decode_enable_offload_kvcache"))
    release = sglang_release(target)
    backup = backup and release >= HOST_POOL_BACKUP_FROM
    if not (backup or offload):
        return skipped("applies to a decode host pool (host_pool retraction backup, decode KV offload)")
    decode = flags.get("disaggregation_mode") == "decode"
    problems, fix = [], []
    if not decode:
        problems.append(f"--disaggregation-mode {flags.get('disaggregation_mode') or 'null'}")
        fix.append("--disaggregation-mode decode")
    if backup and (flags.get("dcp_size") or 1) > 1:
        problems.append(f"--dcp-size {flags['dcp_size']}")
        fix.append("--dcp-size 1")
    if backup and flags.get("enable_priority_scheduling") and not flags.get("disable_priority_preemption"):
        problems.append("priority preemption (--enable-priority-scheduling)")
        fix.append("--disable-priority-preemption")
    if offload and release >= DECODE_OFFLOAD_STORAGE_FROM and flags.get("hicache_storage_backend") is None:
        problems.append("no --hicache-storage-backend")
        fix.append("--hicache-storage-backend file")
    if offload and backup:
        problems.append("both at once (two host pools)")
    pool = " and ".join(name for name, on in (("host_pool backup", backup), ("decode KV offload", offload)) if on)
    required = "a PD decode server, and what its host pool needs"
    if problems:
        return failed(f"{pool} with {', '.join(problems)}", required, [" ".join(fix)] if fix else [])
    return passed(f"{pool} on a PD decode server", required)
