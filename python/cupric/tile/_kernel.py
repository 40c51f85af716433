"""Kernels and helpers: @ct.kernel, @ct.function, ct.Constant, launching (kernel[grid](...),
ct.launch), specialisation and the in-memory cache, the interpreter, and kernel.inspect."""

import functools
import hashlib
import inspect
import os
import stat
import sys
import time
import types
import warnings

import numpy as np

from .. import _cupric as _c
from .. import _dtypes as _dt
from .. import _kernel_report
from .._cupric import _profiler
from .._progress import after_a_second
from . import _cuda, _globals, _index
from . import _interp as I
from ._callables import Constant, Launchable, Specialisations, TileFunction, freeze, function, is_constant
from ._frontend import Frontend
from ._paths import build_stamp, include_dir
from ._source import CompileError, _function_lines, user_facing

_tile = _c._tile


# ---- helpers -----------------------------------------------------------------------------------

_warned_no_compiler = False


def _user_stacklevel():
    """warnings.warn's stacklevel that points at the first frame outside cupric (the user's launch)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _host_compiler_available():
    global _warned_no_compiler
    info = _tile.host_compiler()
    if info["available"]:
        return True
    if not _warned_no_compiler:
        _warned_no_compiler = True
        warnings.warn(
            f"cupric.tile: {info['problem']}; CPU kernels run in the (slow) interpreter instead "
            "(CUPRIC_TILE_INTERPRET=1 chooses the interpreter and silences this warning)",
            RuntimeWarning,
            stacklevel=_user_stacklevel(),
        )
    return False


# ---- fingerprints of kernels (for the disk index) -------------------------------------------------

_HASHABLE = (bool, int, float, complex, str, bytes, type(None))


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _source_identity(fn):
    """What stands for a function's source in its fingerprint: a hash of its whole file's bytes and
    the function's place in it (~0.04 ms, where linecache's read and split of the file cost ~0.15
    ms at a new process' first launch; an edit elsewhere in the file runs the frontend again, and
    the compiled code, keyed by what it emits, is found again), or the text itself where there is
    no such file (a notebook cell, whose lines linecache holds)."""
    code = fn.__code__
    try:
        if stat.S_ISREG(os.stat(code.co_filename).st_mode):
            with open(code.co_filename, "rb") as f:
                digest = hashlib.sha1(f.read()).hexdigest()
            return f"{digest}\0{code.co_firstlineno}\0{fn.__qualname__}"
    except (OSError, ValueError):
        pass
    found = _function_lines(fn) or inspect.getsourcelines(fn)
    return "".join(found[0])


def _fingerprint(fn, seen=None):
    seen = set() if seen is None else seen
    if fn in seen:
        return ""
    seen.add(fn)
    parts = [_source_identity(fn)]
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    import builtins

    for name in sorted(_code_names(fn.__code__) | set(closure)):
        if name in closure:
            v = closure[name]
        elif name in fn.__globals__:
            v = fn.__globals__[name]
        elif hasattr(builtins, name):
            v = getattr(builtins, name)
        else:
            continue  # an attribute name, not a variable
        if isinstance(v, TileFunction):
            sub = _fingerprint(v.fn, seen)
            if sub is None:
                return None
            parts.append(f"{name}=function:{sub}")
        elif isinstance(v, types.ModuleType):
            parts.append(f"{name}=module:{v.__name__}")
        elif (
            isinstance(v, _HASHABLE)
            or _dt.is_dtype_like(v)
            or (isinstance(v, tuple) and all(isinstance(x, _HASHABLE) for x in v))
        ):
            parts.append(f"{name}={type(v).__name__}:{v!r}")
        elif isinstance(v, (types.BuiltinFunctionType, types.FunctionType, type, Kernel)) and (
            getattr(v, "__module__", "") or ""
        ).split(".")[0] in ("cupric", "builtins", "math", "numpy"):
            parts.append(f"{name}=callable:{getattr(v, '__module__', '')}.{getattr(v, '__qualname__', name)}")
        else:
            return None  # something whose effect on the kernel cannot be hashed: no index
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


# ---- specialisations -------------------------------------------------------------------------------


def _is_array_like(v):
    return _c._foreign_kind(v) is not None  # an array the importer reads (nothing is read here)


def _is_typed_scalar(v):
    """NumPy scalars and 0-d arrays: scalar arguments that keep their dtype (not weak)."""
    return isinstance(v, np.generic) or (isinstance(v, (_c.ndarray, np.ndarray)) and v.ndim == 0)


def _as_cupric(v):
    """A host array argument as a cupric array over the same memory (NumPy bfloat16 included)."""
    return I.host_view(v)


class Compiled:
    """One specialisation of a kernel: its IR, generated sources and loaded CPU binary. The IR
    is built on first need: a kernel found in the disk index launches without it."""

    def __init__(self, kernel, key, specs, num_threads=None):
        self.kernel = kernel
        self.key = key
        self.specs = specs
        self.num_threads = kernel.num_threads if num_threads is None else int(num_threads)
        self._function = None
        self.frontend_seconds = 0.0
        self.host = None
        self.launcher = None
        self._cuda = None
        self.cuda_kernels = {}  # device index -> _cuda.CudaKernel

    @property
    def function(self):
        if self._function is None:
            t0 = time.perf_counter()
            b = _tile.Builder(self.kernel.fn.__name__)
            f = Frontend(b, self.kernel.debug).compile_kernel(self.kernel.fn, self.specs)
            self._function = f  # as built: each target runs its stages on a copy (emit)
            self.frontend_seconds = time.perf_counter() - t0
        return self._function

    def build_host(self):
        if self.launcher is None:
            t0 = time.perf_counter()
            if not self._load_from_index():
                self.host = self.function.emit("host", self.kernel.debug)
                with after_a_second(f"compiling tile kernel {self.kernel.fn.__name__} for the CPU"):
                    info = _tile.compile_host(self.host["source"], include_dir())
                self.host.update(info)
                self.launcher = _tile.HostLauncher(info["key"], self.function)
                if (key := self.index_key(("cpu", _tile.host_environment(include_dir())))) is not None:
                    params = [list(p) for p in self.launcher.params()]
                    _index.save(key, {"shared_object": info["key"], "params": params})
            self.host["seconds"] = time.perf_counter() - t0
        return self.launcher

    def cuda(self):
        if self._cuda is None:
            self._cuda = self.function.emit("cuda", self.kernel.debug, self.num_threads, ring=_cuda.ring_mode())
        return self._cuda

    def index_key(self, target):
        """The key of this specialisation's entry in the kernel index (see _index) for `target`
        (strings naming the target and what its code depends on), or None: not indexed."""
        fp = self.kernel.fingerprint()
        # CUPRIC_TILE_DUMP: a kernel found in the index would skip the stages it asks to see
        if fp is None or os.environ.get("CUPRIC_TILE_NO_INDEX") or os.environ.get("CUPRIC_TILE_DUMP"):
            return None
        return _index.key(fp, repr(self.key), str(self.kernel.debug), str(self.num_threads), build_stamp(), *target)

    def _load_from_index(self):
        key = self.index_key(("cpu", _tile.host_environment(include_dir())))
        entry = _index.load(key, _index.HOST) if key is not None else None
        if entry is None:
            return False
        try:
            self.launcher = _tile.HostLauncher(entry["shared_object"], [tuple(p) for p in entry["params"]])
        except KeyError:
            return False  # the compiled kernel left the cache (trimmed, or rejected): compile it again
        except (ValueError, TypeError) as err:
            _index.drop(key, str(err))
            return False
        self.host = {"key": entry["shared_object"], "cache_hit": True, "index_hit": True, "compile_seconds": 0.0}
        return True


def interpreting():
    """True when CUPRIC_TILE_INTERPRET asks every launch to run in the interpreter."""
    return os.environ.get("CUPRIC_TILE_INTERPRET", "0") not in ("", "0")


class _Launch:
    """One specialisation with its run-time arguments: load() compiles or loads its binary for the
    arguments' device, calling it launches over a grid (CPU: synchronous; CUDA: on `stream`)."""

    __slots__ = ("compiled", "runtime", "device", "constants")

    def __init__(self, compiled, runtime, device, constants):
        self.compiled, self.runtime, self.device, self.constants = compiled, runtime, device, constants

    def load(self):
        if self.device == "cpu":
            self.compiled.build_host()
        else:
            _cuda.load(self.compiled, self.device)

    def plan(self, values, fixed=(), keyed=(), tag=True):
        """A launch plan for these values (see LaunchPlans), or None where the arguments are of a
        kind plans do not take (they launch through __call__ each time). @ct.autotune's plans
        supply the parameters named in `fixed` (not passed), check the shapes or values of those
        in `keyed` too, and are tagged with their config."""
        c = self.compiled
        if self.device == "cpu":
            target = c.build_host()
            host = iter(target.params())  # (is_array, dtype, ndim, written) per run-time parameter
            scalar_dtypes = None
        else:
            k = _cuda.load(c, self.device)
            if k.debug:
                return None  # its launches zero and read back a status word (CudaKernel.launch)
            # the plan makes the tensor maps (TMA rings) and a persistent kernel's grid arguments
            maps = [list(m) for m in k.tensor_maps]
            target = (k.kernel, k.device, k.threads, k.smem, maps, k.sms, k.split_bytes, k.cluster)
            host, scalar_dtypes = None, k.scalar_dtypes(c.specs)
            if scalar_dtypes is None:
                return None
            scalar_dtypes = iter(scalar_dtypes)
        facts = []
        for name, spec in c.specs:
            if spec[0] == "constant":
                facts.append("fixed" if name in fixed else None)
                continue
            _, dtype, _, written = next(host) if host is not None else (None, None, 0, False)
            if spec[0] == "array":
                facts.append(("array", spec[1], spec[2], written, name in keyed))
            else:
                facts.append(("weak" if spec[2] else "typed", dtype or next(scalar_dtypes), 0, False, name in keyed))
        return _tile.make_launch_plan(tuple(values), facts, self.constants, target, _grid3, tag)

    def __call__(self, grid, stream=None):
        g = _grid3(grid, self.constants)
        if self.device == "cpu":
            self.compiled.build_host().launch(g, *self.runtime)
        else:
            _cuda.launch(self.compiled, g, self.runtime, stream, self.device)


