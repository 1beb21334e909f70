"""vLLM before 0.13.0: what releases without --attention-backend (0.10.0-0.12.x) do with a named backend or pick
by themselves, where the later validator would have refused or another backend runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from packaging.version import Version

from attn_preflight.rules.checks.common import gpu
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import legacy as kb_legacy
from attn_preflight.rules.engines.vllm import select as vllm
from attn_preflight.rules.knowledge import memory


@rule(
    id="vllm-cutlass-mla-forced",
    title="vLLM 0.11-0.12 forces CUTLASS_MLA for an MLA model on SM 10.0",
    engine="vllm",
    versions="vllm>=0.11.1rc7,<0.13.0",
    stage="startup",
    prevents="Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: "
    "['kv_cache_dtype not supported', 'sparse not supported']",
    source="vllm-project/vllm@v0.12.0: vllm/platforms/cuda.py, CudaPlatformBase.check_and_update_config (:182-190) "
    "and get_attn_backend_cls (:342-362); fixed for sparse models by vllm PR #30195",
    references=("https://github.com/vllm-project/vllm/pull/30195",),
    docs="""Checks, on vLLM 0.11.1-0.12.x with no backend named, that CUTLASS_MLA can serve an MLA model on an SM
10.0 GPU (B200, GB200), since vLLM picks it without looking further.

check_and_update_config sets VLLM_ATTENTION_BACKEND=CUTLASS_MLA for every MLA model on SM 10.0 and forces
the block size to 128; the selector then validates it as if the user had named it. CUTLASS_MLA is dense:
DeepSeek-V3.2's sparse attention fails with "Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid
for this configuration. Reason: [... 'sparse not supported']" instead of falling back to FLASHMLA_SPARSE
(vllm PR #30195, in 0.13.0).""",
    fix_title="Name the backend vLLM's priority list would pick (VLLM_ATTENTION_BACKEND=FLASHMLA_SPARSE for "
    "DeepSeek-V3.2), or upgrade to vLLM 0.13",
)
def vllm_cutlass_mla_forced(cfg, target):
    if cfg.attention_backend is not None:
        return skipped("a backend is named")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    if not vllm.uses_mla(cfg):
        return skipped("vLLM does not run this model with MLA")
    if target.cc != (10, 0):
        return skipped(f"vLLM forces CUTLASS_MLA on SM 10.0 only, not on {gpu(target)}")
    release = vllm.release_of(target)
    q = replace(vllm.query(cfg, target), block_size=None)  # validated without the block size (cuda.py:349 in 0.12.0)
    backend = kb.backend_at("CUTLASS_MLA", release)
    assert backend is not None, "CUTLASS_MLA is in every release of this range"
    reasons = kb.validate(backend, q, kb.release_for(release))
    required = "an MLA model CUTLASS_MLA serves, or a backend named"
    if not reasons:
        return passed(f"CUTLASS_MLA (forced on {gpu(target)})", required)
    return failed(
        f"CUTLASS_MLA, which vllm {release} forces for MLA on {gpu(target)}: {', '.join(reasons)}",
        required,
        vllm.instead(q, target, "CUTLASS_MLA"),
        reason=f"Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: "
        f"{reasons}",
    )


