"""cupric.inspect(op, *args): the kernels an array op would launch on a GPU, and what each costs
it (source, PTX, SASS, registers, spills, local and shared memory, occupancy), without running
the op on a GPU or needing one: NVRTC makes the cubins, _kernel_report reads them."""

from . import _cupric as _c
from ._kernel_report import Inspection, array_kernel_reports, default_arch

_ka = _c._kernel_analysis


# ---- cupric.inspect -----------------------------------------------------------------------------


def _recorded_ops(op, args, kwargs):
    """The ops `op(*args, **kwargs)` runs, as the profiler records them, run on CPU copies."""
    from . import profiler
    from ._namespace import device

    if profiler._active:
        raise RuntimeError("cupric.inspect runs the op under its own profile: call it outside cu.profiler.profile()")
    cpu_args = [a.to_device("cpu") if isinstance(a, _c.ndarray) and str(a.device) != "cpu" else a for a in args]
    with device("cpu"), profiler.profile() as prof:
        op(*cpu_args, **kwargs)
    return prof.ops()


def inspect(op, *args, arch=None, sass=True, **kwargs):
    """The kernels `op(*args, **kwargs)` would launch on a GPU, each compiled with NVRTC for
    `arch` (default: this GPU's, else sm_90a) and read: an Inspection (print it for a table; each
    KernelReport has .source, .ptx, .sass, .registers, .occupancy, ...). The op runs once on
    CPU copies of its arguments, under the profiler, to learn which ops (and dtypes) it is made
    of; ops that launch no kernel of cupric's own (matmul: cuBLAS) are listed in .notes."""
    if not callable(op):
        raise TypeError(f"cupric.inspect: op must be a cupric function or ufunc, got {type(op).__name__}")
    if arch is not None:
        _ka.arch_limits(arch)  # an arch asked for without limits fails before anything is compiled
    arch = arch or default_arch()  # this GPU's: reports without occupancy where its limits are unknown
    dense = all(a.flags["C_CONTIGUOUS"] for a in args if isinstance(a, _c.ndarray))
    kernels, notes, seen = [], [], set()
    for e in _recorded_ops(op, args, kwargs):
        inputs = [dtype for _, dtype, _ in e.inputs]
        weak = [bool(w) for _, _, w in e.inputs]
        outputs = [dtype for _, dtype, _ in e.outputs]
        sources = _ka.op_sources(e.name, inputs, weak, outputs, dense)
        if not sources:
            notes.append(f"{e.name}: no kernel of cupric's own (a library call, or work the backend does not render)")
        for label, source in sources:
            if source in seen:
                continue
            seen.add(source)
            kernels.extend(array_kernel_reports(label, source, arch, sass))
    what = getattr(op, "__name__", None) or getattr(op, "name", None) or repr(op)
    return Inspection(f"cupric.inspect({what})", arch, kernels, notes)
