"""What a launch flag means to the rules, by argparse dest: a Config field or a Config.flags key (modelled),
bearing on attention but unmodelled, or not bearing; `read_flags` reads `--flag value` arguments as the
engine's argparse reads them with the newest release's flag table (rules/knowledge/flags.py), and
`apply_flags` applies a fix's flags to a Config (the re-check of every fix and of the corrected command).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional, Sequence

from attn_preflight.rules.core import jsontext
from attn_preflight.rules.core.config import ENV_PREFIXES, Config
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.engines import backends as engine_backends
from attn_preflight.rules.knowledge import flags as flag_kb

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
        "nnodes": ("nnodes", "int"),  # parallel-gpu-count: the ranks are spread over the nodes
        **{
            dest: (dest, kind)
            for dest, kind in {
                "disable_radix_cache": "bool",
                "enable_hierarchical_cache": "bool",
                "enable_mis": "bool",
                "prefill_only_disable_kv_cache": "bool",
                "speculative_use_rejection_sampling": "bool",
                "enable_prefill_context_parallel": "bool",
                # prefill CP as DeepSeek-V4's check reads it (rules/knowledge/dsa.py CP_LEGACY_MODES)
                "enable_prefill_cp": "bool",
                "cp_strategy": "str",
                "enable_dsa_prefill_context_parallel": "bool",
                "dsa_prefill_cp_mode": "str",
                "prefill_cp_mode": "str",
                "attn_cp_size": "int",
                "dcp_size": "int",
                # decode CP's reduction options (parallel-dcp-options)
                "dcp_comm_backend": "str",
                "dcp_replicate_q_proj": "bool",
                "enable_unified_memory": "bool",
                "enable_page_major_kv_layout": "bool",
                "disable_cuda_graph": "bool",
                "dsa_prefill_backend": "str",
                "dsa_decode_backend": "str",
                "enable_hisparse": "bool",
                "dsv4_attn_backend": "str",
                "enable_deepseek_v4_fp4_indexer": "bool",
                "enable_int8_mamba_checkpoint": "bool",
                "enable_mamba_cache_stochastic_rounding": "bool",
                "mamba_backend": "str",
                "mamba_cache_philox_rounds": "int",
                "mamba_max_states_per_path": "int",
                "enable_cp_decode_attn_tp": "bool",
                "speculative_draft_window_size": "int",
                "speculative_draft_sink_size": "int",
                # what --language-model-only refuses beside it (model-language-model-only)
                "language_model_only": "bool",
                "encoder_only": "bool",
                "language_only": "bool",
                "enable_prefix_mm_cache": "bool",
                "enable_broadcast_mm_inputs_process": "bool",
                "mm_enable_dp_encoder": "bool",
                "rl_on_policy_target": "str",  # turns deterministic inference on (rules/engines/sglang/resolve.py)
                "enable_encoder_swa_bounded_replay": "bool",
                "speculative_num_steps": "int",
                "speculative_num_draft_tokens": "int",
                "speculative_draft_model_path": "str",
                "speculative_draft_kv_cache_dtype": "str",
                "speculative_ngram_max_bfs_breadth": "int",
                "speculative_attention_mode": "str",
                "mamba_radix_cache_strategy": "str",
                "mamba_track_interval": "int",
                "enable_kv_cache_sharding": "bool",
                "dllm_algorithm": "str",
                "dllm_algorithm_config": "str",
                "is_embedding": "bool",
                "enable_linear_replayssm": "bool",
                "enable_linear_replayssm_spec": "bool",
                "linear_replayssm_cache_len": "int",
                "disaggregation_mode": "str",
                "disaggregation_transfer_backend": "str",
                "radix_cache_backend": "str",
                "enable_multi_layer_eagle": "bool",
                "enable_dsa_cache_layer_split": "bool",
                "cuda_graph_backend_prefill": "str",
                "cuda_graph_config": "str",
                "disable_chunked_prefix_cache": "bool",
                "disable_overlap_schedule": "bool",
                "quantization": "str",
                "mamba_ssm_dtype": "str",
                "linear_attn_backend": "str",
                "linear_attn_prefill_backend": "str",
                "linear_attn_decode_backend": "str",
                "linear_attn_verify_backend": "str",
                "hicache_io_backend": "str",
                # what --enable-kv-cache-sharding refuses beside it (kv-sharding-cache-features)
                "enable_unified_cache_external_linker": "bool",
                "enable_streaming_session": "bool",
                "enable_session_radix_cache": "bool",
                "enable_flexkv": "bool",
                "enable_lmcache": "bool",
                "hicache_storage_backend": "str",
                "hicache_host_memory_mode": "str",
                "hicache_mem_layout": "str",
                "enable_dynamic_chunking": "bool",
                "enable_two_batch_overlap": "bool",
                "enable_multimodal": "bool",
                "prefill_kv_cache_dequant_dtype": "str",
                "qsa_indexer_dtype": "str",  # Qwen4-Exp's QSA indexer (model-qwen4-exp-serving)
                "enable_dp_attention": "bool",
                "dp_size": "int",
                "attn_dp_size": "int",  # 0.5.22+: what `--dp-size N --enable-dp-attention` became
                "chunked_prefill_size": "int",
                # the default mem_fraction_static reads them (rules/knowledge/memory.py SglangMemoryFlags)
                "max_prefill_tokens": "int",
                "max_running_requests": "int",
                "disable_piecewise_cuda_graph": "bool",
                "disable_prefill_cuda_graph": "bool",
                "disable_decode_cuda_graph": "bool",
                # the PD decode host pool (kv-decode-host-pool)
                "disaggregation_decode_retraction_backup": "str",
                "disaggregation_decode_enable_offload_kvcache": "bool",
                "enable_priority_scheduling": "bool",
                "disable_priority_preemption": "bool",
                # what HiSparse refuses beside it (dsa-hisparse-serving)
                "enable_mixed_chunk": "bool",
                "speculative_adaptive": "bool",
                # the unified cache's external linker (kv-external-linker)
                "enable_linker_mla_dedup": "bool",
                "unified_cache_external_linker_backend": "str",
                "hicache_write_policy": "str",  # kv-hicache-buffer-only
                "radix_eviction_policy": "str",  # kv-radix-tlru-config
                "radix_eviction_policy_config": "str",
                "hicache_host_memory_fraction": "float",  # kv-hicache-host-memory-fraction
                "swa_full_tokens_ratio": "float",  # kv-swa-ratio-range
                "swa_prefix_tails": "int",
            }.items()
        },
        # --cuda-graph-max-bs stored under cuda_graph_max_bs to 0.5.13.post1, then under cuda_graph_max_bs_decode
        # (the flag and --cuda-graph-max-bs-decode, 0.5.14+): one value, the decode graphs' largest batch
        **{dest: ("cuda_graph_max_bs", "int") for dest in ("cuda_graph_max_bs", "cuda_graph_max_bs_decode")},
        # the prefill graphs' largest size: piecewise_cuda_graph_max_tokens to 0.5.13.post1, then
        # cuda_graph_max_bs_prefill (--cuda-graph-max-bs-prefill, and --piecewise-cuda-graph-max-tokens to 0.5.19)
        **{
            dest: ("prefill_graph_max_bs", "int")
            for dest in ("piecewise_cuda_graph_max_tokens", "cuda_graph_max_bs_prefill")
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
        # vLLM parses these two with human_readable_int ('32K' = 32768, '25.6k' = 25600): engine/arg_utils.py
        # (0.10.0 :219-223, human_readable_int :1708)
        "max_model_len": ("context_length", "hint"),
        "pipeline_parallel_size": ("pp_size", "int"),
        "gpu_memory_utilization": ("mem_fraction", "float"),
        "data_parallel_size": ("dp_size", "int"),
        # what sizes vLLM's profiled peak and CUDA graphs (rules/knowledge/engine_budget.py)
        "max_num_batched_tokens": ("max_num_batched_tokens", "hint"),
        "max_num_seqs": ("max_num_seqs", "int"),
        "max_cudagraph_capture_size": ("max_cudagraph_capture_size", "int"),
        "enforce_eager": ("enforce_eager", "bool"),
        "nnodes": ("nnodes", "int"),  # the GPUs a TP x PP x DP layout spans (parallel-gpu-count)
        "decode_context_parallel_size": ("vllm_dcp_size", "int"),  # vllm-dcp-gqa-tp
    },
}


# vLLM's --attention-config / -ac JSON (dotted `-ac.backend X` is merged into it): the keys the rules read.
_VLLM_ATTENTION_CONFIG = {
    "backend": ("attention_backend", "str"),
    "flash_attn_version": ("attention_config.flash_attn_version", "int"),
}


_CONFIG_FIELDS = {f for f in Config.__dataclass_fields__} | {"model"}


# What the flags no rule reads mean for attention, by argparse dest, in groups whose names say why (bench/
# flag_classes.py lists every dest of every release with its class and help text). Bearing: it can change the
# attention backend chosen, the KV cache's dtype, layout or size, the page size, heads per rank, the context or the
# kernels run; a pasted command carrying one is judged incomplete (general-unmodelled-flags), never silently. Where
# reading the wheels left a doubt, a flag bears.
UNMODELLED_BEARING_GROUPS: dict[str, dict[str, str]] = {
    "sglang": {
        "model, its config and its revision (heads, layers, context, attention kind)": (
            "config decrypted_config_file decrypted_draft_config_file device forward_hooks "
            "json_model_override_args model_config_parser model_impl multi_item_scoring_delimiter revision"
        ),
        "attention kernels and their options": (
            "dsa_paged_mqa_logits_backend dsa_topk_backend dsa_triton_union "
            "dsv4_prefill_backend enable_amd_monokernel "
            "enable_dsa_fused_indexer enable_fused_qk_norm_rope enable_lean_attention enable_nvidia_megakernel "
            "enable_pdmux enable_return_indexer_topk enable_single_batch_overlap "
            "flashinfer_mla_disable_ragged nsa_decode nsa_decode_backend nsa_prefill nsa_prefill_backend "
            "pdmux_config_path sm_group_num speculative_dsa_topk_backend "
            "tbo_token_distribution_threshold triton_attention_num_kv_splits triton_attention_reduce_in_fp32 "
            "triton_attention_split_tile_size"
        ),
        "sparse attention (double sparsity, hierarchical sparse)": (
            "ds_channel_config_path ds_heavy_channel_num ds_heavy_channel_type ds_heavy_token_num "
            "ds_sparse_decode_threshold enable_double_sparsity "
            "hierarchical_sparse_attention_extra_config hisparse_config"
        ),
        (
            "KV cache size and layout (sliding-window pools, canaries, scales, memory saver, a GPU pool for "
            "multimodal features: serving_hook.py 'reduces KV cache headroom')"
        ): (
            "c128_page_size disable_hybrid_swa_memory enable_decoder_swa_bounded_replay "
            "enable_memory_saver hybrid_kvcache_ratio keep_mm_feature_on_device kv_canary kv_canary_real_data kv_canary_sweep_interval max_total_tokens mm_feature_transport quantization_param_path"
        ),
        "linear attention and Mamba state (backends, state memory)": (
            "enable_gdn_replayssm_spec int8_mamba_ckpt_size mamba_full_memory_ratio mamba_scheduler_strategy max_mamba_cache_size"
        ),
        "diffusion LLMs (block attention)": "dllm_block_size dllm_fdfo",
        (
            "CUDA graphs and torch.compile (the default mem_fraction_static reserves memory for the captured "
            "batch sizes: sglang 0.5.23 arg_groups/memory_hook.py:89-263, :357-399; --cuda-graph-max-bs(-decode), "
            "--cuda-graph-max-bs-prefill, --disable-cuda-graph and the per-phase --disable-*-cuda-graph flags are "
            "modelled)"
        ): (
            "cuda_graph_backend_decode cuda_graph_bs cuda_graph_bs_decode "
            "cuda_graph_bs_prefill cuda_graph_max_seq_len_prefill cuda_graph_prefill_max_context "
            "cuda_graph_tc_compiler debug_cuda_graph debug_tensor_dump_inject debug_tensor_dump_input_file "
            "debug_tensor_dump_output_folder disable_cuda_graph_padding enable_breakable_cuda_graph "
            "enable_piecewise_cuda_graph enable_symm_mem enable_torch_compile enable_torch_compile_debug_mode "
            "enforce_piecewise_cuda_graph msprobe_dump_config piecewise_cuda_graph_compiler "
            "piecewise_cuda_graph_tokens record_nolora_graph"
        ),
        "quantization (weights loaded as another format: --load-format gguf sets quantization)": (
            "load_format modelopt_checkpoint_restore_path modelopt_quant quantize_and_serve "
            "rl_quant_profile speculative_draft_model_quantization torchao_config"
        ),
        "LoRA adapters": (
            "enable_lora experts_shared_outer_loras lora_backend lora_paths lora_target_modules "
            "lora_use_virtual_experts max_lora_chunk_size max_lora_rank max_loras_per_batch uno_lora_path"
        ),
        "speculative decoding": (
            "decoupled_spec_role enable_beta_spec enable_return_aux_hidden_states "
            "enable_return_hidden_states return_aux_hidden_state_layer_ids return_hidden_states_mode "
            "speculative_accept_threshold_acc speculative_accept_threshold_single "
            "speculative_adaptive_config speculative_dflash_block_size "
            "speculative_dflash_draft_window_size speculative_draft_model_revision "
            "speculative_dspark_align_verify_tokens_to_graph_tier "
            "speculative_dspark_block_size speculative_dspark_confidence_sts_path "
            "speculative_dspark_sps_table_path speculative_moe_a2a_backend speculative_ngram_branch_length "
            "speculative_ngram_external_sam_budget speculative_ngram_match_type "
            "speculative_ngram_max_match_window_size speculative_ngram_max_trie_depth "
            "speculative_ngram_min_bfs_breadth speculative_ngram_min_match_window_size "
            "speculative_skip_dp_mlp_sync speculative_use_block_verification"
        ),
        "PD disaggregation (the KV cache moves between servers)": (
            "disaggregation_decode_allocation_policy disaggregation_decode_dp "
            "disaggregation_decode_enable_radix_cache "
            "disaggregation_decode_extra_slots disaggregation_decode_host_receive_threshold "
            "disaggregation_decode_tp "
            "disaggregation_prefill_pp enable_pd_role_switch"
        ),
        "hierarchical cache and KV or weight offload": (
            "cpu_offload_gb enable_paged_experts "
            "flexkv_config_file "
            "hicache_ratio hicache_size "
            "hicache_storage_backend_extra_config hicache_storage_prefetch_policy "
            "hicache_storage_prefetch_retry_max_attempts hicache_storage_prefetch_retry_poll_interval "
            "kt_amx_method kt_amx_weight_path kt_cpuinfer kt_max_deferred_experts_per_token "
            "kt_method kt_num_gpu_experts kt_threadpool_count kt_weight_path lmcache_config_file "
            "offload_group_size offload_mode offload_num_in_group offload_prefetch_step "
            "paged_experts_num_resident ple_offload_backend ple_offload_dir ple_offload_embedding "
            "unified_cache_external_linker_config "
            "weight_cache_mode"
        ),
        "data, expert, pipeline and context parallelism (attention TP, weights per GPU)": (
            "attention_context_parallel_size boundary_reduction "
            "deepep_mode disable_attn_tp_gather dwdp_size elastic_ep_initial_size "
            "enable_attn_tp_input_scattered enable_deepep_moe enable_deepep_waterfill "
            "enable_dense_mlp_attn_tp enable_ep_moe enable_eplb "
            "enable_expert_distribution_metrics enable_layernorm_sp enable_nsa_prefill_context_parallel "
            "enable_scattered_sconv enable_shared_experts_attn_tp enable_waterfill "
            "ep_num_redundant_experts ep_size expert_distribution_recorder_mode expert_parallel_size max_ep_size "
            "max_micro_batch_size moe_a2a_backend moe_data_parallel_size moe_dense_tp_size "
            "moe_dp_size nsa_prefill_cp_mode pp_async_batch_depth pp_max_micro_batch_size "
            "shared_experts_tp_size"
        ),
    },
    "vllm": {
        "model, its config, architecture overrides and runner (heads, layers, context, attention kind)": (
            "additional_config aux_output_config code_revision config config_format convert device_ids "
            "diffusion_config disable_sliding_window engram_config hf_config_path hf_overrides "
            "model_class_overrides model_impl override_attention_dtype override_neuron_config "
            "override_pooler_config pooler_config revision rope_scaling rope_theta runner scheduler_cls task "
            "worker_cls worker_extension_cls"
        ),
        "attention and its kernels (--attention-config keys other than backend / flash_attn_version)": (
            "attention_config dbo_decode_token_threshold dbo_prefill_token_threshold disable_cascade_attn "
            "enable_dbo enable_hc_sp gdn_prefill_backend ir_op_priority kda_decode_backend kda_prefill_backend "
            "kernel_config mm_encoder_attn_backend mm_encoder_attn_dtype mm_encoder_fp8_scale_path monokernel "
            "sparse_indexer_topk_backend ubatch_size"
        ),
        (
            "KV cache size and layout, prefix caching, GPU memory taken outside the KV budget (async "
            "scheduling doubles the in-flight tokens a sliding-window or chunked-local layer holds: vllm "
            "0.33.0 config/vllm.py:587-609, v1/kv_cache_interface.py:918-940)"
        ): (
            "async_scheduling disable_hybrid_kv_cache_manager enable_prefix_caching enable_sleep_mode "
            "kv_cache_dtype_skip_layers kv_cache_memory_bytes kv_sharing_fast_prefill language_model_only "
            "mm_encoder_only mm_ipc_gpu_memory_gb mm_processor_device num_gpu_blocks_override "
            "prefix_cache_retention_interval prefix_match_unit skip_mm_profiling swa_bounded_replay"
        ),
        (
            "Mamba state and its kernels (--max-num-seqs is read for the memory figures; against a hybrid model's "
            "Mamba cache blocks it is listed as not judged: general.py _read_not_judged)"
        ): (
            "enable_mamba_cache_stochastic_rounding enable_mamba_fine_grained_prefix_cache "
            "enable_mamba_shared_prefix_checkpoint mamba_backend mamba_block_size mamba_cache_dtype "
            "mamba_cache_mode mamba_cache_philox_rounds mamba_ssm_cache_dtype mamba_ssu_algorithm "
            "replayssm_buffer_len use_replayssm"
        ),
        "CUDA graphs and torch.compile": (
            "compilation_config cuda_graph_sizes cudagraph_capture_sizes max_seq_len_to_capture optimization_level"
        ),
        "chunked prefill and the token budget": (
            "disable_chunked_mm_input enable_chunked_prefill max_num_scheduled_tokens "
            "num_scheduler_steps performance_mode"
        ),
        "quantization": "quantization_config",
        "LoRA adapters": (
            "default_mm_loras enable_lora enable_lora_bias enable_mixed_moe_lora_format enable_moe_shared_loras "
            "enable_tower_connector_lora fully_sharded_loras lora_dtype lora_extra_vocab_size lora_modules "
            "lora_target_modules max_lora_cls_labels max_lora_rank max_loras specialize_active_lora"
        ),
        "speculative decoding": "num_lookahead_slots spec_method spec_model spec_tokens",
        "KV transfer (disaggregation), KV offload, weight offload": (
            "cpu_offload_gb cpu_offload_params ec_manager_config ec_transfer_config kv_offloading_backend "
            "kv_offloading_size kv_transfer_config offload_backend offload_group_size offload_num_in_group "
            "offload_params offload_prefetch_step"
        ),
        "data, expert and context parallelism (attention TP, weights per GPU)": (
            "all2all_backend cp_kv_cache_interleave_size data_parallel_size_local dcp_comm_backend "
            "dcp_kv_cache_interleave_size dcp_q_replicate elastic_ep_max_dp_size "
            "enable_elastic_ep enable_eplb enable_expert_parallel enable_multimodal_encoder_data_parallel "
            "eplb_config mm_encoder_tp_mode num_redundant_experts prefill_context_parallel_size"
        ),
    },
}


# Bearing flags of everyday launch lines (the engines' own recipes carry them) whose effect on attention the rules
# bound without reading them: listed as not judged, never a warning of general-unmodelled-flags (so --strict does
# not fail an official recipe). Each says why; `model_bound` names the model kind for which it does matter (then
# it warns again).
ROUTINE_BEARING: dict[str, dict[str, tuple[str, str]]] = {
    "vllm": {
        "enable_chunked_prefill": ("prefill split into chunks: the same attention kernels, smaller calls", ""),
        "enable_prefix_caching": ("whether KV blocks are shared between requests: not their dtype or layout", ""),
        "enable_expert_parallel": ("MoE experts placed by EP: attention layers keep their TP split", ""),
        "enable_eplb": ("MoE expert load balancing: attention untouched", ""),
        "async_scheduling": (
            "overlaps scheduling with the forward pass; a sliding-window layer holds more in-flight tokens, which "
            "the KV figures bound",
            "",
        ),
        "language_model_only": ("skips the vision encoder: its attention backend is then not built", ""),
        "mm_encoder_tp_mode": ("how the vision encoder is split: its own attention, not the language model's", ""),
    },
    "sglang": {
        "ep_size": ("MoE experts placed by EP: attention layers keep their TP split", ""),
        "expert_parallel_size": ("MoE experts placed by EP: attention layers keep their TP split", ""),
        "enable_ep_moe": ("MoE experts placed by EP: attention layers keep their TP split", ""),
        "enable_eplb": ("MoE expert load balancing: attention untouched", ""),
    },
}


def routine_flags(engine: str, written: Sequence[str], model: Any = None) -> list[str]:
    """The options of `written` (as a pasted command gave them) that are routine for `engine` (ROUTINE_BEARING), the
    model kind a flag matters for excepted."""
    table = flag_kb.flag_table(engine)
    routine = ROUTINE_BEARING.get(engine, {})
    out = []
    for option in written:
        spec = table.options.get(option.split("=", 1)[0])
        entry = routine.get(spec.dest) if spec is not None else None
        if entry is not None and not (entry[1] and model is not None and getattr(model, entry[1], False)):
            out.append(option)
    return out


# Not bearing: reading the wheels' code (server_args.py and arg_groups/*_hook.py, vllm/config/*.py) shows it
# cannot change any of these. A dest in neither set is reported with the unmodelled ones: never dropped silently.
NOT_BEARING_GROUPS: dict[str, dict[str, str]] = {
    "sglang": {
        "HTTP and gRPC server, API, request and response handling": (
            "admin_api_key allow_auto_truncate allowed_media_domains api_key asr_max_buffer_seconds "
            "asr_max_concurrent_sessions batch_notify_size custom_sigquit_handler enable_cache_report "
            "enable_http2 enable_http_worker_reuseport enable_response_store enable_ssl_refresh fastapi_root_path "
            "file_storage_path gated_launch_port grpc_http_sidecar_port grpc_mode grpc_port "
            "grpc_response_timeout_secs host http2_initial_connection_window_size http2_max_concurrent_streams "
            "incremental_streaming_output media_url_max_file_size_mb port return_input_ids return_output_ids "
            "served_model_name sidecar sidecar_args skip_server_warmup smg_grpc_mode smg_http_sidecar_port "
            "soft_watchdog_timeout ssl_ca_certs ssl_certfile ssl_keyfile ssl_keyfile_password stream_interval "
            "stream_output stream_response_default_include_usage uvicorn_access_log_exclude_prefixes warmups "
            "watchdog_timeout weight_version"
        ),
        "logging, metrics, tracing, profiling, crash dumps": (
            "bucket_e2e_request_latency bucket_inter_token_latency bucket_time_to_first_token "
            "collect_tokens_histogram crash_dump_folder debug_tensor_dump_layers debug_tensor_dump_prefill_only "
            "decode_log_interval enable_forward_pass_metrics enable_layerwise_nvtx_marker enable_metrics "
            "enable_metrics_for_all_schedulers enable_mfu_metrics enable_profile_cuda_graph "
            "enable_request_time_stats_logging enable_return_routed_experts enable_trace "
            "expert_balancedness_report_mode expert_distribution_recorder_buffer_size export_metrics_to_file "
            "export_metrics_to_file_dir extra_metric_labels forward_pass_metrics_ipc_name "
            "forward_pass_metrics_worker_id gc_threshold gc_warning_threshold_secs generation_tokens_buckets "
            "kv_events_config load_publish_endpoint load_snapshot_publish_interval load_watch_interval log_level "
            "log_level_http log_requests log_requests_format log_requests_level log_requests_target "
            "oltp_traces_endpoint otlp_service_name otlp_traces_endpoint prompt_tokens_buckets show_time_cost "
            "spec_trace_dir tokenizer_metrics_allowed_custom_labels tokenizer_metrics_custom_labels_header "
            "trace_modules"
        ),
        "tokenizer, chat template, tool and reasoning parsing": (
            "chat_template completion_template default_chat_template_kwargs detokenizer_worker_num "
            "disable_tokenizer_batch_decode dynamic_batch_tokenizer_batch_size "
            "dynamic_batch_tokenizer_batch_timeout enable_dynamic_batch_tokenizer enable_strict_thinking "
            "enable_tokenizer_batch_encode hf_chat_template_name reasoning_parser skip_tokenizer_init "
            "tokenizer_backend tokenizer_mode tokenizer_path tokenizer_worker_num tool_call_parser tool_server "
            "trust_remote_code trust_request_chat_template"
        ),
        "multimodal input preprocessing and transport (the encoder's attention is --mm-attention-backend)": (
            "disable_fast_image_processor enable_adaptive_dispatch_to_encoder "
            "enable_mm_global_cache enable_precise_embedding_interpolation "
            "encoder_bootstrap_port encoder_register_urls encoder_transfer_backend encoder_urls "
            "image_processor_backend limit_mm_data_per_request mm_global_cache_backend mm_io_worker_num "
            "mm_max_concurrent_calls mm_per_request_timeout mm_preprocess_cache_size_mb mm_process_config "
            "mm_processor_worker_num trust_mm_content_hashes"
        ),
        "sampling, grammar and output post-processing": (
            "constrained_json_disable_any_whitespace constrained_json_max_whitespace_cnt "
            "constrained_json_whitespace_pattern crash_on_nan disable_outlines_disk_cache "
            "enable_custom_logit_processor enable_fp32_lm_head enable_nan_detection enable_watermark "
            "grammar_backend mlx_enable_sampling preferred_sampling_params random_seed sampling_backend "
            "sampling_defaults sampling_mask_max_tokens speculative_domino_candidate_pool_size watermark_config"
        ),
        "weight download and loading, checkpoints, weight sync for RL": (
            "checkpoint_engine_wait_weights_before_ready custom_weight_loader delete_ckpt_after_loading "
            "download_dir enable_draft_weights_cpu_backup enable_weights_cpu_backup model_checksum "
            "model_loader_extra_config modelexpress_config modelopt_checkpoint_save_path modelopt_export_path "
            "remote_instance_weight_loader_backend remote_instance_weight_loader_seed_instance_ip "
            "remote_instance_weight_loader_seed_instance_service_port "
            "remote_instance_weight_loader_send_weights_group_ports "
            "remote_instance_weight_loader_start_seed_via_transfer_engine speculative_draft_load_format "
            "speculative_token_map startup_weight_load_mode weight_cache_socket weight_cache_timeout "
            "weight_loader_disable_mmap weight_loader_drop_cache_after_load weight_loader_prefetch_checkpoints "
            "weight_loader_prefetch_num_threads"
        ),
        "request scheduling, admission, priorities and cache eviction order": (
            "abort_on_priority_when_disabled default_priority_value "
            "enable_dp_attention_local_control_broadcast enable_prefill_delayer "
            "load_balance_method max_queued_requests "
            "min_free_slots_delay num_continuous_decode_steps num_reserved_decode_tokens prefill_decode_interval "
            "prefill_decode_interval_min_bs prefill_delayer_forward_passes_buckets prefill_delayer_max_delay_ms "
            "prefill_delayer_max_delay_passes prefill_delayer_queue_min_ratio "
            "prefill_delayer_token_usage_low_watermark prefill_delayer_wait_seconds_buckets prefill_max_requests "
            "prefill_round_robin_balance priority_scheduling_preemption_threshold "
            "retraction_policy schedule_conservativeness "
            "schedule_low_priority_values_first schedule_policy scheduler_recv_interval sleep_on_idle "
            "speculative_ngram_capacity speculative_ngram_external_corpus_max_tokens "
            "speculative_ngram_external_corpus_path strip_thinking_cache"
        ),
        ("processes, GPUs ids, NUMA, rendezvous and bootstrap addresses, collectives other than attention's"): (
            "base_gpu_id decoupled_spec_bind_endpoint decoupled_spec_connect_endpoints decoupled_spec_rank "
            "disable_aiter_allreduce_fusion_in_decode disable_aiter_allreduce_fusion_in_prefill "
            "disable_custom_all_reduce disable_hicache_numa_detect disaggregation_bootstrap_port "
            "disaggregation_decode_enable_fake_auto disaggregation_decode_polling_interval "
            "disaggregation_enable_kv_checksum disaggregation_ib_device dist_init_addr dist_timeout "
            "enable_aiter_allreduce_fusion enable_flashinfer_allreduce_fusion enable_mscclpp enable_nccl_nvls "
            "enable_p2p_check enable_quant_communications enable_torch_symm_mem "
            "enforce_disable_flashinfer_allreduce_fusion engine_info_bootstrap_port "
            "flashinfer_allreduce_fusion_backend gpu_id_step mooncake_ib_device nccl_port node_rank "
            "numa_node optimistic_prefill_attempts optimistic_prefill_retries pdlb_url pre_warm_nccl use_ray"
        ),
        ("MoE expert kernels, routing and placement, GEMM kernels (the expert and data parallel sizes bear)"): (
            "bf16_gemm_backend deepep_config deepep_dispatcher_output_dtype deepep_v2_mode "
            "disable_flashinfer_autotune disable_flashinfer_cutlass_moe_fp4_allgather "
            "disable_shared_experts_fusion elastic_ep_backend elastic_ep_rejoin elastic_ep_scale_timeout "
            "enable_cudagraph_gc enable_dp_lm_head enable_elastic_expert_backup enable_flashinfer_autotune "
            "enable_flashinfer_cutedsl_moe enable_flashinfer_cutlass_moe enable_flashinfer_mxfp4_moe "
            "enable_flashinfer_trtllm_moe enable_fused_moe_sum_all_reduce enable_megamoe_for_layernorm_sp "
            "enable_tf32_matmul enable_tp_lm_head_all_to_all enable_triton_kernel_moe enable_w4a4_mxfp4_megamoe "
            "enforce_shared_experts_fusion ep_dispatch_algorithm ep_join_mode ep_join_rank_offset eplb_algorithm "
            "eplb_min_rebalancing_utilization_threshold eplb_rebalance_layers_per_chunk "
            "eplb_rebalance_num_iterations flashinfer_a2a_dispatch_type flashinfer_autotune_skip_ops "
            "flashinfer_mxfp4_moe_precision fp4_gemm_runner_backend fp8_gemm_runner_backend fuseep_mode "
            "init_expert_location moe_runner_backend speculative_enable_w4a4_mxfp4_megamoe "
            "speculative_moe_runner_backend torch_compile_max_bs"
        ),
        "LoRA adapter pool management (the adapters and their shapes bear)": (
            "enable_lora_overlap_loading lora_drain_wait_threshold lora_eviction_policy lora_strict_loading "
            "max_loaded_loras"
        ),
    },
    "vllm": {
        "HTTP server, API, request and response handling": (
            "allow_credentials allowed_headers allowed_methods allowed_origins anthropic_disabled_thinking_effort "
            "api_key api_server_count cohere_format cohere_is_reasoning_model disable_fastapi_docs "
            "disable_frontend_multiprocessing enable_force_include_usage enable_mm_embeds enable_offline_docs "
            "enable_prompt_adapter enable_prompt_embeds enable_prompt_tokens_details enable_request_id_headers "
            "enable_scale_out enable_server_load_tracking enable_ssl_refresh enable_tokenizer_info_endpoint "
            "fingerprint_mode fingerprint_value grpc grpc_port h11_max_header_count h11_max_incomplete_event_size "
            "headless host io_processor_plugin middleware per_request_spec_decode_metrics port "
            "reasoning_effort_map renderer_num_workers response_role return_tokens_as_token_ids root_path "
            "served_model_name shutdown_timeout sse_keep_alive_interval ssl_ca_certs ssl_cert_reqs ssl_certfile "
            "ssl_ciphers ssl_keyfile stream_interval tokens_only uds"
        ),
        "logging, metrics, tracing, profiling": (
            "aggregate_engine_logging collect_detailed_traces cudagraph_metrics custom_histogram_buckets "
            "disable_access_log_for_endpoints disable_log_requests disable_log_stats disable_uvicorn_access_log "
            "enable_layerwise_nvtx_tracing enable_log_deltas enable_log_outputs enable_log_requests "
            "enable_logging_iteration_details enable_mfu_metrics enable_per_request_metrics "
            "enable_return_routed_experts eplb_log_balancedness jit_monitor_mode jit_monitor_verbose "
            "kv_cache_metrics kv_cache_metrics_sample kv_events_config log_config_file log_error_stack log_level "
            "logging_config max_log_len otlp_traces_endpoint profiler_config ray_workers_use_nsight "
            "show_hidden_metrics_for_version uvicorn_log_level watchdog_config"
        ),
        "tokenizer, chat template, tool and reasoning parsing": (
            "chat_template chat_template_content_format default_chat_template_kwargs enable_auto_tool_choice "
            "exclude_tools_when_tool_choice_none reasoning_config reasoning_parser reasoning_parser_plugin "
            "skip_tokenizer_init tokenizer tokenizer_mode tokenizer_revision tool_call_parser tool_parser_plugin "
            "tool_server tool_strict_level trust_remote_code trust_request_chat_template"
        ),
        ("multimodal input preprocessing and transport (the encoder's attention is --mm-encoder-attn-backend)"): (
            "allowed_local_media_path allowed_media_domains disable_mm_preprocessor_cache enable_shm_tensor_arena "
            "interleave_mm_strings limit_mm_per_prompt media_io_kwargs mm_device_do_normalize "
            "mm_encoder_fp8_scale_save_margin mm_encoder_fp8_scale_save_path mm_hasher_algorithm "
            "mm_processor_cache_gb mm_processor_cache_type mm_processor_kwargs mm_shm_cache_max_object_size_mb "
            "mm_tensor_ipc trust_request_mm_kwargs video_pruning_method video_pruning_rate"
        ),
        "sampling, structured output and output post-processing": (
            "disable_async_output_proc enable_batch_sharded_sampling enable_flash_late_interaction "
            "enable_trace_replay generation_config guided_decoding_backend "
            "guided_decoding_disable_additional_properties guided_decoding_disable_any_whitespace "
            "guided_decoding_disable_fallback logits_processor_pattern logits_processors logprobs_mode "
            "max_logprobs multi_step_stream_outputs override_generation_config return_sampling_mask seed "
            "structured_outputs_config use_fp64_gumbel use_gpu_for_pooling_score watermark_config"
        ),
        "weight download and loading, weight sync for RL": (
            "allow_deprecated_quantization download_dir enable_ep_weight_filter hf_token ignore_patterns "
            "load_format max_parallel_loading_workers model_loader_extra_config pt_load_map_location "
            "safetensors_load_strategy safetensors_prefetch_block_size safetensors_prefetch_num_threads "
            "use_tqdm_on_load weight_transfer_config"
        ),
        "request scheduling, admission and preemption": (
            "long_prefill_token_threshold long_prefill_token_threshold_adaptive max_long_partial_prefills "
            "max_num_active_seqs max_num_partial_prefills max_num_queued_reqs max_num_queued_tokens "
            "preemption_mode prefill_schedule_interval prefix_caching_hash_algo scheduler_delay_factor "
            "scheduler_reserve_full_isl scheduling_policy swap_space watermark"
        ),
        "processes, GPU placement, NUMA, rendezvous, collectives other than attention's, fault tolerance": (
            "cpu_distributed_timeout_seconds data_parallel_address data_parallel_backend "
            "data_parallel_external_lb data_parallel_hybrid_lb data_parallel_multi_port_external_lb "
            "data_parallel_rank data_parallel_rpc_port data_parallel_start_rank data_parallel_supervisor_port "
            "disable_custom_all_reduce disable_nccl_for_dp_synchronization distributed_executor_backend "
            "distributed_timeout_seconds dp_supervisor_probe_failure_threshold dp_supervisor_probe_interval_s "
            "dp_supervisor_probe_timeout_s dp_sync_interval enable_cumem_allocator enable_fault_tolerance "
            "enable_nccl_comm_suspend fail_on_environ_validation fault_tolerance_config master_addr master_port "
            "node_rank numa_bind numa_bind_cpus numa_bind_nodes"
        ),
        "sleep mode's state handling (sleep mode itself bears)": "sleep_mode_backend sleep_mode_offload_cudagraph sleep_preserve_parameter_names",
        "MoE expert kernels and placement, GEMM kernels (the expert and data parallel sizes bear)": (
            "enable_bf16x3_router_gemm enable_flashinfer_autotune eplb_step_interval eplb_window_size "
            "expert_placement_strategy linear_backend moe_backend"
        ),
        "LoRA adapters kept in CPU memory (the adapters and their shapes bear)": "max_cpu_loras",
    },
}


def _dests(groups: dict[str, dict[str, str]]) -> dict[str, frozenset[str]]:
    return {engine: frozenset(" ".join(by_reason.values()).split()) for engine, by_reason in groups.items()}


UNMODELLED_BEARING_FLAGS = _dests(UNMODELLED_BEARING_GROUPS)


NOT_BEARING_FLAGS = _dests(NOT_BEARING_GROUPS)


ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


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
            nested: Any = jsontext.loads(value_text)
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


_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kmgKMG])")
_HUMAN_MULTIPLIERS = {"k": 10**3, "m": 10**6, "g": 10**9, "K": 2**10, "M": 2**20, "G": 2**30}


def _human_readable_int(flag: str, value: str) -> int:
    """vLLM's human_readable_int: '1k' 1000, '1K' 1024, '25.6k' 25600; no decimals with a binary multiplier."""
    match = _HUMAN_INT.fullmatch(value.strip())
    if match is None:
        return int(value)
    number, suffix = match.groups()
    if suffix.isupper() and "." in number:
        raise ValueError(value)
    return int(float(number) * _HUMAN_MULTIPLIERS[suffix])


