"""`report`: one self-contained HTML page, its matrix judged by the rules, smoke results when given."""

import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner
from test_nfd import node_facts

from attn_preflight.cli import cli
from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.results import KernelResult, MachineSummary, SmokeReport


class Page(HTMLParser):
    """The page's matrix cells, library rows, smoke rows and every URL-bearing attribute."""

    def __init__(self, text):
        super().__init__()
        self.cells, self.libraries, self.smoke, self.urls, self.tags = {}, {}, {}, [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "data-backend" in attrs:
            self.cells[(attrs["data-backend"], attrs["data-kv"])] = (attrs["data-status"], attrs.get("title", ""))
        if "data-library" in attrs:
            self.libraries[attrs["data-library"]] = attrs["data-health"]
        if "data-smoke" in attrs:
            self.smoke[attrs["data-smoke"]] = attrs["data-status"]
        self.urls += [v for k, v in attrs.items() if k in ("src", "href", "action", "data") and v]


def facts_file(tmp_path, facts=None, name="node.json"):
    path = tmp_path / name
    path.write_text(json.dumps((facts or node_facts()).to_dict()))
    return str(path)


def report(tmp_path, *args):
    out = tmp_path / "out.html"
    result = CliRunner().invoke(cli, ["report", "-o", str(out), *args])
    return result, (out.read_text() if out.exists() else None)


def test_h200_page_judges_every_backend_and_kv_dtype(tmp_path):
    result, html = report(tmp_path, "--facts", facts_file(tmp_path), "--model", "llama-3.1-8b")
    assert result.exit_code == 0, result.output
    page = Page(html)
    backends = {b for b, _ in page.cells}
    kv_dtypes = {k for _, k in page.cells}
    assert {"fa3", "fa4", "flashinfer", "triton"} <= backends
    assert {"auto", "fp8_e4m3", "mxfp8", "nvfp4"} <= kv_dtypes
    assert len(page.cells) == len(backends) * len(kv_dtypes)
    status, title = page.cells[("fa4", "fp8_e4m3")]  # FA4 FP8 raises "only supported on SM100" on the H200
    assert status == "fail" and "fa4-fp8-sm100" in title
    status, title = page.cells[("fa3", "mxfp8")]
    assert status == "fail" and "kv-mxfp8-requires-fa4" in title
    assert page.cells[("fa3", "auto")][0] in ("pass", "warn")
    assert "llama-3.1-8b" in html


def test_libraries_show_their_health(tmp_path):
    _, html = report(tmp_path, "--facts", facts_file(tmp_path))
    page = Page(html)
    assert page.libraries == {
        "torch": "ok",
        "fa4": "ok",
        "sgl_kernel": "ok",
        "flashinfer": "ok",
        "quack": "ok",
        "cutlass_dsl": "error",
    }
    assert "its .pth file (nvidia_cutlass_dsl_packages.pth) was not processed" in html
    assert "fa2" in html  # listed as not installed


def test_page_is_self_contained(tmp_path):
    _, html = report(tmp_path, "--facts", facts_file(tmp_path), "--model", "llama-3.1-8b")
    page = Page(html)
    assert all(url.startswith("#") for url in page.urls), page.urls
    assert not {"script", "link", "img", "iframe"} & set(page.tags)
    assert not re.search(r"url\(|@import|https?://", html)


def test_facts_are_escaped(tmp_path):
    facts = node_facts(hostname='<script>alert("x")</script>')
    _, html = report(tmp_path, "--facts", facts_file(tmp_path, facts))
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_backend_and_kv_dtype_flags_narrow_the_matrix(tmp_path):
    facts = facts_file(tmp_path)
    _, html = report(tmp_path, "--facts", facts, "--attention-backend", "fa4")
    assert {b for b, _ in Page(html).cells} == {"fa4"}
    _, html = report(tmp_path, "--facts", facts, "--kv-cache-dtype", "fp8_e4m3")
    assert {k for _, k in Page(html).cells} == {"fp8_e4m3"}


def test_deterministic_deepseek_on_fa4_fails_on_sm90(tmp_path):
    _, html = report(
        tmp_path,
        "--facts",
        facts_file(tmp_path),
        "--model",
        "deepseek-v3",
        "--enable-deterministic-inference",
        "--attention-backend",
        "fa4",
    )
    status, title = Page(html).cells[("fa4", "auto")]
    assert status == "fail" and "fa4-deterministic-mla-arch" in title


def test_live_probe_is_the_default(tmp_path, monkeypatch):
    import attn_preflight.probe.collect

    monkeypatch.setattr(attn_preflight.probe.collect, "collect", lambda **kwargs: node_facts(hostname="live-node"))
    result, html = report(tmp_path)
    assert result.exit_code == 0, result.output
    assert "live-node" in html and "this machine" in html


def smoke_file(tmp_path):
    results = [
        KernelResult(
            kernel="fa4-dense",
            family="fa4",
            title="FA4 dense",
            status="ok",
            library="fa4",
            case=Case(),
            max_abs_error=0.0081,
            first_call_s=3.74,
            steady_ms=2.15,
        ),
        KernelResult(
            kernel="fa4-fp8",
            family="fa4",
            title="FA4 fp8",
            status="error",
            library="fa4",
            case=Case(dtype="fp8_e4m3"),
            message="AssertionError: FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.",
        ),
        KernelResult(
            kernel="flashinfer",
            family="flashinfer",
            title="FlashInfer",
            status="skipped",
            skip_basis="environment",
            message="flashinfer-python is not installed",
        ),
    ]
    report_ = SmokeReport(tool_version="0.1.0", machine=MachineSummary(device_name="NVIDIA H200"), results=results)
    path = tmp_path / "smoke.json"
    path.write_text(json.dumps(report_.to_dict()))
    return str(path)


def test_smoke_results_are_shown(tmp_path):
    result, html = report(tmp_path, "--facts", facts_file(tmp_path), "--smoke", smoke_file(tmp_path))
    assert result.exit_code == 0, result.output
    smoke = Page(html).smoke
    assert list(smoke.values()) == ["pass", "fail", "skip"]
    assert "FP8 is only supported on SM100" in html and "3.74 s" in html and "2.15 ms" in html


@pytest.mark.parametrize("content,words", [("{", "not valid JSON"), ('{"kind": "probe"}', "not a smoke report")])
def test_bad_smoke_file_is_one_line_exit_2(tmp_path, content, words):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result, html = report(tmp_path, "--facts", facts_file(tmp_path), "--smoke", str(bad))
    assert result.exit_code == 2 and words in result.output and html is None


def test_bad_facts_file_is_exit_2_naming_it(tmp_path):
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**node_facts().to_dict(), "schema_version": 2}))
    result, html = report(tmp_path, "--facts", str(newer))
    assert result.exit_code == 2 and "newer.json" in result.output and "schema_version" in result.output
    assert html is None


