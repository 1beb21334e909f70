"""Regenerate the flags of release files (rules/engines/<engine>/releases/<version>.json): every launch flag of
a released wheel.

The wheel's parser files are read into the user cache (bench/wheel_ranges.py sources: HTTP range requests, the
wheel is never installed) and its argparse definitions are read with `ast`, never imported:
- SGLang: python/sglang/srt/server_args.py (`add_argument` calls; from 0.5.12 also the `A[T, Arg(...)]` fields
  of ServerArgs and of the arg_groups/fields/*.py namespaces it imports, turned into flags exactly as
  arg_groups/arg_utils.py `add_cli_args_from_dataclass` does) and arg_groups/argparse_actions.py (the custom
  actions' `nargs`).
- vLLM: vllm/engine/arg_utils.py (`add_argument` calls whose kwargs come from `get_kwargs(SomeConfig)`: a field's
  type decides, as `_compute_kwargs` does: bool -> BooleanOptionalAction with `--no-` twins, list/set/tuple -> nargs
  '+', anything else one value), the config dataclasses in vllm/config.py or vllm/config/*.py, the frontend flags
  of vllm/entrypoints/openai/cli_args.py (vllm/entrypoints/common/cli_args.py in newer releases: one flag per
  FrontendArgs field, with its special cases) and vllm/entrypoints/cli/serve.py.
Neither engine passes `allow_abbrev=False` to the server's parser in any release read so far (each release file
records it), so argparse resolves unique prefixes.

    python3 bench/flag_tables.py ENGINE VERSION...
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import release_files
from wheel_ranges import sources

# The wheel members the flags are read from (fnmatch patterns; `*` crosses '/').
MEMBERS = {
    "sglang": ["sglang/srt/server_args.py", "sglang/srt/arg_groups/*.py"],
    "vllm": ["vllm/engine/*.py", "vllm/config.py", "vllm/config/*.py", "vllm/entrypoints/*.py", "vllm/utils/*.py"],
}
_NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "append_const", "count", "help", "version"}


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _const(node):
    return node.value if isinstance(node, ast.Constant) else None


def _name(node) -> str:
    """`argparse.BooleanOptionalAction` -> 'BooleanOptionalAction'; a string constant as is."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return _const(node) if isinstance(_const(node), str) else ""


def _dest(options: list[str], given) -> str:
    if given:
        return given
    long = next((o for o in options if o.startswith("--")), options[0])
    return long.lstrip("-").replace("-", "_")


def _entries(options: list[str], dest: str, nargs) -> dict[str, dict]:
    """The option strings argparse registers: BooleanOptionalAction (nargs 'bool') adds a `--no-` twin of each."""
    found = {o: {"dest": dest, "nargs": 0 if nargs == "bool" else nargs} for o in options}
    if nargs == "bool":
        found.update({"--no-" + o[2:]: {"dest": dest, "nargs": 0} for o in options if o.startswith("--")})
    return found


