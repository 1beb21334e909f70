"""Cases, FLOP counts, the sweep, the fp32 reference and its input layouts, the kernel registry, SmokeReport."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from attn_preflight.probe.smoke import BACKEND_KERNELS, ModelShape, shape_cases
from attn_preflight.probe.smoke.cases import TOLERANCE, Case, attention_flops, sweep, tolerance, visible_keys
from attn_preflight.probe.smoke.kernels import FEATURE_FP8, FEATURE_SOFTCAP, FEATURE_WINDOW, registry, select
from attn_preflight.probe.smoke.results import KernelResult, SmokeReport, SmokeReportError
from attn_preflight.rules.kernels.limits import MachineView, documented_limit


# -- cases --------------------------------------------------------------------------------------------------
def test_visible_keys_follow_flash_attentions_bottom_right_causal_and_window():
    assert list(visible_keys(0, 2, 5, causal=True, window_left=None)) == [0, 1, 2, 3]  # FA docstring example
    assert list(visible_keys(1, 2, 5, causal=True, window_left=None)) == [0, 1, 2, 3, 4]
    assert list(visible_keys(0, 5, 2, causal=True, window_left=None)) == []  # a row that sees nothing
    assert list(visible_keys(4, 5, 5, causal=True, window_left=2)) == [2, 3, 4]
    assert list(visible_keys(1, 5, 5, causal=False, window_left=1)) == [0, 1, 2, 3, 4]


def test_flops_are_4bhsd_for_full_attention_and_exact_for_causal_and_decode():
    full = Case(batch=2, seqlen_q=64, seqlen_k=64, heads_q=4, heads_kv=4, head_dim=32, causal=False)
    assert attention_flops(full) == 4 * 2 * 4 * 64 * 64 * 32
    causal = replace(full, causal=True)
    assert attention_flops(causal) == 4 * 2 * 4 * 32 * (64 * 65 // 2)  # about half
    decode = replace(causal, seqlen_q=1)
    assert attention_flops(decode) == 4 * 2 * 4 * 64 * 32  # the one query sees every key
    assert attention_flops(causal, [(64, 64), (10, 10)]) == 4 * 4 * 32 * (64 * 65 // 2 + 10 * 11 // 2)


def test_tolerance_follows_the_looser_of_query_and_kv_dtype():
    assert tolerance(Case(dtype="fp16")) == TOLERANCE["fp16"] < TOLERANCE["bf16"]
    assert tolerance(Case(dtype="bf16", kv_dtype="fp8_e4m3")) == TOLERANCE["fp8_e4m3"]


@pytest.mark.parametrize(
    "bad",
    [
        dict(heads_q=6, heads_kv=4),
        dict(dtype="int4"),
        dict(seqlen_q=9, seqlen_k=8),
        dict(page_size=0),
        dict(kind="gemm"),
    ],
)
def test_case_validation_refuses_impossible_shapes(bad):
    with pytest.raises(ValueError):
        Case(**bad).validate()


def test_case_round_trips_and_refuses_unknown_keys():
    case = Case(dtype="fp16", softcap=30.0, window_left=128, page_size=16)
    assert Case.from_dict(json.loads(json.dumps(case.to_dict()))) == case
    with pytest.raises(ValueError, match="unknown case keys: colour"):
        Case.from_dict({"colour": "red"})
    assert "softcap=30 window=128 page=16" in case.label()


def test_full_sweep_covers_dtypes_head_dims_and_only_what_the_api_expresses():
    base = Case(page_size=64)
    plain = sweep(Case(), frozenset())
    assert {(c.dtype, c.head_dim) for c in plain} >= {(d, h) for d in ("bf16", "fp16") for h in (64, 128, 192, 256)}
    assert not any(c.dtype == "fp8_e4m3" or c.softcap or c.window_left for c in plain)
    assert any(not c.causal for c in plain) and any(c.heads_kv == c.heads_q for c in plain)
    rich = sweep(base, frozenset({FEATURE_FP8, FEATURE_SOFTCAP, FEATURE_WINDOW, "page:16"}))
    assert any(c.dtype == "fp8_e4m3" for c in rich)
    assert any(c.softcap for c in rich) and any(c.window_left for c in rich)
    assert {c.page_size for c in rich} == {64, 16}
    assert len(rich) == len(set(rich))
    assert [c.dtype for c in sweep(Case(kind="elementwise"), frozenset(), ["fp32"])] == ["fp32"]


# -- the registry --------------------------------------------------------------------------------------------
def test_registry_names_are_unique_and_every_kernel_says_what_it_calls():
    kernels = registry()
    assert len(kernels) >= 17
    for kernel in kernels.values():
        assert kernel.api and kernel.title and kernel.quick.validate()
        assert kernel.build.__module__.startswith("attn_preflight.probe.smoke.kernels.")
    assert {
        "sdpa-flash",
        "sdpa-efficient",
        "sdpa-cudnn",
        "sdpa-math",
        "fa4-dense",
        "fa4-varlen",
        "fa4-paged",
        "cutlass-dsl-add",
        "triton-add",
    } <= set(kernels)


def test_select_takes_kernel_and_family_names_in_registry_order():
    assert [k.name for k in select(["fa4-paged", "sdpa"])] == [
        "sdpa-flash",
        "sdpa-efficient",
        "sdpa-cudnn",
        "sdpa-math",
        "fa4-paged",
    ]
    with pytest.raises(KeyError):
        select(["fa5"])


def test_plan_gives_each_kernel_its_quick_case_per_dtype_or_its_sweep():
    from attn_preflight.probe.smoke.runner import plan

    fa4, math_kernel = registry()["fa4-paged"], registry()["sdpa-math"]
    quick = plan([fa4, math_kernel])
    assert quick == [(fa4, [fa4.quick]), (math_kernel, [math_kernel.quick])]
    assert [c.dtype for c in plan([fa4], dtypes=["fp8_e4m3", "fp16"])[0][1]] == ["fp8_e4m3", "fp16"]
    ((_, cases),) = plan([fa4], "full")
    assert cases == sweep(fa4.quick, fa4.features)
    assert all(c.page_size for c in cases) and {c.dtype for c in cases} == {"bf16", "fp16", "fp8_e4m3"}
    ((_, math_cases),) = plan([math_kernel], "full", ["fp32"])
    assert {c.dtype for c in math_cases} == {"fp32"} and not any(c.softcap for c in math_cases)


def test_torch_sdpa_cannot_express_softcap_or_window():
    math_kernel = registry()["sdpa-math"]
    assert "softcap" in math_kernel.inexpressible(Case(softcap=30.0))
    assert "sliding-window" in math_kernel.inexpressible(Case(window_left=64))
    assert math_kernel.inexpressible(Case()) is None
    assert "paged" in registry()["fa4-paged"].inexpressible(Case())


def test_documented_limits_encode_fa4_fp8_on_sm90_and_cudnn_head_dims():
    def limit(name, case, **machine):
        kernel = registry()[name]
        return documented_limit(kernel.name, kernel.family, case, MachineView(**machine))

    fp8 = Case(dtype="fp8_e4m3")
    assert "FP8 is only supported on SM100" in limit("fa4-dense", fp8, cc=(9, 0))
    assert limit("fa4-dense", fp8, cc=(10, 0)) is None
    assert limit("fa4-dense", Case(), cc=(9, 0)) is None
    wide = Case(head_dim=256)
    assert limit("sdpa-cudnn", wide, cc=(9, 0), cudnn=91000) is not None
    assert limit("sdpa-cudnn", wide, cc=(9, 0), cudnn=92300) is None


def test_documented_limits_encode_fa4_qv_score_mod_and_sink_asserts():
    """flash-attn-4 4.0.0b36 interface.py: qv on Blackwell only, no custom score_mod on SM8x nor with softcap;
    flash_fwd.py's SM80 kernel: no learnable sink."""

    def limit(case, cc):
        return documented_limit("fa4-paged", "fa4", case, MachineView(cc=cc))

    absorbed = Case(seqlen_q=1, page_size=128, head_dim=64, head_dim_v=512, heads_kv=1, qv=True)
    assert "only support Blackwell arch with qv" in limit(absorbed, (9, 0))
    assert limit(absorbed, (10, 0)) is None
    assert "not supported on SM8x" in limit(Case(score_mod="rel_bias"), (8, 0))
    assert limit(Case(score_mod="rel_bias"), (9, 0)) is None
    assert "cannot be used together" in limit(Case(score_mod="rel_bias", softcap=30.0), (9, 0))
    assert "Learnable sink" in limit(Case(sinks=True), (8, 6))
    assert limit(Case(sinks=True), (9, 0)) is None


