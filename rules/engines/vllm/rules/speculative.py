"""vLLM speculative decoding (`--speculative-config '{...}'`, or its dotted form `--speculative-config.method mtp`),
judged as SGLang's is (rules/engines/sglang/rules/speculative.py): the method a choice of the release, the draft
tokens and the draft's tensor parallelism, MTP only on a model that ships MTP layers, EAGLE3 only on the target
model types the release allows.

What each release accepts is data, read from its wheel's SpeculativeConfig module by bench/vllm_speculative.py
(rules/engines/vllm/speculative.json: file and line per release). The draft model (`"model"`) is read like
`--model` where it is found here (attn_preflight/commands/check.py); an EAGLE/EAGLE3 draft is a checkpoint of its
own (a small dense Llama-style head: vllm model_executor/models/llama_eagle3.py), never the target's layers.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import replace
from functools import lru_cache
from typing import Any, Optional

from packaging.version import Version

from attn_preflight.rules.checks.common import vllm_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown
from attn_preflight.rules.core.jsontext import loads
from attn_preflight.rules.knowledge import data_text

TABLE = "speculative.json"  # of attn_preflight.rules.engines.vllm (bench/vllm_speculative.py)
SITE = "vllm-project/vllm@v{release}: {file}:{line}"
# methods that bring no draft checkpoint: SpeculativeConfig.__post_init__ fills `model` itself (vllm 0.33.0
# config/speculative.py:1252-1295); MTP reuses the target's own checkpoint (its MTP layers)
# dense model types SpeculativeConfig.hf_config_override never maps to an MTP draft (vllm 0.33.0
# config/speculative.py:711-1170 names none of them) and that ship no MTP layers: "mtp" on them reaches
# __post_init__'s last branch, NotImplementedError "Unsupported speculative method: 'mtp'" (:1497-1501)
NO_MTP_MODEL_TYPES = frozenset(("llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"))
NO_DRAFT = ("ngram", "ngram_gpu", "suffix", "extract_hidden_states", "custom_class", "dspark", "mtp")


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return json.loads(data_text(TABLE, "attn_preflight.rules.engines.vllm"))["releases"]


def _release(target) -> tuple[str, dict[str, Any], str]:
    """The release whose SpeculativeConfig judges the target (the newest at or below its vLLM version), its
    record, and what is said when that is not the target's own."""
    table = _table()
    wanted = vllm_release(target)

    known = sorted(table, key=Version)
    at_or_below = [release for release in known if Version(release) <= wanted]
    release = at_or_below[-1] if at_or_below else known[0]
    said = ""
    if not target.versions.get("vllm"):
        said = " (version unknown: the newest table)"
    elif Version(release) != wanted:
        said = f" (vllm {wanted} read as {release})"
    return release, table[release], said


def _site(release: str, record: dict[str, Any], line: Optional[int]) -> str:
    return SITE.format(release=release, file=record["file"], line=line or "?")


def spec_of(cfg) -> Optional[dict[str, Any]]:
    """The --speculative-config mapping; None when not given; {"": text} when it is not a JSON object."""
    text = cfg.flags.get("speculative_config") if cfg.engine == "vllm" else None
    if not isinstance(text, str) or text in ("", "None"):  # arg_utils.py optional_type: "" and "None" are None
        return None
    try:
        value = loads(text)
    except ValueError:
        return {"": text}
    return value if isinstance(value, dict) else {"": text}


def _method(spec: dict[str, Any], record: dict[str, Any]) -> Optional[str]:
    """The method vLLM runs: MTP model types are rewritten to "mtp" (0.11.0+, config/speculative.py
    __post_init__); None when none is named (vLLM then infers it from the draft model)."""
    method = spec.get("method")
    if not isinstance(method, str):
        return None
    if method in record["mtp_methods"] and "mtp" in record["methods"]:
        return "mtp"
    return method


def _fix(spec: dict[str, Any], **changes: Any) -> str:
    changed = {key: value for key, value in {**spec, **changes}.items() if value is not None}
    return "--speculative-config '" + json.dumps(changed, separators=(",", ":")) + "'"


