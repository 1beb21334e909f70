"""Compile caches for the workers: the cost of a smoke run is imports and JIT, so the second run reuses both.

Each library's own variable points into $XDG_CACHE_HOME/attn-preflight (default ~/.cache/attn-preflight).
A variable the user already set wins. A directory that cannot be created or written is left out with a
note, and the library falls back to its own default: a cache never breaks a run.

Variable names, read from the sources:
- FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1 + FLASH_ATTENTION_CUTE_DSL_CACHE_DIR: FA4's persistent cache of
  compiled kernels (flash-attn-4 4.0.0b36 flash_attn/cute/cache_utils.py; off by default, and its
  get_cache_path() mkdirs at import, so an unwritable one would break `import flash_attn.cute`).
- CUTE_DSL_CACHE_DIR: the CuTe DSL's file cache of generated IR (nvidia-cutlass-dsl 4.8.1
  cutlass/base_dsl/cache_helpers.py get_default_generated_ir_path; default $TMPDIR/$USER/cutlass_python_cache).
- FLASHINFER_WORKSPACE_BASE: FlashInfer's JIT cache lives in $FLASHINFER_WORKSPACE_BASE/.cache/flashinfer
  (flashinfer-ai/flashinfer flashinfer/jit/env.py; default the home directory).
- TRITON_CACHE_DIR: Triton's kernel cache (default ~/.triton/cache).
- PYTHONPYCACHEPREFIX: Python's own bytecode cache, kept under our root instead of beside the sources.
  Images often set PYTHONDONTWRITEBYTECODE=1 and install with --no-compile (the lent H200 does both): then
  every worker recompiles the CuTe DSL, FA4 and quack sources on import (`import flash_attn.cute` took
  18 s there). With a prefix, bytecode goes only to our cache and never into site-packages, so the
  user's reason for PYTHONDONTWRITEBYTECODE still holds; it is lifted for the workers alone.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Mapping, Optional

from attn_preflight.probe.environ import NO_CACHE_HOME, cache_home

# variable -> (subdirectory, extra variables set with it)
CACHE_VARIABLES = {
    "FLASH_ATTENTION_CUTE_DSL_CACHE_DIR": ("fa4", {"FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED": "1"}),
    "CUTE_DSL_CACHE_DIR": ("cute-dsl", {}),
    "FLASHINFER_WORKSPACE_BASE": ("flashinfer", {}),
    "TRITON_CACHE_DIR": ("triton", {}),
    "PYTHONPYCACHEPREFIX": ("pycache", {"PYTHONDONTWRITEBYTECODE": ""}),
}


def cache_root(environ: Mapping[str, str]) -> Optional[Path]:
    base = cache_home(environ)
    return Path(base) / "attn-preflight" if base else None


def writable_dir(path: Path) -> Optional[str]:
    """None when `path` exists (or was created) and a file can be written in it; else why not."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
    except OSError as err:
        return f"{err.strerror or err}"
    return None


def cache_environment(environ: Mapping[str, str]) -> tuple[dict[str, str], Optional[Path], list[str]]:
    """The variables to add to the workers' environment, the cache root (None: none), and notes on caches
    left out."""
    root = cache_root(environ)
    added: dict[str, str] = {}
    notes: list[str] = []
    if root is None:
        return added, None, [f"{NO_CACHE_HOME}; each library's default applies"]
    for variable, (subdirectory, companions) in CACHE_VARIABLES.items():
        if environ.get(variable):
            continue  # the user's choice
        path = root / subdirectory
        problem = writable_dir(path)
        if problem:
            notes.append(f"{variable} not set: cannot write {path} ({problem}); the library's default applies")
            continue
        added[variable] = str(path)
        # An empty companion clears the variable for the workers (PYTHONDONTWRITEBYTECODE, see above);
        # any other companion yields to the user's own setting.
        added.update({k: v for k, v in companions.items() if v == "" or not environ.get(k)})
    return added, root, notes
