"""vLLM's flag constraints as rows (attn_preflight.rules.core.constraints), one module per subject, each row with
the upstream message, site and stage, judged by one evaluator."""
