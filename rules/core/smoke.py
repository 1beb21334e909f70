"""A smoke result judged against its kernel's documented limits (rules/kernels/limits.py).

The smoke runner records what a kernel did (ok, wrong, error, crashed, ...) and the machine it ran on; this says
what that means when the case crosses a limit the kernel's library documents for that machine:
- the kernel raised: it confirmed its documented limit. Not a failure: the case is not supported here, and the
  kernel says so (CONFIRMED).
- it ran within tolerance: the documented limit does not hold on this machine, so the knowledge is stale
  (CONTRADICTED).
- anything else (a wrong result, a crash): the failure stands; the limit is named beside it (CROSSED).
Pure: the face (attn_preflight/smoke_judged.py) applies the judgement to a SmokeReport wherever one is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from attn_preflight.rules.kernels.limits import CaseFields, MachineView, documented_limit

CONFIRMED = "confirmed"
CONTRADICTED = "contradicted"
CROSSED = "crossed"


@dataclass(frozen=True)
class LimitJudgement:
    limit: str  # the documented limit the case crosses on this machine, with its source
    verdict: str  # CONFIRMED, CONTRADICTED or CROSSED
    message: Optional[str] = None  # CONFIRMED: the result's message, the kernel's words with the limit
    note: Optional[str] = None  # CONTRADICTED: the note the result carries


def judge_limits(
    kernel: str,
    family: str,
    case: CaseFields,
    machine: MachineView,
    *,
    raised: bool,
    ran: bool,
    message: Optional[str] = None,
) -> Optional[LimitJudgement]:
    """How a kernel's run of `case` on `machine` stands against the kernel's documented limits: None when the case
    crosses none. `raised`: the kernel raised (`message`: its own last line); `ran`: it ran within tolerance."""
    limit = documented_limit(kernel, family, case, machine)
    if limit is None:
        return None
    if raised:
        return LimitJudgement(
            limit, CONFIRMED, message=f"not supported here, and the kernel says so: {message} ({limit})"
        )
    if ran:
        return LimitJudgement(limit, CONTRADICTED, note=f"ran although documented as unsupported here: {limit}")
    return LimitJudgement(limit, CROSSED)
