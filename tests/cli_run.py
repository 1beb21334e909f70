"""The real CLI (attn_preflight.cli.main) run in this process, with what a user would see: exit code, stdout, stderr.

In-process is what makes a thousand fuzzed cases affordable; a subprocess is used only where the process
itself is the fault (no site-packages, the environment at start-up). An exception escaping main() is not
caught here: it fails the test with its traceback, as it would print one for the user.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from typing import Optional, Sequence

from attn_preflight.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.strip().splitlines()


def run_cli(argv: Sequence[str]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    code = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as stop:
            code = stop.code
    assert code is not None, f"main({list(argv)!r}) returned without sys.exit"
    return Run(int(code), out.getvalue(), err.getvalue())


def assert_clean_outcome(run: Run, argv: Sequence[str] = ()) -> None:
    """What every invocation must end in: a result (0/1), or exactly one error line and exit 2; never a
    traceback."""
    where = f"argv={list(argv)!r}\nexit={run.code}\nstderr={run.err[-2000:]}"
    assert "Traceback" not in run.out and "Traceback" not in run.err, where
    assert run.code in (0, 1, 2), where
    if run.code == 2:
        assert len(run.err_lines) == 1 and run.err_lines[0].startswith("attn-preflight: "), where


def check_json(argv: Sequence[str]) -> tuple[Run, Optional[dict]]:
    """`attn-preflight check --format json ARGV`: the run, and its report (None when it printed none)."""
    run = run_cli(["check", "--format", "json", *argv])
    return run, (json.loads(run.out) if run.out else None)


def finding(report: dict, rule_id: str) -> dict:
    """One rule's finding in a `check --format json` report."""
    return next(f for f in report["findings"] if f["rule_id"] == rule_id)
