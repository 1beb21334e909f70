"""Config: the normalised serving config the rules judge, and its parsers.

Two ways in, one result:
- `make_config(**values)`: from flag values (the `check` options use SGLang's own flag names);
- `parse_command(argv)`: a pasted launch command (`python -m sglang.launch_server …`, `sglang serve …`,
  `vllm serve MODEL …`, with `KEY=VALUE` environment prefixes and interpreter options). The command is
  tokenised with shlex and read, never run, as the engine's argparse reads it with the newest release's flag
  table (rules/knowledge/flags.py); each flag is then modelled (a Config field or Config.flags), bearing but
  unmodelled (`unmodelled`), or not bearing on attention (`ignored`), by its dest.
`make_config` validates every name (backend, KV dtype, feature, model) and raises RulesInputError.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional, Sequence

from rules.errors import RulesInputError
from rules.knowledge import backends as backend_kb
from rules.knowledge import flags as flag_kb
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
    ignored: tuple[str, ...] = ()  # flags of a pasted command that do not bear on attention
    unmodelled: tuple[str, ...] = ()  # flags of a pasted command that bear on attention but no rule models
    options: tuple[str, ...] = ()  # every option of a pasted command as its engine's parser is given it
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
            "unmodelled": list(self.unmodelled),
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


# The integers a launch can hold: the engines set no upper bound (a plain `type=int`), so these are ours, far
# beyond any real value (the largest KV page any backend uses is 128 tokens; topk and TP are in the tens).
_INT_BOUNDS = {
    "page_size": (1, 1 << 20),
    "speculative_eagle_topk": (0, 1 << 10),
    "tp_size": (1, 1 << 16),
    "pp_size": (1, 1 << 16),
    "context_length": (1, 1 << 40),
}
# SGLang's speculative algorithms (0.5.23 python/sglang/srt/speculative/spec_info.py SpeculativeAlgorithm, and
# NEXTN from spec_registry.py _RESERVED_ALIASES); from_string upper-cases the name and raises "Unknown
# speculative algorithm name" for any other one that no plugin registered.
SGLANG_SPECULATIVE_ALGORITHMS = (
    "EAGLE",
    "EAGLE3",
    "NEXTN",
    "STANDALONE",
    "NGRAM",
    "DFLASH",
    "DSPARK",
    "UNO",
    "FROZEN_KV_MTP",
)


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
    for key, (low, high) in _INT_BOUNDS.items():
        value = values.get(key)
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise RulesInputError(
                f"{flag}: expected {'a positive' if low else 'a non-negative'} integer, got {value!r}"
            )
        if value > high:
            raise RulesInputError(
                f"{flag}: {str(value)[:20]}{'…' if len(str(value)) > 20 else ''} is beyond any real launch (at most {high:,})"
            )
    algorithm = values.get("speculative_algorithm")
    if algorithm is not None and engine == "sglang" and algorithm.upper() not in SGLANG_SPECULATIVE_ALGORITHMS:
        raise RulesInputError(
            f"--speculative-algorithm: unknown sglang speculative algorithm {algorithm!r}",
            choices=SGLANG_SPECULATIVE_ALGORITHMS,
            word=algorithm,
        )
    fraction = values.get("mem_fraction")
    if fraction is not None and (
        isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1
    ):
        raise RulesInputError(f"memory fraction: expected a number in (0, 1], got {fraction!r}")
    values = {k: v for k, v in values.items() if v is not None}
    return Config(engine=engine, model=model, extra_features=frozenset(wanted), **values)


# --- pasted launch commands --------------------------------------------------------------------------------

# What a pasted command's flags mean to the rules, by argparse dest (the name each engine's parser stores the
# value under, rules/knowledge/flags.py; an older release's dest where it differs): a Config field or a
# Config.flags key, and how its value is read ("str", "int", "float", "bool").
_MODELLED: dict[str, dict[str, tuple[str, str]]] = {
    "sglang": {
        "model_path": ("model", "str"),
        "attention_backend": ("attention_backend", "str"),
        "prefill_attention_backend": ("prefill_attention_backend", "str"),
        "decode_attention_backend": ("decode_attention_backend", "str"),
        "mm_attention_backend": ("mm_attention_backend", "str"),
        "speculative_draft_attention_backend": ("draft_attention_backend", "str"),
        "kv_cache_dtype": ("kv_cache_dtype", "str"),
        "page_size": ("page_size", "int"),
        "enable_deterministic_inference": ("deterministic", "bool"),
        "speculative_algorithm": ("speculative_algorithm", "str"),
        "speculative_eagle_topk": ("speculative_eagle_topk", "int"),
        "tp_size": ("tp_size", "int"),
        "tensor_parallel_size": ("tp_size", "int"),  # the dest until 0.5.13.post1
        "data_parallel_size": ("dp_size", "int"),  # the dest until 0.5.13.post1
        "pp_size": ("pp_size", "int"),
        "pipeline_parallel_size": ("pp_size", "int"),  # the dest until 0.5.13.post1
        "mem_fraction_static": ("mem_fraction", "float"),
        "context_length": ("context_length", "int"),
        "dtype": ("dtype", "str"),
        **{
            dest: (dest, kind)
            for dest, kind in {
                "disable_radix_cache": "bool",
                "enable_hierarchical_cache": "bool",
                "enable_mis": "bool",
                "prefill_only_disable_kv_cache": "bool",
                "speculative_use_rejection_sampling": "bool",
                "enable_prefill_context_parallel": "bool",
                "attn_cp_size": "int",
                "dcp_size": "int",
                "enable_unified_memory": "bool",
                "enable_page_major_kv_layout": "bool",
                "disable_cuda_graph": "bool",
                "dsa_prefill_backend": "str",
                "dsa_decode_backend": "str",
                "speculative_num_steps": "int",
                "speculative_num_draft_tokens": "int",
                "speculative_draft_model_path": "str",
                "speculative_draft_kv_cache_dtype": "str",
                "speculative_ngram_max_bfs_breadth": "int",
                "speculative_attention_mode": "str",
                "mamba_radix_cache_strategy": "str",
                "enable_kv_cache_sharding": "bool",
                "dllm_algorithm": "str",
                "enable_linear_replayssm": "bool",
                "enable_linear_replayssm_spec": "bool",
                "disable_chunked_prefix_cache": "bool",
                "disable_overlap_schedule": "bool",
                "quantization": "str",
                "mamba_ssm_dtype": "str",
                "linear_attn_backend": "str",
                "linear_attn_prefill_backend": "str",
                "linear_attn_decode_backend": "str",
                "linear_attn_verify_backend": "str",
                "hicache_io_backend": "str",
                "enable_multimodal": "bool",
                "prefill_kv_cache_dequant_dtype": "str",
                "enable_dp_attention": "bool",
                "dp_size": "int",
                "attn_dp_size": "int",  # 0.5.22+: what `--dp-size N --enable-dp-attention` became
                "chunked_prefill_size": "int",
            }.items()
        },
    },
    "vllm": {
        "model": ("model", "str"),
        "model_tag": ("model", "str"),
        "attention_backend": ("attention_backend", "str"),
        "kv_cache_dtype": ("kv_cache_dtype", "str"),
        "block_size": ("page_size", "int"),
        "tensor_parallel_size": ("tp_size", "int"),
        "dtype": ("dtype", "str"),
        "speculative_config": ("speculative_config", "str"),
        "quantization": ("quantization", "str"),
        "calculate_kv_scales": ("calculate_kv_scales", "bool"),
        "max_model_len": ("context_length", "int"),
        "pipeline_parallel_size": ("pp_size", "int"),
        "gpu_memory_utilization": ("mem_fraction", "float"),
        "data_parallel_size": ("dp_size", "int"),
    },
}
# vLLM's --attention-config / -ac JSON (dotted `-ac.backend X` is merged into it): the keys the rules read.
_VLLM_ATTENTION_CONFIG = {
    "backend": ("attention_backend", "str"),
    "flash_attn_version": ("attention_config.flash_attn_version", "int"),
}
_CONFIG_FIELDS = {f for f in Config.__dataclass_fields__} | {"model"}

# Flags that bear on attention or the KV cache which no rule models yet, by dest: a pasted command carrying one
# is judged incomplete (general-unmodelled-flags), never silently.
UNMODELLED_BEARING_FLAGS = {
    "sglang": frozenset(
        {
            "enable_mixed_chunk",
            "json_model_override_args",
            "revision",
            "max_total_tokens",
            "enable_double_sparsity",
            "speculative_draft_model_quantization",
            "ep_size",
            "expert_parallel_size",
            "moe_dp_size",
            "enable_torch_compile",
            "disaggregation_mode",  # PD disaggregation moves the KV cache between servers
            "enable_nsa_prefill_context_parallel",
            "enable_dsa_prefill_context_parallel",  # its dest from 0.5.13
            "nsa_prefill_backend",
            "nsa_decode_backend",
            "hybrid_kvcache_ratio",
            "swa_full_tokens_ratio",
        }
    ),
    "vllm": frozenset(
        {
            "max_num_batched_tokens",
            "enable_chunked_prefill",
            "hf_overrides",
            "revision",
            "kv_transfer_config",
            "enable_prefix_caching",
            "num_gpu_blocks_override",
            "cpu_offload_gb",
            "enforce_eager",
            "compilation_config",
            "optimization_level",
            "enable_expert_parallel",
            "attention_config",  # keys other than backend / flash_attn_version
            "mm_encoder_tp_mode",  # the vision encoder's attention runs data-parallel
            "mm_encoder_attn_backend",
            "mamba_cache_mode",
            "mamba_cache_dtype",
            "kv_cache_memory_bytes",
            "decode_context_parallel_size",
        }
    ),
}
# Flags that do not bear on attention or the KV cache, by dest: the HTTP server, API, logging, tokenizer and
# chat/tool/reasoning parsing, weight download, scheduling limits and multimodal input limits. A flag in none of
# these three sets is reported with the unmodelled ones (general-unmodelled-flags): never dropped silently.
NOT_BEARING_FLAGS = {
    "sglang": frozenset(
        {
            "host",
            "port",
            "api_key",
            "trust_remote_code",
            "served_model_name",
            "tool_call_parser",
            "reasoning_parser",
            "chat_template",
            "log_level",
            "enable_metrics",
            "tool_server",
            "dist_init_addr",
            "disaggregation_bootstrap_port",
            "max_running_requests",
            "moe_runner_backend",
            "cuda_graph_max_bs",
            "cuda_graph_max_bs_decode",
            "torch_compile_max_bs",
            "speculative_token_map",
            "tokenizer_path",
            "download_dir",
            "nnodes",
            "node_rank",
            "random_seed",
            "log_requests",
            "stream_interval",
            "skip_server_warmup",
            "watchdog_timeout",
            "admin_api_key",
            "allowed_media_domains",
            "bucket_e2e_request_latency",
            "bucket_inter_token_latency",
            "bucket_time_to_first_token",
            "completion_template",
            "constrained_json_disable_any_whitespace",
            "constrained_json_max_whitespace_cnt",
            "constrained_json_whitespace_pattern",
            "crash_dump_folder",
            "decode_log_interval",
            "default_chat_template_kwargs",
            "detokenizer_worker_num",
            "dist_timeout",
            "enable_cache_report",
            "enable_custom_logit_processor",
            "enable_http2",
            "enable_http_worker_reuseport",
            "enable_metrics_for_all_schedulers",
            "enable_mfu_metrics",
            "enable_p2p_check",
            "enable_request_time_stats_logging",
            "enable_ssl_refresh",
            "enable_trace",
            "export_metrics_to_file",
            "export_metrics_to_file_dir",
            "extra_metric_labels",
            "fastapi_root_path",
            "file_storage_path",
            "gc_threshold",
            "gc_warning_threshold_secs",
            "generation_tokens_buckets",
            "grammar_backend",
            "hf_chat_template_name",
            "http2_initial_connection_window_size",
            "http2_max_concurrent_streams",
            "log_level_http",
            "log_requests_format",
            "log_requests_level",
            "log_requests_target",
            "media_url_max_file_size_mb",
            "nccl_port",
            "otlp_service_name",
            "otlp_traces_endpoint",
            "prompt_tokens_buckets",
            "show_time_cost",
            "skip_tokenizer_init",
            "ssl_ca_certs",
            "ssl_certfile",
            "ssl_keyfile",
            "ssl_keyfile_password",
            "stream_response_default_include_usage",
            "tokenizer_backend",
            "tokenizer_metrics_allowed_custom_labels",
            "tokenizer_metrics_custom_labels_header",
            "tokenizer_mode",
            "tokenizer_worker_num",
            "trust_request_chat_template",
            "uvicorn_access_log_exclude_prefixes",
            "weight_version",
            "base_gpu_id",
            "gpu_id_step",
            "schedule_policy",
            "schedule_conservativeness",
            "load_format",
            "model_loader_extra_config",
            "enable_strict_thinking",
            "sampling_backend",
            "sampling_defaults",
            "preferred_sampling_params",
            "trace_modules",
            "enable_forward_pass_metrics",
            "forward_pass_metrics_ipc_name",
            "forward_pass_metrics_worker_id",
            "max_queued_requests",
            "default_priority_value",
            "enable_priority_scheduling",
            "abort_on_priority_when_disabled",
            "schedule_low_priority_values_first",
            "priority_scheduling_preemption_threshold",
            "disable_priority_preemption",
            "grpc_mode",
            "grpc_port",
            "grpc_response_timeout_secs",
            "incremental_streaming_output",
            "enable_response_store",
        }
    ),
    "vllm": frozenset(
        {
            "host",
            "port",
            "api_key",
            "trust_remote_code",
            "served_model_name",
            "tool_call_parser",
            "reasoning_parser",
            "enable_auto_tool_choice",
            "chat_template",
            "tokenizer_mode",
            "tokenizer",
            "logits_processors",
            "mm_processor_cache_gb",
            "mm_processor_cache_type",
            "mm_processor_kwargs",
            "limit_mm_per_prompt",
            "allowed_local_media_path",
            "async_scheduling",
            "max_num_seqs",
            "disable_log_requests",
            "disable_log_stats",
            "swap_space",
            "distributed_executor_backend",
            "download_dir",
            "seed",
            "hf_token",
            "uvicorn_log_level",
            "tool_server",
            "stream_interval",
            "headless",
            "api_server_count",
            "allow_credentials",
            "allowed_headers",
            "allowed_media_domains",
            "allowed_methods",
            "allowed_origins",
            "chat_template_content_format",
            "code_revision",
            "collect_detailed_traces",
            "config_format",
            "custom_histogram_buckets",
            "default_chat_template_kwargs",
            "disable_access_log_for_endpoints",
            "disable_fastapi_docs",
            "disable_uvicorn_access_log",
            "enable_force_include_usage",
            "enable_log_deltas",
            "enable_log_outputs",
            "enable_log_requests",
            "enable_logging_iteration_details",
            "enable_offline_docs",
            "enable_per_request_metrics",
            "enable_prompt_tokens_details",
            "enable_request_id_headers",
            "enable_server_load_tracking",
            "enable_ssl_refresh",
            "enable_tokenizer_info_endpoint",
            "exclude_tools_when_tool_choice_none",
            "generation_config",
            "grpc",
            "grpc_port",
            "h11_max_header_count",
            "h11_max_incomplete_event_size",
            "ignore_patterns",
            "load_format",
            "log_config_file",
            "log_error_stack",
            "log_level",
            "logging_config",
            "logprobs_mode",
            "max_log_len",
            "max_logprobs",
            "max_parallel_loading_workers",
            "middleware",
            "model_loader_extra_config",
            "otlp_traces_endpoint",
            "override_generation_config",
            "reasoning_parser_plugin",
            "response_role",
            "return_tokens_as_token_ids",
            "root_path",
            "show_hidden_metrics_for_version",
            "shutdown_timeout",
            "skip_tokenizer_init",
            "sse_keep_alive_interval",
            "ssl_ca_certs",
            "ssl_cert_reqs",
            "ssl_certfile",
            "ssl_ciphers",
            "ssl_keyfile",
            "structured_outputs_config",
            "tokenizer_revision",
            "tool_parser_plugin",
            "tool_strict_level",
            "trust_request_chat_template",
            "uds",
            "use_tqdm_on_load",
            "master_addr",
            "master_port",
            "nnodes",
            "node_rank",
            "scheduling_policy",
            "max_num_queued_reqs",
            "aggregate_engine_logging",
        }
    ),
}
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_LAUNCHERS = "`python -m sglang.launch_server …`, `sglang serve …` or `vllm serve MODEL …`"
# CPython's command-line options that take a value (Python/getopt.c: "bBc:dEhiIm:OPqRsStuvVW:xX:?"), and the one
# long option that does; -c runs code instead of a module.
_PYTHON_VALUE_OPTIONS = frozenset("WX")
_PYTHON_LONG_VALUE_OPTIONS = frozenset({"--check-hash-based-pycs"})


@dataclass
class ParsedCommand:
    """What a pasted command says, before validation: `values` feed make_config (explicit flags win).

    `tokens` is the whole pasted command as split; `options` each option the engine's parser is given, as
    written (a vLLM name with its underscores turned into dashes, a dotted `--x.key` as `--x`), for the release
    check (general-flags-known); `unmodelled` the bearing flags no rule models and `ignored` those that do not
    bear on attention, as written. A `--config FILE` not given its mapping stays an unmodelled flag."""

    engine: str
    origin: str
    tokens: list[str] = field(default_factory=list)  # the whole command as split, environment prefixes included
    values: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    unmodelled: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    config_file: Optional[str] = None  # `--config FILE`: the face reads it and parses again with its mapping


def _split(argv: Sequence[str]) -> list[str]:
    if len(argv) == 1 and any(c.isspace() for c in argv[0]):
        try:  # a backslash-newline is a line continuation to the shell: it joins, never becomes a word
            return shlex.split(argv[0].replace("\\\n", ""))
        except ValueError as err:
            raise RulesInputError(f"cannot parse the pasted command: {err}") from None
    return list(argv)


def _vllm_argv(args: Sequence[str], table: flag_kb.FlagTable) -> list[str]:
    """The arguments as vLLM's FlexibleArgumentParser.parse_args hands them to argparse (vllm/utils/
    argparse_utils.py): underscores in a `--name` before its first '.' become dashes, `-O3` / `-O=3` / `-O 3` is
    the optimization level, and dotted `--json-arg.key value` (`key+` for a list) pieces are merged into one
    JSON value of `--json-arg`."""
    level = "--optimization-level" if "--optimization-level" in table.options else "-O"
    processed: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            name, has_value, text = arg.partition("=")
            head, dot, tail = name[2:].partition(".")
            processed.append("--" + head.replace("_", "-") + dot + tail + has_value + text)
        elif arg.startswith("-O") and arg != "-O" and level == "--optimization-level":
            processed += [level, arg[3:] if arg[2:3] == "=" else arg[2:]]
        elif arg == "-O" and level == "--optimization-level" and i + 1 < len(args) and args[i + 1] in "0123":
            processed.append(level)
        else:
            processed.append(arg)
    merged: dict[str, dict] = {}
    plain: list[str] = []
    i = 0
    while i < len(processed):
        arg = processed[i]
        i += 1
        name = arg.partition("=")[0]
        if not (arg.startswith("-") and "." in name):
            plain.append(arg)
            continue
        if "=" in arg:
            value_text = arg.partition("=")[2]
        elif i < len(processed):
            value_text = processed[i]
            i += 1
        else:
            raise RulesInputError(f"{name} in the pasted command has no value")
        if name.endswith("+"):
            name, value_text = name[:-1], json.dumps(value_text.split(","))
        base, *keys = name.split(".")
        try:
            nested: Any = json.loads(value_text)
        except ValueError:
            nested = value_text
        for key in reversed(keys):
            nested = {key: nested}
        _merge(merged.setdefault(base, {}), nested)
    for base, whole in merged.items():
        plain += [base, json.dumps(whole)]
    return plain


def _merge(into: dict, update: dict) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        elif isinstance(value, list) and isinstance(into.get(key), list):
            into[key] += value
        else:
            into[key] = value


def _is_option(token: str, table: flag_kb.FlagTable) -> bool:
    """argparse's test (`_parse_optional`): a '-' token is an option unless it is a lone '-', or matches
    nothing and looks like a negative number or holds a space."""
    if not token.startswith("-") or token == "-":
        return False
    try:
        table.resolve(token)
        return True
    except flag_kb.FlagError:
        return not (_NEGATIVE_NUMBER.match(token) or " " in token)


@dataclass
class _Read:
    """Flags read with an engine's flag table: (dest, value) pairs as written, positionals, option tokens."""

    pairs: list[tuple[str, str, Any]] = field(default_factory=list)  # (as written, dest, value)
    positionals: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)


