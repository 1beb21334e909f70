"""vLLM's Gemma4Config (model_executor/models/config.py verify_and_update_config), release by release as read in the
vllm wheels 0.18.0-0.33.0: what it forces for Gemma-4's heterogeneous head sizes (256 sliding, 512 full) before
any backend is selected, and that vllm-auto-select then judges every layer."""

from __future__ import annotations

import pytest
from cli_run import check_json, finding
from packaging.version import Version

from attn_preflight.rules.engines.vllm.gemma4 import Gemma4Forcing, forcing
from tests.rule_fixtures import FIXTURES_DIR

GEMMA4 = "Gemma4ForConditionalGeneration"
MIXED = frozenset({256, 512})
H100, B200, RTX4090 = (9, 0), (10, 0), (8, 9)
TRITON = Gemma4Forcing(backend="TRITON_ATTN")
FA4 = Gemma4Forcing(fa_version=4)


@pytest.mark.parametrize(
    "release, cc, arch, heads, kv, backend, fa, expected",
    [
        ("0.18.0", RTX4090, GEMMA4, MIXED, "auto", None, None, None),  # no Gemma4Config yet
        ("0.19.0", RTX4090, GEMMA4, MIXED, "auto", None, None, TRITON),  # vllm#38891's slow TRITON_ATTN
        ("0.19.0", RTX4090, GEMMA4, MIXED, "auto", "FLASHINFER", None, None),  # a named backend is kept
        ("0.19.0", RTX4090, GEMMA4, frozenset({128, 256}), "auto", None, None, None),  # nothing above 256
        ("0.23.0", H100, GEMMA4, MIXED, "auto", None, None, TRITON),  # no FA4 branch before 0.24.0
        ("0.24.0", H100, GEMMA4, MIXED, "auto", None, None, FA4),
        ("0.24.0", H100, GEMMA4, MIXED, "auto", "FLASH_ATTN", None, FA4),
        ("0.24.0", H100, GEMMA4, MIXED, "auto", None, 3, None),  # a flash_attn_version given is kept
        ("0.24.0", RTX4090, GEMMA4, MIXED, "auto", None, None, TRITON),  # FA4 not supported on SM89
        ("0.24.0", H100, GEMMA4, frozenset({256, 1024}), "auto", None, None, TRITON),  # above FA4's 512
        ("0.30.0", H100, GEMMA4, MIXED, "fp8_e4m3", None, None, FA4),
        ("0.31.0", H100, GEMMA4, MIXED, "fp8_e4m3", None, None, None),  # per-layer FA3/FA4 on SM90 with FP8 KV
        ("0.31.0", B200, GEMMA4, MIXED, "fp8_e4m3", None, None, FA4),
        ("0.23.0", RTX4090, "Gemma4UnifiedForConditionalGeneration", MIXED, "auto", None, None, None),
        ("0.24.0", RTX4090, "Gemma4UnifiedForConditionalGeneration", MIXED, "auto", None, None, TRITON),
        ("0.33.0", RTX4090, "Gemma3ForConditionalGeneration", MIXED, "auto", None, None, None),
    ],
)
def test_gemma4config_forcing_per_release(release, cc, arch, heads, kv, backend, fa, expected):
    assert forcing(arch, heads, cc, kv, backend, fa, Version(release)) == expected


def auto_select(gpu, *flags):
    argv = [
        "--gpu",
        gpu,
        "--engine-version",
        "vllm==0.33.0",
        "--model",
        str(FIXTURES_DIR / "incident-models" / "gemma-4"),
    ]
    run, report = check_json([*argv, "--", "vllm", "serve", "google/gemma-4-31B-it", *flags])
    assert run.code in (0, 1), run.err
    return finding(report, "vllm-auto-select")


def test_every_layer_is_judged_on_the_backend_gemma4config_forces():
    # SM120 has no FA4: TRITON_ATTN for every layer, which stores no nvfp4 KV (FLASHINFER, which vLLM would pick
    # for the head-size-256 layers alone from 0.32.0, is never tried)
    forced = auto_select("RTX PRO 6000", "--kv-cache-dtype", "nvfp4")
    assert forced["status"] == "fail" and "Gemma4Config forces TRITON_ATTN" in forced["message"]
    h100 = auto_select("H100")
    assert h100["status"] == "pass" and "head sizes 256, 512" in h100["message"]


def test_with_nothing_forced_each_layer_selects_its_own_backend():
    # 0.31.0+: SM90 with an FP8 KV cache is left to per-layer selection (FA3 for 256, FA4 for 512)
    per_layer = auto_select("H100", "--kv-cache-dtype", "fp8_e4m3")
    assert per_layer["status"] == "pass" and "Gemma4Config" not in per_layer["message"]
    assert "head sizes 256, 512" in per_layer["message"]