def test_shape_cases_apply_a_models_shape_to_each_backend_kernel():
    shape = ModelShape(
        head_dim=256,
        heads_q=8,
        heads_kv=4,
        dtype="bf16",
        kv_dtype="fp8_e4m3",
        softcap=50.0,
        window_left=4096,
        page_size=64,
    )
    cases = dict((k.name, c) for k, (c,) in shape_cases("fa4", shape))
    assert set(cases) == set(BACKEND_KERNELS["fa4"])
    dense, paged = cases["fa4-dense"], cases["fa4-paged"]
    assert (dense.head_dim, dense.heads_q, dense.heads_kv, dense.kv_dtype, dense.softcap, dense.window_left) == (
        256,
        8,
        4,
        "fp8_e4m3",
        50.0,
        4096,
    )
    assert dense.page_size is None and paged.page_size == 64 and paged.seqlen_q == 1
    with pytest.raises(KeyError):
        shape_cases("no-such-backend", shape)
    with pytest.raises(ValueError):
        shape_cases("fa4", replace(shape, heads_kv=3))


# -- the reference (torch) -----------------------------------------------------------------------------------
torch = pytest.importorskip("torch")
from attn_preflight.probe.smoke.reference import (  # noqa: E402
    Inputs,
    PagedKV,
    attention_mask,
    attention_reference,
    extras,
    paged_call,
    ragged_lengths,
    varlen_call,
)


