"""`explain RULE`: one rule's documentation, ruff-style (what it checks, why, fix, prevents, references)."""
from __future__ import annotations

import click

from probe.cli import InputError, did_you_mean
from probe.commands.common import format_option
from probe.render import heading, to_json


def render_rule(r, fmt: str) -> str:
    from rules.engine import STAGES

    if fmt == "json":
        return to_json(r.to_dict())
    level = 3 if fmt == "markdown" else 2
    out = [heading(f"{r.id}: {r.title}", fmt, level=1),
           f"engine: {r.engine} · holds for: {r.versions} · subject: {r.subject}"
           + (" · needs a live probe or --facts" if r.needs_software else "")
           + (f"\nwithout it, the engine fails at {STAGES[r.stage]}" if r.stage else "")]
    sections = [("What it checks", r.what), ("Why", r.why), ("Fix", r.fix_title)]
    if r.prevents:
        sections.append(("Prevents", f'"{r.prevents}"'))
    if r.reason:
        sections.append(("Reason", r.reason))
    sections.append(("Source", r.source))
    if r.references:
        sections.append(("References", "\n".join(f"- {ref}" for ref in r.references)))
    for title, body in sections:
        if body:
            out.append(f"{heading(title, fmt, level=level)}\n{body.strip()}")
    return "\n\n".join(out)


@click.command("explain")
@click.argument("rule_id", metavar="RULE")
@format_option()
def explain_command(rule_id, fmt):
    """Explain one rule: what it checks, why, the fix, the upstream error it prevents, references.

    \b
    attn-preflight explain fa4-deterministic-mla-arch
    """
    from rules.engine import get_rule, rule_ids

    r = get_rule(rule_id.strip().lower())
    if r is None:
        raise InputError(f"unknown rule {rule_id!r}{did_you_mean(rule_id, rule_ids())}; "
                         "list them with `attn-preflight rules`")
    click.echo(render_rule(r, fmt.lower()))
