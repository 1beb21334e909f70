"""check --ask-engine against a real vLLM install: one pinned release (0.33.0) in a CPU venv built (and cached
under the user cache dir) by tests/vllm_engine_venv.py, the device simulated.

The expected answers are vLLM 0.33.0's own behaviour on these configs: the shared vLLM oracle's validation table
(../shared/oracle/vllm/README.md, "Validation (vllm 0.33.0)") and the vLLM source named in each case. In CI (CI
set) or with ATTN_PREFLIGHT_ENGINE_TESTS=1 the venv is built when missing (a few minutes, once); elsewhere the
cases skip unless it is already built. The cases run two at a time through the harness (what check
--ask-engine runs), and one end to end through the CLI.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "tests" / "fixtures" / "models"
RELEASE = "0.33.0"

sys.path.insert(0, str(REPO / "tests"))
import vllm_engine_venv  # noqa: E402

VENVS = vllm_engine_venv.cache_root()  # read now: the session fixture points XDG_CACHE_HOME at a temp dir later


def _python() -> str:
    os.environ.setdefault("ATTN_PREFLIGHT_ENGINE_VENVS", str(VENVS))
    if not vllm_engine_venv.is_built(RELEASE) and not (
        os.environ.get("CI") or os.environ.get("ATTN_PREFLIGHT_ENGINE_TESTS")
    ):
        pytest.skip(f"no vllm {RELEASE} venv: `python tests/vllm_engine_venv.py {RELEASE}` builds it")
    return str(vllm_engine_venv.build(RELEASE))


def model(name, *flags):
    return [str(MODELS / name), *flags]


def gpu(cc, name, mib, count=1):
    return {"name": name, "cc": list(cc), "memory_mib": mib, "count": count}


V100 = gpu((7, 0), "Tesla V100-SXM2-32GB", 32768)
A100 = gpu((8, 0), "NVIDIA A100-SXM4-80GB", 81920)
A100x8 = gpu((8, 0), "NVIDIA A100-SXM4-80GB", 81920, count=8)
H200 = gpu((9, 0), "NVIDIA H200", 143771)
B200x8 = gpu((10, 0), "NVIDIA B200", 183359, count=8)
RTX_PRO = gpu((12, 0), "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887)
LLAMA = "Llama-3.1-8B-Instruct"

CASES = {
    "llama-default-h200": (model(LLAMA), H200, {}),
    "llama-flashinfer-h200": (model(LLAMA, "--attention-backend", "FLASHINFER"), H200, {}),
    "llama-flash-attn-v100": (model(LLAMA, "--attention-backend", "FLASH_ATTN"), V100, {}),
    "llama-fp8-kv-v100": (model(LLAMA, "--kv-cache-dtype", "fp8"), V100, {}),
    "deepseek-tp8-b200": (model("DeepSeek-V3", "-tp", "8"), B200x8, {}),
    "deepseek-flashmla-a100x8": (model("DeepSeek-V3", "--attention-backend", "FLASHMLA", "-tp", "8"), A100x8, {}),
    "gpt-oss-flashinfer-rtxpro": (model("gpt-oss-20b", "--attention-backend", "FLASHINFER"), RTX_PRO, {}),
    "unknown-flag": (model(LLAMA, "--no-such-flag"), H200, {}),
    # vllm-project/recipes@8959cf6:MiniMax/MiniMax-M2.md#L150: a PassConfig field 0.33.0 does not have
    "unknown-pass-config": (
        model(LLAMA, "--compilation-config", '{"mode":3,"pass_config":{"fuse_minimax_qk_norm":true}}'),
        H200,
        {},
    ),
    "llama-nvfp4-block256-a100": (model(LLAMA, "--kv-cache-dtype", "nvfp4", "--block-size", "256"), A100, {}),
    "gemma2-float16": (model("gemma-2-9b", "--dtype", "float16"), H200, {}),
    "tp2-on-one-gpu": (model(LLAMA, "-tp", "2"), H200, {"VLLM_NO_USAGE_STATS": "1", "AWS_KEY": "x"}),
}


@pytest.fixture(scope="module")
def answers():
    from attn_preflight.probe.engine_ask import harness

    python = _python()

    def one(item):
        name, (argv, device, env) = item
        return name, harness.ask("vllm", argv, device, env=env, python=python, timeout=400)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, CASES.items()))


def _r(answer, key):
    return (answer["resolved"] or {}).get(key)


def test_every_answer_is_from_the_engine_with_nothing_fenced(answers):
    for name, answer in answers.items():
        assert answer["engine_version"] == RELEASE, name
        assert answer["status"] in ("accepted", "rejected"), (name, answer.get("reason"), answer.get("log_tail"))
        # nothing but FlashInfer's `which nvcc` JIT probe (refused, and coped with) reached the fence: no network,
        # no write outside the temp dir, no other program
        assert all(e == "program start: subprocess.Popen which nvcc" for e in answer["fence"]), (name, answer["fence"])
        assert answer["driver"] == "vllm_driver/1"


def test_hopper_default_is_flash_attn_3_at_block_16(answers):
    # platforms/cuda.py _get_backend_priorities: FLASH_ATTN first; flash_attn.py picks FA3 on SM90
    answer = answers["llama-default-h200"]
    assert answer["status"] == "accepted"
    assert (_r(answer, "attention_backend"), _r(answer, "page_size"), _r(answer, "flash_attn_version")) == (
        "FLASH_ATTN",
        16,
        3,
    )
    assert _r(answer, "context_length") == 131072 and _r(answer, "kv_cache_dtype") == "auto"
    assert answer["stages"] == ["parse", "config", "validate", "backend_selection", "resolve", "backend_init"]
    assert answer["resolved"]["attention_layers"] == {"FLASH_ATTN": 32}


def test_a_named_backend_is_used_on_every_layer(answers):
    answer = answers["llama-flashinfer-h200"]
    assert answer["status"] == "accepted" and _r(answer, "attention_backend") == "FLASHINFER"
    assert answer["resolved"]["selector_calls"][0]["requested"] == "FLASHINFER"


def test_flash_attn_on_volta_is_refused_by_the_selector(answers):
    # CudaPlatform.get_attn_backend_cls -> FlashAttentionBackend.validate_configuration
    answer = answers["llama-flash-attn-v100"]
    assert answer["status"] == "rejected" and answer["stage"] == "backend_selection"
    assert "compute capability not supported" in answer["error"]
    assert answer["raised_at"].startswith("vllm/platforms/cuda.py")


def test_fp8_kv_on_volta_is_refused_by_the_triton_impl(answers):
    # v1/attention/backends/triton_attn.py TritonAttentionImpl.__init__: fp8e4nv needs SM89+
    answer = answers["llama-fp8-kv-v100"]
    assert answer["status"] == "rejected" and answer["stage"] == "backend_selection"
    assert "requires SM89+" in answer["error"] and "triton_attn.py" in answer["raised_at"]


def test_mla_on_blackwell_picks_flashinfer_mla_at_block_32(answers):
    answer = answers["deepseek-tp8-b200"]
    assert answer["status"] == "accepted"
    assert (_r(answer, "attention_backend"), _r(answer, "page_size"), _r(answer, "use_mla")) == (
        "FLASHINFER_MLA",
        32,
        True,
    )


def test_flashmla_off_hopper_is_refused(answers):
    answer = answers["deepseek-flashmla-a100x8"]
    assert answer["status"] == "rejected" and answer["stage"] == "backend_selection"
    assert "FlashMLA Dense is only supported on Hopper devices." in answer["error"]


def test_gpt_oss_sinks_run_on_flashinfer_on_sm120_with_its_cubins(answers):
    answer = answers["gpt-oss-flashinfer-rtxpro"]
    assert answer["status"] == "accepted" and _r(answer, "attention_backend") == "FLASHINFER"
    assert any("VLLM_HAS_FLASHINFER_CUBIN" in n for n in answer["notes"])  # the host assumption is said


def test_flashinfer_block_256_without_trtllm_runs_as_64_token_kernel_pages(answers):
    # The model runner gives the metadata builders select_common_block_size(256, [FLASHINFER]) (v1/worker/utils.py
    # prepare_kernel_block_sizes): FlashInfer declares exact sizes [16, 32, 64] without TRT-LLM
    # (flashinfer.py get_supported_kernel_block_sizes), so 64; the builder's "Unexpected FlashInfer page size 256
    # without trtllm-gen GQA" assertion (flashinfer.py:1001-1005) is not reached.
    answer = answers["llama-nvfp4-block256-a100"]
    assert answer["status"] == "accepted", answer.get("error")
    assert (_r(answer, "attention_backend"), _r(answer, "page_size"), _r(answer, "kernel_block_size")) == (
        "FLASHINFER",
        256,
        64,
    )


# The rules' side of each accepted case: check --gpu NAME --engine-version vllm==0.33.0 on the same line
RULES_GPU = {
    "llama-default-h200": "H200",
    "llama-flashinfer-h200": "H200",
    "deepseek-tp8-b200": "8xB200",
    "gpt-oss-flashinfer-rtxpro": "RTX PRO 6000",
    "llama-nvfp4-block256-a100": "A100",
}


def test_the_rules_resolve_what_the_engine_resolved(answers):
    """engine-disagrees compares the backend, block size and KV dtype: none on these accepted answers."""
    from attn_preflight.check_engine import ENGINE_DISAGREES, engine_findings
    from attn_preflight.commands.check import config_from_options, target_from_options
    from attn_preflight.rules.core.judge import evaluate

    for name, gpu_name in RULES_GPU.items():
        argv, _device, _env = CASES[name]
        config = config_from_options({"engine": "vllm"}, ["vllm", "serve", *argv])
        report = evaluate(config, target_from_options(gpu_name, None, [f"vllm=={RELEASE}"]), alternatives=False)
        found = engine_findings(report, answers[name])
        assert not [f.message for f in found if f.rule_id == ENGINE_DISAGREES.id], name


def test_an_unknown_flag_is_the_parsers_rejection(answers):
    answer = answers["unknown-flag"]
    assert answer["status"] == "rejected" and answer["stage"] == "parse" and answer["error_type"] == "ArgumentError"
    assert "--no-such-flag" in answer["error"]


def test_a_config_flags_rejection_keeps_its_reason(answers):
    """argparse's error for a JSON config flag spans lines (pydantic's field, its reason, a docs link): the answer
    names the field, not only the link that ends it (fuse_minimax_qk_norm: not a PassConfig field in 0.33.0)."""
    answer = answers["unknown-pass-config"]
    assert answer["status"] == "rejected" and answer["stage"] == "parse", answer
    assert "fuse_minimax_qk_norm" in answer["error"] and "--compilation-config" in answer["error"], answer["error"]


def test_gemma2_in_float16_is_refused_by_the_model_config(answers):
    answer = answers["gemma2-float16"]
    assert answer["status"] == "rejected" and answer["stage"] == "config"
    assert "does not support float16" in answer["error"]


def test_tensor_parallel_beyond_the_gpus_is_refused_and_only_engine_variables_pass(answers):
    answer = answers["tp2-on-one-gpu"]
    assert answer["status"] == "rejected" and answer["stage"] == "config", answer.get("reason")
    assert answer["env"] == {"VLLM_NO_USAGE_STATS": "1"} and answer["env_dropped"] == ["AWS_KEY"]


def test_check_ask_engine_end_to_end(monkeypatch):
    """The CLI with --engine-python: the engine's rejection decides the verdict."""
    from attn_preflight.probe.engine_ask import harness
    from tests.cli_run import run_cli

    # the import alone took over 180 s (the harness's default) on this 2-core machine shared by eight sessions
    monkeypatch.setattr(harness, "DEFAULT_TIMEOUT", 900.0)
    python = _python()
    argv = ["check", "--gpu", "V100", "--ask-engine", "--engine-python", python, "--format", "json", "--"]
    run = run_cli(argv + ["vllm", "serve", *model(LLAMA, "--attention-backend", "FLASH_ATTN")])
    report = json.loads(run.out)
    answer = report["engine_answer"]
    assert answer["engine_version"] == RELEASE and answer["status"] == "rejected", answer.get("reason")
    assert run.code == 1 and report["verdict"] == "fail"
    assert any(f["rule_id"] == "engine-answer" and f["status"] == "fail" for f in report["findings"])