def _interpreter_argument(v):
    """A run-time argument as the interpreter hands it to the body: arrays as I.Array (a cupric
    view), NumPy scalars and 0-d arrays as 0-d tiles (strong dtypes), Python numbers as they are
    (weak, NEP 50)."""
    if _is_typed_scalar(v):
        return I.Tile(I.host_view(np.asarray(v) if isinstance(v, np.generic) else v).to_device("cpu").copy())
    return I.Array(v) if _is_array_like(v) else v


def _grid3(grid, constants):
    if callable(grid):
        grid = grid(constants)
    return _tile.grid3(grid)  # integers only, >= 0, fewer than 2**63 blocks (TypeError / ValueError)


class Kernel(Launchable):
    """A @ct.kernel function. Launch with kernel[grid](*args) or ct.launch(stream, grid, kernel, *args);
    kernel.interpret[grid](*args) runs it in the interpreter; kernel.inspect(*args) shows every stage."""

    def __init__(self, fn, debug=False, num_threads=0):
        self.fn = fn
        self.debug = bool(debug or os.environ.get("CUPRIC_TILE_DEBUG") == "1")
        self.num_threads = int(num_threads or 0)
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters.values())
        for p in self.params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                raise TypeError(f"kernel {fn.__qualname__}: *args / **kwargs parameters are not supported")
        self.constants = [is_constant(p.annotation) for p in self.params]
        # the globals the body read when it was last specialised; plans hold while they do
        self._globals_key = None
        self._guards = _tile.GlobalGuards()
        self._plans = _tile.LaunchPlans(self._guards)  # the fast path of launches with arguments met before
        self._thread_plans = {}  # the same for launches with other num_threads (@ct.autotune's)
        self._launch_costs = {}  # launch_cost's answers
        self.cache = Specialisations(self._forget_plans)
        functools.update_wrapper(self, fn)

    def __repr__(self):
        return f"<cupric.tile kernel {self.fn.__qualname__}>"

    # ---- launching -------------------------------------------------------------------------------

    def _bind(self, args, kwargs):
        if not kwargs and len(args) == len(self.params):
            return args
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments[p.name] for p in self.params)

    def _specialise(self, values):
        key, specs, runtime, device = [], [], [], None
        for p, is_const, v in zip(self.params, self.constants, values, strict=True):
            if is_const:
                key.append(freeze(v))
                specs.append((p.name, ("constant", v)))
            elif _is_typed_scalar(v):  # before arrays: NumPy scalars have __array_interface__ too
                dt = _dt.as_dtype(v.dtype if isinstance(v, _c.ndarray) else I.host_view(np.asarray(v)).dtype)
                key.append(("s", dt.name))
                specs.append((p.name, ("scalar", dt, False)))
                runtime.append(v.item())
            elif _is_array_like(v):
                a = _cuda.device_array(v)  # CUDA arrays of any library; None for host arrays
                if a is None:
                    a = _as_cupric(v)
                d = str(a.device)
                if device is None:
                    device = d
                elif d != device:
                    raise ValueError(
                        f"kernel arguments are on different devices ({device} and {d}); move them with x.to_device(...)"
                    )
                key.append(("A", a.dtype.name, a.ndim))
                specs.append((p.name, ("array", a.dtype, a.ndim)))
                runtime.append(a)
            elif isinstance(v, (bool, int, float)):
                key.append(("S", type(v).__name__))
                dt = (
                    _dt.names.bool_
                    if isinstance(v, bool)
                    else _dt.names.int64
                    if isinstance(v, int)
                    else _dt.names.float64
                )
                specs.append((p.name, ("scalar", dt, True)))
                runtime.append(v)
            else:
                raise TypeError(
                    f"kernel {self.fn.__name__}: argument '{p.name}' is {type(v).__name__}; "
                    "expected an array, a number, or a ct.Constant parameter"
                )
        globals_key = self._read_globals()
        if globals_key:
            key.append(("globals", globals_key))
        return tuple(key), specs, runtime, device or "cpu"

    def _read_globals(self):
        """The key part of the globals and closure variables the body (and its helpers) read now.
        A new value makes a new specialisation, and the plans made before it stop applying (a new
        generation of the guards); a name rebound to an equal value only updates the guards."""
        sites = _globals.reads(self.fn, lambda v: v.fn if isinstance(v, TileFunction) else None)
        globals_key = _globals.snapshot(self.fn.__name__, sites)
        changed = globals_key != self._globals_key
        if changed and self._globals_key is not None and hasattr(self, "_fingerprint"):
            del self._fingerprint  # it hashed the old values
        self._guards.set(_globals.guards(sites), changed)
        self._globals_key = globals_key
        return globals_key

    def compiled(self, key, specs, num_threads=None):
        if num_threads is not None and int(num_threads) != self.num_threads:
            key = (*key, ("threads", int(num_threads)))  # a launch option of @ct.autotune's configs
        c = self.cache.get(key)
        if c is None:
            c = self.cache[key] = Compiled(self, key, specs, num_threads)
        return c

    def fingerprint(self):
        """Hash of the kernel's source and of everything it refers to by name (helpers' sources,
        global constants, modules), or None when something it refers to cannot be hashed."""
        if not hasattr(self, "_fingerprint"):
            self._fingerprint = _fingerprint(self.fn)
        return self._fingerprint

    @user_facing
    def _launch(self, grid, stream, interpret, *args, **kwargs):
        t0 = _profiler.now_ns() if _profiler.mode("record") else 0  # cu.profiler's tile_launch record
        # the fast path: one C++ call when the arguments fit a launch plan (positional, no kwargs)
        if not kwargs and len(args) < len(self.params):
            args = self._with_defaults(args)
        if interpret or kwargs or self._plans.launch(grid, stream, args) is None:
            self._run(grid, stream, interpret, self._bind(args, kwargs), tried=not (interpret or kwargs))
        if t0:
            t1 = _profiler.now_ns()
            moved, flops = self._recorded_cost(grid, args, kwargs)
            _profiler.record("tile_launch", self.fn.__name__, t0, t1, f"grid {grid}", bytes=moved, flops=flops)

    def _recorded_cost(self, grid, args, kwargs):
        """The (bytes, flops) of a profiled launch, from its IR; zeros where the model cannot tell
        (a grid given as a function of the constants, arguments it cannot read)."""
        try:
            return self.launch_cost(grid, args, kwargs)
        except Exception:  # noqa: BLE001 - a profile must never break the launch it records
            return 0.0, 0.0

    def _plans_for(self, num_threads):
        if num_threads is None or int(num_threads) == self.num_threads:
            return self._plans
        plans = self._thread_plans.get(int(num_threads))
        if plans is None:
            plans = self._thread_plans[int(num_threads)] = _tile.LaunchPlans(self._guards)
        return plans

    def _forget_plans(self):
        self._plans.clear()
        self._thread_plans.clear()

    def _run(self, grid, stream, interpret, values, num_threads=None, tried=False):
        """Launches with bound parameter values (one per parameter, in order): through a launch
        plan when one fits (`tried`: the caller tried them), else by specialising them, and then
        the plan made for them launches them (and the next launches that fit it)."""
        if interpret or interpreting():
            return self._interpret(grid, values)
        plans = self._plans_for(num_threads)
        if not tried and plans.launch(grid, stream, values) is not None:
            return
        launch = self._prepare(values, num_threads)
        if launch is None:
            return self._interpret(grid, values)
        launch.load()
        try:
            plan = launch.plan(values)
        except (TypeError, ValueError, OverflowError):  # an argument plans cannot read: the Python path
            plan = None
        if plan is not None:
            plans.add(plan)
            if plan.launch(grid, stream, values):
                return
        launch(grid, stream)

    def _prepare(self, values, num_threads=None):
        """The specialisation for these values, ready to load and launch; None when a CPU kernel
        meets no C++ compiler (the caller interprets it instead)."""
        key, specs, runtime, device = self._specialise(values)
        if device == "cpu" and key not in self.cache and not _host_compiler_available():
            return None
        constants = {p.name: v for p, c, v in zip(self.params, self.constants, values, strict=True) if c}
        return _Launch(self.compiled(key, specs, num_threads), runtime, device, constants)

    def _interpret(self, grid, values):
        constants = {p.name: v for p, c, v in zip(self.params, self.constants, values, strict=True) if c}
        g = _grid3(grid, constants)
        args = [v if c else _interpreter_argument(v) for c, v in zip(self.constants, values, strict=True)]
        for bz in range(g[2]):
            for by in range(g[1]):
                for bx in range(g[0]):
                    with I.Block((bx, by, bz), g, self.debug):
                        self.fn(*args)

    # ---- inspection ----------------------------------------------------------------------------------

    @user_facing
    def cost(self, grid, *args, **kwargs):
        """What a launch over `grid` with these arguments moves and computes, from the IR (no
        compile, no GPU): a TileCost with .bytes and .total_flops over the grid, per block, and the
        roofline bound on this GPU (else the H200); the profiler's table uses it for tile launches."""
        return self._cost(grid, self._bind(args, kwargs))

    def launch_cost(self, grid, args, kwargs=None):
        """(bytes, flops) of a launch over the whole grid, from the IR, cached per specialisation,
        argument shapes and grid: what cu.profiler records for tile launches."""
        values = self._bind(args, kwargs or {})
        facts = tuple(tuple(v.shape) if len(getattr(v, "shape", ())) else v for v in values)  # arrays by shape
        cache_key = (facts, tuple(grid) if isinstance(grid, (tuple, list)) else (grid,))
        found = self._launch_costs.get(cache_key)
        if found is None:
            c = self._cost(grid, values)
            found = self._launch_costs[cache_key] = (c.bytes, c.total_flops)
        return found

    def _cost(self, grid, values, num_threads=None):
        key, specs, _, _ = self._specialise(values)
        function = self.compiled(key, specs, num_threads).function
        params, dtypes = {}, []
        for p, constant, v in zip(self.params, self.constants, values, strict=True):
            shape = getattr(v, "shape", ())
            if constant:
                continue
            if len(shape):
                params[p.name] = tuple(int(n) for n in shape)
                dtypes.append(str(v.dtype))
            else:
                params[p.name] = float(v)
        return _kernel_report.tile_cost(function, params, grid, _roof_dtype(dtypes))

    @user_facing
    def inspect(self, *args, compile_cuda=False, grid=None, **kwargs):
        """Every stage for these arguments: {'stages' (stage name -> the IR after it, in the order
        the compiler runs them: 'frontend', the canonical stages, then the GPU's), 'ir', 'ir_canonical',
        'ir_layout' (aliases of the IR after 'frontend', 'remove_dead_code' and 'assign_layouts'),
        'host_source', 'cuda_source', 'cuda', and with compile_cuda=True (NVRTC through cupric.cuda,
        else nvcc) 'ptx', 'sass' (where nvdisasm or cuobjdump exists; 'sass_note' says which, or why
        not), 'resources' (ptxas' report), 'registers',
        'spill_stores', 'spill_loads', 'dynamic_shared_memory', 'report' (a cupric KernelReport:
        print it for registers, spills, shared memory and the occupancy on the arch), 'occupancy',
        and with a GPU 'attributes' of the loaded kernel}; with grid=, 'cost' (kernel.cost: bytes
        and flops from the IR and the roofline bound)."""
        return self._inspect(self._bind(args, kwargs), compile_cuda, grid=grid)

    def _inspect(self, values, compile_cuda, num_threads=None, grid=None):
        key, specs, _, _ = self._specialise(values)
        c = self.compiled(key, specs, num_threads)
        host = c.function.emit("host", self.debug, record_stages=True)
        cuda = c.function.emit("cuda", self.debug, c.num_threads, record_stages=True, ring=_cuda.ring_mode())
        stages = dict(host["stages"])
        for name, ir in cuda["stages"]:
            stages.setdefault(name, ir)  # the stages both targets run give the same IR
        out = {
            "stages": stages,
            **{alias: stages[name] for alias, name in _STAGE_ALIASES.items()},
            "host_source": host["source"],
            "cuda_source": cuda["source"],
            "cuda": {k: cuda[k] for k in ("entry", "threads", "vec", "smem_bytes", "params", "param_types")},
        }
        if c.launcher is not None:
            out["host_binary"] = c.host["key"]  # its compile cache key (kind "shared_object")
        if grid is not None:
            out["cost"] = self._cost(grid, values, num_threads)
        if compile_cuda:
            out.update(_cuda.inspect(cuda["source"], include_dir(), smem_bytes=cuda["smem_bytes"]))
            report = _kernel_report.tile_kernel_report(
                out["cubin"],
                out["resources_log"],
                out["arch"],
                cuda["threads"],
                cuda["smem_bytes"],
                cuda["source"],
                out["ptx"],
            )
            report.cost = out.get("cost")
            out["sass"], out["sass_note"] = report.sass, report.sass_note
            out["report"], out["occupancy"] = report, report.occupancy
        return out


