"""`fleet`: identical nodes grouped, the spread shown, each group judged with check's flags, bad reports named."""

import glob
import json
import os

import pytest
from click.testing import CliRunner
from test_nfd import node_facts

from attn_preflight.cli import cli
from attn_preflight.fleet import Node, differing_dimensions, group_nodes, signature, spread
from attn_preflight.probe.facts import Facts

FIXTURES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "fixtures", "probe-*.json")))


def write(tmp_path, name, facts):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(facts.to_dict()))
    return str(path)


def fleet(*args):
    return CliRunner().invoke(cli, ["fleet", *args])


# --- grouping (pure) --------------------------------------------------------------------------------


def test_per_machine_details_do_not_split_a_group():
    a, b = node_facts(hostname="a"), node_facts(hostname="b")
    b.collected_at = "2026-12-01T00:00:00+00:00"
    b.library("fa4").health.seconds = 99.0
    b.library("cutlass_dsl").health.error = "No module named 'cutlass.cute' (from /other/venv)"
    b.host.python_executable = "/other/venv/bin/python"
    a.library("torch").health.details = {"cuda": "13.0", "origin": "/venv-a/torch/__init__.py"}
    b.library("torch").health.details = {"cuda": "13.0", "origin": "/venv-b/torch/__init__.py"}
    assert signature(a) == signature(b)
    groups = group_nodes([Node("a.json", a), Node("b.json", b)])
    assert len(groups) == 1 and groups[0].node_names == ["a", "b"]


@pytest.mark.parametrize(
    "change",
    [
        lambda f: setattr(f.gpus, "driver_version", "570.172.08"),
        lambda f: f.gpus.devices.pop(),
        lambda f: setattr(f.gpus.devices[0], "cc_minor", 3),
        lambda f: setattr(f.library("fa4").health, "status", "error"),
        lambda f: setattr(f.library("fa4"), "version", "4.0.0b30"),
        lambda f: setattr(f.torch, "version", "2.9.1+cu128"),
        lambda f: f.environment.update(SGLANG_ENABLE_DETERMINISTIC_INFERENCE="1"),
        lambda f: setattr(f, "imports_checked", False),
        lambda f: f.library("torch").health.details.update(cuda="12.8"),
    ],
)
def test_what_the_rules_read_splits_groups(change):
    a, b = node_facts(hostname="a"), node_facts(hostname="b")
    change(b)
    assert signature(a) != signature(b)
    assert len(group_nodes([Node("a.json", a), Node("b.json", b)])) == 2


def test_groups_are_ordered_largest_first_with_stable_ids():
    nodes = [Node(f"h{i}.json", node_facts(hostname=f"h{i}")) for i in range(3)]
    nodes.append(Node("b.json", node_facts("NVIDIA B200", (10, 0), 183359, hostname="b")))
    groups = group_nodes(reversed(nodes))
    assert [(g.id, len(g.nodes)) for g in groups] == [("G1", 3), ("G2", 1)]
    assert groups[0].node_names == ["h0", "h1", "h2"]


def test_spread_counts_every_node_once_per_dimension_and_marks_what_differs():
    nodes = [Node(f"h{i}.json", node_facts(hostname=f"h{i}")) for i in range(3)]
    nodes.append(Node("o.json", node_facts(driver="570.172.08", cuda="12.8", hostname="o")))
    rows = spread(group_nodes(nodes))
    per_dimension = {}
    for row in rows:
        per_dimension[row.dimension] = per_dimension.get(row.dimension, 0) + row.nodes
    assert set(per_dimension.values()) == {4}
    assert differing_dimensions(rows) == ["driver"]
    driver_rows = [(r.value, r.nodes) for r in rows if r.dimension == "driver"]
    assert driver_rows == [("580.95.05 (CUDA 13.0)", 3), ("570.172.08 (CUDA 12.8)", 1)]


# --- the command ------------------------------------------------------------------------------------


@pytest.fixture
def mixed_fleet(tmp_path):
    paths = [write(tmp_path, f"h200-{i}", node_facts(hostname=f"h200-{i}")) for i in range(3)]
    paths.append(write(tmp_path, "b200-0", node_facts("NVIDIA B200", (10, 0), 183359, hostname="b200-0")))
    return paths


def test_fa3_fails_the_b200_group_only(mixed_fleet):
    result = fleet(*mixed_fleet, "--attention-backend", "fa3", "--format", "json")
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["verdict"] == "fail" and data["nodes"] == 4 and data["skipped"] == []
    by_gpu = {g["gpu"]: g for g in data["groups"]}
    b200 = by_gpu["8x NVIDIA B200 (10.0)"]
    assert b200["verdict"] == "fail" and [n["name"] for n in b200["nodes"]] == ["b200-0"]
    assert "fa3-arch" in {f["rule_id"] for f in b200["check"]["findings"] if f["status"] == "fail"}
    assert by_gpu["8x NVIDIA H200 (9.0)"]["verdict"] != "fail"
    assert by_gpu["8x NVIDIA H200 (9.0)"]["node_count"] == 3


def test_table_names_the_failing_group_its_rule_and_what_passes_instead(mixed_fleet):
    result = fleet(*mixed_fleet, "--attention-backend", "fa3")
    assert result.exit_code == 1
    out = result.stdout
    b200_row = next(line for line in out.splitlines() if "8x B200 (10.0)" in line)
    assert "FAIL" in b200_row and "fa3-arch" in b200_row
    assert "triton" in b200_row.split("fa3-arch")[1]  # passes instead
    why = out.split("Why\n---")[1]
    assert "FAIL fa3-arch [G2; 1 node(s)]" in why and "Fix: --attention-backend" in why
    assert "1 of 2 group(s), 1 of 4 node(s) fail" in out


