"""collect(): every probe wrapped, torch facts completed from the import check, the main process never
imports torch or a kernel library."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from probe_fakes import h200, make_dist, use_fake_pynvml

from attn_preflight.probe import collect as collect_module
from attn_preflight.probe import gpus, health, libraries, toolkit
from attn_preflight.probe.collect import collect, cudnn_version_text
from attn_preflight.probe.facts import HEALTH_ERROR, HEALTH_NOT_INSTALLED, HEALTH_OK, HEALTH_SKIPPED
from attn_preflight.rules.knowledge.cuda_arch import torch_arch_coverage
from attn_preflight.rules.knowledge.import_diagnosis import component_notes

# A torch stand-in whose import check answers like torch 2.11.0+cu130 on the H200 (arch list, cuDNN).
FAKE_TORCH = """import types
__version__ = '2.11.0+cu130'
from . import version
class _C:
    @staticmethod
    def _cuda_getArchFlags():
        return 'sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120'
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91002))
"""


def boom(*args, **kwargs):
    raise RuntimeError("boom")


def test_every_probe_failing_still_gives_complete_facts(monkeypatch):
    for owner, name in [
        (gpus.GpuProbe, "result"),
        (toolkit, "torch_facts"),
        (toolkit.NvccProbe, "result"),
        (toolkit, "cutlass_header_facts"),
        (libraries, "library_facts"),
        (health, "check_imports"),
        (collect_module, "relevant_environment"),
        (collect_module, "host_facts"),
    ]:
        monkeypatch.setattr(owner, name, boom)
    facts = collect(timeout=5)
    failed = "probe failed: RuntimeError: boom"
    assert facts.gpus.error == failed and facts.cuda_toolkit.error == failed and facts.torch.error == failed
    assert facts.cutlass_headers.error == failed and facts.host.os == failed
    assert facts.environment == {"attn-preflight": failed}
    assert [lib.key for lib in facts.libraries] == [spec.key for spec in libraries.CATALOGUE]
    assert all(lib.notes == [failed] and lib.health.status == HEALTH_NOT_INSTALLED for lib in facts.libraries)
    assert facts.to_dict()["schema_version"] == 1


def test_import_machinery_failing_leaves_libraries_unchecked_not_healthy(monkeypatch):
    monkeypatch.setattr(health, "check_imports", boom)
    facts = collect(timeout=5)
    torch = facts.library("torch")
    if torch.installed:
        assert torch.health.status == HEALTH_SKIPPED
        assert torch.health.error == "import checks could not run: RuntimeError: boom"


@pytest.fixture
def h200_site(tmp_path, monkeypatch):
    """A fake torch 2.11.0+cu130, FA4 with its 0.0.0 __version__, and an sgl-kernel whose FA3 ops fail,
    on an H200 (fake NVML)."""
    site = tmp_path / "site"
    make_dist(
        site,
        "torch",
        "2.11.0+cu130",
        {"torch/__init__.py": FAKE_TORCH, "torch/version.py": "cuda = '13.0'\nhip = None\n"},
    )
    make_dist(site, "flash-attn-4", "4.0.0b36", {"flash_attn/cute/__init__.py": "__version__ = '0.0.0'\n"})
    make_dist(
        site,
        "sglang-kernel",
        "0.4.10",
        {
            "sgl_kernel/__init__.py": "__version__ = '0.4.10'\n",
            "sgl_kernel/flash_attn.py": "try:\n    from sgl_kernel import flash_ops\nexcept:\n"
            "    raise ImportError('Can not import sgl_kernel. Please check your installation.')\n",
        },
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    use_fake_pynvml(monkeypatch, tmp_path / "nvml", [h200(0)])
    return site


def test_torch_arch_list_and_cudnn_come_from_the_import_check(h200_site):
    facts = collect(timeout=30)
    assert facts.torch.version == "2.11.0+cu130" and facts.torch.cuda == "13.0"
    assert facts.torch.arch_list == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
    assert facts.torch.cudnn == "9.10.2"
    assert torch_arch_coverage(facts) == {"sm_90": True}
    assert "sys_path" not in facts.library("torch").health.details


def test_module_version_disagreeing_with_metadata_is_noted(h200_site):
    fa4 = collect(timeout=30).library("fa4")
    assert fa4.version == "4.0.0b36" and fa4.health.status == HEALTH_OK
    assert fa4.health.details["module_version"] == "0.0.0"
    assert (
        "flash_attn.cute reports __version__ 0.0.0; the installed distribution is 4.0.0b36 (the version shown here)"
    ) in fa4.notes


def test_a_failing_component_is_a_note_and_does_not_fail_the_library(h200_site):
    facts = collect(timeout=30)
    sgl = facts.library("sgl_kernel")
    assert sgl.health.status == HEALTH_OK
    component = sgl.health.details["components"]["fa3_ops"]
    assert component["status"] == HEALTH_ERROR and component["causes"] == [
        "ImportError: cannot import name 'flash_ops' from 'sgl_kernel' (%s)"
        % (h200_site / "sgl_kernel" / "__init__.py")
    ]
    assert sgl.notes == [] and component_notes(sgl, facts) == [
        "component fa3_ops (sgl_kernel.flash_attn) does not load: ImportError: Can not import "
        "sgl_kernel. Please check your installation."
    ]


def test_no_imports_leaves_health_unknown(h200_site):
    facts = collect(check_imports=False)
    assert not facts.imports_checked and facts.torch.arch_list is None and torch_arch_coverage(facts) == {}
    assert {lib.health.status for lib in facts.libraries if lib.installed} == {HEALTH_SKIPPED}


def test_main_process_never_imports_torch_or_pynvml_at_startup(tmp_path):
    script = (
        "import sys, json\n"
        "import attn_preflight.cli, attn_preflight.commands.probe_cmd\n"
        "startup = sorted(m for m in ('pynvml', 'torch', 'tabulate') if m in sys.modules)\n"
        "from attn_preflight.probe.collect import collect\n"
        "facts = collect(timeout=60)\n"
        "print(json.dumps({'startup': startup, 'torch_imported': 'torch' in sys.modules,\n"
        "                  'torch_health': facts.library('torch').health.status}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    got = json.loads(done.stdout)
    assert got["startup"] == [] and got["torch_imported"] is False
    try:
        import importlib.metadata

        importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return
    assert got["torch_health"] == HEALTH_OK  # checked, in a child


@pytest.mark.parametrize("value, text", [(91002, "9.10.2"), (90100, "9.1.0"), (8902, "8.9.2"), (8600, "8.6.0")])
def test_cudnn_version_text(value, text):
    assert cudnn_version_text(value) == text


def test_os_description_is_platform_platform_without_its_subprocess():
    import platform

    from attn_preflight.probe.collect import os_description

    if platform.system() != "Linux" or not platform.libc_ver()[0]:
        pytest.skip("platform.platform() spells other systems differently")
    assert os_description() == platform.platform()
