"""torch's build read from its files (never imported), nvcc, CUDA_HOME and CUTLASS headers; each failure a value."""

from __future__ import annotations

import importlib.metadata
import os
import signal
import stat
import time

from probe_fakes import make_dist

from attn_preflight.probe import toolkit
from attn_preflight.probe.libraries import DistributionIndex

TORCH_VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.11.0+cu130'
debug = False
cuda: Optional[str] = '13.0'
git_version = '0123456789abcdef'
hip: Optional[str] = None
"""


def test_torch_build_is_read_from_version_py_without_importing(site):
    make_dist(
        site,
        "torch",
        "2.11.0+cu130",
        {"torch/__init__.py": "raise SystemExit('torch was imported')\n", "torch/version.py": TORCH_VERSION_PY},
    )
    make_dist(site, "nvidia-cudnn-cu13", "9.13.0.50")
    facts = toolkit.torch_facts()
    assert (facts.installed, facts.version, facts.cuda, facts.hip, facts.cudnn, facts.error) == (
        True,
        "2.11.0+cu130",
        "13.0",
        None,
        "9.13.0.50",
        None,
    )


def test_local_build_tag_only_in_version_py_is_kept(site):
    # The H200's torch: metadata says 2.11.0, torch/version.py says 2.11.0+cu130.
    make_dist(site, "torch", "2.11.0", {"torch/__init__.py": "", "torch/version.py": TORCH_VERSION_PY})
    assert toolkit.torch_facts().version == "2.11.0+cu130"


def test_version_py_of_another_release_does_not_override_metadata(site):
    make_dist(site, "torch", "2.12.0", {"torch/__init__.py": "", "torch/version.py": TORCH_VERSION_PY})
    assert toolkit.torch_facts().version == "2.12.0"


def test_installed_torch_is_reported_as_metadata_says():
    facts = toolkit.torch_facts()
    try:
        expected = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        assert not facts.installed and "torch is not installed" in facts.error
        return
    assert facts.installed and facts.version == expected and facts.error is None


def test_torch_missing_is_a_value_with_its_reason():
    facts = toolkit.torch_facts(DistributionIndex(path=[]))  # nothing installed anywhere
    assert not facts.installed and facts.version is None
    assert facts.error.startswith("torch is not installed for ")


def test_torch_without_version_py(site):
    make_dist(site, "torch", "2.11.0", {"torch/__init__.py": ""})
    facts = toolkit.torch_facts()
    assert facts.installed and facts.version == "2.11.0" and "torch/version.py not found" in facts.error


def fake_nvcc(tmp_path, body):
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    (home / "include").mkdir()
    (home / "include" / "cuda.h").write_text("")
    nvcc = home / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n" + body)
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    return home


def test_nvcc_version_from_cuda_home(tmp_path, monkeypatch):
    home = fake_nvcc(tmp_path, "echo 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    monkeypatch.setenv("CUDA_HOME", str(home))
    facts = toolkit.cuda_toolkit_facts()
    assert (facts.nvcc_path, facts.nvcc_version, facts.cuda_home, facts.error) == (
        str(home / "bin" / "nvcc"),
        "12.8",
        str(home),
        None,
    )


def test_nvcc_on_path_gives_cuda_home(tmp_path, monkeypatch):
    home = fake_nvcc(tmp_path, "echo 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(home / "bin"))
    facts = toolkit.cuda_toolkit_facts()
    assert (facts.nvcc_version, facts.cuda_home) == ("13.0", str(home))


def test_nvcc_hanging_garbled_or_absent(tmp_path, monkeypatch):
    monkeypatch.setattr(toolkit, "NVCC_TIMEOUT_S", 0.5)
    monkeypatch.setenv("CUDA_HOME", str(fake_nvcc(tmp_path, "exec sleep 30\n")))
    assert toolkit.cuda_toolkit_facts().error == "`nvcc --version` did not finish within 0.5 s"

    monkeypatch.setenv("CUDA_HOME", str(fake_nvcc(tmp_path / "g", "echo 'segmentation fault' >&2; exit 139\n")))
    assert toolkit.cuda_toolkit_facts().error == "`nvcc --version` printed no release: segmentation fault"

    monkeypatch.delenv("CUDA_HOME")
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(toolkit, "DEFAULT_NVCC", str(tmp_path / "none" / "bin" / "nvcc"))
    facts = toolkit.cuda_toolkit_facts()
    assert facts.nvcc_path is None and facts.error == "nvcc not found on PATH or under CUDA_HOME"


def test_a_hung_nvcc_is_killed_with_the_processes_it_started(tmp_path, monkeypatch):
    """An nvcc wrapper script waiting on its own child: both go when the deadline passes."""
    monkeypatch.setattr(toolkit, "NVCC_TIMEOUT_S", 0.5)
    pid_file = tmp_path / "helper.pid"
    monkeypatch.setenv("CUDA_HOME", str(fake_nvcc(tmp_path, f"sleep 600 &\necho $! > {pid_file}\nwait\n")))
    assert toolkit.cuda_toolkit_facts().error == "`nvcc --version` did not finish within 0.5 s"
    helper = int(pid_file.read_text())
    try:
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{helper}") and _state(helper) != "Z":
            assert time.monotonic() < deadline, "nvcc's child outlived it"
            time.sleep(0.05)
    finally:
        if os.path.exists(f"/proc/{helper}") and _state(helper) != "Z":
            os.kill(helper, signal.SIGKILL)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "Z"


VERSION_H = "#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 7\n#define CUTLASS_PATCH 0\n"


def test_cutlass_headers_from_cutlass_path(tmp_path, monkeypatch):
    (tmp_path / "cutlass" / "include" / "cutlass").mkdir(parents=True)
    (tmp_path / "cutlass" / "include" / "cutlass" / "version.h").write_text(VERSION_H)
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path / "cutlass"))
    facts = toolkit.cutlass_header_facts()
    assert (facts.path, facts.version, facts.source, facts.error) == (
        str(tmp_path / "cutlass"),
        "4.7.0",
        "CUTLASS_PATH",
        None,
    )


def test_cutlass_headers_fall_back_to_the_nvidia_cutlass_wheel(site, tmp_path, monkeypatch):
    make_dist(
        site,
        "nvidia-cutlass",
        "4.2.0.0",
        {"cutlass_library/__init__.py": "", "cutlass_library/source/include/cutlass/version.h": VERSION_H},
    )
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path / "nowhere"))
    facts = toolkit.cutlass_header_facts()
    assert facts.version == "4.7.0" and facts.path == str(site / "cutlass_library" / "source")
    assert facts.source.startswith("nvidia-cutlass")
    assert facts.error == f"CUTLASS_PATH={tmp_path / 'nowhere'} has no include/cutlass/version.h"


def test_no_cutlass_headers_says_why(monkeypatch):
    monkeypatch.delenv("CUTLASS_PATH", raising=False)
    monkeypatch.setattr(toolkit, "locate_module", lambda name: None)
    facts = toolkit.cutlass_header_facts()
    assert facts.version is None and "CUTLASS_PATH is unset and nvidia-cutlass is not installed" in facts.error
