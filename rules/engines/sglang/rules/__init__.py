"""SGLang's rules, one module per subject (attn_preflight.rules.checks.MODULES lists them)."""
