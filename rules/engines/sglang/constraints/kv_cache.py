"""KV-cache flag constraints of SGLang: KV dtypes, the no-KV prefill path, HiCache, unified memory, the int8
Mamba checkpoint, KV sharding (rows; the logic rules of the subject are
attn_preflight.rules.engines.sglang.rules.kv_cache)."""

from attn_preflight.rules.core.constraints import (
    Above,
    All,
    AnyOf,
    Arch,
    Backends,
    Constraint,
    Flag,
    Not,
    Range,
    Requirement,
    Since,
    Speculative,
    constraint_rules,
)
from attn_preflight.rules.engines.sglang.capabilities import BLACKWELL
from attn_preflight.rules.engines.sglang.resolve import NVFP4_SOURCE

KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"
HICACHE_HOOK = "sglang: python/sglang/srt/arg_groups/hicache_hook.py"
MAMBA_HOOK = "sglang: python/sglang/srt/arg_groups/mamba_hook.py"
KV_SHARD_HOOK = "sglang: python/sglang/srt/arg_groups/kv_shard_hook.py"
FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
FP4_KV = Flag("kv_cache_dtype", ("nvfp4", "fp4_mx_block16"))
NVFP4_KV = Flag("kv_cache_dtype", ("nvfp4",))
MXFP8_KV = Flag("kv_cache_dtype", ("mxfp8",))
PREFILL_ONLY = Flag("prefill_only_disable_kv_cache")
DEQUANT_DTYPE = Flag("prefill_kv_cache_dequant_dtype")
# SM100's native NVFP4 layout: trtllm_mha serves a phase
SM100_NATIVE_NVFP4 = All(
    (Arch((10,)), AnyOf((Flag("prefill_backend", ("trtllm_mha",)), Flag("decode_backend", ("trtllm_mha",)))))
)
ALWAYS = All(())  # a row judged on every launch: no term to hold

