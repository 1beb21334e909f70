"""Fixtures for rules/kernels/dispatch.py (the dispatch model: one rule per dispatch row of dispatch.json)."""

from tests.rule_fixtures import FIXTURES_DIR

MODELS = FIXTURES_DIR / "incident-models"
GLM51 = ["--model", str(MODELS / "glm-5.1-nvfp4")]
GLM53 = ["--model", str(MODELS / "glm-5.3-flash")]
DSV4 = ["--model", str(MODELS / "deepseek-v4-flash")]
QWEN35 = ["--model", "qwen3.5-35b-a3b"]
GEMMA4 = ["--model", str(MODELS / "gemma-4")]
GPT_OSS = ["--model", "gpt-oss-120b"]
MINIMAX_NVFP4 = ["--model", str(MODELS / "minimax-m2.1-nvfp4")]
MINIMAX_FP8 = ["--model", str(MODELS / "minimax-m2.7-fp8")]  # weight_block_size [128, 128]
QWEN35_BF16 = ["--model", str(MODELS / "qwen3.5-35b-a3b")]  # the preset's excerpt with its checkpoint dtype
QWEN25_3B = ["--model", str(MODELS / "qwen2.5-3b-instruct")]
NEMOTRON_H_NVFP4 = ["--model", str(FIXTURES_DIR / "models" / "synthetic-nemotron-h-moe-nvfp4")]
FI_FP4_ENV = "VLLM_USE_FLASHINFER_MOE_FP4=1"
FI_FP4 = {"engine_version": ["vllm==0.15.0"]}
EAGLE_FA4_DRAFT = ("--speculative-algorithm", "EAGLE", "--speculative-draft-attention-backend", "fa4")
EAGLE_FA3_DRAFT = ("--speculative-algorithm", "EAGLE", "--speculative-draft-attention-backend", "fa3")
QWEN3_8B = ["--model", "qwen3-8b"]
FP8 = ("--quantization", "fp8")
MIMO_VL = ["--model", str(FIXTURES_DIR / "models" / "synthetic-mimo-v2-vl")]
SGLANG = ["sglang", "serve", "--model-path", "m", "--tp", "8"]
VLLM = ["vllm", "serve", "m"]


def sglang(version, *flags):
    return {"engine_version": [f"sglang=={version}"], "command": [*SGLANG, *flags]}


def vllm(version, *flags):
    return {"engine_version": [f"vllm=={version}"], "command": [*VLLM, *flags]}


