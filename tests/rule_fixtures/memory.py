"""Fixtures for rules/checks/memory.py: weights per GPU, one request's KV cache, and the GPUs a layout takes."""

FIXTURES = {
    "memory-weights-fit": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"]},
            {"gpu": "8xH200", "argv": ["--model", "deepseek-v3", "--tp-size", "8"]},
            {"gpu": "H100", "argv": ["--model", "gpt-oss-120b"]},  # mxfp4 experts: ~61 GiB
        ],
        "fail": [
            {"gpu": "T4", "argv": ["--model", "deepseek-v3"]},
            {"gpu": "RTX 4090", "argv": ["--model", "llama-3.1-70b"]},
            {"gpu": "H100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "2", "--mem-fraction-static", "0.5"]},
            {"gpu": "H100", "command": ["vllm", "serve", "llama-3.1-70b", "--gpu-memory-utilization", "0.9"]},
        ],
    },
    "memory-kv-context": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"]},
            {"gpu": "L4", "argv": ["--model", "llama-3.1-8b", "--context-length", "8192"]},
        ],
        "fail": [
            # 15 GiB of weights in 24 GiB x 0.7: ~15k tokens of bf16 KV, short of 131072 (SGLang caps requests)
            {"gpu": "L4", "argv": ["--model", "llama-3.1-8b"], "expect": "warn"},
            # vLLM refuses to start instead
            {"gpu": "L4", "command": ["vllm", "serve", "llama-3.1-8b"]},
        ],
    },
    "parallel-gpu-count": {
        "pass": [
            {"gpu": "8xH100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "8"]},
            {"gpu": "H100", "argv": ["--gpu-count", "4", "--tp-size", "2", "--pp-size", "2"]},
        ],
        "fail": [
            {"gpu": "4xH100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "8"]},
            {  # DP replicas beside TP: 16 GPUs
                "gpu": "H100",
                "argv": ["--gpu-count", "8"],
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "qwen3-8b",
                    "--tp",
                    "8",
                    "--dp",
                    "2",
                ],
            },
        ],
    },
}
