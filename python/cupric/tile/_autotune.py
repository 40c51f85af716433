"""@ct.autotune: on first use for a key, times each configuration of a kernel (values of its
Constant parameters and launch options), keeps the fastest, and caches the choice in memory and
in the shared compile cache on disk, so that a new process launches the winner without timing."""

import functools
import inspect
import json
import os
import statistics
import time
import warnings

import numpy as np

from .. import _cupric as _c
from .. import _dtypes as _dt
from .._progress import Progress
from . import _cuda
from ._callables import Launchable, Specialisations, freeze
from ._kernel import Kernel, interpreting
from ._paths import build_stamp, include_dir
from ._source import user_facing

_tile = _c._tile

_FORMAT = "cupric.tile autotune 1"  # bump when the stored record or the key changes meaning


class AutotuneError(RuntimeError):
    """Every configuration of a @ct.autotune kernel failed to compile or run. `failures` holds
    (config, exception) pairs, in the order of the configs."""

    def __init__(self, message, failures):
        super().__init__(message)
        self.failures = failures


class Config:
    """One configuration for @ct.autotune: values of the kernel's Constant parameters
    (`kwargs`), and launch options: `num_threads`, the CUDA block size (a multiple of 32 up to
    1024; the CPU ignores it). In `configs=[...]` a plain dict is a Config without launch options.

        ct.Config({"BM": 128, "BN": 64}, num_threads=256)
    """

    def __init__(self, kwargs=None, *, num_threads=None):
        if kwargs is not None and not isinstance(kwargs, dict):
            raise TypeError(f"ct.Config takes a dict of Constant parameter values, got {type(kwargs).__name__}")
        self.kwargs = dict(kwargs or {})
        if num_threads is not None:
            if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
                raise TypeError(f"ct.Config: num_threads must be an int, got {num_threads!r}")
            if not (32 <= num_threads <= 1024 and num_threads % 32 == 0):
                raise ValueError(f"ct.Config: num_threads must be a multiple of 32 from 32 to 1024, got {num_threads}")
            num_threads = int(num_threads)
        self.num_threads = num_threads

    @property
    def all_kwargs(self):
        """The parameter values and the launch options set, in one dict."""
        return self.kwargs | ({} if self.num_threads is None else {"num_threads": self.num_threads})

    def ident(self):
        """A hashable, printable identity (the part of the disk key that names the config)."""
        return (tuple((k, freeze(v)) for k, v in self.kwargs.items()), self.num_threads)

    def __eq__(self, other):
        return isinstance(other, Config) and self.ident() == other.ident()

    def __hash__(self):
        return hash(self.ident())

    def __repr__(self):
        parts = [f"{k}={v!r}" for k, v in self.all_kwargs.items()]
        return f"Config({', '.join(parts)})"


def _as_config(c):
    if isinstance(c, Config):
        return c
    if isinstance(c, dict):
        return Config(c)
    raise TypeError(f"@ct.autotune: a config is a dict or a ct.Config, got {type(c).__name__} {c!r}")


def _key_value(v):
    """What a `key` argument contributes to the tuning key: a number's value, an array's shape
    (`v` is a value as the kernel's specialisation sees it: arrays are cupric or DeviceArrays)."""
    if isinstance(v, _c.ndarray) and v.ndim == 0:
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if hasattr(v, "shape") and not _dt.is_dtype_like(v):
        return ("shape", tuple(int(d) for d in v.shape))
    return freeze(v)


def _writable_view(v, name):
    """A cupric view of an array argument, for reset_to_zero / restore_value."""
    if isinstance(v, _c.ndarray):
        return v
    if isinstance(v, np.ndarray):
        return _c.asarray(v)  # shares v's memory
    if hasattr(v, "__dlpack__"):
        return _c.from_dlpack(v)
    raise TypeError(
        f"@ct.autotune: '{name}' is {type(v).__name__}; reset_to_zero and restore_value need cupric, NumPy "
        "or DLPack arrays"
    )


