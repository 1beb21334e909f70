"""Differential check of the vLLM rules against vLLM's own config and attention selection (outside CI).

The oracle (../shared/oracle/vllm, a yardstick, never a dependency) runs vllm 0.33.0 from `vllm serve`'s
parser through engine-config creation, the model's construction on the meta device (every attention layer
runs vLLM's selector and its backend Impl's constructor) and the metadata builders, on a simulated GPU, and
says accepted / rejected and which backend each layer got. Each random config is judged twice:

- the oracle, in batch mode (one fork per config);
- `attn-preflight check --gpu GPU --engine-version vllm==0.33.0 -- vllm serve MODEL ...`, in process through
  the functions the `check` command calls (config_from_options, target_from_options, evaluate).

Accept-reject agreement: the oracle accepts ⇔ our verdict is not fail. The oracle cannot see what happens
after the metadata builders (weight loading, KV memory planning, the first forward), so a fail of ours from
rules of stage load or runtime only (ORACLE_BLIND_STAGES) is also reported apart
(`we_reject_only_at_load_or_runtime`), and agreement counting only our fails of the stages the oracle reaches
(`agreement_oracle_visible_rules_only`). For configs both sides accept:
the backend vLLM built the attention layers with against ours (the named one, else vLLM's priority list as
rules/knowledge/vllm_backends.select runs it), and for FLASH_ATTN the FlashAttention version.

    ../shared/oracle/vllm/setup.sh                   # once: builds /tmp/vllm-oracle-venv
    python bench/vllm_oracle_diff.py [--sample 300] [--jobs 1] [--out bench/results/vllm-oracle-diff.json]
    python bench/vllm_oracle_diff.py --rules-tree /tmp/main-export    # the same configs, another tree's rules

Model directories: the oracle's own (../shared/oracle/vllm/models), the real configs in tests/fixtures/models,
and our presets' config excerpts written out, so both sides read the same config.json. Oracle answers are
cached by config in --cache, so a rerun only asks for new configs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VLLM_VERSION = "0.33.0"
ORACLE_DIR = os.path.join(os.path.dirname(REPO), "shared", "oracle", "vllm")  # ../shared
GPUS = [
    ("T4", "7.5"),
    ("A100", "8.0"),
    ("A10", "8.6"),
    ("L40S", "8.9"),
    ("H100", "9.0"),
    ("B200", "10.0"),
    ("RTX PRO 6000", "12.0"),
]
ORACLE_MODELS = ["llama-3.1-8b", "qwen3-8b", "gemma-2-9b", "gpt-oss-20b", "deepseek-v3"]
# Not here: models the oracle cannot build from a config.json alone (vLLM's model inspection fails in its
# harness for Llama4ForConditionalGeneration, Gemma3ForConditionalGeneration, Qwen3NextForCausalLM), and
# preset excerpts that lack the fields vLLM's layers need (deepseek-v2-lite: n_group / topk_group).
FIXTURE_MODELS = ["phi-2", "synthetic-head-dim-160"]
PRESET_MODELS = ["mistral-7b", "qwen2.5-7b", "qwen3-30b-a3b", "llama-3.1-70b", "gpt-oss-120b"]
MLA_MODELS = {"deepseek-v3", "deepseek-v3-bf16"}
BACKENDS = ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]
MLA_BACKENDS = ["FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "CUTLASS_MLA", "TRITON_MLA", "TOKENSPEED_MLA"]
KV_DTYPES = ["auto", "auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "nvfp4"]
BLOCK_SIZES = [None, None, 16, 32, 64, 128, 256, 8]
DTYPES = [None, None, None, "float16", "bfloat16"]
TP_SIZES = [1, 1, 1, 2, 4, 8]


def model_dirs(workdir: str) -> dict[str, str]:
    """name -> an absolute directory holding config.json."""
    from attn_preflight.rules.core.models import presets

    dirs = {name: os.path.join(ORACLE_DIR, "models", name) for name in ORACLE_MODELS}
    dirs.update({name: os.path.join(REPO, "tests", "fixtures", "models", name) for name in FIXTURE_MODELS})
    for name in PRESET_MODELS:
        path = os.path.join(workdir, name)
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "config.json"), "w") as handle:
            json.dump(presets()[name]["config"], handle)
        dirs[name] = path
    # DeepSeek-V3 as an unquantised (bf16) checkpoint: MLA without the fp8 weights' compute-capability floor.
    with open(os.path.join(ORACLE_DIR, "models", "deepseek-v3", "config.json")) as handle:
        config = json.load(handle)
    config.pop("quantization_config")
    path = os.path.join(workdir, "deepseek-v3-bf16")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as handle:
        json.dump(config, handle)
    dirs["deepseek-v3-bf16"] = path
    return dirs


def draw_cases(count: int, seed: int, dirs: dict[str, str]) -> list[dict]:
    """`count` distinct random configs; the named backend is of the model's kind (MLA or not) 3 times in 4."""
    rng = random.Random(seed)
    cases, seen = [], set()
    while len(cases) < count:
        gpu, cc = rng.choice(GPUS)
        model = rng.choice(sorted(dirs))
        own, other = (MLA_BACKENDS, BACKENDS) if model in MLA_MODELS else (BACKENDS, MLA_BACKENDS)
        roll = rng.random()
        backend = None if roll < 0.3 else rng.choice(own) if roll < 0.85 else rng.choice(other)
        argv = ["serve", dirs[model]]
        if backend:
            argv += ["--attention-backend", backend]
        kv = rng.choice(KV_DTYPES)
        if kv != "auto":
            argv += ["--kv-cache-dtype", kv]
        block = rng.choice(BLOCK_SIZES)
        if block:
            argv += ["--block-size", str(block)]
        dtype = rng.choice(DTYPES)
        if dtype:
            argv += ["--dtype", dtype]
        tp = rng.choice(TP_SIZES)
        if tp > 1:
            argv += ["--tensor-parallel-size", str(tp)]
        case = {"gpu": gpu, "cc": cc, "model": model, "argv": argv}
        if case_id(case) not in seen:
            seen.add(case_id(case))
            cases.append(case)
    return cases