# Issue 20: vLLM 0.11.2 / 0.15.1, whose venvs carry flashinfer-python 0.5.2 / 0.6.1. Their
# flashinfer/comm/cuda_ipc.py:194 builds `cudart = CudaRTLibrary()` at import (asserting libcudart is loaded), which
# vllm/compilation/collective_fusion.py imports at backend selection: the driver stands a wrapper in there
# (simulated.defer_import_time_cudart) and says so in `notes`. Never built here (a few minutes each): the cases
# run where `python tests/vllm_engine_venv.py 0.11.2` / `0.15.1` (or bench/engine_venvs.py) built them.
H100 = gpu((9, 0), "NVIDIA H100 80GB HBM3", 81559)
H100x8 = gpu((9, 0), "NVIDIA H100 80GB HBM3", 81559, count=8)
STAND_IN = "flashinfer.comm.cuda_ipc.cudart (a CUDA runtime wrapper built at import) is a stand-in that fails if used"
# 0.11.2 has no --attention-backend flag (its parser refuses it): the backend is VLLM_ATTENTION_BACKEND there
FLASHMLA_ON_DENSE = {
    "0.11.2": (model(LLAMA), {"VLLM_ATTENTION_BACKEND": "FLASHMLA"}),
    "0.15.1": (model(LLAMA, "--attention-backend", "FLASHMLA"), {}),
}