def _read(engine: str, args: Sequence[str]) -> _Read:
    """argparse's reading of `args` with the newest release's table (a flag only an older release has is read
    as that release defines it; one no release has is kept as an option, its value guessed, for the release
    check to report)."""
    table = flag_kb.flag_table(engine)
    older = flag_kb.any_release(engine)
    read = _Read()
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "--":
            read.positionals += args[i:]
            break
        if not _is_option(token, table):
            read.positionals.append(token)
            continue
        read.options.append(token)
        name = token.partition("=")[0] if token.startswith("--") else token
        try:
            resolved = table.resolve(token)
            spec, attached, written = resolved.spec, resolved.attached, resolved.option
        except flag_kb.FlagError:
            exact = name if name in older else None
            if exact is None:
                if "=" not in token and i < len(args) and not _is_option(args[i], table):
                    i += 1  # most likely its value
                read.pairs.append((name, "", None))
                continue
            spec, attached, written = older[exact], token.partition("=")[2] if "=" in token else None, exact
        if spec.nargs == 0:
            if attached is not None:
                raise RulesInputError(f"{written}: takes no value, got {attached!r} ({engine}'s argparse refuses it)")
            value: Any = not written.startswith("--no-")
        elif attached is not None:
            value = attached
        else:
            taken: list[str] = []
            wanted = {1: 1, "?": 1}.get(spec.nargs, spec.nargs if isinstance(spec.nargs, int) else None)
            while i < len(args) and not _is_option(args[i], table) and (wanted is None or len(taken) < wanted):
                taken.append(args[i])
                i += 1
            if not taken and spec.nargs not in ("?", "*"):
                raise RulesInputError(f"{written} in the pasted command has no value")
            value = taken[0] if spec.nargs in (1, "?") and taken else taken
        read.pairs.append((written, spec.dest, value))
    return read


