#!/usr/bin/env python3
"""check --ask-engine, measured: seconds per config, the driver's answers against the shared oracle's, and the
rules against the engine's answer (outside CI).

    python bench/engine_venvs.py sglang==0.5.23        # once: the release venv (cached)
    python bench/ask_engine.py [--release 0.5.23] [--sample 120] [--seed 2026] [--timed 3] \
        [--out bench/results/ask-engine-sglang-0.5.23.json]
    python bench/ask_engine.py --releases 0.5.1,0.5.5,0.5.19,0.5.20,0.5.23 [--newer 0.5.99]
    python bench/ask_engine.py --timed 3 --timed-only       # seconds per config only

1. Time: `--timed` configs asked one at a time through the product's own path (harness.ask: a fresh child,
   the engine imported each time), wall seconds each.
2. Agreement, on `--sample` configs drawn afresh (seeded) from two spaces: bench/oracle_diff.py's attention
   space (8 GPUs x 6 models x 9 backends x 5 KV dtypes x deterministic) and a flags space (page size, TP/DP
   attention, EAGLE, CUDA graphs off, chunked prefill, phase backends) over the same GPUs and models:
   - the driver (probe/engine_ask/child/sglang_driver.py, in its batch mode: one import, a fork per config)
     against the shared oracle (../shared/oracle/sglang_oracle.py, a yardstick run from the same venv) on the
     same simulated GPU (name, memory, 8 of them, CUDA 13.0): status, the rejection's text, and for configs both
     accept the prefill/decode backend and page size. The driver also runs `check_server_args` (stage
     validate), which the oracle never reaches: a config only it rejects there is counted apart;
   - our rules (`check --gpu GPU --engine-version sglang==X`, through the command's functions) against the
     driver's answer, as `check --ask-engine` judges them (attn_preflight.check_engine.engine_findings): each
     config with an engine-disagrees finding is listed with its message.
Writes the JSON (every config) and prints a summary; the causes of the disagreements are written by hand in
bench/results/ask-engine.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "bench"))

import engine_venvs  # noqa: E402
import oracle_diff  # noqa: E402

SHARED_ORACLE = os.path.join(os.path.dirname(REPO), "shared", "oracle", "sglang_oracle.py")
# The simulated GPU of each oracle_diff GPU, stated in full so both sides simulate the same device.
DEVICES = {
    "A100": ("NVIDIA A100-SXM4-80GB", 80),
    "L40S": ("NVIDIA L40S", 48),
    "H100": ("NVIDIA H100 80GB HBM3", 80),
    "B200": ("NVIDIA B200", 180),
    "B300": ("NVIDIA B300 SXM6 AC", 275),
    "Jetson Thor": ("NVIDIA Thor", 122),
    "RTX PRO 6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 96),
    "GB10": ("NVIDIA GB10", 120),
}
FLAG_EXTRAS = [
    ["--page-size", "16"],
    ["--page-size", "64"],
    ["--tp-size", "2"],
    ["--tp-size", "2", "--dp-size", "2", "--enable-dp-attention"],
    ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1"],
    ["--disable-cuda-graph"],
    ["--chunked-prefill-size", "4096"],
    ["--prefill-attention-backend", "fa3", "--decode-attention-backend", "flashinfer"],
    ["--disable-radix-cache"],
    ["--context-length", "4096"],
]


def draw(sample: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    attention = list(oracle_diff.all_cases())
    flags = []
    for gpu, cc in oracle_diff.GPUS:
        for model in oracle_diff.MODELS:
            for extra in FLAG_EXTRAS:
                argv = ["--model-path", os.path.join(oracle_diff.MODELS_DIR, model), *extra]
                flags.append({"gpu": gpu, "cc": cc, "argv": argv})
    cases = rng.sample(attention, sample - sample // 4) + rng.sample(flags, sample // 4)
    for n, case in enumerate(cases):
        name, gib = DEVICES[case["gpu"]]
        case["id"] = f"c{n:03d}"
        case["device"] = {
            "name": name,
            "cc": [int(x) for x in case["cc"].split(".")],
            "memory_mib": gib * 1024,
            "count": 8,
        }
        case["mem_gb"] = gib
    return cases


def oracle_answers(python: str, cases: list[dict]) -> dict[str, dict]:
    lines = "".join(
        json.dumps(
            {
                "id": c["id"],
                "cc": c["cc"],
                "gpu_name": c["device"]["name"],
                "mem_gb": c["mem_gb"],
                "num_gpus": 8,
                "cuda_version": "13.0",
                "argv": c["argv"],
            }
        )
        + "\n"
        for c in cases
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_"))}
    done = subprocess.run(
        [python, SHARED_ORACLE, "--batch", "-"],
        input=lines,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": ""},
    )
    sys.stderr.write("oracle: " + (done.stderr.strip().splitlines() or ["(nothing)"])[-1] + "\n")
    return {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}


def ours(case: dict, release: str):
    from attn_preflight.commands.check import config_from_options, target_from_options
    from attn_preflight.rules.core.judge import evaluate

    config = config_from_options({"engine": "sglang"}, ["python", "-m", "sglang.launch_server", *case["argv"]])
    target = target_from_options(case["gpu"], None, [f"sglang=={release}"])
    return evaluate(config, target, alternatives=False)


def driver_vs_oracle(answer: dict, oracle: dict) -> tuple[str, str]:
    """("agree" | "disagree" | "validate_only" | "not_compared", why)."""
    theirs = oracle.get("status")
    if theirs == "harness_error" or answer["status"] == "could_not_ask":
        return "not_compared", f"oracle {theirs}: {oracle.get('harness_reason')}; driver {answer.get('reason')}"
    if answer["status"] == "rejected" and answer.get("stage") == "validate":
        return ("validate_only", answer.get("error") or "") if theirs == "accepted" else ("disagree", "validate")
    mine = {"accepted": "accepted", "rejected": "rejected"}[answer["status"]]
    if answer["status"] == "rejected" and answer.get("stage") == "backend_init":
        mine = "rejected_at_backend_init"
    if mine != theirs:
        return (
            "disagree",
            f"driver {mine} ({answer.get('stage')}: {answer.get('error')}); oracle {theirs} ({oracle.get('error')})",
        )
    if mine == "accepted":
        a, o = answer.get("resolved") or {}, oracle.get("resolved") or {}
        pairs = [
            ("prefill", a.get("effective_prefill_attention_backend"), o.get("effective_prefill_attention_backend")),
            ("decode", a.get("effective_decode_attention_backend"), o.get("effective_decode_attention_backend")),
            ("page", a.get("page_size"), o.get("page_size")),
            ("kv", a.get("kv_cache_dtype"), o.get("kv_cache_dtype")),
        ]
        differs = [f"{k}: driver {x}, oracle {y}" for k, x, y in pairs if x != y]
        if differs:
            return "disagree", "; ".join(differs)
    elif (answer.get("error") or "")[:200] != (oracle.get("error") or oracle.get("late_error") or "")[:200]:
        late = (oracle.get("late_error") or "").split(": ", 1)[-1]
        if (answer.get("error") or "")[:120] != late[:120]:
            return (
                "disagree",
                f"texts differ: driver {answer.get('error')!r}; oracle {oracle.get('error') or oracle.get('late_error')!r}",
            )
    return "agree", ""


RELEASE_CONFIGS = [
    ("H100", ["Llama-3.1-8B-Instruct", "--attention-backend", "fa3"]),
    ("B200", ["Llama-3.1-8B-Instruct"]),
    ("H100", ["DeepSeek-V3", "--attention-backend", "fa4", "--enable-deterministic-inference"]),
]


def releases(versions: list[str], newer: str, out: str) -> int:
    """Each named release (and a re-versioned copy of the last one, named `newer`) asked the same few configs,
    one at a time through harness.ask: what it answered, in which shape, in how many seconds."""
    from attn_preflight.probe.engine_ask import harness

    rows = []
    for version in [*versions, newer]:
        copy_of = versions[-1] if version == newer else None
        python = engine_venvs.python_for("sglang", copy_of or version, newer if copy_of else None)
        for gpu_name, (model, *flags) in RELEASE_CONFIGS:
            name, gib = DEVICES[gpu_name]
            cc = [int(x) for x in dict(oracle_diff.GPUS)[gpu_name].split(".")]
            argv = ["--model-path", os.path.join(oracle_diff.MODELS_DIR, model), *flags]
            t0 = time.monotonic()
            answer = harness.ask(
                "sglang",
                argv,
                {"name": name, "cc": cc, "memory_mib": gib * 1024, "count": 8},
                python=python,
                timeout=600,
            )
            resolved = answer.get("resolved") or {}
            row = {
                "release": version,
                "copy_of": copy_of,
                "gpu": gpu_name,
                "argv": [model, *flags],
                "status": answer["status"],
                "stage": answer.get("stage"),
                "shape": answer.get("shape"),
                "stages": answer.get("stages"),
                "error": (answer.get("error") or answer.get("reason") or "")[:300] or None,
                "backend": [
                    resolved.get("effective_prefill_attention_backend"),
                    resolved.get("effective_decode_attention_backend"),
                ],
                "page_size": resolved.get("page_size"),
                "notes": answer.get("notes"),
                "fence": answer.get("fence"),
                "wall_s": round(time.monotonic() - t0, 1),
            }
            rows.append(row)
            print(
                json.dumps(
                    {
                        k: row[k]
                        for k in (
                            "release",
                            "gpu",
                            "argv",
                            "status",
                            "stage",
                            "shape",
                            "backend",
                            "page_size",
                            "wall_s",
                        )
                    }
                )
            )
    with open(out, "w") as handle:
        json.dump(rows, handle, indent=1)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default="0.5.23")
    parser.add_argument(
        "--releases",
        metavar="V,V,...",
        help="instead: ask each release (and a re-versioned copy of the last, --newer) a few configs",
    )
    parser.add_argument("--newer", default="0.5.99")
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--timed", type=int, default=3, help="configs asked one at a time, for seconds per config")
    parser.add_argument("--timed-only", action="store_true", help="only the --timed configs: seconds, no agreement")
    parser.add_argument("--out", default=None)
    options = parser.parse_args(argv)
    if options.releases:
        out = options.out or os.path.join(REPO, "bench", "results", "ask-engine-sglang-releases.json")
        return releases(options.releases.split(","), options.newer, out)
    from attn_preflight.check_engine import ENGINE_DISAGREES, engine_findings
    from attn_preflight.probe.engine_ask import harness

    python = engine_venvs.python_for("sglang", options.release)
    cases = draw(options.sample, options.seed)

    timed = []
    for case in cases[: options.timed]:
        t0 = time.monotonic()
        answer = harness.ask("sglang", case["argv"], case["device"], cuda_version="13.0", python=python, timeout=600)
        timed.append(
            {
                "id": case["id"],
                "wall_s": round(time.monotonic() - t0, 2),
                "child_s": answer.get("seconds"),
                "status": answer["status"],
                "load_average_1m": round(os.getloadavg()[0], 1),
            }
        )
        print(f"timed {case['id']}: {timed[-1]['wall_s']} s ({answer['status']})", file=sys.stderr)
    if options.timed_only:
        walls = [t["wall_s"] for t in timed]
        print(json.dumps({"timed": timed, "median_wall_s": statistics.median(walls) if walls else None}, indent=1))
        return 0

    t0 = time.monotonic()
    items = [{"id": c["id"], "argv": c["argv"], "gpu": c["device"], "cuda_version": "13.0"} for c in cases]
    driver = {a["id"]: a for a in harness.ask_batch("sglang", items, python=python, item_timeout=300)}
    batch_s = time.monotonic() - t0
    t0 = time.monotonic()
    oracle = oracle_answers(python, cases)
    oracle_s = time.monotonic() - t0

    rows, vs_oracle, vs_rules = [], Counter(), Counter()
    for case in cases:
        answer, theirs = driver[case["id"]], oracle.get(case["id"], {"status": "harness_error"})
        kind, why = driver_vs_oracle(answer, theirs)
        vs_oracle[kind] += 1
        report = ours(case, options.release)
        disagreements = [f.message for f in engine_findings(report, answer) if f.rule_id == ENGINE_DISAGREES.id]
        if answer["status"] != "could_not_ask":
            vs_rules["disagree" if disagreements else "agree"] += 1
        rows.append(
            {
                "id": case["id"],
                "gpu": case["gpu"],
                "argv": [os.path.basename(a) if a.startswith(oracle_diff.MODELS_DIR) else a for a in case["argv"]],
                "driver": {
                    k: answer.get(k) for k in ("status", "stage", "hook", "error_type", "error", "reason", "seconds")
                }
                | {
                    "resolved": {
                        k: (answer.get("resolved") or {}).get(k)
                        for k in (
                            "effective_prefill_attention_backend",
                            "effective_decode_attention_backend",
                            "page_size",
                            "kv_cache_dtype",
                            "context_length",
                        )
                    }
                },
                "oracle": {k: theirs.get(k) for k in ("status", "hook", "error_type", "error", "late_error")},
                "driver_vs_oracle": kind,
                "driver_vs_oracle_why": why,
                "rules_verdict": report.verdict.value,
                "rules_failing": [
                    f"{f.rule_id}[{f.rule.stage or '-'}]" for f in report.findings if f.status.value == "fail"
                ],
                "engine_disagrees": disagreements,
            }
        )
    seconds = [driver[c["id"]]["seconds"] for c in cases if driver[c["id"]].get("seconds") is not None]
    shared_import = next(
        (a.get("shared_import_seconds") for a in driver.values() if a.get("shared_import_seconds")), None
    )
    summary = {
        "release": options.release,
        "configs": len(cases),
        "seed": options.seed,
        "timed_single_asks_s": timed,
        "load_average_1_5_15": [round(x, 1) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "batch": {
            "total_s": round(batch_s, 1),
            "shared_import_s": shared_import,
            "per_config_s_mean": round(statistics.mean(seconds), 2) if seconds else None,
            "per_config_s_max": round(max(seconds), 2) if seconds else None,
        },
        "oracle_batch_s": round(oracle_s, 1),
        "driver_statuses": dict(Counter(driver[c["id"]]["status"] for c in cases)),
        "driver_vs_oracle": dict(vs_oracle),
        "rules_vs_engine": dict(vs_rules),
    }
    out = options.out or os.path.join(REPO, "bench", "results", f"ask-engine-sglang-{options.release}.json")
    with open(out, "w") as handle:
        json.dump({"summary": summary, "configs": rows}, handle, indent=1)
    print(json.dumps(summary, indent=1))
    for row in rows:
        if row["driver_vs_oracle"] == "disagree" or row["engine_disagrees"]:
            print(
                row["id"],
                row["gpu"],
                " ".join(row["argv"]),
                "|",
                row["driver_vs_oracle_why"],
                "|",
                row["engine_disagrees"],
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
