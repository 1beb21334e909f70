"""Launch lines as SGLang's and vLLM's docs print them (issue 10): each is read, with its bearing flags."""

from __future__ import annotations

import json

from cli_run import check_json, finding, run_cli

from attn_preflight.rules.core.launch_line import parse_command


def check(*command, gpu="H200"):
    return check_json(["--gpu", gpu, "--", *command])


# fa3 with an MXFP8 KV cache on an H100: fails, and offers fp8_e5m2, which SGLang answers with triton
MXFP8_ON_FA3 = [
    "check",
    "--gpu",
    "H100",
    "--model",
    "llama-3.1-8b",
    "--attention-backend",
    "fa3",
    "--kv-cache-dtype",
    "mxfp8",
]


def rows(text, status):
    return [line for line in text.splitlines() if line.startswith(status + " ")]


def test_sglang_dp_attention_spellings_are_read():
    """SGLang docs, DeepSeek V3.2: `--tp 8 --dp 8 --enable-dp-attention`; --data-parallel-size is --dp-size's alias."""
    for flag in ("--dp", "--dp-size", "--data-parallel-size"):
        parsed = parse_command(
            ["sglang", "serve", "--model-path", "m", "--tp", "8", flag, "8", "--enable-dp-attention"]
        )
        assert parsed.flags["dp_size"] == 8 and parsed.flags["enable_dp_attention"] is True
        assert flag not in parsed.ignored


def test_the_deepseek_v32_doc_line_is_checked_not_refused():
    run, report = check(
        "python",
        "-m",
        "sglang.launch_server",
        "--model",
        "deepseek-ai/DeepSeek-V3.2-Exp",
        "--tp",
        "8",
        "--dp",
        "8",
        "--enable-dp-attention",
    )
    assert run.code == 0 and report["config"]["model"]["name"] == "deepseek-v3.2-exp"  # the hub id's preset
    heads = finding(report, "general-tp-heads")  # 128 heads over attention TP 8 / 8 = 1
    assert heads["status"] == "pass" and "attention TP size 1" in heads["message"]


def test_dp_attention_divides_the_attention_tp():
    """Qwen2.5-7B: 28 heads, 4 KV heads. TP 8 alone cannot split them; with DP attention over 4, attention TP is 2."""
    _, plain = check("sglang", "serve", "--model-path", "Qwen/Qwen2.5-7B-Instruct", "--tp", "8")
    _, dp = check(
        "sglang", "serve", "--model-path", "Qwen/Qwen2.5-7B-Instruct", "--tp", "8", "--dp", "4", "--enable-dp-attention"
    )
    assert finding(plain, "general-tp-heads")["status"] == "fail"
    assert (
        finding(dp, "general-tp-heads")["status"] == "pass"
        and "attention TP size 2" in finding(dp, "general-tp-heads")["message"]
    )


def test_attn_dp_size_divides_the_attention_tp():
    """sglang 0.5.22 arg_groups/fields/parallel.py: --attn-dp-size N replaces --dp-size N --enable-dp-attention."""
    _, report = check("sglang", "serve", "--model-path", "Qwen/Qwen2.5-7B-Instruct", "--tp", "8", "--attn-dp-size", "4")
    heads = finding(report, "general-tp-heads")
    assert heads["status"] == "pass" and "attention TP size 2" in heads["message"]
    assert finding(report, "general-unmodelled-flags")["status"] == "pass"


def test_vllm_refuses_heads_tp_cannot_split():
    """vllm/config/model.py: 'Total number of attention heads (28) must be divisible by tensor parallel size (8).'"""
    run, report = check("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "8", gpu="H100")
    heads = finding(report, "vllm-tp-heads")
    assert run.code == 1 and heads["status"] == "fail" and heads["fix"] == ["--tensor-parallel-size 4"]


def test_the_table_lists_what_needs_attention_and_all_adds_the_rest():
    argv = ["check", "--gpu", "H100", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--kv-cache-dtype"]
    default = run_cli([*argv, "fp8_e4m3"]).out
    everything = run_cli([*argv, "fp8_e4m3", "--all"]).out
    assert rows(default, "FAIL") and not rows(default, "PASS") and "rules passed (--all lists them)" in default
    assert rows(everything, "PASS") and rows(everything, "SKIP") and "(--all lists them)" not in everything


def test_alternatives_rank_the_engines_choice_first_and_show_what_a_rewrite_becomes():
    """B200, fa3 with fp8_e5m2 (SGLang would run triton): the user's own backend is not offered back and the
    engine's own choice for that GPU (trtllm_mha) comes first. H100, fa3 with mxfp8: fp8_e5m2 would make SGLang
    run triton, and the alternative says so instead of a bare '(warn)'."""
    _, b200 = check(
        "sglang",
        "serve",
        "--model-path",
        "llama-3.1-8b",
        "--attention-backend",
        "fa3",
        "--kv-cache-dtype",
        "fp8_e5m2",
        gpu="B200",
    )
    backends = [a["value"] for a in b200["alternatives"] if a["option"] == "--attention-backend"]
    assert backends[0] == "trtllm_mha" and "fa3" not in backends
    argv = MXFP8_ON_FA3
    e5m2 = [a for a in json.loads(run_cli([*argv, "--format", "json"]).out)["alternatives"] if a["value"] == "fp8_e5m2"]
    assert e5m2 and e5m2[0]["becomes"] == "triton"
    assert "fp8_e5m2 → SGLang runs triton" in run_cli(argv).out


def test_a_stdout_that_cannot_encode_unicode_gets_ascii_not_a_traceback():
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    argv = MXFP8_ON_FA3
    done = subprocess.run([sys.executable, "-m", "attn_preflight", *argv], capture_output=True, env=env, timeout=120)
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert b"fp8_e5m2 -> SGLang runs triton" in done.stdout and b"sglang - model llama-3.1-8b" in done.stdout


def test_fp8_is_pointed_to_sglangs_spelling():
    run = run_cli(["check", "--gpu", "H100", "--kv-cache-dtype", "fp8"])
    assert run.code == 2 and run.err_lines == [
        "attn-preflight: error: --kv-cache-dtype: unknown sglang KV-cache dtype 'fp8' (did you mean 'fp8_e4m3'?)"
    ]
    assert run_cli(["check", "--gpu", "H100", "--engine", "vllm", "--kv-cache-dtype", "fp8"]).code == 0  # vLLM's name
