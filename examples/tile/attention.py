"""Flash attention, forward: out = softmax(q k^T * scale [+ causal mask]) v, computed one block of
queries at a time with a running max and sum (online softmax), so the (S, S) score matrix never
exists. q, k, v, out are (batch*heads, S, D).

    python examples/tile/attention.py
"""

import math

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.kernel
def attention_kernel(
    q, k, v, out, scale, CAUSAL: ct.Constant[bool], BM: ct.Constant[int], BN: ct.Constant[int], D: ct.Constant[int]
):
    m_blk = ct.bid(0)
    bh = ct.bid(1)
    seq = q.shape[1]
    scale_log2e = scale * 1.4426950408889634
    tq = ct.reshape(ct.load(q, index=(bh, m_blk, 0), shape=(1, BM, D)), (BM, D))
    m_i = ct.full((BM,), -ct.inf, dtype=ct.float32)
    l_i = ct.zeros((BM,), dtype=ct.float32)
    acc = ct.zeros((BM, D), dtype=ct.float32)
    rows = m_blk * BM + ct.arange(BM)
    end = ct.minimum((m_blk + 1) * BM, seq) if CAUSAL else seq
    for j in range(ct.cdiv(end, BN)):
        tk = ct.reshape(ct.load(k, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
        tv = ct.reshape(ct.load(v, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
        s = ct.mma(tq, ct.transpose(tk), ct.zeros((BM, BN), dtype=ct.float32))
        # only the blocks that reach past the sequence or (causal) above the diagonal are masked
        edge = (j + 1) * BN > seq
        if CAUSAL:
            edge = edge | ((j + 1) * BN > m_blk * BM + 1)
        if edge:
            cols = j * BN + ct.arange(BN)
            valid = cols[None, :] < seq
            if CAUSAL:
                valid = valid & (cols[None, :] <= rows[:, None])
            s = ct.where(valid, s, -ct.inf)
        # in base 2, the scale folded in: exp(scale (s - m)) = exp2(s c - m c) with c = scale log2(e),
        # one multiply-add and one ex2 an element (m is kept scaled)
        m_new = ct.maximum(m_i, ct.max(s, axis=1) * scale_log2e)
        p = ct.exp2(s * scale_log2e - m_new[:, None], flush_to_zero=True)
        alpha = ct.exp2(m_i - m_new, flush_to_zero=True)
        l_i = l_i * alpha + ct.sum(p, axis=1)
        acc = ct.mma(p.astype(tv.dtype), tv, acc * alpha[:, None])
        m_i = m_new
    o = acc / l_i[:, None]
    ct.store(out, index=(bh, m_blk, 0), tile=ct.reshape(o.astype(out.dtype), (1, BM, D)))


def attention(q, k, v, causal=False, bm=32, bn=32, interpret=False):
    bh, seq, d = q.shape
    out = cu.empty(q.shape, dtype=q.dtype, device=q.device)
    launcher = attention_kernel.interpret if interpret else attention_kernel
    launcher[(ct.cdiv(seq, bm), bh)](q, k, v, out, 1.0 / math.sqrt(d), causal, bm, bn, d)
    return out


def reference(q, k, v, causal=False):
    q, k, v = (x.astype(np.float32) for x in (q, k, v))
    s = q @ np.swapaxes(k, 1, 2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def benchmark(bh=8, seq=512, d=64, causal=False, dtype=np.float32, device="cpu", repeat=3):
    from _bench import best_time

    rng = np.random.default_rng(0)
    qn, kn, vn = (rng.standard_normal((bh, seq, d), dtype=np.float32) for _ in range(3))
    q, k, v = (cu.asarray(x, device=device).astype(dtype) for x in (qn, kn, vn))
    t = best_time(lambda: attention(q, k, v, causal), repeat)
    t_np = best_time(lambda: reference(qn, kn, vn, causal), repeat)
    flops = 4 * bh * seq * seq * d * (0.5 if causal else 1)
    return {
        "name": f"attention{' causal' if causal else ''}",
        "shape": (bh, seq, d),
        "seconds": t,
        "TFLOP/s": flops / t / 1e12,
        "numpy_seconds": t_np,
    }


if __name__ == "__main__":
    qn, kn, vn = (np.random.randn(3, 100, 32).astype(np.float32) for _ in range(3))
    for causal in (False, True):
        got = np.asarray(attention(cu.asarray(qn), cu.asarray(kn), cu.asarray(vn), causal))
        np.testing.assert_allclose(got, reference(qn, kn, vn, causal), rtol=1e-4, atol=1e-4)
    print("attention ok;", benchmark(), benchmark(causal=True))
