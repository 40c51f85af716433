"""Grouped matrix products in one launch, as mixture-of-experts layers run them: G problems
out_g = a_g @ b_g of different M (the rows of a routed to expert g) and the same K and N. The
problems' rows lie one after another in one array `a` (sum of M, K), as a router leaves them; b holds
the experts' weights (G, K, N). Each block takes one (BM, BN) output tile: a table made on the host
says which tile row of `a` (and of `out`) it is and which problem, so the blocks of all problems
share one grid with no work wasted on padding. Every problem's M is a multiple of BM (the host helper
pads where it is not). On Hopper the K loop is staged like the plain matmul's: the tables are read by
the producer warpgroup too, which then issues the TMA copies of that problem's tiles.

    python examples/tile/grouped_matmul.py
"""

import cupric as cu
import numpy as np
from cupric import tile as ct


@ct.function
def problem_tile(a, b, out, m, g, n, BM, BN, BK):
    """out's tile (m, n) of problem g: a's tile row m (its rows) @ b[g]'s tile column n."""
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], BK)):
        ta = ct.load(a, index=(m, k), shape=(BM, BK))
        tb = ct.reshape(ct.load(b, index=(g, k, n), shape=(1, BK, BN)), (BK, BN))
        acc = ct.mma(ta, tb, acc)
    ct.store(out, index=(m, n), tile=acc.astype(out.dtype))


@ct.kernel
def grouped_matmul_kernel(
    a, b, out, tile_row, tile_problem, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]
):
    t, n = ct.bid(0), ct.bid(1)
    m = ct.reshape(ct.load(tile_row, index=(t,), shape=(1,)), ())  # this block's tile row of a and out
    g = ct.reshape(ct.load(tile_problem, index=(t,), shape=(1,)), ())  # ... and its problem
    problem_tile(a, b, out, m, g, n, BM, BN, BK)


def tile_tables(rows, bm):
    """The blocks' tables for problems of `rows` rows each (multiples of bm): each output tile
    row's index in the concatenated rows, and its problem (int32)."""
    tile_row, tile_problem, start = [], [], 0
    for g, r in enumerate(rows):
        if r % bm:
            raise ValueError(f"grouped_matmul: problem {g} has {r} rows, not a multiple of BM={bm}")
        tile_row.extend(range(start // bm, (start + r) // bm))
        tile_problem.extend([g] * (r // bm))
        start += r
    return np.asarray(tile_row, np.int32), np.asarray(tile_problem, np.int32)


def grouped_matmul(a, rows, b, out=None, bm=128, bn=256, bk=64, interpret=False):
    """out (sum(rows), N): the rows of problem g are a[offset_g : offset_g + rows[g]] @ b[g]."""
    rows = [int(r) for r in rows]
    if sum(rows) != a.shape[0] or len(rows) != b.shape[0] or a.shape[1] != b.shape[1]:
        raise ValueError(
            f"grouped_matmul: a {tuple(a.shape)} holds {a.shape[0]} rows, the problems {sum(rows)}; "
            f"b {tuple(b.shape)} must be ({len(rows)}, {a.shape[1]}, N)"
        )
    tr, tp = (cu.asarray(x, device=a.device) for x in tile_tables(rows, bm))
    n = b.shape[2]
    out = cu.empty((a.shape[0], n), dtype=a.dtype, device=a.device) if out is None else out
    launcher = grouped_matmul_kernel.interpret if interpret else grouped_matmul_kernel
    launcher[(len(tr), ct.cdiv(n, bn))](a, b, out, tr, tp, bm, bn, bk)
    return out


def reference(a, rows, b):
    out, start = [], 0
    for g, r in enumerate(rows):
        out.append(a[start : start + r].astype(np.float32) @ b[g].astype(np.float32))
        start += r
    return np.concatenate(out).astype(a.dtype)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    rows, k, n = [64, 192, 32, 96], 80, 48
    a = rng.standard_normal((sum(rows), k)).astype(np.float32)
    b = rng.standard_normal((len(rows), k, n)).astype(np.float32)
    got = grouped_matmul(cu.asarray(a), rows, cu.asarray(b), bm=32, bn=32, bk=16)
    np.testing.assert_allclose(np.asarray(got), reference(a, rows, b), rtol=1e-4, atol=1e-4)
    print("grouped matmul of", len(rows), "problems: ok")
