"""What one kernel call computes: a shape, a dtype and the attention options, as plain JSON-able data.

A Case travels from the runner to the worker as JSON and comes back inside the result, so a saved smoke
report says exactly what ran. Nothing here imports torch: the runner and `check` use it as data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

from attn_preflight.probe.facts import OMIT_DEFAULT, to_jsonable

# Case dtypes, spelled as in serving flags; torch names are looked up in the worker.
DTYPES = ("bf16", "fp16", "fp8_e4m3", "fp32")
DTYPE_ALIASES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "fp8": "fp8_e4m3",
    "fp8_e4m3": "fp8_e4m3",
    "fp8_e4m3fn": "fp8_e4m3",
    "fp32": "fp32",
    "float32": "fp32",
}

# Max abs error allowed against the fp32 reference, per dtype of the inputs the kernel sees. Inputs are
# N(0, 1), so outputs are O(1): bf16 keeps 8 significant bits (FA4 on the H200 showed 0.008 at d=128,
# ../research/h200-fa4-4.0.0b36-smoke.log), fp16 keeps 11, fp8 e4m3 keeps 4 and the kernels also round
# the softmax probabilities to fp8 before P @ V.
TOLERANCE = {"fp32": 1e-4, "fp16": 5e-3, "bf16": 3e-2, "fp8_e4m3": 1.5e-1}

KINDS = ("attention", "elementwise", "linear_attention")

# Custom score_mods a case can ask for, applied to the scaled scores (FA4 interface.py apply_score_mod_inner
# multiplies by softmax_scale first). "rel_bias" stands in for a model's relative-position bias (Inkling's is a
# learned table; the kernel path is the same: a @cute.jit callable reading q_idx and kv_idx).
SCORE_MODS = {"rel_bias": "score - 0.01 * |q_idx - kv_idx|"}


@dataclass(frozen=True)
class Case:
    # "attention"; "elementwise" (the CUTLASS DSL and Triton kernels: c = a + b); "linear_attention" (FLA's gated
    # delta rule: heads_q the value heads, heads_kv the query/key heads, seqlen_k the tokens)
    kind: str = "attention"
    dtype: str = "bf16"  # q (and k, v unless kv_dtype says otherwise); elementwise: a, b, c
    batch: int = 2
    seqlen_q: int = 1024  # 1 for decode
    seqlen_k: int = 1024  # the longest sequence; variable-length kernels use shorter ones too
    heads_q: int = 16
    heads_kv: int = 4  # < heads_q: grouped-query attention
    head_dim: int = 128
    head_dim_v: Optional[int] = None  # None: head_dim (differs for MLA, e.g. 576/512)
    kv_dtype: Optional[str] = None  # KV-cache storage dtype; None: dtype
    causal: bool = True  # bottom-right aligned, as in FlashAttention
    softcap: float = 0.0  # 0: off; else scores become softcap * tanh(scores / softcap)
    window_left: Optional[int] = None  # sliding window: keys at most this far left of the query; None: off
    page_size: Optional[int] = None  # paged KV cache with pages of this many tokens; None: contiguous
    # FA4's extended inputs, written only when set (OMIT_DEFAULT): reports recorded before them read back the same
    sinks: bool = field(default=False, metadata=OMIT_DEFAULT)  # a learnable sink logit per query head
    score_mod: Optional[str] = field(default=None, metadata=OMIT_DEFAULT)  # one of SCORE_MODS; None: off
    qv: bool = field(default=False, metadata=OMIT_DEFAULT)  # absorbed MLA: rope dims as q/k, latent ones as qv/v
    numel: int = 1 << 21  # elementwise kernels only

    @property
    def dim_v(self) -> int:
        return self.head_dim if self.head_dim_v is None else self.head_dim_v

    @property
    def kv_storage(self) -> str:
        return self.kv_dtype or self.dtype

    @property
    def gqa_ratio(self) -> int:
        return self.heads_q // self.heads_kv

    def label(self) -> str:
        """A short human name: `bf16 b2 q1024 k1024 h16/4 d128 causal`."""
        if self.kind == "elementwise":
            return f"{self.dtype} n={self.numel}"
        dims = f"d{self.head_dim}" if self.head_dim_v is None else f"d{self.head_dim}/{self.head_dim_v}"
        parts = [
            self.dtype,
            f"b{self.batch}",
            f"q{self.seqlen_q}",
            f"k{self.seqlen_k}",
            f"h{self.heads_q}/{self.heads_kv}",
            dims,
            "causal" if self.causal else "full",
        ]
        if self.kv_dtype and self.kv_dtype != self.dtype:
            parts.append(f"kv={self.kv_dtype}")
        if self.softcap:
            parts.append(f"softcap={self.softcap:g}")
        if self.window_left is not None:
            parts.append(f"window={self.window_left}")
        if self.page_size is not None:
            parts.append(f"page={self.page_size}")
        if self.sinks:
            parts.append("sinks")
        if self.score_mod:
            parts.append(f"score_mod={self.score_mod}")
        if self.qv:
            parts.append("qv")
        return " ".join(parts)

    def validate(self) -> Case:
        if self.kind not in KINDS:
            raise ValueError(f"case kind {self.kind!r} is not one of {', '.join(KINDS)}")
        for name in ("dtype", "kv_dtype"):
            value = getattr(self, name)
            if value is not None and value not in DTYPES:
                raise ValueError(f"{name} {value!r} is not one of {', '.join(DTYPES)}")
        positive = ("batch", "seqlen_q", "seqlen_k", "heads_q", "heads_kv", "head_dim", "numel")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.heads_q % self.heads_kv:
            raise ValueError(f"heads_q {self.heads_q} is not a multiple of heads_kv {self.heads_kv}")
        if self.seqlen_q > self.seqlen_k:
            raise ValueError("seqlen_q above seqlen_k is not a serving shape")
        if self.softcap < 0 or (self.window_left is not None and self.window_left < 0):
            raise ValueError("softcap and window_left cannot be negative")
        if self.page_size is not None and self.page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {self.page_size}")
        if self.score_mod is not None and self.score_mod not in SCORE_MODS:
            raise ValueError(f"score_mod {self.score_mod!r} is not one of {', '.join(SCORE_MODS)}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Case:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown case keys: {', '.join(sorted(unknown))}")
        return cls(**data).validate()


def tolerance(case: Case) -> float:
    """The looser of the query and KV dtypes decides: an fp8 KV cache bounds the error of a bf16 query."""
    return max(TOLERANCE[case.dtype], TOLERANCE[case.kv_storage])


def visible_keys(query: int, seqlen_q: int, seqlen_k: int, causal: bool, window_left: Optional[int]) -> range:
    """Keys query `query` attends to: FlashAttention's bottom-right aligned causal mask and local window
    ([i + sk - sq - left, i + sk - sq] inclusive, flash_attn_interface.py docstrings)."""
    last = query + seqlen_k - seqlen_q if causal else seqlen_k - 1
    first = 0 if window_left is None else max(0, query + seqlen_k - seqlen_q - window_left)
    return range(first, min(last, seqlen_k - 1) + 1)


def attention_flops(case: Case, seqlens: Optional[Sequence[tuple[int, int]]] = None) -> int:
    """2 matmuls of 2 FLOPs per multiply-add over every (query, key) pair the mask keeps: 4*b*h*sq*sk*d for
    full attention, about half of it for causal, exact for decode, windows and ragged batches."""
    pairs = 0
    for seqlen_q, seqlen_k in seqlens or [(case.seqlen_q, case.seqlen_k)] * case.batch:
        pairs += sum(len(visible_keys(i, seqlen_q, seqlen_k, case.causal, case.window_left)) for i in range(seqlen_q))
    return 2 * pairs * case.heads_q * (case.head_dim + case.dim_v)


HEAD_DIMS = (64, 128, 192, 256)


def sweep(base: Case, features: frozenset, dtypes: Optional[Sequence[str]] = None) -> list[Case]:
    """`--level full`: dtype x head_dim on the kernel's own quick shape, then one case per option the kernel's
    API can express (non-causal, MHA, softcap, sliding window, another page size), each at bf16 d128."""
    if dtypes is None:
        dtypes = ["bf16", "fp16"] + (["fp8_e4m3"] if "fp8" in features else [])
    if base.kind == "elementwise":
        return [replace(base, dtype=d) for d in dtypes]
    cases = [
        replace(base, dtype=d, head_dim=h, head_dim_v=None if base.head_dim_v is None else h)
        for d in dtypes
        for h in HEAD_DIMS
    ]
    anchor = replace(base, dtype=dtypes[0])
    extras = []
    if base.seqlen_q > 1:
        extras.append(replace(anchor, causal=not base.causal))
    if base.heads_kv != base.heads_q:
        extras.append(replace(anchor, heads_kv=base.heads_q))
    if "softcap" in features:
        extras.append(replace(anchor, softcap=30.0))
    if "window" in features:
        extras.append(replace(anchor, window_left=256))
    if base.page_size is not None:
        extras.extend(replace(anchor, page_size=size) for size in features_page_sizes(features, base))
    if "sinks" in features:
        extras.append(replace(anchor, sinks=True))
    if "score_mod" in features:
        extras.append(replace(anchor, score_mod="rel_bias"))
    if "qv" in features:  # DeepSeek's absorbed MLA: rope 64 as q/k, latent 512 as qv/v, one KV head
        extras.append(replace(anchor, head_dim=64, head_dim_v=512, heads_kv=1, qv=True))
    return list(dict.fromkeys(cases + extras))  # unique, in order


def features_page_sizes(features: frozenset, base: Case) -> list[int]:
    """Other page sizes a paged kernel is swept over: those its API declares (e.g. "page:16")."""
    sizes = sorted(int(f.split(":", 1)[1]) for f in features if f.startswith("page:"))
    return [size for size in sizes if size != base.page_size]