def _action_nargs(tree_list: list[ast.Module]) -> dict[str, object]:
    """Custom argparse.Action classes -> the nargs their __init__ defaults to (None: one value)."""
    result: dict[str, object] = {}
    for tree in tree_list:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Action"):
                init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
                default = None
                if init:
                    args = init.args
                    positional = args.args[len(args.args) - len(args.defaults) :]
                    for arg, value in [*zip(positional, args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
                        if arg.arg == "nargs" and value is not None:
                            default = _const(value)
                result[node.name] = default
    return result


def _call_nargs(keywords: dict[str, ast.expr], custom: dict[str, object]):
    """nargs of an add_argument call: 0, 1, '?', '*', '+', an int, or 'bool' (BooleanOptionalAction)."""
    action = _name(keywords["action"]) if "action" in keywords else ""
    if action == "BooleanOptionalAction":
        return "bool"
    if action in _NO_VALUE_ACTIONS:
        return 0
    if "nargs" in keywords:
        value = _const(keywords["nargs"])
        return 1 if value is None else value
    if action in custom:
        return 1 if custom[action] is None else custom[action]
    return 1


def _add_argument_calls(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            yield node


# --- SGLang ----------------------------------------------------------------------------------------------------


def _annotated(annotation):
    """`A[T, "help"]` / `A[T, Arg(...)]` -> (T, {Arg keyword: node} or {} for a help string); else None."""
    if not (isinstance(annotation, ast.Subscript) and _name(annotation.value) in ("A", "Annotated")):
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    for meta in elts[1:]:
        if isinstance(_const(meta), str):
            return elts[0], {}
        if isinstance(meta, ast.Call) and _name(meta.func) == "Arg":
            return elts[0], {k.arg: k.value for k in meta.keywords if k.arg}
    return None


def _unwrap_optional(node):
    if isinstance(node, ast.Subscript) and _name(node.value) == "Optional":
        return node.slice
    if isinstance(node, ast.Subscript) and _name(node.value) == "Union":
        members = [e for e in node.slice.elts if _const(e) is not None or not isinstance(e, ast.Constant)]
        rest = [e for e in members if not (isinstance(e, ast.Constant) and e.value is None)]
        return rest[0] if len(rest) == 1 else node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return sides[0] if len(sides) == 1 else node
    return node


def _field_flags(name: str, annotation, custom: dict[str, object]) -> dict[str, dict]:
    """One dataclass field as arg_utils.add_cli_args_from_dataclass registers it."""
    found = _annotated(annotation)
    if found is None:
        return {}
    raw_type, meta = found
    if _const(meta.get("no_cli")) is True:
        return {}
    cli_name = _const(meta["cli_name"]) if "cli_name" in meta else None
    aliases = [_const(e) for e in meta["aliases"].elts] if isinstance(meta.get("aliases"), ast.List) else []
    options = [cli_name or "--" + name.replace("_", "-"), *aliases]
    if (
        "action" in meta
        and _const(meta["action"]) is not None
        or isinstance(meta.get("action"), (ast.Name, ast.Attribute))
    ):
        extra = meta.get("action_kwargs")
        keywords = {"action": meta["action"]}
        if isinstance(extra, ast.Dict):
            keywords.update({_const(k): v for k, v in zip(extra.keys, extra.values) if k is not None})
        return _entries(options, name, _call_nargs(keywords, custom))
    inner = _unwrap_optional(raw_type)
    nargs_given = _const(meta["nargs"]) if "nargs" in meta else None
    if isinstance(inner, ast.Subscript) and _name(inner.value) == "Literal":
        nargs = 1
    elif isinstance(inner, ast.Subscript) and _name(inner.value) in ("list", "List") and "type_parser" not in meta:
        nargs = nargs_given or "+"
    elif _name(inner) == "bool":
        nargs = 0
    else:
        nargs = nargs_given or 1
    return _entries(options, name, nargs)


def sglang_flags(root: Path) -> dict[str, dict]:
    srt = root / "sglang" / "srt"
    server_args = _parse(srt / "server_args.py")
    groups = sorted((srt / "arg_groups").rglob("*.py")) if (srt / "arg_groups").is_dir() else []
    trees = {p: _parse(p) for p in groups}
    custom = _action_nargs([server_args, *trees.values()])
    flags: dict[str, dict] = {}
    for call in _add_argument_calls(server_args):
        options = [_const(a) for a in call.args]
        if not options or not all(isinstance(o, str) and o.startswith("-") for o in options):
            continue  # a positional or a generated name: SGLang's server parser has neither
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        flags.update(_entries(options, _dest(options, _const(keywords.get("dest"))), _call_nargs(keywords, custom)))
    # Dataclass fields: ServerArgs' own, then the namespace classes server_args.py imports from arg_groups.fields.
    imported = {
        alias.name
        for node in ast.walk(server_args)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sglang.srt.arg_groups.fields")
        for alias in node.names
    }
    classes = [
        node
        for tree in [server_args, *(t for p, t in trees.items() if p.parent.name == "fields")]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and (node.name == "ServerArgs" and tree is server_args or node.name in imported)
    ]
    for cls in classes:
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                for option, spec in _field_flags(item.target.id, item.annotation, custom).items():
                    flags.setdefault(option, spec)
    return flags


# --- vLLM ------------------------------------------------------------------------------------------------------


class _VllmTypes:
    """Dataclass fields of the config classes, and module-level type aliases, by name."""

    def __init__(self, trees: list[ast.Module], bool_or_str_optional: bool):
        # from 0.21.0 _compute_kwargs gives `bool | str | None` nargs '?' (--hf-token [TOKEN]) before bools
        self.bool_or_str_optional = bool_or_str_optional
        self.classes: dict[str, ast.ClassDef] = {}
        self.aliases: dict[str, ast.expr] = {}
        for tree in trees:
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, node)
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self.aliases.setdefault(node.targets[0].id, node.value)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                    if _name(node.annotation) == "TypeAlias":
                        self.aliases.setdefault(node.target.id, node.value)
                elif isinstance(node, ast.TypeAlias if hasattr(ast, "TypeAlias") else ()):
                    self.aliases.setdefault(node.name.id, node.value)

    def fields(self, class_name: str) -> dict[str, ast.expr]:
        cls = self.classes.get(class_name)
        if cls is None:
            return {}
        found: dict[str, ast.expr] = {}
        for base in cls.bases:
            found.update(self.fields(_name(base)))
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                if _name(item.annotation) != "ClassVar" and not (
                    isinstance(item.annotation, ast.Subscript) and _name(item.annotation.value) == "ClassVar"
                ):
                    found[item.target.id] = item.annotation
        return found

    def members(self, node, depth=0) -> list:
        """The union members of a type, Annotated unwrapped and aliases followed (vllm get_type_hints)."""
        if depth > 8:
            return [node]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = ast.parse(node.value, mode="eval").body
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.members(node.left, depth + 1) + self.members(node.right, depth + 1)
        if isinstance(node, ast.Subscript) and _name(node.value) in ("Optional", "Union", "Annotated"):
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if _name(node.value) == "Annotated":
                elts = elts[:1]
            return [m for e in elts for m in self.members(e, depth + 1)]
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return self.members(self.aliases[node.id], depth + 1)
        return [node]

    def nargs(self, annotation):
        """_compute_kwargs: a dataclass first, then bool, Literal, tuple/list/set, then one value."""
        members = self.members(annotation)
        heads = [
            "None"
            if isinstance(m, ast.Constant) and m.value is None
            else _name(m.value if isinstance(m, ast.Subscript) else m)
            for m in members
        ]
        if any(h in self.classes and h.endswith("Config") for h in heads):
            return 1
        if self.bool_or_str_optional and sorted(heads) == ["None", "bool", "str"]:
            return "?"
        if "bool" in heads:
            return "bool"
        if "Literal" in heads:
            return 1
        for head, member in zip(heads, members):
            if head in ("tuple", "Tuple"):
                elts = member.slice.elts if isinstance(member.slice, ast.Tuple) else [member.slice]
                return "+" if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts) else len(elts)
            if head in ("list", "List", "set", "Set"):
                return "+"
        return 1


def _kwargs_sources(tree: ast.Module) -> dict[str, str]:
    """`model_kwargs = get_kwargs(ModelConfig)` -> {'model_kwargs': 'ModelConfig'}."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _name(node.value.func) == "get_kwargs":
            if node.value.args and isinstance(node.targets[0], ast.Name):
                found[node.targets[0].id] = _name(node.value.args[0])
    return found


def _overrides(tree: ast.Module, var: str) -> tuple[set[str], dict[str, dict[str, object]]]:
    """What the code changes in a get_kwargs dict before registering it: deleted fields, and per field the
    kwargs set (`X["f"]["action"] = ...`, `X["f"]["nargs"] = ...`) or deleted (`del X["f"]["nargs"]`)."""
    deleted: set[str] = set()
    changed: dict[str, dict[str, object]] = {}

    def key_path(target):
        keys = []
        while isinstance(target, ast.Subscript):
            keys.insert(0, _const(target.slice))
            target = target.value
        return keys if isinstance(target, ast.Name) and target.id == var else None

    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else []
        for target in targets:
            keys = key_path(target)
            if not keys:
                continue
            if isinstance(node, ast.Delete):
                if len(keys) == 1:
                    deleted.add(keys[0])
                elif len(keys) == 2:
                    changed.setdefault(keys[0], {})[keys[1]] = "deleted"
            elif len(keys) == 2:
                changed.setdefault(keys[0], {})[keys[1]] = node.value
    return deleted, changed


def vllm_flags(root: Path) -> dict[str, dict]:
    vllm = root / "vllm"
    config_files = [vllm / "config.py"] if (vllm / "config.py").is_file() else sorted((vllm / "config").glob("*.py"))
    cli_args = next(
        path
        for path in (vllm / "entrypoints" / where / "cli_args.py" for where in ("openai", "launchers", "common"))
        if path.is_file() and "class FrontendArgs" in path.read_text(encoding="utf-8")
    )
    parser_files = [vllm / "engine/arg_utils.py", cli_args, vllm / "entrypoints/cli/serve.py"]
    trees = {p: _parse(p) for p in [*parser_files, *config_files]}
    engine_args = (vllm / "engine/arg_utils.py").read_text(encoding="utf-8")
    types = _VllmTypes(list(trees.values()), "type_hints == {bool, str, type(None)}" in engine_args)
    custom = _action_nargs(list(trees.values()))
    flags: dict[str, dict] = {}
    for path in parser_files:
        tree = trees[path]
        sources = _kwargs_sources(tree)
        for call in _add_argument_calls(tree):
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            spread = next((k.value for k in call.keywords if k.arg is None), None)
            if any(isinstance(a, ast.JoinedStr) for a in call.args):
                # `for key, value in frontend_kwargs.items(): add_argument(f"--{key.replace('_', '-')}", **value)`
                # get_kwargs(FrontendArgs), or get_kwargs(cls) in BaseFrontendArgs.add_cli_args (0.17+), which
                # make_arg_parser calls on FrontendArgs
                var = next((v for v, source in sources.items() if source in ("FrontendArgs", "cls")), None)
                if var is None:
                    continue
                deleted, changed = _overrides(tree, var)
                for field, annotation in types.fields("FrontendArgs").items():
                    if field in deleted:
                        continue
                    nargs = _frontend_nargs(types.nargs(annotation), changed.get(field, {}), custom)
                    flags.update(_entries(["--" + field.replace("_", "-")], field, nargs))
                continue
            options = [_const(a) for a in call.args]
            if not options or not all(isinstance(o, str) and o.startswith("-") for o in options):
                continue
            if isinstance(spread, ast.Dict):  # **{**cache_kwargs["field"], "default": None}
                keywords.update({_const(k): v for k, v in zip(spread.keys, spread.values) if k is not None})
                spread = next((v for k, v in zip(spread.keys, spread.values) if k is None), None)
            nargs = _call_nargs(keywords, custom)
            if "action" not in keywords and "nargs" not in keywords and isinstance(spread, ast.Subscript):
                var, field = _name(spread.value), _const(spread.slice)
                annotation = types.fields(sources.get(var, "")).get(field)
                if annotation is not None:
                    nargs = _frontend_nargs(types.nargs(annotation), _overrides(tree, var)[1].get(field, {}), custom)
            flags.update(_entries(options, _dest(options, _const(keywords.get("dest"))), nargs))
    return flags


def _frontend_nargs(derived, changed: dict[str, object], custom: dict[str, object]):
    """A get_kwargs field's nargs after the code's overrides: `del X["f"]["nargs"]` leaves one value, a set nargs
    is that; a new action keeps the nargs kwarg argparse passes it, unless it takes no value."""
    nargs = derived
    if changed.get("nargs") == "deleted":
        nargs = 1
    elif isinstance(changed.get("nargs"), ast.AST):
        nargs = _const(changed["nargs"])
    action = changed.get("action")
    if isinstance(action, ast.AST) and _call_nargs({"action": action}, custom) in (0, "bool"):
        return _call_nargs({"action": action}, custom)
    return nargs


def _no_abbrev(root: Path, engine: str) -> bool:
    """Whether the server parser is built with allow_abbrev=False (in the files that build it)."""
    paths = [root / "sglang/srt/server_args.py"] if engine == "sglang" else list((root / "vllm").rglob("*.py"))
    for path in paths:
        if engine == "vllm" and not any(part in ("engine", "entrypoints", "utils") for part in path.parts):
            continue
        text = path.read_text(encoding="utf-8")
        if "allow_abbrev=False" in text and ("FlexibleArgumentParser(" in text or 'prog="sglang serve"' in text):
            return True
    return False


def release_flags(engine: str, root: Path) -> dict:
    """The flags section of a release file, from the wheel's files under `root`."""
    flags = (sglang_flags if engine == "sglang" else vllm_flags)(root)
    return {
        "allow_abbrev": not _no_abbrev(root, engine),
        "flags": {option: [spec["dest"], spec["nargs"]] for option, spec in sorted(flags.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=sorted(MEMBERS))
    parser.add_argument("versions", nargs="+")
    args = parser.parse_args()
    for version in args.versions:
        found = release_flags(args.engine, sources(args.engine, version, MEMBERS[args.engine]))
        release_files.update(args.engine, version, **found)
        print(f"{args.engine} {version}: {len(found['flags'])} option strings", file=sys.stderr)


if __name__ == "__main__":
    main()
