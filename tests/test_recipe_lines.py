"""What a user pasting the engines' recipes gets (issue 23), on lines of tests/fixtures/recipe_lines.json (each cited
there with its source) and the cases the issue names."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli_run import check_json, finding, run_cli

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "recipe_lines.json").read_text(encoding="utf-8"))["lines"]


def recipe(fragment: str) -> dict:
    """The one corpus line whose command holds `fragment`."""
    (line,) = [line for line in CORPUS if fragment in line["command"]]
    return line


def pasted(line: dict) -> list[str]:
    return shlex.split(line["command"].replace("\\\n", " "))


def test_the_corpus_is_cited_and_mixed():
    assert len(CORPUS) >= 30
    assert all(line["source"] and line["gpu"] and line["expect"] == "starts" for line in CORPUS)
    sources = {line["source"].split(":")[0] for line in CORPUS}
    assert sources == {"vllm-project/recipes", "sgl-project/sglang"}


@pytest.fixture
def empty_hub(tmp_path, monkeypatch):
    """A machine that never downloaded the recipes' models."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    return tmp_path


def test_an_unread_fp4_deepseek_on_trtllm_mla_is_not_failed(empty_hub):
    """sglang docs/advanced_features/attention_backend.md: nvidia/DeepSeek-R1-FP4 on trtllm_mla, 8xB200. The hub id
    is no preset and not cached: whether it is an MLA model is unknown, so no FAIL and no trtllm_mha fix."""
    line = recipe("nvidia/DeepSeek-R1-FP4 \\\n  --tp 8 \\\n  --attention-backend trtllm_mla")
    run, report = check_json(["--gpu", line["gpu"], "--", *pasted(line)])
    assert run.code == 0 and report["verdict"] == "warn"
    assert finding(report, "mla-backend-mha-model")["status"] == "unknown"
    fixes = [fix for f in report["findings"] for fix in f["fix"]]
    assert not any("trtllm_mha" in fix for fix in fixes)
    assert report["correction"] is None and report["alternatives"] == []
    model = finding(report, "general-model-config")
    assert model["fix"][0] == "hf download nvidia/DeepSeek-R1-FP4 config.json"
    assert "DeepSeek family" in model["message"] and "hint only" in model["message"]


def test_kimi_not_read_on_flashmla_is_not_failed(empty_hub):
    line = recipe("moonshotai/Kimi-K2.5")
    run, report = check_json(["--gpu", line["gpu"], "--", *pasted(line), "--attention-backend", "flashmla"])
    assert report["verdict"] != "fail", [f["rule_id"] for f in report["findings"] if f["status"] == "fail"]
    assert finding(report, "flashmla-mha-model")["status"] == "unknown"


def test_a_model_independent_failure_keeps_no_model_dependent_fix(empty_hub):
    """FLASHMLA_SPARSE needs SM90/SM100 whatever the model (a FAIL on A100), but FLASH_ATTN would serve DeepSeek-V3.2
    (MLA, sparse) only if it were not one: that fix depends on the model never read."""
    run, report = check_json(
        [
            "--gpu",
            "A100",
            "--engine",
            "vllm",
            "--attention-backend",
            "FLASHMLA_SPARSE",
            "--model",
            "deepseek-ai/DeepSeek-V3.2",
        ]
    )
    assert report["verdict"] == "fail"
    failing = finding(report, "vllm-compute-capability")
    assert failing["status"] == "fail" and "--attention-backend FLASH_ATTN" not in failing["fix"]


def test_the_same_line_with_the_model_read_is_judged(empty_hub):
    """The preset deepseek-r1 (MLA) read: trtllm_mla passes the MLA rule on B200."""
    run, report = check_json(["--gpu", "B200", "--model", "deepseek-r1", "--attention-backend", "trtllm_mla"])
    assert finding(report, "mla-backend-mha-model")["status"] == "pass"
    run, report = check_json(["--gpu", "B200", "--model", "llama-3.1-8b", "--attention-backend", "trtllm_mla"])
    assert finding(report, "mla-backend-mha-model")["status"] == "fail"


def test_unknowns_of_an_unread_model_are_one_line(empty_hub):
    line = recipe("moonshotai/Kimi-K2.5")
    run = run_cli(["check", "--gpu", line["gpu"], "--", *pasted(line)])
    table = run.out
    assert table.count("UNKNOWN") == 0 and table.count("general-model-config") == 1
    assert "depend on the model answer unknown, listed by --all" in table
    assert len(table.splitlines()) < 40
    everything = run_cli(["check", "--all", "--gpu", line["gpu"], "--", *pasted(line)]).out
    assert everything.count("UNKNOWN") > 20


