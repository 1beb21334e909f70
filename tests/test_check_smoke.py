"""`check --smoke`: the plan (config -> kernels at the model's shapes), the findings and disagreements judged
from real H200 smoke results (tests/fixtures/smoke-h200-*.json), and the CLI on this GPU-less machine."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from attn_preflight import smoke_plan
from attn_preflight.check_smoke import smoke_findings, with_smoke
from attn_preflight.cli import cli
from attn_preflight.inputs import load_model
from attn_preflight.probe.smoke.results import SmokeReport
from attn_preflight.probe.smoke.runner import DEFAULT_TIMEOUT_S
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.judge import evaluate
from attn_preflight.rules.core.models import features_from_config
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import make_config

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MODELS = FIXTURES / "models"
H200 = Target.from_gpu("H200")


def smoke_fixture(name):
    return SmokeReport.from_dict(json.loads((FIXTURES / f"smoke-h200-{name}.json").read_text()))


def report_for(target=H200, model=None, **config):
    return evaluate(make_config(model=load_model(model) if model else None, **config), target, alternatives=False)


def jobs_by_kernel(report):
    return {job.kernel.name: job for job in smoke_plan.plan(report.config, report.target).jobs}


def smoke_with(report, **results):
    """A SmokeReport holding, for each kernel named, that fixture result moved to the plan's own case."""
    jobs = jobs_by_kernel(report)
    return SmokeReport(
        level="shape", results=[replace(result, kernel=name, case=jobs[name].case) for name, result in results.items()]
    )


def quick(kernel):
    return next(r for r in smoke_fixture("quick").results if r.kernel == kernel)


def fp8_refusal():
    return smoke_fixture("fa4-fp8").results[0]


def of(findings, rule_id):
    return [f for f in findings if f.rule_id == rule_id]


# --- the plan: what runs, at which shape ---------------------------------------------------------------------


def test_plan_runs_each_phase_kernel_at_the_models_shape_per_gpu():
    jobs = jobs_by_kernel(report_for(model="llama-3.1-8b", attention_backend="fa4", tp_size=2))
    assert set(jobs) == {"fa4-dense", "fa4-paged"}
    dense, paged = jobs["fa4-dense"], jobs["fa4-paged"]
    assert dense.phases == ("prefill",) and paged.phases == ("decode",)
    # Llama-3.1-8B: 32 query / 8 KV heads of 128, over TP 2
    assert (dense.case.heads_q, dense.case.heads_kv, dense.case.head_dim, dense.case.dim_v) == (16, 4, 128, 128)
    assert dense.case.dtype == "bf16" and dense.case.kv_dtype is None and dense.case.page_size is None
    assert paged.case.seqlen_q == 1 and paged.case.page_size == 1  # SGLang's default page size


def test_plan_replicates_kv_heads_when_tp_exceeds_them():
    case = jobs_by_kernel(report_for(model="llama-3.1-8b", attention_backend="fa4", tp_size=16))["fa4-dense"].case
    assert (case.heads_q, case.heads_kv) == (2, 1)


def test_plan_uses_the_page_size_the_rules_resolved():
    b200 = Target.from_gpu("B200")
    paged = jobs_by_kernel(report_for(b200, model="llama-3.1-8b", attention_backend="fa4"))["fa4-paged"]
    assert paged.case.page_size == 128  # rule fa4-page-size-128: SGLang forces 128 on SM100
    paged = jobs_by_kernel(report_for(model="llama-3.1-8b", attention_backend="fa4", page_size=16))["fa4-paged"]
    assert paged.case.page_size == 16


def test_plan_dtype_from_the_flag_or_the_model():
    assert (
        jobs_by_kernel(report_for(model="llama-3.1-8b", attention_backend="fa4", dtype="float16"))[
            "fa4-dense"
        ].case.dtype
        == "fp16"
    )
    fp32 = {"architectures": ["LlamaForCausalLM"], "num_attention_heads": 8, "head_dim": 64, "torch_dtype": "float32"}
    cfg = make_config(attention_backend="fa4")
    assert smoke_plan.model_dtype(replace(cfg, model=features_from_config(fp32, "m", "test"))) == "fp16"
    gemma = features_from_config({**fp32, "model_type": "gemma2"}, "g", "test")
    assert smoke_plan.model_dtype(replace(cfg, model=gemma)) == "bf16"  # SGLang: Gemma float32 -> bfloat16


