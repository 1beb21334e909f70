"""FlashInfer's own pick of its Hopper (FA3) kernels under backend "auto", read release by release in the
flashinfer-python wheels (0.2.11.post3, 0.2.14.post1, 0.3.0, 0.3.1, 0.4.0rc3, 0.5.0, 0.5.2, 0.5.3, 0.6.0 ... 0.6.4,
... 0.7.2.post1) and in the flashinfer-ai/flashinfer history; the engines' rules key on it (attn_preflight.rules.engines.vllm.rules.vllm,
attn_preflight.rules.checks.general).

Both prefill wrappers (flashinfer/prefill.py plan) and, from 0.6.0, the tensor-core decode wrapper resolve "auto"
with utils.determine_attention_backend: "fa3" on SM90 (is_sm90a_supported: major 9, CUDA 12.3+) whenever
is_fa3_backend_supported, else "fa2". Up to 0.6.3 that test looks at the custom mask, the positional encoding and
FP16 QK reductions, never at the dtypes (utils.py in each wheel above), so a 16-bit query over an FP8 KV cache
JIT-compiles the FA3 module for that pair, which has no GMMA for it (hopper/kernel_traits.cuh rs_op_selector;
flashinfer-ai/flashinfer PR #1304 explains it). The module holds the ragged and the paged kernels together
(jit/attention/modules.py gen_batch_prefill_module), so the log names batch_prefill_ragged_sm90_kernel_mask_*.cu
whichever wrapper asked for it. From 0.6.4 (PR #2536, fixing issue #2348) the test refuses an FP8 KV cache with a
non-FP8 query and FA2's mixed-precision kernel serves it.
"""

from __future__ import annotations

from packaging.version import Version

# The error nvcc gives for the FA3 module of a 16-bit query over an FP8 KV cache (vllm#27604, sglang#18135).
FA3_FP8_KV_JIT_ERROR = (
    'kernel_traits.cuh(74): error: no instance of overloaded function "cute::make_tiled_mma" matches the argument list'
)

# The first FlashInfer whose is_fa3_backend_supported refuses an FP8 KV cache under a 16-bit query.
FA3_DTYPE_CHECK_FROM = "0.6.4"
FA3_DTYPE_CHECK_SOURCE = (
    "flashinfer-ai/flashinfer: flashinfer/utils.py, is_fa3_backend_supported / determine_attention_backend "
    "(the dtype test from v0.6.4, PR #2536)"
)

# The first FlashInfer whose tensor-core decode (BatchDecodeWithPagedKVCacheWrapper with use_tensor_cores) resolves
# backend "auto" with determine_attention_backend; before, it built the FA2 prefill module whatever the GPU
# (decode.py plan: get_batch_prefill_module("fa2", ...) at :994 in 0.2.11.post3, :1026 in 0.5.3; "auto" at
# :1037-1053 in 0.6.0, 0.6.1, 0.6.2 and 0.6.3; 0.6.4 :1037-1056 keeps "auto" only where a dtype is FP8, PR #2530).
FA3_TENSOR_CORE_DECODE_FROM = "0.6.0"
FA3_TENSOR_CORE_DECODE_SOURCE = (
    "flashinfer-ai/flashinfer: flashinfer/decode.py, BatchDecodeWithPagedKVCacheWrapper.plan (tensor-core decode "
    "resolves backend auto from v0.6.0, PR #2148 'Enable Hopper FA3 FP8 attention in decode.py')"
)


def fa3_takes_16bit_query_over_fp8(version: str) -> bool:
    """Whether this FlashInfer's "auto" sends a 16-bit query over an FP8 KV cache to FA3 on SM90 (raises
    InvalidVersion for a version that cannot be read)."""
    return Version(version) < Version(FA3_DTYPE_CHECK_FROM)


def tensor_core_decode_takes_fa3(version: str) -> bool:
    """Whether this FlashInfer's tensor-core decode under "auto" builds the FA3 module for a 16-bit query over an
    FP8 KV cache on SM90 (raises InvalidVersion for a version that cannot be read)."""
    return Version(FA3_TENSOR_CORE_DECODE_FROM) <= Version(version) and fa3_takes_16bit_query_over_fp8(version)
