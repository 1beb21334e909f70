"""Knowledge as data, each fact with its upstream source: GPU profiles, backends, KV dtypes, versions."""

import pkgutil


def data_text(name: str, package: str = __name__) -> str:
    """A data file of `package` (this one by default), through its loader (zip-safe, as importlib.resources is,
    without that package's ~7 ms of imports on every check)."""
    data = pkgutil.get_data(package, name)
    if data is None:
        raise FileNotFoundError(f"{package}/{name}: the package's loader cannot read data files")
    return data.decode("utf-8")


# The newest release each rule was verified against: the behaviour applied when a target's version is unknown.
NEWEST_KNOWN = {
    "sglang": "0.5.23",
    "flash-attn-4": "4.0.0b36",
    "vllm": "0.33.0",  # rules/engines/vllm/capabilities.py and rules/engines/vllm/rules/vllm.py were read in this wheel
}
# The oldest release of each engine any rule's range starts at (sglang>=0.5.1, vllm>=0.10.0). Every sglang
# release from 0.5.1 (0.5.0 was never published as a final release; 0.5.0rc2 is the nearest) to 0.5.23 was read
# by bench/release_walk.py; each rule's `verified` note says how far its own range was. An older target is
# judged as this release (rules/core/target.py Target.as_oldest_known) and warned about (general-engine-version).
OLDEST_KNOWN = {
    "sglang": "0.5.1",
    "vllm": "0.10.0",
}
