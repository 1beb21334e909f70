"""rules/engines/sglang/capabilities.py is the one SGLang capability declaration: its eras answer by release, the rules
agree with it on every GPU profile and release, and changing what it says changes the verdicts."""

import json

import pytest

from attn_preflight.inputs import load_model
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.judge import default_backends, evaluate
from attn_preflight.rules.core.models import FEATURES as MODEL_FEATURES
from attn_preflight.rules.core.registry import all_rules, get_rule
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import kv_dtype_choices, make_config
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.capabilities import FEATURES, SGLANG_BACKENDS, BackendInfo, declaration
from attn_preflight.rules.engines.sglang.resolve import effective_page_size, resolve
from attn_preflight.rules.knowledge import gpus as gpu_kb

FIELDS = set(BackendInfo._fields)
PROFILES = [Target.from_gpu(name) for name in gpu_kb.names()]
RELEASES = (
    "0.5.1",
    "0.5.4",
    "0.5.5",
    "0.5.8",
    "0.5.9",
    "0.5.12",
    "0.5.16",
    "0.5.17",
    "0.5.19",
    "0.5.20",
    "0.5.22",
    "0.5.23",
)
MLA_MODEL, MHA_MODEL = "deepseek-v3", "llama-3.1-8b"


def finding(report, rule_id):
    return next(f for f in report.findings if f.rule_id == rule_id)


def judge(rule_id, gpu, release=None, model=MHA_MODEL, **values):
    target = Target.from_gpu(gpu) if isinstance(gpu, str) else gpu
    if release:
        target = target.with_engine_versions({"sglang": release})
    return finding(
        evaluate(make_config(model=load_model(model) if model else None, **values), target, alternatives=False), rule_id
    ).status


def judged(rule_id, releases=None):
    """The releases (of RELEASES, or those given) inside the rule's version range."""
    return [v for v in releases or RELEASES if get_rule(rule_id).version_range.contains(v)]


def declare(monkeypatch, name, **facts):
    """Change what the declaration says about one backend for the rest of the test."""
    monkeypatch.setitem(SGLANG_BACKENDS, name, SGLANG_BACKENDS[name]._replace(**facts))


# --- the declaration itself ----------------------------------------------------------------------------------


def test_every_fact_is_a_declared_field_with_a_source():
    for name, info in SGLANG_BACKENDS.items():
        assert info.name == name and info.source
        assert set(info.sources) <= FIELDS, name
        assert info.features <= set(FEATURES), name
        assert info.drops <= set(MODEL_FEATURES), name
        assert info.refuses <= set(FEATURES) | set(MODEL_FEATURES), name
        assert not info.refuses & info.features and not info.drops & info.features, name
        assert set(info.feature_archs) <= set(FEATURES) | set(MODEL_FEATURES) | {"paged_kv"}, name
        assert info.phases and info.phases <= backend_kb.PHASES, name
        if info.page_sizes is not None:
            assert info.page_snap in info.page_sizes, name
        for era in backend_kb.eras_of(name, info):
            assert era.source and set(era.facts) <= FIELDS, (name, era.versions)
            # each era holds for some release attn-preflight judges, and changes the declaration there
            covered = [v for v in RELEASES if era.holds_for(v)]
            assert covered and all(declaration(name, v) != info for v in covered), (name, era.versions)


