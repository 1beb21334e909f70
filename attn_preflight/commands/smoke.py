"""`attn-preflight smoke`: run each installed kernel once, isolated, against an fp32 reference."""

from __future__ import annotations

import time
from typing import Optional

import click

from attn_preflight.cli import EXIT_FAIL, InputError, did_you_mean
from attn_preflight.commands.common import (
    check_output_writable,
    format_option,
    note,
    output_option,
    positive_seconds,
    screen_for,
    stderr_width,
    write_output,
)

DTYPE_CHOICES = ("bf16", "fp16", "fp8", "fp32")


@click.command("smoke")
@click.option(
    "--kernel",
    "kernel_names",
    multiple=True,
    metavar="NAME",
    help="A kernel (e.g. fa4-dense) or a family (e.g. fa4); repeatable. Default: every kernel.",
)
@click.option(
    "--level",
    type=click.Choice(("quick", "full"), case_sensitive=False),
    default="quick",
    show_default=True,
    help="quick: one small shape per kernel; full: a sweep of dtype, head_dim 64-256, "
    "causal or not, GQA, softcap, sliding window and page size, as each kernel's API allows.",
)
@click.option(
    "--dtype",
    "dtypes",
    multiple=True,
    type=click.Choice(DTYPE_CHOICES, case_sensitive=False),
    help="Run these dtypes instead of the default ones (fp8 = e4m3); repeatable.",
)
@click.option(
    "--timeout",
    type=float,
    default=180.0,
    show_default=True,
    metavar="SECONDS",
    callback=positive_seconds,
    help="Time limit per case; the first case of a kernel includes its imports and JIT compile.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Kernels run at once [default: 8 with a GPU (capped by CPUs), 1 without].",
)
@click.option("--strict", is_flag=True, help="Exit 1 when nothing ran (every case skipped), too.")
@format_option()
@output_option()
def smoke_command(
    kernel_names,
    level: str,
    dtypes,
    timeout: float,
    jobs: Optional[int],
    strict: bool,
    fmt: str,
    output: Optional[str],
) -> None:
    """Run each installed attention kernel once, each in its own process with a timeout, and compare it with
    an fp32 reference: torch SDPA (flash, efficient, cuDNN, math), FlashAttention 2/3/4, sgl-kernel FA3,
    FlashInfer, FlashMLA, a CuTe DSL kernel and a Triton kernel.

    \b
    attn-preflight smoke
    attn-preflight smoke --kernel fa4 --level full --format json -o smoke.json
    attn-preflight smoke --kernel fa4-dense --dtype fp8

    Per case: ok, wrong (max error above the tolerance), error (the kernel's own message), timeout,
    crashed (the signal, or a CUDA error such as an illegal memory access) or skipped (why). A crash or
    hang in one kernel never stops the others. Compile caches live in $XDG_CACHE_HOME/attn-preflight.
    Progress goes to stderr. Exit 0 when nothing that ran failed, 1 otherwise, 2 for bad arguments. When
    every case was skipped (no GPU, nothing installed) the summary says "nothing ran" and the exit is 0: a
    skip is a fact, not a failure; --strict makes it 1, for a CI job that must have tested a kernel.
    """
    from attn_preflight.probe.smoke.cases import DTYPE_ALIASES
    from attn_preflight.probe.smoke.kernels import families, registry, select
    from attn_preflight.probe.smoke.runner import Runner, plan
    from attn_preflight.render.smoke import progress_line, render_smoke
    from attn_preflight.smoke_judged import judged

    check_output_writable(output)
    kernels = registry()
    try:
        chosen = select(list(kernel_names), kernels)
    except KeyError as missing:
        name = missing.args[0]
        raise InputError(
            f"no such kernel {name!r}{did_you_mean(name, list(kernels) + list(families(kernels)))}"
        ) from None
    started = time.monotonic()

    def progress(result, machine) -> None:
        note(progress_line(result, time.monotonic() - started, machine, stderr_width()))

    chosen_dtypes = list(dict.fromkeys(DTYPE_ALIASES[d.lower()] for d in dtypes)) or None
    raw = Runner(timeout=timeout, parallel=jobs, progress=progress).run(
        plan(chosen, level.lower(), chosen_dtypes), level=level.lower()
    )
    report = judged(raw)  # an error confirming a documented limit is a skip, not a failure
    write_output(render_smoke(report, fmt.lower(), screen_for(fmt, output)), output)
    if report.failed or (strict and not report.ran):
        raise click.exceptions.Exit(EXIT_FAIL)
