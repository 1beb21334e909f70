"""Fixtures for rules/engines/sglang/rules/dsa.py. No preset has learnable DSA sinks or is DeepSeek-V4, so two config.json
excerpts are written once to a temporary directory: DeepSeek-V3.2-Exp's attention fields with
`learnable_sink: true`, and a DeepseekV4ForCausalLM architecture (the rule reads only that)."""

from attn_preflight.rules.core.models import presets
from tests.rule_fixtures import written_model
from tests.rule_fixtures.model_specific import case

DSA = ("--model", "deepseek-v3.2-exp")
DSA_SINKS = (
    "--model",
    written_model("dsa-sinks", {**presets()["deepseek-v3.2-exp"]["config"], "learnable_sink": True}),
)
DSV4 = ("--model", written_model("dsv4", {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4"}))
# the real checkpoint's config.json (tests/fixtures/models/README.md)
DSV4_FLASH = ("--model", "tests/fixtures/models/DeepSeek-V4-Flash-Base")
DSV4_EAGLE_TOPK1 = (
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-steps",
    "3",
    "--speculative-num-draft-tokens",
    "4",
)
M3 = ("--model", "tests/fixtures/models/synthetic-minimax-m3")
DSV41 = ("--model", written_model("dsv41", {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v41"}))
# HYV4: synthetic, DeepSeek-V3.2-Exp's attention fields under the HYV4ForCausalLM architecture (the rule reads that)
HYV4 = (
    "--model",
    written_model("hyv4", {**presets()["deepseek-v3.2-exp"]["config"], "architectures": ["HYV4ForCausalLM"]}),
)
# DSA index-topk sharing, one config field each (sglang model_config.py is_dsa_shared_topk_layer)
DSA_TOPK_FREQ = (
    "--model",
    written_model("dsa-topk-freq", {**presets()["deepseek-v3.2-exp"]["config"], "index_topk_freq": 2}),
)
DSA_TOPK_PATTERN = (
    "--model",
    written_model("dsa-topk-pattern", {**presets()["deepseek-v3.2-exp"]["config"], "index_topk_pattern": "FSFS"}),
)
DSA_SHARED_INDEXER = (
    "--model",
    written_model(
        "dsa-shared-indexer", {**presets()["deepseek-v3.2-exp"]["config"], "indexer_types": ["full", "shared"]}
    ),
)
DSA_KPOOL = ("--model", written_model("dsa-kpool", {**presets()["deepseek-v3.2-exp"]["config"], "index_kpool": 2}))
# A PD prefill worker sharding DeepSeek-V3.2's KV over 8 interleaved prefill-CP ranks on Blackwell (trtllm DSA and
# fp8_e4m3 are SGLang's defaults there)
# a DSA prefill worker splitting its cache by layer over 8 interleaved prefill-CP ranks
LAYER_SPLIT = (
    "--enable-dsa-cache-layer-split",
    "--disaggregation-mode",
    "prefill",
    "--tp-size",
    "8",
    "--enable-prefill-cp",
    "--cp-strategy",
    "interleave",
)
SHARDED_PREFILL = (
    "--enable-kv-cache-sharding",
    "--disaggregation-mode",
    "prefill",
    "--tp-size",
    "8",
    "--enable-prefill-cp",
    "--cp-strategy",
    "interleave",
)


def launch(gpu: str, model: tuple[str, str], *flags: str) -> dict:
    """A pasted `sglang.launch_server` line: the DSA flags are SGLang's, not check's own options."""
    return {"gpu": gpu, "command": ["python", "-m", "sglang.launch_server", "--model-path", model[1], *flags]}


FIXTURES = {
    "dsa-backend-choice": {
        "pass": [
            {**launch("H200", DSA, "--dsa-decode-backend", "flashmla_kv"), "engine_version": ["sglang==0.5.16"]},
            launch("B200", DSA, "--dsa-prefill-backend", "flashinfer_sparse_mla"),
        ],
        "fail": [
            {**launch("H200", DSA, "--dsa-prefill-backend", "triton"), "engine_version": ["sglang==0.5.16"]},
            {
                **launch("B200", DSA, "--dsa-decode-backend", "flashinfer_sparse_mla"),
                "engine_version": ["sglang==0.5.16"],
            },
        ],
    },
    "dsa-kv-cache-dtype": {
        "pass": [case("H200", *DSA, "--kv-cache-dtype", "bf16"), case("B200", *DSA)],
        "fail": [
            case("H200", *DSA, "--kv-cache-dtype", "fp8_e5m2"),
            # 0.5.5 asserts it for DeepseekV32ForCausalLM; 0.5.6-0.5.11 leave that architecture off the DSA path
            case("B200", *DSA, "--kv-cache-dtype", "fp8_e5m2", engine_version=["sglang==0.5.5"]),
        ],
    },
    "dsa-learnable-sink-kv": {
        "pass": [case("B200", *DSA_SINKS)],
        "fail": [case("B200", *DSA_SINKS, "--kv-cache-dtype", "fp8_e4m3")],
    },
    "dsa-learnable-sink-backend": {
        "pass": [launch("H200", DSA_SINKS, "--dsa-decode-backend", "flashmla_sparse")],
        "fail": [launch("H200", DSA_SINKS, "--dsa-prefill-backend", "flashmla_kv")],
    },
    "dsa-rocm-only-backend": {
        "pass": [launch("H200", DSA, "--dsa-prefill-backend", "flashmla_kv")],
        "fail": [launch("B200", DSA, "--dsa-decode-backend", "triton")],
    },
    "dsa-tilelang-fp8-kv": {
        "pass": [
            launch("B200", DSA, "--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"),
            launch("H200", DSA, "--dsa-prefill-backend", "tilelang"),
        ],
        "fail": [
            launch("B200", DSA, "--dsa-prefill-backend", "tilelang"),
            launch(
                "A100",
                DSA,
                "--kv-cache-dtype",
                "fp8_e4m3",
                "--dsa-prefill-backend",
                "tilelang",
                "--dsa-decode-backend",
                "tilelang",
            ),
        ],
    },
    "dsa-hisparse": {
        "pass": [
            launch("B200", DSA, "--enable-hisparse"),
            launch(
                "H200", DSA, "--enable-hisparse", "--kv-cache-dtype", "fp8_e4m3", "--dsa-decode-backend", "flashmla_kv"
            ),
        ],
        "fail": [
            launch("H200", DSA, "--enable-hisparse", "--dsa-decode-backend", "flashmla_kv"),
            launch("H200", DSA, "--enable-hisparse", "--kv-cache-dtype", "fp8_e5m2"),
        ],
    },
    "dsa-tilelang-cuda-fp8-kv": {
        "pass": [
            {**launch("H200", DSA, "--dsa-decode-backend", "tilelang"), "engine_version": ["sglang==0.5.18"]},
            {
                **launch("B200", DSA, "--dsa-decode-backend", "tilelang", "--kv-cache-dtype", "bfloat16"),
                "engine_version": ["sglang==0.5.20"],
            },
        ],
        "fail": [
            {**launch("B200", DSA, "--dsa-decode-backend", "tilelang"), "engine_version": ["sglang==0.5.20"]},
            {
                **launch("H200", DSA, "--dsa-prefill-backend", "tilelang", "--kv-cache-dtype", "fp8_e4m3"),
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
    "dsa-hisparse-serving": {
        "pass": [
            launch("H200", DSA, "--enable-hisparse", "--disable-radix-cache"),
            launch("B200", DSV4, "--enable-hisparse", "--disable-radix-cache"),
            launch("B200", M3, "--enable-hisparse", "--disable-radix-cache"),
            launch(
                "H200", DSA, "--enable-hisparse", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1"
            ),
            # the feature checks come in 0.5.22 (hisparse_hook.py:80-85)
            {**launch("H200", DSA, "--enable-hisparse", "--enable-mixed-chunk"), "engine_version": ["sglang==0.5.21"]},
            # is_deepseek_nsa admits DeepSeek-V3.2 in 0.5.10, though the model adjustments keep it off the DSA path
            # (server_args.py:6180-6186; the 0.5.10 oracle accepts it)
            {**launch("B200", DSA, "--enable-hisparse", "--disable-radix-cache"), "engine_version": ["sglang==0.5.10"]},
        ],
        "fail": [
            launch("H200", ("--model", "llama-3.1-8b"), "--enable-hisparse", "--disable-radix-cache"),
            # MiniMax-M3 is served from 0.5.21 (hisparse_hook.py:93-98)
            {**launch("B200", M3, "--enable-hisparse"), "engine_version": ["sglang==0.5.20"]},
            launch("H200", DSA, "--enable-hisparse", "--enable-mixed-chunk"),
            launch(
                "H200", DSA, "--enable-hisparse", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2"
            ),
            launch("H200", DSA, "--enable-hisparse", "--speculative-algorithm", "EAGLE", "--speculative-adaptive"),
        ],
    },
    "dsa-hisparse-radix-cache": {
        "pass": [
            launch("B200", DSA, "--enable-hisparse", "--disable-radix-cache"),
            launch("H200", DSA, "--enable-hisparse", "--disable-radix-cache", "--kv-cache-dtype", "bfloat16"),
        ],
        "fail": [
            launch("B200", DSA, "--enable-hisparse"),
            launch("H200", DSA, "--enable-hisparse", "--kv-cache-dtype", "bfloat16"),
        ],
    },
    "dsa-tbo-index-sharing": {
        "pass": [
            launch("H200", DSA, "--enable-two-batch-overlap"),
            # indexer_types is read from 0.5.20 (model_hook.py:55)
            {**launch("H200", DSA_SHARED_INDEXER, "--enable-two-batch-overlap"), "engine_version": ["sglang==0.5.19"]},
        ],
        "fail": [
            launch("H200", DSA_TOPK_FREQ, "--enable-two-batch-overlap"),
            launch("H200", DSA_TOPK_PATTERN, "--enable-two-batch-overlap"),
            launch("H200", DSA_SHARED_INDEXER, "--enable-two-batch-overlap"),
        ],
    },
    "dsv4-kv-cache-dtype": {
        "pass": [
            case("B200", *DSV4),
            case("B200", *DSV4, "--kv-cache-dtype", "bfloat16"),
            # bfloat16 is kept from 0.5.14 (deepseek_v4_hook.py:37-40)
            case("H200", *DSV4, "--kv-cache-dtype", "bfloat16", engine_version=["sglang==0.5.14"]),
        ],
        "fail": [
            case("B200", *DSV4, "--kv-cache-dtype", "bf16"),
            # 0.5.12-0.5.13.post1 keep fp8_e4m3 only (deepseek_v4_hook.py:32-34)
            case("H200", *DSV4, "--kv-cache-dtype", "bfloat16", engine_version=["sglang==0.5.13.post1"]),
        ],
    },
    "dsv4-backend-override": {
        "pass": [
            launch("H200", DSV4_FLASH, "--tp", "8"),
            launch("B200", DSV4_FLASH, "--tp", "8", "--attention-backend", "dsv4", "--page-size", "256"),
        ],
        "fail": [
            {**launch("H200", DSV4_FLASH, "--tp", "8", "--attention-backend", "fa3"), "expect": "warn"},
            {**launch("B200", DSV4_FLASH, "--tp", "8", "--page-size", "64"), "expect": "warn"},
            # 0.5.12 assigns them in apply_deepseek_v4_defaults (deepseek_v4_hook.py:15-16)
            {
                **launch("H200", DSV4_FLASH, "--tp", "8", "--attention-backend", "flashinfer"),
                "engine_version": ["sglang==0.5.12"],
                "expect": "warn",
            },
        ],
    },
    "dsv4-speculative": {
        "pass": [
            launch("H200", DSV4_FLASH, "--tp", "8", "--speculative-algorithm", "EAGLE", *DSV4_EAGLE_TOPK1),
            # DSPARK is kept from 0.5.16 (deepseek_v4_hook.py:55-59)
            {
                **launch("B200", DSV4_FLASH, "--tp", "8", "--speculative-algorithm", "DSPARK"),
                "engine_version": ["sglang==0.5.16"],
            },
        ],
        "fail": [
            # no top-k given: SGLang has not filled it in yet (oracle 0.5.23: refused)
            launch("H200", DSV4_FLASH, "--tp", "8", "--speculative-algorithm", "EAGLE"),
            launch("H200", DSV4_FLASH, "--tp", "8", "--speculative-algorithm", "NEXTN"),
            {
                **launch("B200", DSV4_FLASH, "--tp", "8", "--speculative-algorithm", "DSPARK"),
                "engine_version": ["sglang==0.5.15"],
            },
        ],
    },
    "dsv4-attn-backend": {
        "pass": [
            launch("B200", DSV4, "--dsv4-attn-backend", "trtllm"),
            launch("B200", DSV41, "--dsv4-attn-backend", "flashmla_mega"),
        ],
        "fail": [
            launch("H200", DSV4, "--dsv4-attn-backend", "trtllm"),
            launch("B200", DSV4, "--dsv4-attn-backend", "trtllm", "--kv-cache-dtype", "bfloat16", "--dcp-size", "2"),
            launch("B200", DSV4, "--dsv4-attn-backend", "flashmla_mega"),
            # 0.5.20+: prefill CP is --enable-prefill-cp (deepseek_v4_hook.py:115-120 in 0.5.23)
            launch("B200", DSV4, "--dsv4-attn-backend", "trtllm", "--enable-prefill-cp", "--cp-strategy", "interleave"),
            # "--dsv4-attn-backend trtllm does not support PD disaggregation yet" (deepseek_v4_hook.py:123-126)
            launch("B200", DSV4, "--dsv4-attn-backend", "trtllm", "--disaggregation-mode", "decode"),
        ],
    },
    "dsv4-encoder-swa-replay-model": {
        "pass": [
            launch("B200", DSV41, "--enable-encoder-swa-bounded-replay"),
            # 0.5.21-0.5.22 check the flag for DeepseekV4ForCausalLM only
            {**launch("H200", DSA, "--enable-encoder-swa-bounded-replay"), "engine_version": ["sglang==0.5.22"]},
        ],
        "fail": [
            launch("B200", DSV4, "--enable-encoder-swa-bounded-replay"),
            {**launch("B200", DSV4, "--enable-encoder-swa-bounded-replay"), "engine_version": ["sglang==0.5.21"]},
            # 0.5.23: handle_model_capability_adjustments refuses it for any model but DeepSeek-V4.1
            launch("H200", DSA, "--enable-encoder-swa-bounded-replay"),
        ],
    },
    "dsv4-fp4-indexer-gpu": {
        "pass": [
            launch("B200", DSV4, "--enable-deepseek-v4-fp4-indexer"),
            launch("RTX PRO 6000", DSV4, "--enable-deepseek-v4-fp4-indexer"),
            {**launch("B200", DSV4, "--enable-deepseek-v4-fp4-indexer"), "engine_version": ["sglang==0.5.13"]},
        ],
        "fail": [
            launch("H200", DSV4, "--enable-deepseek-v4-fp4-indexer"),
            # SM120 from 0.5.18 only
            {**launch("RTX PRO 6000", DSV4, "--enable-deepseek-v4-fp4-indexer"), "engine_version": ["sglang==0.5.17"]},
        ],
    },
    "dsv4-prefill-cp-strategy": {
        "pass": [
            launch("B200", DSV4, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "interleave"),
            # 0.5.16: the legacy DSA flag's mode defaults to round-robin-split (interleave)
            {
                **launch("H200", DSV4, "--tp", "8", "--enable-nsa-prefill-context-parallel"),
                "engine_version": ["sglang==0.5.16"],
            },
            {
                **launch("H200", DSV4, "--tp", "8", "--enable-nsa-prefill-context-parallel"),
                "engine_version": ["sglang==0.5.12"],
            },
        ],
        "fail": [
            launch("B200", DSV4, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "zigzag"),
            # no --cp-strategy: "DeepSeekV4 only supports interleave/zigzag CP strategy, got None"
            launch("H200", DSV4, "--tp", "8", "--enable-prefill-cp"),
            # 0.5.16: --enable-prefill-context-parallel's mode defaults to in-seq-split (zigzag)
            {
                **launch("H200", DSV4, "--tp", "8", "--enable-prefill-context-parallel"),
                "engine_version": ["sglang==0.5.16"],
            },
            {
                **launch(
                    "H200",
                    DSV4,
                    "--tp",
                    "8",
                    "--enable-nsa-prefill-context-parallel",
                    "--nsa-prefill-cp-mode",
                    "in-seq-split",
                ),
                "engine_version": ["sglang==0.5.12"],
            },
        ],
    },
    "dsa-cache-layer-split": {
        "pass": [launch("B200", DSA, *LAYER_SPLIT)],
        "fail": [
            launch("B200", ("--model", "llama-3.1-8b"), *LAYER_SPLIT),
            launch("B200", DSA, *LAYER_SPLIT[:1], *LAYER_SPLIT[3:]),  # not disaggregated
            launch("B200", DSA, *LAYER_SPLIT[:5]),  # no prefill CP
            launch("B200", DSA, *LAYER_SPLIT, "--disaggregation-transfer-backend", "nixl"),
            launch("B200", DSA, *LAYER_SPLIT, "--pp-size", "2"),
        ],
    },
    "kv-sharding-dsa": {
        "pass": [
            launch("B200", DSA, *SHARDED_PREFILL),
            launch("B200", DSA, *SHARDED_PREFILL, "--dsa-prefill-backend", "trtllm", "--kv-cache-dtype", "fp8_e4m3"),
        ],
        "fail": [
            launch("B200", DSA, *SHARDED_PREFILL[:5]),  # no prefill CP
            launch("B200", DSA, *SHARDED_PREFILL, "--kv-cache-dtype", "bfloat16"),
            launch("H200", DSA, *SHARDED_PREFILL),  # Hopper's fp8_e4m3 DSA default is flashmla_kv
            launch("B200", DSA, *SHARDED_PREFILL, "--disaggregation-transfer-backend", "nixl"),
            launch("B200", DSA_KPOOL, *SHARDED_PREFILL),
            launch("B200", DSA, *SHARDED_PREFILL, "--attention-backend", "flashinfer"),
        ],
    },
    "model-hyv4-context-parallel": {
        "pass": [launch("H200", HYV4, "--tp-size", "8"), launch("H200", HYV4, "--tp-size", "8", "--dcp-size", "1")],
        "fail": [
            launch("H200", HYV4, "--tp-size", "8", "--enable-prefill-cp", "--cp-strategy", "interleave"),
            launch("H200", HYV4, "--tp-size", "8", "--dcp-size", "2"),
        ],
    },
    "dsa-dcp": {
        "pass": [
            launch("H200", DSA, "--tp-size", "8", "--dcp-size", "8"),
            launch("B200", DSA, "--tp-size", "8", "--dcp-size", "2", "--speculative-eagle-topk", "1"),
        ],
        "fail": [
            launch("H200", DSA, "--tp-size", "8", "--dcp-size", "8", "--enable-hierarchical-cache"),
            launch("H200", DSA, "--tp-size", "8", "--dcp-size", "8", "--disaggregation-mode", "decode"),
            launch(
                "H200",
                DSA,
                "--tp-size",
                "8",
                "--dcp-size",
                "8",
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-eagle-topk",
                "4",
            ),
            launch("H200", DSA_KPOOL, "--tp-size", "8", "--dcp-size", "8"),
        ],
    },
    "dsa-prefill-cp-single-node": {
        "pass": [
            launch("H200", DSA, "--tp-size", "8", "--enable-prefill-cp", "--cp-strategy", "interleave"),
            launch("H200", DSA, "--tp-size", "4", "--enable-prefill-cp", "--cp-strategy", "zigzag"),
        ],
        "fail": [
            launch("H200", DSA, "--tp-size", "16", "--enable-prefill-cp", "--cp-strategy", "interleave"),
            {  # 0.5.13: --enable-dsa-prefill-context-parallel (server_args.py:1901-1903)
                **launch("H200", DSA, "--tp-size", "16", "--enable-dsa-prefill-context-parallel"),
                "engine_version": ["sglang==0.5.13"],
            },
        ],
    },
}
