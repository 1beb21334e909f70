"""vLLM: what FlexAttention's kernels refuse once vLLM runs FLEX_ATTENTION, named or picked, as rows of the
backend-run family (attn_preflight.rules.engines.vllm.runs)."""

from __future__ import annotations

from attn_preflight.rules.core.constraints import ALWAYS, Constraint, Feature, Flag, Not, Range
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm.runs import Runs, running_rules

FLEX_PY = f"{kb.BACKENDS_DIR}/flex_attention.py"

ROWS = (
    Runs(
        "FLEX_ATTENTION",
        Constraint(
            id="vllm-flex-softcap",
            title="FLEX_ATTENTION cannot serve a model with attention logit soft-capping",
            engine="vllm",
            versions="vllm>=0.10.0",
            stage="init",
            needs_model=True,
            when=ALWAYS,
            requires=Not(Feature("softcap")),
            prevents="FlexAttention does not support logits soft cap yet.",
            source=kb.src(FLEX_PY, "FlexAttentionImpl.__init__"),
            docs="""Checks that a model whose attention logits are soft-capped (Gemma 2's attn_logit_softcapping) is not
served by FLEX_ATTENTION, named or picked by vLLM's priority list.

validate_configuration accepts the combination; FlexAttentionImpl.__init__ raises NotImplementedError when
the layer is built, before the weights load. Found by bench/vllm_oracle_diff.py (gemma-2-9b, FLEX_ATTENTION).""",
            fix_title="Use FLASH_ATTN, FLASHINFER or TRITON_ATTN (they take a soft cap)",
        ),
        use="TRITON_ATTN",
    ),
    Runs(
        "FLEX_ATTENTION",
        Constraint(
            id="vllm-flex-block-size",
            title="FLEX_ATTENTION with a --block-size below 16 crashes in its Triton kernel (vllm < 0.21.0)",
            engine="vllm",
            versions="vllm>=0.15.0,<0.21.0",
            stage="runtime",
            needs_gpu=True,
            when=Flag("page_size"),
            requires=Range("page_size", 16, float("inf")),
            fix=("drop --block-size",),
            prevents="",
            reason="Before vllm 0.21.0 FlexAttention accepts any block size at start-up; below 16, the kernel's "
            "minimum, the first forward fails in torch.compile's Triton codegen (vllm#39807, vllm#41339). With no "
            "backend named, FLASH_ATTN, FLASHINFER and TRITON_ATTN refuse such a block size, so vLLM silently falls "
            "back to FLEX_ATTENTION.",
            source=kb.src(FLEX_PY, "FlexAttentionBackend (get_supported_kernel_block_sizes from 0.21.0)")
            + "; "
            + kb.SELECT_SOURCE,
            docs="""Checks that FLEX_ATTENTION, named or reached by vLLM's fallback, is not given a `--block-size`
below 16 on vLLM releases before 0.21.0.

FlexAttentionBackend declared no kernel block sizes until vllm PR #41363 (released in 0.21.0), so it
inherited MultipleOf(1) and passed backend selection with `--block-size 8`; the crash came in the Triton
code generation of the first forward. Every other non-MLA CUDA backend takes only multiples of 16, so a
small block size also sends an unnamed config to FLEX_ATTENTION.""",
            fix_title="Drop --block-size (or use 16 or a multiple of 16)",
        ),
    ),
)

running_rules(__name__, ROWS)
