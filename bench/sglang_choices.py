"""Regenerate the choices of SGLang release files (rules/engines/sglang/releases/<version>.json): the argparse
`choices` of SGLang's attention, KV-cache and speculative flags.

Each release's sources are read with `ast`, never imported, from its wheel's files in the user cache
(bench/wheel_ranges.py sources):
- server_args.py `parser.add_argument("--flag", choices=...)` calls (to 0.5.13), and
- the `A[T, Arg(choices=...)]` / `A[Literal[...], ...]` dataclass fields of ServerArgs and of
  arg_groups/fields/*.py (from 0.5.14), turned into flags as arg_groups/arg_utils.py
  `add_cli_args_from_dataclass` does (`cli_name`, else `--field-name`; `aliases`; Literal values when no
  `choices`).
A `choices=` names a list: a local (0.5.1 ATTN_BACKENDS inside add_cli_args) or module-level list
(ATTENTION_BACKEND_CHOICES in server_args.py, then arg_groups/choices.py), built from string literals, `+`,
`*starred` lists and the lists it names. A flag without `choices` accepts any value (sglang 0.5.13 made
--speculative-algorithm open: "Or any name registered via `SpeculativeAlgorithm.register`") and is stored as
null. Anything else in a choices expression stops the run: a table that guessed would be wrong silently.

    python3 bench/sglang_choices.py VERSION...
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import release_files
from wheel_ranges import sources

MEMBERS = ["sglang/srt/server_args.py", "sglang/srt/arg_groups/*.py"]
FLAGS = (
    "--attention-backend",
    "--prefill-attention-backend",
    "--decode-attention-backend",
    "--mm-attention-backend",
    "--kv-cache-dtype",
    "--speculative-algorithm",
    "--speculative-draft-attention-backend",
    "--speculative-draft-kv-cache-dtype",
    "--dsa-prefill-backend",
    "--dsa-decode-backend",
)


class Unreadable(ValueError):
    """A choices expression this reader does not evaluate."""


def _name(node) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


class Lists:
    """Every `NAME = [str, ...]` of the files read, by name: module-level ones, and those assigned inside a
    function (0.5.1 builds ATTN_BACKENDS inside add_cli_args). A name assigned to two different lists is
    ambiguous and refused when used."""

    def __init__(self, trees: list[ast.Module]):
        self.nodes: dict[str, list[ast.expr]] = {}
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    if isinstance(node.value, (ast.List, ast.Tuple, ast.BinOp, ast.Name)):
                        self.nodes.setdefault(node.targets[0].id, []).append(node.value)

    def strings(self, node, where: str) -> list[str]:
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[str] = []
            for element in node.elts:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    out.append(element.value)
                elif isinstance(element, ast.Starred):
                    out += self.strings(element.value, where)
                else:
                    raise Unreadable(f"{where}: list element {ast.unparse(element)}")
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, where) + self.strings(node.right, where)
        if isinstance(node, ast.Name):
            found = {tuple(self.strings(value, where)) for value in self.nodes.get(node.id, [])}
            if len(found) != 1:
                raise Unreadable(f"{where}: {node.id} is assigned {len(found)} different lists")
            return list(found.pop())
        raise Unreadable(f"{where}: {ast.unparse(node)}")


def _annotated(annotation):
    """`A[T, Arg(...)]` / `A[T, "help", ...]` -> (T, {Arg keyword: node}); None when not such a field."""
    if not (isinstance(annotation, ast.Subscript) and _name(annotation.value) in ("A", "Annotated")):
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    for meta in elts[1:]:
        if isinstance(meta, ast.Call) and _name(meta.func) == "Arg":
            return elts[0], {k.arg: k.value for k in meta.keywords if k.arg}
    return elts[0], {}


def _literal(node):
    """The Literal[...] inside Optional[...] / `X | None`, else None."""
    if isinstance(node, ast.Subscript) and _name(node.value) == "Optional":
        return _literal(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _literal(node.left) or _literal(node.right)
    if isinstance(node, ast.Subscript) and _name(node.value) == "Literal":
        return node.slice if isinstance(node.slice, ast.Tuple) else ast.Tuple([node.slice])
    return None


def _definitions(tree: ast.Module):
    """(option strings, choices node or None) of each add_argument call and Arg-annotated dataclass field."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) == "add_argument":
            options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            yield options, keywords.get("choices")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                    continue
                found = _annotated(item.annotation)
                if found is None:
                    continue
                raw_type, meta = found
                cli_name = meta["cli_name"].value if isinstance(meta.get("cli_name"), ast.Constant) else None
                aliases = [e.value for e in meta["aliases"].elts] if isinstance(meta.get("aliases"), ast.List) else []
                options = [cli_name or "--" + item.target.id.replace("_", "-"), *aliases]
                yield options, meta.get("choices") or _literal(raw_type)


def release_choices(root: Path) -> dict[str, dict]:
    srt = root / "sglang" / "srt"
    files = [srt / "server_args.py", *sorted((srt / "arg_groups").rglob("*.py"))]
    files = [f for f in files if f.is_file()]
    trees = {f: ast.parse(f.read_text(encoding="utf-8"), str(f)) for f in files}
    lists = Lists(list(trees.values()))
    found: dict[str, dict] = {}
    for path, tree in trees.items():
        relative = f"python/{path.relative_to(root)}"
        for options, choices in _definitions(tree):
            for flag in set(options) & set(FLAGS):
                entry = {
                    "choices": None if choices is None else sorted(set(lists.strings(choices, f"{relative} {flag}"))),
                    "file": relative,
                }
                if flag in found and found[flag] != entry:
                    raise Unreadable(f"{root.name} {flag}: defined twice ({found[flag]['file']}, {relative})")
                found[flag] = entry
    return {flag: found[flag] for flag in FLAGS if flag in found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+")
    args = parser.parse_args()
    for version in args.versions:
        found = release_choices(sources("sglang", version, MEMBERS))
        release_files.update("sglang", version, choices=found)
        print(version, {flag.lstrip("-"): len(e["choices"] or ()) or "open" for flag, e in found.items()})


if __name__ == "__main__":
    main()
