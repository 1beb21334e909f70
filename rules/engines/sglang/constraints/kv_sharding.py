"""Flag constraints of SGLang's KV-cache sharding (--enable-kv-cache-sharding): the transfer backend, the radix
tree core and the model attention it takes (rows; the logic rules of the subject are
attn_preflight.rules.engines.sglang.rules.kv_sharding)."""

from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    Constraint,
    Env,
    EnvTrue,
    Feature,
    Flag,
    Model,
    Not,
    Requirement,
    Since,
    constraint_rules,
)
from attn_preflight.rules.knowledge.parallel import DEFAULT_TRANSFER_BACKEND

KV_SHARD_HOOK = "sglang: python/sglang/srt/arg_groups/kv_shard_hook.py"
SHARDING = Flag("enable_kv_cache_sharding")
TRANSFER = "disaggregation_transfer_backend"
STAGING_BUFFER_ENV = "SGLANG_DISAGG_STAGING_BUFFER"
TREE_CORE_ENV = "SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND"
# configs/model_config.py is_encoder_decoder_model, what the refusal reads (:2425-2431 in 0.5.22, :2540-2546 in 0.5.23)
ENCODER_DECODER_ARCHITECTURES = (
    "WhisperForConditionalGeneration",
    "MllamaForConditionalGeneration",
    "MossVLForConditionalGeneration",
)

ROWS = (
    Constraint(
        id="kv-sharding-transfer-backend",
        title="--enable-kv-cache-sharding sends pages over mooncake or nixl only, without the staging buffer",
        versions="sglang>=0.5.22",
        stage="startup",
        when=SHARDING,
        requires=(
            Requirement(
                AnyOf((Not(Flag(TRANSFER)), Flag(TRANSFER, ("mooncake", "nixl")))),
                (f"--disaggregation-transfer-backend {DEFAULT_TRANSFER_BACKEND}",),
            ),
            Requirement(Not(EnvTrue(STAGING_BUFFER_ENV)), (f"unset {STAGING_BUFFER_ENV}",)),
        ),
        first_only=True,
        prevents="--enable-kv-cache-sharding currently only supports the mooncake and nixl transfer backends: both "
        "route sends through CommonKVSender._prepare_send_indices and pair destinations by fancy index. Got "
        "--disaggregation-transfer-backend {backend!r}.; --enable-kv-cache-sharding is incompatible with "
        "SGLANG_DISAGG_STAGING_BUFFER (the staging path assumes contiguous send slices).",
        source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
        docs="""Checks that `--enable-kv-cache-sharding` moves its pages to the decode side with
`--disaggregation-transfer-backend` mooncake (the default) or nixl, and without `SGLANG_DISAGG_STAGING_BUFFER`
set true.

Only those two senders pick each rank's stripe out of a page by index; the staging path copies contiguous
slices, which a stripe is not. SGLang refuses both at start-up.""",
        fix_title="Use --disaggregation-transfer-backend mooncake (or nixl) and leave SGLANG_DISAGG_STAGING_BUFFER "
        "unset",
    ),
    Constraint(
        id="kv-sharding-radix-tree-core",
        title="--enable-kv-cache-sharding with the radix cache on needs the Python tree core (0.5.22 defaults to Rust)",
        versions="sglang>=0.5.22",
        stage="startup",
        when=SHARDING,
        requires=AnyOf(
            (
                Flag("disable_radix_cache"),
                Flag("enable_mis"),
                Env(TREE_CORE_ENV, ("python",)),
                # unset (or empty): 0.5.23 sets python itself, 0.5.22's default is rust
                All((AnyOf((Not(Env(TREE_CORE_ENV)), Env(TREE_CORE_ENV, ("",)))), Since("0.5.23"))),
            )
        ),
        fix=(f"{TREE_CORE_ENV}=python",),
        prevents="--enable-kv-cache-sharding requires the Python UnifiedTreeCore: "
        "SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND={tree_core_backend!r} is not supported for sharded KV.",
        source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding; sglang: python/sglang/srt/environ.py",
        docs="""Checks the radix tree core a sharded prefill worker runs: with the radix cache on (no
`--disable-radix-cache`, no `--enable-mis`), SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND must be python. In sglang
0.5.22 the variable defaults to rust, so every sharded launch that keeps the radix cache fails unless it sets
the variable; 0.5.23 sets python itself when the variable is unset.

Only the Python tree core carries the rotation base of a sharded page; a disabled radix cache never matches
or inserts, so it never needs one. SGLang refuses the rest at start-up.""",
        fix_title="Set SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python, or pass --disable-radix-cache",
    ),
    Constraint(
        id="kv-sharding-model-attention",
        title="--enable-kv-cache-sharding refuses encoder-decoder and chunked local-attention models",
        versions="sglang>=0.5.22",
        needs_model=True,
        stage="startup",
        when=SHARDING,
        requires=All((Not(Model(architectures=ENCODER_DECODER_ARCHITECTURES)), Not(Feature("chunked_local")))),
        prevents="--enable-kv-cache-sharding does not support encoder-decoder models: cross-attention uses a "
        "separate encoder page table that is not part of the sharded gather plan.; --enable-kv-cache-sharding does "
        "not support chunked/local-attention models yet: local-attention metadata is built from the page table "
        "before the scratch translation.",
        source=f"{KV_SHARD_HOOK}, handle_kv_cache_sharding",
        docs="""Checks that a model served with `--enable-kv-cache-sharding` is not one SGLang runs as encoder-decoder
(Whisper, Mllama, Moss-VL: the architectures its is_encoder_decoder lists) and has no chunked local attention
(`attention_chunk_size` in its config.json: Llama 4).

Cross attention reads a separate encoder page table, and local attention builds its metadata from the page
table before the sharded scratch translation; neither is part of the sharded gather plan, and SGLang refuses
both at start-up.""",
        fix_title="Serve this model without --enable-kv-cache-sharding",
    ),
)

constraint_rules(__name__, ROWS)