@rule(
    id="vllm-spec-method",
    title="vLLM: the speculative method is one the release's SpeculativeConfig accepts",
    engine="vllm",
    versions="vllm>=0.10.0",
    stage="startup",
    prevents="1 validation error for SpeculativeConfig method Input should be 'ngram', 'medusa', "
    "'mlp_speculator', 'draft_model', 'suffix', 'eagle', 'eagle3', ... [type=literal_error]; argument "
    "--speculative-config/-sc: Value {val} cannot be converted to <function loads ...>.",
    source="vllm: vllm/config/speculative.py SpeculativeMethod (a Literal the pydantic dataclass validates; "
    "rules/engines/vllm/speculative.json, bench/vllm_speculative.py, each release's line); vllm 0.33.0 "
    "engine/arg_utils.py:161-178 parse_type/optional_type(json.loads), :1864",
    docs="""Checks the `method` of `--speculative-config` against the names the release's SpeculativeConfig
accepts (its `SpeculativeMethod` Literal, validated by pydantic when the engine config is built, before any
model loads).

The list changes: "mtp" came in 0.11.0 (before it, "deepseek_mtp"), "suffix" in 0.11.1, "extract_hidden_states"
in 0.17.0, "ngram_gpu" in 0.18.0, "dflash" in 0.20.0, "custom_class" in 0.22.0, "dspark" in 0.25.0; "medusa"
and "mlp_speculator" are gone in 0.33.0. Model-specific MTP names (deepseek_mtp, qwen3_next_mtp, ernie_mtp, ...)
are rewritten to "mtp" with a deprecation warning. Without a method vLLM infers it from the draft model's
config ("eagle-" / "eagle3" in its name, an MTP model type, else a plain draft model); that is unknown when the
draft is not read here. A --speculative-config that is not a JSON object is refused by the argument parser.""",
    fix_title="Name a method that release accepts (the nearest is offered), or pin a release that has it",
)
def vllm_spec_method(cfg, target):
    spec = spec_of(cfg)
    if spec is None:
        return skipped("no --speculative-config")
    if "" in spec:
        return failed(f"--speculative-config {spec['']!r} is not a JSON object", "a JSON object: '{\"method\": ...}'")
    release, record, said = _release(target)
    required = f"a method vllm {release} accepts{said}"
    method = spec.get("method")
    if method is None:
        model = spec.get("model")
        if cfg.draft_model is not None:
            return passed(f"no method: vLLM infers it from the draft {cfg.draft_model.name}", required)
        if model is None:
            return failed(
                "--speculative-config names neither a method nor a draft model",
                required,
                [_fix(spec, method="ngram")],
            )
        return unknown(f"no method: vLLM infers it from the draft model {model}, which is not read here")
    if method in record["methods"]:
        return passed(f"method {method}", required)
    closest = difflib.get_close_matches(str(method), record["methods"], n=2, cutoff=0.6)
    fixes = [_fix(spec, method=choice) for choice in closest]
    having = [other for other, entry in _table().items() if method in entry["methods"]]
    if having:
        fixes.append(f"--engine-version vllm=={having[-1]} (a release that accepts {method})")
    return failed(
        f"method {method!r} is not one vllm {release} accepts ({_site(release, record, record['methods_line'])})",
        required,
        fixes,
    )


