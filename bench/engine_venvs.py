#!/usr/bin/env python3
"""Build (and cache) the venvs `check --ask-engine` is tested and measured against: one engine release each.

Never a dependency of the product (the product asks whatever interpreter the user names); the tests and
bench/ask_engine.py use it. Venvs live under the user cache dir, `${XDG_CACHE_HOME:-~/.cache}/attn-preflight/
engine-venvs/` (override: ATTN_PREFLIGHT_ENGINE_VENVS), one base per engine and one small venv per release:

- `<engine>-base`: a venv with torch (the CPU build where pip finds it) and the engine's minimal import dependencies (EngineSpec.deps;
  for SGLang the set the shared oracle's setup.sh found by trial). GPU kernel packages are never installed.
- `<engine>-<version>`: a venv without pip whose site-packages holds only the engine (`pip install --no-deps
  --target`), the release's own pins of the few packages whose version the engine's import depends on
  (EngineSpec.pinned: read from the engine's METADATA), and a `.pth` line that puts the base's site-packages
  after its own. Releases share the 2 GB base; a release costs 20-400 MB.

    python bench/engine_venvs.py sglang==0.5.23            # prints the release venv's python (builds it)
    python bench/engine_venvs.py sglang==0.5.23 --as 0.5.99   # a re-versioned copy: a release newer than any known

A build is idempotent (a marker file says what was installed) and locked per venv (fcntl), so parallel test
runs share it. Builds run under `nice`.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

MARKER = ".attn-preflight-venv.json"
TORCH = "2.13.0"


@dataclass(frozen=True)
class EngineSpec:
    engine: str  # the distribution's name: sglang, vllm
    deps: tuple[str, ...]  # what the base venv gets beside torch (with the resolver, torch held at TORCH)
    no_deps: tuple[str, ...] = ()  # installed into the base without their dependencies
    pinned: tuple[str, ...] = ()  # installed per release at the engine's own pin (from its METADATA), no deps
    never: tuple[str, ...] = ()  # removed from the base if anything brought them in (GPU kernel packages)
    python: str = ""  # the interpreter the venvs are made with (default: this one)
    extra_per_release: dict[str, tuple[str, ...]] = field(default_factory=dict)  # version -> more specs


SPECS: dict[str, EngineSpec] = {
    # ../shared/oracle/setup.sh's set (found by trial: the import chain of server_args, arg_groups,
    # model_config and attention_registry under a CPU torch).
    "sglang": EngineSpec(
        engine="sglang",
        deps=(
            "numpy",
            "orjson",
            "psutil",
            "pybase64",
            "requests",
            "packaging",
            "pillow",
            "pyyaml",
            "tqdm",
            "msgspec",
            "pydantic",
            "pyzmq",
            "aiohttp",
            "IPython",
            "dill",
            "einops",
            "setproctitle",
            "fastapi",
            "starlette",
            "uvicorn",
            "uvloop",
            "partial_json_parser",
            "gguf",
            "triton",
            "transformers==5.19.0",
            "tokenizers==0.23.2",
            "sentencepiece==0.2.1",
            "openai==2.8.0",
            "compressed-tensors==0.18.0",
            "apache-tvm-ffi==0.1.11",
        ),
        no_deps=("torchvision==0.28.0",),  # only its Python part is imported (the driver stubs two op schemas)
        pinned=("transformers", "xgrammar"),
        never=("sgl-kernel", "sglang-kernel", "flashinfer-python"),
    ),
}


def cache_root() -> Path:
    if os.environ.get("ATTN_PREFLIGHT_ENGINE_VENVS"):
        return Path(os.environ["ATTN_PREFLIGHT_ENGINE_VENVS"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attn-preflight" / "engine-venvs"


def _python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def _site_packages(venv: Path) -> Path:
    out = subprocess.run(
        [str(_python_of(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def _run(argv: list[str], log: Optional[Path] = None) -> None:
    command = ["nice", "-n", "10", *argv]
    with open(log, "a") if log else open(os.devnull, "w") as sink:
        done = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"failed ({done.returncode}): {' '.join(argv)}" + (f" (log: {log})" if log else ""))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(str(path) + ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _marker(venv: Path) -> Optional[dict]:
    try:
        return json.loads((venv / MARKER).read_text())
    except (OSError, ValueError):
        return None


def base_venv(spec: EngineSpec) -> Path:
    """The engine's shared base venv (torch + deps), built once."""
    venv = cache_root() / f"{spec.engine}-base"
    want = {"torch": TORCH, "deps": list(spec.deps), "no_deps": list(spec.no_deps)}
    with _locked(venv):
        if _marker(venv) == want:
            return venv
        log = cache_root() / f"{spec.engine}-base.log"
        if not _python_of(venv).exists():
            _run([spec.python or sys.executable, "-m", "venv", str(venv)], log)
        pip = [str(_python_of(venv)), "-m", "pip", "--disable-pip-version-check", "-q"]
        constraints = venv / "constraints.txt"
        constraints.write_text(f"torch=={TORCH}\n")
        # torch's own dependencies with it; the CPU build is the one found (a local wheel, or the CPU index)
        _run([*pip, "install", f"torch=={TORCH}"], log)
        if spec.no_deps:
            _run([*pip, "install", "--no-deps", *spec.no_deps], log)
        _run([*pip, "install", "-c", str(constraints), *spec.deps], log)
        if spec.never:
            subprocess.run([*pip, "uninstall", "-y", *spec.never], capture_output=True)
        # A CUDA build of torch works too (the driver never initialises CUDA: the GPU is simulated), only larger.
        check = subprocess.run(
            [str(_python_of(venv)), "-c", "import torch; print(torch.version.cuda)"], capture_output=True, text=True
        )
        if check.returncode:
            raise RuntimeError(f"{venv}: torch does not import: {check.stderr.strip()[-300:]}")
        (venv / MARKER).write_text(json.dumps(want))
    return venv


