"""List every raise, assert and declared rewrite of SGLang's attention-deciding files, by file:line, from a release's
extracted wheel (a rewrite: a declare_resolution call, how 0.5.23's hooks force a setting).

The census goes beside the release's file (rules/engines/sglang/releases/<version>.sites.json), each site with
its coverage: the rows of the coverage table (tests/fixtures/sglang-0.5.23-check-coverage.json) whose line ranges
hold it, "not attention" for a not_attention entry's (its `check` written as a row's, with why it bears on no
attention), or none. A later release's site that an earlier release has (same file, function, kind and message)
keeps that coverage; a new or changed one is listed as not yet covered (issue 11 §1), for a row or a rule to take.

    python bench/check_sites.py 0.5.23              # census of 0.5.23, coverage from the table
    python bench/check_sites.py 0.5.24              # census of 0.5.24, coverage carried from 0.5.23
    python bench/check_sites.py 0.5.24 --uncovered  # the sites not yet covered, one file:line a line

The wheel's files are read into the user cache (bench/wheel_ranges.py sources), or from --root.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import release_files
from packaging.version import Version
from wheel_ranges import sources

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "tests" / "fixtures" / "sglang-0.5.23-check-coverage.json"
TABLE_RELEASE = "0.5.23"  # the release whose lines the table's rows name
NOT_ATTENTION = "not attention"
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


def wheel_patterns() -> list[str]:
    return sorted(AUDITED)


def listing(base: Path) -> dict:
    """The census of the release whose wheel's files lie under `base`: the files audited, and their sites."""
    sites = [
        site
        for relative, functions in AUDITED.items()
        if (base / relative).is_file()
        for site in sites_of(base / relative, relative)
        if functions is None or site["function"] in functions
    ]
    return {
        "audited": {
            relative: list(functions) if functions else "every site" for relative, functions in AUDITED.items()
        },
        "sites": sites,
    }


def _signature(site: dict) -> tuple:
    return site["file"], site["function"], site["kind"], site["message"]


def with_coverage(sites: list[dict], table: dict | None, earlier: list[dict]) -> list[dict]:
    """Each site with covered_by: what holds its line in `table` (which names this release's lines), else the
    coverage of the same site in `earlier` (the previous census; the k-th of identical sites takes the k-th),
    else [] (not yet covered)."""
    held = holders(table) if table is not None else {}
    carried: dict[tuple, list[list[str]]] = {}
    for site in earlier:
        carried.setdefault(_signature(site), []).append(site["covered_by"])
    found = []
    for site in sites:
        same = carried.get(_signature(site))
        covered = held.get((site["file"], site["line"])) or (same.pop(0) if same else [])
        found.append({**site, "covered_by": covered})
    return found


def holders(table: dict) -> dict[tuple[str, int], list[str]]:
    """(file, line) -> the rows whose lines hold it, or ["not attention"] where only a not_attention entry does."""
    held: dict[tuple[str, int], list[str]] = {}
    for row in table["checks"]:
        for path, lines in row_lines(row["check"]).items():
            for line in lines:
                held.setdefault((path, line), []).append(row["row"])
    for entry in table.get("not_attention", []):
        for path, lines in row_lines(entry["check"]).items():
            for line in lines:
                held.setdefault((path, line), [NOT_ATTENTION])
    return held


def census(release: str, base: Path) -> dict:
    """The census of `release` with each site's coverage, carried from the newest earlier census when the table
    does not name this release's lines."""
    found = listing(base)
    table = json.loads(TABLE.read_text(encoding="utf-8")) if release == TABLE_RELEASE else None
    earlier: list[dict] = []
    if table is None:
        before = [r for r in release_files.releases("sglang") if Version(r) < Version(release)]
        for previous in reversed(before):
            taken = release_files.read_census(previous)
            if taken is not None:
                earlier = taken["sites"]
                break
    return {**found, "sites": with_coverage(found["sites"], table, earlier)}


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


def uncovered(table: dict, sites: list[dict]) -> list[dict]:
    """The sites no row's lines hold and no not_attention entry's lines excuse."""
    held = holders(table)
    return [s for s in sites if (s["file"], s["line"]) not in held]


def not_yet_covered(sites: list[dict]) -> list[dict]:
    return [site for site in sites if not site["covered_by"]]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("release")
    parser.add_argument("--root", type=Path, help="wheels unpacked as ROOT/sglang/extracted/<release>/")
    parser.add_argument("--uncovered", action="store_true", help="print the release's sites not yet covered")
    args = parser.parse_args(argv)
    if args.uncovered:
        sites = release_files.read_census(args.release)["sites"]
        for site in not_yet_covered(sites):
            print(f"{site['file']}:{site['line']}  {site['function']}  {site['message'][:100]}")
        return 1 if not_yet_covered(sites) else 0
    found = census(args.release, sources("sglang", args.release, wheel_patterns(), args.root))
    written = release_files.write_census(args.release, found)
    print(
        f"{len(found['sites'])} sites in {len(AUDITED)} files, {len(not_yet_covered(found['sites']))} not yet covered"
    )
    print(f"-> {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