def test_eras_answer_by_release():
    # is_blackwell: SM110 since 0.5.9, so trtllm_mla's arch gate too
    assert declaration("trtllm_mla", "0.5.8").archs == {10, 12}
    assert declaration("trtllm_mla", "0.5.9").archs == declaration("trtllm_mla").archs == {10, 11, 12}
    assert backend_kb.blackwell_majors("0.5.8") == {10, 12} and backend_kb.blackwell_majors("0.5.23") == {10, 11, 12}
    # trtllm_mha: SM100 only, then SM90/SM120 for decode, then for both phases; page 128 since 0.5.17
    assert declaration("trtllm_mha", "0.5.9").archs_for("decode") == {10}
    assert declaration("trtllm_mha", "0.5.12").archs_for("decode") == {9, 10, 12}
    assert declaration("trtllm_mha", "0.5.12").archs_for("prefill") == {10}
    assert declaration("trtllm_mha", "0.5.19").archs_for("prefill") == {9, 10, 12}
    assert 128 not in declaration("trtllm_mha", "0.5.16").page_sizes and 128 in declaration("trtllm_mha").page_sizes
    # trtllm_mla KV dtypes: bf16 from 0.5.7, fp4_e2m1 until 0.5.20
    assert "bf16" not in declaration("trtllm_mla", "0.5.5").kv_dtypes
    assert "fp4_e2m1" in declaration("trtllm_mla", "0.5.20").kv_dtypes
    assert "fp4_e2m1" not in declaration("trtllm_mla", "0.5.21").kv_dtypes
    # removals, renames, features added later
    assert not declaration("cutlass_mla", "0.5.19").removed and declaration("cutlass_mla", "0.5.20").removed
    assert declaration("tokenspeed_mla", "0.5.22").alias_of is None
    assert declaration("tokenspeed_mla").alias_of == "cutedsl_mla"
    assert backend_kb.with_feature("spec_page_tree", backend_kb.declarations("0.5.5")) == ("flashinfer",)
    assert set(backend_kb.with_feature("spec_page_tree", backend_kb.declarations("0.5.6"))) == {
        "flashinfer",
        "fa3",
    }
    assert set(backend_kb.with_feature("spec_page_tree")) == {"flashinfer", "fa3", "triton"}
    # SGLang's SM120 forward host (paged decode, rel_bias) arrives in 0.5.18: 0.5.17's vendored interface.py:1362
    # refuses paged KV on SM 12.0 and :866-870 rel_bias off SM9x-SM11x; 0.5.18's flashattention_backend.py:274
    assert 12 not in declaration("fa4", "0.5.17").feature_archs["paged_kv"]
    assert 12 not in declaration("fa4", "0.5.17").feature_archs["rel_bias"]
    assert 12 in declaration("fa4", "0.5.18").feature_archs["paged_kv"]
    assert 12 in declaration("fa4", "0.5.18").feature_archs["rel_bias"]
    assert 12 in declaration("fa4").feature_archs["paged_kv"]


# --- every rule that restates a backend's limit agrees with the declaration --------------------------------------
# Only rules that restate a fact are checked here: a generated gate or row (rules/engines/sglang/declared, BackendArch
# rows) reads the declaration through the validator, so there is nothing to agree on; the test that a declaration
# change reaches every output (below) covers them. Still restated, hence still checked: fa3-arch and
# trtllm-mha-arch (hand-written arch tables), hpc-ops-page-size (a literal page size 64), tokenspeed-mla-kv-dtype,
# fa3-fp8-sm8x and fa4-fp8-sm100 (hand-written KV-dtype gates) and the model families' backend lists.


def hand_written(rule_id):
    assert not get_rule(rule_id).generated, f"{rule_id} is generated from the declaration: drop it from this check"
    return rule_id


# backend -> (arch rule, a model it serves, the releases where the backend is itself)
ARCH_RULES = {
    "fa3": ("fa3-arch", MHA_MODEL, None),
    "trtllm_mha": ("trtllm-mha-arch", MHA_MODEL, None),
}


@pytest.mark.parametrize("backend", sorted(ARCH_RULES))
def test_arch_rules_agree_with_the_declared_archs(backend):
    rule_id, model, releases = ARCH_RULES[backend]
    hand_written(rule_id)
    assert judged(rule_id, releases)
    for release in judged(rule_id, releases):
        info = declaration(backend, release)
        for target in PROFILES:
            admitted = all(target.major in info.archs_for(phase) for phase in info.phases)
            expected = Status.PASS if admitted else Status.FAIL
            got = judge(rule_id, target, release, model=model, attention_backend=backend)
            assert got is expected, (backend, release, target.gpu_name)


