"""The one rendering layer: facts, findings and results become table, JSON or markdown text here.

Each subject has a module (facts.py, findings.py, ...); they share these helpers so that every
verb's JSON is stable (sorted keys, 2-space indent) and every table looks alike.

Table-format text fits a `Screen`: its width (the commands pass the terminal's, see commands/common.py) and
whether status words are coloured. Text wraps only at spaces, so a flag, path, command or any other token is
never split; a token longer than the room it has keeps a line of its own, whole. Markdown and JSON are never
wrapped or coloured.
"""

from __future__ import annotations

import json
import re
import textwrap
import unicodedata
from typing import Any, Collection, Iterable, NamedTuple, Optional, Sequence

import click


class Screen(NamedTuple):
    """Where table-format text is shown: `width` columns (None: no limit) and whether to colour status words."""

    width: Optional[int] = None
    colour: bool = False


PLAIN = Screen()  # no width limit, no colour: markdown, JSON, and renderers called outside the CLI

# Status words and verdicts, as coloured on a terminal.
_COLOURS = {"fail": "red", "warn": "yellow", "unknown": "magenta", "pass": "green", "incomplete": "red"}


def status_word(word: str, screen: Screen = PLAIN, status: Optional[str] = None) -> str:
    """A status or verdict word (FAIL, warn, PASS, ...), coloured when the screen is, as `status` when given
    (a smoke run's ERROR is coloured as a fail)."""
    colour = _COLOURS.get((status or word).lower())
    if not screen.colour or colour is None:
        return word
    return click.style(word, fg=colour, bold=word.lower() in ("fail", "incomplete"))


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    fmt: str,
    width: Optional[int] = None,
    whole: Collection[int] = (),
    title_columns: int = 1,
    split: bool = False,
    detail: Optional[int] = None,
) -> str:
    """A table in the terminal ("table": aligned columns under a dashed rule) or GitHub markdown ("markdown")
    style. Cells print as written (a compute capability "9.0" stays "9.0"), left-aligned; a cell's lines
    stack in its column. Written here rather than with tabulate: importing tabulate cost `check` a quarter
    of its start-up.

    With a `width`, a terminal table too wide for it is fitted: the widest columns wrap at spaces, except the
    columns in `whole` (a fix such as `--page-size 128` is one line, never two). A `detail` column (a long free
    text) that would then take more than two lines a cell on average moves under its row instead
    ("header: text"). When a
    wrapped column would still be too narrow to read, each row becomes a block: its first `title_columns` cells
    as a title line, then one "header: value" line per other cell; or, with `split` (a grid of short cells such
    as the matrix), the columns are dealt into several tables one under another, each starting with the
    `title_columns`."""
    markdown = fmt == "markdown"
    cells = [["" if value is None else str(value) for value in row] for row in rows]
    multiline = any("\n" in value for row in cells for value in row)  # tabulate's mode: blank lines dropped
    grid = [[_cell(value, markdown) for value in row] for row in cells]
    widths = _natural(headers, grid, _MIN_PADDING)
    if markdown or width is None or _span(widths) <= width:
        return _render(headers, grid, widths, markdown, multiline)
    natural = _natural(headers, grid, 0)
    fitted = _fit(headers, grid, natural, width, whole)
    if fitted is not None and (detail is None or _lines_per_cell(grid, detail, fitted[detail]) <= 2):
        return _render(headers, _wrapped(grid, fitted), fitted, False, multiline)
    if detail is not None:
        keep = [column for column in range(len(headers)) if column != detail]
        kept_headers = [headers[column] for column in keep]
        kept = [[row[column] for column in keep] for row in grid]
        fitted = _natural(kept_headers, kept, _MIN_PADDING)
        if _span(fitted) > width:
            kept_whole = {keep.index(column) for column in whole if column in keep}
            fitted = _fit(kept_headers, kept, _natural(kept_headers, kept, 0), width, kept_whole)
        if fitted is not None:
            label = " " * (fitted[0] + _GAP) + f"{headers[detail]}: "  # under the second column, named
            hang = " " * _width(label)
            details = [
                [part for line in row[detail] if line for part in _wrap_words(label + line, width, hang)]
                for row in grid
            ]
            return _render(kept_headers, _wrapped(kept, fitted), fitted, False, multiline, details)
    if split and len(headers) > title_columns + 1:
        return _split(headers, cells, fmt, widths, width, title_columns)
    return _blocks(headers, grid, width, title_columns)


