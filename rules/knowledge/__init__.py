"""Knowledge as data, each fact with its upstream source: GPU profiles, backends, KV dtypes, versions."""

# The newest release each rule was verified against: the behaviour applied when a target's version is unknown.
NEWEST_KNOWN = {
    "sglang": "0.5.23",
    "flash-attn-4": "4.0.0b36",
    "vllm": "0.33.0",  # rules/knowledge/vllm_backends.py and rules/checks/vllm.py were read in this wheel
}