def test_plan_carries_softcap_and_window_and_says_what_it_cannot_express():
    jobs = jobs_by_kernel(report_for(model="gemma-2-9b", attention_backend="fa4"))
    case = jobs["fa4-dense"].case
    assert (case.head_dim, case.softcap, case.window_left) == (256, 50.0, 4096)
    gpt_oss = jobs_by_kernel(report_for(model="gpt-oss-20b", attention_backend="fa4"))
    assert gpt_oss["fa4-dense"].case.sinks and gpt_oss["fa4-paged"].case.sinks  # FA4 takes learnable_sink=
    inkling = smoke_plan.plan(
        report_for(model="llama-3.1-8b", attention_backend="fa4", features=["score_mod"]).config, H200
    )
    assert {job.case.score_mod for job in inkling.jobs} == {"rel_bias"}
    assert any("stand-in relative bias" in note for note in inkling.notes)
    rel_bias = smoke_plan.plan(
        report_for(model="llama-3.1-8b", attention_backend="fa4", features=["rel_bias"]).config, H200
    )
    assert any("not smoked" in note and "rel_bias" in note for note in rel_bias.notes)


def test_plan_runs_fa4_absorbed_mla_decode_through_qv():
    jobs = jobs_by_kernel(report_for(model="deepseek-v3", attention_backend="fa4"))
    decode = jobs["fa4-paged"].case
    assert (decode.head_dim, decode.dim_v, decode.heads_kv, decode.qv) == (64, 512, 1, True)
    assert not jobs["fa4-dense"].case.qv  # MLA prefill runs the model's own head dims


def test_a_kernel_without_the_argument_is_skipped_as_unable_to_express_it():
    from attn_preflight.probe.smoke.kernels import registry

    kernels = registry()
    sinks = replace(kernels["flashinfer-prefill"].quick, sinks=True)
    assert "learnable-sink" in kernels["flashinfer-prefill"].inexpressible(sinks)
    assert (
        kernels["fa4-dense"].inexpressible(replace(kernels["fa4-dense"].quick, sinks=True, score_mod="rel_bias"))
        is None
    )


def test_plan_fp8_kv_casts_q_for_fa4_decode_only():
    jobs = jobs_by_kernel(report_for(model="llama-3.1-8b", attention_backend="fa4", kv_cache_dtype="fp8_e4m3"))
    assert (jobs["fa4-paged"].case.dtype, jobs["fa4-paged"].case.kv_storage) == ("fp8_e4m3", "fp8_e4m3")
    assert (jobs["fa4-dense"].case.dtype, jobs["fa4-dense"].case.kv_storage) == ("bf16", "fp8_e4m3")
    e5m2 = smoke_plan.plan(
        report_for(model="llama-3.1-8b", attention_backend="flashinfer", kv_cache_dtype="fp8_e5m2").config, H200
    )
    assert any("smoked as fp8_e4m3" in note for note in e5m2.notes)


def test_plan_mla_prefill_at_model_dims_decode_at_absorbed_dims():
    jobs = jobs_by_kernel(report_for(model="deepseek-v3", attention_backend="fa4", tp_size=8))
    dense, paged = jobs["fa4-dense"], jobs["fa4-paged"]
    assert (dense.case.head_dim, dense.case.dim_v, dense.case.heads_q, dense.case.heads_kv) == (192, 128, 16, 16)
    assert (paged.case.head_dim, paged.case.dim_v, paged.case.heads_kv) == (64, 512, 1) and paged.absorbed
    flashmla = smoke_plan.plan(report_for(model="deepseek-v3", attention_backend="flashmla", tp_size=8).config, H200)
    (job,) = flashmla.jobs
    assert (job.kernel.name, job.case.head_dim, job.case.dim_v, job.case.page_size) == ("flashmla-decode", 576, 512, 64)
    assert [(u.phases, "no prefill kernel" in u.reason) for u in flashmla.unsmokable] == [(("prefill",), True)]


def test_plan_smokes_both_backends_when_the_phases_differ():
    jobs = jobs_by_kernel(
        report_for(model="llama-3.1-8b", prefill_attention_backend="fa4", decode_attention_backend="flashinfer")
    )
    assert {name: (job.backend, job.phases) for name, job in jobs.items()} == {
        "fa4-dense": ("fa4", ("prefill",)),
        "flashinfer-decode": ("flashinfer", ("decode",)),
    }


