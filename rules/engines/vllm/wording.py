"""How a vLLM generated rule's title, docs and fix title name a declared fact: the placeholders of WORDED, filled
by words.py (its docstring lists them) when the rule is shown, through rules/core's Worded. This module is what a
check loads; words.py, and the cost of wording, only `explain` and `rules`."""

from __future__ import annotations

import re
from typing import Any

from attn_preflight.rules.core.engine import Worded
from attn_preflight.rules.engines.vllm import capabilities as kb

WORDED = (
    r"\{((?:release|tokenspeed_dims|each|with|without|backends|history|picks|archs|head_sizes|block_sizes|dtypes"
    r"|kv_dtypes|sinks|qk_nope_head_dims|kv_since|float16_refused|inkling_majors)(?::[^{}\s]+)?)\}"
)


def tokenspeed_dims() -> str:
    """TOKENSPEED_MLA's qk_nope/qk_rope/v head dims as declared: "128/64/128"."""
    return "/".join(map(str, kb.TOKENSPEED_DIMS))


def fact(name: str) -> str:
    if name == "tokenspeed_dims":  # in a title, which every finding shows: worded here, without loading words.py
        return tokenspeed_dims()
    from attn_preflight.rules.engines.vllm import words  # loaded when a rule is shown, never by a check

    return words.fact(name)


def words(row: Any) -> Worded:
    """A row's title, docs and fix title with the declared facts they name worded from the declarations as they are
    now (the newest declared range, its older values, the selection): read when shown, never frozen at import."""
    return Worded({"title": row.title, "docs": row.docs, "fix_title": row.fix_title}, word)


def word(text: str) -> str:
    """`text` with each WORDED placeholder filled from the declarations as they are now."""
    return re.sub(WORDED, lambda match: fact(match.group(1)), text)
