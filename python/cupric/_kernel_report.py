"""Kernel reports: what each kernel costs the GPU before it runs, for `cupric.inspect` and for
`kernel.inspect` (tile kernels): generated source, PTX, SASS (where nvdisasm or cuobjdump exist),
registers, spills, local and shared memory, the occupancy those give on an architecture, and for
tile kernels the bytes and flops from the IR under the roofline. None of it needs a GPU."""

import glob
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import _cupric as _c

_ka = _c._kernel_analysis
DEFAULT_ARCH = "sm_90a"  # the target without a GPU: the H200 the project runs on
ARRAY_KERNEL_THREADS = 256  # the block size of the CUDA backend's launches with no __launch_bounds__


# ---- tools and facts ----------------------------------------------------------------------------


def default_arch():
    """The current GPU's arch for the backend's kernels, else sm_90a."""
    cuda = getattr(_c, "cuda", None)
    try:
        if cuda is not None and cuda.is_available():
            return _ka.kernel_arch(cuda.Device().index)
    except Exception:  # noqa: BLE001 - a driver that cannot answer: the default target
        pass
    return DEFAULT_ARCH


def cuda_tool(name):
    """A CUDA toolkit program (nvdisasm, cuobjdump, ptxas): PATH, CUDA_HOME, CUDA_PATH,
    /usr/local/cuda, then the NVIDIA wheels' bin folders (nvidia-cuda-nvdisasm, nvidia-cuda-nvcc,
    ...); None where there is none."""
    folders = [os.path.join(os.environ[v], "bin") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    folders.append("/usr/local/cuda/bin")
    for site in sys.path:
        folders.extend(sorted(glob.glob(os.path.join(site, "nvidia", "*", "bin"))))
    return shutil.which(name) or next(
        (p for p in (os.path.join(f, name) for f in folders) if os.access(p, os.X_OK)), None)


def disassembler():
    """(path, 'nvdisasm' | 'cuobjdump') of a SASS disassembler (cuda_tool), or (None, why not)."""
    for tool in ("nvdisasm", "cuobjdump"):
        found = cuda_tool(tool)
        if found:
            return found, tool
    return None, ("no SASS: neither nvdisasm nor cuobjdump was found "
                  "(pip install nvidia-cuda-nvdisasm, or set CUDA_HOME to a CUDA toolkit)")


def sass(cubin):
    """(SASS text or None, a note saying which tool made it or why there is none)."""
    path, tool = disassembler()
    if path is None:
        return None, tool
    with tempfile.TemporaryDirectory(prefix="cupric-inspect-") as d:
        file = os.path.join(d, "kernel.cubin")
        with open(file, "wb") as f:
            f.write(cubin)
        argv = [path, "-c", "-g", file] if tool == "nvdisasm" else [path, "-sass", file]
        r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"{tool} failed: {r.stderr.strip()[:200]}"
    return r.stdout, f"from {path}"


def ptxas_report(log):
    """kernel name -> {'registers', 'spill_stores', 'spill_loads', 'stack_bytes'} from ptxas -v."""
    out, name = {}, None
    for line in log.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?(\w+)'?", line)
        if m:
            name = m.group(1)
            out.setdefault(name, {})
        if name is None:
            continue
        for pattern, key in ((r"(\d+) bytes stack frame", "stack_bytes"), (r"(\d+) bytes spill stores", "spill_stores"),
                             (r"(\d+) bytes spill loads", "spill_loads"), (r"Used (\d+) registers", "registers")):
            m = re.search(pattern, line)
            if m:
                out[name][key] = int(m.group(1))
    return out


# ---- reports ------------------------------------------------------------------------------------


class KernelReport:
    """One kernel: its resources (from the cubin), ptxas' spill report, the occupancy on `arch`
    for `threads` per block with `dynamic_shared_bytes`, and its source, PTX and SASS."""

    def __init__(self, resources, arch, threads, dynamic_shared_bytes=0, spills=None, source=None, ptx=None,
                 sass_text=None, sass_note=""):
        self.name = resources["name"]
        self.arch, self.threads = arch, threads
        self.resources = dict(resources)
        self.registers = resources["registers"]
        self.local_bytes = resources["local_bytes"]
        self.static_shared_bytes = resources["static_shared_bytes"]
        self.dynamic_shared_bytes = dynamic_shared_bytes
        spills = spills or {}
        self.spill_stores, self.spill_loads = spills.get("spill_stores", 0), spills.get("spill_loads", 0)
        self.source, self.ptx, self.sass, self.sass_note = source, ptx, sass_text, sass_note
        try:
            self.occupancy = _ka.occupancy(arch, threads, max(self.registers, 0),
                                           self.static_shared_bytes + dynamic_shared_bytes)
        except ValueError as err:  # an arch without a row of limits: everything but the occupancy
            self.occupancy = {"blocks_per_sm": None, "warps_per_sm": None, "fraction": None, "limited_by": str(err)}
        self.attributes = None  # with a GPU: the loaded kernel's cuFuncGetAttribute values
        self.cost = None  # tile kernels: TileCost

    @property
    def shared_bytes(self):
        return self.static_shared_bytes + self.dynamic_shared_bytes

    def row(self):
        o = self.occupancy
        known = o["fraction"] is not None
        return [self.name, str(self.registers), f"{self.spill_stores}/{self.spill_loads}", str(self.local_bytes),
                str(self.shared_bytes), str(self.threads), str(o["blocks_per_sm"]) if known else "-",
                str(o["warps_per_sm"]) if known else "-", f"{100 * o['fraction']:.0f}%" if known else "-",
                o["limited_by"]]

    def __str__(self):
        text = table([self.row()], f"{self.name} on {self.arch}")
        if self.cost is not None:
            text += "\n" + str(self.cost)
        return text

    def __repr__(self):
        o = self.occupancy
        return (f"<KernelReport {self.name} {self.arch}: {self.registers} registers, {self.shared_bytes} B shared, "
                f"{o['blocks_per_sm']} blocks / {o['warps_per_sm']} warps per SM ({o['limited_by']})>")


HEADER = ["kernel", "regs", "spill st/ld", "local B", "smem B", "threads", "blocks/SM", "warps/SM", "occupancy",
          "limited by"]


def table(rows, title):
    """`rows` under HEADER, the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [HEADER, *rows]) for i in range(len(HEADER))]

    def line(cells):
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    head = line(HEADER)
    return "\n".join([title, head, "-" * len(head), *(line(r) for r in rows)])


class Inspection:
    """The kernels one op would launch (`kernels`, KernelReports) and `notes` about the rest
    (ops that call a library, ops the backend does not render); str() is a table."""

    def __init__(self, what, arch, kernels, notes):
        self.what, self.arch, self.kernels, self.notes = what, arch, kernels, notes

    def __getitem__(self, name):
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel {name!r} in this inspection (kernels: {', '.join(self.names())})")

    def __iter__(self):
        return iter(self.kernels)

    def __len__(self):
        return len(self.kernels)

    def names(self):
        return [k.name for k in self.kernels]

    def __str__(self):
        text = table([k.row() for k in self.kernels], f"{self.what} on {self.arch}{limits_text(self.arch)}")
        return text + "".join(f"\nnote: {n}" for n in self.notes)

    __repr__ = __str__


def limits_text(arch):
    """' (H100, H200: 64 warps, ...)', or '' for an arch without a row of limits."""
    if int(re.sub(r"\D", "", arch) or 0) not in _ka.known_archs():
        return ""
    a = _ka.arch_limits(arch)
    return (f" ({a['example']}: {a['max_warps_per_sm']} warps, {a['max_blocks_per_sm']} blocks, "
            f"{a['registers_per_sm'] // 1024}K registers, {a['shared_per_sm'] // 1024} KiB shared per SM)")


# ---- compiling and reading ----------------------------------------------------------------------


def analyse(cubin, log, arch, threads_of, dynamic_shared_bytes=0, source=None, ptx=None, disassemble=True):
    """KernelReports of every kernel in a cubin; threads_of(resources) gives each one's block size."""
    text, note = sass(cubin) if disassemble else (None, "not asked for")
    spills = ptxas_report(log or "")
    return [KernelReport(r, arch, threads_of(r), dynamic_shared_bytes, spills.get(r["name"]), source, ptx, text, note)
            for r in _ka.read_cubin(cubin)]


def _array_kernel_threads(resources):
    bound = resources["max_threads"][0] or resources["required_threads"][0]
    return bound or ARRAY_KERNEL_THREADS


def array_kernel_reports(label, source, arch, disassemble=True):
    cubin, log, ptx = _ka.compile_array_kernel(source, arch)
    return analyse(cubin, log, arch, _array_kernel_threads, 0, source, ptx.decode(errors="replace"), disassemble)


# ---- tile kernels: bytes and flops from the IR, the roofline bound --------------------------------


def ceilings(device=None):
    """The roofline's ceilings: this GPU's (cupric.profiler's table or measurement), else the
    H200's row of the table (the target sm_90a stands for)."""
    # cupric.profiler sits above every module (it measures ceilings with cupric's own ops), so its
    # table is looked up at first use, by name, as cupric/__init__ loads the profiler
    _ceilings = importlib.import_module("cupric.profiler._ceilings")
    cuda = getattr(_c, "cuda", None)
    if device is None and cuda is not None and cuda.is_available():
        device = f"cuda:{cuda.Device().index}"
    if device is not None:
        return _ceilings.for_device(device)
    bandwidth, flops = _ceilings.KNOWN_DEVICES["H200"]
    return _ceilings.Ceilings("H200 (no GPU here: the table's row)", bandwidth, dict(flops), "table (H200)")


class TileCost:
    """A tile launch's traffic and work from its IR: per block (loads and stores by tile shape and
    dtype, mma shapes, elementwise and reduction flops) and over `blocks`, with the roofline bound
    on `ceiling`: the attainable GFLOP/s min(peak, intensity x bandwidth) and the least time."""

    def __init__(self, block, blocks, dtype, ceiling):
        self.load_bytes, self.store_bytes = block.load_bytes, block.store_bytes
        self.flops, self.mma_flops = block.flops, block.mma_flops
        self.exact, self.notes = block.exact, list(block.notes)
        self.blocks, self.dtype, self.ceilings = blocks, dtype, ceiling
        self.model = "matmul" if self.mma_flops > 0 else "elementwise"

    @property
    def bytes_per_block(self):
        return self.load_bytes + self.store_bytes

    @property
    def flops_per_block(self):
        return self.flops + self.mma_flops

    @property
    def bytes(self):
        return self.bytes_per_block * self.blocks

    @property
    def total_flops(self):
        return self.flops_per_block * self.blocks

    @property
    def intensity(self):
        """FLOP per byte moved (inf when nothing is moved)."""
        return self.flops_per_block / self.bytes_per_block if self.bytes_per_block else float("inf")

    def bound_gflops(self):
        return self.ceilings.bound(self.intensity, self.dtype, self.model)

    def bound_seconds(self):
        """The least time the launch can take: max(bytes / bandwidth, flops / peak)."""
        peak = self.ceilings.peak_flops(self.dtype, self.model) * 1e9
        return max(self.bytes / (self.ceilings.bandwidth * 1e9), self.total_flops / peak if peak else 0.0)

    def limited_by(self):
        peak = self.ceilings.peak_flops(self.dtype, self.model)
        return "memory" if self.intensity * self.ceilings.bandwidth < peak else "compute"

    def __str__(self):
        lines = [
            f"per block: {self.load_bytes:.0f} B loaded, {self.store_bytes:.0f} B stored, "
            f"{self.flops:.0f} flops + {self.mma_flops:.0f} tensor-core flops",
            f"{self.blocks} blocks: {self.bytes / 1e6:.3f} MB, {self.total_flops / 1e9:.3f} GFLOP, "
            f"intensity {self.intensity:.2f} FLOP/B",
            f"roofline on {self.ceilings.device}: {self.bound_gflops():.0f} GFLOP/s ({self.limited_by()}-bound, "
            f"{self.dtype}), at least {self.bound_seconds() * 1e6:.2f} us",
        ]
        return "\n".join(lines + [f"note: {n}" for n in self.notes])

    __repr__ = __str__


def tile_cost(function, params, grid, dtype, device=None):
    """TileCost of a tile kernel's IR (`function`, a _tile.Function) launched over `grid` with the
    run-time parameters `params` (name -> shape tuple or number)."""
    g = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    g = tuple(int(x) for x in g) + (1,) * (3 - len(g))
    blocks = g[0] * g[1] * g[2]
    return TileCost(function.block_cost(params, g), blocks, dtype, ceilings(device))


def tile_kernel_report(cubin, log, arch, threads, smem_bytes, source, ptx, disassemble=True):
    """The KernelReport of a compiled tile kernel (its one entry)."""
    reports = analyse(cubin, log, arch, lambda r: threads, smem_bytes, source, ptx, disassemble)
    return reports[0] if reports else None
