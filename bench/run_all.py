#!/usr/bin/env python3
"""Every speed figure of attn-preflight in one run on this machine, as ratios (benchmarks, never timed tests).

    python3 bench/run_all.py [--runs N] [--json FILE] [--no-smoke]

Calls the bench scripts beside it, each of which prints its own details as it goes:
  bench_probe  probe --no-imports vs `python -m torch.utils.collect_env`     target >= 10x faster
               full probe (no cache) vs the slowest single library import    target <= 1.3x
  bench_check  one `check --gpu` process vs `python -c "import torch"`       target: a small fraction
               rule evaluations/s over every GPU x backend x KV dtype x deterministic x preset
                                                                              target >= 100,000/s
  bench_startup  `check --gpu` vs `python -c "import click"`                  target <= 2x
               `probe --no-imports` vs a bare NVML query script (GPU only)   target <= 1.3x
  bench_fleet  `fleet` over 1,000 generated reports                           target <= 5 s
  bench_smoke  `smoke --level quick` cold and warm (only where NVML sees a GPU) target on the H200: <= 60 s / <= 15 s
then prints one summary and, with --json FILE, writes it with every figure. A bench that cannot run here
(torch not installed, no GPU) is reported as n/a with the reason, never as met.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import traceback
from typing import Callable, Optional

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path[:0] = [BENCH, REPO]

import bench_check  # noqa: E402
import bench_fleet  # noqa: E402
import bench_probe  # noqa: E402
import bench_startup  # noqa: E402

# figure -> (unit, target text, is the target met by this value?)
TARGETS: dict[str, tuple[str, str, Optional[Callable[[float], bool]]]] = {
    "probe --no-imports vs torch collect_env": ("x faster", ">= 10x", lambda v: v >= 10),
    "full probe vs slowest import": ("x", "<= 1.3x", lambda v: v <= 1.3),
    "check --gpu vs import torch": ("x the cost", "a small fraction (<= 0.25x)", lambda v: v <= 0.25),
    "check --gpu vs import click": ("x", "<= 2x", lambda v: v <= 2),
    "probe --no-imports vs bare NVML script": ("x", "<= 1.3x (GPU)", lambda v: v <= 1.3),
    "matrix rule evaluations": ("/s", ">= 100,000/s", lambda v: v >= 100_000),
    "fleet merge of 1,000 reports": ("s", "<= 5 s", lambda v: v <= 5),
    "smoke --level quick cold": ("s", "<= 60 s (H200)", lambda v: v <= 60),
    "smoke --level quick warm": ("s", "<= 15 s (H200)", lambda v: v <= 15),
}


def attempt(name: str, step: Callable[[], dict], results: dict) -> dict:
    """One bench script; its failure (torch missing, a crash) is recorded and the others still run."""
    print(f"\n=== {name}", flush=True)
    try:
        results[name] = step()
    except (Exception, SystemExit) as err:
        reason = str(err) or type(err).__name__
        if not isinstance(err, SystemExit):
            traceback.print_exc()
        results[name] = {"error": reason}
    return results[name]


def summary(figures: dict) -> list[dict]:
    probe, check = figures.get("bench_probe", {}), figures.get("bench_check", {})
    fleet, smoke = figures.get("bench_fleet", {}), figures.get("bench_smoke", {})
    startup = figures.get("bench_startup", {})
    click_ratio = startup.get("check --gpu vs import click", {})
    nvml_ratio = startup.get("probe --no-imports vs bare NVML script", {})
    values = {
        "probe --no-imports vs torch collect_env": (
            probe.get("collect_env_over_probe"),
            probe.get("error") or "torch is not installed",
        ),
        "full probe vs slowest import": (
            probe.get("probe_over_slowest_import"),
            probe.get("error") or "no installed library imports",
        ),
        "check --gpu vs import torch": (
            check.get("process", {}).get("check_over_torch"),
            check.get("error") or "torch is not installed",
        ),
        "check --gpu vs import click": (click_ratio.get("ratio"), startup.get("error") or click_ratio.get("error")),
        "probe --no-imports vs bare NVML script": (
            nvml_ratio.get("ratio"),
            startup.get("error") or nvml_ratio.get("error"),
        ),
        "matrix rule evaluations": (check.get("matrix", {}).get("rule_evaluations_per_s"), check.get("error")),
        "fleet merge of 1,000 reports": (fleet.get("fleet_s"), fleet.get("error")),
        "smoke --level quick cold": (smoke.get("cold_s"), smoke.get("error") or smoke.get("skipped")),
        "smoke --level quick warm": (smoke.get("warm_s"), smoke.get("error") or smoke.get("skipped")),
    }
    rows = []
    for name, (value, why_not) in values.items():
        unit, target, met = TARGETS[name]
        rows.append(
            {
                "figure": name,
                "value": value,
                "unit": unit,
                "target": target,
                "verdict": "n/a" if value is None else ("meets target" if met(value) else "MISSES target"),
                "note": None if value is not None else (why_not or "not measured"),
            }
        )
    return rows


def shown(value: Optional[float], unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "/s":
        return f"{value:,.0f}/s"
    return f"{value:.2f} {unit}" if unit == "s" else f"{value:.2f}{unit}"


def machine() -> dict:
    from attn_preflight.probe.gpus import collect_gpus

    gpus = collect_gpus()
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "gpus": [d.name for d in gpus.devices],
        "gpu_error": gpus.error,
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def main(argv: Optional[list[str]] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--runs",
        type=int,
        default=5,
        help="measured runs per side for probe and check (default 5); fleet uses min(3, N)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the summary and every figure to FILE")
    parser.add_argument("--no-smoke", action="store_true", help="skip smoke even on a GPU (it takes minutes)")
    args = parser.parse_args(argv)
    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(directory):
            parser.error(f"--json {args.json}: directory {directory} does not exist")

    here = machine()
    print(f"python {here['python']}; {here['cpus']} CPUs; GPUs: {', '.join(here['gpus']) or 'none'}", flush=True)
    figures: dict = {}
    attempt("bench_probe", lambda: bench_probe.main(["--runs", str(args.runs)]), figures)
    check = attempt(
        "bench_check",
        lambda: {"process": bench_check.process_cost(args.runs), "matrix": bench_check.matrix_throughput()},
        figures,
    )
    if "error" not in check:  # bench_check's functions return figures without printing them
        print(json.dumps(check, indent=2))
    attempt("bench_startup", lambda: bench_startup.run(max(args.runs, 11)), figures)
    attempt("bench_fleet", lambda: bench_fleet.main(["--runs", str(min(3, args.runs))]), figures)
    if args.no_smoke:
        figures["bench_smoke"] = {"skipped": "--no-smoke"}
    elif not here["gpus"]:
        figures["bench_smoke"] = {"skipped": f"no GPU ({here['gpu_error'] or 'NVML reports none'})"}
    else:
        import bench_smoke

        attempt("bench_smoke", lambda: bench_smoke.main([]), figures)

    rows = summary(figures)
    print("\n=== summary (this machine)")
    width = max(len(row["figure"]) for row in rows)
    for row in rows:
        tail = f"target {row['target']}: {row['verdict']}" if row["value"] is not None else row["note"]
        print(f"{row['figure']:<{width}}  {shown(row['value'], row['unit']):>14}  {tail}")
    result = {"machine": here, "summary": rows, "figures": figures}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2, default=str)
            handle.write("\n")
        print(f"\nwritten: {args.json}")
    return result


if __name__ == "__main__":
    main()
