"""The CUDA side of cupric.tile: generated CUDA C++ -> NVRTC (cupric.cuda.Program, through the
shared compile cache) -> a loaded kernel -> cupric.cuda.launch on the current stream. nvcc is kept
only as a fallback for compiling where NVRTC cannot be loaded.

Launch contract (the emitter's output, `compiled.cuda()`):
  source, entry  -> compiled for the device's arch (sm_90a on Hopper) with our headers; `entry` is
                    the extern "C" __global__ function
  threads        -> block = (threads, 1, 1)
  smem_bytes     -> dynamic shared memory; above 48 KiB the kernel's limit is raised first
  params         -> (role, dtype) per kernel parameter: an array expands to ("data", its dtype),
                    then ("extent", int64) and ("stride", int64) per dimension (strides in
                    elements); a scalar is ("scalar", its dtype), passed in its dtype's bytes
                    (float16 / bfloat16 as their 16 bits); `param_types` spells the C types the
                    kernel declares, for reading only; a debug build's last is ("status", uint8):
                    the launch's status word (a zeroed device buffer of _tile.STATUS_BYTES, read
                    back after the launch, where a failed bounds check or ct.assert_ is recorded)
  grid           -> (gx, gy, gz) blocks; gy and gz at most 65535

Arguments on CUDA: what the importer reads (src/python/foreign_array.hpp): cupric arrays on cuda:N,
PyTorch tensors, anything with __cuda_array_interface__ (CuPy, Numba) and DLPack producers on
kDLCUDA.
"""

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from .. import _cupric as _c
from .. import _dtypes as _dt
from .. import _kernel_report
from .._progress import after_a_second
from . import _index, _paths

_MAX_GRID_YZ = 65535


_CUDA = []  # cupric.cuda once imported (the import statement costs ~3 us a call: ~9 a launch)


def _cuda_module():
    if _CUDA:
        return _CUDA[0]
    try:
        from .. import cuda
    except ImportError:
        return None
    if not hasattr(cuda, "Program"):
        return None
    _CUDA.append(cuda)
    return cuda


def _program_class():
    mod = _cuda_module()
    return None if mod is None else mod.Program


def nvrtc_available():
    mod = _cuda_module()
    return mod is not None and bool(mod.versions()["nvrtc"]["found"])


def nvrtc_options(include_dir, arch="sm_90a"):
    """The NVRTC command line a tile kernel is compiled with (for reading; Program builds it)."""
    return [f"-arch={arch}", "-std=c++17", *(f"-I{d}" for d in _include_paths(include_dir)), *_EXTRA]


def _include_paths(include_dir):
    # our headers, and the small std shims NVRTC needs (it ships no standard library)
    return [include_dir, f"{include_dir}/cupric/tile/nvrtc_std"]


_PTXAS_VERBOSE = "--ptxas-options=-v"  # registers / spills / smem in the log
# -minimal leaves out the texture and runtime-API declarations NVRTC parses for every program,
# which tile kernels never use (~5 ms of a cold compile; docs/tile.md has the measurements).
_MINIMAL = "-minimal"
_OPTIONAL = (_MINIMAL, _PTXAS_VERBOSE)  # dropped, in this order, by an NVRTC that refuses them
_EXTRA = ["-default-device", _MINIMAL, _PTXAS_VERBOSE]


_HEX = frozenset("0123456789abcdef")


@functools.lru_cache(maxsize=4)
def _headers_digest(include_dir):
    """Hash of the device header library: NVRTC's cache key covers the source, not what it
    includes, so the generated source carries this line and a header change compiles again.
    Reading and hashing every header costs ~1 ms at a new process' first launch; a memo in the
    compile cache (kind "headers") maps the headers' names, sizes and modification times to the
    hash, so that a new process only lists them (~0.1 ms)."""
    files = _header_files(include_dir)
    listing = hashlib.sha256(include_dir.encode())
    for rel, size, mtime in files:
        listing.update(f"\0{rel}\0{size}\0{mtime}".encode())
    memo = listing.hexdigest()
    digest = (_c.compile_cache.get("headers", memo) or b"").decode(errors="replace")
    if len(digest) == 32 and set(digest) <= _HEX:  # (a regular expression: ~0.1 ms to compile)
        return digest
    h = hashlib.sha256()
    for rel, _, _ in files:
        with open(os.path.join(include_dir, rel), "rb") as f:
            h.update(rel.encode() + b"\0" + f.read() + b"\0")
    digest = h.hexdigest()[:32]
    _c.compile_cache.put("headers", memo, digest.encode())
    return digest