FIXTURES = {
    "kernel-sglang-dsa-indexer-deepgemm": {
        # sgl-deep-gemm 0.1.0 (0.5.12) ships paged MQA logits for SM90/SM100; 0.1.5.post1 (0.5.17) adds SM120
        "pass": [
            {"gpu": "H200", "argv": GLM51, **sglang("0.5.12")},
            {"gpu": "RTX PRO 6000", "argv": GLM51, **sglang("0.5.17")},
        ],
        "fail": [
            {"gpu": "RTX PRO 6000", "argv": GLM51, **sglang("0.5.12", "--kv-cache-dtype", "bf16")},
            {"gpu": "GB10", "argv": GLM51, **sglang("0.5.16")},
        ],
    },
    "kernel-sglang-dsa-trtllm-decode": {
        "pass": [
            {"gpu": "B200", "argv": GLM51, **sglang("0.5.20")},
            {"gpu": "B300", "argv": GLM53, **sglang("0.5.13", "--kv-cache-dtype", "bf16")},
        ],
        "fail": [
            {"gpu": "GB10", "argv": GLM53, **sglang("0.5.20")},
            {"gpu": "RTX PRO 6000", "argv": GLM51, **sglang("0.5.13")},
        ],
    },
    "kernel-sglang-dsa-trtllm-prefill": {
        "pass": [{"gpu": "B300", "argv": GLM53, **sglang("0.5.20", "--kv-cache-dtype", "fp8_e4m3")}],
        "fail": [{"gpu": "RTX PRO 6000", "argv": GLM53, **sglang("0.5.20", "--kv-cache-dtype", "fp8_e4m3")}],
    },
    "kernel-sglang-dsa-flashinfer-sparse-mla": {
        "pass": [
            {
                "gpu": "RTX PRO 6000",
                "argv": GLM51,
                **sglang("0.5.20", "--kv-cache-dtype", "fp8_e4m3", "--dsa-decode-backend", "flashinfer_sparse_mla"),
            }
        ],
        "fail": [
            {"gpu": "GB10", "argv": GLM53, **sglang("0.5.20", "--dsa-decode-backend", "flashinfer_sparse_mla")},
            {"gpu": "B200", "argv": GLM51, **sglang("0.5.20", "--dsa-decode-backend", "flashinfer_sparse_mla")},
        ],
    },
    "kernel-sglang-dsa-tilelang-smem": {
        "pass": [{"gpu": "H100", "argv": GLM53, **sglang("0.5.20", "--dsa-prefill-backend", "tilelang")}],
        "fail": [
            {
                "gpu": "GB10",
                "argv": GLM53,
                **sglang("0.5.20", "--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"),
            }
        ],
    },
    "kernel-sglang-dsv4-hc-prenorm": {
        "pass": [
            {"gpu": "H200", "argv": DSV4, **sglang("0.5.12")},
            {"gpu": "RTX PRO 6000", "argv": DSV4, **sglang("0.5.17")},
        ],
        "fail": [{"gpu": "RTX PRO 6000", "argv": DSV4, **sglang("0.5.12")}],
    },
    "kernel-sglang-vision-fa4-sm103": {
        "pass": [
            {"gpu": "B200", "argv": QWEN35, **sglang("0.5.12")},
            {"gpu": "B200", "argv": QWEN35, **sglang("0.5.12", "--mm-attention-backend", "fa4")},
        ],
        "fail": [{"gpu": "B300", "argv": QWEN35, **sglang("0.5.12")}],
    },
    "kernel-sglang-vision-mimo-fa3-blackwell": {
        # mimo_vl.py asks for flash_attention_3 (0.5.12-0.5.15): sgl-kernel's FA3 serves majors 8-9, vision.py refuses 10-12
        "pass": [
            {"gpu": "H100", "argv": MIMO_VL, **sglang("0.5.13")},
            {"gpu": "A100", "argv": MIMO_VL, **sglang("0.5.13")},
        ],
        "fail": [{"gpu": "B200", "argv": MIMO_VL, **sglang("0.5.13")}],
    },
    "kernel-vllm-dsv4-sm100-hc-prenorm": {
        "pass": [{"gpu": "B200", "argv": DSV4, **vllm("0.23.0", "--tensor-parallel-size", "8")}],
        "fail": [{"gpu": "B300", "argv": DSV4, **vllm("0.23.0", "--tensor-parallel-size", "8")}],
    },
    "kernel-vllm-turboquant-fa2-prefill": {
        "pass": [
            {"gpu": "A100", "argv": ["--model", "qwen3-8b"], **vllm("0.21.0", "--kv-cache-dtype", "turboquant_4bit_nc")}
        ],
        "fail": [
            {"gpu": "T4", "argv": ["--model", "qwen3-8b"], **vllm("0.21.0", "--kv-cache-dtype", "turboquant_4bit_nc")}
        ],
    },
    "kernel-vllm-triton-attention-hd512": {
        "pass": [{"gpu": "A100", "argv": GEMMA4, **vllm("0.26.0", "--attention-backend", "TRITON_ATTN")}],
        "fail": [{"gpu": "sm_75", "argv": GEMMA4, **vllm("0.26.0", "--attention-backend", "TRITON_ATTN")}],
    },
    "kernel-vllm-moe-trtllm-gen": {
        "pass": [{"gpu": "B200", "argv": GPT_OSS, **vllm("0.20.0", "--moe-backend", "flashinfer_trtllm")}],
        "fail": [{"gpu": "GB10", "argv": GPT_OSS, **vllm("0.20.0", "--moe-backend", "flashinfer_trtllm")}],
    },
    "kernel-vllm-moe-deep-gemm": {
        "pass": [{"gpu": "H200", "argv": GPT_OSS, **vllm("0.20.0", "--moe-backend", "deep_gemm")}],
        "fail": [{"gpu": "GB10", "argv": GPT_OSS, **vllm("0.20.0", "--moe-backend", "deep_gemm")}],
    },
    "kernel-vllm-moe-flashinfer-cutlass-mxfp4": {
        "pass": [{"gpu": "H200", "argv": GPT_OSS, **vllm("0.20.0", "--moe-backend", "flashinfer_cutlass")}],
        "fail": [{"gpu": "GB10", "argv": GPT_OSS, **vllm("0.20.0", "--moe-backend", "flashinfer_cutlass")}],
    },
    "kernel-vllm-015-nvfp4-moe-cutlass": {
        # VLLM_USE_FLASHINFER_MOE_FP4=1 keeps only FlashInfer's NVFP4 MoE backends (oracle/nvfp4.py:173-221 in 0.15.0)
        "pass": [{"gpu": "B200", "argv": MINIMAX_NVFP4, **FI_FP4, "command": [FI_FP4_ENV, *VLLM, "--tp", "4"]}],
        "fail": [{"gpu": "RTX PRO 6000", "argv": MINIMAX_NVFP4, **FI_FP4, "command": [FI_FP4_ENV, *VLLM, "--tp", "4"]}],
    },
    "kernel-vllm-0150-nvfp4-moe-nongated": {
        # 0.15.0: only FLASHINFER_CUTLASS takes a non-gated MoE, NVFP4 on family 100 only
        "pass": [{"gpu": "B200", "argv": NEMOTRON_H_NVFP4, **vllm("0.15.0")}],
        "fail": [{"gpu": "RTX 5090", "argv": NEMOTRON_H_NVFP4, **vllm("0.15.0")}],
    },
    "kernel-vllm-0151-nvfp4-moe-nongated": {
        # 0.15.1: FLASHINFER_CUTLASS takes SM120 too (vllm-project/vllm#33417); Hopper has no NVFP4 path for it
        "pass": [{"gpu": "RTX 5090", "argv": NEMOTRON_H_NVFP4, **vllm("0.15.1")}],
        "fail": [{"gpu": "H100", "argv": NEMOTRON_H_NVFP4, **vllm("0.15.1")}],
    },
    "kernel-vllm-gdn-bf16-params-pre-0-17": {
        # vllm-project/vllm#35414: Qwen3.5 on a 2080 Ti with --dtype float16, GDN parameters still bfloat16
        "pass": [{"gpu": "A100", "argv": QWEN35_BF16, **vllm("0.16.0", "--dtype", "float16")}],
        "fail": [{"gpu": "sm_75", "argv": QWEN35_BF16, **vllm("0.16.0", "--dtype", "float16")}],
    },
    "kernel-vllm-turboquant-fp8-key-bf16-sm8x": {
        # vllm-project/vllm#39992: a bfloat16 model's FP8 keys through Triton's e4b15 path on SM80
        "pass": [{"gpu": "L40S", "argv": QWEN25_3B, **vllm("0.20.0", "--kv-cache-dtype", "turboquant_k8v4")}],
        "fail": [{"gpu": "A100", "argv": QWEN25_3B, **vllm("0.20.0", "--kv-cache-dtype", "turboquant_k8v4")}],
    },
    "kernel-vllm-sm120-sparse-mla-dims": {
        # FlashInfer 0.6.14-0.6.18.post1's SM120 sparse MLA decode takes kv_lora_rank 512 with qk_rope_head_dim 64 only
        "pass": [{"gpu": "RTX PRO 6000", "argv": ["--model", "glm-5"], **vllm("0.28.0")}],
        "fail": [{"gpu": "RTX PRO 6000", "argv": GLM53, **vllm("0.28.0")}],  # vllm-project/vllm#53963: rope-free MLA
    },
    "kernel-sglang-draft-attention-fa3": {
        # the draft worker builds --speculative-draft-attention-backend through the registry's fa3 assert (SM8x/SM90)
        "pass": [{"gpu": "H100", "argv": ["--model", "qwen3-8b"], **sglang("0.5.12", *EAGLE_FA3_DRAFT)}],
        "fail": [{"gpu": "B200", "argv": ["--model", "qwen3-8b"], **sglang("0.5.12", *EAGLE_FA3_DRAFT)}],
    },
    "kernel-sglang-draft-attention-fa3-mla": {
        # an MLA draft passes the fa3 assert on major 9 only
        "pass": [{"gpu": "H200", "argv": ["--model", "deepseek-v3"], **sglang("0.5.12", *EAGLE_FA3_DRAFT)}],
        "fail": [{"gpu": "A100", "argv": ["--model", "deepseek-v3"], **sglang("0.5.12", *EAGLE_FA3_DRAFT)}],
    },
    "kernel-sglang-fp8-gemm-flashinfer-trtllm": {
        # fp8_utils.py _dispatch_explicit_backend: SM100/SM103 only (is_sm100_supported)
        "pass": [
            {"gpu": "B200", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "flashinfer_trtllm")}
        ],
        "fail": [
            {"gpu": "H100", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "flashinfer_trtllm")}
        ],
    },
    "kernel-sglang-fp8-gemm-flashinfer-cutlass": {
        # majors 10-12 (is_blackwell_supported)
        "pass": [
            {
                "gpu": "RTX PRO 6000",
                "argv": QWEN3_8B,
                **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "flashinfer_cutlass"),
            }
        ],
        "fail": [
            {"gpu": "H100", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "flashinfer_cutlass")}
        ],
    },
    "kernel-sglang-fp8-gemm-flashinfer-deepgemm": {
        # major 9 only (is_sm90_supported)
        "pass": [
            {"gpu": "H100", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "flashinfer_deepgemm")}
        ],
        "fail": [
            {"gpu": "B200", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "flashinfer_deepgemm")}
        ],
    },
    "kernel-sglang-fp8-gemm-cutlass-0-5-12": {
        # 0.5.12-0.5.15: CUTLASS block FP8 on SM90 and Blackwell
        "pass": [{"gpu": "H100", "argv": QWEN3_8B, **sglang("0.5.13", *FP8, "--fp8-gemm-backend", "cutlass")}],
        "fail": [{"gpu": "A100", "argv": QWEN3_8B, **sglang("0.5.13", *FP8, "--fp8-gemm-backend", "cutlass")}],
    },
    "kernel-sglang-fp8-gemm-cutlass-sm120": {
        # from 0.5.16: deprecated off SM120
        "pass": [{"gpu": "RTX PRO 6000", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "cutlass")}],
        "fail": [{"gpu": "H100", "argv": QWEN3_8B, **sglang("0.5.20", *FP8, "--fp8-gemm-backend", "cutlass")}],
    },
    "kernel-vllm-nvfp4-gemm-linear-backend-cutlass": {
        # 0.33.0: --linear-backend cutlass keeps CutlassNvFp4LinearKernel only, cc >= 100 (nvfp4_scaled_mm_entry.cu)
        "pass": [
            {"gpu": "B200", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--linear-backend", "cutlass")},
            {"gpu": "RTX 5090", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--linear-backend", "flashinfer_cutlass")},
        ],
        "fail": [
            {"gpu": "H100", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--linear-backend", "cutlass")},
            {"gpu": "L40S", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--linear-backend", "flashinfer_cutlass")},
        ],
    },
    "kernel-sglang-nvfp4-gemm-native-backend": {
        # 0.5.23: ModelOptFp4LinearMethod requires is_blackwell (majors 10-12) unless --fp4-gemm-backend marlin
        "pass": [
            {
                "gpu": "RTX PRO 6000",
                "argv": MINIMAX_NVFP4,
                **sglang("0.5.23", "--fp4-gemm-backend", "flashinfer_cutlass"),
            }
        ],
        "fail": [
            {"gpu": "H100", "argv": MINIMAX_NVFP4, **sglang("0.5.23", "--fp4-gemm-backend", "flashinfer_cutlass")}
        ],
    },
    "kernel-vllm-mxfp4-moe-triton": {
        # 0.33.0: OpenAI triton_kernels MoE gated to (9, 0) <= cc < (13, 0) (gpt_oss_triton_kernels_moe.py:41-53)
        "pass": [{"gpu": "H200", "argv": GPT_OSS, **vllm("0.33.0", "--moe-backend", "triton")}],
        "fail": [{"gpu": "A100", "argv": GPT_OSS, **vllm("0.33.0", "--moe-backend", "triton")}],
    },
    "kernel-vllm-fp8-block-linear-deep-gemm": {
        # 0.33.0: --linear-backend deep_gemm keeps DeepGemmFp8BlockScaledMMKernel only: SM90, SM10x, SM12x
        "pass": [{"gpu": "H100", "argv": MINIMAX_FP8, **vllm("0.33.0", "--linear-backend", "deep_gemm")}],
        "fail": [{"gpu": "A100", "argv": MINIMAX_FP8, **vllm("0.33.0", "--linear-backend", "deep_gemm")}],
    },
    "kernel-sglang-gdn-flashinfer": {
        # 0.5.23: FlashInferGDNKernel needs major >= 9 (gdn_flashinfer.py:148-150, 193-197)
        "pass": [{"gpu": "H100", "argv": QWEN35_BF16, **sglang("0.5.23", "--linear-attn-backend", "flashinfer")}],
        "fail": [
            {"gpu": "A100", "argv": QWEN35_BF16, **sglang("0.5.23", "--linear-attn-backend", "flashinfer")},
            {"gpu": "L40S", "argv": QWEN35_BF16, **sglang("0.5.23", "--linear-attn-prefill-backend", "flashinfer")},
        ],
    },
    "kernel-sglang-draft-attention-fa4": {
        # 0.5.23: the draft's fa4 backend reaches FA4's forward guard (majors 8-12 in 4.0.0b36) unchecked
        "pass": [{"gpu": "A100", "argv": QWEN3_8B, **sglang("0.5.23", *EAGLE_FA4_DRAFT)}],
        "fail": [{"gpu": "T4", "argv": QWEN3_8B, **sglang("0.5.23", *EAGLE_FA4_DRAFT)}],
    },
    "kernel-vllm-nvfp4-moe-cutlass": {
        # 0.33.0: CutlassExpertsFp4 on families 100, 110, 120 only (cutlass_moe.py:716-722)
        "pass": [{"gpu": "RTX 5090", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--moe-backend", "cutlass")}],
        "fail": [{"gpu": "H100", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--moe-backend", "cutlass")}],
    },
    "kernel-vllm-nvfp4-moe-flashinfer-cutlass": {
        # 0.33.0: FlashInferExperts takes NVFP4 W4A4 on SM10x / SM12x (flashinfer_cutlass_moe.py:128-180)
        "pass": [{"gpu": "B200", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--moe-backend", "flashinfer_cutlass")}],
        "fail": [{"gpu": "H100", "argv": MINIMAX_NVFP4, **vllm("0.33.0", "--moe-backend", "flashinfer_cutlass")}],
    },
}
