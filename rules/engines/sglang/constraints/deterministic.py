"""Flag constraints of SGLang's deterministic inference (rows; the backend-list rules of the subject are
attn_preflight.rules.engines.sglang.rules.deterministic)."""

from attn_preflight.rules.core.constraints import Constraint, Flag, Not, Rewritten, constraint_rules

ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"

ROWS = (
    Constraint(
        id="deterministic-rl-on-policy",
        title="--rl-on-policy-target turns deterministic inference on",
        versions="sglang>=0.5.4.post3",
        stage="startup",
        prevents="Enable deterministic inference because of rl_on_policy_target.",
        source=f"{ATTENTION_HOOK}, handle_deterministic_inference",
        docs="""Warns that `--rl-on-policy-target` turns `--enable-deterministic-inference` on.

SGLang then judges the attention backend against its deterministic list, fills the deterministic fallback
backend when none is named, may turn the radix cache off, and forces pytorch sampling: the deterministic rules
judge the launch as SGLang runs it.""",
        fix_title="Add --enable-deterministic-inference to say what runs",
        when=Flag("rl_on_policy_target"),
        # SGLang turns the flag on itself: a launch that left it off runs deterministic inference anyway
        requires=Not(Rewritten("deterministic", "false")),
        fix=("--enable-deterministic-inference",),
        severity="warn",
    ),
)

constraint_rules(__name__, ROWS)