def _compile_cache():
    """The compile cache when it keeps entries on disk (choices kept only in memory are already in
    `tuned.cache`), else None."""
    cache = _c.compile_cache
    return cache if cache.directory else None


class _Clock:
    """Times one launch: the wall clock on the CPU (launches there are synchronous), CUDA events
    recorded on the launch stream on a GPU."""

    def __init__(self, device, stream):
        self.cuda = device != "cpu"
        if self.cuda:
            self.mod = _cuda._cuda_module()
            self.index = int(device.split(":")[1]) if ":" in device else 0
            self.stream = _cuda.resolve_stream(stream, self.index)

    def launch_stream(self):
        return self.stream if self.cuda else None

    def after_array_writes(self):
        """Orders the launch stream after cupric's own writes (reset_to_zero / restore_value)."""
        if self.cuda:
            current = self.mod.current_stream(self.index)
            if current != self.stream:
                self.stream.wait(current)

    def __call__(self, run):
        """Milliseconds that run() takes."""
        if not self.cuda:
            t0 = time.perf_counter()
            run()
            return (time.perf_counter() - t0) * 1e3
        start, end = self.mod.Event(device=self.index), self.mod.Event(device=self.index)
        start.record(self.stream)
        run()
        end.record(self.stream)
        end.synchronize()
        return start.elapsed_time(end)


def _benchmark(run, setup, clock, warmup_ms, rep_ms):
    """Median milliseconds of run() (setup() before each call, untimed): one call to estimate,
    then enough warm-up calls to fill `warmup_ms` and timed calls to fill `rep_ms` (at least one)."""
    setup()
    estimate = max(clock(run), 1e-4)
    for _ in range(min(int(warmup_ms / estimate), 1000)):
        setup()
        run()
    times = []
    for _ in range(max(1, min(int(rep_ms / estimate), 1000))):
        setup()
        times.append(clock(run))
    return statistics.median(times)