def test_the_default_backend_of_an_unread_model_is_not_assumed(empty_hub):
    """sglang benchmark/deepseek_v3/README.md (Using pip) with nvidia/DeepSeek-R1-FP4, no --attention-backend, on
    8xB200: SGLang's default reads the model (trtllm_mha for MHA, an MLA model's own), so no backend is assumed and
    the config says so; the rules that need the backend answer unknown, those that do not (the flags) still judge.
    With the preset deepseek-r1 read, the default is resolved again."""
    argv = ["--gpu", "8xB200", "--", "python3", "-m", "sglang.launch_server", "--model"]
    run, report = check_json([*argv, "nvidia/DeepSeek-R1-FP4", "--tp", "8", "--trust-remote-code"])
    assert report["config"]["attention_backend"] is None
    assert report["config"]["backend_auto_selected"].startswith("not resolved: SGLang's default on SM10x depends")
    assert finding(report, "general-flags-known")["status"] == "pass"
    assert not [f["rule_id"] for f in report["findings"] if "trtllm_mha" in f["message"] and f["status"] != "skip"]
    text = " ".join(run_cli(["check", *argv, "nvidia/DeepSeek-R1-FP4", "--tp", "8"]).out.split())
    assert "attention: the engine's default, not resolved" in text and "backend: not resolved" in text
    run, report = check_json([*argv, "deepseek-r1", "--tp", "8"])
    assert report["config"]["attention_backend"] == "trtllm_mla"


def test_no_model_never_fails_an_mla_backend():
    """The HTML report and NFD labels judge backends with no model: an MLA-only backend is then unknown, not
    failed (nor labelled true)."""
    run, report = check_json(["--gpu", "B200", "--attention-backend", "trtllm_mla"])
    assert finding(report, "mla-backend-mha-model")["status"] == "unknown"
    assert report["verdict"] != "fail"


def test_everyday_vllm_flags_do_not_make_strict_fail_a_recipe():
    """vllm-project/recipes OpenAI/GPT-OSS.md: `--max-num-batched-tokens 10240 --max-num-seqs 128
    --no-enable-prefix-caching` on 8xH200 (gpt-oss-120b is a preset). They are listed, not judged, not warned."""
    line = recipe("--max-num-seqs 128")
    run, report = check_json(["--strict", "--gpu", line["gpu"], "--", *pasted(line)])
    assert run.code == 0 and report["verdict"] == "pass", [f for f in report["findings"] if f["status"] != "pass"]
    unmodelled = finding(report, "general-unmodelled-flags")
    assert unmodelled["status"] == "pass" and "--no-enable-prefix-caching" in unmodelled["message"]
    assert "--no-enable-prefix-caching" in report["config"]["unmodelled"]  # still listed as not judged
    assert report["config"]["flags"]["max_num_seqs"] == 128  # read: it sizes vLLM's memory (engine_budget.py)


