"""Differential check of the SGLang rules against SGLang's own argument resolution (outside CI).

The oracle (../shared/oracle, a yardstick, never a dependency) runs sglang 0.5.23's resolution and
attention-backend factory on a simulated GPU and says accepted / rejected. It cannot see failures that
happen later (pool allocation, the first forward), so a config is counted as "rejected by us" only when a
failing rule is one the oracle can see: stage parse or startup, or stage init where the check is the
factory's own (attention_registry.py create_*; the oracle calls the factories with a fake model runner, so
checks inside a backend's constructor stay unseen), and not a check_server_args one (validation_hook.py,
run at launch after resolution, which the oracle does not reach). Rules that state no stage are counted both ways: as
seen (`accept_reject_agreement`) and as unseen (`agreement_stage_rules_only`).
Also compared, for configs both sides accept: the attention backend and page size SGLang settles on
against attn_preflight.rules.engines.sglang.resolve.

    ../shared/oracle/setup.sh                               # once: builds /tmp/sgl-oracle-venv
    python bench/oracle_diff.py [--sample 400] [--jobs 2] [--out /tmp/oracle_diff.json]

    python bench/oracle_diff.py --fixtures                  # the rules' own pass/fail fixtures instead

An older release: build its venv with the shared setup.sh (SGL_ORACLE_VENV=/tmp/sgl-oracle-X SGLANG_VERSION=X)
and run its own resolution through bench/sglang_release_oracle.py:

    python bench/oracle_diff.py --engine-version sglang==X --oracle-python /tmp/sgl-oracle-X/bin/python \
        --oracle-script bench/sglang_release_oracle.py --cache /tmp/oracle_diff_cache-X.jsonl

With --fixtures, every pass/fail case (tests/rule_fixtures) of a rule whose stage the oracle sees is sent as
the equivalent launch line: a fail case must be rejected with the rule's upstream message, a pass case must
not be rejected with it. Presets are written out as model directories; cases that need --feature (which
has no SGLang flag) or a facts file are left out.

The DeepSeek sparse attention rules (rules/engines/sglang/rules/dsa.py) need a DSA model and the --dsa-*-backend flags, which
the default space never draws; `--space dsa` draws DeepSeek-V3.2-Exp launches over those instead:

    python bench/oracle_diff.py --space dsa --sample 150 --cache /tmp/oracle_diff_cache-dsa.jsonl

`--space dsv4` draws DeepSeek-V4-Flash-Base launches (its model override replaces --attention-backend and --page-size):

    python bench/oracle_diff.py --space dsv4 --sample 300 --cache /tmp/oracle_diff_cache-dsv4.jsonl

Ours is `check --gpu GPU --engine-version sglang==X -- python -m sglang.launch_server ARGV`, through the
functions the command calls. Oracle answers are cached by config in --cache, so a rerun only asks for new
configs.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import subprocess
import sys
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODELS_DIR = os.path.join(REPO, "tests", "fixtures", "models")
GPUS = [
    ("A100", "8.0"),
    ("L40S", "8.9"),
    ("H100", "9.0"),
    ("B200", "10.0"),
    ("B300", "10.3"),
    ("Jetson Thor", "11.0"),
    ("RTX PRO 6000", "12.0"),
    ("GB10", "12.1"),
]
MODELS = [
    "Llama-3.1-8B-Instruct",
    "DeepSeek-V3",
    "gemma-2-9b",
    "gpt-oss-20b",
    "Qwen3-8B",
    "Llama-4-Scout-17B-16E-Instruct",
]
BACKENDS = [None, "fa3", "fa4", "flashinfer", "triton", "trtllm_mha", "trtllm_mla", "flashmla", "cutedsl_mla"]
KV_DTYPES = ["auto", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4"]
ORACLE_VISIBLE = {"parse", "startup"}


# Start-up checks SGLang runs after argument resolution (ServerArgs.check_server_args, called by
# entrypoints/engine.py when the server launches): the oracle stops at resolve_once, so it never runs them.
AFTER_RESOLUTION = "check_server_args"


def oracle_sees(rule) -> bool:
    """Whether the oracle can reject what `rule` catches (see the module docstring)."""
    if AFTER_RESOLUTION in rule.source:
        return False
    return rule.stage in ORACLE_VISIBLE or (rule.stage == "init" and "attention_registry.py, create_" in rule.source)


def all_cases():
    for (gpu, cc), model, backend, kv, det in itertools.product(GPUS, MODELS, BACKENDS, KV_DTYPES, (False, True)):
        argv = ["--model-path", os.path.join(MODELS_DIR, model), "--kv-cache-dtype", kv]
        if backend:
            argv += ["--attention-backend", backend]
        if det:
            argv.append("--enable-deterministic-inference")
        yield {"gpu": gpu, "cc": cc, "argv": argv}


# The DSA space (--space dsa): DeepSeek-V3.2-Exp, whose config.json is DeepSeek-V3's plus the indexer fields
# (github.com/deepseek-ai/DeepSeek-V3.2-Exp config_671B_v3.2.json: index_n_heads 64, index_head_dim 128,
# index_topk 2048) under its own architecture, × the DSA sub-backends (SGLang's --dsa-*-backend choices, less
# the HIP / XPU-only aiter and intel_xpu) × KV dtype × --enable-hisparse (± --disable-radix-cache).
DSA_MODEL = "DeepSeek-V3.2-Exp"
DSA_BACKENDS = [None, "flashmla_sparse", "flashmla_kv", "flashmla_auto", "flashinfer_sparse_mla", "fa3", "tilelang"]
DSA_BACKENDS += ["triton", "trtllm"]
DSA_KV_DTYPES = ["auto", "bf16", "fp8_e4m3", "fp8_e5m2", "nvfp4"]
# HiSparse also needs the radix cache off (hisparse_hook.py validate_hisparse in 0.5.23), drawn both ways.
HISPARSE_FLAGS = [[], ["--enable-hisparse"], ["--enable-hisparse", "--disable-radix-cache"]]


def dsa_model_dir(models_dir: str) -> str:
    """DeepSeek-V3.2-Exp's config.json, written under `models_dir` from the DeepSeek-V3 fixture."""
    with open(os.path.join(MODELS_DIR, "DeepSeek-V3", "config.json")) as handle:
        config = json.load(handle)
    config.pop("auto_map")  # V3.2 has no remote code: transformers' own deepseek_v32 config reads it
    config.update(architectures=["DeepseekV32ForCausalLM"], model_type="deepseek_v32")
    config.update(index_n_heads=64, index_head_dim=128, index_topk=2048)
    path = os.path.join(models_dir, DSA_MODEL)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as handle:
        json.dump(config, handle, indent=1)
    return path