class Autotuner(Launchable):
    """A @ct.autotune kernel. `tuned[grid](*args)` launches it with the fastest config for the
    arguments' key (timing every config on the first launch for a key); the configs' parameters are
    not passed. `tuned.cache` maps each key met to its Config, `tuned.timings` to
    {config: milliseconds or the exception that made it fail}; `tuned.best_config` is the config
    of the last launch."""

    def __init__(self, kernel, configs, key, reset_to_zero, restore_value, warmup, rep):
        self.kernel = kernel
        self.fn = kernel.fn
        self.configs = [_as_config(c) for c in configs]
        if not self.configs:
            raise ValueError(f"@ct.autotune of {self.fn.__name__}: give at least one config")
        params = {p.name: p for p in kernel.params}
        constants = [p.name for p, c in zip(kernel.params, kernel.constants, strict=True) if c]
        self.tuned = [n for n in params if any(n in c.kwargs for c in self.configs)]
        self._check_configs(params, constants)
        self.key = self._names(key, "key", params)
        for name in self.key:
            if name in self.tuned:
                raise ValueError(f"@ct.autotune of {self.fn.__name__}: key '{name}' is set by the configs")
        self.reset_to_zero = self._names(reset_to_zero, "reset_to_zero", params, arrays_only=True)
        self.restore_value = self._names(restore_value, "restore_value", params, arrays_only=True)
        self.warmup, self.rep = float(warmup), float(rep)
        self.signature = inspect.Signature([params[n] for n in params if n not in self.tuned])
        self._plans = _tile.LaunchPlans(kernel._guards)  # the fast path of launches for keys met before
        self.cache = Specialisations(self._plans.clear)
        self.timings = {}
        self.best_config = None
        functools.update_wrapper(self, kernel.fn)

    def _check_configs(self, params, constants):
        name = self.fn.__name__
        for c in self.configs:
            for k in c.kwargs:
                if k not in params:
                    raise TypeError(
                        f"@ct.autotune of {name}: {c} sets '{k}', which is not a parameter of {name} "
                        f"(its Constant parameters: {', '.join(constants) or 'none'})"
                    )
                if k not in constants:
                    raise TypeError(
                        f"@ct.autotune of {name}: {c} sets '{k}', which is not a ct.Constant parameter "
                        f"(configs set compile-time values; its Constant parameters: {', '.join(constants) or 'none'})"
                    )
            for k in self.tuned:
                if k not in c.kwargs and params[k].default is inspect.Parameter.empty:
                    raise TypeError(f"@ct.autotune of {name}: {c} does not set '{k}', which has no default")

    def _names(self, names, what, params, arrays_only=False):
        names = (names,) if isinstance(names, str) else tuple(names or ())
        for n in names:
            if n not in params:
                raise TypeError(
                    f"@ct.autotune of {self.fn.__name__}: {what} names '{n}', which is not a parameter "
                    f"(parameters: {', '.join(params)})"
                )
            if arrays_only and (n in self.tuned or self.kernel.constants[list(params).index(n)]):
                raise TypeError(f"@ct.autotune of {self.fn.__name__}: {what} names '{n}', which is not an array")
        return names

    def __repr__(self):
        return f"<cupric.tile autotuned kernel {self.fn.__qualname__}, {len(self.configs)} configs>"


    # ---- launching -------------------------------------------------------------------------------

    def _bind(self, args, kwargs):
        for k in kwargs:
            if k in self.tuned:
                raise TypeError(f"{self.fn.__name__}: '{k}' is chosen by @ct.autotune from its configs; do not pass it")
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(
                f"{self.fn.__name__}: {err} (the parameters chosen by @ct.autotune, {', '.join(self.tuned)}, "
                "are not passed)"
            ) from None
        bound.apply_defaults()
        return bound.arguments

    def _values(self, bound, config):
        """Every parameter's value, in order: the call's, and the config's for the tuned ones."""
        out = []
        for p in self.kernel.params:
            if p.name in self.tuned:
                out.append(config.kwargs.get(p.name, p.default))
            else:
                out.append(bound[p.name])
        return tuple(out)

    def _key(self, bound):
        """The tuning key: the device, the specialisation of the untuned parameters (dtypes, ndims,
        constants) and the values / shapes of the `key` arguments."""
        kernel = self.kernel
        spec_key, _, runtime, device = kernel._specialise(self._values(bound, self.configs[0]))
        seen = dict(
            zip([p.name for p, c in zip(kernel.params, kernel.constants, strict=True) if not c], runtime, strict=True)
        )
        parts = [device]
        n = len(kernel.params)  # then the globals the body reads, which are part of the key too
        parts += [k for p, k in zip(kernel.params, spec_key[:n], strict=True) if p.name not in self.tuned]
        parts += spec_key[n:]
        parts += [(n, _key_value(seen.get(n, bound[n]))) for n in self.key]
        return tuple(parts)

    @user_facing
    def _launch(self, grid, stream, interpret, *args, **kwargs):
        if not kwargs and len(args) < len(self.signature.parameters):
            args = self._with_defaults(args)
        if not (interpret or kwargs):  # a plan fits when the key, the specialisation and the kinds do
            config = self._plans.launch(grid, stream, args)
            if config is not None:
                self.best_config = config
                return
        bound = self._bind(args, kwargs)
        if interpret or interpreting():
            try:
                config = self.cache.get(self._key(bound), self.configs[0])
            except TypeError:  # arguments only the interpreter takes (NumPy bfloat16)
                config = self.configs[0]
            return self.kernel._run(grid, stream, True, self._values(bound, config), config.num_threads)
        key = self._key(bound)
        config = self.cache.get(key)
        if config is None:
            config = self._from_disk(key) or self._tune(key, bound, grid, stream)
        self.best_config = config
        values = self._values(bound, config)
        self.kernel._run(grid, stream, False, values, config.num_threads)
        if not kwargs and len(args) == len(self.signature.parameters):
            self._add_plan(values, config)

    def _add_plan(self, values, config):
        """A launch plan for the positional arguments of this launch: the next launches with the
        same key, specialisation and argument kinds take it (tuned parameters fixed to `config`)."""
        launch = self.kernel._prepare(values, config.num_threads)
        try:
            plan = None if launch is None else launch.plan(values, fixed=self.tuned, keyed=self.key, tag=config)
        except (TypeError, ValueError, OverflowError):
            plan = None
        if plan is not None:
            self._plans.add(plan)

    # ---- timing ------------------------------------------------------------------------------------

    def _time_configs(self, bound, grid, clock, setup, timings, progress):
        """Milliseconds (or the error) of each config into `timings`; False when a CPU has no C++
        compiler (the interpreter runs: nothing to time)."""
        for config in self.configs:
            progress.step(config)
            try:
                launch = self.kernel._prepare(self._values(bound, config), config.num_threads)
                if launch is None:
                    return False
                launch.load()
                s = clock.launch_stream()
                timings[config] = _benchmark(lambda: launch(grid, s), setup, clock, self.warmup, self.rep)  # noqa: B023
            except Exception as err:  # noqa: BLE001 - a config that cannot compile or run is skipped
                timings[config] = err
        return True

    def _tune(self, key, bound, grid, stream):
        t_start = time.perf_counter()
        device = key[0]
        clock = _Clock(device, stream)
        zero = [_writable_view(bound[n], n) for n in self.reset_to_zero]
        keep = [(v, v.copy()) for v in (_writable_view(bound[n], n) for n in self.restore_value)]

        def setup():
            for v in zero:
                v[...] = 0
            for v, saved in keep:
                v[...] = saved
            if zero or keep:
                clock.after_array_writes()

        timings = {}
        with Progress(f"autotuning {self.fn.__name__}", total=len(self.configs)) as progress:
            if not self._time_configs(bound, grid, clock, setup, timings, progress):
                return self.configs[0]  # a CPU without a C++ compiler: the interpreter, nothing to time
        setup()  # the launch after tuning sees the arguments as they were given
        ok = {c: t for c, t in timings.items() if not isinstance(t, Exception)}
        if not ok:
            self._raise_all_failed(key, timings)
        best = min(ok, key=ok.get)
        self.cache[key], self.timings[key] = best, timings
        self._to_disk(key, best, timings)
        if os.environ.get("CUPRIC_TILE_PRINT_AUTOTUNING") == "1":
            print(
                f"cupric.tile autotune {self.fn.__name__}: {best} in {ok[best]:.4g} ms "
                f"({len(ok)} of {len(self.configs)} configs ran, tuned in {time.perf_counter() - t_start:.2f} s)"
            )
        return best

    def _raise_all_failed(self, key, timings):
        lines = []
        for c, err in timings.items():
            text = f"{type(err).__name__}: {err}".replace("\n", "\n      ")
            lines.append(f"  {c}: {text}")
        raise AutotuneError(
            f"@ct.autotune of {self.fn.__name__}: every config failed for key {key}:\n" + "\n".join(lines),
            list(timings.items()),
        ) from list(timings.values())[-1]

    # ---- the disk record ---------------------------------------------------------------------------

    def _disk_key(self, key):
        cache = _compile_cache()
        fp = self.kernel.fingerprint()
        if cache is None or fp is None or os.environ.get("CUPRIC_TILE_NO_INDEX"):
            return None, None
        device = key[0]
        if device == "cpu":
            target = f"{_tile.host_environment(include_dir())} threads={_c.get_num_threads()}"
        else:
            mod = _cuda._cuda_module()
            d = mod.Device(int(device.split(":")[1]))
            mode = _cuda.ring_mode()  # another kernel: another choice
            ring = "" if mode == "cp.async" else f" {mode}"
            target = f"{d.name} {d.arch} {' '.join(_cuda._EXTRA)} {_cuda._headers_digest(include_dir())}{ring}"
        parts = (
            _FORMAT,
            fp,
            self.fn.__qualname__,
            repr([c.ident() for c in self.configs]),
            repr(key),
            f"debug={self.kernel.debug} threads={self.kernel.num_threads}",
            target,
            build_stamp(),
        )
        return cache, cache.make_key(*parts)

    def _to_disk(self, key, best, timings):
        cache, dkey = self._disk_key(key)
        if cache is None:
            return
        record = {
            "kernel": self.fn.__qualname__,
            "best": self.configs.index(best),
            "configs": [repr(c) for c in self.configs],
            "milliseconds": [None if isinstance(t, Exception) else t for t in timings.values()],
            "errors": [f"{type(t).__name__}: {t}" if isinstance(t, Exception) else None for t in timings.values()],
        }
        cache.put("autotune", dkey, json.dumps(record).encode())

    def _from_disk(self, key):
        cache, dkey = self._disk_key(key)
        if cache is None:
            return None
        raw = cache.get("autotune", dkey)
        if raw is None:
            return None
        record = self._parse_record(raw)
        if record is None:
            cache.remove("autotune", dkey)
            warnings.warn(
                f"cupric.tile: deleted the autotune record {dkey} of {self.fn.__qualname__} from the compile cache: "
                "it is not of the form autotune writes; the configs are timed again",
                RuntimeWarning,
                stacklevel=4,
            )
            return None
        best = self.configs[record["best"]]
        self.cache[key] = best
        self.timings[key] = {
            c: (ms if ms is not None else RuntimeError(err))
            for c, ms, err in zip(self.configs, record["milliseconds"], record["errors"], strict=True)
        }
        return best

    def _parse_record(self, raw):
        """A record as _to_disk writes it for these configs, or None."""
        try:
            record = json.loads(bytes(raw).decode())
            n = len(self.configs)
            ok = (
                isinstance(record["best"], int)
                and 0 <= record["best"] < n
                and record["configs"] == [repr(c) for c in self.configs]
                and len(record["milliseconds"]) == n
                and len(record["errors"]) == n
                and all(ms is None or isinstance(ms, (int, float)) for ms in record["milliseconds"])
                and all(e is None or isinstance(e, str) for e in record["errors"])
            )
        except (ValueError, KeyError, IndexError, TypeError):
            return None
        return record if ok else None

    # ---- inspection ----------------------------------------------------------------------------------

    @user_facing
    def inspect(self, *args, config=None, compile_cuda=False, **kwargs):
        """kernel.inspect for these arguments with `config` (default: the key's tuned config if it
        is known, else the first); the result's 'config' says which."""
        bound = self._bind(args, kwargs)
        if config is None:
            config = self.cache.get(self._key(bound)) or self._from_disk(self._key(bound)) or self.configs[0]
        config = _as_config(config)
        out = self.kernel._inspect(self._values(bound, config), compile_cuda, config.num_threads)
        out["config"] = config
        return out


def autotune(configs, key=(), *, reset_to_zero=(), restore_value=(), warmup=25, rep=100):
    """Decorator over @ct.kernel: picks the fastest of `configs` for each `key`.

    configs        dicts of Constant parameter values, or ct.Config(dict, num_threads=...)
    key            names of arguments whose values (numbers) or shapes (arrays) select the choice;
                   the device, the dtypes of the arrays and the untuned constants always do
    reset_to_zero  array arguments zeroed before each timed launch (kernels that accumulate)
    restore_value  array arguments restored after each timed launch (kernels that update in place)
    warmup, rep    milliseconds of warm-up and of timed launches per config (at least one each)

    The first launch for a key compiles and times every config (CUDA events on the launch stream on
    a GPU, the wall clock on the CPU), skips those that fail, launches the fastest, and stores the
    choice in the compile cache ($CUPRIC_CACHE_DIR), so a new process reuses it without timing."""

    def wrap(k):
        if not isinstance(k, Kernel):
            if not callable(k):
                raise TypeError(f"@ct.autotune decorates a @ct.kernel, got {type(k).__name__}")
            k = Kernel(k)
        return Autotuner(k, configs, key, reset_to_zero, restore_value, warmup, rep)

    return wrap
