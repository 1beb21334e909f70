"""The tool's memory answers against real engine start-up logs (issue 22).

    python bench/memory_logs.py record LABEL             # writes bench/results/memory-logs-LABEL.json, prints the table
    python bench/memory_logs.py record LABEL --batch N   # only the cases of collection N, and a .md beside the .json

Each case of tests/fixtures/memory_logs.json is run through `check --format json` in this process, with the
case's GPU, GPU count, engine release, model and launch line. For a case that started, the KV figure the tool
gives (`memory.kv_capacity[0].tokens`, or `memory.kv_gib_per_gpu` where the log gives only GiB) is compared with
the engine's; for a case that died of memory, the verdict must be a failure of a memory rule (or a warning where
the log shows a run-time OOM the engine could not foresee). The set-aside cases are reported apart.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CASES = FIXTURES / "memory_logs.json"
RESULTS = ROOT / "bench" / "results"
MEMORY_RULES = (
    "memory-weights-fit",
    "memory-kv-context",
    "vllm-memory-weights-fit",
    "vllm-memory-kv-context",
    "vllm-memory-warmup",
)


def load() -> dict[str, Any]:
    return json.loads(CASES.read_text())


def argv_for(case: dict[str, Any]) -> list[str]:
    model = case["model"]
    model_arg = model.split(":", 1)[1] if model.startswith("preset:") else str(FIXTURES / model)
    return [
        "check",
        "--format",
        "json",
        "--gpu",
        case["gpu"],
        "--gpu-count",
        str(case["gpu_count"]),
        "--engine-version",
        f"{case['engine']}=={case['version']}",
        "--model",
        model_arg,
        "--",
        *shlex.split(case["command"]),
    ]


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    from attn_preflight.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: Optional[int] = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv_for(case))
        except SystemExit as stop:
            code = int(stop.code or 0)
    answer: dict[str, Any] = {"exit": code}
    if not out.getvalue():
        answer["error"] = err.getvalue().strip()[-300:]
        return answer
    report = json.loads(out.getvalue())
    answer["verdict"] = report["verdict"]
    memory = report.get("memory") or {}
    capacity = (memory.get("kv_capacity") or [{}])[0]
    answer["tokens"] = capacity.get("tokens")
    answer["kv_gib"] = memory.get("kv_gib_per_gpu")
    answer["weights_gib"] = memory.get("weights_gib_per_gpu")
    answer["fraction"] = memory.get("memory_fraction")
    answer["memory_findings"] = {f["rule_id"]: f["status"] for f in report["findings"] if f["rule_id"] in MEMORY_RULES}
    return answer


def judge(case: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The error of the KV figure (started) or whether the death was caught (died)."""
    judged: dict[str, Any] = {}
    statuses = set(answer.get("memory_findings", {}).values())
    if case["outcome"] == "died":
        judged["caught"] = "fail" in statuses
        judged["warned"] = "warn" in statuses
        return judged
    judged["false_fail"] = "fail" in statuses
    judged["warned"] = "warn" in statuses
    if case.get("kv_tokens") and answer.get("tokens"):
        judged["kv_error"] = answer["tokens"] / case["kv_tokens"] - 1
        judged["kv_basis"] = "tokens"
    elif case.get("kv_gib") and answer.get("kv_gib") is not None:
        judged["kv_error"] = answer["kv_gib"] / case["kv_gib"] - 1
        judged["kv_basis"] = "GiB"
    return judged


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    errors = [abs(r["judged"]["kv_error"]) for r in rows if "kv_error" in r["judged"]]
    deaths = [r for r in rows if r["outcome"] == "died"]
    return {
        "cases": len(rows),
        "kv_cases": len(errors),
        "median_abs_kv_error": round(statistics.median(errors), 4) if errors else None,
        "within_10pct": sum(e <= 0.10 for e in errors),
        "deaths": len(deaths),
        "deaths_failed": sum(r["judged"]["caught"] for r in deaths),
        "deaths_warned": sum(r["judged"]["warned"] and not r["judged"]["caught"] for r in deaths),
        "started_but_failed": sum(r["judged"].get("false_fail", False) for r in rows),
        "started_but_warned": sum(r["judged"].get("warned", False) for r in rows if r["outcome"] != "died"),
    }


