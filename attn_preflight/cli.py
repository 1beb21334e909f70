"""The command line: a click group whose verbs live in probe/commands/, loaded only when used.

Exit codes: 0 pass (warnings allowed), 1 a check failed, 2 usage or input error.
Every error the user can cause ends as one line on stderr and exit 2, never a traceback.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import TYPE_CHECKING

import click

from attn_preflight.probe import __version__

if TYPE_CHECKING:
    from attn_preflight.probe.gpus import GpuProbe

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2

# verb -> "module:attribute"; a verb's module is imported only when that verb runs (or help lists it),
# so `check` never pays for what `probe` or `smoke` import.
COMMANDS = {
    "probe": "attn_preflight.commands.probe_cmd:probe_command",
    "check": "attn_preflight.commands.check:check_command",
    "explain": "attn_preflight.commands.explain:explain_command",
    "rules": "attn_preflight.commands.rules_cmd:rules_command",
    "gpus": "attn_preflight.commands.gpus:gpus_command",
    "models": "attn_preflight.commands.models:models_command",
    "matrix": "attn_preflight.commands.matrix:matrix_command",
    "fleet": "attn_preflight.commands.fleet:fleet_command",
    "report": "attn_preflight.commands.report:report_command",
    "smoke": "attn_preflight.commands.smoke:smoke_command",
}


# click >= 8.2 raises this for a bare `attn-preflight`; older clicks print the help and exit 0 themselves.
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class InputError(click.ClickException):
    """Bad input from the user (a file, a name, a value): one line on stderr, exit 2."""

    exit_code = EXIT_USAGE


# What text from outside (a config.json, a report, a GPU name, a library's error, a path) must never do on a
# terminal: C0 controls but tab and newline (ESC starts CSI/OSC sequences), DEL and C1 (0x9b is a one-byte CSI),
# the bidirectional overrides and isolates that reorder what is shown (U+061C, U+200E-200F, U+202A-202E,
# U+2066-2069), and lone surrogates (bytes of a path or variable that were not UTF-8). C0 is shown as \xNN, the
# rest as \uXXXX: both spellings keep a JSON text valid and its strings exact (json.dumps already escapes C0,
# and JSON reads \uXXXX back as the same character).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


# click.style's codes, as render.status_word makes them: colour and bold, and their reset
_OUR_COLOUR = re.compile(r"\x1b\[(?:0|1|22|3[0-7]|39)m")


def _shown(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """`text` with every character that could act on a terminal (above) spelled out instead."""
    return _CONTROL.sub(_shown, text)


def safe_text(text: str, keep_colour: bool = False) -> str:
    """What we print, anywhere: secrets masked (attn_preflight.probe.environ.redact_text), and control characters
    (ANSI escapes in a report's hostname, a carriage return in a file name, a right-to-left override in a
    config.json) spelled out by escape_controls instead of acting on the terminal. The colour and bold codes
    status words are styled with stay with `keep_colour`, else go (only those: a cursor move or a title change
    in a hostname is shown, never obeyed). The one escaping function: write_output, note and the error line
    pass everything through it."""
    from attn_preflight.probe.environ import redact_text

    text = redact_text(text)
    if not keep_colour:  # no colour here: our codes go, as click.echo would drop them
        return escape_controls(_OUR_COLOUR.sub("", text))
    pieces = _OUR_COLOUR.split(text)
    codes = _OUR_COLOUR.findall(text)
    out = [escape_controls(piece) for piece in pieces]
    return "".join(part for pair in zip(out, [*codes, ""]) for part in pair)


class StdoutError(InputError):
    """stdout cannot take our output (closed, a full device): one line on stderr, exit 2."""


def discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit cannot fail a second time."""
    _discard(sys.stdout)


def _discard(stream) -> None:
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    except (OSError, AttributeError, ValueError):  # no such stream at all: nothing to flush
        pass


STDOUT_CLOSED = "stdout is closed: nothing was written (use --output FILE)"


