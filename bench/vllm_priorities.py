"""Checks select.priorities against each released wheel's own CUDA priority list: every
platforms/cuda.py `_get_backend_priorities` from 0.11.1 on, read with `ast` and run on stand-ins for the
enum and the device capability (the wheel is never imported), for each arch, MLA or not, head count, KV dtype
and head size that the lists branch on.

    python bench/vllm_priorities.py WHEELS_DIR   # WHEELS_DIR/<version>/vllm/... (wheels unzipped)

Prints the mismatches and exits 1 when there are any.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attn_preflight.rules.engines.vllm import capabilities as kb  # noqa: E402
from attn_preflight.rules.engines.vllm.select import priorities  # noqa: E402


class _Members:
    """AttentionBackendEnum stand-in: AttentionBackendEnum.X is the name "X"."""

    def __getattr__(self, name: str) -> str:
        return name


def wheel_priorities(cuda_py: Path):
    """The release's _get_backend_priorities as a function (its imports of vllm dropped), or None."""
    source = cuda_py.read_text()
    node = next(
        (n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "_get_backend_priorities"),
        None,
    )
    if node is None:
        return None
    code = re.sub(r"^\s*from vllm\S* import [^\n]+\n", "", ast.get_source_segment(source, node) or "", flags=re.M)
    scope = {
        "AttentionBackendEnum": _Members(),
        "DeviceCapability": object,
        "CacheDType": str,
        "is_quantized_kv_cache": kb.is_quantised_kv,
    }
    exec("from __future__ import annotations\n" + code, scope)
    return scope["_get_backend_priorities"]


def main(wheels: Path) -> int:
    compared = mismatches = 0
    for directory in sorted(wheels.iterdir(), key=lambda p: kb.parse_version(p.name)):
        if kb.parse_version(directory.name) < kb.parse_version("0.11.1"):
            continue  # no priority list: 0.10.x-0.11.0 choose without one (_legacy_select)
        function = wheel_priorities(directory / "vllm" / "platforms" / "cuda.py")
        if function is None:
            print(f"{directory.name}: no _get_backend_priorities")
            mismatches += 1
            continue
        takes = inspect.signature(function).parameters
        for mla, major, heads, kv, head_size in itertools.product(
            (False, True), (8, 9, 10, 12), (8, 128), ("auto", "fp8", "nvfp4", "fp8_ds_mla"), (128, 512, 576)
        ):
            given = {"num_heads": heads, "kv_cache_dtype": kv, "head_size": head_size}
            wheel = tuple(
                function(mla, SimpleNamespace(major=major, minor=0), **{k: v for k, v in given.items() if k in takes})
            )
            ours = priorities(
                kb.VllmQuery(cc=(major, 0), head_size=head_size, use_mla=mla, num_heads=heads, kv_dtype=kv),
                directory.name,
            )
            compared += 1
            if wheel != ours:
                mismatches += 1
                print(
                    f"{directory.name} mla={mla} sm{major}0 heads={heads} kv={kv} head={head_size}: {wheel} != {ours}"
                )
    print(f"{compared} priority lists compared, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
