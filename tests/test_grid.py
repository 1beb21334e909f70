"""One of each: one capability grid, one judgement vocabulary, one frozen rule registry, no private imports.

The matrix command, the HTML report and the NFD labels all read attn_preflight.rules.core.grid; these tests hold each of them to
the grid (and the grid to the engine) for the same config and target, on cells that differ from each other.
"""

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_nfd import P, node_facts
from test_report import Page, facts_file, smoke_file

from attn_preflight.check_smoke import result_status
from attn_preflight.cli import cli
from attn_preflight.fleet import Fleet, NodeGroup, node_serving
from attn_preflight.inputs import load_model
from attn_preflight.probe.smoke.results import STATUSES, KernelResult, SmokeReport
from attn_preflight.render import nfd
from attn_preflight.rules.core.engine import SERVES, Report, Status, registered_rules, verdict_from, verdict_of
from attn_preflight.rules.core.grid import Cell, default_backends, default_kv_dtypes, gpu_targets, judge_grid
from attn_preflight.rules.core.judge import Judge, evaluate
from attn_preflight.rules.core.registry import all_rules, get_rule, registry
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import make_config

REPO = Path(__file__).resolve().parents[1]


def statuses(grid):
    return {cell.status for cell in grid.cells.values()}


# --- the grid is the engine's answer, cell by cell -----------------------------------------------------------


@pytest.mark.parametrize("model, tp", [("llama-3.1-8b", 1), ("deepseek-v3", 16)])  # DeepSeek V3 fits H100s at TP 16
def test_each_cell_is_the_engines_verdict_for_that_backend_and_kv_dtype(model, tp):
    config = make_config(model=load_model(model), tp_size=tp)
    targets = gpu_targets(["H100", "B200", "A100"])
    grid = judge_grid(config, targets, (), ["auto", "fp8_e4m3", "mxfp8"])
    assert grid.backends == tuple(default_backends("sglang"))
    assert {Status.PASS, Status.FAIL} <= statuses(grid)  # cells that differ: a constant answer would fail below
    for (index, backend, kv), cell in grid.cells.items():
        report = evaluate(config.with_backend(backend).with_kv_dtype(kv), targets[index], alternatives=False)
        assert cell.verdict is report.verdict
        flagged = [f for f in report.findings if f.status in (Status.FAIL, Status.WARN, Status.UNKNOWN)]
        assert [(r.rule_id, r.status, r.message) for r in cell.reasons] == [
            (f.rule_id, f.status, f.message) for f in flagged
        ]
        assert cell.failed == tuple(f.rule_id for f in flagged if f.status is Status.FAIL)


def test_a_cell_with_a_missing_fact_is_unknown_and_never_serves():
    no_gpu = Target(kind="facts", label="a report without GPUs", gpu_name=None, cc=None)
    grid = judge_grid(make_config(model=load_model("llama-3.1-8b")), [no_gpu], ["fa4", "triton"], ["auto"])
    fa4 = grid.cell("fa4", "auto")
    assert fa4.verdict is Status.WARN and fa4.status is Status.UNKNOWN and not fa4.serves
    assert any(r.status is Status.UNKNOWN for r in fa4.reasons)
    failing = Cell(Status.FAIL, Status.FAIL)
    assert not failing.serves and Cell(Status.WARN, Status.WARN).serves


# --- the matrix command prints the grid ---------------------------------------------------------------------