def _naive(q, k, v, case, scale, sink=None, qv=None):
    """Attention one (batch, head, query) at a time in float64: the slow, obvious definition. A sink is one more
    exp() term in the normaliser; qv adds qv.v to each score; rel_bias subtracts 0.01 |query - key|."""
    b, sq, hq, _ = q.shape
    sk, hk = k.shape[1], k.shape[2]
    out = torch.zeros(b, sq, hq, v.shape[-1], dtype=torch.float64)
    for i in range(b):
        for h in range(hq):
            g = h // (hq // hk)
            for row in range(sq):
                keys = list(visible_keys(row, sq, sk, case.causal, case.window_left))
                if not keys:
                    continue
                s = torch.stack(
                    [
                        (
                            (q[i, row, h].double() * k[i, j, g].double()).sum()
                            + (0 if qv is None else (qv[i, row, h].double() * v[i, j, g].double()).sum())
                        )
                        * scale
                        for j in keys
                    ]
                )
                if case.softcap:
                    s = case.softcap * torch.tanh(s / case.softcap)
                if case.score_mod == "rel_bias":
                    s = s - 0.01 * torch.tensor([abs(row - j) for j in keys], dtype=torch.float64)
                weights = torch.exp(s)
                total = weights.sum() + (0 if sink is None else math.exp(float(sink[h])))
                out[i, row, h] = sum(weights[n] / total * v[i, j, g].double() for n, j in enumerate(keys))
    return out


@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(causal=False),
        dict(softcap=5.0),
        dict(window_left=3),
        dict(seqlen_q=2),
        dict(heads_kv=4),
        dict(sinks=True),
        dict(score_mod="rel_bias"),
        dict(seqlen_q=1, score_mod="rel_bias", sinks=True),
        dict(qv=True, heads_kv=1, head_dim=4, head_dim_v=8),
    ],
)
def test_reference_matches_the_naive_definition(options):
    case = Case(**{**dict(batch=2, seqlen_q=7, seqlen_k=7, heads_q=4, heads_kv=2, head_dim=8, dtype="fp32"), **options})
    inputs = Inputs(case, "cpu")
    q, k, v = inputs.dense()
    extra = extras(inputs)
    sink, qv = extra.get("learnable_sink"), extra.get("qv")
    got = attention_reference(q, k, v, case, sink=sink, qv=qv)
    scale = 1 / math.sqrt(case.head_dim + (case.dim_v if case.qv else 0))
    want = _naive(q, k, v, case, scale, sink=sink, qv=qv)
    assert torch.allclose(got.double(), want, atol=1e-5)


def test_qv_is_attention_over_q_and_qv_side_by_side():
    """Absorbed MLA: q.k + qv.v is one dot product of [q, qv] with [k, v] (the latent cache holds both)."""
    case = Case(batch=1, seqlen_q=5, seqlen_k=9, heads_q=4, heads_kv=1, head_dim=4, head_dim_v=8, qv=True, dtype="fp32")
    inputs = Inputs(case, "cpu")
    q, k, v = inputs.dense()
    qv = extras(inputs)["qv"]
    joined = replace(case, head_dim=12, head_dim_v=8, qv=False)
    want = attention_reference(torch.cat([q, qv], -1), torch.cat([k, v], -1), v, joined)
    assert torch.allclose(attention_reference(q, k, v, case, qv=qv), want, atol=1e-6)