def _lines_per_cell(grid: list[list[list[str]]], column: int, width: int) -> float:
    """About how many lines the column's non-empty cells take at `width`, on average."""
    sizes = [_width(" ".join(row[column])) for row in grid if row[column] != [""]]
    return sum(-(-size // width) for size in sizes) / len(sizes) if sizes else 0.0


def _wrapped(grid: list[list[list[str]]], widths: list[int]) -> list[list[list[str]]]:
    return [[_wrap_cell(lines, w) for lines, w in zip(row, widths)] for row in grid]


def _natural(headers: Sequence[str], grid: list[list[list[str]]], padding: int) -> list[int]:
    """Each column's width unwrapped: its widest line, or its header and `padding` spaces."""
    widths = [padding + _width(header) for header in headers]
    for row in grid:
        for column, lines in enumerate(row):
            widths[column] = max([widths[column]] + [_width(line) for line in lines])
    return widths


def _span(widths: Sequence[int]) -> int:
    return sum(widths) + _GAP * (len(widths) - 1)


def _render(
    headers: Sequence[str],
    grid: list[list[list[str]]],
    widths: list[int],
    markdown: bool,
    multiline: bool,
    details: Optional[list[list[str]]] = None,
) -> str:
    """The table laid out at `widths` (a header wraps at spaces when its column is narrower), each row followed
    by its `details` lines."""
    if markdown:
        out = ["| " + " | ".join(_pad(h, w) for h, w in zip(headers, widths)) + " |"]
        out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    else:
        titles = [_wrap_words(h, w) for h, w in zip(headers, widths)]
        out = [
            "  ".join(_pad(lines[line] if line < len(lines) else "", w) for lines, w in zip(titles, widths)).rstrip()
            for line in range(max(len(lines) for lines in titles))
        ]
        out.append("  ".join("-" * w for w in widths))
    for index, row in enumerate(grid):
        for line in range(max((len(lines) for lines in row), default=1)):
            parts = [_pad(lines[line] if line < len(lines) else "", w) for lines, w in zip(row, widths)]
            text = "| " + " | ".join(parts) + " |" if markdown else "  ".join(parts).rstrip()
            if text or not multiline:
                out.append(text)
        if details is not None:
            out.extend(details[index])
    return "\n".join(out)


_MIN_PADDING = 2  # a column is at least its header and two spaces wide
_GAP = 2  # spaces between terminal columns
_NARROWEST_WRAPPED = 20  # columns: a column wrapped narrower than this reads as a list of words


def _fit(
    headers: Sequence[str], grid: list[list[list[str]]], natural: list[int], width: int, whole: Collection[int]
) -> Optional[list[int]]:
    """Column widths within `width`: every column capped at the same width C, the largest C that fits, but never
    below its header's longest word or its longest unbreakable token (a `whole` column's longest line). None when a wrapped
    column would then be narrower than _NARROWEST_WRAPPED and take three lines or more for one of its longest (or
    the unbreakable parts alone do not fit)."""
    floors = []
    for column, header in enumerate(headers):
        lines = [line for row in grid for line in row[column]]
        pieces = lines if column in whole else [word for line in lines for word in line.split(" ")]
        floors.append(max(_width(piece) for piece in pieces + header.split(" ")))
    room = width - _GAP * (len(headers) - 1)

    def capped(cap: int) -> list[int]:
        return [min(n, max(f, cap)) for n, f in zip(natural, floors)]

    if sum(floors) > room:
        return None
    low, high = 0, max(natural)  # capped(low) fits; find the largest cap that does
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if sum(capped(middle)) <= room else (low, middle - 1)
    widths = capped(low)
    if any(w < _NARROWEST_WRAPPED and n > 2 * w for w, n in zip(widths, natural)):
        return None
    return widths


def _wrap_cell(lines: list[str], width: int) -> list[str]:
    return [part for line in lines for part in (_wrap_words(line, width) or [""])]


def _wrap_words(text: str, width: int, indent: str = "") -> list[str]:
    """`text` in lines of at most `width` columns, broken at spaces only; later lines start with `indent`."""
    if _width(text) <= width:
        return [text]
    return textwrap.wrap(
        text,
        max(width, len(indent) + 1),
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _split(
    headers: Sequence[str], rows: list[list[str]], fmt: str, widths: list[int], width: int, title_columns: int
) -> str:
    """The table as several, each of the title columns and as many of the others, in order, as fit `width`."""
    keep = list(range(title_columns))
    room = width - sum(widths[:title_columns]) - _GAP * title_columns
    groups: list[list[int]] = [[]]
    used = 0
    for column in range(title_columns, len(headers)):
        if groups[-1] and used + widths[column] > room:
            groups.append([])
            used = 0
        groups[-1].append(column)
        used += widths[column] + _GAP
    return "\n\n".join(
        table([headers[c] for c in keep + group], [[row[c] for c in keep + group] for row in rows], fmt, width)
        for group in groups
    )


def _blocks(headers: Sequence[str], grid: list[list[list[str]]], width: int, title_columns: int) -> str:
    """The rows of a table too wide for the screen, one block each: a title line, then "header: value" lines."""
    blocks = []
    for row in grid:
        title = "  ".join(" ".join(lines) for lines in row[:title_columns] if lines != [""])
        out = [title] if title else []
        for header, lines in zip(headers[title_columns:], row[title_columns:]):
            if lines == [""]:
                continue
            label = f"  {header}: "
            for index, line in enumerate(lines):
                first = label if index == 0 else " " * len(label)
                out.extend(_wrap_words(first + line, width, " " * len(label)))
        blocks.append("\n".join(out))
    return "\n\n".join(blocks)


_BULLET = re.compile(r"^(\s*(?:[-*•✗→] |[A-Za-z][\w .()/-]{0,23}: )?)")
_BULLET_ONLY = re.compile(r"^(\s*(?:[-*•✗→] )?)")
_LIST_ITEM = re.compile(r"^(\s|[-*•] |\d+\. |\$ )")


def wrap_lines(text: str, screen: Screen = PLAIN, labels: bool = True) -> str:
    """Prose for the screen: each line longer than its width wrapped at spaces, with a hanging indent under the
    text after the line's bullet ("- ", "✗ ") or, with `labels`, its label ("note: ", "target: "). A command to
    type, on a line of its own after "$ ", stays whole."""
    if screen.width is None:
        return text
    out = []
    for line in text.split("\n"):
        if line.lstrip().startswith("$ "):
            out.append(line)
            continue
        match = (_BULLET if labels else _BULLET_ONLY).match(line)
        hang = " " * _width(match.group(1) if match else "")
        out.extend(_wrap_words(line, screen.width, hang) or [""])
    return "\n".join(out)


def reflow(text: str, screen: Screen = PLAIN) -> str:
    """Hard-wrapped paragraphs (a docstring's) as one line each, for wrap_lines to fill the screen; blank lines,
    list items, indented lines and commands ("$ ...") keep their own lines. Unchanged without a screen width."""
    if screen.width is None:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if out and out[-1] and line and not _LIST_ITEM.match(line) and not out[-1].lstrip().startswith("$ "):
            out[-1] += " " + line
        else:
            out.append(line)
    return "\n".join(out)


def _cell(text: str, markdown: bool) -> list[str]:
    if markdown:
        return [text.replace("|", "\\|").replace("\n", "<br>").strip()]
    return text.strip().split("\n")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks and colour codes none."""
    text = _ANSI.sub("", text)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def heading(text: str, fmt: str, level: int = 2) -> str:
    if fmt == "markdown":
        return f"{'#' * level} {text}"
    return f"{text}\n{'=' * len(text)}" if level == 1 else f"{text}\n{'-' * len(text)}"


def key_values(pairs: Iterable[tuple[str, Any]], fmt: str, screen: Screen = PLAIN) -> str:
    """Two-column facts ("name: value"), as aligned text (each value wrapped under itself) or a markdown table."""
    pairs = [(k, "—" if v is None or v == "" else v) for k, v in pairs]
    if fmt == "markdown":
        return table(["", ""], pairs, fmt)
    width = max((len(k) for k, _ in pairs), default=0)
    if screen.width is None:
        return "\n".join(f"{k.ljust(width)}  {v}" for k, v in pairs)
    hang = " " * (width + 2)
    return "\n".join(
        line for k, v in pairs for line in _wrap_words(f"{k.ljust(width)}  {v}", screen.width, hang) or [""]
    )
