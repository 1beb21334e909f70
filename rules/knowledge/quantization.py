"""What each quantization method asks of the GPU and the model dtype, per engine and release range.

vLLM builds the quantization config in VllmConfig._get_quantization_config (vllm/config/__init__.py:3455 in
0.10.1, :264 in 0.11.0; vllm/config/vllm.py:374 in 0.12.0, :393 in 0.13.0, :422 in 0.15.0, :525 in 0.19.1, :940 in 0.33.0) and refuses, before any weight loads:
- a GPU below the method's get_min_capability(): "The quantization method {method} is not supported for the
  current GPU. Minimum capability: {min}. Current capability: {cc}.";
- a model dtype outside get_supported_act_dtypes(): "{dtype} is not supported for quantization method
  {method}. Supported dtypes: [...]".

SGLang does the same when the model loader builds it (python/sglang/srt/model_loader/loader.py
_get_quantization_config, :199-205 in 0.5.5, :259-265 in 0.5.23), with the same two messages.

Each entry below was read in the quantization module's class (vllm/model_executor/layers/quantization/,
sglang/srt/layers/quantization/) of the wheels it names (`pip download --no-deps NAME==X`, read, not
installed); a release in no entry's range was not read, and the rule answers unknown there.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple, Optional

from attn_preflight.rules.core.versions import VersionRange

MIN_CAPABILITY_MESSAGE = (
    "The quantization method {method} is not supported for the current GPU. Minimum capability: {minimum}. "
    "Current capability: {current}."
)
ACT_DTYPE_MESSAGE = "{dtype} is not supported for quantization method {method}. Supported dtypes: {dtypes}"
SOURCE = MappingProxyType(
    {
        "vllm": "vllm-project/vllm: vllm/config/vllm.py, VllmConfig._get_quantization_config",
        "sglang": "sglang: python/sglang/srt/model_loader/loader.py, _get_quantization_config",
    }
)

HALF = frozenset({"float16", "bfloat16"})


class QuantGate(NamedTuple):
    """One method's demands over one range of releases."""

    releases: VersionRange
    min_capability: int  # get_min_capability(): major * 10 + minor
    act_dtypes: frozenset[str]  # get_supported_act_dtypes(), as model dtype names
    seen: str  # the wheels read, with file:line


def _gate(releases: str, min_capability: int, act_dtypes: frozenset[str], seen: str) -> QuantGate:
    return QuantGate(VersionRange.parse(releases), min_capability, act_dtypes, seen)


# vLLM's method name (config.json quantization_config.quant_method; modelopt by quant_algo) -> its gates.
VLLM_GATES: Mapping[str, tuple[QuantGate, ...]] = MappingProxyType(
    {
        "fp8": (
            _gate(
                "vllm>=0.10.1,<0.14.0",
                80,
                HALF,
                "Fp8Config.get_min_capability `return 80` (fp8.py of 0.10.1, 0.11.0, 0.12.0, 0.13.0)",
            ),
            _gate(
                "vllm>=0.14.1",
                75,
                HALF,
                "Fp8Config.get_min_capability `return 75` (fp8.py of 0.14.1, 0.15.0, 0.17.0, 0.19.1, 0.33.0)",
            ),
        ),
        "mxfp4": (
            _gate(
                "vllm>=0.10.1",
                80,
                frozenset({"bfloat16"}),
                "Mxfp4Config.get_min_capability `return 80`, get_supported_act_dtypes `[torch.bfloat16]` (mxfp4.py "
                "of 0.10.1, 0.11.0, 0.12.0, 0.13.0, 0.14.1, 0.15.0, 0.17.0, 0.19.1, 0.33.0; named gpt_oss_mxfp4 in 0.33.0, mxfp4.py:126)",
            ),
        ),
        "modelopt": (
            _gate(
                "vllm>=0.10.1,<0.20.0",
                89,
                HALF,
                "ModelOptFp8Config.get_min_capability `return 89` (0.10.1, 0.11.0, 0.12.0; modelopt.py:325 in 0.13.0, :377 in 0.15.0, :408 "
                "in 0.19.1; 0.14.1, 0.17.0)",
            ),
            _gate(
                "vllm>=0.33.0", 80, HALF, "ModelOptFp8Config.get_min_capability `return 80` (modelopt.py:449, 0.33.0)"
            ),
        ),
        "modelopt_fp4": (
            _gate(
                "vllm>=0.10.1,<0.14.0",
                80,
                frozenset({"float16", "bfloat16", "float8_e4m3fn"}),
                "ModelOptNvFp4Config.get_min_capability `return 80` (0.10.1, 0.11.0, 0.12.0; modelopt.py:873 in 0.13.0)",
            ),
            _gate(
                "vllm>=0.14.1",
                75,
                frozenset({"float16", "bfloat16", "float8_e4m3fn"}),
                "ModelOptNvFp4Config.get_min_capability `return 75` (modelopt.py:1046 in 0.15.0, :1013 in 0.19.1, "
                ":772 in 0.33.0; 0.14.1, 0.17.0)",
            ),
        ),
    }
)


# SGLang: Mxfp4Config.get_min_capability `return 80`, get_supported_act_dtypes [bfloat16, float16]
# (srt/layers/quantization/mxfp4.py of 0.5.1, 0.5.5, 0.5.10, 0.5.15, 0.5.20, 0.5.23; :338-339 in 0.5.23).
SGLANG_GATES: Mapping[str, tuple[QuantGate, ...]] = MappingProxyType(
    {
        "mxfp4": (
            _gate(
                "sglang>=0.5.1",
                80,
                HALF,
                "Mxfp4Config.get_min_capability `return 80`, get_supported_act_dtypes `[torch.bfloat16, "
                "torch.float16]` (mxfp4.py of 0.5.1, 0.5.5, 0.5.10, 0.5.15, 0.5.20, 0.5.23)",
            ),
        ),
    }
)
GATES = MappingProxyType({"vllm": VLLM_GATES, "sglang": SGLANG_GATES})


def gate_for(engine: str, method: str, version: Optional[str]) -> tuple[Optional[QuantGate], bool]:
    """(the gate holding `version`, whether the method is known here). No version: the newest range."""
    gates = GATES[engine].get(method)
    if gates is None:
        return None, False
    if version is None:
        return gates[-1], True
    return next((g for g in gates if g.releases.contains(version)), None), True
