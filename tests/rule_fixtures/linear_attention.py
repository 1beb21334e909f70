"""Fixtures for rules/engines/sglang/rules/linear_attention.py (hybrid Mamba / linear-attention models; the
config.json models are model_specific's)."""

from __future__ import annotations

from .install import on
from .model_specific import model_dir

QWEN3_NEXT = ["sglang", "serve", "--model-path", "qwen3-next-80b-a3b"]
NEMOTRON_H = ["sglang", "serve", "--model-path", model_dir("nemotron-h")]
LLAMA = ["sglang", "serve", "--model-path", "tests/fixtures/models/Llama-3.1-8B-Instruct"]

FIXTURES = {
    "model-mamba-no-buffer": {
        "pass": [
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "qwen3-next-80b-a3b",
                    "--mamba-radix-cache-strategy",
                    "no_buffer",
                    "--disable-overlap-schedule",
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
                    "qwen3-next-80b-a3b",
                    "--mamba-radix-cache-strategy",
                    "no_buffer",
                ],
            },
            {
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "qwen3.5-35b-a3b",
                    "--mamba-radix-cache-strategy",
                    "no_buffer",
                    "--disable-overlap-schedule",
                    "--attention-backend",
                    "trtllm_mha",
                    "--page-size",
                    "64",
                ],
                "engine_version": ["sglang==0.5.14"],
            },
        ],
    },
    "model-mamba-extra-buffer": {
        "pass": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--mamba-radix-cache-strategy", "extra_buffer"]},
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--page-size", "64"]},  # auto picks extra_buffer
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--mamba-track-interval", "100"]},  # no page given yet
            {  # the checkpoint's chunk_size 128 divides page 384 (the default 256 would not)
                "gpu": "H100",
                "command": [
                    *NEMOTRON_H,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--attention-backend",
                    "fa3",
                    "--page-size",
                    "384",
                    "--mamba-track-interval",
                    "384",
                ],
            },
            {  # the PD check is new in 0.5.17
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer_lazy",
                    "--disaggregation-mode",
                    "decode",
                ],
                "engine_version": ["sglang==0.5.16"],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--attention-backend",
                    "fa3",
                    "--page-size",
                    "48",
                    "--mamba-track-interval",
                    "240",
                ],
            },
            {
                "gpu": "H100",
                "command": [
                    *NEMOTRON_H,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--attention-backend",
                    "fa3",
                    "--page-size",
                    "96",
                    "--mamba-track-interval",
                    "384",
                ],
            },
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--page-size", "64", "--mamba-track-interval", "96"]},
            {"gpu": "H100", "command": [*LLAMA, "--mamba-radix-cache-strategy", "extra_buffer"]},
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer_lazy",
                    "--disaggregation-mode",
                    "prefill",
                ],
            },
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer_lazy",
                    "--speculative-algorithm",
                    "EAGLE",
                ],
                "engine_version": ["sglang==0.5.16"],
            },
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--linear-attn-backend",
                    "flashinfer",
                ],
            },
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-num-steps",
                    "3",
                    "--speculative-eagle-topk",
                    "1",
                    "--speculative-num-draft-tokens",
                    "4",
                    "--mamba-track-interval",
                    "2",
                ],
            },
            {  # Qwen3.5's Blackwell override sets trtllm_mha at page 64 for an explicit extra_buffer
                "gpu": "B200",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    "qwen3.5-35b-a3b",
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--mamba-track-interval",
                    "96",
                ],
            },
        ],
    },
    "model-mamba2-track-interval": {
        "pass": [
            {"gpu": "H100", "command": NEMOTRON_H},
            {"gpu": "H100", "command": [*NEMOTRON_H, "--mamba-track-interval", "128"]},  # its chunk_size
        ],
        "fail": [
            {"gpu": "H100", "command": [*NEMOTRON_H, "--mamba-track-interval", "64"]},
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "--model-path",
                    model_dir("falcon-h1"),
                    "--mamba-radix-cache-strategy",
                    "extra_buffer",
                    "--mamba-track-interval",
                    "128",
                ],
            },
        ],
    },
    "model-linear-attn-flashkda-decode": {
        "pass": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--linear-attn-backend", "flashkda"]},
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--linear-attn-prefill-backend",
                    "flashkda",
                    "--linear-attn-decode-backend",
                    "triton",
                ],
            },
        ],
        "fail": [{"gpu": "H100", "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashkda"]}],
    },
    "model-linear-attn-flashinfer-ssm-dtype": {
        "pass": [
            {
                "gpu": "B200",
                "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashinfer", "--mamba-ssm-dtype", "bfloat16"],
            },
        ],
        "fail": [
            {"gpu": "B200", "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashinfer"]},
            {
                "gpu": "B300",
                "command": [*QWEN3_NEXT, "--linear-attn-backend", "flashinfer", "--mamba-ssm-dtype", "float32"],
            },
            {"gpu": "RTX 5090", "command": [*QWEN3_NEXT, "--linear-attn-verify-backend", "flashinfer"]},
            {
                "gpu": "B200",
                "command": [*QWEN3_NEXT, "--linear-attn-decode-backend", "flashinfer"],
                "engine_version": ["sglang==0.5.10"],
            },
        ],
    },
    "model-linear-attn-flashinfer-cuda13": {
        "pass": [
            on("b200-torch-cu130", command=[*QWEN3_NEXT, "--linear-attn-prefill-backend", "flashinfer"]),
        ],
        "fail": [
            on("b200-ok", command=[*QWEN3_NEXT, "--linear-attn-prefill-backend", "flashinfer"]),
            on(
                "b200-ok", command=[*QWEN3_NEXT, "--linear-attn-backend", "flashinfer", "--mamba-ssm-dtype", "bfloat16"]
            ),
        ],
    },
    "model-linear-replayssm": {
        "pass": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--enable-linear-replayssm"]},
            {
                "gpu": "B200",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm-spec", "--mamba-ssm-dtype", "bfloat16"],
            },
            # the decode server of a PD pair runs spec verify; a ragged mode with DFLASH and a ring-writing kernel
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_RAGGED_VERIFY_MODE=compact",
                    *QWEN3_NEXT,
                    "--enable-linear-replayssm-spec",
                    "--disaggregation-mode",
                    "decode",
                    "--speculative-algorithm",
                    "DFLASH",
                    "--linear-attn-verify-backend",
                    "triton",
                ],
            },
        ],
        "fail": [
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--enable-linear-replayssm-spec"]},
            {"gpu": "H100", "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--disaggregation-mode", "decode"]},
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--linear-replayssm-cache-len", "0"],
                "engine_version": ["sglang==0.5.15"],
            },
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm-spec", "--disaggregation-mode", "prefill"],
            },
            # SGLang reads --linear-attn-verify-backend itself: with none named a ragged mode is refused
            {
                "gpu": "H100",
                "command": [
                    "SGLANG_RAGGED_VERIFY_MODE=cap-accept",
                    *QWEN3_NEXT,
                    "--enable-linear-replayssm-spec",
                    "--speculative-algorithm",
                    "DFLASH",
                ],
            },
            {
                "gpu": "H100",
                "command": ["SGLANG_RAGGED_VERIFY_MODE=ragged", *QWEN3_NEXT, "--enable-linear-replayssm-spec"],
                "engine_version": ["sglang==0.5.17"],
            },
            # SM100 + bfloat16 SSM state: SGLang's linear-attention decode default is flashinfer
            {"gpu": "B200", "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--mamba-ssm-dtype", "bfloat16"]},
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--mamba-radix-cache-strategy", "extra_buffer"],
            },
            {
                "gpu": "H100",
                "command": [
                    *QWEN3_NEXT,
                    "--enable-linear-replayssm-spec",
                    "--speculative-algorithm",
                    "EAGLE",
                    "--speculative-eagle-topk",
                    "4",
                    "--speculative-num-steps",
                    "3",
                ],
            },
            {
                "gpu": "H100",
                "command": [*QWEN3_NEXT, "--enable-linear-replayssm", "--linear-attn-decode-backend", "flashinfer"],
                "engine_version": ["sglang==0.5.15"],
            },
        ],
    },
}
