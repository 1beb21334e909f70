"""The capability matrix as table, markdown or JSON: rows GPU profiles, columns backends, one table per KV dtype."""

from __future__ import annotations

from attn_preflight.render import heading, table, to_json

MATRIX_SCHEMA_VERSION = 1
_MARK = {"pass": "pass", "warn": "warn", "fail": "FAIL"}


def matrix_to_dict(matrix) -> dict:
    model = matrix.config.model
    return {
        "schema_version": MATRIX_SCHEMA_VERSION,
        "engine": matrix.config.engine,
        "model": model.to_dict() if model else None,
        "config": matrix.config.to_dict(),
        "gpus": matrix.gpus,
        "backends": matrix.backends,
        "kv_cache_dtypes": matrix.kv_dtypes,
        "cells": [
            {
                "kv_cache_dtype": kv,
                "gpu": gpu,
                "backend": backend,
                "verdict": cell.verdict,
                "failed_rules": list(cell.failed),
                "warned_rules": list(cell.warned),
                "reasons": [reason._asdict() for reason in cell.reasons],
            }
            for (kv, gpu, backend), cell in matrix.cells.items()
        ],
    }


def render_matrix(matrix, fmt: str) -> str:
    if fmt == "json":
        return to_json(matrix_to_dict(matrix))
    model = matrix.config.model
    title = f"attn-preflight matrix: {model.name if model else 'no model'} ({matrix.config.engine})"
    out = [heading(title, fmt, level=1)]
    for kv in matrix.kv_dtypes:
        rows = [[gpu] + [_MARK[matrix.cells[(kv, gpu, b)].verdict] for b in matrix.backends] for gpu in matrix.gpus]
        out.append(heading(f"--kv-cache-dtype {kv}", fmt, level=2))
        out.append(table(["gpu"] + matrix.backends, rows, fmt))
    out.append(
        "cells: pass | warn (runs, with a silent rewrite or something unverified) | FAIL; "
        "`attn-preflight check --gpu GPU --attention-backend B ...` gives the reasons"
    )
    return "\n\n".join(out)
