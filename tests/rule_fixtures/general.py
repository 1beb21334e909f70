FIXTURES = {
    "general-backend-platform": {
        "pass": [{"gpu": "H100", "argv": ["--attention-backend", "flashinfer"]}],
        "fail": [{"gpu": "H100", "argv": ["--attention-backend", "aiter"]},
                 {"gpu": "B200", "argv": ["--attention-backend", "intel_xpu"]}],
    },
}
