"""The fatbin reader on synthetic ELF / fatbin files built here, the arch rules, and the tables reaching a verdict.

The fixtures are tiny files laid out as probe/fatbin.py documents (ELF64 section table, fatbin containers,
entry headers); the reader's agreement with cuobjdump on real wheels is bench/fatbin_vs_cuobjdump.py's job
(bench/results/fatbin-vs-cuobjdump-2026-12-02.json).
"""

from __future__ import annotations

import json
import struct

import pytest

from attn_preflight.probe import binaries as probe_binaries
from attn_preflight.probe import fatbin
from attn_preflight.probe.facts import CompiledModule, Facts, LibraryFacts
from attn_preflight.probe.fatbin import (
    FLAG_ARCH_SPECIFIC,
    FLAG_FAMILY_SPECIFIC,
    FLAG_ZSTD,
    FatbinError,
    module_archs,
    module_key,
)
from attn_preflight.rules.kernels import binaries
from attn_preflight.rules.kernels.binaries import ArchSupport, has_code_for, ptx_for, sass_for

# --- building fixtures ------------------------------------------------------------------------------------------


def entry(kind: int, arch: int, flags: int = 0, payload: bytes = b"\0" * 24, isa=(0, 0), header=64) -> bytes:
    head = bytearray(header)
    struct.pack_into("<HHIQ", head, 0, kind, 0x101, header, len(payload))
    struct.pack_into("<I", head, 0x10, len(payload))
    struct.pack_into("<HHI", head, 0x18, isa[1], isa[0], arch)
    struct.pack_into("<Q", head, 0x28, flags | 0x11)  # 64-bit, linux, as nvcc writes them
    struct.pack_into("<Q", head, 0x38, len(payload) * 3)
    return bytes(head) + payload


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf(sections: dict[str, bytes], with_table: bool = True, machine: int = 62) -> bytes:
    """An ELF64 host object: header, section contents, then the section table (null, each section, .shstrtab)."""
    names = b"\0" + b"".join(name.encode() + b"\0" for name in [*sections, ".shstrtab"])
    body, offsets = bytearray(), []
    for content in [*sections.values(), names]:
        while len(body) % 8:
            body.append(0)
        offsets.append(64 + len(body))
        body += content
    while len(body) % 8:
        body.append(0)
    shoff = 64 + len(body)
    table = bytearray(64)  # the null section
    name_at = 1
    for (name, content), offset in zip([*sections.items(), (".shstrtab", names)], offsets):
        sh_type = 3 if name == ".shstrtab" else 1
        table += struct.pack("<IIQQQQIIQQ", name_at, sh_type, 0, 0, offset, len(content), 0, 0, 8, 0)
        name_at += len(name) + 1
    count = len(sections) + 2
    header = bytearray(64)
    header[:8] = b"\x7fELF\x02\x01\x01\x00"
    struct.pack_into("<HHI", header, 0x10, 3, machine, 1)
    if with_table:
        struct.pack_into("<Q", header, 0x28, shoff)
        struct.pack_into("<HHHHHH", header, 0x34, 64, 0, 0, 64, count, count - 1)
    return bytes(header) + bytes(body) + (bytes(table) if with_table else b"")


def cubin(abi: int, flags: int) -> bytes:
    header = bytearray(64)
    header[:9] = b"\x7fELF\x02\x01\x01\x41" + bytes([abi])
    struct.pack_into("<HH", header, 0x10, 2, 190)
    struct.pack_into("<I", header, 0x30, flags)
    return bytes(header) + b"\0" * 64


FATBIN = container(
    entry(2, 80),
    entry(2, 90, FLAG_ARCH_SPECIFIC),
    entry(1, 90, isa=(8, 4), header=80),
) + container(entry(2, 100, FLAG_FAMILY_SPECIFIC | FLAG_ZSTD), entry(2, 120, FLAG_ARCH_SPECIFIC))


# --- the reader -------------------------------------------------------------------------------------------------


def test_reader_lists_sass_ptx_and_suffixes_from_the_section_table(tmp_path):
    path = tmp_path / "ops.abi3.so"
    path.write_bytes(elf({".text": b"\x90" * 40, ".nv_fatbin": FATBIN, "__nv_relfatbin": container(entry(2, 75))}))
    archs = module_archs(str(path))
    assert archs.sass == ["sm_80", "sm_90a", "sm_100f", "sm_120a"]
    assert archs.ptx == ["compute_90"] and archs.ptx_isa == "8.4"
    assert archs.compressed == 1 and archs.entries == 6 and archs.how == "sections"
    assert archs.relocatable_only == ["sm_75"]  # relocatable device code is not runnable code


