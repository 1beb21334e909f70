"""The flashinfer-python each SGLang release pins, and how SGLang's flashinfer backend builds its wrappers.

PINS: `Requires-Dist: flashinfer_python==X` in each sglang wheel's METADATA (read with
unzip -p). Through 0.5.2 it is the `srt` extra (the Docker images install it); from 0.5.3 a plain dependency
(`flashinfer_python[cu13]` from 0.5.13). A release not listed keeps the pin of the newest listed release before
it (attn_preflight.rules.core.versions.release_at_or_before).

Wrappers (layers/attention/flashinfer_backend.py, FlashInferAttnBackend.__init__ and the CUDA-graph capture paths,
every wheel read): the ragged prefill wrapper takes backend "auto" off SM100 and is planned with the query dtype
only, so its KV is 16-bit; the paged prefill and draft-extend wrappers name "fa2"; the verify wrapper plans a
custom mask, which FlashInfer's FA3 test refuses. Through 0.5.8.post1 the decode wrappers
(BatchDecodeWithPagedKVCacheWrapper, :277 and :555 in 0.5.8) name no backend, so FlashInfer's "auto" picks, and
should_use_tensor_core turns tensor cores on for an FP8 KV cache (unless SGLANG_FLASHINFER_USE_TENSOR_CORE says
otherwise); they are planned with q_data_type = the model's dtype and data_type = the KV cache's (:1134-1135).
From 0.5.9 every prefill and decode wrapper takes self.prefill_backend / self.decode_backend = "fa2"
(flashinfer_backend.py:124-125, :269-283 in 0.5.9; sglang PR #18364).
"""

from __future__ import annotations

from typing import Optional

from attn_preflight.rules.core.versions import release_at_or_before

PINS_SOURCE = "sglang wheels' METADATA: Requires-Dist flashinfer_python"
PINS = {
    "0.5.0rc2": "0.2.11.post3",
    "0.5.1": "0.2.11.post3",
    "0.5.1.post3": "0.2.14.post1",
    "0.5.2": "0.3.1",
    "0.5.3": "0.4.0rc3",
    "0.5.3.post3": "0.4.0",
    "0.5.4": "0.4.1",
    "0.5.4.post3": "0.5.0",
    "0.5.5": "0.5.0",
    "0.5.5.post3": "0.5.2",
    "0.5.6": "0.5.3",
    "0.5.6.post2": "0.5.3",
    "0.5.7": "0.5.3",
    "0.5.8": "0.6.1",
    "0.5.8.post1": "0.6.1",
    "0.5.9": "0.6.3",
    "0.5.10": "0.6.7.post2",
    "0.5.10.post1": "0.6.7.post3",
    "0.5.11": "0.6.8.post1",
    "0.5.12": "0.6.11.post1",
    "0.5.12.post1": "0.6.11.post1",
    "0.5.13": "0.6.12",
    "0.5.13.post1": "0.6.12",
    "0.5.14": "0.6.12",
    "0.5.15": "0.6.12",
    "0.5.15.post1": "0.6.12",
    "0.5.16": "0.6.14",
    "0.5.17": "0.6.15.post1",
    "0.5.18": "0.6.17",
    "0.5.19": "0.6.18",
    "0.5.20": "0.6.18",
    "0.5.21": "0.6.18",
    "0.5.22": "0.7.1",
    "0.5.23": "0.7.2",
}
_RELEASES = tuple(PINS)  # oldest first

# SGLang's switch for tensor-core decode (should_use_tensor_core): any value but "true" turns it off.
TENSOR_CORE_ENV = "SGLANG_FLASHINFER_USE_TENSOR_CORE"


def pinned(sglang_release: str) -> Optional[str]:
    """The flashinfer-python the SGLang release pins; None for a release older than every one read."""
    release = release_at_or_before(_RELEASES, sglang_release)
    return PINS[release] if release is not None else None