def test_reference_matches_torch_sdpa_math_in_float64():
    case = Case(batch=2, seqlen_q=16, seqlen_k=16, heads_q=4, heads_kv=4, head_dim=8, dtype="fp32")
    q, k, v = Inputs(case, "cpu").dense()
    want = torch.nn.functional.scaled_dot_product_attention(
        *(t.double().transpose(1, 2) for t in (q, k, v)), is_causal=True
    ).transpose(1, 2)
    assert torch.allclose(attention_reference(q, k, v, case).double(), want, atol=1e-5)


def test_mask_agrees_with_visible_keys():
    for case in (Case(causal=True), Case(causal=False, window_left=2), Case(causal=True, window_left=0)):
        mask = attention_mask(case, 3, 6, "cpu")
        for row in range(3):
            assert [j for j in range(6) if mask[row, j]] == list(visible_keys(row, 3, 6, case.causal, case.window_left))


def test_paged_cache_holds_each_sequence_in_its_shuffled_pages():
    case = Case(batch=3, seqlen_q=1, seqlen_k=40, heads_q=2, heads_kv=1, head_dim=8, page_size=16, dtype="fp32")
    inputs = Inputs(case, "cpu")
    q, k, v = inputs.dense()
    lengths = ragged_lengths(case.seqlen_k, case.batch)
    paged = PagedKV(inputs, k, v, lengths)
    assert paged.page_table.dtype == torch.int32 and paged.seqlens.tolist() == lengths
    assert len(set(paged.page_table.flatten().tolist())) == paged.page_table.numel()  # no page shared
    for i, n in enumerate(lengths):
        gathered = paged.k_cache[paged.page_table[i].long()].reshape(-1, 1, 8)
        assert torch.equal(gathered[:n], k[i, :n])
        assert torch.isfinite(paged.v_cache).all()


def test_ragged_lengths_differ_and_start_full():
    lengths = ragged_lengths(1024, 4)
    assert lengths[0] == 1024 and len(set(lengths)) == 4 and min(lengths) >= 1


def _sdpa_per_sequence(q, k, v, lengths_q, lengths_k):
    outs = []
    for i, (nq, nk) in enumerate(zip(lengths_q, lengths_k)):
        qi, ki, vi = q[i : i + 1, :nq], k[i : i + 1, :nk], v[i : i + 1, :nk]
        ki = ki.repeat_interleave(qi.shape[2] // ki.shape[2], 2)
        vi = vi.repeat_interleave(qi.shape[2] // vi.shape[2], 2)
        outs.append(
            torch.nn.functional.scaled_dot_product_attention(
                *(t.transpose(1, 2) for t in (qi, ki, vi)), is_causal=nq == nk
            ).transpose(1, 2)[0]
        )
    return outs


def test_varlen_packing_round_trips_through_a_correct_kernel():
    case = Case(batch=3, seqlen_q=24, seqlen_k=24, heads_q=4, heads_kv=2, head_dim=8, dtype="fp32")

    def kernel(q, k, v, cu, longest):  # unpacks cu_seqlens itself: a kernel mixing sequences would fail
        bounds = cu.tolist()
        assert longest == max(b - a for a, b in zip(bounds, bounds[1:]))
        pieces = [(q[a:b][None], k[a:b][None], v[a:b][None]) for a, b in zip(bounds, bounds[1:])]
        return torch.cat([_sdpa_per_sequence(qi, ki, vi, [qi.shape[1]], [ki.shape[1]])[0] for qi, ki, vi in pieces])

    call = varlen_call(case, "cpu", kernel)
    assert torch.allclose(call.extract(call.run()).float(), call.reference, atol=1e-5)


def test_paged_decode_through_a_correct_kernel_matches_the_reference():
    case = Case(batch=3, seqlen_q=1, seqlen_k=40, heads_q=4, heads_kv=2, head_dim=8, page_size=16, dtype="fp32")

    def kernel(q, paged):  # reads K/V back through the page table, as a paged kernel does
        outs = []
        for i, n in enumerate(paged.kv_lens):
            k = paged.k_cache[paged.page_table[i].long()].flatten(0, 1)[None]
            v = paged.v_cache[paged.page_table[i].long()].flatten(0, 1)[None]
            outs.append(_sdpa_per_sequence(q[i : i + 1], k, v, [1], [n])[0])
        return torch.stack(outs)

    call = paged_call(case, "cpu", kernel)
    assert torch.allclose(call.extract(call.run()).float(), call.reference, atol=1e-5)


# -- SmokeReport -----------------------------------------------------------------------------------------------
def _report() -> SmokeReport:
    return SmokeReport(
        level="quick",
        timeout_s=60.0,
        results=[
            KernelResult(
                kernel="fa4-dense",
                family="fa4",
                title="FA4",
                status="ok",
                case=Case(),
                max_abs_error=0.008,
                tolerance=0.03,
                first_call_s=3.7,
                steady_ms=2.1,
                flops=10,
                tflops=0.5,
            ),
            KernelResult(
                kernel="fa2-dense",
                family="fa2",
                title="FA2",
                status="skipped",
                skip_basis="environment",
                message="FlashAttention 2 is not installed (pip: flash-attn)",
            ),
        ],
    )


def test_report_round_trips_through_json():
    report = _report()
    again = SmokeReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report
    assert again.results[0].case == Case()
    assert report.counts() == {"ok": 1, "skipped": 1} and report.failed == []


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(schema_version=99), "schema_version 99 is not supported"),
        (lambda d: d.update(kind="facts"), "not a smoke report"),
        (lambda d: d["results"][0].update(status="fine"), "status: 'fine' is not one of"),
        (lambda d: d["results"][1].update(skip_basis="mood"), "skip_basis"),
        (lambda d: d["results"][0].update(steady_ms="fast"), "steady_ms: expected float"),
        (lambda d: d["results"][0]["case"].update(heads_kv=3), "not a multiple"),
        (lambda d: d["results"][0].pop("status"), "missing required key 'status'"),
    ],
)
def test_report_from_dict_refuses_malformed_reports(mutate, message):
    data = _report().to_dict()
    mutate(data)
    with pytest.raises(SmokeReportError, match=message):
        SmokeReport.from_dict(data)


