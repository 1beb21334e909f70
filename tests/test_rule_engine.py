"""The engine's contract: version gates, verdicts, alternatives, resolution, stable order."""
from rules.config import make_config
from rules.engine import Status, evaluate, verdict_of
from rules.resolve import effective_page_size, resolve
from rules.target import Target


def finding(report, rule_id):
    return next(f for f in report.findings if f.rule_id == rule_id)


def fa4_on(gpu, *pins):
    target = Target.from_gpu(gpu).with_engine_versions(dict(p.split("==") for p in pins))
    return evaluate(make_config(model="llama-3.1-8b", attention_backend="fa4"), target, alternatives=False)


def test_version_gates():
    # in range: judged, no note
    f = finding(fa4_on("RTX 5090", "sglang==0.5.17"), "fa4-sm12x-paged-kv")
    assert f.status is Status.FAIL and f.note == ""
    # out of range: skipped, and the message says why
    f = finding(fa4_on("RTX 5090", "sglang==0.5.23"), "fa4-sm12x-paged-kv")
    assert f.status is Status.SKIP and "holds for sglang<0.5.20; target has sglang 0.5.23" in f.message
    # unknown: the newest known release decides, and the finding says so
    f = finding(fa4_on("RTX 5090"), "fa4-sm12x-paged-kv")
    assert f.status is Status.SKIP and "newest known behaviour (sglang 0.5.23) applied" in f.message
    f = finding(fa4_on("B200"), "fa4-page-size-128")
    assert f.status is Status.WARN and "sglang version unknown: newest known behaviour" in f.note


def test_verdict_never_counts_skip_or_unknown_as_pass():
    report = fa4_on("H100")
    assert verdict_of([f for f in report.findings if f.status is Status.SKIP]) == "warn"
    assert verdict_of([f for f in report.findings if f.status in (Status.SKIP, Status.PASS)]) == "pass"
    # without --model, whether the model supplies MXFP8 Q scales is unknown: that alone makes the verdict warn
    unknown_case = evaluate(make_config(attention_backend="fa4", kv_cache_dtype="mxfp8", page_size=128),
                            Target.from_gpu("B200"), alternatives=False)
    assert finding(unknown_case, "kv-mxfp8-q-scales").status is Status.UNKNOWN
    assert {f.status for f in unknown_case.findings} == {Status.UNKNOWN, Status.PASS, Status.SKIP}
    assert unknown_case.verdict == "warn"


def test_findings_are_ordered_by_what_needs_action():
    order = [f.status for f in evaluate(make_config(model="deepseek-v3", attention_backend="fa4", deterministic=True),
                                        Target.from_gpu("H100")).findings]
    rank = {Status.FAIL: 0, Status.WARN: 1, Status.UNKNOWN: 2, Status.PASS: 3, Status.SKIP: 4}
    assert [rank[s] for s in order] == sorted(rank[s] for s in order)


def test_alternatives_are_single_changes_that_do_not_fail():
    report = evaluate(make_config(model="llama-3.1-8b", attention_backend="fa3", kv_cache_dtype="fp8_e4m3"),
                      Target.from_gpu("A100"))
    assert report.verdict == "fail"
    backends = {a.value: a.verdict for a in report.alternatives if a.option == "--attention-backend"}
    kv = {a.value for a in report.alternatives if a.option == "--kv-cache-dtype"}
    assert "flashinfer" in backends and "fa4" not in backends and "trtllm_mha" not in backends
    assert "auto" in kv and "fp8_e4m3" not in kv
    # fp8_e5m2 makes SGLang switch fa3 to triton, which runs: offered, as a warning
    assert {(a.value, a.verdict) for a in report.alternatives if a.value == "fp8_e5m2"} == {("fp8_e5m2", "warn")}
    for alt in report.alternatives:
        assert alt.verdict in ("pass", "warn")


def test_resolution_follows_sglang_order():
    b200, h100, gb10 = Target.from_gpu("B200"), Target.from_gpu("H100"), Target.from_gpu("GB10")
    assert resolve(make_config(model="deepseek-v3"), b200).attention_backend == "trtllm_mla"
    assert resolve(make_config(model="gpt-oss-20b"), h100).attention_backend == "fa3"
    assert resolve(make_config(model="llama-4-scout", deterministic=True), gb10).attention_backend == "triton"
    assert resolve(make_config(model="qwen3-8b", deterministic=True), b200).attention_backend == "flashinfer"
    cfg = resolve(make_config(model="qwen3-8b", attention_backend="flashinfer", kv_cache_dtype="nvfp4"), b200)
    assert (cfg.prefill_backend, cfg.decode_backend) == ("flashinfer", "trtllm_mha")
    assert effective_page_size(resolve(make_config(model="qwen3-8b", attention_backend="fa4"), b200), b200) == 128
    assert effective_page_size(resolve(make_config(model="deepseek-v3", attention_backend="fa4"), b200), b200) == 1
    assert effective_page_size(resolve(make_config(model="qwen3-8b", attention_backend="trtllm_mha",
                                                   page_size=8), b200), b200) == 64
