"""The console script's entry: for `probe`, the NVML query's child is forked before click and the rest of the
tool load, so that NVML's init (the driver opening each GPU: most of a quick probe's time) runs beside those
imports instead of after them. Everything else goes straight to the click group (attn_preflight.cli)."""

from __future__ import annotations

import gc
import sys
from typing import Optional


def main(argv: Optional[list[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["check"], ["probe"]) and "--smoke" not in args:
        # one short run: the tool's own imports and the rules build ~1e5 objects and no garbage cycles worth
        # a collection (the cyclic collector's passes were ~3% of a passing check's instructions)
        gc.disable()
    if args[:1] != ["probe"] or "-h" in args or "--help" in args:
        from attn_preflight.cli import main as cli_main

        cli_main(args)
        return
    from attn_preflight.probe.children import TerminateAsExit
    from attn_preflight.probe.gpus import GpuProbe

    with TerminateAsExit():  # a SIGTERM before collect() takes over still kills the child
        gpu_probe = GpuProbe()
        try:
            from attn_preflight.cli import main as cli_main

            cli_main(args, gpu_probe=gpu_probe)
        finally:  # usage errors, --version, Ctrl-C: no child outlives us
            gpu_probe.close()