def _roof_dtype(dtypes):
    """The precision a kernel's roof is read at: its narrowest floating arrays' (tensor cores read
    bfloat16 / float16), float64 when all are, else float32."""
    for t in ("bfloat16", "float16"):
        if t in dtypes:
            return t
    floats = [t for t in dtypes if t.startswith("float")]
    return "float64" if floats and all(t == "float64" for t in floats) else "float32"


# inspect()'s keys from before the stages had names, kept for the code and docs that read them
_STAGE_ALIASES = {"ir": "frontend", "ir_canonical": "remove_dead_code", "ir_layout": "assign_layouts"}


def kernel(fn=None, *, debug=False, num_threads=0):
    """Decorator: a tile kernel. `debug=True` keeps ct.print / ct.assert_ in compiled code;
    `num_threads` sets the CUDA block size (default: 128, or 256 for tiles of 8192+ elements)."""
    if fn is None:
        return lambda f: Kernel(f, debug=debug, num_threads=num_threads)
    return Kernel(fn, debug=debug, num_threads=num_threads)


def launch(stream, grid, kernel, *args, **kwargs):
    """Launches `kernel` (a @ct.kernel, or a @ct.autotune of one) over `grid` on `stream` (CUDA;
    None = the device's current stream; ignored on the CPU)."""
    if not hasattr(kernel, "_launch"):
        raise TypeError(f"ct.launch: expected a @ct.kernel, got {type(kernel).__name__}")
    return kernel._launch(grid, stream, False, *args, **kwargs)


__all__ = ["CompileError", "Constant", "Kernel", "TileFunction", "function", "kernel", "launch"]