def _convert(flag: str, kind: str, value: Any) -> Any:
    if kind == "bool":
        return value if isinstance(value, bool) else True
    if isinstance(value, list):
        value = " ".join(value)
    if kind in ("int", "float"):
        try:
            return int(value) if kind == "int" else float(value)
        except ValueError:
            expected = "an integer" if kind == "int" else "a number"
            raise RulesInputError(f"{flag} in the pasted command: expected {expected}, got {value!r}") from None
    return value


def read_flags(engine: str, args: Sequence[str]) -> tuple[dict, dict, list[str], list[str], list[str]]:
    """`--flag value` / `--flag=value` arguments read as the engine's argparse reads them: (Config field values,
    other attention-relevant flags by their Config.flags key, the bearing flags no rule models, the flags that
    do not bear on attention, the option tokens as the parser is given them). A vLLM `vllm serve` positional
    model is the model_tag."""
    table = flag_kb.flag_table(engine)
    read = _read(engine, _vllm_argv(args, table) if engine == "vllm" else args)
    modelled = _MODELLED[engine]
    values: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    unmodelled: list[str] = []
    ignored: list[str] = []
    pairs = list(read.pairs)
    stray = read.positionals
    if engine == "vllm" and stray:  # `vllm serve MODEL`: its one positional
        pairs.insert(0, ("MODEL", "model_tag", stray[0]))
        stray = stray[1:]
    for written, dest, value in pairs:
        if engine == "vllm" and dest == "attention_config" and isinstance(value, str):
            rest = _read_attention_config(value, values, flags)
            if not rest:
                continue
        if dest in modelled:
            key, kind = modelled[dest]
            (values if key in _CONFIG_FIELDS else flags)[key] = _convert(written, kind, value)
        elif dest in NOT_BEARING_FLAGS[engine]:
            ignored.append(written)
        elif written not in unmodelled:
            unmodelled.append(written)  # bearing, or not classified: never dropped silently
    # argparse refuses any other positional ("unrecognized arguments"): the release check reports it
    return values, flags, unmodelled, ignored, [*read.options, *stray]


