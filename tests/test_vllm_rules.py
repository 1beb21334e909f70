"""vLLM rules end to end: pasted `vllm serve` commands through the CLI, and the knowledge they rest on."""

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from attn_preflight.cli import cli
from attn_preflight.rules.core.registry import all_rules
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import changes, legacy
from attn_preflight.rules.engines.vllm import select as vllm_select
from tests.rule_fixtures import all_fixtures, run_case

DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "torch_dtype": "bfloat16",
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    # the sizes (memory rules): FP8 weights of 671B, which fit H100s at TP 8 x PP 2
    "num_hidden_layers": 61,
    "q_lora_rank": 1536,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "first_k_dense_replace": 3,
    "vocab_size": 129280,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}
DEEPSEEK_LAYOUT = ("--tensor-parallel-size", "8", "--pipeline-parallel-size", "2")
LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "torch_dtype": "bfloat16",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}


@pytest.fixture
def model_dir(tmp_path):
    def make(config, name="m"):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "config.json").write_text(json.dumps(config))
        return str(directory)

    return make


def check(*argv):
    return CliRunner().invoke(cli, ["check", *argv])


def check_json(*argv):
    result = check("--format", "json", *argv)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def finding(data, rule_id):
    return next(f for f in data["findings"] if f["rule_id"] == rule_id)


# --- pasted commands through the CLI ----------------------------------------------------------------------


def test_flashinfer_mla_on_h100_fails_with_vllm_reason_and_fix(model_dir):
    code, data = check_json(
        "--gpu",
        "H100",
        "--",
        "vllm",
        "serve",
        model_dir(DEEPSEEK_V3),
        "--attention-backend",
        "FLASHINFER_MLA",
        *DEEPSEEK_LAYOUT,
    )
    assert code == 1 and data["verdict"] == "fail"
    assert data["config"]["engine"] == "vllm" and data["config"]["attention_backend"] == "FLASHINFER_MLA"
    cc = finding(data, "vllm-compute-capability")
    assert cc["status"] == "fail"
    assert cc["prevents"] == "compute capability not supported"
    assert "compute capability 10.x" in cc["message"]
    assert cc["fix"] == ["--attention-backend FLASH_ATTN_MLA"]
    assert "vllm-project/vllm@v0.33.0" in cc["source"]
    alternatives = {(a["option"], a["value"]): a["verdict"] for a in data["alternatives"]}
    assert alternatives[("--attention-backend", "FLASH_ATTN_MLA")] == "pass"
    assert ("--attention-backend", "FLASHINFER_MLA") not in alternatives
    assert not any(a["value"] in ("fa3", "flashinfer", "triton") for a in data["alternatives"]), (
        "alternatives for a vLLM command are vLLM backends"
    )


def test_the_suggested_fix_passes(model_dir):
    model = model_dir(DEEPSEEK_V3)
    _, bad = check_json(
        "--gpu", "H100", "--", "vllm", "serve", model, "--attention-backend", "CUTLASS_MLA", *DEEPSEEK_LAYOUT
    )
    fix = finding(bad, "vllm-compute-capability")["fix"]
    assert fix and fix[0].startswith("--attention-backend ")
    code, good = check_json("--gpu", "H100", "--", "vllm", "serve", model, *fix[0].split(), *DEEPSEEK_LAYOUT)
    assert code == 0 and good["verdict"] == "pass"


def test_env_var_backend_is_judged_and_warned_as_ignored(model_dir):
    command = ["--", "VLLM_ATTENTION_BACKEND=FLASH_ATTN", "vllm", "serve", model_dir(LLAMA)]
    code, data = check_json("--gpu", "H100", *command)
    assert code == 0 and data["verdict"] == "warn"
    # vLLM >= 0.15 ignores the variable: what runs is its own choice, judged as such (issue 23)
    assert data["config"]["attention_backend"] is None
    assert data["config"]["rewritten_by_engine"] == {"attention_backend": "FLASH_ATTN"}
    env = finding(data, "vllm-env-backend")
    assert env["status"] == "warn"
    assert env["prevents"] == "Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND"
    assert env["fix"] == ["--attention-backend FLASH_ATTN", "unset VLLM_ATTENTION_BACKEND"]
    assert finding(data, "vllm-auto-select")["status"] == "pass"
    assert check("--gpu", "H100", "--strict", *command).exit_code == 1


def test_env_var_backend_on_vllm_before_the_flag_is_the_way_to_choose(model_dir):
    code, data = check_json(
        "--gpu",
        "H100",
        "--engine-version",
        "vllm==0.12.0",
        "--",
        "VLLM_ATTENTION_BACKEND=FLASH_ATTN",
        "vllm",
        "serve",
        model_dir(LLAMA),
    )
    assert finding(data, "vllm-env-backend")["status"] == "skip"  # the rule holds for vllm>=0.13.0


