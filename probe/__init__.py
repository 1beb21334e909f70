"""attn-preflight: a hardware capability probe and diagnostic CLI for LLM-serving attention stacks."""

__version__ = "0.1.0"
