"""Every argparse dest of every release table (rules/knowledge/{sglang,vllm}_flags.json) with the class
rules/core/flag_tables.py gives it: modelled (a rule reads it), bearing (UNMODELLED_BEARING_GROUPS: said by
general-unmodelled-flags), not-bearing (NOT_BEARING_GROUPS) or unclassified, with the group's reason; and, for the
unclassified ones, or all with --help-text, each flag's help as the wheel's source writes it (read with ast, never
imported). One tab-separated line a dest: engine, class, dest, option strings, releases, reason, help.

Help is read from the newest release at hand that has the dest: SGLang's `add_argument(help=...)` in
server_args.py and the `A[T, "help"]` / `A[T, Arg(help=...)]` fields of ServerArgs and arg_groups/fields; vLLM's
`add_argument(help=...)` and, for the flags made by get_kwargs(SomeConfig), the docstring under the config
dataclass field (vllm/config*.py, FrontendArgs in entrypoints/*/cli_args.py).

    python3 bench/flag_classes.py [--engine sglang|vllm] [--help-text] [--sources DIR ...]

A source dir holds unpacked releases as the wheel cache keeps them (bench/wheel_ranges.py) (ENGINE/extracted/VER/...) or as
bench/flag_tables.py --wheels leaves them (ENGINE-VER/...); the first that has a release wins.
"""

from __future__ import annotations

import argparse
import ast
import sys
from functools import cache
from pathlib import Path
from typing import Optional

from wheel_ranges import cache_root

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attn_preflight.rules.core.flag_tables import _MODELLED, NOT_BEARING_GROUPS, UNMODELLED_BEARING_GROUPS  # noqa: E402
from attn_preflight.rules.knowledge import flags as flag_kb  # noqa: E402

CLASSES = ("modelled", "bearing", "not-bearing", "unclassified")


def classify(engine: str, dest: str) -> tuple[str, str]:
    """(class, why): the Config field or flag a rule reads it as, or the name of the group listing it."""
    if dest in _MODELLED[engine]:
        return "modelled", "read as " + _MODELLED[engine][dest][0]
    for name, groups in (("bearing", UNMODELLED_BEARING_GROUPS), ("not-bearing", NOT_BEARING_GROUPS)):
        for reason, dests in groups[engine].items():
            if dest in dests.split():
                return name, reason
    return "unclassified", ""


def dests(engine: str) -> dict[str, tuple[list[str], list[str]]]:
    """dest -> (its option strings in any release, the releases that have it, oldest first)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for release in flag_kb.releases(engine):
        for option, spec in flag_kb.flag_table(engine, release).options.items():
            options, releases = found.setdefault(spec.dest, ([], []))
            if option not in options:
                options.append(option)
            if release not in releases:
                releases.append(release)
    return found


def release_root(sources: list[Path], engine: str, release: str) -> Optional[Path]:
    for base in sources:
        for root in (base / engine / "extracted" / release, base / f"{engine}-{release}"):
            if (root / engine).is_dir():
                return root
    return None


def _text(node: Optional[ast.expr]) -> Optional[str]:
    """A help argument as written: a string constant, or the expression's source (f-strings, concatenations)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node)


def _annotated_help(annotation: ast.expr) -> Optional[str]:
    if not (
        isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).split(".")[-1] in ("A", "Annotated")
    ):
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    for meta in elts[1:]:
        if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
            return meta.value
        if isinstance(meta, ast.Call):
            for keyword in meta.keywords:
                if keyword.arg == "help":
                    return _text(keyword.value)
    return None


def _parser_file(path: Path) -> bool:
    """A file the server's own parser is built from (bench/flag_tables.py reads these): its help wins over a config
    field's and another parser's for the same option string (vLLM's gRPC server has a --host too)."""
    text = path.as_posix()
    return text.endswith(("srt/server_args.py", "engine/arg_utils.py", "cli_args.py", "cli/serve.py")) or (
        "/arg_groups/" in text
    )


@cache
def help_index(root: Path, engine: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Of one release: option string -> add_argument help in the server's parser files, field name -> the
    field's help or docstring, option string -> add_argument help elsewhere."""
    in_parser: dict[str, str] = {}
    by_field: dict[str, str] = {}
    elsewhere: dict[str, str] = {}
    for path in sorted((root / engine).rglob("*.py")):
        by_option = in_parser if _parser_file(path) else elsewhere
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                help_text = _text(next((k.value for k in node.keywords if k.arg == "help"), None))
                if help_text:
                    for arg in node.args:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            by_option.setdefault(arg.value, help_text)
            elif isinstance(node, ast.ClassDef):
                body = node.body
                for index, item in enumerate(body):
                    if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                        continue
                    help_text = _annotated_help(item.annotation)
                    following = body[index + 1] if index + 1 < len(body) else None
                    if help_text is None and isinstance(following, ast.Expr):
                        help_text = _text(following.value)
                    if help_text:
                        by_field.setdefault(item.target.id, help_text)
    return in_parser, by_field, elsewhere


def help_of(engine: str, dest: str, options: list[str], releases: list[str], sources: list[Path]) -> str:
    for release in reversed(releases):
        root = release_root(sources, engine, release)
        if root is None:
            continue
        in_parser, by_field, elsewhere = help_index(root, engine)
        found = (
            next((in_parser[o] for o in options if o in in_parser), None)
            or by_field.get(dest)
            or next((elsewhere[o] for o in options if o in elsewhere), None)
        )
        if found:
            return f"[{release}] " + " ".join(found.split())
    return "(no help text in the sources at hand)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("sglang", "vllm"), action="append")
    parser.add_argument("--help-text", action="store_true", help="help text for every dest, not only unclassified")
    parser.add_argument("--sources", type=Path, action="append", help="unpacked releases (default: the wheel cache)")
    args = parser.parse_args()
    sources = args.sources or [cache_root()]
    for engine in args.engine or ("sglang", "vllm"):
        found = dests(engine)
        newest = flag_kb.newest(engine)
        by_class: dict[str, list[str]] = {name: [] for name in CLASSES}
        why = {dest: classify(engine, dest) for dest in found}
        for dest in sorted(found):
            by_class[why[dest][0]].append(dest)
        in_newest = {name: sum(newest in found[d][1] for d in members) for name, members in by_class.items()}
        print(
            f"# {engine}: {len(found)} dests over {len(flag_kb.releases(engine))} releases; "
            + ", ".join(f"{name} {len(by_class[name])} ({in_newest[name]} in {newest})" for name in CLASSES)
        )
        for name in CLASSES:
            for dest in by_class[name]:
                options, releases = found[dest]
                span = releases[0] if len(releases) == 1 else f"{releases[0]}..{releases[-1]}"
                line = f"{engine}\t{name}\t{dest}\t{' '.join(options)}\t{span}\t{why[dest][1]}"
                if name == "unclassified" or args.help_text:
                    line += "\t" + help_of(engine, dest, options, releases, sources)
                print(line)


if __name__ == "__main__":
    main()