def dsa_cases(models_dir: str):
    model = dsa_model_dir(models_dir)
    for (gpu, cc), kv, prefill, decode, hisparse in itertools.product(
        GPUS, DSA_KV_DTYPES, DSA_BACKENDS, DSA_BACKENDS, HISPARSE_FLAGS
    ):
        argv = ["--model-path", model, "--kv-cache-dtype", kv]
        if prefill:
            argv += ["--dsa-prefill-backend", prefill]
        if decode:
            argv += ["--dsa-decode-backend", decode]
        argv += hisparse
        yield {"gpu": gpu, "cc": cc, "argv": argv}


# The DeepSeek-V4 space (--space dsv4): the DeepSeek-V4-Flash-Base fixture (tests/fixtures/models/README.md) x GPU x
# --attention-backend (the alias compressed too) x --page-size x KV dtype x the flags its override and hook read:
# deterministic inference, equal phase backends, --dsv4-attn-backend trtllm, EAGLE top-k 2.
DSV4_MODEL = "DeepSeek-V4-Flash-Base"
DSV4_BACKENDS = [None, "dsv4", "compressed", "fa3", "flashinfer", "triton"]
DSV4_PAGE_SIZES = [None, 64, 256]
DSV4_KV_DTYPES = ["auto", "fp8_e4m3", "bfloat16", "bf16", "fp8_e5m2"]
DSV4_EXTRAS = [
    [],
    ["--enable-deterministic-inference"],
    ["--prefill-attention-backend", "fa3", "--decode-attention-backend", "fa3"],
    ["--dsv4-attn-backend", "trtllm"],
    ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2", "--speculative-num-steps", "3"],
]


def dsv4_cases():
    model = os.path.join(MODELS_DIR, DSV4_MODEL)
    for (gpu, cc), backend, page, kv, extra in itertools.product(
        GPUS, DSV4_BACKENDS, DSV4_PAGE_SIZES, DSV4_KV_DTYPES, DSV4_EXTRAS
    ):
        argv = ["--model-path", model, "--tp-size", "8", "--kv-cache-dtype", kv]
        if backend:
            argv += ["--attention-backend", backend]
        if page:
            argv += ["--page-size", str(page)]
        yield {"gpu": gpu, "cc": cc, "argv": argv + extra}