def _requirements(dist_info: Path) -> list[str]:
    try:
        text = (dist_info / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def _dist_info(site: Path, name: str) -> Optional[Path]:
    wanted = re.sub(r"[-_.]+", "_", name).lower()
    for entry in site.glob("*.dist-info"):
        if re.sub(r"[-_.]+", "_", entry.name[: -len(".dist-info")].rsplit("-", 1)[0]).lower() == wanted:
            return entry
    return None


def _installed_version(site: Path, name: str) -> Optional[str]:
    info = _dist_info(site, name)
    if info is None:
        return None
    match = re.search(r"^Version:\s*(\S+)", (info / "METADATA").read_text(errors="replace"), re.M)
    return match.group(1) if match else None


def _unconditional_pins(requirements: list[str], names: tuple[str, ...]) -> list[str]:
    """`name==X` for each of `names` the requirements pin without an extra or a marker that excludes Linux."""
    from packaging.requirements import Requirement

    out = {}
    for text in requirements:
        try:
            requirement = Requirement(text)
        except Exception:
            continue
        if requirement.name.lower() not in names:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        pins = [s.version for s in requirement.specifier if s.operator == "=="]
        if pins:
            out[requirement.name.lower()] = f"{requirement.name}=={pins[0]}"
    return list(out.values())


def _unmet(site: Path, base_site: Path, dist: str) -> list[str]:
    """`dist`'s direct requirements (no extra) that neither the release dir nor the base satisfies."""
    from packaging.requirements import Requirement

    info = _dist_info(site, dist)
    if info is None:
        return []
    unmet = []
    for text in _requirements(info):
        try:
            requirement = Requirement(text)
        except Exception:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if requirement.name.lower() == "torch" or not requirement.specifier:
            continue
        have = _installed_version(site, requirement.name) or _installed_version(base_site, requirement.name)
        if have is not None and not requirement.specifier.contains(have, prereleases=True):
            unmet.append(str(Requirement(f"{requirement.name}{requirement.specifier}")))
    return unmet


def release_venv(engine: str, version: str) -> Path:
    """The venv of one release (built on first use); its python is what `--engine-python` is given."""
    spec = SPECS[engine]
    base = base_venv(spec)
    venv = cache_root() / f"{engine}-{version}"
    want = {"engine": engine, "version": version, "base": str(base), "pinned": list(spec.pinned)}
    with _locked(venv):
        if _marker(venv) == want:
            return venv
        log = cache_root() / f"{engine}-{version}.log"
        if not _python_of(venv).exists():
            _run([str(_python_of(base)), "-m", "venv", "--without-pip", str(venv)], log)
        site, base_site = _site_packages(venv), _site_packages(base)
        (site / "_attn_preflight_base.pth").write_text(f"{base_site}\n")
        pip = [str(_python_of(base)), "-m", "pip", "--disable-pip-version-check", "-q"]
        target = ["install", "--no-deps", "--upgrade", "--target", str(site)]
        _run([*pip, *target, f"{engine}=={version}"], log)
        info = _dist_info(site, engine)
        pins = _unconditional_pins(_requirements(info) if info else [], spec.pinned)
        pins += list(spec.extra_per_release.get(version, ()))
        pins = [p for p in pins if _installed_version(base_site, p.split("==")[0]) != p.split("==")[-1]]
        if pins:
            _run([*pip, *target, *pins], log)
            # what those pins need that the base has at another version (tokenizers for an older transformers)
            unmet = sorted({u for p in pins for u in _unmet(site, base_site, p.split("==")[0])})
            if unmet:
                _run([*pip, *target, *unmet], log)
        shutil.rmtree(site / "bin", ignore_errors=True)  # console scripts of --target installs: not used
        (venv / MARKER).write_text(json.dumps(want))
    return venv


def reversioned_copy(engine: str, version: str, new_version: str) -> Path:
    """A copy of a release's venv whose engine says it is `new_version` (its distribution metadata and
    `version.py`): a release newer than any attn-preflight knows, to show it is tried rather than refused."""
    source = release_venv(engine, version)
    venv = cache_root() / f"{engine}-{new_version}-copy-of-{version}"
    want = {"engine": engine, "version": new_version, "copy_of": version}
    with _locked(venv):
        if _marker(venv) == want:
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        _run([str(_python_of(base_venv(SPECS[engine]))), "-m", "venv", "--without-pip", str(venv)])
        site, old_site = _site_packages(venv), _site_packages(source)
        for entry in old_site.iterdir():
            if entry.is_dir():
                shutil.copytree(entry, site / entry.name, dirs_exist_ok=True)
            else:
                shutil.copy2(entry, site / entry.name)
        info = _dist_info(site, engine)
        assert info is not None
        metadata = info / "METADATA"
        metadata.write_text(
            re.sub(r"^Version: .*$", f"Version: {new_version}", metadata.read_text(), count=1, flags=re.M)
        )
        info.rename(site / f"{engine}-{new_version}.dist-info")
        version_file = site / engine / "version.py"
        if version_file.exists():
            version_file.write_text(version_file.read_text().replace(version, new_version))
        (venv / MARKER).write_text(json.dumps(want))
    return venv


def python_for(engine: str, version: str, as_version: Optional[str] = None) -> str:
    venv = reversioned_copy(engine, version, as_version) if as_version else release_venv(engine, version)
    return str(_python_of(venv))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="ENGINE==VERSION, e.g. sglang==0.5.23")
    parser.add_argument("--as", dest="as_version", metavar="VERSION", help="a re-versioned copy, named VERSION")
    options = parser.parse_args(argv)
    engine, _, version = options.release.partition("==")
    if engine not in SPECS or not version:
        parser.error(f"give ENGINE==VERSION with ENGINE one of {', '.join(SPECS)}")
    print(python_for(engine, version, options.as_version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
