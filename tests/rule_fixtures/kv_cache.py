FIXTURES = {
    "kv-mxfp8-requires-fa4": {
        "pass": [{"gpu": "B200", "argv": ["--model", "llama-3.1-8b", "--attention-backend", "fa4",
                                          "--kv-cache-dtype", "mxfp8", "--page-size", "128"]}],
        "fail": [{"gpu": "B200", "argv": ["--model", "llama-3.1-8b", "--attention-backend", "fa3",
                                          "--kv-cache-dtype", "mxfp8"]},
                 {"gpu": "B200", "argv": ["--model", "llama-3.1-8b", "--prefill-attention-backend", "fa4",
                                          "--decode-attention-backend", "triton", "--kv-cache-dtype", "mxfp8"]}],
    },
}
