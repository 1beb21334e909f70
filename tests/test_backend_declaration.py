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
from attn_preflight.rules.core.validation import make_config
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
        for era in info.eras:
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
# The backend gates and rows read their facts from the declaration through the validator
# (rules/engines/sglang/reasons.py), and the hand-written fa3-fp8-sm8x, fa4-fp8-sm100, trtllm-mha-arch and
# tokenspeed-mla-kv-dtype read the declared fields and word their titles and docs from them: nothing is left to agree
# on, and the tests that a declaration change reaches every output (below) cover them. Still checked: the model
# families' backend lists, which are SGLang's own asserts beside the declared features.


@pytest.mark.parametrize(
    ("release", "fix"),
    [
        ("0.5.12", ("--attention-backend triton",)),  # no paged fa4 on SM12x, trtllm_mha prefill SM100 only
        ("0.5.18", ("--attention-backend fa4",)),  # fa4's SM120 host; trtllm_mha prefill still SM100 only
        ("0.5.23", ("--attention-backend trtllm_mha", "--attention-backend fa4")),
    ],
)
def test_fa3_arch_fix_names_what_the_release_admits_on_sm120(release, fix):
    """fa3-arch's fix on an SM120 GPU is the MHA backends the release's declarations admit for every phase (a backend
    whose prefill is refused there is not a whole-launch fix), else triton."""
    target = Target.from_gpu("RTX PRO 6000").with_engine_versions({"sglang": release})
    report = evaluate(make_config(model=load_model(MHA_MODEL), attention_backend="fa3"), target, alternatives=False)
    assert finding(report, "fa3-arch").fix == fix


def test_model_backend_lists_agree_with_declared_features():
    from attn_preflight.rules.engines.sglang.constraints.model_specific import GPT_OSS_BACKENDS

    # GPT-OSS needs sinks and sliding window: SGLang's list, among the general CUDA MHA backends, is exactly the
    # backends declaring both
    general = [n for n, b in SGLANG_BACKENDS.items() if b.general and b.mha and b.platform == "cuda"]
    both = {n for n in general if {"sinks", "sliding_window"} <= SGLANG_BACKENDS[n].features}
    assert both == set(GPT_OSS_BACKENDS) & set(general)
    # Inkling's relative attention is a custom score_mod: the two backends its layer accepts declare it
    assert all("score_mod" in SGLANG_BACKENDS[name].features for name in ("fa4", "triton"))


def test_softcap_rule_follows_the_declared_features(monkeypatch):
    """model-softcap-backend reads which backends apply, drop and refuse a soft-cap from the declaration: its verdict,
    what it requires, its fix and its docs."""

    def softcap(gpu, backend):
        report = evaluate(make_config(model=load_model("gemma-2-9b"), attention_backend=backend), Target.from_gpu(gpu))
        return finding(report, "model-softcap-backend")

    assert softcap("H100", "flashinfer").status is Status.PASS
    assert softcap("B200", "trtllm_mha").fix == ("--attention-backend flashinfer",)
    declare(monkeypatch, "flashinfer", features=SGLANG_BACKENDS["flashinfer"].features - {"softcap"})
    declare(monkeypatch, "flashinfer", drops=frozenset({"softcap"}))
    declare(monkeypatch, "fa3", archs=frozenset({8, 9, 10}))
    dropped = softcap("H100", "flashinfer")
    assert dropped.status is Status.WARN and "flashinfer" not in dropped.message.split("required")[1]
    assert softcap("B200", "trtllm_mha").fix == ("--attention-backend fa3",)
    docs = get_rule("model-softcap-backend").shown().docs
    assert "fa3, fa4 or triton pass" in docs and "flashinfer" in docs.split("never read")[0]


def test_every_declared_fact_placeholder_is_worded():
    """No rule shows a placeholder ({fa3.archs}, {requires}, {features:softcap}) unworded, and the rules that name
    declared facts this way are the ones `explain` rewords from the declaration."""
    import re

    placeholder = re.compile(r"\{(?:[a-z0-9_]+\.[a-z_:0-9]+|requires|head_dims:\d+|(?:features|drops|refuses):[a-z_]+)")
    worded = [r for r in all_rules() if r.worded is not None]
    assert len(worded) >= 30
    for r in all_rules():
        shown = r.shown()
        for text in (shown.title, shown.docs, shown.fix_title):
            assert not placeholder.search(text), (r.id, text)


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
    shown = get_rule("trtllm-mla-kv-dtype").shown()  # a constraint row worded from it too
    assert "fp8_e5m2" in shown.title and "fp8_e5m2" in shown.fix_title
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
    shown = get_rule("flashmla-page").shown()  # its title and docs name the declared snap
    assert "forces 32" in shown.title and "is 32 when" in shown.docs and "64" not in shown.docs
    assert shown.fix_title == "Pass --page-size 32"


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


