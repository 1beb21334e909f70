"""Linear-attention flag constraints of SGLang (rows; the logic rules of the subject are
attn_preflight.rules.engines.sglang.rules.linear_attention)."""

from attn_preflight.rules.core.constraints import AnyOf, Constraint, Flag, Not, constraint_rules

ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"

ROWS = (
    Constraint(
        id="model-linear-attn-flashkda-decode",
        title="FlashKDA is prefill-only: --linear-attn-decode-backend flashkda is refused",
        versions="sglang>=0.5.15",
        stage="startup",
        prevents="--linear-attn-decode-backend flashkda is not supported: FlashKDA is prefill-only. Use "
        "--linear-attn-prefill-backend flashkda (decode stays on triton).",
        source=f"{ATTENTION_HOOK}, handle_linear_attn_backend",
        docs="""Checks that `--linear-attn-decode-backend` is not flashkda.

FlashKDA has only a prefill kernel for Kimi delta attention. SGLang refuses it named for decode at start-up,
whatever the model; `--linear-attn-backend flashkda` (prefill and decode inherit it) keeps FlashKDA for
prefill and quietly runs triton decode.""",
        fix_title="Use --linear-attn-prefill-backend flashkda and leave decode on triton",
        when=AnyOf((Flag("linear_attn_decode_backend"), Flag("linear_attn_backend", ("flashkda",)))),
        requires=Not(Flag("linear_attn_decode_backend", ("flashkda",))),
        fix=("--linear-attn-prefill-backend flashkda --linear-attn-decode-backend triton",),
    ),
)

constraint_rules(__name__, ROWS)
