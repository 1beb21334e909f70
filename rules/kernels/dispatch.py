"""The dispatch model and its one validator (issue 21): which kernel-library entry point an op runs for a config
on a target, per engine release, and whether that entry point has code for the target's GPU.

The data is rules/kernels/dispatch.json, two tables each fact of which names its source:

- `kernels`: per entry point (DeepGEMM's paged MQA logits, TRT-LLM-gen FMHA, FA4's CuTe SM100 forward, ...) the
  library release(s) it is judged at, the compute capabilities it has code for (`archs`, or a floor `min_cc`), the
  message the library raises elsewhere, and where support was added. An entry may name a `declared` family
  ({"library", "family"}) of rules/kernels/declared_<library>.json: for libraries whose binaries cannot say it
  (FlashInfer's JIT modules, flash-attn-4's CuTe DSL, Triton) the archs per release read, each with its source,
  and the library's message; the release is the one the engine pins. An entry may name a `wheel` (library,
  version, module): where attn_preflight.rules.kernels.binaries has that wheel's table, the archs are the
  wheel's (read from its fatbins), not the declared ones.
- `dispatch`: per engine release range, the op, the kernel it runs and the condition (`when`) under which the
  engine dispatches to it: the model (DSA indexer, architecture, quantization and ModelOpt's quant_algo, vision tower, MoE, head dim, the
  checkpoint's dtype and the dtype the engine runs it in), the launch line (`option`: a flag's value, null for absent; `kv_dtype`), the GPU (`min_major`).

Each dispatch row is one generated rule (same id as the row); its check is `judge`, shared by all rows: a row
whose condition holds on a GPU its kernel has no code for fails with the op, the kernel, the library, the archs it
has code for, the upstream message and the row's fixes. A change to either table reaches the verdict, the
message and the fix (tests/test_kernel_dispatch.py).
"""

import functools
import json
from typing import Any, Callable, Mapping, NamedTuple, Optional

from packaging.version import Version

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, failed, generated_rule, passed, skipped, unknown
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.core.versions import release_at_or_before
from attn_preflight.rules.knowledge import NEWEST_KNOWN, data_text

TABLE = "dispatch.json"
PACKAGE = "attn_preflight.rules.kernels"


class Kernel(NamedTuple):
    key: str
    library: str
    entry: str
    message: str
    source: str
    added: str = ""
    archs: tuple[tuple[int, int], ...] = ()
    min_cc: Optional[tuple[int, int]] = None
    wheel: Optional[Mapping[str, str]] = None  # {"library", "version", "module"}: a wheel table, where read
    table: Optional[Mapping[str, str]] = None  # {"file", "library", "family"}: archs per library version
    declared: Optional[Mapping[str, str]] = None  # {"library", "family"}: a declared table (declared_<library>.json)
    models: tuple[str, ...] = ()  # the architectures the kernel serves (empty: any)
    kv_dtypes: tuple[str, ...] = ()  # the KV dtypes it takes (empty: any)
    mla_dims: tuple[tuple[int, int], ...] = ()  # the (kv_lora_rank, qk_rope_head_dim) pairs it takes (empty: any)


class Dispatch(NamedTuple):
    id: str
    engine: str
    versions: str
    op: str
    kernel: Kernel
    when: Mapping[str, Any]
    source: str
    fix: tuple[str, ...]
    title: str
    docs: str
    fix_title: str
    prevents: str
    stage: str
    needs_gpu: bool
    needs_model: bool


