FIXTURES = {
    "fa3-score-mod": {
        "pass": [{"gpu": "H100", "argv": ["--model", "llama-3.1-8b", "--attention-backend", "fa3"]},
                 {"gpu": "H100", "argv": ["--model", "gemma-2-9b", "--attention-backend", "fa3"]}],
        "fail": [{"gpu": "H100", "argv": ["--model", "llama-3.1-8b", "--attention-backend", "fa3",
                                          "--feature", "score_mod"]},
                 {"gpu": "A100", "argv": ["--feature", "score_mod", "--prefill-attention-backend", "fa3",
                                          "--decode-attention-backend", "triton"]}],
    },
}
