"""NFD feature file: every label valid under Kubernetes' own rules, names mirroring GFD, output sorted."""

import copy
import glob
import json
import os
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn_preflight.probe.facts import Facts, GpuDevice, ImportHealth, LibraryFacts
from attn_preflight.render import nfd

P = nfd.PREFIX + "/"


def node_facts(
    gpu="NVIDIA H200", cc=(9, 0), memory_mib=143771, count=8, driver="580.95.05", cuda="13.0", hostname="gpu-node-1"
):
    """A node like the H200 seen in the lab (brief: driver 580, CUDA 13.0, torch 2.11.0+cu130, FA4 4.0.0b36
    importing, the CUTLASS DSL installed without its .pth processed, so fa4 cannot run) with sgl-kernel and
    FlashInfer healthy; other GPUs by argument."""
    facts = Facts(tool_version="0.1.0", collected_at="2026-11-29T11:00:00+00:00")
    facts.host.hostname = hostname
    facts.gpus.devices = [
        GpuDevice(
            index=i, name=gpu, uuid=f"GPU-{hostname}-{i}", cc_major=cc[0], cc_minor=cc[1], memory_total_mib=memory_mib
        )
        for i in range(count)
    ]
    facts.gpus.driver_version = driver
    facts.gpus.cuda_driver_version = cuda
    facts.torch.installed = True
    facts.torch.version = "2.11.0+cu130"
    facts.torch.cuda = "13.0"
    facts.torch.arch_list = ["sm_80", "sm_90", "sm_100", "sm_120"]
    facts.imports_checked = True
    facts.libraries = [
        LibraryFacts(key="fa2", title="FlashAttention 2"),
        LibraryFacts(
            key="torch",
            title="PyTorch",
            distributions={"torch": "2.11.0+cu130"},
            version="2.11.0+cu130",
            import_name="torch",
            health=ImportHealth(status="ok", seconds=3.1),
        ),
        LibraryFacts(
            key="fa4",
            title="FlashAttention 4",
            distributions={"flash-attn-4": "4.0.0b36"},
            version="4.0.0b36",
            import_name="flash_attn.cute",
            health=ImportHealth(status="ok", seconds=10.3),
        ),
        LibraryFacts(
            key="sgl_kernel",
            title="sgl-kernel",
            distributions={"sglang-kernel": "0.4.10"},
            version="0.4.10",
            import_name="sgl_kernel",
            health=ImportHealth(status="ok", details={"components": {"fa3_ops": {"status": "ok"}}}),
        ),
        LibraryFacts(
            key="flashinfer",
            title="FlashInfer",
            distributions={"flashinfer-python": "0.6.3"},
            version="0.6.3",
            import_name="flashinfer",
            health=ImportHealth(status="ok"),
        ),
        LibraryFacts(
            key="quack",
            title="quack-kernels",
            distributions={"quack-kernels": "0.6.5"},
            version="0.6.5",
            import_name="quack",
            health=ImportHealth(status="ok"),
        ),
        LibraryFacts(
            key="cutlass_dsl",
            title="CUTLASS DSL",
            distributions={"nvidia-cutlass-dsl": "4.8.1"},
            version="4.8.1",
            import_name="cutlass.cute",
            health=ImportHealth(
                status="error",
                error="No module named 'cutlass.cute'",
                details={  # what the probe records beside such an error: the diagnosis is judged from it
                    "missing_module": {
                        "module": "cutlass.cute",
                        "providers": [],
                        "pth": {
                            "distribution": "nvidia-cutlass-dsl",
                            "version": "4.8.1",
                            "pth": "nvidia_cutlass_dsl_packages.pth",
                            "pth_path": "/site/nvidia_cutlass_dsl_packages.pth",
                            "pth_missing": False,
                            "adds": "/site/nvidia_cutlass_dsl/dsl_packages",
                        },
                    }
                },
            ),
        ),
    ]
    return facts


def h200_facts():
    return node_facts()


def no_gpu_facts():
    facts = Facts()
    facts.gpus.error = "NVML library not found (libnvidia-ml.so.1)"
    return facts


def parse_feature_file(text):
    """NFD's local source, as source/local/local.go reads a file: comments skipped, a bare key is "true"."""
    labels = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, sep, value = line.partition("=")
            labels[key] = value if sep else "true"
    return labels


# --- the validators themselves, so that the properties below can fail --------------------------------


def test_key_validator_matches_kubernetes_examples():
    assert nfd.is_valid_key("feature.node.kubernetes.io/my-feature.1")
    assert nfd.is_valid_key("nvidia.com/gpu.compute.major")
    assert nfd.is_valid_key("plain_name")
    assert not nfd.is_valid_key("Upper.Example.com/x")  # prefix must be lower-case DNS
    assert not nfd.is_valid_key("example.com/-x")
    assert not nfd.is_valid_key("example.com/x_")
    assert not nfd.is_valid_key("example.com/" + "a" * 64)
    assert not nfd.is_valid_key("/x")
    assert not nfd.is_valid_key("a/b/c")
    assert not nfd.is_valid_key(("a" * 63 + ".") * 4 + "a/x")  # prefix over 253