@pytest.fixture(scope="module", params=sorted(FLASHMLA_ON_DENSE))
def older(request):
    from attn_preflight.probe.engine_ask import harness

    release = request.param
    os.environ.setdefault("ATTN_PREFLIGHT_ENGINE_VENVS", str(VENVS))
    if not vllm_engine_venv.is_built(release):
        pytest.skip(f"no vllm {release} venv: `python tests/vllm_engine_venv.py {release}` builds it")
    python = str(vllm_engine_venv.venv_python(release))
    cases = {
        "llama-default-h100": (model(LLAMA), H100, {}),
        "flashmla-on-dense-h100": (*FLASHMLA_ON_DENSE[release][:1], H100, FLASHMLA_ON_DENSE[release][1]),
        "deepseek-tp8-h100x8": (model("DeepSeek-V3", "-tp", "8"), H100x8, {}),
    }

    def one(item):
        name, (argv, device, env) = item
        return name, harness.ask("vllm", argv, device, env=env, python=python, timeout=400)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return release, dict(pool.map(one, cases.items()))


def test_older_releases_with_an_import_time_cuda_runtime_answer(older):
    release, answers = older
    for name, answer in answers.items():
        assert answer["engine_version"] == release, name
        assert answer["status"] in ("accepted", "rejected"), (name, answer.get("reason"), answer.get("log_tail"))
        # besides `which nvcc`, flashinfer 0.5/0.6's jit/core.py:19 os.makedirs(FLASHINFER_CSRC_DIR, exist_ok=True)
        # at import: refused (a write outside the temp dir) and coped with (the directory is in the wheel)
        for event in answer["fence"]:
            assert event == "program start: subprocess.Popen which nvcc" or (
                event.startswith("os.mkdir of ") and event.endswith("/flashinfer/data/csrc' outside the temp dir")
            ), (name, event)


