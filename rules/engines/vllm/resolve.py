"""What vLLM itself resolves before any rule judges the config: --kv-cache-dtype auto as the checkpoint's KV
quantization, and, on 0.10.0-0.11.0, the backend that runs in place of the one VLLM_ATTENTION_BACKEND names.
Engine modelling (attn_preflight.rules.engines.sglang.resolve.resolve dispatches a vLLM config here)."""

from __future__ import annotations

from dataclasses import replace

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import legacy as kb_legacy
from attn_preflight.rules.engines.vllm import select as vllm
from attn_preflight.rules.knowledge import NEWEST_KNOWN, checkpoint_kv


def resolve(config: Config, target: Target) -> Config:
    """The vLLM config as the engine will run it (each rewrite recorded in Config.rewrites)."""
    return _legacy_backend(_checkpoint_kv(_env_backend_ignored(config, target), target), target)


def _env_backend_ignored(config: Config, target: Target) -> Config:
    """vLLM >= 0.15.0 ignores VLLM_ATTENTION_BACKEND (PR #32812; rule vllm-env-backend warns): a backend named only
    by the variable is not the one that runs, so it is judged as vLLM's own choice (the backend unset), the name
    recorded in Config.rewrites. Judging the name instead failed a launch that starts."""
    named = config.env.get(kb.ENV_BACKEND)
    if not named or config.attention_backend != named or "--attention-backend" in config.options:
        return config
    try:
        release = Version(target.versions.get("vllm") or NEWEST_KNOWN["vllm"])
        if release < Version(kb.ENV_REMOVED_IN):
            return config
    except InvalidVersion:
        return config
    return replace(config, attention_backend=None, rewrites={**config.rewrites, "attention_backend": named})


def _legacy_backend(config: Config, target: Target) -> Config:
    """vLLM 0.10.0-0.11.0 run another backend than VLLM_ATTENTION_BACKEND names where their selection chain does not
    take the name for the model (rules/engines/vllm/legacy.py): judged as what runs, recorded in Config.rewrites
    as attention_backend -> the name asked for (rule vllm-named-backend-runs warns)."""
    release = target.versions.get("vllm")
    if config.attention_backend is None or target.cc is None or release is None:
        return config
    try:
        if Version(release) >= Version(kb.VALIDATE_SINCE):
            return config
    except InvalidVersion:
        return config
    name = config.env.get(kb.ENV_BACKEND, config.attention_backend)
    outcome = kb_legacy.named(name, vllm.query(config, target), release, config.env.get(kb_legacy.ENV_USE_V1))
    if outcome.runs is None or outcome.as_named:
        return config
    return replace(
        config,
        attention_backend=outcome.runs,
        rewrites={**config.rewrites, "attention_backend": config.attention_backend},
    )


def _checkpoint_kv(config: Config, target: Target) -> Config:
    """vLLM's --kv-cache-dtype auto as the checkpoint's KV quantization resolves it (rules/knowledge/checkpoint_kv.py),
    recorded in Config.rewrites as kv_cache_dtype -> "auto"."""
    if config.kv_cache_dtype != "auto" or config.model is None:
        return config
    try:
        release = Version(target.versions.get("vllm") or NEWEST_KNOWN["vllm"])
    except InvalidVersion:
        release = Version(NEWEST_KNOWN["vllm"])
    resolved = checkpoint_kv.vllm_auto_kv_dtype(config.model.kv_quant, release)
    if resolved is None:
        return config
    return replace(config, kv_cache_dtype=resolved, rewrites={**config.rewrites, "kv_cache_dtype": "auto"})
