"""The HTML report as a browser sees it: headless Chromium (Debian's package; .ci/run installs it) loads the
page from disk, the DOM it builds holds every matrix cell with its status and reasons, and a screenshot shows
the status colours. Skips cleanly where Chromium is absent."""

import json
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest
from click.testing import CliRunner
from test_nfd import node_facts
from test_report import Page, smoke_file

from attn_preflight.cli import cli

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (apt-get install chromium)")

# The page's light-theme cell colours (probe/render/html.py --pass-bg, --fail-bg, --warn-bg).
PASS_BG, FAIL_BG = (0xDC, 0xF5, 0xE3), (0xFD, 0xE0, 0xE0)


def chromium(tmp_path, *args, timeout=60):
    """Runs headless Chromium without network, sandbox, GPU or a user profile of its own."""
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-prefers-reduced-motion",
        "--blink-settings=preferredColorScheme=1",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def decode_png(data):
    """(width, height, rows of RGB tuples) for 8-bit non-interlaced RGB/RGBA PNGs, which Chromium writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("report")
    facts = tmp_path / "h200.json"
    facts.write_text(json.dumps(node_facts(hostname="h200-node").to_dict()))
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli,
        ["report", "-o", str(out), "--facts", str(facts), "--model", "llama-3.1-8b", "--smoke", smoke_file(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    return out


def test_browser_dom_holds_every_cell_with_status_and_reasons(page_file, tmp_path):
    done = chromium(tmp_path, "--dump-dom", page_file.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Page(done.stdout)
    source = Page(page_file.read_text())
    assert dom.cells == source.cells  # the browser kept every cell: no markup it had to repair away
    assert len(dom.cells) >= 40
    status, title = dom.cells[("fa4", "fp8_e4m3")]
    assert status == "fail" and "fa4-fp8-sm100" in title and "fix:" in title
    assert dom.libraries["cutlass_dsl"] == "error"
    assert list(dom.smoke.values()) == ["pass", "fail", "skip"]
    assert "<title>h200-node — llama-3.1-8b · attn-preflight</title>" in done.stdout


def test_screenshot_shows_the_matrix_in_its_colours(page_file, tmp_path):
    shot = tmp_path / "report.png"
    done = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,1400", page_file.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, rows = decode_png(shot.read_bytes())
    assert (width, height) == (1280, 1400)
    colours = {}
    for row in rows[::4]:
        for pixel in row[::4]:
            colours[pixel] = colours.get(pixel, 0) + 1
    assert len(colours) > 50  # not blank: text, cards, table
    assert colours.get(PASS_BG, 0) > 200 and colours.get(FAIL_BG, 0) > 200  # pass and fail cells, painted


def test_page_prints(page_file, tmp_path):
    pdf = tmp_path / "report.pdf"
    done = chromium(tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", page_file.as_uri())
    assert done.returncode == 0 and pdf.exists(), done.stderr[-2000:]
    data = pdf.read_bytes()
    pages = re.findall(rb"/Type\s*/Page\b", data)
    assert data.startswith(b"%PDF") and len(pages) >= 2  # the whole report, over pages
