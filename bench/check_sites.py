"""List every raise, assert and declared rewrite of SGLang's attention-deciding files, by file:line, from a release's
extracted wheel (a rewrite: a declare_resolution call, how 0.5.23's hooks force a setting).

The coverage table (tests/fixtures/sglang-0.5.23-check-coverage.json) must hold each listed site in a row's line
ranges, or in a not_attention entry's (its `check` written as a row's, with why it bears on no attention): tests/test_check_coverage.py reads the listing this script
writes, so a check a later release adds shows up as a site no row holds (issue 11 §1).

    python bench/check_sites.py                      # write tests/fixtures/sglang-0.5.23-check-sites.json
    python bench/check_sites.py --release 0.5.24 --out /tmp/sites.json
    python bench/check_sites.py --uncovered          # the sites no row holds, one file:line a line

Files are read from --root (default /work/wheels/sglang/extracted, bench/release_walk.py fetch sglang).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "tests" / "fixtures" / "sglang-0.5.23-check-coverage.json"
SITES = REPO / "tests" / "fixtures" / "sglang-0.5.23-check-sites.json"
# The files audited site by site so far, each with the functions whose sites count (None: every site; an attention
# backend: its constructor, the checks it makes before any forward); the rest of the table's rows came from the
# hand audit (../shared/research/sglang-0.5.23-check-coverage.md).
CONSTRUCTOR = ("__init__",)
AUDITED: dict[str, tuple[str, ...] | None] = {
    "sglang/srt/arg_groups/kv_shard_hook.py": None,
    "sglang/srt/arg_groups/attention_hook.py": None,
    "sglang/srt/arg_groups/kv_cache_hook.py": None,
    "sglang/srt/arg_groups/overrides.py": None,
    "sglang/srt/arg_groups/model_hook.py": None,
    "sglang/srt/arg_groups/speculative_hook.py": None,
    "sglang/srt/arg_groups/validation_hook.py": None,
    "sglang/srt/arg_groups/mamba_hook.py": None,
    "sglang/srt/arg_groups/hisparse_hook.py": None,
    "sglang/srt/arg_groups/serving_hook.py": None,
    "sglang/srt/server_args.py": None,
    **{
        f"sglang/srt/arg_groups/{name}.py": None
        for name in (
            "parallel_hook",
            "cp_tp_group_sharing_hook",
            "hicache_hook",
            "pd_disaggregation_hook",
            "memory_hook",
            "cuda_graph_hook",
            "moe_hook",
            "lora_hook",
            "layernorm_sp_hook",
            "mega_moe_hook",
            "expert_pack_hook",
            "model_path_hook",
            "prefill_buffer_ceiling",
            "resolution_hooks",
            "model_override_base",
            "arg_utils",
            "argparse_actions",
            "platform_hook",
            "glm5_next_hook",
            "kimi_k3_hook",
        )
    },
    **{
        f"sglang/srt/arg_groups/model_overrides/{name}.py": None
        for name in (
            "deepseek_v2",
            "ernie45_vl",
            "gpt_oss",
            "iquest_q1",
            "kimi_k3",
            "minicpm",
            "minimax_m3",
            "moss_vl",
            "nemotron_h",
            "qwen3_moe",
            "qwen4_exp",
        )
    },
    "sglang/srt/layers/attention/attention_registry.py": None,
    **{
        f"sglang/srt/layers/attention/{name}.py": CONSTRUCTOR
        for name in (
            "flashattention_backend",
            "flashinfer_backend",
            "triton_backend",
            "trtllm_mha_backend",
            "flashmla_backend",
            "flashinfer_mla_backend",
            "hpc_ops_backend",
            "hybrid_linear_attn_backend",
        )
    },
}


def _is_rewrite(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    return name == "declare_resolution"


def _message(node: ast.AST) -> str:
    """The literal text of a raise's exception or an assert's message (its string constants, f-string holes
    written as {...}), or the fields a rewrite sets."""
    if isinstance(node, ast.Call):
        return "sets " + ", ".join(k.arg or f"**{ast.unparse(k.value)}" for k in node.keywords)
    target = node.msg if isinstance(node, ast.Assert) else node.exc
    parts: list[str] = []
    for child in ast.walk(target) if target is not None else ():
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            parts.append(child.value)
        elif isinstance(child, ast.FormattedValue):
            parts.append("{...}")
    return "".join(parts)


def sites_of(path: Path, relative: str) -> list[dict]:
    """Each raise, assert and rewrite of one file: file, line, enclosing function, kind, message."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for function in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        for node in ast.walk(function):
            if isinstance(node, (ast.Raise, ast.Assert)) or _is_rewrite(node):
                found.append(
                    {
                        "file": relative,
                        "line": node.lineno,
                        "function": getattr(function, "name", "<module>"),
                        "kind": "rewrite" if isinstance(node, ast.Call) else type(node).__name__.lower(),
                        "message": _message(node),
                    }
                )
    # the innermost function names a site: a later (nested) walk overwrites the outer one
    by_line = {(s["file"], s["line"]): s for s in found}
    return sorted(by_line.values(), key=lambda s: s["line"])


def listing(root: Path, release: str) -> dict:
    base = root / release
    sites = [
        site
        for relative, functions in AUDITED.items()
        for site in sites_of(base / relative, relative)
        if functions is None or site["function"] in functions
    ]
    return {
        "release": f"sglang {release}",
        "files": {relative: list(functions) if functions else "every site" for relative, functions in AUDITED.items()},
        "sites": sites,
    }


def row_lines(check: str) -> dict[str, set[int]]:
    """The lines a table row's `check` names, by file: "sglang/a/b.py:33-63,100 + c.py:7" (a bare name is in the
    first file's folder); a part without lines names none."""
    named: dict[str, set[int]] = {}
    folder = ""
    for part in check.split(" + "):
        path, _, spans = part.strip().partition(":")
        path = path.split()[0]
        if "/" in path:
            folder = path.rsplit("/", 1)[0] + "/"
        else:
            path = folder + path
        lines = named.setdefault(path, set())
        for span in spans.split(","):
            low, _, high = span.strip().partition("-")
            if low.isdigit():
                lines.update(range(int(low), int(high if high.isdigit() else low) + 1))
    return named


def _lines_of(entries: list[dict]) -> dict[str, set[int]]:
    held: dict[str, set[int]] = {}
    for entry in entries:
        for path, lines in row_lines(entry["check"]).items():
            held.setdefault(path, set()).update(lines)
    return held


def uncovered(table: dict, sites: list[dict]) -> list[dict]:
    """The sites no row's lines hold and no not_attention entry's lines excuse."""
    held = _lines_of(table["checks"] + table.get("not_attention", []))
    return [s for s in sites if s["line"] not in held.get(s["file"], set())]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path("/work/wheels/sglang/extracted"))
    parser.add_argument("--release", default="0.5.23")
    parser.add_argument("--out", type=Path, default=SITES)
    parser.add_argument("--uncovered", action="store_true", help="print the sites no table row holds")
    args = parser.parse_args(argv)
    found = listing(args.root, args.release)
    if args.uncovered:
        missing = uncovered(json.loads(TABLE.read_text(encoding="utf-8")), found["sites"])
        for site in missing:
            print(f"{site['file']}:{site['line']}  {site['function']}  {site['message'][:100]}")
        return 1 if missing else 0
    args.out.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(found['sites'])} sites in {len(AUDITED)} files -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
