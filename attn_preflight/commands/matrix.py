"""`matrix`: one model's capability report across every GPU profile x attention backend (x KV dtype)."""

from __future__ import annotations

import click

from attn_preflight.commands.check import input_error
from attn_preflight.commands.common import (
    check_output_writable,
    format_option,
    not_blank,
    output_option,
    screen_for,
    write_output,
)
from attn_preflight.rules.core.errors import RulesInputError


@click.command("matrix")
@click.option(
    "--model",
    required=True,
    metavar="DIR|CONFIG|PRESET",
    callback=not_blank,
    help="Local HF model directory, config.json or preset.",
)
@click.option(
    "--kv-cache-dtype",
    "kv_dtypes",
    multiple=True,
    metavar="DTYPE",
    help="KV-cache dtype (repeatable; one table each). Default: auto.",
)
@click.option(
    "--gpu", "gpus", multiple=True, metavar="NAME", callback=not_blank, help="Only these GPU profiles (repeatable)."
)
@click.option("--backend", "backends", multiple=True, metavar="NAME", help="Only these backends (repeatable).")
@click.option("--engine", type=click.Choice(["sglang", "vllm"]), default="sglang", show_default=True)
@click.option("--enable-deterministic-inference", "--deterministic", "deterministic", is_flag=True, default=None)
@click.option("--page-size", type=int, metavar="N")
@click.option("--tp-size", "--tp", "tp_size", type=int, metavar="N")
@click.option("--feature", "features", multiple=True, metavar="NAME", help="Model feature (repeatable).")
@format_option()
@output_option()
def matrix_command(model, kv_dtypes, gpus, backends, engine, deterministic, page_size, tp_size, features, fmt, output):
    """Capability report for one model: every GPU profile x backend, cells pass / warn / fail.

    \b
    attn-preflight matrix --model deepseek-v3 --kv-cache-dtype auto --kv-cache-dtype fp8_e4m3
    """
    from attn_preflight.inputs import ModelNotFound, load_model
    from attn_preflight.render.matrix import render_matrix
    from attn_preflight.rules.core.grid import gpu_targets, judge_grid
    from attn_preflight.rules.core.target import Target
    from attn_preflight.rules.core.validation import make_config
    from attn_preflight.rules.engines import backends as backend_kb

    check_output_writable(output)
    try:
        values = {"deterministic": deterministic, "page_size": page_size, "tp_size": tp_size}
        try:
            loaded = load_model(model)
        except ModelNotFound as err:  # a matrix of one model needs that model
            raise RulesInputError(f"--model {err}") from None
        config = make_config(engine=engine, model=loaded, features=features, **values)
        for kv in kv_dtypes:  # validated through the one config parser
            make_config(engine=engine, kv_cache_dtype=kv)
        for backend in backends:
            make_config(engine=engine, attention_backend=backend)
        for gpu in gpus:
            Target.from_gpu(gpu)
    except RulesInputError as err:
        raise input_error(err) from None
    columns = [backend_kb.canonical(engine, b) for b in backends]
    grid = judge_grid(config, gpu_targets(gpus), columns, list(kv_dtypes) or ["auto"])
    write_output(render_matrix(grid, fmt.lower(), screen_for(fmt, output)), output)
