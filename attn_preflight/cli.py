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


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


# click.style's codes, as render.status_word makes them: colour and bold, and their reset
_OUR_COLOUR = re.compile(r"\x1b\[(?:0|1|22|3[0-7]|39)m")


def safe_text(text: str, keep_colour: bool = False) -> str:
    """What we print, anywhere: secrets masked (attn_preflight.probe.environ.redact_text), and control characters (ANSI
    escapes in a report's hostname, a carriage return in a file name) shown as \\xNN instead of acting on the
    terminal. The colour and bold codes status words are styled with stay with `keep_colour`, else go (only
    those: a cursor move or a title change in a hostname is shown, never obeyed)."""
    from attn_preflight.probe.environ import redact_text

    text = redact_text(text)
    if not keep_colour:  # no colour here: our codes go, as click.echo would drop them
        return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", _OUR_COLOUR.sub("", text))
    pieces = _OUR_COLOUR.split(text)
    codes = _OUR_COLOUR.findall(text)
    out = [_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", piece) for piece in pieces]
    return "".join(part for pair in zip(out, [*codes, ""]) for part in pair)


class StdoutError(InputError):
    """stdout cannot take our output (closed, a full device): one line on stderr, exit 2."""


def discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit cannot fail a second time."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):  # no stdout at all: nothing to flush
        pass


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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attn-preflight")
def cli() -> None:
    """Will this attention stack run here? Probe the machine, check a serving config, smoke-test kernels.

    Exit codes: 0 pass (warnings allowed), 1 a check failed, 2 usage or input error.
    """


def main(argv: list[str] | None = None, gpu_probe: GpuProbe | None = None) -> None:
    """Runs the group, turning every click usage error into one line and exit 2. `gpu_probe`: the NVML query
    attn_preflight.start began for `probe` before this module loaded (click's context object carries it)."""
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
    sys.exit(code or 0)
