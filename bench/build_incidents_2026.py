"""Builds tests/fixtures/incidents_2026.json (issue 21): each incident as read from its source, and the split."""

import hashlib
import json
from collections import Counter

INCIDENTS: list = []


def add(**k):
    INCIDENTS.append(k)


S26087 = "https://github.com/sgl-project/sglang/issues/26087"
Q26087 = "Image: `lmsysorg/sglang:v0.5.12-cu130` Model: `nvidia/GLM-5.1-NVFP4` ... I tested several DSA (NSA) backend combinations: flashmla_sparse, flashmla_kv, flashmla_auto, fa3, tilelang, aiter, trtllm. All of them fail during server startup before `/health` becomes ready. The common error is: RuntimeError: Assertion error (/deepgemm/csrc/apis/attention.hpp:219): Unsupported architecture"
E26087 = "RuntimeError: Assertion error (/deepgemm/csrc/apis/attention.hpp:219): Unsupported architecture"
base = "sglang serve --model-path nvidia/GLM-5.1-NVFP4 --tp 8 --quantization modelopt_fp4"
for name, extra in [
    ("default", ""),
    ("bf16kv", " --kv-cache-dtype bf16"),
    (
        "flashmla-sparse",
        " --kv-cache-dtype bf16 --nsa-prefill-backend flashmla_sparse --nsa-decode-backend flashmla_sparse",
    ),
    ("flashmla-kv", " --kv-cache-dtype fp8_e4m3 --nsa-prefill-backend flashmla_kv --nsa-decode-backend flashmla_kv"),
    ("fa3", " --kv-cache-dtype bf16 --nsa-prefill-backend fa3 --nsa-decode-backend fa3"),
    ("trtllm", " --kv-cache-dtype fp8_e4m3 --nsa-prefill-backend trtllm --nsa-decode-backend trtllm"),
]:
    add(
        id=f"sglang-26087-glm51-nvfp4-rtxpro6000-{name}",
        source=S26087,
        quote=Q26087,
        engine="sglang",
        version="0.5.12",
        version_basis="stated in the issue (image lmsysorg/sglang:v0.5.12-cu130, 2026-05-22)",
        gpu="RTX PRO 6000",
        command=base + extra,
        outcome="failed",
        model="incident-models/glm-5.1-nvfp4",
        error=E26087,
        stage="init",
        cls="dsa-sm12x",
        note="launch line reconstructed from the environment the issue lists (8x RTX PRO 6000, modelopt_fp4, the KV dtypes and DSA backends it tried; 0.5.12 names them --nsa-*)",
    )