class GuardedStream:
    """sys.stdout or sys.stderr while a verb runs, so that every verb (and click's own --help, --version and
    usage lines) meets a stream that cannot be written the same way:
    - stdout closed (`>&-`) or failing (a full disk, /dev/full): StdoutError, one line and exit 2;
    - a reader that went away (`| true`, `| head`): the rest is dropped, the verdict's exit code stands;
    - stderr closed or failing: the rest is dropped (there is nowhere to say more), the exit code stands: an
      input error is still 2, a result still 0/1, and a progress line that could not be written loses nothing.
    After a failure the file descriptor is pointed at /dev/null, so the interpreter's flush at exit is quiet."""

    def __init__(self, stream, name: str):
        self._stream = stream
        self._name = name
        self.missing = stream is None  # started with the descriptor closed
        self.gone = False

    def write(self, text):
        if not isinstance(text, str):  # a text stream (click probes for a binary one with write(b""))
            raise TypeError("write() argument must be str")
        if self.missing and self._name == "stdout":
            raise StdoutError(STDOUT_CLOSED)
        if self.gone or self.missing or not text:  # click probes with write(""): /dev/full fails even that
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as err:
            self._failed(err)
            return len(text)

    def flush(self) -> None:
        if self.gone or self.missing:
            return
        try:
            self._stream.flush()
        except OSError as err:
            self._failed(err)

    def _failed(self, err: OSError) -> None:
        self.gone = True
        _discard(self._stream)
        if self._name == "stdout" and not isinstance(err, BrokenPipeError):
            raise StdoutError(f"cannot write to stdout: {err.strerror or err}") from None

    def isatty(self) -> bool:
        return not (self.missing or self.gone) and bool(getattr(self._stream, "isatty", lambda: False)())

    def __getattr__(self, name: str):
        if name == "buffer":  # click would write to the bytes beneath (an ASCII locale), past this guard
            raise AttributeError(name)
        return getattr(self._stream, name)


def stdout_missing() -> bool:
    """Whether this process started with stdout closed (`>&-`)."""
    stdout = sys.stdout
    return stdout is None or bool(getattr(stdout, "missing", False))


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)

    def resolve_command(self, ctx, args):
        name = args[0] if args else None
        if name is not None and name not in COMMANDS and not name.startswith("-"):
            raise click.UsageError(f"no such command {name!r}{did_you_mean(name, COMMANDS)}")
        return super().resolve_command(ctx, args)


def did_you_mean(word: str, choices) -> str:
    """' (did you mean X?)' or '; valid: a, b, c' — the tail of a one-line error naming what is valid."""
    import difflib

    choices = sorted(choices)
    # a word far longer than every choice is none of them (and difflib is quadratic in its length)
    longest = max((len(c) for c in choices), default=0)
    close = (
        difflib.get_close_matches(word.lower(), [c.lower() for c in choices], n=1, cutoff=0.6)
        if len(word) <= 2 * longest + 8
        else []
    )
    if close:
        match = next(c for c in choices if c.lower() == close[0])
        return f" (did you mean {match!r}?)"
    return f"; valid: {', '.join(choices)}"  # every one: a vLLM backend list spans every release read


def close_ids(word: str, known) -> str:
    """' (did you mean a, b?)' with up to three close ids (ids that start with `word` first), else a pointer to
    `attn-preflight rules`: one short line, never the list of every rule."""
    import difflib

    known = sorted(known)
    starting = [rule_id for rule_id in known if rule_id.startswith(word)] if word else []
    close = (starting or difflib.get_close_matches(word, known, n=3, cutoff=0.6))[:3]
    if close:
        return f" (did you mean {', '.join(repr(c) for c in close)}?)"
    return "; `attn-preflight rules WORD` lists the rules whose id or title holds WORD"


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attn-preflight")
def cli() -> None:
    """Will this attention stack run here? Probe the machine, check a serving config, smoke-test kernels.

    Exit codes: 0 pass (warnings allowed), 1 a check failed, 2 usage or input error.
    """


def main(argv: list[str] | None = None, gpu_probe: GpuProbe | None = None) -> None:
    """Runs the group, turning every click usage error into one line and exit 2. `gpu_probe`: the NVML query
    attn_preflight.start began for `probe` before this module loaded (click's context object carries it)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = GuardedStream(saved[0], "stdout"), GuardedStream(saved[1], "stderr")
    try:
        code = _run(argv, gpu_probe)
    finally:
        sys.stdout, sys.stderr = saved
    sys.exit(code)


def _run(argv: list[str] | None, gpu_probe: GpuProbe | None) -> int:
    try:
        try:
            code = cli.main(args=argv, prog_name="attn-preflight", standalone_mode=False, obj={"gpu_probe": gpu_probe})
        except click.exceptions.Exit as stop:
            code = stop.exit_code
        except click.Abort:
            click.echo("attn-preflight: aborted", err=True)
            code = EXIT_USAGE
        except _NO_ARGS_IS_HELP as err:  # bare `attn-preflight`: the help, as --help shows it
            click.echo(err.ctx.get_help())
            code = EXIT_OK
    except click.ClickException as err:
        if isinstance(err, StdoutError):
            discard_stdout()
        message = safe_text(" ".join(err.format_message().split()))
        click.echo(f"attn-preflight: error: {message}", err=True)
        code = EXIT_USAGE if isinstance(err, click.UsageError) else err.exit_code
    return code or 0
