"""Fleet merge at scale: `attn-preflight fleet` over 1,000 reports generated from one real probe report.

    python bench/bench_fleet.py [--seed tests/fixtures/probe-XXX.json] [--nodes 1000] [--runs 3]

Varies what a real fleet varies (GPU model and count, driver, torch, library versions and import health;
hostnames, UUIDs and times always), writes one JSON report per node, then times the whole CLI
(`python3 -m attn_preflight fleet DIR --format json`, a fresh process: start-up, reading, grouping, one rules evaluation
per group, rendering) against the same CLI over one report, alternating runs, medians. Target: 1,000 reports
in a few seconds (≤ 5 s), i.e. the per-report cost, not the fixed start-up, must stay small.
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 5.0

GPUS = [
    ("NVIDIA H200", 9, 0, 143771),
    ("NVIDIA H100 80GB HBM3", 9, 0, 81559),
    ("NVIDIA B200", 10, 0, 183359),
    ("NVIDIA A100-SXM4-80GB", 8, 0, 81920),
    ("NVIDIA L40S", 8, 9, 46068),
]
DRIVERS = [("580.95.05", "13.0"), ("570.172.08", "12.8"), ("575.57.08", "12.9")]
TORCHES = [("2.11.0+cu130", "13.0"), ("2.9.1+cu128", "12.8")]
FA4 = ["4.0.0b36", "4.0.0b30"]


def variant(seed: dict, index: int, rng: random.Random) -> dict:
    report = copy.deepcopy(seed)
    name, major, minor, memory = GPUS[rng.choices(range(len(GPUS)), weights=[50, 20, 15, 10, 5])[0]]
    count = rng.choice([8, 8, 8, 4])
    report["host"]["hostname"] = f"gpu-node-{index:04d}"
    report["collected_at"] = f"2026-11-29T{index // 60 % 24:02d}:{index % 60:02d}:00+00:00"
    report["gpus"]["devices"] = [
        {
            "index": i,
            "name": name,
            "uuid": f"GPU-{index:04d}-{i}",
            "cc_major": major,
            "cc_minor": minor,
            "memory_total_mib": memory,
            "mig_mode": "disabled",
            "persistence_mode": "enabled",
            "nvlink_links_up": 18,
            "error": None,
            "compute_capability": f"{major}.{minor}",
            "sm": f"sm_{major}{minor}",
        }
        for i in range(count)
    ]
    report["gpus"]["error"] = None
    driver, cuda = rng.choices(DRIVERS, weights=[70, 20, 10])[0]
    report["gpus"]["driver_version"], report["gpus"]["cuda_driver_version"] = driver, cuda
    torch_version, torch_cuda = rng.choices(TORCHES, weights=[80, 20])[0]
    report["torch"].update(
        installed=True,
        version=torch_version,
        cuda=torch_cuda,
        arch_list=["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"],
    )
    for library in report["libraries"]:
        if library["key"] == "fa4":
            version = rng.choices(FA4, weights=[85, 15])[0]
            library["distributions"] = {"flash-attn-4": version}
            library["version"] = version
            library["health"]["status"] = "ok" if rng.random() > 0.05 else "error"
        elif library["key"] == "torch":
            library["distributions"] = {"torch": torch_version}
            library["version"] = torch_version
            library["health"]["status"] = "ok"
    report["imports_checked"] = True
    return report


def run(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "attn_preflight", *argv], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"fleet exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def main(argv: Optional[list[str]] = None) -> dict:
    """Prints the figures; returns them for bench/run_all.py."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", help="a real probe report (default: the first tests/fixtures/probe-*.json)")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    seed_path = args.seed or next(
        iter(sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "probe-*.json")))), None
    )
    if seed_path is None:
        sys.exit("no seed report: pass --seed FILE (a `probe --format json` report)")
    with open(seed_path, encoding="utf-8") as handle:
        seed = json.load(handle)
    rng = random.Random(20261129)
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as directory:
        for index in range(args.nodes):
            with open(os.path.join(directory, f"node-{index:04d}.json"), "w", encoding="utf-8") as handle:
                json.dump(variant(seed, index, rng), handle)
        one = os.path.join(directory, "node-0000.json")
        many, single = [], []
        for _ in range(args.runs):  # alternating, so drift in machine load hits both alike
            single.append(run(["fleet", one, "--format", "json"]))
            many.append(run(["fleet", directory, "--format", "json"]))
        groups = json.loads(
            subprocess.run(
                [sys.executable, "-m", "attn_preflight", "fleet", directory, "--format", "json"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            ).stdout
        )["groups"]
        phases = phase_times(directory)
    t_many, t_one = statistics.median(many), statistics.median(single)
    per_report_ms = (t_many - t_one) / max(args.nodes - 1, 1) * 1000
    print(f"seed: {os.path.relpath(seed_path, ROOT)}")
    print(
        f"fleet of {args.nodes} reports -> {len(groups)} groups: median {t_many:.2f} s over {args.runs} runs "
        f"(target <= {TARGET_S:.0f} s): {'OK' if t_many <= TARGET_S else 'TOO SLOW'}"
    )
    print(
        f"fleet of 1 report: median {t_one:.2f} s; ratio {t_many / t_one:.1f}x; "
        f"marginal cost {per_report_ms:.2f} ms per report"
    )
    print("in-process phases: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in phases))
    return {
        "reports": args.nodes,
        "groups": len(groups),
        "fleet_s": t_many,
        "fleet_one_report_s": t_one,
        "per_report_ms": per_report_ms,
        "phases_s": dict(phases),
    }


def phase_times(directory: str) -> list[tuple[str, float]]:
    """Where the time goes, with the CLI's own functions: JSON parsing, Facts.from_dict (type-checked reading),
    grouping plus one rules evaluation per group, rendering."""
    sys.path.insert(0, ROOT)
    from attn_preflight.commands.fleet import expand_paths
    from attn_preflight.fleet import Node, merge
    from attn_preflight.probe.facts import Facts
    from attn_preflight.render.fleet import render_fleet
    from attn_preflight.rules.core.validation import make_config

    paths = expand_paths((directory,))
    start = time.perf_counter()
    data = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            data.append(json.load(handle))
    parsed = time.perf_counter()
    nodes = [Node(path, Facts.from_dict(item)) for path, item in zip(paths, data)]
    read = time.perf_counter()
    fleet = merge(nodes, [], len(paths), make_config())
    merged = time.perf_counter()
    render_fleet(fleet, "json")
    rendered = time.perf_counter()
    return [
        ("json.load", parsed - start),
        ("Facts.from_dict", read - parsed),
        ("group + rules", merged - read),
        ("render", rendered - merged),
    ]


if __name__ == "__main__":
    main()
