"""The Mamba radix-cache rules where they apply to nothing: what SGLang lets through before a check existed, or
with the radix cache off (a fixture's pass case must pass, so these skips are held here)."""

from __future__ import annotations

import pytest
from cli_run import check_json, finding

LLAMA = ["sglang", "serve", "--model-path", "tests/fixtures/models/Llama-3.1-8B-Instruct"]
EXTRA_BUFFER = ["--mamba-radix-cache-strategy", "extra_buffer"]


@pytest.mark.parametrize(
    ("release", "flags", "status"),
    [
        # model_hook.py handle_mamba_radix_cache raises 'needs mamba state' from 0.5.21 (:953; 0.5.23 :1065); the
        # oracle (0.5.23) refuses Llama with extra_buffer and accepts it with --disable-radix-cache
        ("0.5.23", [], "fail"),
        ("0.5.21", [], "fail"),
        ("0.5.20", [], "skip"),
        ("0.5.23", ["--disable-radix-cache"], "skip"),
    ],
)
def test_an_extra_buffer_on_a_model_without_mamba_state(release, flags, status):
    run, report = check_json(
        ["--gpu", "H100", "--engine-version", f"sglang=={release}", "--", *LLAMA, *EXTRA_BUFFER, *flags]
    )
    assert run.code in (0, 1), run.err
    assert finding(report, "model-mamba-extra-buffer")["status"] == status


def test_no_buffer_on_a_hybrid_model_is_not_judged_as_an_extra_buffer():
    """The auto strategy with overlap scheduling off and page 1 settles on no_buffer (overrides.py
    _mamba_radix_cache_resolution), where neither the track interval nor the chunk is asserted."""
    launch = ["sglang", "serve", "--model-path", "qwen3-next-80b-a3b", "--disable-overlap-schedule"]
    _, report = check_json(["--gpu", "H100", "--", *launch, "--mamba-track-interval", "3"])
    assert finding(report, "model-mamba-extra-buffer")["status"] == "skip"
    assert finding(report, "model-mamba2-track-interval")["status"] == "skip"
