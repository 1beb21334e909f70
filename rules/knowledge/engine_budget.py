"""What each engine subtracts before its KV cache, per release, each term with its source (issue 22). Pure.

vLLM (v1/worker/gpu_worker.py determine_available_memory; read in the 0.10.0, 0.11.2, 0.15.1 and 0.33.0 wheels):
    KV = torch's total x --gpu-memory-utilization - weights - the profiled peak - non-torch memory
         [- the CUDA-graph estimate, from 0.20.0] [- the rotary cos/sin cache]
  * torch's total is NVML's total less the driver's reservation (0.60 GiB on an H200,
    ../shared/research/h200-memory.md; 0.4-0.75 GiB on the other GPUs whose logs show both).
  * the profiled peak is gpu_model_runner.profile_run: a dummy forward of max_num_batched_tokens tokens, then
    _dummy_sampler_run: logits for min(max_num_batched_tokens, max_num_seqs) dummy requests over the whole
    vocabulary (gathered on every TP rank) through top-k / top-p. The sampler dominates for large vocabularies:
    38.0 bytes per logits element on the PyTorch-native path (measured on the H200,
    bench/results/memory-terms-h200.json), 12.4 on FlashInfer's (fitted to three vLLM 0.10.1.1 logs that name
    FlashInfer sampling, tests/fixtures/memory_logs.json).
  * which sampler runs is per release (v1/sample/ops/topk_topp_sampler.py): 0.10.x-0.11.0 FlashInfer's when
    flashinfer-python is installed (not a dependency of the 0.10.0 wheel), 0.11.1-0.19.x PyTorch-native unless
    VLLM_USE_FLASHINFER_SAMPLER=1 (vllm#26859; 0.11.2, 0.15.1, 0.17.0 and 0.19.0 read; vLLM 0.19.0's own logs say
    'FlashInfer top-p/top-k sampling is available but disabled by default'), FlashInfer's by default after that
    (vllm#40376, opened 2026-04-20 after 0.19.0; 0.33.0 read, envs.py VLLM_USE_FLASHINFER_SAMPLER default True;
    a vLLM 0.24.0 guide turns it off because it JIT-compiles at boot). 0.20.0-0.23.x are not read: either.
  * the native path's footprint changed in 0.17.0: top-k / top-p of 8 rows or more goes through a Triton kernel
    (apply_top_k_top_p_triton, 0.17.0 and 0.19.0 read) instead of sorting the whole vocabulary. 15.3 bytes per
    logits element, fitted to the profiled peaks vLLM 0.17.0 and 0.19.0 log on an H100 (Llama-3.1-8B 15.45,
    Qwen3-8B 15.25, Qwen2.5-7B 15.24, Gemma-2-9B 14.9, Gemma-2-27B 15.0, Qwen3-14B 15.4; llm-d-planner
    accuracy/results at d3121e05), against 38.9 for the same Qwen3-14B run on 0.16.0.
  * max_num_batched_tokens / max_num_seqs default (engine/arg_utils.py get_batch_defaults, API server): 8192 /
    1024 on GPUs whose torch total is at least 70 GiB and that are not A100s, else 2048 / 256; 0.33.0 adds
    16384 / 1024 at 160 GiB and keeps GB10 on the small tier.
  * non-torch memory (cuBLAS workspace, NCCL): ~0.10 GiB at TP 1 in vLLM 0.10.1.1-0.17.0 (0.11 GiB logged; 0.13
    in the 0.16.0 and 0.17.0 sweep runs), 0.25 GiB from 0.19.0 (0.24-0.27 in the 0.19.0 H100 logs). At TP > 1
    ~0.25 GiB where NCCL has no NVLink SHARP (0.21-0.28 GiB: A100 without P2P, PCIe L40S, one-GPU Ray nodes,
    vLLM 0.10.1.1-0.10.2), but 2.07-2.21 GiB on an NVSwitch H100 node at TP 2 and 4 (0.19.0: the work set's
    Llama-3.1-8B TP 4, Qwen2.5-7B TP 4, Qwen2.5-72B TP 2, Llama-4-Scout TP 4, gpt-oss-20b TP 2, and five runs of
    the same sweep that are not cases; llm-d-planner accuracy/results/v0.19.0/logs), taken
    as 2.1 GiB on the Hopper and Blackwell NVSwitch products (NCCL's NVLS buffers, the attribution); 0.07 GiB
    on a pipeline stage of TP 1 (0.19.0, PP 2 and 4).
  * CUDA graphs (vllm_cudagraph_gib): gpu_model_runner.profile_cudagraph_memory (0.19.0 :5862-5961) captures the
    largest two sizes of each mode and estimates first capture + (n - 1) x the second's cost per mode (FULL and
    PIECEWISE share one pool: the larger first capture counts once). The estimate is subtracted from 0.20.0, whose
    envs.py makes VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default to 1 (0.19.0 envs.py:1654 defaults it to 0:
    estimated and logged, not subtracted; the 0.20.0 message says 'default since v0.21.0', its code is 0.20.0's).
    Capture sizes (config/vllm.py _set_cudagraph_sizes, 0.14.1 :1068-1160, 0.19.0 :1343): 1, 2, 4, then every 8
    below 256, then every 16, up to --max-cudagraph-capture-size, default min(2 x max_num_seqs x (1 + speculative
    tokens), 512), never past max_num_batched_tokens; gpt-oss raises the default to 1024 (model_executor/models/
    config.py GptOssForCausalLMConfig, 0.11.2 :261-273, 0.19.0 :120-130; the 0.10.1 log of vllm#23278 prints it
    too). 0.10.x: every 8 from 8 (config/__init__.py:3768-3774, cuda_graph_sizes [min(2 x max_num_seqs, 512)]),
    PIECEWISE only (:3554-3560); FULL_AND_PIECEWISE from 0.11.0 (config/__init__.py:358-366), its FULL decode
    graphs for the sizes up to max_num_seqs. The bytes are the v0.19.0 logs' own estimates on an H100
    (llm-d-planner accuracy/results/v0.19.0/logs, 'Estimated PIECEWISE/FULL CUDA graph memory', work-set models
    only): the first capture 98-266 MiB (522 for the MLA DeepSeek-V2-Lite); each further graph grows with the
    layers it replays, ~0.25 MiB a layer PIECEWISE (Qwen2.5-7B's 28 layers 4 MiB, Llama-3.1-8B's 32 6, Gemma-2-27B's
    46 10, the 80 of Llama-3.3-70B / Qwen2.5-72B at TP 2 18-20) and ~0.17 FULL (4, 6, 8, 10-14), at least 4 MiB
    each: taken as 0.25 GiB + (0.25 + 0.17) MiB x layers per further size. Against the logs' estimates (0.52-1.92
    GiB) within ~0.3 GiB; the captures themselves took up to 0.54 GiB more (gpt-oss-20b: 1.84 actual, 1.30
    estimated).
  * after the KV cache is sized (gpu_worker.compile_or_warm_up_model, 0.19.0 :550-680): the CUDA graphs are
    captured and then the sampler is warmed up with min(max_num_seqs, max_num_batched_tokens) dummy requests,
    in what the utilisation leaves outside the budget (total x (1 - utilisation) less the CUDA context) besides
    the freed profiling peak. Before 0.20.0 the graphs are not in the budget; the two gpt-oss-20b starts at 0.95
    on an H100 died there ('CUDA out of memory occurred when warming up sampler with 1024 dummy requests', with
    1.6-1.8 GiB reserved by PyTorch but unallocated: the freed peak is not reliably reusable). `warmup` and
    `room_gib` carry it.

SGLang (model_executor/model_runner.py profile_max_num_token, 0.5.x):
    KV = free memory per GPU after distributed init x --mem-fraction-static - weights
  * the free memory at init is NVML's total less the driver's reservation and the CUDA context (0.60 + 0.51
    GiB on the H200, h200-memory.md); a Qwen3-14B log on RTX 4090s shows 23.08 GiB free of 23.99. At TP > 1 on
    an NVSwitch node distributed init takes 1.25-2.01 GiB more (SGLANG_DIST_INIT_NVSWITCH_GIB).
"""

