"""`check --ask-engine` on vLLM, measured: the driver's answers against the shared oracle's, and our rules
against the engine's answer, on configs drawn afresh (outside CI).

    python bench/ask_engine_vllm.py [--sample 100] [--seed 20261202] [--version 0.33.0]

Configs: bench/vllm_oracle_diff.py's generator (GPUs T4 .. RTX PRO 6000, eight models, forced or automatic
backend, KV dtype, block size, dtype, TP) with a seed of its own. Each config is

- asked of vLLM through probe/engine_ask/child/vllm_driver.py in the release's venv
  (tests/vllm_engine_venv.py), in the driver's --batch mode (one import, one fork per config; the GPU is the
  one `check --ask-engine` would simulate: check_engine.request_for), CUDA 13.0 as the oracle assumes;
- asked of the shared vLLM oracle (../shared/oracle/vllm, a yardstick: run, never imported) in its batch mode,
  run by the same venv's python (so both see the same installed packages);
- judged by our rules (vllm_oracle_diff.ours: `check --gpu GPU --engine-version vllm==V`).

Driver vs oracle: the same verdict (accepted / rejected / no answer), and for an acceptance the same backend,
block size and KV dtype. Rules vs engine: our fail ⇔ the engine's rejection, counting only our fails of
stages the engine runs (as check --ask-engine does); for acceptances the backend, and every key
engine-disagrees compares (backend, block size, KV dtype, a given context length: "resolved_same"). Per-call seconds: the
driver's per-config time in batch mode and its import time (a single `check --ask-engine` call pays both).
Figures and each disagreement go to bench/results/ask-engine-vllm.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, os.path.join(REPO, "tests"))

import vllm_oracle_diff as vod  # noqa: E402

DRIVER = os.path.join(REPO, "probe", "engine_ask", "child", "vllm_driver.py")


def request(case: dict, temp_dir: str) -> dict:
    from attn_preflight.check_engine import request_for
    from attn_preflight.commands.check import config_from_options, target_from_options

    cfg = config_from_options({"engine": "vllm"}, ["vllm", *case["argv"]])
    target = target_from_options(case["gpu"], None, [f"vllm=={vod.VLLM_VERSION}"])
    req = request_for(cfg, target, {}, ["vllm", *case["argv"]])
    return {
        "schema": 1,
        "engine": "vllm",
        "argv": req.argv,
        "env": {},
        "gpu": req.gpu,
        "cuda_version": "13.0",
        "answer_path": None,
        "temp_dir": temp_dir,
    }


def _read(path: str) -> dict[str, dict]:
    have: dict[str, dict] = {}
    if os.path.exists(path):
        with open(path) as handle:
            for line in handle:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a stopped run
                have[row["id"]] = row
    return have


def _stream(command: list[str], lines: list[str], env: dict, out: str) -> None:
    """Run a batch (one answer line per input line, in input order) with its stdout appended to `out` as it
    comes, so a stopped run keeps what it had."""
    with open(out, "a") as sink:
        subprocess.run(command, input="".join(lines), stdout=sink, stderr=subprocess.DEVNULL, text=True, env=env)


def ask_driver(cases: list[dict], python: str, path: str) -> dict[str, dict]:
    """The driver's answers, by case id (answers already in `path` are not asked again)."""
    have = _read(path)
    missing = [c for c in cases if vod.case_id(c) not in have]
    if missing:
        temp_dir = "/tmp/ask-engine-vllm-bench"
        os.makedirs(temp_dir, exist_ok=True)
        lines = [json.dumps({"id": vod.case_id(c), **request(c, temp_dir)}) + "\n" for c in missing]
        env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_") and k != "PYTHONPATH"}
        env.update(TMPDIR=temp_dir, HOME=temp_dir, HF_HOME=os.path.join(temp_dir, "hf"))
        _stream(["nice", "-n", "5", python, "-I", DRIVER, "--batch"], lines, env, path)
        have = _read(path)
    return have


