"""Config: the normalised serving config the rules judge, and its parsers.

Two ways in, one result:
- `make_config(**values)`: from flag values (the `check` options use SGLang's own flag names);
- `parse_command(argv)`: a pasted launch command (`python -m sglang.launch_server …`, `sglang serve …`,
  `vllm serve MODEL …`, with `KEY=VALUE` environment prefixes). The command is tokenised with shlex and
  read, never run. Flags that do not bear on attention are collected in `ignored`.
`make_config` validates every name (backend, KV dtype, feature, model) and raises RulesInputError.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional, Sequence

from rules.errors import RulesInputError
from rules.knowledge import backends as backend_kb
from rules.knowledge import vllm_backends
from rules.knowledge.kv_dtypes import KV_DTYPES
from rules.models import FEATURES, ModelFeatures

ENGINES = ("sglang", "vllm")

# vLLM's --kv-cache-dtype choices (vllm/config/cache.py CacheDType).
VLLM_KV_DTYPES = vllm_backends.KV_CACHE_DTYPES

# Environment variables that bear on attention; others in a pasted command are ignored.
_ENV_PREFIXES = (
    "SGLANG_",
    "VLLM_",
    "FLASHINFER_",
    "FLASH_ATTENTION",
    "CUTE_DSL_",
    "TORCH_CUDA_ARCH_LIST",
    "CUDA_HOME",
    "TRITON_",
)


@dataclass(frozen=True)
class Config:
    engine: str = "sglang"
    attention_backend: Optional[str] = None
    prefill_attention_backend: Optional[str] = None
    decode_attention_backend: Optional[str] = None
    mm_attention_backend: Optional[str] = None
    draft_attention_backend: Optional[str] = None
    kv_cache_dtype: str = "auto"
    page_size: Optional[int] = None  # None: not given (the engine's default or a backend's forced size)
    deterministic: bool = False
    speculative_algorithm: Optional[str] = None
    speculative_eagle_topk: Optional[int] = None
    tp_size: int = 1
    pp_size: int = 1
    # SGLang --mem-fraction-static / vLLM --gpu-memory-utilization; None: the engine's default
    mem_fraction: Optional[float] = None
    context_length: Optional[int] = None  # SGLang --context-length / vLLM --max-model-len; None: the model's
    dtype: str = "auto"
    model: Optional[ModelFeatures] = None
    model_missing: str = ""  # a model given (hub id) whose config.json was found nowhere
    model_looked_in: str = ""  # where it was looked for (the Hugging Face cache directories)
    extra_features: frozenset[str] = frozenset()  # --feature
    env: Mapping[str, str] = field(default_factory=dict)
    flags: Mapping[str, Any] = field(default_factory=dict)  # other attention-relevant flags, by SGLang dest name
    ignored: tuple[str, ...] = ()
    origin: str = "flags"  # "flags" or the kind of pasted command
    command: tuple[str, ...] = ()  # the pasted command as split (secrets redacted), for the corrected command
    auto_backend: str = ""  # why, when the backend was not given and the engine's default was applied
    rewrites: Mapping[str, str] = field(default_factory=dict)  # field -> the value the engine silently replaced

    # Derived (init=False): computed once so that rules only read attributes.
    features: frozenset[str] = field(init=False, default=frozenset())
    prefill_backend: Optional[str] = field(init=False, default=None)
    decode_backend: Optional[str] = field(init=False, default=None)
    backends: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        features = self.extra_features | (self.model.features if self.model else frozenset())
        prefill = self.prefill_attention_backend or self.attention_backend
        decode = self.decode_attention_backend or self.attention_backend
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "prefill_backend", prefill)
        object.__setattr__(self, "decode_backend", decode)
        object.__setattr__(self, "backends", frozenset(b for b in (prefill, decode) if b))

    @property
    def mla(self) -> bool:
        return "mla" in self.features

    @property
    def backend_given(self) -> bool:
        return bool(self.attention_backend or self.prefill_attention_backend or self.decode_attention_backend)

    def uses(self, backend: str) -> bool:
        return backend in self.backends

    def with_backend(self, backend: Optional[str], auto_reason: str = "") -> Config:
        return replace(
            self,
            attention_backend=backend,
            prefill_attention_backend=None,
            decode_attention_backend=None,
            auto_backend=auto_reason,
        )

    def with_kv_dtype(self, kv_cache_dtype: str) -> Config:
        return replace(self, kv_cache_dtype=kv_cache_dtype)

    def backend_label(self) -> str:
        if self.prefill_backend == self.decode_backend:
            return self.prefill_backend or "(engine default)"
        return f"prefill {self.prefill_backend}, decode {self.decode_backend}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "attention_backend": self.attention_backend,
            "prefill_attention_backend": self.prefill_backend,
            "decode_attention_backend": self.decode_backend,
            "backend_auto_selected": self.auto_backend or None,
            "rewritten_by_engine": dict(self.rewrites) or None,
            "mm_attention_backend": self.mm_attention_backend,
            "speculative_draft_attention_backend": self.draft_attention_backend,
            "kv_cache_dtype": self.kv_cache_dtype,
            "page_size": self.page_size,
            "enable_deterministic_inference": self.deterministic,
            "speculative_algorithm": self.speculative_algorithm,
            "speculative_eagle_topk": self.speculative_eagle_topk,
            "tp_size": self.tp_size,
            "pp_size": self.pp_size,
            "mem_fraction": self.mem_fraction,
            "context_length": self.context_length,
            "dtype": self.dtype,
            "model": self.model.to_dict() if self.model else None,
            "model_missing": self.model_missing or None,
            "model_looked_in": self.model_looked_in or None,
            "features": sorted(self.features),
            "env": dict(sorted(self.env.items())),
            "flags": dict(sorted(self.flags.items())),
            "ignored": list(self.ignored),
            "origin": self.origin,
        }


# --- validation -------------------------------------------------------------------------------------------


def kv_dtype_choices(engine: str) -> Sequence[str]:
    return tuple(KV_DTYPES) if engine == "sglang" else VLLM_KV_DTYPES


def _backend(engine: str, value: Optional[str], flag: str) -> Optional[str]:
    if value is None or (engine == "vllm" and value.lower() == vllm_backends.AUTO):
        return None  # vLLM: "auto" means no choice (AttentionConfig.validate_backend_before)
    name = backend_kb.canonical(engine, value)
    if name is None:
        raise RulesInputError(
            f"{flag}: unknown {engine} attention backend {value!r}", choices=backend_kb.choices(engine), word=value
        )
    return name


# Spellings other engines and papers use for SGLang's KV dtypes ("fp8" is vLLM's name for fp8_e4m3).
_KV_DTYPE_MEANT = {"fp8": "fp8_e4m3", "float8": "fp8_e4m3", "e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2", "fp4": "fp4_e2m1"}


def make_config(
    engine: str = "sglang", model: Optional[ModelFeatures] = None, features: Iterable[str] = (), **values: Any
) -> Config:
    """A validated Config from flag values; `model` as the face read it (attn_preflight.inputs.load_model)."""
    if engine not in ENGINES:
        raise RulesInputError(f"unknown engine {engine!r}", choices=ENGINES, word=engine)
    for key, flag in (
        ("attention_backend", "--attention-backend"),
        ("prefill_attention_backend", "--prefill-attention-backend"),
        ("decode_attention_backend", "--decode-attention-backend"),
        ("draft_attention_backend", "--speculative-draft-attention-backend"),
    ):
        values[key] = _backend(engine, values.get(key), flag)
    mm = values.get("mm_attention_backend")
    if mm is not None and mm not in backend_kb.MM_ATTENTION_BACKENDS:
        raise RulesInputError(
            f"--mm-attention-backend: unknown vision attention backend {mm!r}",
            choices=backend_kb.MM_ATTENTION_BACKENDS,
            word=mm,
        )
    kv = values.get("kv_cache_dtype") or "auto"
    if kv not in kv_dtype_choices(engine):
        meant = _KV_DTYPE_MEANT.get(kv.lower())
        if meant in kv_dtype_choices(engine):  # what people type for SGLang's spelling, not the closest string
            raise RulesInputError(f"--kv-cache-dtype: unknown {engine} KV-cache dtype {kv!r} (did you mean {meant!r}?)")
        raise RulesInputError(
            f"--kv-cache-dtype: unknown {engine} KV-cache dtype {kv!r}", choices=kv_dtype_choices(engine), word=kv
        )
    values["kv_cache_dtype"] = kv
    wanted: set[str] = set()
    for feature in features:
        name = feature.strip().lower().replace("-", "_")
        if name not in FEATURES:
            raise RulesInputError(f"--feature: unknown feature {feature!r}", choices=FEATURES, word=feature)
        wanted.add(name)
    for key in ("page_size", "speculative_eagle_topk", "tp_size", "pp_size", "context_length"):
        value = values.get(key)
        if value is not None and (not isinstance(value, int) or value < (1 if key != "speculative_eagle_topk" else 0)):
            raise RulesInputError(f"--{key.replace('_', '-')}: expected a positive integer, got {value!r}")
    fraction = values.get("mem_fraction")
    if fraction is not None and (
        isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1
    ):
        raise RulesInputError(f"memory fraction: expected a number in (0, 1], got {fraction!r}")
    values = {k: v for k, v in values.items() if v is not None}
    return Config(engine=engine, model=model, extra_features=frozenset(wanted), **values)


# --- pasted launch commands --------------------------------------------------------------------------------

# flag -> (Config field or flags key, type). Types: "str", "int", "float", "bool". SGLang spellings and aliases
# (sglang 0.5.23 python/sglang/srt/arg_groups/fields/*.py).
_COMMON_SGLANG = {
    "--attention-backend": ("attention_backend", "str"),
    "--backend": ("attention_backend", "str"),
    "--prefill-attention-backend": ("prefill_attention_backend", "str"),
    "--decode-attention-backend": ("decode_attention_backend", "str"),
    "--mm-attention-backend": ("mm_attention_backend", "str"),
    "--speculative-draft-attention-backend": ("draft_attention_backend", "str"),
    "--kv-cache-dtype": ("kv_cache_dtype", "str"),
    "--page-size": ("page_size", "int"),
    "--enable-deterministic-inference": ("deterministic", "bool"),
    "--deterministic": ("deterministic", "bool"),
    "--speculative-algorithm": ("speculative_algorithm", "str"),
    "--speculative-eagle-topk": ("speculative_eagle_topk", "int"),
    "--tp-size": ("tp_size", "int"),
    "--tp": ("tp_size", "int"),
    "--tensor-parallel-size": ("tp_size", "int"),
    "--pp-size": ("pp_size", "int"),
    "--pipeline-parallel-size": ("pp_size", "int"),
    "--mem-fraction-static": ("mem_fraction", "float"),
    "--context-length": ("context_length", "int"),
    "--dtype": ("dtype", "str"),
    "--model-path": ("model", "str"),
    "--model": ("model", "str"),
}
# Flags kept in Config.flags (dest name) because some rule reads them.
_SGLANG_FLAGS = {
    "--disable-radix-cache": "bool",
    "--enable-hierarchical-cache": "bool",
    "--enable-mis": "bool",
    "--prefill-only-disable-kv-cache": "bool",
    "--speculative-use-rejection-sampling": "bool",
    "--enable-prefill-context-parallel": "bool",
    "--attn-cp-size": "int",
    "--dcp-size": "int",
    "--enable-unified-memory": "bool",
    "--enable-page-major-kv-layout": "bool",
    "--disable-cuda-graph": "bool",
    "--dsa-prefill-backend": "str",
    "--dsa-decode-backend": "str",
    "--speculative-num-steps": "int",
    "--speculative-num-draft-tokens": "int",
    "--speculative-draft-model-path": "str",
    "--speculative-draft-kv-cache-dtype": "str",
    "--quantization": "str",
    "--mamba-ssm-dtype": "str",
    "--linear-attn-prefill-backend": "str",
    "--linear-attn-decode-backend": "str",
    "--linear-attn-verify-backend": "str",
    "--hicache-io-backend": "str",
    "--enable-multimodal": "bool",
    "--prefill-kv-cache-dequant-dtype": "str",
    "--enable-dp-attention": "bool",
    "--dp-size": "int",
}
# Other spellings SGLang accepts for the flags above: --data-parallel-size (arg_groups field aliases, as
# test_server_args' test_aliases_and_dest lists them) and --dp (SGLang's docs launch DeepSeek-V3.2 with
# `--tp 8 --dp 8 --enable-dp-attention`).
_SGLANG_ALIASES = {"--data-parallel-size": "--dp-size", "--dp": "--dp-size"}
SGLANG_FLAGS = {**_COMMON_SGLANG, **{f: (f[2:].replace("-", "_"), t) for f, t in _SGLANG_FLAGS.items()}}
SGLANG_FLAGS.update({alias: SGLANG_FLAGS[flag] for alias, flag in _SGLANG_ALIASES.items()})

VLLM_FLAGS = {
    "--attention-backend": ("attention_backend", "str"),
    "--attention-config.backend": ("attention_backend", "str"),
    "-ac.backend": ("attention_backend", "str"),
    "--attention-config.flash_attn_version": ("attention_config.flash_attn_version", "int"),
    "-ac.flash_attn_version": ("attention_config.flash_attn_version", "int"),
    "--kv-cache-dtype": ("kv_cache_dtype", "str"),
    "--block-size": ("page_size", "int"),
    "--tensor-parallel-size": ("tp_size", "int"),
    "-tp": ("tp_size", "int"),
    "--dtype": ("dtype", "str"),
    "--model": ("model", "str"),
    "--speculative-config": ("speculative_config", "str"),
    "--quantization": ("quantization", "str"),
    "-q": ("quantization", "str"),
    "--calculate-kv-scales": ("calculate_kv_scales", "bool"),
    "--max-model-len": ("context_length", "int"),
    "--pipeline-parallel-size": ("pp_size", "int"),
    "-pp": ("pp_size", "int"),
    "--gpu-memory-utilization": ("mem_fraction", "float"),
    "--data-parallel-size": ("dp_size", "int"),
    "-dp": ("dp_size", "int"),
}
_CONFIG_FIELDS = {f for f in Config.__dataclass_fields__} | {"model"}

# Flags that bear on attention or the KV cache which no rule models yet: a pasted command carrying one is
# judged incomplete (general-unmodelled-flags), never silently. Names from each engine's argparse
# (sglang arg_groups/fields, vllm engine/arg_utils.py).
UNMODELLED_BEARING_FLAGS = {
    "sglang": frozenset(
        {
            "--config",  # a YAML file of more flags (not read yet)
            "--chunked-prefill-size",
            "--enable-mixed-chunk",
            "--json-model-override-args",
            "--revision",
            "--max-total-tokens",
            "--enable-double-sparsity",
            "--speculative-draft-model-quantization",
            "--ep-size",
            "--expert-parallel-size",
            "--moe-dp-size",
            "--enable-torch-compile",
        }
    ),
    "vllm": frozenset(
        {
            "--config",
            "--max-num-batched-tokens",
            "--enable-chunked-prefill",
            "--hf-overrides",
            "--revision",
            "--kv-transfer-config",
            "--enable-prefix-caching",
            "--num-gpu-blocks-override",
            "--cpu-offload-gb",
            "--enforce-eager",
            "--compilation-config",
            "-O",
            "--enable-expert-parallel",
        }
    ),
}
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_LAUNCHERS = "`python -m sglang.launch_server …`, `sglang serve …` or `vllm serve MODEL …`"


@dataclass
class ParsedCommand:
    """What a pasted command says, before validation: `values` feed make_config (explicit flags win)."""

    engine: str
    origin: str
    values: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)  # the whole command as split, environment prefixes included


def _split(argv: Sequence[str]) -> list[str]:
    if len(argv) == 1 and any(c.isspace() for c in argv[0]):
        try:
            return shlex.split(argv[0])
        except ValueError as err:
            raise RulesInputError(f"cannot parse the pasted command: {err}") from None
    return list(argv)


def read_flags(tokens: Sequence[str], table: Mapping[str, tuple[str, str]]) -> tuple[dict, dict, list[str]]:
    """`--flag value` / `--flag=value` tokens read with an engine's flag table: (Config field values, other
    attention-relevant flags by dest name, the tokens and flag names the table does not know)."""
    values: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    unread: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-"):
            unread.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        spec = table.get(flag)
        if spec is None:
            unread.append(flag)
            if not has_inline and i < len(tokens) and not tokens[i].startswith("-"):
                i += 1  # its value
            continue
        dest, kind = spec
        if kind == "bool":
            value: Any = inline.lower() not in ("false", "0", "no") if has_inline else True
        else:
            if has_inline:
                raw = inline
            elif i < len(tokens):
                raw = tokens[i]
                i += 1
            else:
                raise RulesInputError(f"{flag} in the pasted command has no value")
            value = raw
            if kind in ("int", "float"):
                try:
                    value = int(raw) if kind == "int" else float(raw)
                except ValueError:
                    expected = "an integer" if kind == "int" else "a number"
                    raise RulesInputError(f"{flag} in the pasted command: expected {expected}, got {raw!r}") from None
        if dest in _CONFIG_FIELDS:
            values[dest] = value
        else:
            flags[dest] = value
    return values, flags, unread


def parse_command(argv: Sequence[str]) -> ParsedCommand:
    tokens = _split(argv)
    pasted = list(tokens)
    env: dict[str, str] = {}
    ignored: list[str] = []
    while tokens and (tokens[0] == "env" or _ENV_ASSIGNMENT.match(tokens[0])):
        token = tokens.pop(0)
        if token == "env":
            continue
        key, _, assigned = token.partition("=")
        if key.startswith(_ENV_PREFIXES):
            env[key] = assigned
        else:
            ignored.append(key)
    if not tokens:
        raise RulesInputError(f"empty command after --: paste {_LAUNCHERS}")
    program = posixpath.basename(tokens[0])
    if _PYTHON.match(program):
        rest = tokens[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest.pop(0)  # interpreter options such as -u or -X
        if len(rest) < 2 or rest[0] != "-m":
            raise RulesInputError(f"not a launch command: {' '.join(tokens[:3])} (expected {_LAUNCHERS})")
        module, rest = rest[1], rest[2:]
        if module == "sglang.launch_server":
            engine, origin = "sglang", "python -m sglang.launch_server"
        elif module in ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main"):
            engine, origin = "vllm", f"python -m {module}"
            if rest and rest[0] == "serve":
                rest = rest[1:]
        else:
            raise RulesInputError(f"not a launch command: python -m {module} (expected {_LAUNCHERS})")
    elif program in ("sglang", "vllm") and len(tokens) > 1 and tokens[1] == "serve":
        engine, origin, rest = program, f"{program} serve", tokens[2:]
    else:
        raise RulesInputError(f"not a launch command: {' '.join(tokens[:2])} (expected {_LAUNCHERS})")

    parsed = ParsedCommand(engine=engine, origin=origin, env=env, ignored=ignored, tokens=pasted)
    if rest and not rest[0].startswith("-"):
        parsed.values["model"] = rest.pop(0)  # `vllm serve MODEL` / `sglang serve MODEL`
    values, flags, unread = read_flags(rest, flag_table(engine))
    parsed.values.update(values)
    parsed.flags.update(flags)
    ignored.extend(unread)
    if engine == "vllm" and "attention_backend" not in parsed.values and env.get("VLLM_ATTENTION_BACKEND"):
        parsed.values["attention_backend"] = env["VLLM_ATTENTION_BACKEND"]
    return parsed


def flag_table(engine: str) -> Mapping[str, tuple[str, str]]:
    """The engine's flag table: flag spelling -> (Config field or flags key, "str" | "int" | "bool")."""
    return SGLANG_FLAGS if engine == "sglang" else VLLM_FLAGS