@rule(
    id="vllm-sinks-unvalidated",
    title="vLLM 0.10-0.11.0: the named backend takes the model's attention sinks",
    engine="vllm",
    versions="vllm>=0.10.1,<0.11.1rc7",
    stage="init",
    prevents="AssertionError: Sinks are only supported in FlashAttention 3",
    source="vllm-project/vllm@v0.11.0: vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl.__init__ "
    "(:415-417); vllm/v1/attention/backends/flashinfer.py, FlashInferMetadataBuilder.__init__ (:321-325)",
    references=("https://github.com/vllm-project/vllm/issues/22331",),
    docs="""Checks, on vLLM 0.10.1-0.11.0, that a backend named for a model with learnable attention sinks
(gpt-oss) serves sinks on this GPU: FLASH_ATTN only where FlashAttention 3 runs (SM 9.x), FLASHINFER only
through TRT-LLM on SM 10.0 (from 0.10.2), TRITON_ATTN everywhere.

These releases validate no named backend at start-up; the layer's constructor fails instead ("Sinks are
only supported in FlashAttention 3", vllm#22331 on an RTX 4090), before the weights load. With no backend
named they pick TRITON_ATTN for a sink model off SM 9.0 by themselves. From 0.11.1 the same limits are
validate_configuration's "sink setting not supported" (rule vllm-sinks).""",
    fix_title="Name TRITON_ATTN (VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1 in 0.10.x, TRITON_ATTN in 0.11.0), or drop "
    "VLLM_ATTENTION_BACKEND",
)
def vllm_sinks_unvalidated(cfg, target):
    if cfg.attention_backend is None:
        return skipped("no backend named: these releases send a sink model to TRITON_ATTN off SM 9.0")
    if "sinks" not in cfg.features:
        return skipped("the model has no attention sinks")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    release = vllm.release_of(target)
    name = cfg.attention_backend
    # TRITON_ATTN_VLLM_V1 (0.10.x): TRITON_ATTN; FLASH_ATTN_VLLM_V1 / FLASHINFER_VLLM_V1 are no names of the V1 chain,
    # so attn_preflight.rules.engines.vllm.resolve has already replaced them by the default that runs (vllm-named-backend-runs)
    backend = name.removesuffix("_VLLM_V1")
    if backend == "FLASH_ATTN":
        takes, required = target.cc[0] == 9, "FlashAttention 3 (SM 9.x)"
    elif backend == "FLASHINFER" and Version(release) >= Version("0.10.2"):
        takes, required = target.cc == (10, 0), "TRT-LLM attention (SM 10.0)"
    elif backend == "TRITON_ATTN":
        takes, required = True, "a backend with sinks"
    else:
        return skipped(f"the sink support of {name} in vllm {release} is not read")
    found = f"a model with attention sinks on {name} ({gpu(target)})"
    if takes:
        return passed(found, required)
    triton = kb_legacy.spelling("TRITON_ATTN", release)  # TRITON_ATTN_VLLM_V1 in 0.10.x, refused by 0.11.0
    return failed(found, required, [f"{kb.ENV_BACKEND}={triton}", f"unset {kb.ENV_BACKEND}"])


