"""Config: the normalised serving config the rules judge (one record, frozen). It is made by
attn_preflight.rules.core.validation.make_config (from flag values, every name validated) or from a pasted
command read by attn_preflight.rules.core.launch_line.parse_command; a fix's flags are applied to it by
attn_preflight.rules.core.flag_tables.apply_flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping, Optional

from attn_preflight.rules.core.models import ModelFeatures

ENGINES = ("sglang", "vllm")


# Environment variables that bear on attention; others in a pasted command are ignored.
ENV_PREFIXES = (
    "SGLANG_",
    "VLLM_",
    "FLASHINFER_",
    "FLASH_ATTENTION",
    "CUTE_DSL_",
    "TORCH_CUDA_ARCH_LIST",
    "CUDA_HOME",
    "TRITON_",
)


@dataclass(frozen=True)
class Config:
    # its mappings make it unhashable whatever dataclass writes: no __hash__ is generated (one exec() less per run)
    __hash__ = None  # type: ignore[assignment]
    engine: str = "sglang"
    attention_backend: Optional[str] = None
    prefill_attention_backend: Optional[str] = None
    decode_attention_backend: Optional[str] = None
    mm_attention_backend: Optional[str] = None
    draft_attention_backend: Optional[str] = None
    kv_cache_dtype: str = "auto"
    page_size: Optional[int] = None  # None: not given (the engine's default or a backend's forced size)
    deterministic: bool = False
    speculative_algorithm: Optional[str] = None
    speculative_eagle_topk: Optional[int] = None
    tp_size: int = 1
    pp_size: int = 1
    # SGLang --mem-fraction-static / vLLM --gpu-memory-utilization; None: the engine's default
    mem_fraction: Optional[float] = None
    context_length: Optional[int] = None  # SGLang --context-length / vLLM --max-model-len; None: the model's
    dtype: str = "auto"
    model: Optional[ModelFeatures] = None
    # --speculative-draft-model-path as the face read it (EAGLE drafts are checkpoints of their own); None: not
    # given, or found nowhere (the draft is then judged with the target's model)
    draft_model: Optional[ModelFeatures] = None
    # --dllm-algorithm-config's YAML mapping as the face read it; None: not given, or not found here (a path of the
    # serving machine)
    dllm_algorithm_yaml: Optional[Mapping[str, Any]] = None
    model_missing: str = ""  # a model given (hub id) whose config.json was found nowhere
    model_looked_in: str = ""  # where it was looked for (the Hugging Face cache directories)
    extra_features: frozenset[str] = frozenset()  # --feature
    env: Mapping[str, str] = field(default_factory=dict)
    flags: Mapping[str, Any] = field(default_factory=dict)  # other attention-relevant flags, by SGLang dest name
    ignored: tuple[str, ...] = ()  # flags of a pasted command that do not bear on attention
    unmodelled: tuple[str, ...] = ()  # flags of a pasted command that bear on attention but no rule models
    options: tuple[str, ...] = ()  # every option of a pasted command as its engine's parser is given it
    origin: str = "flags"  # "flags" or the kind of pasted command
    command: tuple[str, ...] = ()  # the pasted command as split (secrets redacted), for the corrected command
    auto_backend: str = ""  # why, when the backend was not given and the engine's default was applied
    rewrites: Mapping[str, str] = field(default_factory=dict)  # field -> the value the engine silently replaced

    # Derived (init=False): computed once so that rules only read attributes.
    features: frozenset[str] = field(init=False, default=frozenset())
    prefill_backend: Optional[str] = field(init=False, default=None)
    decode_backend: Optional[str] = field(init=False, default=None)
    backends: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        features = self.extra_features | (self.model.features if self.model else frozenset())
        prefill = self.prefill_attention_backend or self.attention_backend
        decode = self.decode_attention_backend or self.attention_backend
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "prefill_backend", prefill)
        object.__setattr__(self, "decode_backend", decode)
        object.__setattr__(self, "backends", frozenset(b for b in (prefill, decode) if b))

    @cached_property
    def per_target(self) -> dict[Any, Any]:
        """What is derived from this config and a target once per pair (attn_preflight.rules.checks.memory's figures, read by two
        rules and the renderers): kept on the config, which is never changed, not in module state."""
        return {}

    @property
    def mla(self) -> bool:
        return "mla" in self.features

    @property
    def backend_given(self) -> bool:
        return bool(self.attention_backend or self.prefill_attention_backend or self.decode_attention_backend)

    def uses(self, backend: str) -> bool:
        return backend in self.backends

    def with_backend(self, backend: Optional[str], auto_reason: str = "") -> Config:
        return replace(
            self,
            attention_backend=backend,
            prefill_attention_backend=None,
            decode_attention_backend=None,
            auto_backend=auto_reason,
        )

    def with_kv_dtype(self, kv_cache_dtype: str) -> Config:
        return replace(self, kv_cache_dtype=kv_cache_dtype)

    def backend_label(self) -> str:
        if self.prefill_backend == self.decode_backend:
            return self.prefill_backend or "(engine default)"
        return f"prefill {self.prefill_backend}, decode {self.decode_backend}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "attention_backend": self.attention_backend,
            "prefill_attention_backend": self.prefill_backend,
            "decode_attention_backend": self.decode_backend,
            "backend_auto_selected": self.auto_backend or None,
            "rewritten_by_engine": dict(self.rewrites) or None,
            "mm_attention_backend": self.mm_attention_backend,
            "speculative_draft_attention_backend": self.draft_attention_backend,
            "kv_cache_dtype": self.kv_cache_dtype,
            "page_size": self.page_size,
            "enable_deterministic_inference": self.deterministic,
            "speculative_algorithm": self.speculative_algorithm,
            "speculative_eagle_topk": self.speculative_eagle_topk,
            "tp_size": self.tp_size,
            "pp_size": self.pp_size,
            "mem_fraction": self.mem_fraction,
            "context_length": self.context_length,
            "dtype": self.dtype,
            "model": self.model.to_dict() if self.model else None,
            "model_missing": self.model_missing or None,
            "model_looked_in": self.model_looked_in or None,
            "features": sorted(self.features),
            "env": dict(sorted(self.env.items())),
            "flags": dict(sorted(self.flags.items())),
            "ignored": list(self.ignored),
            "unmodelled": list(self.unmodelled),
            "origin": self.origin,
        }
