"""`gpus`: the GPU profiles `check --gpu` and `matrix` know, with compute capability, memory and source."""

from __future__ import annotations

import click

from attn_preflight.commands.common import format_option, screen_for, write_output
from attn_preflight.render import table, to_json


@click.command("gpus")
@format_option()
def gpus_command(fmt):
    """List GPU profiles (names and aliases accepted by --gpu; a compute capability such as sm_90 works too).
    NVIDIA only: an AMD or Intel name given to --gpu is refused as not profiled.

    \b
    attn-preflight gpus
    attn-preflight gpus --format json
    """
    from attn_preflight.rules.knowledge.gpus import PROFILES

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
    headers = ["gpu", "cc", "sm", "memory GiB", "aliases", "note"]
    write_output(table(headers, rows, fmt, width=screen_for(fmt, None).width, detail=5), None)