def _read_attention_config(text: str, values: dict, flags: dict) -> dict:
    """The keys of a vLLM --attention-config JSON the rules read, stored; the others returned."""
    try:
        config = json.loads(text)
    except ValueError:
        return {"": text}
    if not isinstance(config, dict):
        return {"": config}
    for key, (target, kind) in _VLLM_ATTENTION_CONFIG.items():
        if key in config:
            (values if target in _CONFIG_FIELDS else flags)[target] = _convert(
                f"--attention-config.{key}", kind, config.pop(key)
            )
    return config


def _python_module(tokens: Sequence[str]) -> tuple[str, list[str]]:
    """`python [interpreter options] -m MODULE ARGS…` -> (MODULE, ARGS). Interpreter options are skipped, those
    that take a value with it (-X faulthandler, -W ignore, -Wignore, --check-hash-based-pycs never); `-m` may
    close a group of letters (-um MODULE), as CPython's getopt reads it."""
    rest = list(tokens[1:])
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option.startswith("--"):
            if option in _PYTHON_LONG_VALUE_OPTIONS and rest:
                rest.pop(0)
            continue
        letters = option[1:]
        for position, letter in enumerate(letters):
            attached = letters[position + 1 :]
            if letter == "m":
                return attached or (rest.pop(0) if rest else ""), rest
            if letter == "c":  # runs code, not a module
                rest = []
                break
            if letter in _PYTHON_VALUE_OPTIONS:
                if not attached and rest:
                    rest.pop(0)
                break
    raise RulesInputError(f"not a launch command: {' '.join(tokens[:3])} (expected {_LAUNCHERS})")


