"""GPU profiles: product name -> compute capability and memory, each with its source.

`lookup(name)` accepts what a user types or NVML reports ("NVIDIA H100 80GB HBM3", "h100", "RTX PRO 6000
Blackwell Server Edition", "DGX Spark") and bare compute capabilities (`sm_90`, `sm90`, `sm90a`, `90`,
`9.0`, `12.1`, `sm_100a`). Memory is the usable HBM/GDDR of the common SKU in GiB (NVML reports slightly
less); unified-memory parts (Thor, GB10) give the shared LPDDR size.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

NVIDIA_CUDA_GPUS = "developer.nvidia.com/cuda-gpus (compute capability table)"


class GpuProfile(NamedTuple):
    name: str
    cc: tuple[int, int]
    memory_gib: Optional[float]
    aliases: tuple[str, ...] = ()
    source: str = NVIDIA_CUDA_GPUS
    note: str = ""

    @property
    def sm(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def compute_capability(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"


_BLACKWELL_DC = (
    "sglang model_override_base.get_default_attn_backend docstring: 'SM100/SM103 (Blackwell B200/GB200/B300)'"
)

PROFILES: tuple[GpuProfile, ...] = (
    GpuProfile("T4", (7, 5), 16, ("tesla t4",)),
    GpuProfile("V100", (7, 0), 32, ("tesla v100", "v100 32gb", "v100 16gb")),
    GpuProfile(
        "A100",
        (8, 0),
        80,
        ("a100 80gb", "a100 40gb"),
        source=f"{NVIDIA_CUDA_GPUS}; flash-attention README 'Ampere ... (e.g., A100)'",
    ),
    GpuProfile("A800", (8, 0), 80, (), source=f"{NVIDIA_CUDA_GPUS}; sgl-kernel is_fa3_supported comment 'A100/A*0'"),
    GpuProfile("A30", (8, 0), 24),
    GpuProfile("A10", (8, 6), 24),
    GpuProfile("A10G", (8, 6), 24, (), note="AWS variant of A10"),
    GpuProfile("A40", (8, 6), 48),
    GpuProfile("RTX A6000", (8, 6), 48, ("a6000",)),
    GpuProfile("RTX 3090", (8, 6), 24, ("3090", "rtx 3090 ti")),
    GpuProfile("L4", (8, 9), 24),
    GpuProfile("L20", (8, 9), 48),
    GpuProfile("L40", (8, 9), 48),
    GpuProfile("L40S", (8, 9), 48),
    GpuProfile("RTX 4090", (8, 9), 24, ("4090", "rtx 4090d")),
    GpuProfile(
        "H100",
        (9, 0),
        80,
        ("h100 nvl", "h100 pcie"),
        source=f"{NVIDIA_CUDA_GPUS}; sglang docs attention_backend.md 'Default for Hopper Machines, e.g., H100, H200, H20'",
    ),
    GpuProfile("H200", (9, 0), 141, ("h200 nvl",)),
    GpuProfile("H20", (9, 0), 96),
    GpuProfile("H800", (9, 0), 80),
    GpuProfile("GH200", (9, 0), 96, ("gh200 480gb", "grace hopper")),
    GpuProfile("B200", (10, 0), 179, (), source=f"{NVIDIA_CUDA_GPUS}; {_BLACKWELL_DC}"),
    GpuProfile("GB200", (10, 0), 186, (), source=f"{NVIDIA_CUDA_GPUS}; {_BLACKWELL_DC}"),
    GpuProfile(
        "B300",
        (10, 3),
        268,
        ("b300 sxm6 ac",),
        source=f"{NVIDIA_CUDA_GPUS}; flash-attention flash_fwd_sm100.py 'sm_103 (B300)'",
    ),
    GpuProfile("GB300", (10, 3), 279, (), source=f"{NVIDIA_CUDA_GPUS}; flash-attention benchmarks 'SM103 (GB300)'"),
    GpuProfile(
        "Jetson Thor",
        (11, 0),
        128,
        ("thor", "jetson agx thor", "agx thor"),
        source=f"{NVIDIA_CUDA_GPUS}; flash-attention setup.py 'Thor rename: 12.9 uses sm_101; 13.0+ uses sm_110'",
        note="reported as sm_101 by CUDA 12.9 toolkits; unified memory",
    ),
    GpuProfile("RTX 5090", (12, 0), 32, ("5090",)),
    GpuProfile("RTX 5080", (12, 0), 16, ("5080",)),
    GpuProfile(
        "RTX PRO 6000",
        (12, 0),
        96,
        ("rtx pro 6000 blackwell", "rtx 6000 pro"),
        source=f"{NVIDIA_CUDA_GPUS}; sglang docs attention_backend.md 'Blackwell SM120 (e.g., RTX PRO 6000 Blackwell)'",
    ),
    GpuProfile("GB10", (12, 1), 128, ("dgx spark", "spark", "gb10 dgx spark"), note="DGX Spark; unified memory"),
)

# Words NVML and marketing add around the product name; dropped before matching.
_NOISE = {
    "nvidia",
    "tesla",
    "geforce",
    "sxm",
    "sxm2",
    "sxm4",
    "sxm5",
    "sxm6",
    "pcie",
    "hbm2",
    "hbm2e",
    "hbm3",
    "hbm3e",
    "server",
    "edition",
    "workstation",
    "max",
    "q",
    "gpu",
    "blackwell",
    "ada",
    "generation",
    "lovelace",
}
_MEMORY = re.compile(r"^\d+(gb|g|gib)$")


def normalise(name: str) -> str:
    words = re.split(r"[\s\-_/]+", name.strip().lower())
    return " ".join(w for w in words if w and w not in _NOISE and not _MEMORY.match(w))


_BY_KEY: dict[str, GpuProfile] = {}
for _profile in PROFILES:
    for _key in (_profile.name, *_profile.aliases):
        _BY_KEY[normalise(_key)] = _profile
# NVML prints "NVIDIA RTX A6000" and "NVIDIA RTX PRO 6000 Blackwell ..."; users type "RTX4090".
for _key, _profile in list(_BY_KEY.items()):
    _BY_KEY.setdefault(_key.replace(" ", ""), _profile)

_CC_PATTERNS = (
    re.compile(r"^sm_?(\d{1,2})(\d)[af]?$"),  # sm_90, sm90, sm90a, sm_100a, sm_121
    re.compile(r"^(\d{1,2})\.(\d)$"),  # 9.0, 12.1
    re.compile(r"^(\d{1,2})(\d)$"),  # 90, 100, 121
)


def parse_compute_capability(text: str) -> Optional[tuple[int, int]]:
    """(major, minor) from `sm_90`, `sm90a`, `90`, `9.0`, `12.1`, `sm_100a`; None if it is not one."""
    text = text.strip().lower()
    for pattern in _CC_PATTERNS:
        match = pattern.match(text)
        if match:
            major, minor = int(match.group(1)), int(match.group(2))
            if 3 <= major <= 15:
                return major, minor
    return None


def lookup(name: str) -> Optional[GpuProfile]:
    """The profile for a product name (any spelling above), or None."""
    key = normalise(name)
    return _BY_KEY.get(key) or _BY_KEY.get(key.replace(" ", ""))


# Accelerators of other vendors, told apart from a misspelt NVIDIA name (the rules know CUDA GPUs only):
# (vendor and family, pattern over the lower-cased name, source of the family's product names).
OTHER_VENDORS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "AMD Instinct",
        re.compile(r"^(amd[\s_-]*)?(instinct[\s_-]*)?mi[\s_-]*\d{2,3}[a-z]*\b"),
        "rocm.docs.amd.com, GPU hardware specifications (MI50 ... MI355X)",
    ),
    (
        "AMD Radeon",
        re.compile(r"^(amd[\s_-]*)?(radeon\b|rx[\s_-]*\d{3,4}|(radeon[\s_-]*)?pro[\s_-]*w\d{4})"),
        "rocm.docs.amd.com, GPU hardware specifications (Radeon RX 7900 XTX, Radeon PRO W7900, ...)",
    ),
    ("AMD", re.compile(r"^amd\b"), "AMD's own name prefix"),
    ("Intel Gaudi", re.compile(r"^(intel[\s_-]*)?(habana[\s_-]*)?gaudi"), "intel.com, Intel Gaudi AI accelerators"),
    (
        "Intel Arc / Data Center GPU",
        re.compile(r"^(intel[\s_-]*)?(arc\b|data[\s_-]*center[\s_-]*gpu|ponte[\s_-]*vecchio|iris\b)"),
        "intel.com, Intel Arc and Data Center GPU Max/Flex series",
    ),
    ("Intel", re.compile(r"^intel\b"), "Intel's own name prefix"),
)


def other_vendor(name: str) -> Optional[str]:
    """The vendor and family of a non-NVIDIA accelerator name ("MI300X" -> "AMD Instinct"), or None."""
    text = name.strip().lower()
    return next((vendor for vendor, pattern, _ in OTHER_VENDORS if pattern.match(text)), None)


def profile_for_cc(cc: tuple[int, int]) -> GpuProfile:
    """A nameless profile for a bare compute capability (memory unknown)."""
    return GpuProfile(f"sm_{cc[0]}{cc[1]}", cc, None, source="given as a compute capability")


def names() -> list[str]:
    return [p.name for p in PROFILES]
