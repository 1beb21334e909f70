"""SGLang's silent backend replacements that rules/engines/sglang/resolve.py applies, so every rule judges what will run: the
resolved backends `check --format json` reports, against the code of the sglang release named (line numbers
of the release's wheel, e.g. as bench/wheel_ranges.py reads it into the user cache)."""

from __future__ import annotations

import pytest
from cli_run import check_json, finding

HRM_TEXT = "tests/fixtures/models/synthetic-hrm-text"
LLADA2 = ["sglang", "serve", "--model-path", "inclusionAI/LLaDA2.0-mini"]


def resolved(*argv):
    run, report = check_json(argv)
    assert run.code in (0, 1), run.err
    config = report["config"]
    return config["prefill_attention_backend"], config["decode_attention_backend"], config["rewritten_by_engine"]


def test_cutedsl_mla_prefill_is_filled_with_trtllm_mla():
    """overrides.py:1256-1257 (0.5.23): decode-only cutedsl_mla, no prefill backend named -> prefill trtllm_mla."""
    argv = ("--gpu", "B200", "--model", "deepseek-v3", "--attention-backend", "cutedsl_mla")
    assert resolved(*argv)[:2] == ("trtllm_mla", "cutedsl_mla")
    named = (*argv, "--prefill-attention-backend", "flashinfer")
    assert resolved(*named)[:2] == ("flashinfer", "cutedsl_mla")


def test_cutedsl_mla_before_the_backend_existed_is_not_filled():
    """cutedsl_mla and its fill arrive in 0.5.13 (server_args.py:2930-2976); 0.5.12 has neither."""
    argv = ("--gpu", "B200", "--model", "deepseek-v3", "--attention-backend", "cutedsl_mla")
    assert resolved(*argv, "--engine-version", "sglang==0.5.12")[:2] == ("cutedsl_mla", "cutedsl_mla")


@pytest.mark.parametrize("release", ["0.5.15", "0.5.23"])
def test_hrm_text_runs_triton_whatever_backend_is_asked(release):
    """model_runner.py:1150-1166 (0.5.15) and overrides.py:1773-1783 (0.5.23) set attention_backend = triton."""
    argv = (
        "--gpu",
        "H100",
        "--model",
        HRM_TEXT,
        "--attention-backend",
        "fa3",
        "--engine-version",
        f"sglang=={release}",
    )
    assert resolved(*argv) == ("triton", "triton", {"attention_backend": "fa3"})


def test_hrm_text_before_0_5_15_keeps_its_backend():
    argv = ("--gpu", "H100", "--model", HRM_TEXT, "--attention-backend", "fa3", "--engine-version", "sglang==0.5.14")
    assert resolved(*argv) == ("fa3", "fa3", None)


def test_dllm_with_cuda_graphs_runs_flashinfer_unless_graphs_are_off():
    """overrides.py:1709-1714 (0.5.23): decode CUDA graphs on -> --attention-backend flashinfer; off -> as given."""
    given = (*LLADA2, "--dllm-algorithm", "LowConfidence", "--attention-backend", "fa3")
    assert resolved("--gpu", "H100", "--", *given) == ("flashinfer", "flashinfer", {"attention_backend": "fa3"})
    assert resolved("--gpu", "H100", "--", *given, "--disable-cuda-graph") == ("fa3", "fa3", None)


def test_dllm_gemma4_renoise_keeps_fa4_from_0_5_22_only():
    """0.5.21 overrides.py _dllm_attention_backend forces the required triton on every phase; 0.5.22 keeps a
    supported backend (dllm/algorithm/gemma4_renoise.py: triton, fa4)."""
    launch = ("--", *LLADA2, "--dllm-algorithm", "Gemma4Renoise", "--attention-backend", "fa4")
    assert resolved("--gpu", "B200", "--engine-version", "sglang==0.5.22", *launch)[:2] == ("fa4", "fa4")
    assert resolved("--gpu", "B200", "--engine-version", "sglang==0.5.21", *launch) == (
        "triton",
        "triton",
        {"attention_backend": "fa4"},
    )


