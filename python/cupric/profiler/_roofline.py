"""prof.roofline(path): every op (or kernel) group as a point of arithmetic intensity and achieved
GFLOP/s under its device's roofs (bandwidth and compute), drawn with matplotlib (imported here only)."""

from . import _ceilings


def draw(table, path, title="cupric roofline"):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    points = [r for r in table.rows if r["flops"] and r["bytes"] and r["gflops"]]
    devices = sorted({r["device"] for r in points}) or ["cpu"]
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    lo, hi = 1e-3, 1e4
    if points:
        intensities = [r["flops"] / r["bytes"] for r in points]
        lo, hi = min(lo, min(intensities) / 4), max(hi, max(intensities) * 4)
    for device in devices:
        c = _ceilings.for_device(device)
        for key, peak in sorted(c.flops.items(), key=lambda kv: kv[1]):
            knee = peak / c.bandwidth
            xs = [lo, knee, hi]
            ys = [lo * c.bandwidth, peak, peak]
            ax.plot(xs, ys, lw=1, label=f"{device} {key}: {peak:.0f} GFLOP/s, {c.bandwidth:.0f} GB/s ({c.source})")
    for r in points:
        x = r["flops"] / r["bytes"]
        ax.scatter([x], [r["gflops"]], s=20 + 8 * min(r["calls"], 20), alpha=0.7)
        ax.annotate(r["name"][:24], (x, r["gflops"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop / byte)")
    ax.set_ylabel("achieved GFLOP/s")
    skipped = len(table.rows) - len(points)
    ax.set_title(title + (f" ({skipped} groups without flops not drawn)" if skipped else ""), fontsize=10)
    ax.legend(fontsize=6, loc="lower right")
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
