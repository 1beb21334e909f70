"""`attn-preflight check` end to end through click: seeds, targets, pasted commands, formats, errors."""
import json

import pytest
from click.testing import CliRunner

from probe.cli import cli, main


def check(*argv):
    return CliRunner().invoke(cli, ["check", *argv])


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr()


def findings_by_id(output):
    return {f["rule_id"]: f for f in json.loads(output)["findings"]}


def test_seed_deterministic_mla_fa4_on_h100_fails_with_upstream_message():
    result = check("--gpu", "H100", "--model", "deepseek-ai/DeepSeek-V3", "--attention-backend", "fa4",
                   "--enable-deterministic-inference", "--format", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["verdict"] == "fail"
    finding = findings_by_id(result.output)["fa4-deterministic-mla-arch"]
    assert finding["status"] == "fail"
    assert finding["prevents"].startswith("Deterministic inference with absorbed-MLA models on the fa4")
    assert "--attention-backend fa3" in finding["fix"]
    assert {"option": "--attention-backend", "value": "fa3", "verdict": "pass"} in data["alternatives"]


def test_seed_deterministic_mla_fa4_on_b200_passes():
    result = check("--gpu", "B200", "--model", "deepseek-v3", "--attention-backend", "fa4", "--deterministic")
    assert "fa4-deterministic-mla-arch" in result.output
    assert "FAIL      fa4-deterministic-mla-arch" not in result.output


def test_seed_mxfp8_on_fa3_from_pasted_command():
    result = check("--gpu", "H100", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                   "--model-path", "llama-3.1-8b", "--attention-backend", "fa3", "--kv-cache-dtype", "mxfp8",
                   "--port", "30000")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["findings"][0]["status"] == "fail"
    assert findings_by_id(result.output)["kv-mxfp8-requires-fa4"]["prevents"] == "MXFP8 KV cache requires the FA4 backend."
    assert data["config"]["ignored"] == ["--port"]
    assert data["config"]["origin"] == "python -m sglang.launch_server"


def test_seed_score_mod_on_fa3_table_shows_fix_and_prevents():
    result = check("--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa3", "--feature", "score_mod")
    assert result.exit_code == 1
    assert "score_mod is only supported by the FA4 backend." in result.output
    assert "--attention-backend fa4" in result.output
    assert result.output.rstrip().splitlines()[-1].startswith("verdict: FAIL")


def test_json_contract_keys():
    result = check("--gpu", "H100", "--attention-backend", "fa3", "--format", "json")
    data = json.loads(result.output)
    assert {"schema_version", "verdict", "target", "config", "findings", "alternatives"} <= set(data)
    assert data["target"]["compute_capability"] == "9.0" and data["target"]["software_known"] is False
    for finding in data["findings"]:
        assert {"rule_id", "status", "message", "fix", "prevents", "source", "docs"} <= set(finding)
    assert data["verdict"] == "pass" and result.exit_code == 0


@pytest.mark.parametrize("argv,needle", [
    (["--gpu", "H10"], "did you mean 'H100'"),
    (["--gpu", "H100", "--attention-backend", "fa5"], "did you mean 'fa4'"),
    (["--gpu", "H100", "--kv-cache-dtype", "mxfp9"], "did you mean 'mxfp8'"),
    (["--gpu", "H100", "--feature", "scoremod"], "did you mean 'score_mod'"),
    (["--gpu", "H100", "--model", "llama3.1-8b"], "did you mean 'llama-3.1-8b'"),
    (["--gpu", "H100", "--engine-version", "sglang"], "NAME==VERSION"),
    (["--gpu", "H100", "--", "python", "-m", "http.server"], "not a launch command"),
])
def test_input_errors_are_one_line_exit_2(argv, needle, capsys):
    code, out = run_main(["check", *argv], capsys)
    assert code == 2
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.err
    assert out.out == ""
