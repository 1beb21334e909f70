#!/usr/bin/env python3
"""How fast `attn-preflight smoke` is, cold and warm, as measured in one run on this machine (not a test).

  cold: fresh compile caches ($XDG_CACHE_HOME in a new directory, the libraries' own cache variables unset)
        target on the H200: <= 60 s for --level quick
  warm: the same caches again                                          target on the H200: <= 15 s
  floor: the slowest single `python -c "import X"` of the kernel libraries that ran (imports are the cost
        smoke cannot avoid): warm / floor says how much smoke adds on top of its slowest import.

Per kernel it also prints first-call time cold vs warm (the JIT the caches save). Usage:
    python3 bench/bench_smoke.py [--level quick|full] [--kernel NAME ...] [--warm-runs N] [--out DIR]
With --out, the cold and warm smoke JSON and their progress logs are kept there; with --cache-home DIR (new or
empty) the caches stay in DIR for later runs. Needs nothing installed: the repo is put on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from attn_preflight.probe.smoke.caches import CACHE_VARIABLES  # noqa: E402

COLD_TARGET_S = 60.0
WARM_TARGET_S = 15.0
LIBRARY_IMPORTS = {
    None: "torch",
    "fa2": "flash_attn.flash_attn_interface",
    "fa3": "flash_attn_interface",
    "fa4": "flash_attn.cute",
    "sgl_kernel": "sgl_kernel.flash_attn",
    "flashinfer": "flashinfer",
    "flash_mla": "flash_mla",
    "cutlass_dsl": "cutlass.cute",
    "triton": "triton",
}


def environment(cache_home: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in CACHE_VARIABLES and k != "FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED"
    }
    env["XDG_CACHE_HOME"] = cache_home
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    return env


def smoke(args, env: dict, json_path: str, log_path: str) -> tuple[float, int]:
    command = [
        sys.executable,
        "-m",
        "attn_preflight",
        "smoke",
        "--level",
        args.level,
        "--format",
        "json",
        "-o",
        json_path,
    ]
    for name in args.kernel:
        command += ["--kernel", name]
    start = time.perf_counter()
    with open(log_path, "w") as log:
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1) or not os.path.exists(json_path):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}); see {log_path}")
    return elapsed, done.returncode


def import_seconds(module: str, env: dict) -> float:
    """One warm import (smoke's runs already wrote the .pyc files and filled the page cache); inf if it fails."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True)
    return time.perf_counter() - start if done.returncode == 0 else float("inf")


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def main(argv: Optional[list[str]] = None) -> dict:
    """Prints the figures; returns them for bench/run_all.py."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", choices=("quick", "full"), default="quick")
    parser.add_argument("--kernel", action="append", default=[], help="as smoke --kernel (default: all)")
    parser.add_argument("--warm-runs", type=int, default=2, help="warm runs, median reported (default 2)")
    parser.add_argument("--out", help="keep the smoke JSON and logs in this directory")
    parser.add_argument(
        "--cache-home",
        help="use this new (or empty) directory as $XDG_CACHE_HOME and keep it, "
        "so that later runs can reuse the warm caches (default: a temporary one)",
    )
    args = parser.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="bench-smoke-")
    os.makedirs(out, exist_ok=True)
    if args.cache_home:
        os.makedirs(args.cache_home, exist_ok=True)
        if os.listdir(args.cache_home):
            raise SystemExit(f"--cache-home {args.cache_home} is not empty: the cold run would not be cold")
    with (
        contextlib.nullcontext(args.cache_home)
        if args.cache_home
        else tempfile.TemporaryDirectory(prefix="bench-smoke-cache-")
    ) as cache_home:
        env = environment(cache_home)
        print(
            f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; smoke --level {args.level}"
            + (f" --kernel {' --kernel '.join(args.kernel)}" if args.kernel else "")
            + f"; output in {out}",
            flush=True,
        )
        cold, cold_rc = smoke(args, env, os.path.join(out, "smoke-cold.json"), os.path.join(out, "smoke-cold.log"))
        print(
            f"cold: {cold:.1f} s (smoke exit {cold_rc}; {verdict(cold <= COLD_TARGET_S)} on the H200: "
            f"<= {COLD_TARGET_S:g} s)",
            flush=True,
        )
        warm_times = []
        for run in range(args.warm_runs):
            seconds, warm_rc = smoke(
                args, env, os.path.join(out, "smoke-warm.json"), os.path.join(out, f"smoke-warm-{run + 1}.log")
            )
            warm_times.append(seconds)
        warm = statistics.median(warm_times)
        print(
            f"warm: {warm:.1f} s (median of {len(warm_times)}: {', '.join(f'{t:.1f}' for t in warm_times)}; "
            f"smoke exit {warm_rc}; {verdict(warm <= WARM_TARGET_S)} on the H200: <= {WARM_TARGET_S:g} s); "
            f"cold / warm = {cold / warm:.1f}x",
            flush=True,
        )

        with open(os.path.join(out, "smoke-cold.json")) as handle:
            cold_report = json.load(handle)
        with open(os.path.join(out, "smoke-warm.json")) as handle:
            warm_report = json.load(handle)
        ran = [r for r in cold_report["results"] if r["first_call_s"] is not None]
        modules = sorted({LIBRARY_IMPORTS.get(r["library"], "torch") for r in ran} | {"torch"})
        floors = {module: import_seconds(module, env) for module in modules}
        slowest = max((m for m in floors if floors[m] != float("inf")), key=floors.get)
        print(
            "imports (warm, one run): "
            + ", ".join(f"{m} {t:.1f} s" for m, t in sorted(floors.items(), key=lambda kv: -kv[1]))
        )
        print(f"warm smoke / slowest import ({slowest}): {warm / floors[slowest]:.1f}x")

        warm_first = {
            (r["kernel"], json.dumps(r["case"], sort_keys=True)): r["first_call_s"] for r in warm_report["results"]
        }
        print("\nfirst call, cold -> warm (JIT saved by the caches):")
        for r in ran:
            again = warm_first.get((r["kernel"], json.dumps(r["case"], sort_keys=True)))
            after = f"{again:.2f} s" if again is not None else "n/a"
            print(
                f"  {r['kernel']:<20} {r['status']:<8} {r['first_call_s']:7.2f} s -> {after:>8}   import "
                f"{(r['import_s'] or 0):.1f} s"
            )
        notes = cold_report["machine"].get("cache_notes") or []
        for note in notes:
            print(f"cache: {note}")
    return {
        "level": args.level,
        "cold_s": cold,
        "warm_s": warm,
        "cold_over_warm": cold / warm,
        "slowest_import": slowest,
        "slowest_import_s": floors[slowest],
        "warm_over_slowest_import": warm / floors[slowest],
    }


if __name__ == "__main__":
    main()
