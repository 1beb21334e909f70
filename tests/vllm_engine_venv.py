"""Build (and cache) a CPU-only venv with one vLLM release, for `--ask-engine` tests and benches.

    python tests/vllm_engine_venv.py 0.33.0 [0.10.0 ...]   # prints each venv's python
    python tests/vllm_engine_venv.py 0.34.0:0.33.0         # 0.34.0 --no-deps over 0.33.0's venv

The venv lives under the user cache dir (~/.cache/attn-preflight/engine-venvs/vllm-V/); building it again
only installs what is missing. Nothing CUDA is installed: torch is the CPU wheel (whatever `torch==2.13.0+cpu`
resolves to here; vLLM pins a CUDA torch, which its Python code for argument parsing, config creation and
backend selection does not need), vLLM comes in with `--no-deps` (its compiled extensions stay on disk,
unloaded: the driver stubs them), then vLLM's own Requires-Dist of that release, read from the installed
METADATA, less the packages that are CUDA / GPU-kernel / cluster runtimes (SKIP). The kernel libraries vLLM
probes by import (flashinfer at the version vLLM pins) come in with `--no-deps`. A stamp file records a
finished build, so a half-built venv is retried, never used.

When issue 20's generic engine-venv builder exists (branch i20a) this folds into it: the only vLLM-specific
parts are SKIP and NODEPS_PINNED.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

TORCH_SPEC = os.environ.get("ATTN_PREFLIGHT_TORCH_SPEC", "torch==2.13.0+cpu")

# Requires-Dist entries never installed: CUDA builds, GPU kernels, cluster runtimes, media decoders.
SKIP = re.compile(
    r"^(torch|torchaudio|torchvision|torchcodec|xformers|ray|triton|nvidia-.*|cupy.*|pynvvideocodec|"
    r"tilelang|fastsafetensors|instanttensor|quack-kernels|humming-kernels|flashinfer-python|"
    r"flashinfer-cubin|apache-tvm-ffi|tokenspeed-mla|nvtx|opencv-python-headless|deep-gemm|"
    r"opentelemetry-exporter-otlp|opentelemetry-semantic-conventions-ai)$",
    re.I,
)
# Kernel packages vLLM imports or probes on the selection path, installed without their CUDA deps,
# at the version the release pins (when it pins one).
NODEPS_PINNED = ("flashinfer-python", "apache-tvm-ffi", "tokenspeed-mla")
NODEPS_ALWAYS = ("nvidia-ml-py",)
FLASHINFER_NEEDS = ("apache-tvm-ffi",)


def cache_root() -> Path:
    if os.environ.get("ATTN_PREFLIGHT_ENGINE_VENVS"):  # bench/engine_venvs.py's override, shared
        return Path(os.environ["ATTN_PREFLIGHT_ENGINE_VENVS"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attn-preflight" / "engine-venvs"


def venv_dir(version: str) -> Path:
    return cache_root() / f"vllm-{version}"


def venv_python(version: str) -> Path:
    return venv_dir(version) / "bin" / "python"


def is_built(version: str) -> bool:
    return (venv_dir(version) / ".built").is_file() and venv_python(version).is_file()


def _pip(py: Path, *args: str) -> None:
    cmd = ["nice", "-n", "10", str(py), "-m", "pip", "--disable-pip-version-check", "-q", "install", *args]
    subprocess.run(cmd, check=True)


def _requires(py: Path, dist: str = "vllm") -> list[str]:
    code = (
        "import importlib.metadata as m, json\n"
        "from packaging.requirements import Requirement\n"
        "out = []\n"
        "try:\n"
        f"    reqs = m.requires({dist!r}) or []\n"
        "except m.PackageNotFoundError:\n"
        "    reqs = []\n"
        "for r in reqs:\n"
        "    q = Requirement(r)\n"
        "    if q.marker is not None and not q.marker.evaluate({'extra': ''}):\n"
        "        continue\n"
        "    out.append(str(q))\n"
        "print(json.dumps(out))\n"
    )
    import json

    res = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True)
    return list(json.loads(res.stdout))


def _name(spec: str) -> str:
    return re.split(r"[\[<>=!~; ]", spec, maxsplit=1)[0].strip()


def build(version: str, wheel_dir: str | None = None) -> Path:
    """The venv's python for vllm==version, building what is missing."""
    if is_built(version):
        return venv_python(version)
    d = venv_dir(version)
    d.parent.mkdir(parents=True, exist_ok=True)
    py = d / "bin" / "python"
    if not py.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    constraints = d / "constraints.txt"
    constraints.write_text(TORCH_SPEC + "\n")
    find = ["--find-links", wheel_dir] if wheel_dir else []
    _pip(py, "packaging", TORCH_SPEC)
    _pip(py, *find, "--no-deps", f"vllm=={version}")
    reqs = _requires(py)
    keep = [r for r in reqs if not SKIP.match(_name(r))]
    _pip(py, "-c", str(constraints), *keep)
    pinned = {_name(r).lower(): r for r in reqs}
    nodeps = [pinned[n] for n in NODEPS_PINNED if n in pinned] + list(NODEPS_ALWAYS)
    _pip(py, "--no-deps", "-c", str(constraints), *nodeps)
    # what those kernel packages import beside CUDA (flashinfer 0.5 and later: apache-tvm-ffi, whatever the
    # release pins), at the kernel package's own requirement
    more = [r for r in _requires(py, "flashinfer-python") if _name(r).lower() in FLASHINFER_NEEDS]
    if more:
        _pip(py, "--no-deps", "-c", str(constraints), *more)
    check = subprocess.run(
        [
            str(py),
            "-c",
            "import torch, importlib.metadata as m; assert torch.version.cuda is None; "
            "print(m.version('vllm'), torch.__version__)",
        ],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        raise RuntimeError(f"vllm {version} venv check failed: {check.stderr[-400:]}")
    (d / ".built").write_text(f"{check.stdout.strip()} {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    return py


def build_over(version: str, base_version: str, wheel_dir: str | None = None) -> Path:
    """vllm==version installed with --no-deps over the venv of base_version (its site-packages reached through a
    .pth line, after the new release's own): an upstream release newer than any attn-preflight knows, with the
    dependencies of the newest it knows. The venv is named vllm-VERSION-over-BASE."""
    d = cache_root() / f"vllm-{version}-over-{base_version}"
    py = d / "bin" / "python"
    if (d / ".built").is_file() and py.is_file():
        return py
    base_py = build(base_version, wheel_dir)
    if not py.is_file():
        subprocess.run([str(base_py), "-m", "venv", "--without-pip", str(d)], check=True)
    site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    base_site = subprocess.run(
        [str(base_py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (site / "_attn_preflight_base.pth").write_text(base_site + "\n")
    find = ["--find-links", wheel_dir] if wheel_dir else []
    subprocess.run(
        [
            "nice",
            "-n",
            "10",
            str(base_py),
            "-m",
            "pip",
            "--disable-pip-version-check",
            "-q",
            "install",
            *find,
            "--no-deps",
            "--upgrade",
            "--target",
            str(site),
            f"vllm=={version}",
        ],
        check=True,
    )
    (d / ".built").write_text(f"vllm {version} over {base_version}\n")
    return py


def main(argv: list[str]) -> int:
    wheels = os.path.join(os.path.expanduser("~"), ".cache", "attn-preflight-wheels")
    for v in argv or ["0.33.0"]:
        t0 = time.monotonic()
        new, _, base = v.partition(":")  # 0.34.0:0.33.0 = 0.34.0 over 0.33.0's venv
        where = wheels if os.path.isdir(wheels) else None
        py = build_over(new, base, where) if base else build(v, where)
        print(f"vllm {v}: {py} ({time.monotonic() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
