"""The lent H200 as probed after issue 13's NVML additions (tests/fixtures/probe-h200-p2p.json, recorded there on
2026-12-01 with `probe --format json`): one GPU, so no peer-to-peer partner and no NVLink link up, and the memory
figures `check` derives from that saved report."""

import json
from pathlib import Path

from cli_run import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "probe-h200-p2p.json"


def test_one_h200_has_no_peers_and_no_nvlink():
    devices = json.loads(FIXTURE.read_text())["gpus"]["devices"]
    assert [d["name"] for d in devices] == ["NVIDIA H200"]
    assert devices[0]["peer_to_peer"] == [] and devices[0]["nvlink_links_up"] == 0
    assert devices[0]["mig_mode"] == "disabled" and devices[0]["mig_devices"] is None


def test_memory_figures_of_the_saved_h200_report():
    """143,771 MiB = 140.4 GiB; SGLang's default fraction there, by hand from memory_hook.py's formula as the
    rule docs give it, and Llama 3.1 8B's 16-bit weights (8.03 B parameters x 2 bytes = 15.0 GiB)."""
    run = run_cli(
        [
            "check",
            "--facts",
            str(FIXTURE),
            "--model",
            "llama-3.1-8b",
            "--attention-backend",
            "triton",
            "--format",
            "json",
        ]
    )
    report = json.loads(run.out)
    memory = report["memory"]
    assert round(memory["gpu_memory_gib"], 1) == 140.4
    assert 14.9 < memory["weights_gib_per_gpu"] < 15.1
    # SGLang's budget is the memory free at init (NVML's total less the driver's 0.60 GiB and the CUDA context's
    # 0.51 GiB, ../shared/research/h200-memory.md) x the fraction
    budget = (memory["gpu_memory_gib"] - 0.60 - 0.51) * memory["memory_fraction"]
    assert abs(memory["budget_gib_per_gpu"] - budget) < 0.01
    # Llama 3.1 8B: 8 KV heads x (128 + 128) x 2 bytes x 32 layers = 131,072 bytes of bf16 KV per token
    bf16 = next(k for k in memory["kv_capacity"] if k["label"] == "bf16")
    assert bf16["bytes_per_token"] == 8 * 256 * 2 * 32
    free = (memory["budget_gib_per_gpu"] - memory["weights_gib_per_gpu"]) * 2**30
    assert abs(bf16["tokens"] - free / bf16["bytes_per_token"]) / bf16["tokens"] < 0.01
