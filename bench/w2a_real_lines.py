#!/usr/bin/env python3
"""Real launch lines against the installed engine (slice w2a, issues 20/23).

Each line of bench/w2a_real_lines.json (taken as written from the engines' docs/recipes, cited) is checked with
`check --ask-engine` on the engine release it targets, its hub model id replaced by a local model directory of
the same architecture (the corpus says how each differs), on the GPU its source names. Recorded per line: exit
code, the rules' verdict (findings other than engine-*), the engine's answer (status, stage, error, resolved
backend), and the engine-disagrees findings. Lines marked held_out (sha256 of the command, fixed before any run)
are reported apart.

    nice python3 bench/w2a_real_lines.py [--only N,M] --out bench/results/w2a-real-lines.json

One ask at a time (each ~15-20 s: importing the engine dominates).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "w2a_real_lines.json"
VENVS = Path(os.path.expanduser("~/.cache/attn-preflight/engine-venvs"))
RELEASE = {"sglang": "0.5.23", "vllm": "0.33.0"}
MODEL_FLAGS = ("--model", "--model-path")


def tokens(command: str) -> list[str]:
    return shlex.split(command.replace("\\\n", " "))


def localise(argv: list[str], model_dir: str) -> list[str]:
    """The hub id replaced by the local directory: after --model/--model-path, or vllm serve's positional."""
    out = list(argv)
    for i, tok in enumerate(out):
        if tok in MODEL_FLAGS and i + 1 < len(out):
            out[i + 1] = model_dir
            return out
        if tok.split("=", 1)[0] in MODEL_FLAGS and "=" in tok:
            out[i] = tok.split("=", 1)[0] + "=" + model_dir
            return out
    for i, tok in enumerate(out[:-1]):
        if tok == "serve" and i > 0 and out[i - 1].endswith("vllm"):
            out[i + 1] = model_dir
            return out
    raise SystemExit(f"no model in {argv}")


def ask(line: dict) -> dict:
    engine = line["engine"]
    release = RELEASE[engine]
    py = VENVS / f"{engine}-{release}" / "bin" / "python"
    argv = localise(tokens(line["command"]), str(ROOT / line["model_dir"]))
    cmd = [
        sys.executable,
        "-m",
        "attn_preflight",
        "check",
        "--ask-engine",
        "--engine-python",
        str(py),
        "--gpu",
        line["gpu"],
        "--engine-version",
        f"{engine}=={release}",
        "--format",
        "json",
        "--",
        *argv,
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    rec: dict = {"rc": proc.returncode, "seconds": round(time.monotonic() - t0, 1)}
    try:
        rep = json.loads(proc.stdout)
    except ValueError:
        rec["error"] = (proc.stderr.strip().splitlines() or ["(no output)"])[-1][:400]
        return rec
    findings = rep.get("findings", [])
    rules = [f for f in findings if not str(f.get("rule_id", "")).startswith("engine-")]
    rec["verdict"] = rep.get("verdict")
    rec["rules_fail"] = sorted({f["rule_id"] for f in rules if f["status"] == "fail"})
    rec["rules_unknown"] = sorted({f["rule_id"] for f in rules if f["status"] == "unknown"})
    rec["rules_warn"] = sorted({f["rule_id"] for f in rules if f["status"] == "warn"})
    ea = rep.get("engine_answer") or {}
    res = ea.get("resolved") or {}
    rec["engine"] = {
        "status": ea.get("status"),
        "stage": ea.get("stage"),
        "error_type": ea.get("error_type"),
        "error": (ea.get("error") or ea.get("reason") or "")[:400] or None,
        "raised_at": ea.get("raised_at"),
        "resolved": {
            k: res.get(k) for k in sorted(res) if "backend" in k or k in ("page_size", "block_size", "kv_cache_dtype")
        },
        "seconds": ea.get("seconds"),
    }
    rec["disagrees"] = [f["message"][:500] for f in findings if f.get("rule_id") == "engine-disagrees"]
    return rec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "w2a-real-lines.json"))
    a = ap.parse_args()
    lines = json.loads(CORPUS.read_text())["lines"]
    only = {int(x) for x in a.only.split(",") if x}
    out = []
    for i, line in enumerate(lines):
        if only and i not in only:
            continue
        rec = {
            "i": i,
            "held_out": line["held_out"],
            "engine": line["engine"],
            "gpu": line["gpu"],
            "source": line["source"],
        }
        rec.update(ask(line))
        out.append(rec)
        print(json.dumps(rec)[:600], file=sys.stderr, flush=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    for part, held in (("fix set", False), ("held out", True)):
        rs = [r for r in out if r["held_out"] == held]
        print(
            f"{part}: {len(rs)} lines, engine-disagrees on {sum(bool(r.get('disagrees')) for r in rs)}, "
            f"engine rejected {sum((r.get('engine') or {}).get('status') == 'rejected' for r in rs)}, "
            f"could not ask {sum((r.get('engine') or {}).get('status') not in ('accepted', 'rejected') for r in rs)}"
        )


if __name__ == "__main__":
    main()
