"""The engine's contract: version gates, verdicts, alternatives, resolution, stable order."""

from attn_preflight.inputs import load_model
from attn_preflight.rules.core.engine import Status, verdict_of
from attn_preflight.rules.core.judge import evaluate
from attn_preflight.rules.core.launch_line import parse_command
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import make_config
from attn_preflight.rules.engines.sglang.resolve import effective_page_size, resolve


def finding(report, rule_id):
    return next(f for f in report.findings if f.rule_id == rule_id)


def fa4_on(gpu, *pins):
    target = Target.from_gpu(gpu).with_engine_versions(dict(p.split("==") for p in pins))
    return evaluate(make_config(model=load_model("llama-3.1-8b"), attention_backend="fa4"), target, alternatives=False)


def test_version_gates():
    # in range: judged, no note
    f = finding(fa4_on("RTX 5090", "sglang==0.5.17"), "fa4-sm12x-paged-kv")
    assert f.status is Status.FAIL and f.note == ""
    # out of range: skipped, and the message says why
    f = finding(fa4_on("RTX 5090", "sglang==0.5.23"), "fa4-sm12x-paged-kv")
    assert f.status is Status.SKIP and "holds for sglang<0.5.18; target has sglang 0.5.23" in f.message
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
    unknown_case = evaluate(
        make_config(attention_backend="fa4", kv_cache_dtype="mxfp8", page_size=128),
        Target.from_gpu("B200"),
        alternatives=False,
    )
    assert finding(unknown_case, "kv-mxfp8-q-scales").status is Status.UNKNOWN
    assert {f.status for f in unknown_case.findings} == {Status.UNKNOWN, Status.PASS, Status.SKIP}
    assert unknown_case.verdict == "warn"


def test_findings_are_ordered_by_what_needs_action():
    order = [
        f.status
        for f in evaluate(
            make_config(model=load_model("deepseek-v3"), attention_backend="fa4", deterministic=True),
            Target.from_gpu("H100"),
        ).findings
    ]
    rank = {Status.FAIL: 0, Status.WARN: 1, Status.UNKNOWN: 2, Status.PASS: 3, Status.SKIP: 4}
    assert [rank[s] for s in order] == sorted(rank[s] for s in order)


def test_alternatives_are_single_changes_that_do_not_fail():
    report = evaluate(
        make_config(model=load_model("llama-3.1-8b"), attention_backend="fa3", kv_cache_dtype="fp8_e4m3"),
        Target.from_gpu("A100"),
    )
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
    assert resolve(make_config(model=load_model("deepseek-v3")), b200).attention_backend == "trtllm_mla"
    assert resolve(make_config(model=load_model("gpt-oss-20b")), h100).attention_backend == "fa3"
    assert (
        resolve(make_config(model=load_model("llama-4-scout"), deterministic=True), gb10).attention_backend == "triton"
    )
    assert (
        resolve(make_config(model=load_model("qwen3-8b"), deterministic=True), b200).attention_backend == "flashinfer"
    )
    cfg = resolve(
        make_config(model=load_model("qwen3-8b"), attention_backend="flashinfer", kv_cache_dtype="nvfp4"), b200
    )
    assert (cfg.prefill_backend, cfg.decode_backend) == ("flashinfer", "trtllm_mha")
    assert (
        effective_page_size(resolve(make_config(model=load_model("qwen3-8b"), attention_backend="fa4"), b200), b200)
        == 128
    )
    assert (
        effective_page_size(resolve(make_config(model=load_model("deepseek-v3"), attention_backend="fa4"), b200), b200)
        == 1
    )
    assert (
        effective_page_size(
            resolve(make_config(model=load_model("qwen3-8b"), attention_backend="trtllm_mha", page_size=8), b200), b200
        )
        == 64
    )
    assert (
        effective_page_size(
            resolve(
                make_config(model=load_model("deepseek-v3"), attention_backend="tokenspeed_mla", page_size=16), b200
            ),
            b200,
        )
        == 64
    )