@pytest.mark.parametrize("gpu,backend,kv", [("B200", "trtllm_mha", "fp8_e4m3"), ("H100", "fa3", "auto")])
def test_minimax_m3_nvfp4_sets_page_128_and_its_blackwell_kv(gpu, backend, kv):
    """model_overrides/minimax_m3.py:93-123 (0.5.23): page 128; on Blackwell fp8_e4m3 for auto and trtllm_mha,
    elsewhere fa3 and the model dtype's KV."""
    launch = ["sglang", "serve", "--model-path", "tests/fixtures/models/synthetic-minimax-m3"]
    _, report = check_json(["--gpu", gpu, "--", *launch, "--quantization", "minimax_m3_nvfp4"])
    config = report["config"]
    assert (config["attention_backend"], config["kv_cache_dtype"], config["page_size"]) == (backend, kv, 128)
    _, plain = check_json(["--gpu", gpu, "--", *launch])
    assert (plain["config"]["kv_cache_dtype"], plain["config"]["page_size"]) == ("auto", None)


DSV4_FLASH = ["sglang", "serve", "--model-path", "tests/fixtures/models/DeepSeek-V4-Flash-Base", "--tp", "8"]


def dsv4_resolved(gpu, *flags, release="0.5.23"):
    _, report = check_json(["--gpu", gpu, "--engine-version", f"sglang=={release}", "--", *DSV4_FLASH, *flags])
    config = report["config"]
    return config["attention_backend"], config["page_size"], config["kv_cache_dtype"], config["rewritten_by_engine"]


# What bench/sglang_release_oracle.py answered for this config.json in 0.5.16, 0.5.20 and 0.5.23 on cc 9.0, 10.0
# and 12.0 (attention_backend, page_size, kv_cache_dtype); 0.5.12-0.5.14 assign the same in
# deepseek_v4_hook.py apply_deepseek_v4_defaults (:15-16 and :27-28 in 0.5.12).
@pytest.mark.parametrize("release", ["0.5.12", "0.5.14", "0.5.16", "0.5.20", "0.5.23"])
@pytest.mark.parametrize("gpu", ["H200", "B200", "RTX PRO 6000"])
def test_deepseek_v4_runs_dsv4_at_page_256_on_every_arch(gpu, release):
    assert dsv4_resolved(gpu, release=release) == ("dsv4", 256, "fp8_e4m3", None)


@pytest.mark.parametrize("gpu", ["H200", "B200"])
def test_deepseek_v4_replaces_a_named_backend_and_page_size(gpu):
    """The override's declaration wins over --attention-backend fa3 / flashinfer and --page-size 64 (oracle)."""
    assert dsv4_resolved(gpu, "--attention-backend", "fa3") == ("dsv4", 256, "fp8_e4m3", {"attention_backend": "fa3"})
    assert dsv4_resolved(gpu, "--attention-backend", "flashinfer", "--page-size", "64") == (
        "dsv4",
        256,
        "fp8_e4m3",
        {"attention_backend": "flashinfer", "page_size": "64"},
    )
    assert dsv4_resolved(gpu, "--kv-cache-dtype", "bfloat16")[2] == "bfloat16"


def test_deepseek_v4_equal_phase_backends_replace_dsv4():
    """_attention_backend_default runs after the override: equal phases win (oracle: fa3 on cc 9.0)."""
    flags = ("--prefill-attention-backend", "fa3", "--decode-attention-backend", "fa3")
    assert dsv4_resolved("H200", *flags) == ("fa3", 256, "fp8_e4m3", None)


def test_deepseek_v4_before_0_5_12_is_no_model_sglang_overrides():
    """0.5.11 has no deepseek_v4_hook.py: the generic default (fa3 on SM90) and no page size."""
    assert dsv4_resolved("H200", release="0.5.11") == ("fa3", None, "auto", None)