import math
from typing import NamedTuple, Optional

from packaging.version import Version

from attn_preflight.rules.knowledge import gpus

# NVML total -> what torch (and vLLM's total) sees, and what SGLang finds free at init (h200-memory.md).
DRIVER_RESERVE_GIB = 0.60
CUDA_CONTEXT_GIB = 0.51
# Bytes per logits element of vLLM's sampler warm-up: measured (native), fitted (FlashInfer).
NATIVE_SAMPLER_BYTES = 38.0
FLASHINFER_SAMPLER_BYTES = 12.4
NATIVE_TRITON_SAMPLER_BYTES = 15.3  # 0.17.0+: top-k / top-p through apply_top_k_top_p_triton, fitted
NON_TORCH_GIB = (0.10, 0.25)  # TP 1, TP > 1 without NVLink SHARP
NON_TORCH_TP1_FROM_0_19_GIB = 0.25
NON_TORCH_PP_STAGE_GIB = 0.07
NON_TORCH_NVSWITCH_GIB = 2.1
# Hopper / Blackwell products sold as NVSwitch nodes (HGX / NVL72): NCCL sets up NVLink SHARP there.
NVSWITCH_GPUS = frozenset({"H100", "H200", "H800", "H20", "B200", "B300", "GB200", "GB300"})
# SGLang's 'Init torch distributed ends. mem usage=X GB' on an NVSwitch node at TP 8 (NCCL and custom all-reduce
# buffers): 1.25 GB on H100 (0.5.2rc2, the work set's Grok-2 log) and 2.01 GB on H200 (0.5.3.post3, sglang PR 11716's
# Llama-3.3-70B log), taken as 1.6; 0.09 GB at TP 1 (Qwen3-8B on a B200) and none seen over PCIe at TP 4 (RTX 4090s).
SGLANG_DIST_INIT_NVSWITCH_GIB = 1.6
# vLLM CUDA graphs (see above): the first capture and each further capture size per mode, from the v0.19.0 logs.
CUDA_GRAPH_FIRST_GIB = 0.25
CUDA_GRAPH_MIB_PER_LAYER = (0.25, 0.17)  # (PIECEWISE, FULL) per further graph and layer of the stage
CUDA_GRAPH_MIN_MIB = 4.0  # the smallest per-graph step the logs show
CUDA_GRAPH_BUDGETED_FROM = Version("0.20.0")  # envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default "1"
CUDA_GRAPH_SOURCE = (
    "vllm v1/worker/gpu_model_runner.py profile_cudagraph_memory (0.19.0 :5862-5961); sizes: config/vllm.py "
    "_set_cudagraph_sizes; bytes: the v0.19.0 logs' estimates (llm-d-planner accuracy/results/v0.19.0/logs)"
)