# What the oracle never reaches: weight loading and KV memory planning (the memory rules), the first forward.
ORACLE_BLIND_STAGES = frozenset({"load", "runtime"})


def case_id(case) -> str:
    """Keyed by the model's config.json content too (oracle_diff.config_digest): the preset excerpts change."""
    from oracle_diff import config_digest

    digest = config_digest(case["argv"][1])
    return hashlib.sha1(json.dumps([case["cc"], case["gpu"], case["argv"], digest]).encode()).hexdigest()[:16]


def ask_vllm_oracle(cases, args) -> dict[str, dict]:
    """oracle_diff.ask_oracle, keyed by GPU too, with no VLLM_* variable of this shell reaching vLLM."""
    from oracle_diff import ask_oracle

    clean = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    return ask_oracle(cases, args, key=case_id, environ=clean)


def ours(case) -> dict:
    """What `attn-preflight check --gpu GPU --engine-version vllm==0.33.0 -- vllm ARGV` decides."""
    from attn_preflight.commands.check import config_from_options, target_from_options
    from attn_preflight.rules.core.judge import evaluate
    from attn_preflight.rules.engines.vllm.select import flash_attn_resolution, query, select

    cfg = config_from_options({"engine": "vllm"}, ["vllm", *case["argv"]])
    target = target_from_options(case["gpu"], None, [f"vllm=={VLLM_VERSION}"])
    report = evaluate(cfg, target, alternatives=False)
    failed = [f for f in report.findings if f.status.value == "fail"]
    backend, fa_version = cfg.attention_backend, None
    if cfg.model is not None and target.cc is not None:
        q = query(cfg, target)
        if backend is None and q.head_size is not None:
            backend = select(q).chosen
        if backend == "FLASH_ATTN":
            fa_version = flash_attn_resolution(q, target).version
    return {
        "reject": bool(failed),
        "reject_visible": any(f.rule.stage not in ORACLE_BLIND_STAGES for f in failed),
        "failed": [f"{f.rule_id}[{f.rule.stage or '-'}]" for f in failed],
        "messages": [f.message[:200] for f in failed],
        "backend": backend,
        "fa_version": fa_version,
    }


def oracle_backend(answer) -> tuple[object, object]:
    """The backend(s) vLLM built the attention layers with, and the FlashAttention version(s) FLASH_ATTN used."""
    attention = answer.get("attention") or {}
    groups = (attention.get("layers") or {}).get("groups") or []
    versions = sorted({g["flash_attn_version"] for g in groups if g.get("flash_attn_version")}) if groups else []
    return attention.get("backend"), (versions[0] if len(versions) == 1 else versions or None)


