"""`--config FILE` in a pasted command, read as each engine reads it (issue 10 part 2), with the engines' own
documented YAML files; the YAML subset reader that stands in for PyYAML."""

from __future__ import annotations

import json

import pytest
from cli_run import assert_clean_outcome, check_json, finding, run_cli

from attn_preflight.yaml_files import YamlFileError, parse_yaml_mapping
from tests.rule_fixtures.model_specific import model_dir

# sgl-project/sglang docs/advanced_features/server_arguments.md ("Common launch commands"), verbatim
SGLANG_DOC_YAML = """model-path: meta-llama/Meta-Llama-3-8B-Instruct
host: 0.0.0.0
port: 30000
tensor-parallel-size: 2
enable-metrics: true
log-requests: true
"""
# vllm-project/recipes Llama/Llama3.3_Blackwell.yaml @8959cf64, verbatim
VLLM_LLAMA_BLACKWELL = """kv-cache-dtype: fp8
compilation-config: '{"pass_config":{"fuse_allreduce_rms":true,"fuse_attn_quant":true,"eliminate_noops":true}}'
async-scheduling: true
no-enable-prefix-caching: true
max-num-batched-tokens: 8192
"""
# vllm-project/recipes OpenAI/GPT-OSS_EAGLE3_Hopper.yaml @8959cf64, verbatim
VLLM_GPT_OSS_EAGLE3 = """no-enable-prefix-caching: true
max-cudagraph-capture-size: 2048
max-num-batched-tokens: 8192
stream-interval: 20
speculative-config: '{"model":"nvidia/gpt-oss-120b-Eagle3-v3","num_speculative_tokens":7,"method":"eagle3","draft_tensor_parallel_size":1}'
"""
# vllm 0.33.0 vllm/utils/argparse_utils.py load_config_file docstring: the nested form
VLLM_NESTED = """compilation-config:
  pass_config:
    fuse_allreduce_rms: true
speculative-config:
  model: "nvidia/gpt-oss-120b-Eagle3-v2"
  num_speculative_tokens: 3
"""


