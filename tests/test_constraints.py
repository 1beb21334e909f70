"""The one evaluator of constraint rows (rules/core/constraints.py): skip, unknown, fail and pass as the rows state
them, every failing requirement reported (or the first), and a term that cannot be judged never a pass or a
wrong guess."""

from __future__ import annotations

from attn_preflight.rules.core.constraints import (
    Arch,
    Constraint,
    Flag,
    Model,
    Not,
    Range,
    Requirement,
    judge,
)
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.models import features_from_config
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import make_config

GPU = Target.from_gpu("H100")
NO_GPU = Target(kind="gpu", label="no GPU named", gpu_name=None, cc=None)


def row(**fields) -> Constraint:
    base = dict(
        id="test-row", title="t", versions="", stage="startup", prevents="m", source="s", docs="d\n\nwhy", fix_title="f"
    )
    return Constraint(**{**base, **fields})


def config(**flags):
    return make_config(flags=flags)


def test_a_row_that_does_not_apply_is_skipped_and_one_that_holds_passes():
    radix = row(when=Flag("enable_hierarchical_cache"), requires=Not(Flag("disable_radix_cache")))
    assert judge(radix, config(), GPU).status is Status.SKIP
    assert judge(radix, config(enable_hierarchical_cache=True), GPU).status is Status.PASS
    refused = judge(radix, config(enable_hierarchical_cache=True, disable_radix_cache=True), GPU)
    assert refused.status is Status.FAIL and "--disable-radix-cache" in refused.found


def test_every_failing_requirement_is_reported_or_only_the_first():
    requirements = (
        Requirement(Range("page_size_x", 1, 64), ("--page-size-x 64",)),
        Requirement(Not(Flag("enable_y")), ("--disable-y",)),
    )
    both = config(page_size_x=128, enable_y=True)
    every = judge(row(when=Flag("page_size_x"), requires=requirements), both, GPU)
    assert every.status is Status.FAIL and every.fix == ("--page-size-x 64", "--disable-y")
    first = judge(row(when=Flag("page_size_x"), requires=requirements, first_only=True), both, GPU)
    assert first.fix == ("--page-size-x 64",)


def test_a_warn_row_warns():
    outcome = judge(row(when=Flag("x"), requires=Not(Flag("y")), severity="warn"), config(x=True, y=True), GPU)
    assert outcome.status is Status.WARN


def test_an_unknown_gpu_is_unknown_never_a_pass_or_a_failure():
    sm100 = row(when=Flag("x"), requires=Arch((10,)))
    assert judge(sm100, config(x=True), NO_GPU).status is Status.UNKNOWN
    assert judge(row(when=Arch((10,)), requires=Flag("x")), config(), NO_GPU).status is Status.UNKNOWN


def test_an_architecture_asked_of_a_config_without_one_is_unknown():
    without = features_from_config({"model_type": "deepseek_v3", "num_attention_heads": 8}, "m", "test")
    cfg = make_config(model=without, flags={"enable_cp_decode_attn_tp": True})
    dsv4 = row(when=Flag("enable_cp_decode_attn_tp"), requires=Model(architectures=("DeepseekV4ForCausalLM",)))
    assert judge(dsv4, cfg, GPU).status is Status.UNKNOWN
    by_type = row(when=Flag("enable_cp_decode_attn_tp"), requires=Model(model_types=("deepseek_v3",)))
    assert judge(by_type, cfg, GPU).status is Status.PASS
