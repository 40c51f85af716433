"""python -m cupric.sanitize [--tool memcheck|racecheck|initcheck|synccheck] script.py [args]:
runs a script (or `-m module`) under NVIDIA's compute-sanitizer with cupric's memory pool made
visible to it, and prints the findings with cupric's op and kernel names (docs/profiling.md)."""

import gc
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
# what the child needs: every array its own exact-size driver allocation (cupric's cache of
# blocks would hide an access past an array's end inside a larger cached block)
CHILD_ENV = {"CUPRIC_POOL": "direct"}
MISSING = ("compute-sanitizer not found: pip install nvidia-cuda-sanitizer-api (CUDA 13; "
           "nvidia-cuda-sanitizer-api-cu12 for CUDA 12), or set CUDA_HOME to a toolkit that has bin/compute-sanitizer, "
           "or CUPRIC_COMPUTE_SANITIZER to the program")


def _candidates():
    yield os.environ.get("CUPRIC_COMPUTE_SANITIZER")
    yield shutil.which("compute-sanitizer")
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            yield os.path.join(root, "bin", "compute-sanitizer")
            yield os.path.join(root, "compute-sanitizer", "compute-sanitizer")
    for base in sys.path:  # the wheels: CUDA 13's nvidia/cu13/bin, CUDA 12's nvidia/cuda_sanitizer_api
        yield os.path.join(base or ".", "nvidia", "cu13", "bin", "compute-sanitizer")
        yield os.path.join(base or ".", "nvidia", "cuda_sanitizer_api", "compute-sanitizer", "compute-sanitizer")


def find_compute_sanitizer():
    """The compute-sanitizer program to run, or None."""
    for path in _candidates():
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def sanitizer_command(exe, tool, log_file, target):
    """The command line: the tool, its report in log_file, then this module's child mode that runs
    `target` (['script.py', args...] or ['-m', 'module', args...])."""
    return [exe, "--tool", tool, "--log-file", log_file, "--print-limit", "200", "--show-backtrace", "device",
            # the runtime counts a kernel's parameters by asking cuFuncGetParamInfo until it
            # answers "invalid value": API errors are expected, not findings
            "--report-api-errors", "no", "--target-processes", "all",
            sys.executable, "-m", "cupric.sanitize", "--child", log_file + ".kernels.json", *target]


# ---- the report ----------------------------------------------------------------------------------

_PREFIX = re.compile(r"^========= ?")
_AT = re.compile(r"\bat (?:void )?([^\s(+]+)(?:\([^)]*\))?\+0x[0-9a-fA-F]+")
_SUMMARY = re.compile(r"(ERROR|RACECHECK|SYNCCHECK|INITCHECK) SUMMARY: (\d+) (?:errors?|hazards?)"
                      r"(?: displayed \((\d+) errors?)?")


def parse_report(text):
    """compute-sanitizer's text report -> (findings, count). A finding is {'message', 'kernel',
    'details'}; count is the tool's own summary (errors), else the number of findings."""
    findings, count = [], None
    current = None
    for raw in text.splitlines():
        if not _PREFIX.match(raw):
            continue
        line = _PREFIX.sub("", raw)
        summary = _SUMMARY.search(line)
        if summary:
            count = int(summary.group(3) or summary.group(2))
            current = None
        elif not line.strip() or line.startswith("COMPUTE-SANITIZER"):
            current = None
        elif not line.startswith(" "):
            current = {"message": line.strip(), "kernel": None, "details": []}
            findings.append(current)
        elif current is not None:
            at = _AT.search(line)
            if at and current["kernel"] is None:
                current["kernel"] = at.group(1)
            elif "Host Frame" not in line and len(current["details"]) < 4:
                current["details"].append(line.strip())
    return findings, len(findings) if count is None else count


# the CUDA backend's kernels are named after their op and family (docs/architecture.md)
_FAMILIES = {"reduce": "reduction", "arg": "arg-reduction", "scan": "scan", "cumsum": "scan", "cumprod": "scan",
             "gather": "gather (indexing)", "scatter": "scatter (indexing)", "random": "random draw",
             "cast": "cast (astype / copy)", "copy": "copy", "sort": "sort", "radix": "sort", "unique": "unique",
             "search": "searchsorted", "arange": "arange", "fill": "fill", "transpose": "copy (transpose)"}
_LIBRARIES = (("cublasLt", "cuBLASLt"), ("cublas", "cuBLAS"), ("gemm", "cuBLAS"), ("cutlass", "cuBLAS"),
              ("xmma", "cuBLAS"), ("fft", "cuFFT"), ("cusolver", "cuSOLVER"), ("potrf", "cuSOLVER"),
              ("getrf", "cuSOLVER"), ("geqrf", "cuSOLVER"), ("syevd", "cuSOLVER"), ("gesvd", "cuSOLVER"))


def _cupric_function(name):
    """'ufunc' or 'function' when cupric's namespace has that name, else None."""
    import cupric

    f = getattr(cupric, name, None) if name and not name.startswith("_") else None
    return "ufunc" if isinstance(f, cupric.ufunc) else "function" if callable(f) else None


