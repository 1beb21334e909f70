"""Every kind of input at a quarter of its limit (N) and at its limit (4N): the time must grow about 4x, never 16x.

    python bench/bench_inputs.py [--runs 3] [--only KIND] [--json out.json]

Each kind is generated at its worst shape (the longest line, the most keys, the most GPUs, the most flags the
limit lets through) and run through the real CLI in a fresh process (`python -m attn_preflight ...`); the
start-up (the same command on the smallest input of that kind) is subtracted, so the ratio is that of the
work the input causes. A ratio near 4 is linear; near 16 quadratic. The limits are the ones the tool states
(attn_preflight/probe/limits.py) and enforces before parsing: one unit more is exit 2 (tests/test_guarantees.py
runs each kind at its limit, and one past it).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from attn_preflight.probe import limits  # noqa: E402

FACTS = os.path.join(ROOT, "tests", "fixtures", "facts", "h200-sglang-0.5.23.json")
CONFIG = os.path.join(ROOT, "tests", "fixtures", "models", "gemma-2-9b", "config.json")
SGLANG = ["python", "-m", "sglang.launch_server"]


def _facts() -> dict:
    with open(FACTS) as handle:
        return json.load(handle)


def _config() -> dict:
    with open(CONFIG) as handle:
        return json.load(handle)


def _write(path: str, data) -> str:
    with open(path, "w") as handle:
        handle.write(data if isinstance(data, str) else json.dumps(data))
    return path


def _model_dir(work: str, config: dict) -> str:
    directory = os.path.join(work, "model")
    os.makedirs(directory, exist_ok=True)
    _write(os.path.join(directory, "config.json"), config)
    return directory


# kind -> (what it stands for, the limit (units), the unit, make(work dir, n units) -> argv)
Make = Callable[[str, int], list]


def command_flags(work: str, n: int) -> list:
    return ["check", "--gpu", "H100", "--", *SGLANG, *[f"--unknown-flag-{i}" for i in range(n)]]


def command_token(work: str, n: int) -> list:
    return ["check", "--gpu", "H100", "--", *SGLANG, "--served-model-name", "m" * n]


def command_json(work: str, n: int) -> list:
    value = json.dumps({f"k{i}": i for i in range(max(1, n // 12))})[:n]
    value = value[: value.rfind(",")] + "}" if len(value) >= n and "," in value else value
    return ["check", "--gpu", "H100", "--", "vllm", "serve", "llama-3.1-8b", "--speculative-config", value]


def config_bytes(work: str, n: int) -> list:
    config = _config()
    base = len(json.dumps(config))
    config["extra"] = {f"key_{i:09d}": i for i in range(max(1, (n - base) // 32))}  # 32 bytes a key at most
    return ["check", "--gpu", "H100", "--model", _model_dir(work, config)]


def config_string(work: str, n: int) -> list:
    config = _config()
    config["architectures"] = ["A" * n]
    return ["check", "--gpu", "H100", "--model", _model_dir(work, config)]


def facts_gpus(work: str, n: int) -> list:
    facts = _facts()
    device = facts["gpus"]["devices"][0]
    facts["gpus"]["devices"] = [dict(device, index=i, uuid=f"GPU-{i:08d}") for i in range(n)]
    return ["check", "--facts", _write(os.path.join(work, "facts.json"), facts), "--tp-size", "8"]


def facts_bytes(work: str, n: int) -> list:
    facts = _facts()
    facts["host"]["hostname"] = "h" * n
    return ["check", "--facts", _write(os.path.join(work, "facts.json"), facts)]


def yaml_keys(work: str, n: int) -> list:
    lines = [f"key-{i:08d}: {i}" for i in range(n)]
    path = _write(os.path.join(work, "serve.yaml"), "\n".join(lines) + "\n")
    return ["check", "--gpu", "H100", "--", *SGLANG, "--config", path]


def yaml_line(work: str, n: int) -> list:
    path = _write(os.path.join(work, "serve.yaml"), "served-model-name: " + "x" * n + "\n")
    return ["check", "--gpu", "H100", "--", *SGLANG, "--config", path]


def fleet_reports(work: str, n: int) -> list:
    facts = _facts()
    directory = os.path.join(work, "fleet")
    os.makedirs(directory, exist_ok=True)
    for i in range(n):
        node = copy.deepcopy(facts)
        node["host"]["hostname"] = f"node-{i:05d}"
        _write(os.path.join(directory, f"node-{i:05d}.json"), node)
    return ["fleet", directory, "--format", "json"]


KINDS: dict[str, tuple[str, int, str, Make]] = {
    "command-flags": ("flags of a pasted command", limits.MAX_COMMAND_TOKENS - 8, "tokens", command_flags),
    "command-token": ("one pasted token", limits.MAX_TOKEN_CHARS, "characters", command_token),
    "command-json": ("a JSON argument", limits.MAX_TOKEN_CHARS, "characters", command_json),
    "config-bytes": ("config.json keys", limits.MAX_JSON_BYTES - 65536, "bytes", config_bytes),
    "config-string": ("a config.json string", limits.MAX_JSON_BYTES - 65536, "characters", config_string),
    "facts-gpus": ("GPUs in a facts file", limits.MAX_GPUS, "GPUs", facts_gpus),
    "facts-bytes": ("a facts file's string", limits.MAX_JSON_BYTES - 65536, "characters", facts_bytes),
    "yaml-keys": ("--config YAML keys", limits.MAX_CONFIG_KEYS, "keys", yaml_keys),
    "yaml-line": ("a --config YAML line", limits.MAX_YAML_BYTES - 4096, "characters", yaml_line),
    "fleet-reports": ("reports given to fleet", limits.MAX_FLEET_REPORTS, "reports", fleet_reports),
}


def timed(argv: list, runs: int) -> tuple[float, int]:
    times, code = [], -1
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "attn_preflight", *argv], capture_output=True, env=env, timeout=600
        )
        times.append(time.perf_counter() - started)
        code = done.returncode
        if code == 2:  # below the limit every kind must be judged: say so, and go on with the others
            print(f"  {argv[:6]}: exit 2: {done.stderr.decode(errors='replace')[-200:]}", file=sys.stderr)
    return statistics.median(times), code


def measure(kind: str, runs: int) -> dict:
    what, limit, unit, make = KINDS[kind]
    row = {"kind": kind, "what": what, "limit": limit, "unit": unit}
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as work:
        for label, n in (("base", 1), ("n", limit // 4), ("4n", limit)):
            row[f"{label}_s"], row[f"{label}_exit"] = timed(make(work, n), runs)
    work_n, work_4n = row["n_s"] - row["base_s"], row["4n_s"] - row["base_s"]
    row["ratio"] = round(work_4n / work_n, 1) if work_n > 0.05 else None  # below 50 ms: noise, not work
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(KINDS))
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    rows = []
    print(f"{'input':24} {'limit':>16} {'start-up':>9} {'at N':>8} {'at 4N':>8}  ratio (4 = linear)")
    for kind in args.only or KINDS:
        row = measure(kind, args.runs)
        rows.append(row)
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.1f}"
        print(
            f"{row['what']:24} {row['limit']:>10,} {row['unit'][:5]:5} {row['base_s']:8.2f}s "
            f"{row['n_s']:7.2f}s {row['4n_s']:7.2f}s  {ratio}",
            flush=True,
        )
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
