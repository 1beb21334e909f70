"""`models`: the built-in model presets `--model` accepts, with the attention shape each one's config gives."""

from __future__ import annotations

import click

from attn_preflight.commands.common import format_option, screen_for, write_output
from attn_preflight.render import table, to_json


def _attention(model) -> str:
    """MLA / MHA / GQA with the head counts and head dim, then the features the rules key on."""
    kind = "MLA" if model.mla else "MHA" if model.gqa_ratio == 1 else "GQA"
    heads = f"{kind} {model.num_attention_heads}/{model.num_key_value_heads} heads, head dim {model.head_dim}"
    extras = sorted(model.features - {"mla"}) + (["hybrid_linear"] if model.hybrid_linear else [])
    return "\n".join([heads, *extras])


@click.command("models")
@format_option()
def models_command(fmt):
    """List the model presets (--model takes a preset's name, hub id or alias; anything else is read from disk or
    the local Hugging Face cache).

    \b
    attn-preflight models
    attn-preflight models --format json
    """
    from attn_preflight.rules.core.models import load_preset, presets

    fmt = fmt.lower()
    loaded = [(name, preset, load_preset(name)) for name, preset in presets().items()]
    if fmt == "json":
        write_output(
            to_json(
                [
                    {
                        "name": name,
                        "hub_id": preset["hub_id"],
                        "aliases": preset["aliases"],
                        "source": preset["source"],
                        "model": model.to_dict(),
                    }
                    for name, preset, model in loaded
                ]
            ),
            None,
        )
        return
    rows = [
        [name, "\n".join([preset["hub_id"], *preset["aliases"]]), _attention(model)] for name, preset, model in loaded
    ]
    write_output(table(["preset", "hub id, aliases", "attention"], rows, fmt, width=screen_for(fmt, None).width), None)
