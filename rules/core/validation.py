"""make_config: a validated Config from flag values (the `check` options use SGLang's own flag names). Every
name (backend, KV dtype, feature, speculative algorithm) is checked against the engine's declarations and a
bad one raises RulesInputError, with the choices and the word for a did-you-mean.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from attn_preflight.rules.core.config import ENGINES, Config
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.models import FEATURES, ModelFeatures
from attn_preflight.rules.engines import backends as engine_backends
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.knowledge.kv_dtypes import KV_DTYPES


def kv_dtype_choices(engine: str) -> Sequence[str]:
    if engine == "sglang":
        return tuple(KV_DTYPES)
    from attn_preflight.rules.engines.vllm import capabilities as vllm_backends  # loaded for vLLM configs only

    return vllm_backends.KV_CACHE_DTYPES


def _backend(engine: str, value: Optional[str], flag: str) -> Optional[str]:
    if value is None:
        return None
    if engine == "vllm":
        from attn_preflight.rules.engines.vllm import capabilities as vllm_backends

        if value.lower() == vllm_backends.AUTO:
            return None  # vLLM: "auto" means no choice (AttentionConfig.validate_backend_before)
    name = engine_backends.canonical(engine, value)
    if name is None:
        raise RulesInputError(
            f"{flag}: unknown {engine} attention backend {value!r}", choices=engine_backends.choices(engine), word=value
        )
    return name


# Spellings other engines and papers use for SGLang's KV dtypes ("fp8" is vLLM's name for fp8_e4m3).
_KV_DTYPE_MEANT = {"fp8": "fp8_e4m3", "float8": "fp8_e4m3", "e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2", "fp4": "fp4_e2m1"}


# The integers a launch can hold: the engines set no upper bound (a plain `type=int`), so these are ours, far
# beyond any real value (the largest KV page any backend uses is 128 tokens; topk and TP are in the tens).
_INT_BOUNDS = {
    "page_size": (1, 1 << 20),
    "speculative_eagle_topk": (0, 1 << 10),
    "tp_size": (1, 1 << 16),
    "pp_size": (1, 1 << 16),
    "context_length": (1, 1 << 40),
}


# SGLang's speculative algorithms (0.5.23 python/sglang/srt/speculative/spec_info.py SpeculativeAlgorithm, and
# NEXTN from spec_registry.py _RESERVED_ALIASES); from_string upper-cases the name and raises "Unknown
# speculative algorithm name" for any other one that no plugin registered.
SGLANG_SPECULATIVE_ALGORITHMS = (
    "EAGLE",
    "EAGLE3",
    "NEXTN",
    "STANDALONE",
    "NGRAM",
    "DFLASH",
    "DSPARK",
    "UNO",
    "FROZEN_KV_MTP",
)


def make_config(
    engine: str = "sglang", model: Optional[ModelFeatures] = None, features: Iterable[str] = (), **values: Any
) -> Config:
    """A validated Config from flag values; `model` as the face read it (attn_preflight.inputs.load_model)."""
    if engine not in ENGINES:
        raise RulesInputError(f"unknown engine {engine!r}", choices=ENGINES, word=engine)
    for key, flag in (
        ("attention_backend", "--attention-backend"),
        ("prefill_attention_backend", "--prefill-attention-backend"),
        ("decode_attention_backend", "--decode-attention-backend"),
        ("draft_attention_backend", "--speculative-draft-attention-backend"),
    ):
        values[key] = _backend(engine, values.get(key), flag)
    mm = values.get("mm_attention_backend")
    if mm is not None and mm not in backend_kb.MM_ATTENTION_BACKENDS:
        raise RulesInputError(
            f"--mm-attention-backend: unknown vision attention backend {mm!r}",
            choices=backend_kb.MM_ATTENTION_BACKENDS,
            word=mm,
        )
    kv = values.get("kv_cache_dtype") or "auto"
    if kv not in kv_dtype_choices(engine):
        meant = _KV_DTYPE_MEANT.get(kv.lower())
        if meant in kv_dtype_choices(engine):  # what people type for SGLang's spelling, not the closest string
            raise RulesInputError(f"--kv-cache-dtype: unknown {engine} KV-cache dtype {kv!r} (did you mean {meant!r}?)")
        raise RulesInputError(
            f"--kv-cache-dtype: unknown {engine} KV-cache dtype {kv!r}", choices=kv_dtype_choices(engine), word=kv
        )
    values["kv_cache_dtype"] = kv
    wanted: set[str] = set()
    for feature in features:
        name = feature.strip().lower().replace("-", "_")
        if name not in FEATURES:
            raise RulesInputError(f"--feature: unknown feature {feature!r}", choices=FEATURES, word=feature)
        wanted.add(name)
    for key, (low, high) in _INT_BOUNDS.items():
        value = values.get(key)
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise RulesInputError(
                f"{flag}: expected {'a positive' if low else 'a non-negative'} integer, got {value!r}"
            )
        if value > high:
            raise RulesInputError(
                f"{flag}: {str(value)[:20]}{'…' if len(str(value)) > 20 else ''} is beyond any real launch (at most {high:,})"
            )
    algorithm = values.get("speculative_algorithm")
    if algorithm is not None and engine == "sglang" and algorithm.upper() not in SGLANG_SPECULATIVE_ALGORITHMS:
        raise RulesInputError(
            f"--speculative-algorithm: unknown sglang speculative algorithm {algorithm!r}",
            choices=SGLANG_SPECULATIVE_ALGORITHMS,
            word=algorithm,
        )
    fraction = values.get("mem_fraction")
    if fraction is not None and (
        isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1
    ):
        raise RulesInputError(f"memory fraction: expected a number in (0, 1], got {fraction!r}")
    values = {k: v for k, v in values.items() if v is not None}
    return Config(engine=engine, model=model, extra_features=frozenset(wanted), **values)