def test_reader_scans_for_containers_without_a_section_table(tmp_path):
    path = tmp_path / "stripped.so"
    path.write_bytes(elf({".nv_fatbin": FATBIN}, with_table=False))
    archs = module_archs(str(path))
    assert archs.how == "scan" and archs.sass == ["sm_80", "sm_90a", "sm_100f", "sm_120a"]


def test_a_host_library_without_gpu_code_ships_nothing(tmp_path):
    path = tmp_path / "host.so"
    path.write_bytes(elf({".text": b"\x90" * 16}))
    archs = module_archs(str(path))
    assert archs.sass == [] and archs.ptx == [] and archs.how == "sections"


@pytest.mark.parametrize(
    ("abi", "flags", "arch"),
    [(7, 0x0500 | 0x50, "sm_80"), (7, 0x0800 | 0x5A, "sm_90a"), (8, 0x6400 | 0x02, "sm_100"), (8, 0x670C, "sm_103a")],
)
def test_standalone_cubins_read_their_arch_from_e_flags(tmp_path, abi, flags, arch):
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin(abi, flags))
    archs = module_archs(str(path))
    assert archs.how == "cubin" and archs.sass == [arch]


def test_bad_files_are_refused_not_guessed(tmp_path):
    (tmp_path / "text.so").write_bytes(b"not an elf at all" * 8)
    with pytest.raises(FatbinError):
        module_archs(str(tmp_path / "text.so"))
    broken = bytearray(elf({".nv_fatbin": FATBIN}))
    at = bytes(broken).index(struct.pack("<I", 0xBA55ED50))
    broken[at + 16 : at + 18] = b"\0\0"  # the first entry's kind zeroed
    (tmp_path / "broken.so").write_bytes(bytes(broken))
    with pytest.raises(FatbinError):
        module_archs(str(tmp_path / "broken.so"))


def test_cubin_families_are_grouped_without_their_content_hashes():
    hashed = "flashinfer_cubin/cubins/" + "ab" * 20
    assert module_key(f"{hashed}/fmha/trtllm-gen/fmhaSm100a.cubin") == "flashinfer_cubin/fmha/trtllm-gen"
    assert module_key(f"{hashed}/batched_gemm-91e0ba0-896b90b/x.cubin") == "flashinfer_cubin/batched_gemm"
    assert module_key("sgl_kernel/sm90/common_ops.abi3.so") == "sgl_kernel/sm90/common_ops.abi3.so"


# --- what runs where --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sass", "ptx", "cc", "runs"),
    [
        (("sm_90a",), (), (9, 0), True),  # arch-specific: its own arch only
        (("sm_100a",), (), (10, 3), False),  # B300 cannot run sm_100a
        (("sm_100f",), (), (10, 3), True),  # the family does
        (("sm_100",), (), (10, 3), True),  # plain SASS: same major, newer minor
        (("sm_100",), (), (12, 0), False),  # never across majors
        (("sm_120",), (), (12, 1), True),
        (("sm_80", "sm_90a"), (), (12, 0), False),
        ((), ("compute_80",), (12, 0), True),  # PTX JITs forward
        ((), ("compute_90a",), (10, 0), False),  # arch-specific PTX does not
        ((), ("compute_100",), (9, 0), False),  # nor backwards
    ],
)
def test_has_code_for_follows_cudas_rules(sass, ptx, cc, runs):
    assert has_code_for(ArchSupport(sass=sass, ptx=ptx), cc) is runs


def test_ptx_of_an_isa_newer_than_the_driver_does_not_jit():
    support = ArchSupport(sass=("sm_80",), ptx=("compute_80",), ptx_isa="9.0")
    assert sass_for(support, (12, 0)) == []
    assert ptx_for(support, (12, 0)) == ["compute_80"]
    assert ptx_for(support, (12, 0), driver_cuda=(13, 0)) == ["compute_80"]
    assert not has_code_for(support, (12, 0), driver_cuda=(12, 8))


# --- the tables reach verdict, message and fix -----------------------------------------------------------------


