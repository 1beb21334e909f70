"""Fixtures for rules/engines/sglang/rules/deterministic.py."""

from tests.rule_fixtures.model_specific import model_dir

DET = ["--enable-deterministic-inference"]
RL_ON_POLICY = ["sglang", "serve", "--model-path", "qwen3-8b", "--rl-on-policy-target", "fsdp"]

FIXTURES = {
    "deterministic-backend": {
        "pass": [
            {"gpu": "H100", "argv": ["--attention-backend", "fa3", "--deterministic"]},
            {"gpu": "B200", "argv": ["--model", "llama-3.1-8b", *DET]},
            # LFM2's SM100 default (flashinfer, model_overrides/lfm2.py) precedes the fallback
            {"gpu": "B200", "argv": ["--model", model_dir("lfm2"), *DET]},
            # 0.5.5: the generic default (flashinfer before 0.5.6.post2) is filled before the deterministic check
            {"gpu": "B200", "argv": ["--model", "llama-3.1-8b", *DET], "engine_version": ["sglang==0.5.5"]},
            {
                "gpu": "H100",
                "argv": ["--model", "qwen3-8b", "--attention-backend", "triton", *DET],
                "engine_version": ["sglang==0.5.3"],
            },
        ],
        "fail": [
            {"gpu": "B200", "argv": ["--attention-backend", "trtllm_mha", *DET]},
            # 0.5.4.post3-0.5.11: the generic default (trtllm_mha on SM100 from 0.5.6.post2) meets the deterministic
            # list instead of the fallback (sglang 0.5.10's own resolution: rejected)
            {"gpu": "B200", "argv": ["--model", "llama-3.1-8b", *DET], "engine_version": ["sglang==0.5.10"]},
            # 0.5.3 / 0.5.3.post3: no fallback, the list refuses the unset backend
            {"gpu": "H100", "argv": ["--model", "qwen3-8b", *DET], "engine_version": ["sglang==0.5.3.post3"]},
            # fa4 joins DETERMINISTIC_ATTENTION_BACKEND_CHOICES in 0.5.16 (0.5.15 server_args.py: flashinfer, fa3,
            # triton, ascend)
            {
                "gpu": "B200",
                "argv": ["--model", "llama-3.1-8b", "--attention-backend", "fa4", *DET],
                "engine_version": ["sglang==0.5.15"],
            },
            # SGLang's DeepSeek-V3 default on SM100 (trtllm_mla) is set before the deterministic fallback
            # (confirmed with sglang 0.5.23's own resolution)
            {"gpu": "B200", "argv": ["--model", "deepseek-v3", *DET]},
            # so is OLMo's (trtllm_mha on SM100, model_overrides/olmo2.py; oracle: rejected)
            {"gpu": "B200", "argv": ["--model", model_dir("olmo-3"), *DET]},
            {
                "gpu": "H100",
                "command": [
                    "sglang",
                    "serve",
                    "llama-3.1-8b",
                    "--attention-backend",
                    "torch_native",
                    "--enable-deterministic-inference",
                ],
            },
        ],
    },
    "deterministic-mla-backend": {
        "pass": [
            {"gpu": "H200", "argv": ["--model", "deepseek-v3", "--attention-backend", "fa3", *DET]},
            {
                "gpu": "B200",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "fa4", *DET],
                "engine_version": ["sglang==0.5.18"],
            },
            {"gpu": "B200", "argv": ["--model", "deepseek-v3", "--attention-backend", "triton", *DET]},
        ],
        "fail": [
            {"gpu": "B200", "argv": ["--model", "deepseek-v3", "--attention-backend", "flashinfer", *DET]},
            # before 0.5.18 a fixed ["fa3", "triton"] for DeepSeek models (0.5.17 server_args.py)
            {
                "gpu": "B200",
                "argv": ["--model", "deepseek-v3", "--attention-backend", "fa4", *DET],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
    "deterministic-radix-cache": {
        "pass": [
            {"gpu": "H100", "argv": ["--model", "llama-3.1-8b", "--attention-backend", "triton", *DET]},
            {
                "gpu": "H100",
                "argv": ["--model", "llama-3.1-8b", "--attention-backend", "flashinfer", *DET],
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "llama-3.1-8b",
                    "--disable-radix-cache",
                ],
            },
        ],
        "fail": [
            {
                "gpu": "H100",
                "argv": ["--model", "llama-3.1-8b", "--attention-backend", "flashinfer", *DET],
                "expect": "warn",
            },
            # SGLang's own deterministic default on SM100 for non-DeepSeek models is flashinfer
            {"gpu": "B200", "argv": ["--model", "qwen3-8b", *DET], "expect": "warn"},
        ],
    },
    "deterministic-rl-on-policy": {
        "pass": [{"gpu": "H100", "command": [*RL_ON_POLICY, "--enable-deterministic-inference"]}],
        "fail": [{"gpu": "H100", "command": RL_ON_POLICY, "expect": "warn"}],
    },
}