def test_value_validator_matches_kubernetes_examples():
    assert nfd.is_valid_value("")
    assert nfd.is_valid_value("NVIDIA-H200")
    assert nfd.is_valid_value("4.0.0b36")
    assert not nfd.is_valid_value("2.11.0+cu130")
    assert not nfd.is_valid_value("NVIDIA H200")
    assert not nfd.is_valid_value(".5")
    assert not nfd.is_valid_value("a" * 64)


def test_prefix_is_an_always_allowed_nfd_sub_namespace():
    assert nfd.PREFIX.endswith(".feature.node.kubernetes.io")
    assert nfd.is_valid_key(P + "x")


# --- sanitiser properties ---------------------------------------------------------------------------


@given(st.text())
def test_any_text_sanitises_to_a_valid_value(text):
    value = nfd.sanitise_value(text)
    assert nfd.is_valid_value(value), value


@given(st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=63))
def test_valid_values_are_kept_unchanged(text):
    assert nfd.sanitise_value(text) == text


def test_sanitiser_matches_gfd_product_names_and_versions():
    assert nfd.sanitise_value("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3"
    assert nfd.sanitise_value("2.11.0+cu130") == "2.11.0-cu130"
    assert nfd.sanitise_value("  (weird) ") == "weird"


@given(st.lists(st.text(), min_size=1, max_size=5))
def test_any_parts_make_a_valid_name(parts):
    name = nfd.label_name(*parts)
    assert name == "" or nfd.is_valid_key(P + name), name


def test_long_names_keep_apart():
    a = nfd.label_name("lib", "x" * 70 + "a", "version")
    b = nfd.label_name("lib", "x" * 70 + "b", "version")
    assert a != b
    assert len(a) <= 63 and nfd.is_valid_key(P + a)


# --- labels from facts ------------------------------------------------------------------------------


def test_h200_labels_mirror_gfd_names():
    labels = nfd.node_labels(h200_facts())
    assert labels[P + "gpu.present"] == "true"
    assert labels[P + "gpu.count"] == "8"
    assert labels[P + "gpu.product"] == "NVIDIA-H200"
    assert labels[P + "gpu.compute.major"] == "9"
    assert labels[P + "gpu.compute.minor"] == "0"
    assert labels[P + "gpu.sm"] == "sm_90"
    assert labels[P + "gpu.memory"] == "143771"
    assert labels[P + "gpu.mixed"] == "false"
    assert labels[P + "cuda.driver-version.full"] == "580.95.05"
    assert labels[P + "cuda.driver-version.major"] == "580"
    assert labels[P + "cuda.driver-version.revision"] == "05"
    assert labels[P + "cuda.runtime-version.full"] == "13.0"
    assert labels[P + "cuda.runtime-version.major"] == "13"
    assert labels[P + "lib.torch.version"] == "2.11.0-cu130"
    assert labels[P + "torch.cuda"] == "13.0"
    assert labels[P + "torch.gpu-arch-covered"] == "true"
    assert labels[P + "lib.fa4.version"] == "4.0.0b36"
    assert labels[P + "lib.fa4.health"] == "ok"
    assert labels[P + "lib.cutlass_dsl.health"] == "error"
    assert labels[P + "lib.fa2.health"] == "not_installed"
    assert P + "lib.fa2.version" not in labels
    assert not any(k.startswith(P + "backend.") or k.startswith(P + "kv.") for k in labels)


def test_no_gpu_node_says_so_and_guesses_nothing():
    labels = nfd.node_labels(no_gpu_facts())
    assert labels[P + "gpu.present"] == "false"
    assert labels[P + "gpu.count"] == "0"
    assert not any(k.startswith(P + "gpu.compute") or k.startswith(P + "cuda.") for k in labels)
    assert P + "torch.cuda" not in labels


def test_mixed_gpus_are_flagged_and_judged_as_gpu_0():
    facts = h200_facts()
    facts.gpus.devices[1] = GpuDevice(index=1, name="NVIDIA A100-SXM4-80GB", cc_major=8, cc_minor=0)
    labels = nfd.node_labels(facts)
    assert labels[P + "gpu.mixed"] == "true"
    assert labels[P + "gpu.compute.major"] == "9"


def test_serving_verdicts_become_booleans_and_only_pass_or_warn_serve():
    serving = nfd.NodeServing(
        backends={"fa3": "pass", "fa4": "warn", "trtllm_mla": "fail", "flashmla": "unknown"},
        kv_dtypes={"fp8_e4m3": "pass", "mxfp8": "fail"},
    )
    labels = nfd.node_labels(h200_facts(), serving)
    assert labels[P + "backend.fa3"] == "true"
    assert labels[P + "backend.fa4"] == "true"
    assert labels[P + "backend.trtllm_mla"] == "false"
    assert labels[P + "backend.flashmla"] == "false"
    assert labels[P + "kv.fp8_e4m3"] == "true"
    assert labels[P + "kv.mxfp8"] == "false"


def test_feature_file_is_sorted_deterministic_and_reads_back():
    facts = h200_facts()
    shuffled = copy.deepcopy(facts)
    shuffled.libraries.reverse()
    text = nfd.render_nfd(facts)
    assert text == nfd.render_nfd(shuffled)
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == sorted(lines)
    assert parse_feature_file(text) == nfd.node_labels(facts)
    # "# +" starts an NFD directive (expiry-time, no-label); our comments must never be read as one
    assert not any(line.startswith("# +") for line in text.splitlines())
    assert len(text.encode()) < nfd.MAX_FILE_BYTES


# --- any facts at all: every label valid ------------------------------------------------------------

_text = st.text(max_size=80)
_device = st.builds(
    GpuDevice,
    index=st.integers(0, 15),
    name=st.one_of(st.none(), _text),
    cc_major=st.one_of(st.none(), st.integers(0, 20)),
    cc_minor=st.one_of(st.none(), st.integers(0, 9)),
    memory_total_mib=st.one_of(st.none(), st.integers(0, 10**7)),
)
_library = st.builds(
    LibraryFacts,
    key=_text,
    title=_text,
    distributions=st.dictionaries(_text, _text, max_size=2),
    version=st.one_of(st.none(), _text),
    health=st.builds(ImportHealth, status=_text),
)


@settings(max_examples=200, deadline=None)
@given(
    devices=st.lists(_device, max_size=4),
    driver=st.one_of(st.none(), _text),
    cuda=st.one_of(st.none(), _text),
    libraries=st.lists(_library, max_size=6),
    torch_version=st.one_of(st.none(), _text),
    backends=st.dictionaries(_text, st.sampled_from(["pass", "warn", "fail", "skip"]), max_size=4),
    kv=st.dictionaries(_text, st.sampled_from(["pass", "warn", "fail"]), max_size=4),
)
def test_every_label_of_any_facts_is_valid(devices, driver, cuda, libraries, torch_version, backends, kv):
    facts = Facts()
    facts.gpus.devices = devices
    facts.gpus.driver_version = driver
    facts.gpus.cuda_driver_version = cuda
    facts.libraries = libraries
    facts.torch.installed = torch_version is not None
    facts.torch.version = torch_version
    labels = nfd.node_labels(facts, nfd.NodeServing(backends=backends, kv_dtypes=kv))
    for key, value in labels.items():
        assert key.startswith(P)
        assert nfd.is_valid_key(key), key
        assert nfd.is_valid_value(value), (key, value)
    assert list(labels) == sorted(labels)
    assert parse_feature_file(nfd.render_nfd(facts)) == nfd.node_labels(facts)


# --- real probe reports -----------------------------------------------------------------------------

FIXTURES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "fixtures", "probe-*.json")))