# -- compile caches ----------------------------------------------------------------------------------------------
from attn_preflight.probe.smoke.caches import cache_environment  # noqa: E402


def test_caches_go_under_xdg_cache_home_with_fa4s_persistent_cache_switched_on(tmp_path):
    added, root, notes = cache_environment({"XDG_CACHE_HOME": str(tmp_path)})
    assert root == tmp_path / "attn-preflight" and notes == []
    assert added["FLASH_ATTENTION_CUTE_DSL_CACHE_DIR"] == str(root / "fa4")
    assert added["FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED"] == "1"
    assert added["CUTE_DSL_CACHE_DIR"] == str(root / "cute-dsl")
    assert added["FLASHINFER_WORKSPACE_BASE"] == str(root / "flashinfer")
    assert added["TRITON_CACHE_DIR"] == str(root / "triton")
    assert added["PYTHONPYCACHEPREFIX"] == str(root / "pycache")
    assert all((root / sub).is_dir() for sub in ("fa4", "cute-dsl", "flashinfer", "triton", "pycache"))


def test_bytecode_is_cached_for_workers_even_where_the_image_forbids_writing_it(tmp_path):
    # The H200 image sets PYTHONDONTWRITEBYTECODE=1 over --no-compile installs: every import recompiled.
    added, root, _ = cache_environment({"XDG_CACHE_HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"})
    assert added["PYTHONPYCACHEPREFIX"] == str(root / "pycache") and added["PYTHONDONTWRITEBYTECODE"] == ""
    mine, _, _ = cache_environment(
        {"XDG_CACHE_HOME": str(tmp_path), "PYTHONPYCACHEPREFIX": "/mine", "PYTHONDONTWRITEBYTECODE": "1"}
    )
    assert "PYTHONPYCACHEPREFIX" not in mine and "PYTHONDONTWRITEBYTECODE" not in mine


def test_a_cache_variable_the_user_set_wins(tmp_path):
    added, _, _ = cache_environment({"XDG_CACHE_HOME": str(tmp_path), "TRITON_CACHE_DIR": "/mine"})
    assert "TRITON_CACHE_DIR" not in added and "CUTE_DSL_CACHE_DIR" in added


def test_an_unwritable_cache_is_left_out_with_a_note_and_never_breaks_the_run(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    environ = {**__import__("os").environ, "XDG_CACHE_HOME": str(blocker)}
    added, _, notes = cache_environment(environ)
    assert added == {} and len(notes) == 5 and all("cannot write" in note for note in notes)
    from attn_preflight.probe.smoke.kernels import registry as kernels
    from attn_preflight.probe.smoke.runner import Runner

    math_kernel = kernels()["sdpa-math"]
    small = Case(batch=1, seqlen_q=32, seqlen_k=32, heads_q=2, heads_kv=1, head_dim=16)
    report = Runner(timeout=120, environ=environ).run([(math_kernel, [small])])
    assert [r.status for r in report.results] == ["ok"]
    assert report.machine.cache_notes == notes
