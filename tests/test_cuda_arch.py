"""The one arch-compatibility function (rules/knowledge/cuda_arch.py), case by case: CUDA's rules for SASS,
arch-specific (a), family-specific (f) and PTX code, with torch's exceptions for integrated GPUs and Thor.
The first block is where probe/collect.py and rules/checks/install.py used to disagree."""

import pytest

from attn_preflight.rules.knowledge.cuda_arch import arch_list_runs_on, code_runs_on, parse_arch


@pytest.mark.parametrize(
    "arch, cc, runs",
    [
        # the cases the two former copies answered differently
        ("sm_80", (8, 7), False),  # Jetson Orin runs only sm_87 SASS: desktop and Tegra binaries differ
        ("sm_87", (8, 7), True),
        ("sm_72", (7, 5), False),  # an integrated build runs only on its own GPU
        ("sm_100", (10, 1), False),  # Thor (10.1 under CUDA 12.9) does not run sm_100
        ("sm_101", (11, 0), True),  # ... and is 11.0 under CUDA 13
        ("sm_100a", (10, 3), False),  # arch-specific: 10.0 only
        ("sm_120a", (12, 1), False),
        ("compute_80", (8, 7), True),  # PTX JIT-compiles for the integrated part too
        # SASS: same major, same or later minor
        ("sm_80", (8, 6), True),
        ("sm_86", (8, 9), True),
        ("sm_86", (8, 0), False),
        ("sm_90", (10, 0), False),  # never across majors
        ("sm_80", (12, 0), False),
        ("sm_110", (11, 0), True),
        # arch- and family-specific
        ("sm_90a", (9, 0), True),
        ("sm_90a", (10, 0), False),
        ("sm_100f", (10, 3), True),
        ("sm_100f", (10, 0), True),
        ("sm_103f", (10, 0), False),
        ("sm_120f", (12, 1), True),
        ("sm_100f", (12, 0), False),
        # PTX: any GPU of that compute capability or newer
        ("compute_90", (12, 0), True),
        ("compute_120", (12, 0), True),
        ("compute_100", (9, 0), False),
        ("compute_100a", (10, 0), True),
        ("compute_100a", (10, 3), False),
        ("compute_100f", (10, 3), True),
        # not an arch
        ("sm_9x", (9, 0), False),
        ("gfx942", (9, 0), False),
        ("", (9, 0), False),
    ],
)
def test_code_runs_on(arch, cc, runs):
    assert code_runs_on(arch, cc) is runs


@pytest.mark.parametrize(
    "arch_list, cc, runs",
    [
        (["sm_80", "sm_90"], (9, 0), True),
        (["sm_80", "sm_86"], (8, 9), True),
        (["sm_80", "sm_90"], (12, 0), False),
        (["sm_80", "compute_90"], (12, 0), True),
        (["sm_100", "sm_120", "compute_120"], (10, 3), True),
        (["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"], (9, 0), True),  # the H200's torch
        ([], (9, 0), False),  # a CPU-only build
    ],
)
def test_arch_list_runs_on(arch_list, cc, runs):
    assert arch_list_runs_on(arch_list, cc) is runs


def test_parse_arch():
    assert parse_arch("sm_90a") == ("sm", 90, "a")
    assert parse_arch("compute_120") == ("compute", 120, "")
    assert parse_arch("SM_100F") == ("sm", 100, "f")
    assert parse_arch("sm90") is None