@pytest.mark.parametrize("path", FIXTURES, ids=os.path.basename)
def test_real_reports_make_valid_feature_files(path):
    with open(path, encoding="utf-8") as handle:
        facts = Facts.from_dict(json.load(handle))
    labels = parse_feature_file(nfd.render_nfd(facts))
    assert labels and all(nfd.is_valid_key(k) and nfd.is_valid_value(v) for k, v in labels.items())
    for library in facts.libraries:
        assert P + nfd.label_name("lib", library.key, "health") in labels


def test_labels_from_the_saved_h200_report_match_the_file_written_on_the_h200():
    # tests/fixtures/probe-h200.nfd was written by `probe --format nfd` on the lent H200 (bench/device_final.sh);
    # the same machine's saved report must give the same hardware, library and serving labels.
    import json
    from pathlib import Path

    from attn_preflight.fleet import node_serving
    from attn_preflight.probe.facts import Facts

    fixtures = Path(__file__).parent / "fixtures"
    facts = Facts.from_dict(json.loads((fixtures / "probe-h200.json").read_text()))
    recorded = dict(
        line.split("=", 1)
        for line in (fixtures / "probe-h200.nfd").read_text().splitlines()
        if line and not line.startswith("#")
    )
    rendered = nfd.node_labels(facts, node_serving(facts))
    assert recorded[P + "gpu.product"] == "NVIDIA-H200" and recorded[P + "lib.fa4.health"] == "ok"
    assert recorded[P + "backend.fa4"] == "true" and recorded[P + "kv.mxfp8"] == "false"
    assert rendered == recorded
