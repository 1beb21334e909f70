"""Gates of the backends outside the FA and MLA families, generated from their declarations (gate.Gate rows
judged by gate.judge through the validator, rules/engines/sglang/reasons.py)."""

from attn_preflight.rules.engines.sglang.declared.gate import Gate, gate_rules

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"

ROWS = (
    Gate(
        id="hpc-ops-page-size",
        title="hpc_ops silently forces {requires}",
        versions="sglang>=0.5.17",
        stage="startup",
        prevents="HPC-Ops attention only supports a page_size of 64, changing page_size from {page_size} to 64.",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Warns when hpc_ops (any phase) runs with a page size other than its declared {requires}, given or not:
SGLang logs a warning and uses {hpc_ops.page_sizes} (its check reads the page size before SGLang's default
is set, so an unset size is changed too).

The rewrite changes prefix-cache granularity; passing the size makes it explicit.""",
        fix_title="Pass the page size hpc_ops takes (--page-size {hpc_ops.page_snap})",
        backend="hpc_ops",
        fact="page_sizes",
        backends=("hpc_ops",),
        unset_page_snapped=True,
    ),
)

gate_rules(__name__, ROWS)
