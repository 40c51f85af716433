"""The CUDA side of cupric.tile: compiling generated CUDA C++ (through cupric.cuda.Program when it
exists, else nvcc in a subprocess) and launching it. The launch is one small function, `launch`,
to be wired to cupric.cuda once that module lands; until then CUDA arrays raise a clear error.

Launch contract (what `launch` must do with the emitter's output, `compiled.cuda()`):
  source, entry        -> compile for the device's arch ("-arch=sm_90a" on Hopper) with
                          nvrtc_options(include_dir) and get the __global__ function `entry`
  threads              -> block = (threads, 1, 1)
  smem_bytes           -> dynamic shared memory; above 48 KiB set the kernel's
                          MAX_DYNAMIC_SHARED_SIZE_BYTES attribute first
  param_types          -> one C type per kernel parameter, in order: each array argument expands to
                          (T* data, long long shape[0..nd-1], long long stride[0..nd-1]) with strides in
                          elements; scalars follow as their C type ("double", "long long", "float",
                          "bool", "::cu::tile::bf16" = 2 bytes, ...)
  grid                   -> (gx, gy, gz) blocks
"""

import hashlib
import os
import pickle
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def nvrtc_options(include_dir, arch="sm_90a"):
    """Options for NVRTC: our headers, and the small std shims NVRTC needs (it ships none)."""
    return [
        f"-arch={arch}",
        "-std=c++17",
        f"-I{include_dir}",
        f"-I{include_dir}/cupric/tile/nvrtc_std",
        "-default-device",
    ]


def nvcc_path():
    for c in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if c and os.path.isfile(os.path.join(c, "bin", "nvcc")):
            return os.path.join(c, "bin", "nvcc")
    return shutil.which("nvcc")


def _program_class():
    try:
        from .. import cuda as _cuda_mod  # noqa: F401  (cupric.cuda, when merged)
    except ImportError:
        return None
    return getattr(_cuda_mod, "Program", None)


def compile_source(source, include_dir, arch="sm_90a", outputs=("cubin",)):
    """Compiles generated CUDA C++ for `arch`. Uses nvcc (the tests' path until cupric.cuda.Program
    is wired); returns {'cubin': bytes, 'ptx': str?, 'log': str, 'seconds': float, 'compiler': str}."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (set CUDA_HOME); cupric.cuda.Program is not available either")
    cached = _cache_path(source, include_dir, arch, nvcc, outputs)
    if cached is not None and cached.is_file():
        with open(cached, "rb") as f:
            out = pickle.load(f)
        out["seconds"] = 0.0
        return out
    out = _compile_with_nvcc(source, include_dir, arch, outputs, nvcc)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as f:
            pickle.dump(out, f)
        os.replace(tmp, cached)
    return out


def _cache_path(source, include_dir, arch, nvcc, outputs):
    """Where nvcc's output for this source is kept (the same disk cache as the CPU kernels)."""
    from . import _kernel

    try:
        st = os.stat(nvcc)
        env = _kernel._tile.host_environment(include_dir, _kernel.cache_dir())
    except (OSError, RuntimeError):
        return None
    h = hashlib.sha1()
    for part in (source, arch, nvcc, str(st.st_mtime_ns), env, ",".join(sorted(outputs))):
        h.update(part.encode())
        h.update(b"\0")
    return Path(_kernel.cache_dir()) / "tile" / "cuda" / (h.hexdigest() + ".pickle")


def _compile_with_nvcc(source, include_dir, arch, outputs, nvcc):
    with tempfile.TemporaryDirectory(prefix="cupric-tile-") as d:
        src = os.path.join(d, "kernel.cu")
        with open(src, "w") as f:
            f.write(source)
        out = {"compiler": "nvcc"}
        t0 = time.perf_counter()
        cmd = [
            nvcc,
            "-std=c++17",
            f"-arch={arch}",
            "-cubin",
            "--resource-usage",
            f"-I{include_dir}",
            "-o",
            os.path.join(d, "kernel.cubin"),
            src,
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        out["seconds"] = time.perf_counter() - t0
        out["log"] = r.stdout + r.stderr
        if r.returncode != 0:
            raise RuntimeError(f"nvcc failed on the generated CUDA source:\n{out['log']}\n--- source ---\n{source}")
        with open(os.path.join(d, "kernel.cubin"), "rb") as f:
            out["cubin"] = f.read()
        if "ptx" in outputs:
            r = subprocess.run(
                [
                    nvcc,
                    "-std=c++17",
                    f"-arch={arch}",
                    "-ptx",
                    f"-I{include_dir}",
                    "-o",
                    os.path.join(d, "kernel.ptx"),
                    src,
                ],
                capture_output=True,
                text=True,
            )
            if r.returncode == 0:
                with open(os.path.join(d, "kernel.ptx")) as f:
                    out["ptx"] = f.read()
        if "sass" in outputs:
            cuobjdump = os.path.join(os.path.dirname(nvcc), "cuobjdump")
            if os.path.isfile(cuobjdump):
                r = subprocess.run(
                    [cuobjdump, "-sass", os.path.join(d, "kernel.cubin")], capture_output=True, text=True
                )
                out["sass"] = r.stdout
        return out


def inspect(source, include_dir, arch="sm_90a"):
    """PTX, SASS and the resource report (registers, shared memory, spills) of a generated kernel."""
    r = compile_source(source, include_dir, arch, outputs=("cubin", "ptx", "sass"))
    res = [ln.strip() for ln in r["log"].splitlines() if "registers" in ln or "spill" in ln or "smem" in ln]
    return {"ptx": r.get("ptx"), "sass": r.get("sass"), "resources": "\n".join(res), "compile_seconds": r["seconds"]}


def launch(compiled, grid, args, stream, device):
    """Runs a compiled kernel on a CUDA device. To be wired to cupric.cuda (see the module doc)."""
    raise NotImplementedError(
        f"cupric.tile: launching on {device} needs cupric.cuda (Program + launch), which is not part of this "
        "build yet; run on the CPU (arrays on 'cpu') or in the interpreter (kernel.interpret[grid](...))"
    )