@rule(
    id="vllm-spec-tokens",
    title="vLLM: num_speculative_tokens is positive, and given where no draft config supplies it",
    engine="vllm",
    versions="vllm>=0.10.0",
    stage="startup",
    prevents="num_speculative_tokens was provided but without speculative model.; num_speculative_tokens must be "
    "provided with speculative model unless the draft model config contains an n_predict parameter.; "
    "Input should be greater than 0 [type=greater_than]",
    source="vllm: vllm/config/speculative.py SpeculativeConfig.__post_init__ and _verify_args; num_speculative_"
    "tokens: int = Field(default=None, gt=0) from 0.11.1 (rules/engines/vllm/speculative.json)",
    docs="""Checks `num_speculative_tokens` of `--speculative-config`: a positive integer, given with a method that
needs a draft checkpoint only together with its `model`, and given at all unless the draft's config supplies it.

vLLM validates it when it builds the engine config, before any weight loads: pydantic's gt=0 from 0.11.1
(_verify_args' "Expected num_speculative_tokens to be greater than zero" before); from 0.11.1 "num_speculative_
tokens was provided but without speculative model." for eagle / eagle3 / draft_model / dflash without a `model`;
and "num_speculative_tokens must be provided ..." unless the draft model's config carries `n_predict` (MTP
layers, Medusa/MLP speculators), which is unknown when the draft is not read here.""",
    fix_title="Give num_speculative_tokens (a positive integer) and, for EAGLE / draft-model methods, the draft model",
)
def vllm_spec_tokens(cfg, target):
    spec = spec_of(cfg)
    if spec is None or "" in spec:
        return skipped("no readable --speculative-config")
    release, record, said = _release(target)
    method = _method(spec, record)
    tokens = spec.get("num_speculative_tokens")
    required = "a positive num_speculative_tokens, with the draft model where the method needs one"
    if tokens is not None:
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
            return failed(f"num_speculative_tokens {tokens!r}", required, [_fix(spec, num_speculative_tokens=1)])
        needs_draft = method not in NO_DRAFT and not (method or "").endswith("_mtp")
        if spec.get("model") is None and needs_draft and method is not None:
            line = record["messages"]["tokens_without_model"]
            if line is None:
                return unknown(f"{method} without a draft model on vllm {release}: not read in that release")
            return failed(
                f"num_speculative_tokens {tokens} with method {method} and no draft model "
                f"({_site(release, record, line)})",
                required,
            )
        return passed(f"num_speculative_tokens {tokens}{said}", required)
    if spec.get("model") is None:
        return failed(
            "no num_speculative_tokens and no draft model to take n_predict from "
            f"({_site(release, record, record['messages']['tokens_missing'])})",
            required,
            [_fix(spec, num_speculative_tokens=1)],
        )
    if cfg.draft_model is None:
        return unknown(f"no num_speculative_tokens: taken from the draft {spec['model']}'s n_predict, not read here")
    return unknown(f"no num_speculative_tokens: taken from the draft {cfg.draft_model.name}'s n_predict if it has one")


@rule(
    id="vllm-spec-draft-tp",
    title="vLLM: the draft's tensor parallelism is 1 or the target's",
    engine="vllm",
    versions="vllm>=0.10.0",
    stage="startup",
    prevents="speculative_draft_tensor_parallel_size=2 cannot be other value than 1 or target model "
    "tensor_parallel_size; 'tensor_parallel_size' is not a valid argument in the speculative_config. Please pass "
    "'draft_tensor_parallel_size' instead.",
    source="vllm: vllm/config/speculative.py SpeculativeConfig._verify_and_get_draft_tp; _verify_args (0.15.0+) "
    "(rules/engines/vllm/speculative.json)",
    docs="""Checks `draft_tensor_parallel_size` of `--speculative-config` for a method with a draft model: 1 or
the target's `--tensor-parallel-size`; and, from vllm 0.15.0, no `tensor_parallel_size` key.

SpeculativeConfig._verify_and_get_draft_tp refuses any other draft TP when the engine config is built (unset,
the draft takes the target's), and from 0.15.0 _verify_args refuses a `tensor_parallel_size` key with a pointer
to `draft_tensor_parallel_size`.""",
    fix_title="Set draft_tensor_parallel_size to 1 or the target's tensor-parallel size",
)
def vllm_spec_draft_tp(cfg, target):
    spec = spec_of(cfg)
    if spec is None or "" in spec:
        return skipped("no readable --speculative-config")
    release, record, said = _release(target)
    required = f"draft_tensor_parallel_size 1 or {cfg.tp_size} (the target's)"
    if "tensor_parallel_size" in spec and record["messages"]["tp_key"] is not None:
        value = spec["tensor_parallel_size"]
        return failed(
            f"tensor_parallel_size in --speculative-config ({_site(release, record, record['messages']['tp_key'])})",
            required,
            [_fix({k: v for k, v in spec.items() if k != "tensor_parallel_size"}, draft_tensor_parallel_size=value)],
        )
    draft_tp = spec.get("draft_tensor_parallel_size")
    if draft_tp is None:
        return passed(f"the draft takes the target's tensor-parallel size {cfg.tp_size}", required)
    if _method(spec, record) in ("ngram", "ngram_gpu", "suffix", "extract_hidden_states", "custom_class"):
        return skipped(f"method {spec.get('method')} has no draft model")
    if isinstance(draft_tp, int) and not isinstance(draft_tp, bool) and draft_tp in (1, cfg.tp_size):
        return passed(f"draft_tensor_parallel_size {draft_tp}{said}", required)
    return failed(
        f"draft_tensor_parallel_size {draft_tp!r} with --tensor-parallel-size {cfg.tp_size} "
        f"({_site(release, record, record['messages']['draft_tp'])})",
        required,
        [_fix(spec, draft_tensor_parallel_size=1)],
    )


