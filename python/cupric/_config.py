"""`cu.show_config()`: how this cupric was built and what it runs here: the CPU kernels'
instruction-set variant (chosen at start-up, CUPRIC_CPU_TARGETS caps it), the CPU, threads, the
BLAS/LAPACK of CPU products (OpenBLAS), the tile language's host compiler and CUDA."""

import os

from . import _cupric as _c

__all__ = ["show_config"]


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "CPU part")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def _tile_compiler():
    try:
        c = _c._tile.host_compiler()
    except Exception as e:  # the probe itself failed: say so rather than hide the rest
        return {"available": False, "problem": str(e)}
    return {k: c[k] for k in ("available", "command", "version", "flags", "problem")}


def _config():
    d = _c._cpu_dispatch()
    from . import cuda

    return {
        "build": {"compiler": d["compiler"], "baseline flags": d["build_flags"],
                  "variants compiled": d["compiled"]},
        "cpu": {"model": _cpu_model(), "cores": os.cpu_count(), "features": d["cpu_features"],
                "variants supported": d["supported"], "CUPRIC_CPU_TARGETS": d["requested"] or None,
                "variant": d["variant"], "threads": _c.get_num_threads()},
        "blas": _c._blas_info(),
        "tile host compiler": _tile_compiler(),
        "cuda": {"available": cuda.is_available()},
    }


def show_config(mode="stdout"):
    """Prints the build and run-time configuration (mode='stdout'), or returns it as a dict of
    dicts (mode='dicts'), as numpy.show_config does. The CPU kernels' variant is the best
    instruction set that this CPU supports among those compiled, capped by CUPRIC_CPU_TARGETS."""
    if mode not in ("stdout", "dicts"):
        raise ValueError(f"show_config: mode must be 'stdout' or 'dicts', got {mode!r}")
    config = _config()
    if mode == "dicts":
        return config
    from ._version import __version__

    print(f"cupric {__version__}")
    for section, values in config.items():
        print(f"{section}:")
        for key, value in values.items():
            if isinstance(value, list):
                value = " ".join(value)
            print(f"  {key}: {value}")
