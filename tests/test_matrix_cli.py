"""`attn-preflight matrix`: every GPU profile x backend for one model, in three formats."""

import json

import pytest
from click.testing import CliRunner

from attn_preflight.cli import cli, main
from attn_preflight.rules.knowledge.gpus import names


def matrix(*argv):
    return CliRunner().invoke(cli, ["matrix", *argv])


def cell(data, gpu, backend, kv="auto"):
    return next(c for c in data["cells"] if (c["gpu"], c["backend"], c["kv_cache_dtype"]) == (gpu, backend, kv))


def test_json_covers_every_gpu_and_backend_and_agrees_with_check():
    result = matrix(
        "--model",
        "deepseek-v3",
        "--tp-size",
        "16",  # 671B of FP8 weights fit H100s at TP 16
        "--kv-cache-dtype",
        "auto",
        "--kv-cache-dtype",
        "fp8_e4m3",
        "--format",
        "json",
    )
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["gpus"] == names() and "fa3" in data["backends"] and "fa4" in data["backends"]
    assert len(data["cells"]) == len(data["gpus"]) * len(data["backends"]) * 2
    assert cell(data, "H100", "fa3")["verdict"] == "pass"
    assert cell(data, "B200", "fa3")["verdict"] == "fail" and "fa3-arch" in cell(data, "B200", "fa3")["failed_rules"]
    assert (
        cell(data, "H100", "fa4")["verdict"] == "fail" and "fa4-mla-arch" in cell(data, "H100", "fa4")["failed_rules"]
    )
    assert cell(data, "B200", "fa4")["verdict"] == "pass"
    # each cell says why, as `check` would: rule, status and found-vs-required message
    reasons = {r["rule_id"]: r for r in cell(data, "B200", "fa3")["reasons"]}
    assert reasons["fa3-arch"]["status"] == "fail" and reasons["fa3-arch"]["message"].startswith("found ")
    assert set(reasons) == set(cell(data, "B200", "fa3")["failed_rules"] + cell(data, "B200", "fa3")["warned_rules"])
    assert cell(data, "H100", "fa3")["reasons"] == []


def test_restricted_rows_and_columns_table_and_markdown():
    result = matrix(
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "H100",
        "--gpu",
        "A100",
        "--backend",
        "fa3",
        "--backend",
        "fa4",
        "--kv-cache-dtype",
        "fp8_e4m3",
    )
    assert result.exit_code == 0
    rows = {
        line.split()[0]: line.split()[1:]
        for line in result.output.split("Memory per GPU")[0].splitlines()
        if line.startswith(("H100", "A100"))
    }
    assert rows == {"H100": ["pass", "FAIL"], "A100": ["FAIL", "FAIL"]}
    md = matrix("--model", "llama-3.1-8b", "--gpu", "B200", "--backend", "fa4", "--format", "markdown").output
    assert "| gpu" in md and "| B200" in md and "warn" in md  # page size forced to 128 on SM100


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--model", "nope-model"], "is neither a local model directory, a hub id nor a preset"),
        (["--model", "llama-3.1-8b", "--kv-cache-dtype", "fp9"], "unknown sglang KV-cache dtype"),
        (["--model", "llama-3.1-8b", "--gpu", "H1OO"], "unknown GPU"),
        (["--model", "llama-3.1-8b", "--backend", "fa5"], "did you mean 'fa4'"),
    ],
)
def test_matrix_input_errors(argv, needle, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["matrix", *argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_matrix_shows_memory_per_gpu_profile():
    """Llama 3.1 70B in 16 bits: 70.55 B parameters x 2 bytes = 131.4 GiB at TP 1 (issue 13: the matrix shows
    the memory figures too). It fits no 80 GB GPU, and fits a B200 (180 GB) with room for KV cache."""
    from cli_run import run_cli

    run = run_cli(["matrix", "--model", "llama-3.1-70b", "--kv-cache-dtype", "auto", "--format", "json"])
    memory = json.loads(run.out)["memory"]
    assert abs(memory["H100"]["weights_gib_per_gpu"] - 70.55e9 * 2 / 2**30) < 0.5
    assert memory["H100"]["kv_capacity"] == [] or all(k["tokens"] == 0 for k in memory["H100"]["kv_capacity"])
    assert any(k["tokens"] > 0 for k in memory["B200"]["kv_capacity"])
    table = run_cli(["matrix", "--model", "llama-3.1-70b", "--kv-cache-dtype", "auto"]).out
    assert "Memory per GPU" in table
    h100 = next(line for line in table.splitlines() if line.startswith("H100 ") and "GiB" in line)
    assert "weights do not fit" in h100
