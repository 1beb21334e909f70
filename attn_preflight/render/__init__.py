"""The one rendering layer: facts, findings and results become table, JSON or markdown text here.

Each subject has a module (facts.py, findings.py, ...); they share these helpers so that every
verb's JSON is stable (sorted keys, 2-space indent) and every table looks alike.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from tabulate import tabulate


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], fmt: str) -> str:
    """A table in the terminal ("table") or GitHub markdown ("markdown") style."""
    rows = [["" if cell is None else cell for cell in row] for row in rows]
    # disable_numparse: a compute capability "9.0" or a version "12.10" must print as written, not as 9 or 12.1
    if fmt == "markdown":
        rows = [[str(cell).replace("|", "\\|").replace("\n", "<br>") for cell in row] for row in rows]
        return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def heading(text: str, fmt: str, level: int = 2) -> str:
    if fmt == "markdown":
        return f"{'#' * level} {text}"
    return f"{text}\n{'=' * len(text)}" if level == 1 else f"{text}\n{'-' * len(text)}"


def key_values(pairs: Iterable[tuple[str, Any]], fmt: str) -> str:
    """Two-column facts ("name: value"), as aligned text or a markdown table."""
    pairs = [(k, "—" if v is None or v == "" else v) for k, v in pairs]
    if fmt == "markdown":
        return table(["", ""], pairs, fmt)
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in pairs)
