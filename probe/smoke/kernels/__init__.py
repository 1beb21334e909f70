"""The kernels smoke runs: one module per family, each listing its kernels in `KERNELS`.

A Kernel is data plus two callables that run only inside the worker: `prepare()` imports the library
(timed apart from the first call) and `build(case, device)` makes the inputs, the fp32 reference and the
call to time. Family modules import nothing heavy at module level, so the runner reads this registry
without loading torch or any kernel library. What each library documents it cannot do (FA4 fp8 only on
SM100, ...) is knowledge, not a fact of this machine: rules/kernels/limits.py, keyed by kernel name and
family, read when a smoke report is judged.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from attn_preflight.probe.smoke.cases import Case

FAMILY_MODULES = (
    "attn_preflight.probe.smoke.kernels.sdpa",
    "attn_preflight.probe.smoke.kernels.fa2",
    "attn_preflight.probe.smoke.kernels.fa3",
    "attn_preflight.probe.smoke.kernels.fa4",
    "attn_preflight.probe.smoke.kernels.flashinfer",
    "attn_preflight.probe.smoke.kernels.flashmla",
    "attn_preflight.probe.smoke.kernels.fla",
    "attn_preflight.probe.smoke.kernels.cutlass_dsl",
    "attn_preflight.probe.smoke.kernels.triton_add",
)

# Case options a kernel's API may be able to express (Kernel.features); "page:N" adds page size N to the sweep.
FEATURE_SOFTCAP = "softcap"
FEATURE_WINDOW = "window"
FEATURE_FP8 = "fp8"
FEATURE_SINKS = "sinks"  # a learnable sink per query head
FEATURE_SCORE_MOD = "score_mod"  # a custom score modification callable
FEATURE_QV = "qv"  # absorbed MLA's separate qv input


@dataclass(frozen=True)
class Kernel:
    name: str  # unique, e.g. "fa4-dense"; --kernel takes this or the family
    family: str  # e.g. "fa4"
    title: str
    api: str  # the real entry point called, e.g. "flash_attn.cute.flash_attn_func"
    quick: Case  # --level quick; also the base of the full sweep and of check --smoke's shapes
    build: Callable[[Case, str], Any]  # (case, device) -> reference.Call; runs in the worker
    prepare: Optional[Callable[[], None]] = None  # imports the library; runs in the worker
    library: Optional[str] = None  # probe/libraries.py key; None: part of torch
    needs_gpu: bool = True
    features: frozenset = field(default_factory=frozenset)

    def inexpressible(self, case: Case) -> Optional[str]:
        """Why this kernel's API cannot express `case` at all (nothing to run), or None."""
        if case.kind != self.quick.kind:
            return f"{self.name} is an {self.quick.kind} kernel"
        if case.kind != "attention":
            return None
        if case.softcap and FEATURE_SOFTCAP not in self.features:
            return f"{self.api} has no softcap argument"
        if case.window_left is not None and FEATURE_WINDOW not in self.features:
            return f"{self.api} has no sliding-window argument"
        for wanted, feature, what in (
            (case.sinks, FEATURE_SINKS, "learnable-sink"),
            (case.score_mod, FEATURE_SCORE_MOD, "score_mod"),
            (case.qv, FEATURE_QV, "qv"),
        ):
            if wanted and feature not in self.features:
                return f"{self.api} has no {what} argument"
        if (case.page_size is None) != (self.quick.page_size is None):
            return f"{self.api} reads a {'paged' if self.quick.page_size else 'contiguous'} KV cache"
        return None

    def with_shape(self, **shape: Any) -> Case:
        """This kernel's quick case with a model's shape applied (head dims, heads, dtypes, softcap, window,
        page size); batch and sequence lengths stay the kernel's own (prefill or decode)."""
        if self.quick.kind != "attention":
            return replace(self.quick, dtype=shape.get("dtype", self.quick.dtype)).validate()
        if self.quick.page_size is None:
            shape = {k: v for k, v in shape.items() if k != "page_size"}
        elif shape.get("page_size") is None:
            shape.pop("page_size", None)
        return replace(self.quick, **shape).validate()


def registry() -> dict[str, Kernel]:
    """Every kernel, in a stable order: name -> Kernel."""
    kernels: dict[str, Kernel] = {}
    for module in FAMILY_MODULES:
        for kernel in importlib.import_module(module).KERNELS:
            kernels[kernel.name] = kernel
    return kernels


def families(kernels: dict[str, Kernel]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for kernel in kernels.values():
        grouped.setdefault(kernel.family, []).append(kernel.name)
    return grouped


def select(names: list[str], kernels: Optional[dict[str, Kernel]] = None) -> list[Kernel]:
    """Kernels named by `--kernel` (a kernel name or a family name), in registry order; all when empty.
    Raises KeyError(name) for the first name that is neither."""
    kernels = registry() if kernels is None else kernels
    if not names:
        return list(kernels.values())
    grouped = families(kernels)
    chosen: set[str] = set()
    for name in names:
        if name in kernels:
            chosen.add(name)
        elif name in grouped:
            chosen.update(grouped[name])
        else:
            raise KeyError(name)
    return [kernel for kernel in kernels.values() if kernel.name in chosen]
