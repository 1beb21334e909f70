#!/usr/bin/env python3
"""The shared SGLang oracle, extended to releases that resolve inside `ServerArgs.__post_init__` (outside CI).

../shared/oracle/sglang_oracle.py (a yardstick, never a dependency of the product) asks sglang 0.5.23's
resolution: `prepare_server_args` only parses, then `ServerArgs.resolve_once()` runs the arg_groups
pipeline under the simulated GPU. Releases before that pipeline (0.5.19 and older; 0.5.20 has
resolve_once) resolve while the dataclass is built: `prepare_server_args` -> `ServerArgs.from_cli_args` ->
`__post_init__` -> the `_handle_*` steps. This module imports the shared oracle unchanged (its simulated
GPU, fences, classification, batch mode) and replaces two of its pieces for such releases:

- the CPU-view import: only the modules that release has (no arg_groups pipeline), plus those its
  `__post_init__` would import lazily under the simulated GPU;
- the evaluation: the simulated GPU and the cleared probe caches are installed *before* parsing, and the
  rejection's `hook` is the innermost `ServerArgs._handle_*` step on the stack when SGLang raised. The backend
  factory pre-check is the shared one's, with the ModelRunner facts as that release's ModelRunner computes
  them (`ModelConfig.from_server_args`, `use_mla_backend = attention_arch == MLA`).

A release with `resolve_once` is run by the shared oracle's own code path, given only the platform facts that
release's `override_platform` knows. Usage and output are the shared
oracle's (see its README); build a venv per release with the shared setup.sh:

    SGL_ORACLE_VENV=/tmp/sgl-oracle-0.5.16 SGLANG_VERSION=0.5.16 ../shared/oracle/setup.sh
    /tmp/sgl-oracle-0.5.16/bin/python bench/sglang_release_oracle.py --batch IN.jsonl > OUT.jsonl
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import logging
import os
import sys
import types

_NEXT_TO_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # ../shared is there
SHARED_ORACLE = os.environ.get("SGL_SHARED_ORACLE", os.path.join(_NEXT_TO_REPO, "shared", "oracle", "sglang_oracle.py"))

_spec = importlib.util.spec_from_file_location("sglang_oracle", SHARED_ORACLE)
base = importlib.util.module_from_spec(_spec)
sys.modules["sglang_oracle"] = base
_spec.loader.exec_module(base)

# Modules a pre-pipeline __post_init__ imports lazily; imported up front under the CPU view, as the shared
# oracle does for the pipeline's hook modules (under the simulated GPU they would pull in GPU kernels).
LEGACY_PREIMPORTS = (
    "sglang.srt.configs.model_config",
    "sglang.srt.layers.attention.attention_registry",
    "sglang.srt.utils.common",
    "sglang.srt.utils",
    "sglang.srt.platforms",
    "sglang.srt.runtime_context",
    "sglang.srt.arg_groups.speculative_hook",
    "sglang.srt.arg_groups.overrides",
    "sglang.srt.arg_groups.deepseek_v4_hook",
    "sglang.srt.arg_groups.hisparse_hook",
    "sglang.srt.arg_groups.pd_disaggregation_hook",
    "sglang.srt.model_executor.cuda_graph_config",
)


def resolves_in_post_init() -> bool:
    from sglang.srt.server_args import ServerArgs

    return not hasattr(ServerArgs, "resolve_once")


class _AbsentKernelModule(types.ModuleType):
    """sgl_kernel for releases whose resolution modules import it unconditionally (0.5.5): any attribute
    exists (a GPU host has the package), calling one is a harness error (no kernel runs here)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)

        def kernel(*args, **kwargs):
            base._harness(f"sgl_kernel.{name} called")

        return kernel


def _stub_sgl_kernel_if_absent() -> None:
    if importlib.util.find_spec("sgl_kernel") is None:
        sys.modules["sgl_kernel"] = _AbsentKernelModule("sgl_kernel")
        base.HARNESS_EVENTS.append("sgl_kernel absent: a stub module answers its imports (calls are harness errors)")


def import_sglang() -> None:
    """Phase 1 (CPU view), for any release."""
    base.prepare_torchvision()
    _stub_sgl_kernel_if_absent()
    from sglang.srt.server_args import prepare_server_args  # noqa: F401

    if not resolves_in_post_init():
        shared_import_sglang()
        return
    for name in LEGACY_PREIMPORTS:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if not (name + ".").startswith((e.name or "") + "."):  # it exists, but something it imports does not
                base.HARNESS_EVENTS.append(f"pre-import {name} failed: {e}"[:200])
        except Exception as e:
            base.HARNESS_EVENTS.append(f"pre-import {name} failed: {type(e).__name__}: {e}"[:200])


def _innermost_handler(exc) -> str | None:
    """The innermost ServerArgs._handle_* / _validate_* step on the traceback (the pre-pipeline `hook`)."""
    name, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.endswith("server_args.py") and code.co_name.startswith(("_handle", "_validate")):
            name = code.co_name
        tb = tb.tb_next
    return name


