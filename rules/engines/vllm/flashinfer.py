"""The FlashInfer each vLLM release pins, and FlashInfer's own pick of its Hopper prefill kernels.

PINS: `Requires-Dist: flashinfer-python==X` in each vllm wheel's METADATA (read with `pip install --dry-run
--report`, which fetches only the metadata). Through 0.11.0 it is the `flashinfer` extra (the Docker images
install it); from 0.11.1 a plain dependency; 0.10.0 names no FlashInfer. A release not listed keeps the pin of
the newest listed release before it (attn_preflight.rules.core.versions.release_at_or_before).

FA3 prefill: vLLM's FLASHINFER builds its prefill wrapper with FlashInfer's backend "auto"
(BatchPrefillWithPagedKVCacheWrapper(workspace, layout): flashinfer.py:347 in 0.10.2, :367 in 0.11.0, :597 in
0.11.2, :680 in 0.15.0, :718 in 0.16.0, :704 in 0.17.0), which up to FlashInfer 0.6.3 sends a 16-bit query over an
FP8 KV cache to the FA3 kernel that cannot be built for it (rules/kernels/flashinfer.py, the fact both engines'
rules read). vLLM quantises the query to FP8 only where TRT-LLM attention runs (supports_trtllm_attention /
can_use_trtllm_attention: SM100 only, utils/flashinfer.py in 0.10.2-0.16.0), so on SM90 the query is the model's
dtype.
"""

from __future__ import annotations

from typing import Optional

from attn_preflight.rules.core.versions import release_at_or_before

PINS_SOURCE = "vllm wheels' METADATA: Requires-Dist flashinfer-python"
PINS = {
    "0.10.1": "0.2.11",
    "0.10.1.1": "0.2.11",
    "0.10.2": "0.3.0",
    "0.11.0": "0.3.1",
    "0.11.1": "0.5.2",
    "0.11.2": "0.5.2",
    "0.12.0": "0.5.3",
    "0.13.0": "0.5.3",
    "0.14.0": "0.5.3",
    "0.14.1": "0.5.3",
    "0.15.0": "0.6.1",
    "0.15.1": "0.6.1",
    "0.16.0": "0.6.3",
    "0.17.0": "0.6.4",
    "0.17.1": "0.6.4",
    "0.18.0": "0.6.6",
    "0.18.1": "0.6.6",
    "0.19.0": "0.6.6",
    "0.19.1": "0.6.6",
    "0.20.0": "0.6.8.post1",
    "0.20.1": "0.6.8.post1",
    "0.20.2": "0.6.8.post1",
    "0.21.0": "0.6.8.post1",
    "0.22.0": "0.6.11.post2",
    "0.22.1": "0.6.11.post2",
    "0.23.0": "0.6.12",
    "0.24.0": "0.6.12",
    "0.25.0": "0.6.13",
    "0.25.1": "0.6.13",
    "0.26.0": "0.6.14",
    "0.27.0": "0.6.16.post3",
    "0.27.1": "0.6.16.post3",
    "0.28.0": "0.6.16.post3",
    "0.29.0": "0.6.18",
    "0.30.0": "0.6.18.post1",
    "0.31.0": "0.7.0.post1",
    "0.32.0": "0.7.0.post1",
    "0.33.0": "0.7.2.post1",
}
_RELEASES = tuple(PINS)  # oldest first

# vLLM's --kv-cache-dtype values that FlashInferBackend.get_fp8_dtype_for_flashinfer maps to an FP8 torch dtype.
FP8_KV_DTYPES = frozenset({"fp8", "fp8_e4m3", "fp8_e5m2"})


def pinned(vllm_release: str) -> Optional[str]:
    """The flashinfer-python the vLLM release pins; None for a release that pins none (0.10.0 and older)."""
    release = release_at_or_before(_RELEASES, vllm_release)
    return PINS[release] if release is not None else None