@rule(
    id="vllm-spec-mtp-layers",
    title="vLLM: MTP speculative decoding needs a model that ships MTP layers",
    engine="vllm",
    versions="vllm>=0.10.0",
    needs_model=True,
    stage="load",
    prevents="Unsupported speculative method: 'mtp'",
    source="vllm: vllm/config/speculative.py SpeculativeConfig.hf_config_override (num_nextn_predict_layers -> "
    "n_predict) and __post_init__ (0.33.0 :1470-1500)",
    docs="""Checks that `"method": "mtp"` (or a model-specific `*_mtp` name) without a separate draft `model` is
given a target model whose config.json declares MTP / NextN layers (`num_nextn_predict_layers`, or
`mtp_num_hidden_layers`).

vLLM builds the draft from the target checkpoint's own MTP layers, mapping its model
type to the MTP one (deepseek_v3 -> deepseek_mtp, qwen3_next -> qwen3_next_mtp, ...). A dense model type that no
mapping names and that declares no MTP layers (llama, mistral, qwen2, qwen3, gemma2/3, phi3) fails at start-up
with "Unsupported speculative method: 'mtp'"; any other model declaring none is unknown (the mapping covers
model types this rule does not model). When the model is not read here (a hub id not in the cache), or `--hf-overrides` may add
the layers, the answer is unknown.""",
    fix_title="Use a checkpoint with MTP layers, or another method (eagle3 with a draft head, ngram)",
)
def vllm_spec_mtp_layers(cfg, target):
    spec = spec_of(cfg)
    if spec is None or "" in spec:
        return skipped("no readable --speculative-config")
    release, record, _ = _release(target)
    method = spec.get("method")
    if not isinstance(method, str) or not (method == "mtp" or method.endswith("_mtp")):
        return skipped("applies to MTP speculative decoding")
    if spec.get("model") is not None:
        return skipped("MTP from a separate draft checkpoint")
    required = "a model whose config.json declares MTP layers (num_nextn_predict_layers >= 1)"
    declared = cfg.model.num_nextn_predict_layers
    shape_layers = cfg.model.shape.mtp_layers if cfg.model.shape is not None else 0
    if (declared or 0) >= 1 or shape_layers >= 1:
        return passed(f"{cfg.model.name}: {max(declared or 0, shape_layers)} MTP layer(s)", required)
    if "hf_overrides" in cfg.flags or any(option.startswith("--hf-overrides") for option in cfg.options):
        return unknown("--hf-overrides may declare the MTP layers")
    if cfg.model.model_type in NO_MTP_MODEL_TYPES:
        return failed(
            f"{cfg.model.name} (model_type {cfg.model.model_type}) declares no MTP layers",
            required,
            [_fix({}, method="ngram", num_speculative_tokens=spec.get("num_speculative_tokens") or 3)],
        )
    return unknown(f"{cfg.model.name}'s config.json does not say how many MTP layers it ships")


