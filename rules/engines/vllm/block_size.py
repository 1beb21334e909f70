"""The KV-cache block size vLLM resolves for a config, per release: what `--block-size` becomes once the engine
has chosen the attention backend. Engine modelling (what the engine resolves, compared by check --ask-engine);
it judges nothing.

Two shapes, each read in the wheels named:

- 0.20.0 on (read in 0.20.0 and 0.33.0): `Platform.update_block_size_for_backend` (platforms/interface.py:463
  in 0.20.0, :750 in 0.33.0), called once the model's attention layers have their backend. With no
  `--block-size` (CacheConfig.user_specified_block_size False) the block size is the backend's
  `get_preferred_block_size(CacheConfig.DEFAULT_BLOCK_SIZE)` (config/cache.py: DEFAULT_BLOCK_SIZE 16 in 0.20.0
  and 0.33.0): the default where `supports_block_size(16)` holds, else the smallest of
  `get_supported_kernel_block_sizes()` (v1/attention/backend.py:194-202 in 0.20.0, :155-163 in 0.33.0).
  FLASH_ATTN overrides it in 0.33.0 (v1/attention/backends/flash_attn.py:372-380): 64 for SM90 FA4 with an FP8
  KV cache at head size 512 (_get_sm90_fa4_fp8_kv_block_size), FA4_HD256_PAGE_SIZE 128 where FA4 runs its
  Blackwell head-size-256 kernel (_get_fa4_hd256_block_size; fa_utils.py:14). A given `--block-size` is kept,
  except for hybrid models (phase 2, _align_hybrid_block_size) and split KV dtypes (phase 3, 0.33.0): not
  modelled, so unknown.
- 0.13.0 - 0.17.x (read in 0.13.0, 0.15.0, 0.15.1, 0.16.0, 0.17.0): `CudaPlatformBase.check_and_update_config`
  (platforms/cuda.py:161-231 in 0.13.0, :178-279 in 0.17.0): 16 when none is given, then for an MLA model the
  size its MLA backend needs: FlashMLA (named, or the default off Blackwell where FlashMLA dense is
  supported) a multiple of 64 else 64; CUTLASS_MLA a multiple of 128 else 128; FLASHINFER_MLA 32 or a
  multiple of 64, else 64; a sparse (index_topk) model 64 (0.17.0: FLASHINFER_MLA_SPARSE keeps 32 or 64).

Releases not read for this (0.10.0 - 0.12.x, 0.18.0 - 0.19.x) and backends whose sizes are not modelled resolve
None: unknown, never a guess. The kernel block size a KV block is split into (FlashInfer without TRT-LLM runs a
`--block-size 256` as 64-token kernel pages: v1/worker/utils.py select_common_block_size) is not this value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import parse_version
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import changes
from attn_preflight.rules.engines.vllm import select as vllm


@dataclass(frozen=True)
class BlockSizeEra:
    since: str
    until: Optional[str]  # exclusive; None: through the newest release read
    shape: str  # "backend_preferred" | "mla_forced"
    default: int  # CacheConfig.DEFAULT_BLOCK_SIZE / the 16 check_and_update_config sets
    seen: str
    source: str


ERAS: tuple[BlockSizeEra, ...] = (
    BlockSizeEra(
        "0.20.0",
        None,
        "backend_preferred",
        16,
        "0.20.0, 0.33.0",
        "vllm/platforms/interface.py Platform.update_block_size_for_backend; vllm/config/cache.py "
        "CacheConfig.DEFAULT_BLOCK_SIZE; vllm/v1/attention/backend.py AttentionBackend.get_preferred_block_size",
    ),
    BlockSizeEra(
        "0.13.0",
        "0.18.0",
        "mla_forced",
        16,
        "0.13.0, 0.15.0, 0.15.1, 0.16.0, 0.17.0",
        "vllm/platforms/cuda.py CudaPlatformBase.check_and_update_config",
    ),
)
# FLASH_ATTN's own preference (flash_attn.py get_preferred_block_size), read in 0.33.0 only.
FA_PREFERENCE_SINCE = "0.33.0"
FA4_HD256_PAGE_SIZE = 128  # v1/attention/backends/fa_utils.py:14 in 0.33.0
SM90_FA4_FP8_HD512_PAGE_SIZE = 64  # flash_attn.py _get_sm90_fa4_fp8_kv_block_size in 0.33.0


def era_of(release: Optional[str]) -> Optional[BlockSizeEra]:
    """The era the release falls in; None for a release this module has not read (the newest read when None)."""
    if release is None:
        return ERAS[0]
    wanted = parse_version(release).release[:3]
    for era in ERAS:
        if parse_version(era.since).release[:3] <= wanted and (
            era.until is None or wanted < parse_version(era.until).release[:3]
        ):
            return era
    return None


def resolved(cfg: Config, target: Target, backend_name: Optional[str]) -> Optional[int]:
    """The block size vLLM resolves for `cfg` once `backend_name` serves its attention layers; None: unknown."""
    release = vllm.release_of(target)
    era = era_of(release)
    if era is None or target.cc is None or (cfg.model is not None and cfg.model.hybrid_linear):
        return None
    given = cfg.page_size
    if era.shape == "mla_forced":
        return _mla_forced(cfg, target, backend_name, given or era.default, release)
    if given is not None:
        return given
    if backend_name is None:
        return None
    backend = changes.backend_at(backend_name, release)
    if backend is None or not backend.modelled:
        return None
    if backend_name == "FLASH_ATTN":
        special = _flash_attn_preference(cfg, target, release)
        if special != 0:
            return special
    if backend.accepts_block_size(era.default):
        return era.default
    return min(s.base if isinstance(s, kb.MultipleOf) else s for s in backend.block_sizes)


def _flash_attn_preference(cfg: Config, target: Target, release: Optional[str]) -> Optional[int]:
    """FLASH_ATTN's own block size where it differs from the generic preference; 0: it does not; None: unknown
    (a release before the one read, where FA4 may run)."""
    q = vllm.query(cfg, target)
    fa = vllm.flash_attn_resolution(q, target).version
    if fa != 4:
        return 0
    if release is not None and parse_version(release).release[:3] < parse_version(FA_PREFERENCE_SINCE).release[:3]:
        return None
    cc = target.cc
    assert cc is not None
    if cc[0] == 9 and q.kv_dtype in ("fp8", "fp8_e4m3") and q.head_size == 512:
        return SM90_FA4_FP8_HD512_PAGE_SIZE
    if q.head_size == 256 and q.head_size_v in (None, 256) and cc[0] in (10, 11):
        return FA4_HD256_PAGE_SIZE
    return 0


def _mla_forced(
    cfg: Config, target: Target, backend_name: Optional[str], block: int, release: Optional[str]
) -> Optional[int]:
    q = vllm.query(cfg, target)
    if not q.use_mla:
        return block
    cc = target.cc
    assert cc is not None
    if q.use_sparse:
        if release is not None and parse_version(release).release[:3] >= (0, 17, 0):
            if backend_name == "FLASHINFER_MLA_SPARSE":
                return block if block in (32, 64) else 64
        return 64
    named = cfg.attention_backend
    if named is None:  # the default branch picks by arch before any selection
        forced = vllm.forced_mla(q, release)
        if forced is not None:
            named = forced
        elif cc[0] == 9:  # is_flashmla_dense_supported: Hopper
            named = "FLASHMLA"
        else:
            return block
    if named == "FLASHMLA":
        return block if cc[0] != 9 or block % 64 == 0 else 64
    if named == "CUTLASS_MLA":
        return block if block % 128 == 0 else 128
    if named == "FLASHINFER_MLA":
        return block if block == 32 or block % 64 == 0 else 64
    return block


def running_backend(cfg: Config, target: Target) -> Optional[str | tuple[str, ...]]:
    """The backend the rules judge vLLM runs: the one named, Gemma-4's forced one, else the priority list's pick
    for each distinct head size (a tuple when the layers differ); None where the rules cannot say."""
    if cfg.attention_backend is not None:
        return cfg.attention_backend
    if target.cc is None or cfg.model is None:
        return None
    forced = vllm.gemma4_forcing(cfg, target)
    if forced is not None and forced.backend is not None:
        return forced.backend
    queries = vllm.layer_queries(cfg, target)
    if any(q.head_size is None for q in queries):
        return None
    picks: list[str] = []
    for q in queries:
        chosen = vllm.selected(q, target).chosen
        if chosen is None:
            return None
        if chosen not in picks:
            picks.append(chosen)
    return picks[0] if len(picks) == 1 else tuple(picks)


def rules_resolved(cfg: Config, target: Target) -> tuple[Optional[str | tuple[str, ...]], Optional[int]]:
    """(the backend the rules judge runs, the block size vLLM resolves with it); None where unknown."""
    backend = running_backend(cfg, target)
    single = backend if isinstance(backend, str) else None
    if isinstance(backend, tuple):  # mixed backends: the common size (_preferred_block_size_for_backends) is
        return backend, cfg.page_size if era_of(vllm.release_of(target)) else None  # modelled only when given
    return backend, resolved(cfg, target, single)
