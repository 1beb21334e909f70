"""Fixtures for rules/engines/sglang/rules/speculative.py.

SGLang asserts when --speculative-eagle-topk is given without --speculative-num-steps (rule
spec-eagle-topk-needs-steps), so cases with an explicit top-k are pasted launch commands that set all three.
"""

from tests.rule_fixtures.model_specific import case

STEPS = ("--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8")
_SERVE = ("sglang", "serve", "--model-path", "llama-3.1-8b", "--speculative-draft-model-path", "llama-3.2-1b")
# a DFLASH draft of 16-token blocks, then the window's value
DFLASH_WINDOW = (
    *_SERVE,
    "--speculative-algorithm",
    "DFLASH",
    "--speculative-num-draft-tokens",
    "16",
    "--speculative-draft-window-size",
)
EAGLE_WINDOW = (*_SERVE, "--speculative-algorithm", "EAGLE", *STEPS, "--speculative-draft-window-size")


def launch(gpu: str, *flags: str, **extra) -> dict:
    """A pasted `python -m sglang.launch_server` command (for flags `check` has no option for)."""
    return {"gpu": gpu, "command": ["python", "-m", "sglang.launch_server", *flags], **extra}


def eagle(gpu: str, model: str, topk: int, *flags: str, algorithm: str = "EAGLE", **extra) -> dict:
    return launch(
        gpu,
        "--model-path",
        model,
        "--speculative-algorithm",
        algorithm,
        "--speculative-eagle-topk",
        str(topk),
        *STEPS,
        *flags,
        **extra,
    )