def write(tmp_path, text, name="serve.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def config_of(*command):
    run, report = check_json(["--gpu", "H100", "--", *command])
    assert run.code in (0, 1), run.err
    return report


def test_sglang_reads_its_documented_config_and_the_command_line_wins(tmp_path):
    """server_args_config_parser.py merge_config_with_args: config arguments first, then the command line."""
    path = write(tmp_path, SGLANG_DOC_YAML)
    from_file = config_of("python", "-m", "sglang.launch_server", "--config", path)["config"]
    assert from_file["tp_size"] == 2 and from_file["model_missing"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert from_file["ignored"] == ["--host", "--port", "--enable-metrics", "--log-requests"]
    assert from_file["unmodelled"] == []
    overridden = config_of("python", "-m", "sglang.launch_server", "--config", path, "--tp", "1")["config"]
    assert overridden["tp_size"] == 1


def test_vllm_reads_a_recipe_config_after_the_model(tmp_path):
    """The recipe's `vllm serve nvidia/Llama-3.3-70B-Instruct-$DTYPE --config ${YAML_CONFIG} --tensor-parallel-size 1`."""
    path = write(tmp_path, VLLM_LLAMA_BLACKWELL)
    report = config_of("vllm", "serve", "llama-3.1-8b", "--config", path, "--tensor-parallel-size", "1")
    config = report["config"]
    assert config["kv_cache_dtype"] == "fp8" and config["tp_size"] == 1 and config["model"]["name"] == "llama-3.1-8b"
    # --max-num-batched-tokens sizes vLLM's profiled peak: modelled since issue 22 (rules/knowledge/engine_budget.py)
    assert config["unmodelled"] == ["--compilation-config", "--async-scheduling", "--no-enable-prefix-caching"]
    assert config["ignored"] == []
    assert finding(report, "general-unmodelled-flags")["status"] == "warn"


def test_vllm_reads_a_speculative_config_and_nested_mappings(tmp_path):
    eagle = config_of("vllm", "serve", "llama-3.1-8b", "--config", write(tmp_path, VLLM_GPT_OSS_EAGLE3))["config"]
    assert json.loads(eagle["flags"]["speculative_config"])["method"] == "eagle3"
    nested = config_of("vllm", "serve", "llama-3.1-8b", "--config", write(tmp_path, VLLM_NESTED, "n.yml"))["config"]
    assert json.loads(nested["flags"]["speculative_config"]) == {
        "model": "nvidia/gpt-oss-120b-Eagle3-v2",
        "num_speculative_tokens": 3,
    }


def test_a_false_boolean_is_the_no_flag_for_vllm_and_left_out_for_sglang(tmp_path):
    vllm = config_of("vllm", "serve", "llama-3.1-8b", "--config", write(tmp_path, "enable-prefix-caching: false\n"))
    assert vllm["config"]["unmodelled"] == ["--no-enable-prefix-caching"]
    sglang = config_of(
        "sglang", "serve", "--model-path", "llama-3.1-8b", "--config", write(tmp_path, "enable-dp-attention: false\n")
    )
    assert "enable_dp_attention" not in sglang["config"]["flags"]


@pytest.mark.parametrize(
    "content, name, reason",
    [
        (None, "missing.yaml", "no such file"),
        ("base: &a [1, 2]\ntp-size: *a\n", "serve.yaml", ":2: an alias (*name) is not read"),
        ("a:\n" + "".join("  " * i + " b:\n" for i in range(1, 70)), "serve.yaml", "nested more than 64"),
        ("- 1\n- 2\n", "serve.yaml", "not a `key: value` mapping"),
        ("tp-size: [1\n", "serve.yaml", "serve.yaml:2:"),
        ("a: 1\n---\nb: 2\n", "serve.yaml", "2 YAML documents"),
        ("tp-size: 2\n", "serve.json", "only .yaml/.yml"),
    ],
)
def test_a_config_file_that_cannot_be_read_is_exit_2(tmp_path, content, name, reason):
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    argv = ["check", "--gpu", "H100", "--", "sglang", "serve", "--model-path", "llama-3.1-8b", "--config", str(path)]
    run = run_cli(argv)
    assert_clean_outcome(run, argv)
    assert run.code == 2 and reason in run.err


def test_a_directory_as_config_is_exit_2(tmp_path):
    folder = tmp_path / "conf.yaml"
    folder.mkdir()
    run = run_cli(["check", "--gpu", "H100", "--", "vllm", "serve", "m", "--config", str(folder)])
    assert run.code == 2 and "not a regular file" in run.err


def test_duplicate_keys_and_yaml_1_1_numbers_are_read_as_the_engines_read_them(tmp_path):
    """Both engines yaml.safe_load their --config: a key given twice keeps its last value, 010 is octal 8."""
    judged = config_of(
        "sglang", "serve", "--model-path", "llama-3.1-8b", "--config", write(tmp_path, "tp-size: 2\ntp-size: 4\n")
    )
    assert judged["config"]["tp_size"] == 4
    assert parse_yaml_mapping("page-size: 010\n") == {"page-size": 8}


def test_the_reader_resolves_scalars_as_pyyaml_safe_load_does():
    """Expected values: PyYAML's YAML 1.1 implicit resolvers (bool yes/no/on/off, null ~, int, float with a dot)."""
    text = (
        "a: yes\nb: Off\nc: ~\nd: 12_000\ne: 0.9\nf: 1e5\ng: '0.9'\nh: \"x\\ty\"\ni: [1, two, 'three']\n"
        'j:\n  - 4\n  - five\nk: {"x": 1}\nl:\nm: http://host:80/path # comment\n'
    )
    assert parse_yaml_mapping(text) == {
        "a": True,
        "b": False,
        "c": None,
        "d": 12000,
        "e": 0.9,
        "f": "1e5",
        "g": "0.9",
        "h": "x\ty",
        "i": [1, "two", "three"],
        "j": [4, "five"],
        "k": {"x": 1},
        "l": None,
        "m": "http://host:80/path",
    }
    with pytest.raises(YamlFileError, match=":1: "):
        parse_yaml_mapping("\tx: 1\n")


def test_sglang_serve_needs_the_model_on_the_command_line(tmp_path):
    """sglang/cli/utils.py get_model_path looks for --model-path / --model in argv before any config is merged:
    `sglang serve --config config.yaml` exits "Error: --model-path is required" (sgl-project/sglang#36105),
    while `python -m sglang.launch_server --config config.yaml` works."""
    path = write(tmp_path, SGLANG_DOC_YAML)
    run = run_cli(["check", "--gpu", "H100", "--", "sglang", "serve", "--config", path])
    assert run.code == 2 and "--model-path is required" in run.err
    assert config_of("sglang", "serve", "--model-path", "llama-3.1-8b", "--config", path)["config"]["tp_size"] == 2


# sglang 0.5.23 dllm/config.py DllmConfig.from_server_args: `block_size` in --dllm-algorithm-config's YAML replaces
# the architecture's block (LLaDA2MoeModelLM: 32), and overrides.py _dllm_page_size aligns the page size to it.
def _dllm_line(*flags: str) -> list[str]:
    return [
        "check",
        "--gpu",
        "H100",
        "--format",
        "json",
        "--",
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        model_dir("llada2-mini"),
        "--dllm-algorithm",
        "LowConfidence",
        *flags,
    ]


def test_a_dllm_algorithm_config_block_size_decides_the_page_size(tmp_path):
    path = write(tmp_path, "threshold: 0.95\nblock_size: 64\n")
    judged = json.loads(run_cli(_dllm_line("--dllm-algorithm-config", path, "--page-size", "32")).out)
    page = finding(judged, "general-dllm-page-size")
    assert page["status"] == "warn" and page["fix"] == ["--page-size 64"]
    kept = json.loads(run_cli(_dllm_line("--dllm-algorithm-config", path, "--page-size", "64")).out)
    assert finding(kept, "general-dllm-page-size")["status"] == "pass"
    plain = write(tmp_path, "threshold: 0.9\n", name="plain.yaml")
    without = json.loads(run_cli(_dllm_line("--dllm-algorithm-config", plain, "--page-size", "64")).out)
    assert finding(without, "general-dllm-page-size")["fix"] == ["--page-size 32"]  # the checkpoint's block


def test_a_dllm_algorithm_config_not_here_leaves_the_page_size_unknown(tmp_path):
    judged = json.loads(run_cli(_dllm_line("--dllm-algorithm-config", str(tmp_path / "absent.yaml"))).out)
    assert finding(judged, "general-dllm-page-size")["status"] == "unknown"


def test_a_dllm_block_size_that_is_no_positive_integer_is_exit_2(tmp_path):
    argv = _dllm_line("--dllm-algorithm-config", write(tmp_path, 'block_size: "32"\n'))
    run = run_cli(argv)
    assert_clean_outcome(run, argv)
    assert run.code == 2 and "block_size must be a positive integer" in run.err