def _config_args(engine: str, config: Mapping[str, Any]) -> list[str]:
    """A `--config` YAML mapping as the engine turns it into arguments. SGLang (0.5.23 srt/utils/
    server_args_config_parser.py ConfigArgumentMerger._convert_config_to_args): a store_true flag is given for
    true and left out for false, another flag gets `true`/`false`; a list gives its items after the flag, a
    mapping its JSON, anything else str(value). vLLM (0.33.0 utils/argparse_utils.py load_config_file): true
    gives the flag, false its `--no-` twin where it has one (else nothing), lists, mappings and scalars as
    SGLang does."""
    table = flag_kb.flag_table(engine)
    args: list[str] = []
    for key, value in config.items():
        flag = f"--{key}"
        if isinstance(value, bool):
            if engine == "vllm":
                args += [flag] if value else [f"--no-{key}"] if f"--no-{key}" in table.options else []
            elif _store_true(table, key):
                args += [flag] if value else []
            else:
                args += [flag, str(value).lower()]
        elif isinstance(value, list):
            args += [flag, *map(str, value)] if value else []
        elif isinstance(value, dict):
            args += [flag, json.dumps(value)]
        else:
            args += [flag, str(value)]
    return args


def _store_true(table: flag_kb.FlagTable, key: str) -> bool:
    """SGLang's _config_keys: a key names an action by its dest or a long option, dashes as underscores."""
    wanted = key.replace("-", "_")
    return any(
        spec.nargs == 0 and wanted in (spec.dest, option[2:].replace("-", "_"))
        for option, spec in table.options.items()
        if option.startswith("--")
    )


