"""Output for people (issue 10, part 5): table output fits the terminal without splitting a flag, path or
command; colour only on a terminal and never with NO_COLOR; JSON and markdown as they were; the verdict last.

Expectations come from the JSON report of the same check (the fixes, messages and corrected command the
rules produce), never from the table itself."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import check_json, run_cli

from attn_preflight.probe.smoke.results import SmokeReport
from attn_preflight.render import Screen, _width
from attn_preflight.render.smoke import render_smoke

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

FAILING = [
    ("--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--kv-cache-dtype", "mxfp8"),
    ("--gpu", "A100", "--model", "deepseek-v3", "--attention-backend", "fa4", "--enable-deterministic-inference"),
    (
        "--gpu",
        "H100",
        "--",
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--attention-backend",
        "fa4",
        "--kv-cache-dtype",
        "mxfp8",
        "--max-running-requests",
        "64",
        "--enable-torch-compile",
        "--cuda-graph-max-bs",
        "128",
        "--host",
        "0.0.0.0",
    ),
    ("--gpu", "B200", "--all", "--model", "deepseek-v3", "--attention-backend", "fa3"),
]


def too_wide(text: str, columns: int) -> list[str]:
    """Lines wider than the screen, except a single token too long for any line (it keeps its line, whole)."""
    return [line for line in text.splitlines() if _width(line) > columns and " " in line.strip()]


def lines_with(text: str, words: str) -> list[str]:
    return [line for line in text.splitlines() if words in line]


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("argv", FAILING, ids=lambda argv: " ".join(argv[:6]))
def test_check_fits_the_terminal_and_splits_no_fix_nor_command(argv, columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(columns))
    run = run_cli(["check", *argv])
    _, report = check_json(argv)
    assert run.code == 1 and report["verdict"] == "fail"
    assert too_wide(run.out, columns) == []
    shown = [f for f in report["findings"] if "--all" in argv or f["status"] in ("fail", "warn", "unknown")]
    assert shown
    for fix in (fix for f in shown for fix in f["fix"]):
        assert lines_with(run.out, fix), f"fix {fix!r} split or missing"
    words = {word for line in run.out.splitlines() for word in line.split()}
    for finding in shown:  # a path, flag or URL in a message is never cut either
        assert set(finding["message"].split()) <= words, finding["message"]
    correction = report["correction"]
    if correction and correction["command"]:
        block = run.out.split("Corrected ")[1]
        for word in shlex.split(correction["command"]):
            assert any(word in line.split() for line in block.splitlines()), f"{word!r} split"
    assert run.out.strip().splitlines()[-1].startswith("verdict: FAIL")


@pytest.mark.parametrize("argv", FAILING[:2])
def test_a_pipe_without_columns_gets_one_line_per_finding(argv, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    run = run_cli(["check", *argv])
    _, report = check_json(argv)
    for finding in (f for f in report["findings"] if f["status"] == "fail"):
        assert lines_with(run.out, finding["message"]), "a message was wrapped with no terminal to fit"


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_markdown_and_json_ignore_the_width(fmt, monkeypatch):
    outputs = set()
    for columns in ("60", "100", "400"):
        monkeypatch.setenv("COLUMNS", columns)
        outputs.add(run_cli(["check", "--format", fmt, *FAILING[1]]).out)
    assert len(outputs) == 1


def fleet_reports() -> list[str]:
    return [str(path) for path in sorted(FIXTURES.glob("probe-*.json"))]


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize(
    "argv",
    [
        ["rules"],
        ["gpus"],
        ["models"],
        ["explain", "fa4-mla-arch"],
        ["matrix", "--model", "deepseek-v3", "--kv-cache-dtype", "auto", "--kv-cache-dtype", "fp8_e4m3"],
        ["fleet", *fleet_reports(), "--attention-backend", "fa3"],
        ["probe", "--no-imports"],
    ],
    ids=lambda argv: argv[0],
)
def test_every_table_verb_fits(argv, columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(columns))
    run = run_cli(argv)
    assert run.code in (0, 1) and run.out
    assert too_wide(run.out, columns) == []


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("name", ["smoke-h200-full.json", "smoke-h200-quick.json", "smoke-h200-fa4-fp8.json"])
def test_smoke_fits_and_keeps_its_reproduce_commands_whole(name, columns):
    report = SmokeReport.from_dict(json.loads((FIXTURES / name).read_text()))
    text = render_smoke(report, "table", Screen(width=columns))
    assert [line for line in too_wide(text, columns) if not line.startswith("    reproduce: ")] == []
    for result in report.results:
        if result.reproduce and result.failed:
            assert lines_with(text, result.reproduce)


# --- colour ------------------------------------------------------------------------------------------

RED_FAIL = "\x1b[31m\x1b[1mFAIL\x1b[0m"


def in_a_terminal(argv, **env) -> str:
    """stdout and stderr of `attn-preflight ARGV` run in a pseudo-terminal, as a user at a terminal sees them."""
    master, slave = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    environ.update(env, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-m", "attn_preflight", *argv], stdin=slave, stdout=slave, stderr=slave, env=environ
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode()


def test_status_words_and_verdict_are_coloured_on_a_terminal():
    out = in_a_terminal(["check", *FAILING[0]])
    assert RED_FAIL in lines_with(out, "kv-mxfp8-arch")[0]
    assert lines_with(out, "verdict: ")[0].startswith(f"verdict: {RED_FAIL}")


@pytest.mark.parametrize("value", ["1", "0", "false"])
def test_no_color_of_any_value_turns_colour_off(value):
    assert "\x1b[" not in in_a_terminal(["check", *FAILING[0]], NO_COLOR=value)


def test_an_empty_no_color_is_not_set():  # no-color.org: "present and not an empty string"
    assert RED_FAIL in in_a_terminal(["check", *FAILING[0]], NO_COLOR="")


def test_no_colour_in_markdown_or_a_file_even_on_a_terminal(tmp_path):
    assert "\x1b[" not in in_a_terminal(["check", "--format", "markdown", *FAILING[0]])
    written = tmp_path / "check.txt"
    in_a_terminal(["check", "-o", str(written), *FAILING[0]])
    assert "FAIL" in written.read_text() and "\x1b[" not in written.read_text()


def test_no_colour_through_a_pipe():
    done = subprocess.run(
        [sys.executable, "-m", "attn_preflight", "check", *FAILING[0]],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert "FAIL" in done.stdout and "\x1b[" not in done.stdout