def _cc(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def _cc_text(cc: tuple[int, int]) -> str:
    return f"SM{cc[0]}{cc[1]}"


# `when` keys that read the model: a row with one needs a model to be judged
MODEL_KEYS = frozenset(
    {
        "dsa", "architectures", "not_architectures", "quant", "moe", "vision", "min_head_dim", "learnable_sink",
        "checkpoint_dtype", "model_dtype", "mla", "quant_algo", "weight_block",
    }
)  # fmt: skip


WHEN_KEYS = MODEL_KEYS | {
    "unless", "since", "env", "env_not", "kv_dtype", "kv_dtype_prefix", "min_major", "option", "option_any"
}  # fmt: skip


def _when_keys(when: Mapping[str, Any]) -> set[str]:
    keys = set(when)
    if "unless" in when:
        keys |= _when_keys(when["unless"])
    return keys


def load(
    text: Optional[str] = None,
) -> tuple[dict[str, Kernel], tuple[Dispatch, ...], frozenset[str], dict[str, dict[str, str]]]:
    """The two tables (dispatch.json, or `text` in its format): kernels by key, the dispatch rows, the
    architectures with a vision tower, and per engine the Config field or flag key an option is kept under where
    that is not its own name."""
    data = json.loads(text if text is not None else data_text(TABLE, PACKAGE))
    kernels = {
        key: Kernel(
            key=key,
            library=row["library"],
            entry=row["entry"],
            message=row["message"],
            source=row["source"],
            added=row.get("added", ""),
            archs=tuple(_cc(a) for a in row.get("archs", ())),
            min_cc=_cc(row["min_cc"]) if row.get("min_cc") else None,
            wheel=row.get("wheel"),
            table=row.get("table"),
            declared=row.get("declared"),
            models=tuple(row.get("models", ())),
            kv_dtypes=tuple(row.get("kv_dtypes", ())),
            mla_dims=tuple((int(rank), int(rope)) for rank, rope in row.get("mla_dims", ())),
        )
        for key, row in data["kernels"].items()
    }
    rows = []
    for row in data["dispatch"]:
        unknown = _when_keys(row.get("when", {})) - WHEN_KEYS
        if unknown:
            raise ValueError(f"{TABLE} {row['id']}: unknown condition {sorted(unknown)}")
        kernel = kernels[row["kernel"]]
        when = row.get("when", {})
        fix = tuple(row.get("fix", ()))
        rows.append(
            Dispatch(
                id=row["id"],
                engine=row["engine"],
                versions=row["versions"],
                op=row["op"],
                kernel=kernel,
                when=when,
                source=f"{row['source']}; kernel: {kernel.source}",
                fix=fix,
                title=f"{row['op']}: {kernel.entry} has code for this GPU",
                docs=f"""Checks that the kernel the engine dispatches to for this op has code for the target's GPU.

Op: {row["op"]}. Dispatch: {row["source"]}.
Kernel: {kernel.entry} ({kernel.library}); code for {describe_declared(kernel)} ({kernel.source}).
Where it is missing the engine passes its own argument checks and fails one layer down, while the model loads,
at CUDA-graph capture or at the first forward: {kernel.message}
Support added: {kernel.added or "not known"}.""",
                fix_title=fix[0] if fix else "A GPU the kernel has code for",
                prevents=kernel.message,
                stage=row.get("stage", "runtime"),
                needs_gpu=True,
                needs_model=False,  # judge() asks for the model only where the row's other conditions hold
            )
        )
    dests = {engine: dict(table) for engine, table in data.get("option_dests", {}).items() if engine != "_doc"}
    return kernels, tuple(rows), frozenset(data.get("vision_architectures", ())), dests


def describe_declared(kernel: Kernel) -> str:
    if kernel.declared is not None:
        return f"what declared_{kernel.declared['library']}.json says of {kernel.declared['family']}"
    if kernel.min_cc is not None:
        return f"{_cc_text(kernel.min_cc)} and newer"
    return ", ".join(_cc_text(cc) for cc in kernel.archs) or "no GPU"


@functools.cache
def _json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_text(name, PACKAGE))
    return data


def pinned(engine: str, release: Optional[str], library: str) -> tuple[Optional[str], Optional[str]]:
    """(the engine release whose pins stand for `release`, the `library` version it pins): rules/kernels/pins.json,
    read from the release wheels' METADATA by bench/kernel_pins.py; (None, None) when not known."""
    table = _json("pins.json").get(engine, {})
    known = release_at_or_before(sorted(table, key=Version), release)
    if known is None:
        return None, None
    return known, table[known].get(library)


