"""Backend gates: one rule per declared fact a backend refuses, judged by one check over the declarations.

A row names a backend and one fact of its declaration (rules/engines/sglang/capabilities.py) as the validator
(rules/engines/sglang/reasons.py) reports it: "archs", "mla_archs", "page_sizes", "kv_dtypes", "mla" (an MLA
model on an MHA-only backend), "mha", "feature_archs:score_mod", "head_dims:9", ... `gate_rules(module, rows)`
registers one rule per row with the row's id and metadata (attn_preflight.rules.core.engine.rule); its check is
`judge`. What the finding requires is the validator's wording of the declared fact, and a fix names the backends
the declarations admit on the target for the model (`Fallback`), so a declaration change reaches the verdict, the
message and the fix at once.
"""

import re
from typing import NamedTuple

from attn_preflight.rules.checks.common import backend_kv_dtype, declared, gpu, phases_using
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import (
    Outcome,
    Worded,
    failed,
    generated_rule,
    passed,
    skipped,
    unknown,
    warned,
)
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.sglang.reasons import (
    Query,
    head_dims_text,
    reasons,
    requirement,
    while_declared,
    worded,
    working,
)

# Where a row looks for its backend in the config: every phase (and an alias of it in the target's release),
# --attention-backend or --decode-attention-backend, or any phase and the speculative draft.
PHASE, ATTENTION_OR_DECODE, PHASE_OR_DRAFT = "phase", "attention_or_decode", "phase_or_draft"
# The fact that is the paged-KV page size: SGLang snaps a size it does not take (a warning, never a failure).
PAGE_SIZES = "page_sizes"
UNSET_PAGE = 0  # no --page-size, as a page-size row with unset_page_snapped asks the validator (no backend lists 0)


class Fallback(NamedTuple):
    """The fix: `--attention-backend` with the candidates the declarations admit on the target's GPU for the
    model (`mla` for an MLA model, `mha` otherwise; `for_mla`: `mla`, judged for an MLA model whatever the
    config's), every one (`first`: the first only); `otherwise` where the declarations admit none of them (a
    backend that declares no arch limit). A page-size row's fix is the declared snap instead."""

    mha: tuple[str, ...] = ()
    mla: tuple[str, ...] = ()
    first: bool = False
    for_mla: bool = False
    otherwise: tuple[str, ...] = ()

    def flags(self, cfg: Config, target: Target) -> list[str]:
        mla = bool(cfg.mla) or self.for_mla
        names = working(target.sglang_backends, self.mla if mla else self.mha, Query(target.major, mla=mla))
        return [f"--attention-backend {name}" for name in (names or list(self.otherwise))[: 1 if self.first else None]]


# An MLA backend's fallback: trtllm_mla where its kernels run, fa3 where it serves MLA, else triton (SGLang's own
# MLA default off SM90/SM100).
MLA_FALLBACK = Fallback(mla=("trtllm_mla", "fa3", "triton"), first=True, for_mla=True)


class Gate(NamedTuple):
    id: str
    title: str
    versions: str
    stage: str
    source: str
    docs: str
    fix_title: str
    backend: str
    fact: str  # the validator's fact this rule reports (reasons.Reason.fact)
    fix: Fallback = Fallback()
    named_by: str = PHASE
    within_archs: bool = False  # passes where the backend's arch gate refuses the GPU (its arch rule says so)
    prevents: str = ""
    reason: str = ""
    references: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()  # the engine's applicability (attn_preflight.rules.core.engine.rule)
    needs_gpu: bool = False
    needs_model: bool = False
    majors: tuple[int, ...] = ()  # judged on these compute-capability majors only (a kernel family's limits)
    # a page-size row: no --page-size is snapped too (SGLang's check reads page_size before its default is set)
    unset_page_snapped: bool = False


def _named(row: Gate, cfg: Config, target: Target) -> list[str]:
    """The phases (or flags) that run the row's backend, an alias of it in the target's release included."""
    names = {row.backend} | {n for n, info in target.sglang_backends.items() if info.alias_of == row.backend}
    if row.named_by == ATTENTION_OR_DECODE:
        return [flag for flag in (cfg.attention_backend, cfg.decode_backend) if flag == row.backend]
    phases = [p for p, b in (("prefill", cfg.prefill_backend), ("decode", cfg.decode_backend)) if b in names]
    if row.named_by == PHASE_OR_DRAFT and cfg.draft_attention_backend in names:
        phases.append("draft")
    return phases


def _query(row: Gate, cfg: Config, target: Target) -> Query:
    model = cfg.model
    dims = model.layer_head_dims if model is not None and model.head_dim is not None else ()
    kv = backend_kv_dtype(cfg, target) if row.fact.startswith("kv_dtype_archs") else cfg.kv_cache_dtype
    page = cfg.page_size
    if page is None and row.unset_page_snapped:
        page = UNSET_PAGE
    return Query(target.major, bool(cfg.mla), "", kv, page, dims, frozenset(cfg.features))


