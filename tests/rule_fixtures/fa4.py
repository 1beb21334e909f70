FIXTURES = {
    "fa4-deterministic-mla-arch": {
        "pass": [{"gpu": "B200", "argv": ["--model", "deepseek-v3", "--attention-backend", "fa4",
                                          "--enable-deterministic-inference"]},
                 {"gpu": "Jetson Thor", "argv": ["--model", "deepseek-r1", "--backend", "fa4", "--deterministic"]}],
        "fail": [{"gpu": "H100", "argv": ["--model", "deepseek-v3", "--attention-backend", "fa4",
                                          "--enable-deterministic-inference"]},
                 {"gpu": "RTX 5090", "argv": ["--model", "deepseek-v2-lite", "--attention-backend", "fa4",
                                              "--deterministic"]},
                 {"gpu": "sm_90", "command": ["python", "-m", "sglang.launch_server", "--model-path", "deepseek-v3",
                                              "--attention-backend", "fa4", "--enable-deterministic-inference"]}],
    },
}
