"""Constraint rows about the backend vLLM runs: one family, judged by one check.

A row is a constraint row (attn_preflight.rules.core.constraints) that applies where vLLM runs `backend`,
named on the command line or picked by its priority list for the config (select.selected); elsewhere it is
skipped. `use` names the backend its fix switches to, spelled as the target's release takes it
(TRITON_ATTN_VLLM_V1 in 0.10.x), ahead of the row's own fix steps.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.constraints import Constraint, judge
from attn_preflight.rules.core.engine import Outcome, Status, generated_rule, skipped
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import legacy as kb_legacy
from attn_preflight.rules.engines.vllm import select as vllm


class Runs(NamedTuple):
    backend: str
    row: Constraint
    use: str = ""  # the backend the fix names ("": the row's fix alone)


def judge_running(running: Runs, cfg: Config, target: Target) -> Outcome:
    """The one check of the family: skip where vLLM does not run the row's backend, else the row's evaluator."""
    if cfg.attention_backend is None and target.cc is not None:
        chosen = vllm.selected(vllm.query(cfg, target), target).chosen
        if chosen != running.backend:
            return skipped(f"vLLM selects {chosen or 'no modelled backend'}, not {running.backend}")
    elif cfg.attention_backend != running.backend:
        return skipped(f"applies to {running.backend}")
    outcome = judge(running.row, cfg, target)
    if running.use and outcome.status in (Status.FAIL, Status.WARN):
        release = vllm.release_of(target)
        name = kb_legacy.spelled([running.use], release)[0] if release else running.use
        return outcome._replace(fix=(vllm.use_backend(name, target), *outcome.fix))
    return outcome


def running_rules(module: str, rows: Sequence[Runs]) -> None:
    """Registers each row as the rule of its id, judged by `judge_running`, reported under `module`'s subject."""
    for running in rows:

        def check(cfg: Config, target: Target, running: Runs = running) -> Outcome:
            return judge_running(running, cfg, target)

        generated_rule(module, running.row, check)
