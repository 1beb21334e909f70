"""Flag constraints of SGLang's speculative decoding (rows; the logic rules of the subject, which read the
draft tree SGLang settles on, are attn_preflight.rules.engines.sglang.rules.speculative)."""

from attn_preflight.rules.core.constraints import All, Constraint, Declares, Flag, Not, Since, constraint_rules

SPEC_HOOK = "sglang: python/sglang/srt/arg_groups/speculative_hook.py"

ROWS = (
    Constraint(
        id="spec-flex-attention",
        title="flex_attention does not support speculative decoding",
        versions="sglang>=0.5.3",
        verified="sglang 0.5.3-0.5.23: the same assert speculative_algorithm is None for flex_attention in every "
        "release from the first with the backend (server_args.py in 0.5.3-0.5.14, "
        "arg_groups/attention_hook.py:144-163 in 0.5.23; bench/release_walk.py grep)",
        stage="startup",
        prevents="Speculative decoding is currently not supported with Flex Attention backend",
        source="sglang: python/sglang/srt/arg_groups/attention_hook.py, handle_attention_backend_compatibility",
        docs="""Checks that `--speculative-algorithm` is not combined with `--attention-backend flex_attention`.

SGLang's FlexAttention backend has no target-verify or draft-extend path; SGLang asserts against any
speculative algorithm on it at start-up.""",
        fix_title="Use --attention-backend flashinfer or triton, or drop --speculative-algorithm",
        when=Flag("speculative_algorithm"),
        requires=Not(
            All(
                (
                    Flag("attention_backend", ("flex_attention",)),
                    Declares("flex_attention", "refuses", "speculative_decoding"),
                )
            )
        ),
        fix=("--attention-backend triton",),
    ),
    Constraint(
        id="spec-rejection-sampling-deterministic",
        title="Rejection sampling and deterministic inference (sglang 0.5.14-0.5.22)",
        versions="sglang>=0.5.14",
        verified="sglang 0.5.14-0.5.23, the block read in every wheel: 0.5.14-0.5.22 raise for "
        "enable_deterministic_inference under rejection sampling (arg_groups/speculative_hook.py:366 in 0.5.14, "
        ":421 in 0.5.15, :652 in 0.5.18, :770 in 0.5.19, :948 in 0.5.20, :1144 in 0.5.22); 0.5.23 raises only off "
        "CUDA ('Deterministic rejection sampling is currently supported only on CUDA-compatible devices', :1225), "
        "which the rule passes",
        stage="startup",
        prevents="--speculative-use-rejection-sampling is incompatible with --enable-deterministic-inference; the "
        "sampling kernel draws coins from the global RNG and is not batch-invariant.",
        source=f"{SPEC_HOOK}, _handle_eagle_family",
        docs="""Checks `--speculative-use-rejection-sampling` together with `--enable-deterministic-inference`.

From sglang 0.5.14 to 0.5.22 the rejection-sampling kernel drew its coins from the global RNG, which is not
batch-invariant, and SGLang refused the combination at start-up. sglang 0.5.23 draws draft proposals with a
Triton hash kernel and allows it on CUDA ("Deterministic rejection sampling is currently supported only on
CUDA-compatible devices ..."), so on 0.5.23 the combination passes.""",
        fix_title="Upgrade to sglang 0.5.23, or drop --speculative-use-rejection-sampling",
        when=All((Flag("speculative_use_rejection_sampling"), Flag("deterministic"))),
        # sglang 0.5.23 draws the draft with a batch-invariant Triton hash kernel on CUDA
        requires=Since("0.5.23"),
        fix=("pip install 'sglang>=0.5.23'",),
    ),
)

constraint_rules(__name__, ROWS)