def _table(modules_by_release: dict[str, dict]) -> dict:
    return {
        "library": "sgl-kernel",
        "distributions": ["sgl-kernel", "sglang-kernel"],
        "releases": {
            version: {"x86_64": {"wheel": f"sgl_kernel-{version}-x.whl", "modules": modules}}
            for version, modules in modules_by_release.items()
        },
    }


@pytest.fixture
def fake_tables(monkeypatch):
    tables: dict = {}
    monkeypatch.setattr(binaries, "_index", lambda: {"libraries": {name: {} for name in tables}})
    monkeypatch.setattr(binaries, "_table", lambda library: tables.get(library))
    return tables


def _b300_report(tmp_path, sgl_version: str, binaries_row=None) -> str:
    from tests.rule_fixtures.install import _machine

    report = _machine("B200")
    report["gpus"]["devices"][0].update(name="NVIDIA B300 SXM6 AC", cc_major=10, cc_minor=3)
    for library in report["libraries"]:
        if library["key"] == "sgl_kernel":
            library["distributions"] = {"sgl-kernel": sgl_version}
            library["version"] = sgl_version
            if binaries_row is not None:
                library["binaries"] = binaries_row
    path = tmp_path / "b300.json"
    path.write_text(json.dumps(report))
    return str(path)


def _rule(tmp_path, report_path):
    from tests.cli_run import check_json, finding

    run, report = check_json(["--facts", report_path, "--model", "meta-llama/Llama-3.1-8B-Instruct"])
    assert report is not None, run.err
    return finding(report, "install-kernel-arch")


def test_a_table_change_reaches_verdict_message_and_fix(tmp_path, fake_tables):
    report = _b300_report(tmp_path, "0.3.21")
    fake_tables["sgl-kernel"] = _table(
        {
            "0.3.21": {"sgl_kernel/common_ops.abi3.so": {"sass": ["sm_90a", "sm_100a"]}},
            "0.4.0": {"sgl_kernel/common_ops.abi3.so": {"sass": ["sm_90a", "sm_100a"]}},
            "0.4.10": {"sgl_kernel/sm100/common_ops.abi3.so": {"sass": ["sm_90a", "sm_100f"]}},
        }
    )
    failing = _rule(tmp_path, report)
    assert failing["status"] == "fail"
    assert "sm_90a sm_100a" in failing["message"] and "sgl_kernel-0.3.21-x.whl" in failing["message"]
    assert failing["fix"] == ["pip install sglang-kernel==0.4.10"]

    # the table says 0.4.0 gained sm_103a: the fix moves to it
    fake_tables["sgl-kernel"]["releases"]["0.4.0"]["x86_64"]["modules"]["sgl_kernel/common_ops.abi3.so"]["sass"].append(
        "sm_103a"
    )
    assert _rule(tmp_path, report)["fix"] == ["pip install sglang-kernel==0.4.0"]

    # and once 0.3.21's own row has family code, the verdict is a pass
    fake_tables["sgl-kernel"]["releases"]["0.3.21"]["x86_64"]["modules"]["sgl_kernel/common_ops.abi3.so"]["sass"] = [
        "sm_100f"
    ]
    assert _rule(tmp_path, report)["status"] == "pass"


def test_the_probes_reading_of_the_installed_files_comes_before_the_table(tmp_path, fake_tables):
    fake_tables["sgl-kernel"] = _table({"0.3.21": {"sgl_kernel/common_ops.abi3.so": {"sass": ["sm_100f"]}}})
    installed = {"sgl_kernel/common_ops.abi3.so": {"sass": ["sm_80", "sm_90a"], "ptx": []}}
    failing = _rule(tmp_path, _b300_report(tmp_path, "0.3.21", installed))
    assert failing["status"] == "fail" and "installed files" in failing["message"]


def test_a_release_no_table_has_is_not_judged(tmp_path, fake_tables):
    fake_tables["sgl-kernel"] = _table({})
    assert _rule(tmp_path, _b300_report(tmp_path, "0.3.21"))["status"] == "skip"


# --- the probe ---------------------------------------------------------------------------------------------------


