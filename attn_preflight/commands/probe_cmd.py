"""`attn-preflight probe`: what this machine is, and what of its attention stack is broken.

Probe reports, it does not judge: it exits 0 however broken the machine is (`check` judges).
"""

from __future__ import annotations

from typing import Optional

import click

from attn_preflight.commands.common import (
    FORMATS,
    check_output_writable,
    format_option,
    output_option,
    positive_seconds,
    screen_for,
    slow_note,
    write_output,
)

DEFAULT_TIMEOUT_S = 60.0


@click.command("probe")
@format_option(FORMATS + ("nfd",))
@output_option()
@click.option(
    "--no-imports",
    is_flag=True,
    help="Skip the import checks (fast; import health is then reported as unknown, not healthy).",
)
@click.option(
    "--timeout",
    type=float,
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    callback=positive_seconds,
    help="Time limit for each library's import check.",
)
@click.option(
    "--no-cache", is_flag=True, help="Import every library afresh: neither read nor write the import-check cache."
)
@click.pass_context
def probe_command(
    ctx: click.Context, fmt: str, output: Optional[str], no_imports: bool, timeout: float, no_cache: bool
) -> None:
    """Report GPUs, driver, CUDA toolkit, torch build and every attention library (FlashAttention 2/3/4,
    FlashInfer, sgl-kernel, CUTLASS, triton, xformers, ...) with its version and whether it imports.

    Each import runs in its own subprocess, all in parallel, with a timeout; a failure is reported with
    what it means. Results are cached per install ($XDG_CACHE_HOME/attn-preflight). GPUs are read through
    NVML, without creating a CUDA context. Always exits 0: probe reports, `check` judges.

    \b
    attn-preflight probe
    attn-preflight probe --format json -o node.json
    attn-preflight probe --format markdown --no-imports
    """
    check_output_writable(output)
    from attn_preflight.probe.collect import collect

    started = (ctx.obj or {}).get("gpu_probe")  # forked by attn_preflight.start, before click loaded
    what = "GPUs, CUDA toolkit" + ("" if no_imports else ", each library's import in its own process")
    with slow_note(f"probing this machine: {what} (up to {timeout:g} s; cached afterwards)…"):
        facts = collect(check_imports=not no_imports, timeout=timeout, use_cache=not no_cache, gpu_probe=started)
    if fmt.lower() == "json":
        from attn_preflight.render import to_json
        from attn_preflight.render.facts import facts_document

        text = to_json(facts_document(facts))
    elif fmt.lower() == "nfd":  # a Node Feature Discovery features.d file; see probe/render/nfd.py
        from attn_preflight.fleet import node_serving
        from attn_preflight.render.nfd import render_nfd

        text = render_nfd(facts, node_serving(facts))
    else:
        from attn_preflight.render.facts import render_facts

        text = render_facts(facts, fmt.lower(), screen_for(fmt, output))
    write_output(text, output)
