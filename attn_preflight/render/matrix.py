"""The capability matrix as table, markdown or JSON: rows GPU profiles, columns backends, one table per KV dtype.

Input: a rules.grid.Grid over GPU-profile targets (the `matrix` command)."""

from __future__ import annotations

from attn_preflight.render import PLAIN, Screen, heading, status_word, table, to_json, wrap_lines

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
    out.append(
        wrap_lines(
            "cells: pass | warn (runs, with a silent rewrite or something unverified) | FAIL; "
            "`attn-preflight check --gpu GPU --attention-backend B ...` gives the reasons",
            screen,
        )
    )
    return "\n\n".join(out)