@rule(
    id="vllm-named-backend-runs",
    title="vLLM 0.10-0.11.0 runs the backend VLLM_ATTENTION_BACKEND names",
    engine="vllm",
    versions="vllm>=0.10.0,<0.11.1rc7",
    needs_model=True,
    stage="startup",
    prevents=kb_legacy.MLA_KWARGS.format(impl="FlashAttentionImpl")
    + "; "
    + kb_legacy.V0_FALLBACK.format(name="XFORMERS")
    + "; "
    + kb_legacy.FA_FP8_KV_REFUSED,
    source="vllm-project/vllm@v0.10.2: vllm/platforms/cuda.py, CudaPlatformBase.get_attn_backend_cls (:226-403); "
    "vllm/engine/arg_utils.py, EngineArgs._is_v1_supported_oracle (:1502-1525) and _raise_or_fallback (:1792-1800)",
    references=("https://github.com/vllm-project/vllm/pull/13092",),
    docs="""Checks, on vLLM 0.10.0-0.11.0, what the backend named by VLLM_ATTENTION_BACKEND really becomes for
the model: these releases validate no named backend.

get_attn_backend_cls picks from two if/elif chains, one for MLA models (DeepSeek, Kimi) and one for the rest.
A name the chain does not handle falls through to the default without a word (FLASHMLA for Llama runs
FLASH_ATTN; in 0.10.0-0.10.1 any name but CUTLASS MLA runs TRITON_MLA for an MLA model below block size 64):
a warning naming what runs. An MLA model whose name falls through the MLA chain gets a non-MLA backend, whose
Impl refuses the MLA layer's arguments ("FlashAttentionImpl.__init__() got an unexpected keyword argument
'q_lora_rank'"). In 0.10.x a name outside the V1 engine's list (XFORMERS, ROCM_FLASH, ...) falls back to the V0
engine with a warning, or fails with VLLM_USE_V1=1; 0.11.0 has no V0 engine and stops. A name the release
does not have at all is rule vllm-backend-name's.""",
    fix_title="Unset VLLM_ATTENTION_BACKEND, or name the backend that release dispatches for the model",
)
def vllm_named_backend_runs(cfg, target):
    asked = cfg.rewrites.get("attention_backend", cfg.attention_backend)
    if asked is None:
        return skipped("no backend named")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    release = vllm.release_of(target)
    name = cfg.env.get(kb.ENV_BACKEND, asked)  # as typed: these releases compare names case-sensitively
    if kb_legacy.env_refusal(name, release):
        return skipped(f"{name} is not a backend of vllm {release} (rule vllm-backend-name)")
    q, use_v1 = vllm.query(cfg, target), cfg.env.get(kb_legacy.ENV_USE_V1)
    outcome = kb_legacy.named(name, q, release, use_v1)
    kind = "MLA" if q.use_mla else "not MLA"
    found = f"{kb.ENV_BACKEND}={name} for this model ({kind}) on {gpu(target)}"
    # VLLM_USE_V1=0 asks for the V0 engine: undoing that is the fix, not dropping the name
    unset = f"unset {kb_legacy.ENV_USE_V1 if kb_legacy.forced_v1(use_v1) is False else kb.ENV_BACKEND}"
    if outcome.error:
        when = "when the attention layers are built" if outcome.stage == "init" else "at start-up"
        required = f"a backend vllm {release} runs for the model"
        return failed(f"{found}: vLLM stops {when}", required, [unset], reason=outcome.error)
    if outcome.runs is None:
        return unknown(f"{found}: {outcome.note}")
    named_as = kb_legacy.spelling(outcome.runs, release)
    fix = [f"{kb.ENV_BACKEND}={named_as}"] if named_as else []
    if outcome.v0:
        return warned(
            f"{kb.ENV_BACKEND}={name}: vLLM {release} "
            + ("runs it" if outcome.as_named else f"ignores it and runs {outcome.runs}")
            + " on its V0 engine",
            "a backend the V1 engine takes",
            [unset],
            reason=outcome.fallback,
        )
    if not outcome.as_named:
        return warned(
            f"vLLM {release} ignores {kb.ENV_BACKEND}={name} for this model ({kind}) and runs {outcome.runs}",
            f"a name vLLM {release} dispatches for {'MLA' if q.use_mla else 'non-MLA'} models",
            [*fix, unset],
        )
    return passed(f"{found}: vLLM {release} runs {outcome.runs}", "a name the selection dispatches")


# TRT-LLM-gen's FMHA kernels take a KV page of at most 128 tokens: TllmGenFmhaKernel.hashID checks
# "Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128)" (NVIDIA/TensorRT-LLM fmhaKernels.h, the kernels
# FlashInfer's trtllm-gen decode launches).
TRTLLM_MAX_PAGE_TOKENS = 128
# vllm 0.10.2 utils/flashinfer.py supports_trtllm_attention (:160-176): set, the variable decides; "0" keeps
# FlashInfer's own kernels, which take any page size.
TRTLLM_ENV = "VLLM_USE_TRTLLM_ATTENTION"


