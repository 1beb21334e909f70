"""`rules`: every rule the check engine knows, with the versions it holds for."""

from __future__ import annotations

import click

from attn_preflight.cli import InputError, did_you_mean
from attn_preflight.commands.common import format_option, screen_for, write_output
from attn_preflight.render import table, to_json


@click.command("rules")
@click.option("--engine", type=click.Choice(["sglang", "vllm", "any"]), default=None, help="Only this engine's rules.")
@click.option("--subject", default=None, metavar="NAME", help="Only one subject (fa3, fa4, kv_cache, ...).")
@format_option()
@click.argument("words", nargs=-1, metavar="[WORD]...")
def rules_command(engine, subject, fmt, words):
    """List the rules `check` applies (id, engine, versions, title). `explain RULE` tells more.

    \b
    attn-preflight rules
    attn-preflight rules --engine vllm --format json
    attn-preflight rules --subject fa4
    attn-preflight rules mla            # rules whose id or title holds every WORD
    """
    from attn_preflight.rules.core.registry import all_rules

    rules = [r.shown() for r in all_rules()]  # a rule worded from a declaration: as the declaration reads now
    if subject is not None:
        subjects = {r.subject for r in rules}
        if subject not in subjects:
            raise InputError(f"unknown subject {subject!r}{did_you_mean(subject, subjects)}")
        rules = [r for r in rules if r.subject == subject]
    if engine is not None:
        rules = [r for r in rules if r.engine == engine]
    for word in (w.lower() for w in words):
        rules = [r for r in rules if word in r.id or word in r.title.lower()]
    if words and not rules:
        raise InputError(f"no rule's id or title holds {' '.join(words)!r}; `attn-preflight rules` lists them all")
    fmt = fmt.lower()
    if fmt == "json":
        write_output(to_json([r.to_dict() for r in rules]), None)
        return
    rows = [[r.id, r.engine, r.versions, r.title] for r in rules]
    headers = ["rule", "engine", "holds for", "title"]
    listing = table(headers, rows, fmt, width=screen_for(fmt, None).width, detail=3)
    write_output(f"{listing}\n\n{len(rules)} rules; `attn-preflight explain RULE` for details", None)
