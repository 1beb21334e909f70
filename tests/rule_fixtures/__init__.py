"""Pass/fail fixtures for every rule, one module per subject (tests/rule_fixtures/<subject>.py).

Each module defines `FIXTURES = {"rule-id": {"pass": [case, ...], "fail": [case, ...]}}`. A case is a dict:
- "gpu": a GPU profile or compute capability (--gpu), or "facts": a report under tests/fixtures/ (--facts);
- "argv": `check` flags, e.g. ["--model", "deepseek-v3", "--attention-backend", "fa4"];
- "command": a pasted launch command (the tokens after `--`), optional;
- "engine_version": ["sglang==0.5.23"], optional;
- "expect": the status the rule must report, when not the bucket's ("pass" / "fail"); e.g. "warn" for a
  bad case that warns.
`run_case(case)` evaluates a case exactly as `attn-preflight check` would (same option parsing).
"""

from __future__ import annotations

import atexit
import importlib
import json
import pkgutil
import shutil
import tempfile
from pathlib import Path
from typing import Optional

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"
_WRITTEN: Optional[Path] = None  # the test session's directory of written config.json models


def written_model(name: str, config: dict) -> str:
    """A model directory holding `config` as its config.json, under one temporary directory per test session
    (removed at exit); `name` is unique across the fixture modules."""
    global _WRITTEN
    if _WRITTEN is None:
        _WRITTEN = Path(tempfile.mkdtemp(prefix="attn-preflight-fixture-models-"))
        atexit.register(shutil.rmtree, _WRITTEN, True)
    directory = _WRITTEN / name
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(config))
    return str(directory)


def check_argv(case: dict) -> list[str]:
    """The `attn-preflight check` arguments a case stands for."""
    argv = list(case.get("argv", []))
    if "gpu" in case:
        argv += ["--gpu", case["gpu"]]
    if "facts" in case:
        argv += ["--facts", str(FIXTURES_DIR / case["facts"])]
    for pin in case.get("engine_version", []):
        argv += ["--engine-version", pin]
    if "command" in case:
        argv += ["--", *case["command"]]
    return argv


def run_case(case: dict, alternatives: bool = False):
    from attn_preflight.commands.check import check_command, config_from_options, target_from_options
    from attn_preflight.rules.core.judge import evaluate

    params = check_command.make_context("check", check_argv(case)).params
    config = config_from_options(params, params["command"])
    target = target_from_options(
        params["gpu"], params["facts_file"], params["engine_versions"], gpu_count=params["gpu_count"]
    )
    return evaluate(config, target, alternatives=alternatives)


def all_fixtures() -> dict[str, dict[str, list[dict]]]:
    """rule id -> {"pass": [...], "fail": [...]}, merged from every subject module; a rule in two modules is an error."""
    merged: dict[str, dict[str, list[dict]]] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for rule_id, buckets in getattr(module, "FIXTURES", {}).items():
            if rule_id in merged:
                raise ValueError(f"fixtures for {rule_id} appear in two modules (second: {info.name})")
            merged[rule_id] = buckets
    return merged