def _precondition(row: Gate, cfg: Config) -> str:
    """Why the row's fact does not apply to this config ("" when it does)."""
    kind, _, key = row.fact.partition(":")
    if kind == "mla_archs" and not cfg.mla:
        return "applies to MLA models"
    if kind == "feature_archs" and key != "paged_kv" and key not in cfg.features:
        return f"applies to a model with {key}"
    if kind == "head_dims":
        if cfg.model is None or cfg.model.head_dim is None:
            return "the model's config gives no head_dim"
    return ""


def judge(row: Gate, cfg: Config, target: Target) -> Outcome:
    """The one check of every gate row: skip where the backend does not run or the fact does not apply, unknown
    where the GPU is needed and not known, else what the validator says of the row's fact."""
    info = declared(target, row.backend)
    if not _named(row, cfg, target):
        return skipped(f"applies to the {row.backend} backend")
    if info.alias_of:
        return skipped(f"{row.backend} is an alias of {info.alias_of} in this release (judged as {info.alias_of})")
    if info.removed and row.fact != "removed":
        return skipped(f"{row.backend} is not an --attention-backend choice in this release ({info.removed})")
    if row.majors and target.major not in row.majors:
        return skipped("applies to " + "/".join(f"SM{m}x" for m in row.majors))
    kind, _, key = row.fact.partition(":")
    not_applicable = _precondition(row, cfg)
    if not_applicable:
        return skipped(not_applicable)
    query = _query(row, cfg, target)
    if row.within_archs and target.major is not None and info.archs is not None and target.major not in info.archs:
        return passed(gpu(target), f"{row.backend}'s own archs (its arch rule judges the rest)")
    found = [r for r in reasons(info, query) if r.fact == row.fact]
    given = f"{phases_using(cfg, row.backend)} on {gpu(target)}"
    if not found:
        return passed(given, requirement(info, row.fact, query) or f"{row.backend}'s declared {kind}")
    refusal = found[0]
    if refusal.unknown:
        return unknown("compute capability unknown")
    if kind == PAGE_SIZES:
        asked = "no --page-size" if cfg.page_size is None else f"--page-size {cfg.page_size}"
        return warned(
            f"{asked} on {row.backend}, which SGLang changes to {info.page_snap}",
            refusal.required,
            [f"--page-size {info.page_snap}"],
        )
    asked = _asked(kind, key, cfg)
    return failed(f"{given}: {asked}" if asked else given, refusal.required, row.fix.flags(cfg, target))


def _asked(kind: str, key: str, cfg: Config) -> str:
    """What the config asks that the fact refuses, in words ("" where the GPU in `given` is all it asks)."""
    if kind == "archs":
        return ""
    if kind in ("mla", "mha", "mla_archs"):
        return "an MLA model" if cfg.mla else "a non-MLA model"
    if kind == "kv_dtypes" or kind == "kv_dtype_archs":
        return f"--kv-cache-dtype {cfg.kv_cache_dtype}"
    if kind == "head_dims":
        shapes = cfg.model.layer_head_dims if cfg.model is not None else ()
        return "(head_dim, head_dim_v) = " + " and ".join(f"({hd}, {hv})" for hd, hv in shapes)
    return key or kind


# A declared fact a row's title or docs name, filled in from the declaration when the rule is shown:
# {head_dims:9} the (head_dim, v_head_dim) shapes the backend takes on SM9x, {requires} the validator's wording of
# the row's own fact; {backend.fact} any backend's fact (reasons.worded).
_DECLARED = r"\{(head_dims:\d+|requires)\}"


def words(row: Gate) -> Worded:
    """The row's title and docs with the declared facts they name worded from its backend's declaration as it is
    now (the newest verified release's): read when the rule is shown, never frozen at import."""
    return while_declared(f"gate:{row.id}", lambda: _words(row))


def _words(row: Gate) -> Worded:
    from attn_preflight.rules.engines.sglang.capabilities import declaration

    info = declaration(row.backend)

    def fact(name: str) -> str:
        kind, _, key = name.partition(":")
        if kind == "head_dims":
            return head_dims_text(info.head_dims[int(key)], info.head_dim_multiple)
        return requirement(info, row.fact, Query(None)) or f"{row.backend}'s declared {row.fact}"

    def word(text: str) -> str:
        return worded(re.sub(_DECLARED, lambda match: fact(match.group(1)), text))

    return Worded({"title": row.title, "docs": row.docs, "fix_title": row.fix_title}, word)


def gate_rules(module: str, rows: tuple[Gate, ...]) -> None:
    """Registers each row as the rule of its id, judged by `judge`, reported under `module`'s subject; a row whose
    title or docs name a declared fact is worded from the declaration when shown (attn_preflight.rules.core.engine.Rule.shown)."""
    for row in rows:

        def check(cfg: Config, target: Target, row: Gate = row) -> Outcome:
            return judge(row, cfg, target)

        text = row.title + row.docs + row.fix_title
        if "{" in text:  # a placeholder (_DECLARED, reasons.DECLARED_FACT or DECLARED_BACKENDS) to word when shown
            # worded when shown (explain, rules, a finding's title), never at import: a check pays nothing for it
            generated_rule(module, row, check, engine="sglang", worded=lambda row=row: words(row))
        else:
            generated_rule(module, row, check, engine="sglang")
