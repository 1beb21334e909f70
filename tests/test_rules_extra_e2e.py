"""`attn-preflight check` end to end for the model-specific, speculative, MLA-backend and install rules."""

import json

from click.testing import CliRunner

from attn_preflight.cli import cli
from tests.rule_fixtures import FIXTURES_DIR
from tests.rule_fixtures.install import facts_file
from tests.rule_fixtures.model_specific import model_dir


def check(*argv):
    return CliRunner().invoke(cli, ["check", *argv])


def findings(*argv):
    result = check("--format", "json", *argv)
    data = json.loads(result.output)
    return result, data, {f["rule_id"]: f for f in data["findings"]}


def test_trtllm_mha_on_sm120_follows_the_sglang_release():
    argv = ("--gpu", "RTX 5090", "--model", "llama-3.1-8b", "--attention-backend", "trtllm_mha")
    newest, _, now = findings(*argv)
    assert now["trtllm-mha-arch"]["status"] == "pass"
    assert "newest known behaviour" in now["trtllm-mha-arch"]["note"]
    assert newest.exit_code == 0

    old, data, then = findings(*argv, "--engine-version", "sglang==0.5.18")
    assert old.exit_code == 1 and data["verdict"] == "fail"
    assert then["trtllm-mha-arch"]["status"] == "fail"
    assert "sglang 0.5.18" in then["trtllm-mha-arch"]["message"]
    # only prefill was refused then: decode may stay on trtllm_mha
    assert then["trtllm-mha-arch"]["fix"] == ["--prefill-attention-backend flashinfer"]


def test_pasted_gpt_oss_launch_on_flashinfer_fails_with_the_upstream_message():
    result = check(
        "--gpu",
        "H100",
        "--",
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "openai/gpt-oss-20b",
        "--attention-backend",
        "flashinfer",
        "--tp",
        "2",
    )
    assert result.exit_code == 1
    assert "GptOssForCausalLM requires one of ['triton', 'trtllm_mha', 'fa3', 'fa4'" in result.output
    assert "--attention-backend fa3" in result.output


def test_install_rules_are_skipped_for_a_gpu_profile_never_passed():
    _, _, by_id = findings("--gpu", "B200", "--model", "llama-3.1-8b", "--attention-backend", "fa4")
    install = {rule_id: f for rule_id, f in by_id.items() if rule_id.startswith("install-")}
    assert len(install) == 11
    assert {f["status"] for f in install.values()} == {"skip"}
    assert all("--facts" in f["message"] for f in install.values())


def test_broken_cutlass_dsl_in_a_saved_report_fails_fa4():
    result, data, by_id = findings(
        "--facts", facts_file("b200-cutlass-dsl-broken"), "--model", "llama-3.1-8b", "--attention-backend", "fa4"
    )
    assert result.exit_code == 1 and data["verdict"] == "fail"
    finding = by_id["install-fa4-library"]
    assert finding["status"] == "fail"
    assert "nvidia-cutlass-dsl installed 4.8.0 but its import error" in finding["message"]
    assert finding["prevents"].startswith("FlashAttention-4 CUTE is not available.")


def test_healthy_report_passes_the_install_rules_it_can_judge():
    result, data, by_id = findings(
        "--facts", facts_file("h100-ok"), "--model", "llama-3.1-8b", "--attention-backend", "fa3"
    )
    assert result.exit_code == 0
    judged = {rule_id: f["status"] for rule_id, f in by_id.items() if rule_id.startswith("install-")}
    assert judged == {
        "install-fa3-library": "pass",
        "install-no-cuda-gpu": "pass",
        "install-torch-cpu-only": "pass",
        "install-torch-cuda-version": "pass",
        "install-torch-arch": "pass",
        "install-fa4-library": "skip",
        "install-flashinfer-library": "skip",
        "install-flashinfer-mamba": "skip",
        "install-hpc-ops-library": "skip",
        "install-kimi-k3-dcp-flashinfer": "skip",
        "install-kernel-arch": "pass",  # sgl-kernel's common_ops judged from its release's wheel table
    }


def test_page_size_snap_is_a_warning_and_strict_turns_it_into_exit_1():
    argv = (
        "--gpu",
        "B200",
        "--model",
        "deepseek-v3",
        "--attention-backend",
        "trtllm_mla",
        "--page-size",
        "16",
        "--tp",
        "8",
    )
    result, data, by_id = findings(*argv)
    assert result.exit_code == 0 and data["verdict"] == "warn"
    assert by_id["trtllm-mla-page"]["status"] == "warn"
    assert by_id["trtllm-mla-page"]["fix"] == ["--page-size 64"]
    assert check(*argv, "--strict").exit_code == 1


def test_eagle_topk_without_num_steps_in_a_pasted_command():
    launch = (
        "--gpu",
        "H100",
        "--",
        "sglang",
        "serve",
        "--model-path",
        "llama-3.1-8b",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-eagle-topk",
        "4",
        "--attention-backend",
        "fa3",
    )
    assert check(*launch).exit_code == 1
    fixed = check(*launch, "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8")
    assert fixed.exit_code == 0, fixed.output