@rule(
    id="vllm-spec-eagle3-target",
    title="vLLM before 0.22: EAGLE3 only on the target model types the release lists",
    engine="vllm",
    versions="vllm>=0.10.0,<0.22.0",
    needs_model=True,
    stage="startup",
    prevents="Eagle3 is only supported for ['llama', 'qwen', 'minicpm', 'gpt_oss'] models. Got "
    "self.target_model_config.hf_text_config.model_type='deepseek_v3'; eagle3 is only supported for [...] models.",
    source="vllm: vllm/config/speculative.py SpeculativeConfig._verify_args, eagle3_target_supported / "
    "aux_hidden_states_supported (rules/engines/vllm/speculative.json: the list and its line per release)",
    docs="""Checks, on vllm 0.10.0-0.21.0, that EAGLE3 (and from 0.17.0 extract_hidden_states, from 0.20.0 dflash)
is given a target whose model_type contains one of the names the release lists.

SpeculativeConfig._verify_args refuses any other target when the engine config is built (0.10.0: llama only;
0.11.0 adds minicpm and gpt_oss; 0.21.0 also deepseek_v2/v3, kimi_k2, minimax_m2, gemma4, ...). vLLM 0.22.0
dropped the list, so the rule stops there.""",
    fix_title="Upgrade vLLM to a release that lists the model type (or that has no list), or use another method",
)
def vllm_spec_eagle3_target(cfg, target):
    spec = spec_of(cfg)
    if spec is None or "" in spec:
        return skipped("no readable --speculative-config")
    release, record, said = _release(target)
    limit = record["eagle3_targets"]
    method = _method(spec, record)
    if limit is None or method not in limit["methods"]:
        return skipped(f"applies to {', '.join(limit['methods']) if limit else 'eagle3'} on vllm < 0.22.0")
    model_type = cfg.model.model_type
    required = f"a model_type containing one of {limit['model_types']}{said}"
    if not model_type:
        return unknown(f"{cfg.model.name}'s model_type is not known")
    if any(name in model_type for name in limit["model_types"]):
        return passed(f"{method} on model_type {model_type}", required)
    return failed(
        f"{method} on model_type {model_type!r} ({_site(release, record, limit['line'])})",
        required,
        ["pip install 'vllm>=0.22.0'"],
    )


# From vllm 0.21.0 the draft picks its own attention backend: "Never inherit the attention backend from base ...
# we always independently autoselect unless explicitly specified in the speculative config"
# (v1/spec_decode/llm_base_proposer.py _create_draft_vllm_config, 0.33.0 :1281-1290); before, the proposer built
# the draft with the target's vllm_config (0.20.0 :1274-1287), its --attention-backend included.
OWN_DRAFT_BACKEND_FROM = Version("0.21.0")
DRAFT_PROPOSER = "vllm: vllm/v1/spec_decode/llm_base_proposer.py, _create_draft_vllm_config"
# what a draft re-judged with its own model and backend can fail that is about that backend; the memory, parallel,
# install and flag rules judge the launch, not the draft
_NOT_THE_DRAFTS = ("vllm-memory", "vllm-tp", "vllm-dcp", "vllm-spec", "vllm-quantization", "general-", "install-",
                   "parallel-", "kernel-", "memory-")  # fmt: skip


def _failing(cfg, target) -> dict[str, str]:
    """rule id -> message of every failure `cfg` meets on `target` (judged as resolved)."""
    from attn_preflight.rules.core.engine import Status
    from attn_preflight.rules.core.judge import Judge
    from attn_preflight.rules.engines.sglang.resolve import resolve

    judge = Judge(target)
    return {f.rule_id: f.outcome.found for f in judge.findings(resolve(cfg, judge.target)) if f.status is Status.FAIL}


