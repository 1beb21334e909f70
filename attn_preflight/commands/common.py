"""Options and output plumbing shared by every verb."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Optional

import click

from attn_preflight.cli import STDOUT_CLOSED, InputError, StdoutError, discard_stdout, safe_text, stdout_missing
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


MAX_SECONDS = 86400.0  # a day: longer is a typo (1e10), and overflows the children's timers (faulthandler)


def positive_seconds(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A click callback for a time limit: a positive number of seconds, at most MAX_SECONDS."""
    if value != value or value <= 0 or value > MAX_SECONDS:  # NaN, non-positive, infinite or huge
        raise click.BadParameter(f"must be a positive number of seconds, got {value:g} (at most {MAX_SECONDS:g})")
    return value


def not_blank(ctx: click.Context, param: click.Parameter, value):
    """A click callback: a name or path that was given must say something (`--gpu ''` is not "no --gpu")."""
    for given in value if isinstance(value, tuple) else (value,):
        if given is not None and not given.strip():
            raise click.BadParameter("must not be empty")
    return value


NARROWEST_WIDTH = 40  # columns: below this, wrapping helps nobody


def terminal_columns() -> int:
    """shutil.get_terminal_size's columns with a fallback of 0, without importing shutil (and, through it, bz2
    and lzma) on every check: a positive COLUMNS, else the width of the terminal sys.__stdout__ is."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
    except (AttributeError, ValueError, OSError):
        return 0


def screen_for(fmt: str, output: Optional[str]) -> Screen:
    """How table-format output is laid out. Width: COLUMNS, else the terminal stdout is, for stdout and -o FILE alike; with neither (stdout a pipe or a file, no COLUMNS), no
    limit, so that grep and a pager see one line per finding. Colour: only on stdout, never with NO_COLOR set
    to anything but the empty string (no-color.org); click.echo drops it when stdout is not a terminal.
    Markdown and JSON are never wrapped or coloured."""
    if fmt.lower() != "table":
        return PLAIN
    columns = terminal_columns()
    width = max(columns, NARROWEST_WIDTH) if columns > 0 else None
    to_stdout = output is None or output == "-"
    return Screen(width=width, colour=to_stdout and not os.environ.get("NO_COLOR"))


def check_output_writable(path: Optional[str]) -> None:
    """Fails before any work is done, so a long probe or smoke run is never lost to a bad --output."""
    if path is None or path == "-":
        if stdout_missing():
            raise StdoutError(STDOUT_CLOSED)
        return
    try:
        directory = os.path.dirname(os.path.abspath(path))
    except OSError as err:  # a relative path in a working directory that was deleted
        raise InputError(f"cannot write --output {path}: the working directory is gone ({err.strerror})") from None
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


def note(text: str) -> None:
    """One line on stderr beside the output (progress, a file skipped, where a report went), made safe_text."""
    click.echo(safe_text(text), err=True)


def stderr_width() -> Optional[int]:
    """The terminal's width when stderr is one (progress lines wrap to it), else None (a pipe keeps whole lines)."""
    stream = sys.stderr
    if stream is None or not stream.isatty():
        return None
    import shutil

    return shutil.get_terminal_size().columns


class slow_note:
    """A context that says `text` on stderr when what it wraps takes longer than `after` seconds, and only on a
    terminal: never in a pipe, a file or beside JSON read by a program (stdout is untouched either way). The first
    probe of a machine imports every library in its own process (3-12 s); a cached one is silent."""

    def __init__(self, text: str, after: float = 0.5):
        self.text, self.after, self.timer = text, after, None

    def __enter__(self):
        stream = sys.stderr
        if stream is not None and stream.isatty():
            import threading

            self.timer = threading.Timer(self.after, note, (self.text,))
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.timer is not None:
            self.timer.cancel()


def write_output(text: str, path: Optional[str]) -> None:
    """The one way our output leaves: to stdout or --output, made safe_text (secrets, control characters). Our
    own colour codes (render.status_word) survive only on a terminal that shows colour (screen_for)."""
    to_stdout = path is None or path == "-"
    stdout = sys.stdout
    colour = to_stdout and not stdout_missing() and stdout.isatty() and not os.environ.get("NO_COLOR")
    text = safe_text(text, keep_colour=colour)
    if not text.endswith("\n"):
        text += "\n"
    if to_stdout:
        if stdout_missing():  # started with stdout closed (`>&-`)
            raise StdoutError(STDOUT_CLOSED)
        encoding = getattr(stdout, "encoding", None) or "utf-8"
        try:
            text.encode(encoding)
        except (UnicodeEncodeError, LookupError):  # e.g. PYTHONIOENCODING=ascii or a latin-1 locale
            text = ascii_text(text, encoding)
        try:
            click.echo(text, nl=False)  # click drops colour codes when stdout is not a terminal
            stdout.flush()
        except BrokenPipeError:  # `| head` or `| true` closed the pipe: not an error; the verdict's exit stands
            discard_stdout()
        except OSError as err:  # e.g. stdout on /dev/full
            raise StdoutError(f"cannot write to stdout: {err.strerror or err}") from None
        return
    assert path is not None
    write_file_atomically(path, text)


def write_file_atomically(path: str, text: str) -> None:
    """`text` into `path` (UTF-8) through a temporary file beside it, renamed over it only once all is written:
    a run that fails while writing (a full disk, a file-size limit) leaves an earlier report as it was and no
    temporary file. A path that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place; a
    symbolic link is followed, so the file it names is replaced and the link stays."""
    import signal
    import stat

    data = text.encode("utf-8", "backslashreplace")  # safe_text left no lone surrogate; never a traceback
    try:
        target = os.path.realpath(path)
        info = os.stat(target) if os.path.lexists(target) else None
    except OSError as err:
        raise InputError(f"cannot write --output {path}: {err.strerror or err}") from None
    # RLIMIT_FSIZE: the kernel's SIGXFSZ would kill us mid-write; ignored, the write fails with EFBIG instead
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN) if _main_thread() else None
    tmp = None
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(target, "wb") as handle:
                handle.write(data)
            return
        directory, name = os.path.split(target)
        tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if info is None else info.st_mode & 0o777)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
        tmp = None
    except OSError as err:
        raise InputError(f"cannot write --output {path}: {err.strerror or err}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        if previous is not None:
            signal.signal(signal.SIGXFSZ, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
