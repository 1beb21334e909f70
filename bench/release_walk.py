"""Walk SGLang and vLLM releases: fetch each wheel, keep the files that decide attention, diff neighbours.

The rules' `versions` ranges are set from these diffs (issue 11, part 1). Wheels are read, never installed.

    python bench/release_walk.py fetch sglang            # pip download --no-deps each release, extract
    python bench/release_walk.py fetch vllm --drop-wheels  # vLLM wheels are ~400 MB each: keep the files only
    python bench/release_walk.py diff sglang [--out DIR] # one unified diff per consecutive pair + a summary
    python bench/release_walk.py grep sglang 'Sliding window and cross attention'
                                                        # file:line of a string in every release

Everything lives under --root (default: the user cache, bench/wheel_ranges.py cache_root):
<package>/*.whl and <package>/extracted/<version>/.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import os
import re
import subprocess
import sys
import zipfile

from packaging.version import Version
from wheel_ranges import cache_root

# Final releases only. SGLang 0.5.0 was never published as a final release (0.5.0rc2 is the nearest);
# .postN releases are included because fixes land in them (0.5.10.post1 has the fa3 + fp8_e5m2 rewrite).
RELEASES = {
    "sglang": [
        "0.5.0rc2",
        "0.5.1",
        "0.5.1.post3",
        "0.5.2",
        "0.5.3",
        "0.5.3.post3",
        "0.5.4",
        "0.5.4.post3",
        "0.5.5",
        "0.5.5.post3",
        "0.5.6",
        "0.5.6.post2",
        "0.5.7",
        "0.5.8",
        "0.5.8.post1",
        "0.5.9",
        "0.5.10",
        "0.5.10.post1",
        "0.5.11",
        "0.5.12",
        "0.5.12.post1",
        "0.5.13",
        "0.5.13.post1",
        "0.5.14",
        "0.5.15",
        "0.5.15.post1",
        "0.5.16",
        "0.5.17",
        "0.5.18",
        "0.5.19",
        "0.5.20",
        "0.5.21",
        "0.5.22",
        "0.5.23",
    ],
    # Every minor release: its x.y.0 and its last x.y.z.
    "vllm": [
        "0.10.0",
        "0.10.2",
        "0.11.0",
        "0.11.2",
        "0.12.0",
        "0.13.0",
        "0.14.0",
        "0.14.1",
        "0.15.0",
        "0.15.1",
        "0.16.0",
        "0.17.0",
        "0.17.1",
        "0.18.0",
        "0.18.1",
        "0.19.0",
        "0.19.1",
        "0.20.0",
        "0.20.2",
        "0.21.0",
        "0.22.0",
        "0.22.1",
        "0.23.0",
        "0.24.0",
        "0.25.0",
        "0.25.1",
        "0.26.0",
        "0.27.0",
        "0.27.1",
        "0.28.0",
        "0.29.0",
        "0.30.0",
        "0.31.0",
        "0.32.0",
        "0.33.0",
    ],
}

# Paths inside the wheel (fnmatch; `*` crosses '/') of the files that decide attention.
ATTENTION_FILES = {
    "sglang": [
        "sglang/srt/server_args.py",
        "sglang/srt/arg_groups/*.py",
        "sglang/srt/layers/attention/*.py",
        "sglang/srt/model_executor/model_runner.py",
        "sglang/srt/model_executor/model_runner_components/*.py",
        "sglang/srt/speculative/*.py",
        "sglang/srt/configs/model_config.py",
        "sglang/jit_kernel/flash_attention_v4*.py",
        "sglang/jit_kernel/flash_attn/cute/interface.py",
        "sglang/kernels/ops/attention/*.py",
    ],
    "vllm": [
        "vllm/platforms/cuda.py",
        "vllm/platforms/interface.py",
        "vllm/v1/attention/*.py",
        "vllm/attention/*.py",
        "vllm/config/*.py",
        "vllm/engine/arg_utils.py",
        "vllm/utils/flashinfer.py",
        "vllm/model_executor/layers/attention/*.py",
        "vllm/model_executor/layers/quantization/kv_cache.py",
    ],
}


def wheel_for(package: str, version: str, wheel_dir: str) -> str | None:
    prefix = f"{package}-{version}-"
    for name in os.listdir(wheel_dir):
        if name.startswith(prefix) and name.endswith(".whl"):
            return os.path.join(wheel_dir, name)
    return None


def extracted_dir(root: str, package: str, version: str) -> str:
    return os.path.join(root, package, "extracted", version)


def extract(wheel: str, package: str, target: str) -> int:
    patterns = ATTENTION_FILES[package]
    kept = 0
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(".py") and any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                archive.extract(name, target)
                kept += 1
    # Written last: a directory without it is a half-done extraction and is redone.
    with open(os.path.join(target, ".complete"), "w") as marker:
        marker.write(os.path.basename(wheel) + "\n")
    return kept


def fetch(args: argparse.Namespace) -> int:
    wheel_dir = os.path.join(args.root, args.package)
    os.makedirs(wheel_dir, exist_ok=True)
    for version in RELEASES[args.package]:
        target = extracted_dir(args.root, args.package, version)
        if os.path.exists(os.path.join(target, ".complete")):
            continue
        wheel = wheel_for(args.package, version, wheel_dir)
        if wheel is None:
            command = ["pip", "download", "--quiet", "--no-deps", f"{args.package}=={version}", "-d", wheel_dir]
            if subprocess.run(command).returncode != 0:
                print(f"{args.package} {version}: pip download failed", file=sys.stderr)
                continue
            wheel = wheel_for(args.package, version, wheel_dir)
            if wheel is None:
                print(f"{args.package} {version}: no wheel after download", file=sys.stderr)
                continue
        kept = extract(wheel, args.package, target)
        print(f"{args.package} {version}: {kept} files from {os.path.basename(wheel)}", flush=True)
        if args.drop_wheels:
            os.remove(wheel)
    return 0


def release_files(root: str, package: str, version: str) -> dict[str, str]:
    base = extracted_dir(root, package, version)
    files = {}
    for directory, _, names in os.walk(base):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                files[os.path.relpath(path, base)] = path
    return files


def available(root: str, package: str) -> list[str]:
    versions = [
        version
        for version in RELEASES[package]
        if os.path.exists(os.path.join(extracted_dir(root, package, version), ".complete"))
    ]
    return sorted(versions, key=Version)


def read_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.readlines()


def diff(args: argparse.Namespace) -> int:
    versions = available(args.root, args.package)
    out = args.out or os.path.join(args.root, args.package, "diffs")
    os.makedirs(out, exist_ok=True)
    for older, newer in zip(versions, versions[1:]):
        old_files = release_files(args.root, args.package, older)
        new_files = release_files(args.root, args.package, newer)
        chunks = []
        changed = []
        for path in sorted(set(old_files) | set(new_files)):
            before = read_lines(old_files[path]) if path in old_files else []
            after = read_lines(new_files[path]) if path in new_files else []
            if before == after:
                continue
            lines = list(difflib.unified_diff(before, after, f"{older}/{path}", f"{newer}/{path}", n=2))
            added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
            removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
            state = "new" if path not in old_files else "gone" if path not in new_files else "changed"
            changed.append(f"  {state:7} +{added:<5} -{removed:<5} {path}")
            chunks.extend(lines)
        name = os.path.join(out, f"{older}..{newer}.diff")
        with open(name, "w", encoding="utf-8") as handle:
            handle.writelines(chunks)
        print(f"{older} -> {newer}: {len(changed)} files changed ({name})")
        if args.verbose:
            print("\n".join(changed))
    return 0


def grep(args: argparse.Namespace) -> int:
    pattern = re.compile(args.pattern if args.regex else re.escape(args.pattern))
    for version in available(args.root, args.package):
        hits = []
        for path, full in sorted(release_files(args.root, args.package, version).items()):
            if args.under and not path.startswith(args.under):
                continue
            for number, line in enumerate(read_lines(full), 1):
                if pattern.search(line):
                    hits.append(f"{path}:{number}")
        print(f"{version}: {' '.join(hits) if hits else '-'}")
    return 0


# What a `prevents` text is cut at: the parts an upstream f-string fills in (values, lists, quoted names).
_FILLED_IN = re.compile(r"\{[^}]*\}|\[[^\]]*\]|'[^']*'|`[^`]*`|\([^)]*\)|\.\.\.")


# Adjacent string literals over several lines ("...part one "\n    f"part two..."): joined before a grep.
_JOINED_LITERALS = re.compile(r"[\"']\s*\n\s*[fr]?[\"']")


def message_fragment(message: str) -> str:
    """The longest literal part of an upstream message: what a grep of the source can find verbatim."""
    parts = [part.strip(" .,;:!=") for part in _FILLED_IN.split(message.splitlines()[0] if message else "")]
    return max(parts, key=len, default="")[:60]


def prevents(args: argparse.Namespace) -> int:
    """Per rule of the engine: the releases whose attention files hold its `prevents` message."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import attn_preflight.rules.core.registry  # noqa: F401  (registers every rule)
    from attn_preflight.rules.core.registry import all_rules

    versions = available(args.root, args.package)
    texts = {
        version: {
            path: _JOINED_LITERALS.sub("", "".join(read_lines(full)))
            for path, full in release_files(args.root, args.package, version).items()
        }
        for version in versions
    }
    for r in all_rules():
        if r.engine != args.package:
            continue
        fragment = message_fragment(r.prevents)
        if len(fragment) < 12:
            print(f"{r.id} [{r.versions}]: no greppable message")
            continue
        found = [v for v in versions if any(fragment in text for text in texts[v].values())]
        if not found:
            print(f"{r.id} [{r.versions}]: {fragment!r} in no release")
            continue
        gaps = [v for v in versions if Version(found[0]) <= Version(v) <= Version(found[-1]) and v not in found]
        where = sorted(path for path, text in texts[found[0]].items() if fragment in text)
        print(
            f"{r.id} [{r.versions}]: {found[0]}..{found[-1]}"
            + (f" missing in {gaps}" if gaps else "")
            + f" ({found[0]}: {', '.join(where)})"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=str(cache_root()))
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_command = commands.add_parser("fetch")
    fetch_command.add_argument("package", choices=sorted(RELEASES))
    fetch_command.add_argument("--drop-wheels", action="store_true", help="delete each wheel once extracted")
    diff_command = commands.add_parser("diff")
    diff_command.add_argument("package", choices=sorted(RELEASES))
    diff_command.add_argument("--out")
    diff_command.add_argument("-v", "--verbose", action="store_true", help="list the changed files")
    grep_command = commands.add_parser("grep")
    grep_command.add_argument("package", choices=sorted(RELEASES))
    grep_command.add_argument("pattern")
    grep_command.add_argument("--regex", action="store_true")
    grep_command.add_argument("--under", help="only files under this path (e.g. sglang/srt/layers/attention)")
    prevents_command = commands.add_parser("prevents")
    prevents_command.add_argument("package", choices=sorted(RELEASES))
    args = parser.parse_args()
    return {"fetch": fetch, "diff": diff, "grep": grep, "prevents": prevents}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