def test_max_num_seqs_still_warns_for_a_hybrid_mamba_model():
    """vllm 0.33.0 config/compilation.py:1510-1532: above the Mamba cache blocks, full CUDA-graph capture fails."""
    run, report = check_json(
        ["--gpu", "H200", "--", "vllm", "serve", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--max-num-seqs", "8"]
    )
    assert finding(report, "general-unmodelled-flags")["status"] == "warn"


def test_ignore_and_select_leave_rules_out_and_say_so(monkeypatch):
    base = ["--gpu", "T4", "--model", "llama-3.1-8b", "--attention-backend", "fa3", "--tp-size", "2"]
    run, report = check_json(base)
    assert finding(report, "fa3-arch")["status"] == "fail"
    run, ignored = check_json([*base, "--ignore", "fa3-"])
    assert all(not f["rule_id"].startswith("fa3-") for f in ignored["findings"])
    assert {"rule_id": "fa3-arch", "status": "fail"} in ignored["ignored_rules"]
    monkeypatch.setenv("ATTN_PREFLIGHT_IGNORE", "fa3-arch, kv-")
    run, from_env = check_json(base)
    assert not any(f["rule_id"].startswith(("fa3-arch", "kv-")) for f in from_env["findings"])
    monkeypatch.delenv("ATTN_PREFLIGHT_IGNORE")
    run, selected = check_json([*base, "--select", "fa3-arch"])
    assert [f["rule_id"] for f in selected["findings"]] == ["fa3-arch"] and run.code == 1
    table = run_cli(["check", *base, "--ignore", "fa3-arch"]).out
    assert "ignored rules: fa3-arch (fail)" in table and "rule ignored" in table.splitlines()[-1]


def test_an_ignored_unknown_is_still_not_a_pass(empty_hub):
    run, report = check_json(["--gpu", "H100", "--model", "someone/unread-model", "--select", "general-tp-heads"])
    assert [f["status"] for f in report["findings"]] == ["unknown"]
    run, report = check_json(
        ["--gpu", "H100", "--model", "someone/unread-model", "--ignore", "general-tp-heads", "--select", "general-tp"]
    )
    assert report["findings"] == [] and report["verdict"] == "warn"


def test_a_rule_pattern_matching_nothing_is_exit_2_with_close_ids():
    run = run_cli(["check", "--gpu", "H100", "--ignore", "fa3-arhc"])
    assert run.code == 2 and "did you mean 'fa3-arch'" in run.err and len(run.err) < 200


def test_quiet_prints_the_failures_and_the_verdict():
    run = run_cli(["check", "--quiet", "--gpu", "T4", "--model", "llama-3.1-8b", "--attention-backend", "fa3"])
    lines = run.out.strip().splitlines()
    assert run.code == 1 and lines[-1].startswith("verdict: FAIL") and "fa3-arch" in run.out
    assert "target:" not in run.out and "Prevents" not in run.out and "WARN" not in run.out


def test_explain_of_an_unknown_rule_is_one_short_line():
    run = run_cli(["explain", "no-such-rule"])
    assert run.code == 2 and len(run.err_lines) == 1 and len(run.err) < 200
    close = run_cli(["explain", "mla-backend-mha"])
    assert "did you mean 'mla-backend-mha-model'" in close.err and close.err.count(",") <= 2


def test_rules_takes_words_to_filter():
    run = run_cli(["rules", "--format", "json", "trtllm", "mla"])
    ids = [r["id"] for r in json.loads(run.out)]
    assert ids and all("trtllm" in i or "trtllm" in r["title"].lower() for i, r in zip(ids, json.loads(run.out)))
    assert "mla-backend-mha-model" in ids and len(ids) < 30


def test_the_correction_agrees_with_the_fix_on_fa3_on_t4():
    """fa3 on T4 (SM75): fa3-arch's fix is triton. A lossy fp8_e5m2 KV would also 'pass' only because SGLang then
    silently runs triton; the corrected command says what runs instead."""
    run, report = check_json(["--gpu", "T4", "--model", "llama-3.1-8b", "--attention-backend", "fa3", "--tp", "2"])
    assert finding(report, "fa3-arch")["fix"] == ["--attention-backend triton"]
    changes = report["correction"]["changes"]
    assert "--attention-backend triton" in changes and not any("fp8_e5m2" in c for c in changes)


def test_a_dropped_phase_backend_is_said():
    """sglang attention_backend.md's FP4 DeepSeek-R1 line, with the preset read and an MHA backend asked for: the
    correction's --attention-backend replaces --prefill-attention-backend fa4, and says so."""
    command = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-r1", "--tp", "8",
               "--attention-backend", "trtllm_mha", "--prefill-attention-backend", "fa4"]  # fmt: skip
    run, report = check_json(["--gpu", "8xB200", "--", *command])
    assert "drop --prefill-attention-backend" in report["correction"]["changes"]
    table = run_cli(["check", "--gpu", "8xB200", "--", *command]).out
    assert "dropped: --prefill-attention-backend" in table


def test_a_context_too_short_to_serve_is_not_offered():
    # at 0.66 of an A10 the KV cache holds ~1.2 k tokens (rules/knowledge/engine_budget.py): under the 4,096 floor
    run, report = check_json(["--gpu", "A10", "--model", "llama-3.1-8b", "--mem-fraction-static", "0.66"])
    kv = finding(report, "memory-kv-context")
    assert kv["status"] == "warn" and not any(fix.startswith("--context-length") for fix in kv["fix"])
    run, report = check_json(["--gpu", "A10", "--model", "llama-3.1-8b", "--mem-fraction-static", "0.7"])
    assert any(fix.startswith("--context-length") for fix in finding(report, "memory-kv-context")["fix"])


def test_a_removed_flag_gets_drop_or_a_release_that_has_it():
    """--disable-log-requests left vLLM's frontend in 0.17.0 (rule fixture general-flags-known)."""
    run, report = check_json(
        [
            "--gpu",
            "H100",
            "--engine-version",
            "vllm==0.17.0",
            "--",
            "vllm",
            "serve",
            "llama-3.1-8b",
            "--disable-log-requests",
        ]
    )
    known = finding(report, "general-flags-known")
    assert known["fix"][0] == "drop --disable-log-requests"
    assert known["fix"][1].startswith("--engine-version vllm==0.16")


