"""Shared test set-up: GPU tests skip cleanly where NVML finds no GPU, and no test reads or writes the
user's own attn-preflight cache or Hugging Face cache."""

from __future__ import annotations

from pathlib import Path

import pytest

HF_CACHE = Path(__file__).resolve().parent / "fixtures" / "hf-cache"


@pytest.fixture(autouse=True, scope="session")
def _session_cache_dir(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    patch.setenv("HF_HUB_CACHE", str(HF_CACHE))
    yield
    patch.undo()


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    from attn_preflight.probe.gpus import collect_gpus

    gpus = collect_gpus()
    if gpus.devices:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU: {gpus.error or 'NVML reports no devices'}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fresh directory on sys.path for fake installed distributions (tests/probe_fakes.make_dist)."""
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    return directory