def test_dsa_model_page_size_is_64():
    """SGLang's DSA path sets page 64 on CUDA, replacing --page-size, in every release with DSA (read in the 0.5.5,
    0.5.10, 0.5.16, 0.5.20, 0.5.23 wheels; bench/oracle_diff.py --space dsa: page 64 in each config 0.5.23
    accepted, and with --page-size 16 on B200 and 1 on H100 in 0.5.5 and 0.5.23); a DeepSeek model without
    index_topk keeps its own."""

    def page(model, gpu, release="0.5.23", **values):
        target = Target.from_gpu(gpu).with_engine_versions({"sglang": release})
        return effective_page_size(resolve(make_config(model=load_model(model), **values), target), target)

    assert page("deepseek-v3.2-exp", "H100") == 64
    assert page("deepseek-v3.2-exp", "B200", page_size=16) == 64
    assert page("deepseek-v3.2-exp", "RTX PRO 6000", release="0.5.5") == 64
    assert page("deepseek-v3", "H100") == 1
    # 0.5.6-0.5.11 leave DeepseekV32ForCausalLM off the DSA path: fa3, page 1 on H100 (the 0.5.10 oracle)
    target = Target.from_gpu("H100").with_engine_versions({"sglang": "0.5.10"})
    cfg = resolve(make_config(model=load_model("deepseek-v3.2-exp")), target)
    assert (cfg.attention_backend, effective_page_size(cfg, target)) == ("fa3", 1)


def test_model_overrides_set_sglangs_default_backends():
    """arg_groups/model_overrides/*.py of sglang 0.5.23, each case checked with SGLang's own resolution."""
    from tests.rule_fixtures.model_specific import model_dir

    def resolved(model, gpu, **values):
        target = Target.from_gpu(gpu)
        cfg = resolve(make_config(model=load_model(model), **values), target)
        return cfg.prefill_backend, cfg.decode_backend, effective_page_size(cfg, target)

    # EXAONE 4 / OLMo 3: trtllm_mha on SM100, fa3 on SM80+ (also SM12x, where fa3 then refuses), triton below
    for model in (model_dir("exaone-4"), model_dir("olmo-3")):
        assert resolved(model, "A100") == ("fa3", "fa3", 1)
        assert resolved(model, "RTX 5090") == ("fa3", "fa3", 1)
        assert resolved(model, "B200") == ("trtllm_mha", "trtllm_mha", 64)
        assert resolved(model, "T4") == ("triton", "triton", 1)
    # LFM2: flashinfer on SM100 only; the generic default elsewhere
    assert resolved(model_dir("lfm2"), "B200") == ("flashinfer", "flashinfer", 1)
    assert resolved(model_dir("lfm2"), "H100") == ("fa3", "fa3", 1)
    # Moss-VL: prefill flashinfer; decode keeps the generic default (or the deterministic fallback)
    assert resolved(model_dir("moss-vl"), "H100") == ("flashinfer", "fa3", 1)
    assert resolved(model_dir("moss-vl"), "B200") == ("flashinfer", "trtllm_mha", 64)
    assert resolved(model_dir("moss-vl"), "B200", deterministic=True) == ("flashinfer", "flashinfer", 1)
    # Qwen3-Next / Qwen3.5 on SM100: triton with page 1 (the declaration beats --page-size), trtllm_mha page 64
    # without the radix cache
    assert resolved("qwen3-next-80b-a3b", "B200") == ("triton", "triton", 1)
    cfg = resolve(make_config(model=load_model("qwen3-next-80b-a3b"), page_size=64), Target.from_gpu("B200"))
    assert (cfg.attention_backend, cfg.page_size, cfg.rewrites) == ("triton", 1, {"page_size": "64"})
    pasted = parse_command(["sglang", "serve", "m", "--disable-radix-cache"])
    no_radix = make_config(model=load_model("qwen3-next-80b-a3b"), flags=pasted.flags)
    assert resolve(no_radix, Target.from_gpu("B200")).attention_backend == "trtllm_mha"
    assert resolved("qwen3-next-80b-a3b", "H100") == ("fa3", "fa3", 1)
    # overrides keyed on --attention-backend alone fill it when only one phase is named
    cfg = resolve(
        make_config(model=load_model("llama-4-scout"), prefill_attention_backend="triton"), Target.from_gpu("H100")
    )
    assert (cfg.prefill_backend, cfg.decode_backend) == ("triton", "fa3")
    # ... those keyed on no backend flag at all leave the other phase to the generic default
    cfg = resolve(
        make_config(model=load_model("deepseek-v3"), prefill_attention_backend="fa4"), Target.from_gpu("B200")
    )
    assert (cfg.prefill_backend, cfg.decode_backend) == ("fa4", "flashinfer")
    assert resolved(model_dir("olmo-3"), "B200", prefill_attention_backend="triton") == ("triton", "trtllm_mha", 64)
    # the auto-selected reason names the override
    assert (
        "model_overrides"
        in resolve(make_config(model=load_model(model_dir("olmo-3"))), Target.from_gpu("A100")).auto_backend
    )


