"""vLLM before 0.13.0: what a backend named or picked by releases without --attention-backend refuses, as rows of
the backend-run family (attn_preflight.rules.engines.vllm.runs)."""

from __future__ import annotations

from attn_preflight.rules.core.constraints import ALWAYS, Constraint, Feature, Not
from attn_preflight.rules.engines.vllm.runs import Runs, running_rules
from attn_preflight.rules.engines.vllm.select import LEGACY_SELECT_SOURCE

ROWS = (
    Runs(
        "FLEX_ATTENTION",
        Constraint(
            id="vllm-flex-sliding-window",
            title="FLEX_ATTENTION in vLLM 0.10 cannot serve a sliding-window model",
            engine="vllm",
            versions="vllm>=0.10.0,<0.11.0",
            stage="init",
            needs_model=True,
            when=ALWAYS,
            requires=Not(Feature("sliding_window")),
            prevents="FlexAttention does not support sliding window yet.",
            source="vllm-project/vllm@v0.10.2: vllm/v1/attention/backends/flex_attention.py, "
            "FlexAttentionImpl.__init__ (:644-646); " + LEGACY_SELECT_SOURCE,
            references=("https://github.com/vllm-project/vllm/issues/24358",),
            docs="""Checks that a model with sliding-window layers (gpt-oss, Mistral, Gemma 2/3) is not served by
FLEX_ATTENTION on vLLM 0.10, named or picked by vLLM's default.

vLLM 0.10.x picks FlexAttention for every model on GPUs below SM80 (V100, T4, RTX 20xx), and on newer GPUs
where FLASH_ATTN does not take the head size or dtype; FlexAttentionImpl raises NotImplementedError for a
sliding window when the layer is built, before the weights load (vllm#24358: gpt-oss-20b on an RTX 2080).
vLLM 0.11.0 implements sliding windows in FlexAttention.""",
            fix_title="Upgrade to vLLM 0.11, or name TRITON_ATTN_VLLM_V1",
        ),
        use="TRITON_ATTN",
    ),
)

running_rules(__name__, ROWS)
