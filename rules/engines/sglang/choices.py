"""The values each SGLang release's argparse accepts for its attention, KV-cache and speculative flags.

Data: the choices of each release file (attn_preflight.rules.engines.releases), read by bench/sglang_choices.py
from the wheel. A flag stored with no choices takes any value at parse time.
"""

from __future__ import annotations

from functools import cache
from typing import Optional

from attn_preflight.rules.engines.releases import index, release

SOURCE = (
    "rules/engines/sglang/releases/<version>.json choices (bench/sglang_choices.py: each release's server_args.py "
    "/ arg_groups/fields/*.py argparse choices)"
)


def releases() -> tuple[str, ...]:
    """Every release whose choices were read, oldest first."""
    return tuple(index("sglang")["with_choices"])


@cache
def accepted(version: str, flag: str) -> Optional[frozenset[str]]:
    """The values `flag` accepts in `version` (one of `releases()`); None when any value parses (no choices)
    or the release has no such flag (general-flags-known judges that)."""
    entry = release("sglang", version)["choices"].get(flag)
    return None if entry is None or entry["choices"] is None else frozenset(entry["choices"])


def defined_in(version: str, flag: str) -> str:
    """The file of `version` that defines `flag` (python/sglang/srt/...)."""
    return release("sglang", version)["choices"][flag]["file"]
