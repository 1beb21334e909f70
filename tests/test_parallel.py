"""Multi-GPU (issue 13, part 3): the GPUs a process sees (CUDA_VISIBLE_DEVICES), TP x PP x DP against them,
P2P within the TP group, and `fleet` naming the node groups with enough GPUs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import check_json, finding, run_cli

from attn_preflight.probe.facts import Facts
from attn_preflight.rules.checks.common import attention_dp_size
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.target import Target

FACTS = Path(__file__).parent / "fixtures" / "facts"


def facts_with(name, **environment):
    raw = json.loads((FACTS / name).read_text())
    raw["environment"] = {**raw.get("environment", {}), **environment}
    return Facts.from_dict(raw)


@pytest.mark.parametrize(
    "visible, indices",
    [("0,1", (0, 1)), ("3,1", (3, 1)), ("2,9,4", (2,)), ("GPU-synthetic-h200x8-nvlink-5", (5,)), ("", ())],
)
def test_cuda_visible_devices_narrows_the_gpus_in_its_order(visible, indices):
    target = Target.from_facts(facts_with("h200x8-nvlink.json", CUDA_VISIBLE_DEVICES=visible))
    assert target.visible_gpus == indices and target.gpu_count == len(indices)
    assert f"{len(indices)} of 8 GPUs visible" in target.gpu_note
    assert (target.cc is None) == (not indices)


def test_without_cuda_visible_devices_every_gpu_is_seen():
    target = Target.from_facts(facts_with("h200x8-nvlink.json"))
    assert target.visible_gpus == tuple(range(8)) and "visible" not in target.gpu_note


def test_tp_beyond_the_visible_gpus_fails(tmp_path):
    raw = json.loads((FACTS / "h200x8-nvlink.json").read_text())
    raw["environment"]["CUDA_VISIBLE_DEVICES"] = "0,1"
    narrowed = tmp_path / "two-visible.json"
    narrowed.write_text(json.dumps(raw))
    _, data = check_json(["--facts", str(narrowed), "--model", "qwen3-8b", "--tp-size", "4"])
    count = finding(data, "parallel-gpu-count")
    assert count["status"] == "fail" and "= 4 GPUs; the target has 2" in count["message"]
    assert count["fix"] == ["--tp-size 2"]


def test_p2p_is_judged_on_the_tp_groups_gpus():
    _, nvlink = check_json(["--facts", str(FACTS / "h200x8-nvlink.json"), "--model", "qwen3-8b", "--tp-size", "8"])
    assert finding(nvlink, "parallel-p2p")["status"] == "pass"
    _, pcie = check_json(["--facts", str(FACTS / "h200x4-pcie-no-p2p.json"), "--model", "qwen3-8b", "--tp", "4"])
    p2p = finding(pcie, "parallel-p2p")
    assert p2p["status"] == "warn" and "falls back to NCCL" in p2p["message"]
    _, old = check_json(["--facts", str(FACTS / "b200-torch-2.9-cu128.json"), "--model", "qwen3-8b", "--tp", "4"])
    assert finding(old, "parallel-p2p")["status"] == "skip"  # a report from before P2P facts


def test_the_real_h200_report_has_one_gpu_without_peers():
    _, data = check_json(["--facts", str(FACTS.parent / "probe-h200.json"), "--model", "qwen3-8b", "--tp", "2"])
    assert finding(data, "parallel-gpu-count")["status"] == "fail"  # TP 2 on its one GPU
    assert finding(data, "parallel-p2p")["status"] == "skip"


def test_fleet_names_the_groups_with_enough_gpus():
    reports = [str(FACTS / "h200x8-nvlink.json"), str(FACTS / "h200x4-pcie-no-p2p.json")]
    result = run_cli(["fleet", *reports, "--model", "qwen3-8b", "--tp-size", "8", "--format", "json"])
    data = json.loads(result.out)
    assert data["gpus_needed"] == 8
    enough = {g["gpu_count"]: g["enough_gpus"] for g in data["groups"]}
    assert enough == {8: True, 4: False}
    table = run_cli(["fleet", *reports, "--model", "qwen3-8b", "--tp-size", "8"]).out
    assert "gpus: 8 per launch (TP 8 x PP 1); enough: " in table and "too few: " in table


@pytest.mark.parametrize(
    ("flags", "groups"),
    [
        ({}, 1),
        ({"attn_dp_size": 4}, 4),
        ({"dp_size": 8, "enable_dp_attention": True}, 8),
        # _handle_deprecated_dp_attention (parallel_hook.py:49-60 in 0.5.23): an --attn-dp-size of 1, given or
        # not, takes the deprecated spelling's width
        ({"attn_dp_size": 1, "dp_size": 8, "enable_dp_attention": True}, 8),
        ({"attn_dp_size": 2, "dp_size": 8, "enable_dp_attention": True}, 2),
        ({"dp_size": 8}, 1),
    ],
)
def test_attention_dp_size_reads_the_layout_as_sglang_resolves_it(flags, groups):
    assert attention_dp_size(Config(flags=flags)) == groups
