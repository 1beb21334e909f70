"""Rule modules, one per subject, each named with the engine its rules are for ("any": rules of either engine or
of both). Importing a module registers its rules (see attn_preflight.rules.core.engine.rule); attn_preflight.rules.core.registry imports the modules an
engine's check needs, so an SGLang check never loads vLLM's declarations.

One line per module; add yours in the list below.
"""

MODULES = {
    "attn_preflight.rules.checks.general": "any",
    "attn_preflight.rules.engines.sglang.constraints.general": "sglang",
    "attn_preflight.rules.engines.sglang.rules.fa3": "sglang",
    "attn_preflight.rules.engines.sglang.declared.fa4": "sglang",
    "attn_preflight.rules.engines.sglang.rules.fa4": "sglang",
    "attn_preflight.rules.engines.sglang.declared.fa3": "sglang",
    "attn_preflight.rules.engines.sglang.rules.kv_cache": "sglang",
    "attn_preflight.rules.engines.sglang.rules.unified_memory": "sglang",
    "attn_preflight.rules.engines.sglang.rules.hicache": "sglang",
    "attn_preflight.rules.engines.sglang.rules.radix": "sglang",
    "attn_preflight.rules.engines.sglang.rules.kv_sharding": "sglang",
    "attn_preflight.rules.engines.sglang.rules.mamba": "sglang",
    "attn_preflight.rules.engines.sglang.constraints.kv_cache": "sglang",
    "attn_preflight.rules.engines.sglang.rules.deterministic": "sglang",
    "attn_preflight.rules.engines.sglang.constraints.deterministic": "sglang",
    "attn_preflight.rules.engines.sglang.rules.vision": "sglang",
    "attn_preflight.rules.engines.vllm.rules.backend": "vllm",
    "attn_preflight.rules.engines.vllm.reasons": "vllm",
    "attn_preflight.rules.engines.vllm.rules.kernels": "vllm",
    "attn_preflight.rules.engines.vllm.constraints.kernels": "vllm",
    "attn_preflight.rules.engines.vllm.rules.model": "vllm",
    "attn_preflight.rules.engines.vllm.constraints.model": "vllm",
    "attn_preflight.rules.engines.vllm.rules.legacy": "vllm",
    "attn_preflight.rules.engines.vllm.constraints.legacy": "vllm",
    "attn_preflight.rules.engines.sglang.rules.model_specific": "sglang",
    "attn_preflight.rules.engines.sglang.constraints.model_specific": "sglang",
    "attn_preflight.rules.engines.sglang.rules.linear_attention": "sglang",
    "attn_preflight.rules.engines.sglang.constraints.linear_attention": "sglang",
    "attn_preflight.rules.engines.sglang.rules.speculative": "sglang",
    "attn_preflight.rules.engines.sglang.constraints.speculative": "sglang",
    "attn_preflight.rules.engines.sglang.rules.mla_backends": "sglang",
    "attn_preflight.rules.engines.sglang.declared.mla_backends": "sglang",
    "attn_preflight.rules.engines.sglang.rules.dsa": "sglang",
    "attn_preflight.rules.checks.install": "any",
    "attn_preflight.rules.checks.memory": "any",
    "attn_preflight.rules.checks.parallel": "any",
}