def _with_config(engine: str, rest: list[str], config: Mapping[str, Any]) -> list[str]:
    """`rest` with `--config FILE` replaced by the file's arguments where the engine puts them: first for SGLang
    (merge_config_with_args), after the positional model for vLLM (_pull_args_from_config); the command line
    comes after them and wins, as argparse keeps the last value."""
    index = rest.index("--config")
    head = rest[:1] if engine == "vllm" and rest and not rest[0].startswith("-") else []
    return [*head, *_config_args(engine, config), *rest[len(head) : index], *rest[index + 2 :]]


def parse_command(argv: Sequence[str], config: Optional[Mapping[str, Any]] = None) -> ParsedCommand:
    """A pasted command read as its engine reads it; `config` is the mapping of its `--config FILE`, when the
    face has read it (ParsedCommand.config_file says which file)."""
    tokens = _split(argv)
    words = list(tokens)
    env: dict[str, str] = {}
    ignored: list[str] = []
    while words and (words[0] == "env" or _ENV_ASSIGNMENT.match(words[0])):
        word = words.pop(0)
        if word == "env":
            continue
        key, _, assigned = word.partition("=")
        if key.startswith(_ENV_PREFIXES):
            env[key] = assigned
        else:
            ignored.append(key)
    if not words:
        raise RulesInputError(f"empty command after --: paste {_LAUNCHERS}")
    program = posixpath.basename(words[0])
    if _PYTHON.match(program):
        module, rest = _python_module(words)
        if module == "sglang.launch_server":
            engine, origin = "sglang", "python -m sglang.launch_server"
        elif module in ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main"):
            engine, origin = "vllm", f"python -m {module}"
            if rest and rest[0] == "serve":
                rest = rest[1:]
        else:
            raise RulesInputError(f"not a launch command: python -m {module} (expected {_LAUNCHERS})")
    elif program in ("sglang", "vllm") and len(words) > 1 and words[1] == "serve":
        engine, origin, rest = program, f"{program} serve", words[2:]
        if engine == "sglang" and rest and not rest[0].startswith("-"):
            rest = ["--model-path", *rest]  # sglang/cli/serve.py _normalize_positional_model_path
    else:
        raise RulesInputError(f"not a launch command: {' '.join(words[:2])} (expected {_LAUNCHERS})")

    config_file = None
    if rest.count("--config") > 1:  # SGLang: "Multiple config files specified!"; vLLM asserts the same
        raise RulesInputError("--config is given more than once; each engine reads one config file")
    if "--config" in rest:  # only the exact token: `--config=FILE` is stored and never read by either engine
        index = rest.index("--config")
        if index + 1 >= len(rest):
            raise RulesInputError("--config in the pasted command has no file")
        config_file = rest[index + 1]
        if origin == "sglang serve" and not any(
            arg in ("--model-path", "--model") or arg.startswith(("--model-path=", "--model=")) for arg in rest
        ):  # sglang/cli/utils.py get_model_path reads the command line only (sgl-project/sglang#36105)
            raise RulesInputError(
                "sglang serve reads --model-path from the command line only: with the model in --config it exits "
                "'Error: --model-path is required' (give --model-path, or use python -m sglang.launch_server)"
            )
        if config is not None:
            rest = _with_config(engine, rest, config)
    values, flags, unmodelled, not_bearing, options = read_flags(engine, rest)
    parsed = ParsedCommand(
        engine=engine,
        origin=origin,
        tokens=tokens,
        values=values,
        env=env,
        flags=flags,
        options=options,
        unmodelled=unmodelled,
        ignored=ignored + not_bearing,
        config_file=config_file,
    )
    if engine == "vllm" and "attention_backend" not in parsed.values and env.get("VLLM_ATTENTION_BACKEND"):
        parsed.values["attention_backend"] = env["VLLM_ATTENTION_BACKEND"]
    return parsed