def _gated_deltanet_attention_block_size(cfg: Config) -> Optional[int]:
    """The attention block size vLLM 0.10.2-0.11.0 sets for Qwen3-Next, so that one attention page holds a Gated
    DeltaNet state: 16 x ceil(state bytes / (16 x one token's K and V bytes)) (HybridAttentionMambaModelConfig,
    model_executor/models/config.py:358-389 in 0.10.2; the state shapes are Qwen3NextForCausalLM's
    get_mamba_state_shape_from_config, qwen3_next.py:1184-1200 -> layers/mamba/mamba_utils.py:177-202, both
    in the model dtype, mamba_utils.py:74-80)."""
    shape = cfg.model.shape if cfg.model else None
    if shape is None or not shape.linear_layers or not shape.linear_key_heads or not shape.linear_conv_kernel:
        return None
    # the cache dtype's element: the model's for "auto", one byte for an FP8 cache (STR_DTYPE_TO_TORCH_DTYPE)
    kv = cfg.kv_cache_dtype
    element = (
        shape.dtype_bytes if kv == "auto" else 2 if kv in ("float16", "bfloat16") else 1 if kv.startswith("fp8") else 0
    )
    if not element:
        return None
    tp = cfg.tp_size
    token = 2 * memory.kv_heads_per_rank(shape, tp) * shape.head_dim * element
    conv_dim = (
        2 * shape.linear_key_heads * shape.linear_key_head_dim + shape.linear_value_heads * shape.linear_value_head_dim
    )
    conv = conv_dim // tp * (shape.linear_conv_kernel - 1)
    temporal = shape.linear_value_heads // tp * shape.linear_key_head_dim * shape.linear_value_head_dim
    state = (conv + temporal) * shape.dtype_bytes
    return 16 * -(-state // (16 * token))


@rule(
    id="vllm-hybrid-flashinfer-page",
    title="vLLM 0.10.2-0.11.0: FlashInfer's TRT-LLM decode on SM 10.0 takes Qwen3-Next's attention pages",
    engine="vllm",
    versions="vllm>=0.10.2,<0.11.1rc7",
    needs_model=True,
    stage="runtime",
    prevents="RuntimeError: Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128), got headDimPerCtaV=256, "
    "headDimQk=256, headDimV=256, numTokensPerPage=544",
    source="vllm-project/vllm@v0.10.2: vllm/model_executor/models/config.py, "
    "HybridAttentionMambaModelConfig.verify_and_update_config (:327-414); vllm/utils/flashinfer.py, "
    "supports_trtllm_attention / use_trtllm_attention; the trtllm-gen FMHA page limit (NVIDIA/TensorRT-LLM "
    "fmhaKernels.h, TllmGenFmhaKernel.hashID)",
    references=("https://github.com/vllm-project/vllm/issues/25811",),
    docs="""Checks, on vLLM 0.10.2-0.11.0, that FLASHINFER on an SM 10.0 GPU (B200, GB200) is not given a
Qwen3-Next model, whose attention block size vLLM raises past what FlashInfer's TRT-LLM decode kernels take.

vLLM sizes a hybrid model's attention block so that one attention page holds a Gated DeltaNet state; for
Qwen3-Next-80B that is 544 tokens at TP 1 or 2 (272 at TP 4). On SM 10.0 FlashInfer decodes through TRT-LLM-gen,
whose kernels take at most 128 tokens per page, so the first decode fails with "Expect (32 <= headDim <= 2048)
&& (numTokensPerPage <= 128)" (vllm#25811); FLASHINFER is the default there (vLLM's own comment says FA does not
serve mamba layers yet, models/config.py:377-380). VLLM_USE_TRTLLM_ATTENTION=0 keeps FlashInfer's own kernels;
vLLM 0.11.1 splits the block into kernel blocks of at most 64 tokens.""",
    fix_title="Set VLLM_USE_TRTLLM_ATTENTION=0 (FlashInfer's own decode kernels), or upgrade to vLLM 0.11.1",
)
def vllm_hybrid_flashinfer_page(cfg, target):
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    if cfg.attention_backend is None:
        if vllm.selected(vllm.query(cfg, target), target).chosen != "FLASHINFER":
            return skipped("vLLM does not select FLASHINFER for this config")
    elif cfg.attention_backend != "FLASHINFER":
        return skipped("applies to FLASHINFER")
    if target.cc != (10, 0):
        return skipped(f"FlashInfer decodes through TRT-LLM on SM 10.0 only, not on {gpu(target)}")
    if cfg.env.get(TRTLLM_ENV) == "0":
        return passed(
            f"{TRTLLM_ENV}=0: FlashInfer's own decode kernels", "no TRT-LLM decode, or pages of <= 128 tokens"
        )
    if cfg.model.model_type != "qwen3_next":
        return skipped("applies to Qwen3-Next (the hybrid model whose state shapes are read)")
    block = _gated_deltanet_attention_block_size(cfg)
    if block is None:
        return unknown(
            f"the model's Gated DeltaNet dimensions or the KV dtype ({cfg.kv_cache_dtype}) could not be read"
        )
    found = f"attention blocks of {block} tokens (Qwen3-Next at TP {cfg.tp_size}) on FLASHINFER ({gpu(target)})"
    required = f"at most {TRTLLM_MAX_PAGE_TOKENS} tokens per page (TRT-LLM decode)"
    if block <= TRTLLM_MAX_PAGE_TOKENS:
        return passed(found, required)
    return failed(found, required, [f"{TRTLLM_ENV}=0"])
