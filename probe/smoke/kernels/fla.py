"""FLA (flash-linear-attention): the gated delta rule (GDN) of hybrid linear-attention models, chunked (prefill)
and fused recurrent (decode), against an fp32 recurrence.

Signatures: fla-org/flash-linear-attention fla/ops/gated_delta_rule/chunk.py chunk_gated_delta_rule(q, k, v, g,
beta, scale=, initial_state=, output_final_state=, use_qk_l2norm_in_kernel=) with q/k (B, T, H, K), v (B, T, HV, V),
g (B, T, HV) the log decay and beta (B, T, HV); fused_recurrent.py fused_recurrent_gated_delta_rule(...) the same
(fla-core 0.6.0). SGLang's and vLLM's GDN layers (Qwen3-Next, Qwen3.5) call these Triton kernels (their own
copies of fla's ops); the reference is fla's naive recurrence (ops/gated_delta_rule/naive.py), in fp32.
"""

from __future__ import annotations

from dataclasses import replace

from attn_preflight.probe.smoke.cases import Case
from attn_preflight.probe.smoke.kernels import Kernel

# Qwen3-Next-80B-A3B's GDN layer on one GPU: 16 QK heads and 32 V heads of 128 (linear_num_key_heads 16,
# linear_num_value_heads 32, linear_key_head_dim / linear_value_head_dim 128)
PREFILL = Case(kind="linear_attention", batch=1, seqlen_q=1024, seqlen_k=1024, heads_q=32, heads_kv=16, head_dim=128)
DECODE = replace(PREFILL, batch=4, seqlen_q=64, seqlen_k=64)


def prepare() -> None:
    import fla.ops.gated_delta_rule  # noqa: F401


def _inputs(case: Case, device: str):
    import torch

    gen = torch.Generator(device=device).manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[case.dtype]
    b, t, h, hv, d = case.batch, case.seqlen_k, case.heads_kv, case.heads_q, case.head_dim

    def randn(*shape):
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32)

    q, k, v = randn(b, t, h, d), randn(b, t, h, d), randn(b, t, hv, case.dim_v)
    g = torch.nn.functional.logsigmoid(randn(b, t, hv)) / 8  # a slow decay, as trained gates are
    beta = torch.sigmoid(randn(b, t, hv))
    return [x.to(dtype) for x in (q, k, v)] + [g, beta.to(dtype)]


def reference(q, k, v, g, beta, scale):
    """fla's naive recurrence (ops/gated_delta_rule/naive.py) in fp32, q and k l2-normalised first."""
    import torch

    q, k, v, beta = (x.float() for x in (q, k, v, beta))
    q = torch.nn.functional.normalize(q, dim=-1) * scale
    k = torch.nn.functional.normalize(k, dim=-1)
    groups = v.shape[2] // q.shape[2]
    q, k = q.repeat_interleave(groups, dim=2), k.repeat_interleave(groups, dim=2)
    b, t, hv, d = q.shape
    state = q.new_zeros(b, hv, d, v.shape[-1])
    out = torch.empty_like(v)
    for i in range(t):
        state = state * g[:, i].exp()[..., None, None]
        new_v = (v[:, i] - torch.einsum("bhk,bhkv->bhv", k[:, i], state)) * beta[:, i][..., None]
        state = state + torch.einsum("bhk,bhv->bhkv", k[:, i], new_v)
        out[:, i] = torch.einsum("bhk,bhkv->bhv", q[:, i], state)
    return out


def _build(entry: str):
    def build(case: Case, device: str):
        import fla.ops.gated_delta_rule as gdn

        from attn_preflight.probe.smoke.reference import Call

        q, k, v, g, beta = _inputs(case, device)
        scale = case.head_dim**-0.5
        expected = reference(q, k, v, g, beta, scale)
        call = getattr(gdn, entry)

        def run():
            return call(q, k, v, g=g, beta=beta, scale=scale, use_qk_l2norm_in_kernel=True)

        flops = 6 * case.batch * case.seqlen_k * case.heads_q * case.head_dim * case.dim_v
        return Call(run, expected, flops, extract=lambda out: out[0])

    return build


def _kernel(suffix: str, entry: str, what: str, quick: Case) -> Kernel:
    return Kernel(
        name=f"fla-gdn-{suffix}",
        family="fla",
        title=f"FLA gated delta rule, {what}",
        api=f"fla.ops.gated_delta_rule.{entry}",
        quick=quick,
        build=_build(entry),
        prepare=prepare,
        library="fla",
    )


KERNELS = [
    _kernel("chunk", "chunk_gated_delta_rule", "chunked (prefill)", PREFILL),
    _kernel("recurrent", "fused_recurrent_gated_delta_rule", "fused recurrent (decode)", DECODE),
]
