"""Any model reference (issue 10, part 1): a local directory or config.json, a hub id read from the local
Hugging Face cache (never a download), a preset by its exact name, alias or hub id; a hub id found nowhere is
judged without the model (its rules unknown, the verdict a warning with the fix); a missing path is exit 2."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from cli_run import check_json, finding, run_cli

from attn_preflight.inputs import ModelNotFound, cached_config, hub_cache, load_model
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.models import load_preset

COPY = "attn-preflight-tests/llama-3.1-8b-copy"  # in tests/fixtures/hf-cache (tests/conftest.py)
UNCACHED = "Qwen/Qwen2.5-14B-Instruct"  # a real hub id, neither in the test cache nor a preset


def check_h100(*argv):
    return check_json(["--gpu", "H100", *argv])


def statuses(report):
    return {f["rule_id"]: f["status"] for f in report["findings"]}


def test_a_cached_hub_id_is_read_from_the_snapshot_refs_main_names():
    model = load_model(COPY)
    assert model.architecture == "LlamaForCausalLM" and model.head_dim == 128 and model.num_key_value_heads == 8
    assert model.source.endswith("snapshots/0123456789abcdef0123456789abcdef01234567/config.json")


def test_without_refs_main_the_newest_snapshot_holding_a_config_is_read(tmp_path, monkeypatch):
    repo = tmp_path / "models--org--model" / "snapshots"
    for revision, heads in (("old", 8), ("new", 4)):
        (repo / revision).mkdir(parents=True)
        (repo / revision / "config.json").write_text(
            json.dumps({"num_attention_heads": 32, "num_key_value_heads": heads})
        )
    os.utime(repo / "old" / "config.json", (1, 1))
    (repo / "partial").mkdir()  # a snapshot with no config.json is passed over
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert cached_config("org/model") == str(repo / "new" / "config.json")
    assert load_model("org/model").num_key_value_heads == 4


def test_the_cache_follows_huggingface_hubs_variables(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hub_cache() == str(tmp_path / "hf" / "hub")
    monkeypatch.delenv("HF_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub_cache() == str(tmp_path / "xdg" / "huggingface" / "hub")


def test_a_preset_matches_only_its_exact_name_alias_or_hub_id():
    assert load_model("deepseek-ai/DeepSeek-V3").name == "deepseek-v3"  # its source's hub id
    assert load_model("deepseek-ai/DeepSeek-V3.1").name == "deepseek-v3"  # an alias under that organisation
    assert load_model("Llama-3.1-8B-Instruct").name == "llama-3.1-8b"  # an alias
    with pytest.raises(ModelNotFound):  # another organisation's model of the same name is not the preset
        load_model("someone/Llama-3.1-8B-Instruct")


def test_a_path_that_does_not_exist_is_an_input_error_never_a_preset():
    with pytest.raises(RulesInputError, match="no such file or directory"):
        load_model("/data/models/Qwen2.5-7B-Instruct")
    run = run_cli(["check", "--gpu", "H100", "--model", "/data/models/Qwen2.5-7B-Instruct"])
    assert run.code == 2 and run.err_lines == [
        "attn-preflight: error: --model /data/models/Qwen2.5-7B-Instruct: no such file or directory"
    ]


def test_a_hub_id_found_nowhere_is_judged_without_the_model():
    assert load_preset(UNCACHED) is None
    run, report = check_h100("--model", UNCACHED, "--attention-backend", "fa3")
    assert run.code == 0 and report["verdict"] == "warn"
    missing = finding(report, "general-model-config")
    assert missing["status"] == "warn" and "no config.json in the Hugging Face cache" in missing["message"]
    assert missing["fix"] == [f"hf download {UNCACHED} config.json", "--model DIR"]
    unknown = [f["rule_id"] for f in report["findings"] if f["status"] == "unknown"]
    assert "general-tp-heads" in unknown and "fa3-head-dim" in unknown
    assert not any(
        f["status"] == "pass" and f["rule_id"] in ("general-tp-heads", "fa3-head-dim") for f in report["findings"]
    )
    assert report["config"]["model_missing"] == UNCACHED


@pytest.mark.parametrize(
    "command",
    [
        ["python", "-m", "sglang.launch_server", "--model-path", UNCACHED, "--tp", "2"],
        ["vllm", "serve", UNCACHED, "--tensor-parallel-size", "2"],
    ],
)
def test_pasted_commands_name_the_model_the_same_way(command):
    run, report = check_h100("--", *command)
    assert run.code == 0 and finding(report, "general-model-config")["status"] == "warn"


def test_a_cached_model_is_judged_like_its_directory(tmp_path):
    directory = tmp_path / "Llama-3.1-8B-Instruct"
    shutil.copytree(os.path.join(os.path.dirname(__file__), "fixtures", "models", "Llama-3.1-8B-Instruct"), directory)
    _, cached = check_h100("--model", COPY, "--attention-backend", "fa3")
    _, local = check_h100("--model", str(directory), "--attention-backend", "fa3")
    assert statuses(cached) == statuses(local) and cached["verdict"] == "pass"
    assert finding(cached, "general-model-config")["status"] == "pass"
