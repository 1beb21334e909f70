"""The dispatch model (rules/kernels/dispatch.py, issue 21): the tables are data with sources, and a change to a
table reaches the verdict, the message and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_preflight.rules.core.engine import Status, provenance
from attn_preflight.rules.kernels import binaries, dispatch
from tests.rule_fixtures import FIXTURES_DIR, check_argv

TABLE = Path(dispatch.__file__).with_name("dispatch.json")
GLM51 = str(FIXTURES_DIR / "incident-models" / "glm-5.1-nvfp4")
GLM53 = str(FIXTURES_DIR / "incident-models" / "glm-5.3-flash")


def config_and_target(case: dict):
    from attn_preflight.commands.check import check_command, config_from_options, target_from_options
    from attn_preflight.rules.engines.sglang.resolve import resolve  # both engines: it dispatches on config.engine

    params = check_command.make_context("check", check_argv(case)).params
    config = config_from_options(params, params["command"])
    target = target_from_options(
        params["gpu"], params["facts_file"], params["engine_versions"], gpu_count=params["gpu_count"]
    )
    return resolve(config, target), target


def judged(table: dict, row_id: str, case: dict):
    """The outcome of `row_id`'s check, built from `table` (dispatch.json's format) rather than the shipped one."""
    _, rows, vision, _ = dispatch.load(json.dumps(table))
    row = next(r for r in rows if r.id == row_id)
    config, target = config_and_target(case)
    return dispatch.judge(row, vision)(config, target)


def shipped() -> dict:
    return json.loads(TABLE.read_text())


GLM53_GB10 = {
    "gpu": "GB10",
    "argv": ["--model", GLM53],
    "engine_version": ["sglang==0.5.20"],
    "command": ["sglang", "serve", "--model-path", "zai-org/GLM-5.3-Flash"],
}


def test_a_kernel_table_change_reaches_verdict_message_and_fix():
    table = shipped()
    before = judged(table, "kernel-sglang-dsa-trtllm-decode", GLM53_GB10)
    assert before.status is Status.FAIL
    assert "TllmGenFmhaRunner" in before.required and "SM121" in before.found
    assert before.fix[0].startswith("--kv-cache-dtype bfloat16")

    table["kernels"]["trtllm-gen-fmha"]["message"] = "RuntimeError: a message changed in the table"
    table["dispatch"][1]["fix"] = ["--dsa-decode-backend flashmla_kv"]
    changed = judged(table, "kernel-sglang-dsa-trtllm-decode", GLM53_GB10)
    assert "a message changed in the table" in changed.required
    assert changed.fix == ("--dsa-decode-backend flashmla_kv",)

    table["kernels"]["trtllm-gen-fmha"]["archs"].append("12.1")  # code for GB10: the verdict turns
    after = judged(table, "kernel-sglang-dsa-trtllm-decode", GLM53_GB10)
    assert after.status is Status.PASS and "SM121" in after.found


def test_a_dispatch_change_reaches_the_verdict():
    table = shipped()
    row = next(r for r in table["dispatch"] if r["id"] == "kernel-sglang-dsa-trtllm-decode")
    row["when"]["min_major"] = 13  # the engine no longer sends SM12x there
    assert judged(table, "kernel-sglang-dsa-trtllm-decode", GLM53_GB10).status is Status.SKIP


def test_the_generated_library_table_decides_and_names_the_release_that_adds_it(monkeypatch):
    case = {
        "gpu": "RTX PRO 6000",
        "argv": ["--model", GLM51],
        "engine_version": ["sglang==0.5.13"],
        "command": ["sglang", "serve", "--model-path", "m", "--kv-cache-dtype", "bf16"],
    }
    outcome = judged(shipped(), "kernel-sglang-dsa-indexer-deepgemm", case)
    assert outcome.status is Status.FAIL
    assert "sgl-deep-gemm 0.1.2 pinned by sglang 0.5.13" in outcome.found and "SM9x, SM10x" in outcome.found
    # the first release whose pinned sgl-deep-gemm ships sm120 paged MQA logits (0.1.5.post1 in sglang 0.5.17)
    assert outcome.fix[0] == "pip install 'sglang>=0.5.17'"

    tables = dict(dispatch._json("deepgemm_archs.json"))
    versions = {v: dict(row) for v, row in tables["sgl-deep-gemm"].items()}
    versions["0.1.2"]["paged_mqa_logits"] = ["sm90", "sm100", "sm120"]
    real = dispatch._json

    def patched(name):
        return {**tables, "sgl-deep-gemm": versions} if name == "deepgemm_archs.json" else real(name)

    monkeypatch.setattr(dispatch, "_json", patched)
    assert judged(shipped(), "kernel-sglang-dsa-indexer-deepgemm", case).status is Status.PASS


def test_a_wheel_table_wins_over_the_declaration(monkeypatch):
    table = shipped()
    table["kernels"]["vllm-fa2-varlen"]["wheel"] = {"library": "vllm", "version": "0.21.0", "module": "x.so"}
    case = {
        "gpu": "T4",
        "argv": ["--model", "qwen3-8b"],
        "engine_version": ["vllm==0.21.0"],
        "command": ["vllm", "serve", "m", "--kv-cache-dtype", "turboquant_4bit_nc"],
    }
    assert judged(table, "kernel-vllm-turboquant-fa2-prefill", case).status is Status.FAIL
    shipped_sm75 = binaries.ArchSupport(sass=("sm_75", "sm_80"), source="vllm-0.21.0.whl!x.so")
    monkeypatch.setattr(binaries, "module_archs", lambda library, version, module: shipped_sm75)
    outcome = judged(table, "kernel-vllm-turboquant-fa2-prefill", case)
    assert outcome.status is Status.PASS and "wheel vllm-0.21.0.whl!x.so" in outcome.found


def test_glm_dsa_fp8_on_sm12x_takes_the_sm120_path_from_0_5_17():
    """overrides.py:703-740 (0.5.20): GlmMoeDsaForCausalLM with an FP8 KV cache on SM12x does not run trtllm."""
    case = {
        "gpu": "RTX PRO 6000",
        "argv": ["--model", GLM51],
        "command": ["sglang", "serve", "--model-path", "m"],
    }
    at_0520 = judged(shipped(), "kernel-sglang-dsa-trtllm-decode", {**case, "engine_version": ["sglang==0.5.20"]})
    at_0516 = judged(shipped(), "kernel-sglang-dsa-trtllm-decode", {**case, "engine_version": ["sglang==0.5.16"]})
    assert at_0520.status is Status.SKIP and at_0516.status is Status.FAIL


def test_every_kernel_and_row_names_its_source_and_every_row_its_provenance():
    table = shipped()
    for key, kernel in table["kernels"].items():
        assert kernel["source"].strip() and kernel["message"].strip() and kernel["entry"].strip(), key
        assert kernel.get("archs") or kernel.get("min_cc") or kernel.get("table") or kernel.get("declared"), key
        if kernel.get("declared"):  # the family it names exists in its declared table
            assert kernel["declared"]["family"] in dispatch.declared_table(kernel["declared"]["library"])["families"]
    for row in table["dispatch"]:
        assert row["source"].strip() and row["kernel"] in table["kernels"], row["id"]
        assert provenance(row["engine"]).get(row["id"]), f"{row['id']}: no provenance.json entry"


def test_an_unknown_condition_is_refused():
    table = shipped()
    table["dispatch"][0]["when"]["gpu_is"] = "fast"
    with pytest.raises(ValueError, match="unknown condition"):
        dispatch.load(json.dumps(table))


def test_the_generated_tables_say_what_the_wheels_hold():
    archs = dispatch._json("deepgemm_archs.json")["sgl-deep-gemm"]
    assert archs["0.1.0"]["paged_mqa_logits"] == ["sm90", "sm100"]
    assert "sm120" in archs["0.1.5.post1"]["paged_mqa_logits"]
    pins = dispatch._json("pins.json")["sglang"]
    assert pins["0.5.12"]["sgl-deep-gemm"] == "0.1.0" and pins["0.5.17"]["sgl-deep-gemm"] == "0.1.5.post1"


def _mimo_v2(tmp_path: Path, *, vision: bool) -> str:
    """A MiMo-V2 config: the architecture MiMo-V2.5 ships (sgl-project/sglang#29253) with a vision and an audio
    config (sglang builds the vision tower only with both, models/mimo_v2.py:1050-1061); the sizes are synthetic,
    only there so the model's shape reads."""
    config = {
        "architectures": ["MiMoV2ForCausalLM"],
        "model_type": "mimo_v2",
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 2048,
        "vocab_size": 32000,
    }
    if vision:
        config |= {"vision_config": {"num_hidden_layers": 2, "hidden_size": 256}, "audio_config": {}}
    folder = tmp_path / ("mimo-vl" if vision else "mimo-text")
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


@pytest.mark.parametrize(
    ("gpu", "release", "extra", "vision", "status"),
    [
        ("B200", "0.5.13", [], True, Status.FAIL),  # sgl-project/sglang#29253
        ("RTX PRO 6000", "0.5.15", [], True, Status.FAIL),  # is_blackwell_supported: majors 10, 11, 12
        ("B200", "0.5.13", ["--mm-attention-backend", "fa4"], True, Status.SKIP),  # the PR's fix
        ("H100", "0.5.13", [], True, Status.PASS),  # fa3 is Hopper's own default
        ("A100", "0.5.13", [], True, Status.PASS),  # sgl-kernel builds FA3 for majors 8 and 9
        ("B200", "0.5.13", [], False, Status.SKIP),  # a text-only MiMo-V2 builds no vision tower
    ],
)
def test_mimo_vision_tower_requests_fa3_which_sglang_refuses_on_blackwell(
    tmp_path, gpu, release, extra, vision, status
):
    case = {
        "gpu": gpu,
        "argv": ["--model", _mimo_v2(tmp_path, vision=vision)],
        "engine_version": [f"sglang=={release}"],
        "command": ["sglang", "serve", "--model-path", "XiaomiMiMo/MiMo-V2.5", "--tp", "4", *extra],
    }
    outcome = judged(shipped(), "kernel-sglang-vision-mimo-fa3-blackwell", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "not supported on Blackwell GPUs" in outcome.required
        assert outcome.fix[0] == "--mm-attention-backend fa4"


def test_the_mimo_fa3_row_holds_until_0_5_16(tmp_path):
    """From 0.5.16 mimo_vl.py passes attn_implementation=None (the platform default, fa4 on SM100): the row's
    release range, applied by the rule, not by the row's condition."""
    from tests.test_incidents import judge

    model = _mimo_v2(tmp_path, vision=True)
    line = "sglang serve --model-path XiaomiMiMo/MiMo-V2.5 --tp 4"
    verdicts = {}
    for release in ("0.5.13", "0.5.16"):
        incident = {"gpu": "B200", "engine": "sglang", "version": release, "model": model, "command": line}
        verdicts[release] = judge(incident)
    assert verdicts["0.5.13"][0] == "fail" and "kernel-sglang-vision-mimo-fa3-blackwell" in verdicts["0.5.13"][1]
    assert "kernel-sglang-vision-mimo-fa3-blackwell" not in verdicts["0.5.16"][1]


QWEN35 = str(FIXTURES_DIR / "incident-models" / "qwen3.5-35b-a3b")
QWEN25_3B = str(FIXTURES_DIR / "incident-models" / "qwen2.5-3b-instruct")


def _with_dtype(tmp_path: Path, source: str, dtype: str) -> str:
    """`source`'s config.json with another declared dtype (the checkpoint a user converted, say)."""
    config = json.loads((Path(source) / "config.json").read_text())
    config["torch_dtype"] = dtype
    folder = tmp_path / f"model-{dtype}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


@pytest.mark.parametrize(
    ("gpu", "extra", "dtype", "status"),
    [
        ("sm_75", ["--dtype", "float16"], "bfloat16", Status.FAIL),  # vllm-project/vllm#35414
        ("T4", [], "bfloat16", Status.FAIL),  # auto: float16 on SM75, the GDN parameters still bfloat16
        ("A100", ["--dtype", "float16"], "bfloat16", Status.PASS),  # Inductor compiles bfloat16 on SM80
        ("sm_75", ["--dtype", "float16"], "float16", Status.SKIP),  # a float16 checkpoint builds float16
        ("sm_75", ["--dtype", "float16", "--enforce-eager"], "bfloat16", Status.SKIP),  # no Inductor: not judged
    ],
)
def test_gdn_parameters_follow_the_checkpoint_dtype_before_0_17(tmp_path, gpu, extra, dtype, status):
    model = QWEN35 if dtype == "bfloat16" else _with_dtype(tmp_path, QWEN35, dtype)
    case = {
        "gpu": gpu,
        "argv": ["--model", model],
        "engine_version": ["vllm==0.16.0"],
        "command": ["vllm", "serve", "Qwen/Qwen3.5-35B-A3B", *extra],
    }
    outcome = judged(shipped(), "kernel-vllm-gdn-bf16-params-pre-0-17", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "BF16 is not supported" in outcome.required and "SM75" in outcome.found
        assert outcome.fix[0].startswith("vLLM 0.17.0")


def test_the_gdn_row_ends_at_0_17():
    """vllm-project/vllm#35617 (in 0.17.0): the parameters follow --dtype; the rule's range, not its condition."""
    from tests.test_incidents import judge

    line = "vllm serve Qwen/Qwen3.5-35B-A3B --dtype float16"
    verdicts = {
        release: judge({"gpu": "sm_75", "engine": "vllm", "version": release, "model": QWEN35, "command": line})
        for release in ("0.16.0", "0.17.0")
    }
    assert "kernel-vllm-gdn-bf16-params-pre-0-17" in verdicts["0.16.0"][1]
    assert "kernel-vllm-gdn-bf16-params-pre-0-17" not in verdicts["0.17.0"][1]


@pytest.mark.parametrize(
    ("gpu", "extra", "status"),
    [
        ("A100", [], Status.FAIL),  # vllm-project/vllm#39992: a bfloat16 model, e4b15 below SM89
        ("A100", ["--dtype", "float16"], Status.SKIP),  # convert_custom_float8 takes fp16
        ("L40S", [], Status.PASS),  # SM89: native float8e4nv
        ("A100", ["--kv-cache-dtype", "turboquant_4bit_nc"], Status.SKIP),  # an MSE key preset: no FP8 cast
    ],
)
def test_turboquant_fp8_keys_need_fp16_or_sm89(gpu, extra, status):
    kv = [] if "--kv-cache-dtype" in extra else ["--kv-cache-dtype", "turboquant_k8v4"]
    case = {
        "gpu": gpu,
        "argv": ["--model", QWEN25_3B],
        "engine_version": ["vllm==0.20.0"],
        "command": ["vllm", "serve", "Qwen/Qwen2.5-3B-Instruct", *kv, *extra],
    }
    outcome = judged(shipped(), "kernel-vllm-turboquant-fp8-key-bf16-sm8x", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "convert_custom_float8" in outcome.required and outcome.fix[0] == "--dtype float16"


def test_a_dtype_condition_change_reaches_the_verdict():
    case = TQ_A100
    table = shipped()
    row = next(r for r in table["dispatch"] if r["id"] == "kernel-vllm-turboquant-fp8-key-bf16-sm8x")
    assert judged(table, row["id"], case).status is Status.FAIL
    row["when"]["model_dtype"] = ["float16"]  # the table says only float16 models take the path
    assert judged(table, row["id"], case).status is Status.SKIP


DECLARED = sorted(p.name[len("declared_") : -len(".json")] for p in TABLE.parent.glob("declared_*.json"))


@pytest.mark.parametrize("library", DECLARED)
def test_every_declared_fact_names_its_source(library):
    table = dispatch.declared_table(library)
    assert table["library"] == library and table["_doc"].strip()
    for name, family in table["families"].items():
        assert family["entry"].strip() and family["message"].strip(), name
        for release in family["releases"]:
            assert release["versions"] and release["source"].strip(), name
            assert bool(release.get("min_cc")) != bool(release.get("majors")), f"{name}: one of min_cc, majors"


TQ_A100 = {
    "gpu": "A100",
    "argv": ["--model", QWEN25_3B],
    "engine_version": ["vllm==0.20.0"],
    "command": ["vllm", "serve", "m", "--kv-cache-dtype", "turboquant_k8v4"],
}


def _patched_declared(monkeypatch, library: str, change) -> None:
    table = json.loads((TABLE.parent / f"declared_{library}.json").read_text())  # the shipped table, each time
    change(table)
    real = dispatch._json
    monkeypatch.setattr(dispatch, "_json", lambda name: table if name == f"declared_{library}.json" else real(name))


def test_a_declared_table_change_reaches_verdict_message_and_fix(monkeypatch):
    row = "kernel-vllm-turboquant-fp8-key-bf16-sm8x"
    before = judged(shipped(), row, TQ_A100)
    assert (
        before.status is Status.FAIL
        and "SM89 and newer" in before.found
        and "(3.3.1, 3.4.0, 3.5.1, 3.6.0)" in before.found
    )
    assert "convert_custom_float8" in before.required and before.fix[0] == "--dtype float16"

    def message(table):
        table["families"]["fp8e4nv"]["message"] = "RuntimeError: a message changed in the declared table"

    _patched_declared(monkeypatch, "triton", message)
    assert "a message changed in the declared table" in judged(shipped(), row, TQ_A100).required

    def sm80(table):  # Triton gains a native E4M3 cast on SM80 in every release read
        for release in table["families"]["fp8e4nv"]["releases"]:
            release["min_cc"] = "8.0"

    _patched_declared(monkeypatch, "triton", sm80)
    assert judged(shipped(), row, TQ_A100).status is Status.PASS

    def disagree(table):  # the releases read disagree and the version in use is not known: unknown, never a pass
        table["families"]["fp8e4nv"]["releases"][0]["min_cc"] = "8.0"

    _patched_declared(monkeypatch, "triton", disagree)
    assert judged(shipped(), row, TQ_A100).status is Status.UNKNOWN


def test_a_declared_release_that_adds_the_gpu_is_the_fix():
    """FlashInfer builds its TRT-LLM-gen fused MoE for majors [10] in 0.6.1 and [10, 12] from 0.6.8.post1."""
    kernel = dispatch.Kernel(
        key="k", library="flashinfer-python", entry="e", message="m", source="s",
        declared={"library": "flashinfer-python", "family": "trtllm_gen_fused_moe"},
    )  # fmt: skip
    at_015 = dispatch.code_for(kernel, (12, 0), "vllm", "0.15.0")  # vLLM 0.15.0 pins flashinfer-python 0.6.1
    assert at_015.ok is False and at_015.added == "pip install 'flashinfer-python>=0.6.8.post1'"
    assert dispatch.code_for(kernel, (12, 0), "vllm", "0.20.0").ok is True  # 0.6.8.post1
    assert dispatch.code_for(kernel, (9, 0), "vllm", "0.20.0").ok is False


MINIMAX_NVFP4 = str(FIXTURES_DIR / "incident-models" / "minimax-m2.1-nvfp4")
NEMOTRON_H_NVFP4 = str(FIXTURES_DIR / "models" / "synthetic-nemotron-h-moe-nvfp4")


@pytest.mark.parametrize(
    ("env", "status"),
    [
        (["VLLM_USE_FLASHINFER_MOE_FP4=1"], Status.FAIL),  # vllm-project/vllm#33416: FlashInfer backends only
        ([], Status.SKIP),  # the default oracle goes on to VLLM_CUTLASS (capability >= 10.0, gated MoE)
    ],
)
def test_the_015_gated_nvfp4_row_needs_the_flashinfer_env(env, status):
    case = {
        "gpu": "RTX PRO 6000",
        "argv": ["--model", MINIMAX_NVFP4],
        "engine_version": ["vllm==0.15.0"],
        "command": [*env, "vllm", "serve", "m", "--tensor-parallel-size", "4"],
    }
    assert judged(shipped(), "kernel-vllm-015-nvfp4-moe-cutlass", case).status is status


@pytest.mark.parametrize(
    ("row", "release", "gpu", "status"),
    [
        ("kernel-vllm-0150-nvfp4-moe-nongated", "0.15.0", "RTX 5090", Status.FAIL),  # family 100 only
        ("kernel-vllm-0150-nvfp4-moe-nongated", "0.15.0", "B200", Status.PASS),
        ("kernel-vllm-0151-nvfp4-moe-nongated", "0.15.1", "RTX 5090", Status.PASS),  # vllm-project/vllm#33417
        ("kernel-vllm-0151-nvfp4-moe-nongated", "0.15.1", "H100", Status.FAIL),  # NVFP4 from capability 10.0
    ],
)
def test_a_non_gated_nvfp4_moe_has_one_backend_in_0_15(row, release, gpu, status):
    case = {
        "gpu": gpu,
        "argv": ["--model", NEMOTRON_H_NVFP4],
        "engine_version": [f"vllm=={release}"],
        "command": ["vllm", "serve", "m"],
    }
    outcome = judged(shipped(), row, case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "No NvFp4 MoE backend supports the deployment configuration" in outcome.required


def test_a_kernel_shape_limit_reaches_verdict_and_message():
    """mla_dims: FlashInfer's SM120 sparse MLA decode refuses a rope-free MLA (vllm-project/vllm#53963)."""
    case = {"gpu": "RTX PRO 6000", "argv": ["--model", GLM53], "engine_version": ["vllm==0.28.0"], "command": VLLM_M}
    table = shipped()
    before = judged(table, "kernel-vllm-sm120-sparse-mla-dims", case)
    assert before.status is Status.FAIL and "512/64 only, not 512/0" in before.found
    assert "qk_rope_head_dim=64" in before.required
    table["kernels"]["flashinfer-sm120-sparse-mla-decode"]["mla_dims"].append([512, 0])  # a release that takes it
    assert judged(table, "kernel-vllm-sm120-sparse-mla-dims", case).status is Status.PASS
    on_b200 = judged(shipped(), "kernel-vllm-sm120-sparse-mla-dims", {**case, "gpu": "B200"})
    assert on_b200.status is Status.SKIP  # SM100 takes FLASHINFER_MLA_SPARSE, not the SM120 path


VLLM_M = ["vllm", "serve", "m"]


@pytest.mark.parametrize(
    ("spec", "status"),
    [
        (["--speculative-algorithm", "EAGLE"], Status.FAIL),  # the draft worker builds fa3 on B200
        (["--speculative-algorithm", "NGRAM"], Status.SKIP),  # no draft model, no draft attention
        ([], Status.SKIP),  # no speculative decoding: the flag is never read
    ],
)
def test_the_draft_attention_backend_is_judged_where_a_draft_runs(spec, status):
    case = {
        "gpu": "B200",
        "argv": ["--model", "qwen3-8b"],
        "engine_version": ["sglang==0.5.12"],
        "command": ["sglang", "serve", "--model-path", "m", *spec, "--speculative-draft-attention-backend", "fa3"],
    }
    outcome = judged(shipped(), "kernel-sglang-draft-attention-fa3", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "FlashAttention v3 Backend requires SM>=80 and SM<=90" in outcome.required
        assert outcome.fix[0].startswith("--speculative-draft-attention-backend flashinfer")


def test_a_row_the_launch_line_rules_out_needs_no_model():
    """A model named but not found: a row whose launch-line or GPU condition does not hold is skipped (it would
    not run whatever the model), and one whose conditions hold answers unknown (the model decides)."""
    case = {"gpu": "B200", "argv": ["--model", "nobody/not-a-model"], "engine_version": ["sglang==0.5.12"]}
    no_draft = {**case, "command": ["sglang", "serve", "--model-path", "nobody/not-a-model"]}
    fa3_draft = {**no_draft, "command": [*no_draft["command"], *EAGLE_FA3]}
    assert judged(shipped(), "kernel-sglang-draft-attention-fa3", no_draft).status is Status.SKIP
    assert judged(shipped(), "kernel-sglang-draft-attention-fa3", fa3_draft).status is Status.UNKNOWN


EAGLE_FA3 = ["--speculative-algorithm", "EAGLE", "--speculative-draft-attention-backend", "fa3"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        (["--quantization", "fp8", "--fp8-gemm-backend", "flashinfer_trtllm"], Status.FAIL),  # SM100/SM103 only
        (["--quantization", "fp8", "--fp8-gemm-backend", "auto"], Status.SKIP),  # auto picks what the GPU has
        (["--fp8-gemm-backend", "flashinfer_trtllm"], Status.SKIP),  # no FP8 linear: the backend is never built
    ],
)
def test_an_explicit_fp8_gemm_backend_is_gated_by_sglang(extra, status):
    case = {
        "gpu": "H100",
        "argv": ["--model", "qwen3-8b"],
        "engine_version": ["sglang==0.5.20"],
        "command": ["sglang", "serve", "--model-path", "m", *extra],
    }
    outcome = judged(shipped(), "kernel-sglang-fp8-gemm-flashinfer-trtllm", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "requires SM100/SM103 GPUs" in outcome.required and outcome.fix[0] == "--fp8-gemm-backend auto"


MINIMAX_NVFP4 = FIXTURES_DIR / "incident-models" / "minimax-m2.1-nvfp4"


def _nvfp4_variant(tmp_path, name: str, quant: dict) -> str:
    """The MiniMax NVFP4 config with another quantization_config (the weight-only forms vLLM reads apart)."""
    config = json.loads((MINIMAX_NVFP4 / "config.json").read_text())
    config["quantization_config"] = quant
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


@pytest.mark.parametrize(
    ("quant", "gpu", "extra", "status"),
    [
        (None, "H100", ["--linear-backend", "cutlass"], Status.FAIL),  # cutlass_scaled_mm_supports_fp4: cc >= 100
        (None, "B200", ["--linear-backend", "cutlass"], Status.PASS),
        (None, "H100", [], Status.SKIP),  # auto: Marlin below SM100
        (None, "H100", ["--linear-backend", "marlin"], Status.SKIP),
        (
            {"quant_method": "modelopt", "quant_algo": "W4A16_NVFP4"},
            "H100",
            ["--linear-backend", "cutlass"],
            Status.SKIP,
        ),
        # quant_algo NVFP4 with no input_activations anywhere: vLLM serves it as W4A16 (modelopt.py:797-811)
        (
            {"quant_method": "modelopt", "quant_algo": "NVFP4", "config_groups": {"g": {"input_activations": None}}},
            "H100",
            ["--linear-backend", "cutlass"],
            Status.SKIP,
        ),
        # the hf_quant_config.json form: the `quantization` section's quant_algo
        (
            {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}},
            "L40S",
            ["--linear-backend", "cutlass"],
            Status.FAIL,
        ),
    ],
)
def test_an_nvfp4_w4a4_gemm_backend_needs_sm100_in_vllm(tmp_path, quant, gpu, extra, status):
    model = str(MINIMAX_NVFP4) if quant is None else _nvfp4_variant(tmp_path, "nvfp4-variant", quant)
    case = {
        "gpu": gpu,
        "argv": ["--model", model],
        "engine_version": ["vllm==0.33.0"],
        "command": ["vllm", "serve", "m", *extra],
    }
    outcome = judged(shipped(), "kernel-vllm-nvfp4-gemm-linear-backend-cutlass", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "NVFP4 linear layer" in outcome.required and outcome.fix[0].startswith("--linear-backend auto")


def test_a_quant_algo_condition_change_reaches_the_verdict():
    case = {
        "gpu": "H100",
        "argv": ["--model", str(MINIMAX_NVFP4)],
        "engine_version": ["sglang==0.5.23"],
        "command": ["sglang", "serve", "--model-path", "m", "--fp4-gemm-backend", "flashinfer_cutlass"],
    }
    table = shipped()
    row_id = "kernel-sglang-nvfp4-gemm-native-backend"
    outcome = judged(table, row_id, case)
    assert outcome.status is Status.FAIL and "SM100+" in outcome.required
    assert outcome.fix[0] == "--fp4-gemm-backend marlin (SM80-SM90)"
    row = next(r for r in table["dispatch"] if r["id"] == row_id)
    row["when"]["quant_algo"] = ["W4A16_NVFP4"]
    assert judged(table, row_id, case).status is Status.SKIP
    env = {**case, "command": ["SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16=1", *case["command"][:-1], "flashinfer_cutedsl"]}
    assert judged(shipped(), row_id, env).status is Status.SKIP  # w4a16 mode: the marlin-or-Blackwell gate is not taken


MINIMAX_FP8 = FIXTURES_DIR / "incident-models" / "minimax-m2.7-fp8"


@pytest.mark.parametrize(
    ("block", "gpu", "extra", "status"),
    [
        (True, "A100", ["--linear-backend", "deep_gemm"], Status.FAIL),  # support_deep_gemm: SM90, SM10x, SM12x
        (True, "H100", ["--linear-backend", "deep_gemm"], Status.PASS),
        (True, "A100", [], Status.SKIP),  # auto: CUTLASS / Marlin / Triton block FP8
        (False, "A100", ["--linear-backend", "deep_gemm"], Status.SKIP),  # per-tensor FP8: no DeepGEMM kernel, auto
    ],
)
def test_a_weight_block_condition_reaches_the_verdict(tmp_path, block, gpu, extra, status):
    model = str(MINIMAX_FP8)
    if not block:
        config = json.loads((MINIMAX_FP8 / "config.json").read_text())
        del config["quantization_config"]["weight_block_size"]
        folder = tmp_path / "per-tensor-fp8"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        model = str(folder)
    case = {
        "gpu": gpu,
        "argv": ["--model", model],
        "engine_version": ["vllm==0.33.0"],
        "command": ["vllm", "serve", "m", *extra],
    }
    outcome = judged(shipped(), "kernel-vllm-fp8-block-linear-deep-gemm", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "ScaledMM linear layer" in outcome.required and outcome.fix[0].startswith("--linear-backend auto")


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        (["--linear-attn-backend", "flashinfer"], Status.FAIL),  # decode and prefill inherit it: SM90+ only
        (["--linear-attn-decode-backend", "flashinfer"], Status.FAIL),
        # prefill still inherits the base backend
        (["--linear-attn-backend", "flashinfer", "--linear-attn-decode-backend", "triton"], Status.FAIL),
        (
            [
                "--linear-attn-backend", "flashinfer", "--linear-attn-decode-backend", "triton",
                "--linear-attn-prefill-backend", "triton",
            ],
            Status.SKIP,
        ),  # both overridden: FlashInferGDNKernel is never built
        ([], Status.SKIP),  # triton
    ],
)  # fmt: skip
def test_flashinfer_gdn_needs_sm90_in_sglang(extra, status):
    case = {
        "gpu": "A100",
        "argv": ["--model", QWEN35],
        "engine_version": ["sglang==0.5.23"],
        "command": ["sglang", "serve", "--model-path", "m", *extra],
    }
    outcome = judged(shipped(), "kernel-sglang-gdn-flashinfer", case)
    assert outcome.status is status, outcome
    if status is Status.FAIL:
        assert "Requires SM90+" in outcome.required and outcome.fix[0].startswith("--linear-attn-backend triton")


def test_an_option_the_flag_table_models_under_another_name_follows_a_flag_change():
    """--speculative-draft-attention-backend lives in Config.draft_attention_backend: a corrected command's change
    (apply_flags) reaches the dispatch row, which the pasted command alone would not show."""
    from attn_preflight.rules.core.flag_tables import apply_flags

    case = {
        "gpu": "B200",
        "argv": ["--model", "qwen3-8b"],
        "engine_version": ["sglang==0.5.23"],
        "command": ["sglang", "serve", "--model-path", "m", *EAGLE_FA3],
    }
    config, target = config_and_target(case)
    row = next(r for r in dispatch.ROWS if r.id == "kernel-sglang-draft-attention-fa3")
    check = dispatch.judge(row, dispatch.VISION_ARCHITECTURES)
    assert check(config, target).status is Status.FAIL
    fixed = apply_flags(config, "--speculative-draft-attention-backend flashinfer")
    assert fixed is not None and dispatch.option_value(fixed, "--speculative-draft-attention-backend") == "flashinfer"
    assert check(fixed, target).status is Status.SKIP


def _options(when, found: set) -> set:
    for key, value in when.items():
        if key == "option":
            found |= set(value)
        elif isinstance(value, dict):
            _options(value, found)
    return found


def test_option_dests_are_what_the_flag_tables_say_for_every_option_a_row_names():
    """dispatch.json's option_dests (read by option_value, so that a check never loads the flag tables) holds, for
    each option a row names, where the engine's flag table keeps it when that is not the option's own name."""
    from attn_preflight.rules.core.flag_tables import read_flags

    for engine in ("sglang", "vllm"):
        options = set().union(*(_options(row.when, set()) for row in dispatch.ROWS if row.engine == engine))
        for option in sorted(options):
            try:
                values, read, _, _, _ = read_flags(engine, [option, "x"])
            except ValueError:
                dests = []
            else:
                dests = [*values, *read]
            table = dests[0] if len(dests) == 1 else None
            own = option.lstrip("-").replace("-", "_")
            expected = table if table not in (None, own) else None
            assert dispatch.OPTION_DESTS.get(engine, {}).get(option) == expected, (engine, option, dests)
