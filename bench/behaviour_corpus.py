"""The behaviour corpus: `check --format json` over every rule fixture, every launch line of
tests/fixtures/launch_lines.json, every incident and each model preset on three GPUs (both engines), reduced to
what a refactoring must not change: the exit code, the verdict, each finding's rule_id / status / stage / fix,
the alternatives and the corrected command. Messages and docs are left out (their wording may change).

    python bench/behaviour_corpus.py record [--out FILE]   # write the recording (default: the baseline)
    python bench/behaviour_corpus.py diff [--baseline FILE] # record now and list every case that differs
    python bench/behaviour_corpus.py diff --only fixture:kv- --only incident:  # the cases named so, only

The baseline is bench/results/behaviour-baseline.json, recorded at 29d7f82 (before issue 19's move) on a machine
without a GPU and with CI's CPU torch (2.13.0+cpu) installed: a fixture without --gpu / --facts judges this machine,
and two kv-mxfp8-prefill-only cases read its torch. `diff` exits 1 when any case differs.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
BASELINE = ROOT / "bench" / "results" / "behaviour-baseline.json"
WRITTEN_MODELS = re.compile(
    r"/[^\s\"']*/attn-preflight-(?:fixture-)?models-[^/\s\"']+"
)  # the fixtures' temporary models
PRESET_GPUS = ("A100", "H100", "B200")
LAUNCH_LINE_GPU = "H100"  # the lines' own GPU and version notes are free text, not --gpu / --engine-version


def _cases() -> Iterator[tuple[str, list[str]]]:
    from tests.rule_fixtures import all_fixtures, check_argv

    for rule_id, buckets in sorted(all_fixtures().items()):
        for bucket, cases in sorted(buckets.items()):
            for index, case in enumerate(cases):
                yield f"fixture:{rule_id}:{bucket}:{index}", check_argv(case)
    lines = json.loads((FIXTURES / "launch_lines.json").read_text())["lines"]
    for index, line in enumerate(lines):
        yield f"launch:{index}", ["--gpu", LAUNCH_LINE_GPU, "--", *shlex.split(line["command"])]
    for incident in json.loads((FIXTURES / "incidents.json").read_text())["incidents"]:
        argv = ["--gpu", incident["gpu"], "--engine-version", f"{incident['engine']}=={incident['version']}"]
        model = incident.get("model")
        if model:
            argv += ["--model", str(FIXTURES / model) if model.startswith("incident-models/") else model]
        yield f"incident:{incident['id']}", [*argv, "--", *shlex.split(incident["command"])]
    presets = json.loads((ROOT / "rules" / "knowledge" / "model_presets.json").read_text())["presets"]
    for name in sorted(presets):
        for gpu in PRESET_GPUS:
            for engine in ("sglang", "vllm"):
                yield f"preset:{name}:{gpu}:{engine}", ["--engine", engine, "--model", name, "--gpu", gpu]


def _reduced(code: int, report: dict | None, err: str) -> dict[str, Any]:
    if report is None:
        return {"exit": code, "error": _portable(err.strip())}
    correction = report.get("correction") or {}
    return {
        "exit": code,
        "verdict": report["verdict"],
        "findings": sorted(
            [f["rule_id"], f["status"], f.get("stage") or "", [_portable(fix) for fix in f.get("fix") or []]]
            for f in report["findings"]
            if f["status"] != "skip"
        ),
        "skipped": sorted(f["rule_id"] for f in report["findings"] if f["status"] == "skip"),
        "alternatives": [_portable(json.dumps(a, sort_keys=True)) for a in report.get("alternatives") or []],
        "correction": _portable(
            json.dumps({k: correction.get(k) for k in ("changes", "command", "verdict")}, sort_keys=True)
        )
        if correction
        else None,
    }


def _portable(text: str) -> str:
    """Paths of this run (the fixtures' written models, the checkout) as placeholders."""
    return WRITTEN_MODELS.sub("<models>", text).replace(str(ROOT), "<repo>")


def record(only: tuple[str, ...] = ()) -> dict[str, Any]:
    sys.path[:0] = [str(ROOT), str(TESTS)]
    from cli_run import check_json

    results: dict[str, Any] = {}
    for name, argv in _cases():
        if only and not name.startswith(only):
            continue
        run, report = check_json(argv)
        results[name] = _reduced(run.code, report, run.err)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("record", "diff"))
    parser.add_argument("--out", type=Path, default=BASELINE)
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument("--only", action="append", default=[], help="a case-name prefix (repeatable)")
    args = parser.parse_args()
    only = tuple(args.only)
    now = record(only)
    if args.mode == "record":
        args.out.write_text(json.dumps(now, indent=0, sort_keys=True) + "\n")
        print(f"{len(now)} cases recorded in {args.out}")
        return 0
    before = {k: v for k, v in json.loads(args.baseline.read_text()).items() if not only or k.startswith(only)}
    changed = sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))
    for name in changed:
        was, is_ = before.get(name) or {}, now.get(name) or {}
        print(name)
        for key in sorted(was.keys() | is_.keys()):
            if was.get(key) != is_.get(key):
                print(f"  {key}: {json.dumps(was.get(key))}\n  {' ' * len(key)}  now {json.dumps(is_.get(key))}")
    print(f"{len(now)} cases, {len(changed)} differ from {args.baseline.name}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