FIXTURES = {
    "spec-algorithm-choice": {
        "pass": [
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                engine_version=["sglang==0.5.1"],
            ),
            # from 0.5.12 the flag takes any name (SpeculativeAlgorithm.register)
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "NGRAM",
                engine_version=["sglang==0.5.12"],
            ),
        ],
        "fail": [
            # STANDALONE is a choice from 0.5.2, NGRAM from 0.5.3; argparse compares case and all
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "STANDALONE",
                engine_version=["sglang==0.5.1"],
            ),
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "NGRAM",
                engine_version=["sglang==0.5.2"],
            ),
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "eagle",
                engine_version=["sglang==0.5.11"],
            ),
        ],
    },
    "spec-trtllm-mha-topk": {
        "pass": [eagle("B200", "llama-3.1-8b", 1, "--attention-backend", "trtllm_mha")],
        "fail": [
            eagle("B200", "llama-3.1-8b", 4, "--attention-backend", "trtllm_mha"),
            # no top-k: SGLang's auto choice for LlamaForCausalLM is 4
            case(
                "H100",
                "--model",
                "llama-3.1-8b",
                "--attention-backend",
                "trtllm_mha",
                "--speculative-algorithm",
                "EAGLE3",
            ),
        ],
    },
    "spec-eagle-topk-needs-steps": {
        "pass": [eagle("H100", "llama-3.1-8b", 4, "--attention-backend", "fa3")],
        "fail": [
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-eagle-topk",
                "4",
                "--attention-backend",
                "fa3",
            ),
            launch(
                "B200",
                "--model-path",
                "deepseek-v3",
                "--speculative-algorithm",
                "NEXTN",
                "--speculative-num-draft-tokens",
                "4",
            ),
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-eagle-topk",
                "1",
                engine_version=["sglang==0.5.1"],
            ),
        ],
    },
    "spec-eagle-page-tree": {
        "pass": [
            eagle("H100", "llama-3.1-8b", 4, "--attention-backend", "fa3", "--page-size", "16"),
            eagle("B200", "qwen3-8b", 4, "--attention-backend", "fa4"),
        ],
        "fail": [
            eagle("B200", "deepseek-v3", 2, "--attention-backend", "trtllm_mla"),
            eagle("H100", "deepseek-v3", 4, "--attention-backend", "flashmla", algorithm="NEXTN"),
            # fa4 on SM100 forces page 128 before the auto top-k (4 for Llama) is chosen
            case("B200", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--speculative-algorithm", "EAGLE"),
            eagle(
                "H100",
                "llama-3.1-8b",
                4,
                "--attention-backend",
                "triton",
                "--page-size",
                "16",
                engine_version=["sglang==0.5.12"],
            ),
        ],
    },
    "spec-ngram-page": {
        "pass": [
            case(
                "H100",
                "--model",
                "qwen3-8b",
                "--attention-backend",
                "flashinfer",
                "--page-size",
                "16",
                "--speculative-algorithm",
                "NGRAM",
            ),
            case("H100", "--model", "qwen3-8b", "--attention-backend", "fa3", "--speculative-algorithm", "NGRAM"),
        ],
        "fail": [
            case(
                "H100",
                "--model",
                "qwen3-8b",
                "--attention-backend",
                "fa3",
                "--page-size",
                "16",
                "--speculative-algorithm",
                "NGRAM",
            ),
            case(
                "B200", "--model", "qwen3-8b", "--attention-backend", "trtllm_mha", "--speculative-algorithm", "NGRAM"
            ),
            # 0.5.3, the first release with NGRAM, raises the same
            case(
                "H100",
                "--model",
                "qwen3-8b",
                "--attention-backend",
                "fa3",
                "--page-size",
                "16",
                "--speculative-algorithm",
                "NGRAM",
                engine_version=["sglang==0.5.3"],
            ),
        ],
    },
    "spec-flex-attention": {
        "pass": [
            case("H100", "--model", "qwen3-8b", "--attention-backend", "triton", "--speculative-algorithm", "NGRAM")
        ],
        "fail": [
            case(
                "H100",
                "--model",
                "qwen3-8b",
                "--attention-backend",
                "flex_attention",
                "--speculative-algorithm",
                "NGRAM",
            )
        ],
    },
    "spec-hybrid-backend": {
        "pass": [
            launch(
                "B200",
                "--model-path",
                "deepseek-v3",
                "--speculative-algorithm",
                "EAGLE",
                "--attention-backend",
                "trtllm_mla",
                engine_version=["sglang==0.5.1"],
            ),
        ],
        "fail": [
            launch(
                "B200",
                "--model-path",
                "deepseek-v3",
                "--speculative-algorithm",
                "EAGLE",
                "--attention-backend",
                "trtllm_mla",
                "--prefill-attention-backend",
                "flashinfer",
                engine_version=["sglang==0.5.1.post3"],
            ),
        ],
    },
    "spec-draft-backend": {
        "pass": [
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                "--attention-backend",
                "flashinfer",
                "--speculative-draft-attention-backend",
                "fa3",
            ),
        ],
        "fail": [
            # the draft worker builds fa4 on SM80 (fa4-arch), while the target's flashinfer runs there
            launch(
                "A100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                "--attention-backend",
                "flashinfer",
                "--speculative-draft-attention-backend",
                "fa4",
            ),
            # the draft checkpoint's own attention: gemma-2-9b's head_dim 256 with softcap on fa4's SM100 hd256
            # kernel (fa4-hd256-sm100), while the llama target on triton has none of it
            launch(
                "B200",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                "--attention-backend",
                "triton",
                "--speculative-draft-attention-backend",
                "fa4",
                "--speculative-draft-model-path",
                "gemma-2-9b",
            ),
            # trtllm_mha is a target backend on SM100 only before sglang 0.5.19 (trtllm-mha-arch)
            launch(
                "H100",
                "--model-path",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-draft-attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.9"],
            ),
        ],
    },
    "spec-dflash-draft-backend": {
        "pass": [
            launch(
                "H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "DFLASH", "--attention-backend", "fa3"
            ),
            launch(
                "H100",
                "--model-path",
                "qwen3-8b",
                "--speculative-algorithm",
                "DFLASH",
                "--attention-backend",
                "fa3",
                engine_version=["sglang==0.5.11"],
            ),
        ],
        "fail": [
            launch(
                "H100",
                "--model-path",
                "deepseek-v3",
                "--speculative-algorithm",
                "DFLASH",
                "--attention-backend",
                "flashmla",
                expect="warn",
            ),
            # before 0.5.17 a trtllm_mha draft is always replaced (no all-sliding / causal exception)
            launch(
                "B200",
                "--model-path",
                "qwen3-8b",
                "--speculative-algorithm",
                "DFLASH",
                "--speculative-draft-attention-backend",
                "trtllm_mha",
                engine_version=["sglang==0.5.16"],
                expect="warn",
            ),
        ],
    },
    "spec-rejection-sampling-topk": {
        "pass": [eagle("H100", "qwen3-8b", 1, "--speculative-use-rejection-sampling")],
        "fail": [
            eagle("H100", "qwen3-8b", 4, "--speculative-use-rejection-sampling"),
            launch(
                "H100",
                "--model-path",
                "qwen3-8b",
                "--speculative-algorithm",
                "STANDALONE",
                "--speculative-use-rejection-sampling",
            ),
            launch(
                "H100",
                "--model-path",
                "qwen3-8b",
                "--speculative-algorithm",
                "NGRAM",
                "--speculative-use-rejection-sampling",
                expect="warn",
            ),
        ],
    },
    "spec-rejection-sampling-deterministic": {
        "pass": [
            eagle(
                "H100",
                "qwen3-8b",
                1,
                "--speculative-use-rejection-sampling",
                "--enable-deterministic-inference",
                "--attention-backend",
                "fa3",
            )
        ],
        "fail": [
            eagle(
                "H100",
                "qwen3-8b",
                1,
                "--speculative-use-rejection-sampling",
                "--enable-deterministic-inference",
                "--attention-backend",
                "fa3",
                engine_version=["sglang==0.5.22"],
            )
        ],
    },
    "spec-flashinfer-mla-topk": {
        "pass": [
            eagle("B200", "deepseek-v3", 1, "--attention-backend", "flashinfer", algorithm="NEXTN"),
            eagle(
                "H200",
                "deepseek-v3",
                1,
                "--attention-backend",
                "fa3",
                "--speculative-draft-attention-backend",
                "flashinfer",
                algorithm="NEXTN",
            ),
        ],
        "fail": [
            eagle("B200", "deepseek-v3", 4, "--attention-backend", "flashinfer", algorithm="NEXTN"),
            eagle(
                "H200",
                "deepseek-v3",
                2,
                "--attention-backend",
                "fa3",
                "--speculative-draft-attention-backend",
                "flashinfer",
                algorithm="NEXTN",
            ),
        ],
    },
    "spec-fa-swa-page-tree": {
        "pass": [
            eagle("H100", "gemma-2-9b", 4, "--attention-backend", "fa3"),
            eagle("H100", "llama-3.1-8b", 4, "--attention-backend", "fa3", "--page-size", "16"),
        ],
        "fail": [eagle("H100", "gemma-2-9b", 4, "--attention-backend", "fa3", "--page-size", "16")],
    },
    "spec-uno": {
        "pass": [{"gpu": "H100", "argv": ["--model", "llama-3.1-8b", "--speculative-algorithm", "UNO"]}],
        "fail": [
            {"gpu": "B200", "argv": ["--model", "llama-3.1-8b", "--speculative-algorithm", "UNO"]},
            {
                "gpu": "H100",
                "argv": [
                    "--model",
                    "llama-3.1-8b",
                    "--speculative-algorithm",
                    "UNO",
                    "--attention-backend",
                    "flashinfer",
                ],
            },
            {
                "gpu": "H100",
                "argv": [
                    "--model",
                    "llama-3.1-8b",
                    "--speculative-algorithm",
                    "UNO",
                    "--attention-backend",
                    "fa3",
                    "--enable-deterministic-inference",
                ],
            },
        ],
    },
    "spec-draft-window": {
        "pass": [
            {"gpu": "H100", "command": [*DFLASH_WINDOW, "1024"]},
            {"gpu": "H100", "command": [*EAGLE_WINDOW, "512", "--speculative-draft-sink-size", "4"]},
            # 0.5.12 checks the window inside the DFLASH branch only
            {"gpu": "H100", "command": [*EAGLE_WINDOW, "0"], "engine_version": ["sglang==0.5.12"]},
        ],
        "fail": [
            {"gpu": "H100", "command": [*DFLASH_WINDOW, "0"]},
            {"gpu": "H100", "command": [*DFLASH_WINDOW, "8"]},
            {"gpu": "H100", "command": [*DFLASH_WINDOW, "8"], "engine_version": ["sglang==0.5.12"]},
            {"gpu": "H100", "command": [*EAGLE_WINDOW, "512", "--speculative-draft-sink-size", "-1"]},
            {"gpu": "H100", "command": [*EAGLE_WINDOW[:-1], "--speculative-draft-sink-size", "4"]},
            # EAGLE honours the window from 0.5.21 only
            {"gpu": "H100", "command": [*EAGLE_WINDOW, "512"], "engine_version": ["sglang==0.5.20"], "expect": "warn"},
        ],
    },
}
