"""vLLM's Gemma4Config: what it forces for a Gemma-4 model whose layers have different head sizes (sliding layers
head_dim 256, full-attention layers global_head_dim 512), before any backend is selected.

model_executor/models/config.py Gemma4Config.verify_and_update_config, registered for Gemma4ForCausalLM and
Gemma4ForConditionalGeneration (and Gemma4UnifiedForConditionalGeneration from 0.24.0) in MODELS_CONFIG_MAP:
- 0.19.0-0.23.x (config.py:61 in 0.19.0, :58 in 0.20.0/0.21.0, :57 in 0.22.0/0.23.0): head_dim != global_head_dim,
  the larger above 256 and no backend named -> --attention-backend TRITON_ATTN for every layer.
- 0.24.0-0.30.x (:57 in 0.24.0, :198 in 0.25.0-0.27.0, :199 in 0.28.0, :209 in 0.29.0/0.30.0): heterogeneous head
  sizes (from 0.28.0 read per layer from model_arch_config over layer_types) -> where FA4 is supported
  (is_fa_version_supported(4)) and the largest is at most 512, flash_attn_version 4 when none is given and the
  backend is unnamed or FLASH_ATTN; elsewhere, with no backend named, TRITON_ATTN.
- 0.31.0-0.33.0 (:209 in 0.31.0, :229 in 0.32.0, :301 in 0.33.0): the same, except on SM9x with an FP8 KV cache
  (the resolved cache_dtype) nothing is forced: each layer selects its own FA version.
Not in 0.18.0 or older (no Gemma4Config). Every layer is then validated with its own head size (vllm_backends).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from packaging.version import Version

from attn_preflight.rules.engines.vllm.capabilities import CC, FA_SUPPORTED

SOURCE = "vllm-project/vllm: vllm/model_executor/models/config.py, Gemma4Config.verify_and_update_config"
ARCHITECTURES = frozenset({"Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"})
UNIFIED_ARCHITECTURE = "Gemma4UnifiedForConditionalGeneration"  # registered from 0.24.0
FROM = Version("0.19.0")
FA4_FROM = Version("0.24.0")  # FA4 for every layer where it is supported, TRITON_ATTN elsewhere
SM90_FP8_PER_LAYER_FROM = Version("0.31.0")
TRITON_ONLY_ABOVE = 256  # 0.19.0-0.23.x force only when the larger head size exceeds FlashAttention's limit
FA4_MAX_HEAD = 512


@dataclass(frozen=True)
class Gemma4Forcing:
    """What Gemma4Config sets: a backend for every layer, or the FA version FLASH_ATTN runs."""

    backend: Optional[str] = None
    fa_version: Optional[int] = None

    @property
    def said(self) -> str:
        if self.backend:
            return f"Gemma4Config forces {self.backend} (heterogeneous head sizes)"
        return f"Gemma4Config forces FlashAttention {self.fa_version} for every layer (heterogeneous head sizes)"


def forcing(
    architecture: Optional[str],
    head_sizes: frozenset[int],
    cc: CC,
    kv_dtype: str,
    backend: Optional[str],
    fa_version: Optional[int],
    release: Version,
) -> Optional[Gemma4Forcing]:
    """Gemma4Config's change for this launch in `release` (None: it changes nothing)."""
    registered = ARCHITECTURES | ({UNIFIED_ARCHITECTURE} if release >= FA4_FROM else frozenset())
    if release < FROM or architecture not in registered or len(head_sizes) < 2:
        return None
    largest = max(head_sizes)
    if release < FA4_FROM:
        return Gemma4Forcing(backend="TRITON_ATTN") if largest > TRITON_ONLY_ABOVE and backend is None else None
    if cc in FA_SUPPORTED[4] and largest <= FA4_MAX_HEAD:
        if fa_version is not None or backend not in (None, "FLASH_ATTN"):
            return None
        if release >= SM90_FP8_PER_LAYER_FROM and cc[0] == 9 and kv_dtype.startswith("fp8"):
            return None
        return Gemma4Forcing(fa_version=4)
    return Gemma4Forcing(backend="TRITON_ATTN") if backend is None else None
