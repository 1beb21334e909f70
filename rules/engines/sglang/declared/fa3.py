"""fa3's gates generated from its declaration: the archs on which it serves MLA models.

Each row names one fact of fa3's declaration (rules/engines/sglang/capabilities.py); gate.judge judges it through
the validator (rules/engines/sglang/reasons.py), which words what the fact requires.
"""

from attn_preflight.rules.engines.sglang.capabilities import FA3_API
from attn_preflight.rules.engines.sglang.declared.gate import Fallback, Gate, gate_rules

REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py, create_flashattention_v3_backend"
FA3_ARCH_MESSAGE = "FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`."

ROWS = (
    Gate(
        id="fa3-mla-sm8x",
        title="fa3 serves MLA models on SM90 only",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.23: the same assert, (major == 8 and not MLA) or major == 9, in every release: "
        "model_runner.py:1539-1542 (0.5.1), attention_registry.py create_flashattention_v3_backend from 0.5.5 "
        "(:128-131; 0.5.16 :201-202; 0.5.23 :243)",
        stage="init",
        prevents=FA3_ARCH_MESSAGE,
        source=f"{REGISTRY}; {FA3_API} ('Only Hopper supports different V headdim')",
        docs="""Checks that an MLA model (DeepSeek V2/V3 family, Kimi K2, ...) on `fa3` runs on SM90.

SGLang runs MLA through FA3's absorbed path (qv, K/V head dims 64/512) which the FA3 kernels implement only
on Hopper ("Only Hopper supports different V headdim"); the fa3 factory therefore accepts SM8x only for
non-MLA models, with the generic SM80-90 message.""",
        fix_title="Use --attention-backend triton (or flashinfer) for MLA on SM8x",
        backend="fa3",
        fact="mla_archs",
        fix=Fallback(mla=("triton", "flashinfer")),
        backends=("fa3",),
        within_archs=True,
    ),
)

gate_rules(__name__, ROWS)
