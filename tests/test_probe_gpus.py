"""GPUs through NVML: every failure is a value with its reason (fake pynvml), and on a real GPU the facts
are complete and no CUDA context is created."""

from __future__ import annotations

import os
import sys

import pytest
from probe_fakes import (
    NVML_ERROR_DRIVER_NOT_LOADED,
    NVML_ERROR_GPU_IS_LOST,
    NVML_ERROR_LIBRARY_NOT_FOUND,
    NVML_ERROR_NOT_SUPPORTED,
    NVML_ERROR_UNKNOWN,
    NVMLError,
    fake_pynvml,
    h200,
)

from attn_preflight.probe import gpus


def use(monkeypatch, module):
    monkeypatch.setitem(sys.modules, "pynvml", module)
    return module


def test_nvml_library_missing_is_an_empty_list_with_the_reason(monkeypatch):
    use(
        monkeypatch,
        fake_pynvml([], init_error=NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")),
    )
    facts = gpus.query_gpus()
    assert facts.devices == []
    assert facts.error.startswith("NVML library not found (libnvidia-ml.so.1)")
    assert "NVML Shared Library Not Found" in facts.error


def test_driver_not_loaded_and_unknown_init_errors_keep_nvml_text(monkeypatch):
    use(monkeypatch, fake_pynvml([h200(0)], init_error=NVMLError(NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded")))
    assert gpus.query_gpus().error.startswith("NVIDIA driver not loaded")

    use(monkeypatch, fake_pynvml([h200(0)], init_error=NVMLError(NVML_ERROR_UNKNOWN, "Unknown Error")))
    facts = gpus.query_gpus()
    assert facts.devices == [] and facts.error == "NVML initialisation failed: Unknown Error (NVML error 999)"


def test_pynvml_not_importable(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    facts = gpus.query_gpus()
    assert facts.devices == [] and "nvidia-ml-py (pynvml) cannot be imported" in facts.error


def test_two_h200s_read_completely(monkeypatch):
    nvml = use(monkeypatch, fake_pynvml([h200(0), h200(1, nvlink_up=0, persistence=0)]))
    facts = gpus.query_gpus()
    assert (facts.driver_version, facts.cuda_driver_version, facts.error) == ("580.95.05", "13.0", None)
    first, second = facts.devices
    assert (first.name, first.compute_capability, first.sm, first.memory_total_mib) == (
        "NVIDIA H200",
        "9.0",
        "sm_90",
        143771,
    )
    assert (first.mig_mode, first.persistence_mode, first.nvlink_links_up, first.error) == (
        "disabled",
        "enabled",
        18,
        None,
    )
    assert (second.persistence_mode, second.nvlink_links_up) == ("disabled", 0)
    assert (first.peer_to_peer, second.peer_to_peer) == ([1], [0]) and first.mig_devices is None
    assert nvml.shutdown_calls == 1


def test_peer_to_peer_are_the_gpus_nvml_says_this_one_reads_from(monkeypatch):
    use(monkeypatch, fake_pynvml([h200(0, p2p=[2]), h200(1, p2p=[]), h200(2, p2p=[0])]))
    assert [d.peer_to_peer for d in gpus.query_gpus().devices] == [[2], [], [0]]


def test_one_gpu_has_no_peers(monkeypatch):
    """As on the H200 machine: one GPU, so no P2P peer."""
    use(monkeypatch, fake_pynvml([h200(0, nvlink_up=0)]))
    (device,) = gpus.query_gpus().devices
    assert (device.peer_to_peer, device.nvlink_links_up, device.error) == ([], 0, None)


def test_mig_devices_are_counted_only_with_mig_enabled(monkeypatch):
    use(monkeypatch, fake_pynvml([h200(0, mig=[1, 1], mig_devices=3), h200(1, mig_devices=3)]))
    first, second = gpus.query_gpus().devices
    assert (first.mig_mode, first.mig_devices, second.mig_devices) == ("enabled", 3, None)
    assert first.mig_memory_mib is None  # NVML gave no instance memory: none recorded, the count stands


def test_each_mig_instance_records_its_memory(monkeypatch):
    # an H200 cut as 3g.71gb + 2g.35gb + 1g.18gb: what each process on a slice can hold
    slices = [71 * 10**9 // 2**20, 35 * 10**9 // 2**20, 18 * 10**9 // 2**20]
    use(monkeypatch, fake_pynvml([h200(0, mig=[1, 1], mig_devices=3, mig_memory_mib=slices)]))
    (device,) = gpus.query_gpus().devices
    assert (device.mig_devices, device.mig_memory_mib) == (3, slices)


def test_one_gpu_query_raising_marks_that_gpu_and_the_others_stand(monkeypatch):
    devices = [h200(0), h200(1, memory_mib=NVMLError(NVML_ERROR_GPU_IS_LOST, "GPU is lost")), h200(2)]
    use(monkeypatch, fake_pynvml(devices))
    facts = gpus.query_gpus()
    assert [d.index for d in facts.devices] == [0, 1, 2]
    broken = facts.devices[1]
    assert broken.error == "memory: GPU is lost (NVML error 15)"
    assert broken.memory_total_mib is None and broken.compute_capability == "9.0"  # what did answer is kept
    assert all(d.error is None and d.memory_total_mib == 143771 for d in (facts.devices[0], facts.devices[2]))


def test_a_gpu_without_a_handle_is_listed_with_its_error(monkeypatch):
    use(monkeypatch, fake_pynvml([h200(0, handle=NVMLError(NVML_ERROR_UNKNOWN, "Unknown Error")), h200(1)]))
    facts = gpus.query_gpus()
    assert facts.devices[0].error.startswith("handle: Unknown Error") and facts.devices[0].name is None
    assert facts.devices[1].name == "NVIDIA H200"


def test_unsupported_fields_read_as_unsupported_not_as_errors(monkeypatch):
    not_supported = NVMLError(NVML_ERROR_NOT_SUPPORTED, "Not Supported")
    use(monkeypatch, fake_pynvml([h200(0, mig=not_supported, persistence=not_supported, nvlink_up=not_supported)]))
    device = gpus.query_gpus().devices[0]
    assert (device.mig_mode, device.persistence_mode, device.nvlink_links_up) == ("unsupported", "unsupported", 0)
    assert device.error is None


def test_a_bug_inside_the_query_still_returns_a_value(monkeypatch):
    nvml = use(monkeypatch, fake_pynvml([h200(0)]))
    monkeypatch.setattr(nvml, "nvmlDeviceGetCount", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    facts = gpus.query_gpus()
    assert facts.devices == [] and facts.error == "device count: boom"


@pytest.mark.parametrize("value, text", [(13000, "13.0"), (12090, "12.9"), (12040, "12.4"), (11080, "11.8")])
def test_cuda_driver_version_text(value, text):
    assert gpus.cuda_version_text(value) == text


@pytest.mark.gpu
def test_real_gpus_are_read_without_creating_a_cuda_context():
    import pynvml

    facts = gpus.query_gpus()
    assert facts.driver_version and facts.cuda_driver_version.count(".") == 1
    for device in facts.devices:
        assert device.error is None, device.error
        assert device.name and device.uuid.startswith(("GPU-", "MIG-"))
        assert device.cc_major >= 7 and device.memory_total_mib > 1024
    pynvml.nvmlInit()
    try:
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            pids = [p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)]
            assert os.getpid() not in pids
    finally:
        pynvml.nvmlShutdown()
