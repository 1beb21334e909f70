"""Triton: JIT-compile and run a minimal kernel (c = a + b), proving Triton's compiler and driver work here."""

from __future__ import annotations

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel

ELEMENTWISE = Case(kind="elementwise", dtype="fp16")


def prepare() -> None:
    import attn_preflight.probe.smoke.kernels.triton_add_kernel  # noqa: F401


def _build(case: Case, device: str):
    import torch

    from attn_preflight.probe.smoke.kernels.triton_add_kernel import add
    from attn_preflight.probe.smoke.reference import Call, elementwise_add

    a, b, reference = elementwise_add(case, device)
    c = torch.empty_like(a)
    return Call(lambda: add(a, b, c), reference)


KERNELS = [
    Kernel(
        name="triton-add",
        family="triton",
        title="Triton, JIT + elementwise add",
        api="triton.jit kernel launch",
        quick=ELEMENTWISE,
        build=_build,
        prepare=prepare,
        library="triton",
    ),
]