def superseded_env(engine: str, dest: str) -> Optional[str]:
    """The environment variable a flag (by dest) takes the choice over from, if any."""
    return _SUPERSEDED_ENV.get(engine, {}).get(dest)


def apply_flags(config: Config, fix: str) -> Optional[Config]:
    """`config` with a fix's flags applied (e.g. "--attention-backend fa3", "--page-size 64"), read with the
    engine's own flag table; None when the fix is not flags of the config (an install command, a download, a
    model directory), which cannot be re-checked against it."""
    try:
        values, read, unread = read_flags(shlex.split(fix), flag_table(config.engine))
    except ValueError:  # not shell words, or read_flags' RulesInputError (a flag without its value)
        return None
    if unread or "model" in values:
        return None
    for dest, value in values.items():
        if dest.endswith("attention_backend"):
            values[dest] = backend_kb.canonical(config.engine, value)
            if values[dest] is None:
                return None
    flags = {**config.flags, **read}
    if not values and flags == dict(config.flags):
        return None
    # A fix's flag takes the choice over from the environment variable it supersedes (the fix is the whole change).
    env = {k: v for k, v in config.env.items() if k not in {superseded_env(config.engine, d) for d in [*values, *read]}}
    if "attention_backend" in values:  # one backend for every phase, as the flag means
        config = config.with_backend(values.pop("attention_backend"))
    return replace(config, flags=flags, env=env, **values)


# flag dest -> the environment variable it supersedes (vllm: AttentionConfig replaced the variables in 0.13)
_SUPERSEDED_ENV = {
    "vllm": {
        "attention_backend": vllm_backends.ENV_BACKEND,
        "attention_config.flash_attn_version": vllm_backends.ENV_FA_VERSION,
    }
}
