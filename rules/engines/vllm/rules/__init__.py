"""vLLM's rules (attn_preflight.rules.checks.MODULES lists them)."""