def _convert(flag: str, kind: str, value: Any) -> Any:
    if kind == "bool":
        return value if isinstance(value, bool) else True
    if isinstance(value, list):
        value = " ".join(value)
    if kind == "hint":
        try:
            return _human_readable_int(flag, str(value))
        except ValueError:
            raise RulesInputError(f"{flag} in the pasted command: expected an integer, got {value!r}") from None
    if kind in ("int", "float"):
        try:
            return int(value) if kind == "int" else float(value)
        except ValueError:
            expected = "an integer" if kind == "int" else "a number"
            raise RulesInputError(f"{flag} in the pasted command: expected {expected}, got {value!r}") from None
    if kind == "str" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # a JSON number where a name is read (--attention-config.backend 0): judged as the name
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
        config = jsontext.loads(text)
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


class _ModelledFlags(Mapping[str, tuple[str, str]]):
    """The flags the rules model, by any spelling the engine's newest release accepts (an option string, an
    alias, a unique prefix such as --tp), and by the exact option string of one only an older release has (read
    as _read reads it: --nsa-prefill-cp-mode): spelling -> (Config field or flags key, "str" | "int" | "bool")."""

    def __init__(self, engine: str):
        self._modelled = _MODELLED[engine]
        self._table = flag_kb.flag_table(engine)
        self._options = {
            option: self._modelled[spec.dest]
            for option, spec in self._table.options.items()
            if spec.dest in self._modelled
        }
        self._older = {
            option: self._modelled[spec.dest]
            for option, spec in flag_kb.any_release(engine).items()
            if option not in self._table.options and spec.dest in self._modelled
        }

    def __getitem__(self, flag: str) -> tuple[str, str]:
        if flag in self._options:
            return self._options[flag]
        if flag in self._older:
            return self._older[flag]
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


