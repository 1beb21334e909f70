"""The CuTe DSL kernel itself (imported in the worker only: `import cutlass` is seconds and needs a GPU stack).

A naive elementwise add, one element per thread, as in NVIDIA/cutlass examples/python/CuTeDSL/notebooks/
elementwise_add.ipynb; written against nvidia-cutlass-dsl 4.8.1 (cute.kernel, cute.jit, cute.compile,
cute.arch.thread_idx/block_idx/block_dim, cutlass.cute.runtime.from_dlpack).
"""

import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

THREADS = 256


@cute.kernel
def add_kernel(g_a: cute.Tensor, g_b: cute.Tensor, g_c: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    index = bidx * bdim + tidx
    m, n = g_a.shape
    row = index // n
    col = index % n
    g_c[row, col] = g_a[row, col] + g_b[row, col]


@cute.jit
def add(m_a: cute.Tensor, m_b: cute.Tensor, m_c: cute.Tensor):
    m, n = m_a.shape
    add_kernel(m_a, m_b, m_c).launch(grid=((m * n) // THREADS, 1, 1), block=(THREADS, 1, 1))


def compiled_add(a, b, c):
    """(call, views): cute.compile once for these tensors' types; call(*views) runs the compiled kernel."""
    views = tuple(from_dlpack(t, assumed_align=16) for t in (a, b, c))
    return cute.compile(add, *views), views
