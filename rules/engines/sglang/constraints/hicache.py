"""Flag constraints of SGLang's host cache tiers: LMCache, HiCache under DCP, the unified cache's external linker
and the PD decode host pool (rows; the logic rules of the subject are
attn_preflight.rules.engines.sglang.rules.hicache)."""

from attn_preflight.rules.core.constraints import (
    Above,
    All,
    AnyOf,
    Constraint,
    Feature,
    Flag,
    ModelRead,
    Not,
    Requirement,
    Since,
    Speculative,
    constraint_rules,
)

KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
HICACHE_HOOK = "sglang: python/sglang/srt/arg_groups/hicache_hook.py"
HICACHE = Flag("enable_hierarchical_cache")
STORAGE = Flag("hicache_storage_backend")
BUFFER_ONLY = Flag("hicache_host_memory_mode", ("buffer_only",))
DCP = Above("dcp_size", 1)
LINKER = Flag("enable_unified_cache_external_linker")
LINKER_DEDUP = Flag("enable_linker_mla_dedup")
# Attention-DP groups above 1: --attn-dp-size, or its older spelling --dp-size with --enable-dp-attention
DP_ATTENTION = AnyOf((Above("attn_dp_size", 1), All((Flag("enable_dp_attention"), Above("dp_size", 1)))))
NO_PD = AnyOf((Not(Flag("disaggregation_mode")), Flag("disaggregation_mode", ("null",))))
# The decode host pools: the host_pool retraction backup (from 0.5.18) and decode KV offload
HOST_POOL_BACKUP = All((Flag("disaggregation_decode_retraction_backup", ("host_pool",)), Since("0.5.18")))
DECODE_OFFLOAD = Flag("disaggregation_decode_enable_offload_kvcache")

ROWS = (
    Constraint(
        id="kv-lmcache-compatibility",
        title="--enable-lmcache: the radix cache on, colocated serving, no HiCache, linker, speculative decoding, DP "
        "attention, DCP or streaming sessions",
        versions="sglang>=0.5.21",
        stage="startup",
        when=Flag("enable_lmcache"),
        requires=All(
            (
                Not(HICACHE),
                Not(LINKER),
                Not(Flag("disable_radix_cache")),
                Speculative(("NONE",)),
                Not(DP_ATTENTION),
                Not(DCP),
                Not(Flag("enable_streaming_session")),
                Not(BUFFER_ONLY),
                NO_PD,
            )
        ),
        prevents="--enable-lmcache and --enable-hierarchical-cache are mutually exclusive; --enable-lmcache and "
        "--enable-unified-cache-external-linker are mutually exclusive; --enable-lmcache requires radix cache to be "
        "enabled; LMCacheUnifiedRadixCache does not yet support speculative decoding; LMCacheUnifiedRadixCache does "
        "not yet support DP attention; --enable-lmcache with --dcp-size > 1 is not supported: LMCache has no "
        "DCP-aware index translation; LMCacheUnifiedRadixCache does not yet support streaming sessions; "
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
    ),
    Constraint(
        id="kv-hicache-dcp",
        title="HiCache with --dcp-size > 1: MLA models only, no LMCache / HiSparse, DSPARK as the only draft, L3 "
        "storage limits",
        versions="sglang>=0.5.17",
        stage="startup",
        when=All((HICACHE, DCP, ModelRead())),
        requires=All(
            (
                AnyOf((Not(STORAGE), All((Since("0.5.23"), Not(BUFFER_ONLY))))),
                AnyOf((Speculative(("NONE",)), All((Since("0.5.18"), Speculative(("DSPARK",)))))),
                Not(Flag("enable_lmcache")),
                Not(Flag("enable_hisparse")),
                Feature("mla"),
            )
        ),
        fix=("--dcp-size 1",),
        prevents="--enable-hisparse with --dcp-size > 1 is not supported: the HiSparse host pool is constructed "
        "without DCP translation.; --enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware "
        "index translation.; HiCache L3 with DCP does not support buffer_only host memory.; HiCache with --dcp-size "
        "> 1 only supports DSPARK speculative decoding; other draft-model host pools have no DCP index translation.; "
        "HiCache with --dcp-size > 1 is only supported for MLA models: the index translation lives in "
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
    ),
    Constraint(
        id="kv-external-linker",
        title="--enable-unified-cache-external-linker: the default radix cache on, no HiCache or HiCache storage; MLA "
        "dedup needs the Mooncake linker",
        versions="sglang>=0.5.20",
        stage="startup",
        when=AnyOf((LINKER, LINKER_DEDUP)),
        requires=(
            Requirement(
                Not(
                    All(
                        (
                            LINKER_DEDUP,
                            Since("0.5.21"),
                            Not(
                                All(
                                    (
                                        LINKER,
                                        AnyOf(
                                            (
                                                Not(Flag("unified_cache_external_linker_backend")),
                                                Flag("unified_cache_external_linker_backend", ("mooncake",)),
                                            )
                                        ),
                                    )
                                )
                            ),
                        )
                    )
                ),
                ("--enable-unified-cache-external-linker --unified-cache-external-linker-backend mooncake",),
            ),
            Requirement(Not(All((LINKER, Since("0.5.23"), Flag("disable_radix_cache"))))),
            Requirement(Not(All((LINKER, Since("0.5.23"), Flag("radix_cache_backend"))))),
            Requirement(Not(All((LINKER, HICACHE)))),
            Requirement(Not(All((LINKER, STORAGE)))),
        ),
        together=True,
        prevents="--enable-unified-cache-external-linker and --enable-hierarchical-cache are mutually exclusive.; "
        "--enable-unified-cache-external-linker does not use --hicache-storage-backend.; --enable-linker-mla-dedup "
        "requires the Mooncake linker.; --enable-unified-cache-external-linker requires the default "
        "UnifiedRadixCache with radix caching enabled.",
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
    ),
    Constraint(
        id="kv-decode-host-pool",
        title="The PD decode host pool: host_pool retraction backup and KV offload on a decode server, one of them, "
        "offload with a storage backend",
        versions="sglang>=0.5.3",
        stage="startup",
        when=AnyOf((HOST_POOL_BACKUP, DECODE_OFFLOAD)),
        requires=(
            Requirement(Flag("disaggregation_mode", ("decode",)), ("--disaggregation-mode decode",)),
            Requirement(Not(All((HOST_POOL_BACKUP, DCP))), ("--dcp-size 1",)),
            Requirement(
                Not(
                    All(
                        (
                            HOST_POOL_BACKUP,
                            Flag("enable_priority_scheduling"),
                            Not(Flag("disable_priority_preemption")),
                        )
                    )
                ),
                ("--disable-priority-preemption",),
            ),
            Requirement(Not(All((DECODE_OFFLOAD, Since("0.5.10"), Not(STORAGE)))), ("--hicache-storage-backend file",)),
            Requirement(Not(All((DECODE_OFFLOAD, HOST_POOL_BACKUP)))),  # two host pools on one server
        ),
        together=True,
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
    ),
)

constraint_rules(__name__, ROWS)