def test_output_is_required_and_must_be_writable(tmp_path):
    assert CliRunner().invoke(cli, ["report", "--facts", facts_file(tmp_path)]).exit_code == 2
    result = CliRunner().invoke(cli, ["report", "-o", str(tmp_path / "no" / "x.html"), "--facts", facts_file(tmp_path)])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_report_says_where_it_wrote(tmp_path):
    out = tmp_path / "node.html"
    result = CliRunner().invoke(cli, ["report", "-o", str(out), "--facts", facts_file(tmp_path)])
    assert result.exit_code == 0 and out.exists()
    assert f"wrote {out}" in result.output  # on stderr; CliRunner mixes the streams


def test_engine_version_pins_the_release_the_matrix_is_judged_for(tmp_path):
    """SGLang before 0.5.19 refused trtllm_mha prefill on SM120 (tests/test_rules_extra_e2e.py has the source)."""
    rtx = facts_file(tmp_path, node_facts("NVIDIA GeForce RTX 5090", (12, 0), 32607, count=1))
    # a 32k context: 128k of bf16 KV would not fit beside 15 GiB of weights (memory-kv-context warns)
    _, newest = report(tmp_path, "--facts", rtx, "--model", "llama-3.1-8b", "--context-length", "32768")
    assert Page(newest).cells[("trtllm_mha", "auto")][0] == "pass"
    result, pinned = report(tmp_path, "--facts", rtx, "--model", "llama-3.1-8b", "--engine-version", "sglang==0.5.18")
    assert result.exit_code == 0
    status, title = Page(pinned).cells[("trtllm_mha", "auto")]
    assert status == "fail" and "trtllm-mha-arch" in title


def test_a_bad_engine_version_is_exit_2(tmp_path):
    result, html = report(tmp_path, "--facts", facts_file(tmp_path), "--engine-version", "sglang==x")
    assert result.exit_code == 2 and "not a version" in result.output and html is None
