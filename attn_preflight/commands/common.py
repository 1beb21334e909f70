"""Options and output plumbing shared by every verb."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Optional

import click

from attn_preflight.cli import InputError
from attn_preflight.render import PLAIN, Screen

FORMATS = ("table", "json", "markdown")


def format_option(formats=FORMATS):
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(formats, case_sensitive=False),
        default="table",
        show_default=True,
        help="Output format.",
    )


def output_option():
    return click.option(
        "--output",
        "-o",
        "output",
        type=click.Path(dir_okay=False, writable=True),
        default=None,
        help="Write the output to FILE instead of stdout.",
    )


def positive_seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A click callback for a time limit: a positive, finite number of seconds."""
    if value != value or value <= 0 or value == float("inf"):  # NaN, non-positive, infinite
        raise click.BadParameter(f"must be a positive number of seconds, got {value:g}")
    return value


NARROWEST_WIDTH = 40  # columns: below this, wrapping helps nobody


def screen_for(fmt: str, output: Optional[str]) -> Screen:
    """How table-format output is laid out. Width: what shutil.get_terminal_size reads (COLUMNS, else the
    terminal stdout is), for stdout and -o FILE alike; with neither (stdout a pipe or a file, no COLUMNS), no
    limit, so that grep and a pager see one line per finding. Colour: only on stdout, never with NO_COLOR set
    to anything but the empty string (no-color.org); click.echo drops it when stdout is not a terminal.
    Markdown and JSON are never wrapped or coloured."""
    if fmt.lower() != "table":
        return PLAIN
    columns = shutil.get_terminal_size(fallback=(0, 0)).columns
    width = max(columns, NARROWEST_WIDTH) if columns > 0 else None
    to_stdout = output is None or output == "-"
    return Screen(width=width, colour=to_stdout and not os.environ.get("NO_COLOR"))


def check_output_writable(path: Optional[str]) -> None:
    """Fails before any work is done, so a long probe or smoke run is never lost to a bad --output."""
    if path is None or path == "-":
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"cannot write --output {path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise InputError(f"cannot write --output {path}: it is a directory")
    target = path if os.path.exists(path) else directory
    if not os.access(target, os.W_OK):
        raise InputError(f"cannot write --output {path}: permission denied")


# The symbols our output uses, in ASCII, for a stdout that cannot encode them.
_ASCII = {"→": "->", "·": "-", "—": "-", "–": "-", "…": "...", "✓": "ok", "✕": "x", "×": "x", "≤": "<=", "≥": ">="}


def ascii_text(text: str, encoding: str = "ascii") -> str:
    """`text` for a terminal that cannot show it: our symbols spelled in ASCII, anything else as '?'."""
    for symbol, plain in _ASCII.items():
        text = text.replace(symbol, plain)
    try:
        return text.encode(encoding, errors="replace").decode(encoding)
    except LookupError:
        return text.encode("ascii", errors="replace").decode("ascii")


def write_output(text: str, path: Optional[str]) -> None:
    if not text.endswith("\n"):
        text += "\n"
    if path is None or path == "-":
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        try:
            text.encode(encoding)
        except (UnicodeEncodeError, LookupError):  # e.g. PYTHONIOENCODING=ascii or a latin-1 locale
            text = ascii_text(text, encoding)
        click.echo(text, nl=False)  # strips colour when stdout is not a terminal
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise InputError(f"cannot write --output {path}: {err.strerror or err}") from None
