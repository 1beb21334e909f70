"""The rule registry, frozen: importing this module imports every rule module (each `@rule` registers itself with
rules.engine) and indexes the rules once. rules.engine.registry() returns `INDEX`; nothing adds to it later."""

from __future__ import annotations

import rules.checks  # noqa: F401  (registers every rule module)
from rules.engine import RuleIndex, registered_rules

INDEX: RuleIndex = RuleIndex.build(registered_rules())
