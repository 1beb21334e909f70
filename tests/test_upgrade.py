"""`check --engine-version sglang==A --upgrade-to B`: what changes for a config between two real releases, from
the per-release knowledge (rules/engines/upgrade.py; no engine imported). Each case is a change a release made,
cited from the release files (generated from the wheels) or the capability declaration's upstream lines."""

import json

import pytest
from cli_run import run_cli

from attn_preflight.rules.engines.releases import release

LLAMA_CMD = ["python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]


def upgrade(*argv):
    run = run_cli(["check", "--format", "json", *argv])
    assert run.code in (0, 1), run.err
    return run.code, json.loads(run.out)


def test_the_sm100_default_backend_moves_to_trtllm_mha_in_0_5_6_post2():
    """SGLang's MHA default on SM100 is trtllm_mha from 0.5.6.post2 (server_args.py:1383), flashinfer before
    (0.5.6 :1307): rules/engines/sglang/capabilities.py TRTLLM_MHA_DEFAULT_FROM."""
    code, report = upgrade("--gpu", "B200", "--model", "llama-3.1-8b", "--engine-version", "sglang==0.5.6.post1",
                           "--upgrade-to", "0.5.6.post2")  # fmt: skip
    changed = {r["setting"]: (r["before"], r["after"]) for r in report["upgrade"]["resolved"]}
    assert changed["attention backend"] == ("flashinfer", "trtllm_mha")
    assert report["upgrade"]["from"] == "0.5.6.post1" and report["upgrade"]["to"] == "0.5.6.post2"
    assert report["config"]["attention_backend"] == "trtllm_mha"  # the report is the one at the target release
    assert code == (1 if report["verdict"] == "fail" else 0)


def test_cutlass_mla_leaves_the_choices_in_0_5_20():
    """0.5.19's --attention-backend choices list cutlass_mla, 0.5.20's do not (the release files' choices)."""
    assert "cutlass_mla" in release("sglang", "0.5.19")["choices"]["--attention-backend"]["choices"]
    assert "cutlass_mla" not in release("sglang", "0.5.20")["choices"]["--attention-backend"]["choices"]
    argv = ["--gpu", "8xB200", "--tp", "8", "--model", "deepseek-v3", "--attention-backend", "cutlass_mla"]
    code, report = upgrade(*argv, "--engine-version", "sglang==0.5.19", "--upgrade-to", "0.5.20")
    up = report["upgrade"]
    assert up["verdict_before"] == "pass" and up["verdict_after"] == "fail" and code == 1
    assert up["new_failures"] == ["general-backend-removed"]
    assert [f["change"] for f in up["flags"]] == ["choice removed"]
    assert up["flags"][0]["flag"] == "--attention-backend cutlass_mla"
    # and back: the downgrade fixes it
    code, report = upgrade(*argv, "--engine-version", "sglang==0.5.20", "--upgrade-to", "0.5.19")
    assert report["upgrade"]["fixed_failures"] == ["general-backend-removed"] and code == 0


def test_a_flag_gone_from_the_parser_is_named_with_its_successor():
    """0.5.20 split --cuda-graph-max-bs into -decode / -prefill (0.5.19's flags have it, 0.5.23's do not): argparse
    then finds the old spelling ambiguous."""
    assert "--cuda-graph-max-bs" in release("sglang", "0.5.19")["flags"]
    assert "--cuda-graph-max-bs" not in release("sglang", "0.5.23")["flags"]
    cmd = [*LLAMA_CMD, "--attention-backend", "fa3", "--cuda-graph-max-bs", "8"]
    code, report = upgrade("--gpu", "H100", "--engine-version", "sglang==0.5.19", "--upgrade-to", "0.5.23", "--", *cmd)
    (flag,) = report["upgrade"]["flags"]
    assert flag["flag"] == "--cuda-graph-max-bs" and flag["change"] == "removed"
    assert "ambiguous option" in flag["detail"] and "--cuda-graph-max-bs-decode" in flag["detail"]
    assert "general-flags-known" in report["upgrade"]["new_failures"] and code == 1


def test_fa4_takes_512_head_dims_on_sm90_from_0_5_22(tmp_path):
    """SGLang's vendored FA4 takes (512, 512) on SM90 from 0.5.22 (interface.py:130-141); 0.5.16-0.5.21 validate
    8..256 (capabilities.py, fa4's era '<0.5.22')."""
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 8,
        "num_key_value_heads": 8,
        "head_dim": 512,
        "num_hidden_layers": 2,
        "intermediate_size": 1024,
        "vocab_size": 1000,
        "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16",
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    argv = ["--gpu", "H100", "--model", str(tmp_path), "--attention-backend", "fa4"]
    code, report = upgrade(*argv, "--engine-version", "sglang==0.5.21", "--upgrade-to", "0.5.22")
    assert report["upgrade"]["fixed_failures"] == ["fa4-head-dim-sm90"] and code == 0
    assert report["upgrade"]["new_failures"] == []


def test_the_same_release_changes_nothing_and_the_table_says_so():
    run = run_cli(["check", "--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa3",
                   "--engine-version", "sglang==0.5.23", "--upgrade-to", "0.5.23"])  # fmt: skip
    assert run.code == 0, run.err
    assert "Upgrade sglang 0.5.23 -> 0.5.23 (verdict PASS -> PASS)" in run.out
    assert "nothing this config uses changes" in run.out


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--upgrade-to", "0.5.23"], "--engine-version sglang==VER"),
        (["--engine-version", "sglang==0.5.20", "--upgrade-to", "0.5.99"], "no sglang release file"),
        (["--engine-version", "sglang==0.5.0", "--upgrade-to", "0.5.23"], "no sglang release file"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv, said):
    run = run_cli(["check", "--gpu", "H100", "--model", "llama-3.1-8b", *argv])
    assert run.code == 2 and said in run.err and len(run.err.strip().splitlines()) == 1


def test_an_installed_release_without_a_file_reads_the_release_before_it():
    """A from-release newer than the newest known (or a .post without a file) reads the flag and choice tables
    of the newest release at or before it, as every check does (rules/core/versions.py release_at_or_before)."""
    code, report = upgrade("--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa3",
                           "--engine-version", "sglang==0.5.24", "--upgrade-to", "0.5.23")  # fmt: skip
    assert report["upgrade"]["from"] == "0.5.24" and report["upgrade"]["flags"] == [] and code == 0