def _header_files(root, rel=""):
    """(relative path, size, mtime_ns) of every file under `root`, sorted by path components."""
    out = []
    with os.scandir(os.path.join(root, rel) if rel else root) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        path = f"{rel}/{e.name}" if rel else e.name
        if e.is_dir():
            out.extend(_header_files(root, path))
        elif e.is_file():
            st = e.stat()
            out.append((path, st.st_size, st.st_mtime_ns))
    return out


def _capability(mod, index=None):
    """(major, minor) of a device (the current one by default): the two attributes, not Device.arch,
    which reads every property (~1 ms at a new process' first launch on the H200)."""
    major, minor = (mod.Device() if index is None else mod.Device(index)).compute_capability
    return int(major), int(minor)


def default_arch():
    """The current device's arch (the 'a' variant on Hopper), or sm_90a without a GPU."""
    mod = _cuda_module()
    if mod is not None and mod.is_available():
        major, minor = _capability(mod)
        return "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"
    return "sm_90a"


def nvcc_path():
    for c in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if c and os.path.isfile(os.path.join(c, "bin", "nvcc")):
            return os.path.join(c, "bin", "nvcc")
    return shutil.which("nvcc")


# ---- compiling -----------------------------------------------------------------------------------


def _stamped(source, include_dir):
    return f"// cupric.tile headers {_headers_digest(include_dir)}\n{source}"


def _program(source, include_dir, arch, name="tile_kernel.cu"):
    mod = _cuda_module()
    return mod.Program(
        _stamped(source, include_dir),
        name,
        arch=arch,
        std="c++17",
        include_paths=_include_paths(include_dir),
        extra=_EXTRA,
    )


# A kernel's cubin and log are also kept under a key that does not need NVRTC (Program's key holds
# NVRTC's version, so a hit there loads libnvrtc first: ~10 ms in a new process). A hit here loads
# nothing but the cubin; a new NVRTC recompiles only kernels that are not cached yet.
def _cubin_key(source, include_dir, arch):
    return _c.CompileCache.make_key("cupric.tile cubin 2", arch, " ".join(_EXTRA), _stamped(source, include_dir))


def _cached_cubin(mod, source, include_dir, arch):
    return _read_cubin(mod, _cubin_key(source, include_dir, arch))


