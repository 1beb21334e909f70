"""What vLLM's SpeculativeConfig accepts, per release, read from each wheel (issue 23): writes
rules/engines/vllm/speculative.json, which rules/engines/vllm/rules/speculative.py judges `--speculative-config` by.

    python3 bench/vllm_speculative.py [--root DIR]

For each release in rules/engines/vllm/releases/index.json the wheel's SpeculativeConfig module is read (with
bench/wheel_ranges.py: vllm/config/speculative.py from 0.11.0, vllm/config/__init__.py in 0.10.1-0.10.2,
vllm/config.py in 0.10.0) and parsed with `ast`, never imported:
- the `SpeculativeMethod` Literal, its names expanded (MTPModelTypes, EagleModelTypes, ...): the methods the
  pydantic dataclass accepts, and MTPModelTypes, the MTP methods (rewritten to "mtp" from 0.11.0);
- the list of target model types EAGLE3 (later also extract_hidden_states / dflash) is limited to in
  `_verify_args` (`eagle3_target_supported` / `aux_hidden_states_supported`, matched as substrings of the target's
  model_type), with the methods it applies to and the line; absent from 0.22.0;
- the lines of the messages the rules quote, where present.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "rules" / "engines" / "vllm" / "speculative.json"
MEMBERS = ["vllm/config/speculative.py", "vllm/config/__init__.py", "vllm/config.py"]
MESSAGES = {
    "draft_tp": "other value than 1 or target model tensor_parallel_size",
    "tokens_without_model": "num_speculative_tokens was provided but without speculative model.",
    "tokens_missing": "num_speculative_tokens must be provided with",
    "tp_key": "'tensor_parallel_size' is not a valid argument in the",
    "tokens_gt0_field": "num_speculative_tokens: int = Field(default=None, gt=0)",
}


def _module(folder: Path) -> Path:
    for member in MEMBERS:
        path = folder / member
        if path.is_file() and "class SpeculativeConfig" in path.read_text(encoding="utf-8"):
            return path
    raise SystemExit(f"{folder}: no SpeculativeConfig")


def _literals(tree: ast.Module) -> dict[str, ast.expr]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Subscript) and getattr(value.value, "id", None) == "Literal":
                found[node.targets[0].id] = value.slice
    return found


def _expand(node: ast.expr, literals: dict[str, ast.expr]) -> list[str]:
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _expand(element, literals)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in literals:
        return _expand(literals[node.id], literals)
    raise SystemExit(f"cannot expand {ast.dump(node)}")


def _eagle3_targets(tree: ast.Module) -> dict | None:
    """The model-type list EAGLE3 targets are limited to, the methods it applies to, and its line."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in ("eagle3_target_supported", "aux_hidden_states_supported")
            and isinstance(node.value, ast.List)
        ):
            types = [element.value for element in node.value.elts if isinstance(element, ast.Constant)]
            return {"line": node.lineno, "model_types": types, "name": node.targets[0].id}
    return None


def _limited_methods(text: str, name: str | None) -> list[str]:
    if name in ("eagle3_target_supported", "llama"):
        return ["eagle3"]
    start = text.index("aux_hidden_states_supported")
    window = text[start : start + 1500]
    tuple_at = window.index("self.method in (")
    inside = window[tuple_at + len("self.method in (") : window.index(")", tuple_at)]
    return [part.strip().strip("\"'") for part in inside.split(",") if part.strip()]


def read_release(folder: Path) -> dict:
    path = _module(folder)
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    literals = _literals(tree)
    lines = text.splitlines()
    record = {
        "file": str(path.relative_to(folder)),
        "methods": _expand(literals["SpeculativeMethod"], literals),
        "mtp_methods": _expand(literals["MTPModelTypes"], literals) if "MTPModelTypes" in literals else [],
        "methods_line": next(i + 1 for i, line in enumerate(lines) if line.startswith("SpeculativeMethod")),
        "messages": {
            key: next((i + 1 for i, line in enumerate(lines) if needle in line), None)
            for key, needle in MESSAGES.items()
        },
    }
    targets = _eagle3_targets(tree)
    if targets is None and "Eagle3 is only supported for Llama models" in text:  # 0.10.0: "llama" in model_type
        line = next(i + 1 for i, line in enumerate(lines) if "Eagle3 is only supported for Llama models" in line)
        targets = {"line": line, "model_types": ["llama"], "name": "llama"}
    if targets is not None:
        targets["methods"] = _limited_methods(text, targets.pop("name"))
    record["eagle3_targets"] = targets
    return record


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT / "bench"))
    from wheel_ranges import sources

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="wheel cache (bench/wheel_ranges.py)")
    args = parser.parse_args(argv)
    releases = json.loads((ROOT / "rules/engines/vllm/releases/index.json").read_text())["releases"]
    table = {
        "_doc": "Generated by bench/vllm_speculative.py from each vLLM wheel's SpeculativeConfig module (file, "
        "line), never edited: the methods its `method` Literal accepts, the MTP methods, the target model types "
        "EAGLE3 is limited to (substrings of the target's model_type; null: no such check), and the lines of the "
        "messages rules/engines/vllm/rules/speculative.py quotes.",
        "releases": {},
    }
    for release in releases:
        table["releases"][release] = read_release(sources("vllm", release, MEMBERS, args.root))
        print(release, len(table["releases"][release]["methods"]), "methods", file=sys.stderr)
    OUT.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