def config_digest(model_dir: str) -> str:
    """The model's config.json content, hashed: a cached answer is for the config the oracle read, not for a
    directory whose config.json has changed since (presets gain fields; --space dsa rewrites its model)."""
    with open(os.path.join(model_dir, "config.json"), "rb") as handle:
        return hashlib.sha1(handle.read()).hexdigest()


def case_id(case) -> str:
    argv = case["argv"]
    digest = config_digest(argv[argv.index("--model-path") + 1])
    return hashlib.sha1(json.dumps([case["cc"], argv, digest]).encode()).hexdigest()[:16]


def ask_oracle(cases, args, key=case_id, environ=None) -> dict[str, dict]:
    """The oracle's answer to each case by `key(case)`, asked in one batch for the cases not in --cache (answers
    appended to it); the oracle runs with `environ` (default: this one) and no PYTHONPATH. The vLLM harness
    (bench/vllm_oracle_diff.py) asks through this too."""
    cache = {}
    if os.path.exists(args.cache):
        with open(args.cache) as handle:
            for line in handle:
                answer = json.loads(line)
                cache[answer["id"]] = answer
    missing = [c for c in cases if key(c) not in cache]
    if missing:
        batch = "".join(
            json.dumps({"id": key(c), "cc": c["cc"], "gpu_name": c["gpu"], "argv": c["argv"]}) + "\n" for c in missing
        )
        done = subprocess.run(
            [args.oracle_python, args.oracle_script, "--batch", "-", "--jobs", str(args.jobs)],
            input=batch,
            capture_output=True,
            text=True,
            env={**(os.environ if environ is None else environ), "PYTHONPATH": ""},
        )
        sys.stderr.write(done.stderr.strip().splitlines()[-1] + "\n" if done.stderr.strip() else "")
        with open(args.cache, "a") as handle:
            for line in done.stdout.splitlines():
                answer = json.loads(line)
                cache[answer["id"]] = answer
                handle.write(line + "\n")
    return cache


def ours(case, sglang_version: str = "0.5.23"):
    """What `attn-preflight check --gpu GPU --engine-version sglang==X -- python -m sglang.launch_server ARGV`
    decides, in process through the functions the `check` command calls."""
    from attn_preflight.commands.check import config_from_options, target_from_options
    from attn_preflight.rules.core.judge import evaluate
    from attn_preflight.rules.engines.sglang.resolve import effective_page_size

    config = config_from_options({"engine": "sglang"}, ["python", "-m", "sglang.launch_server", *case["argv"]])
    target = target_from_options(case["gpu"], None, [f"sglang=={sglang_version}"])
    report = evaluate(config, target, alternatives=False)
    failed = [f for f in report.findings if f.status.value == "fail"]
    return {
        "reject": any(oracle_sees(f.rule) or not f.rule.stage for f in failed),
        "reject_staged": any(oracle_sees(f.rule) for f in failed),
        "failed": [f"{f.rule_id}[{f.rule.stage or '-'}]" for f in failed],
        "backend": report.config.attention_backend,
        "page_size": effective_page_size(report.config, target),
    }


_FLAG_SPELLING = {
    "--backend": "--attention-backend",
    "--deterministic": "--enable-deterministic-inference",
    "--tp": "--tp-size",
    "--model": "--model-path",
}


def _model_dir(spec: str, workdir: str) -> str:
    """A directory with config.json for a fixture's --model (presets are written out)."""
    from attn_preflight.rules.core.models import _preset_key, presets

    if os.path.exists(spec):
        return os.path.abspath(spec if os.path.isdir(spec) else os.path.dirname(spec))
    key = _preset_key(spec)
    path = os.path.join(workdir, key)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as handle:
        json.dump(presets()[key]["config"], handle)
    return path


def _needs_draft_model(argv: list[str]) -> bool:
    if "--speculative-algorithm" not in argv or "--speculative-draft-model-path" in argv:
        return False
    return argv[argv.index("--speculative-algorithm") + 1].upper() in ("EAGLE", "EAGLE3", "STANDALONE", "DFLASH")