def test_plan_names_what_cannot_be_smoked():
    b200 = smoke_plan.plan(report_for(Target.from_gpu("B200"), model="llama-3.1-8b").config, Target.from_gpu("B200"))
    assert not b200.jobs
    assert [(u.backend, u.phases) for u in b200.unsmokable] == [("trtllm_mha", ("prefill", "decode"))]
    mxfp8 = smoke_plan.plan(
        report_for(model="llama-3.1-8b", attention_backend="fa4", kv_cache_dtype="mxfp8").config, H200
    )
    assert "mxfp8" in mxfp8.unsmokable[0].reason
    no_model = smoke_plan.plan(report_for(attention_backend="fa4").config, H200)
    assert "--model" in no_model.unsmokable[0].reason
    odd_tp = smoke_plan.plan(report_for(model="llama-3.1-8b", attention_backend="fa4", tp_size=3).config, H200)
    assert "general-tp-heads" in odd_tp.unsmokable[0].reason


@pytest.mark.parametrize("gpu", ["H200", "B200"])
def test_every_preset_backend_and_kv_dtype_plans_without_error_and_nothing_unrun_passes(gpu):
    from attn_preflight.rules.core.models import presets
    from attn_preflight.rules.engines import backends
    from attn_preflight.rules.knowledge.kv_dtypes import KV_DTYPES

    target = Target.from_gpu(gpu)
    for model in presets():
        for backend in [None, *backends.choices("sglang")]:
            for kv in KV_DTYPES:
                report = report_for(target, model=model, attention_backend=backend, kv_cache_dtype=kv, tp_size=8)
                findings = smoke_findings(report, SmokeReport(level="shape"))
                assert findings and {f.status for f in findings} == {Status.SKIP}, (model, backend, kv)


# --- findings from real H200 results -----------------------------------------------------------------------


def test_h200_fa4_runs_llama_shapes_two_passes_no_disagreement():
    report = report_for(model="llama-3.1-8b", attention_backend="fa4")
    assert report.verdict == "pass"
    result = with_smoke(
        report, smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": quick("fa4-paged")})
    )
    smoke = of(result.findings, "smoke-kernel")
    assert [f.status for f in smoke] == [Status.PASS, Status.PASS]
    dense = next(f for f in smoke if f.smoke["kernel"] == "fa4-dense")
    assert "max error 9.4e-03 within tolerance 3e-02" in dense.message and "steady 0.135 ms" in dense.message
    assert dense.smoke["first_call_s"] == pytest.approx(2.62, abs=0.01)
    assert not of(result.findings, "smoke-disagrees") and result.verdict == "pass"


def test_h200_fa4_fp8_rules_and_kernel_agree():
    report = report_for(model="llama-3.1-8b", attention_backend="fa4", kv_cache_dtype="fp8_e4m3")
    assert of(report.findings, "fa4-fp8-sm100")[0].status is Status.FAIL
    result = with_smoke(report, smoke_with(report, **{"fa4-dense": fp8_refusal(), "fa4-paged": fp8_refusal()}))
    smoke = of(result.findings, "smoke-kernel")
    assert [f.status for f in smoke] == [Status.FAIL, Status.FAIL]  # the kernel refused the config: not a skip
    assert all("FP8 is only supported on SM100" in f.message for f in smoke)
    assert any("reproduce fa4-paged: python -m attn_preflight.probe.smoke.worker" in f.note for f in smoke)
    assert not of(result.findings, "smoke-disagrees") and result.verdict == "fail"


