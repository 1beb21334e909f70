"""The corrected command (issue 10, part 3): the user's own pasted command with the fewest changes that passes,
re-checked through the CLI by pasting it back; when nothing passes, the reason. A property test over random
failing configs: every printed fix, every listed alternative and the corrected command, applied through the
CLI's own parsing and checked again; and no single fix or alternative settles what the corrected command
needed more changes for."""

from __future__ import annotations

import shlex

from cli_run import check_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GPUS = ("A100", "H100", "B200", "RTX 5090", "L4", "GB200")
BACKENDS = ("fa3", "fa4", "flashinfer", "triton", "trtllm_mha", "trtllm_mla", "flashmla", "cutlass_mla")
KV_DTYPES = ("auto", "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4")
MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-V3", "google/gemma-2-9b-it")


def judged(argv):
    run, report = check_json(argv)
    assert run.code in (0, 1), (argv, run.err)
    return report


def settled(report) -> bool:
    """No failure, and no warning that a flag change addresses (the corrected command's own goal)."""
    return not any(
        f["status"] == "fail" or (f["status"] == "warn" and any(x.startswith("--") for x in f["fix"]))
        for f in report["findings"]
    )


def pasted(gpu, *command):
    return judged(["--gpu", gpu, "--", *command])


def sglang(*flags):
    return ["python", "-m", "sglang.launch_server", *flags]


def test_fa4_mxfp8_on_h100_is_corrected_to_a_kv_dtype_that_works_and_keeps_the_rest():
    """issue 10: the fix was `--kv-cache-dtype fp8_e4m3`, which fails fa4-fp8-sm100 on an H100."""
    command = sglang(
        "--model-path", MODELS[0], "--attention-backend", "fa4", "--kv-cache-dtype=mxfp8", "--port", "30000"
    )
    report = pasted("H100", *command)
    correction = report["correction"]
    assert report["verdict"] == "fail" and correction["pasted"] is True
    assert correction["changes"] == ["--kv-cache-dtype auto"]
    words = shlex.split(correction["command"])
    assert words == [*command[:7], "--kv-cache-dtype=auto", "--port", "30000"]  # the user's `=` style kept
    again = pasted("H100", *words)
    assert again["verdict"] == "pass" and again["correction"] is None


def test_score_mod_on_a100_is_not_corrected_to_fa3():
    """issue 10: fa4 + a custom score_mod on an A100 was fixed with fa3, which fails fa3-score-mod."""
    report = judged(["--gpu", "A100", "--model", MODELS[0], "--feature", "score_mod", "--attention-backend", "fa4"])
    correction = report["correction"]
    assert correction["pasted"] is False and correction["command"] != "--attention-backend fa3"
    again = judged(
        ["--gpu", "A100", "--model", MODELS[0], "--feature", "score_mod", *shlex.split(correction["command"])]
    )
    assert again["verdict"] == "pass"


def test_an_aliased_flag_keeps_its_spelling_and_a_phase_backend_goes_with_it():
    command = sglang(
        "--model-path",
        MODELS[1],
        "--tp",
        "8",
        "--prefill-attention-backend",
        "fa4",
        "--decode-attention-backend",
        "fa4",
        "--enable-deterministic-inference",
    )
    correction = pasted("H100", *command)["correction"]
    words = shlex.split(correction["command"])
    assert "--prefill-attention-backend" not in words and "--decode-attention-backend" not in words
    assert words[:6] == command[:6] and words.count("--attention-backend") == 1
    assert pasted("H100", *words)["verdict"] != "fail"


def test_vllm_env_backend_is_dropped_when_the_flag_replaces_it():
    command = ["VLLM_ATTENTION_BACKEND=FLASHMLA", "vllm", "serve", MODELS[0], "--tensor-parallel-size", "1"]
    report = pasted("H100", *command)
    assert report["verdict"] == "fail"
    words = shlex.split(report["correction"]["command"])
    assert not any(w.startswith("VLLM_ATTENTION_BACKEND=") for w in words), words
    assert words[:3] == ["vllm", "serve", MODELS[0]]
    assert pasted("H100", *words)["verdict"] != "fail"