def test_an_ambiguous_flag_gets_drop_or_a_release_that_has_it():
    """sglang docs/advanced_features/speculative_decoding.md@067ad4d3 (Standalone Speculative Decoding) passes
    --cuda-graph-max-bs, which sglang 0.5.20+ no longer has: argparse then reads it as an abbreviation of
    --cuda-graph-max-bs-decode / -prefill ("ambiguous option"). The failure offers the same fixes as an unknown
    flag: drop it, or pin the newest release that has it (0.5.19)."""
    command = ["python3", "-m", "sglang.launch_server", "--model", "qwen2.5-7b", "--cuda-graph-max-bs", "8"]
    run, report = check_json(["--gpu", "H100", "--engine-version", "sglang==0.5.23", "--", *command])
    known = finding(report, "general-flags-known")
    assert known["status"] == "fail" and "ambiguous option: --cuda-graph-max-bs" in known["message"]
    assert known["fix"] == [
        "drop --cuda-graph-max-bs",
        "--engine-version sglang==0.5.19 (a release that has --cuda-graph-max-bs)",
    ]


def test_prevents_is_quoted_in_the_used_backends_words():
    from types import SimpleNamespace

    from attn_preflight.render.findings import prevents_for

    rule = SimpleNamespace(
        prevents="trtllm_mla backend can only be used with MLA models.",
        backends=frozenset({"trtllm_mla", "cutedsl_mla"}),
    )
    finding_ = SimpleNamespace(prevents=rule.prevents, rule=rule)
    assert prevents_for(finding_, SimpleNamespace(backends=frozenset({"cutedsl_mla"}))).startswith(
        "cutedsl_mla backend"
    )
    assert prevents_for(finding_, SimpleNamespace(backends=frozenset({"trtllm_mla"}))).startswith("trtllm_mla backend")


def test_vllm_speculative_config_is_judged():
    """vllm-project/recipes Qwen/Qwen3.5.md: --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}':
    the method and the tokens are judged (vllm 0.33.0 accepts "mtp"); whether the model ships MTP layers is unknown
    when its config.json gives none, never passed; the line is no longer listed as not judged."""
    line = recipe('"num_speculative_tokens": 2')
    run, report = check_json(["--gpu", line["gpu"], "--", *pasted(line)])
    assert finding(report, "vllm-spec-method")["status"] == "pass"
    assert finding(report, "vllm-spec-tokens")["status"] == "pass"
    assert finding(report, "vllm-spec-mtp-layers")["status"] == "unknown"
    unmodelled = finding(report, "general-unmodelled-flags")
    assert "--speculative-config" not in unmodelled["message"]
    assert report["verdict"] != "pass"
    assert "· speculative mtp ·" in " ".join(run_cli(["check", "--gpu", line["gpu"], "--", *pasted(line)]).out.split())


def test_vllm_eagle3_draft_is_read_where_local(tmp_path):
    """vllm-project/recipes OpenAI/GPT-OSS.md#L254's EAGLE3 config without its method: vLLM infers the method from
    the draft's config (config/speculative.py, "eagle3" in the draft's name); with the head's config.json here (a
    dense Llama-style head, LlamaForCausalLMEagle3) the draft is read, without it the method is unknown; a backend
    named for it (attention_backend, vllm 0.21.0+) is judged on the head where read, unknown where not."""
    head = tmp_path / "gpt-oss-120b-Eagle3-v3"
    head.mkdir()
    (head / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "torch_dtype": "bfloat16",
        "hidden_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
        "num_hidden_layers": 1, "intermediate_size": 17280, "vocab_size": 201088,
    }))  # fmt: skip
    for draft, status in ((str(head), "pass"), ("nvidia/gpt-oss-120b-Eagle3-v3", "unknown")):
        spec = {"model": draft, "num_speculative_tokens": 7, "draft_tensor_parallel_size": 1}
        run, report = check_json(["--gpu", "2xH200", "--", "vllm", "serve", "gpt-oss-120b", "-tp", "2",
                                  "--speculative-config", json.dumps(spec)])  # fmt: skip
        assert finding(report, "vllm-spec-method")["status"] == status, draft
        assert finding(report, "vllm-spec-draft-tp")["status"] == "pass"
        assert finding(report, "vllm-spec-draft-backend")["status"] == "skip"  # vLLM picks the draft's own
        assert "--speculative-config" not in finding(report, "general-unmodelled-flags")["message"]
        named = json.dumps({**spec, "method": "eagle3", "attention_backend": "TRITON_ATTN"})
        run, report = check_json(["--gpu", "2xH200", "--", "vllm", "serve", "gpt-oss-120b", "-tp", "2",
                                  "--speculative-config", named])  # fmt: skip
        assert finding(report, "vllm-spec-draft-backend")["status"] == status, draft