add(
    id="sglang-29562-glm52-nvfp4-rtxpro6000-default",
    source="https://github.com/sgl-project/sglang/issues/29562",
    quote="sglang serve --model /data/models/nvidia/GLM-5.2-NVFP4 --tensor-parallel-size 8 --quantization modelopt_fp4 ... Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM12 device. Set DSA backends for fp8_e4m3 KV Cache: prefill=trtllm, decode=trtllm. ... tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture ... init_cuda_graphs",
    engine="sglang",
    version="0.5.13",
    version_basis="comment of 2026-06-28; its log lines ('Set DSA backends for fp8_e4m3 KV Cache', 'Use flashinfer_cutlass as MoE runner backend on SM120 for modelopt_fp4') first appear in the 0.5.13 wheel (server_args.py), 0.5.12 says 'Set NSA backends'; judged at 0.5.13, the earliest release that prints them",
    gpu="RTX PRO 6000",
    command="sglang serve --model /data/models/nvidia/GLM-5.2-NVFP4 --tensor-parallel-size 8 --quantization modelopt_fp4 --tool-call-parser glm47 --reasoning-parser glm45 --trust-remote-code --mem-fraction-static 0.8 --disable-shared-experts-fusion --disable-flashinfer-autotune",
    outcome="failed",
    model="incident-models/glm-5.2-nvfp4",
    error="tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture",
    stage="init",
    cls="dsa-sm12x",
)
add(
    id="vllm-46726-glm52-nvfp4-rtxpro6000-tp8",
    source="https://github.com/vllm-project/vllm/issues/46726",
    quote="version 0.23.1rc1.dev531+ga65f93fb2 ... non-default args: {'model': '/data/models/nvidia/GLM-5.2-NVFP4', 'quantization': 'modelopt_fp4', 'tensor_parallel_size': 8} ... vllm/utils/deep_gemm.py, line 562, in get_paged_mqa_logits_metadata ... RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/attention.hpp:219): Unsupported architecture",
    engine="vllm",
    version="0.23.1rc1",
    version_basis="stated in the log (nightly 0.23.1rc1.dev531, 2026-06-29)",
    gpu="RTX PRO 6000",
    command="vllm serve /data/models/nvidia/GLM-5.2-NVFP4 --quantization modelopt_fp4 --tensor-parallel-size 8",
    outcome="failed",
    model="incident-models/glm-5.2-nvfp4",
    error="RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/attention.hpp:219): Unsupported architecture",
    stage="init",
    cls="dsa-sm12x",
)
S40286 = "https://github.com/sgl-project/sglang/issues/40286"
B40286 = "stated in the issue (lmsysorg/sglang:v0.5.20-cu130 arm64, 'Reproduced on the latest release (v0.5.20)')"
add(
    id="sglang-40286-glm53flash-gb10-auto",
    source=S40286,
    quote="On SM121 (DGX Spark / GB10) no DSA attention backend is usable for GLM-5.3-Flash ... auto (`Set DSA backends for fp8_e4m3 KV Cache: prefill=trtllm, decode=trtllm`) | `tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at .../flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture`",
    engine="sglang",
    version="0.5.20",
    version_basis=B40286,
    gpu="GB10",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at .../flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture",
    stage="init",
    cls="dsa-sm12x",
    note="launch line reduced to the model; the issue's other flags (DFlash draft, TP) are not all given in the excerpt",
)
add(
    id="sglang-40286-glm53flash-gb10-tilelang-fp8",
    source=S40286,
    quote="`tilelang` + `--kv-cache-dtype fp8_e4m3` | `ValueError: The tilelang DSA prefill/decode kernels only support an fp8_e4m3 KV cache on ROCm/HIP; on CUDA they require a bfloat16 KV cache.`",
    engine="sglang",
    version="0.5.20",
    version_basis=B40286,
    gpu="GB10",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash --dsa-prefill-backend tilelang --dsa-decode-backend tilelang --kv-cache-dtype fp8_e4m3",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="ValueError: The tilelang DSA prefill/decode kernels only support an fp8_e4m3 KV cache on ROCm/HIP; on CUDA they require a bfloat16 KV cache.",
    stage="config",
    cls="dsa-sm12x",
)
add(
    id="sglang-40286-glm53flash-gb10-tilelang-bf16",
    source=S40286,
    quote="[Bug] GLM-5.3-Flash has no usable DSA attention backend on SM121 (DGX Spark): trtllm SM100-only, tilelang exceeds dynamic smem, triton ROCm-only, flashinfer_sparse_mla gated to GlmMoeDsa archs ... Every `--dsa-{prefill,decode}-backend` choice available on CUDA fails",
    engine="sglang",
    version="0.5.20",
    version_basis=B40286,
    gpu="GB10",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash --dsa-prefill-backend tilelang --dsa-decode-backend tilelang --kv-cache-dtype bfloat16",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="tilelang exceeds dynamic smem (sglang#36507 on SM120: tvm.error.InternalError: Failed to set the allowed dynamic shared memory size to 169984)",
    stage="init",
    cls="dsa-sm12x",
)
add(
    id="sglang-40286-glm53flash-gb10-flashinfer-sparse-mla",
    source=S40286,
    quote="flashinfer_sparse_mla gated to GlmMoeDsa archs ... Every `--dsa-{prefill,decode}-backend` choice available on CUDA fails",
    engine="sglang",
    version="0.5.20",
    version_basis=B40286,
    gpu="GB10",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash --dsa-prefill-backend flashinfer_sparse_mla --dsa-decode-backend flashinfer_sparse_mla",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="ValueError: flashinfer_sparse_mla supports only GLM DSA … got model_arch='Glm5NextForConditionalGeneration' (the message as sglang#36507 quotes it)",
    stage="config",
    cls="dsa-sm12x",
)
add(
    id="sglang-40286-glm53flash-gb10-triton",
    source=S40286,
    quote="triton ROCm-only ... Every `--dsa-{prefill,decode}-backend` choice available on CUDA fails",
    engine="sglang",
    version="0.5.20",
    version_basis=B40286,
    gpu="GB10",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash --dsa-prefill-backend triton --dsa-decode-backend triton",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="triton DSA backend is ROCm-only",
    stage="config",
    cls="dsa-sm12x",
)
add(
    id="flashinfer-5445-glm53flash-rtxpro6000-trtllm",
    source="https://github.com/flashinfer-ai/flashinfer/issues/5445",
    quote="I was running zai-org/GLM-5.3-Flash via vllm and sglang using the provided commands on a machine with four Blackwell 6000 Pro GPUs(sm_120) ... sglang serve --model-path zai-org/GLM-5.3-Flash --tp-size 4 --dsa-prefill-backend trtllm --dsa-decode-backend trtllm --kv-cache-dtype fp8_e4m3 --moe-runner-backend flashinfer_trtllm ... tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at .../flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architectur",
    engine="sglang",
    version="0.5.20",
    version_basis="issue of 2026-09-22; sglang#40286 (2026-09-19) calls v0.5.20 the latest release",
    gpu="RTX PRO 6000",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash --tp-size 4 --dsa-prefill-backend trtllm --dsa-decode-backend trtllm --kv-cache-dtype fp8_e4m3 --moe-runner-backend flashinfer_trtllm --mamba-ssm-dtype bfloat16 --mamba-full-memory-ratio 0.90 --disable-flashinfer-autotune --disable-custom-all-reduce --disable-decode-cuda-graph --mem-fraction-static 0.85 --max-running-requests 24 --reasoning-parser glm45 --tool-call-parser glm47 --host 0.0.0.0 --port 30000",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at .../flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture",
    stage="init",
    cls="dsa-sm12x",
)
add(
    id="sglang-25877-dsv4-rtxpro6000",
    source="https://github.com/sgl-project/sglang/issues/25877",
    quote="GPU: NVIDIA RTX PRO 6000 Blackwell Server Edition × 4, compute_cap = 12.0 Error: tvm.error.InternalError: Assertion error (/deepgemm/csrc/apis/hyperconnection.hpp:56): Unsupported architecture Both _setup_fp8_wo_a_scales (layout.hpp:59) and tf32_hc_prenorm_gemm (hyperconnection.hpp:56) fail.",
    engine="sglang",
    version="0.5.12",
    version_basis="issue of 2026-05-20, version not stated; sglang#25564 of 2026-05-18 runs lmsysorg/sglang:v0.5.12-cu130 as the current image",
    gpu="RTX PRO 6000",
    command="sglang serve --model-path deepseek-ai/DeepSeek-V4-Flash --tp 4",
    outcome="failed",
    model="incident-models/deepseek-v4-flash",
    error="tvm.error.InternalError: Assertion error (/deepgemm/csrc/apis/hyperconnection.hpp:56): Unsupported architecture",
    stage="init",
    cls="dsa-sm12x",
    note="launch line reconstructed: DeepSeek-V4 (Flash assumed) on the 4 GPUs the issue names",
)
S46796 = "https://github.com/vllm-project/vllm/issues/46796"
add(
    id="vllm-46796-dsv4flash-b300-0230",
    source=S46796,
    quote="On a single 8×B300 (SXM6) node, serving `deepseek-ai/DeepSeek-V4-Flash` with vLLM **v0.23.0** crashes during engine startup (in `profile_run` / `determine_available_memory`) ... The failing kernel is **`sm100_tf32_hc_prenorm_gemm`** ... it fails at **launch**.",
    engine="vllm",
    version="0.23.0",
    version_basis="stated in the issue",
    gpu="B300",
    command="vllm serve deepseek-ai/DeepSeek-V4-Flash --tensor-parallel-size 8",
    outcome="failed",
    model="incident-models/deepseek-v4-flash",
    error="sm100_tf32_hc_prenorm_gemm kernel launch fails (cudaErrorInvalidValue on CUDA 13, cudaErrorInvalidConfiguration on CUDA 12.9)",
    stage="init",
    cls="dsa-other",
    note="launch line reconstructed (one 8-GPU node; the issue's parallel layout is not in the excerpt)",
)
add(
    id="vllm-46796-dsv4flash-b300-0201",
    source=S46796,
    quote="The same hardware runs `DeepSeek-V4-Flash` fine on vLLM **v0.20.1** (which uses the older single-file `vllm/model_executor/models/deepseek_v4.py` implementation that does not go through this vendored-DeepGEMM MHC path).",
    engine="vllm",
    version="0.20.1",
    version_basis="stated in the issue",
    gpu="B300",
    command="vllm serve deepseek-ai/DeepSeek-V4-Flash --tensor-parallel-size 8",
    outcome="started",
    model="incident-models/deepseek-v4-flash",
    cls="dsa-other",
    note="launch line reconstructed as for vllm-46796-dsv4flash-b300-0230",
)
add(
    id="sglang-25564-qwen35-397b-b300-vision-fa4",
    source="https://github.com/sgl-project/sglang/issues/25564",
    quote='in v0.5.12 on b300 (sm103), hitting assert self.arch >= Arch.sm_100 and self.arch <= Arch.sm_110f, "Only SM 10.x and 11.x are supported" AssertionError: Only SM 10.x and 11.x are supported ... `lmsysorg/sglang:v0.5.12-cu130` fails to serve any Qwen-3.5-VL recipe (Qwen/Qwen3.5-397B-A17B) ... All TP ranks crash on the **first warmup forward pass** through the vision encoder',
    engine="sglang",
    version="0.5.12",
    version_basis="stated in the issue",
    gpu="B300",
    command="sglang serve --model-path Qwen/Qwen3.5-397B-A17B --tp 8",
    outcome="failed",
    model="qwen3.5-35b-a3b",
    error="AssertionError: Only SM 10.x and 11.x are supported",
    stage="init",
    cls="vision",
    note="launch line reduced to the recipe's model and TP 8; judged with the Qwen3.5-35B-A3B preset, the same Qwen3_5MoeForConditionalGeneration family with a vision tower",
)
add(
    id="vllm-43576-qwen25-05b-t4-turboquant",
    source="https://github.com/vllm-project/vllm/issues/43576",
    quote="vLLM 0.21.0 (pip install) GPU: Tesla T4 (SM75, Turing) ... Running any model with `--kv-cache-dtype turboquant_4bit_nc` on a T4 GPU crashes immediately during prefill: RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    engine="vllm",
    version="0.21.0",
    version_basis="stated in the issue",
    gpu="T4",
    command="vllm serve Qwen/Qwen2.5-0.5B --kv-cache-dtype turboquant_4bit_nc --enforce-eager --max-model-len 2048 --gpu-memory-utilization 0.5",
    outcome="failed",
    model="incident-models/qwen3-0.6b",
    error="RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    stage="init",
    cls="kv-quant",
    note="the issue's LLM(...) arguments as a serve line; judged with the Qwen3-0.6B excerpt (the same size class; Qwen2.5-0.5B's config is not at hand)",
)
add(
    id="vllm-50709-qwen36-27b-nvfp4-rtx5090-tq-k8v4",
    source="https://github.com/vllm-project/vllm/issues/50709",
    quote="Confirmed on Qwen3.6-27B-NVFP4 (SM120) + vLLM 0.26.0 Same error: `ValueError: Unknown TurboQuant cache dtype: 'auto'`. Single GPU RTX 5090, Unsloth compressed-tensors NVFP4 model, `--kv-cache-dtype turboquant_k8v4`.",
    engine="vllm",
    version="0.26.0",
    version_basis="stated in the comment",
    gpu="RTX 5090",
    command="vllm serve unsloth/Qwen3.6-27B-NVFP4 --kv-cache-dtype turboquant_k8v4",
    outcome="failed",
    model="incident-models/qwen3.6-27b-nvfp4",
    error="ValueError: Unknown TurboQuant cache dtype: 'auto'",
    stage="init",
    cls="kv-quant",
    note="model id reconstructed ('Unsloth compressed-tensors NVFP4'); judged with an NVFP4 excerpt of the Qwen3.5/3.6 hybrid family",
)
add(
    id="vllm-57712-gemma4-31b-sm75-triton-smem",
    source="https://github.com/vllm-project/vllm/issues/57712",
    quote="GPUs: 2× NVIDIA Quadro RTX 6000 (Turing, SM75, 24 GB each, 64 KB shared memory per SM) vLLM: 0.26.0 (official Docker image) Parallelism: tensor-parallel-size 2 ... Model: `google/gemma-4-31B-it-qat-w4a16-ct` ... triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536.",
    engine="vllm",
    version="0.26.0",
    version_basis="stated in the issue",
    gpu="sm_75",
    command="vllm serve google/gemma-4-31B-it-qat-w4a16-ct --tensor-parallel-size 2",
    outcome="failed",
    model="incident-models/gemma-4",
    error="triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536.",
    stage="init",
    cls="kernel-limits",
)
S41477 = "https://github.com/vllm-project/vllm/issues/41477"
Q41477 = "GPU: NVIDIA **GB10 (DGX Spark)** — SM 12.1 ... vLLM image: `vllm/vllm-openai:nightly-aarch64` (v0.20.1rc1.dev91+ga749a33d8, 2026-04-30); same behavior on `v0.20.0` ... Serving `openai/gpt-oss-120b` with native MXFP4 on **GB10 / DGX Spark (SM 12.1)** has no working `--moe-backend`: "
for name, be, outcome, err, row in [
    (
        "default-marlin",
        None,
        "started",
        None,
        "| `marlin` (default) | Runs but emits broken first Harmony token → `content: null`, `reasoning: null` (#37030) |",
    ),
    (
        "flashinfer-trtllm",
        "flashinfer_trtllm",
        "failed",
        "kernel does not support current device cuda",
        '| `flashinfer_trtllm` | "kernel does not support current device cuda" |',
    ),
    (
        "deep-gemm",
        "deep_gemm",
        "failed",
        "kernel does not support current device cuda",
        '| `deep_gemm` | "kernel does not support current device cuda" |',
    ),
    (
        "flashinfer-cutlass",
        "flashinfer_cutlass",
        "failed",
        "Quant scheme mismatch (`u8 / GroupShape(1,32)` not supported)",
        "| `flashinfer_cutlass` | Quant scheme mismatch (`u8 / GroupShape(1,32)` not supported) |",
    ),
    ("emulation", "emulation", "started", None, "| `emulation` | Works, but ≤5 tok/s |"),
]:
    d = dict(
        id=f"vllm-41477-gptoss120b-gb10-{name}",
        source=S41477,
        quote=Q41477 + row,
        engine="vllm",
        version="0.20.0",
        version_basis="stated in the issue ('same behavior on v0.20.0')",
        gpu="GB10",
        command="vllm serve openai/gpt-oss-120b" + (f" --moe-backend {be}" if be else ""),
        outcome=outcome,
        model="gpt-oss-120b",
        stage="init" if err else None,
        cls="lowp-gemm",
    )
    if err:
        d["error"] = err
    INCIDENTS.append({k: v for k, v in d.items() if v is not None})
add(
    id="vllm-47749-qwen36-27b-nvfp4-rtx5090-marlin",
    source="https://github.com/vllm-project/vllm/issues/47749",
    quote="vLLM: 0.24.0 ... Model: `nvidia/Qwen3.6-27B-NVFP4` ... `nvidia/Qwen3.6-27B-NVFP4` on RTX 5090 / SM120 resolves as `modelopt_mixed`, detects `W4A16_NVFP4`, then routes part of the model through the Marlin FP4 path and logs that the GPU does not have native FP4 support.",
    engine="vllm",
    version="0.24.0",
    version_basis="stated in the issue",
    gpu="RTX 5090",
    command="vllm serve nvidia/Qwen3.6-27B-NVFP4 --host 0.0.0.0 --port 8082 --tensor-parallel-size 1 --load-format safetensors --attention-backend flashinfer --quantization modelopt_fp4 --dtype bfloat16",
    outcome="started",
    model="qwen3.5-35b-a3b",
    cls="lowp-gemm",
    note="the command's --kv-cache-dtype value is cut off in the excerpt ('fp8_') and is left out; the issue is a warning and a slow path, the server serves",
)
add(
    id="vllm-41834-qwen3-30b-nvfp4-gb10-b12x",
    source="https://github.com/vllm-project/vllm/pull/41834",
    quote="Current state, verified on the June 11 nightly (`vllm-openai:nightly-aarch64`, commit 43914dd) ... The SM12x b12x kernel path from [Integrate flashinfer b12x MoE and FP4 GEMM kernels for SM120/121 #40082] works on GB10 in our hands: `FlashInferB12xNvFp4LinearKernel` + `FLASHINFER_B12X` MoE engaged, ~81 tok/s warm on Qwen3-30B-A3B-NVFP4 single-node",
    engine="vllm",
    version="0.22.1rc1",
    version_basis="the 2026-06-11 nightly, the same image as vllm#45317 (vLLM 0.22.1rc1.dev392+g43914dd74)",
    gpu="GB10",
    command="vllm serve nvidia/Qwen3-30B-A3B-NVFP4",
    outcome="started",
    model="qwen3-30b-a3b",
    cls="lowp-gemm",
    note="launch line reconstructed (single node, the checkpoint named; the NVFP4 repo id assumed)",
)
add(
    id="vllm-33417-minimax-m21-nvfp4-rtxpro6000-0150",
    source="https://github.com/vllm-project/vllm/pull/33417",
    quote="On RTX Blackwell GPUs (e.g., RTX PRO 6000 Blackwell Workstation Edition with compute capability 12.0), vLLM v0.15.0 crashes when loading MiniMax-M2.1-NVFP4 or other NVFP4 MoE models with: RuntimeError: FlashInfer-CUTLASS MoE kernel does not support current device sm_120 ... This is a regression introduced in commit 42135d689",
    engine="vllm",
    version="0.15.0",
    version_basis="stated in the PR",
    gpu="RTX PRO 6000",
    command="vllm serve MiniMaxAI/MiniMax-M2.1-NVFP4 --tensor-parallel-size 4",
    outcome="failed",
    model="incident-models/minimax-m2.1-nvfp4",
    error="RuntimeError: FlashInfer-CUTLASS MoE kernel does not support current device sm_120",
    stage="init",
    cls="lowp-gemm",
    note="launch line reconstructed (the checkpoint id is not given; an NVFP4 MiniMax-M2.1 on four RTX PRO 6000 assumed, the weights needing more than one)",
)
add(
    id="vllm-47549-fp8kv-flashinfer-sm75-0240",
    source="https://github.com/vllm-project/vllm/issues/47549",
    quote="[Bug]: REGRESSION : FP8 KV cache FlashInfer no longer available as attention backend on SM75 (Turing) in v0.24.0 ... [pip3] flashinfer-python==0.6.12",
    engine="vllm",
    version="0.24.0",
    version_basis="stated in the title",
    gpu="sm_75",
    command="vllm serve Qwen/Qwen3-8B --attention-backend FLASHINFER --kv-cache-dtype fp8",
    outcome="failed",
    model="qwen3-8b",
    error="FLASHINFER is not valid: compute capability not supported (FlashInferBackend.supports_compute_capability floor SM80, vllm#45375; vllm#47949: 'the FP8 paged-prefill kernel still crashes in BatchPrefillWithPagedKVCacheDispatched on SM75')",
    stage="config",
    cls="kv-quant",
    note="launch line reconstructed (FlashInfer with an FP8 KV cache on Turing; the model is not in the excerpt, Qwen3-8B assumed)",
)
add(
    id="vllm-39610-minimax-m27-fp8-a100-0190",
    source="https://github.com/vllm-project/vllm/issues/39610",
    quote="[Regression] MiniMax-M2.7/Qwen3.5 and other FP8 models fail on A100/Ampere with nightly while loading correctly on v0.19.0 ... vLLM Version : 0.19.0 ... GPU0 X NV12 NV12 NV12",
    engine="vllm",
    version="0.19.0",
    version_basis="stated in the issue (collect_env of the working install)",
    gpu="A100",
    command="vllm serve MiniMaxAI/MiniMax-M2.7 --tensor-parallel-size 4",
    outcome="started",
    model="incident-models/minimax-m2.7-fp8",
    cls="lowp-gemm",
    note="launch line reconstructed: the four NVLinked GPUs of the topology; MiniMax-M2.7 judged with an FP8 (block-scaled) excerpt of the MiniMax-M2 architecture",
)


Q35596 = 'Cookbook model Qwen/Qwen3.8-27B ... Combination rtx5090 / default / nvfp4 / undefined / single ... verified: true, ... "--kv-cache-dtype fp8_e4m3", "--mem-fraction-static 0.92", "--attention-backend flashinfer", "--max-running-requests 1", "--cuda-graph-max-bs 1", ... "--speculative-algorithm DSPARK", "--speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark", "--speculative-draft-attention-backend flashinfer", ... "--mamba-ssm-dtype float32"'
add(
    id="sglang-35596-qwen38-27b-nvfp4-rtx5090-dspark",
    source="https://github.com/sgl-project/sglang/issues/35596",
    quote=Q35596,
    engine="sglang",
    version="0.5.17",
    version_basis="verified cell of 2026-08-20 (its version line is cut off in the excerpt); sglang#35080 reports 0.5.17 in use on 2026-08-17 and sglang#40286 calls 0.5.20 the latest on 2026-09-19",
    gpu="RTX 5090",
    command="sglang serve --trust-remote-code --model-path nvidia/Qwen3.8-27B-NVFP4 --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.92 --attention-backend flashinfer --max-running-requests 1 --cuda-graph-max-bs 1 --reasoning-parser qwen3 --tool-call-parser qwen3_coder --speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark --speculative-draft-attention-backend flashinfer --mamba-ssm-dtype float32",
    outcome="started",
    model="incident-models/qwen3.6-27b-nvfp4",
    cls="lowp-gemm",
    note="the cell's flags with {{MODEL_NAME}} as the NVIDIA NVFP4 export (sglang#38611); judged with the NVFP4 excerpt of the Qwen3.5/3.6 hybrid family",
)
add(
    id="sglang-34918-qwen38-27b-nvfp4-rtxpro6000-dspark",
    source="https://github.com/sgl-project/sglang/issues/34918",
    quote='Cookbook model Qwen/Qwen3.8-27B ... Combination rtx6000 / default / nvfp4 / balanced / single ... verified: true, ... "--mem-fraction-static 0.85", "--attention-backend flashinfer", "--chunked-prefill-size 2048", ... "--speculative-algorithm DSPARK", "--speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark"',
    engine="sglang",
    version="0.5.17",
    version_basis="verified cell of 2026-08-15 (its version line is cut off in the excerpt); sglang#35080 reports 0.5.17 in use on 2026-08-17",
    gpu="RTX PRO 6000",
    command="sglang serve --trust-remote-code --model-path nvidia/Qwen3.8-27B-NVFP4 --mem-fraction-static 0.85 --attention-backend flashinfer --chunked-prefill-size 2048 --reasoning-parser qwen3 --tool-call-parser qwen3_coder --speculative-algorithm DSPARK --speculative-draft-model-path RadixArk/Qwen3.8-27B-DSpark",
    outcome="started",
    model="incident-models/qwen3.6-27b-nvfp4",
    cls="lowp-gemm",
    note="the cell's flags with {{MODEL_NAME}} as the NVIDIA NVFP4 export (sglang#38611); judged with the NVFP4 excerpt of the Qwen3.5/3.6 hybrid family",
)
add(
    id="vllm-43172-glm5-l40-no-mla-backend",
    source="https://github.com/vllm-project/vllm/issues/43172",
    quote="I'm trying to evaluate the deployment of GLM-5/GLM-5.1 on an NVIDIA L40 (48GB VRAM). but I'm hitting an \"Operator Unsupported\" error. ValueError: No valid attention backend found for cuda... Reasons: {FLASH_ATTN_MLA: [compute capability not supported], FLASHMLA: [compute capability not supported... only supported on Hopper and Blackwell devices.]}",
    engine="vllm",
    version="0.21.0",
    version_basis="issue of 2026-05-20, version not stated; vllm#43576 of 2026-05-25 installs 0.21.0 with pip",
    gpu="L40",
    command="vllm serve zai-org/GLM-5.1 --tensor-parallel-size 8",
    outcome="failed",
    model="glm-5",
    error="ValueError: No valid attention backend found for cuda... Reasons: {FLASH_ATTN_MLA: [compute capability not supported], FLASHMLA: [compute capability not supported... only supported on Hopper and Blackwell devices.]}",
    stage="init",
    cls="dsa-other",
    note="launch line reconstructed (GLM-5.1 on 8 L40; the issue gives no command)",
)


# Batch 2 (branch i21c): threads no batch-1 incident and no dispatch row cites, split on their own (below) so the
# batch-1 split stays as it was recorded and the new held part shares no thread with the batch-1 work.
BATCH1 = len(INCIDENTS)
S35854 = "https://github.com/vllm-project/vllm/issues/35854"
Q35854 = "vLLM Version **0.16.1rc1.dev123+ga60985b07** Failed GPU: 4 * 2080ti 22G All Passed for 4 * L20 Command ... vllm serve --model /home/ubuntu/models/Qwen/Qwen3.5-35B-A3B /--served-model-name Qwen3.5-35B-A3B --api-key token-llm --tensor-parallel-size 4 --gpu-memory-utilization 0.7 --trust-remote-code --max_model_len 16384 --reasoning-parser qwen3 --tool-call-parser qwen3_coder --port 11435 --dtype half"
C35854 = "vllm serve /home/ubuntu/models/Qwen/Qwen3.5-35B-A3B --served-model-name Qwen3.5-35B-A3B --tensor-parallel-size 4 --gpu-memory-utilization 0.7 --trust-remote-code --max_model_len 16384 --reasoning-parser qwen3 --tool-call-parser qwen3_coder --port 11435 --dtype half"
B35854 = "stated in the issue (0.16.1rc1.dev123+ga60985b07, 2026-03-03)"
add(
    id="vllm-35854-qwen35-35b-a3b-2080ti-half",
    source=S35854,
    quote=Q35854,
    engine="vllm",
    version="0.16.1rc1",
    version_basis=B35854,
    gpu="sm_75",
    command=C35854,
    outcome="failed",
    model="incident-models/qwen3.5-35b-a3b",
    error="Failed GPU: 4 * 2080ti 22G (the issue's error log is not in the excerpt read)",
    stage="init",
    cls="linear-attn-sm75",
    note="GPU given by its compute capability (RTX 2080 Ti 22G is SM75; the tool's GPU table has no 2080 Ti); the --api-key value and the stray '/' before --served-model-name dropped; the model is the preset's excerpt plus its checkpoint dtype (incident-models/qwen3.5-35b-a3b): the failing path is not in the excerpt read, and vllm#35414's (bf16 GDN parameters under --dtype half, fixed by vllm#35617) is the one known for this model, GPU and nightly",
)
add(
    id="vllm-35854-qwen35-35b-a3b-l20-half",
    source=S35854,
    quote=Q35854,
    engine="vllm",
    version="0.16.1rc1",
    version_basis=B35854,
    gpu="L20",
    command=C35854,
    outcome="started",
    model="qwen3.5-35b-a3b",
    cls="linear-attn-sm75",
    note="the same launch line 'All Passed for 4 * L20' (SM89): the working counterpart of the 2080 Ti failure",
)
add(
    id="vllm-35414-qwen35-35b-a3b-2080ti-float16-tp2pp2",
    source="https://github.com/vllm-project/vllm/issues/35414",
    quote='The vllm version is night, and dtype=float16 is set, but the error "2080 Ti does not support bfloat16" is still reported. **deploy scrpit:** vllm serve Qwen/Qwen3.5-35B-A3B --served-model-name Qwen3-30B-A3B  --port 8000 --dtype float16 --tensor-parallel-size 2 --pipeline-parallel-size 2 --max-model-len 8000 --reasoning-parser qwen3 --gpu_memory_utilization 0.85 --distributed-executor-backend ray --max-num-seqs 10',
    engine="vllm",
    version="0.16.1rc1",
    version_basis="'night[ly]' on 2026-02-26; vllm#35854 of 2026-03-03 runs nightly 0.16.1rc1.dev123 on the same GPUs and model",
    gpu="sm_75",
    command="vllm serve Qwen/Qwen3.5-35B-A3B --served-model-name Qwen3-30B-A3B --port 8000 --dtype float16 --tensor-parallel-size 2 --pipeline-parallel-size 2 --max-model-len 8000 --reasoning-parser qwen3 --gpu_memory_utilization 0.85 --distributed-executor-backend ray --max-num-seqs 10",
    outcome="failed",
    model="incident-models/qwen3.5-35b-a3b",
    error="2080 Ti does not support bfloat16 (with --dtype float16 set; raised inside torch inductor compile_fx)",
    stage="init",
    cls="linear-attn-sm75",
    note="4x RTX 2080 Ti 22G, given by compute capability (the tool's GPU table has no 2080 Ti)",
)
add(
    id="vllm-39992-qwen25-3b-a100-turboquant-k8v4",
    source="https://github.com/vllm-project/vllm/issues/39992",
    quote="vLLM version: main (commit f4ddaf8cf) - GPU: A100 80GB (SM80) ... When serving a BF16 model with the turboquant attention backend on A100 (SM80), the engine crashes during initialization with an `AssertionError` from Triton's `convert_custom_float8`. ... k_fp8 = k_vals.to(tl.float8e4b15) if FP8_E4B15 else k_vals.to(tl.float8e4nv) ... python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-3B-Instruct",
    engine="vllm",
    version="0.20.0",
    version_basis="main at f4ddaf8cf on 2026-04-16, one day after TurboQuant merged (vllm#38479, 2026-04-15); 0.20.0 is the first release with it",
    gpu="A100",
    command="vllm serve Qwen/Qwen2.5-3B-Instruct --kv-cache-dtype turboquant_k8v4",
    outcome="failed",
    model="incident-models/qwen2.5-3b-instruct",
    error="AssertionError from Triton's convert_custom_float8 (assert arg.type.scalar.is_fp16() or arg.type.scalar.is_fp32()) in _tq_fused_store_fp8",
    stage="init",
    cls="kv-quant",
    note="the issue's reproduce line is cut after --model in the excerpt; the FP8-key store (_tq_fused_store_fp8) is the turboquant_k8v4 preset's (vllm#50248: 'when serving a model with --kv-cache-dtype turboquant_k8v4, particularly on NVIDIA Ampere GPUs')",
)
add(
    id="vllm-35065-nemotron3-nano-nvfp4-rtx5090",
    source="https://github.com/vllm-project/vllm/issues/35065",
    quote="RTX 5090 (SM120): NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4 fails to start, No NvFp4 MoE backend supports the deployment configuration ... GPU 0 : NVIDIA GeForce RTX 5090 Compute Cap : 12.0 ... Torch : 2.10.0+cu128 ... FlashInfer : 0.6.2",
    engine="vllm",
    version="0.15.1",
    version_basis="issue of 2026-02-22, version not stated; 0.15.0 is current in vllm#33417 (2026-01-30) and nightlies are 0.16.1rc1 by 2026-03-03 (vllm#35854); judged at 0.15.1, between them",
    gpu="RTX 5090",
    command="vllm serve nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4",
    outcome="failed",
    error="No NvFp4 MoE backend supports the deployment configuration",
    stage="init",
    cls="lowp-gemm",
    note="launch line reduced to the model (the excerpt gives no command); no config.json excerpt at hand, so judged on the model id alone",
)
add(
    id="vllm-32109-glm47-fp8-rtxpro6000-tp4-mtp",
    source="https://github.com/vllm-project/vllm/issues/32109",
    quote="I'm trying to serve zai-org/GLM-4.7-FP8 on RTX PRO 6000 Blackwell (SM120 / compute capability 12.0) and vLLM fails during startup with a CUTLASS kernel selection error: No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100 ... vLLM 0.13 wheel ... vllm serve zai-org/GLM-4.7-FP8 --tensor-parallel-size 4 --speculative-config.method mtp --speculative-config.num_speculative_tokens 1 --tool-call-parser glm47 --reasoning-parser glm45 --enable-auto-tool-choice --served-model-name glm-4.7-fp8",
    engine="vllm",
    version="0.13.0",
    version_basis="stated in the issue ('vLLM 0.13 wheel', 2026-01-10; the nightly fails the same way)",
    gpu="RTX PRO 6000",
    command="vllm serve zai-org/GLM-4.7-FP8 --tensor-parallel-size 4 --speculative-config.method mtp --speculative-config.num_speculative_tokens 1 --tool-call-parser glm47 --reasoning-parser glm45 --enable-auto-tool-choice --served-model-name glm-4.7-fp8",
    outcome="failed",
    error="No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100",
    stage="init",
    cls="lowp-gemm",
    note="no config.json excerpt at hand (GLM-4.7 is a Glm4Moe model; its FP8 quantization_config not read), so judged on the model id alone",
)
add(
    id="sglang-37105-glm53flash-rtxpro6000-default",
    source="https://github.com/sgl-project/sglang/issues/37105",
    quote="### Blocker 1 (`TllmGenFmhaRunner: Unsupported architecture`) Not a missing-kernel dead end — auto-selection is the problem. It lands on trtllm via `device_sm_major >= 10`, which treats all Blackwell alike. ... 8x RTX PRO 6000 Blackwell Server Edition (sm_120, 97887 MiB), driver 610.43.02, image `lmsysorg/sglang:glm-5.3-flash` (e6f5482505e7), flashinfer 0.6.17, torch 2.13.0+cu130. Running with `--tp 8 --dp 4 --enable-dp-attention --ep-size 8 --context-length 1048576`",
    engine="sglang",
    version="0.5.18",
    version_basis="image lmsysorg/sglang:glm-5.3-flash (2026-08-31) ships flashinfer 0.6.17, the pin of sglang 0.5.18 (rules/kernels/pins.json); the image is a per-model build, so this is the nearest release",
    gpu="RTX PRO 6000",
    command="sglang serve --model-path zai-org/GLM-5.3-Flash --tp 8 --dp 4 --enable-dp-attention --ep-size 8 --context-length 1048576",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="TllmGenFmhaRunner: Unsupported architecture",
    stage="init",
    cls="dsa-sm12x",
    note="the launch flags of the thread's later working run, without its workaround (SGLANG_OPT_DEEPGEMM_HC_PRENORM=0, tilelang DSA backends with bf16 KV and a patched tile); the default auto-selects trtllm",
)
add(
    id="vllm-53963-glm53flash-rtxpro6000-tp4",
    source="https://github.com/vllm-project/vllm/issues/53963",
    quote="GLM-5.3-Flash (`glm5_next`) cannot start on **SM120** (RTX PRO 6000 Blackwell, compute 12.0) with the dedicated `glm53-flash` image: the architecture's **rope-free sparse MLA** (`qk_rope_head_dim: 0`) has no working attention/KV path on this capability. ... GPUs: 4× NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition (96 GB, **SM120 / compute 12.0**), driver 595.71.05, host CUDA 13.2, TP=4",
    engine="vllm",
    version="0.28.1rc1",
    version_basis="per-model image (banner 0.1.dev20051+g487ecf187) of 2026-08-26; vllm#54062 of 2026-08-27 runs GLM-5.3-Flash on nightly 0.28.1rc1.dev7",
    gpu="RTX PRO 6000",
    command="vllm serve zai-org/GLM-5.3-Flash --tensor-parallel-size 4",
    outcome="failed",
    model="incident-models/glm-5.3-flash",
    error="no SM120 sparse-MLA path for rope-free MLA (qk_rope_head_dim=0) — three failure modes, ending at an explicit kernel shape guard",
    stage="init",
    cls="dsa-sm12x",
    note="launch line reduced to the model and TP=4 (the excerpt gives no command); the issue's checkpoint is a local weight-only NVFP4 export, and it states the failures are independent of weight quantization",
)
S29253 = "https://github.com/sgl-project/sglang/pull/29253"
Q29253 = "MiMo-V2.5 base is the multimodal checkpoint. Its vision blocks request FlashAttention-3 internally, which maps to the `fa3` multimodal attention backend. SGLang rejects `fa3` on Blackwell with `ValueError: The 'fa3' backend is not supported on Blackwell GPUs`. ... Model: `XiaomiMiMo/MiMo-V2.5`, TP=4 on 4x B200. - Launch included `--mm-attention-backend fa4` with the Blackwell multimodal recipe. - Server reached `server_ready`"
B29253 = "PR of 2026-06-25 (recipe fix, no engine change); judged at 0.5.13, the release of late June 2026 (sglang#29562 runs it on 2026-06-28)"
add(
    id="sglang-29253-mimo-v25-b200-vision-fa3",
    source=S29253,
    quote=Q29253,
    engine="sglang",
    version="0.5.13",
    version_basis=B29253,
    gpu="B200",
    command="sglang serve --model-path XiaomiMiMo/MiMo-V2.5 --tp 4 --trust-remote-code",
    outcome="failed",
    model="incident-models/mimo-v2.5",
    error="ValueError: The 'fa3' backend is not supported on Blackwell GPUs",
    stage="init",
    cls="vision",
    note="the base B200 command before the PR (no --mm-attention-backend); the model is a partial config.json excerpt, each field sourced (incident-models/mimo-v2.5)",
)
add(
    id="sglang-29253-mimo-v25-b200-vision-fa4",
    source=S29253,
    quote=Q29253,
    engine="sglang",
    version="0.5.13",
    version_basis=B29253,
    gpu="B200",
    command="sglang serve --model-path XiaomiMiMo/MiMo-V2.5 --tp 4 --trust-remote-code --mm-attention-backend fa4",
    outcome="started",
    model="incident-models/mimo-v2.5",
    cls="vision",
    note="the PR's validated launch ('Server reached server_ready'); the rest of the recipe's flags are not in the excerpt; the model is the same sourced excerpt as the fa3 launch's",
)
add(
    id="vllm-58241-qwen38-27b-fp8-rtx6000ada-marlin",
    source="https://github.com/vllm-project/vllm/issues/58241",
    quote="GPU: NVIDIA RTX 6000 Ada Generation (SM 8.9) - vLLM: 0.29.0 - CUDA: 13.4 - Model: Qwen/Qwen3.8-27B-FP8 (block-quantized FP8, 128×128 blocks) ... cutlass_block_fp8_supported() returns False on Ada Lovelace (SM89), causing block-quantized FP8 checkpoints to fall through the kernel priority list in _POSSIBLE_FP8_BLOCK_KERNELS all the way to MarlinFP8ScaledMMLinearKernel",
    engine="vllm",
    version="0.29.0",
    version_basis="stated in the issue (2026-09-23)",
    gpu="RTX 6000 Ada",
    command="vllm serve Qwen/Qwen3.8-27B-FP8",
    outcome="started",
    cls="lowp-gemm",
    note="the model serves on the Marlin FP8 fallback (the issue is about which kernel is chosen, not a failure to start); launch line reduced to the model; no config.json excerpt at hand",
)


held = set()
for batch in (INCIDENTS[:BATCH1], INCIDENTS[BATCH1:]):
    order = sorted((d["id"] for d in batch), key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    held |= {i for n, i in enumerate(order) if n % 3 == 2}
out = []
for n, d in enumerate(INCIDENTS):
    d = dict(d)
    d["class"] = d.pop("cls")
    d["batch"] = 1 if n < BATCH1 else 2
    d["split"] = "held" if d["id"] in held else "work"
    out.append(d)
ids = [d["id"] for d in out]
assert len(ids) == len(set(ids))
doc = {
    "_comment": "Fresh real incidents filed in 2026 (issue 21, step 1): failures one layer below the engines (kernel libraries without code for a GPU family) and configs that started. Same format as incidents.json, plus class (dsa-sm12x, dsa-other, vision, kv-quant, kernel-limits, lowp-gemm) and split: 'held' is the set-aside third (every third id in sha256 order, positions 2, 5, 8, ...), judged once at the end; 'work' the two thirds worked from; the rule is applied per batch (batch 1: branch i21b, batch 2: i21c), so adding a batch leaves the earlier split as recorded. Expectations come only from the quoted source.",
    "incidents": out,
}
json.dump(
    doc,
    open(__import__("pathlib").Path(__file__).resolve().parent.parent / "tests/fixtures/incidents_2026.json", "w"),
    indent=1,
    ensure_ascii=False,
)

print(len(out), Counter(d["split"] for d in out), Counter(d["class"] for d in out), Counter(d["outcome"] for d in out))
