"""Inputs and the fp32 reference, built inside the worker (this module imports torch; the runner never does).

The reference is plain math on fp32 copies of exactly the values the kernel sees (inputs are rounded to the
kernel's dtype first), so the measured error is the kernel's alone. TF32 is off: it would make the
reference itself wrong at the bf16 tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Sequence

import torch

from attn_preflight.probe.smoke.cases import Case, attention_flops

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

TORCH_DTYPES = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp32": torch.float32,
    "fp8_e4m3": getattr(torch, "float8_e4m3fn", None),
}


@dataclass
class Call:
    """One kernel call, ready to time: `run()` is what is timed; `extract(out)` maps its output onto
    `reference`'s layout (untimed)."""

    run: Callable[[], Any]
    reference: torch.Tensor
    flops: Optional[int] = None
    extract: Callable[[Any], torch.Tensor] = lambda out: out


def torch_dtype(name: str) -> torch.dtype:
    dtype = TORCH_DTYPES.get(name)
    if dtype is None:
        raise TypeError(f"this torch ({torch.__version__}) has no dtype for {name}")
    return dtype


def first(out: Any) -> torch.Tensor:
    """FlashAttention entry points return out or (out, lse, ...) depending on version and flags."""
    return out[0] if isinstance(out, (tuple, list)) else out


class Inputs:
    """Seeded N(0, 1) tensors in the case's dtypes: the same case gives the same numbers on every run."""

    def __init__(self, case: Case, device: str, seed: int = 0):
        self.case = case
        self.device = device
        self.generator = torch.Generator(device="cpu").manual_seed(seed)

    def tensor(self, shape: Sequence[int], dtype: str) -> torch.Tensor:
        values = torch.randn(*shape, generator=self.generator, dtype=torch.float32)
        return values.to(self.device).to(torch_dtype(dtype))

    def dense(self, q_dtype: Optional[str] = None):
        """q (b, sq, hq, d), k (b, sk, hkv, d), v (b, sk, hkv, dv): FlashAttention's layout."""
        c = self.case
        q = self.tensor((c.batch, c.seqlen_q, c.heads_q, c.head_dim), q_dtype or c.dtype)
        k = self.tensor((c.batch, c.seqlen_k, c.heads_kv, c.head_dim), c.kv_storage)
        v = self.tensor((c.batch, c.seqlen_k, c.heads_kv, c.dim_v), c.kv_storage)
        return q, k, v


def ragged_lengths(total: int, count: int, floor: int = 1) -> list[int]:
    """`count` different lengths, the first `total`, each shorter than the one before and at least `floor`:
    ragged batches catch kernels that mix up sequences."""
    step = max(1, total // (2 * max(count, 1)))
    return [max(floor, total - i * step - (7 * i if i else 0)) for i in range(count)]


def attention_reference(
    q,
    k,
    v,
    case: Case,
    kv_lens: Optional[Sequence[int]] = None,
    q_lens: Optional[Sequence[int]] = None,
    scale: Optional[float] = None,
    sink: Optional[torch.Tensor] = None,
    qv: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """fp32 attention over q (b, sq, hq, d), k (b, sk, hkv, d), v (b, sk, hkv, dv): GQA by repeating KV heads,
    FlashAttention's bottom-right causal mask and window, softcap or the case's score_mod on the scaled scores.
    With `kv_lens` / `q_lens`, sequence i uses only its first kv_lens[i] keys / q_lens[i] queries (rows past it
    are zero). `sink` (hq,): one more softmax column per head with that logit and no value (FA4 softmax.py
    apply_learnable_sink). `qv` (b, sq, hq, dv): absorbed MLA, scores = q.k + qv.v, scaled by
    1/sqrt(d + dv) (FA4 interface.py _flash_attn_fwd)."""
    batch, seqlen_q, heads_q, _ = q.shape
    out = torch.zeros(batch, seqlen_q, heads_q, v.shape[-1], dtype=torch.float32, device=q.device)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1] + (v.shape[-1] if qv is not None else 0))
    ratio = heads_q // k.shape[2]
    for i in range(batch):
        sq = seqlen_q if q_lens is None else q_lens[i]
        sk = k.shape[1] if kv_lens is None else kv_lens[i]
        qi = q[i, :sq].float().transpose(0, 1)  # (hq, sq, d)
        ki = k[i, :sk].float().repeat_interleave(ratio, dim=1).transpose(0, 1)
        vi = v[i, :sk].float().repeat_interleave(ratio, dim=1).transpose(0, 1)
        scores = qi @ ki.transpose(-1, -2)
        if qv is not None:
            scores = scores + qv[i, :sq].float().transpose(0, 1) @ vi.transpose(-1, -2)
        scores = scores * scale
        if case.softcap:
            scores = case.softcap * torch.tanh(scores / case.softcap)
        if case.score_mod == "rel_bias":
            rows = torch.arange(sq, device=q.device)[:, None]
            cols = torch.arange(sk, device=q.device)[None, :]
            scores = scores - 0.01 * (rows - cols).abs().float()
        scores = scores.masked_fill(~attention_mask(case, sq, sk, q.device), float("-inf"))
        if sink is not None:  # the sink column takes part in the softmax, then is dropped (it has no value)
            column = sink.float().view(heads_q, 1, 1).expand(heads_q, sq, 1)
            probs = torch.softmax(torch.cat([scores, column], dim=-1), dim=-1)[..., :-1]
        else:
            probs = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a row that sees no key gives zeros, as FA does
        out[i, :sq] = (probs @ vi).transpose(0, 1)
    return out