def test_declared_applicability_is_judged_by_the_engine():
    """@rule(backends=..., needs_gpu=...) skips or answers unknown before the check runs."""
    h100 = Target.from_gpu("H100")
    other = evaluate(
        make_config(model=load_model("llama-3.1-8b"), attention_backend="triton"), h100, alternatives=False
    )
    assert finding(other, "fa4-arch").status is Status.SKIP
    assert finding(other, "fa4-arch").message == "applies to the fa4 backend"
    no_gpu = Target(kind="facts", label="a report without GPUs", gpu_name=None, cc=None)
    blind = evaluate(make_config(model=load_model("llama-3.1-8b"), attention_backend="fa4"), no_gpu, alternatives=False)
    assert finding(blind, "fa4-arch").status is Status.UNKNOWN
    assert finding(fa4_on("H100"), "fa4-arch").status is Status.PASS
    assert finding(fa4_on("V100"), "fa4-arch").status is Status.FAIL


def test_the_default_backend_follows_the_release():
    """get_default_attn_backend as each SGLang release has it (read in the wheels; rules/engines/sglang/capabilities.py):
    fa3 on SM90 only for is_fa3_default_architecture's list through 0.5.7, trtllm_mha on SM100 from 0.5.6.post2."""

    def default(model, gpu, release):
        target = Target.from_gpu(gpu).with_engine_versions({"sglang": release})
        return resolve(make_config(model=load_model(model)), target).attention_backend

    # MistralForCausalLM is not in 0.5.7's list (utils/common.py); 0.5.8 drops the list
    assert default("mistral-7b", "H100", "0.5.7") == "flashinfer"
    assert default("mistral-7b", "H100", "0.5.8") == "fa3"
    assert default("llama-3.1-8b", "H100", "0.5.5") == "fa3"
    # SM100 MHA: flashinfer through 0.5.6 (server_args.py:1307), trtllm_mha from 0.5.6.post2 (:1383)
    assert default("llama-3.1-8b", "B200", "0.5.6") == "flashinfer"
    assert default("llama-3.1-8b", "B200", "0.5.6.post2") == "trtllm_mha"
    assert default("llama-3.1-8b", "B200", "0.5.23") == "trtllm_mha"


def test_the_fa4_page_rewrite_follows_the_release():
    """'FA4 backend only supports page size 128': any phase on SM100 from 0.5.15 (overrides.py:1678-1690), an
    explicit prefill fa4 on SM100 in 0.5.10-0.5.14 (server_args.py:2795-2797), on every GPU before (0.5.8 :1779)."""

    def page(gpu, release, **backends):
        target = Target.from_gpu(gpu).with_engine_versions({"sglang": release})
        return effective_page_size(resolve(make_config(model=load_model("llama-3.1-8b"), **backends), target), target)

    assert page("B200", "0.5.23", attention_backend="fa4") == 128
    assert page("B200", "0.5.12", attention_backend="fa4") == 1
    assert page("B200", "0.5.12", prefill_attention_backend="fa4", decode_attention_backend="triton") == 128
    assert page("H100", "0.5.12", prefill_attention_backend="fa4", decode_attention_backend="fa3") == 1
    assert page("H100", "0.5.8", prefill_attention_backend="fa4", decode_attention_backend="fa3") == 128