def test_rules_pass_kernel_fails_says_the_knowledge_is_wrong():
    report = report_for(model="llama-3.1-8b", attention_backend="fa4")
    crashed = replace(quick("fa4-paged"), status="crashed", message="killed by SIGSEGV", max_abs_error=None)
    result = with_smoke(report, smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": crashed}))
    (disagrees,) = of(result.findings, "smoke-disagrees")
    assert disagrees.status is Status.WARN
    assert disagrees.message.startswith(
        "the knowledge is wrong for this machine: the rules passed this config but "
        "the kernel failed: fa4-paged (decode, backend fa4) crashed"
    )
    assert "killed by SIGSEGV" in disagrees.message
    assert result.verdict == "fail" and result.exit_code() == 1


def test_kernel_level_rule_fails_but_kernel_runs_says_the_knowledge_is_wrong():
    report = report_for(model="llama-3.1-8b", attention_backend="fa4", kv_cache_dtype="fp8_e4m3")
    result = with_smoke(report, smoke_with(report, **{"fa4-dense": fp8_refusal(), "fa4-paged": quick("fa4-paged")}))
    (disagrees,) = of(result.findings, "smoke-disagrees")
    assert disagrees.message.startswith(
        "the knowledge is wrong for this machine: rule fa4-fp8-sm100 predicts failure "
        "but the kernel ran: fa4-paged (decode)"
    )
    assert disagrees.smoke == {"rules": ["fa4-fp8-sm100"], "kernels": ["fa4-paged"]}


def test_head_dim_rule_contradicted_by_a_run_at_its_dims():
    report = report_for(model=str(MODELS / "synthetic-head-dim-320"), attention_backend="fa4")
    assert of(report.findings, "fa4-head-dim-sm90")[0].status is Status.FAIL
    smoke = smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": fp8_refusal()})
    messages = [f.message for f in smoke_findings(report, smoke) if f.rule_id == "smoke-disagrees"]
    assert messages == [
        "the knowledge is wrong for this machine: rule fa4-head-dim-sm90 predicts failure but the "
        "kernel ran: fa4-dense (prefill) at " + jobs_by_kernel(report)["fa4-dense"].case.label()
    ]


def test_mla_arch_rule_is_judged_only_by_the_absorbed_decode_run():
    report = report_for(model="deepseek-v3", attention_backend="fa4", tp_size=8)
    assert of(report.findings, "fa4-mla-arch")[0].status is Status.FAIL
    agree = smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": fp8_refusal()})
    assert not of(smoke_findings(report, agree), "smoke-disagrees")  # prefill at 192/128 says nothing about qv
    disagree = smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": quick("fa4-paged")})
    assert [f.smoke["rules"] for f in of(smoke_findings(report, disagree), "smoke-disagrees")] == [["fa4-mla-arch"]]


def test_head_dim_rule_on_an_mla_model_is_not_contradicted_by_the_absorbed_decode_run():
    mla = features_from_config(
        {
            "architectures": ["DeepseekV3ForCausalLM"],
            "num_attention_heads": 16,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 256,
            "qk_rope_head_dim": 64,
            "v_head_dim": 256,
            "torch_dtype": "bfloat16",
        },
        "mla-320",
        "test",
    )
    report = evaluate(
        replace(make_config(attention_backend="fa4"), model=mla), Target.from_gpu("B200"), alternatives=False
    )
    assert of(report.findings, "fa4-head-dim-sm100")[0].status is Status.FAIL  # (320, 256)
    decode_only = smoke_with(report, **{"fa4-dense": fp8_refusal(), "fa4-paged": quick("fa4-paged")})
    assert not of(smoke_findings(report, decode_only), "smoke-disagrees")  # ran at (64, 512), not (320, 256)
    both = smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": quick("fa4-paged")})
    assert [f.smoke for f in of(smoke_findings(report, both), "smoke-disagrees")] == [
        {"rules": ["fa4-head-dim-sm100"], "kernels": ["fa4-dense"]}
    ]


def test_sdpa_refusal_is_a_skip_under_torch_dispatch_but_fa4_refusal_fails():
    report = report_for(model="llama-3.1-8b", attention_backend="torch_native")
    math = quick("sdpa-math")
    refused = replace(fp8_refusal(), kernel="sdpa-flash")
    findings = {
        f.smoke["kernel"]: f
        for f in of(
            smoke_findings(report, smoke_with(report, **{"sdpa-flash": refused, "sdpa-math": math})), "smoke-kernel"
        )
    }
    assert findings["sdpa-flash"].status is Status.SKIP and "torch dispatches" in findings["sdpa-flash"].message
    assert findings["sdpa-math"].status is Status.PASS
    assert findings["sdpa-cudnn"].status is Status.SKIP  # absent from the run: never a pass


def test_not_run_here_and_no_kernel_are_skips_never_passes():
    report = report_for(model="llama-3.1-8b", attention_backend="fa4")
    missing = next(r for r in smoke_fixture("quick").results if r.kernel == "fa2-dense")  # "not installed"
    smoke = SmokeReport(
        level="shape", results=[replace(missing, kernel="fa4-dense"), replace(missing, kernel="fa4-paged")]
    )
    findings = smoke_findings(report, smoke)
    assert [f.status for f in findings] == [Status.SKIP, Status.SKIP]
    assert all("not run here: FlashAttention 2 is not installed" in f.message for f in findings)
    b200 = report_for(Target.from_gpu("B200"), model="llama-3.1-8b")
    (skip,) = smoke_findings(b200, SmokeReport(level="shape"))
    assert skip.status is Status.SKIP
    assert skip.message == (
        "trtllm_mha (prefill and decode): cannot be smoked: smoke has no kernel for the trtllm_mha backend"
    )


def test_smoke_findings_in_every_format():
    from attn_preflight.render.findings import render_report

    report = report_for(Target.from_gpu("B200"), model="llama-3.1-8b")
    result = with_smoke(report, SmokeReport(level="shape"))
    data = json.loads(render_report(result, "json"))
    (smoke,) = [f for f in data["findings"] if f["rule_id"] == "smoke-kernel"]
    assert smoke["status"] == "skip" and smoke["smoke"]["backend"] == "trtllm_mha"
    assert data["counts"]["skip"] == sum(1 for f in data["findings"] if f["status"] == "skip")
    for fmt in ("table", "markdown"):
        assert "smoke-kernel" in render_report(result, fmt)  # listed although skipped, without --all
        assert "smoke-kernel" not in render_report(report, fmt)


def test_every_smoke_finding_is_explained_by_its_docs_command():
    """A user who sees smoke-kernel or smoke-disagrees in check's output runs the `docs` it names."""
    from attn_preflight.render.findings import render_report

    report = report_for(model="llama-3.1-8b", attention_backend="fa4")
    crashed = replace(quick("fa4-paged"), status="crashed", message="killed by SIGSEGV", max_abs_error=None)
    result = with_smoke(report, smoke_with(report, **{"fa4-dense": quick("fa4-dense"), "fa4-paged": crashed}))
    smoke = [f for f in json.loads(render_report(result, "json"))["findings"] if "smoke" in f]
    assert {f["rule_id"] for f in smoke} == {"smoke-kernel", "smoke-disagrees"}
    for finding in smoke:
        command = finding["docs"].split()
        assert command[:2] == ["attn-preflight", "explain"]
        explained = CliRunner().invoke(cli, command[1:])
        assert explained.exit_code == 0, explained.output
        out = explained.output
        assert out.startswith(f"{finding['rule_id']}: {finding['title']}")
        assert out.index("What it checks") < out.index("Why") < out.index("Fix") < out.index("References")
        assert "README.md: check --smoke" in out and "not a rule" in out


def test_smoke_findings_are_explained_but_are_not_rules():
    from attn_preflight.rules.core.registry import get_rule

    explain = CliRunner().invoke(cli, ["explain", "smoke-disagrees"]).output
    assert "fa4-fp8-sm100" in explain and "flashmla-arch" in explain  # the kernel-level rules it compares
    data = json.loads(CliRunner().invoke(cli, ["explain", "SMOKE-KERNEL", "--format", "json"]).output)
    assert data["id"] == "smoke-kernel" and data["stage"] == "runtime" and data["reported_by"] == "check --smoke"
    assert "smoke.reproduce" in data["fix"]
    assert get_rule("smoke-kernel") is None and get_rule("smoke-disagrees") is None
    assert "smoke-kernel" not in CliRunner().invoke(cli, ["rules"]).output
    report = report_for(model="llama-3.1-8b", attention_backend="fa4")
    assert not [f for f in report.findings if f.rule_id.startswith("smoke-")]
    typo = CliRunner().invoke(cli, ["explain", "smoke-kernal"])
    assert typo.exit_code == 2 and "did you mean 'smoke-kernel'" in typo.output


# --- the CLI on this machine ---------------------------------------------------------------------------------


def check(*argv):
    return CliRunner().invoke(cli, ["check", *argv])


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--smoke", "--gpu", "H200"], "--smoke runs the kernels on this machine; it cannot judge --gpu"),
        (["--smoke", "--facts", str(FIXTURES / "probe-cpu-ci.json")], "it cannot judge --facts"),
        (["--smoke-timeout", "30"], "--smoke-timeout needs --smoke"),
        (["--smoke", "--smoke-timeout", "0"], "must be a positive number of seconds"),
        (["--smoke", "--smoke-timeout", "nan"], "must be a positive number of seconds"),
    ],
)
def test_smoke_usage_errors_are_one_line_exit_2(argv, words):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "attn_preflight",
            "check",
            "--model",
            "llama-3.1-8b",
            "--attention-backend",
            "fa4",
            *argv,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and words in run.stderr


