"""The corrected command (issue 10, part 3): the user's own pasted command with the fewest changes that passes,
re-checked through the CLI by pasting it back; when nothing passes, the reason. A property test over random
failing configs: every printed fix, every listed alternative and the corrected command, applied through the
CLI's own parsing and checked again; and no single fix or alternative settles what the corrected command
needed more changes for."""

from __future__ import annotations

import shlex

import pytest
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
    """On vLLM 0.14 the variable still chooses (0.15 ignores it: then the launch starts with vLLM's own choice)."""
    command = ["VLLM_ATTENTION_BACKEND=FLASHMLA", "vllm", "serve", MODELS[0], "--tensor-parallel-size", "1"]
    report = pasted_at("0.14.1", "H100", command)
    assert report["verdict"] == "fail"
    words = shlex.split(report["correction"]["command"])
    assert not any(w.startswith("VLLM_ATTENTION_BACKEND=") for w in words), words
    assert words[:3] == ["vllm", "serve", MODELS[0]]
    assert pasted_at("0.14.1", "H100", words)["verdict"] != "fail"
    assert pasted("H100", *command)["verdict"] != "fail"  # vLLM >= 0.15 ignores the variable


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
            fewer = pasted(gpu, *command, *shlex.split(single))
            if "attention_backend" in (fewer["config"]["rewritten_by_engine"] or {}):
                continue  # settles only because the engine silently runs another backend: never the correction
            assert not settled(fewer), (command, single, correction)


# --- vLLM, release by release: before 0.13.0 the backend is VLLM_ATTENTION_BACKEND (no --attention-backend) ---

VLLM_RELEASES = ("0.11.0", "0.12.0", "0.13.0", "0.14.1", "0.20.0")
VLLM_BACKENDS = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "FLASHMLA", "CUTLASS_MLA", "TRITON_MLA")
VLLM_KV_DTYPES = ("auto", "fp8", "fp8_e5m2", "nvfp4")
VLLM_MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "openai/gpt-oss-20b", "deepseek-ai/DeepSeek-V2-Lite")
BACKEND_ENV = "VLLM_ATTENTION_BACKEND"


def is_change(fix: str) -> bool:
    """A fix that changes the command (a flag, an environment assignment, `unset NAME`), not an install."""
    first = fix.split(" ", 1)[0]
    return first.startswith("--") or first == "unset" or ("=" in first and first.split("=")[0].isupper())


def vllm_command(release: str, model: str, backend: str, kv: str) -> list[str]:
    """`vllm serve` naming the backend as that release reads it (vllm 0.12.0's engine/arg_utils.py has no
    --attention-backend; 0.13.0 added it)."""
    flags = ["--kv-cache-dtype", kv]
    if tuple(map(int, release.split("."))) < (0, 13):
        return [f"{BACKEND_ENV}={backend}", "vllm", "serve", model, *flags]
    return ["vllm", "serve", model, "--attention-backend", backend, *flags]


def applied(command: list[str], fix: str) -> list[str]:
    """`command` with a printed fix applied by hand, as a user would: an assignment replaces theirs in the prefix,
    `unset NAME` drops it, flags are appended (argparse keeps the last value)."""
    words = shlex.split(fix)
    program = next(i for i, w in enumerate(command) if w in ("vllm", "python"))
    prefix, rest = command[:program], command[program:]
    if words[0] == "unset":
        return [w for w in prefix if not w.startswith(words[1] + "=")] + rest
    assigned = [w for w in words if not w.startswith("-") and "=" in w]
    names = {w.split("=")[0] for w in assigned}
    prefix = [w for w in prefix if w.split("=")[0] not in names] + assigned
    return prefix + rest + [w for w in words if w not in assigned]


def pasted_at(release, gpu, command):
    return judged(["--gpu", gpu, "--engine-version", f"vllm=={release}", "--", *command])


def refused_flags(report) -> str:
    known = next(f for f in report["findings"] if f["rule_id"] == "general-flags-known")
    return known["message"] if known["status"] == "fail" else ""


@pytest.mark.parametrize("release", ["0.11.0", "0.12.0"])
def test_vllm_before_0_13_is_fixed_and_corrected_with_the_env_var(release):
    """gpt-oss's attention sinks on FLASH_ATTN need FA3 (SM 9.x): on an A100 each release refuses it. vllm 0.12.0's
    argparse has no --attention-backend (engine/arg_utils.py; `--attention-backend` first in 0.13.0), so every
    fix, alternative and the corrected command name the backend with VLLM_ATTENTION_BACKEND."""
    command = vllm_command(release, "openai/gpt-oss-20b", "FLASH_ATTN", "auto")
    report = pasted_at(release, "A100", command)
    assert report["verdict"] == "fail"
    fixes = [fix for f in report["findings"] for fix in f["fix"]]
    assert fixes and all(f"{BACKEND_ENV}=" in fix or fix.startswith("unset ") for fix in fixes), fixes
    assert report["alternatives"] and {a["option"] for a in report["alternatives"]} <= {BACKEND_ENV, "--kv-cache-dtype"}
    correction = report["correction"]
    words = shlex.split(correction["command"])
    assert "--attention-backend" not in words and words[0].startswith(f"{BACKEND_ENV}=TRITON_ATTN")
    assert words[1:] == command[1:]
    again = pasted_at(release, "A100", words)
    assert again["verdict"] == "pass", [f["rule_id"] for f in again["findings"] if f["status"] == "fail"]
    # the flag form the fix used to print is refused by that release's argparse
    flag_form = pasted_at(
        release, "A100", ["vllm", "serve", "openai/gpt-oss-20b", "--attention-backend", "TRITON_ATTN"]
    )
    assert "--attention-backend" in refused_flags(flag_form)