def fixture_cases(workdir: str):
    """(rule, bucket, oracle case) for every fixture the oracle can judge."""
    from attn_preflight.rules.core.registry import get_rule
    from attn_preflight.rules.knowledge.gpus import lookup, parse_compute_capability
    from tests.rule_fixtures import all_fixtures

    for rule_id, buckets in sorted(all_fixtures().items()):
        r = get_rule(rule_id)
        if r is None or r.engine != "sglang" or not oracle_sees(r):
            continue
        for bucket in ("pass", "fail"):
            for case in buckets.get(bucket, []):
                if (
                    "gpu" not in case
                    or "--feature" in case.get("argv", [])
                    or case.get("engine_version", ["sglang==0.5.23"]) != ["sglang==0.5.23"]
                ):
                    continue
                profile = lookup(case["gpu"])
                cc = profile.cc if profile else parse_compute_capability(case["gpu"])
                tokens = list(case.get("argv", []))
                command = list(case.get("command", []))
                if "--" in tokens:  # a pasted command given inline in argv
                    command, tokens = tokens[tokens.index("--") + 1 :], tokens[: tokens.index("--")]
                if command:
                    start = next(i for i, t in enumerate(command) if t in ("sglang.launch_server", "serve")) + 1
                    if command[start - 1] == "serve" and command[start:] and not command[start].startswith("-"):
                        command[start : start + 1] = ["--model-path", command[start]]
                    tokens = command[start:] + tokens
                argv, i = [], 0
                while i < len(tokens):
                    flag = _FLAG_SPELLING.get(tokens[i], tokens[i])
                    if flag == "--model-path":
                        argv += [flag, _model_dir(tokens[i + 1], workdir)]
                        i += 2
                        continue
                    argv.append(flag)
                    i += 1
                if "--model-path" not in argv:
                    argv += ["--model-path", _model_dir("llama-3.1-8b", workdir)]
                if _needs_draft_model(argv):  # SGLang refuses these without one; the target model stands in
                    argv += ["--speculative-draft-model-path", argv[argv.index("--model-path") + 1]]
                yield r, bucket, case, {"gpu": case["gpu"], "cc": f"{cc[0]}.{cc[1]}", "argv": argv}


def _finding_message(rule_id: str, case: dict) -> str:
    from tests.rule_fixtures import run_case

    report = run_case(case)
    return next(f.message for f in report.findings if f.rule_id == rule_id)