# backend -> (page rule, a model it serves, the releases where the backend is itself)
PAGE_RULES = {
    "hpc_ops": ("hpc-ops-page-size", MHA_MODEL, None),
}


@pytest.mark.parametrize("backend", sorted(PAGE_RULES))
def test_page_rules_and_snaps_agree_with_the_declared_page_sizes(backend):
    rule_id, model, releases = PAGE_RULES[backend]  # a row, but its page size is a literal, not the declaration's
    gpu = "H100" if backend == "hpc_ops" else "B200"
    assert judged(rule_id, releases)
    for release in judged(rule_id, releases):
        info = declaration(backend, release)
        target = Target.from_gpu(gpu).with_engine_versions({"sglang": release})
        for page in (1, 16, 32, 64, 128, 256):
            config = resolve(make_config(model=load_model(model), attention_backend=backend, page_size=page), target)
            expected = Status.PASS if page in info.page_sizes else Status.WARN
            assert judge(rule_id, target, model=model, attention_backend=backend, page_size=page) is expected
            assert effective_page_size(config, target) == (page if page in info.page_sizes else info.page_snap)


# backend -> (hand-written KV dtype rule, the releases where the backend is itself); trtllm_mla's and
# cutedsl_mla's are rows reading the declaration (Listed)
KV_RULES = {
    "tokenspeed_mla": ("tokenspeed-mla-kv-dtype", RELEASES[:-1]),
}


@pytest.mark.parametrize("backend", sorted(KV_RULES))
def test_kv_dtype_rules_agree_with_the_declared_kv_dtypes(backend):
    rule_id, releases = KV_RULES[backend]
    hand_written(rule_id)
    assert judged(rule_id, releases)
    for release in judged(rule_id, releases):
        allowed = declaration(backend, release).kv_dtypes
        for kv in kv_dtype_choices("sglang"):
            expected = Status.PASS if kv in allowed else Status.FAIL
            got = judge(rule_id, "B200", release, model=MLA_MODEL, attention_backend=backend, kv_cache_dtype=kv)
            assert got is expected, (backend, release, kv)


def test_fa_kernel_limits_agree_with_the_declaration():
    """The FP8-KV rules of fa3 and fa4 are still hand-written (the generated gates read the declaration)."""
    fa3, fa4 = declaration("fa3"), declaration("fa4")
    hand_written("fa3-fp8-sm8x"), hand_written("fa4-fp8-sm100")
    for target in PROFILES:
        major = target.major
        fp8 = Status.PASS if major not in fa3.archs or major in fa3.kv_dtype_archs["fp8_e4m3"] else Status.FAIL
        assert judge("fa3-fp8-sm8x", target, attention_backend="fa3", kv_cache_dtype="fp8_e4m3") is fp8
        fa4_fp8 = Status.PASS if major in fa4.kv_dtype_archs["fp8_e4m3"] else Status.FAIL
        assert judge("fa4-fp8-sm100", target, attention_backend="fa4", kv_cache_dtype="fp8_e4m3") is fa4_fp8


def test_model_backend_lists_agree_with_declared_features():
    from attn_preflight.rules.engines.sglang.constraints.model_specific import GPT_OSS_BACKENDS

    # GPT-OSS needs sinks and sliding window: SGLang's list, among the general CUDA MHA backends, is exactly the
    # backends declaring both
    general = [n for n, b in SGLANG_BACKENDS.items() if b.general and b.mha and b.platform == "cuda"]
    both = {n for n in general if {"sinks", "sliding_window"} <= SGLANG_BACKENDS[n].features}
    assert both == set(GPT_OSS_BACKENDS) & set(general)
    # Inkling's relative attention is a custom score_mod: the two backends its layer accepts declare it
    assert all("score_mod" in SGLANG_BACKENDS[name].features for name in ("fa4", "triton"))
    # a soft-capped model warns exactly on the backends declared to drop the soft-cap
    for name in ("fa3", "fa4", "flashinfer", "triton", "trtllm_mha", "torch_native", "flex_attention"):
        expected = Status.WARN if "softcap" in SGLANG_BACKENDS[name].drops else Status.PASS
        assert judge("model-softcap-backend", "H100", model="gemma-2-9b", attention_backend=name) is expected, name


