"""Release ranges (rules/core/versions.py), as rules and declarations state them."""

import pytest

from attn_preflight.rules.core.versions import InvalidRange, VersionRange


@pytest.mark.parametrize(
    "text, version, inside",
    [
        ("sglang>=0.5.20", "0.5.20", True),
        ("sglang>=0.5.20", "0.5.19", False),
        ("sglang>=0.5.20", "0.5.23.post1", True),
        ("sglang>=0.5.19", "0.5.20rc1", True),  # pre-releases are judged like releases
        ("sglang<0.5.20", "0.5.19", True),
        ("sglang<0.5.20", "0.5.20", False),
        ("vllm>=0.15.0,<0.20.0", "0.17.1", True),
        ("vllm>=0.15.0,<0.20.0", "0.20.0", False),
        ("flash-attn-4>=4.0.0b10", "4.0.0b36", True),
        ("flash-attn-4>=4.0.0b10", "4.0.0b9", False),
        ("torch>=2.0", "2.11.0+cu130", True),
        ("sglang!=0.5.21", "0.5.21", False),
        ("sglang==0.5.21", "0.5.21", True),
        ("sglang>=0.5.20", "garbage", False),  # an unreadable version is never inside
    ],
)
def test_contains(text, version, inside):
    assert VersionRange.parse(text).contains(version) is inside


def test_parse_names_the_package():
    assert VersionRange.parse("Flash-Attn-4 >= 4.0.0b10").package == "flash-attn-4"


@pytest.mark.parametrize("text", ["sglang", ">=0.5.20", "sglang>=", "sglang~=0.5", "sglang>=0.5.x", "sglang>=0.5,"])
def test_invalid_ranges_are_refused(text):
    with pytest.raises(InvalidRange):
        VersionRange.parse(text)