def _legacy_factory_precheck(server_args, backends) -> dict:
    """The shared pre-check with the runner facts a pre-pipeline ModelRunner computes itself."""
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS

    try:
        model_config = ModelConfig.from_server_args(server_args)
    except BaseException as e:
        return {"_error": f"{type(e).__name__}: {e}"[:200]}
    runner = base._FakeRunner(
        server_args=server_args,
        model_config=model_config,
        use_mla_backend=model_config.attention_arch == AttentionArch.MLA,
        page_size=server_args.page_size,
        is_draft_worker=False,
        init_new_workspace=False,
    )
    out = {}
    for name in dict.fromkeys(b for b in backends if b):
        factory = ATTENTION_BACKENDS.get(name)
        if factory is None:
            out[name] = {"status": "unknown_backend"}
            continue
        n_events = len(base.HARNESS_EVENTS)
        try:
            factory(runner)
            out[name] = {"status": "constructed"}
        except BaseException as e:
            if isinstance(e, (AssertionError, ValueError, NotImplementedError)) and base._raising_file(e).endswith(
                "attention_registry.py"
            ):
                out[name] = {"status": "rejected", "error_type": type(e).__name__, "error": str(e)[:300]}
            else:
                out[name] = {"status": "no_early_rejection", "stopped_at": f"{type(e).__name__}: {e}"[:160]}
        del base.HARNESS_EVENTS[n_events:]
    return out


def _platform_facts_of_this_release() -> None:
    """The shared oracle states 0.5.23's platform facts; an older pipeline release (0.5.20) refuses the ones
    it does not have (is_mps, is_sm110: "unknown platform fact(s)"), so only the facts it knows are given."""
    import sglang.srt.runtime_context as context

    known = set(context._PLATFORM_PROBES) | set(context._PLATFORM_VALUES)
    override = context.override_platform
    context.override_platform = lambda **facts: override(**{k: v for k, v in facts.items() if k in known})


class Evaluation(base._Evaluation):
    def run(self, sgl: list) -> int:
        if not resolves_in_post_init():
            _platform_facts_of_this_release()
            return super().run(sgl)
        from sglang.srt.server_args import prepare_server_args

        gpu, result = self.gpu, self.result
        try:
            base.install_fake_cuda(gpu.cc, gpu.name, gpu.mem, gpu.sms, gpu.count, gpu.cuda_version)
            gpu.sim["probe_caches_cleared"] = base.clear_platform_caches()
            from sglang.srt.utils import common

            flashinfer = not self.opts.no_flashinfer
            base._patch_everywhere("is_flashinfer_available", common.is_flashinfer_available, lambda: flashinfer)
            gpu.sim["probes"] = {
                probe: getattr(common, probe)()
                for probe in ("is_sm90_supported", "is_sm100_supported", "is_sm120_supported", "get_device_sm")
                if hasattr(common, probe)
            }
        except BaseException as exc:
            return self.harness_fail(exc, "simulation setup failed")

        err_buf = io.StringIO()
        logging.getLogger().addHandler(self.collector)
        try:
            with contextlib.redirect_stderr(err_buf):
                server_args = prepare_server_args(sgl)
        except SystemExit as exc:
            lines = err_buf.getvalue().strip().splitlines()
            result.update(
                accepted=False,
                status="rejected",
                error_type="ArgumentError",
                error=(lines[-1] if lines else f"argparse exit {exc.code}")[:300],
                hook="argparse",
            )
            return self.finish(1)
        except BaseException as exc:
            kind, why = base.classify(exc)
            if kind == "harness_error":
                return self.harness_fail(exc, why)
            result.update(
                accepted=False,
                status="rejected",
                error_type=type(exc).__name__,
                error=str(exc)[:300],
                hook=_innermost_handler(exc) or "__post_init__",
            )
            return self.finish(1)

        resolved = {key: getattr(server_args, key) for key in base._RESOLVED_KEYS if hasattr(server_args, key)}
        prefill = server_args.prefill_attention_backend or server_args.attention_backend
        decode = server_args.decode_attention_backend or server_args.attention_backend
        resolved["effective_prefill_attention_backend"] = prefill
        resolved["effective_decode_attention_backend"] = decode
        result.update(accepted=True, status="accepted", resolved=resolved)
        result["declarations"] = base._declarations(server_args)
        if not self.opts.no_factory_check:
            with contextlib.redirect_stderr(self.log_sink):
                check = _legacy_factory_precheck(server_args, (prefill, decode))
            result["backend_factory_check"] = check
            rejected = [
                f"{b}: {v['error']}" for b, v in check.items() if isinstance(v, dict) and v.get("status") == "rejected"
            ]
            if rejected:
                result["status"] = "rejected_at_backend_init"
                result["late_error"] = "; ".join(rejected)[:300]
                return self.finish(3)
        return self.finish(0)


shared_import_sglang = base.import_sglang
base.import_sglang = import_sglang
base._Evaluation = Evaluation

if __name__ == "__main__":
    sys.exit(base.main())
