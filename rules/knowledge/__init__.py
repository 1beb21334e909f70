"""Knowledge as data, each fact with its upstream source: GPU profiles, backends, KV dtypes, versions."""

# The newest release each rule was verified against: the behaviour applied when a target's version is unknown.
NEWEST_KNOWN = {
    "sglang": "0.5.23",
    "flash-attn-4": "4.0.0b36",
    "vllm": "0.33.0",  # rules/knowledge/vllm_backends.py and rules/checks/vllm.py were read in this wheel
}
# The oldest release of each engine any rule's range starts at (sglang>=0.5.1, vllm>=0.13.0). Every sglang
# release from 0.5.1 (0.5.0 was never published as a final release; 0.5.0rc2 is the nearest) to 0.5.23 was read
# by bench/release_walk.py; each rule's `verified` note says how far its own range was. An older target is
# judged as this release (rules/target.py Target.as_oldest_known) and warned about (general-engine-version).
OLDEST_KNOWN = {
    "sglang": "0.5.1",
    "vllm": "0.13.0",
}
