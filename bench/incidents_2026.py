"""Judge the 2026 incidents (tests/fixtures/incidents_2026.json, issue 21) with the CLI and record the answers.

    python bench/incidents_2026.py --split work --out bench/results/i21-incidents-work-after.json
    python bench/incidents_2026.py --split held --out bench/results/i21-incidents-held-after.json
    python bench/incidents_2026.py --batch 3 --out bench/results/i21-incidents-batch3-before.json

Each incident is judged as tests/test_incidents.py judges one (`check --gpu G --engine-version E==V [--model M]
-- COMMAND`): failed is caught only on a FAIL verdict, started is right unless FAIL or refused (exit 2). The
record keeps, per incident, the verdict, the failing rule ids and their messages, and whether it was judged
right, so a before/after pair shows what a change did. Run it in the worktree root with PYTHONPATH=$PWD.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def judge(incident: dict) -> dict:
    from attn_preflight.cli import main

    argv = ["check", "--format", "json", "--gpu", incident["gpu"]]
    argv += ["--engine-version", f"{incident['engine']}=={incident['version']}"]
    if incident.get("model"):
        model = incident["model"]
        argv += ["--model", str(FIXTURES / model) if model.startswith("incident-models/") else model]
    argv += ["--", *shlex.split(incident["command"])]
    out, err = io.StringIO(), io.StringIO()
    code = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as stop:
            code = int(stop.code or 0)
    if code == 2:
        verdict, failing = "refused", [{"rule": "input", "message": err.getvalue().strip()}]
    else:
        report = json.loads(out.getvalue())
        verdict = report["verdict"]
        failing = [
            {"rule": f["rule_id"], "message": f.get("message", "")} for f in report["findings"] if f["status"] == "fail"
        ]
    right = verdict == "fail" if incident["outcome"] == "failed" else verdict not in ("fail", "refused")
    return {"verdict": verdict, "right": right, "failing": failing}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("work", "held", "all"), default="all")
    parser.add_argument("--batch", type=int, help="only the incidents of this batch (default: every batch)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    incidents = json.loads((FIXTURES / "incidents_2026.json").read_text())["incidents"]
    chosen = [i for i in incidents if args.split == "all" or i["split"] == args.split]
    chosen = [i for i in chosen if args.batch is None or i["batch"] == args.batch]
    results = {}
    for incident in chosen:
        answer = judge(incident)
        answer.update(
            outcome=incident["outcome"], cls=incident["class"], split=incident["split"], batch=incident["batch"]
        )
        results[incident["id"]] = answer
        mark = "ok  " if answer["right"] else "MISS"
        rules = ",".join(f["rule"] for f in answer["failing"])[:70]
        print(f"{mark} {incident['id']:<52} {incident['outcome']:<8} -> {answer['verdict']:<7} {rules}")
    failed = [r for r in results.values() if r["outcome"] == "failed"]
    started = [r for r in results.values() if r["outcome"] == "started"]
    summary = {
        "judged": len(results),
        "right": sum(r["right"] for r in results.values()),
        "failures_caught": f"{sum(r['right'] for r in failed)} of {len(failed)}",
        "started_passed": f"{sum(r['right'] for r in started)} of {len(started)}",
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(
            json.dumps({"split": args.split, "batch": args.batch, "summary": summary, "incidents": results}, indent=1)
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