def test_probe_reads_a_distributions_record_and_caches_by_size_and_mtime(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "kern").mkdir(parents=True)
    (site / "kern" / "ops.abi3.so").write_bytes(elf({".nv_fatbin": FATBIN}))
    (site / "kern" / "host.so").write_bytes(elf({".text": b"\x90"}))
    dist = site / "kern-1.0.dist-info"
    dist.mkdir()
    (dist / "RECORD").write_text("kern/ops.abi3.so,sha256=x,1\nkern/host.so,sha256=x,1\nkern/__init__.py,,\n")
    lib = LibraryFacts(key="sgl_kernel", title="k", distributions={"kern": "1.0"}, version="1.0")
    found = {"kern": [(str(site), "kern-1.0.dist-info")]}
    cache = probe_binaries.BinaryCache(str(tmp_path / "cache.json"))
    modules = probe_binaries.library_binaries(lib, found, lambda n: n, cache)
    assert modules == {
        "kern/ops.abi3.so": CompiledModule(
            sass=["sm_80", "sm_90a", "sm_100f", "sm_120a"], ptx=["compute_90"], ptx_isa="8.4"
        )
    }
    cache.save()
    calls = []
    monkeypatch.setattr(fatbin, "read_entries", lambda path: calls.append(path) or ([], "sections"))
    again = probe_binaries.library_binaries(lib, found, lambda n: n, probe_binaries.BinaryCache(cache.path))
    assert again == modules and calls == []  # served from the cache
    (site / "kern" / "ops.abi3.so").write_bytes(elf({".nv_fatbin": container(entry(2, 90))}))
    probe_binaries.library_binaries(lib, found, lambda n: n, probe_binaries.BinaryCache(cache.path))
    assert calls == [str(site / "kern" / "ops.abi3.so")]  # changed: read again


def test_every_library_a_table_covers_is_one_the_probe_reads():
    from attn_preflight.probe.libraries import SHIPS_GPU_CODE

    # the face skips the coverage rules for a report without such a library (render/facts.py _may_cover)
    assert set(binaries.TABLE_OF) <= SHIPS_GPU_CODE and set(binaries.PRIMARY_MODULES) <= SHIPS_GPU_CODE


def test_a_probe_without_compiled_kernel_libraries_reads_and_judges_no_binaries(tmp_path):
    """`probe` on a GPU with torch alone imports neither the fatbin reader nor the coverage rules (start-up)."""
    import subprocess
    import sys

    data = _facts_dict()
    for library in data["libraries"]:
        if library["key"] != "torch":
            library.update(installed=False, version=None, distributions={}, binaries=None)
    report = tmp_path / "facts.json"
    report.write_text(json.dumps(data))
    code = (
        "import json, sys\n"
        "from attn_preflight.probe.facts import Facts\n"
        "from attn_preflight.probe.collect import _binaries\n"
        "from attn_preflight.render.facts import facts_document, render_facts\n"
        "facts = Facts.from_dict(json.load(open(sys.argv[1])))\n"
        "_binaries(facts.libraries, None, False)\n"
        "facts_document(facts); render_facts(facts, 'table')\n"
        "print(sorted(m for m in sys.modules if m.endswith(('fatbin', 'binaries'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(report)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_probe_problems_name_a_library_without_code_for_the_gpu():
    from attn_preflight.render.facts import problems

    facts = Facts.from_dict(json.loads(json.dumps(_facts_dict())))
    lines = [line for line in problems(facts) if "no code for sm_120" in line]
    assert len(lines) == 1 and "sgl_kernel/common_ops.abi3.so: sm_80 sm_90a" in lines[0]


def _facts_dict() -> dict:
    from tests.rule_fixtures.install import _machine

    report = _machine("RTX 5090")
    for library in report["libraries"]:
        if library["key"] == "sgl_kernel":
            library["binaries"] = {"sgl_kernel/common_ops.abi3.so": {"sass": ["sm_80", "sm_90a"], "ptx": []}}
    return report


def test_probe_table_lists_each_librarys_compiled_archs_and_the_modules_without_code():
    from attn_preflight.render.facts import render_facts

    data = _facts_dict()
    for library in data["libraries"]:
        if library["key"] == "flashinfer":
            library["binaries"] = {"flashinfer_cubin/fmha/trtllm-gen": {"sass": ["sm_100a", "sm_103a"], "files": 9}}
    text = render_facts(Facts.from_dict(data), "table")
    block = text.split("Compiled GPU code (fatbin headers):", 1)[1]
    assert "sgl-kernel: 1 module, SASS sm_80 sm_90a; no code for sm_120 in 1 of them (sgl_kernel/common_ops" in block
    assert "FlashInfer: 1 module, SASS sm_100a sm_103a; no code for sm_120 in 1 of them" in block
