"""`gpus`: the GPU profiles `check --gpu` and `matrix` know, with compute capability, memory and source."""

from __future__ import annotations

import click

from attn_preflight.commands.common import format_option, write_output
from attn_preflight.render import table, to_json


@click.command("gpus")
@format_option()
def gpus_command(fmt):
    """List GPU profiles (names and aliases accepted by --gpu; a compute capability such as sm_90 works too)."""
    from rules.knowledge.gpus import PROFILES

    fmt = fmt.lower()
    if fmt == "json":
        write_output(
            to_json(
                [
                    {
                        "name": p.name,
                        "compute_capability": p.compute_capability,
                        "sm": p.sm,
                        "memory_gib": p.memory_gib,
                        "aliases": list(p.aliases),
                        "source": p.source,
                        "note": p.note or None,
                    }
                    for p in PROFILES
                ]
            ),
            None,
        )
        return
    rows = [[p.name, p.compute_capability, p.sm, p.memory_gib, ", ".join(p.aliases), p.note] for p in PROFILES]
    write_output(table(["gpu", "cc", "sm", "memory GiB", "aliases", "note"], rows, fmt), None)