class _ModelledFlags(Mapping[str, tuple[str, str]]):
    """The flags the rules model, by any spelling the engine's newest release accepts (an option string, an
    alias, a unique prefix such as --tp): spelling -> (Config field or flags key, "str" | "int" | "bool")."""

    def __init__(self, engine: str):
        self._modelled = _MODELLED[engine]
        self._table = flag_kb.flag_table(engine)
        self._options = {
            option: self._modelled[spec.dest]
            for option, spec in self._table.options.items()
            if spec.dest in self._modelled
        }

    def __getitem__(self, flag: str) -> tuple[str, str]:
        if flag in self._options:
            return self._options[flag]
        try:
            resolved = self._table.resolve(flag)
        except flag_kb.FlagError:
            raise KeyError(flag) from None
        if resolved.attached is not None or resolved.option not in self._options:
            raise KeyError(flag)
        return self._options[resolved.option]

    def __iter__(self):
        return iter(self._options)

    def __len__(self) -> int:
        return len(self._options)


def flag_table(engine: str) -> Mapping[str, tuple[str, str]]:
    """The engine's modelled flags: flag spelling -> (Config field or flags key, "str" | "int" | "bool")."""
    return _ModelledFlags(engine)


def superseded_env(engine: str, dest: str) -> Optional[str]:
    """The environment variable a flag (by dest) takes the choice over from, if any."""
    return _SUPERSEDED_ENV.get(engine, {}).get(dest)


def apply_flags(config: Config, fix: str) -> Optional[Config]:
    """`config` with a fix's flags applied (e.g. "--attention-backend fa3", "--page-size 64"), read with the
    engine's own flag table; None when the fix is not flags of the config (an install command, a download, a
    model directory), which cannot be re-checked against it."""
    try:
        values, read, unmodelled, ignored, _ = read_flags(config.engine, shlex.split(fix))
    except ValueError:  # not shell words, or read_flags' RulesInputError (a flag without its value)
        return None
    if unmodelled or ignored or "model" in values:
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