def fixtures_main(args) -> None:
    import tempfile

    workdir = tempfile.mkdtemp(prefix="oracle-models-")
    items = list(fixture_cases(workdir))
    answers = ask_oracle([c for *_, c in items], args)
    tally, mismatches = Counter(), []
    for r, bucket, case, oracle_case in items:
        answer = answers.get(case_id(oracle_case))
        if answer is None or answer["status"] == "harness_error":
            tally["harness_error"] += 1
            continue
        text = (answer.get("error") or "") + " " + (answer.get("late_error") or "")
        message = r.prevents.split("{", 1)[0].strip()
        ours = _finding_message(r.id, case)
        first = text.strip().split(". ")[0].split(": ", 1)[-1][:60]
        names_rule = bool(message and message in text) or bool(first and first in ours)
        expect = case.get("expect", bucket)
        if bucket == "fail" and expect == "fail":
            ok = answer["status"] != "accepted"
            tally["fail_same_message"] += ok and names_rule
        elif bucket == "fail":  # a warning: SGLang accepts and rewrites
            ok = answer["status"] == "accepted"
        else:
            ok = not names_rule
        tally[f"{bucket}_{'agree' if ok else 'disagree'}"] += 1
        if not ok or (bucket == "fail" and expect == "fail" and not names_rule):
            mismatches.append(
                {
                    "rule": r.id,
                    "bucket": bucket,
                    "agree": ok,
                    "case": case,
                    "oracle": answer["status"],
                    "oracle_error": text.strip()[:240],
                }
            )
    summary = dict(tally)
    agree = tally["pass_agree"] + tally["fail_agree"]
    summary["cases"] = len(items)
    summary["agreement"] = round(agree / max(1, agree + tally["pass_disagree"] + tally["fail_disagree"]), 4)
    with open(args.out, "w") as handle:
        json.dump({"summary": summary, "mismatches": mismatches}, handle, indent=1)
    print(json.dumps(summary, indent=1))
    print(f"{len(mismatches)} cases to read (disagreements, or a rejection for another reason) in {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=400, help="configs drawn (seeded) from the full product")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--oracle-python", default="/tmp/sgl-oracle-venv/bin/python")
    parser.add_argument(
        "--oracle-script", default=os.path.join(os.path.dirname(REPO), "shared", "oracle", "sglang_oracle.py")
    )
    parser.add_argument("--cache", default="/tmp/oracle_diff_cache.jsonl")
    parser.add_argument("--out", default="/tmp/oracle_diff.json")
    parser.add_argument("--fixtures", action="store_true", help="judge the rules' own fixtures instead")
    parser.add_argument(
        "--engine-version",
        dest="sglang_version",
        default="sglang==0.5.23",
        type=lambda pin: pin.split("==", 1)[1] if pin.startswith("sglang==") else parser.error("sglang==VERSION"),
        help="the release the oracle's venv has, passed to check as --engine-version (older releases: "
        "--oracle-script bench/sglang_release_oracle.py)",
    )
    parser.add_argument(
        "--space",
        choices=("attention", "dsa", "dsv4"),
        default="attention",
        help="attention: GPU x model x --attention-backend x KV dtype x deterministic; dsa: DeepSeek-V3.2-Exp x "
        "GPU x KV dtype x --dsa-prefill/decode-backend x --enable-hisparse; dsv4: DeepSeek-V4-Flash-Base x GPU x "
        "--attention-backend x --page-size x KV dtype x the flags DeepSeek-V4's hook reads",
    )
    parser.add_argument(
        "--models-dir",
        default="/tmp/oracle-diff-models",
        help="where --space dsa writes its model's config.json (a fixed path keeps --cache's keys stable)",
    )
    parser.add_argument(
        "--rules-tree", default=REPO, help="judge with the rules of this checkout (e.g. another branch's export)"
    )
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.rules_tree))
    if args.fixtures:
        fixtures_main(args)
        return

    spaces = {"attention": all_cases, "dsa": lambda: dsa_cases(args.models_dir), "dsv4": dsv4_cases}
    cases = list(spaces[args.space]())
    random.Random(args.seed).shuffle(cases)
    cases = cases[: args.sample]
    answers = ask_oracle(cases, args)

    tally, backend_tally, page_tally = Counter(), Counter(), Counter()
    disagreements = []
    for case in cases:
        answer = answers.get(case_id(case))
        if answer is None or answer["status"] == "harness_error":
            tally["harness_error"] += 1
            continue
        if answer["status"] == "rejected" and "quantization" in (answer.get("error") or ""):
            tally["out_of_scope"] += 1  # refused for its weights' quantization, not for attention
            continue
        mine = ours(case, args.sglang_version)
        theirs = answer["status"] in ("rejected", "rejected_at_backend_init")
        key = ("reject" if theirs else "accept") + "/" + ("reject" if mine["reject"] else "accept")
        tally[key] += 1
        tally["staged_agree"] += theirs == mine["reject_staged"]
        if theirs != mine["reject"]:
            disagreements.append(
                {
                    "gpu": case["gpu"],
                    "argv": " ".join(a if not a.startswith("/") else os.path.basename(a) for a in case["argv"]),
                    "oracle": answer["status"],
                    "oracle_error": (answer.get("error") or answer.get("late_error") or "")[:200],
                    "ours": mine["failed"],
                }
            )
        if answer["status"] == "accepted" and not mine["reject"]:
            resolved = answer.get("resolved") or {}
            backend_tally["same" if resolved.get("attention_backend") == mine["backend"] else "different"] += 1
            page_tally["same" if resolved.get("page_size") == mine["page_size"] else "different"] += 1
            if resolved.get("attention_backend") != mine["backend"] or resolved.get("page_size") != mine["page_size"]:
                disagreements.append(
                    {
                        "gpu": case["gpu"],
                        "argv": " ".join(os.path.basename(a) for a in case["argv"]),
                        "resolved_oracle": [resolved.get("attention_backend"), resolved.get("page_size")],
                        "resolved_ours": [mine["backend"], mine["page_size"]],
                    }
                )
    judged = sum(v for k, v in tally.items() if k not in ("harness_error", "out_of_scope", "staged_agree"))
    agree = tally["reject/reject"] + tally["accept/accept"]
    import attn_preflight.rules

    summary = {
        "sglang": args.sglang_version,
        "space": args.space,
        "rules": os.path.dirname(os.path.dirname(os.path.abspath(attn_preflight.rules.__file__))),
        "configs": len(cases),
        "judged": judged,
        "harness_error": tally["harness_error"],
        "out_of_scope_quantization": tally["out_of_scope"],
        "accept_reject_agreement": round(agree / judged, 4) if judged else None,
        "agreement_stage_rules_only": round(tally["staged_agree"] / judged, 4) if judged else None,
        "oracle_reject_we_reject": tally["reject/reject"],
        "oracle_accept_we_accept": tally["accept/accept"],
        "oracle_reject_we_accept": tally["reject/accept"],
        "oracle_accept_we_reject": tally["accept/reject"],
        "resolved_backend": dict(backend_tally),
        "resolved_page_size": dict(page_tally),
    }
    with open(args.out, "w") as handle:
        json.dump({"summary": summary, "disagreements": disagreements}, handle, indent=1)
    print(json.dumps(summary, indent=1))
    print(f"{len(disagreements)} disagreements in {args.out}")


if __name__ == "__main__":
    main()
