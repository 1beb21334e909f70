"""On a real GPU with flash-attn-4: the FA4 kernel facts the fa4 rules encode hold on this device.

Each case builds the config a rule judges (a model shape, a KV dtype, absorbed MLA) and the FA4 call it
stands for, then asserts: the rule fails <=> the kernel raises with the rule's upstream message. SGLang
0.5.23 runs a vendored copy of FA4; these calls use the flash-attn-4 wheel, whose checks are the same for
the shapes used here (the vendored copy adds (512, 512) on SM90, not exercised).

    python3 -m pytest -m gpu tests/test_rule_kernels_gpu.py -v
"""

import pytest

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.judge import evaluate
from attn_preflight.rules.core.models import features_from_config
from attn_preflight.rules.core.target import Target

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def fa4():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    cute = pytest.importorskip("flash_attn.cute")
    major, minor = torch.cuda.get_device_capability()
    return torch, cute, Target.from_gpu(f"{major}.{minor}")


def model(head_dim, v_head_dim, **extra):
    return features_from_config(
        {
            "architectures": ["LlamaForCausalLM"],
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "head_dim": head_dim,
            "v_head_dim": v_head_dim,
            **extra,
        },
        f"hd{head_dim}x{v_head_dim}",
        "test",
    )


def rule_outcome(config, target, rule_id):
    report = evaluate(config, target, alternatives=False)
    return next(f for f in report.findings if f.rule_id == rule_id)


def kernel_error(fn):
    try:
        fn()
    except Exception as err:  # the kernel's own refusal is the fact under test
        return f"{type(err).__name__}: {err}"
    return None


def agree(finding, error):
    if finding.status is Status.FAIL:
        prefix = finding.prevents.split("{", 1)[0].split("(head_dim", 1)[0].strip()
        assert error is not None, f"{finding.rule_id} predicts a failure; the kernel ran"
        assert not prefix or prefix in error, f"kernel raised something else: {error}"
    else:
        assert error is None, f"{finding.rule_id} predicts {finding.status.value}; the kernel raised {error}"


@pytest.mark.parametrize("hd,hv", [(64, 64), (128, 128), (192, 128), (256, 256), (160, 160), (320, 320)])
def test_head_dims(fa4, hd, hv):
    torch, cute, target = fa4
    rule_id = {9: "fa4-head-dim-sm90", 10: "fa4-head-dim-sm100", 11: "fa4-head-dim-sm100"}.get(target.major)
    if rule_id is None:
        pytest.skip("no FA4 head-dim rule for this arch")
    finding = rule_outcome(Config(model=model(hd, hv), attention_backend="fa4"), target, rule_id)
    q = torch.randn(1, 256, 16, hd, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 256, 16, hd, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, 256, 16, hv, device="cuda", dtype=torch.bfloat16)
    agree(finding, kernel_error(lambda: cute.flash_attn_func(q, k, v, causal=True)))


def test_fp8_only_on_sm100(fa4):
    torch, cute, target = fa4
    finding = rule_outcome(
        Config(model=model(128, 128), attention_backend="fa4", kv_cache_dtype="fp8_e4m3"), target, "fa4-fp8-sm100"
    )
    q, k, v = (
        torch.randn(1, 256, 16, 128, device="cuda", dtype=torch.bfloat16).to(torch.float8_e4m3fn) for _ in range(3)
    )
    agree(finding, kernel_error(lambda: cute.flash_attn_func(q, k, v, causal=True)))


def test_absorbed_mla_qv_only_on_sm100_sm110(fa4):
    torch, cute, target = fa4
    deepseek = features_from_config(
        {
            "architectures": ["DeepseekV3ForCausalLM"],
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
        },
        "mla",
        "test",
    )
    finding = rule_outcome(Config(model=deepseek, attention_backend="fa4"), target, "fa4-mla-arch")
    q_rope = torch.randn(1, 128, 16, 64, device="cuda", dtype=torch.bfloat16)
    k_rope = torch.randn(1, 512, 1, 64, device="cuda", dtype=torch.bfloat16)
    c_kv = torch.randn(1, 512, 1, 512, device="cuda", dtype=torch.bfloat16)
    q_nope = torch.randn(1, 128, 16, 512, device="cuda", dtype=torch.bfloat16)
    agree(finding, kernel_error(lambda: cute.flash_attn_func(q_rope, k_rope, c_kv, qv=q_nope, causal=False)))
