"""vLLM 0.10.0-0.11.0's handling of VLLM_ATTENTION_BACKEND (rules/engines/vllm/legacy.py), each expectation read
in that release's wheel (`pip download --no-deps vllm==VERSION`): platforms/cuda.py get_attn_backend_cls,
engine/arg_utils.py _is_v1_supported_oracle, attention/selector.py, envs.py."""

import json

import pytest
from click.testing import CliRunner

from attn_preflight.cli import cli
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import legacy

A100, H100, B200 = (8, 0), (9, 0), (10, 0)
LLAMA = kb.VllmQuery(cc=A100, head_size=128)
DEEPSEEK = kb.VllmQuery(cc=A100, head_size=576, use_mla=True)  # kv_lora_rank 512 + rope 64


@pytest.mark.parametrize(
    "version, name, q, use_v1, runs, v0, error",
    [
        # the non-MLA V1 chain takes the name (cuda.py:321-323 in 0.10.2, :324-326 in 0.11.0)
        ("0.10.2", "FLASH_ATTN", LLAMA, None, "FLASH_ATTN", False, ""),
        ("0.10.2", "TRITON_ATTN_VLLM_V1", LLAMA, None, "TRITON_ATTN", False, ""),
        # not in the chain: the default (FLASH_ATTN from SM80, cuda.py:353-363 in 0.10.2)
        ("0.10.2", "FLASHINFER_VLLM_V1", LLAMA, None, "FLASH_ATTN", False, ""),
        ("0.11.0", "FLASHMLA", LLAMA, None, "FLASH_ATTN", False, ""),
        # ... and FLASHINFER first on SM 10.0 (cuda.py:336-347 in 0.10.2)
        ("0.10.2", "FLASH_ATTN_VLLM_V1", kb.VllmQuery(cc=B200, head_size=128), None, "FLASHINFER", False, ""),
        # not in V1_BACKENDS (arg_utils.py:1502-1521): V0, whose chain takes XFORMERS (cuda.py:387-389)
        ("0.10.2", "XFORMERS", LLAMA, None, "XFORMERS", True, ""),
        ("0.10.2", "XFORMERS", LLAMA, "1", None, False, "VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND"),
        # V0's chain does not take ROCM_FLASH (cuda.py:400-403 in 0.10.2)
        ("0.10.2", "ROCM_FLASH", LLAMA, None, None, True, "Invalid attention backend for cuda, with use_v1: False"),
        # 0.11.0: no V0 engine behind the fallback (entrypoints/openai/api_server.py:209)
        ("0.11.0", "IPEX", LLAMA, None, None, True, "AssertionError (assert envs.VLLM_USE_V1)"),
        ("0.11.0", "FLASH_ATTN", LLAMA, "0", None, True, "AssertionError (assert envs.VLLM_USE_V1)"),
        # VLLM_USE_V1=0: no oracle (arg_utils.py:1127-1129 in 0.10.2), V0's chain takes FLASH_ATTN (cuda.py:398-399)
        ("0.10.2", "FLASH_ATTN", LLAMA, "0", "FLASH_ATTN", True, ""),
        # 0.10.0 selects as if no name were set for a non-member (selector.py:21-32), after the V0 fallback
        ("0.10.0", "TRITON_ATTN", LLAMA, None, "FLASH_ATTN", True, ""),
        ("0.10.1", "TRITON_ATTN", LLAMA, None, None, True, "Invalid attention backend: 'TRITON_ATTN'."),
        ("0.11.0", "TRITON_ATTN_VLLM_V1", LLAMA, None, None, False, "Invalid value 'TRITON_ATTN_VLLM_V1' for"),
        # MLA, 0.10.0-0.10.1: any name but CUTLASS runs TRITON_MLA below block size 64 (cuda.py:209-216 in 0.10.0)
        ("0.10.0", "FLASH_ATTN", DEEPSEEK, None, "TRITON_MLA", False, ""),
        ("0.10.1", "FLASHINFER", DEEPSEEK, None, "TRITON_MLA", False, ""),
        # MLA, 0.10.2-0.11.0: the MLA chain takes MLA names only (cuda.py:236-298 in 0.10.2) ...
        ("0.10.2", "TRITON_MLA", DEEPSEEK, None, "TRITON_MLA", False, ""),
        ("0.11.0", "FLASHMLA", kb.VllmQuery(cc=H100, head_size=576, use_mla=True), None, "FLASHMLA", False, ""),
        # ... FlashMLA only at block size 64, which check_and_update_config forces on Hopper only (:170-174): off
        # Hopper the default runs, FlexAttention for head size 576 (:365-384), whose Impl takes **kwargs (not judged)
        ("0.10.2", "FLASHMLA", DEEPSEEK, None, None, False, ""),
        # ... CUTLASS_MLA as named, on an A100 its SM100 kernels were not built for: no release before 0.11.1 checks
        ("0.10.2", "CUTLASS_MLA", DEEPSEEK, None, None, False, ""),
        # ... and a non-MLA name reaches the non-MLA chain, whose Impl refuses q_lora_rank
        ("0.10.2", "FLASH_ATTN", DEEPSEEK, None, None, False, "TypeError: FlashAttentionImpl.__init__()"),
        ("0.11.0", "TRITON_ATTN", DEEPSEEK, None, None, False, "TypeError: TritonAttentionImpl.__init__()"),
        # the oracle's KV check: 0.10.2 takes fp8 with FLASHINFER, not with FLASH_ATTN (cuda.py:543-561)
        ("0.10.2", "FLASHINFER", kb.VllmQuery(cc=A100, head_size=128, kv_dtype="fp8"), None, "FLASHINFER", False, ""),
        ("0.10.2", "FLASH_ATTN", kb.VllmQuery(cc=H100, head_size=128, kv_dtype="fp8"), None, "FLASH_ATTN", True, ""),
        # 0.11.0 asks no KV question, but FlashAttentionImpl refuses fp8 off FA3 (flash_attn.py:408-412)
        ("0.11.0", "FLASH_ATTN", kb.VllmQuery(cc=A100, head_size=128, kv_dtype="fp8"), None, None, False, "Flash"),
    ],
)
def test_what_each_release_runs_for_a_name(version, name, q, use_v1, runs, v0, error):
    outcome = legacy.named(name, q, version, use_v1)
    assert (outcome.runs, outcome.v0) == (runs, v0)
    assert outcome.error.startswith(error) and bool(outcome.error) == bool(error)
    assert outcome.source.startswith("vllm-project/vllm@v")