# The rotary embedding's cos/sin cache, one per GPU whatever the TP: max_position_embeddings x rotary dim, built at
# model init and counted in 'Model loading took' (vLLM) / before the pool is sized (SGLang). Llama-4-Scout's
# 10,485,760 positions x 128 x 2 B = 2.5 GiB per GPU: the gap between its config-sized weights (50.2 GiB at TP 4)
# and the 53.12 GiB vLLM 0.19.0 logged (llm-d-planner accuracy/results/v0.19.0/logs), with its vision tower.
VLLM_ROPE_SOURCE = (
    "vllm model_executor/layers/rotary_embedding/base.py:57-63 (0.19.0): cos_sin_cache of max_position_embeddings "
    "x rotary_dim in the model dtype (get_rope: torch.get_default_dtype())"
)
SGLANG_ROPE_SOURCE = (
    "sglang srt/layers/rotary_embedding/base.py:115-120 (0.5.23): cos_sin_cache of max_position_embeddings x "
    "rotary_dim, kept in FP32 on CUDA"
)
ROPE_SHOWN_GIB = 0.05  # below it (any model up to ~200k positions) the term is left out of the figures


def rope_cache_gib(max_positions: Optional[int], rotary_dim: int, element_bytes: int) -> float:
    """The rotary cos/sin cache one GPU holds: positions x (cos + sin halves = rotary_dim) x bytes."""
    if not max_positions or max_positions <= 0 or rotary_dim <= 0:
        return 0.0
    return max_positions * rotary_dim * element_bytes / (1 << 30)


