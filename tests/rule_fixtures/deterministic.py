FIXTURES = {
    "deterministic-backend": {
        "pass": [{"gpu": "H100", "argv": ["--attention-backend", "fa3", "--deterministic"]}],
        "fail": [{"gpu": "B200", "argv": ["--attention-backend", "trtllm_mha", "--enable-deterministic-inference"]}],
    },
}