def test_an_eagle3_head_not_here_is_judged_as_a_dense_head():
    """An EAGLE3 draft (sglang models/llama_eagle3.py LlamaForCausalLMEagle3) is a dense head of its own: with the
    checkpoint not here, fa4 as the draft backend on H200 is not failed for the DeepSeek target's MLA."""
    command = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-r1", "--tp", "8",
               "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "someone/DeepSeek-R1-EAGLE3",
               "--speculative-draft-attention-backend", "fa4"]  # fmt: skip
    run, report = check_json(["--gpu", "8xH200", "--", *command])
    draft = finding(report, "spec-draft-backend")
    assert draft["status"] == "pass" and "judged as a dense head" in draft["message"]
    fa3 = [w if w != "fa4" else "fa3" for w in command]
    run, report = check_json(["--gpu", "8xB200", "--", *fa3])  # a dense head's rules still apply: fa3 on SM100
    assert finding(report, "spec-draft-backend")["status"] == "fail"


def test_a_draft_not_here_is_named_in_the_config_line():
    """sglang docs/advanced_features/speculative_decoding.md (EAGLE-3 Decoding): the draft
    jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B is a hub id not in the cache; the config line says it was not
    read and is a dense EAGLE3 head, never the target's layers (on an MLA target too: no MLA rule fails for it)."""
    for model in ("meta-llama/Meta-Llama-3.1-8B-Instruct", "deepseek-r1"):
        argv = ["check", "--gpu", "8xH200", "--", "python3", "-m", "sglang.launch_server", "--model", model, "--tp",
                "8", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
                "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B"]  # fmt: skip
        text = " ".join(run_cli(argv).out.split())
        assert "draft jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B (not read here: a dense EAGLE3 head" in text
        run, report = check_json(argv[1:3] + argv[3:])
        assert not [f["rule_id"] for f in report["findings"] if f["status"] == "fail" and "mla" in f["rule_id"]]


def test_a_slow_probe_says_so_on_a_terminal_only(monkeypatch, capsys):
    """The first probe imports every library in its own process (3-12 s): a note on stderr, on a terminal only."""
    import sys
    import time

    from attn_preflight.commands.common import slow_note

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with slow_note("probing this machine", after=0.05):
        time.sleep(0.3)
    with slow_note("fast, never said", after=0.5):
        pass
    assert capsys.readouterr().err.splitlines() == ["probing this machine"]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with slow_note("piped, never said", after=0.05):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


def test_smoke_words_pass_wraps_and_says_each_reason_once():
    from attn_preflight.probe.smoke.results import STATUS_OK, STATUS_SKIPPED
    from attn_preflight.render.smoke import progress_line, shown_status

    assert shown_status(STATUS_OK) == "pass" and shown_status(STATUS_SKIPPED) == "skipped"
    from types import SimpleNamespace

    skipped = SimpleNamespace(status=STATUS_SKIPPED, kernel="fa4-dense", case=None, message="PyTorch is not installed")
    assert progress_line(skipped, 1.0) == "smoke    1.0s  fa4-dense: skipped"  # the report says why, once
    failed = SimpleNamespace(status="error", kernel="fa4-dense", case=None, message="x " * 80)
    wrapped = progress_line(failed, 1.0, width=60).splitlines()
    assert len(wrapped) > 1 and all(len(line) <= 60 for line in wrapped)


def test_the_html_matrix_has_one_bf16_column_and_stays_in_its_card(tmp_path):
    page = tmp_path / "r.html"
    run = run_cli(["report", "--output", str(page), "--facts", str(Path(__file__).parent / "fixtures" / "probe-h200.json"),
                   "--model", "llama-3.1-8b"])  # fmt: skip
    assert run.code == 0, run.err
    html = page.read_text(encoding="utf-8")
    head = html.split('<table class="matrix">', 1)[1].split("</thead>", 1)[0]
    assert "<code>bf16</code>" in head and "<code>bfloat16</code>" not in head
    assert ".scroll{overflow-x:auto;max-width:100%}" in html and "min-width:0" in html
