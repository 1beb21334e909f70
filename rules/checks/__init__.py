"""Rule modules, one per subject, each named with the engine its rules are for ("any": rules of either engine or
of both). Importing a module registers its rules (see rules.engine.rule); rules.registry imports the modules an
engine's check needs, so an SGLang check never loads vLLM's declarations.

One line per module; add yours in the list below.
"""

MODULES = {
    "rules.checks.general": "any",
    "rules.checks.fa3": "sglang",
    "rules.checks.fa4": "sglang",
    "rules.checks.kv_cache": "sglang",
    "rules.checks.deterministic": "sglang",
    "rules.checks.vision": "sglang",
    "rules.checks.vllm": "vllm",
    "rules.checks.model_specific": "sglang",
    "rules.checks.speculative": "sglang",
    "rules.checks.mla_backends": "sglang",
    "rules.checks.dsa": "sglang",
    "rules.checks.install": "any",
    "rules.checks.memory": "any",
    "rules.checks.parallel": "any",
}
