"""`attn-preflight report --output FILE.html`: one self-contained page about one machine.

The machine's facts (a live probe, or `--facts FILE`), its libraries and their health, the attention
backend × KV-cache dtype matrix for a model judged by the rules engine, and a saved smoke run when given.
"""

from __future__ import annotations

import os
from typing import Optional

import click

from attn_preflight.cli import InputError
from attn_preflight.commands.check import config_from_options, config_options, engine_version_option
from attn_preflight.commands.common import check_output_writable, not_blank, note, write_output


def matrix_for(config, target, backend_given: bool, kv_given: bool):
    """The backend × KV-dtype Matrix for `config` on `target`; a backend or KV dtype named on the command line
    narrows it to that row or column."""
    from attn_preflight.render.html import Matrix
    from attn_preflight.rules.core.grid import judge_grid
    from attn_preflight.rules.engines import backends as backend_kb

    backends = [config.attention_backend] if backend_given else ()
    grid = judge_grid(config, [target], backends, [config.kv_cache_dtype] if kv_given else ())
    from attn_preflight.rules.knowledge.kv_dtypes import SPELLINGS

    # a second spelling of one dtype (bfloat16 beside bf16) is one column, not two, unless it is the one asked for
    columns = [kv for kv in grid.kv_dtypes if kv not in SPELLINGS or (kv_given and kv == config.kv_cache_dtype)]
    cells = {(b, kv): grid.cell(b, kv) for b in grid.backends for kv in columns}
    table = backend_kb.choices(config.engine)
    rows = [(b, table[b].title if b in table else b) for b in grid.backends]
    subject = config.model.name if config.model is not None else "no model given (backend capabilities only)"
    return Matrix(subject=subject, rows=rows, columns=columns, cells=cells, note=_config_note(config))


def _config_note(config) -> str:
    """The config every cell shares, in words (the row sets the backend, the column the KV dtype)."""
    parts = [config.engine]
    if config.model is not None:
        parts.append(f"{config.model.name} ({config.model.architecture or 'unknown architecture'})")
    if config.features:
        parts.append("features " + ", ".join(sorted(config.features)))
    parts.append(f"page size {config.page_size}" if config.page_size is not None else "default page size")
    parts.append("deterministic" if config.deterministic else "not deterministic")
    if config.speculative_algorithm:
        topk = f" top-k {config.speculative_eagle_topk}" if config.speculative_eagle_topk is not None else ""
        parts.append(f"speculative {config.speculative_algorithm}{topk}")
    parts.append(f"TP {config.tp_size}")
    if config.dtype != "auto":
        parts.append(f"dtype {config.dtype}")
    return "Every cell: " + " · ".join(parts) + "; the row sets --attention-backend, the column --kv-cache-dtype."


def smoke_table(path: str):
    from attn_preflight.check_smoke import result_status
    from attn_preflight.inputs import read_json_input
    from attn_preflight.probe.smoke.results import SmokeReport, SmokeReportError
    from attn_preflight.render.html import SmokeRow, SmokeTable
    from attn_preflight.rules.core.errors import RulesInputError
    from attn_preflight.smoke_judged import judged

    try:
        report = judged(SmokeReport.from_dict(read_json_input(path, "--smoke")))
    except RulesInputError as err:
        raise InputError(str(err)) from None
    except SmokeReportError as err:
        raise InputError(f"--smoke {path}: {err}") from None
    rows = []
    for result in report.results:
        name = result.title + (f" · {result.case.label()}" if result.case is not None else "")
        detail = "; ".join(x for x in (result.message, result.documented_limit) if x)
        rows.append(
            SmokeRow(
                name=name,
                status=result_status(result),
                first_call_s=result.first_call_s,
                steady_ms=result.steady_ms,
                max_error=result.max_abs_error,
                detail=detail,
            )
        )
    machine = report.machine
    ran_on = machine.device_name or machine.hostname or "unknown device"
    note = f"{report.level} run on {ran_on}" + (f", {report.created_at}" if report.created_at else "")
    return SmokeTable(source=path, rows=rows, note=note)


@click.command("report")
@click.option(
    "--output",
    "-o",
    "output",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE.html",
    help="Where to write the page.",
)
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    callback=not_blank,
    help="A report saved by `attn-preflight probe --format json` (default: probe this machine now).",
)
@click.option(
    "--smoke",
    "smoke_file",
    metavar="RESULT.json",
    type=click.Path(dir_okay=False),
    callback=not_blank,
    help="A run saved by `attn-preflight smoke --format json`, shown with the page.",
)
@config_options
@engine_version_option()
def report_command(
    output: str, facts_file: Optional[str], smoke_file: Optional[str], engine_versions: tuple[str, ...], **config
) -> None:
    """Write one self-contained HTML page: this machine's facts, its libraries and their health, the
    attention backend × KV-cache dtype matrix for a model (pass/warn/fail, reasons on hover), and smoke results.

    \b
    attn-preflight report -o node.html --model ./Llama-3.1-8B
    attn-preflight report -o customer.html --facts customer-probe.json --model deepseek-ai/DeepSeek-V3
    attn-preflight report -o h200.html --smoke smoke.json --enable-deterministic-inference

    Takes the same config flags and --engine-version as `check`; --attention-backend / --kv-cache-dtype narrow the matrix to
    that row / column. No network is needed to view the page. Exit 0 once written, 2 for bad input.
    """
    from attn_preflight.commands.check import target_from_options
    from attn_preflight.render.html import render_html
    from attn_preflight.rules.checks.memory import memory_figures

    check_output_writable(output)
    cfg = config_from_options(config)
    smoke = smoke_table(smoke_file) if smoke_file else None
    target = target_from_options(None, facts_file, engine_versions)
    matrix = matrix_for(cfg, target, cfg.backend_given, config.get("kv_cache_dtype") is not None)
    source = facts_file or "this machine (probed now)"
    write_output(render_html(target.facts, matrix, smoke, source=source, memory=memory_figures(cfg, target)), output)
    if output != "-":
        note(f"wrote {os.path.abspath(output)}")
