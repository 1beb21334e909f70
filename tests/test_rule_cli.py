"""`explain`, `rules` and `gpus` through click, and the knowledge they show."""

import json

import pytest
from click.testing import CliRunner

from attn_preflight.cli import cli, main
from attn_preflight.rules.core.registry import all_rules
from attn_preflight.rules.knowledge import gpus


def invoke(*argv):
    return CliRunner().invoke(cli, list(argv))


def test_explain_has_ruff_style_sections():
    result = invoke("explain", "fa4-deterministic-mla-arch")
    assert result.exit_code == 0
    out = result.output
    for section in ("What it checks", "Why", "Fix", "Prevents", "Source"):
        assert section in out
    assert out.index("What it checks") < out.index("Why") < out.index("Fix") < out.index("Prevents")
    assert "holds for: sglang>=" in out
    assert "attention_hook.py" in out


def test_explain_reason_rule_and_json():
    data = json.loads(invoke("explain", "general-flashattention-version-env", "--format", "json").output)
    assert data["prevents"] is None and "no SGLang code reads it" in data["reason"]
    assert invoke("explain", "fa3-arch", "--format", "markdown").output.startswith("# fa3-arch")


def test_explain_unknown_rule_suggests(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["explain", "fa4-deterministic-mla"])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert "did you mean 'fa4-deterministic-mla-arch'" in err and len(err.strip().splitlines()) == 1


def test_rules_lists_every_rule_and_filters():
    result = invoke("rules")
    assert result.exit_code == 0
    for r in all_rules():
        assert r.id in result.output
    assert f"{len(all_rules())} rules" in result.output
    data = json.loads(invoke("rules", "--subject", "fa4", "--format", "json").output)
    assert data and {r["subject"] for r in data} == {"fa4"}
    vllm_only = json.loads(invoke("rules", "--engine", "sglang", "--format", "json").output)
    assert {r["engine"] for r in vllm_only} == {"sglang"}


def test_rules_unknown_subject_is_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["rules", "--subject", "fa5"])
    assert stop.value.code == 2 and "did you mean 'fa4'" in capsys.readouterr().err


def test_gpus_lists_profiles_with_sources():
    data = json.loads(invoke("gpus", "--format", "json").output)
    names = {g["name"] for g in data}
    for required in (
        "T4",
        "V100",
        "A100",
        "A800",
        "A10",
        "A10G",
        "A30",
        "A40",
        "RTX A6000",
        "RTX 3090",
        "L4",
        "L20",
        "L40",
        "L40S",
        "RTX 4090",
        "H100",
        "H200",
        "H20",
        "H800",
        "GH200",
        "B200",
        "GB200",
        "B300",
        "GB300",
        "Jetson Thor",
        "RTX 5090",
        "RTX 5080",
        "RTX PRO 6000",
        "GB10",
    ):
        assert required in names
    assert all(g["source"] for g in data)
    assert "12.1" in invoke("gpus").output


@pytest.mark.parametrize(
    "name,cc",
    [
        ("NVIDIA H100 80GB HBM3", (9, 0)),
        ("h100", (9, 0)),
        ("NVIDIA A100-SXM4-80GB", (8, 0)),
        ("NVIDIA GeForce RTX 4090", (8, 9)),
        ("RTX4090", (8, 9)),
        ("NVIDIA RTX A6000", (8, 6)),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", (12, 0)),
        ("DGX Spark", (12, 1)),
        ("Tesla T4", (7, 5)),
        ("Tesla V100-SXM2-32GB", (7, 0)),
        ("NVIDIA B300 SXM6 AC", (10, 3)),
        ("jetson agx thor", (11, 0)),
        ("NVIDIA GH200 480GB", (9, 0)),
        ("nvidia l40s", (8, 9)),
    ],
)
def test_gpu_names_as_users_and_nvml_write_them(name, cc):
    assert gpus.lookup(name).cc == cc


@pytest.mark.parametrize(
    "text,cc",
    [
        ("sm_90", (9, 0)),
        ("sm90", (9, 0)),
        ("sm90a", (9, 0)),
        ("90", (9, 0)),
        ("9.0", (9, 0)),
        ("12.1", (12, 1)),
        ("sm_100a", (10, 0)),
        ("sm_103", (10, 3)),
        ("121", (12, 1)),
        ("sm_120f", (12, 0)),
    ],
)
def test_compute_capability_spellings(text, cc):
    assert gpus.parse_compute_capability(text) == cc
    assert gpus.lookup(text) is None


@pytest.mark.parametrize("text", ["H1000", "sm_9", "9", "999", "sm_200", "ninety"])
def test_not_a_compute_capability(text):
    assert gpus.parse_compute_capability(text) is None


def test_explain_says_when_the_engine_would_fail():
    """FlashMLA's arch limit bites at the first forward; trtllm_mla's at SGLang's start-up resolution."""
    assert "without it, the engine fails at the first forward pass" in invoke("explain", "flashmla-arch").output
    assert "without it, the engine fails at start-up argument resolution" in invoke("explain", "trtllm-mla-arch").output
    assert json.loads(invoke("explain", "flashmla-mha-model", "--format", "json").output)["stage"] == "init"
