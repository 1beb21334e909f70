"""flashinfer-fp8-kv-sm90 across the SGLang releases it covers (sglang#18135).

Expectations come from the wheels: each sglang wheel's METADATA pins flashinfer_python (0.5.3 for 0.5.6-0.5.7,
0.6.1 for 0.5.8 and 0.5.8.post1, 0.6.3 for 0.5.9), FlashInfer's decode.py builds FA2 for tensor-core decode up to
0.5.3 and resolves "auto" (FA3 on SM90, no dtype test) in 0.6.0-0.6.3, and sglang 0.5.9's flashinfer_backend.py
names fa2 for its decode wrappers (PR #18364)."""

from __future__ import annotations

import shlex

import pytest
from cli_run import check_json

RULE = "flashinfer-fp8-kv-sm90"
FLASHINFER_FP8 = ["--model", "llama-3.1-8b", "--attention-backend", "flashinfer"]


def status(argv: list[str]) -> tuple[dict, dict]:
    run, report = check_json(argv)
    assert run.code in (0, 1) and report is not None, run.err
    return {f["rule_id"]: f for f in report["findings"]}[RULE], report


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("0.5.1", "pass"),  # pins flashinfer 0.2.11.post3
        ("0.5.4.post3", "pass"),  # pins 0.5.0
        ("0.5.7", "pass"),  # pins 0.5.3
        ("0.5.8", "fail"),  # pins 0.6.1
        ("0.5.8.post1", "fail"),  # pins 0.6.1
        ("0.5.9", "skip"),  # pins 0.6.3, but its decode wrappers name fa2
    ],
)
def test_each_release_is_judged_with_its_pinned_flashinfer(release, expected):
    finding, _ = status(
        ["--gpu", "H100", "--engine-version", f"sglang=={release}", *FLASHINFER_FP8, "--kv-cache-dtype", "fp8_e4m3"]
    )
    assert finding["status"] == expected, finding["message"]


@pytest.mark.parametrize("kv", ["fp8_e4m3", "fp8_e5m2"])
def test_every_printed_fix_passes_when_applied(kv):
    argv = ["--gpu", "H200", "--engine-version", "sglang==0.5.8", *FLASHINFER_FP8, "--kv-cache-dtype", kv]
    finding, before = status(argv)
    assert finding["status"] == "fail"
    failing = {f["rule_id"] for f in before["findings"] if f["status"] == "fail"}
    flags = [fix for fix in finding["fix"] if fix.startswith("--")]
    assert flags, finding["fix"]
    for fix in flags:
        again, after = status([*argv, *shlex.split(fix)])
        assert again["status"] in ("pass", "skip"), (fix, again["message"])
        assert {f["rule_id"] for f in after["findings"] if f["status"] == "fail"} <= failing - {RULE}, fix


def test_the_fix_names_fa3_only_where_fa3_keeps_the_fp8_kv_cache():
    # fa3 with fp8_e5m2 is switched to triton (fa3-fp8-e5m2-rewrite); fa3 reads FP8 E4M3 on SM90
    e4m3, _ = status(
        ["--gpu", "H100", "--engine-version", "sglang==0.5.8", *FLASHINFER_FP8, "--kv-cache-dtype", "fp8_e4m3"]
    )
    e5m2, _ = status(
        ["--gpu", "H100", "--engine-version", "sglang==0.5.8", *FLASHINFER_FP8, "--kv-cache-dtype", "fp8_e5m2"]
    )
    assert "--attention-backend fa3" in e4m3["fix"]
    assert "--attention-backend fa3" not in e5m2["fix"]


def test_other_gpus_and_mla_models_are_not_judged():
    a100, _ = status(
        ["--gpu", "A100", "--engine-version", "sglang==0.5.8", *FLASHINFER_FP8, "--kv-cache-dtype", "fp8_e4m3"]
    )
    b200, _ = status(
        ["--gpu", "B200", "--engine-version", "sglang==0.5.8", *FLASHINFER_FP8, "--kv-cache-dtype", "fp8_e4m3"]
    )
    mla, _ = status(
        [
            "--gpu", "H200", "--engine-version", "sglang==0.5.8", "--model", "deepseek-v3",
            "--attention-backend", "flashinfer", "--kv-cache-dtype", "fp8_e4m3",
        ]
    )  # fmt: skip
    assert (a100["status"], b200["status"], mla["status"]) == ("skip", "skip", "skip")