def test_a_declaration_change_reaches_the_rules_that_read_it(monkeypatch):
    """fa3-arch, trtllm-mha-arch, hpc-ops-page-size, tokenspeed-mla-kv-dtype, fa3-fp8-sm8x, fa4-fp8-sm100,
    fa4-deterministic-mla-arch, fa4-rel-bias-arch and kv-mxfp8-kernel-arch read their facts from the declaration: one edit of it changes the verdict, what the finding requires, the fix, the
    title and docs `explain` shows, and (fa3-arch) the alternatives, with nothing else edited."""

    def offered(report):
        return {a.value for a in report.alternatives if a.option == "--attention-backend"}

    def check(gpu, release=None, model=MHA_MODEL, **values):
        target = Target.from_gpu(gpu)  # a target reads the declarations when it is made
        if release:
            target = target.with_engine_versions({"sglang": release})
        return evaluate(make_config(model=load_model(model), **values), target)

    def shown(rule_id):
        rule = get_rule(rule_id).shown()
        return rule.title + "\n" + rule.docs

    # fa3-arch: its archs, and the fix names the MHA backends the declarations admit on the GPU
    on_b200 = finding(check("B200", attention_backend="fa3"), "fa3-arch")
    assert (
        on_b200.status is Status.FAIL
        and "8.x, 9.x" in on_b200.message
        and "10.x" not in get_rule("fa3-arch").shown().title
    )
    assert on_b200.fix == ("--attention-backend trtllm_mha", "--attention-backend fa4")
    assert "trtllm_mha" in offered(check("B200", attention_backend="fa3"))
    declare(monkeypatch, "trtllm_mha", archs=frozenset({12}))
    assert finding(check("B200", attention_backend="fa3"), "fa3-arch").fix == ("--attention-backend fa4",)
    assert "trtllm_mha" not in offered(check("B200", attention_backend="fa3"))
    declare(monkeypatch, "fa3", archs=frozenset({8, 9, 10}))
    assert finding(check("B200", attention_backend="fa3"), "fa3-arch").status is Status.PASS
    assert "10.x" in get_rule("fa3-arch").shown().title and "8.x, 9.x, 10.x" in shown("fa3-arch")

    # trtllm-mha-arch: its archs per phase, in the verdict, the requirement and the title
    assert judge("trtllm-mha-arch", "Jetson Thor", attention_backend="trtllm_mha") is Status.FAIL
    declare(monkeypatch, "trtllm_mha", archs=frozenset({9, 10, 11}))
    thor = finding(check("Jetson Thor", attention_backend="trtllm_mha"), "trtllm-mha-arch")
    assert thor.status is Status.PASS and "SM11x" in thor.message
    assert judge("trtllm-mha-arch", "RTX PRO 6000", attention_backend="trtllm_mha") is Status.FAIL
    assert "11.x" in get_rule("trtllm-mha-arch").shown().title

    # hpc-ops-page-size: the page sizes it takes and the size SGLang snaps to
    assert finding(check("H100", attention_backend="hpc_ops", page_size=32), "hpc-ops-page-size").status is Status.WARN
    declare(monkeypatch, "hpc_ops", page_sizes=(32, 64), page_snap=32)
    assert finding(check("H100", attention_backend="hpc_ops", page_size=32), "hpc-ops-page-size").status is Status.PASS
    snapped = finding(check("H100", attention_backend="hpc_ops", page_size=128), "hpc-ops-page-size")
    assert snapped.status is Status.WARN and "32 or 64" in snapped.message and snapped.fix == ("--page-size 32",)
    assert "page size 32 or 64" in shown("hpc-ops-page-size")
    h100 = Target.from_gpu("H100")  # what SGLang then runs with: the declared snap
    on_hpc_ops = make_config(model=load_model(MHA_MODEL), attention_backend="hpc_ops", page_size=128)
    assert effective_page_size(resolve(on_hpc_ops, h100), h100) == 32

    # tokenspeed-mla-kv-dtype: the KV dtypes it takes (0.5.22: its own backend)
    dsv3 = {"model": MLA_MODEL, "attention_backend": "tokenspeed_mla"}
    refused = finding(check("B200", "0.5.22", **dsv3, kv_cache_dtype="bf16"), "tokenspeed-mla-kv-dtype")
    assert refused.status is Status.FAIL and refused.fix == ("--kv-cache-dtype fp8_e4m3",)
    declare(monkeypatch, "tokenspeed_mla", kv_dtypes=("bf16", "fp8_e4m3"))
    assert finding(check("B200", "0.5.22", **dsv3, kv_cache_dtype="bf16"), "tokenspeed-mla-kv-dtype").status is (
        Status.PASS
    )
    auto = finding(check("B200", "0.5.22", **dsv3, kv_cache_dtype="auto"), "tokenspeed-mla-kv-dtype")
    assert auto.fix == ("--kv-cache-dtype bf16",) and "bf16, fp8_e4m3" in auto.message
    assert "bf16, fp8_e4m3" in shown("tokenspeed-mla-kv-dtype")

    # fa3-fp8-sm8x and fa4-fp8-sm100: the archs that read an FP8 KV cache, and fa3 in fa4's fix where it reads it
    fp8 = {"kv_cache_dtype": "fp8_e4m3"}
    assert finding(check("A100", attention_backend="fa3", **fp8), "fa3-fp8-sm8x").status is Status.FAIL
    on_h100 = finding(check("H100", attention_backend="fa4", **fp8), "fa4-fp8-sm100")
    assert on_h100.status is Status.FAIL and "--attention-backend fa3" in on_h100.fix
    declare(monkeypatch, "fa3", kv_dtype_archs={"fp8_e4m3": frozenset({8, 9})})
    assert finding(check("A100", attention_backend="fa3", **fp8), "fa3-fp8-sm8x").status is Status.PASS
    assert "8.x, 9.x" in get_rule("fa3-fp8-sm8x").shown().title
    on_a100 = finding(check("A100", attention_backend="fa4", **fp8), "fa4-fp8-sm100")
    assert "--attention-backend fa3" in on_a100.fix
    declare(
        monkeypatch, "fa4", kv_dtype_archs={**SGLANG_BACKENDS["fa4"].kv_dtype_archs, "fp8_e4m3": frozenset({9, 10})}
    )
    assert finding(check("H100", attention_backend="fa4", **fp8), "fa4-fp8-sm100").status is Status.PASS
    assert "9.x, 10.x" in shown("fa4-fp8-sm100")

    # fa4-deterministic-mla-arch, fa4-rel-bias-arch, kv-mxfp8-kernel-arch: fa4's MLA, rel_bias and MXFP8 archs
    deterministic = {"model": MLA_MODEL, "attention_backend": "fa4", "deterministic": True}
    on_h100 = finding(check("H100", **deterministic), "fa4-deterministic-mla-arch")
    assert on_h100.status is Status.FAIL and on_h100.fix == ("--attention-backend fa3",)
    rel_bias = {"attention_backend": "fa4", "features": ["rel_bias"]}
    assert finding(check("A100", **rel_bias), "fa4-rel-bias-arch").status is Status.FAIL
    mxfp8 = {"attention_backend": "fa4", "kv_cache_dtype": "mxfp8"}
    assert finding(check("Jetson Thor", **mxfp8), "kv-mxfp8-kernel-arch").status is Status.FAIL
    fa4 = SGLANG_BACKENDS["fa4"]
    declare(monkeypatch, "fa4", mla_archs=frozenset({9, 10, 11}), kv_dtype_archs={"mxfp8": frozenset({10, 11})})
    declare(monkeypatch, "fa4", feature_archs={**fa4.feature_archs, "rel_bias": frozenset({8, 9, 10, 11, 12})})
    assert finding(check("H100", **deterministic), "fa4-deterministic-mla-arch").status is Status.PASS
    assert finding(check("A100", **rel_bias), "fa4-rel-bias-arch").status is Status.PASS
    assert finding(check("Jetson Thor", **mxfp8), "kv-mxfp8-kernel-arch").status is Status.PASS
    assert "9.x, 10.x, 11.x" in get_rule("fa4-deterministic-mla-arch").shown().title
    assert "8.x, 9.x" in get_rule("fa4-rel-bias-arch").shown().title
    assert "10.x, 11.x" in get_rule("kv-mxfp8-kernel-arch").shown().title
