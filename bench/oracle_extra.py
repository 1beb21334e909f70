"""Differential check of the model-specific, speculative and MLA-backend rules against SGLang itself.

Runs every --gpu fixture of tests/rule_fixtures/{model_specific,speculative,mla_backends}.py that SGLang 0.5.23
can express (no --feature, no older --engine-version) through the config oracle (../shared/oracle: SGLang's
own argument resolution on a simulated GPU, plus the attention-backend factory pre-check) in batch mode, and
compares:
- reject: attn-preflight fails the case through a rule the oracle can see (resolution or factory) <=> the
  oracle rejects it;
- warn: a fixture that expects a warning (a silent rewrite) is accepted by the oracle with the matching
  warning line.
Rules whose check lives after resolution (kernel limits, model-runner asserts) are listed as not visible.
Outside CI: needs the oracle venv (bash ../shared/oracle/setup.sh).

    python bench/oracle_extra.py [--oracle-python /tmp/sgl-oracle-venv/bin/python] [--out /tmp/oracle-extra]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attn_preflight.rules.core.engine import Status  # noqa: E402
from attn_preflight.rules.core.models import presets  # noqa: E402
from attn_preflight.rules.core.registry import get_rule  # noqa: E402
from attn_preflight.rules.knowledge import gpus  # noqa: E402
from tests.rule_fixtures import mla_backends, model_specific, run_case, speculative  # noqa: E402

ORACLE = Path(__file__).resolve().parents[2] / "shared" / "oracle" / "sglang_oracle.py"  # ../shared
SUBJECTS = (model_specific, speculative, mla_backends)

# Rules whose upstream check runs in SGLang's argument resolution or in the backend factory the oracle probes.
VISIBLE = {
    "model-gpt-oss-backends",
    "model-llama4-backends",
    "model-gemma4-backends",
    "model-exaone-swa-backends",
    "model-olmo-flashinfer",
    "model-lfm2-triton",
    "model-moss-vl-prefill",
    "model-dual-chunk-backend",
    "spec-trtllm-mha-topk",
    "spec-eagle-topk-needs-steps",
    "spec-eagle-page-tree",
    "spec-ngram-page",
    "spec-flex-attention",
    "spec-dflash-draft-backend",
    "spec-rejection-sampling-topk",
    "spec-rejection-sampling-deterministic",
    "trtllm-mha-arch",
    "trtllm-mha-sm120-fp8-prefill",
    "trtllm-mha-page",
    "trtllm-mha-mla-model",
    "mla-backend-mha-model",
    "trtllm-mla-arch",
    "trtllm-mla-kv-dtype",
    "trtllm-mla-page",
    "cutedsl-mla-decode-only",
    "cutedsl-mla-arch",
    "cutedsl-mla-kv-dtype",
    "cutedsl-mla-page",
    "tokenspeed-mla-kv-dtype",
    "flashmla-page",
    # other subjects' rules a fixture here may trip, equally visible to the oracle
    "fa3-arch",
    "fa3-mla-sm8x",
    "general-triton-cross-attention",
    "hpc-ops-model",
    "deterministic-backend",
    "deterministic-mla-backend",
    "fa4-deterministic-mla-arch",
    "general-backend-removed",
    "kv-mxfp8-arch",
    "kv-nvfp4-arch",
}
# A warn fixture's rewrite shows as an oracle warning line containing one of these.
WARN_MARKS = {
    "trtllm-mha-page": "changing page_size",
    "trtllm-mla-page": "changing page_size",
    "cutedsl-mla-page": "changing page_size",
    "flashmla-page": "change page_size to 64",
    "tokenspeed-mla-kv-dtype": "tokenspeed_mla required FP8 KV",
    "spec-dflash-draft-backend": "Falling back",
}
_FLAG_ALIASES = {
    "--backend": "--attention-backend",
    "--deterministic": "--enable-deterministic-inference",
    "--tp": "--tp-size",
    "--model": "--model-path",
}
_LAUNCHER = ("python", "-m", "sglang.launch_server")


def _preset_dir(root: Path, name: str) -> str:
    key = name if name in presets() else next(k for k, p in presets().items() if name in p.get("aliases", []))
    path = root / f"preset-{key}"
    if not path.exists():
        path.mkdir()
        (path / "config.json").write_text(json.dumps(presets()[key]["config"]))
    return str(path)


def oracle_line(case: dict, root: Path) -> dict | None:
    """The oracle's batch input for a fixture case, or None when SGLang 0.5.23 cannot express it."""
    if "gpu" not in case or any(p != "sglang==0.5.23" for p in case.get("engine_version", [])):
        return None
    tokens = list(case.get("argv", []))
    if "command" in case:
        command = list(case["command"])
        tokens += command[len(_LAUNCHER) :] if tuple(command[:3]) == _LAUNCHER else command
    if "--feature" in tokens:
        return None
    argv: list[str] = []
    it = iter(tokens)
    for token in it:
        flag = _FLAG_ALIASES.get(token, token)
        if flag == "--model-path":
            model = next(it)
            argv += [flag, model if os.path.isdir(model) else _preset_dir(root, model)]
        else:
            argv.append(flag)
    algorithm = argv[argv.index("--speculative-algorithm") + 1].upper() if "--speculative-algorithm" in argv else ""
    if algorithm in ("EAGLE", "EAGLE3", "STANDALONE", "DFLASH") and "--speculative-draft-model-path" not in argv:
        argv += ["--speculative-draft-model-path", argv[argv.index("--model-path") + 1]]
    profile = gpus.lookup(case["gpu"]) or gpus.profile_for_cc(gpus.parse_compute_capability(case["gpu"]))
    tp = int(argv[argv.index("--tp-size") + 1]) if "--tp-size" in argv else 1
    return {"cc": f"{profile.cc[0]}.{profile.cc[1]}", "gpu_name": profile.name, "num_gpus": max(8, tp), "argv": argv}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle-python", default="/tmp/sgl-oracle-venv/bin/python")
    parser.add_argument("--out", default=None, help="directory for the batch input/output (default: a temp dir)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="oracle-extra-"))
    out.mkdir(parents=True, exist_ok=True)

    rows, lines, not_visible = [], [], set()
    for module in SUBJECTS:
        for rule_id, buckets in module.FIXTURES.items():
            for bucket in ("pass", "fail"):
                for index, case in enumerate(buckets.get(bucket, [])):
                    line = oracle_line(case, out)
                    if line is None:
                        continue
                    if rule_id not in VISIBLE:
                        not_visible.add(rule_id)
                        continue
                    report = run_case(case)
                    failing = sorted(f.rule_id for f in report.findings if f.status is Status.FAIL)
                    rows.append(
                        {
                            "id": f"{rule_id}/{bucket}/{index}",
                            "rule": rule_id,
                            "expect": case.get("expect", bucket),
                            "ours_fail": failing,
                        }
                    )
                    lines.append({"id": rows[-1]["id"], **line})
    (out / "in.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open(out / "out.jsonl", "w") as handle:
        subprocess.run(
            [args.oracle_python, str(ORACLE), "--batch", str(out / "in.jsonl")],
            stdout=handle,
            stderr=subprocess.DEVNULL,
            cwd=ORACLE.parent,
            check=False,
        )
    answers = {a["id"]: a for a in map(json.loads, (out / "out.jsonl").read_text().splitlines())}

    agree, harness, disagreements, same_reason, reasons = 0, 0, [], 0, 0
    for row in rows:
        answer = answers.get(row["id"], {"status": "harness_error"})
        if answer["status"] == "harness_error":
            harness += 1
            disagreements.append(f"HARNESS {row['id']}: {answer.get('error') or answer.get('harness_reason')}")
            continue
        oracle_rejects = answer["status"] in ("rejected", "rejected_at_backend_init")
        ours_rejects = any(r in VISIBLE for r in row["ours_fail"])
        ok = oracle_rejects == ours_rejects
        if ok and row["expect"] == "warn" and row["rule"] in WARN_MARKS:
            ok = any(WARN_MARKS[row["rule"]] in w for w in answer.get("warnings", []))
        agree += ok
        if ok and row["expect"] == "fail" and row["rule"] in VISIBLE and row["rule"] in row["ours_fail"]:
            # the oracle refused with this rule's own upstream message (its text up to the first placeholder)
            reasons += 1
            stem = get_rule(row["rule"]).prevents.split("{")[0][:60]
            same_reason += stem.startswith("AssertionError") or stem in (answer.get("error") or "") + (
                answer.get("late_error") or ""
            )
        if not ok:
            disagreements.append(
                f"DISAGREE {row['id']}: ours fail={row['ours_fail']} oracle={answer['status']} "
                f"{(answer.get('error') or answer.get('late_error') or '')[:160]}"
            )
    judged = len(rows) - harness
    print(
        f"oracle (sglang 0.5.23) vs attn-preflight: {agree}/{judged} cases agree "
        f"({harness} harness errors); rules judged: {len({r['rule'] for r in rows})}; refusals with the rule's "
        f"own upstream message: {same_reason}/{reasons}"
    )
    print("not visible to resolution (kernel / model-runner checks): " + ", ".join(sorted(not_visible)))
    for line in disagreements:
        print(line)
    print(f"batch files: {out}")
    return 0 if agree == judged else 1


if __name__ == "__main__":
    sys.exit(main())