SAMPLER_SOURCES = {
    "native": "vllm v1/sample/ops/topk_topp_sampler.py forward_native; 38.0 B per logits element measured on the "
    "H200 (bench/results/memory-terms-h200.json)",
    "flashinfer": "vllm v1/sample/ops/topk_topp_sampler.py forward_cuda (FlashInfer); 12.4 B per logits element "
    "fitted to vLLM 0.10.1.1 logs",
    "native-triton": "vllm v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p_triton (0.17.0+); 15.3 B per logits "
    "element fitted to vLLM 0.17.0 and 0.19.0 logs (llm-d-planner accuracy/results)",
}
SAMPLER_BYTES = {
    "native": NATIVE_SAMPLER_BYTES,
    "flashinfer": FLASHINFER_SAMPLER_BYTES,
    "native-triton": NATIVE_TRITON_SAMPLER_BYTES,
}


class Term(NamedTuple):
    label: str  # "weights", "sampler warm-up (1024 x 201088 logits, native)", ...
    gib: float  # subtracted from the budget
    source: str


class Budget(NamedTuple):
    """One GPU's memory as the engine divides it: `usable_gib` x `fraction` less the terms is the KV cache.
    `low_terms` is set when the release leaves a term to the install (vLLM 0.10-0.11.0's sampler): the larger
    of the two readings, the KV cache then `kv_low_gib`."""

    usable_gib: float  # torch's total (vLLM) or the free memory at init (SGLang)
    usable_origin: str
    fraction: float
    terms: tuple[Term, ...]
    low_terms: Optional[tuple[Term, ...]] = None
    assumption: str = ""  # what the expected reading assumes, when low_terms is set
    # vLLM: what runs after the KV cache is sized outside the budget (CUDA graphs before 0.20.0, the sampler
    # warm-up) and the room the utilisation leaves for it (total x (1 - utilisation) less the CUDA context)
    warmup: tuple[Term, ...] = ()
    room_gib: float = 0.0

    @property
    def budget_gib(self) -> float:
        return self.usable_gib * self.fraction

    @property
    def kv_gib(self) -> float:
        return self.budget_gib - sum(t.gib for t in self.terms)

    @property
    def kv_low_gib(self) -> float:
        return self.budget_gib - sum(t.gib for t in (self.low_terms or self.terms))

    @property
    def warmup_gib(self) -> float:
        return sum(t.gib for t in self.warmup)

    @property
    def warmup_short(self) -> bool:
        """What runs after the KV cache is sized does not fit in the room outside the budget."""
        return bool(self.warmup) and self.warmup_gib > self.room_gib


def vllm_sampler(release: Optional[Version], flashinfer_installed: Optional[bool]) -> tuple[str, Optional[str]]:
    """(the sampler vLLM profiles with, the other one when the install or an unread release decides)."""
    if release is None or release >= Version("0.20.0"):
        if flashinfer_installed is False:
            return "native-triton", None
        if release is not None and release < Version("0.24.0"):
            return "flashinfer", "native-triton"  # vllm#40376 landed after 0.19.0; 0.20-0.23 not read
        return "flashinfer", None
    if release >= Version("0.17.0"):
        return "native-triton", None
    if release >= Version("0.11.1"):
        return "native", None
    if flashinfer_installed is None:
        return "flashinfer", "native"
    return ("flashinfer" if flashinfer_installed else "native"), None