def test_vllm_0_12_command_with_the_flag_is_corrected_to_the_env_var_and_the_flag_goes():
    command = ["vllm", "serve", "openai/gpt-oss-20b", "--attention-backend", "FLASH_ATTN", "--port", "8000"]
    report = pasted_at("0.12.0", "A100", command)
    assert "--attention-backend" in refused_flags(report)
    words = shlex.split(report["correction"]["command"])
    assert words == [f"{BACKEND_ENV}=TRITON_ATTN", "vllm", "serve", "openai/gpt-oss-20b", "--port", "8000"], words
    assert pasted_at("0.12.0", "A100", words)["verdict"] == "pass"


def test_vllm_0_13_is_corrected_with_the_flag_and_the_deprecated_env_var_goes():
    command = vllm_command("0.12.0", "openai/gpt-oss-20b", "FLASH_ATTN", "auto")  # the 0.12 habit, on 0.13
    report = pasted_at("0.13.0", "A100", command)
    words = shlex.split(report["correction"]["command"])
    assert words == [
        "vllm",
        "serve",
        "openai/gpt-oss-20b",
        "--kv-cache-dtype",
        "auto",
        "--attention-backend",
        "TRITON_ATTN",
    ]
    assert pasted_at("0.13.0", "A100", words)["verdict"] == "pass"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    release=st.sampled_from(VLLM_RELEASES),
    gpu=st.sampled_from(("A100", "H100", "B200", "L4")),
    backend=st.sampled_from(VLLM_BACKENDS),
    kv=st.sampled_from(VLLM_KV_DTYPES),
    model=st.sampled_from(VLLM_MODELS),
)
def test_random_vllm_configs_get_fixes_and_a_correction_their_release_accepts(release, gpu, backend, kv, model):
    command = vllm_command(release, model, backend, kv)
    report = pasted_at(release, gpu, command)
    failing = {f["rule_id"] for f in report["findings"] if f["status"] == "fail"}
    for finding in report["findings"]:
        if finding["status"] not in ("fail", "warn"):
            continue
        for fix in filter(is_change, finding["fix"]):
            after = pasted_at(release, gpu, applied(command, fix))
            again = {f["rule_id"]: f["status"] for f in after["findings"]}
            assert again.get(finding["rule_id"]) in ("pass", "skip", None), (command, fix, finding["rule_id"])
            assert not {r for r, s in again.items() if s == "fail"} - failing, (command, fix, again)
    for alternative in report["alternatives"]:
        fix = (
            f"{alternative['option']}={alternative['value']}"
            if alternative["option"] == BACKEND_ENV
            else f"{alternative['option']} {alternative['value']}"
        )
        assert not refused_flags(pasted_at(release, gpu, applied(command, fix))), (command, fix)
    correction = report["correction"]
    if correction is None or correction["command"] is None:
        return
    again = pasted_at(release, gpu, shlex.split(correction["command"]))
    assert not refused_flags(again), (command, correction)
    assert not any(
        f["status"] == "fail" or (f["status"] == "warn" and any(map(is_change, f["fix"]))) for f in again["findings"]
    ), (command, correction, [f["rule_id"] for f in again["findings"] if f["status"] in ("fail", "warn")])


def test_vllm_0_12_foreign_backend_is_unset_and_the_corrected_command_drops_the_variable():
    """ROCM_ATTN named on an H100: vllm 0.12.0 builds it (no ROCm class refuses a CUDA arch) and its kernels fail;
    with the variable gone vLLM picks its own CUDA backend."""
    command = [f"{BACKEND_ENV}=ROCM_ATTN", "vllm", "serve", "qwen3-8b", "--port", "8000"]
    report = pasted_at("0.12.0", "H100", command)
    platform = next(f for f in report["findings"] if f["rule_id"] == "vllm-backend-platform")
    assert platform["status"] == "fail" and platform["fix"] == [f"unset {BACKEND_ENV}"]
    words = shlex.split(report["correction"]["command"])
    assert words == command[1:]
    assert pasted_at("0.12.0", "H100", words)["verdict"] == "pass"


def test_corrected_command_masks_secret_flags_and_keeps_counts_named_tokens():
    """A flag is a secret by its words (--api-key, --hf-token), not by a substring: the corrected command keeps
    --max-num-batched-tokens 8192 (which a substring test masked, so the printed command no longer ran), masks
    the secrets, and stays one shell line that splits back into the same words."""
    report = pasted(
        "A100",
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--attention-backend",
        "FLASH_ATTN",
        "--kv-cache-dtype",
        "fp8",
        "--max-num-batched-tokens",
        "8192",
        "--api-key=SeCrEt01",
        "--hf-token",
        "hf_SeCrEt0102",
    )
    command = report["correction"]["command"]
    words = shlex.split(command)
    assert words[words.index("--max-num-batched-tokens") + 1] == "8192"
    assert "--api-key=***" in words and words[words.index("--hf-token") + 1] == "***"
    assert "SeCrEt" not in command


def test_the_reason_names_a_rule_that_needs_more_than_a_flag_once():
    report = pasted("A100", "python", "-m", "sglang.launch_server", "--model-path", "llama-3.1-8b", "--hf-token", "x")
    reason = report["correction"]["reason"]
    assert reason.count("general-flags-known") == 1, reason
    assert "needs more than a flag" in reason