def table_majors(kernel: Kernel, version: str) -> Optional[tuple[int, ...]]:
    """The arch majors `kernel`'s family has code for in one library version (its generated table); None when the
    table has no such version."""
    assert kernel.table is not None
    versions = _json(kernel.table["file"]).get(kernel.table["library"], {})
    row = versions.get(version.lstrip(">="))
    if row is None:
        return None
    return tuple(int(sm[2:]) // 10 for sm in row[kernel.table["family"]])


def first_release_with(kernel: Kernel, engine: str, cc: tuple[int, int], after: str) -> Optional[str]:
    """The oldest engine release after `after` whose pinned library version has code for `cc`: the fix."""
    assert kernel.table is not None
    for release in sorted(_json("pins.json").get(engine, {}), key=Version):
        if Version(release) <= Version(after):
            continue
        version = _json("pins.json")[engine][release].get(kernel.table["library"])
        majors = table_majors(kernel, version) if version else None
        if majors is not None and cc[0] in majors:
            return release
    return None


class Support(NamedTuple):
    ok: Optional[bool]  # None: the table that says it does not cover the library version (never a guess)
    archs: str  # what it has code for, in words
    basis: str  # "declared", "sgl-deep-gemm 0.1.0 pinned by sglang 0.5.12 (its wheel's impls)", "wheel ..."
    added: str = ""  # the engine release that adds it, where a table says so


def declared_table(library: str) -> dict[str, Any]:
    """rules/kernels/declared_<library>.json: what a library without a usable binary reading (JIT, CuTe DSL,
    Triton) has code for, per family and per release read, each fact with its source."""
    return _json(f"declared_{library}.json")


def _declared_archs(release: Mapping[str, Any]) -> tuple[str, Optional[tuple[int, int]], tuple[int, ...]]:
    """(in words, the floor, the majors) of one release row of a declared family."""
    if release.get("min_cc"):
        floor = _cc(release["min_cc"])
        return f"{_cc_text(floor)} and newer", floor, ()
    majors = tuple(release["majors"])
    return ", ".join(f"SM{m}x" for m in majors), None, majors


def _library_version(library: str, engine: str, release: Optional[str]) -> Optional[str]:
    """The version of `library` the engine release pins (rules/kernels/pins.json; vLLM's FlashInfer from
    rules/engines/vllm/flashinfer.py); None when it pins none (Triton comes with torch, fla is not pinned)."""
    if engine == "vllm" and library == "flashinfer-python" and release:
        from attn_preflight.rules.engines.vllm.flashinfer import pinned as vllm_flashinfer

        return vllm_flashinfer(release)
    return pinned(engine, release, library)[1]


def declared_support(declared: Mapping[str, str], cc: tuple[int, int], engine: str, release: Optional[str]) -> Support:
    """Whether a declared family has code for `cc`: the release row that lists the version the engine pins; for a
    version not read (or not pinned) the rows' common answer when every release read agrees, else unknown."""
    library, family = declared["library"], declared["family"]
    rows = declared_table(library)["families"][family]["releases"]
    version = _library_version(library, engine, release)
    exact = [r for r in rows if version and version.lstrip(">=") in r["versions"]]
    answers = {_declared_archs(r) for r in rows}
    if exact:
        words, floor, majors = _declared_archs(exact[0])
        basis = f"{library} {version}, declared_{library}.json {family}"
    elif len(answers) == 1:
        words, floor, majors = next(iter(answers))
        read = ", ".join(v for r in rows for v in r["versions"])
        basis = f"{library} {version or '(not pinned)'}: every release read ({read}) agrees, declared_{library}.json {family}"
    else:
        return Support(None, "", f"{library} {version or '?'}: not among the releases read in declared_{library}.json")
    ok = cc >= floor if floor is not None else cc[0] in majors
    added = ""
    if not ok and exact and version:
        later = [
            v
            for r in rows
            for v in r["versions"]
            if Version(v) > Version(version.lstrip(">=")) and _has(_declared_archs(r), cc)
        ]
        added = f"pip install '{library}>={min(later, key=Version)}'" if later else ""
    return Support(ok, words, basis, added)


def _has(answer: tuple[str, Optional[tuple[int, int]], tuple[int, ...]], cc: tuple[int, int]) -> bool:
    _, floor, majors = answer
    return cc >= floor if floor is not None else cc[0] in majors


def declared_message(kernel: Kernel) -> str:
    """The message the declared table gives for the kernel's family ("" for a kernel without one)."""
    if kernel.declared is None:
        return ""
    family = declared_table(kernel.declared["library"])["families"][kernel.declared["family"]]
    return str(family["message"])


def code_for(kernel: Kernel, cc: tuple[int, int], engine: str = "", release: Optional[str] = None) -> Support:
    """Whether `kernel` has code for `cc` at the engine release: the library version the release pins read from
    its generated table (`table`), else its declared table (`declared`: JIT, CuTe DSL and Triton libraries), else
    the wheel's fatbin table where attn_preflight.rules.kernels.binaries has
    one (`wheel`), else the declaration."""
    if kernel.table is not None:
        known, version = pinned(engine, release, kernel.table["library"])
        majors = table_majors(kernel, version) if (known and version) else None
        if not (known and version and majors is not None):
            return Support(
                None,
                "",
                f"{kernel.table['library']} {version or '?'} ({engine} {release}): not in {kernel.table['file']}",
            )
        if majors is not None:
            added = first_release_with(kernel, engine, cc, known) if cc[0] not in majors else None
            return Support(
                cc[0] in majors,
                ", ".join(f"SM{m}x" for m in majors),
                f"{kernel.table['library']} {version} pinned by {engine} {known}: its wheel's impls",
                f"pip install '{engine}>={added}'" if added else "",
            )
    if kernel.declared is not None:
        return declared_support(kernel.declared, cc, engine, release)
    if kernel.wheel:
        from attn_preflight.rules.kernels import binaries  # the wheel tables load only when a row names one

        support = binaries.module_archs(kernel.wheel["library"], kernel.wheel["version"], kernel.wheel["module"])
        if support is not None:
            return Support(binaries.has_code_for(support, cc), support.describe(), f"wheel {support.source}")
    if kernel.min_cc is not None:
        return Support(cc >= kernel.min_cc, describe_declared(kernel), "declared")
    return Support(cc in kernel.archs, describe_declared(kernel), "declared")


def option_value(cfg: Config, option: str) -> Optional[str]:
    """A launch-line option's value as the config has it: a modelled flag (cfg.flags, or the Config field the
    engine's flag table puts it in, which a corrected command's changes reach too), else the option as written in
    the pasted command; None when absent."""
    for dest in dict.fromkeys((option.lstrip("-").replace("-", "_"), OPTION_DESTS.get(cfg.engine, {}).get(option))):
        if dest is None:
            continue
        if dest in cfg.flags:
            value = cfg.flags[dest]
            return None if value is None else str(value)
        if dest in Config.__dataclass_fields__ and dest not in ("model", "flags", "env"):
            value = getattr(cfg, dest)
            return None if value is None else str(value)
    words = list(cfg.command)
    for index, word in enumerate(words):
        if word == option and index + 1 < len(words):
            return words[index + 1]
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


def _head_dims(cfg: Config) -> list[int]:
    model = cfg.model
    if model is None:
        return []
    dims = [d for pair in model.layer_head_dims for d in pair]
    return dims + [d for d in (model.head_dim, model.v_head_dim) if d]


_DTYPE_NAMES = {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32", "fp32": "float32"}


def checkpoint_dtype(cfg: Config) -> Optional[str]:
    """The dtype config.json declares (torch_dtype / dtype), spelled as torch spells it; None when not declared."""
    declared = cfg.model.dtype if cfg.model else None
    return _DTYPE_NAMES.get(declared, declared) if declared else None


def run_dtype(cfg: Config, target: Target) -> Optional[str]:
    """The dtype the engine runs the model in: --dtype when given, else the checkpoint's (vLLM: bfloat16 falls
    back to float16 below SM80, config/model.py _resolve_auto_dtype, as rules/engines/vllm/select.py reads it)."""
    if cfg.engine == "vllm" and target.cc is not None:
        from attn_preflight.rules.engines.vllm.select import model_dtype  # only for a vLLM row with a GPU

        return model_dtype(cfg, target.cc)
    if cfg.dtype not in (None, "auto"):
        return _DTYPE_NAMES.get(cfg.dtype, cfg.dtype)
    return checkpoint_dtype(cfg)


def applies(
    when: Mapping[str, Any], cfg: Config, target: Target, vision_architectures: frozenset[str], release: str
) -> bool:
    """Whether `when` (a dispatch row's condition) holds for this config on this target at the engine release."""
    model = cfg.model
    for key, want in when.items():
        if key == "unless" and applies(want, cfg, target, vision_architectures, release):
            return False
        if key == "since" and Version(release) < Version(want):
            return False
        if key == "learnable_sink" and bool(model and model.learnable_sink) != want:
            return False
        if key == "dsa" and bool(model and model.dsa) != want:
            return False
        if key == "mla" and bool(model and model.mla) != want:
            return False
        if key == "architectures" and not (model and model.architecture in want):
            return False
        if key == "not_architectures" and model and model.architecture in want:
            return False
        if key == "env_not" and any(cfg.env.get(name) in values for name, values in want.items()):
            return False
        if key == "env" and not all(cfg.env.get(name) in values for name, values in want.items()):
            return False
        if key == "quant":
            quant = {(model.quant_method or "") if model else "", str(cfg.flags.get("quantization") or "")}
            if not quant & set(want):
                return False
        if key == "quant_algo" and (model.quant_algo if model else None) not in want:
            return False
        if key == "weight_block" and bool(model and model.weight_block_size) != want:
            return False
        if key == "moe" and bool(model and model.shape and model.shape.num_experts) != want:
            return False
        if key == "vision":
            has = bool(
                model and ((model.shape and model.shape.vision_tower) or model.architecture in vision_architectures)
            )
            if has != want:
                return False
        if key == "checkpoint_dtype" and checkpoint_dtype(cfg) not in want:
            return False
        if key == "model_dtype" and run_dtype(cfg, target) not in want:
            return False
        if key == "min_head_dim" and not any(d >= want for d in _head_dims(cfg)):
            return False
        if key == "kv_dtype" and cfg.kv_cache_dtype not in want:
            return False
        if key == "kv_dtype_prefix" and not cfg.kv_cache_dtype.startswith(want):
            return False
        if key == "min_major" and not (target.cc and target.cc[0] >= want):
            return False
        if key == "option" and not all(option_value(cfg, o) in allowed for o, allowed in want.items()):
            return False
        if key == "option_any" and not any(option_value(cfg, o) in allowed for o, allowed in want.items()):
            return False
    return True


def model_refusal(kernel: Kernel, cfg: Config) -> str:
    """What the kernel refuses of this config besides the GPU (a model it does not serve, a KV dtype it does not
    take); "" when nothing."""
    if kernel.models and not (cfg.model and cfg.model.architecture in kernel.models):
        return f"serves {', '.join(kernel.models)} only, not {cfg.model.architecture if cfg.model else 'this model'}"
    if kernel.kv_dtypes and cfg.kv_cache_dtype not in kernel.kv_dtypes:
        return f"takes a {'/'.join(kernel.kv_dtypes)} KV cache only, not {cfg.kv_cache_dtype}"
    model = cfg.model
    if kernel.mla_dims and model and model.kv_lora_rank is not None and model.qk_rope_head_dim is not None:
        dims = (model.kv_lora_rank, model.qk_rope_head_dim)
        if dims not in kernel.mla_dims:
            takes = ", ".join(f"{rank}/{rope}" for rank, rope in kernel.mla_dims)
            return f"takes kv_lora_rank/qk_rope_head_dim {takes} only, not {dims[0]}/{dims[1]}"
    return ""


def judge(row: Dispatch, vision_architectures: frozenset[str]) -> Callable[[Config, Target], Outcome]:
    """The check of `row`'s rule: the validator over the dispatch row and its kernel's capabilities."""

    reads_model = bool(MODEL_KEYS & set(row.when))
    launch_only = {key: want for key, want in row.when.items() if key not in MODEL_KEYS and key != "unless"}

    def check(cfg: Config, target: Target) -> Outcome:
        release = target.versions.get(row.engine) or NEWEST_KNOWN[row.engine]
        not_run = skipped(f"this config does not run {row.kernel.entry} for {row.op}")
        if not applies(launch_only, cfg, target, vision_architectures, release):
            return not_run  # the launch line or the GPU rules the path out, whatever the model
        if reads_model and cfg.model is None:
            from attn_preflight.rules.core.judge import needs_missing_model  # the judge imports the rule modules

            return needs_missing_model(cfg) if cfg.model_missing else skipped("needs the model (give --model)")
        if not applies(row.when, cfg, target, vision_architectures, release):
            return not_run
        assert target.cc is not None  # needs_gpu: the engine answers unknown before a check without one
        support = code_for(row.kernel, target.cc, row.engine, release)
        if support.ok is None:
            return unknown(f"{row.kernel.entry}: which GPUs it has code for is not known here ({support.basis})")
        refusal = model_refusal(row.kernel, cfg)
        where = f"{row.kernel.entry}: code for {support.archs} ({support.basis})"
        gpu = f"this GPU is {_cc_text(target.cc)}"
        if support.ok and not refusal:
            return passed(f"{where}; {gpu}")
        found = f"{where}; {gpu}" if not support.ok else f"{where}; it {refusal}"
        fixes = (support.added,) if support.added else ()
        message = declared_message(row.kernel) or row.kernel.message
        return failed(
            found,
            f"a kernel with code for the GPU on the path {row.op} takes (else: {message})",
            fix=fixes + tuple(f for f in row.fix if f not in fixes),
        )

    return check


KERNELS, ROWS, VISION_ARCHITECTURES, OPTION_DESTS = load()
for _row in ROWS:
    generated_rule(__name__, _row, judge(_row, VISION_ARCHITECTURES))
