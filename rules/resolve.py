"""What the engine will actually run: its default backend, its silent rewrites, its effective page size.

Rules judge the resolved config, so a config without `--attention-backend` is judged on the backend SGLang
would pick, and a rewrite SGLang makes (fa3 + fp8_e5m2 -> triton) is judged as rewritten and reported as a
warning. SGLang 0.5.23 sources: python/sglang/srt/arg_groups/overrides.py (`_deterministic_attention_backend`,
`_attention_backend_default`, `_attention_backend_fa3_fp8_fallback`, `_mla_backend_page_constraints`,
`_fa4_page_constraint`, `_page_size_default`), arg_groups/model_overrides/*.py, and
arg_groups/model_override_base.py `get_default_attn_backend`. Platform probes test the compute-capability
major only (utils/common.py `_check_cuda_device_version`): SM103 resolves like SM100, SM121 like SM120.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from rules.config import Config
from rules.target import Target

SOURCE = "sglang: python/sglang/srt/arg_groups/model_override_base.py, get_default_attn_backend"
DETERMINISTIC_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _deterministic_attention_backend"
DSA_ARCHITECTURES = frozenset({"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})


def _topk_one(config: Config) -> bool:
    return config.speculative_algorithm is None or (config.speculative_eagle_topk or 1) == 1


def _model_default(config: Config, major: int) -> Optional[str]:
    """Per-model defaults applied before the generic choice (arg_groups/model_overrides/*.py)."""
    arch = config.model.architecture if config.model else None
    if not arch:
        return None
    if arch in DSA_ARCHITECTURES:
        return "dsa"  # deepseek_v2.py: DeepSeek V3.2 / GLM-5
    if arch == "DeepseekV3ForCausalLM" and major == 10:
        return "trtllm_mla"  # deepseek_v2.py: DeepSeek V3/R1/V3.1 on SM100
    if arch == "GptOssForCausalLM" or arch.startswith("Llama4"):
        return {10: "trtllm_mha", 9: "fa3"}.get(major, "triton")  # gpt_oss.py, llama4.py
    if arch.startswith("Gemma4"):
        return "trtllm_mha" if major == 10 else "triton"  # gemma4.py
    if arch.startswith("Inkling"):
        return "fa4" if major in (9, 10) else "triton"  # inkling.py: attn.py only has fa4 and triton paths
    return None


def default_backend(config: Config, target: Target) -> tuple[Optional[str], str]:
    """(backend, why) for a config that names no backend; (None, why) when it cannot be known."""
    if config.engine != "sglang":
        return None, f"{config.engine} picks its backend at start-up; name one to judge it"
    if target.cc is None:
        return None, "no GPU to select a default backend for"
    major = target.major
    model = config.model
    if config.deterministic:
        if major in (10, 12):
            backend = "triton" if model is not None and model.deepseek_family else "flashinfer"
        else:
            backend = "fa3"
        return backend, f"SGLang's deterministic-inference fallback on SM{major}x ({DETERMINISTIC_SOURCE})"
    override = _model_default(config, major)
    if override:
        return override, f"SGLang's default for {model.architecture} on SM{major}x (arg_groups/model_overrides)"
    mla = config.mla
    if model is not None and model.architecture == "WhisperForConditionalGeneration":
        backend = "flashinfer"
    elif not mla:
        if major == 9 and _topk_one(config):
            backend = "fa3"
        elif major == 10 and _topk_one(config) and (config.speculative_algorithm is None
                                                    or config.speculative_eagle_topk is not None):
            backend = "fa4" if "asymmetric_kv" in config.features else "trtllm_mha"
        else:
            backend = "triton" if "sinks" in config.features else "flashinfer"
    else:
        backend = {9: "fa3", 10: "flashinfer"}.get(major, "triton")
    return backend, f"SGLang's default for {'MLA' if mla else 'MHA'} models on SM{major}x ({SOURCE})"


def resolve(config: Config, target: Target) -> Config:
    """The config as the engine will run it: default backend filled in, silent rewrites applied."""
    if config.engine != "sglang":
        return config
    if not config.backend_given:
        backend, why = default_backend(config, target)
        if backend is not None:
            config = config.with_backend(backend, auto_reason=why)
    elif (config.prefill_attention_backend and config.prefill_attention_backend == config.decode_attention_backend
          and config.attention_backend != config.prefill_attention_backend):
        # _attention_backend_default: equal phase backends override --attention-backend.
        config = replace(config, attention_backend=config.prefill_attention_backend)
    if config.attention_backend == "fa3" and config.kv_cache_dtype == "fp8_e5m2":
        # _attention_backend_fa3_fp8_fallback: logged, then triton runs instead.
        config = replace(config, attention_backend="triton", prefill_attention_backend=None,
                         decode_attention_backend=None, rewrites={**config.rewrites, "attention_backend": "fa3"})
    return config


def effective_page_size(config: Config, target: Target) -> int:
    """The KV page size SGLang settles on, applying its snaps in pipeline order (see module docstring)."""
    page = config.page_size
    backends = config.backends | ({config.draft_attention_backend} if config.draft_attention_backend else set())
    if config.attention_backend == "flashmla" or config.decode_backend == "flashmla":
        page = 64
    if (config.attention_backend == "trtllm_mla" or config.decode_backend == "trtllm_mla") and page not in (32, 64):
        page = 64
    if "cutedsl_mla" in backends and page not in (32, 64):
        page = 64
    if "trtllm_mha" in backends and page not in (16, 32, 64, 128):
        page = 64
    if "hpc_ops" in backends and page != 64:
        page = 64
    if "fa4" in config.backends and not config.mla and target.major == 10 and (config.speculative_eagle_topk or 0) <= 1:
        page = 128
    return 1 if page is None else page
