"""`probe --format nfd`: the feature file a DaemonSet writes into features.d, from a (faked) live probe."""

import pytest
from click.testing import CliRunner
from test_nfd import P, node_facts, parse_feature_file

from attn_preflight.cli import cli
from attn_preflight.render import nfd
from attn_preflight.rules.core.judge import evaluate
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.validation import make_config


def run_nfd(monkeypatch, facts, *args):
    import attn_preflight.probe.collect

    monkeypatch.setattr(attn_preflight.probe.collect, "collect", lambda **kwargs: facts)
    return CliRunner().invoke(cli, ["probe", "--format", "nfd", *args])


def test_h200_feature_file_is_valid_sorted_and_says_what_sm90_cannot_serve(monkeypatch):
    result = run_nfd(monkeypatch, node_facts())
    assert result.exit_code == 0, result.output
    labels = parse_feature_file(result.output)
    assert all(nfd.is_valid_key(k) and nfd.is_valid_value(v) for k, v in labels.items())
    lines = [line for line in result.output.splitlines() if not line.startswith("#")]
    assert lines == sorted(lines)
    assert labels[P + "gpu.compute.major"] == "9"
    assert labels[P + "gpu.product"] == "NVIDIA-H200"
    # what SM90 cannot serve on any backend: MXFP8 and NVFP4 KV caches need SM100-class GPUs
    assert labels[P + "kv.mxfp8"] == "false"
    assert labels[P + "kv.nvfp4"] == "false"
    assert labels[P + "kv.auto"] == "true"


def test_b200_node_cannot_serve_fa3(monkeypatch):
    labels = parse_feature_file(run_nfd(monkeypatch, node_facts("NVIDIA B200", (10, 0), 183359)).output)
    assert labels[P + "gpu.sm"] == "sm_100"
    assert labels[P + "backend.fa3"] == "false"  # fa3 asserts SM80/SM90


@pytest.mark.parametrize(
    "gpu,cc", [("NVIDIA H200", (9, 0)), ("NVIDIA B200", (10, 0)), ("NVIDIA A100-SXM4-80GB", (8, 0))]
)
def test_backend_labels_agree_with_check_on_the_same_facts(monkeypatch, gpu, cc):
    facts = node_facts(gpu, cc)
    labels = parse_feature_file(run_nfd(monkeypatch, facts).output)
    target = Target.from_facts(facts, kind="facts", label="node")
    backends = [k[len(P + "backend.") :] for k in labels if k.startswith(P + "backend.")]
    assert "fa3" in backends and "fa4" in backends
    for backend in backends:
        report = evaluate(make_config(attention_backend=backend), target, alternatives=False)
        serves = report.verdict in ("pass", "warn") and not any(f.status.value == "unknown" for f in report.findings)
        assert labels[P + f"backend.{backend}"] == ("true" if serves else "false"), backend


def test_no_gpu_node_serves_nothing(monkeypatch):
    from test_nfd import no_gpu_facts

    labels = parse_feature_file(run_nfd(monkeypatch, no_gpu_facts()).output)
    assert labels[P + "gpu.present"] == "false"
    served = [k for k, v in labels.items() if (k.startswith(P + "backend.") or k.startswith(P + "kv.")) and v == "true"]
    assert served == []


def test_output_file_is_identical_across_runs(monkeypatch, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert run_nfd(monkeypatch, node_facts(), "-o", str(first)).exit_code == 0
    assert run_nfd(monkeypatch, node_facts(hostname="other-node"), "-o", str(second)).exit_code == 0
    assert first.read_text() == second.read_text()  # no hostname, time or UUID: nodes alike write alike files
