"""Rule modules, one per subject. Importing this package registers every rule (see rules.engine.rule).

One line per module; add yours in the list below.
"""

import importlib

ALL_MODULES = [
    "rules.checks.general",
    "rules.checks.fa3",
    "rules.checks.fa4",
    "rules.checks.kv_cache",
    "rules.checks.deterministic",
    "rules.checks.vision",
    "rules.checks.vllm",
    "rules.checks.model_specific",
    "rules.checks.speculative",
    "rules.checks.mla_backends",
    "rules.checks.dsa",
    "rules.checks.install",
    "rules.checks.memory",
    "rules.checks.parallel",
]

for _module in ALL_MODULES:
    importlib.import_module(_module)