def _read_cubin(mod, key):
    """The cubin and log kept under `key` (kind "cubin"), or None; an entry not of the form
    _store_cubin writes is deleted (with a warning) and compiled again."""
    hit = _c.compile_cache.get("cubin", key)
    if hit is None:
        return None
    n = int.from_bytes(hit[:4], "little") if len(hit) >= 4 else len(hit)
    log, cubin = hit[4 : 4 + n].decode(errors="replace"), hit[4 + n :]
    if cubin[:4] != b"\x7fELF":
        _c.compile_cache.remove("cubin", key)
        warnings.warn(
            f"cupric.tile: deleted the compile cache entry {key} (kind cubin): it holds no cubin; it is compiled again",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return {"compiler": "nvrtc", "object": mod.ObjectCode(cubin, "cubin", "tile_kernel.cu"), "cubin": cubin, "log": log}


def _store_cubin(mod, source, include_dir, arch, cubin, log):
    data = log.encode()
    _c.compile_cache.put("cubin", _cubin_key(source, include_dir, arch), len(data).to_bytes(4, "little") + data + cubin)


def compile_source(source, include_dir, arch=None, outputs=("cubin",)):
    """Compiles generated CUDA C++ for `arch` (default: the device's, else sm_90a) with NVRTC
    through cupric.cuda.Program and the shared compile cache; nvcc only when NVRTC is missing.
    Returns {'cubin': bytes, 'ptx': str?, 'object': ObjectCode?, 'log', 'seconds', 'compiler',
    'cache_hit'}."""
    arch = arch or default_arch()
    mod = _cuda_module()
    if mod is not None and tuple(outputs) == ("cubin",):
        t0 = time.perf_counter()
        out = _cached_cubin(mod, source, include_dir, arch)
        if out is not None:
            out.update(seconds=time.perf_counter() - t0, cache_hit=True)
            return out
    nvcc = None if nvrtc_available() else nvcc_path()
    if nvcc is None and not nvrtc_available():
        raise FileNotFoundError(
            "cupric.tile: compiling CUDA needs NVRTC (pip install nvidia-cuda-nvrtc, or set CUDA_HOME) or nvcc"
        )
    with after_a_second(f"compiling tile kernel {_entry_name(source) or '?'} for {arch}"):
        if nvcc is None:
            return _compile_with_nvrtc(source, include_dir, arch, outputs)
        return _compile_with_nvcc(source, include_dir, arch, outputs, nvcc)


def _compile_with_nvrtc(source, include_dir, arch, outputs):
    mod = _cuda_module()
    t0 = time.perf_counter()
    prog = _program(source, include_dir, arch)
    before = mod.compile_cache.stats()["misses"]
    ptxas = ptxas_path()
    while True:
        try:  # (without ptxas, NVRTC's cubin straight away)
            first = prog.compile("ptx") if ptxas else prog.compile("cubin", with_ptx="ptx" in outputs)
            break
        except mod.CompileError as err:
            dropped = [o for o in _OPTIONAL if o in _EXTRA]
            if "INVALID_OPTION" not in str(err) or not dropped:
                raise
            _EXTRA.remove(dropped[0])  # an older NVRTC (without ptxas options: no resource report)
            prog = _program(source, include_dir, arch)
    if ptxas:
        text = _without_unused_globals(first.code.decode())
        assembled = _assembled(mod, ptxas, text, arch)
        if assembled is None:  # a ptxas older than NVRTC: NVRTC's own cubin, with the globals
            obj, text = prog.compile("cubin"), first.code.decode()
            log = obj.log
        else:
            obj, report = assembled
            log = "\n".join(filter(None, (first.log, report)))
    else:
        obj, text, log = first, first.ptx, first.log
    out = {"compiler": "nvrtc", "object": obj, "cubin": obj.code, "log": log}
    _store_cubin(mod, source, include_dir, arch, out["cubin"], out["log"])
    if "ptx" in outputs:
        out["ptx"] = text
    out["seconds"] = time.perf_counter() - t0
    out["cache_hit"] = mod.compile_cache.stats()["misses"] == before
    return out


@functools.cache
def _ptx_patterns():
    """A module-scope variable declaration of PTX (NVRTC emits every static constexpr member and
    namespace-scope constant of the headers as one, used or not), and a PTX identifier. (Compiled
    at the first compile, not at import.)"""
    declaration = r"^(?:\.visible\s+|\.weak\s+)?\.global\s[^;{]*?([A-Za-z_$%][\w$]*)(?:\[\d*\])*\s*(?:=[^;]*)?;[ \t]*\n"
    return re.compile(declaration, re.M), re.compile(r"[A-Za-z_$%][\w$]*")


def _without_unused_globals(ptx):
    """The PTX without the module-scope global variables its code never names. A module with
    global variables costs the driver a global segment at load (on the H200: softmax's module
    ~0.6 ms to load with 46 such constants, ~0.18 ms without them, ~0.36 ms with one left), on the
    path of every first launch from the disk cache."""
    declaration, identifier = _ptx_patterns()
    if declaration.search(ptx) is None:
        return ptx
    named = set(identifier.findall(declaration.sub("", ptx)))
    return declaration.sub(lambda m: m.group(0) if m.group(1) in named else "", ptx)


def ptxas_path():
    """ptxas (_kernel_report.cuda_tool: PATH, a CUDA toolkit, the nvidia-cuda-nvcc wheel), or None."""
    return _kernel_report.cuda_tool("ptxas")


def _assembled(mod, ptxas, ptx, arch):
    """(cubin object, ptxas' report) of PTX assembled by `ptxas` as one whole program, as NVRTC's
    own ptxas does (nvJitLink compiles PTX as relocatable code: more registers, spills); None where
    it refuses this PTX (one older than NVRTC): the caller takes NVRTC's cubin."""
    with tempfile.TemporaryDirectory(prefix="cupric-tile-") as d:
        src, out = os.path.join(d, "kernel.ptx"), os.path.join(d, "kernel.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        lineinfo = ["-lineinfo"] if "-lineinfo" in _EXTRA else []
        try:
            r = subprocess.run(
                [ptxas, f"-arch={arch}", "-v", *lineinfo, src, "-o", out], capture_output=True, text=True, timeout=600
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if r.returncode != 0 or not os.path.isfile(out):
            return None
        with open(out, "rb") as f:
            cubin = f.read()
    return mod.ObjectCode(cubin, "cubin", "tile_kernel.cu"), (r.stdout + r.stderr).strip()


def _compile_with_nvcc(source, include_dir, arch, outputs, nvcc):
    with tempfile.TemporaryDirectory(prefix="cupric-tile-") as d:
        src = os.path.join(d, "kernel.cu")
        with open(src, "w") as f:
            f.write(source)
        base = [nvcc, "-std=c++17", f"-arch={arch}", f"-I{include_dir}"]  # nvcc has its own std headers
        t0 = time.perf_counter()
        r = subprocess.run(
            [*base, "-cubin", "--resource-usage", "-o", os.path.join(d, "kernel.cubin"), src],
            capture_output=True,
            text=True,
        )
        out = {"compiler": "nvcc", "seconds": time.perf_counter() - t0, "log": r.stdout + r.stderr, "cache_hit": False}
        if r.returncode != 0:
            raise RuntimeError(f"nvcc failed on the generated CUDA source:\n{out['log']}\n--- source ---\n{source}")
        out["cubin"] = Path(d, "kernel.cubin").read_bytes()
        if "ptx" in outputs:
            r = subprocess.run(
                [*base, "-ptx", "-o", os.path.join(d, "kernel.ptx"), src], capture_output=True, text=True
            )
            if r.returncode == 0:
                out["ptx"] = Path(d, "kernel.ptx").read_text()
        return out


def resources_from_log(log):
    """ptxas' report (registers, spills, shared memory) from a compile log, as a dict and text."""
    lines = [ln.strip() for ln in log.splitlines() if "registers" in ln or "spill" in ln or "smem" in ln]
    text = "\n".join(lines)
    info = {}
    for pattern, key in (
        (r"Used (\d+) registers", "registers"),
        (r"(\d+) bytes spill stores", "spill_stores"),
        (r"(\d+) bytes spill loads", "spill_loads"),
    ):
        found = [int(m) for m in re.findall(pattern, text)]
        if found:
            info[key] = max(found) if key == "registers" else sum(found)
    return info, text


def inspect(source, include_dir, arch=None, smem_bytes=0):
    """PTX and the resource report (registers, shared memory, spills) of a generated kernel; with a
    GPU, also the loaded kernel's attributes. (Its SASS: _kernel_report.sass of the cubin.)"""
    r = compile_source(source, include_dir, arch, outputs=("cubin", "ptx"))
    info, text = resources_from_log(r["log"])
    out = {
        "ptx": r.get("ptx"),
        "resources": text,
        "registers": info.get("registers"),
        "spill_stores": info.get("spill_stores", 0),
        "spill_loads": info.get("spill_loads", 0),
        "dynamic_shared_memory": max(smem_bytes, 16),
        "compile_seconds": r["seconds"],
        "compiler": r["compiler"],
        "cubin": r["cubin"],
        "resources_log": r["log"],
        "arch": arch or default_arch(),
    }
    mod = _cuda_module()
    if "object" in r and mod is not None and mod.is_available() and (arch is None or arch == default_arch()):
        entry = _entry_name(source)
        if entry:
            out["attributes"] = r["object"].get_kernel(entry).attributes()
    return out


def _entry_name(source):
    """The kernel's name in `extern "C" __global__ void [__launch_bounds__(...)] name(...)`."""
    for line in source.splitlines():
        if line.startswith('extern "C" __global__'):
            m = re.search(r"void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)\s*\(", line)
            if m:
                return m.group(1)
    return None


# ---- CUDA array arguments ------------------------------------------------------------------------


# The importer's view of an argument (cupric._cupric.ForeignArray, src/python/foreign_array.hpp):
# ptr (element 0), dtype, shape, strides in elements, device, owner (keeps the memory alive through
# the launch), stream (the driver handle the data is ready on, which the launch waits for; None:
# nothing to wait for).
DeviceArray = _c.ForeignArray


def device_array(v):
    """The importer's view of a CUDA array argument (cupric, PyTorch, __cuda_array_interface__,
    DLPack on kDLCUDA: the same reader the launch plans and cupric.asarray use); None when `v` is
    not one or its memory is on the host."""
    a = _c._import_array(v, device_only=True)
    return None if a is None or a.device.type == "cpu" else a


# ---- launching -----------------------------------------------------------------------------------


def kernel_params(params):
    """The kernel's parameters as (role, dtype) pairs, from the emitter's (role, numpy dtype) or an
    index entry's [role, dtype name]: an array is ("data", its dtype), then ("extent", int64) and
    ("stride", int64) per dimension; a scalar is ("scalar", its dtype)."""
    return [(role, _dt.as_dtype(dtype)) for role, dtype in params]


def pack_scalar(value, dtype):
    """A kernel scalar as a NumPy scalar of exactly its dtype's bytes (float16 / bfloat16 as their
    bits, converted by cupric's own casts)."""
    if dtype.name in ("float16", "bfloat16"):
        return np.uint16(_c.asarray(np.float64(value)).astype(dtype)._view_as(_dt.names.uint16).item())
    if dtype.name in ("float8_e4m3fn", "float8_e5m2"):
        return np.uint8(_c.asarray(np.float64(value)).astype(dtype)._view_as(_dt.names.uint8).item())
    if dtype.kind not in "biuf":
        raise TypeError(f"cupric.tile: no CUDA packing for a scalar of dtype {dtype}")
    return dtype.type(value)


def tensor_map(a, box_rows, box_cols):
    """A TMA tensor map over CUDA array `a` (the importer's view) as the 128-byte kernel parameter
    (zeros where TMA cannot describe the view: the kernel copies with cp.async then)."""
    return np.void(_c._tile.tensor_map(a.ptr, list(a.shape), list(a.strides), box_rows, box_cols))


def flatten_arguments(runtime, params, tensor_maps=()):
    """The kernel's flat argument list: arrays as (address, shape..., strides...), scalars typed,
    then a tensor map per (parameter index, box rows, box columns) of `tensor_maps` (TMA rings)."""
    flat, i = [], 0
    for v in runtime:
        if isinstance(v, DeviceArray):
            # a cupric array goes as itself: the launch orders it after its writer and notes the write
            flat.append(v.owner if isinstance(v.owner, _c.ndarray) else v.ptr)
            flat.extend(v.shape)
            flat.extend(v.strides)
            i += 1 + 2 * v.ndim
        else:
            flat.append(pack_scalar(v, params[i][1]))
            i += 1
    if i != len(params):
        raise TypeError(f"cupric.tile: {i} kernel parameters packed, the kernel has {len(params)}")
    flat.extend(tensor_map(runtime[p], rows, cols) for p, rows, cols in tensor_maps)
    return flat


_LAUNCH_KEYS = ("entry", "threads", "smem_bytes")


def tma_requested():
    """CUPRIC_TILE_TMA=1: staged products' rings filled by TMA (the compiler reads the same switch)."""
    return os.environ.get("CUPRIC_TILE_TMA") == "1"


def ring_mode(device_index=None):
    """How staged products' rings are filled, which the compiler is told at each compile
    (EmitOptions::ring): "cp.async" (every thread copies), "tma" (thread 0 issues TMA copies), "tma
    ws" (a producer warpgroup issues them: warp specialisation; kernels whose K loop can be split
    are persistent, looping over their output tiles at one block per SM, and split K where those
    do not fill the GPU), "tma ws plain" (one output tile per block), "tma ws persistent" (every
    such kernel persistent). CUPRIC_TILE_TMA=1 / 0 turns TMA on / off; unset, it is on where the
    device has TMA (sm_90 and later) — the producer with it unless CUPRIC_TILE_WS=0;
    CUPRIC_TILE_PERSISTENT=1 / 0 makes every / no such kernel persistent. Part of the kernel
    index's and the autotuner's keys. (CUPRIC_TILE_MULTICAST=1, read by the compiler and in the
    index's key, pairs blocks that load the same tiles in clusters: docs/tile.md.)"""
    tma = os.environ.get("CUPRIC_TILE_TMA")
    if tma == "0" or (tma != "1" and not _device_has_tma(device_index)):
        return "cp.async"
    if os.environ.get("CUPRIC_TILE_WS") == "0":
        return "tma"
    persistent = os.environ.get("CUPRIC_TILE_PERSISTENT")
    return {"1": "tma ws persistent", "0": "tma ws plain"}.get(persistent, "tma ws")


_TMA_DEVICES = {}


def _device_has_tma(device_index=None):
    """Whether the device (the current one by default) is sm_90 or later; False without a GPU."""
    mod = _cuda_module()
    if mod is None or not getattr(mod, "is_available", lambda: False)():
        return False
    index = mod.Device().index if device_index is None else int(device_index)
    has = _TMA_DEVICES.get(index)
    if has is None:
        has = _TMA_DEVICES[index] = _capability(mod, index)[0] >= 9
    return has


class CudaKernel:
    """One specialisation compiled and loaded on one device, with its launch shape. Built from
    the emitter's output (compiling it), or from a disk index entry (a cached cubin and the
    launch facts: no frontend, no emitter, no NVRTC)."""

    def __init__(self, emitted, include_dir, device_index, cached=None):
        mod = _cuda_module()
        with mod.Device(device_index):
            if cached is None:
                self.compiled = compile_source(emitted["source"], include_dir)
                key = _cubin_key(emitted["source"], include_dir, default_arch())
                params = [[role, str(dtype)] for role, dtype in emitted["params"]]  # names: JSON
                maps = [list(m) for m in emitted.get("tensor_maps", ())]
                self.index_entry = {k: emitted[k] for k in _LAUNCH_KEYS} | {
                    "params": params,
                    "tensor_maps": maps,
                    "persistent": bool(emitted.get("persistent")),
                    "split_bytes": int(emitted.get("split_bytes", 0)),
                    "cluster": int(emitted.get("cluster", 1)),
                    "cubin": key,
                }
            else:
                self.compiled, self.index_entry = cached, emitted
            obj = self.compiled.get("object") or mod.ObjectCode(self.compiled["cubin"], "cubin")  # nvcc's
            self.kernel = obj.get_kernel(emitted["entry"], device_index)
        self.smem = max(int(emitted["smem_bytes"]), 16)
        if self.smem > 48 * 1024:
            self.kernel.max_dynamic_shared_memory = self.smem
        self.threads = int(emitted["threads"])
        self.params = kernel_params(emitted["params"])
        self.tensor_maps = [tuple(m) for m in emitted.get("tensor_maps", ())]
        # a persistent kernel takes the grid as arguments and runs at most one block per SM
        self.persistent = bool(emitted.get("persistent"))
        self.sms = mod.Device(device_index).multiprocessor_count if self.persistent else 0
        self.split_bytes = int(emitted.get("split_bytes", 0))  # split K's partial accumulator, or 0
        # blocks per cluster the kernel is written for (multicast: EmitResult::cluster), where the
        # device launches clusters (sm_90 and later)
        cluster = int(emitted.get("cluster", 1))
        self.cluster = cluster if cluster > 1 and _capability(mod, device_index)[0] >= 9 else 1
        self.device = device_index
        self._configs = {}

    def scalar_dtypes(self, specs):
        """The dtype each scalar parameter is packed as, in order (None when one has no packing)."""
        out, i = [], 0
        for _, spec in specs:
            if spec[0] == "array":
                i += 1 + 2 * spec[2]
            elif spec[0] == "scalar":
                dtype = self.params[i][1]
                if dtype.kind not in "biuf":
                    return None
                out.append(dtype.name)
                i += 1
        return out

    def config(self, grid, cluster=False):
        """The launch's configuration: `grid`, in clusters of 2 along x where `cluster`."""
        c = self._configs.get((grid, cluster))
        if c is None:
            if grid[0] > 2**31 - 1 or grid[1] > _MAX_GRID_YZ or grid[2] > _MAX_GRID_YZ:
                raise ValueError(
                    f"grid {grid} is too large for CUDA (x up to 2^31-1, y and z up to {_MAX_GRID_YZ}); "
                    "put the largest extent first"
                )
            c = self._configs[grid, cluster] = _cuda_module().LaunchConfig(
                grid=grid, block=self.threads, shared_memory=self.smem, cluster=(2, 1, 1) if cluster else None
            )
        return c

    @property
    def debug(self):
        """A debug build: its last parameter is the launch's status word."""
        return bool(self.params) and self.params[-1][0] == "status"

    def launch(self, grid, runtime, stream):
        if 0 in grid:
            return  # an empty grid launches nothing
        mod = _cuda_module()
        debug = self.debug
        args = flatten_arguments(runtime, self.params[:-1] if debug else self.params, self.tensor_maps)
        stream = resolve_stream(stream, self.device)
        for v in runtime:
            if isinstance(v, DeviceArray) and v.stream is not None and v.stream != stream.handle:
                stream.wait(mod.Stream.wrap(v.stream))  # CAI v3: order after the producer's work
        if debug:
            status = _c.zeros((_c._tile.STATUS_BYTES,), dtype="uint8", device=f"cuda:{self.device}")
            args.append(status)  # (a cupric array: the launch orders it after its zeroing)
        cluster = False
        if self.persistent or self.cluster > 1:  # (launch_shape in bind_tile_launch.cpp: the plans' too)
            blocks, whole, splits, partial_bytes, counters, cluster = _c._tile.launch_shape(
                grid, self.sms, self.split_bytes, self.cluster
            )
            if self.persistent:  # the grid as arguments, then split K's plan and scratch
                args.extend(np.int64(g) for g in grid)
                if self.split_bytes:
                    none = (np.uint64(0), np.uint64(0))  # (one split: the kernel reads neither pointer)
                    scratch = _c._tile.split_arrays(partial_bytes, counters, self.device) if counters else none
                    args += [np.int64(whole), np.int64(splits), *scratch]
            grid = blocks
        mod.launch(stream, self.config(grid, cluster), self.kernel, *args)
        if debug:  # the failure the CPU launch would raise, raised here; the context stays usable
            stream.synchronize()
            _c._tile.raise_status(np.asarray(status.to_device("cpu")).tobytes())


def _index_key(compiled, mod, device_index):
    """The key of this specialisation's launch facts on this arch in the kernel index (None: not
    indexed). The headers enter by _paths.headers_identity (an installed copy by the build stamp, a
    checkout's by their listing), not by their content's digest (~0.7 ms at a new process' first
    launch: the listing in Python, a cache read and a check); the cubin the entry names is keyed by
    the content."""
    with mod.Device(device_index):
        arch = default_arch()
    return compiled.index_key(
        (
            "cuda",
            arch,
            " ".join(_EXTRA),
            _paths.headers_identity(_paths.include_dir()),
            ring_mode(device_index),
            os.environ.get("CUPRIC_TILE_PINGPONG", ""),  # (read by the compiler: tile/pipeline.cpp)
            os.environ.get("CUPRIC_TILE_MULTICAST", ""),  # (the same)
            os.environ.get("CUPRIC_TILE_OVERLAP", ""),  # (the same)
        )
    )


def _load_indexed(mod, device_index, index_key):
    entry = _index.load(index_key, _index.CUDA)
    cached = _read_cubin(mod, entry["cubin"]) if entry is not None else None
    if cached is None:
        return None  # not indexed, or the cubin left the cache: compile it again
    cached.update(seconds=0.0, cache_hit=True, index_hit=True)
    return CudaKernel(entry, None, device_index, cached)


def load(compiled, device):
    """The kernel of a specialisation loaded on `device` ('cuda:N'): from the disk index when it
    was compiled before (a new process skips the frontend), else by compiling it. Once per device."""
    mod = _cuda_module()
    if mod is None:
        raise NotImplementedError(f"cupric.tile: launching on {device} needs cupric.cuda, which is not in this build")
    index = int(device.split(":")[1]) if ":" in device else 0
    k = compiled.cuda_kernels.get(index)
    if k is None:
        index_key = _index_key(compiled, mod, index)
        k = _load_indexed(mod, index, index_key) if index_key is not None else None
        if k is None:
            k = CudaKernel(compiled.cuda(), _paths.include_dir(), index)
            if index_key is not None and k.compiled["compiler"] == "nvrtc":
                _index.save(index_key, k.index_entry)
        compiled.cuda_kernels[index] = k
    return k


def resolve_stream(stream, device_index):
    """The cupric Stream a launch goes to: `stream` (a cupric Stream or anything Stream.wrap takes),
    or the device's current stream when None."""
    mod = _cuda_module()
    if stream is None:
        return mod.current_stream(device_index)
    return stream if isinstance(stream, mod.Stream) else mod.Stream.wrap(stream)


def launch(compiled, grid, args, stream, device):
    """Runs a compiled kernel on `device` ('cuda:N') on `stream` (None: the current stream),
    loading it first if needed (see load)."""
    load(compiled, device).launch(grid, args, stream)
