"""The one rendering layer: facts, findings and results become table, JSON or markdown text here.

Each subject has a module (facts.py, findings.py, ...); they share these helpers so that every
verb's JSON is stable (sorted keys, 2-space indent) and every table looks alike.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Iterable, Sequence


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], fmt: str) -> str:
    """A table in the terminal ("table": aligned columns under a dashed rule) or GitHub markdown ("markdown")
    style. Cells print as written (a compute capability "9.0" stays "9.0"), left-aligned; a cell's lines
    stack in its column. Written here rather than with tabulate: importing tabulate cost `check` a quarter
    of its start-up."""
    markdown = fmt == "markdown"
    rows = [["" if value is None else str(value) for value in row] for row in rows]
    multiline = any("\n" in value for row in rows for value in row)  # tabulate's mode: blank lines dropped
    grid = [[_cell(value, markdown) for value in row] for row in rows]
    widths = [_MIN_PADDING + _width(header) for header in headers]
    for row in grid:
        for column, lines in enumerate(row):
            widths[column] = max([widths[column]] + [_width(line) for line in lines])
    if markdown:
        out = ["| " + " | ".join(_pad(h, w) for h, w in zip(headers, widths)) + " |"]
        out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    else:
        out = ["  ".join(_pad(h, w) for h, w in zip(headers, widths)).rstrip()]
        out.append("  ".join("-" * w for w in widths))
    for row in grid:
        for line in range(max((len(lines) for lines in row), default=1)):
            parts = [_pad(lines[line] if line < len(lines) else "", w) for lines, w in zip(row, widths)]
            text = "| " + " | ".join(parts) + " |" if markdown else "  ".join(parts).rstrip()
            if text or not multiline:
                out.append(text)
    return "\n".join(out)


_MIN_PADDING = 2  # a column is at least its header and two spaces wide


def _cell(text: str, markdown: bool) -> list[str]:
    if markdown:
        return [text.replace("|", "\\|").replace("\n", "<br>").strip()]
    return text.strip().split("\n")


def _width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


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
