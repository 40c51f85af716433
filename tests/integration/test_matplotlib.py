"""matplotlib (Agg) drawing cupric CPU arrays: the artists hold the same data, and the rendered
pixels are identical to the same figure drawn from NumPy arrays."""

import cupric as cu
import numpy as np
import pytest
from clients import CAN_COPY, CPU_FALLBACK, needs_feature

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RNG = np.random.default_rng(2)
DATA = RNG.standard_normal((6, 20))
IMAGE = RNG.random((12, 16))

needs_copy = needs_feature(CAN_COPY, "copy.copy of cupric arrays (Line2D copies its data)")
needs_fallback = needs_feature(CPU_FALLBACK, "NumPy fallback for np.broadcast_arrays(..., None) on CPU arrays")


def render(draw, data):
    """The RGBA pixels of a small figure drawn by `draw(ax, data)`, and what draw returned."""
    fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
    try:
        artists = draw(ax, data)
        fig.canvas.draw()
        return np.asarray(fig.canvas.buffer_rgba()).copy(), artists
    finally:
        plt.close(fig)


def same_picture(draw):
    got, got_artists = render(draw, cu.asarray(DATA, copy=True))
    want, want_artists = render(draw, DATA)
    np.testing.assert_array_equal(got, want)
    return got_artists, want_artists


@needs_copy
def test_plot():
    got, want = same_picture(lambda ax, d: ax.plot(d[0], d[1], "o-") + ax.plot(d[2]))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.get_xydata(), w.get_xydata())


@needs_fallback
def test_bar():
    got, want = same_picture(lambda ax, d: ax.bar(d[0] * 5, d[1], width=0.5))
    np.testing.assert_array_equal([p.get_height() for p in got], [p.get_height() for p in want])


def test_imshow():
    def draw(ax, d):
        return ax.imshow(cu.asarray(IMAGE) if isinstance(d, cu.ndarray) else IMAGE, cmap="viridis")

    got, want = same_picture(draw)
    np.testing.assert_array_equal(np.asarray(got.get_array()), want.get_array())


def test_hist():
    got, want = same_picture(lambda ax, d: ax.hist(d[3], bins=7, range=(-3, 3)))
    np.testing.assert_array_equal(got[0], want[0])  # counts
    np.testing.assert_array_equal(got[1], want[1])  # bin edges


def test_scatter_and_fill_between():
    got, want = same_picture(lambda ax, d: (ax.scatter(d[0], d[1], c=d[2]), ax.fill_between(np.arange(20), d[4], d[5])))
    np.testing.assert_array_equal(got[0].get_offsets(), want[0].get_offsets())
    np.testing.assert_array_equal(np.asarray(got[0].get_array()), want[0].get_array())


def test_pcolormesh_and_contour():
    same_picture(lambda ax, d: (ax.pcolormesh(d[:, :8]), ax.contour(d[:, 8:16], levels=4)))
