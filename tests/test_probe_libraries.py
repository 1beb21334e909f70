"""What is installed, read from metadata and the filesystem only: aliases, pieces, skew, shadowing,
source checkouts without metadata; never an import."""

from __future__ import annotations

import sys

from probe_fakes import make_dist

from attn_preflight.probe import libraries
from attn_preflight.probe.facts import LibraryFacts
from attn_preflight.probe.libraries import CATALOGUE, canonical, library_facts, locate_module, spec_for


def test_catalogue_covers_the_stack_with_sources_and_unique_names():
    keys = [spec.key for spec in CATALOGUE]
    assert len(keys) == len(set(keys))
    for required in (
        "torch",
        "fa2",
        "fa3",
        "fa4",
        "sgl_kernel",
        "flashinfer",
        "cutlass_dsl",
        "cutlass_python",
        "triton",
        "xformers",
        "flash_mla",
        "deep_gemm",
        "quack",
        "hpc_ops",
        "sglang",
        "vllm",
        "transformers",
    ):
        assert required in keys
    owners = {}
    for spec in CATALOGUE:
        assert spec.source and spec.healthy and spec.imports
        assert set(spec.primary_distributions) <= set(spec.distributions)
        assert set(spec.companions) <= set(spec.distributions)
        for name in spec.distributions:
            assert name == canonical(name), name
            assert owners.setdefault(name, spec.key) == spec.key, f"{name} is claimed twice"


def test_fa4_found_under_each_of_its_names(site):
    for i, name in enumerate(("flash-attn-4", "fa4", "flash-attn-cute")):
        other = site.parent / f"site{i}"
        make_dist(other, name, "4.0.0b36", {"flash_attn/cute/__init__.py": "__version__ = '0.0.0'\n"})
        sys.path.insert(0, str(other))
        try:
            facts = library_facts(spec_for("fa4"))
        finally:
            sys.path.remove(str(other))
        assert facts.distributions == {name: "4.0.0b36"} and facts.version == "4.0.0b36"
        assert facts.import_name == "flash_attn.cute" and facts.module_path.endswith("flash_attn/cute/__init__.py")


def test_underscore_distribution_name_is_found(site):
    make_dist(site, "flash_attn_3", "3.0.0b1", {"flash_attn_interface.py": ""})
    facts = library_facts(spec_for("fa3"))
    assert facts.distributions == {"flash-attn-3": "3.0.0b1"} and facts.import_name == "flash_attn_interface"


def test_fa2_is_not_mistaken_for_the_fa4_namespace_package(site):
    make_dist(site, "flash-attn-4", "4.0.0b36", {"flash_attn/cute/__init__.py": ""})
    fa2 = library_facts(spec_for("fa2"))
    assert not fa2.installed and fa2.module_path is None and fa2.notes == []


def test_flashinfer_piece_skew_is_noted_and_local_cuda_suffix_ignored(site):
    make_dist(site, "flashinfer-python", "0.7.4", {"flashinfer/__init__.py": ""})
    make_dist(site, "flashinfer-cubin", "0.7.3")
    make_dist(site, "flashinfer-jit-cache", "0.7.4+cu130")
    facts = library_facts(spec_for("flashinfer"))
    assert facts.version == "0.7.4"
    assert facts.distributions == {
        "flashinfer-python": "0.7.4",
        "flashinfer-cubin": "0.7.3",
        "flashinfer-jit-cache": "0.7.4+cu130",
    }
    skew = [n for n in facts.notes if n.startswith(libraries.SKEW_NOTE)]
    assert len(skew) == 1 and skew[0].startswith(
        "version skew: flashinfer-cubin 0.7.3 does not match flashinfer-python 0.7.4"
    )


def test_cutlass_dsl_pieces_and_version_from_the_meta_package(site):
    make_dist(site, "nvidia-cutlass-dsl", "4.8.1")
    make_dist(site, "nvidia-cutlass-dsl-libs-base", "4.8.1")
    make_dist(site, "nvidia-cutlass-dsl-libs-cu13", "4.8.0")
    facts = library_facts(spec_for("cutlass_dsl"))
    assert facts.version == "4.8.1" and facts.label == "nvidia-cutlass-dsl 4.8.1"
    assert facts.module_path is None  # `cutlass` is only reachable through the .pth: not found here
    assert [n for n in facts.notes if "nvidia-cutlass-dsl-libs-cu13 4.8.0 does not match" in n]


def test_sgl_kernel_old_name(site):
    make_dist(site, "sgl-kernel", "0.3.9", {"sgl_kernel/__init__.py": ""})
    facts = library_facts(spec_for("sgl_kernel"))
    assert facts.distributions == {"sgl-kernel": "0.3.9"} and facts.version == "0.3.9"


def test_hpc_ops_is_found_under_its_module_name(site):
    make_dist(site, "hpc-ops", "0.1.0.torch291", {"hpc/__init__.py": ""})
    facts = library_facts(spec_for("hpc_ops"))
    assert facts.distributions == {"hpc-ops": "0.1.0.torch291"} and facts.module_path.endswith("__init__.py")


def test_source_checkout_without_metadata_is_found_with_unknown_version(site):
    (site / "deep_gemm").mkdir()
    (site / "deep_gemm" / "__init__.py").write_text("")
    facts = library_facts(spec_for("deep_gemm"))
    assert not facts.installed and facts.version is None and facts.module_path
    assert "no distribution metadata" in facts.notes[0]


def test_shadowed_duplicate_install_is_noted(site, tmp_path):
    make_dist(site, "triton", "3.5.0", {"triton/__init__.py": ""})
    later = tmp_path / "later"
    make_dist(later, "triton", "3.1.0", {"triton/__init__.py": ""})
    sys.path.append(str(later))
    try:
        facts = library_facts(spec_for("triton"))
    finally:
        sys.path.remove(str(later))
    assert facts.version == "3.5.0"
    assert facts.notes == [f"triton is also installed in {later}, shadowed by {site}"]


def test_locate_module_never_imports(site):
    (site / "pkg_with_side_effect").mkdir()
    (site / "pkg_with_side_effect" / "__init__.py").write_text("raise SystemExit('imported!')\n")
    (site / "pkg_with_side_effect" / "sub.py").write_text("")
    assert locate_module("pkg_with_side_effect.sub").endswith("pkg_with_side_effect/sub.py")
    assert "pkg_with_side_effect" not in sys.modules
    assert locate_module("pkg_with_side_effect.absent") is None
    assert locate_module("no_such_top_level_module_xyz") is None


def test_label_prefers_the_distribution_carrying_the_version():
    lib = LibraryFacts(
        key="flashinfer",
        title="FlashInfer",
        version="0.7.4",
        distributions={"flashinfer-cubin": "0.7.3", "flashinfer-python": "0.7.4"},
    )
    assert lib.label == "flashinfer-python 0.7.4"
    assert LibraryFacts(key="x", title="Thing").label == "Thing"