def test_smoke_timeout_reaches_the_runner(monkeypatch):
    seen = []
    monkeypatch.setattr(
        smoke_plan, "run", lambda plan, timeout, progress: seen.append(timeout) or SmokeReport(level="shape")
    )
    check("--smoke", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--smoke-timeout", "42")
    check("--smoke", "--model", "llama-3.1-8b", "--attention-backend", "fa4")
    assert seen == [42.0, DEFAULT_TIMEOUT_S]
    assert f"[default: {DEFAULT_TIMEOUT_S:g}]" in check("--help").output


def test_fa4_here_is_reported_as_skipped_and_the_verdict_is_not_a_pass():
    result = check("--smoke", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--format", "json")
    data = json.loads(result.stdout)
    smoke = [f for f in data["findings"] if f["rule_id"] == "smoke-kernel"]
    assert sorted(f["smoke"]["kernel"] for f in smoke) == ["fa4-dense", "fa4-paged"]
    assert all(f["status"] == "skip" and f["smoke"]["skip_basis"] == "environment" for f in smoke)
    assert data["verdict"] != "pass" and result.exit_code == (1 if data["verdict"] == "fail" else 0)


def test_torch_native_really_runs_sdpa_math_here_without_torch_in_this_process():
    script = (
        "import sys\nfrom attn_preflight.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as stop:\n"
        "    print('TORCH_IN_MAIN', 'torch' in sys.modules, file=sys.stderr)\n    raise\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "check",
            "--smoke",
            "--model",
            "llama-3.1-8b",
            "--attention-backend",
            "torch_native",
            "--tp-size",
            "4",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert "TORCH_IN_MAIN False" in run.stderr
    assert "sdpa-math [bf16 b2 q1024 k1024 h8/2 d128 causal]: pass" in run.stderr  # progress line while it runs
    data = json.loads(run.stdout)
    math = next(f for f in data["findings"] if f["rule_id"] == "smoke-kernel" and f["smoke"]["kernel"] == "sdpa-math")
    assert math["status"] == "pass" and math["smoke"]["device"] == "cpu"
    assert 0 <= math["smoke"]["max_abs_error"] <= math["smoke"]["tolerance"]
    assert math["smoke"]["phases"] == ["prefill", "decode"]
    assert (math["smoke"]["case"]["heads_q"], math["smoke"]["case"]["heads_kv"]) == (8, 2)


def test_check_without_smoke_loads_no_smoke_module():
    script = (
        "import sys\nfrom attn_preflight.cli import main\n"
        "try:\n    main(['check', '--gpu', 'H200', '--model', 'llama-3.1-8b', '--attention-backend', 'fa4'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('attn_preflight.probe.smoke', 'attn_preflight.check_smoke', 'torch'))))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert run.stdout.strip().splitlines()[-1] == "[]"


def test_plan_smokes_a_hybrid_models_gdn_layers_with_fla_at_its_linear_heads():
    jobs = jobs_by_kernel(report_for(model="qwen3-next-80b-a3b", attention_backend="flashinfer", tp_size=2))
    assert {"fla-gdn-chunk", "fla-gdn-recurrent"} <= set(jobs)
    chunk = jobs["fla-gdn-chunk"]
    # Qwen3-Next: 16 key / 32 value GDN heads of 128 (config.json linear_*), over TP 2
    assert (chunk.case.heads_q, chunk.case.heads_kv, chunk.case.head_dim, chunk.case.dim_v) == (16, 8, 128, 128)
    assert chunk.phases == (smoke_plan.LINEAR,) and chunk.backend == "fla"
    plain = jobs_by_kernel(report_for(model="llama-3.1-8b", attention_backend="flashinfer"))
    assert not any(name.startswith("fla-") for name in plain)
