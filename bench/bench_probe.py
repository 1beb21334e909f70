#!/usr/bin/env python3
"""How fast `attn-preflight probe` is, as ratios measured in one run on this machine (not a test).

  1. `probe --no-imports` vs `python -m torch.utils.collect_env`        target: at least 10x faster
  2. full `probe --no-cache` vs the slowest single `python -c "import X"` of the libraries installed here
                                                                         target: at most 1.3x (imports run in parallel)

Runs alternate (A, B, A, B, ...) so that drift in the machine's load hits both sides alike; medians are
compared. Usage: python3 bench/bench_probe.py [--runs N]. Needs nothing installed: the repo is put on
PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
PROBE = [sys.executable, "-m", "attn_preflight", "probe", "--format", "json"]
IMPORT_TIMEOUT_S = 120


def environment(cache_dir: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = cache_dir  # never the user's cache; --no-cache runs never read it anyway
    return env


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=IMPORT_TIMEOUT_S
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return elapsed


def import_time(module: str, env: dict) -> Optional[float]:
    """A plain `python -c "import X"`, or None when it fails or hangs (a broken library has no cost to beat)."""
    try:
        return timed([sys.executable, "-c", f"import {module}"], env)
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        print(f"  skipping {module}: {str(err).splitlines()[-1]}")
        return None


def alternate(a: list[str], b: list[str], runs: int, env: dict) -> tuple[float, float]:
    timed(a, env), timed(b, env)  # warm the page cache and .pyc files of both
    times_a, times_b = [], []
    for _ in range(runs):
        times_a.append(timed(a, env))
        times_b.append(timed(b, env))
    return statistics.median(times_a), statistics.median(times_b)


def installed_imports(env: dict) -> list[str]:
    """The import of every library the probe finds installed here (what its import checks run)."""
    facts = json.loads(
        subprocess.run(PROBE + ["--no-imports"], env=env, capture_output=True, text=True, check=True).stdout
    )
    return [lib["import_name"] for lib in facts["libraries"] if lib["health"]["status"] != "not_installed"]


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def main(argv: Optional[list[str]] = None) -> dict:
    """Prints the ratios; returns them (seconds and ratios) for bench/run_all.py."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="measured runs per side (default 5)")
    args = parser.parse_args(argv)
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-probe-") as cache_dir:
        env = environment(cache_dir)
        print(f"python {sys.version.split()[0]} at {sys.executable}; {os.cpu_count()} CPUs; {args.runs} runs per side")

        imports = installed_imports(env)
        if "torch" in imports:
            fast, collect_env = alternate(
                PROBE + ["--no-imports"], [sys.executable, "-m", "torch.utils.collect_env"], args.runs, env
            )
            ratio = collect_env / fast
            figures.update(probe_no_imports_s=fast, collect_env_s=collect_env, collect_env_over_probe=ratio)
            print(
                f"probe --no-imports {fast * 1000:.0f} ms vs torch collect_env {collect_env * 1000:.0f} ms: "
                f"{ratio:.1f}x faster ({verdict(ratio >= 10)}: >= 10x)"
            )
        else:
            print("probe --no-imports vs torch collect_env: n/a (torch is not installed)")

        for module in imports:  # the first import after an install also writes its .pyc files
            import_time(module, env)
        single = {module: import_time(module, env) for module in imports}
        single = {module: seconds for module, seconds in single.items() if seconds is not None}
        if not single:
            print("full probe vs slowest import: n/a (no installed library imports)")
            return figures
        slowest = max(single, key=single.get)
        print(
            "single imports (warm, one run): "
            + ", ".join(f"{m} {t * 1000:.0f} ms" for m, t in sorted(single.items(), key=lambda kv: -kv[1]))
        )
        full, one = alternate(PROBE + ["--no-cache"], [sys.executable, "-c", f"import {slowest}"], args.runs, env)
        ratio = full / one
        figures.update(
            probe_full_s=full,
            slowest_import=slowest,
            slowest_import_s=one,
            probe_over_slowest_import=ratio,
            imports_checked=len(imports),
        )
        print(
            f"probe --no-cache {full * 1000:.0f} ms vs slowest import ({slowest}) {one * 1000:.0f} ms: "
            f"{ratio:.2f}x ({verdict(ratio <= 1.3)}: <= 1.3x; {len(imports)} imports checked in parallel)"
        )
    return figures


if __name__ == "__main__":
    main()
