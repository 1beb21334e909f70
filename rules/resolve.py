"""The backend an engine picks when the config names none, so rules judge what would actually run.

SGLang (0.5.23): python/sglang/srt/arg_groups/overrides.py `_deterministic_attention_backend` (runs first when
deterministic inference is on), model overrides in arg_groups/model_overrides/*.py, then
arg_groups/model_override_base.py `get_default_attn_backend`. Platform probes test the compute-capability
major only (utils/common.py `_check_cuda_device_version`), so SM103 selects like SM100 and SM121 like SM120.
"""
from __future__ import annotations

from typing import Optional

from rules.config import Config
from rules.target import Target

SOURCE = "sglang: python/sglang/srt/arg_groups/model_override_base.py, get_default_attn_backend"
DETERMINISTIC_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _deterministic_attention_backend"


def _topk_one(config: Config) -> bool:
    return config.speculative_algorithm is None or (config.speculative_eagle_topk or 1) == 1


def _model_override(config: Config, major: int) -> Optional[str]:
    """Per-model defaults applied before the generic choice (arg_groups/model_overrides/*.py)."""
    model = config.model
    if model is None:
        return None
    arch = model.architecture or ""
    if arch in ("DeepseekV3ForCausalLM",) and major == 10:
        return "trtllm_mla"  # model_overrides/deepseek_v2.py: DeepSeek V3/R1 on SM100
    if arch == "GptOssForCausalLM":
        return {10: "trtllm_mha", 9: "fa3"}.get(major, "triton")  # model_overrides/gpt_oss.py
    if arch.startswith("Llama4"):
        return {10: "trtllm_mha", 9: "fa3"}.get(major, "triton")  # model_overrides/llama4.py
    return None


def default_backend(config: Config, target: Target) -> tuple[Optional[str], str]:
    """(backend, why) for a config without a backend on this target; (None, why) when it cannot be known."""
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
    override = _model_override(config, major)
    if override:
        return override, f"SGLang's default for {model.architecture} on SM{major}x (arg_groups/model_overrides)"
    mla = "mla" in config.features
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


def with_default_backend(config: Config, target: Target) -> Config:
    if config.backend_given:
        return config
    backend, why = default_backend(config, target)
    if backend is None:
        return config
    return config.with_backend(backend, auto_reason=why)
