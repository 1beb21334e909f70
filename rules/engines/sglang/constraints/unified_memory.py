"""Flag constraints of SGLang's unified memory pool (--enable-unified-memory): the features it refuses and its
terms under DCP (rows; the logic rules of the subject are attn_preflight.rules.engines.sglang.rules.unified_memory)."""

from attn_preflight.rules.core.constraints import (
    Above,
    All,
    AnyOf,
    Backends,
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
from attn_preflight.rules.engines.sglang import capabilities as backend_kb

KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
UNIFIED_MEMORY = Flag("enable_unified_memory")
NO_BACKEND = All((Not(Flag("prefill_backend")), Not(Flag("decode_backend"))))

ROWS = (
    Constraint(
        id="kv-unified-memory-cache-features",
        title="--enable-unified-memory refuses two-batch overlap, LMCache, the external linker, and HiCache under "
        "EAGLE",
        versions="sglang>=0.5.20",
        stage="startup",
        when=UNIFIED_MEMORY,
        requires=All(
            (
                Not(Flag("enable_two_batch_overlap")),
                Not(All((Flag("enable_lmcache"), Since("0.5.21")))),
                Not(All((Flag("enable_unified_cache_external_linker"), Since("0.5.22")))),
                Not(
                    All(
                        (
                            Speculative(("EAGLE", "EAGLE3", "NEXTN")),
                            Since("0.5.22"),
                            Flag("enable_hierarchical_cache"),
                        )
                    )
                ),
            )
        ),
        prevents="--enable-unified-memory does not support --enable-two-batch-overlap: the iteration's read tables "
        "are indexed by the whole batch's rows, and a TBO child's readers do not offset into them.; "
        "--enable-unified-memory is not yet compatible with --enable-lmcache; --enable-unified-memory does not "
        "support --enable-unified-cache-external-linker; --enable-unified-memory + EAGLE/EAGLE3 does not support "
        "--enable-hierarchical-cache",
        source=f"{KV_HOOK}, handle_unified_memory_pool",
        docs="""Checks the features `--enable-unified-memory` refuses beside it: `--enable-two-batch-overlap` (from
0.5.20), `--enable-lmcache` (0.5.21), `--enable-unified-cache-external-linker` (0.5.22) and, with EAGLE /
EAGLE3 / NEXTN, `--enable-hierarchical-cache` (0.5.22).

The unified pool hands out virtual KV ids and one whole-batch read table; TBO's half-batches do not offset
into it, LMCache and the external linker index device buffers with the ids they are given, and HiCache keeps
a host pool the fused EAGLE draft does not have. SGLang asserts each at start-up. (Its refusal of
`--disaggregation-decode-retraction-backup host_pool` under EAGLE reads a flag this tool does not model.)""",
        fix_title="Drop the refused feature, or --enable-unified-memory",
    ),
    Constraint(
        id="kv-unified-memory-dcp",
        title="--enable-unified-memory with --dcp-size > 1: MLA models only, no sliding window, flashinfer / "
        "trtllm_mla / cutedsl_mla",
        versions="sglang>=0.5.20",
        stage="startup",
        when=All((UNIFIED_MEMORY, Above("dcp_size", 1), ModelRead())),
        requires=(
            Requirement(Feature("mla"), ("--dcp-size 1",)),
            Requirement(Not(Feature("sliding_window")), ("--dcp-size 1",)),
            Requirement(
                AnyOf(
                    (
                        NO_BACKEND,
                        Backends(backend_kb.UNIFIED_DCP_BACKENDS),
                        All(
                            (
                                Not(Since(str(backend_kb.TOKENSPEED_MLA_ALIAS_FROM))),
                                Backends((*backend_kb.UNIFIED_DCP_BACKENDS, "tokenspeed_mla")),
                            )
                        ),
                    )
                ),
                ("--attention-backend flashinfer",),
            ),
        ),
        first_only=True,
        prevents="--enable-unified-memory with decode context parallelism (--dcp-size > 1) supports MLA models only "
        "(e.g. kimi-linear): the MHA unified pool has no DCP-aware masked write path "
        "(UnifiedMHATokenToKVPool.set_kv_buffer asserts dcp_kv_mask is None).",
        source=f"{backend_kb.UNIFIED_MEMORY_SOURCE}, _validate_unified_memory_dcp",
        docs="""Checks `--enable-unified-memory` with decode context parallelism (`--dcp-size` > 1): the model is MLA,
has no sliding-window layers, and its full-attention layers run flashinfer, trtllm_mla or cutedsl_mla.

Under DCP the unified allocator widens its virtual id space; only the MLA pool has a DCP-aware write
path, the SWA allocator does not widen, and only those three backends translate their block tables
through the unified pool. SGLang asserts each at start-up.""",
        fix_title="Use --attention-backend flashinfer (or trtllm_mla on Blackwell) with an MLA model, or --dcp-size 1",
    ),
)

constraint_rules(__name__, ROWS)
