"""KV-cache flag constraints of SGLang: HiCache, unified memory, KV dtypes (rows; the logic rules of the
subject are attn_preflight.rules.engines.sglang.rules.kv_cache)."""

from attn_preflight.rules.core.constraints import Constraint, Flag, Not, Range, constraint_rules

KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
HICACHE_HOOK = "sglang: python/sglang/srt/arg_groups/hicache_hook.py"
FP4_KV = Flag("kv_cache_dtype", ("nvfp4", "fp4_mx_block16"))

ROWS = (
    Constraint(
        id="kv-hicache-radix-cache",
        title="--enable-hierarchical-cache and --disable-radix-cache are mutually exclusive",
        versions="sglang>=0.5.1",
        verified=(
            "sglang 0.5.1-0.5.23: the refusal in _handle_cache_compatibility / handle_cache_compatibility of every "
            "release read (server_args.py:728 in 0.5.1, :2273 in 0.5.7, :5939 in 0.5.14, :8151 in 0.5.18; "
            "arg_groups/kv_cache_hook.py:169 in 0.5.19, :395 in 0.5.21-0.5.23; bench/release_walk.py grep "
            "'enable-hierarchical-cache and disable-radix-cache are mutually exclusive'; none in 0.5.0rc2)"
        ),
        stage="startup",
        when=Flag("enable_hierarchical_cache"),
        requires=Not(Flag("disable_radix_cache")),
        prevents="The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and cannot "
        "be used at the same time. Please use only one of them.",
        source=f"{KV_HOOK}, handle_cache_compatibility",
        docs="""Checks that `--enable-hierarchical-cache` is not given with `--disable-radix-cache`.

HiCache is a host (and storage) tier under the radix tree: it spills and reloads the tree's prefixes, so
without the radix cache there is nothing to keep, and SGLang refuses the pair at start-up. (A model step
that turns the radix cache off by itself, e.g. for an embedding model, meets the same refusal; only the
flags are read here.)""",
        fix_title="Drop --disable-radix-cache (HiCache needs the radix cache), or --enable-hierarchical-cache",
    ),
    Constraint(
        id="kv-hicache-host-memory-fraction",
        title="--hicache-host-memory-fraction lies in (0, 1]",
        versions="sglang>=0.5.21",
        verified=(
            "sglang 0.5.21-0.5.23: handle_hicache_ratio_default, run for every launch early in the pipeline "
            "(pipeline.py:69 in 0.5.21, :77 in 0.5.22 and 0.5.23), refuses a fraction outside (0, 1] "
            "(hicache_hook.py:96-98 in 0.5.21 and 0.5.22, :115-117 in 0.5.23; bench/release_walk.py grep "
            "'hicache-host-memory-fraction must be in' finds it first in 0.5.21)"
        ),
        stage="startup",
        when=Flag("hicache_host_memory_fraction"),
        requires=Range("hicache_host_memory_fraction", 0, 1, open_low=True),
        fix=("--hicache-host-memory-fraction 0.8",),
        prevents="--hicache-host-memory-fraction must be in (0, 1].",
        source=f"{HICACHE_HOOK}, handle_hicache_ratio_default",
        docs="""Checks that `--hicache-host-memory-fraction`, when given, is above 0 and at most 1.

The fraction sizes the HiCache host pool from the host's memory; SGLang checks its range for every launch,
HiCache on or not, and refuses one outside it at start-up.""",
        fix_title="Pass a fraction in (0, 1], e.g. --hicache-host-memory-fraction 0.8 (the default)",
    ),
    Constraint(
        id="kv-fp4-unified-memory",
        title="An FP4 KV cache (nvfp4, fp4_mx_block16) cannot use --enable-unified-memory",
        versions="sglang>=0.5.21",
        verified=(
            "sglang 0.5.21-0.5.23: handle_kv4_compatibility raises for --enable-unified-memory with either FP4 dtype "
            "on CUDA (kv_cache_hook.py:133-137 in 0.5.21, 0.5.22 and 0.5.23; bench/release_walk.py grep 'FP4 KV "
            "cache does not yet support --enable-unified-memory' finds it from 0.5.21, the unified pool itself being "
            "0.5.18+)"
        ),
        stage="startup",
        when=FP4_KV,
        requires=Not(Flag("enable_unified_memory")),
        fix=("--kv-cache-dtype fp8_e4m3",),
        prevents="FP4 KV cache does not yet support --enable-unified-memory: the unified MHA pool does not allocate "
        "FP4 block scales or the prefill dequant workspace.",
        source=f"{KV_HOOK}, handle_kv4_compatibility",
        docs="""Checks that an FP4 KV cache (`--kv-cache-dtype nvfp4` or `fp4_mx_block16`) runs without
`--enable-unified-memory`.

The unified MHA pool allocates neither the FP4 block scales nor the prefill dequant workspace, so SGLang
refuses the pair at start-up.""",
        fix_title="Drop --enable-unified-memory, or use an FP8 KV cache with it",
    ),
)

constraint_rules(__name__, ROWS)
