"""Fixes that work (issue 10, part 3): every fix `check` prints, applied to the command line and checked again,
makes its finding pass (or no longer apply) and adds no failure. Applied through the CLI's own option parsing,
not through the engine's re-check, so the two can disagree."""

from __future__ import annotations

import itertools
import shlex

import pytest
from cli_run import check_json

GPUS = ("A100", "H100", "B200", "RTX 5090", "L4")
BACKENDS = ("fa3", "fa4", "flashinfer", "triton", "trtllm_mha", "flashmla")
KV_DTYPES = ("auto", "fp8_e4m3", "fp8_e5m2", "mxfp8")
MODELS = (("llama-3.1-8b",), ("deepseek-v3",), ("gemma-2-9b",), ("llama-3.1-8b", "--feature", "score_mod"))


def report(argv):
    run, checked = check_json(argv)
    assert run.code in (0, 1), run.err
    return checked


def failing_cases():
    for gpu, backend, kv, model in itertools.product(GPUS, BACKENDS, KV_DTYPES, MODELS):
        argv = ["--gpu", gpu, "--model", *model, "--attention-backend", backend, "--kv-cache-dtype", kv]
        yield pytest.param(argv, id=f"{gpu}-{backend}-{kv}-{'-'.join(model)}")


@pytest.mark.parametrize("argv", list(failing_cases()))
def test_every_printed_fix_passes_when_applied(argv):
    before = report(argv)
    failing = {f["rule_id"] for f in before["findings"] if f["status"] == "fail"}
    for finding in before["findings"]:
        if finding["status"] not in ("fail", "warn"):
            continue
        for fix in finding["fix"]:
            if not fix.startswith("--"):
                continue  # an install or a download: not a change of the command
            after = report([*argv, *shlex.split(fix)])
            again = {f["rule_id"]: f["status"] for f in after["findings"]}
            assert again.get(finding["rule_id"]) in ("pass", "skip", None), (fix, finding["rule_id"])
            new = {rule for rule, status in again.items() if status == "fail"} - failing
            assert not new, (fix, new)