def test_hybrid_gdn_fa4_refused_on_sm120_only():
    argv = ("--model", "qwen3-next-80b-a3b", "--attention-backend", "fa4")
    _, _, on_5090 = findings("--gpu", "RTX 5090", *argv)
    _, _, on_b300 = findings("--gpu", "B300", *argv)
    assert on_5090["model-hybrid-gdn-blackwell"]["status"] == "fail"
    assert on_b300["model-hybrid-gdn-blackwell"]["status"] == "pass"


def test_local_model_directory_without_backend_is_judged_on_sglangs_model_default():
    result, _, by_id = findings("--gpu", "A100", "--model", model_dir("olmo-3"))
    assert by_id["model-olmo-flashinfer"]["status"] == "pass"
    assert "fa3" in by_id["model-olmo-flashinfer"]["message"]
    refused = check("--gpu", "A100", "--model", model_dir("olmo-3"), "--attention-backend", "flashinfer")
    assert refused.exit_code == 1
    assert "FlashInfer backend can significantly degrade the performance of Olmo3 models." in refused.output


def test_explain_states_the_version_history():
    result = CliRunner().invoke(cli, ["explain", "trtllm-mha-arch"])
    assert result.exit_code == 0
    assert "0.5.19" in result.output and "0.5.10" in result.output
    assert "TRTLLM MHA backend for prefill requires Hopper (SM90)" in result.output


def test_mla_rules_admit_sm110_from_sglang_0_5_9():
    """is_blackwell (utils/common.py): majors 10 and 12 through 0.5.8, 10, 11 and 12 since 0.5.9."""
    thor = ("--gpu", "Jetson Thor", "--model", "deepseek-v3")
    _, _, now = findings(*thor, "--attention-backend", "trtllm_mla")
    _, _, then = findings(*thor, "--attention-backend", "trtllm_mla", "--engine-version", "sglang==0.5.8")
    assert now["trtllm-mla-arch"]["status"] == "pass" and "11.x" in now["trtllm-mla-arch"]["message"]
    assert then["trtllm-mla-arch"]["status"] == "fail" and then["trtllm-mla-arch"]["fix"] == [
        "--attention-backend triton"
    ]
    # admitted is not served: trtllm_mla's prefill kernel (FlashInfer's TllmGenFmhaRunner) is SM100/SM103 only, so a
    # refused MLA config is pointed to triton on Thor in either release
    assert now["trtllm-mla-sm100-prefill"]["status"] == "fail"
    _, _, now = findings(*thor, "--attention-backend", "flashmla")
    _, _, then = findings(*thor, "--attention-backend", "flashmla", "--engine-version", "sglang==0.5.8")
    assert now["flashmla-arch"]["fix"] == then["flashmla-arch"]["fix"] == ["--attention-backend triton"]


def test_fa4_on_the_recorded_h200_reports():
    """Real probe reports from the H200: a healthy FA4 stack, and one whose nvidia-cutlass-dsl .pth never ran."""
    argv = ("--model", "llama-3.1-8b", "--attention-backend", "fa4")
    healthy, data, by_id = findings("--facts", str(FIXTURES_DIR / "probe-h200.json"), *argv)
    assert healthy.exit_code == 0 and data["verdict"] == "pass"
    assert by_id["install-fa4-library"]["status"] == "pass"
    assert "vendored FA4" in by_id["install-fa4-library"]["message"]

    broken, data, by_id = findings("--facts", str(FIXTURES_DIR / "probe-h200-nopth.json"), *argv)
    assert broken.exit_code == 1 and data["verdict"] == "fail"
    finding = by_id["install-fa4-library"]
    assert finding["status"] == "fail"
    assert "nvidia-cutlass-dsl installed 4.8.1 but its import error" in finding["message"]
    assert finding["message"].count("nvidia_cutlass_dsl_packages.pth") == 1, "the shared diagnosis is said once"
    assert finding["fix"] == ["pip install --force-reinstall 'nvidia-cutlass-dsl[cu13]' quack-kernels"]
    table = check("--facts", str(FIXTURES_DIR / "probe-h200-nopth.json"), *argv)
    assert table.exit_code == 1 and "install-fa4-library" in table.output


def test_fa4_needs_the_pip_flash_attn_4_only_where_sglang_imports_it():
    argv = ("--facts", facts_file("b200-no-flash-attn-4"), "--model", "llama-3.1-8b", "--attention-backend", "fa4")
    for release, status in (("0.5.9", "pass"), ("0.5.15", "fail"), ("0.5.16", "pass"), ("0.5.23", "pass")):
        _, _, by_id = findings(*argv, "--engine-version", f"sglang=={release}")
        assert by_id["install-fa4-library"]["status"] == status, release