def test_secrets_in_the_pasted_command_are_not_echoed():
    command = [
        "HF_TOKEN=hf_abcdef",
        *sglang(
            "--model-path",
            MODELS[0],
            "--attention-backend",
            "fa4",
            "--kv-cache-dtype",
            "mxfp8",
            "--api-key",
            "sk-live-123",
        ),
    ]
    text = check_json(["--gpu", "H100", "--", *command])[0].out
    assert "hf_abcdef" not in text and "sk-live-123" not in text
    assert "HF_TOKEN=***" in text


def test_when_no_flag_change_passes_it_says_why():
    """DeepSeek-V3's 627 GiB of FP8 weights fit no layout of T4s (16 GB) up to TP 8 x PP 16: the corrected command
    is `null`, and the reason names the rule still failing and that its fix is more than a flag."""
    correction = judged(["--gpu", "T4", "--model", MODELS[1]])["correction"]
    assert correction["command"] is None and correction["changes"] == []
    assert correction["reason"].startswith("no change of at most 3 flags passes")
    assert "still failing memory-weights-fit" in correction["reason"] and "more than a flag" in correction["reason"]


def test_the_table_prints_the_corrected_command_ready_to_paste():
    argv = [
        "--gpu",
        "H100",
        "--",
        *sglang("--model-path", MODELS[0], "--attention-backend", "fa4", "--kv-cache-dtype", "mxfp8"),
    ]
    from cli_run import run_cli

    table = run_cli(["check", *argv]).out
    block = table.split("Corrected command (1 change, re-checked: pass)")[1].split("\n\n")[0].split("\n", 2)[2]
    assert shlex.split(block.replace("\\\n", " ")) == shlex.split(check_json(argv)[1]["correction"]["command"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gpu=st.sampled_from(GPUS),
    backend=st.sampled_from(BACKENDS),
    kv=st.sampled_from(KV_DTYPES),
    model=st.sampled_from(MODELS),
    page=st.sampled_from([None, 1, 16, 64, 128]),
    deterministic=st.booleans(),
    eagle_topk=st.sampled_from([None, 1, 4]),
)
def test_random_failing_configs_are_corrected_with_the_fewest_changes(
    gpu, backend, kv, model, page, deterministic, eagle_topk
):
    flags = ["--model-path", model, "--attention-backend", backend, "--kv-cache-dtype", kv]
    if page is not None:
        flags += ["--page-size", str(page)]
    if deterministic:
        flags.append("--enable-deterministic-inference")
    if eagle_topk is not None:
        flags += ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", str(eagle_topk)]
    command = sglang(*flags)
    report = pasted(gpu, *command)
    correction = report["correction"]
    if settled(report):
        assert correction is None or correction["command"] is None or correction["changes"]
        return
    assert correction is not None
    if correction["command"] is None:
        assert "still failing" in correction["reason"] or "settles" in correction["reason"]
        return
    again = pasted(gpu, *shlex.split(correction["command"]))
    assert settled(again), (command, correction, [f["rule_id"] for f in again["findings"] if f["status"] == "fail"])
    # fewest changes: no printed fix or listed alternative of fewer flags settles it
    if len(correction["changes"]) > 1:
        singles = {fix for f in report["findings"] for fix in f["fix"] if fix.startswith("--")}
        singles |= {f"{a['option']} {a['value']}" for a in report["alternatives"]}
        for single in singles:
            if sum(word.startswith("--") for word in shlex.split(single)) >= len(correction["changes"]):
                continue  # as many flags as the correction changes: not fewer
            assert not settled(pasted(gpu, *command, *shlex.split(single))), (command, single, correction)