def vllm_non_torch_gib(release: Optional[Version], tp: int, pp: int, gpu_name: str) -> tuple[float, str]:
    """vLLM's non-torch memory per GPU (cuBLAS workspace, NCCL) and where the figure comes from."""
    profile = gpus.lookup(gpu_name) if gpu_name else None
    if tp > 1:
        if profile is not None and profile.name in NVSWITCH_GPUS:
            return NON_TORCH_NVSWITCH_GIB, "vLLM 0.19.0 logs on an NVSwitch H100 node, TP 2 and 4 (2.07-2.21 GiB)"
        return NON_TORCH_GIB[1], "vLLM 0.10.1.1-0.10.2 logs at TP > 1 without NVLink SHARP (0.21-0.28 GiB)"
    new = release is None or release >= Version("0.19.0")
    if pp > 1 and new:
        return NON_TORCH_PP_STAGE_GIB, "vLLM 0.19.0 logs of a TP 1 pipeline stage (0.07 GiB)"
    if new:
        return NON_TORCH_TP1_FROM_0_19_GIB, "vLLM 0.19.0 logs at TP 1 (0.24-0.27 GiB)"
    return NON_TORCH_GIB[0], "vLLM 0.10.1.1-0.17.0 logs at TP 1 (0.11-0.13 GiB)"


def vllm_batch_defaults(release: Optional[Version], torch_total_gib: float, gpu_name: str) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) `vllm serve` takes when not given (arg_utils.get_batch_defaults)."""
    name = gpu_name.lower()
    newest = release is None or release >= Version("0.33.0")
    if newest and torch_total_gib >= 160:
        return 16384, 1024
    small = "a100" in name or (newest and ("gb10" in name or "spark" in name))
    if torch_total_gib >= 70 and not small:
        return 8192, 1024
    return 2048, 256


def vllm_cudagraph_sizes(
    release: Optional[Version],
    max_num_seqs: int,
    max_num_batched_tokens: int,
    *,
    max_capture_size: Optional[int] = None,
    speculative_tokens: int = 0,
    gpt_oss: bool = False,
) -> list[int]:
    """The batch sizes vLLM captures (config/vllm.py _set_cudagraph_sizes; 0.10.x config/__init__.py:3768)."""
    old = release is not None and release < Version("0.11.0")
    largest = max_capture_size
    if largest is None:
        if gpt_oss and (release is None or release >= Version("0.10.1")):
            largest = 1024
        else:
            largest = min(max_num_seqs * (1 + speculative_tokens) * 2, 512)
    largest = min(largest, max_num_batched_tokens)
    if largest < 1:
        return []
    if old:
        return [i for i in (1, 2, 4) if i <= largest] + list(range(8, largest + 1, 8))
    sizes = [i for i in (1, 2, 4) if i <= largest]
    if largest >= 8:
        sizes += list(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes += list(range(256, largest + 1, 16))
    return sizes


def vllm_cudagraph_gib(
    release: Optional[Version], sizes: list[int], max_num_seqs: int, layers: int
) -> tuple[float, str]:
    """vLLM's own estimate of its CUDA graphs' memory (profile_cudagraph_memory): the first capture, then each
    further size per mode; FULL decode graphs (0.11.0+) for the sizes up to max_num_seqs. `layers`: the stage's."""
    if not sizes:
        return 0.0, "no CUDA graphs"
    piecewise_mib, full_mib = (max(CUDA_GRAPH_MIN_MIB, per * layers) for per in CUDA_GRAPH_MIB_PER_LAYER)
    full = 0 if release is not None and release < Version("0.11.0") else sum(s <= max_num_seqs for s in sizes)
    gib = CUDA_GRAPH_FIRST_GIB + ((len(sizes) - 1) * piecewise_mib + max(full - 1, 0) * full_mib) / 1024
    modes = f"PIECEWISE x {len(sizes)}" + (f", FULL x {full}" if full else "")
    return gib, f"{modes} up to {sizes[-1]}"