ROWS = (
    Constraint(
        id="kv-hicache-radix-cache",
        title="--enable-hierarchical-cache and --disable-radix-cache are mutually exclusive",
        versions="sglang>=0.5.1",
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
    Constraint(
        id="kv-mxfp8-requires-fa4",
        title="An MXFP8 KV cache needs the FA4 backend",
        versions="sglang>=0.5.16",
        stage="runtime",
        when=MXFP8_KV,
        requires=Backends(("fa4",)),
        fix=("--attention-backend fa4", "--kv-cache-dtype fp8_e4m3"),
        prevents="MXFP8 KV cache requires the FA4 backend.",
        source=f"{FA_BACKEND}, FlashAttentionBackend._mxfp8_sf_kwargs",
        docs="""Checks that `--kv-cache-dtype mxfp8` is served by fa4 for both prefill and decode.

An MXFP8 cache stores FP8 E4M3 values with UE8M0 scales (one per 32 elements) in separate buffers; only
FA4's block-scaled QK^T (mxf8f6f4) path reads them, through the sfq/sfk/sfv arguments. The fa3 backend
raises this message at the first forward; other backends have no reader for the scale buffers at all.""",
        fix_title="Use --attention-backend fa4 (on SM100), or another --kv-cache-dtype",
    ),
    Constraint(
        id="kv-mxfp8-arch",
        title="An MXFP8 KV cache needs a Blackwell-family GPU (SM10x/SM11x/SM12x)",
        versions="sglang>=0.5.16",
        stage="startup",
        when=MXFP8_KV,
        requires=Arch(tuple(sorted(BLACKWELL))),
        fix=("--kv-cache-dtype fp8_e4m3", "--kv-cache-dtype auto"),
        prevents="--kv-cache-dtype mxfp8 requires an SM100+ (Blackwell) GPU for the block-scaled operands used by "
        "the FA4 MXFP8 attention path.",
        source=f"{KV_HOOK}, handle_mxfp8_kv_cache_compatibility; sglang: python/sglang/srt/utils/common.py, "
        "is_blackwell_supported (majors 10, 11, 12; torch CUDA >= 12.8)",
        docs="""Checks that `--kv-cache-dtype mxfp8` runs on a GPU SGLang counts as Blackwell (is_blackwell: major
10, 11 or 12 in sglang 0.5.23, torch CUDA >= 12.8).

Refused at start-up on Hopper and older. Older notes say is_blackwell is majors 10 and 12 only; the 0.5.23
probe includes Jetson Thor (11), and SGLang's own resolution accepts mxfp8 there (checked with the oracle).
Passing this gate is not enough: only SM100/SM103 have the kernel (rule kv-mxfp8-kernel-arch).""",
        fix_title="Use --kv-cache-dtype fp8_e4m3 (or auto) on this GPU",
    ),
    Constraint(
        id="kv-mxfp8-prefill-only",
        title="--prefill-only-disable-kv-cache does not take an MXFP8 KV cache",
        versions="sglang>=0.5.16",
        stage="startup",
        when=PREFILL_ONLY,
        requires=Not(MXFP8_KV),
        fix=("--kv-cache-dtype auto",),
        prevents="--prefill-only-disable-kv-cache does not currently support --kv-cache-dtype=mxfp8 because the MXFP8 "
        "pool stores separate scale-factor buffers.",
        source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
        docs="""Checks that the embedding no-KV path (`--prefill-only-disable-kv-cache`) is not combined with
`--kv-cache-dtype mxfp8`.

Refused at start-up: the no-KV path skips the pool, and the MXFP8 pool's separate scale buffers are not
handled by it.""",
        fix_title="Drop --kv-cache-dtype mxfp8 (auto) with --prefill-only-disable-kv-cache",
    ),
    Constraint(
        id="kv-prefill-only-embedding",
        title="--prefill-only-disable-kv-cache serves an embedding model only (--is-embedding)",
        versions="sglang>=0.5.12",
        stage="startup",
        when=PREFILL_ONLY,
        requires=Flag("is_embedding"),
        fix=("--is-embedding",),
        prevents="--prefill-only-disable-kv-cache currently requires --is-embedding. Other prefill-only workloads may "
        "be supported in a future change once their attention paths stop reading or writing the paged KV cache.",
        source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
        docs="""Checks that `--prefill-only-disable-kv-cache` comes with `--is-embedding`.

The KV-free prefill path is scoped to embedding serving: other prefill-only paths (scoring, MIS) still stage
K/V through the paged cache, so SGLang refuses the flag at start-up without `--is-embedding`.""",
        fix_title="Add --is-embedding (the no-KV path serves embedding models only)",
    ),
    Constraint(
        id="kv-fp4-prefill-only",
        title="--prefill-only-disable-kv-cache does not take an FP4 KV cache",
        versions="sglang>=0.5.16",
        stage="startup",
        when=PREFILL_ONLY,
        requires=Not(FP4_KV),
        fix=("--kv-cache-dtype auto",),
        prevents="--prefill-only-disable-kv-cache does not currently support --kv-cache-dtype=nvfp4 or "
        "--kv-cache-dtype=fp4_mx_block16 because the FP4 pool uses a separate allocation path.",
        source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
        docs="""Checks that `--prefill-only-disable-kv-cache` is not combined with an FP4 KV cache (nvfp4,
fp4_mx_block16).

Refused at start-up: the FP4 pool is allocated on its own path, which the no-KV embedding path does not
handle.""",
        fix_title="Drop the FP4 --kv-cache-dtype (auto) with --prefill-only-disable-kv-cache",
    ),
    Constraint(
        id="kv-nvfp4-arch",
        title="An NVFP4 KV cache needs SM100 or SM12x",
        versions="sglang>=0.5.16",
        stage="startup",
        when=NVFP4_KV,
        requires=Arch((10, 12)),
        fix=("--kv-cache-dtype fp4_mx_block16", "--kv-cache-dtype fp8_e4m3"),
        prevents="--kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. Use --kv-cache-dtype=fp4_mx_block16 for "
        "the block-size-16 FP4 recipe.",
        source=f"{KV_HOOK}, handle_kv4_compatibility",
        docs="""Checks that `--kv-cache-dtype nvfp4` runs on a compute-capability 10.x or 12.x GPU (is_sm100 or
is_sm120, torch CUDA >= 12.8).

Refused at start-up elsewhere: Hopper, Ampere and Jetson Thor (SM110). fp4_mx_block16 has no arch gate
in SGLang.""",
        fix_title="Use --kv-cache-dtype fp4_mx_block16 (or fp8_e4m3)",
    ),
    Constraint(
        id="kv-nvfp4-dequant-dtype",
        title="--prefill-kv-cache-dequant-dtype needs --kv-cache-dtype nvfp4",
        versions="sglang>=0.5.21",
        stage="startup",
        when=ALWAYS,
        requires=AnyOf((Not(DEQUANT_DTYPE), Flag(DEQUANT_DTYPE.name, ("auto",)), NVFP4_KV)),
        fix=("drop --prefill-kv-cache-dequant-dtype",),
        prevents="--prefill-kv-cache-dequant-dtype applies only with --kv-cache-dtype=nvfp4.",
        source=NVFP4_SOURCE,
        docs="""Checks that `--prefill-kv-cache-dequant-dtype` is left at auto unless the KV cache is nvfp4.

SGLang's NVFP4 step raises at start-up when the flag is set with any other KV dtype
(kv_cache_hook.py:40-44 in sglang 0.5.23): the dequant dtype only chooses how NVFP4 prefill reads the cache.""",
        fix_title="Drop --prefill-kv-cache-dequant-dtype, or use --kv-cache-dtype nvfp4",
    ),
    Constraint(
        id="kv-sharding-prefill-worker",
        title="--enable-kv-cache-sharding runs on a PD prefill worker only, with no dLLM and the built-in radix cache",
        versions="sglang>=0.5.22",
        stage="startup",
        when=Flag("enable_kv_cache_sharding"),
        requires=(
            Requirement(Flag("disaggregation_mode", ("prefill",)), ("--disaggregation-mode prefill",)),
            Requirement(Not(Flag("dllm_algorithm"))),
            Requirement(Not(Flag("radix_cache_backend"))),
        ),
        prevents="--enable-kv-cache-sharding is only supported on PD prefill workers: a rank's pool holds only its "
        "stripe of every cached page, which is incompatible with local decode.; --enable-kv-cache-sharding does not "
        "support diffusion language models; --enable-kv-cache-sharding requires the built-in UnifiedRadixCache with "
        "a rotation-aware UnifiedTreeCore and does not support --radix-cache-backend={backend!r}.",
        source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
        docs="""Checks where `--enable-kv-cache-sharding` runs: `--disaggregation-mode prefill` (a PD prefill worker),
no `--dllm-algorithm`, no `--radix-cache-backend`.

A sharded rank's pool holds only its stripe of every cached page, so it cannot decode locally; dLLM admission
bypasses the shard-scratch budget and leaves PD-prefill mode; a registered radix-cache backend has no
rotation-aware tree core. SGLang refuses each at start-up, before it looks at the attention backend.""",
        fix_title="Run the sharded server as the prefill side of a PD pair (--disaggregation-mode prefill)",
    ),
    Constraint(
        id="kv-int8-mamba-checkpoint-cache",
        title="--enable-int8-mamba-checkpoint needs the built-in mamba radix cache: no HiCache, radix backend or LMCache",
        versions="sglang>=0.5.14",
        stage="startup",
        when=Flag("enable_int8_mamba_checkpoint"),
        requires=All(
            (
                Not(Flag("enable_hierarchical_cache")),
                Not(Flag("radix_cache_backend")),
                Not(All((Flag("enable_lmcache"), Since("0.5.21")))),
            )
        ),
        prevents="--enable-int8-mamba-checkpoint is not supported together with --enable-hierarchical-cache: the "
        "host-offload path is not int8-aware. Disable one of them.; --enable-int8-mamba-checkpoint only supports the "
        "built-in mamba radix cache; --radix-cache-backend={backend!r} is not int8-aware. Omit --radix-cache-backend.; "
        "--enable-int8-mamba-checkpoint is not supported together with --enable-lmcache: LMCache is not int8-aware. "
        "Disable one of them.",
        source=f"{MAMBA_HOOK}, handle_int8_mamba_checkpoint (server_args.py _handle_int8_mamba_checkpoint before 0.5.19)",
        docs="""Checks the prefix caches beside `--enable-int8-mamba-checkpoint`: no `--enable-hierarchical-cache`, no
`--radix-cache-backend`, and (from SGLang 0.5.21) no `--enable-lmcache`.

The int8 Mamba checkpoint pool is wired into the built-in MambaRadixCache only; the host-offload path, registered
radix-cache backends and LMCache would read int8 checkpoint slots as bf16 active state, so SGLang refuses each
at start-up.""",
        fix_title="Drop the other cache (or --enable-int8-mamba-checkpoint): the int8 checkpoint runs on the built-in "
        "mamba radix cache only",
    ),
    Constraint(
        id="kv-prefill-only-preconditions",
        title="--prefill-only-disable-kv-cache needs --chunked-prefill-size -1 and --disable-radix-cache",
        versions="sglang>=0.5.12",
        stage="startup",
        when=PREFILL_ONLY,
        requires=(
            Requirement(Flag("chunked_prefill_size", (-1,)), ("--chunked-prefill-size -1",)),
            Requirement(Flag("disable_radix_cache"), ("--disable-radix-cache",)),
        ),
        together=True,
        prevents="--prefill-only-disable-kv-cache requires --chunked-prefill-size=-1 so the FA backend takes the "
        "fa_skip_kv_cache path; otherwise the pool would be touched between prefill chunks.",
        source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
        docs="""Checks the two flags `--prefill-only-disable-kv-cache` needs: `--chunked-prefill-size -1` and
`--disable-radix-cache`.

The KV-free prefill path keeps each request in one forward and lets the radix cache index nothing, so SGLang
refuses the flag at start-up unless chunked prefill is off and the radix cache disabled ("... requires
--disable-radix-cache because the radix cache indexes KV pool slots that no longer hold real data."). SGLang's
default chunked-prefill size is not -1.""",
        fix_title="Add --chunked-prefill-size -1 --disable-radix-cache",
    ),
    Constraint(
        id="kv-prefill-only-pool-writers",
        title="--prefill-only-disable-kv-cache refuses context parallelism and HiSparse, which write the KV pool",
        versions="sglang>=0.5.12",
        stage="startup",
        when=PREFILL_ONLY,
        # a switch cannot be turned off by adding a flag: only the CP size, judged last, has a fix
        requires=(
            Requirement(Not(Flag("enable_prefill_cp"))),
            Requirement(Not(Flag("enable_prefill_context_parallel"))),
            Requirement(Not(Flag("enable_hisparse"))),
            Requirement(Not(Above("attn_cp_size", 1)), ("--attn-cp-size 1",)),
        ),
        first_only=True,
        prevents="--prefill-only-disable-kv-cache is incompatible with --attn-cp-size > 1: the context-parallel "
        "attention path writes K/V to the pool via set_kv_buffer, which the no-op pool intentionally rejects.; "
        "--prefill-only-disable-kv-cache is incompatible with --enable-prefill-cp: the prefill-CP path stages K/V "
        "through the paged cache, which the no-op pool does not support.; --prefill-only-disable-kv-cache is "
        "incompatible with --enable-hisparse: HiSparse uses a dedicated pool family that is not the no-op MHA pool.",
        source=f"{KV_HOOK}, validate_prefill_only_disable_kv_cache_args",
        docs="""Checks that `--prefill-only-disable-kv-cache` comes without `--attn-cp-size` > 1, prefill context
parallelism (`--enable-prefill-cp`, `--enable-prefill-context-parallel` until 0.5.19) or `--enable-hisparse`.

The flag swaps the KV pool for a no-op one that rejects writes; context-parallel attention writes K/V to the
pool and prefill CP stages K/V through it, and HiSparse brings a pool family of its own. SGLang refuses each
at start-up (else the first request would fail on the no-op pool's write).""",
        fix_title="Drop context parallelism / HiSparse, or keep the KV cache",
    ),
    Constraint(
        id="kv-nvfp4-speculative",
        title="Speculative decoding on SM100's native NVFP4 KV: EAGLE/NEXTN with a trtllm_mha draft, or breadth-1 "
        "NGRAM",
        versions="sglang>=0.5.21",
        needs_gpu=True,
        stage="startup",
        when=All((NVFP4_KV, Flag("speculative_algorithm"), SM100_NATIVE_NVFP4)),
        requires=(
            Requirement(Speculative(("EAGLE", "EAGLE3", "NEXTN", "NGRAM")), ("--speculative-algorithm EAGLE",)),
            # NGRAM's draft is a tree unless its breadth is 1 (the default is 10: fields/spec.py)
            Requirement(
                AnyOf((Not(Speculative(("NGRAM",))), Flag("speculative_ngram_max_bfs_breadth", (1,)))),
                ("--speculative-ngram-max-bfs-breadth 1",),
            ),
            Requirement(
                AnyOf(
                    (
                        Speculative(("NGRAM",)),
                        Not(Flag("draft_attention_backend")),
                        Flag("draft_attention_backend", ("trtllm_mha",)),
                    )
                ),
                ("--speculative-draft-attention-backend trtllm_mha",),
            ),
        ),
        first_only=True,
        prevents="SM100 native NVFP4 speculative decoding requires --speculative-draft-attention-backend=trtllm_mha "
        "so the draft worker consumes its physical NVFP4 KV layout; got {draft_backend!r}.",
        source=f"{KV_HOOK}, handle_kv4_compatibility",
        docs="""Checks speculative decoding with `--kv-cache-dtype nvfp4` on SM100/SM103, where trtllm_mha serves a
phase from the native NVFP4 layout.

SGLang refuses at start-up (kv_cache_hook.py:165-232 in sglang 0.5.23): DFLASH and DSPARK ("does not yet
support"), any algorithm but EAGLE, EAGLE3, NEXTN and NGRAM, NGRAM with a tree
(--speculative-ngram-max-bfs-breadth other than 1; its default is 10), and a draft model whose
--speculative-draft-attention-backend is not trtllm_mha (unset, SGLang picks trtllm_mha itself and logs it).""",
        fix_title="Use EAGLE/NEXTN with --speculative-draft-attention-backend trtllm_mha, or NGRAM with breadth 1",
    ),
    Constraint(
        id="kv-nvfp4-spec-attention-mode",
        title="Speculative decoding on SM100's mixed NVFP4 KV: target verify is switched to decode attention",
        versions="sglang>=0.5.21",
        needs_gpu=True,
        stage="startup",
        severity="warn",
        when=All(
            (
                NVFP4_KV,
                Flag("speculative_algorithm"),
                Arch((10,)),
                Flag("prefill_backend", ("flashinfer",)),
                Flag("decode_backend", ("trtllm_mha",)),
            )
        ),
        requires=Flag("speculative_attention_mode", ("decode",)),  # unset: SGLang's default, prefill
        fix=("--speculative-attention-mode decode",),
        prevents="SM100 mixed NVFP4 speculative decoding routes target verify to trtllm_mha; overriding "
        "--speculative-attention-mode=prefill to decode.",
        source=f"{KV_HOOK}, handle_kv4_compatibility",
        docs="""Warns when speculative decoding on SM100/SM103 with `--kv-cache-dtype nvfp4` runs the mixed NVFP4
pair (prefill flashinfer on an FP8 dequant workspace, decode trtllm_mha) with `--speculative-attention-mode
prefill`, SGLang's default: SGLang logs a warning and verifies on the decode backend instead.

FlashInfer prefill reads a transient FP8 dequant workspace whose host-built page layout cannot be
refreshed inside a target-verify CUDA graph; the trtllm_mha decode child reads the NVFP4 cache directly.
The mixed pair is what `--prefill-kv-cache-dequant-dtype fp8_e4m3` (or an explicit flashinfer prefill)
gives on SM100; SGLang's own NVFP4 choice there is trtllm_mha for both phases.""",
        fix_title="Pass --speculative-attention-mode decode (what SGLang switches to)",
    ),
)

constraint_rules(__name__, ROWS)
