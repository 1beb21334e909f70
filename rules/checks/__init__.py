"""Rule modules, one per subject, each named with the engine its rules are for ("any": rules of either engine or
of both). Importing a module registers its rules (see attn_preflight.rules.engine.rule); attn_preflight.rules.registry imports the modules an
engine's check needs, so an SGLang check never loads vLLM's declarations.

One line per module; add yours in the list below.
"""

MODULES = {
    "attn_preflight.rules.checks.general": "any",
    "attn_preflight.rules.checks.fa3": "sglang",
    "attn_preflight.rules.checks.fa4": "sglang",
    "attn_preflight.rules.checks.kv_cache": "sglang",
    "attn_preflight.rules.checks.deterministic": "sglang",
    "attn_preflight.rules.checks.vision": "sglang",
    "attn_preflight.rules.checks.vllm": "vllm",
    "attn_preflight.rules.checks.model_specific": "sglang",
    "attn_preflight.rules.checks.speculative": "sglang",
    "attn_preflight.rules.checks.mla_backends": "sglang",
    "attn_preflight.rules.checks.dsa": "sglang",
    "attn_preflight.rules.checks.install": "any",
    "attn_preflight.rules.checks.memory": "any",
    "attn_preflight.rules.checks.parallel": "any",
}
