"""The command line as a whole: every verb documents itself, and usage errors are one line with exit 2."""

import subprocess
import sys

import pytest
from click.testing import CliRunner

from attn_preflight.cli import COMMANDS, cli, main


@pytest.mark.parametrize("verb", sorted(COMMANDS))
def test_every_command_has_help(verb):
    result = CliRunner().invoke(cli, [verb, "--help"])
    assert result.exit_code == 0, result.output
    command = cli.get_command(None, verb)
    assert command.help and command.help.strip(), f"{verb} has no help text"
    assert verb in result.output
    examples = [line.strip() for line in command.help.splitlines() if line.strip().startswith(f"attn-preflight {verb}")]
    assert examples, f"{verb}'s help has no example"
    assert all(example in result.output for example in examples)  # shown as written: a \\b block is not rewrapped


def test_group_help_lists_every_verb():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for verb in COMMANDS:
        assert verb in result.output


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr()


def test_unknown_command_is_one_line_with_suggestion(capsys):
    code, out = run_main(["prob"], capsys)
    assert code == 2
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "did you mean 'probe'" in lines[0]


def test_unknown_option_is_one_line(capsys):
    code, out = run_main(["probe", "--no-such-flag"], capsys)
    assert code == 2
    assert len(out.err.strip().splitlines()) == 1
    assert "--no-such-flag" in out.err


def test_python_dash_m_entry_point():
    done = subprocess.run(
        [sys.executable, "-m", "attn_preflight", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "attn-preflight" in done.stdout


def test_bare_command_prints_the_help_and_exits_0(capsys):
    code, out = run_main([], capsys)
    assert code == 0
    assert out.out.startswith("Usage: attn-preflight") and "check" in out.out and out.err == ""
