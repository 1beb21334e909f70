"""GPU profiles: product name -> compute capability and memory, each with its source.

`lookup(name)` accepts what a user types or NVML reports ("NVIDIA H100 80GB HBM3", "h100", "RTX PRO 6000
Blackwell Server Edition", "DGX Spark") and bare compute capabilities (`sm_90`, `sm90`, `sm90a`, `90`,
`9.0`, `12.1`, `sm_100a`). A product sold with several memory sizes is one profile per size, chosen by the
size in the name ("A100 40GB", "NVIDIA A100-SXM4-40GB", "V100 16GB"); a bare name is the common SKU.
Memory is in GiB: NVML's total where an nvidia-smi of that product was read (`nvml_mib`, cited in
NVML_TOTALS), else the nominal size; unified-memory parts (Thor, GB10) give the shared LPDDR size.
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

# NVML's memory.total (MiB) as nvidia-smi prints it, for the products whose printout was read (issue 22).
NVML_TOTALS = {
    "A100": (81920, "nvidia-smi 'NVIDIA A100-SXM4-80GB ... / 81920MiB' (public logs, e.g. library file 2867190445)"),
    "A100 40GB": (40960, "nvidia-smi 'NVIDIA A100-SXM4-40GB ... / 40960MiB' (library file 13181000837)"),
    "H100": (81559, "nvidia-smi 'NVIDIA H100 80GB HBM3 ... / 81559MiB' (library file 66040938675)"),
    "H100 NVL": (95830, "nvidia-smi 'NVIDIA H100 NVL ... / 95830MiB' (library file 32871966464)"),
    "H200": (143771, "nvidia-smi on the lent H200, ../shared/research/h200-memory.md"),
    "H20": (97871, "nvidia-smi 'NVIDIA H20 ... / 97871MiB' (library file 69782509629)"),
    "GH200": (97871, "nvidia-smi 'NVIDIA GH200 480GB ... / 97871MiB' (library file 54538862760)"),
    "B200": (183359, "nvidia-smi 'NVIDIA B200 ... / 183359MiB' (library file 8858901986)"),
    "V100": (32768, "nvidia-smi 'Tesla V100-SXM2-32GB ... / 32768MiB' (library file 70902377371)"),
    "V100 16GB": (16384, "nvidia-smi 'Tesla V100-SXM2-16GB ... / 16384MiB' (1CatAI/1Cat-vLLM#237)"),
    "L40S": (46068, "nvidia-smi 'NVIDIA L40S ... / 46068MiB' (tests/fixtures/memory_logs.json vllm-l40s-*)"),
    "A40": (46068, "nvidia-smi 'NVIDIA A40 ... / 46068MiB' (sgl-project/sglang#1522)"),
    "RTX 4090": (
        24564,
        "nvidia-smi 'NVIDIA GeForce RTX 4090', 24564 MiB (tests/fixtures/memory_logs.json sglang-kuiper-*)",
    ),
    "RTX 5090": (32607, "nvidia-smi 'NVIDIA GeForce RTX 5090 D 32607MiB' (vllm-project/vllm#34076)"),
    "RTX 5080": (16303, "nvidia-smi 'NVIDIA GeForce RTX 5080 ... / 16303MiB' (library file 47444754202)"),
}


# Unified-memory parts: NVML gives no memory total ('Not Supported' in nvidia-smi); what torch (and so vLLM's
# total, SGLang's free memory) sees is the memory the OS exposes, in GiB.
TORCH_TOTALS_GIB = {
    "GB10": (
        121.69,
        "DGX Spark (128 GB LPDDR5x) as CUDA reports it: 'CUDA free caps at ~102/121.69 GiB' "
        "(MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47), '1x DGX Spark GB10 128GB (121.69 GiB unified)' "
        "(MiaAI-Lab/Qwen3.8-Flash-Next-Single-DGX-Spark#30), '128 GB UMA / 121 GB OS-visible' (vllm-project/vllm#40991)",
    ),
}


def torch_total_gib(name: str) -> Optional[tuple[float, str]]:
    """(GiB torch reports as the device's total, the source) for a unified-memory product that has one, else None."""
    profile = lookup(name) if name else None
    return TORCH_TOTALS_GIB.get(profile.name) if profile is not None else None


def _gib(name: str, nominal: float) -> float:
    """NVML's total in GiB for a product whose printout was read, else the nominal size."""
    return round(NVML_TOTALS[name][0] / 1024, 2) if name in NVML_TOTALS else nominal


PROFILES: tuple[GpuProfile, ...] = (
    GpuProfile("T4", (7, 5), 16, ("tesla t4",)),
    GpuProfile("V100", (7, 0), _gib("V100", 32), ("tesla v100", "v100 32gb", "v100 sxm2 32gb")),
    GpuProfile("V100 16GB", (7, 0), _gib("V100 16GB", 16), ("v100 16gb", "v100 sxm2 16gb", "v100 pcie 16gb")),
    GpuProfile(
        "A100",
        (8, 0),
        _gib("A100", 80),
        ("a100 80gb", "a100 sxm4 80gb", "a100 pcie 80gb"),
        source=f"{NVIDIA_CUDA_GPUS}; flash-attention README 'Ampere ... (e.g., A100)'",
    ),
    GpuProfile(
        "A100 40GB",
        (8, 0),
        _gib("A100 40GB", 40),
        ("a100 40gb", "a100 sxm4 40gb", "a100 pcie 40gb"),
        source=f"{NVIDIA_CUDA_GPUS}; flash-attention README 'Ampere ... (e.g., A100)'",
    ),
    GpuProfile("A800", (8, 0), 80, (), source=f"{NVIDIA_CUDA_GPUS}; sgl-kernel is_fa3_supported comment 'A100/A*0'"),
    GpuProfile("A30", (8, 0), 24),
    GpuProfile("A10", (8, 6), 24),
    GpuProfile("A10G", (8, 6), 24, (), note="AWS variant of A10"),
    GpuProfile("A40", (8, 6), _gib("A40", 48)),
    GpuProfile("RTX A6000", (8, 6), 48, ("a6000",)),
    GpuProfile("RTX 3090", (8, 6), 24, ("3090", "rtx 3090 ti")),
    GpuProfile("L4", (8, 9), 24),
    GpuProfile("L20", (8, 9), 48),
    GpuProfile("L40", (8, 9), 48),
    GpuProfile("L40S", (8, 9), _gib("L40S", 48)),
    GpuProfile("RTX 4090", (8, 9), _gib("RTX 4090", 24), ("4090", "rtx 4090d")),
    GpuProfile(
        "H100",
        (9, 0),
        _gib("H100", 80),
        ("h100 80gb", "h100 sxm", "h100 pcie", "h100 sxm5 80gb"),
        source=f"{NVIDIA_CUDA_GPUS}; sglang docs attention_backend.md 'Default for Hopper Machines, e.g., H100, H200, H20'",
    ),
    GpuProfile("H100 NVL", (9, 0), _gib("H100 NVL", 94), ("h100 nvl", "h100 94gb", "h100 nvl 94gb")),
    GpuProfile("H200", (9, 0), _gib("H200", 141), ("h200 nvl", "h200 141gb")),
    GpuProfile("H20", (9, 0), _gib("H20", 96)),
    GpuProfile("H800", (9, 0), 80),
    GpuProfile(
        "GH200",
        (9, 0),
        _gib("GH200", 96),
        ("gh200 96gb", "gh200 480gb", "grace hopper"),
        note="the 96 GB HBM3 part; NVML names it 'GH200 480GB' (CPU and GPU memory together)",
    ),
    GpuProfile("GH200 144GB", (9, 0), 144, ("gh200 144gb", "gh200 624gb"), note="the 144 GB HBM3e part; nominal size"),
    GpuProfile("B200", (10, 0), _gib("B200", 179), (), source=f"{NVIDIA_CUDA_GPUS}; {_BLACKWELL_DC}"),
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
    GpuProfile("RTX 5090", (12, 0), _gib("RTX 5090", 32), ("5090", "rtx 5090 d")),
    GpuProfile("RTX 5080", (12, 0), _gib("RTX 5080", 16), ("5080",)),
    GpuProfile(
        "RTX PRO 6000",
        (12, 0),
        96,
        (
            "rtx pro 6000 blackwell",
            "rtx 6000 pro",
            "rtx pro 6000 max q",
            "rtx pro 6000 blackwell max q",
            "rtx pro 6000 96gb",
        ),
        source=f"{NVIDIA_CUDA_GPUS}; sglang docs attention_backend.md 'Blackwell SM120 (e.g., RTX PRO 6000 Blackwell)'",
        note="Server, Workstation and Max-Q editions, all 96 GB; nominal size",
    ),
    GpuProfile("RTX 6000 Ada", (8, 9), 48, ("rtx 6000 ada generation",), note="48 GB; nominal size"),
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
_MEMORY = re.compile(r"^(\d+)(gb|g|gib)$")


def normalise(name: str) -> str:
    words = re.split(r"[\s\-_/]+", name.strip().lower())
    return " ".join(w for w in words if w and w not in _NOISE and not _MEMORY.match(w))


def _memory_size(name: str) -> Optional[int]:
    """The memory size a name carries ("A100-SXM4-40GB" -> 40), or None."""
    for word in re.split(r"[\s\-_/]+", name.strip().lower()):
        match = _MEMORY.match(word)
        if match:
            return int(match.group(1))
    return None


_BY_KEY: dict[str, GpuProfile] = {}
for _profile in PROFILES:
    for _key in (_profile.name, *_profile.aliases):
        if _memory_size(_key) is None:  # a spelling with a size names that size only (_BY_SIZE)
            _BY_KEY[normalise(_key)] = _profile
# NVML prints "NVIDIA RTX A6000" and "NVIDIA RTX PRO 6000 Blackwell ..."; users type "RTX4090".
for _key, _profile in list(_BY_KEY.items()):
    _BY_KEY.setdefault(_key.replace(" ", ""), _profile)
# (name without its size, size) -> the profile of that size, from every spelling that carries one
_BY_SIZE: dict[tuple[str, int], GpuProfile] = {}
for _profile in PROFILES:
    for _spelling in (_profile.name, *_profile.aliases):
        _size = _memory_size(_spelling)
        if _size is not None:
            _BY_SIZE[(normalise(_spelling), _size)] = _profile
            _BY_SIZE[(normalise(_spelling).replace(" ", ""), _size)] = _profile

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
    """The profile for a product name (any spelling above), or None. A memory size in the name picks that size's
    profile where the product has several ("A100 40GB")."""
    key = normalise(name)
    size = _memory_size(name)
    if size is not None:
        variant = _BY_SIZE.get((key, size)) or _BY_SIZE.get((key.replace(" ", ""), size))
        if variant is not None:
            return variant
    profile = _BY_KEY.get(key) or _BY_KEY.get(key.replace(" ", ""))
    if profile is not None and size is not None and profile.memory_gib is not None:
        if abs(profile.memory_gib - size) > 0.1 * size:  # a size this product is not known in: memory unknown
            return profile._replace(
                memory_gib=None,
                note=f"no {size} GB variant of {profile.name.split()[0]} is known here: its memory is unknown",
            )
    return profile


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
