"""Speed of `check`, measured as ratios in one run (never as a timed test).

1. One `attn-preflight check --gpu ...` process vs `python -c "import torch"` (median of N runs each): check
   must cost a small fraction of a torch import, because it never imports torch or a kernel library.
2. Rule evaluations per second over the whole matrix: every GPU profile x SGLang backend x KV dtype x
   deterministic on/off x model preset, each config evaluated by attn_preflight.rules.core.engine.evaluate (no alternatives).
   A rule evaluation is one rule judged for one config; target >= 100,000/s.

    python bench/bench_check.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

CHECK_ARGV = [
    "-m",
    "attn_preflight",
    "check",
    "--gpu",
    "H100",
    "--model",
    "deepseek-v3",
    "--attention-backend",
    "fa4",
    "--enable-deterministic-inference",
]


def _median_seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, *argv], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def process_cost(runs: int) -> dict:
    check = _median_seconds(CHECK_ARGV, runs)
    torch = _median_seconds(["-c", "import torch"], runs)
    return {
        "check_process_s": round(check, 3),
        "import_torch_s": round(torch, 3),
        "check_over_torch": round(check / torch, 3) if torch else None,
    }


def matrix_throughput() -> dict:
    from attn_preflight.rules.core.config import Config
    from attn_preflight.rules.core.grid import default_backends
    from attn_preflight.rules.core.judge import evaluate
    from attn_preflight.rules.core.models import load_preset, presets
    from attn_preflight.rules.core.registry import all_rules
    from attn_preflight.rules.core.target import Target
    from attn_preflight.rules.core.validation import kv_dtype_choices
    from attn_preflight.rules.knowledge import gpus

    targets = [Target.from_gpu(name) for name in gpus.names()]
    backends = default_backends("sglang")
    kv_dtypes = [kv for kv in kv_dtype_choices("sglang")]
    models = [load_preset(name) for name in presets()]
    configs = [
        Config(model=m, attention_backend=b, kv_cache_dtype=kv, deterministic=d)
        for m in models
        for b in backends
        for kv in kv_dtypes
        for d in (False, True)
    ]
    rules_per_config = sum(1 for r in all_rules() if r.engine in ("sglang", "any"))
    evaluate(configs[0], targets[0], alternatives=False)  # warm the registry and version gates
    start = time.perf_counter()
    verdicts = {"pass": 0, "warn": 0, "fail": 0}
    for target in targets:
        for config in configs:
            verdicts[evaluate(config, target, alternatives=False).verdict] += 1
    seconds = time.perf_counter() - start
    evaluations = len(targets) * len(configs)
    return {
        "gpus": len(targets),
        "backends": len(backends),
        "kv_dtypes": len(kv_dtypes),
        "presets": len(models),
        "configs_evaluated": evaluations,
        "rules_per_config": rules_per_config,
        "seconds": round(seconds, 3),
        "configs_per_s": round(evaluations / seconds),
        "rule_evaluations_per_s": round(evaluations * rules_per_config / seconds),
        "verdicts": verdicts,
        "target_rule_evaluations_per_s": 100_000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = {"process": process_cost(args.runs), "matrix": matrix_throughput()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    p, m = result["process"], result["matrix"]
    print(
        f"check --gpu process: {p['check_process_s']} s; python -c 'import torch': {p['import_torch_s']} s; "
        f"ratio {p['check_over_torch']}"
    )
    print(
        f"matrix: {m['gpus']} GPUs x {m['backends']} backends x {m['kv_dtypes']} KV dtypes x 2 deterministic x "
        f"{m['presets']} presets = {m['configs_evaluated']} configs in {m['seconds']} s"
    )
    print(
        f"  {m['configs_per_s']} configs/s x {m['rules_per_config']} rules = {m['rule_evaluations_per_s']} rule "
        f"evaluations/s (target {m['target_rule_evaluations_per_s']}); verdicts {m['verdicts']}"
    )


if __name__ == "__main__":
    main()
