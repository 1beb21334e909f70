"""check --ask-engine against a real SGLang install: one pinned release in a venv built (and cached under the
user cache dir) by bench/engine_venvs.py, the device simulated.

The expected answers are SGLang 0.5.23's own behaviour on these configs, as the shared oracle records it
(../shared/oracle/README.md, "Validation (sglang 0.5.23)") and as its sources say (the hook or factory named
in each case). In CI (CI set) or with ATTN_PREFLIGHT_ENGINE_TESTS=1 the venv is built when missing (a few
minutes, once); elsewhere the cases skip unless it is already built. The cases run three at a time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "tests" / "fixtures" / "models"
RELEASE = "0.5.23"
NEWER = "0.5.99"  # no such release: a re-versioned copy of RELEASE stands for one newer than any known

_spec = importlib.util.spec_from_file_location("engine_venvs", REPO / "bench" / "engine_venvs.py")
engine_venvs = sys.modules.setdefault("engine_venvs", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(engine_venvs)
VENVS = engine_venvs.cache_root()  # read now: the session fixture points XDG_CACHE_HOME at a temp dir later


def _python(as_version=None) -> str:
    os.environ.setdefault("ATTN_PREFLIGHT_ENGINE_VENVS", str(VENVS))
    name = f"sglang-{as_version}-copy-of-{RELEASE}" if as_version else f"sglang-{RELEASE}"
    built = (VENVS / name / engine_venvs.MARKER).exists()
    if not built and not (os.environ.get("CI") or os.environ.get("ATTN_PREFLIGHT_ENGINE_TESTS")):
        pytest.skip(f"no sglang {RELEASE} venv: `python bench/engine_venvs.py sglang=={RELEASE}` builds it")
    return engine_venvs.python_for("sglang", RELEASE, as_version)


def llama(*flags):
    return ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct"), *flags]


def deepseek(*flags):
    return ["--model-path", str(MODELS / "DeepSeek-V3"), *flags]


def gpu(cc, name, mib, count=8):
    return {"name": name, "cc": list(cc), "memory_mib": mib, "count": count}


H200 = gpu((9, 0), "NVIDIA H200", 143771)
B200 = gpu((10, 0), "NVIDIA B200", 183359)
A100 = gpu((8, 0), "NVIDIA A100-SXM4-80GB", 81920)
RTX_PRO = gpu((12, 0), "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887)

CASES = {
    "llama-fa3-h200": (llama("--attention-backend", "fa3"), H200, {}),
    "llama-default-b200": (llama(), B200, {}),
    "deepseek-fa4-det-h200": (deepseek("--attention-backend", "fa4", "--enable-deterministic-inference"), H200, {}),
    "deepseek-fa4-det-b200": (deepseek("--attention-backend", "fa4", "--enable-deterministic-inference"), B200, {}),
    "llama-fa3-b200": (llama("--attention-backend", "fa3"), B200, {}),
    "llama-fa3-e5m2-h200": (llama("--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"), H200, {}),
    "llama-trtllm-mha-rtxpro": (llama("--attention-backend", "trtllm_mha"), RTX_PRO, {}),
    "gpt-oss-flashinfer-h200": (
        ["--model-path", str(MODELS / "gpt-oss-20b"), "--attention-backend", "flashinfer"],
        H200,
        {},
    ),
    "bad-choice": (llama("--attention-backend", "no_such_backend"), H200, {}),
    "deepseek-trtllm-mla-a100": (deepseek("--attention-backend", "trtllm_mla"), A100, {}),
    "config-file": (llama("--config", "CONFIG"), H200, {"SGLANG_ENABLE_TORCH_COMPILE": "0", "AWS_KEY": "x"}),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    from attn_preflight.probe.engine_ask import harness

    python = _python()
    config = tmp_path_factory.mktemp("launch") / "launch.yaml"
    config.write_text("attention-backend: fa4\nenable-deterministic-inference: true\n")

    def one(item):
        name, (argv, device, env) = item
        argv = [str(config) if a == "CONFIG" else a for a in argv]
        if name == "config-file":
            argv = deepseek(*argv[2:])
        return name, harness.ask("sglang", argv, device, env=env, python=python, timeout=300)

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(pool.map(one, CASES.items()))


def _resolved(answer):
    r = answer["resolved"] or {}
    return (
        r.get("effective_prefill_attention_backend"),
        r.get("effective_decode_attention_backend"),
        r.get("page_size"),
    )


def test_every_answer_is_from_the_engine_with_nothing_fenced(answers):
    for name, answer in answers.items():
        assert answer["engine_version"] == RELEASE, name
        assert answer["status"] in ("accepted", "rejected"), (name, answer.get("reason"), answer.get("log_tail"))
        assert answer["fence"] == [], (name, answer["fence"])  # no network, program or write outside was tried
        assert answer["shape"] == "pipeline"


def test_an_h200_runs_fa3_as_asked(answers):
    answer = answers["llama-fa3-h200"]
    assert answer["status"] == "accepted" and _resolved(answer) == ("fa3", "fa3", 1)
    assert answer["resolved"]["context_length"] == 131072 and answer["resolved"]["kv_cache_dtype"] == "auto"
    assert answer["stages"] == ["parse", "resolve", "backend_selection", "validate", "backend_init"]


def test_the_blackwell_default_is_trtllm_mha_at_page_64(answers):
    # arg_groups/model_override_base.py get_default_attn_backend: SM100 -> trtllm_mha; its page constraint -> 64
    assert _resolved(answers["llama-default-b200"]) == ("trtllm_mha", "trtllm_mha", 64)


def test_deterministic_fa4_mla_off_sm100_is_rejected_in_resolution(answers):
    answer = answers["deepseek-fa4-det-h200"]
    assert answer["status"] == "rejected" and answer["stage"] == "resolve"
    assert answer["error_type"] == "ValueError" and "requires SM100/SM110" in answer["error"]
    assert answer["hook"] == "handle_deterministic_inference"
    assert answers["deepseek-fa4-det-b200"]["status"] == "accepted"
    assert _resolved(answers["deepseek-fa4-det-b200"])[:2] == ("fa4", "fa4")


def test_fa3_off_hopper_is_refused_by_its_factory(answers):
    # layers/attention/attention_registry.py create_flashattention_v3_backend: "requires SM>=80 and SM<=90"
    answer = answers["llama-fa3-b200"]
    assert answer["status"] == "rejected" and answer["stage"] == "backend_init"
    assert "SM>=80 and SM<=90" in answer["error"]


def test_fa3_with_fp8_e5m2_falls_back_to_triton_with_a_warning(answers):
    answer = answers["llama-fa3-e5m2-h200"]
    assert answer["status"] == "accepted" and _resolved(answer)[:2] == ("triton", "triton")
    assert any("fp8_e4m3" in line for line in answer["warnings"]), answer["warnings"]


def test_trtllm_mha_forces_page_64_on_sm120(answers):
    assert _resolved(answers["llama-trtllm-mha-rtxpro"]) == ("trtllm_mha", "trtllm_mha", 64)


def test_gpt_oss_refuses_flashinfer(answers):
    answer = answers["gpt-oss-flashinfer-h200"]
    assert answer["status"] == "rejected" and answer["error_type"] == "AssertionError"
    assert "GptOssForCausalLM" in answer["error"]


def test_an_unknown_choice_is_the_parsers_rejection(answers):
    answer = answers["bad-choice"]
    assert answer["status"] == "rejected" and answer["stage"] == "parse" and answer["error_type"] == "ArgumentError"
    assert "no_such_backend" in answer["error"]


def test_trtllm_mla_is_blackwell_only(answers):
    answer = answers["deepseek-trtllm-mla-a100"]
    assert answer["status"] == "rejected" and "Blackwell" in answer["error"]


def test_a_config_file_is_merged_by_the_engine_and_only_its_variables_pass(answers):
    answer = answers["config-file"]  # the YAML asks for fa4 + deterministic on an H200: resolution refuses it
    assert answer["status"] == "rejected" and "requires SM100/SM110" in answer["error"]
    assert answer["env"] == {"SGLANG_ENABLE_TORCH_COMPILE": "0"} and answer["env_dropped"] == ["AWS_KEY"]


def test_check_ask_engine_end_to_end_with_a_newer_unknown_release(tmp_path):
    """A release newer than any known is tried, not refused: its answer stands, and the rules say they judge
    it with the newest behaviour they know."""
    from tests.cli_run import run_cli

    python = _python(NEWER)
    argv = ["check", "--gpu", "H200", "--ask-engine", "--engine-python", python, "--format", "json", "--"]
    run = run_cli(argv + ["python", "-m", "sglang.launch_server", *llama("--attention-backend", "fa3")])
    report = json.loads(run.out)
    answer = report["engine_answer"]
    assert answer["engine_version"] == NEWER and answer["status"] == "accepted", answer.get("reason")
    assert report["target"]["versions"]["sglang"] == NEWER
    assert run.code == (1 if report["verdict"] == "fail" else 0)
    assert any(f["rule_id"] == "engine-answer" and f["status"] == "pass" for f in report["findings"])
    assert sys.executable not in answer["python"]
