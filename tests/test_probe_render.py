"""Rendering saved reports of real machines: what is broken comes first, with its diagnosis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_preflight.probe.facts import DERIVED_KEYS, Facts, GpuDevice, GpuFacts, ImportHealth, LibraryFacts
from attn_preflight.render import Screen, to_json
from attn_preflight.render.facts import CPU_ONLY_TORCH, NO_DEVICES, problems, render_facts
from attn_preflight.rules.knowledge.cuda_arch import INSTALL_CUDA_TORCH

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> Facts:
    return Facts.from_dict(json.loads((FIXTURES / name).read_text()))


@pytest.mark.parametrize("name", ["probe-cpu-ci.json", "probe-cpu-broken.json"])
def test_fixtures_round_trip_through_json(name):
    data = json.loads((FIXTURES / name).read_text())
    assert json.loads(to_json(Facts.from_dict(data).to_dict())) == without_retired_keys(data)


def without_retired_keys(data):
    """The report as this version writes it: what is judged when rendering is not part of the facts (DERIVED_KEYS)."""
    if isinstance(data, list):
        return [without_retired_keys(item) for item in data]
    if not isinstance(data, dict):
        return data
    return {
        key: without_retired_keys(value)
        for key, value in data.items()
        if not any(key in names for names in DERIVED_KEYS.values())
    }


def test_a_cpu_machine_has_no_gpu_and_a_cpu_only_torch_and_nothing_else():
    facts = load("probe-cpu-ci.json")
    no_gpu, cpu_torch = problems(facts)
    assert no_gpu.startswith("no NVIDIA GPU seen: " + facts.gpus.error + "\n  → ") and "--gpus all" in no_gpu
    assert cpu_torch == "torch 2.13.0+cpu is a CPU-only build (no CUDA): " + CPU_ONLY_TORCH
    text = render_facts(facts, "table")
    assert "Problems (2)\n------------\n✗ no NVIDIA GPU seen: NVML library not found" in text
    narrow = render_facts(facts, "table", Screen(width=50))  # the command to type stays whole, on its own line
    assert f"\n  $ {INSTALL_CUDA_TORCH}\n" in narrow
    assert "None: NVML library not found (libnvidia-ml.so.1)" in text
    assert "none (CPU-only build)" in text and "2.13.0+cpu" in text


def test_nvml_with_no_device_is_a_problem_and_a_rocm_torch_is_not_cpu_only():
    facts = load("probe-cpu-ci.json")
    facts.gpus = GpuFacts(driver_version="580.95.05", cuda_driver_version="13.0", devices=[])
    facts.torch.version, facts.torch.hip, facts.torch.arch_list = "2.9.0+rocm6.4", "6.4", ["gfx942"]
    assert [p.split("\n")[0] for p in problems(facts)] == ["no NVIDIA GPU seen: " + NO_DEVICES]


def test_broken_machine_lists_each_failure_with_its_diagnosis():
    facts = load("probe-cpu-broken.json")
    found = problems(facts)
    assert len(found) == 6
    no_gpu, cpu_torch, fa4, cutlass, triton, xformers = found  # the machine, then libraries in catalogue order
    assert no_gpu.startswith("no NVIDIA GPU seen: NVML library not found") and "CPU-only build" in cpu_torch
    assert fa4.startswith("FlashAttention 4 (CuTe DSL) (flash-attn-4 4.0.0b36): import error: ImportError:")
    assert "\n  → flash-attn-4 4.0.0b36: _C.so needs torch symbol" in fa4
    assert "its .pth file (nvidia_cutlass_dsl_packages.pth) was not processed" in cutlass
    assert triton.startswith("Triton (triton 3.5.0): import timeout")
    assert xformers.startswith("xFormers (xformers 0.0.30): import crashed: killed by SIGSEGV")
    text = render_facts(facts, "table")
    assert text.index("Problems (6)") < text.index("Host")
    assert "crashed (SIGSEGV)" in text and "timeout 3.0 s" in text
    markdown = render_facts(facts, "markdown")
    assert (
        "## Problems (6)\n- no NVIDIA GPU seen" in markdown
        and "\n- FlashAttention 4" in markdown
        and "\n  → " in markdown
    )


def test_gpu_table_arch_coverage_and_per_gpu_errors():
    facts = load("probe-cpu-ci.json")
    facts.gpus = GpuFacts(
        driver_version="580.95.05",
        cuda_driver_version="13.0",
        devices=[
            GpuDevice(index=0, name="NVIDIA H200", cc_major=9, cc_minor=0, memory_total_mib=143771, uuid="GPU-1"),
            GpuDevice(index=1, name="NVIDIA RTX PRO 6000", cc_major=12, cc_minor=0, error="memory: GPU is lost"),
        ],
    )
    facts.torch.arch_list = ["sm_80", "sm_90"]
    found = problems(facts)
    assert "GPU 1 (NVIDIA RTX PRO 6000): NVML query failed: memory: GPU is lost" in found
    uncovered = [
        p for p in found if p.startswith("torch 2.13.0+cpu has no kernels for sm_120 (arch list: sm_80 sm_90)")
    ]
    assert len(uncovered) == 1 and "no kernel image is available for execution on the device" in uncovered[0]
    assert not any("no kernels for sm_90" in p for p in found)
    assert not any(p.startswith("no NVIDIA GPU") for p in found)
    text = render_facts(facts, "table")
    assert "140.4 GiB" in text and "sm_90: yes" in text and "sm_120: NO" in text and "GPU is lost" in text


def test_skew_and_component_notes_are_problems_other_notes_are_not():
    facts = load("probe-cpu-ci.json")
    facts.libraries.append(
        LibraryFacts(
            key="flashinfer",
            title="FlashInfer",
            version="0.7.4",
            import_name="flashinfer",
            distributions={"flashinfer-python": "0.7.4", "flashinfer-cubin": "0.7.3"},
            health=ImportHealth(status="ok"),
            notes=[
                "version skew: flashinfer-cubin 0.7.3 does not match flashinfer-python 0.7.4 (...)",
                "flashinfer reports __version__ 0.0.0+unknown; the installed distribution is 0.7.4",
            ],
        )
    )
    found = [p for p in problems(facts) if p.startswith("FlashInfer")]
    assert found == ["FlashInfer: version skew: flashinfer-cubin 0.7.3 does not match flashinfer-python 0.7.4 (...)"]
    assert "- FlashInfer: flashinfer reports __version__ 0.0.0+unknown" in render_facts(facts, "table")


def test_markdown_escapes_table_pipes():
    facts = load("probe-cpu-ci.json")
    facts.environment = {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN|FLASHINFER"}
    assert "FLASH_ATTN\\|FLASHINFER" in render_facts(facts, "markdown")


def test_a_huge_environment_value_is_shortened_in_tables_but_whole_in_json():
    # The H200 image's NVIDIA_REQUIRE_CUDA is about 2,000 characters of driver branches.
    import json
    from pathlib import Path

    from attn_preflight.probe.facts import Facts
    from attn_preflight.render.facts import render_facts

    data = json.loads((Path(__file__).parent / "fixtures" / "probe-h200.json").read_text())
    facts = Facts.from_dict(data)
    whole = facts.environment["NVIDIA_REQUIRE_CUDA"]
    assert len(whole) > 1000
    for fmt in ("table", "markdown"):
        text = render_facts(facts, fmt)
        assert whole not in text and whole[:100] in text and f"({len(whole)} characters" in text
    assert facts.to_dict()["environment"]["NVIDIA_REQUIRE_CUDA"] == whole