def test_with_vllm_use_v1_the_oracle_refuses_a_non_member_before_the_selector():
    """0.10.2: _is_v1_supported_oracle runs at create_engine_config (arg_utils.py:1128) and raises for a name outside
    V1_BACKENDS when VLLM_USE_V1=1 (:1792-1795), before any layer reaches the selector (selector.py:196-202)."""
    assert (
        legacy.env_refusal("TRITON_ATTN", "0.10.2", "1")
        == "VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND=TRITON_ATTN."
    )
    assert legacy.env_refusal("TRITON_ATTN", "0.10.2").startswith("Invalid attention backend")


def test_a_named_backend_off_its_archs_is_not_judged_as_running():
    outcome = legacy.named("FLASHINFER_MLA", DEEPSEEK, "0.11.0")
    assert outcome.runs is None and "outside the 10.x" in outcome.note


def test_an_ignored_name_is_judged_as_what_runs():
    """vllm#22331's gpt-oss on an RTX 4090 and an A10: FLASH_ATTN_VLLM_V1 is no name of 0.10.1's V1 chain
    (cuda.py:274-295 in 0.10.1.1), so the default runs, TRITON_ATTN for a sink model off SM 9.0 (:313-315)."""
    argv = ["check", "--gpu", "A10", "--engine-version", "vllm==0.10.1", "--format", "json"]
    argv += ["--", "VLLM_ATTENTION_BACKEND=FLASH_ATTN_VLLM_V1", "vllm", "serve", "gpt-oss-20b"]
    result = CliRunner().invoke(cli, argv)
    data = json.loads(result.output)
    found = {f["rule_id"]: f for f in data["findings"]}
    assert found["vllm-sinks-unvalidated"]["status"] == "pass"
    ignored = found["vllm-named-backend-runs"]
    assert ignored["status"] == "warn" and "runs TRITON_ATTN" in ignored["message"]
    assert data["config"]["attention_backend"] == "TRITON_ATTN"


@pytest.mark.parametrize(
    "version",
    [
        "0.10.0",
        "0.10.1",
        "0.10.2",
        "0.11.0",
        "0.11.2",
        "0.12.0",
        "0.13.0",
        "0.15.0",
        "0.18.0",
        "0.20.0",
        "0.26.0",
        "0.33.0",
    ],
)
def test_no_mla_backend_is_offered_for_a_model_without_mla(version):
    """No release runs an MLA backend for non-MLA layers: before 0.11.1 the non-MLA chain of get_attn_backend_cls
    returns no MLA class, from 0.11.1 validate_configuration refuses one ("non-MLA not supported")."""
    argv = ["check", "--gpu", "A100", "--model", "llama-3.1-8b", "--engine", "vllm", "--engine-version"]
    argv += [f"vllm=={version}", "--attention-backend", "FLASHINFER_MLA", "--kv-cache-dtype", "fp8", "--format", "json"]
    data = json.loads(CliRunner().invoke(cli, argv).output)
    offered = {a["value"] for a in data["alternatives"] if a["option"] != "--kv-cache-dtype"}
    assert offered and not offered & kb.MLA_BACKENDS, offered


def test_an_unknown_name_lists_every_name_of_every_release():
    argv = ["check", "--gpu", "A100", "--engine-version", "vllm==0.10.2", "--"]
    result = CliRunner().invoke(cli, [*argv, "VLLM_ATTENTION_BACKEND=QQQQQQQQQQQQQQ", "vllm", "serve", "llama-3.1-8b"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    listed = set(result.output.split("valid: ", 1)[1].strip().split(", "))
    every = frozenset().union(*kb.ENUM_BY_RELEASE.values())  # the enum of each wheel, 0.10.0-0.33.0
    assert every <= listed, sorted(every - listed)


def test_alternatives_are_spelled_as_the_release_takes_them():
    """0.10.2's _Backend has no TRITON_ATTN: its V1 chain takes TRITON_ATTN_VLLM_V1 (platforms/cuda.py:318-320), the
    backend that serves gpt-oss's sinks off Hopper (vllm#22331, an RTX 4090)."""
    argv = ["check", "--gpu", "RTX 4090", "--engine-version", "vllm==0.10.2", "--format", "json"]
    argv += ["--", "VLLM_ATTENTION_BACKEND=FLASH_ATTN", "vllm", "serve", "gpt-oss-20b"]
    data = json.loads(CliRunner().invoke(cli, argv).output)
    offered = [a["value"] for a in data["alternatives"] if a["option"] == "VLLM_ATTENTION_BACKEND"]
    assert "TRITON_ATTN_VLLM_V1" in offered and "TRITON_ATTN" not in offered
    assert data["correction"]["command"].startswith("VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1 ")
