"""Fixtures for rules/checks/general.py."""

from tests.rule_fixtures.install import on
from tests.rule_fixtures.model_specific import model_dir

LLAMA = ["--model", "llama-3.1-8b"]
FLASHINFER = [*LLAMA, "--attention-backend", "flashinfer"]
# a diffusion LLM by its hub id (not in the Hugging Face cache here: the dLLM rule reads the flags only)
LLADA2 = ["sglang", "serve", "--model-path", "inclusionAI/LLaDA2.0-mini"]
DLLM_LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path"]
LLAMA_DIR = "tests/fixtures/models/Llama-3.1-8B-Instruct"  # an autoregressive model

# three attention-DP ranks of two TP ranks each, page 16 (fa3 takes any page size)
DP3_PAGE16 = [
    "sglang",
    "serve",
    "--model-path",
    "llama-3.1-8b",
    "--tp-size",
    "6",
    "--attn-dp-size",
    "3",
    "--page-size",
    "16",
]

FIXTURES = {
    "general-score-mod-backend": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa4", "--feature", "score_mod"]},
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "triton", "--feature", "score_mod"]},
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "flashinfer"]},
        ],
        "fail": [
            # FlashInferAttnBackend.forward_extend has no score_mod parameter (flashinfer_backend.py:1357)
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "flashinfer", "--feature", "score_mod"]},
            # trtllm_mha takes **kwargs: the score_mod is dropped
            {"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "trtllm_mha", "--feature", "score_mod"]},
            {
                "gpu": "H100",
                "argv": [
                    *LLAMA,
                    "--feature",
                    "score_mod",
                    "--prefill-attention-backend",
                    "fa4",
                    "--decode-attention-backend",
                    "flashinfer",
                ],
            },
        ],
    },
    "general-backend-platform": {
        "pass": [{"gpu": "H100", "argv": ["--attention-backend", "flashinfer"]}],
        "fail": [
            {"gpu": "H100", "argv": ["--attention-backend", "aiter"]},
            {"gpu": "B200", "argv": ["--attention-backend", "intel_xpu"]},
            {"gpu": "H100", "argv": ["--attention-backend", "ascend"], "engine_version": ["sglang==0.5.1"]},
        ],
    },
    "general-backend-removed": {
        "pass": [
            {"gpu": "B200", "argv": ["--model", "deepseek-v3", "--attention-backend", "trtllm_mla"]},
            # sglang 0.5.1's ATTN_BACKENDS (server_args.py add_cli_args) lists fa3 and cutlass_mla, not fa4
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa3"], "engine_version": ["sglang==0.5.1"]},
            {
                "gpu": "B200",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "cutlass_mla"],
                "engine_version": ["sglang==0.5.19"],
            },
            # fa4 is a choice from 0.5.3 (ATTENTION_BACKEND_CHOICES), a .postN uses its release's list
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa4"], "engine_version": ["sglang==0.5.3.post1"]},
        ],
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "fa4"], "engine_version": ["sglang==0.5.1"]},
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--prefill-attention-backend", "fa4", "--decode-attention-backend", "fa3"],
                "engine_version": ["sglang==0.5.2"],
            },
            # --mm-attention-backend fa4 is a choice from 0.5.9
            {
                "gpu": "H100",
                "argv": ["--model", "gemma-3-27b", "--mm-attention-backend", "fa4"],
                "engine_version": ["sglang==0.5.8"],
            },
            {"gpu": "B200", "argv": ["--model", "deepseek-v3", "--attention-backend", "cutlass_mla"]},
            {
                "gpu": "H100",
                "argv": [*LLAMA, "--attention-backend", "dual_chunk_flash_attn"],
                "engine_version": ["sglang==0.5.23"],
            },
        ],
    },
    "general-backend-alias": {
        "pass": [
            {"gpu": "B200", "argv": ["--model", "deepseek-v3", "--attention-backend", "cutedsl_mla"]},
            # tokenspeed_mla became an alias of cutedsl_mla in 0.5.23; before, it was its own backend
            {
                "gpu": "B200",
                "argv": ["--model", "deepseek-v3", "--decode-attention-backend", "tokenspeed_mla"],
                "engine_version": ["sglang==0.5.22"],
            },
            # before 0.5.13 nsa is the DeepSeek sparse backend itself (no dsa to prefer)
            {
                "gpu": "H200",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "nsa"],
                "engine_version": ["sglang==0.5.12"],
            },
        ],
        "fail": [
            {
                "gpu": "B200",
                "argv": ["--model", "deepseek-v3", "--decode-attention-backend", "tokenspeed_mla"],
                "expect": "warn",
            },
            {
                "gpu": "H200",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "nsa"],
                "engine_version": ["sglang==0.5.13"],
                "expect": "warn",
            },
            # compressed is an alias of dsv4 from 0.5.12, the range's start
            {
                "gpu": "H200",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "compressed"],
                "engine_version": ["sglang==0.5.12"],
                "expect": "warn",
            },
        ],
    },
    "general-flashattention-version-env": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "fa3",
                ],
            }
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_FLASHATTENTION_VERSION=4",
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "gemma-3-27b",
                ],
                "expect": "warn",
            }
        ],
    },
    "general-triton-cross-attention": {
        "pass": [{"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "triton"]}],
        "fail": [
            {"gpu": "A100", "argv": ["--model", "llama-3.2-11b-vision", "--attention-backend", "triton"]},
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "triton", "--feature", "cross_attention"]},
        ],
    },
    "hpc-ops-arch": {
        "pass": [{"gpu": "H800", "argv": [*LLAMA, "--attention-backend", "hpc_ops", "--page-size", "64"]}],
        "fail": [{"gpu": "B200", "argv": [*LLAMA, "--attention-backend", "hpc_ops", "--page-size", "64"]}],
    },
    "hpc-ops-model": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops"]}],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "deepseek-v3", "--attention-backend", "hpc_ops"]},
            {"gpu": "H100", "argv": ["--model", "llama-3.2-11b-vision", "--attention-backend", "hpc_ops"]},
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops", "--speculative-algorithm", "EAGLE"]},
        ],
    },
    "llada2-cfg-mha-model": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "llada2_cfg_flashinfer"]}],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "deepseek-v3", "--attention-backend", "llada2_cfg_flashinfer"]},
            {
                "gpu": "H100",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "llada2_cfg_flashinfer"],
                "engine_version": ["sglang==0.5.22"],
            },
        ],
    },
    "hpc-ops-shapes": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops"]},
            {
                "gpu": "H100",
                "argv": [
                    "--model",
                    "llama-3.1-70b",
                    "--attention-backend",
                    "hpc_ops",
                    "--tp-size",
                    "8",
                    "--kv-cache-dtype",
                    "fp8_e4m3",
                ],
            },
        ],
        "fail": [
            # Qwen2.5-7B: 28 query heads over 4 KV heads, a GQA group of 7
            {"gpu": "H100", "argv": ["--model", "qwen2.5-7b", "--attention-backend", "hpc_ops"]},
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops", "--kv-cache-dtype", "fp8_e4m3"]},
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops", "--kv-cache-dtype", "fp8_e5m2"]},
        ],
    },
    "hpc-ops-sliding-window": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops"]}],
        "fail": [{"gpu": "H100", "argv": ["--model", "gemma-2-9b", "--attention-backend", "hpc_ops"]}],
    },
    "hpc-ops-page-size": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops", "--page-size", "64"]}],
        "fail": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "hpc_ops"], "expect": "warn"}],
    },
    "general-model-config": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"]},
            {"gpu": "H100", "argv": ["--model", "attn-preflight-tests/llama-3.1-8b-copy"]},  # the test hub cache
            {"gpu": "H100", "argv": [], "command": ["vllm", "serve", "deepseek-ai/DeepSeek-V3"]},  # a preset's hub id
        ],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "Qwen/Qwen2.5-14B-Instruct"], "expect": "warn"},
            {
                "gpu": "B200",
                "command": ["python", "-m", "sglang.launch_server", "--model-path", "someone/fine-tune"],
                "expect": "warn",
            },
        ],
    },
    "general-engine-version": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"], "engine_version": ["sglang==0.5.23"]},
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"], "engine_version": ["sglang==0.5.23.post1"]},
            {
                "gpu": "H100",
                "argv": ["--engine", "vllm", "--model", "llama-3.1-8b"],
                "engine_version": ["vllm==0.20.0"],
            },
        ],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"], "engine_version": ["sglang==0.9.0"], "expect": "warn"},
            {
                "gpu": "H100",
                "argv": ["--engine", "vllm", "--model", "llama-3.1-8b"],
                "engine_version": ["vllm==0.40.0"],
                "expect": "warn",
            },
        ],
    },
    "general-flags-known": {
        "pass": [
            # --tp and --dp are unique prefixes of --tp-size and --dp-size (SGLang's docs launch with them)
            {"gpu": "H100", "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--tp", "1", "--dp", "1"]},
            {"gpu": "H100", "command": ["vllm", "serve", "llama-3.1-8b", "-tp", "1", "--block-size=16"]},
        ],
        "fail": [
            # split into --cuda-graph-max-bs-decode / -prefill in 0.5.20: ambiguous there
            {
                "gpu": "H100",
                "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--cuda-graph-max-bs", "8"],
                "engine_version": ["sglang==0.5.23"],
            },
            # --disable-log-requests left vLLM's frontend in 0.17.0
            {
                "gpu": "H100",
                "command": ["vllm", "serve", "llama-3.1-8b", "--disable-log-requests"],
                "engine_version": ["vllm==0.17.0"],
            },
        ],
    },
    "general-unmodelled-flags": {
        "pass": [
            {"gpu": "H100", "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--host", "0.0.0.0"]},
            {"gpu": "H100", "command": ["vllm", "serve", "llama-3.1-8b", "--port", "8000"]},
            # everyday flags whose effect the rules bound (flag_tables.ROUTINE_BEARING): listed, not warned
            {
                "gpu": "H100",
                "command": ["vllm", "serve", "llama-3.1-8b", "--enable-expert-parallel", "--max-num-seqs", "8"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--max-total-tokens", "100000"],
                "expect": "warn",
            },
            {
                "gpu": "H100",
                "command": ["vllm", "serve", "llama-3.1-8b", "--kv-cache-memory-bytes", "8000000000"],
                "expect": "warn",
            },
            {  # a hybrid Mamba model: --max-num-seqs above its Mamba cache blocks fails CUDA-graph capture
                "gpu": "H100",
                "command": ["vllm", "serve", "qwen3-next-80b-a3b", "--max-num-seqs", "8"],
                "expect": "warn",
            },
        ],
    },
    "general-tp-heads": {
        "pass": [
            {"gpu": "H100", "argv": [*LLAMA, "--tp-size", "8"]},
            {"gpu": "H100", "argv": ["--model", "qwen2.5-7b", "--tp", "2"]},
        ],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "qwen2.5-7b", "--tp", "8"]},
            {"gpu": "H100", "argv": ["--model", "llama-4-scout", "--tp-size", "16"]},
        ],
    },
    "flashinfer-arch": {
        "pass": [{"gpu": "T4", "argv": [*LLAMA, "--attention-backend", "flashinfer"]}],
        "fail": [{"gpu": "V100", "argv": [*LLAMA, "--attention-backend", "flashinfer"]}],
    },
    "flashinfer-fp8-kv-sm90": {
        "pass": [
            # sglang 0.5.7 pins flashinfer_python 0.5.3, whose tensor-core decode builds FA2 (decode.py:1026)
            {
                "gpu": "H100",
                "argv": [*FLASHINFER, "--kv-cache-dtype", "fp8_e4m3"],
                "engine_version": ["sglang==0.5.7"],
            },
            # flashinfer 0.6.4's auto sends a bf16 query over FP8 KV to FA2 (utils.py:411-417, PR #2536)
            {
                "gpu": "H200",
                "argv": [*FLASHINFER, "--kv-cache-dtype", "fp8_e5m2"],
                "engine_version": ["sglang==0.5.8", "flashinfer==0.6.4"],
            },
            # a probed machine: its flashinfer 0.7.2 runs, not the 0.6.1 sglang 0.5.8 pins
            on("h100-ok", *FLASHINFER, "--kv-cache-dtype", "fp8_e4m3", engine_version=["sglang==0.5.8"]),
            # should_use_tensor_core reads the variable first: "false" keeps FlashInfer's decode kernel
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_FLASHINFER_USE_TENSOR_CORE=false",
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "flashinfer",
                    "--kv-cache-dtype",
                    "fp8_e4m3",
                ],
                "engine_version": ["sglang==0.5.8"],
            },
        ],
        "fail": [
            # sglang 0.5.8 and 0.5.8.post1 pin flashinfer_python 0.6.1 (sglang#18135: its JIT cache 0.6.1/90a)
            {
                "gpu": "H100",
                "argv": [*FLASHINFER, "--kv-cache-dtype", "fp8_e4m3"],
                "engine_version": ["sglang==0.5.8"],
            },
            {
                "gpu": "H20",
                "argv": [*FLASHINFER, "--kv-cache-dtype", "fp8_e5m2"],
                "engine_version": ["sglang==0.5.8.post1"],
            },
            # flashinfer decode only, under another prefill backend
            {
                "gpu": "H200",
                "argv": [
                    *LLAMA,
                    "--prefill-attention-backend",
                    "fa3",
                    "--decode-attention-backend",
                    "flashinfer",
                    "--kv-cache-dtype",
                    "fp8_e4m3",
                ],
                "engine_version": ["sglang==0.5.8"],
            },
            # an older sglang over a newer flashinfer installed: 0.6.0-0.6.3 pick FA3 for tensor-core decode
            {
                "gpu": "H100",
                "argv": [*FLASHINFER, "--kv-cache-dtype", "fp8_e4m3"],
                "engine_version": ["sglang==0.5.6", "flashinfer==0.6.3"],
            },
        ],
    },
    "general-chunked-prefill-page": {
        "pass": [
            {
                "gpu": "B200",
                "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--chunked-prefill-size", "8192"],
            },
            {
                "gpu": "H100",
                "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--chunked-prefill-size", "4000"],
            },
            {"gpu": "H100", "command": [*DP3_PAGE16, "--chunked-prefill-size", "8160"]},  # 2720 per rank
        ],
        "fail": [
            # SM100's default trtllm_mha forces page size 64 first
            {
                "gpu": "B200",
                "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--chunked-prefill-size", "4000"],
            },
            # attention DP divides the chunk first: 8192 / 3 = 2730 per rank, not a multiple of 16
            {"gpu": "H100", "command": [*DP3_PAGE16, "--chunked-prefill-size", "8192"]},
        ],
    },
    "general-cuda-graph-disabled": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "torch_native",
                    "--disable-cuda-graph",
                ],
            },
        ],
        "fail": [
            {"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "torch_native"], "expect": "warn"},
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "flex_attention"], "expect": "warn"},
            {  # server_args.py:445-449 in 0.5.1
                "gpu": "A100",
                "argv": [*LLAMA, "--attention-backend", "torch_native"],
                "engine_version": ["sglang==0.5.1"],
                "expect": "warn",
            },
        ],
    },
    "general-flex-cross-attention": {
        "pass": [{"gpu": "H100", "argv": [*LLAMA, "--attention-backend", "flex_attention"]}],
        "fail": [
            {"gpu": "H100", "argv": ["--model", "llama-3.2-11b-vision", "--attention-backend", "flex_attention"]},
            {"gpu": "A100", "argv": [*LLAMA, "--attention-backend", "flex_attention", "--feature", "cross_attention"]},
        ],
    },
    "general-mis-flashinfer": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--enable-mis",
                    "--attention-backend",
                    "flashinfer",
                ],
            },
        ],
        "fail": [
            # H100's default for Llama is fa3
            {"gpu": "H100", "command": ["sglang", "serve", "--model-path", "llama-3.1-8b", "--enable-mis"]},
            {
                "gpu": "A100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--enable-mis",
                    "--decode-attention-backend",
                    "triton",
                ],
                "engine_version": ["sglang==0.5.11"],
            },
        ],
    },
    "general-triton-dcp": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "llama-3.1-8b",
                    "--tp-size",
                    "2",
                    "--dcp-size",
                    "2",
                    "--attention-backend",
                    "triton",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "gpt-oss-20b",
                    "--tp-size",
                    "2",
                    "--dcp-size",
                    "2",
                    "--attention-backend",
                    "triton",
                ],
            },
            {
                "gpu": "A100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "gemma-3-27b",
                    "--tp-size",
                    "2",
                    "--dcp-size",
                    "2",
                    "--attention-backend",
                    "triton",
                ],
                "engine_version": ["sglang==0.5.15"],
            },
        ],
    },
    "general-dllm-backend": {
        "pass": [
            {"gpu": "H100", "command": [*LLADA2, "--dllm-algorithm", "LowConfidence"]},
            {
                "gpu": "H100",
                "command": [
                    *LLADA2,
                    "--dllm-algorithm",
                    "LowConfidence",
                    "--attention-backend",
                    "fa3",
                    "--disable-cuda-graph",
                ],
            },
            {"gpu": "B200", "command": [*LLADA2, "--dllm-algorithm", "Gemma4Renoise", "--attention-backend", "fa4"]},
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [*LLADA2, "--dllm-algorithm", "LowConfidence", "--attention-backend", "fa3"],
                "expect": "warn",
            },
            {
                "gpu": "B200",
                "command": [*LLADA2, "--dllm-algorithm", "Gemma4Renoise", "--attention-backend", "fa4"],
                "engine_version": ["sglang==0.5.21"],
                "expect": "warn",
            },
            {
                "gpu": "A100",
                "command": [*LLADA2, "--dllm-algorithm", "LowConfidence", "--attention-backend", "triton"],
                "engine_version": ["sglang==0.5.6.post2"],
                "expect": "warn",
            },
        ],
    },
    "general-dllm-architecture": {
        "pass": [
            {"gpu": "H100", "command": [*DLLM_LAUNCH, model_dir("llada2-mini"), "--dllm-algorithm", "LowConfidence"]},
            # DiffusionGemma is listed from 0.5.21 (dllm/config.py:47-53)
            {
                "gpu": "B200",
                "command": [*DLLM_LAUNCH, model_dir("diffusion-gemma"), "--dllm-algorithm", "Gemma4Renoise"],
                "engine_version": ["sglang==0.5.21"],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": [*DLLM_LAUNCH, LLAMA_DIR, "--dllm-algorithm", "LowConfidence"]},
            {
                "gpu": "B200",
                "command": [*DLLM_LAUNCH, model_dir("diffusion-gemma"), "--dllm-algorithm", "Gemma4Renoise"],
                "engine_version": ["sglang==0.5.20"],
            },
            # "DiffusionGemmaForBlockDiffusion requires the Gemma4Renoise diffusion algorithm" (dllm/config.py:77-81)
            {
                "gpu": "B200",
                "command": [*DLLM_LAUNCH, model_dir("diffusion-gemma"), "--dllm-algorithm", "LowConfidence"],
            },
            # "Gemma4Renoise does not support model architecture LLaDA2MoeModelLM" (dllm/config.py:82-88)
            {"gpu": "B200", "command": [*DLLM_LAUNCH, model_dir("llada2-mini"), "--dllm-algorithm", "Gemma4Renoise"]},
        ],
    },
    "general-dllm-algorithm": {
        "pass": [
            {"gpu": "H100", "command": [*DLLM_LAUNCH, model_dir("llada2-mini"), "--dllm-algorithm", "JointThreshold"]},
            {
                "gpu": "H100",
                "command": [*LLADA2, "--dllm-algorithm", "LowConfidence"],
                "engine_version": ["sglang==0.5.6"],
            },
        ],
        "fail": [
            # the names are the algorithm classes' own
            {"gpu": "H100", "command": [*LLADA2, "--dllm-algorithm", "low_confidence"]},
            # JointThreshold arrives in 0.5.9 (dllm/algorithm/joint_threshold.py)
            {
                "gpu": "H100",
                "command": [*LLADA2, "--dllm-algorithm", "JointThreshold"],
                "engine_version": ["sglang==0.5.8"],
            },
        ],
    },
    "general-dllm-page-size": {
        "pass": [
            {"gpu": "H100", "command": [*DLLM_LAUNCH, model_dir("llada2-mini"), "--dllm-algorithm", "LowConfidence"]},
            {
                "gpu": "H100",
                "command": [
                    *DLLM_LAUNCH,
                    model_dir("llada2-mini"),
                    "--dllm-algorithm",
                    "LowConfidence",
                    "--page-size",
                    "32",
                ],
            },
            # 0.5.10-0.5.14 cap a larger page only in the scheduler: with the radix cache off the engine keeps 64
            {
                "gpu": "H100",
                "command": [
                    *DLLM_LAUNCH,
                    model_dir("llada2-mini"),
                    "--dllm-algorithm",
                    "LowConfidence",
                    "--disable-radix-cache",
                    "--page-size",
                    "64",
                ],
                "engine_version": ["sglang==0.5.12"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    *DLLM_LAUNCH,
                    model_dir("llada2-mini"),
                    "--dllm-algorithm",
                    "LowConfidence",
                    "--page-size",
                    "16",
                ],
                "expect": "warn",
            },
            # from 0.5.15 a page larger than the block falls back to it, radix cache or not
            {
                "gpu": "H100",
                "command": [
                    *DLLM_LAUNCH,
                    model_dir("llada2-mini"),
                    "--dllm-algorithm",
                    "LowConfidence",
                    "--disable-radix-cache",
                    "--page-size",
                    "64",
                ],
                "engine_version": ["sglang==0.5.16"],
                "expect": "warn",
            },
            # DiffusionGemma's block is its canvas_length (64)
            {
                "gpu": "B200",
                "command": [
                    *DLLM_LAUNCH,
                    model_dir("diffusion-gemma"),
                    "--dllm-algorithm",
                    "Gemma4Renoise",
                    "--page-size",
                    "128",
                ],
                "expect": "warn",
            },
        ],
    },
}