def test_rules_name_declared_backends_only():
    for r in all_rules():
        if r.engine == "sglang":
            assert r.backends <= set(SGLANG_BACKENDS), r.id


# --- changing the declaration changes the verdict ---------------------------------------------------------------


def test_arch_verdicts_follow_the_declaration(monkeypatch):
    assert judge("hpc-ops-arch", "B200", attention_backend="hpc_ops") is Status.FAIL
    assert judge("fa3-arch", "B200", attention_backend="fa3") is Status.FAIL
    assert judge("flashinfer-arch", "T4", attention_backend="flashinfer") is Status.PASS
    declare(monkeypatch, "hpc_ops", archs=frozenset({9, 10}))
    declare(monkeypatch, "fa3", archs=frozenset({8, 9, 10}))
    declare(monkeypatch, "flashinfer", min_cc=(8, 0))
    assert judge("hpc-ops-arch", "B200", attention_backend="hpc_ops") is Status.PASS
    assert judge("fa3-arch", "B200", attention_backend="fa3") is Status.PASS
    assert judge("flashinfer-arch", "T4", attention_backend="flashinfer") is Status.FAIL


def test_an_era_changes_the_verdict_for_its_releases_only(monkeypatch):
    thor = Target.from_gpu("Jetson Thor")
    assert judge("trtllm-mla-arch", thor, "0.5.8", model=MLA_MODEL, attention_backend="trtllm_mla") is Status.FAIL
    declare(monkeypatch, "trtllm_mla", eras=())
    assert judge("trtllm-mla-arch", thor, "0.5.8", model=MLA_MODEL, attention_backend="trtllm_mla") is Status.PASS
    assert judge("spec-eagle-page-tree", "H100", "0.5.23", **EAGLE_TREE, attention_backend="triton") is Status.PASS
    era = backend_kb.Era(">=0.5.23", "test", drop_features=frozenset({"spec_page_tree"}))
    declare(monkeypatch, "triton", eras=(era,))
    assert judge("spec-eagle-page-tree", "H100", "0.5.23", **EAGLE_TREE, attention_backend="triton") is Status.FAIL
    assert judge("spec-eagle-page-tree", "H100", "0.5.22", **EAGLE_TREE, attention_backend="triton") is Status.PASS


def test_kernel_arch_verdicts_follow_the_declaration(monkeypatch):
    dsv3 = {"model": MLA_MODEL, "attention_backend": "trtllm_mla"}
    assert judge("trtllm-mla-arch", "RTX PRO 6000", **dsv3) is Status.PASS  # admitted at start-up
    assert judge("trtllm-mla-sm100-prefill", "RTX PRO 6000", **dsv3) is Status.FAIL
    assert judge("trtllm-mla-sm100-prefill", "B200", **dsv3) is Status.PASS
    declare(monkeypatch, "trtllm_mla", kernel_archs={"prefill": frozenset({10, 12})})
    assert judge("trtllm-mla-sm100-prefill", "RTX PRO 6000", **dsv3) is Status.PASS
    assert judge("trtllm-mla-sm100-prefill", "Jetson Thor", **dsv3) is Status.FAIL


@pytest.mark.parametrize("gpu", ["RTX PRO 6000", "RTX 5090", "GB10", "Jetson Thor"])
def test_mla_default_off_sm90_and_sm100_is_triton_in_every_release(gpu):
    """get_default_attn_backend's MLA branch: fa3 on SM90, flashinfer on is_sm100, triton otherwise (model_runner.py
    in 0.5.1, server_args.py 0.5.10 :2260-2275, model_override_base.py 0.5.23 :337-347), and DeepSeek's trtllm_mla
    override is is_sm100 only (server_args.py 0.5.10 :1602, model_overrides/deepseek_v2.py 0.5.23 :179)."""
    for release in RELEASES:
        target = Target.from_gpu(gpu).with_engine_versions({"sglang": release})
        resolved = resolve(make_config(model=load_model(MLA_MODEL)), target)
        assert resolved.attention_backend == "triton", (gpu, release, resolved.attention_backend)
        report = evaluate(make_config(model=load_model(MLA_MODEL)), target, alternatives=False)
        assert finding(report, "trtllm-mla-sm100-prefill").status is Status.SKIP


