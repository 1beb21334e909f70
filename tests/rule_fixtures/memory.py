"""Fixtures for rules/checks/memory.py: weights per GPU and one request's KV cache."""

# Two H200s in MIG mode, each cut 3g.71gb + 2g.35gb + 1g.18gb: a process has at most the 66.1 GiB slice
MIG_SLICES = "facts/h200x2-mig-slices.json"

FIXTURES = {
    "memory-weights-fit": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"]},
            {"gpu": "8xH200", "argv": ["--model", "deepseek-v3", "--tp-size", "8"]},
            {"gpu": "H100", "argv": ["--model", "gpt-oss-120b"]},  # mxfp4 experts: ~61 GiB
            {"facts": MIG_SLICES, "argv": ["--model", "qwen3-8b"]},  # 15 GiB in the largest slice
        ],
        "fail": [
            {"gpu": "T4", "argv": ["--model", "deepseek-v3"]},
            {"gpu": "RTX 4090", "argv": ["--model", "llama-3.1-70b"]},
            {"gpu": "H100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "2", "--mem-fraction-static", "0.5"]},
            # 61 GiB of Qwen3-32B fits a whole H200, not its largest MIG slice x SGLang's fraction there
            {"facts": MIG_SLICES, "argv": ["--model", "qwen3-32b"]},
        ],
    },
    "vllm-memory-weights-fit": {
        "pass": [{"gpu": "H100", "command": ["vllm", "serve", "llama-3.1-8b"]}],
        "fail": [{"gpu": "H100", "command": ["vllm", "serve", "llama-3.1-70b", "--gpu-memory-utilization", "0.9"]}],
    },
    "memory-kv-context": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b"]},
            {"gpu": "L4", "argv": ["--model", "llama-3.1-8b", "--context-length", "8192"]},
        ],
        "fail": [
            # 15 GiB of weights in 24 GiB x 0.7: ~15k tokens of bf16 KV, short of 131072 (SGLang caps requests)
            {"gpu": "L4", "argv": ["--model", "llama-3.1-8b"], "expect": "warn"},
        ],
    },
    "vllm-memory-warmup": {
        "pass": [
            {"gpu": "H100", "command": ["vllm", "serve", "llama-3.1-8b"], "engine_version": ["vllm==0.19.0"]},
            # no CUDA graphs under --enforce-eager: the warm-up has the freed profiling peak to itself
            {
                "gpu": "H100",
                "command": ["vllm", "serve", "gpt-oss-20b", "--gpu-memory-utilization", "0.95", "--enforce-eager"],
                "engine_version": ["vllm==0.19.0"],
            },
        ],
        # llm-d-planner's v0.19.0 sweep: this launch died warming the sampler up after its CUDA graphs
        "fail": [
            {
                "gpu": "H100",
                "command": [
                    "vllm",
                    "serve",
                    "gpt-oss-20b",
                    "--max-model-len",
                    "8192",
                    "--gpu-memory-utilization",
                    "0.95",
                ],
                "engine_version": ["vllm==0.19.0"],
                "expect": "warn",
            }
        ],
    },
    "vllm-memory-kv-context": {
        "pass": [{"gpu": "L4", "command": ["vllm", "serve", "llama-3.1-8b", "--max-model-len", "32768"]}],
        # vLLM refuses to start where SGLang caps the request
        "fail": [{"gpu": "L4", "command": ["vllm", "serve", "llama-3.1-8b"]}],
    },
}
