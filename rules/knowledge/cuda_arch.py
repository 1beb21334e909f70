"""Which GPUs code compiled for a CUDA arch runs on: the one arch-compatibility function.

CUDA's rules (CUDA C++ Programming Guide, "Binary Compatibility" / "PTX Compatibility" and the arch-specific
and family-specific feature sets of CUDA 12.9+), with torch's exceptions for integrated parts
(pytorch 2.13 torch/cuda/__init__.py, `_code_compatible_with_device` / DEVICE_REQUIREMENT):
- `sm_XY` (SASS) runs on X.Z with Z >= Y; not across majors. Integrated (Tegra) GPUs 5.3, 6.2, 7.2, 8.7 run
  only their own exact build: desktop and Tegra binaries are not compatible.
- `sm_101` (Jetson Thor's name under CUDA 12.9) runs on 10.1 and on 11.0 (its CUDA 13 name); 10.1 does not
  run `sm_100` code.
- `sm_XYa` (arch-specific) runs on X.Y only; `sm_XYf` (family-specific) on X.Z with Z >= Y.
- `compute_XY` (PTX) is JIT-compiled for any GPU of compute capability X.Y or newer; `compute_XYa` only for
  X.Y, `compute_XYf` for the X.Z family with Z >= Y.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from attn_preflight.probe.facts import Facts

# How to get a torch with CUDA kernels for current GPUs (pytorch.org/get-started/locally; the CUDA 12.9 and 13.0
# x86_64 wheels add sm_100 and sm_120, as rule install-torch-arch says).
INSTALL_CUDA_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cu129"

INTEGRATED = frozenset({53, 62, 72, 87})
THOR_CUDA12, THOR_CUDA13 = 101, 110
_ARCH = re.compile(r"^(sm|compute)_(\d{2,3})([af]?)$")


def parse_arch(arch: str) -> Optional[tuple[str, int, str]]:
    """'sm_90a' -> ('sm', 90, 'a'); 'compute_120' -> ('compute', 120, ''); None for anything else."""
    match = _ARCH.match(arch.strip().lower())
    if match is None:
        return None
    return match.group(1), int(match.group(2)), match.group(3)


def code_runs_on(arch: str, cc: tuple[int, int]) -> bool:
    """Whether code built for `arch` (torch.cuda.get_arch_list() / TORCH_CUDA_ARCH_LIST style) runs on a GPU
    of compute capability `cc`."""
    parsed = parse_arch(arch)
    if parsed is None:
        return False
    kind, code, suffix = parsed
    device = cc[0] * 10 + cc[1]
    same_major = code // 10 == device // 10
    if suffix == "a":
        return device == code
    if suffix == "f":
        return same_major and device % 10 >= code % 10
    if kind == "compute":
        return device >= code
    if code in INTEGRATED or device in INTEGRATED:
        return device == code
    if code == THOR_CUDA12:
        return device in (THOR_CUDA12, THOR_CUDA13)
    if device == THOR_CUDA12:
        return code == THOR_CUDA12
    return same_major and device % 10 >= code % 10


def arch_list_runs_on(arch_list: Iterable[str], cc: tuple[int, int]) -> bool:
    """Whether a build for `arch_list` has code that runs on `cc`."""
    return any(code_runs_on(arch, cc) for arch in arch_list)


def torch_arch_coverage(facts: Facts) -> dict[str, bool]:
    """'sm_90' -> whether the probed torch build has code for that GPU, for each GPU of a report; empty when
    torch's arch list was not read (import not checked)."""
    arch_list = facts.torch.arch_list
    if arch_list is None:
        return {}
    return {
        device.sm: arch_list_runs_on(arch_list, (device.cc_major, device.cc_minor))
        for device in facts.gpus.devices
        if device.sm is not None and device.cc_major is not None and device.cc_minor is not None
    }
