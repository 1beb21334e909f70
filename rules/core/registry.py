"""The rule registry, frozen: `index(engine)` imports the rule modules that engine's check needs (each `@rule`
registers itself with attn_preflight.rules.core.engine; attn_preflight.rules.checks.MODULES names each module's engine) and indexes their rules,
once per engine; `index()` holds every rule. attn_preflight.rules.core.engine.registry() returns it; nothing adds to an index later.
"""

from __future__ import annotations

import functools
import importlib
from typing import Optional

from attn_preflight.rules.checks import MODULES
from attn_preflight.rules.core.engine import RuleIndex, registered_rules

_ORDER = {module: position for position, module in enumerate(MODULES)}


@functools.cache
def index(engine: Optional[str] = None) -> RuleIndex:
    """Every rule of `engine` and of either engine ("any"); every rule when None. In MODULES order, then each
    module's own, whichever engine's modules were imported first."""
    for module, for_engine in MODULES.items():
        if engine is None or for_engine in (engine, "any"):
            importlib.import_module(module)
    wanted = (engine, "any") if engine else ("sglang", "vllm", "any")
    rules = [r for r in registered_rules() if r.engine in wanted]
    return RuleIndex.build(sorted(rules, key=lambda r: _ORDER[r.check.__module__]))  # sorted() keeps ties' order