@rule(
    id="vllm-spec-draft-backend",
    title="vLLM: the draft model's attention backend serves the draft",
    engine="vllm",
    versions="vllm>=0.10.0",
    stage="load",
    reason="The draft (an EAGLE/EAGLE3 head, a small draft model) builds its own attention layers: a backend that "
    "cannot serve them fails when the draft loads, after the target's weights.",
    prevents="1 validation error for SpeculativeConfig attention_backend Unexpected keyword argument "
    "[type=unexpected_keyword_argument] (before 0.21.0)",
    source=f"{DRAFT_PROPOSER} (0.21.0+: the draft selects its own backend unless --speculative-config names "
    "attention_backend; before, the target's); vllm/config/utils.py config (extra='forbid')",
    docs="""Checks the attention backend vLLM's draft runs on, where one is named: `attention_backend` in
`--speculative-config` (vllm 0.21.0+), or before 0.21.0 the target's `--attention-backend` /
VLLM_ATTENTION_BACKEND, which the draft inherited.

The draft is judged again as a model of its own: its config.json (the `model` of --speculative-config, read like
--model where it is found here) with that backend, and every failure of a backend rule the target's own config
does not have is reported here. A draft that is not read here is unknown: an EAGLE / EAGLE3 head is a small dense
Llama-style model, never the target's layers, so the target's model does not stand in for it. With no backend
named for it, vLLM 0.21.0+ selects one for the draft's own layers (nothing to judge). MTP drafts are the target's
own layers. Before 0.21.0 an `attention_backend` key is refused (SpeculativeConfig forbids extra fields).""",
    fix_title="Name a backend that serves the draft in --speculative-config's attention_backend (or leave it to vLLM)",
)
def vllm_spec_draft_backend(cfg, target):
    spec = spec_of(cfg)
    if spec is None or "" in spec:
        return skipped("no readable --speculative-config")
    release, record, said = _release(target)
    named = spec.get("attention_backend")
    own = Version(release) >= OWN_DRAFT_BACKEND_FROM
    required = "a backend that serves the draft model"
    if named is not None and not own:
        return failed(
            f"attention_backend in --speculative-config on vllm {release}{said}",
            "no attention_backend key before vllm 0.21.0",
            [_fix({k: v for k, v in spec.items() if k != "attention_backend"})],
        )
    method = _method(spec, record)
    model = spec.get("model")
    if not isinstance(model, str) or method in NO_DRAFT:
        return skipped("no separate draft model (MTP layers, n-gram, suffix: nothing of its own to attend)")
    backend = named if own else (cfg.attention_backend or cfg.env.get("VLLM_ATTENTION_BACKEND"))
    if not backend:
        return skipped("no backend named for the draft: vLLM selects one for its layers")
    if not isinstance(backend, str):
        return failed(f"attention_backend {backend!r}", required)
    if cfg.draft_model is None:
        return unknown(
            f"draft {model} on {backend}: its config.json is not read here (an EAGLE head is a dense model of "
            "its own, never the target's layers)"
        )
    base = replace(cfg, flags={k: v for k, v in cfg.flags.items() if k != "speculative_config"}, draft_model=None)
    # the draft's own config.json: the target's --feature mla (if any) is not the draft's
    drafted = replace(
        base,
        model=cfg.draft_model,
        attention_backend=backend,
        model_missing="",
        extra_features=cfg.extra_features - {"mla"},
    )
    target_fails = _failing(base, target)
    draft_fails = {
        rule_id: message
        for rule_id, message in _failing(drafted, target).items()
        if rule_id not in target_fails and not rule_id.startswith(_NOT_THE_DRAFTS)
    }
    judged = f"draft {cfg.draft_model.name} on {backend}{said}"
    if not draft_fails:
        return passed(judged, required)
    fixes = [] if not own else [_fix({k: v for k, v in spec.items() if k != "attention_backend"})]
    return failed(
        f"{judged}: " + "; ".join(f"{rule_id}: {message}" for rule_id, message in draft_fails.items()),
        required,
        fixes,
    )