EAGLE_TREE = {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4, "page_size": 64}


def test_kv_page_and_feature_verdicts_follow_the_declaration(monkeypatch):
    dsv3 = {"model": MLA_MODEL, "attention_backend": "trtllm_mla"}
    assert judge("trtllm-mla-kv-dtype", "B200", **dsv3, kv_cache_dtype="fp8_e5m2") is Status.FAIL
    assert judge("trtllm-mla-page", "B200", **dsv3, page_size=128) is Status.WARN
    assert judge("fa4-mla-arch", "H100", model=MLA_MODEL, attention_backend="fa4") is Status.FAIL
    assert judge(
        "general-triton-cross-attention", "H100", attention_backend="triton", features=["cross_attention"]
    ) is (Status.FAIL)
    assert judge("model-softcap-backend", "B200", model="gemma-2-9b", attention_backend="trtllm_mha") is Status.WARN
    declare(monkeypatch, "trtllm_mla", kv_dtypes=("fp8_e4m3", "fp8_e5m2", "bf16", "auto"), page_sizes=(32, 64, 128))
    declare(monkeypatch, "fa4", mla_archs=frozenset({9, 10, 11}))
    declare(monkeypatch, "triton", refuses=frozenset())
    declare(monkeypatch, "trtllm_mha", drops=frozenset())
    assert judge("trtllm-mla-kv-dtype", "B200", **dsv3, kv_cache_dtype="fp8_e5m2") is Status.PASS
    assert judge("trtllm-mla-page", "B200", **dsv3, page_size=128) is Status.PASS
    b200 = Target.from_gpu("B200")
    mla = make_config(model=load_model(MLA_MODEL), attention_backend="trtllm_mla", page_size=128)
    assert effective_page_size(resolve(mla, b200), b200) == 128
    assert judge("fa4-mla-arch", "H100", model=MLA_MODEL, attention_backend="fa4") is Status.PASS
    assert judge(
        "general-triton-cross-attention", "H100", attention_backend="triton", features=["cross_attention"]
    ) is (Status.PASS)
    assert judge("model-softcap-backend", "B200", model="gemma-2-9b", attention_backend="trtllm_mha") is Status.PASS


def test_refusals_follow_the_declaration(monkeypatch):
    spec = {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1}
    assert judge("hpc-ops-model", "H100", attention_backend="hpc_ops", **spec) is Status.FAIL
    assert judge("spec-flex-attention", "H100", attention_backend="flex_attention", **spec) is Status.FAIL
    assert judge("model-softcap-backend", "H100", model="gemma-2-9b", attention_backend="hpc_ops") is Status.FAIL
    assert judge("model-softcap-backend", "H100", model="gemma-2-9b", attention_backend="fa3") is Status.PASS
    declare(monkeypatch, "hpc_ops", refuses=frozenset({"cross_attention"}))
    declare(monkeypatch, "flex_attention", refuses=frozenset())
    assert judge("fa3-score-mod", "H100", attention_backend="fa3", features=["score_mod"]) is Status.FAIL
    declare(monkeypatch, "fa3", refuses=frozenset({"softcap"}), features=frozenset())
    assert judge("fa3-score-mod", "H100", attention_backend="fa3", features=["score_mod"]) is Status.PASS
    assert judge("hpc-ops-model", "H100", attention_backend="hpc_ops", **spec) is Status.PASS
    assert judge("spec-flex-attention", "H100", attention_backend="flex_attention", **spec) is Status.PASS
    assert judge("model-softcap-backend", "H100", model="gemma-2-9b", attention_backend="hpc_ops") is Status.PASS
    assert judge("model-softcap-backend", "H100", model="gemma-2-9b", attention_backend="fa3") is Status.FAIL