def short(argv: list[str]) -> str:
    return "vllm " + " ".join(os.path.basename(a) if a.startswith("/") else a for a in argv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300, help="random configs drawn (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--oracle-python", default="/tmp/vllm-oracle-venv/bin/python")
    parser.add_argument("--oracle-script", default=os.path.join(ORACLE_DIR, "vllm_oracle.py"))
    parser.add_argument("--cache", default="/tmp/vllm_oracle_diff_cache.jsonl")
    parser.add_argument("--models-dir", default="/tmp/vllm-oracle-diff-models")
    parser.add_argument("--out", default="/tmp/vllm_oracle_diff.json")
    parser.add_argument(
        "--rules-tree", default=REPO, help="judge with the rules of this checkout (e.g. another branch's export)"
    )
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.rules_tree))
    import attn_preflight.rules

    cases = draw_cases(args.sample, args.seed, model_dirs(args.models_dir))
    answers = ask_vllm_oracle(cases, args)

    tally, backend_tally, fa_tally = Counter(), Counter(), Counter()
    disagreements, harness_errors = [], []
    for case in cases:
        answer = answers.get(case_id(case))
        if answer is None or answer["status"] == "harness_error":
            tally["harness_error"] += 1
            harness_errors.append(
                {"gpu": case["gpu"], "argv": short(case["argv"]), "why": (answer or {}).get("harness_reason")}
            )
            continue
        mine = ours(case)
        theirs = answer["status"] == "rejected"
        key = ("reject" if theirs else "accept") + "/" + ("reject" if mine["reject"] else "accept")
        tally[key] += 1
        tally["visible_agree"] += theirs == mine["reject_visible"]
        if not theirs and mine["reject"] and not mine["reject_visible"]:
            tally["we_reject_only_at_load_or_runtime"] += 1
        if theirs != mine["reject"]:
            disagreements.append(
                {
                    "kind": key,
                    "gpu": case["gpu"],
                    "argv": short(case["argv"]),
                    "oracle_stage": answer.get("stage"),
                    "oracle_error": (answer.get("error") or "")[:400],
                    "oracle_raised_at": answer.get("raised_at"),
                    "oracle_backend": oracle_backend(answer)[0],
                    "ours_failed": mine["failed"],
                    "ours_messages": mine["messages"],
                }
            )
            continue
        if theirs:
            continue
        backend, fa_version = oracle_backend(answer)
        if mine["backend"] is None:
            backend_tally["ours_unresolved"] += 1
            continue
        same = backend == mine["backend"]
        backend_tally["same" if same else "different"] += 1
        if same and backend == "FLASH_ATTN" and fa_version is not None:
            fa_tally["same" if fa_version == mine["fa_version"] else "different"] += 1
            same = fa_version == mine["fa_version"]
        if not same:
            disagreements.append(
                {
                    "kind": "resolved",
                    "gpu": case["gpu"],
                    "argv": short(case["argv"]),
                    "oracle": [backend, fa_version],
                    "ours": [mine["backend"], mine["fa_version"]],
                }
            )
    judged = sum(tally[k] for k in ("reject/reject", "accept/accept", "reject/accept", "accept/reject"))
    agree = tally["reject/reject"] + tally["accept/accept"]
    summary = {
        "vllm": VLLM_VERSION,
        "rules": os.path.dirname(os.path.dirname(os.path.abspath(attn_preflight.rules.__file__))),
        "configs": len(cases),
        "seed": args.seed,
        "judged": judged,
        "harness_error": tally["harness_error"],
        "accept_reject_agreement": round(agree / judged, 4) if judged else None,
        "agreement_oracle_visible_rules_only": round(tally["visible_agree"] / judged, 4) if judged else None,
        "oracle_reject_we_reject": tally["reject/reject"],
        "oracle_accept_we_accept": tally["accept/accept"],
        "oracle_reject_we_accept": tally["reject/accept"],
        "oracle_accept_we_reject": tally["accept/reject"],
        "we_reject_only_at_load_or_runtime": tally["we_reject_only_at_load_or_runtime"],
        "resolved_backend": dict(backend_tally),
        "resolved_flash_attn_version": dict(fa_tally),
    }
    with open(args.out, "w") as handle:
        json.dump(
            {"summary": summary, "disagreements": disagreements, "harness_errors": harness_errors}, handle, indent=1
        )
    print(json.dumps(summary, indent=1))
    print(f"{len(disagreements)} disagreements in {args.out}")


if __name__ == "__main__":
    main()
