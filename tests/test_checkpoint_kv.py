"""The checkpoint's own KV quantization (issue 11 part 2): what config.json / hf_quant_config.json declare, and the
KV dtype vLLM runs for --kv-cache-dtype auto in each release. Expectations are vLLM's code as read in its wheels:
utils/torch_utils.py get_kv_cache_quant_algo_string (quant_method must start "modelopt"; a static 8-bit float
scheme is fp8; nvfp4 from 0.20.0), engine/arg_utils.py resolve_kv_cache_dtype_string (from 0.14.0, "auto"
only), transformers_utils/config.py (hf_quant_config.json when config.json has no quantization_config)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import check_json, finding
from packaging.version import Version

from attn_preflight.inputs import load_model
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.models import features_from_config
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.sglang.resolve import resolve
from attn_preflight.rules.engines.vllm.select import query, selected
from attn_preflight.rules.knowledge.checkpoint_kv import sglang_auto_kv_dtype, vllm_auto_kv_dtype

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DSR1_NVFP4 = FIXTURES / "incident-models" / "deepseek-r1-nvfp4"
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32}


def kv_quant(quantization_config):
    return features_from_config({**LLAMA, "quantization_config": quantization_config}, "m", "test").kv_quant


def resolved(quantization_config, release):
    return vllm_auto_kv_dtype(kv_quant(quantization_config), Version(release))


MODELOPT_FP8 = {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}
LEGACY_NVFP4 = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}


@pytest.mark.parametrize(
    "quantization_config, release, expected",
    [
        (MODELOPT_FP8, "0.13.0", None),  # no resolution before 0.14.0
        (MODELOPT_FP8, "0.14.0", "fp8_e4m3"),
        (MODELOPT_FP8, "0.33.0", "fp8_e4m3"),
        # the legacy file: vLLM sets quant_method from quant_algo (modelopt_fp4), which starts "modelopt"
        (LEGACY_NVFP4, "0.14.0", "fp8_e4m3"),
        ({**MODELOPT_FP8, "kv_cache_quant_algo": "NVFP4"}, "0.19.0", None),  # unknown then: "auto" with a warning
        ({**MODELOPT_FP8, "kv_cache_quant_algo": "NVFP4"}, "0.20.0", "nvfp4"),
        ({**MODELOPT_FP8, "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": False}}, "0.14.0", "fp8_e4m3"),
        ({**MODELOPT_FP8, "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": True}}, "0.33.0", None),
        (
            {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_scheme": {"type": "float", "num_bits": 4}},
            "0.19.0",
            None,
        ),
        (
            {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_scheme": {"type": "float", "num_bits": 4}},
            "0.20.0",
            "nvfp4",
        ),
        # compressed-tensors' kv_cache_scheme is not read by the resolver (quant_method is not modelopt)
        (
            {
                "quant_method": "compressed-tensors",
                "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": False},
            },
            "0.33.0",
            None,
        ),
        ({"quant_method": "modelopt", "quant_algo": "FP8"}, "0.33.0", None),  # weights only: the KV stays auto
    ],
)
def test_vllm_resolves_auto_from_the_checkpoint(quantization_config, release, expected):
    assert resolved(quantization_config, release) == expected


def test_a_scheme_wins_over_an_algo_as_vllm_reads_them():
    both = {**MODELOPT_FP8, "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": True}}
    assert kv_quant(both).algo is None  # the dynamic scheme is read, so vLLM falls back to auto
    assert resolved(both, "0.33.0") is None


def test_an_unquantized_checkpoint_declares_no_kv_quantization():
    assert features_from_config(LLAMA, "m", "test").kv_quant is None


def judged(model_dir, *flags, version="0.14.0", gpu="RTX PRO 6000"):
    argv = ["--gpu", gpu, "--engine-version", f"vllm=={version}", "--model", str(model_dir), "--", "vllm", "serve", "m"]
    run, report = check_json([*argv, *flags])
    assert run.code in (0, 1), run.err
    return report


def test_the_sidecar_file_decides_the_kv_dtype(tmp_path):
    with_sidecar = judged(DSR1_NVFP4, "--attention-backend", "TRITON_MLA")
    assert with_sidecar["config"]["kv_cache_dtype"] == "fp8_e4m3"
    finding = next(f for f in with_sidecar["findings"] if f["rule_id"] == "vllm-kv-cache-dtype")
    assert finding["status"] == "fail" and "checkpoint's kv_cache_quant_algo 'FP8'" in finding["message"]

    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(DSR1_NVFP4 / "config.json", bare / "config.json")
    without = judged(bare, "--attention-backend", "TRITON_MLA")
    assert without["config"]["kv_cache_dtype"] == "auto"
    assert next(f for f in without["findings"] if f["rule_id"] == "vllm-kv-cache-dtype")["status"] == "pass"


def test_config_json_quantization_wins_over_the_sidecar(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    config = json.loads((DSR1_NVFP4 / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "modelopt", "quant_algo": "NVFP4"}  # no KV quantization
    (model / "config.json").write_text(json.dumps(config))
    shutil.copy(DSR1_NVFP4 / "hf_quant_config.json", model / "hf_quant_config.json")
    assert judged(model, "--attention-backend", "TRITON_MLA")["config"]["kv_cache_dtype"] == "auto"


def test_a_named_kv_dtype_is_not_resolved():
    report = judged(DSR1_NVFP4, "--attention-backend", "TRITON_MLA", "--kv-cache-dtype", "fp8_e5m2")
    assert report["config"]["kv_cache_dtype"] == "fp8_e5m2"
    assert not report["config"]["rewritten_by_engine"]


def test_vllm_0_14_finds_no_mla_backend_for_the_nvfp4_checkpoint_on_sm120():
    """vllm#32732 (0.14.0, DeepSeek-R1-0528-NVFP4, RTX PRO 6000): with auto resolved to the checkpoint's FP8,
    vLLM's SM12x MLA list has no backend left ("No valid attention backend found"); with the model's own dtype it
    has (TRITON_MLA, whose supported_kv_cache_dtypes are ["auto"] in 0.14.0: mla/triton_mla.py:31)."""
    target = Target.from_gpu("RTX PRO 6000").with_engine_versions({"vllm": "0.14.0"})
    config = resolve(Config(engine="vllm", model=load_model(str(DSR1_NVFP4))), target)
    assert config.kv_cache_dtype == "fp8_e4m3"
    assert selected(query(config, target), target).chosen is None
    before = target.with_engine_versions({"vllm": "0.13.0"})
    assert resolve(Config(engine="vllm", model=load_model(str(DSR1_NVFP4))), before).kv_cache_dtype == "auto"


@pytest.mark.parametrize(
    "quantization_config, release, expected",
    [
        (LEGACY_NVFP4, "0.5.8", None),  # the pool is FP8 there, but server_args stays "auto" for the backends
        (LEGACY_NVFP4, "0.5.9", "fp8_e4m3"),  # model_runner.py:1679 writes it back before the backends
        ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}, "0.5.14", None),
        ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}, "0.5.15", "fp8_e4m3"),
        # SGLang reads a float 8-bit scheme as FP8 whether dynamic or not
        (
            {
                "quant_method": "modelopt",
                "quant_algo": "FP8",
                "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": True},
            },
            "0.5.23",
            "fp8_e4m3",
        ),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "NVFP4"}, "0.5.23", None),
        ({"quant_method": "compressed-tensors", "kv_cache_scheme": {"type": "float", "num_bits": 8}}, "0.5.23", None),
    ],
)
def test_sglang_backends_run_the_checkpoints_fp8(quantization_config, release, expected):
    assert sglang_auto_kv_dtype(kv_quant(quantization_config), Version(release)) == expected


MODELOPT_FP8_KV = FIXTURES / "models" / "synthetic-modelopt-fp8-kv"


@pytest.mark.parametrize(
    "argv, rule, too_small",
    [
        (
            ["--engine-version", "vllm==0.33.0", "--", "vllm", "serve", "m", "--max-model-len", "131072"],
            "vllm-memory-kv-context",
            "fail",  # vLLM refuses to start
        ),
        # SGLang starts and refuses the request; its pool is sized from the memory free at init, a 98304-token
        # request fits the FP8 pool there (~125k tokens) and not the BF16 one (~63k)
        (["--engine-version", "sglang==0.5.23", "--context-length", "98304"], "memory-kv-context", "warn"),
    ],
)
def test_the_kv_pool_is_sized_in_the_checkpoints_dtype(argv, rule, too_small):
    """Llama-3.1-8B's 32 layers x 8 KV heads x (128 + 128) take 64 KiB a token in FP8, 128 KiB in BF16: on an L4
    (24 GiB) a long request (131072 tokens for vLLM, 98304 for SGLang) fits only in the FP8 pool that auto gets from
    this checkpoint."""
    head, tail = (argv, []) if "--" not in argv else (argv[: argv.index("--")], argv[argv.index("--") :])
    base = ["--gpu", "L4", "--model", str(MODELOPT_FP8_KV), *head]
    run, auto = check_json([*base, *tail])
    assert run.code in (0, 1), run.err
    assert finding(auto, rule)["status"] == "pass"
    named = [*tail, "--kv-cache-dtype", "bfloat16"] if tail else ["--kv-cache-dtype", "bf16"]
    run, bf16 = check_json([*base, *named])
    assert finding(bf16, rule)["status"] == too_small