def test_alternatives_matrix_and_smoke_follow_the_declaration(monkeypatch):
    from attn_preflight.smoke_plan import plan

    h100 = Target.from_gpu("H100")
    fp8 = make_config(model=load_model(MHA_MODEL), attention_backend="fa4", kv_cache_dtype="fp8_e4m3")
    alternatives = {a.value for a in evaluate(fp8, h100).alternatives if a.option == "--attention-backend"}
    assert "flashinfer" in alternatives and "flashinfer" in default_backends("sglang")
    decode = next(j for j in plan(resolve(fp8, h100), h100).jobs if "decode" in j.phases)
    assert decode.case.dtype == "fp8_e4m3"  # fa4 decode casts q to the FP8 KV dtype
    declare(monkeypatch, "flashinfer", general=False)
    declare(monkeypatch, "fa4", features=SGLANG_BACKENDS["fa4"].features - {"fp8_q_cast"})
    alternatives = {a.value for a in evaluate(fp8, h100).alternatives if a.option == "--attention-backend"}
    assert "flashinfer" not in alternatives and "flashinfer" not in default_backends("sglang")
    decode = next(j for j in plan(resolve(fp8, h100), h100).jobs if "decode" in j.phases)
    assert decode.case.dtype != "fp8_e4m3"


def test_library_rules_follow_the_declared_libraries(monkeypatch):
    from pathlib import Path

    from attn_preflight.inputs import load_facts_file

    h200 = load_facts_file(str(Path(__file__).parent / "fixtures" / "probe-h200.json"))
    fa4 = make_config(model=load_model(MHA_MODEL), attention_backend="fa4")

    def required(release):
        target = h200.with_engine_versions({"sglang": release})
        return finding(evaluate(fa4, target, alternatives=False), "install-fa4-library").outcome.required

    # flash-attn-4 is fa4's library only in the 0.5.10-0.5.15 era
    assert backend_kb.declaration("fa4", "0.5.12").libraries == ("cutlass_dsl", "quack", "fa4")
    assert "flash-attn-4" in required("0.5.12") and "flash-attn-4" not in required("0.5.23")
    declare(monkeypatch, "fa4", libraries=("cutlass_dsl", "quack", "fa4"))
    assert "flash-attn-4" in required("0.5.23")


def test_fa4_sm90_head_dims_follow_the_release():
    """SGLang's vendored FA4 takes (512, 512) on SM90 from 0.5.22 (interface.py:130-141, 'or both equal to 512');
    0.5.16-0.5.21 validate 8..256 only (0.5.16 jit_kernel/flash_attn/cute/interface.py:103-109)."""
    assert not declaration("fa4", "0.5.21").head_dims[9].takes(512, 512)
    assert declaration("fa4", "0.5.22").head_dims[9].takes(512, 512)
    assert declaration("fa4", "0.5.16").head_dims[9].takes(256, 256)


def test_a_declaration_change_reaches_verdict_message_fix_and_alternatives(monkeypatch):
    """Generated gates (rules/engines/sglang/declared) read the declaration through one validator: changing a
    backend's archs or page sizes changes the verdict, what the finding requires, the fix it names and the
    alternatives `check` offers, with nothing else edited."""

    def run(**values):
        config = make_config(model=load_model(MLA_MODEL), **values)
        return evaluate(config, Target.from_gpu("B200"))

    before = finding(run(attention_backend="flashmla"), "flashmla-arch")
    assert before.status is Status.FAIL and "9.x" in before.message
    assert before.fix == ("--attention-backend trtllm_mla",)

    declare(monkeypatch, "trtllm_mla", archs=frozenset({12}))  # the MLA fallback is derived: triton now
    assert finding(run(attention_backend="flashmla"), "flashmla-arch").fix == ("--attention-backend triton",)

    declare(monkeypatch, "flashmla", archs=frozenset({9, 10}))
    after = finding(run(attention_backend="flashmla"), "flashmla-arch")
    assert after.status is Status.PASS

    mha = make_config(model=load_model(MHA_MODEL), attention_backend="fa4")  # fa4-paged-kv-sm8x fails on A100
    offered = [a.value for a in evaluate(mha, Target.from_gpu("A100")).alternatives]
    declare(monkeypatch, "fa4", feature_archs={"paged_kv": frozenset({8, 9, 10, 11, 12})})
    assert "fa4" not in offered and evaluate(mha, Target.from_gpu("A100")).verdict is not Status.FAIL

    declare(monkeypatch, "flashmla", page_sizes=(32, 64), page_snap=32)
    page = finding(run(attention_backend="flashmla", page_size=128), "flashmla-page")
    assert page.status is Status.WARN and "32 or 64" in page.message and page.fix == ("--page-size 32",)


