"""vLLM: what FlexAttention's kernels refuse once vLLM runs FLEX_ATTENTION, and FlashInfer's metadata builder
once vLLM runs FLASHINFER, named or picked, as rows of the backend-run family
(attn_preflight.rules.engines.vllm.runs)."""

from __future__ import annotations

from attn_preflight.rules.core.constraints import ALWAYS, All, Arch, Constraint, Env, Feature, Flag, Not, Range
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm.runs import Runs, running_rules

FLEX_PY = f"{kb.BACKENDS_DIR}/flex_attention.py"
FI_PY = f"{kb.BACKENDS_DIR}/flashinfer.py"
# VLLM_KV_CACHE_LAYOUT's block-outermost choices (envs.py:1879-1883, v1/kv_cache_layout.py is_block_outermost)
BLOCK_OUTERMOST = ("BLHNC", "BLNHC", "BHLNC")

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

FLASHINFER_ROWS = (
    Runs(
        "FLASHINFER",
        Constraint(
            id="vllm-flashinfer-unsplit-page-size",
            title="FLASHINFER in a block-outermost KV layout takes no --block-size over 64 without TRT-LLM",
            engine="vllm",
            versions="vllm>=0.33.0",
            stage="init",
            when=All((Env("VLLM_KV_CACHE_LAYOUT", BLOCK_OUTERMOST), Not(Arch((10,))))),
            requires=Range("page_size", float("-inf"), 64),
            fix=("--block-size 64",),
            required="--block-size <= 64 (FlashInfer's largest native page) in a block-outermost KV layout",
            prevents="Unexpected FlashInfer page size N without trtllm-gen GQA",
            source=kb.src(FI_PY, "FlashInferMetadataBuilder.__init__ (:1001-1005 in 0.33.0)")
            + "; vllm/v1/worker/utils.py prepare_kernel_block_sizes, select_common_block_size",
            docs="""Checks that FLASHINFER, named or picked, is not given a `--block-size` over 64 in a block-outermost
KV-cache layout (`VLLM_KV_CACHE_LAYOUT=BLHNC`, `BLNHC` or `BHLNC`) off SM10x.

FlashInfer's native kernels take pages of 16, 32 or 64 tokens; larger pages run only on TRT-LLM's GQA kernels
on SM10x (FlashInferBackend.get_supported_kernel_block_sizes declares 128-1024 only there). vLLM's model runner
normally splits a larger KV block into kernel pages (prepare_kernel_block_sizes -> select_common_block_size:
`--block-size 256` runs as 64-token pages, and vLLM starts), but not in a block-outermost layout, whose blocks
pack every layer's page together ("Block-outermost packing puts other layers' pages between the blocks, so they
are never split group-wide"): the metadata builder then gets the whole block as its page size and its assertion
stops the worker at start-up. Read in vllm 0.33.0 (absent from 0.20.0's flashinfer.py; the releases between
were not read); not run: the engine child does not simulate the KV layout. SM10x is left out (there TRT-LLM
may take the page; whether it does depends on the heads and FlashInfer's TRT-LLM support, not modelled).""",
            fix_title="Use --block-size 64 or less (or leave VLLM_KV_CACHE_LAYOUT unset)",
        ),
    ),
)

running_rules(__name__, (*ROWS, *FLASHINFER_ROWS))