def test_every_node_passing_exits_0(tmp_path):
    paths = [write(tmp_path, f"h{i}", node_facts(hostname=f"h{i}")) for i in range(2)]
    result = fleet(*paths, "--attention-backend", "fa3", "--format", "json")
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["verdict"] in ("pass", "warn")


def test_strict_turns_a_warning_group_into_exit_1(tmp_path):
    paths = [write(tmp_path, "h", node_facts())]
    args = [*paths, "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"]  # SGLang rewrites it to triton
    relaxed = fleet(*args, "--format", "json")
    assert json.loads(relaxed.stdout)["verdict"] == "warn" and relaxed.exit_code == 0
    assert fleet(*args, "--strict").exit_code == 1


def test_bad_reports_are_named_one_line_each_and_the_rest_still_merged(tmp_path, mixed_fleet):
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"schema_version": 1, "gpus": ')
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**node_facts().to_dict(), "schema_version": 2}))
    wrong_type = tmp_path / "wrong.json"
    wrong_type.write_text(json.dumps({**node_facts().to_dict(), "gpus": {"devices": "eight"}}))
    missing = str(tmp_path / "missing.json")
    result = fleet(
        *mixed_fleet,
        str(corrupt),
        str(newer),
        str(wrong_type),
        missing,
        "--attention-backend",
        "fa3",
        "--format",
        "json",
    )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 4
    for path, words in (
        (corrupt, "not a JSON report"),
        (newer, "schema_version 2"),
        (wrong_type, "expected a list"),
        (missing, "cannot read"),
    ):
        assert any(str(path) in line and words in line for line in lines), (path, lines)
    data = json.loads(result.stdout)
    assert data["verdict"] == "incomplete" and data["nodes"] == 4 and data["reports"] == 8
    assert {s["file"] for s in data["skipped"]} == {str(corrupt), str(newer), str(wrong_type), missing}
    assert {g["verdict"] for g in data["groups"]} >= {"fail"}  # the readable nodes were still judged


def test_only_unreadable_reports_exit_2_and_never_pass(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    result = fleet(str(bad))
    assert result.exit_code == 2
    assert "skipped" in result.stderr and str(bad) in result.stderr
    assert "INCOMPLETE" in result.stdout and "no readable report" in result.stdout


def test_a_directory_stands_for_its_reports(tmp_path, mixed_fleet):
    result = fleet(str(tmp_path), "--format", "json")
    assert json.loads(result.stdout)["reports"] == 4
    empty = tmp_path / "empty"
    empty.mkdir()
    result = fleet(str(empty))
    assert result.exit_code == 2 and "holds no *.json report" in result.stderr


def test_config_flags_are_checks_own(mixed_fleet):
    result = fleet(*mixed_fleet, "--attention-backend", "fa33")
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "did you mean 'fa3'" in result.stderr


def test_markdown_is_tables(mixed_fleet):
    result = fleet(*mixed_fleet, "--attention-backend", "fa3", "--format", "markdown")
    assert "## Node groups" in result.stdout and "| G1 " in result.stdout and "**verdict: FAIL" in result.stdout
    assert "## Why" in result.stdout and "- FAIL fa3-arch [G2; 1 node(s)]" in result.stdout


@pytest.mark.parametrize("path", FIXTURES, ids=os.path.basename)
def test_real_probe_reports_merge(path, tmp_path):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    Facts.from_dict(data)
    copies = []
    for i in range(3):
        data["host"]["hostname"] = f"node-{i}"
        copy = tmp_path / f"node-{i}.json"
        copy.write_text(json.dumps(data))
        copies.append(str(copy))
    result = fleet(*copies, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    out = json.loads(result.stdout)
    assert len(out["groups"]) == 1 and out["groups"][0]["node_count"] == 3


def test_engine_version_pins_every_groups_release(tmp_path):
    """SGLang before 0.5.19 refused trtllm_mha prefill on SM120 (tests/test_rules_extra_e2e.py has the source)."""
    rtx = write(tmp_path, "rtx", node_facts("NVIDIA GeForce RTX 5090", (12, 0), 32607, count=1, hostname="rtx"))
    # a 32k context: 128k of bf16 KV would not fit beside 15 GiB of weights (memory-kv-context warns)
    args = [rtx, "--model", "llama-3.1-8b", "--context-length", "32768", "--attention-backend", "trtllm_mha"]
    args += ["--format", "json"]
    newest = fleet(*args)
    assert newest.exit_code == 0 and json.loads(newest.stdout)["verdict"] == "pass"
    pinned = fleet(*args, "--engine-version", "sglang==0.5.18")
    assert pinned.exit_code == 1
    check = json.loads(pinned.stdout)["groups"][0]["check"]
    assert check["target"]["versions"]["sglang"] == "0.5.18"
    assert next(f for f in check["findings"] if f["rule_id"] == "trtllm-mha-arch")["status"] == "fail"


@pytest.mark.parametrize(("pin", "words"), [("sglang", "NAME==VERSION"), ("sglangg==0.5.23", "did you mean 'sglang'")])
def test_a_bad_engine_version_is_one_line_exit_2(tmp_path, pin, words):
    result = fleet(write(tmp_path, "h", node_facts()), "--engine-version", pin)
    assert result.exit_code == 2 and words in result.stderr and len(result.stderr.strip().splitlines()) == 1