@functools.cache  # read-only, and asked for by every fix the corrected-command search tries
def flag_table(engine: str) -> Mapping[str, tuple[str, str]]:
    """The engine's modelled flags: flag spelling -> (Config field or flags key, "str" | "int" | "bool")."""
    return _ModelledFlags(engine)


def superseded_env(engine: str, dest: str) -> Optional[str]:
    """The environment variable a flag (by dest) takes the choice over from, if any."""
    if engine != "vllm":
        return None
    from attn_preflight.rules.engines.vllm import capabilities as vllm_backends

    # vllm: AttentionConfig replaced the variables in 0.13
    return {
        "attention_backend": vllm_backends.ENV_BACKEND,
        "attention_config.flash_attn_version": vllm_backends.ENV_FA_VERSION,
    }.get(dest)


def setting(option: str, value: str) -> str:
    """The fix that sets `option` to `value`: `--flag value`, or `NAME=value` for an environment variable (how
    vLLM before 0.13 names its backend: vllm_backends.backend_option)."""
    return f"{option} {shlex.quote(value)}" if option.startswith("-") else f"{option}={shlex.quote(value)}"


@functools.lru_cache(maxsize=1024)
def fix_words(fix: str) -> Optional[tuple[str, ...]]:
    """A fix split as a shell splits it (None when it is not valid shell words); the corrected-command search splits
    the same few fixes hundreds of times."""
    try:
        return tuple(shlex.split(fix))
    except ValueError:
        return None