def test_matrix_json_is_the_grid():
    argv = ["matrix", "--model", "deepseek-v3", "--tp-size", "16", "--gpu", "H100", "--gpu", "B200"]
    argv += ["--kv-cache-dtype", "auto"]
    result = CliRunner().invoke(cli, [*argv, "--kv-cache-dtype", "fp8_e4m3", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    targets = gpu_targets(["H100", "B200"])
    grid = judge_grid(make_config(model=load_model("deepseek-v3"), tp_size=16), targets, (), ["auto", "fp8_e4m3"])
    assert len(data["cells"]) == len(grid.cells) and {c["verdict"] for c in data["cells"]} >= {"pass", "fail"}
    index = {t.gpu_name: i for i, t in enumerate(targets)}
    for printed in data["cells"]:
        cell = grid.cell(printed["backend"], printed["kv_cache_dtype"], index[printed["gpu"]])
        assert printed["verdict"] == cell.verdict.value
        assert printed["failed_rules"] == list(cell.failed) and printed["warned_rules"] == list(cell.warned)
        assert printed["reasons"] == [
            {"rule_id": r.rule_id, "status": r.status.value, "message": r.message} for r in cell.reasons
        ]


# --- the HTML report shows the grid -------------------------------------------------------------------------


def test_html_cells_are_the_grids_cells(tmp_path):
    facts = node_facts()
    out = tmp_path / "page.html"
    result = CliRunner().invoke(
        cli, ["report", "-o", str(out), "--facts", facts_file(tmp_path, facts), "--model", "llama-3.1-8b"]
    )
    assert result.exit_code == 0, result.output
    page = Page(out.read_text())
    grid = judge_grid(
        make_config(model=load_model("llama-3.1-8b")), [Target.from_facts(facts, kind="facts", label="x")]
    )
    from attn_preflight.rules.knowledge.kv_dtypes import SPELLINGS

    # a second spelling of one dtype (bfloat16 beside bf16) is one column (commands/report.py matrix_for)
    columns = [kv for kv in grid.kv_dtypes if kv not in SPELLINGS]
    assert set(page.cells) == {(b, kv) for b in grid.backends for kv in columns}
    assert {status for status, _ in page.cells.values()} >= {"pass", "fail"}
    for (backend, kv), (status, title) in page.cells.items():
        cell = grid.cell(backend, kv)
        assert status == cell.status.value, (backend, kv)
        assert all(f"[{r.rule_id}] {r.message}" in title for r in cell.reasons)


def test_html_smoke_rows_are_judged_as_check_smoke_judges_a_kernel_run(tmp_path):
    path = smoke_file(tmp_path)
    smoke = SmokeReport.from_dict(json.loads(Path(path).read_text()))
    out = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["report", "-o", str(out), "--facts", facts_file(tmp_path), "--smoke", path])
    assert result.exit_code == 0, result.output
    shown = sorted(Page(out.read_text()).smoke.values())
    assert shown == sorted(result_status(r).value for r in smoke.results)
    assert len(set(shown)) > 1


def test_every_smoke_result_state_has_one_judgement():
    judged = {state: result_status(KernelResult(kernel="k", family="f", title="t", status=state)) for state in STATUSES}
    assert judged == {
        "ok": Status.PASS,
        "wrong": Status.FAIL,
        "error": Status.FAIL,
        "timeout": Status.FAIL,
        "crashed": Status.FAIL,
        "skipped": Status.SKIP,
    }


# --- the NFD labels are the grid's cells -------------------------------------------------------------------


def test_nfd_serving_labels_are_the_grids_cells():
    facts = node_facts()
    grid = judge_grid(make_config(engine="sglang"), [Target.from_facts(facts, kind="live", label="this node")])
    serving = node_serving(facts)
    labels = nfd.node_labels(facts, serving)
    assert serving.backends == {b: grid.cell(b, "auto").status for b in grid.backends}
    served = {b: labels[P + nfd.label_name("backend", b)] == "true" for b in grid.backends}
    assert served == {b: grid.cell(b, "auto").serves for b in grid.backends}
    assert set(served.values()) == {True, False}
    for kv in grid.kv_dtypes:
        any_backend = any(grid.cell(b, kv).serves for b in grid.backends)
        assert (labels[P + nfd.label_name("kv", kv)] == "true") is any_backend, kv
    assert {labels[P + nfd.label_name("kv", kv)] for kv in grid.kv_dtypes} == {"true", "false"}


def test_nfd_labels_serve_exactly_where_the_grids_cells_serve():
    """Cells of every status (pass, warn, fail, unknown) become labels: true exactly where the cell serves."""
    no_gpu = Target(kind="facts", label="a report without GPUs", gpu_name=None, cc=None)
    grid = judge_grid(
        make_config(model=load_model("gemma-2-9b")), gpu_targets(["H100"]) + [no_gpu], (), ["auto", "fp8_e4m3"]
    )
    assert statuses(grid) == {Status.PASS, Status.WARN, Status.FAIL, Status.UNKNOWN}
    for index in (0, 1):
        for kv in grid.kv_dtypes:
            serving = nfd.NodeServing(backends={b: grid.cell(b, kv, index).status for b in grid.backends})
            labels = nfd.node_labels(node_facts(), serving)
            for backend in grid.backends:
                printed = labels[P + nfd.label_name("backend", backend)]
                assert printed == ("true" if grid.cell(backend, kv, index).serves else "false"), (backend, kv)


def test_the_same_config_and_target_give_the_same_cell_in_matrix_html_and_nfd(tmp_path):
    """The default SGLang config on the H200 node: the matrix (as a grid over that target), the page and the
    labels agree with each other for every backend with the default KV dtype."""
    facts = node_facts()
    target = Target.from_facts(facts, kind="facts", label="node")
    config = make_config(engine="sglang")
    matrix_cells = judge_grid(config, [target], (), ["auto"])
    out = tmp_path / "page.html"
    CliRunner().invoke(cli, ["report", "-o", str(out), "--facts", facts_file(tmp_path, facts)])
    page = Page(out.read_text())
    labels = nfd.node_labels(facts, node_serving(facts))
    for backend in matrix_cells.backends:
        cell = matrix_cells.cell(backend, "auto")
        assert page.cells[(backend, "auto")][0] == cell.status.value
        assert labels[P + nfd.label_name("backend", backend)] == ("true" if cell.serves else "false")


# --- one verdict rule --------------------------------------------------------------------------------------


def test_verdict_from_is_the_one_verdict_rule():
    assert verdict_from([Status.PASS, Status.SKIP]) is Status.PASS
    assert verdict_from([Status.PASS, Status.UNKNOWN]) is Status.WARN
    assert verdict_from([Status.SKIP]) is Status.WARN  # nothing judged is never a pass
    assert verdict_from([Status.WARN, Status.FAIL, Status.PASS]) is Status.FAIL
    config = make_config(model=load_model("deepseek-v3"), attention_backend="fa3", tp_size=8)
    report = evaluate(config, Target.from_gpu("B200"))
    assert report.verdict is verdict_of(report.findings) is Status.FAIL
    assert all(isinstance(a.verdict, Status) for a in report.alternatives) and report.alternatives
    assert json.loads(json.dumps(report.alternatives[0].to_dict()))["verdict"] in ("pass", "warn")
    assert SERVES == {Status.PASS, Status.WARN}


@pytest.mark.parametrize(
    "verdicts, expected",
    [(["pass", "pass"], "pass"), (["pass", "warn"], "warn"), (["warn", "fail", "pass"], "fail")],
)
def test_the_fleet_verdict_is_the_engines_verdict_rule_over_its_groups(verdicts, expected):
    target = Target.from_gpu("H100")
    groups = [
        NodeGroup(key=str(i), report=Report(make_config(), target, [], Status(v))) for i, v in enumerate(verdicts)
    ]
    fleet = Fleet(groups=groups, spread=[], skipped=[], reports_given=len(groups), config=make_config())
    assert fleet.verdict == expected == verdict_from(Status(v) for v in verdicts)
    assert Fleet(groups, [], [("bad.json", "not JSON")], len(groups) + 1, make_config()).verdict == "incomplete"


# --- the registry is frozen, gates are per evaluation --------------------------------------------------------


def test_the_rule_index_is_frozen_and_holds_every_registered_rule():
    index = registry()
    assert index is registry()
    assert list(index.by_id.values()) == all_rules() and set(index.by_id.values()) == set(registered_rules())
    with pytest.raises(TypeError):
        index.by_id["new-rule"] = get_rule("fa4-arch")  # a read-only mapping
    for engine in ("sglang", "vllm"):
        assert index.by_engine[engine] == tuple(r for r in all_rules() if r.engine in (engine, "any"))
    assert {r.versions for r in all_rules()} == {req.versions for req in index.requirements}


def test_version_gates_follow_each_target_not_a_memo():
    """Two targets that differ only in their sglang version are each judged by their own gates."""
    base = Target.from_gpu("H100")
    old, new = base.with_engine_versions({"sglang": "0.5.3"}), base.with_engine_versions({"sglang": "0.5.23"})
    config = make_config(model=load_model("llama-3.1-8b"), attention_backend="fa3")
    for target in (old, new, old):
        gates = Judge(target).gates("sglang")
        for req in registry().requirements:
            installed = target.versions.get(req.package)
            if installed is not None:
                assert gates[req.versions].applies == req.version_range.contains(installed)
    skipped = {}
    for target in (old, new):
        version = target.versions["sglang"]
        findings = evaluate(config, target, alternatives=False).findings
        skipped[version] = {f.rule_id for f in findings if f"target has sglang {version}" in f.message}
        assert all(f.status is Status.SKIP for f in findings if f.rule_id in skipped[version])
        assert skipped[version] == {
            r.id
            for r in registry().by_engine["sglang"]
            if r.package == "sglang" and not r.version_range.contains(version)
        }
    assert skipped["0.5.3"] and skipped["0.5.3"] != skipped["0.5.23"]


def test_default_axes_are_the_general_backends_and_accepted_kv_dtypes():
    grid = judge_grid(make_config(engine="vllm", model=load_model("llama-3.1-8b")), gpu_targets(["H100"]))
    assert grid.backends == tuple(default_backends("vllm")) and grid.kv_dtypes == tuple(default_kv_dtypes("vllm"))


# --- no private name is imported across modules ---------------------------------------------------------------

OWNED_ELSEWHERE: set[str] = set()  # and rules/knowledge/*: other sessions' files


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))  # __version__ is public


def private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [f"from {node.module} import {a.name}" for a in node.names if private(a.name)]
            if any(private(part) for part in node.module.split(".")):
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if any(private(p) for p in a.name.split(".")[1:])]
    return found


def test_no_private_name_is_imported_across_modules():
    offenders = {}
    for package in ("probe", "rules", "attn_preflight"):
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative in OWNED_ELSEWHERE or relative.startswith("rules/knowledge/"):
                continue
            found = private_imports(path)
            if found:
                offenders[relative] = found
    assert offenders == {}
