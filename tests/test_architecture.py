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


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in `path`; `from X import y` counts as X and X.y."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
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