def apply_flags(config: Config, fix: str) -> Optional[Config]:
    """`config` with a fix applied: its flags (e.g. "--attention-backend fa3", "--page-size 64"), read with the
    engine's own flag table, after any environment assignments that lead it ("VLLM_ATTENTION_BACKEND=FLASH_ATTN",
    read as parse_command reads a prefix); the flags join the options the release check judges. None when the
    fix is not flags of the config (an install command, a download, a model directory), which cannot be
    re-checked against it."""
    split = fix_words(fix)
    if split is None:
        return None
    words = list(split)
    if words[:1] == ["unset"]:
        return _unset(config, words[1:])
    assigned: dict[str, str] = {}
    while words and ENV_ASSIGNMENT.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        if not key.startswith(ENV_PREFIXES):
            return None
        assigned[key] = value
    try:
        values, read, unmodelled, ignored, given = read_flags(config.engine, words)
    except ValueError:  # read_flags' RulesInputError: a flag without its value
        return None
    if unmodelled or ignored or "model" in values:
        return None
    kept_options = config.options
    named = None
    if config.engine == "vllm":
        from attn_preflight.rules.engines.vllm import capabilities as vllm_backends  # loaded for vLLM configs only

        named = assigned.get(vllm_backends.ENV_BACKEND)
    if named and "attention_backend" not in values:
        # the variable names the backend, as parse_command reads it; the flag it stands for goes with it
        values["attention_backend"] = named
        kept_options = tuple(o for o in kept_options if not _names_backend(config.engine, o))
    for dest, value in values.items():
        if dest.endswith("attention_backend"):
            values[dest] = engine_backends.canonical(config.engine, value)
            if values[dest] is None:
                return None
    flags = {**config.flags, **read}
    if not values and not assigned and flags == dict(config.flags):
        return None
    # A fix's flag takes the choice over from the environment variable it supersedes (the fix is the whole change).
    superseded = {superseded_env(config.engine, d) for d in [*values, *read]} - set(assigned)
    env = {k: v for k, v in config.env.items() if k not in superseded} | assigned
    options = kept_options + tuple(o for o in given if o not in kept_options)
    if "attention_backend" in values:  # one backend for every phase, as the flag means
        config = config.with_backend(values.pop("attention_backend"))
    return replace(config, flags=flags, env=env, options=options, **values)


def _names_backend(engine: str, option: str) -> bool:
    """Whether an option as the parser is given it is the engine's --attention-backend (any spelling)."""
    return flag_table(engine).get(option.partition("=")[0], ("",))[0] == "attention_backend"


def _unset(config: Config, names: Sequence[str]) -> Optional[Config]:
    """`config` with the fix `unset NAME…`: the variables gone, and on vLLM the backend VLLM_ATTENTION_BACKEND
    named with them unless the flag names it (parse_command reads the variable only without the flag)."""
    from attn_preflight.rules.engines.vllm import capabilities as vllm_backends

    if not names or not all(name.startswith(ENV_PREFIXES) for name in names):
        return None
    env = {k: v for k, v in config.env.items() if k not in names}
    named_by_env = (
        config.engine == "vllm"
        and vllm_backends.ENV_BACKEND in names
        and vllm_backends.ENV_BACKEND in config.env
        and not any(_names_backend(config.engine, o) for o in config.options)
    )
    config = replace(config, env=env)
    return config.with_backend(None) if named_by_env else config
