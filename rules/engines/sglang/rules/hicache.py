"""SGLang's HiCache host tier as it resolves it: buffer_only host memory and the layout rewrites (handle_hicache);
its flag constraints, with LMCache's, the external linker's and the decode host pool's, are rows
(attn_preflight.rules.engines.sglang.constraints.hicache).
"""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import sglang_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, warned

HICACHE_HOOK = "sglang: python/sglang/srt/arg_groups/hicache_hook.py"


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
