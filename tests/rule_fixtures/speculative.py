"""Fixtures for rules/checks/speculative.py."""
from tests.rule_fixtures.model_specific import case


def launch(gpu: str, *flags: str, **extra) -> dict:
    """A pasted `python -m sglang.launch_server` command (for flags `check` has no option for)."""
    return {"gpu": gpu, "command": ["python", "-m", "sglang.launch_server", *flags], **extra}


FIXTURES = {
    "spec-trtllm-mha-topk": {
        "pass": [case("B200", "--model", "llama-3.1-8b", "--attention-backend", "trtllm_mha",
                      "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1")],
        "fail": [case("B200", "--model", "llama-3.1-8b", "--attention-backend", "trtllm_mha",
                      "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"),
                 # no top-k: SGLang's auto choice for LlamaForCausalLM is 4
                 case("H100", "--model", "llama-3.1-8b", "--attention-backend", "trtllm_mha",
                      "--speculative-algorithm", "EAGLE3")],
    },
    "spec-eagle-page-tree": {
        "pass": [case("H100", "--model", "llama-3.1-8b", "--attention-backend", "fa3", "--page-size", "16",
                      "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"),
                 case("B200", "--model", "qwen3-8b", "--attention-backend", "fa4",
                      "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4")],
        "fail": [case("B200", "--model", "deepseek-v3", "--attention-backend", "trtllm_mla",
                      "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2"),
                 case("H100", "--model", "deepseek-v3", "--attention-backend", "flashmla",
                      "--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "4"),
                 # fa4 on SM100 forces page 128 before the auto top-k (4 for Llama) is chosen
                 case("B200", "--model", "llama-3.1-8b", "--attention-backend", "fa4", "--speculative-algorithm",
                      "EAGLE"),
                 case("H100", "--model", "llama-3.1-8b", "--attention-backend", "triton", "--page-size", "16",
                      "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4",
                      engine_version=["sglang==0.5.12"])],
    },
    "spec-ngram-page": {
        "pass": [case("H100", "--model", "qwen3-8b", "--attention-backend", "flashinfer", "--page-size", "16",
                      "--speculative-algorithm", "NGRAM"),
                 case("H100", "--model", "qwen3-8b", "--attention-backend", "fa3", "--speculative-algorithm", "NGRAM")],
        "fail": [case("H100", "--model", "qwen3-8b", "--attention-backend", "fa3", "--page-size", "16",
                      "--speculative-algorithm", "NGRAM"),
                 case("B200", "--model", "qwen3-8b", "--attention-backend", "trtllm_mha",
                      "--speculative-algorithm", "NGRAM")],
    },
    "spec-flex-attention": {
        "pass": [case("H100", "--model", "qwen3-8b", "--attention-backend", "triton",
                      "--speculative-algorithm", "NGRAM")],
        "fail": [case("H100", "--model", "qwen3-8b", "--attention-backend", "flex_attention",
                      "--speculative-algorithm", "NGRAM")],
    },
    "spec-dflash-draft-backend": {
        "pass": [launch("H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "DFLASH",
                        "--attention-backend", "fa3")],
        "fail": [launch("H100", "--model-path", "deepseek-v3", "--speculative-algorithm", "DFLASH",
                        "--attention-backend", "flashmla", expect="warn")],
    },
    "spec-rejection-sampling-topk": {
        "pass": [launch("H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "EAGLE",
                        "--speculative-eagle-topk", "1", "--speculative-use-rejection-sampling")],
        "fail": [launch("H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "EAGLE",
                        "--speculative-eagle-topk", "4", "--speculative-use-rejection-sampling"),
                 launch("H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "NGRAM",
                        "--speculative-use-rejection-sampling")],
    },
    "spec-rejection-sampling-deterministic": {
        "pass": [launch("H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "EAGLE",
                        "--speculative-eagle-topk", "1", "--speculative-use-rejection-sampling",
                        "--enable-deterministic-inference", "--attention-backend", "fa3")],
        "fail": [launch("H100", "--model-path", "qwen3-8b", "--speculative-algorithm", "EAGLE",
                        "--speculative-eagle-topk", "1", "--speculative-use-rejection-sampling",
                        "--enable-deterministic-inference", "--attention-backend", "fa3",
                        engine_version=["sglang==0.5.22"])],
    },
}