def vllm_forward_gib(tokens: int, hidden: int, mlp_width: int) -> float:
    """The dummy forward's activations: residual, normed and attention outputs (4 x hidden) and the MLP's
    gate-up and activated outputs (3 x its width per rank) per token, bf16."""
    return tokens * (4 * hidden + 3 * mlp_width) * 2 / (1 << 30)


def vllm_budget(
    *,
    release: Optional[Version],
    nvml_total_gib: float,
    gpu_name: str,
    utilization: float,
    weights_gib: float,
    vocab: int,
    hidden: int,
    mlp_width: int,
    tp: int,
    pp: int = 1,
    last_stage: bool = True,
    max_num_batched_tokens: Optional[int] = None,
    max_num_seqs: Optional[int] = None,
    enforce_eager: bool = False,
    flashinfer_installed: Optional[bool] = None,
    max_capture_size: Optional[int] = None,
    speculative_tokens: int = 0,
    gpt_oss: bool = False,
    layers: int = 32,
    rope_cache_gib: float = 0.0,
) -> Budget:
    torch_total, usable_origin = _torch_total(nvml_total_gib, gpu_name)
    tokens_default, seqs_default = vllm_batch_defaults(release, torch_total, gpu_name)
    tokens = max_num_batched_tokens or tokens_default
    seqs = max_num_seqs or seqs_default
    rows = min(tokens, seqs)
    forward = vllm_forward_gib(tokens, hidden, mlp_width)
    non_torch, non_torch_source = vllm_non_torch_gib(release, tp, pp, gpu_name)
    version_note = f"vLLM {release}" if release else "vLLM"

    graphs = None
    if not enforce_eager:
        sizes = vllm_cudagraph_sizes(
            release,
            seqs,
            tokens,
            max_capture_size=max_capture_size,
            speculative_tokens=speculative_tokens,
            gpt_oss=gpt_oss,
        )
        graph_gib, graph_note = vllm_cudagraph_gib(release, sizes, seqs, layers)
        if graph_gib:
            graphs = Term(f"CUDA graphs ({graph_note})", graph_gib, CUDA_GRAPH_SOURCE)
    budgeted = release is None or release >= CUDA_GRAPH_BUDGETED_FROM

    def terms(sampler: str) -> tuple[Term, ...]:
        sampled = rows * vocab * SAMPLER_BYTES[sampler]
        sampled_gib = sampled / (1 << 30) if last_stage else 0.0
        peak = max(forward, sampled_gib)
        label = (
            f"profiled peak: sampler warm-up of {rows} x {vocab} logits ({sampler})"
            if sampled_gib >= forward
            else f"profiled peak: dummy forward of {tokens} tokens"
        )
        out = [
            Term("weights", weights_gib, "rules/knowledge/memory.py weight_bytes_per_gpu"),
            Term(label, peak, SAMPLER_SOURCES[sampler] if sampled_gib >= forward else "gpu_model_runner profile_run"),
            Term(f"non-torch memory at TP {tp}", non_torch, non_torch_source),
        ]
        if rope_cache_gib >= ROPE_SHOWN_GIB:
            out.insert(1, Term("rotary cos/sin cache", rope_cache_gib, VLLM_ROPE_SOURCE))
        if graphs is not None and budgeted:
            out.append(graphs)
        return tuple(out)

    sampler, other = vllm_sampler(release, flashinfer_installed)
    warmup: list[Term] = []
    if graphs is not None and not budgeted:
        warmup.append(graphs)
    if last_stage and warmup:  # the warm-up's sampler matters where the graphs already take the room
        warm = rows * vocab * SAMPLER_BYTES[sampler] / (1 << 30)
        warmup.append(Term(f"sampler warm-up of {rows} x {vocab} logits", warm, SAMPLER_SOURCES[sampler]))
    return Budget(
        usable_gib=torch_total,
        usable_origin=f"{version_note}: torch's total, {usable_origin}",
        fraction=utilization,
        terms=terms(sampler),
        low_terms=terms(other) if other else None,
        assumption=_sampler_assumption(release, other),
        warmup=tuple(warmup),
        room_gib=torch_total * (1 - utilization) - CUDA_CONTEXT_GIB,
    )


