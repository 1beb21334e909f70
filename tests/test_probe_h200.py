"""The probe's reports from the lent H200 (recorded with bench/device_probe.sh): what the issue requires
the real machine's report to say, with FA4 + the CUTLASS DSL installed into /tmp/site, with and without
the dsl_packages path that the DSL's .pth file would add."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attn_preflight.probe.facts import Facts
from attn_preflight.render.facts import problems, render_facts
from attn_preflight.rules.knowledge.cuda_arch import torch_arch_coverage
from attn_preflight.rules.knowledge.import_diagnosis import diagnose

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> Facts:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{name} not recorded yet: run bench/device_probe.sh on the H200 and copy it to tests/fixtures/")
    return Facts.from_dict(json.loads(path.read_text()))


def test_h200_report():
    facts = load("probe-h200.json")
    assert facts.gpus.devices, facts.gpus.error
    for device in facts.gpus.devices:
        assert "H200" in device.name and (device.compute_capability, device.sm) == ("9.0", "sm_90")
        assert device.memory_total_mib > 140_000 and device.error is None
    assert re.match(r"580\.", facts.gpus.driver_version) and facts.gpus.cuda_driver_version == "13.0"
    assert facts.torch.version == "2.11.0+cu130" and facts.torch.cuda == "13.0"
    assert "sm_90" in facts.torch.arch_list and torch_arch_coverage(facts) == {"sm_90": True}
    assert facts.cuda_toolkit.nvcc_version == "13.0"
    fa4, dsl = facts.library("fa4"), facts.library("cutlass_dsl")
    assert fa4.version == "4.0.0b36" and fa4.health.status == "ok"
    assert fa4.health.details["module_version"] == "0.0.0"  # the upstream bug: metadata is what we report
    assert dsl.distributions["nvidia-cutlass-dsl"] == "4.8.1" and dsl.health.status == "ok"
    assert problems(facts) == []
    assert "NVIDIA H200" in render_facts(facts, "table")


def test_h200_without_the_pth_fix_gets_the_cutlass_diagnosis():
    facts = load("probe-h200-nopth.json")
    dsl = facts.library("cutlass_dsl")
    assert dsl.health.status == "error" and "No module named 'cutlass'" in dsl.health.error
    diagnosis = diagnose(dsl, facts)  # judged now, from what the H200's probe recorded
    assert diagnosis.startswith(
        "No module named cutlass while nvidia-cutlass-dsl 4.8.1 is installed → "
        "its .pth file (nvidia_cutlass_dsl_packages.pth) was not processed"
    )
    assert "add /tmp/site/nvidia_cutlass_dsl/dsl_packages to sys.path" in diagnosis
    assert facts.library("fa4").health.status == "error"  # FA4 imports the DSL
    assert any(line.startswith("CUTLASS CuTe DSL") for line in problems(facts))