def extras(inputs: Inputs) -> dict[str, torch.Tensor]:
    """The case's optional inputs, seeded like the rest: `learnable_sink` (hq,) fp32 and `qv` (b, sq, hq, dv)."""
    case = inputs.case
    made: dict[str, torch.Tensor] = {}
    if case.sinks:
        made["learnable_sink"] = inputs.tensor((case.heads_q,), "fp32")
    if case.qv:
        made["qv"] = inputs.tensor((case.batch, case.seqlen_q, case.heads_q, case.dim_v), case.dtype)
    return made


def attention_mask(case: Case, seqlen_q: int, seqlen_k: int, device) -> torch.Tensor:
    """(sq, sk) bool, True where query i sees key j: cases.visible_keys, vectorised."""
    rows = torch.arange(seqlen_q, device=device)[:, None] + (seqlen_k - seqlen_q)
    cols = torch.arange(seqlen_k, device=device)[None, :]
    keep = cols <= rows if case.causal else torch.ones(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if case.window_left is not None:
        keep = keep & (cols >= rows - case.window_left)
    return keep


class PagedKV:
    """A paged KV cache holding `kv_lens[i]` tokens of sequence i, pages scattered in a shuffled pool.

    k_cache, v_cache: (num_pages, page_size, hkv, d); page_table: (b, pages_per_seq) int32; seqlens: (b,)
    int32. Every page, used or not, holds finite numbers (FA4 reads whole pages: interface.py docstring)."""

    def __init__(self, inputs: Inputs, k, v, kv_lens: Sequence[int]):
        case = inputs.case
        page = case.page_size
        assert page is not None, "PagedKV needs a case with a page_size"
        pages_per_seq = -(-k.shape[1] // page)
        num_pages = case.batch * pages_per_seq + 1  # a spare page no sequence uses
        order = torch.randperm(num_pages, generator=inputs.generator)[: case.batch * pages_per_seq]
        self.page_table = order.view(case.batch, pages_per_seq).to(torch.int32).to(inputs.device)
        # Scattered in fp32 and converted once: fp8 tensors support few ops, and these values round-trip exactly.
        caches = []
        for dense, dim in ((k, case.head_dim), (v, case.dim_v)):
            pool = inputs.tensor((num_pages, page, case.heads_kv, dim), "fp32")
            full = pool[:1, :1].expand(case.batch, pages_per_seq * page, case.heads_kv, dim).clone()
            full[:, : dense.shape[1]] = dense.float()
            pool[self.page_table.long().flatten()] = full.reshape(-1, page, case.heads_kv, dim)
            caches.append(pool.to(dense.dtype))
        self.k_cache, self.v_cache = caches
        self.kv_lens = list(kv_lens)
        self.seqlens = torch.tensor(self.kv_lens, dtype=torch.int32, device=inputs.device)


def varlen_call(case: Case, device: str, call) -> Call:
    """Packed (total, h, d) sequences of different lengths with cu_seqlens; `call(q, k, v, cu_seqlens, max_len)`."""
    lengths = ragged_lengths(case.seqlen_k, case.batch)
    q, k, v = Inputs(replace(case, seqlen_q=case.seqlen_k), device).dense()
    reference = attention_reference(q, k, v, case, kv_lens=lengths, q_lens=lengths)
    # Packed in fp32 and converted back (exact): torch.cat does not take fp8 everywhere.
    pack = lambda t: torch.cat([t[i, :n].float() for i, n in enumerate(lengths)]).to(t.dtype)  # noqa: E731
    qp, kp, vp = pack(q), pack(k), pack(v)
    starts = [sum(lengths[:i]) for i in range(len(lengths) + 1)]
    cu = torch.tensor(starts, dtype=torch.int32, device=device)
    longest = max(lengths)

    def unpack(out):
        out = first(out)
        padded = torch.zeros(reference.shape, dtype=out.dtype, device=out.device)
        for i, n in enumerate(lengths):
            padded[i, :n] = out[starts[i] : starts[i] + n]
        return padded

    flops = attention_flops(case, [(n, n) for n in lengths])
    return Call(lambda: call(qp, kp, vp, cu, longest), reference, flops, extract=unpack)


def paged_call(case: Case, device: str, call, q_dtype: Optional[str] = None, v_from_k: bool = False) -> Call:
    """Decode against a paged KV cache of ragged lengths; `call(q, paged, **extras)` with `paged` a PagedKV and the
    case's optional inputs (`extras`: learnable_sink, qv) as keywords. With `v_from_k`, V is the first dim_v
    channels of K (MLA's latent cache)."""
    inputs = Inputs(case, device)
    q, k, v = inputs.dense(q_dtype=q_dtype)
    if v_from_k:
        v = k[..., : case.dim_v]
    lengths = ragged_lengths(case.seqlen_k, case.batch, floor=case.seqlen_q)
    paged = PagedKV(inputs, k, v, lengths)
    extra = extras(inputs)
    reference = attention_reference(
        q, k, v, case, kv_lens=lengths, sink=extra.get("learnable_sink"), qv=extra.get("qv")
    )
    flops = attention_flops(case, [(case.seqlen_q, n) for n in lengths])
    return Call(lambda: call(q, paged, **extra), reference, flops, extract=first)


def elementwise_add(case: Case, device: str):
    """a, b, and the fp32 reference of a + b for the minimal (non-attention) kernels."""
    inputs = Inputs(case, device)
    a = inputs.tensor((case.numel,), case.dtype)
    b = inputs.tensor((case.numel,), case.dtype)
    return a, b, a.float() + b.float()
