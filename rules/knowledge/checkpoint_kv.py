"""The KV-cache dtype an engine takes from the checkpoint for `--kv-cache-dtype auto`.

vLLM, from 0.14.0: EngineArgs.create_engine_config resolves "auto" with resolve_kv_cache_dtype_string before it
builds CacheConfig (vllm/engine/arg_utils.py; utils/torch_utils.py get_kv_cache_quant_algo_string), so the
attention backend is selected and validated for the checkpoint's KV dtype. Only a quant_method starting
"modelopt" is read (ModelOpt's kv_cache_quant_algo, or a kv_cache_scheme); a compressed-tensors
kv_cache_scheme is not resolved there. A legacy hf_quant_config.json gets its quant_method from its quant_algo
first (transformers_utils/model_arch_config_convertor.py _normalize_quantization_config). Unknown values fall
back to "auto" with a warning. Read in every vllm wheel from 0.13.0 to 0.33.0 (VLLM_READ below).

SGLang resolves it later and elsewhere: after the model loads, the model runner's KV dtype step turns "auto" into
FP8 E4M3 when the loaded quant config's kv_cache_quant_algo is "FP8" (model_executor/model_runner.py: :1399 in
0.5.3, :1511 in 0.5.5, :1672 in 0.5.9, :2343 in 0.5.12, :2449 in 0.5.15; mem_cache/kv_cache_dtype.py
configure_kv_cache_dtype from 0.5.16, :48-57 in 0.5.23). Every server-args check (server_args.py, arg_groups/)
has seen "auto" by then; the attention backends, built after, see the FP8 dtype from 0.5.9, where the runner
writes it back over server_args.kv_cache_dtype (model_runner.py:1679 in 0.5.9; a load-time override from 0.5.15;
ModelRunner.kv_cache_dtype_str, which flashattention_backend.py reads, from 0.5.17). 0.5.3-0.5.8 size the pool in
FP8 but leave server_args at "auto" (not modelled). Only SGLang's ModelOpt configs are read here
(layers/quantization/modelopt_quant.py from_config): hf_quant_config.json's quantization.kv_cache_quant_algo;
config.json's kv_cache_scheme (type float, 8 bits: FP8, whether dynamic or not), or from 0.5.15 its
kv_cache_quant_algo string (:458 in 0.5.15, :490 in 0.5.23; 0.5.9-0.5.14 read only the scheme there).
"""

from __future__ import annotations

from typing import Optional

from packaging.version import Version

from attn_preflight.rules.core.models import CheckpointKvQuant

VLLM_RESOLVES_FROM = Version("0.14.0")
VLLM_NVFP4_FROM = Version("0.20.0")  # MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP gains "nvfp4"; a 4-bit float scheme maps

VLLM_SOURCE = (
    "vllm-project/vllm: vllm/engine/arg_utils.py create_engine_config, resolve_kv_cache_dtype_string "
    "(vllm/utils/torch_utils.py get_kv_cache_quant_algo_string)"
)
# Where each vllm wheel read resolves it: engine/arg_utils.py call line; utils/torch_utils.py
# get_kv_cache_quant_algo_string and resolve_kv_cache_dtype_string lines.
VLLM_READ = (
    "vllm 0.13.0: no resolution (arg_utils.py hands --kv-cache-dtype to CacheConfig as given). The call in "
    "engine/arg_utils.py, then utils/torch_utils.py get_kv_cache_quant_algo_string / resolve_kv_cache_dtype_string: "
    ":1398, :239/:301 in 0.14.0 and 0.14.1; :1403 in 0.15.0; :1429, :262/:324 in 0.16.0; :1496 in 0.17.0; :1527 "
    "in 0.18.0; :1568 in 0.19.0 (map {fp8: fp8_e4m3} only); :1643, :279/:343 in 0.20.0 (nvfp4: the map and a "
    "4-bit float scheme); :1685, :311/:375 in 0.21.0; :1746 in 0.22.0; :1751 in 0.23.0; :1833, :309/:373 in "
    "0.24.0; :1867, :310/:374 in 0.25.0; :1896 in 0.26.0; :1946 in 0.27.0; :1986, :427/:491 in 0.28.0; :2070, "
    ":442/:506 in 0.29.0; :2090, :452/:507 in 0.30.0; :2200, :448/:503 in 0.31.0; :2257, :457/:512 in 0.32.0; "
    ":2297, :443/:498 in 0.33.0. The two functions read the same from 0.20.0 to 0.33.0 (0.30.0 only drops the "
    "unused get_kv_cache_quant_algo_dtype); the legacy hf_quant_config.json normalisation "
    "(model_arch_config_convertor.py:147 in 0.14.0, :255 in 0.33.0) the same for FP8 and NVFP4"
)

_VLLM_MAP = {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}


def vllm_auto_kv_dtype(kv_quant: Optional[CheckpointKvQuant], release: Version) -> Optional[str]:
    """The --kv-cache-dtype vLLM runs for "auto" with this checkpoint in `release`; None: "auto" stays (the
    model's dtype)."""
    if kv_quant is None or release < VLLM_RESOLVES_FROM or not kv_quant.quant_method.startswith("modelopt"):
        return None
    algo = kv_quant.algo
    if algo is None:
        if kv_quant.scheme_type != "float":
            return None
        if kv_quant.scheme_bits == 8 and kv_quant.scheme_dynamic is False:
            algo = "fp8"
        elif kv_quant.scheme_bits == 4 and release >= VLLM_NVFP4_FROM:
            algo = "nvfp4"
        else:
            return None
    dtype = _VLLM_MAP.get(algo.lower())
    if dtype == "nvfp4" and release < VLLM_NVFP4_FROM:
        return None
    return dtype


SGLANG_BACKENDS_SEE_FROM = Version("0.5.9")
SGLANG_FLAT_ALGO_FROM = Version("0.5.15")
SGLANG_SOURCE = (
    "sglang: python/sglang/srt/mem_cache/kv_cache_dtype.py configure_kv_cache_dtype (model_executor/model_runner.py "
    "before 0.5.16); layers/quantization/modelopt_quant.py from_config"
)


def sglang_auto_kv_dtype(kv_quant: Optional[CheckpointKvQuant], release: Version) -> Optional[str]:
    """The KV dtype SGLang's attention backends run for --kv-cache-dtype auto with this checkpoint; None: the
    model's dtype (or a release where the backends still see "auto")."""
    if kv_quant is None or release < SGLANG_BACKENDS_SEE_FROM or not kv_quant.quant_method.startswith("modelopt"):
        return None
    if kv_quant.algo is None:
        fp8 = kv_quant.scheme_type == "float" and kv_quant.scheme_bits == 8
    else:
        fp8 = kv_quant.algo.upper() == "FP8" and (kv_quant.nested or release >= SGLANG_FLAT_ALGO_FROM)
    return "fp8_e4m3" if fp8 else None
