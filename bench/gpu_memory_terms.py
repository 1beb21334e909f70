"""The torch-level memory terms of issue 22's memory model, measured on the lent H200 (2026-12-02).

Run there as `python3 bench/gpu_memory_terms.py` (it imports only torch); the answer is kept in
bench/results/memory-terms-h200.json.

sampler: vLLM's sampler warm-up while profiling (v1/worker/gpu_model_runner.py _dummy_sampler_run: logits for
min(max_num_batched_tokens, max_num_seqs) dummy requests over the vocabulary, top-k = vocab - 1, top-p = 0.9),
on its PyTorch-native path (v1/sample/ops/topk_topp_sampler.py forward_native / apply_top_k_top_p): a float32
copy, the temperature, a full sort with int64 indices, the top-k and top-p masks, a scatter back, a softmax and
an exponential draw, written out as that sequence of torch operations. Peak above the bf16 logits, and bytes per
logits element counting the logits themselves.
graph: the pool one captured CUDA graph of a 512-token bf16 MLP (4096 -> 2 x 14336 -> 4096) keeps.
"""

import json

import torch

C = "cuda"


def sampler(R, V):
    torch.cuda.empty_cache()
    b16 = torch.randn(R, V, device=C, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    lg = b16.to(torch.float32)
    lg.div_(torch.full((R, 1), 0.5, device=C))
    k = torch.full((R,), V - 1, device=C, dtype=torch.long)
    p = torch.full((R,), 0.9, device=C)
    ls, li = lg.sort(dim=-1)
    m = ls.gather(1, (ls.size(1) - k).unsqueeze(1))
    m = ls < m
    ls.masked_fill_(m, -float("inf"))
    del m
    ps = ls.softmax(dim=-1)
    pm = torch.cumsum(ps, dim=-1, out=ps) <= 1 - p.unsqueeze(1)
    pm[:, -1] = False
    ls.masked_fill_(pm, -float("inf"))
    del pm, ps
    lg = ls.scatter(dim=-1, index=li, src=ls)
    del ls, li
    pr = lg.softmax(dim=-1, dtype=torch.float32)
    q = torch.empty_like(pr).exponential_()
    pr.div_(q).argmax(dim=-1)
    torch.cuda.synchronize()
    pk = torch.cuda.max_memory_allocated() - base
    return dict(R=R, V=V, peak_above_bf16=pk, bpe_with_bf16=round((pk + R * V * 2) / (R * V), 2))


def graph(T=512, H=4096, I=14336):  # noqa: E741
    torch.cuda.empty_cache()
    B = torch.bfloat16
    x = torch.randn(T, H, device=C, dtype=B)
    w1 = torch.randn(H, 2 * I, device=C, dtype=B)
    w2 = torch.randn(I, H, device=C, dtype=B)

    def step():
        a, b = (x @ w1).chunk(2, dim=-1)
        return (torch.nn.functional.silu(a) * b) @ w2

    ss = torch.cuda.Stream()
    ss.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(ss):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(ss)
    torch.cuda.synchronize()
    f0 = torch.cuda.mem_get_info()[0]
    r0 = torch.cuda.memory_reserved()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        step()
    gr.replay()
    torch.cuda.synchronize()
    return dict(
        T=T,
        H=H,
        I=I,
        pool_reserved=torch.cuda.memory_reserved() - r0,
        free_drop=f0 - torch.cuda.mem_get_info()[0],
        one_pass_act=T * (3 * I + H) * 2,
    )


if __name__ == "__main__":
    f, t = torch.cuda.mem_get_info()
    cases = ((256, 152064), (256, 201088), (1024, 201088), (1024, 151936), (1024, 128256))
    print(
        json.dumps(
            dict(
                dev=torch.cuda.get_device_name(0),
                torch=torch.__version__,
                total=t,
                free=f,
                sampler=[sampler(R, V) for R, V in cases],
                graph=graph(),
            ),
            indent=1,
        )
    )
