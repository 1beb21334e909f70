"""Flag constraints and declared gates among the general rules of SGLang: HPC-Ops, cross attention on triton
and flex_attention, FlashInfer's arch, the backends that turn CUDA graphs off, multi-item scoring, LLaDA2's CFG
backend, SGLANG_FLASHATTENTION_VERSION, backend platforms and aliases, triton under DCP (rows; the logic rules
of the subject are attn_preflight.rules.checks.general)."""

from attn_preflight.rules.core.constraints import (
    ALWAYS,
    All,
    AnyOf,
    BackendArch,
    Constraint,
    Declares,
    Env,
    Feature,
    Flag,
    Not,
    Phases,
    Platform,
    Range,
    Requirement,
    Since,
    Uses,
    constraint_rules,
)
from attn_preflight.rules.engines.sglang.capabilities import CHOICES
from attn_preflight.rules.engines.sglang.reasons import declared_words

REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"
ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
FA_VERSION_ENV = "SGLANG_FLASHATTENTION_VERSION"


def refused(backend: str, feature: str) -> All:
    """The model has a feature the backend's declaration refuses."""
    return All((Feature(feature), Declares(backend, "refuses", feature)))


ROWS = (
    Constraint(
        id="general-flashattention-version-env",
        title="SGLANG_FLASHATTENTION_VERSION does nothing: the backend name picks FA3 or FA4",
        versions="sglang>=0.5.1",
        stage="startup",
        reason="Error write-ups suggest SGLANG_FLASHATTENTION_VERSION=4 to switch to FA4; no SGLang code reads it, so "
        "the launch keeps the FA version of --attention-backend and fails the same way.",
        prevents="",
        source="sglang 0.5.23 wheel: grep -r SGLANG_FLASHATTENTION_VERSION finds no match; attention_registry.py "
        "builds FlashAttentionBackend(fa_impl_ver=3) for fa3 and fa_impl_ver=4 for fa4",
        docs="""Warns when a pasted launch command sets SGLANG_FLASHATTENTION_VERSION.

SGLang chooses the FlashAttention generation only through the backend name: --attention-backend fa3 runs
sgl-kernel's FA3, fa4 runs flash_attn.cute. The variable is not read anywhere in sglang 0.5.23 (searched
the whole wheel), so relying on it leaves the backend, and its failure, unchanged.""",
        fix_title="Name the backend: --attention-backend fa4 (or fa3)",
        when=ALWAYS,
        requires=(
            # SGLang ignores the variable: the backend name it meant, fa4 for 4 and fa3 for anything else
            Requirement(Not(Env(FA_VERSION_ENV, ("4",))), ("--attention-backend fa4",)),
            Requirement(AnyOf((Not(Env(FA_VERSION_ENV)), Env(FA_VERSION_ENV, ("4",)))), ("--attention-backend fa3",)),
        ),
        severity="warn",
    ),
    Constraint(
        id="general-triton-cross-attention",
        title="triton has no cross attention (encoder-decoder models)",
        versions="sglang>=0.5.1",
        stage="init",
        backends=("triton",),
        prevents="Cross attention is not supported in the triton attention backend. Please use "
        "`--attention-backend flashinfer`.",
        source=f"{REGISTRY}, create_triton_backend",
        docs="""Checks that an encoder-decoder model (cross attention: Whisper, Mllama, ...) is not served by triton.

The triton factory asserts when the model runner builds the backend. SGLang's default for Whisper is
flashinfer for this reason.""",
        fix_title="Use --attention-backend flashinfer",
        when=ALWAYS,
        requires=Not(refused("triton", "cross_attention")),
        fix=("--attention-backend flashinfer",),
    ),
    Constraint(
        id="hpc-ops-arch",
        title="hpc_ops runs on {hpc_ops.archs} (Hopper) only",
        versions="sglang>=0.5.17",
        stage="init",
        backends=("hpc_ops",),
        needs_gpu=True,
        prevents="The hpc_ops attention backend requires an SM90 (Hopper) GPU (the HPC-Ops kernels ship sm90a only), "
        "got sm{major}{minor}.",
        source="sglang: python/sglang/srt/layers/attention/hpc_ops_backend.py, HpcOpsAttnBackend.__init__",
        docs="""Checks that `hpc_ops` runs on a GPU of {hpc_ops.archs}.

The backend's constructor raises on any other major (hpc_ops_backend.py:138-143 in sglang 0.5.23), when the
model runner builds the attention backend after the weights load: argument resolution has no arch check.""",
        fix_title="Use --attention-backend fa3 on SM90; another backend elsewhere",
        when=ALWAYS,
        requires=BackendArch("hpc_ops"),
        fix=("--attention-backend flashinfer",),
    ),
    Constraint(
        id="hpc-ops-model",
        title="hpc_ops: no MLA, no cross attention, no speculative decoding",
        versions="sglang>=0.5.17",
        stage="init",
        backends=("hpc_ops",),
        prevents="hpc_ops backend can only be used with non-MLA models.",
        source=f"{REGISTRY}, create_hpc_ops_backend",
        docs="""Checks the hpc_ops factory's refusals: MLA models ("hpc_ops backend can only be used with non-MLA
models."), cross attention ("Cross attention is not supported in the hpc_ops attention backend.") and
speculative decoding ("hpc_ops backend does not support speculative decoding for now.").

They are raised when the model runner builds the backend, after weights load.""",
        fix_title="Use --attention-backend fa3 for this config on SM90",
        when=ALWAYS,
        requires=All(
            (
                Not(All((Feature("mla"), Not(Declares("hpc_ops", "mla"))))),
                Not(refused("hpc_ops", "cross_attention")),
                Not(All((Flag("speculative_algorithm"), Declares("hpc_ops", "refuses", "speculative_decoding")))),
            )
        ),
        fix=("--attention-backend fa3",),
    ),
    Constraint(
        id="llada2-cfg-mha-model",
        title="llada2_cfg_flashinfer (LLaDA2 CFG attention) does not serve MLA models",
        versions="sglang>=0.5.22",
        stage="init",
        backends=("llada2_cfg_flashinfer",),
        prevents="LLaDA2 CFG attention does not use an MLA backend",
        source=f"{REGISTRY}, create_llada2_cfg_flashinfer_backend",
        docs="""Checks that `llada2_cfg_flashinfer`, the classifier-free-guidance attention of the LLaDA2 diffusion
LLMs, serves an MHA model (no config.json `kv_lora_rank`).

Its factory refuses an MLA model when the model runner builds the attention backend, after the weights load.""",
        fix_title="Use an MLA backend for an MLA model: --attention-backend flashinfer (FlashInfer MLA)",
        when=ALWAYS,
        requires=Not(Feature("mla")),
        fix=("--attention-backend flashinfer",),
    ),
    Constraint(
        id="hpc-ops-sliding-window",
        title="hpc_ops has no sliding-window attention",
        versions="sglang>=0.5.17",
        stage="runtime",
        backends=("hpc_ops",),
        prevents="The hpc_ops attention backend does not support sliding window.",
        source="sglang: python/sglang/srt/layers/attention/hpc_ops_backend.py, HpcOpsAttnBackend._check_layer_supported",
        docs="""Checks that a model with sliding-window layers (Gemma 2/3, GPT-OSS, Mistral with a window, ...) is not
served by hpc_ops.

The backend refuses any layer with a sliding window when it first runs it (hpc_ops_backend.py:345-348 in
sglang 0.5.23), at the first forward or CUDA-graph capture, after the weights have loaded.""",
        fix_title="Use --attention-backend fa3",
        when=ALWAYS,
        requires=Not(AnyOf((Feature("sliding_window"), Feature("chunked_local")))),
        fix=("--attention-backend fa3",),
    ),
    Constraint(
        id="flashinfer-arch",
        title="FlashInfer needs {flashinfer.min_cc}",
        versions="sglang>=0.5.1",
        stage="runtime",
        backends=("flashinfer",),
        needs_gpu=True,
        reason="FlashInfer ships and JIT-compiles kernels for SM75 and newer only; on Volta the first kernel launch "
        "fails (no kernel image for the device).",
        prevents="",
        source="flashinfer-ai/flashinfer: README.md 'GPU Support' (SM 7.5, 8.0, 8.6, 8.9, 9.0, 10.0, 10.3, 11.0, 12.0, "
        "12.1); flashinfer/compilation_context.py (arch list)",
        docs="""Checks that `flashinfer` (any phase) runs on a GPU of {flashinfer.min_cc}.

FlashInfer lists Turing (SM75) as its oldest target; V100 (SM70) has no kernels. SGLang does not check
this before loading the model.""",
        fix_title="Use --attention-backend triton or torch_native on pre-Turing GPUs",
        when=ALWAYS,
        requires=BackendArch("flashinfer"),
        fix=("--attention-backend triton",),
    ),
    Constraint(
        id="general-cuda-graph-disabled",
        title="torch_native and flex_attention silently turn CUDA graphs off",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="Cuda graph is disabled because of using torch native attention backend",
        source=f"{ATTENTION_HOOK}, handle_attention_backend_compatibility",
        docs="""Warns when `--attention-backend torch_native` or `flex_attention` will run: SGLang logs a warning and
disables CUDA graphs for decode and prefill, so every decode step launches its kernels eagerly.

Neither backend can be captured in a CUDA graph (torch_native is PyTorch SDPA per request; FlexAttention
compiles its block masks per batch). The server starts, but decode is several times slower than on a
backend that keeps CUDA graphs (triton runs on every GPU). Passing `--disable-cuda-graph` yourself says
the same thing and the rule then passes.""",
        fix_title="Use --attention-backend triton (keeps CUDA graphs), or pass --disable-cuda-graph knowingly",
        # attention_hook.py handle_attention_backend_compatibility: these backends turn CUDA graphs off
        when=Flag("attention_backend", ("torch_native", "flex_attention")),
        requires=Flag("disable_cuda_graph"),
        fix=("--attention-backend triton", "--disable-cuda-graph"),
        severity="warn",
    ),
    Constraint(
        id="general-flex-cross-attention",
        title="flex_attention has no cross attention (encoder-decoder models)",
        versions="sglang>=0.5.3",
        stage="runtime",
        backends=("flex_attention",),
        prevents="TorchFlexAttnBackend does not support non-causal attention for now.",
        source="sglang: python/sglang/srt/layers/attention/torch_flex_backend.py, TorchFlexAttnBackend.forward_extend",
        docs="""Checks that an encoder-decoder model (cross attention: Whisper, Mllama, ...) does not prefill on
flex_attention.

SGLang's FlexAttention backend builds causal block masks only; its forward_extend raises
NotImplementedError for a cross-attention layer (and for an encoder-only layer) at the first prefill. The
server starts, loads the weights, then the first request (or warm-up) fails.""",
        fix_title="Use --attention-backend flashinfer",
        when=Flag("prefill_backend", ("flex_attention",)),
        requires=Not(refused("flex_attention", "cross_attention")),
        fix=("--attention-backend flashinfer",),
    ),
    Constraint(
        id="general-mis-flashinfer",
        title="Multi-item scoring (--enable-mis) needs flashinfer for prefill and decode",
        versions="sglang>=0.5.11",
        stage="startup",
        prevents="Multi-item scoring requires flashinfer attention backend for custom attention mask support. Please "
        "set --attention-backend flashinfer when using --enable-mis. Current backends: prefill={prefill_backend}, "
        "decode={decode_backend}",
        source=f"{ATTENTION_HOOK}, handle_multi_item_scoring",
        docs="""Checks that `--enable-mis` (multi-item scoring) runs flashinfer for both prefill and decode, after
SGLang's own default backend is applied.

Multi-item scoring packs several candidate items after one query and masks them from each other with a
custom attention mask, which only FlashInfer takes. SGLang asserts the backends at start-up; it also turns
off CUDA graphs, the radix cache and chunked prefill for it (logged, not refused).""",
        fix_title="Use --attention-backend flashinfer",
        when=Flag("enable_mis"),
        requires=Phases(("flashinfer",)),
        fix=("--attention-backend flashinfer",),
    ),
    Constraint(
        id="general-backend-platform",
        title="The attention backend is built for NVIDIA CUDA",
        versions="sglang>=0.5.1",
        stage="load",
        reason="A ROCm, NPU, XPU or CPU backend on an NVIDIA GPU fails at import or kernel launch, after weights load.",
        source=CHOICES,
        docs="""Checks that each chosen attention backend is one SGLang builds for NVIDIA CUDA GPUs.

ATTENTION_BACKEND_CHOICES mixes platforms: aiter and wave are AMD ROCm, ascend is Huawei NPU, intel_xpu
is Intel GPU, intel_amx is CPU. On an NVIDIA GPU they fail when their kernels are imported or launched.""",
        fix_title="Pick a CUDA backend (fa3, fa4, flashinfer, triton, trtllm_mha, ...)",
        prevents="",
        when=AnyOf((Flag("prefill_backend"), Flag("decode_backend"))),
        requires=Platform(("cuda", "any")),
        fix=("--attention-backend triton",),
    ),
    Constraint(
        id="general-backend-alias",
        title="The attention backend is not a deprecated alias",
        versions="sglang>=0.5.12",
        stage="parse",
        reason="Deprecated aliases still start, but name a backend under another name and will be removed.",
        source=f"{CHOICES} (comments: nsa -> dsa, compressed -> dsv4, tokenspeed_mla -> cutedsl_mla)",
        docs="""Warns when a backend is given by a deprecated alias: nsa (dsa, from sglang 0.5.13), compressed (dsv4),
tokenspeed_mla (cutedsl_mla, from 0.5.23).

ATTENTION_BACKEND_CHOICES keeps them for old launch lines; the launch line should name the backend that
actually runs.""",
        fix_title="Use the backend's current name",
        prevents="",
        when=AnyOf((Flag("prefill_backend"), Flag("decode_backend"))),
        # each alias in use, by the name it stands for in the target's release (its declaration's alias_of)
        requires=tuple(
            Requirement(Not(All((Uses(alias), Declares(alias, "alias_of")))), (f"--attention-backend {current}",))
            for alias, current in (("compressed", "dsv4"), ("nsa", "dsa"), ("tokenspeed_mla", "cutedsl_mla"))
        ),
        severity="warn",
    ),
    Constraint(
        id="general-triton-dcp",
        title="triton under decode context parallelism has no sinks, sliding window or score_mod",
        versions="sglang>=0.5.15",
        backends=("triton",),
        stage="runtime",
        prevents="DCP Triton extend does not support sinks",
        source="sglang: python/sglang/srt/layers/attention/triton_backend.py, TritonAttnBackend.forward_extend / "
        "_forward_extend_dcp / forward_decode",
        docs="""Checks that triton with decode context parallelism (`--dcp-size` > 1) serves a model without attention
sinks, sliding-window layers or a score_mod.

Triton's DCP path splits each sequence's KV across ranks and merges partial results; its extend kernel
has no sink, window or score-mod support under DCP, and decode none for score_mod. Each is a
NotImplementedError at the first forward, after the weights load. (A custom attention mask, as
multi-item scoring uses, is refused too.)""",
        fix_title="Use --dcp-size 1 for this model on triton, or another backend",
        when=Not(Range("dcp_size", 0, 1)),
        requires=Not(
            AnyOf((Feature("sinks"), Feature("sliding_window"), All((Feature("score_mod"), Since("0.5.16")))))
        ),
        fix=("--dcp-size 1",),
    ),
)

constraint_rules(__name__, ROWS, worded=lambda row: declared_words(row.title, row.docs, row.fix_title))
