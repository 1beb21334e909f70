"""The one-way flow, read off the import graph: probe/ gathers (and never judges), rules/ judges (with no I/O),
attn_preflight/ is the face. Every import is read from the source with ast, function-local ones included."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FACTS_MODEL = "attn_preflight.probe.facts"
# Modules that touch files, processes, the network, the environment or the clock: rules/ imports none of them
# (its own package data is read with pkgutil.get_data, attn_preflight.rules.knowledge.data_text).
IMPURE_MODULES = {
    "os",
    "io",
    "sys",
    "glob",
    "pathlib",
    "shutil",
    "tempfile",
    "subprocess",
    "socket",
    "time",
    "datetime",
    "platform",
    "threading",
    "multiprocessing",
    "urllib",
    "http",
}
FILE_CALLS = {"open", "exec", "eval", "__import__", "input"}


def modules(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def _annotation_only(tree: ast.AST) -> set[ast.AST]:
    """The imports under `if TYPE_CHECKING:`: read by the type checker only, never run."""
    return {
        node
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for statement in block.body
        for node in ast.walk(statement)
    }


def imports_of(path: Path, run_only: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in `path`; `from X import y` counts as X and X.y.
    `run_only` leaves out the imports under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _annotation_only(tree) if run_only else set()
    found = []
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def calls_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.func.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]


def violations(package: str, allowed) -> list[str]:
    return [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for path in modules(package)
        for line, name in imports_of(path)
        if not allowed(name)
    ]


RULES, PROBE = "attn_preflight.rules", "attn_preflight.probe"


def project(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def face(name: str) -> bool:
    """attn_preflight's own modules: the CLI, rendering, file reading (its probe and rules are not the face)."""
    return project(name, "attn_preflight") and not project(name, RULES, PROBE)


def test_rules_import_nothing_of_probe_but_the_facts_model():
    def allowed(name):
        if face(name):
            return False
        if project(name, PROBE):
            return name == FACTS_MODEL or name.startswith(FACTS_MODEL + ".")
        return True

    assert violations("rules", allowed) == []


def test_rules_do_no_io():
    impure = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for path in modules("rules")
        for line, name in imports_of(path)
        if name.split(".")[0] in IMPURE_MODULES
    ]
    opened = [
        f"{path.relative_to(REPO)}:{line} calls {name}()"
        for path in modules("rules")
        for line, name in calls_of(path)
        if name in FILE_CALLS
    ]
    assert impure + opened == []


def test_probe_imports_neither_rules_nor_the_face():
    assert violations("probe", lambda name: not (face(name) or project(name, RULES))) == []


def test_the_facts_model_is_a_leaf():
    path = REPO / "probe" / "facts.py"
    assert [name for _, name in imports_of(path) if project(name, "attn_preflight")] == []


def test_probe_and_rules_install_under_the_projects_name():
    """The folders probe/ and rules/ are reached as attn_preflight.probe / attn_preflight.rules (links in
    attn_preflight/), and nothing imports a top-level `probe` or `rules`, which could be another distribution's."""
    for folder in ("probe", "rules"):
        link = REPO / "attn_preflight" / folder
        assert link.is_symlink() and link.resolve() == (REPO / folder).resolve(), link
    top_level = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for package in ("attn_preflight", "probe", "rules", "tests", "bench")
        for path in sorted((REPO / package).rglob("*.py"))
        if not (REPO / package).is_symlink()
        for line, name in imports_of(path)
        if project(name, "probe", "rules")
    ]
    assert top_level == []


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(("attn_preflight", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def import_cycles(package: str) -> list[list[str]]:
    """The import cycles among `package`'s modules (function-local imports included, annotation-only ones not):
    each strongly connected component of more than one module, as sorted names (Tarjan's algorithm)."""
    paths = {module_name(path): path for path in modules(package)}
    graph = {
        name: sorted({imported for _, imported in imports_of(path, run_only=True) if imported in paths} - {name})
        for name, path in paths.items()
    }
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for successor in graph[node]:
            if successor not in order:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], order[successor])
        if low[node] == order[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in order:
            visit(node)
    return sorted(cycles)


def test_rules_have_no_import_cycles():
    assert import_cycles("rules") == []


def test_the_cycle_check_catches_a_lazy_cycle(tmp_path, monkeypatch):
    """A cycle closed by a function-level import is a cycle; one through `if TYPE_CHECKING:` is not."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.py").write_text("import attn_preflight.rules.b\n")
    (tmp_path / "rules" / "b.py").write_text("def f():\n    from attn_preflight.rules import a\n")
    (tmp_path / "rules" / "c.py").write_text("import attn_preflight.rules.d\n")
    (tmp_path / "rules" / "d.py").write_text("if TYPE_CHECKING:\n    import attn_preflight.rules.c\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert import_cycles("rules") == [["attn_preflight.rules.a", "attn_preflight.rules.b"]]
    with pytest.raises(AssertionError):
        test_rules_have_no_import_cycles()


@pytest.mark.parametrize(
    "source, rule",
    [
        ("from attn_preflight.probe.collect import collect\n", "rules-probe"),
        ("import attn_preflight.probe.health\n", "rules-probe"),
        ("def f():\n    from attn_preflight.inputs import load_model\n", "rules-probe"),
        ("import os\n", "rules-io"),
        ("def f(p):\n    return open(p).read()\n", "rules-io"),
        ("from attn_preflight.rules.core.engine import evaluate\n", "probe-rules"),
    ],
)
def test_the_checks_catch_a_violation(tmp_path, monkeypatch, source, rule):
    """Each check fails on a module that breaks its rule (so none of them can pass vacuously)."""
    package = {"rules-probe": "rules", "rules-io": "rules", "probe-rules": "probe"}[rule]
    bad = tmp_path / package / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    check = {
        "rules-probe": test_rules_import_nothing_of_probe_but_the_facts_model,
        "rules-io": test_rules_do_no_io,
        "probe-rules": test_probe_imports_neither_rules_nor_the_face,
    }[rule]
    with pytest.raises(AssertionError):
        check()
