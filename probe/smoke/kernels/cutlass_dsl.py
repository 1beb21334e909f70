"""CUTLASS CuTe DSL: compile and run a minimal kernel (c = a + b), proving the DSL's JIT works here.

The first call includes cute.compile (MLIR lowering to a cubin); the steady calls run the compiled function.
nvidia-cutlass-dsl 4.8.1: "CuTe DSL will support all NVIDIA GPU architectures starting with NVIDIA Ampere
(SM80)" (NVIDIA/cutlass media/docs/pythonDSL/faqs.rst): rules/kernels/limits.py.
"""

from __future__ import annotations

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel

ELEMENTWISE = Case(kind="elementwise", dtype="fp16")
COLUMNS = 1024


def prepare() -> None:
    import attn_preflight.probe.smoke.kernels.cute_add_kernel  # noqa: F401  (import cutlass: ~3 s on the H200)


def _build(case: Case, device: str):
    import torch

    from attn_preflight.probe.smoke.kernels.cute_add_kernel import THREADS, compiled_add
    from attn_preflight.probe.smoke.reference import Call, elementwise_add

    if case.numel % (COLUMNS * THREADS):
        raise ValueError(f"numel must be a multiple of {COLUMNS * THREADS}")
    a, b, reference = elementwise_add(case, device)
    a, b = a.view(-1, COLUMNS), b.view(-1, COLUMNS)
    c = torch.empty_like(a)
    state = {}

    def run():
        if "call" not in state:
            state["call"], state["views"] = compiled_add(a, b, c)
        state["call"](*state["views"])
        return c

    return Call(run, reference, extract=lambda out: out.view(-1))


KERNELS = [
    Kernel(
        name="cutlass-dsl-add",
        family="cutlass-dsl",
        title="CUTLASS CuTe DSL, compile + elementwise add",
        api="cutlass.cute.compile(@cute.jit add) + launch",
        quick=ELEMENTWISE,
        build=_build,
        prepare=prepare,
        library="cutlass_dsl",
    ),
]