def record(label: str, batch: Optional[int] = None) -> dict[str, Any]:
    """The tool's answers on every case, or on the cases of one collection (`"batch": N` in the case)."""
    data = load()
    aside = set(data["set_aside"])
    rows = []
    for case in data["cases"]:
        if batch is not None and case.get("batch") != batch:
            continue
        answer = run_case(case)
        rows.append(
            {
                "id": case["id"],
                "set": "set-aside" if case["id"] in aside else "work",
                "outcome": case["outcome"],
                "engine_kv_tokens": case.get("kv_tokens"),
                "engine_kv_gib": case.get("kv_gib"),
                "answer": answer,
                "judged": judge(case, answer),
            }
        )
    result = {
        "label": label,
        **({"batch": batch} if batch is not None else {}),
        "work": summary([r for r in rows if r["set"] == "work"]),
        "set_aside": summary([r for r in rows if r["set"] == "set-aside"]),
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"memory-logs-{label}.json").write_text(json.dumps(result, indent=1) + "\n")
    if batch is not None:
        (RESULTS / f"memory-logs-{label}.md").write_text(markdown(result, data["cases"]))
    return result


def markdown(result: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    """The record as a table for people: engine, GPU, the engine's figure, the tool's, the error or the verdict."""
    by_id = {c["id"]: c for c in cases}
    lines = [
        f"# Memory against real logs: {result['label']}",
        "",
        "The tool's answers (`bench/memory_logs.py record {} --batch {}`) on the cases of collection {} of".format(
            result["label"], result["batch"], result["batch"]
        ),
        "tests/fixtures/memory_logs.json. Error: the tool's KV tokens (or GiB) over the engine's, minus one. A case",
        "that died of memory is caught when a memory rule fails.",
        "",
        "| case | set | engine | GPU | engine's KV | tool's KV | error | memory findings |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        case = by_id[r["id"]]
        answer = r["answer"]
        if r["engine_kv_tokens"]:
            engine_kv, tool_kv = f"{r['engine_kv_tokens']} tokens", f"{answer.get('tokens')} tokens"
        else:  # GiB of KV cache per GPU (a death has no engine figure: the tool's, below zero when nothing is left)
            engine_kv = f"{r['engine_kv_gib']} GiB" if r["engine_kv_gib"] is not None else "-"
            tool_kv = f"{answer.get('kv_gib')} GiB" if answer.get("kv_gib") is not None else "-"
        judged = r["judged"]
        if r["outcome"] == "died":
            error = "died: " + ("caught" if judged.get("caught") else "warned" if judged.get("warned") else "missed")
        else:
            error = f"{judged['kv_error']:+.1%}" if "kv_error" in judged else "-"
        findings = ", ".join(f"{k}={v}" for k, v in answer.get("memory_findings", {}).items())
        gpu = f"{case['gpu_count']} x {case['gpu']}"
        version = f"{case['engine']} {case['version']}"
        lines.append(
            f"| {r['id']} | {r['set']} | {version} | {gpu} | {engine_kv} | {tool_kv} | {error} | "
            f"{findings or answer.get('error', '')} |"
        )
    lines += ["", f"Work set: `{json.dumps(result['work'])}`", ""]
    lines += [f"Set aside: `{json.dumps(result['set_aside'])}`", ""]
    return "\n".join(lines)


def table(result: dict[str, Any]) -> str:
    lines = [f"{'case':44} {'set':9} {'engine':>12} {'tool':>12} {'error':>7}  verdict"]
    for r in result["rows"]:
        engine = r["engine_kv_tokens"] or r["engine_kv_gib"]
        answer = r["answer"]
        tool = answer.get("tokens") if r["engine_kv_tokens"] else answer.get("kv_gib")
        error = r["judged"].get("kv_error")
        shown = f"{error:+.1%}" if error is not None else ("died" if r["outcome"] == "died" else "-")
        verdict = answer.get("verdict", answer.get("error", ""))
        findings = ",".join(
            f"{k.replace('vllm-memory-', '').replace('memory-', '')}={v}"
            for k, v in answer.get("memory_findings", {}).items()
        )
        lines.append(f"{r['id']:44} {r['set']:9} {engine!s:>12} {tool!s:>12} {shown:>7}  {verdict} {findings}")
    lines.append(f"work set: {json.dumps(result['work'])}")
    lines.append(f"set aside: {json.dumps(result['set_aside'])}")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    batch_arg: Optional[int] = None
    if len(args) == 4 and args[2] == "--batch" and args[3].isdigit():
        batch_arg = int(args[3])
        args = args[:2]
    if len(args) != 2 or args[0] != "record":
        sys.exit(__doc__)
    print(table(record(args[1], batch_arg)))