def _torch_total(nvml_total_gib: float, gpu_name: str) -> tuple[float, str]:
    """The total torch reports: NVML's less the driver's reservation, or a unified-memory part's own figure."""
    unified = gpus.torch_total_gib(gpu_name)
    profile = gpus.lookup(gpu_name) if unified is not None else None
    if unified is not None and profile is not None and profile.memory_gib:
        held = max(profile.memory_gib - nvml_total_gib, 0.0)  # what the caller took off for other processes
        return unified[0] - held, f"the {unified[0]:g} GiB CUDA reports of unified memory ({unified[1]})"
    return nvml_total_gib - DRIVER_RESERVE_GIB, f"NVML's {nvml_total_gib:g} GiB less {DRIVER_RESERVE_GIB} GiB"


def _sampler_assumption(release: Optional[Version], other: Optional[str]) -> str:
    if not other:
        return ""
    if other == "native-triton":
        return f"vLLM {release} already profiles FlashInfer's sampler by default (vllm#40376, after 0.19.0)"
    return f"vLLM {release} profiles FlashInfer's sampler when flashinfer-python is installed"


def sglang_budget(
    *,
    nvml_total_gib: float,
    fraction: float,
    weights_gib: float,
    tp: int,
    pp: int = 1,
    gpu_name: str = "",
    rope_cache_gib: float = 0.0,
) -> Budget:
    torch_total, origin = _torch_total(nvml_total_gib, gpu_name)
    profile = gpus.lookup(gpu_name) if gpu_name else None
    nvswitch = tp * pp > 1 and profile is not None and profile.name in NVSWITCH_GPUS
    dist_init = SGLANG_DIST_INIT_NVSWITCH_GIB if nvswitch else 0.0
    free_init = torch_total - CUDA_CONTEXT_GIB - dist_init
    dist_note = f" and distributed init's {dist_init} GiB at TP {tp} on an NVSwitch node" if dist_init else ""
    return Budget(
        usable_gib=free_init,
        usable_origin=f"the free memory after init: {origin}, less the CUDA context's {CUDA_CONTEXT_GIB} GiB"
        + dist_note,
        fraction=fraction,
        terms=(Term("weights", weights_gib, "rules/knowledge/memory.py weight_bytes_per_gpu"),)
        + (
            (Term("rotary cos/sin cache", rope_cache_gib, SGLANG_ROPE_SOURCE),)
            if rope_cache_gib >= ROPE_SHOWN_GIB
            else ()
        ),
    )


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def vllm_mxfp4_padding_gib(
    *,
    hidden: int,
    expert_intermediate: int,
    experts: int,
    moe_layers: int,
    layers: int,
    bytes_per_weight: float,
    tp: int,
    pp: int,
    cc: Optional[tuple[int, int]],
) -> float:
    """The bytes vLLM's MXFP4 MoE layers add by padding (model_executor/layers/quantization/mxfp4.py, 0.11.2
    :255-287 create_weights): Marlin (GPUs before Blackwell; Hopper without triton_kernels, as vLLM 0.10.1.1-0.11.0
    logs show) pads the hidden size to 256 and the per-rank intermediate size to 128; FlashInfer's SM100 backends
    pad both to 256. gpt-oss-120b at TP 1: 65.97 GiB loaded (vllm#23278) for 60.7 unpadded."""
    inter_multiple = 256 if cc is not None and cc[0] == 10 else 128
    per_rank = expert_intermediate / tp
    padded = _round_up(hidden, 256) * _round_up(math.ceil(per_rank), inter_multiple)
    plain = hidden * per_rank
    stage_layers = math.ceil(layers / pp) * moe_layers / layers
    return max(padded - plain, 0) * 3 * experts * stage_layers * bytes_per_weight / (1 << 30)