def test_env_var_backend_with_sinks_on_a100_fails(model_dir):
    gpt_oss = {**LLAMA, "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "head_dim": 64}
    command = ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", "vllm", "serve", model_dir(gpt_oss)]
    code, data = check_json("--gpu", "A100", "--engine-version", "vllm==0.14.1", "--", *command)
    assert code == 1  # 0.14 still reads the variable
    sinks = finding(data, "vllm-sinks")
    assert sinks["status"] == "fail" and sinks["prevents"] == "attention sinks not supported"
    assert sinks["fix"] == ["--attention-backend TRITON_ATTN"]
    code, data = check_json("--gpu", "A100", "--", *command)  # 0.15+ ignores it: no FAIL beside "ignored"
    assert finding(data, "vllm-sinks")["status"] != "fail"
    assert finding(data, "vllm-env-backend")["status"] == "warn"


def test_auto_backend_runs_vllms_selection(model_dir):
    code, data = check_json(
        "--gpu", "RTX 5090", "--", "vllm", "serve", model_dir(DEEPSEEK_V3), "--attention-backend", "auto"
    )
    assert data["config"]["attention_backend"] is None
    auto = finding(data, "vllm-auto-select")
    assert auto["status"] == "pass" and "TRITON_MLA" in auto["message"]
    assert finding(data, "vllm-compute-capability")["status"] == "skip"


def test_no_valid_backend_names_every_reason(model_dir):
    code, data = check_json("--gpu", "A100", "--", "vllm", "serve", model_dir(DEEPSEEK_V3), "--kv-cache-dtype", "nvfp4")
    assert code == 1
    auto = finding(data, "vllm-auto-select")
    assert auto["status"] == "fail"
    assert auto["prevents"].startswith("No valid attention backend found for cuda with")
    assert "TRITON_MLA: kv_cache_dtype not supported" in auto["message"]
    assert "--kv-cache-dtype auto" in auto["fix"]


def test_python_module_launcher_and_attention_config_flags(model_dir):
    code, data = check_json(
        "--gpu",
        "A100",
        "--",
        "python3",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        model_dir(LLAMA),
        "--attention-config.backend=FLASH_ATTN",
        "--attention-config.flash_attn_version=3",
    )
    assert code == 1
    assert data["config"]["attention_backend"] == "FLASH_ATTN"
    version = finding(data, "vllm-flash-attn-version")
    assert version["status"] == "fail"
    assert "FA3 is only supported on devices with compute capability 9.x" in version["message"]


@pytest.mark.parametrize("name", ["FLASH_ATTENTION", "flash-attn", "XFORMER"])
def test_unknown_backend_is_a_usage_error_with_did_you_mean(model_dir, name):
    result = check("--gpu", "H100", "--", "vllm", "serve", model_dir(LLAMA), "--attention-backend", name)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "unknown vllm attention backend" in result.output


def test_vllm_kv_dtypes_are_vllms_own(model_dir):
    model = model_dir(LLAMA)
    ok = check("--gpu", "B200", "--", "vllm", "serve", model, "--kv-cache-dtype", "nvfp4")
    assert ok.exit_code in (0, 1), ok.output
    bad = check("--gpu", "B200", "--", "vllm", "serve", model, "--kv-cache-dtype", "mxfp8")
    assert bad.exit_code == 2 and "unknown vllm KV-cache dtype" in bad.output


def test_removed_backend_depends_on_the_installed_vllm(model_dir):
    command = ["--", "vllm", "serve", model_dir(LLAMA), "--attention-backend", "TREE_ATTN"]
    code, newest = check_json("--gpu", "H100", *command)
    assert code == 1
    name = finding(newest, "vllm-backend-name")
    assert name["status"] == "fail" and "gone in 0.21.0" in name["message"]
    _, old = check_json("--gpu", "H100", "--engine-version", "vllm==0.20.0", *command)
    assert finding(old, "vllm-backend-name")["status"] == "pass"
    _, gone = check_json("--gpu", "H100", "--engine-version", "vllm==0.23.0", *command)
    assert finding(gone, "vllm-backend-name")["status"] == "fail"
    _, between = check_json("--gpu", "H100", "--engine-version", "vllm==0.20.5", *command)  # not read: 0.20.3+
    assert finding(between, "vllm-backend-name")["status"] == "unknown"


def test_older_vllm_declares_older_capabilities(model_dir):
    command = ["--", "vllm", "serve", model_dir(LLAMA), "--attention-backend", "FLASHINFER", "--dtype", "half"]
    _, newest = check_json("--gpu", "T4", *command)
    assert finding(newest, "vllm-compute-capability")["status"] == "fail"
    _, old = check_json("--gpu", "T4", "--engine-version", "vllm==0.20.0", *command)
    assert finding(old, "vllm-compute-capability")["status"] == "pass"


def test_engines_do_not_cross(model_dir):
    _, vllm_data = check_json("--gpu", "H100", "--", "vllm", "serve", model_dir(LLAMA))
    assert all(
        f["rule_id"].startswith("vllm-")
        for f in vllm_data["findings"]
        if f["rule_id"].startswith(("fa3-", "fa4-", "kv-", "vllm-"))
    )
    assert not any(f["rule_id"].startswith(("fa3-", "fa4-")) for f in vllm_data["findings"])
    _, sglang_data = check_json("--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa3")
    assert not any(f["rule_id"].startswith("vllm-") for f in sglang_data["findings"])


def test_markdown_report_of_a_vllm_command(model_dir):
    result = check(
        "--gpu",
        "B200",
        "--format",
        "markdown",
        "--",
        "vllm",
        "serve",
        model_dir(DEEPSEEK_V3),
        "--attention-backend",
        "FLASHMLA",
    )
    assert result.exit_code == 1
    assert "vllm-flashmla-dense-hopper" in result.output
    assert "FlashMLA Dense is only supported on Hopper devices." in result.output


def test_vllm_findings_say_when_vllm_would_fail(model_dir):
    """vllm 0.33.0: validate_configuration rejects at backend selection (start-up), TritonMLAImpl.__init__ at
    backend construction (init), FLASH_ATTN with no FA version at its first forward (runtime)."""
    model = model_dir(DEEPSEEK_V3)
    _, data = check_json("--gpu", "H100", "--", "vllm", "serve", model, "--attention-backend", "FLASHINFER_MLA")
    assert finding(data, "vllm-compute-capability")["stage"] == "startup"
    _, data = check_json(
        "--gpu", "A100", "--", "vllm", "serve", model, "--attention-backend", "TRITON_MLA", "--kv-cache-dtype", "fp8"
    )
    assert finding(data, "vllm-triton-mla-fp8-kv-arch")["stage"] == "init"
    explained = CliRunner().invoke(cli, ["explain", "vllm-flash-attn-version"]).output
    assert "without it, the engine fails at the first forward pass" in explained


def test_every_vllm_rule_cites_vllm_and_a_version_range():
    rules = [r for r in all_rules() if r.engine == "vllm"]
    assert len(rules) >= 20
    for r in rules:
        assert r.id.startswith(("vllm-", "kernel-vllm-"))  # kernel-vllm-*: the dispatch pack (rules/kernels)
        assert r.versions.startswith("vllm>=")
        assert "vllm" in r.source.lower()


# --- the knowledge, against what vLLM 0.33.0's code does ----------------------------------------------------


@pytest.mark.parametrize(
    "cc,expected",
    [((8, 0), 2), ((8, 9), 2), ((9, 0), 3), ((10, 0), 4), ((10, 3), 4), ((11, 0), 2), ((12, 0), 2), ((12, 1), 2)],
)
def test_default_flash_attn_version_per_arch(cc, expected):
    assert kb.flash_attn_version(cc).version == expected


@pytest.mark.parametrize(
    "cc,requested,expected",
    [
        ((8, 0), 3, None),
        ((12, 0), 4, None),
        ((9, 0), 4, 4),
        ((11, 0), 4, 4),
        ((10, 0), 3, 4),  # FA3 on Blackwell becomes FA4
        ((12, 0), 3, 2),  # ... or FA2 where FA4 does not run
    ],
)
def test_requested_flash_attn_version(cc, requested, expected):
    assert kb.flash_attn_version(cc, requested=requested).version == expected


@pytest.mark.parametrize(
    "head_size,head_size_v,expected",
    [(64, None, 4), (128, None, 4), (256, None, 4), (192, 128, 4), (192, 192, 2), (160, None, 2)],
)
def test_fa4_blackwell_head_sizes(head_size, head_size_v, expected):
    resolution = kb.flash_attn_version((10, 0), head_size, head_size_v)
    assert resolution.version == expected
    if expected == 2:
        assert "TMEM capacity" in resolution.notes[-1]


def test_fa3_on_hopper_upgrades_to_fa4_above_256():
    assert kb.flash_attn_version((9, 0), 512).version == 4
    assert kb.flash_attn_version((9, 0), 256).version == 3


# get_flash_attn_version on a B200 as FlashAttentionImpl calls it (no head_size_v), release by release:
# 0.17.x fa_utils.py:117-128 (FA2 above 128); 0.18.0 :130-142 (head_size != 192 kept); 0.27.0 :258-270 (256 kept,
# 192 only with head_size_v 128); 0.28.0 :173-178 (256 "temporarily disabled") and :185-197; 0.29.0 :178-209 (the
# hd256 kernel)
@pytest.mark.parametrize(
    "release,head_size,expected,logged",
    [
        ("0.17.0", 128, 4, None),
        ("0.17.1", 192, 2, "TMEM capacity"),
        ("0.18.0", 192, 4, None),
        ("0.26.0", 192, 4, None),
        ("0.27.0", 192, 2, "TMEM capacity"),
        ("0.33.0", 192, 2, "TMEM capacity"),
        ("0.26.0", 256, 2, "TMEM capacity"),
        ("0.27.1", 256, 4, None),
        ("0.28.0", 256, 2, "temporarily disabled for head_size=256"),
        ("0.29.0", 256, 4, None),
    ],
)
def test_fa4_blackwell_head_sizes_follow_the_release(release, head_size, expected, logged):
    resolution = kb.flash_attn_version((10, 0), head_size, release=release)
    assert resolution.version == expected
    if logged:
        assert logged in resolution.notes[-1]


def test_fa3_on_hopper_upgrades_to_fa4_above_256_from_0_20():
    """FlashAttentionImpl upgrades from 0.20.0 (flash_attn.py:638-645), fa_utils from 0.21.0 (:119-140)."""
    assert kb.flash_attn_version((9, 0), 512, release="0.19.1").version == 3
    assert kb.flash_attn_version((9, 0), 512, release="0.20.0").version == 4
    assert kb.flash_attn_version((9, 0), 512, release="0.21.0").version == 4


def test_validate_gives_every_reason_in_vllms_order():
    backend = kb.BY_NAME["CUTLASS_MLA"]
    query = kb.VllmQuery(cc=(9, 0), head_size=128, dtype="float32", kv_dtype="fp8_e5m2", block_size=64, has_sink=True)
    assert kb.validate(backend, query) == [
        kb.R_HEAD_SIZE,
        kb.R_DTYPE,
        kb.R_KV_DTYPE,
        kb.R_BLOCK_SIZE,
        kb.R_NON_MLA,
        kb.R_SINKS,
        kb.R_CC,
    ]


@pytest.mark.parametrize(
    "release,query,expected",
    [  # platforms/cuda.py _get_backend_priorities as each wheel reads (bench/vllm_priorities.py runs them all)
        ("0.14.1", dict(cc=(10, 0), use_mla=True), ("CUTLASS_MLA", "FLASHINFER_MLA")),  # :45-54
        ("0.15.0", dict(cc=(10, 0), use_mla=True), ("FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA")),
        ("0.21.0", dict(cc=(10, 0), use_mla=True), ("FLASHINFER_MLA", "TOKENSPEED_MLA", "CUTLASS_MLA")),
        ("0.23.0", dict(cc=(12, 0), use_mla=True), ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA")),
        ("0.24.0", dict(cc=(12, 0), use_mla=True), ("TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120")),
        ("0.19.1", dict(cc=(9, 0)), ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION")),
        ("0.20.0", dict(cc=(9, 0)), ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT")),
    ],
)
def test_priority_lists_follow_the_release(release, query, expected):
    listed = vllm_select.priorities(kb.VllmQuery(head_size=576 if query.get("use_mla") else 128, **query), release)
    assert listed[: len(expected)] == expected


@pytest.mark.parametrize(
    "release,tail",
    [  # the sparse MLA backends that end the SM10x list, for 16 heads and a bf16 KV cache
        ("0.16.0", ("FLASHMLA_SPARSE",)),
        ("0.25.0", ("FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")),
        ("0.33.0", ("FLASH_ATTN_MLA_SPARSE_FA4", "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")),
    ],
)
def test_sparse_mla_priorities_follow_the_release(release, tail):
    q = kb.VllmQuery(cc=(10, 0), head_size=576, use_mla=True, use_sparse=True, num_heads=16)
    assert vllm_select.priorities(q, release)[-len(tail) :] == tail
    assert vllm_select.priorities(q, release)[-len(tail) - 1] == "TRITON_MLA"


@pytest.mark.parametrize(
    "release,expected",
    [  # the texts as each wheel has them (validate_configuration; FlashInferMLABackend.supports_combination)
        ("0.14.1", ["sink setting not supported"]),  # v1/attention/backend.py:243; no qk_nope check yet
        (
            "0.17.1",
            ["sink setting not supported", "FlashInfer MLA kernel requires qk_nope_head_dim == 128, but got 96"],
        ),
        (
            "0.18.0",
            [
                "attention sinks not supported",
                "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128], but got 96",
            ],
        ),
        (
            "0.19.0",
            [
                "attention sinks not supported",
                "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got 96",
            ],
        ),
    ],
)
def test_reason_texts_follow_the_release(release, expected):
    backend = changes.backend_at("FLASHINFER_MLA", release)
    query = kb.VllmQuery(cc=(10, 0), head_size=576, use_mla=True, has_sink=True, qk_nope_head_dim=96)
    assert kb.validate(backend, query, kb.release_for(release)) == expected


@pytest.mark.parametrize(
    "cc,mla,expected",
    [
        ((9, 0), False, "FLASH_ATTN"),
        ((10, 0), False, "FLASHINFER"),
        ((8, 0), False, "FLASH_ATTN"),
        ((7, 5), False, "TRITON_ATTN"),
        ((9, 0), True, "FLASH_ATTN_MLA"),
        ((10, 0), True, "FLASHINFER_MLA"),
        ((12, 0), True, "TRITON_MLA"),
        ((8, 6), True, "TRITON_MLA"),
    ],
)
def test_selection_per_arch(cc, mla, expected):
    query = kb.VllmQuery(
        cc=cc,
        head_size=576 if mla else 128,
        dtype="float16" if cc < (8, 0) else "bfloat16",
        use_mla=mla,
        qk_nope_head_dim=128 if mla else None,
    )
    assert vllm_select.select(query).chosen == expected


def test_enum_history():
    assert kb.name_in_release("FLASH_ATTN", None) is True
    assert kb.name_in_release("TREE_ATTN", "0.20.0") is True
    assert kb.name_in_release("TREE_ATTN", "0.26.0") is False
    assert kb.name_in_release("TOKENSPEED_MLA", "0.20.0") is False
    assert kb.name_in_release("TOKENSPEED_MLA", "0.23.1") is True  # 0.23.0 and 0.24.0 both have it
    assert kb.name_in_release("TREE_ATTN", "0.20.5") is None  # in 0.20.2, gone in 0.21.0: not read between
    assert kb.name_in_release("FLASH_ATTN", "0.9.2") is None  # older than the oldest read


def test_changes_apply_only_inside_their_range():
    assert (7, 5) in changes.backend_at("FLASHINFER", "0.20.0").archs
    assert (7, 5) not in changes.backend_at("FLASHINFER", "0.26.0").archs
    assert (7, 5) not in changes.backend_at("FLASHINFER", None).archs
    assert changes.backend_at("FLASHMLA_SPARSE", "0.30.0").head_sizes.accepts(512, (9, 0)) is False
    assert changes.backend_at("FLASHMLA_SPARSE", "0.33.0").head_sizes.accepts(512, (9, 0)) is True
    assert changes.backend_at("FLASHMLA_SPARSE", "0.20.0").head_sizes.accepts(512, (9, 0)) is True


def test_changes_before_0_20_follow_the_wheels():
    # utils/flashinfer.py supports_trtllm_attention: is_device_capability(100) in 0.12.0 (:267), the family in 0.13.0
    assert (10, 3) not in changes.backend_at("FLASHINFER", "0.12.0").sinks
    assert (10, 3) in changes.backend_at("FLASHINFER", "0.13.0").sinks
    # FlashAttentionBackend: 32..256 by 32 in 0.11.2 (flash_attn.py:122-123), `% 8 == 0 and <= 256` in 0.12.0
    assert not changes.backend_at("FLASH_ATTN", "0.11.2").head_sizes.accepts(104, (9, 0))
    assert changes.backend_at("FLASH_ATTN", "0.12.0").head_sizes.accepts(104, (9, 0))
    assert not changes.backend_at("FLASH_ATTN", "0.19.0").head_sizes.accepts(512, (10, 0))
    # flash_attn_supports_fp8: FA3 on 9.x only through 0.19.x; "bfloat16" KV from 0.15.0, "float16" from 0.18.0
    assert not changes.backend_at("FLASH_ATTN", "0.19.0").accepts_kv_dtype("fp8", (10, 0))
    assert changes.backend_at("FLASH_ATTN", "0.12.0").accepts_kv_dtype("fp8_e5m2", (9, 0))
    assert not changes.backend_at("FLASH_ATTN", "0.14.1").accepts_kv_dtype("bfloat16", (9, 0))
    assert changes.backend_at("FLASH_ATTN", "0.15.0").accepts_kv_dtype("bfloat16", (9, 0))
    assert not changes.backend_at("TRITON_ATTN", "0.17.0").accepts_kv_dtype("float16", (9, 0))
    # TRITON_MLA inherits MLACommonBackend's [576] until its own `[]` in 0.18.0 (triton_mla.py:41-42)
    assert not changes.backend_at("TRITON_MLA", "0.17.0").head_sizes.accepts(320, (9, 0))
    assert changes.backend_at("TRITON_MLA", "0.18.0").head_sizes.accepts(320, (9, 0))


@pytest.mark.parametrize(
    "version,query,expected",
    [
        # 0.11.1-0.12.x _get_backend_priorities (platforms/cuda.py:46-83 in 0.12.0): FLASHINFER first on SM 10.x
        ("0.12.0", kb.VllmQuery(cc=(10, 0), head_size=128), "FLASHINFER"),
        # FLASH_ATTN refuses fp8 KV off FA3 (fa_utils.py:84-88); FLASHINFER 7.5-12.1 takes it
        ("0.12.0", kb.VllmQuery(cc=(8, 6), head_size=128, kv_dtype="fp8"), "FLASHINFER"),
        ("0.12.0", kb.VllmQuery(cc=(7, 5), head_size=128, dtype="float16"), "FLASHINFER"),
        # the DeepSeek-V3.2 layers: only FLASHMLA_SPARSE is sparse (flashmla_sparse.py:85-86)
        ("0.12.0", kb.VllmQuery(cc=(10, 0), head_size=576, use_mla=True, use_sparse=True), "FLASHMLA_SPARSE"),
        # 0.10.0-0.11.0 V1 defaults (platforms/cuda.py:336-388 in 0.11.0, :264-312 in 0.10.0)
        ("0.10.2", kb.VllmQuery(cc=(7, 5), head_size=64, dtype="float16"), "FLEX_ATTENTION"),
        ("0.11.0", kb.VllmQuery(cc=(8, 6), head_size=None, kv_dtype="fp8"), "TRITON_ATTN"),
        ("0.10.2", kb.VllmQuery(cc=(8, 6), head_size=128, kv_dtype="fp8"), None),  # V0 (arg_utils.py:1465-1469)
        ("0.10.2", kb.VllmQuery(cc=(7, 5), head_size=128, dtype="float16", kv_dtype="fp8"), None),  # V0 too
        ("0.10.2", kb.VllmQuery(cc=(10, 0), head_size=128, kv_dtype="fp8"), "FLASHINFER"),  # cuda.py:548-549
        ("0.10.2", kb.VllmQuery(cc=(8, 9), head_size=64, has_sink=True), "TRITON_ATTN"),
        ("0.10.0", kb.VllmQuery(cc=(8, 9), head_size=64, has_sink=True), "FLASH_ATTN"),
        ("0.10.2", kb.VllmQuery(cc=(8, 0), head_size=80), "FLEX_ATTENTION"),
        ("0.11.0", kb.VllmQuery(cc=(10, 0), head_size=128), "FLASHINFER"),
    ],
)
def test_selection_in_old_releases(version, query, expected):
    assert vllm_select.select(query, version).chosen == expected


def test_the_variable_is_checked_as_each_release_checks_it():
    """0.10.0: selector.py backend_name_to_enum gives None (:21-32), no raise; 0.10.1/0.10.2: "Invalid attention
    backend" (selector.py:196-202); 0.11.0-0.12.x: envs.py env_with_choices (:269-271 in 0.11.0, :323-326 in
    0.12.0) at the first read, before the selector's removesuffix('_VLLM_V1'). Case-sensitive in each."""
    assert legacy.env_refusal("TRITON_ATTN", "0.10.0") is None
    assert legacy.env_refusal("TRITON_ATTN_VLLM_V1", "0.10.2") is None
    assert legacy.env_refusal("TRITON_ATTN", "0.10.2").startswith("Invalid attention backend: 'TRITON_ATTN'.")
    assert legacy.env_refusal("flash_attn", "0.10.1").startswith("Invalid attention backend: 'flash_attn'.")
    refused = legacy.env_refusal("TRITON_ATTN_VLLM_V1", "0.12.0")
    assert refused.startswith("Invalid value 'TRITON_ATTN_VLLM_V1' for VLLM_ATTENTION_BACKEND. Valid options: [")
    assert "'TRITON_ATTN'" in refused and "'FLASHMLA_SPARSE'" in refused  # 0.12.0's own members
    assert "'TRITON_ATTN_VLLM_V1'" in legacy.env_refusal("TRITON_ATTN", "0.10.1")  # 0.10.1.1's members
    assert legacy.env_refusal("TRITON_ATTN", "0.11.0") is None


def test_selection_reads_the_releases_declarations():
    """vllm#49011: 0.25.1's FlashInferBackend.supports_kv_cache_dtype takes nvfp4 on SM100 only (flashinfer.py:427-434);
    0.24.0 has no such gate, 0.32.0 adds the FA2 path on SM12x."""
    nvfp4_sm120 = kb.VllmQuery(cc=(12, 0), head_size=128, kv_dtype="nvfp4")
    assert vllm_select.select(nvfp4_sm120, "0.25.1").chosen is None
    assert vllm_select.select(nvfp4_sm120, "0.24.0").chosen == "FLASHINFER"
    assert vllm_select.select(nvfp4_sm120, "0.32.0").chosen == "FLASHINFER"
    assert vllm_select.select(replace(nvfp4_sm120, cc=(10, 0)), "0.25.1").chosen == "FLASHINFER"
    # no sliding-window reason before 0.26.0: a backend without supports_sliding_window is still valid
    swa_mla = kb.VllmQuery(cc=(12, 0), head_size=576, use_mla=True, has_sliding_window=True, qk_nope_head_dim=128)
    assert vllm_select.select(swa_mla, "0.25.1").chosen == "TRITON_MLA"
    assert vllm_select.select(swa_mla, "0.26.0").chosen is None


def test_every_modelled_cuda_backend_has_a_source_and_is_a_valid_name():
    for name, backend in kb.BY_NAME.items():
        assert name in kb.VALID_NAMES
        assert backend.source.startswith(kb.REPO)
    for change in changes.CHANGES:
        assert change.backend in kb.BY_NAME and hasattr(kb.BY_NAME[change.backend], change.field)


def test_mla_disabled_runs_the_model_as_plain_attention(model_dir):
    code, data = check_json(
        "--gpu",
        "H100",
        "--",
        "VLLM_MLA_DISABLE=1",
        "vllm",
        "serve",
        model_dir(DEEPSEEK_V3),
        "--attention-backend",
        "FLASH_ATTN",
        *DEEPSEEK_LAYOUT,
    )
    assert code == 0, data["findings"]
    assert finding(data, "vllm-mla-model-backend")["status"] == "skip"
    assert finding(data, "vllm-head-size")["message"].startswith("found head size 192")


def test_mla_disabled_head_size_192_runs_fa2_on_blackwell(model_dir):
    """With MLA disabled DeepseekV2Attention is Attention(heads, qk_head_dim) with v padded to it
    (models/deepseek_v2.py:580-589, :627 in 0.33.0), and FlashAttentionImpl passes get_flash_attn_version no
    head_size_v (flash_attn.py:1104-1110), so the TMEM check's 192/128 exemption (fa_utils.py:199-201) does not
    hold."""
    _, data = check_json(
        "--gpu",
        "B200",
        "--",
        *("VLLM_MLA_DISABLE=1", "vllm", "serve", model_dir(DEEPSEEK_V3), "--attention-backend", "FLASH_ATTN"),
        *DEEPSEEK_LAYOUT,
    )
    fallback = finding(data, "vllm-flash-attn-fallback")
    assert fallback["status"] == "warn"
    assert "head_size=192 due to TMEM capacity limits" in fallback["message"]


def test_kv_lora_rank_outside_vllms_mla_model_types_is_not_mla(model_dir):
    minicpm3 = {
        "architectures": ["MiniCPM3ForCausalLM"],
        "model_type": "minicpm3",
        "torch_dtype": "bfloat16",
        "hidden_size": 2560,
        "num_attention_heads": 40,
        "num_key_value_heads": 40,
        "kv_lora_rank": 256,
        "qk_nope_head_dim": 64,
        "qk_rope_head_dim": 32,
        "v_head_dim": 64,
    }
    code, data = check_json("--gpu", "H100", "--", "vllm", "serve", model_dir(minicpm3))
    assert "vLLM selects FLASH_ATTN" in finding(data, "vllm-auto-select")["message"]
    _, on_mla = check_json(
        "--gpu", "H100", "--", "vllm", "serve", model_dir(minicpm3, "n"), "--attention-backend", "FLASHMLA"
    )
    assert finding(on_mla, "vllm-non-mla-model-backend")["status"] == "fail"


def test_unknown_vllm_version_names_the_newest_known_release(model_dir):
    _, data = check_json("--gpu", "H100", "--", "vllm", "serve", model_dir(LLAMA), "--attention-backend", "FLASH_ATTN")
    judged = [f for f in data["findings"] if f["rule_id"].startswith("vllm-") and f["status"] != "skip"]
    assert judged and all(
        f["note"] == "vllm version unknown: newest known behaviour (vllm 0.33.0) applied" for f in judged
    )


def test_vllm_fa4_needs_the_cutlass_dsl_not_flash_attn_4():
    """vLLM 0.33 runs FA4 from vllm_flash_attn/cute; the recorded H200 report whose cutlass .pth never ran fails."""
    from tests.rule_fixtures import FIXTURES_DIR

    command = (
        "--",
        "vllm",
        "serve",
        "llama-3.1-8b",
        "--attention-backend",
        "FLASH_ATTN",
        "--attention-config.flash_attn_version",
        "4",
    )
    code, data = check_json("--facts", str(FIXTURES_DIR / "probe-h200-nopth.json"), *command)
    fa4 = finding(data, "vllm-fa4-library")
    assert code == 1 and fa4["status"] == "fail"
    assert "nvidia-cutlass-dsl installed 4.8.1 but its import error" in fa4["message"]
    assert "flash-attn-4" not in fa4["message"]
    code, data = check_json("--facts", str(FIXTURES_DIR / "probe-h200.json"), *command)
    assert finding(data, "vllm-fa4-library")["status"] == "pass"


def _fa4_on_a_broken_b200(release, model):
    """The vllm-fa4-library finding for FLASH_ATTN on a B200 whose CuTe DSL does not import, at a vLLM release."""
    from tests.rule_fixtures.install import facts_file

    _, data = check_json(
        "--facts",
        facts_file("b200-cutlass-dsl-broken"),
        "--engine-version",
        f"vllm=={release}",
        "--",
        *("vllm", "serve", model, "--attention-backend", "FLASH_ATTN"),
    )
    return finding(data, "vllm-fa4-library")


# Each release's METADATA Requires-Dist (vllm-VERSION.dist-info/METADATA, read by bench/wheel_ranges.py)
@pytest.mark.parametrize(
    "release,cutlass_dsl,quack",
    [
        ("0.17.0", "nvidia-cutlass-dsl>=4.4.0.dev1", "quack-kernels>=0.2.7"),
        ("0.19.1", "nvidia-cutlass-dsl>=4.4.0.dev1", "quack-kernels>=0.2.7"),
        ("0.20.2", "nvidia-cutlass-dsl>=4.4.2", "quack-kernels>=0.3.3"),
        ("0.21.0", "nvidia-cutlass-dsl==4.4.2", "quack-kernels>=0.3.3"),
        ("0.25.1", "nvidia-cutlass-dsl[cu13]==4.5.2", "quack-kernels>=0.3.3"),
        ("0.26.0", "nvidia-cutlass-dsl[cu13]==4.6.0", "quack-kernels>=0.4.0"),
        ("0.27.1", "nvidia-cutlass-dsl[cu13]==4.6.0", "quack-kernels==0.6.1"),
        ("0.29.0", "nvidia-cutlass-dsl[cu13]==4.6.2", "quack-kernels==0.6.4"),
        ("0.31.0", "nvidia-cutlass-dsl[cu13]==4.7.1", "quack-kernels==0.6.5"),
        ("0.32.0", "nvidia-cutlass-dsl[cu13]==4.8.0", "quack-kernels==0.6.5"),
        ("0.33.0", "nvidia-cutlass-dsl[cu13]==4.8.0", "quack-kernels==0.6.5"),
    ],
)
def test_vllm_fa4_fix_installs_the_releases_pins(release, cutlass_dsl, quack):
    fa4 = _fa4_on_a_broken_b200(release, "llama-3.1-8b")
    assert fa4["status"] == "fail"
    assert fa4["fix"] == [f"pip install --force-reinstall '{cutlass_dsl}' '{quack}'"]


@pytest.mark.parametrize(
    "head_dim,release,status",
    [
        (192, "0.17.1", "skip"),  # FA2: every head size above 128
        (192, "0.18.0", "fail"),
        (192, "0.27.0", "skip"),  # FA2: 192 kept only with head_size_v 128, which FlashAttentionImpl never passes
        (256, "0.26.0", "skip"),
        (256, "0.27.0", "fail"),
        (256, "0.28.0", "skip"),  # "temporarily disabled for head_size=256"
        (256, "0.29.0", "fail"),  # the hd256 kernel
        (128, "0.16.0", "skip"),  # before vllm_flash_attn/cute
    ],
)
def test_vllm_fa4_library_applies_where_the_release_runs_fa4(model_dir, head_dim, release, status):
    model = model_dir({**LLAMA, "head_dim": head_dim})
    assert _fa4_on_a_broken_b200(release, model)["status"] == status


@pytest.mark.parametrize(
    "release,status", [("0.26.0", "skip"), ("0.27.0", "fail"), ("0.28.0", "skip"), ("0.29.0", "skip")]
)
def test_vllm_fa4_library_on_gemma_2s_head_size_256(release, status):
    """Gemma-2 (head size 256, soft-cap, sliding window every other layer): 0.27.0 keeps 256 on FA4 (fa_utils.py:263)
    for its full-attention layers; 0.26.0 (TMEM, :246), 0.28.0 (disabled, :175) and 0.29.0 (the hd256 kernel has
    no soft-cap, _fa4_hd256_fallback_reason) run FA2."""
    assert _fa4_on_a_broken_b200(release, "gemma-2-9b")["status"] == status


# --- each reason once: the declaration, the validator, and the rules that read it ---------------------------

# rule id -> the validator's reason keys it reports (a row of rules/engines/vllm/reasons.py each).
RULE_REASONS = {
    "vllm-head-size": {"head_size"},
    "vllm-dtype": {"dtype"},
    "vllm-kv-cache-dtype": {"kv_cache_dtype"},
    "vllm-block-size": {"block_size"},
    "vllm-mla-model-backend": {"mla"},
    "vllm-non-mla-model-backend": {"non_mla"},
    "vllm-sinks": {"sinks"},
    "vllm-sparse-mla-backend": {"sparse", "non_sparse"},
    "vllm-compute-capability": {"cc"},
    "vllm-sliding-window": {"sliding_window"},
    "vllm-flash-attn-fp8-kv": {"fa_fp8_kv"},
    "vllm-flashinfer-nvfp4-head64": {"fi_nvfp4_head64"},
    "vllm-flashinfer-nvfp4-sinks": {"fi_nvfp4_sinks"},
    "vllm-flashmla-dense-hopper": {"flashmla_dense"},
    "vllm-flashinfer-mla-qk-nope": {"fi_mla_qk_nope"},
    "vllm-tokenspeed-mla-dims": {"tokenspeed_dims"},
}
# Reasons no rule reports by itself: whenever one holds, the capability reason named here holds too.
SHADOWED = {"fa_sink_cc": "sinks", "fa_mla_device": "cc", "flashmla_sparse_nvfp4": "kv_cache_dtype"}
VLLM_CASES = [
    case
    for rule_id, buckets in sorted(all_fixtures().items())
    if rule_id.startswith("vllm-")
    for bucket in ("pass", "fail")
    for case in buckets.get(bucket, [])
]


def _judged(case):
    """(report, the validator's reason keys for the named backend) or None where the validator does not apply."""
    report = run_case(case)
    cfg, target = report.config, report.target
    backend = changes.backend_at(cfg.attention_backend, target.versions.get("vllm")) if cfg.attention_backend else None
    if backend is None or not backend.modelled or backend.platform != "cuda" or target.cc is None:
        return report, None
    # every layer's query: a model whose layers differ in head size is refused for any of them
    return report, {
        key for q in vllm_select.layer_queries(cfg, target) for key in vllm_select.rejections(backend, q, target)
    }


def test_each_reason_is_declared_once():
    keys = [r.key for r in kb.REASONS]
    for release in kb.RELEASES:
        release_keys = [r.key for r in release.reasons]
        release_texts = [r.text for r in release.reasons]
        assert len(set(release_keys)) == len(release_keys) and len(set(release_texts)) == len(release_texts)
        assert set(release_keys) <= set(keys), f"{release.since}: a reason the newest release does not declare"
    texts = {r.text for release in kb.RELEASES for r in release.reasons}
    constants = {
        name: value
        for name, value in vars(kb).items()
        if isinstance(value, str) and (name.startswith("R_") or name.endswith("_REASON"))
    }
    assert len(constants) >= 20
    for name, value in constants.items():
        assert value in texts, f"{name} is the text of no declared reason"
    for reason in kb.REASONS:
        assert reason.source.startswith(kb.REPO) and (not reason.backend or reason.backend in kb.BY_NAME)
    assert {k for ks in RULE_REASONS.values() for k in ks} | set(SHADOWED) == set(keys)


ROOT = Path(__file__).resolve().parent.parent
# the vLLM pack's rule modules and its engine modelling: they read the validator, never restate it
VLLM_JUDGING = sorted((ROOT / "rules/engines/vllm/rules").glob("*.py")) + [ROOT / "rules/engines/vllm/select.py"]


@pytest.mark.parametrize("path", VLLM_JUDGING, ids=lambda p: p.name)
def test_rules_do_not_rederive_a_reason(path):
    """The judging predicates live in capabilities.REASONS; the rule modules only read their outcome."""
    tree = ast.parse(path.read_text())
    judging = {"accepts", "accepts_kv_dtype", "accepts_block_size", "supports_sink", "flash_attn_fp8_kv_ok"}
    capabilities = {"archs", "dtypes", "kv_dtypes", "kv_dtype_archs", "sinks", "sliding_window", "mla", "sparse"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr not in judging, f"line {node.lineno}: {node.attr} judges a reason again"
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            for side in node.comparators:
                read = {n.attr for n in ast.walk(side) if isinstance(n, ast.Attribute)}
                assert not read & capabilities, f"line {node.lineno}: membership in {read & capabilities} judges again"


def test_no_private_name_crosses_a_vllm_module():
    """Neither the vLLM modules nor their tests import a `_name` from another module or read one off it."""
    for path in (
        *VLLM_JUDGING,
        ROOT / "rules/engines/vllm/capabilities.py",
        Path(__file__),
        ROOT / "tests/rule_fixtures/vllm.py",
    ):
        tree = ast.parse(path.read_text())
        modules = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not [a.name for a in node.names if a.name.startswith("_")], f"{path}:{node.lineno}"
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                assert not node.attr.startswith("_") or node.attr.startswith("__"), f"{path}:{node.lineno}"


def test_rules_and_the_validator_agree_on_every_fixture():
    """On every vLLM fixture naming a modelled backend: a rule fails only when the validator gives one of its
    reasons and passes only when it gives none; each rule is compared at least once failing and once passing."""
    disagreements, seen = [], {rule_id: set() for rule_id in RULE_REASONS}
    for index, case in enumerate(VLLM_CASES):
        report, keys = _judged(case)
        if keys is None:
            continue
        findings = {f.rule_id: f for f in report.findings}
        for rule_id, reads in RULE_REASONS.items():
            status = findings[rule_id].status.value
            seen[rule_id].add(status)
            if (status == "fail" and not keys & reads) or (status == "pass" and keys & reads):
                disagreements.append((index, rule_id, status, sorted(keys)))
        for shadowed, companion in SHADOWED.items():
            if shadowed in keys and companion not in keys:
                disagreements.append((index, shadowed, "without", companion))
    assert disagreements == []
    assert [rule_id for rule_id, statuses in seen.items() if not {"pass", "fail"} <= statuses] == []


@pytest.mark.parametrize("rule_id", sorted(RULE_REASONS))
def test_rules_follow_the_declared_reason(rule_id, monkeypatch):
    """A rule's fail fixture passes once its reasons are declared never to hold: the rule reads the validator."""
    case = all_fixtures()[rule_id]["fail"][0]
    assert next(f for f in run_case(case).findings if f.rule_id == rule_id).status.value == "fail"
    release = kb.RELEASES[-1]
    never = tuple(
        replace(r, holds=lambda b, q: False) if r.key in RULE_REASONS[rule_id] else r for r in release.reasons
    )
    monkeypatch.setattr(kb, "RELEASES", (replace(release, reasons=never),))
    assert next(f for f in run_case(case).findings if f.rule_id == rule_id).status.value == "pass"


def test_validate_is_vllms_list_and_rejections_every_reason():
    """FlashInferBackend.supports_combination returns its first text; the validator keeps both for the rules."""
    query = kb.VllmQuery(cc=(9, 0), head_size=64, kv_dtype="nvfp4", has_sink=True)
    backend = kb.BY_NAME["FLASHINFER"]
    assert [r.key for r in kb.rejections(backend, query) if r.combination] == ["fi_nvfp4_head64", "fi_nvfp4_sinks"]
    assert kb.validate(backend, query) == [kb.FI_NVFP4_HEAD64_REASON]


def test_declarations_are_read_only_and_each_fact_has_a_source():
    selection = vllm_select.select(kb.VllmQuery(cc=(9, 0), head_size=128, block_size=8))
    with pytest.raises(TypeError):
        selection.rejected["FLASH_ATTN"] = ()  # cached: a caller must not change what the next one reads
    with pytest.raises(TypeError):
        kb.BY_NAME["X"] = kb.BY_NAME["FLASH_ATTN"]
    assert kb.release_for(None) is kb.RELEASES[-1] and kb.release_for("0.26.0") is kb.RELEASES[-1]
    assert kb.release_for("0.20.0") is kb.RELEASES[2] and kb.release_for("0.18.0") is kb.RELEASES[2]
    assert kb.release_for("0.17.1") is kb.RELEASES[1] and kb.release_for("0.13.0") is kb.RELEASES[1]
    assert kb.release_for("0.12.0") is kb.RELEASES[0] and kb.release_for("0.10.0") is kb.RELEASES[0]
    fields = set(kb.VllmBackend.__dataclass_fields__)
    for backend in kb.RELEASES[-1].backends.values():
        assert set(backend.sources) <= fields, backend.name
        assert all(backend.source_of(f).startswith(kb.REPO) for f in fields)


def test_the_backend_enum_of_every_release_is_the_wheels_and_the_newest_is_the_declared_list():
    """bench/vllm_backend_enum.py read the 37 wheels 0.10.0-0.33.0 (with 0.10.1.1 and 0.11.1); the newest must be
    the declared backends."""
    from packaging.version import Version

    from attn_preflight.rules.engines.vllm import capabilities as kb

    assert len(kb.ENUM_BY_RELEASE) >= 30 and min(kb.ENUM_BY_RELEASE, key=Version) == "0.10.0"
    assert kb.ENUM_BY_RELEASE[kb.VLLM_VERSION] == kb.VALID_NAMES
    # the V1 spellings of vLLM 0.10 (platforms/interface.py _Backend), gone in 0.11.0
    assert kb.name_in_release("TRITON_ATTN_VLLM_V1", "0.10.2") is True
    assert kb.name_in_release("TRITON_ATTN_VLLM_V1", "0.11.0") is False
    assert kb.name_in_release("XFORMERS", "0.11.2") is True and kb.name_in_release("XFORMERS", "0.12.0") is False
    # FLASHINFER_MLA is first in 0.10.2: 0.10.1.1's selector raises "Invalid attention backend" (selector.py:198-202)
    assert kb.name_in_release("FLASHINFER_MLA", "0.10.1") is False


def test_an_old_backend_name_is_judged_at_the_release_that_accepted_it():
    from cli_run import check_json, finding

    argv = ["--gpu", "H100", "--engine", "vllm", "--model", "llama-3.1-8b", "--attention-backend", "XFORMERS"]
    run, old = check_json([*argv, "--engine-version", "vllm==0.11.2"])
    assert run.code in (0, 1) and finding(old, "vllm-backend-name")["status"] != "fail"
    run, new = check_json([*argv, "--engine-version", "vllm==0.33.0"])
    assert run.code == 1 and finding(new, "vllm-backend-name")["status"] == "fail"


def test_qwen3_next_attention_block_is_the_one_vllm_0_10_2_logged():
    """vllm#25811 (Qwen3-Next-80B on B200, vLLM 0.10.2): trtllm-gen refused numTokensPerPage=544; 0.10.2's
    HybridAttentionMambaModelConfig gives 16 x ceil(274432 x 2 B / (16 x 1024 B)) = 544 at TP 2 (one KV head per
    rank, conv 3 x 4096 + state 16 x 128 x 128 in bfloat16) and 272 at TP 4."""
    from cli_run import check_json, finding

    for tp, tokens in (("2", 544), ("4", 272)):
        argv = ["--gpu", "B200", "--engine-version", "vllm==0.10.2", "--", "vllm", "serve", "qwen3-next-80b-a3b"]
        run, report = check_json([*argv, "-tp", tp])
        assert (
            run.code == 1 and f"blocks of {tokens} tokens" in finding(report, "vllm-hybrid-flashinfer-page")["message"]
        )


def test_the_speculative_table_covers_every_release():
    """rules/engines/vllm/speculative.json (bench/vllm_speculative.py, read from each wheel) has every release of the
    vLLM pack, and what it says matches the wheels read: "mtp" from 0.11.0, "medusa" gone in 0.33.0, the EAGLE3
    target list until 0.21.0 only."""
    root = Path(__file__).resolve().parent.parent / "rules" / "engines" / "vllm"
    table = json.loads((root / "speculative.json").read_text())["releases"]
    releases = json.loads((root / "releases" / "index.json").read_text())["releases"]
    assert list(table) == releases
    assert [r for r in releases if "mtp" in table[r]["methods"]][0] == "0.11.0"
    assert "medusa" in table["0.32.0"]["methods"] and "medusa" not in table["0.33.0"]["methods"]
    assert table["0.21.0"]["eagle3_targets"] is not None and table["0.22.0"]["eagle3_targets"] is None


def test_a_vllm_declaration_change_reaches_verdict_message_fix_docs_title_and_alternatives(monkeypatch):
    """The reason rules word their title, docs and fix title from the declarations (rules/engines/vllm/words.py)
    as the validator judges from them: one edit of a backend's kernel block sizes, of its archs, or of
    TOKENSPEED_MLA's dims reaches the verdict, what the finding requires, the fix, `explain`'s docs, title and fix
    title, `rules`' title and the alternatives, with nothing else edited."""
    from types import MappingProxyType

    from cli_run import run_cli

    from attn_preflight.inputs import load_model
    from attn_preflight.rules.core.judge import evaluate
    from attn_preflight.rules.core.target import Target
    from attn_preflight.rules.core.validation import make_config

    def declare(name, **facts):
        newest = kb.RELEASES[-1]
        backends = {**newest.backends, name: replace(newest.backends[name], **facts)}
        monkeypatch.setattr(kb, "RELEASES", (*kb.RELEASES[:-1], replace(newest, backends=MappingProxyType(backends))))

    def judged(backend, **values):
        config = make_config(
            engine="vllm", model=load_model("deepseek-v3"), attention_backend=backend, tp_size=8, **values
        )
        return evaluate(config, Target.from_gpu("B200"))

    def explained(rule_id):
        run = run_cli(["explain", rule_id, "--format", "json"])
        assert run.code == 0, run.err
        return json.loads(run.out)

    def listed(rule_id):
        run = run_cli(["rules", "--engine", "vllm", "--format", "json"])
        assert run.code == 0, run.err
        return next(r for r in json.loads(run.out) if r["id"] == rule_id)

    def found(report, rule_id):
        return next(f for f in report.findings if f.rule_id == rule_id)

    # CUTLASS_MLA's kernel block sizes: 128 today
    before = found(judged("CUTLASS_MLA", page_size=64), "vllm-block-size")
    assert before.status.value == "fail" and "a multiple of 128" in before.message
    assert before.fix == ("drop --block-size",)
    assert "CUTLASS_MLA: 128" in explained("vllm-block-size")["docs"]
    assert "CUTLASS_MLA" not in [a.value for a in judged("FLASH_ATTN", page_size=64).alternatives]
    assert "FLASHINFER_MLA on SM100" in explained("vllm-mla-model-backend")["fix"]
    assert found(judged("FLASH_ATTN"), "vllm-mla-model-backend").fix == ("--attention-backend FLASHINFER_MLA",)

    declare("CUTLASS_MLA", block_sizes=(64,))
    assert found(judged("CUTLASS_MLA", page_size=64), "vllm-block-size").status.value == "pass"
    docs = explained("vllm-block-size")["docs"]
    assert "CUTLASS_MLA: 128" not in docs and "FLASHMLA and CUTLASS_MLA: 64" in docs
    assert "CUTLASS_MLA" in [a.value for a in judged("FLASH_ATTN", page_size=64).alternatives]

    # FLASHINFER_MLA's archs: off SM100, vLLM's pick there is CUTLASS_MLA, and the fix and its title say so
    declare("FLASHINFER_MLA", archs=kb.majors(12))
    after = found(judged("FLASH_ATTN"), "vllm-mla-model-backend")
    assert after.status.value == "fail" and after.fix == ("--attention-backend CUTLASS_MLA",)
    fix_title = explained("vllm-mla-model-backend")["fix"]
    assert "CUTLASS_MLA on SM100" in fix_title and "FLASHINFER_MLA" not in fix_title
    assert "FLASHINFER_MLA: 12.x" in explained("vllm-compute-capability")["docs"]

    # TOKENSPEED_MLA's dims: the finding's title, what it requires, the docs
    tokenspeed = found(judged("TOKENSPEED_MLA", kv_cache_dtype="fp8"), "vllm-tokenspeed-mla-dims")
    assert tokenspeed.status.value == "pass" and "128/64/128" in tokenspeed.title
    monkeypatch.setattr(kb, "TOKENSPEED_DIMS", (192, 64, 128))
    refused = found(judged("TOKENSPEED_MLA", kv_cache_dtype="fp8"), "vllm-tokenspeed-mla-dims")
    assert refused.status.value == "fail" and "192/64/128" in refused.message and "192/64/128" in refused.title
    assert refused.fix == ("--attention-backend CUTLASS_MLA",)
    shown = explained("vllm-tokenspeed-mla-dims")
    assert "192/64/128" in shown["title"] and "192/64/128" in shown["docs"] and "128/64/128" not in shown["docs"]
    assert "192/64/128" in listed("vllm-tokenspeed-mla-dims")["title"]


def test_worded_vllm_rules_leave_no_placeholder_and_a_check_never_words_docs():
    """Every placeholder a vLLM generated rule names is worded (no brace left in `explain`), and a check never
    loads the wording module: the words cost `explain` and `rules` alone."""
    import subprocess
    import sys

    worded = [r.shown() for r in all_rules() if r.engine == "vllm" and r.worded is not None]
    assert len(worded) >= 19  # the 16 reason rows and 3 constraint rows
    for rule in worded:
        for field in ("title", "docs", "fix_title"):
            assert "{" not in getattr(rule, field), (rule.id, field, getattr(rule, field))
    code = (
        "import sys; from attn_preflight.cli import cli\n"
        "try: cli(['check', '--engine', 'vllm', '--gpu', 'B200', '--model', 'deepseek-v3', '--attention-backend', "
        "'FLASH_ATTN', '--format', 'json'])\n"
        "except SystemExit: pass\n"
        "assert 'attn_preflight.rules.engines.vllm.words' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
