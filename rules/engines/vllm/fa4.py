"""vLLM's FlashAttention 4 release by release: when FLASH_ATTN runs it, and what it needs installed.

vLLM runs FA4 from its own build, vllm/vllm_flash_attn/cute/ (the CuTe DSL FlashAttention), from vllm 0.17.0 on:
no release from 0.10.0 to 0.16.0 ships cute/interface.py, and their fa_utils.get_flash_attn_version never
picks FA4. Read from every vllm release's x.y.0 and last x.y.z from 0.10.0 to 0.33.0: vllm_flash_attn/**/*.py
and the METADATA by bench/wheel_ranges.py (HTTP Range reads of the wheels), fa_utils.py and
v1/attention/backends/flash_attn.py by bench/release_walk.py.

- PINS: the nvidia-cutlass-dsl and quack-kernels requirements of each release's METADATA (Requires-Dist).
- FA_ERAS: how each range of releases' get_flash_attn_version treats FA4 on Blackwell, as
  FlashAttentionImpl.__init__ calls it (head_size, alibi; has_sinks from 0.27.0, softcap from 0.29.0; never
  head_size_v, so the 192/128 exemption and the SM90 "Diff-KV with sinks" upgrade (fa_utils.py:130 in
  0.20.x, :133 in 0.21.0, :154 in 0.33.0) never apply to it). Read by vllm_backends.flash_attn_version. Not modelled:
  VLLM_BATCH_INVARIANT (FA2 from 0.18.0) and diffusion models' FA3 -> FA4 upgrade (from 0.24.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, TypeVar

from attn_preflight.rules.core.versions import parse_version

FA4_SINCE = "0.17.0"  # the first release with vllm_flash_attn/cute/interface.py and FA4 in get_flash_attn_version


@dataclass(frozen=True)
class Pins:
    """The CuTe DSL and quack-kernels a range of vLLM releases requires (METADATA Requires-Dist)."""

    since: str
    cutlass_dsl: str
    quack: str
    seen: str  # the releases whose METADATA reads so

    def install(self) -> str:
        return f"pip install --force-reinstall '{self.cutlass_dsl}' '{self.quack}'"


PINS: tuple[Pins, ...] = (
    Pins(
        "0.17.0",
        "nvidia-cutlass-dsl>=4.4.0.dev1",
        "quack-kernels>=0.2.7",
        "0.17.0, 0.17.1, 0.18.0, 0.18.1, 0.19.0, 0.19.1",
    ),
    Pins("0.20.0", "nvidia-cutlass-dsl>=4.4.2", "quack-kernels>=0.3.3", "0.20.0, 0.20.2"),
    Pins("0.21.0", "nvidia-cutlass-dsl==4.4.2", "quack-kernels>=0.3.3", "0.21.0"),
    Pins(
        "0.22.0",
        "nvidia-cutlass-dsl[cu13]==4.5.2",
        "quack-kernels>=0.3.3",
        "0.22.0, 0.22.1, 0.23.0, 0.24.0, 0.25.0, 0.25.1",
    ),
    Pins("0.26.0", "nvidia-cutlass-dsl[cu13]==4.6.0", "quack-kernels>=0.4.0", "0.26.0"),
    Pins("0.27.0", "nvidia-cutlass-dsl[cu13]==4.6.0", "quack-kernels==0.6.1", "0.27.0, 0.27.1"),
    Pins("0.28.0", "nvidia-cutlass-dsl[cu13]==4.6.2", "quack-kernels==0.6.4", "0.28.0, 0.29.0"),
    Pins("0.30.0", "nvidia-cutlass-dsl[cu13]==4.7.1", "quack-kernels==0.6.5", "0.30.0, 0.31.0"),
    Pins("0.32.0", "nvidia-cutlass-dsl[cu13]==4.8.0", "quack-kernels==0.6.5", "0.32.0, 0.33.0"),
)
PINS_SOURCE = "Requires-Dist of each wheel's vllm-VERSION.dist-info/METADATA (rules/engines/vllm/fa4.py PINS)"


@dataclass(frozen=True)
class FaEra:
    """FA4 in one range of releases' get_flash_attn_version, above head size 128 on Blackwell (>= 10.x)."""

    since: str
    # The head sizes FA4 keeps above 128, each with the head_size_v values it needs (None: any); the rest log
    # the TMEM message and run FA2.
    tmem_kept: tuple[tuple[int, Optional[tuple[Optional[int], ...]]], ...]
    # head size 256: "tmem" (as tmem_kept says), "off" (always FA2), "kernel" (the hd256 kernel, FA2 for sinks,
    # soft-cap, a quantised KV cache or a block size % 128)
    hd256: Literal["tmem", "off", "kernel"]
    sm90_upgrade: bool  # FA3 becomes FA4 on 9.x above head size 256
    source: str
    fa4: bool = True  # FA4 exists: the 10.x default, and FA3 on >= 10.x becomes FA4


