"""The capability matrix as table, markdown or JSON: rows GPU profiles, columns backends, one table per KV dtype.

Input: a attn_preflight.rules.core.grid.Grid over GPU-profile targets (the `matrix` command)."""

from __future__ import annotations

from attn_preflight.render import PLAIN, Screen, heading, status_word, table, to_json, wrap_lines
from attn_preflight.rules.checks.memory import memory_figures

MATRIX_SCHEMA_VERSION = 1
_MARK = {"pass": "pass", "warn": "warn", "fail": "FAIL"}


def _gpus(grid) -> list[str]:
    return [target.gpu_name for target in grid.targets]


def _cells(grid) -> dict:
    """(kv, gpu, backend) -> Cell, a KV dtype's table after another (a GPU named twice is one row)."""
    return {
        (kv, target.gpu_name, backend): grid.cell(backend, kv, index)
        for kv in grid.kv_dtypes
        for index, target in enumerate(grid.targets)
        for backend in grid.backends
    }


def _memory(grid) -> dict:
    """GPU -> the memory figures of the config on that profile (attn_preflight.rules.checks.memory.memory_figures), or None
    when they cannot be computed (no model shape, no memory size)."""
    return {target.gpu_name: memory_figures(grid.config, target) for target in grid.targets}


def _memory_rows(grid) -> list[list[str]]:
    rows = []
    for gpu, figures in _memory(grid).items():
        if figures is None:
            rows.append([gpu, "unknown", "", ""])
            continue
        weights = f"{figures.weights_gib:.1f} of {figures.budget_gib:.1f} GiB"
        kv = figures.capacity_line() if figures.fits else "weights do not fit"
        rows.append([gpu, weights, f"{figures.fraction:.3f}", kv])
    return rows


def matrix_to_dict(grid) -> dict:
    model = grid.config.model
    return {
        "schema_version": MATRIX_SCHEMA_VERSION,
        "engine": grid.config.engine,
        "model": model.to_dict() if model else None,
        "config": grid.config.to_dict(),
        "gpus": _gpus(grid),
        "backends": list(grid.backends),
        "kv_cache_dtypes": list(grid.kv_dtypes),
        "memory": {gpu: figures.to_dict() if figures else None for gpu, figures in _memory(grid).items()},
        "cells": [
            {
                "kv_cache_dtype": kv,
                "gpu": gpu,
                "backend": backend,
                "verdict": cell.verdict.value,
                "failed_rules": list(cell.failed),
                "warned_rules": list(cell.warned),
                "reasons": [
                    {"rule_id": r.rule_id, "status": r.status.value, "message": r.message} for r in cell.reasons
                ],
            }
            for (kv, gpu, backend), cell in _cells(grid).items()
        ],
    }


def render_matrix(grid, fmt: str, screen: Screen = PLAIN) -> str:
    if fmt == "json":
        return to_json(matrix_to_dict(grid))
    model = grid.config.model
    title = f"attn-preflight matrix: {model.name if model else 'no model'} ({grid.config.engine})"
    out = [heading(title, fmt, level=1)]
    cells = _cells(grid)
    for kv in grid.kv_dtypes:
        rows = [
            [gpu] + [status_word(_MARK[cells[(kv, gpu, b)].verdict], screen) for b in grid.backends]
            for gpu in _gpus(grid)
        ]
        out.append(heading(f"--kv-cache-dtype {kv}", fmt, level=2))
        out.append(table(["gpu"] + list(grid.backends), rows, fmt, width=screen.width, split=True))
    out.append(heading("Memory per GPU (weights of the budget, the memory fraction, KV capacity)", fmt, level=2))
    out.append(
        table(["gpu", "weights", "fraction", "kv capacity"], _memory_rows(grid), fmt, width=screen.width, detail=3)
    )
    out.append(
        wrap_lines(
            "cells: pass | warn (runs, with a silent rewrite or something unverified) | FAIL; "
            "`attn-preflight check --gpu GPU --attention-backend B ...` gives the reasons",
            screen,
        )
    )
    return "\n\n".join(out)
