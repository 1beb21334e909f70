"""`attn-preflight check` end to end through click: the five seeds, targets, pasted commands, formats, errors."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from attn_preflight.cli import cli, main
from attn_preflight.probe.facts import Facts
from tests.rule_fixtures import FIXTURES_DIR

MODELS = FIXTURES_DIR / "models"
FACTS = FIXTURES_DIR / "facts"


def check(*argv):
    return CliRunner().invoke(cli, ["check", *argv])


def check_json(*argv):
    result = check("--format", "json", *argv)
    return result, json.loads(result.output)


def run_main(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr()


def by_id(data):
    return {f["rule_id"]: f for f in data["findings"]}


# --- the five seed errors, each caught end to end -----------------------------------------------------------


def test_seed_score_mod_on_fa3():
    result = check(
        "--gpu",
        "H100",
        "--model",
        str(MODELS / "Llama-3.1-8B-Instruct"),
        "--attention-backend",
        "fa3",
        "--feature",
        "score_mod",
    )
    assert result.exit_code == 1
    assert '"score_mod is only supported by the FA4 backend."' in result.output
    assert "--attention-backend fa4" in result.output
    assert result.output.rstrip().splitlines()[-1].startswith("verdict: FAIL")


def test_seed_rel_bias_on_fa3_from_model_architecture():
    result, data = check_json(
        "--gpu", "H200", "--model", str(MODELS / "synthetic-inkling"), "--attention-backend", "fa3"
    )
    assert result.exit_code == 1
    finding = by_id(data)["fa3-rel-bias"]
    assert finding["status"] == "fail"
    assert finding["prevents"] == "rel_bias (sheared bias) is only supported by the FA4 backend."
    assert "rel_bias" in data["config"]["features"]


def test_seed_custom_score_mod_on_sm8x():
    result, data = check_json(
        "--gpu", "A100", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--feature", "score_mod"
    )
    assert result.exit_code == 1
    finding = by_id(data)["fa4-score-mod-sm8x"]
    assert finding["status"] == "fail"
    assert finding["prevents"] == "Custom user-provided score_mod is not supported on SM8x architectures."
    assert "--attention-backend triton" in finding["fix"]
    assert any(a["value"] == "triton" and a["verdict"] == "pass" for a in data["alternatives"])


def test_seed_deterministic_absorbed_mla_on_fa4_needs_sm100():
    result, data = check_json(
        "--gpu",
        "H100",
        "--model",
        "deepseek-ai/DeepSeek-V3",
        "--attention-backend",
        "fa4",
        "--enable-deterministic-inference",
        "--tp-size",
        "16",  # 671B of FP8 weights fit H100s at TP 16
    )
    assert result.exit_code == 1 and data["verdict"] == "fail"
    finding = by_id(data)["fa4-deterministic-mla-arch"]
    assert finding["status"] == "fail"
    assert finding["prevents"].startswith(
        "Deterministic inference with absorbed-MLA models on the fa4 attention backend requires SM100/SM110"
    )
    assert finding["fix"] == ["--attention-backend fa3"]
    assert {"option": "--attention-backend", "value": "fa3", "verdict": "pass", "becomes": None} in data["alternatives"]
    result, data = check_json(
        "--gpu", "B200", "--model", "deepseek-v3", "--attention-backend", "fa4", "--deterministic"
    )
    assert by_id(data)["fa4-deterministic-mla-arch"]["status"] == "pass"


def test_seed_mxfp8_kv_needs_fa4_from_pasted_command():
    result, data = check_json(
        "--gpu",
        "H100",
        "--",
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        str(MODELS / "Llama-3.1-8B-Instruct"),
        "--attention-backend",
        "fa3",
        "--kv-cache-dtype",
        "mxfp8",
        "--port",
        "30000",
        "--host",
        "0.0.0.0",
    )
    assert result.exit_code == 1
    findings = by_id(data)
    assert findings["kv-mxfp8-requires-fa4"]["status"] == "fail"
    assert findings["kv-mxfp8-requires-fa4"]["prevents"] == "MXFP8 KV cache requires the FA4 backend."
    assert findings["kv-mxfp8-arch"]["status"] == "fail"  # and no Hopper runs MXFP8 at all
    assert data["config"]["ignored"] == ["--port", "--host"]
    assert data["config"]["origin"] == "python -m sglang.launch_server"


def test_seed_sibling_mxfp8_needs_per_token_q_scales():
    result, data = check_json(
        "--gpu",
        "B200",
        "--model",
        str(MODELS / "Llama-3.1-8B-Instruct"),
        "--attention-backend",
        "fa4",
        "--kv-cache-dtype",
        "mxfp8",
    )
    assert result.exit_code == 1
    finding = by_id(data)["kv-mxfp8-q-scales"]
    assert finding["status"] == "fail"
    assert finding["prevents"].startswith("MXFP8 KV cache requires per-token Q scales (q_descale)")
    assert by_id(data)["kv-mxfp8-requires-fa4"]["status"] == "pass"


# --- targets, versions, formats ----------------------------------------------------------------------------


def test_gpu_target_skips_software_rules_never_passes_them():
    _, data = check_json(
        "--gpu", "B200", "--model", "llama-3.1-8b", "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "nvfp4"
    )
    assert by_id(data)["kv-fp4-torch"]["status"] == "skip"
    assert data["target"]["software_known"] is False


def test_facts_target_judges_software_and_versions():
    result, data = check_json(
        "--facts",
        str(FACTS / "b200-torch-2.9-cu128.json"),
        "--model",
        "llama-3.1-8b",
        "--attention-backend",
        "trtllm_mha",
        "--kv-cache-dtype",
        "nvfp4",
    )
    assert by_id(data)["kv-fp4-torch"]["status"] == "pass"
    assert data["target"]["versions"]["sglang"] == "0.5.23"
    assert data["target"]["compute_capability"] == "10.0" and data["target"]["gpu_count"] == 8
    assert by_id(data)["kv-nvfp4-arch"]["note"] is None  # sglang version known: no "newest applied" note


def test_version_outside_a_rule_range_skips_it_and_unknown_version_says_newest_applied():
    _, old = check_json(
        "--gpu",
        "B200",
        "--model",
        "deepseek-v3",
        "--attention-backend",
        "cutlass_mla",
        "--engine-version",
        "sglang==0.5.10",
    )
    assert by_id(old)["general-backend-alias"]["status"] == "skip"
    assert "holds for sglang>=0.5.12" in by_id(old)["general-backend-alias"]["message"]  # no alias before 0.5.12
    # cutlass_mla left ATTENTION_BACKEND_CHOICES in 0.5.20: 0.5.10 still lists it
    assert by_id(old)["general-backend-removed"]["status"] == "pass"
    _, new = check_json("--gpu", "B200", "--model", "deepseek-v3", "--attention-backend", "cutlass_mla")
    finding = by_id(new)["general-backend-removed"]
    assert finding["status"] == "fail"
    assert "version unknown: the newest table" in finding["message"]  # a rule of every release says it itself


def test_a_backend_the_release_does_not_list_fails_with_its_nearest_choice():
    # sglang 0.5.1's ATTN_BACKENDS (server_args.py, add_cli_args) has fa3 but no fa4: argparse exits with
    # "argument --attention-backend: invalid choice: 'fa4'" before anything loads
    result, data = check_json(
        "--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--engine-version", "sglang==0.5.1"
    )
    assert result.exit_code == 1 and data["verdict"] == "fail"
    finding = by_id(data)["general-backend-removed"]
    assert finding["status"] == "fail"
    assert "--attention-backend fa4 is not a choice of sglang 0.5.1" in finding["message"]
    assert finding["fix"][0] == "--attention-backend fa3"
    assert "invalid choice" in finding["prevents"]
    _, later = check_json(
        "--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--engine-version", "sglang==0.5.3"
    )
    assert by_id(later)["general-backend-removed"]["status"] == "pass"


def test_choices_of_an_unknown_or_older_release_say_which_table_judged():
    _, unknown = check_json("--gpu", "B200", "--model", "llama-3.1-8b", "--kv-cache-dtype", "fp4_e2m1")
    finding = by_id(unknown)["kv-dtype-removed"]
    assert (
        finding["status"] == "fail" and "sglang 0.5.23 lists (version unknown: the newest table)" in finding["message"]
    )
    assert finding["fix"][0] == "--kv-cache-dtype fp4_mx_block16"  # its new name (fields/model.py help): same family
    _, older = check_json(
        "--gpu", "B200", "--model", "llama-3.1-8b", "--kv-cache-dtype", "nvfp4", "--engine-version", "sglang==0.4.6"
    )
    finding = by_id(older)["kv-dtype-removed"]
    assert finding["status"] == "fail" and "not a choice of sglang 0.5.1" in finding["message"]  # the oldest table
    assert "every rule judged as sglang 0.5.1" in by_id(older)["general-engine-version"]["message"]


def test_live_target_uses_the_probe(monkeypatch):
    import attn_preflight.probe.collect

    facts = Facts.from_dict(json.loads((FACTS / "h200-sglang-0.5.23.json").read_text()))
    monkeypatch.setattr(attn_preflight.probe.collect, "collect", lambda **kwargs: facts)
    result, data = check_json("--model", "deepseek-v3", "--attention-backend", "fa4", "--deterministic")
    assert data["target"]["kind"] == "live" and data["target"]["sm"] == "SM90"
    assert by_id(data)["fa4-deterministic-mla-arch"]["status"] == "fail"


def test_probe_timeout_bounds_the_live_probes_import_checks(monkeypatch):
    import attn_preflight.probe.collect
    from attn_preflight.commands.probe_cmd import DEFAULT_TIMEOUT_S

    facts = Facts.from_dict(json.loads((FACTS / "h200-sglang-0.5.23.json").read_text()))
    seen = []
    monkeypatch.setattr(attn_preflight.probe.collect, "collect", lambda **kwargs: seen.append(kwargs) or facts)
    assert check("--model", "llama-3.1-8b", "--probe-timeout", "2.5").exit_code in (0, 1)  # judged, not refused
    assert check("--model", "llama-3.1-8b").exit_code in (0, 1)
    assert seen == [{"check_imports": True, "timeout": 2.5}, {"check_imports": True, "timeout": DEFAULT_TIMEOUT_S}]
    assert f"[default: {DEFAULT_TIMEOUT_S:g}]" in check("--help").output


def test_no_backend_judges_sglang_default():
    _, data = check_json("--gpu", "H100", "--model", "llama-3.1-8b")
    assert data["config"]["attention_backend"] == "fa3"
    assert "get_default_attn_backend" in data["config"]["backend_auto_selected"]
    _, data = check_json("--gpu", "B200", "--model", "deepseek-v3")
    assert data["config"]["attention_backend"] == "trtllm_mla"


def test_silent_rewrite_is_a_warning_and_strict_makes_it_exit_1():
    argv = ["--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"]
    result, data = check_json(*argv)
    assert data["verdict"] == "warn" and result.exit_code == 0
    assert data["config"]["attention_backend"] == "triton"
    assert data["config"]["rewritten_by_engine"] == {"attention_backend": "fa3"}
    assert check(*argv, "--strict").exit_code == 1


def test_markdown_format():
    result = check(
        "--gpu",
        "H100",
        "--model",
        "deepseek-v3",
        "--attention-backend",
        "fa4",
        "--deterministic",
        "--format",
        "markdown",
    )
    assert result.exit_code == 1
    assert "| status" in result.output and "**verdict: FAIL" in result.output


def test_vllm_serve_command_is_judged_by_vllm_rules():
    result, data = check_json(
        "--gpu",
        "H100",
        "--",
        "VLLM_ATTENTION_BACKEND=FLASH_ATTN",
        "vllm",
        "serve",
        "llama-3.1-8b",
        "--max-model-len",
        "8192",
    )
    # vLLM >= 0.15 ignores the variable: its own choice is judged, the name kept in rewritten_by_engine
    assert data["config"]["engine"] == "vllm" and data["config"]["attention_backend"] is None
    assert data["config"]["rewritten_by_engine"] == {"attention_backend": "FLASH_ATTN"}
    from attn_preflight.rules.core.registry import get_rule

    assert {get_rule(f["rule_id"]).engine for f in data["findings"]} <= {"vllm", "any"}
    assert any(f["rule_id"].startswith("vllm") for f in data["findings"])


def test_pasted_command_as_one_string_and_explicit_flags_win():
    _, data = check_json(
        "--gpu",
        "H100",
        "--attention-backend",
        "triton",
        "--",
        "SGLANG_FLASHATTENTION_VERSION=4 python3 -m sglang.launch_server --model-path llama-3.1-8b "
        "--attention-backend fa3 --max-total-tokens 100000",
    )
    assert data["config"]["attention_backend"] == "triton"
    assert by_id(data)["general-flashattention-version-env"]["status"] == "warn"
    assert data["config"]["unmodelled"] == ["--max-total-tokens"] and data["config"]["ignored"] == []


# --- errors: one line, exit 2 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--gpu", "H10"], "did you mean 'H100'"),
        (["--gpu", "H100", "--attention-backend", "fa5"], "did you mean 'fa4'"),
        (["--gpu", "H100", "--kv-cache-dtype", "mxfp9"], "did you mean 'mxfp8'"),
        (["--gpu", "H100", "--feature", "scoremod"], "did you mean 'score_mod'"),
        (["--gpu", "H100", "--model", "llama3.1-8b"], "did you mean 'llama-3.1-8b'"),
        (["--gpu", "H100", "--model", "./no/such/dir"], "no such file or directory"),
        (["--gpu", "H100", "--model", str(FACTS / "README.md")], "not valid JSON"),
        (["--gpu", "H100", "--engine-version", "sglang"], "NAME==VERSION"),
        (["--gpu", "H100", "--engine-version", "sglangg==0.5.23"], "did you mean 'sglang'"),
        (["--gpu", "H100", "--facts", str(FACTS / "b200-torch-2.9-cu128.json")], "two different targets"),
        (["--facts", "/no/such/facts.json"], "cannot read facts file"),
        (["--facts", str(FACTS / "README.md")], "not valid JSON"),
        (["--gpu", "H100", "--", "python", "-m", "http.server"], "not a launch command"),
        (["--gpu", "H100", "--", "python -m sglang.launch_server --attention-backend 'fa3"], "cannot parse"),
        (["--gpu", "H100", "--", "python", "-m", "sglang.launch_server", "--page-size", "big"], "expected an integer"),
        (["--probe-timeout", "0"], "must be a positive number of seconds, got 0"),
        (["--probe-timeout", "nan"], "must be a positive number of seconds, got nan"),
        (["--probe-timeout", "soon"], "'soon' is not a valid float"),
        (["--gpu", "H100", "--probe-timeout", "5"], "with --gpu nothing is probed"),
        (
            ["--facts", str(FACTS / "b200-torch-2.9-cu128.json"), "--probe-timeout", "5"],
            "with --facts nothing is probed",
        ),
    ],
)
def test_input_errors_are_one_line_exit_2(argv, needle, capsys):
    code, out = run_main(["check", *argv], capsys)
    assert code == 2
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.err
    assert out.out == ""


@pytest.mark.parametrize(
    "verb,gpu,vendor",
    [
        ("check", "MI300X", "AMD Instinct"),
        ("check", "MI250", "AMD Instinct"),
        ("check", "AMD Instinct MI355X", "AMD Instinct"),
        ("check", "Radeon RX 7900 XTX", "AMD Radeon"),
        ("check", "gaudi3", "Intel Gaudi"),
        ("check", "Intel Arc A770", "Intel Arc"),
        ("matrix", "MI300X", "AMD Instinct"),
    ],
)
def test_an_amd_or_intel_gpu_is_not_profiled_rather_than_a_close_nvidia_name(verb, gpu, vendor, capsys):
    code, out = run_main([verb, "--gpu", gpu, "--model", "llama-3.1-8b"], capsys)
    lines = out.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, out.err
    assert vendor in lines[0] and "not profiled (NVIDIA only)" in lines[0] and "did you mean" not in lines[0]


def test_no_nvidia_name_is_taken_for_another_vendors():
    from attn_preflight.rules.knowledge.gpus import PROFILES, other_vendor

    names = [name for p in PROFILES for name in (p.name, *p.aliases)]
    assert [name for name in names + [f"NVIDIA {n}" for n in names] if other_vendor(name)] == []


def test_facts_file_of_another_schema_version(tmp_path, capsys):
    data = json.loads((FACTS / "h200-sglang-0.5.23.json").read_text())
    data["schema_version"] = 99
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    code, out = run_main(["check", "--facts", str(path)], capsys)
    assert code == 2 and "schema_version 99" in out.err and len(out.err.strip().splitlines()) == 1


def test_malformed_model_config(tmp_path, capsys):
    (tmp_path / "config.json").write_text('["not", "an", "object"]')
    code, out = run_main(["check", "--gpu", "H100", "--model", str(tmp_path)], capsys)
    assert code == 2 and "must be a JSON object" in out.err


def test_check_never_imports_torch_or_kernel_libraries():
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "attn_preflight",
            "check",
            "--gpu",
            "H100",
            "--model",
            "deepseek-v3",
            "--attention-backend",
            "fa4",
            "--deterministic",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "attn_preflight.rules.core.judge" in modules  # the import log is what we think it is
    imported = {name.split(".")[0] for name in modules}
    assert not imported & {
        "torch",
        "flash_attn",
        "flashinfer",
        "cutlass",
        "triton",
        "sgl_kernel",
        "sglang",
        "vllm",
        "pynvml",
        "probe_collect",
    }, imported & {"torch", "flash_attn", "flashinfer"}
