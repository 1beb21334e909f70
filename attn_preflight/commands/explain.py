"""`explain RULE`: one rule's documentation, ruff-style (what it checks, why, fix, prevents, references).

It also answers for the findings `check --smoke` reports beside the rules (attn_preflight.check_smoke.SMOKE_CHECKS), which
are not rules: `evaluate` never runs them."""

from __future__ import annotations

import click

from attn_preflight.cli import InputError, close_ids
from attn_preflight.commands.common import format_option, screen_for, write_output
from attn_preflight.render import PLAIN, Screen, heading, reflow, to_json, wrap_lines


def provenance_text(verified) -> str:
    """A rule's provenance rows as a list: the releases read, then one item per site read (release, file:line,
    function, note, the upstream message where it differs from the row before), then the notes without a site."""
    if not verified:
        return ""
    lines = [f"read: {verified['read']}"] if verified.get("read") else []
    shown = None
    for row in verified.get("rows", ()):
        where = f"{row['file']}:{row['line']}" + (f"-{row['end_line']}" if row.get("end_line") else "")
        item = f"- {row.get('release') or row.get('releases')} {where}"
        if row.get("function"):
            item += f" ({row['function']})"
        if row.get("note"):
            item += f": {row['note']}"
        if row.get("message") and row["message"] != shown:
            item += f'; message "{row["message"]}"'
        shown = row.get("message") or shown
        lines.append(item)
    lines += [f"- {note}" for note in verified.get("notes", ())]
    return "\n".join(lines)


def render_rule(r, fmt: str, screen: Screen = PLAIN) -> str:
    """A rule's documentation, or a check --smoke finding's (rules.core.engine.ReportedCheck)."""
    from attn_preflight.rules.core.engine import STAGES, Rule

    if isinstance(r, Rule):
        r = r.shown()  # a rule worded from a declaration: as the declaration reads now
    if fmt == "json":
        return to_json(r.to_dict())
    level = 3 if fmt == "markdown" else 2
    if isinstance(r, Rule):
        about = f"engine: {r.engine} · holds for: {r.versions} · subject: {r.subject}" + (
            " · needs a live probe or --facts" if r.needs_software else ""
        )
    elif r.to_dict().get("reported_by") == "check --ask-engine":
        about = "reported by check --ask-engine, from the installed engine's own answer (not a rule)"
    else:
        about = "reported by check --smoke, from the kernels' run on this machine (not a rule)"
    out = [
        heading(f"{r.id}: {r.title}", fmt, level=1),
        wrap_lines(about + (f"\nwithout it, the engine fails at {STAGES[r.stage]}" if r.stage else ""), screen),
    ]
    sections = [("What it checks", r.what), ("Why", r.why), ("Fix", r.fix_title)]
    if r.prevents:
        sections.append(("Prevents", f'"{r.prevents}"'))
    if isinstance(r, Rule) and r.reason:
        sections.append(("Reason", r.reason))
    sections.append(("Source", r.source))
    if r.references:
        sections.append(("References", "\n".join(f"- {ref}" for ref in r.references)))
    if isinstance(r, Rule):
        sections.append(("Verified", provenance_text(r.verified)))
    for title, body in sections:
        if body:
            text = wrap_lines(reflow(body.strip(), screen), screen, labels=False)
            out.append(f"{heading(title, fmt, level=level)}\n{text}")
    return "\n\n".join(out)


@click.command("explain")
@click.argument("rule_id", metavar="RULE")
@format_option()
def explain_command(rule_id, fmt):
    """Explain one rule: what it checks, why, the fix, the upstream error it prevents, references.
    Also smoke-kernel and smoke-disagrees, the findings of `check --smoke`, and engine-answer and
    engine-disagrees, those of `check --ask-engine`.

    \b
    attn-preflight explain fa4-deterministic-mla-arch
    attn-preflight explain smoke-kernel
    """
    from attn_preflight.rules.core.registry import get_rule, rule_ids

    wanted = rule_id.strip().lower()
    r = get_rule(wanted)
    if r is None:  # attn_preflight.check_smoke loads the smoke planner: only when no rule answers
        from attn_preflight.check_smoke import SMOKE_CHECKS

        r = SMOKE_CHECKS.get(wanted)
    if r is None:  # the findings of `check --ask-engine`
        from attn_preflight.check_engine import ENGINE_CHECKS

        r = ENGINE_CHECKS.get(wanted)
    if r is None:
        from attn_preflight.check_engine import ENGINE_CHECKS
        from attn_preflight.check_smoke import SMOKE_CHECKS

        known = rule_ids() + list(SMOKE_CHECKS) + list(ENGINE_CHECKS)
        raise InputError(f"unknown rule {rule_id!r}{close_ids(wanted, known)}")
    write_output(render_rule(r, fmt.lower(), screen_for(fmt, None)), None)
