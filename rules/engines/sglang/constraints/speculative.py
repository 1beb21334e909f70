"""Flag constraints of SGLang's speculative decoding (rows; the logic rules of the subject, which read the
draft tree SGLang settles on, are attn_preflight.rules.engines.sglang.rules.speculative)."""

from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    BackendFeature,
    Constraint,
    Declares,
    DraftBackend,
    DraftTopk,
    Feature,
    Flag,
    Not,
    PageSize,
    Phases,
    Requirement,
    Since,
    Speculative,
    constraint_rules,
)

SPEC_HOOK = "sglang: python/sglang/srt/arg_groups/speculative_hook.py"
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")

ROWS = (
    Constraint(
        id="spec-flex-attention",
        title="flex_attention does not support speculative decoding",
        versions="sglang>=0.5.3",
        stage="startup",
        prevents="Speculative decoding is currently not supported with Flex Attention backend",
        source="sglang: python/sglang/srt/arg_groups/attention_hook.py, handle_attention_backend_compatibility",
        docs="""Checks that `--speculative-algorithm` is not combined with `--attention-backend flex_attention`.

SGLang's FlexAttention backend has no target-verify or draft-extend path; SGLang asserts against any
speculative algorithm on it at start-up.""",
        fix_title="Use --attention-backend flashinfer or triton, or drop --speculative-algorithm",
        when=Flag("speculative_algorithm"),
        requires=Not(
            All(
                (
                    Flag("attention_backend", ("flex_attention",)),
                    Declares("flex_attention", "refuses", "speculative_decoding"),
                )
            )
        ),
        fix=("--attention-backend triton",),
    ),
    Constraint(
        id="spec-rejection-sampling-deterministic",
        title="Rejection sampling and deterministic inference (sglang 0.5.14-0.5.22)",
        versions="sglang>=0.5.14",
        stage="startup",
        prevents="--speculative-use-rejection-sampling is incompatible with --enable-deterministic-inference; the "
        "sampling kernel draws coins from the global RNG and is not batch-invariant.",
        source=f"{SPEC_HOOK}, _handle_eagle_family",
        docs="""Checks `--speculative-use-rejection-sampling` together with `--enable-deterministic-inference`.

From sglang 0.5.14 to 0.5.22 the rejection-sampling kernel drew its coins from the global RNG, which is not
batch-invariant, and SGLang refused the combination at start-up. sglang 0.5.23 draws draft proposals with a
Triton hash kernel and allows it on CUDA ("Deterministic rejection sampling is currently supported only on
CUDA-compatible devices ..."), so on 0.5.23 the combination passes.""",
        fix_title="Upgrade to sglang 0.5.23, or drop --speculative-use-rejection-sampling",
        when=All((Flag("speculative_use_rejection_sampling"), Flag("deterministic"))),
        # sglang 0.5.23 draws the draft with a batch-invariant Triton hash kernel on CUDA
        requires=Since("0.5.23"),
        fix=("pip install 'sglang>=0.5.23'",),
    ),
    Constraint(
        id="spec-trtllm-mha-topk",
        title="trtllm_mha supports speculative decoding only with top-k 1",
        versions="sglang>=0.5.1",
        backends=("trtllm_mha",),
        stage="startup",
        prevents="trtllm_mha backend only supports topk = 1 for speculative decoding.",
        source=f"{SPEC_HOOK}, _handle_eagle_family",
        docs="""Checks that EAGLE-family speculative decoding (EAGLE, EAGLE3, NEXTN, STANDALONE) on trtllm_mha
(prefill or decode) uses `--speculative-eagle-topk 1`.

The TRT-LLM MHA kernels verify a linear draft chain only, not a draft tree; SGLang refuses top-k > 1 at
start-up. When no top-k is given SGLang chooses one: 4 for Llama (LlamaForCausalLM) and Grok, 1 otherwise.""",
        fix_title="Pass --speculative-eagle-topk 1 (or use fa3 / flashinfer / triton)",
        when=Speculative(EAGLE_FAMILY),
        requires=DraftTopk(1),
        fix=("--speculative-eagle-topk 1",),
    ),
    Constraint(
        id="spec-eagle-topk-needs-steps",
        title="EAGLE: --speculative-eagle-topk / --speculative-num-draft-tokens need --speculative-num-steps",
        versions="sglang>=0.5.0rc2",
        stage="startup",
        prevents="AssertionError (bare `assert cfg.speculative_eagle_topk is None and cfg.speculative_num_draft_tokens "
        "is None`)",
        source=f"{SPEC_HOOK}, _handle_eagle_family (before _auto_choose_speculative_params)",
        docs="""Checks that an EAGLE-family launch (EAGLE, EAGLE3, NEXTN, STANDALONE) that sets `--speculative-eagle-topk`
or `--speculative-num-draft-tokens` also sets `--speculative-num-steps`.

Without num-steps SGLang chooses all three parameters itself and asserts that the other two were left
unset: a bare AssertionError with no message at start-up (the same since 0.5.0rc2). It is judged on
a pasted launch command, where num-steps is visible; `check`'s own flags have no --speculative-num-steps.
(`--speculative-adaptive` also lifts the assert; attn-preflight does not read that flag.)""",
        fix_title="Add --speculative-num-steps 3 --speculative-num-draft-tokens 4 (or drop --speculative-eagle-topk)",
        # check's own flags have no --speculative-num-steps: judged on a pasted launch command only
        when=All(
            (
                Speculative(EAGLE_FAMILY),
                AnyOf((Flag("speculative_eagle_topk"), Flag("speculative_num_draft_tokens"))),
                Not(Flag("origin", ("flags",))),
            )
        ),
        requires=Flag("speculative_num_steps"),
        fix=("--speculative-num-steps 3",),
    ),
    Constraint(
        id="spec-eagle-page-tree",
        title="EAGLE top-k > 1 with page size > 1 needs flashinfer, fa3 or triton",
        versions="sglang>=0.5.2",
        stage="startup",
        prevents="speculative_eagle_topk > 1 with page_size > 1 is only supported on ('flashinfer', 'fa3', 'triton'); "
        "got attention_backend={backend!r}. Use page_size == 1 or one of those backends.",
        source=f"{SPEC_HOOK}, _handle_eagle_family (_PAGE_TREE_SPEC_BACKENDS)",
        docs="""Checks that EAGLE-family speculative decoding with a draft tree (top-k > 1) on a paged KV cache
(page size > 1, after SGLang's own page-size snaps) runs on flashinfer, fa3 or triton.

A draft tree on paged KV needs the two-pass cascade draft decode; only those backends implement it, and
SGLang refuses the rest at start-up. Paged backends force a page size on their own: trtllm_mha,
trtllm_mla, cutedsl_mla and flashmla 64; fa4 on SM100 128 (skipped by SGLang when top-k > 1 is given, but
not for the auto top-k of Llama). History: 0.5.6-0.5.12 allowed flashinfer and fa3 with the message
"... is unstable and produces incorrect results for paged attention backends. This combination is only
supported for the 'flashinfer' backend."; 0.5.5 allowed flashinfer only.""",
        fix_title="Use --page-size 1, --speculative-eagle-topk 1, or --attention-backend flashinfer/fa3/triton",
        when=All((Speculative(EAGLE_FAMILY), Not(DraftTopk(1)))),
        requires=AnyOf((PageSize(1), BackendFeature("spec_page_tree"))),
        fix=("--speculative-eagle-topk 1", "--attention-backend flashinfer"),
    ),
    Constraint(
        id="spec-ngram-page",
        title="NGRAM speculative decoding with page size > 1 needs flashinfer",
        versions="sglang>=0.5.3",
        stage="startup",
        prevents="speculative_eagle_topk({topk}) > 1 with page_size({page_size}) > 1 is unstable and produces incorrect "
        "results for paged attention backends. This combination is only supported for the 'flashinfer' backend.",
        source=f"{SPEC_HOOK}, _handle_ngram",
        docs="""Checks that NGRAM speculative decoding on a paged KV cache (page size > 1, after SGLang's page-size
snaps) runs on flashinfer.

NGRAM sets its draft top-k to `--speculative-ngram-max-bfs-breadth` (default 10), so its draft is a tree;
on paged KV only FlashInfer verifies it correctly, and SGLang refuses the rest at start-up.""",
        fix_title="Use --attention-backend flashinfer, or --page-size 1 with a backend that does not force pages",
        # NGRAM's draft top-k is its max BFS breadth (default 10): a tree unless the breadth is 1
        when=All((Speculative(("NGRAM",)), Not(Flag("speculative_ngram_max_bfs_breadth", (0, 1))))),
        requires=AnyOf((PageSize(1), Flag("attention_backend", ("flashinfer",)))),
        fix=("--attention-backend flashinfer",),
    ),
    Constraint(
        id="spec-flashinfer-mla-topk",
        title="A FlashInfer MLA draft decodes only with EAGLE top-k 1",
        versions="sglang>=0.5.1",
        needs_model=True,
        stage="init",
        prevents="Currently Flashinfer MLA only supports topk=1 for speculative decoding",
        source="sglang: python/sglang/srt/layers/attention/flashinfer_mla_backend.py, "
        "FlashInferMLAMultiStepDraftBackend.__init__; speculative/draft_utils.py, _create_flashinfer_decode_backend",
        docs="""Checks that an MLA model (DeepSeek, Kimi K2, ...) whose EAGLE/MTP draft decodes on flashinfer uses top-k 1.

With more than one draft step SGLang builds FlashInferMLAMultiStepDraftBackend for an MLA draft on
flashinfer, and its constructor raises for top-k > 1 (flashinfer_mla_backend.py:1196-1199 in sglang 0.5.23),
when the draft worker starts. flashinfer is in the paged draft-tree list, so spec-eagle-page-tree passes it.""",
        fix_title="Use --speculative-eagle-topk 1, or a draft attention backend with draft trees (fa3 on SM90, triton)",
        when=All((Speculative(EAGLE_FAMILY), Feature("mla"), DraftBackend(("flashinfer",)))),
        # a single draft step builds no multi-step draft backend
        requires=AnyOf((DraftTopk(1), Flag("speculative_num_steps", (0, 1)))),
        fix=("--speculative-eagle-topk 1",),
    ),
    Constraint(
        id="spec-fa-swa-page-tree",
        title="fa3/fa4 draft trees on a paged KV cache cannot serve sliding-window layers",
        versions="sglang>=0.5.1.post3",
        backends=("fa3", "fa4"),
        stage="runtime",
        prevents="FlashAttention backend doesn't support topk > 1 speculative decoding with page size > 1 sliding "
        "window attention",
        source="sglang: python/sglang/srt/layers/attention/flashattention_backend.py, "
        "FlashAttentionBackend._init_sliding_window_attn_spec_metadata",
        docs="""Checks EAGLE draft trees (top-k > 1) on fa3/fa4 with a paged KV cache (page size > 1) for a model with
sliding-window layers (Gemma 2/3, GPT-OSS, Llama 4's chunked attention, ...).

fa3 is in SGLang's paged draft-tree list, so start-up accepts it (spec-eagle-page-tree), but the FlashAttention
backend's sliding-window target-verify metadata asserts page size 1 (flashattention_backend.py:3417-3419 in
sglang 0.5.23) at the first speculative forward.""",
        fix_title="Use --page-size 1 or --speculative-eagle-topk 1",
        when=All((Speculative(EAGLE_FAMILY), Not(DraftTopk(1)))),
        requires=AnyOf((Not(AnyOf((Feature("sliding_window"), Feature("chunked_local")))), PageSize(1))),
        fix=("--page-size 1", "--speculative-eagle-topk 1"),
    ),
    Constraint(
        id="spec-uno",
        title="UNO speculative decoding needs fa3 for prefill and decode, and no deterministic inference",
        versions="sglang>=0.5.20",
        stage="startup",
        prevents="UNO requires FA3 for both prefill and decode attention; got prefill={prefill_backend!r}, "
        "decode={decode_backend!r}.",
        source=f"{SPEC_HOOK}, _handle_uno",
        docs="""Checks that `--speculative-algorithm UNO` runs fa3 for both prefill and decode (after SGLang's default
backend is applied) and is not combined with `--enable-deterministic-inference`.

UNO drafts with the target model itself (a LoRA on it) and verifies through FA3's paths only; SGLang
refuses any other backend pair at start-up. Its stochastic verification does not use per-request seeds,
so deterministic inference is refused too ("UNO does not support --enable-deterministic-inference because
its sampling path does not use per-request seeds."). fa3 runs on SM90 (and SM8x for MHA models), so UNO
cannot run on Blackwell. UNO's other start-up checks (--uno-lora-path given, no draft model) are about
its own flags, not attention.""",
        fix_title="Use --attention-backend fa3 (SM90) and drop --enable-deterministic-inference",
        when=Speculative(("UNO",)),
        requires=(
            Requirement(Not(Flag("deterministic"))),
            Requirement(Phases(("fa3",)), ("--attention-backend fa3",)),
        ),
        first_only=True,
    ),
)

constraint_rules(__name__, ROWS)