@pytest.mark.parametrize(
    ("strategy", "backend", "page"),
    [(("--mamba-radix-cache-strategy", "extra_buffer"), "trtllm_mha", 64), ((), "triton", 1)],
)
def test_qwen3_5_on_blackwell_runs_trtllm_mha_at_page_64_for_an_explicit_extra_buffer(strategy, backend, page):
    """model_overrides/qwen3_5.py:24-49 (0.5.23): trtllm_mha at page 64 unless the radix cache runs without an extra
    buffer or speculation; the auto strategy is resolved after the override. The oracle (sglang 0.5.23, B200) answers
    trtllm_mha / 64 for the explicit extra_buffer and triton / 1 without it."""
    launch = ["sglang", "serve", "--model-path", "qwen3.5-35b-a3b", *strategy]
    _, report = check_json(["--gpu", "B200", "--", *launch])
    assert (report["config"]["attention_backend"], report["config"]["page_size"]) == (backend, page)


KIMI_K3 = ["sglang", "serve", "--model-path", "tests/fixtures/models/synthetic-kimi-k3"]


def hybrid_defaults(gpu, command, *options):
    run, report = check_json(("--gpu", gpu, *options, "--", *command))
    assert run.code in (0, 1), run.err
    config = report["config"]
    flags = config["flags"]
    return (
        config["speculative_draft_attention_backend"],
        flags.get("linear_attn_verify_backend"),
        flags.get("linear_attn_decode_backend"),
    )


def test_kimi_dspark_on_sm100_drafts_on_trtllm_mha_and_verifies_on_nv_cutedsl():
    """kimi_k3_hook.py:18-55 (0.5.23, :15-45 in 0.5.17): with speculative decoding an unset verify backend is pinned
    to nv_cutedsl on any GPU; DSPARK's draft is trtllm_mha on SM100 only, a named one kept."""
    dspark = [*KIMI_K3, "--speculative-algorithm", "DSPARK"]
    assert hybrid_defaults("B200", dspark) == ("trtllm_mha", "nv_cutedsl", None)
    assert hybrid_defaults("H200", dspark) == (None, "nv_cutedsl", None)
    named = [*dspark, "--speculative-draft-attention-backend", "flashinfer", "--linear-attn-verify-backend", "triton"]
    assert hybrid_defaults("B200", named) == ("flashinfer", "triton", None)
    assert hybrid_defaults("B200", dspark, "--engine-version", "sglang==0.5.16") == (None, None, None)


def test_kimi_bf16_ssm_state_decodes_kda_on_triton_on_sm100():
    """kimi_k3_hook.py:59-79 (0.5.23): no decode backend, --mamba-ssm-dtype bfloat16, SM100 -> triton decode."""
    bf16 = [*KIMI_K3, "--mamba-ssm-dtype", "bfloat16"]
    assert hybrid_defaults("B200", bf16) == (None, None, "triton")
    assert hybrid_defaults("H200", bf16) == (None, None, None)
    assert hybrid_defaults("B200", [*bf16, "--linear-attn-decode-backend", "flashinfer"]) == (None, None, "flashinfer")


def test_glm5_next_speculative_verify_defaults_to_nv_cutedsl_on_sm100_from_0_5_22(tmp_path):
    """glm5_next_hook.py:18-35 (0.5.22-0.5.23): speculative decoding on SM100, no verify backend -> nv_cutedsl."""
    (tmp_path / "config.json").write_text('{"architectures": ["Glm5NextForConditionalGeneration"]}')
    eagle = ["sglang", "serve", "--model-path", str(tmp_path), "--speculative-algorithm", "EAGLE"]
    assert hybrid_defaults("B200", eagle)[1] == "nv_cutedsl"
    assert hybrid_defaults("H200", eagle)[1] is None
    assert hybrid_defaults("B200", eagle, "--engine-version", "sglang==0.5.21")[1] is None


def test_kimi_dspark_default_draft_is_not_judged_on_the_targets_mla_attention():
    """The filled trtllm_mha draft serves DSPARK's own dense-MQA checkpoint (kimi_k3_hook.py:41-44), not Kimi-K3's
    MLA layers: without that checkpoint spec-draft-backend cannot judge it (it would fail trtllm-mha-mla-model)."""
    run, report = check_json(("--gpu", "B200", "--", *KIMI_K3, "--speculative-algorithm", "DSPARK"))
    assert run.code in (0, 1), run.err
    judged = finding(report, "spec-draft-backend")
    assert judged["status"] == "unknown" and "DSPARK draft checkpoint" in judged["message"]