def describe_kernel(name, tile_kernels=None):
    """Which cupric op or tile kernel a kernel name in a report belongs to."""
    if not name:
        return "unknown kernel"
    if tile_kernels and name in tile_kernels:
        return tile_kernels[name]
    parts = name.lstrip("_").split("_")
    for n in range(len(parts) - 1, 0, -1):  # the longest prefix that is a ufunc: logical_and_vec
        if _cupric_function("_".join(parts[:n])) == "ufunc":
            return f"cupric op '{'_'.join(parts[:n])}' (CUDA backend map, kernel {name})"
    family = _FAMILIES.get(parts[0])
    if family:
        op = f" '{parts[1]}'" if parts[0] == "reduce" and len(parts) > 1 else ""
        return f"cupric {family}{op} (CUDA backend, kernel {name})"
    for n in range(len(parts) - 1, 0, -1):  # argmax_f4, clip_vec, _where_nd
        if _cupric_function("_".join(parts[:n])):
            return f"cupric op '{'_'.join(parts[:n])}' (CUDA backend, kernel {name})"
    lowered = name.lower()
    for key, library in _LIBRARIES:
        if key.lower() in lowered:
            return f"a {library} kernel ({name})"
    return f"kernel {name}"


def format_findings(tool, findings, count, tile_kernels, log_file):
    lines = [f"cupric.sanitize: {tool} found {count} error{'s' if count != 1 else ''} (full report: {log_file})"]
    for i, f in enumerate(findings[:50], 1):
        lines.append(f"  {i}. {f['message']}")
        lines.append(f"     in {describe_kernel(f['kernel'], tile_kernels)}")
        lines.extend(f"     {d}" for d in f["details"])
    if len(findings) > 50:
        lines.append(f"  ... and {len(findings) - 50} more")
    return "\n".join(lines)


# ---- the child: runs the target, then names the tile kernels it compiled --------------------------


def _tile_kernel_names():
    try:
        from .tile import _kernel
    except ImportError:
        return {}
    names = {}
    for obj in gc.get_objects():
        if isinstance(obj, _kernel.Kernel):
            fn = obj.fn
            code = getattr(fn, "__code__", None)
            where = f" ({code.co_filename}:{code.co_firstlineno})" if code else ""
            names[fn.__name__] = f"tile kernel {fn.__qualname__}{where}"
    return names


def _run_child(map_file, target):
    try:
        if target[0] == "-m":
            sys.argv = target[1:]
            runpy.run_module(target[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(target)
            sys.path.insert(0, os.path.dirname(os.path.abspath(target[0])))
            runpy.run_path(target[0], run_name="__main__")
    finally:
        try:
            with open(map_file, "w") as f:
                json.dump(_tile_kernel_names(), f)
        except OSError:
            pass


# ---- the command -----------------------------------------------------------------------------------


USAGE = """usage: python -m cupric.sanitize [--tool memcheck|racecheck|initcheck|synccheck] [--log FILE]
                                 [--keep-pool] (script.py | -m module) [args ...]"""


def parse_args(argv):
    """(tool, log, keep_pool, target): options up to the script or `-m module`, the rest its own."""
    tool, log, keep_pool = "memcheck", None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--tool", "--log") and i + 1 < len(argv):
            tool, log = (argv[i + 1], log) if a == "--tool" else (tool, argv[i + 1])
            i += 2
        elif a.startswith("--tool="):
            tool, i = a.split("=", 1)[1], i + 1
        elif a == "--keep-pool":
            keep_pool, i = True, i + 1
        elif a == "--":
            i += 1
            break
        elif a.startswith("-") and a != "-m":
            raise SystemExit(f"{USAGE}\ncupric.sanitize: unknown option {a!r}")
        else:
            break
    target = argv[i:]
    if tool not in TOOLS:
        raise SystemExit(f"{USAGE}\ncupric.sanitize: --tool must be one of {', '.join(TOOLS)}, got {tool!r}")
    if not target or target == ["-m"]:
        raise SystemExit(f"{USAGE}\ncupric.sanitize: name a script (or -m module) to run")
    return tool, log, keep_pool, target


def run(tool, target, log_file=None, keep_pool=False, echo=print):
    """Runs target under the tool; returns (exit status, findings, count)."""
    exe = find_compute_sanitizer()
    if exe is None:
        raise FileNotFoundError(MISSING)
    log_file = log_file or tempfile.mkstemp(prefix="cupric-sanitize-", suffix=".log")[1]
    env = dict(os.environ)
    if not keep_pool:
        env.update(CHILD_ENV)
    status = subprocess.call(sanitizer_command(exe, tool, log_file, target), env=env)
    try:
        with open(log_file, errors="replace") as f:
            findings, count = parse_report(f.read())
    except OSError:
        findings, count = [], 0
        echo(f"cupric.sanitize: compute-sanitizer wrote no report ({log_file}); exit status {status}")
    tile_kernels = {}
    try:
        with open(log_file + ".kernels.json") as f:
            tile_kernels = json.load(f)
    except (OSError, ValueError):
        pass
    echo(format_findings(tool, findings, count, tile_kernels, log_file))
    return status, findings, count


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return _run_child(argv[1], argv[2:])
    tool, log, keep_pool, target = parse_args(argv)
    try:
        status, _, count = run(tool, target, log, keep_pool)
    except FileNotFoundError as err:
        print(f"cupric.sanitize: {err}", file=sys.stderr)
        return 2
    return status or (1 if count else 0)


if __name__ == "__main__":
    sys.exit(main())
