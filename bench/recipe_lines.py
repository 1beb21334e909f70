"""What a user pasting the engines' own recipes gets (issue 23): each line of tests/fixtures/recipe_lines.json is
checked on the GPU its source names, at COLUMNS=100, and counted:

- wrong verdicts: a line its source says starts gets FAIL, or is refused (exit 2: the form is not read), or PASS
  while its model was never read (unknown is never a pass);
- contradictions: a finding says a flag or variable is ignored while another fails on it; a failing finding
  whose fixes the corrected command takes none of, with no reason given; a pasted flag the corrected command drops
  without naming it in its changes; "no corrected command" beside a failure with no fix;
- lines of output of the table.

    python3 bench/recipe_lines.py [--verbose] [--corpus FILE] > bench/results/recipe-lines-<when>.txt

Runs the CLI in this process (tests/cli_run.py), one line at a time, so it is a minute or two on a loaded
machine. The lines' models are hub ids; the Hugging Face cache is pointed at an empty directory, so only a
preset is read, as on a machine that never downloaded them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "recipe_lines.json"


def tokens(command: str) -> list[str]:
    return shlex.split(command.replace("\\\n", " "))


def run(argv: list[str]) -> tuple[int, str, str]:
    from attn_preflight.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as stop:
            code = int(stop.code or 0)
    return code, out.getvalue(), err.getvalue()


_FLAG = re.compile(r"^--?[A-Za-z][\w.-]*")


def contradictions(report: dict, pasted: list[str]) -> list[str]:
    found: list[str] = []
    findings = [f for f in report.get("findings", []) if f["status"] in ("fail", "warn")]
    failing = [f for f in findings if f["status"] == "fail"]
    ignored_names = set()
    for f in findings:
        if "ignored" in f["message"] or "ignores" in f["message"]:
            ignored_names |= set(re.findall(r"\b[A-Z][A-Z0-9_]{4,}\b|--[a-z][\w-]+", f["message"]))
    for f in failing:
        text = f["message"] + " " + " ".join(f["fix"])
        both = {name for name in ignored_names if name in text}
        if both:
            found.append(f"{f['rule_id']} fails on what another finding says is ignored: {sorted(both)}")
    correction = report.get("correction") or {}
    command = correction.get("command")
    changes = " ".join(correction.get("changes") or [])
    for f in failing:
        flag_fixes = [fix for fix in f["fix"] if fix.startswith("-")]
        if command and flag_fixes and not any(fix.split()[0] in changes for fix in flag_fixes):
            if not correction.get("reason"):
                found.append(f"{f['rule_id']}: corrected command takes none of its fixes {flag_fixes}, no reason")
        if not f["fix"] and not command:
            found.append(f"{f['rule_id']}: fails with no fix and no corrected command")
    if command and correction.get("pasted"):
        kept = tokens(command)
        kept_flags = {m.group(0).split("=")[0] for t in kept if (m := _FLAG.match(t))}
        for token in pasted:
            match = _FLAG.match(token)
            if not match:
                continue
            flag = match.group(0).split("=")[0]
            if flag not in kept_flags and flag not in changes:
                found.append(f"corrected command drops {flag} silently")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print each line's findings")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the lines to check (default: %(default)s)")
    args = parser.parse_args(argv)
    lines = json.loads(args.corpus.read_text(encoding="utf-8"))["lines"]
    os.environ["COLUMNS"] = "100"
    totals = {"lines": 0, "wrong": 0, "contradictions": 0, "output_lines": 0, "refused": 0}
    with tempfile.TemporaryDirectory() as empty:
        os.environ["HF_HUB_CACHE"] = empty
        for index, line in enumerate(lines):
            pasted = tokens(line["command"])
            base = ["check", "--gpu", line["gpu"]]
            code, table, err = run([*base, "--", *pasted])
            jcode, out, _ = run([*base, "--format", "json", "--", *pasted])
            report = json.loads(out) if out.strip() else {}
            verdict = report.get("verdict", f"exit {code}")
            wrong = []
            if code == 2:
                wrong.append(f"refused: {err.strip()[:120]}")
            elif verdict == "fail":
                wrong.append(
                    "FAIL on a line its source says starts: "
                    + ", ".join(f["rule_id"] for f in report["findings"] if f["status"] == "fail")
                )
            elif verdict == "pass" and report.get("config", {}).get("model_missing"):
                wrong.append("PASS with the model never read")
            said = contradictions(report, pasted) if report else []
            n_out = len(table.splitlines())
            totals["lines"] += 1
            totals["wrong"] += bool(wrong)
            totals["refused"] += code == 2
            totals["contradictions"] += len(said)
            totals["output_lines"] += n_out
            print(f"{index:2d} {line['gpu']:>7} {verdict:>7} {n_out:4d} lines  {line['source'].split('@')[0]}")
            for text in wrong:
                print(f"     WRONG {text}")
            for text in said:
                print(f"     CONTRADICTION {text}")
            if args.verbose:
                for f in report.get("findings", []):
                    if f["status"] in ("fail", "warn"):
                        print(f"       {f['status']:5} {f['rule_id']}: {f['fix']}")
    print(
        f"\n{totals['lines']} lines: {totals['wrong']} wrong verdicts ({totals['refused']} refused, exit 2), "
        f"{totals['contradictions']} contradictions, {totals['output_lines']} lines of output at COLUMNS=100 "
        f"(mean {totals['output_lines'] / max(totals['lines'], 1):.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