def test_generated_docs_state_the_declared_head_dims():
    """fa4's head-dim rules word their title and docs from the declaration: the SM100 list includes (512, 512)."""
    rule = get_rule("fa4-head-dim-sm100").shown()
    assert rule.generated and "(512, 512)" in rule.title and "(512, 512)" in rule.docs


def test_a_declaration_change_reaches_verdict_message_fix_docs_and_alternatives(monkeypatch):
    """One edit of fa4's declaration (its SM100 head dims, capabilities.py FA4_HEAD_DIMS) and one of trtllm_mha's
    archs reach every output with nothing else edited: the verdict, what the finding requires, the fix (the
    backends the declarations admit), the rule's title and docs as `explain` and `rules` show them, and the
    alternatives another failing config is offered."""
    from cli_run import run_cli

    from attn_preflight.rules.engines.sglang.capabilities import HeadDims

    def b200():  # a target reads the declarations when it is made
        return Target.from_gpu("B200")

    model = load_model("gemma-3-27b")  # (head_dim, v_head_dim) = (128, 128): in fa4's SM100 range today
    on_fa4 = make_config(model=model, attention_backend="fa4")
    on_flashmla = make_config(model=model, attention_backend="flashmla")  # an MLA-only backend: fails, offers others

    def explained():
        run = run_cli(["explain", "fa4-head-dim-sm100", "--format", "json"])
        assert run.code == 0, run.err
        return json.loads(run.out)

    def listed():
        run = run_cli(["rules", "--subject", "fa4", "--format", "json"])
        return next(r for r in json.loads(run.out) if r["id"] == "fa4-head-dim-sm100")

    before = finding(evaluate(on_fa4, b200()), "fa4-head-dim-sm100")
    assert before.status is Status.PASS
    assert "8..128" in explained()["title"] and "8..128" in explained()["docs"] and "8..128" in listed()["title"]
    assert "fa4" in [a.value for a in evaluate(on_flashmla, b200()).alternatives]

    sm100 = SGLANG_BACKENDS["fa4"].head_dims[10]
    narrower = HeadDims(96, sm100.shapes, sm100.lo)
    declare(monkeypatch, "fa4", head_dims={**SGLANG_BACKENDS["fa4"].head_dims, 10: narrower, 11: narrower})
    after = finding(evaluate(on_fa4, b200()), "fa4-head-dim-sm100")
    assert after.status is Status.FAIL and "(128, 128)" in after.message and "8..96" in after.message
    assert after.fix == ("--attention-backend trtllm_mha", "--attention-backend flashinfer")
    shown = explained()
    assert "8..96" in shown["title"] and "8..96" in shown["docs"] and "8..128" not in shown["docs"]
    assert "8..96" in listed()["title"] and "8..96" in after.title
    assert "fa4" not in [a.value for a in evaluate(on_flashmla, b200()).alternatives]

    declare(monkeypatch, "trtllm_mha", archs=frozenset({12}))  # the fix is derived: flashinfer alone now
    assert finding(evaluate(on_fa4, b200()), "fa4-head-dim-sm100").fix == ("--attention-backend flashinfer",)