FA_ERAS: tuple[FaEra, ...] = (
    FaEra(
        "0.13.0",
        (),
        "tmem",
        False,
        "no FA4 before 0.17.0: the default is FA3 on 9.x and FA2 elsewhere, FA3 on 10.x only (not 12.x) becomes "
        "FA2 ('Cannot use FA version 3 on Blackwell platform, defaulting to FA version 2.'), and "
        "flash_attn_version is Literal[2, 3] (attention/utils/fa_utils.py:47-64 and config/attention.py:24 in "
        "0.13.0; v1/attention/backends/fa_utils.py:74-95 and config/attention.py:19 in 0.16.0; 0.14.0 and "
        "0.15.0 the same)",
        fa4=False,
    ),
    FaEra(
        "0.17.0",
        (),
        "tmem",
        False,
        "every head_size > 128 runs FA2: the TMEM message at fa_utils.py:124 in 0.17.0 and 0.17.1",
    ),
    FaEra(
        "0.18.0",
        ((192, None),),
        "tmem",
        False,
        "head_size != 192 in the TMEM check (fa_utils.py:135, message :138 in 0.18.0-0.19.1)",
    ),
    FaEra(
        "0.20.0",
        ((192, None),),
        "tmem",
        True,
        "the SM90 upgrade in FlashAttentionImpl.__init__ (flash_attn.py:638-645 in 0.20.0 and 0.20.2), then in "
        "fa_utils ('upgrading FlashAttention 3 -> 4' :136 in 0.21.0-0.23.0, :142 in 0.24.0, :218 in 0.25.0-0.26.0); "
        "the TMEM check unchanged (message :157 in 0.20.x, :164 in 0.21.0-0.23.0, :170 in 0.24.0, :246 in "
        "0.25.0-0.26.0)",
    ),
    FaEra(
        "0.27.0",
        ((256, None), (192, (128,))),
        "tmem",
        True,
        "the TMEM check keeps 256 and 192/128 (fa_utils.py:263, message :266) in 0.27.0 and 0.27.1; a sliding-window "
        "layer of head size 256 runs FA2 (:250), not modelled: the full-attention layers of the models with it "
        "(Gemma's interleave) still run FA4",
    ),
    FaEra(
        "0.28.0",
        ((192, (128,)),),
        "off",
        True,
        "head_size 256 always runs FA2 (fa_utils.py:175), the TMEM check keeps 192/128 only (:190, message :193) "
        "in 0.28.0",
    ),
    FaEra(
        "0.29.0",
        ((256, (None, 256)), (192, (128,))),
        "kernel",
        True,
        "the hd256 kernel's fallbacks (fa_utils.py:187, _fa4_hd256_fallback_reason) and the TMEM check (message "
        ":205) in 0.29.0-0.33.0",
    ),
)

# vLLM's own log line for 0.28.0's head-size-256 step
FA4_HD256_OFF_MESSAGE = "FA4 on Blackwell is temporarily disabled for head_size=256, defaulting to FA version 2."


_Row = TypeVar("_Row", Pins, FaEra)


def _at(rows: tuple[_Row, ...], release: Optional[str]) -> _Row:
    """The row holding a release: the newest for an unknown one, the oldest for an older release (the rules
    that read these start no earlier than their first row)."""
    if release is None:
        return rows[-1]
    wanted = parse_version(release).release
    holding = [row for row in rows if parse_version(row.since).release <= wanted]
    return holding[-1] if holding else rows[0]


def era(release: Optional[str]) -> FaEra:
    """The FA4 behaviour of a vLLM release's get_flash_attn_version."""
    return _at(FA_ERAS, release)


def pins(release: Optional[str]) -> Pins:
    """The CuTe DSL and quack-kernels a vLLM release requires."""
    return _at(PINS, release)
