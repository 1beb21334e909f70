"""Extract a few files from PyPI wheels without downloading them: HTTP Range requests under zipfile.

Why: a vLLM wheel is ~400 MB, and a release walk (issue 11) needs only some of its .py files (e.g.
vllm/vllm_flash_attn/cute/*.py, which bench/release_walk.py does not keep) and its METADATA. A wheel is a zip,
whose central directory sits at the end, and files.pythonhosted.org serves byte ranges; so a seekable file
object that fetches (and keeps) fixed-size blocks on demand lets the standard zipfile list the archive and
inflate just the members asked for: a few MB per release instead of the wheel.

    python bench/wheel_ranges.py vllm 0.10.0 0.33.0 --include 'vllm/vllm_flash_attn/*.py' [--root DIR]

writes <root>/<package>/extracted/<version>/<member> (the layout bench/release_walk.py reads, so its `grep`
and `diff` work with --root) plus the wheel's *.dist-info/METADATA, and a .complete marker last, naming the
wheel and the patterns read. The root defaults to the user cache, $ATTN_PREFLIGHT_WHEELS or
~/.cache/attn-preflight/wheels (`sources` fills it for the other bench scripts).
Stdlib only. The release list comes from https://pypi.org/pypi/<package>/json (its `releases`; the
per-version /pypi/<package>/<version>/json answers 404 here). The manylinux x86_64 wheel is read.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import os
import re
import sys
import urllib.request
import zipfile
from pathlib import Path
from urllib.parse import urljoin

BLOCK = 1 << 19  # 512 KiB: a member's local header and data usually fall in one or two blocks
INDEX = "https://pypi.org/pypi/{package}/json"
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file: each BLOCK-aligned block is fetched once by a Range GET."""

    def __init__(self, url: str, timeout: float = 60.0):
        super().__init__()
        self.url = url
        self.timeout = timeout
        self.blocks: dict[int, bytes] = {}
        self.position = 0
        self.fetched = 0
        request = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            if response.headers.get("Accept-Ranges") != "bytes":
                raise OSError(f"{url}: the server does not announce byte ranges")
            self.size = int(response.headers["Content-Length"])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def _block(self, index: int) -> bytes:
        if index not in self.blocks:
            start = index * BLOCK
            end = min(start + BLOCK, self.size) - 1
            request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                # A 200 would be the whole wheel: refuse it rather than read 400 MB by accident.
                match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
                if response.status != 206 or not match or int(match.group(1)) != start:
                    raise OSError(f"{self.url}: no partial content for bytes {start}-{end}")
                data = response.read()
            if len(data) != end - start + 1:
                raise OSError(f"{self.url}: {len(data)} bytes for a {end - start + 1}-byte range")
            self.blocks[index] = data
            self.fetched += len(data)
        return self.blocks[index]

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        wanted = min(len(view), self.size - self.position)
        done = 0
        while done < wanted:
            index, offset = divmod(self.position + done, BLOCK)
            chunk = self._block(index)[offset : offset + wanted - done]
            view[done : done + len(chunk)] = chunk
            done += len(chunk)
        self.position += done
        return done


def wheel_urls(package: str) -> dict[str, str]:
    """Release -> URL of its manylinux x86_64 wheel, from PyPI's project JSON."""
    index = INDEX.format(package=package)
    with urllib.request.urlopen(index, timeout=60) as response:
        releases = json.load(response)["releases"]
    urls = {}
    for version, files in releases.items():
        wheels = [f for f in files if f["filename"].endswith(".whl") and "x86_64" in f["filename"]]
        wheels += [f for f in files if f["filename"].endswith("-none-any.whl")]
        if wheels:
            urls[version] = urljoin(index, wheels[0]["url"])
    return urls


def cache_root() -> Path:
    """Where wheels' files are kept between runs: $ATTN_PREFLIGHT_WHEELS, else the user cache."""
    if os.environ.get("ATTN_PREFLIGHT_WHEELS"):
        return Path(os.environ["ATTN_PREFLIGHT_WHEELS"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attn-preflight" / "wheels"


def sources(package: str, version: str, patterns: list[str], root: Path | None = None) -> Path:
    """The folder holding the members of `package` `version`'s wheel that match `patterns`, read into the
    cache once (a folder read earlier with other patterns is read again for these)."""
    target = (root or cache_root()) / package / "extracted" / version
    marker = target / ".complete"
    if marker.is_file() and set(patterns) <= set(marker.read_text(encoding="utf-8").splitlines()[1:]):
        return target
    urls = wheel_urls(package)
    if version not in urls:
        raise SystemExit(f"{package} {version}: no wheel on PyPI")
    earlier = marker.read_text(encoding="utf-8").splitlines()[1:] if marker.is_file() else []
    target.mkdir(parents=True, exist_ok=True)
    extract(urls[version], sorted(set(earlier) | set(patterns)), str(target))
    return target


def extract(url: str, patterns: list[str], target: str) -> tuple[int, int]:
    """Members matching a pattern (fnmatch, `*` crosses '/') and the METADATA into target: (files, bytes read)."""
    remote = RangeFile(url)
    with zipfile.ZipFile(io.BufferedReader(remote, buffer_size=BLOCK)) as archive:
        names = [
            name
            for name in archive.namelist()
            if re.fullmatch(r"[^/]+\.dist-info/METADATA", name) or any(fnmatch.fnmatch(name, p) for p in patterns)
        ]
        for name in names:
            archive.extract(name, target)
    # Written last: a directory without it is a half-done extraction and is redone.
    with open(os.path.join(target, ".complete"), "w") as marker:
        marker.write("\n".join([os.path.basename(url), *patterns]) + "\n")
    return len(names), remote.fetched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("package")
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--include", action="append", required=True, help="member pattern (repeatable)")
    parser.add_argument("--root", type=Path, default=cache_root(), help="not the repository (default: %(default)s)")
    args = parser.parse_args()
    urls = wheel_urls(args.package)
    status = 0
    for version in args.versions:
        target = os.path.join(args.root, args.package, "extracted", version)
        if os.path.exists(os.path.join(target, ".complete")):
            continue
        if version not in urls:
            print(f"{args.package} {version}: no wheel on PyPI", file=sys.stderr)
            status = 1
            continue
        os.makedirs(target, exist_ok=True)
        kept, fetched = extract(urls[version], args.include, target)
        print(
            f"{args.package} {version}: {kept} files, {fetched / 1e6:.1f} MB read of {os.path.basename(urls[version])}"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
