"""`check --engine-version sglang==0.5.20 --upgrade-to 0.5.23`: the check at the release upgraded to, and what
changes for this config between the two releases (attn_preflight.rules.engines.upgrade: the per-release
knowledge, no engine imported). Kept apart from commands/check.py, which only adds the option and hands over."""

from __future__ import annotations

import json
from typing import Optional

import click

from attn_preflight.commands.common import screen_for, write_output
from attn_preflight.render import heading, to_json, wrap_lines


def upgrade_option():
    return click.option(
        "--upgrade-to",
        metavar="VER",
        default=None,
        help="Also say what upgrading the engine from its --engine-version release to VER changes for this config: "
        "new or fixed failures, new warnings, a different default backend / page size / KV dtype, removed flags "
        "and choices. The check is the one at VER (exit 1 when the config fails there).",
    )


def run_upgrade(config, target, to_release: str, fmt: str, output: Optional[str], show_all: bool, strict: bool):
    """Judges the config at both releases, writes the report at `to_release` with the upgrade's changes, and
    returns the exit code of the report at `to_release`."""
    from attn_preflight.commands.check import input_error
    from attn_preflight.render.findings import render_report
    from attn_preflight.rules.core.errors import RulesInputError
    from attn_preflight.rules.engines.upgrade import compare

    try:
        upgrade = compare(config, target, to_release.strip())
    except RulesInputError as err:
        raise input_error(err) from None
    fmt = fmt.lower()
    screen = screen_for(fmt, output)
    if fmt == "json":
        report = json.loads(render_report(upgrade.after, "json"))
        report["upgrade"] = upgrade.to_dict()
        write_output(to_json(report), output)
    else:
        text = render_report(upgrade.after, fmt, show_all=show_all, screen=screen)
        write_output(text + "\n\n" + render_upgrade(upgrade, fmt, screen), output)
    return upgrade.after.exit_code(strict)


def render_upgrade(upgrade, fmt: str, screen) -> str:
    """The changes, one line each, for table and markdown."""
    lines: list[str] = []

    def said(label: str, ids) -> None:
        if ids:
            lines.append(f"{label}: {', '.join(ids)}")

    said("new failures", upgrade.new_failures)
    said("failures fixed", upgrade.fixed)
    said("new warnings", upgrade.new_warnings)
    said("warnings cleared", upgrade.cleared_warnings)
    for r in upgrade.resolved:
        lines.append(f"{r.setting}: {r.before} -> {r.after}")
    for f in upgrade.flags:
        lines.append(f"{f.flag}: {f.change}: {f.detail}")
    verdicts = f"verdict {upgrade.before.verdict.value.upper()} -> {upgrade.after.verdict.value.upper()}"
    if not upgrade.changes:
        lines.append("nothing this config uses changes")
    title = f"Upgrade {upgrade.engine} {upgrade.from_release} -> {upgrade.to_release} ({verdicts})"
    body = "\n".join(f"- {line}" for line in lines) if fmt == "markdown" else wrap_lines("\n".join(lines), screen)
    return f"{heading(title, fmt)}\n{body}"