def test_older_releases_pick_flash_attn_3_at_block_16_for_a_dense_model(older):
    _, answers = older
    answer = answers["llama-default-h100"]
    assert answer["status"] == "accepted", answer.get("reason")
    assert (_r(answer, "attention_backend"), _r(answer, "page_size"), _r(answer, "flash_attn_version")) == (
        "FLASH_ATTN",
        16,
        3,
    )
    assert _r(answer, "kv_cache_dtype") == "auto" and answer["resolved"]["attention_layers"] == {"FLASH_ATTN": 32}
    assert "backend_selection" in answer["stages"] and STAND_IN in answer["notes"]


def test_older_releases_refuse_an_mla_backend_on_a_dense_model(older):
    # the selector's validate_configuration: FlashMLA serves MLA models only
    _, answers = older
    answer = answers["flashmla-on-dense-h100"]
    assert answer["status"] == "rejected" and answer["stage"] == "backend_selection", answer.get("reason")
    assert answer["error_type"] == "ValueError" and "non-MLA not supported" in answer["error"]


def test_older_releases_run_deepseek_on_flash_attn_mla_at_block_64_on_hopper(older):
    # platforms/cuda.py check_and_update_config forces block 64 where FlashMLA dense is supported (SM90), then the
    # selector's non-Blackwell MLA priority puts FLASH_ATTN_MLA first (0.15.1 cuda.py:60-66, 204-223)
    _, answers = older
    answer = answers["deepseek-tp8-h100x8"]
    assert answer["status"] == "accepted", answer.get("reason")
    assert _r(answer, "use_mla") is True and _r(answer, "tensor_parallel_size") == 8
    assert (_r(answer, "attention_backend"), _r(answer, "page_size")) == ("FLASH_ATTN_MLA", 64)
    assert answer["resolved"]["attention_layers"] == {"FLASH_ATTN_MLA": 61} and STAND_IN in answer["notes"]