def ask_oracle(cases: list[dict], python: str, script: str, path: str) -> dict[str, dict]:
    have = _read(path)
    missing = [c for c in cases if vod.case_id(c) not in have]
    if missing:
        lines = [
            json.dumps({"id": vod.case_id(c), "cc": c["cc"], "gpu_name": c["gpu"], "argv": c["argv"]}) + "\n"
            for c in missing
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_") and k != "PYTHONPATH"}
        _stream(["nice", "-n", "5", python, script, "--batch", "-"], lines, env, path)
        have = _read(path)
    return have


_ORACLE_STAGE = {
    "argparse": "parse",
    "validate_parsed_serve_args": "parse",
    "create_engine_config": "config",
    "worker.init_device(checks)": "validate",
    "load_model(meta)": "backend_selection",
    "update_block_size_for_backend": "resolve",
    "attn_metadata_builders": "backend_init",
}


# Why the rules and the engine differ, where the cause is known (matched on the engine's message).
CAUSES = {
    "Unexpected FlashInfer page size": (
        "FlashInferMetadataBuilder.__init__'s assertion (vllm 0.33.0 v1/attention/backends/flashinfer.py:1001-1005) "
        "reached: the builder got a kernel block size over 64 without TRT-LLM GQA. vLLM's runner splits such "
        "blocks (select_common_block_size -> 64) except in block-outermost KV layouts, which the rules do not model"
    ),
}


def cause_of(message: str) -> str | None:
    return next((why for key, why in CAUSES.items() if key in (message or "")), None)


# Why the driver and the oracle differ, where the cause is known (matched on the oracle's message).
ORACLE_CAUSES = {
    "Unexpected FlashInfer page size": (
        "the oracle builds the metadata builders with the KV manager's block size; vLLM's model runner (and the "
        "driver) give them select_common_block_size's kernel block size (v1/worker/utils.py "
        "prepare_kernel_block_sizes), 64 for FlashInfer without TRT-LLM, so the builder's assertion "
        "(flashinfer.py:1001-1005) is not reached: the engine accepts"
    ),
}


def oracle_cause(oracle: dict) -> str | None:
    return next((why for key, why in ORACLE_CAUSES.items() if key in (oracle.get("error") or "")), None)


def resolved_differences(case: dict, driver: dict) -> list[str]:
    """What check --ask-engine's engine-disagrees names for an acceptance: every key both sides resolve
    (attn_preflight/check_engine.py: backend, block size, KV dtype, a given context length)."""
    from attn_preflight.check_engine import _differences, _ours
    from attn_preflight.commands.check import config_from_options, target_from_options
    from attn_preflight.rules.core.judge import evaluate

    cfg = config_from_options({"engine": "vllm"}, ["vllm", *case["argv"]])
    target = target_from_options(case["gpu"], None, [f"vllm=={vod.VLLM_VERSION}"])
    return _differences(driver, _ours(evaluate(cfg, target, alternatives=False)))


def verdict(status: str) -> str:
    return {"harness_error": "no_answer", "could_not_ask": "no_answer"}.get(status, status)


def compare(case: dict, driver: dict, oracle: dict) -> list[str]:
    """What differs between the two answers (empty: they agree)."""
    diffs = []
    d, o = verdict(driver["status"]), verdict(oracle["status"])
    if d != o:
        return [f"verdict: driver {d} ({driver.get('stage')}), oracle {o} ({oracle.get('stage')})"]
    if d == "rejected" and _ORACLE_STAGE.get(oracle.get("stage") or "", oracle.get("stage")) != driver.get("stage"):
        diffs.append(f"stage: driver {driver.get('stage')}, oracle {oracle.get('stage')}")
    if d == "accepted":
        r, att = driver.get("resolved") or {}, oracle.get("attention") or {}
        for ours_key, theirs in (
            ("attention_backend", att.get("backend")),
            ("page_size", att.get("block_size")),
            ("kv_cache_dtype", att.get("kv_cache_dtype")),
        ):
            if r.get(ours_key) != theirs:
                diffs.append(f"{ours_key}: driver {r.get(ours_key)!r}, oracle {theirs!r}")
    return diffs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--version", default=vod.VLLM_VERSION)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--python", default=None, help="the vLLM venv's python (default: build/find it)")
    parser.add_argument("--oracle-script", default=os.path.join(vod.ORACLE_DIR, "vllm_oracle.py"))
    parser.add_argument("--cache", default="/tmp/ask_engine_vllm_oracle.jsonl", help="oracle answers (kept)")
    parser.add_argument("--driver-cache", default="/tmp/ask_engine_vllm_driver.jsonl", help="driver answers")
    parser.add_argument("--models-dir", default="/tmp/ask-engine-vllm-models")
    parser.add_argument(
        "--only",
        choices=("driver", "oracle", "both", "compare"),
        default="both",
        help="ask one side only, or compare the answers already asked",
    )
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results", "ask-engine-vllm.json"))
    args = parser.parse_args()
    import vllm_engine_venv

    python = args.python or str(vllm_engine_venv.build(args.version))
    cases = vod.draw_cases(args.sample, args.seed, vod.model_dirs(args.models_dir))
    drivers, oracles = _read(args.driver_cache), _read(args.cache)
    if args.only in ("driver", "both"):
        drivers = ask_driver(cases, python, args.driver_cache)
    if args.only in ("oracle", "both"):
        oracles = ask_oracle(cases, python, args.oracle_script, args.cache)
    if args.only in ("driver", "oracle"):
        return

    tally: Counter = Counter()
    rules_tally: Counter = Counter()
    disagreements, rules_disagreements = [], []
    seconds = [drivers[vod.case_id(c)].get("seconds") for c in cases if vod.case_id(c) in drivers]
    seconds = [s for s in seconds if isinstance(s, (int, float))]
    imports = [drivers[vod.case_id(c)].get("import_seconds") for c in cases if vod.case_id(c) in drivers]
    imports = [s for s in imports if isinstance(s, (int, float))]
    for case in cases:
        cid = vod.case_id(case)
        driver, oracle = drivers.get(cid), oracles.get(cid)
        if driver is None or oracle is None:
            tally["missing"] += 1
            continue
        diffs = compare(case, driver, oracle)
        tally["agree" if not diffs else "disagree"] += 1
        tally[f"driver_{verdict(driver['status'])}"] += 1
        tally[f"oracle_{verdict(oracle['status'])}"] += 1
        if diffs:
            disagreements.append(
                {
                    "gpu": case["gpu"],
                    "argv": vod.short(case["argv"]),
                    "differs": diffs,
                    "driver": {k: driver.get(k) for k in ("status", "stage", "error", "reason", "raised_at")},
                    "oracle": {k: oracle.get(k) for k in ("status", "stage", "error", "harness_reason", "raised_at")},
                    "cause": oracle_cause(oracle),
                }
            )
        if verdict(driver["status"]) == "no_answer":
            rules_tally["engine_no_answer"] += 1
            continue
        mine = vod.ours(case)
        engine_rejects = driver["status"] == "rejected"
        # as check --ask-engine counts it: our fails of stages the engine runs
        key = ("reject" if engine_rejects else "accept") + "/" + ("reject" if mine["reject_visible"] else "accept")
        rules_tally[key] += 1
        backend = (driver.get("resolved") or {}).get("attention_backend")
        if not engine_rejects and not mine["reject_visible"]:
            resolved = resolved_differences(case, {**driver, "engine": "vllm"})
            rules_tally["resolved_same" if not resolved else "resolved_different"] += 1
            if resolved:
                rules_disagreements.append(
                    {"kind": "resolved", "gpu": case["gpu"], "argv": vod.short(case["argv"]), "differs": resolved}
                )
            same = mine["backend"] == backend
            rules_tally["backend_same" if same else "backend_different"] += 1
            if not same:
                rules_disagreements.append(
                    {
                        "kind": "backend",
                        "gpu": case["gpu"],
                        "argv": vod.short(case["argv"]),
                        "engine": backend,
                        "rules": mine["backend"],
                        "cause": None,
                    }
                )
        if engine_rejects != mine["reject_visible"]:
            rules_disagreements.append(
                {
                    "kind": key,
                    "gpu": case["gpu"],
                    "argv": vod.short(case["argv"]),
                    "engine_stage": driver.get("stage"),
                    "engine_error": (driver.get("error") or "")[:300],
                    "rules_failed": mine["failed"],
                    "rules_messages": mine["messages"],
                    "cause": cause_of(driver.get("error") or ""),
                }
            )
    judged = tally["agree"] + tally["disagree"]
    rj = sum(rules_tally[k] for k in ("reject/reject", "accept/accept", "reject/accept", "accept/reject"))
    summary = {
        "vllm": args.version,
        "configs": len(cases),
        "seed": args.seed,
        "driver_vs_oracle": {
            "judged": judged,
            "agree": tally["agree"],
            "agreement": round(tally["agree"] / judged, 4) if judged else None,
            **{k: v for k, v in sorted(tally.items()) if k.startswith(("driver_", "oracle_", "missing"))},
        },
        "rules_vs_engine": {
            "judged": rj,
            "agreement": round((rules_tally["reject/reject"] + rules_tally["accept/accept"]) / rj, 4) if rj else None,
            **dict(sorted(rules_tally.items())),
        },
        "driver_seconds_per_config_batch": {
            "mean": round(statistics.mean(seconds), 2) if seconds else None,
            "median": round(statistics.median(seconds), 2) if seconds else None,
            "max": round(max(seconds), 2) if seconds else None,
        },
        "driver_import_seconds": round(statistics.mean(imports), 2) if imports else None,
        "host": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end",
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as handle:
        json.dump(
            {"summary": summary, "driver_vs_oracle": disagreements, "rules_vs_engine": rules_disagreements},
            handle,
            indent=1,
        )
    print(json.dumps(summary, indent=1))
    print(f"{len(disagreements)} driver/oracle and {len(rules_disagreements)} rules/engine disagreements in {args.out}")


if __name__ == "__main__":
    main()
