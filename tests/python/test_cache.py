"""The compile cache as a whole (python -m cupric.cache, docs/security.md), with real compiles:
info and clear cover every kind; tampered, truncated and swapped entries (CPU shared objects,
cubins, kernel indexes) are deleted with a warning and rebuilt, never loaded; index entries
cannot name code outside the cache; no text from the environment or the cache reaches a shell;
unsafe folders are replaced by a private one, unwritable ones leave the cache in memory; one
folder decision (CUPRIC_CACHE_DIR, XDG_CACHE_HOME) holds for every kind. warm needs a GPU."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cupric as cu
import numpy as np
import pytest
from cupric import cache
from cupric import tile as ct
from cupric.tile import _cuda, _kernel

compile_cache = cu.cuda.compile_cache

# A script that compiles (or loads) one CPU tile kernel per factor given and checks its results.
SCRIPT = """
import sys, numpy as np, cupric as cu
from cupric import tile as ct

@ct.kernel
def scale(x, out, F: ct.Constant[int], B: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(B,)) * F)

x = np.arange(64, dtype=np.float32)
for f in map(int, sys.argv[1:]):
    out = cu.zeros(64, dtype=cu.float32)
    scale[(4,)](cu.asarray(x), out, f, 16)
    assert np.array_equal(np.asarray(out), x * f), (f, np.asarray(out))
    c = next((c for k, c in scale.cache.items() if ("int", f) in k), None)
    if c is None:
        print("interpreted")
    else:
        print("hit" if c.host["cache_hit"] else "compiled", "index" if c.host.get("index_hit") else "frontend")
print("directory", cu.cuda.compile_cache.directory)
"""


def run(tmp_path, env, *factors, check=True, pch=False):
    """Runs SCRIPT in a new process (cwd tmp_path, so that a stray `touch` would land there);
    without GCC's precompiled header unless `pch` (building one costs seconds)."""
    script = tmp_path / "scale.py"
    script.write_text(SCRIPT)
    own = ("CUPRIC_CACHE_DIR", "XDG_CACHE_HOME", "CUPRIC_TILE_NO_PCH")
    full = {k: v for k, v in os.environ.items() if k not in own}
    if not pch:
        full["CUPRIC_TILE_NO_PCH"] = "1"
    out = subprocess.run(
        [sys.executable, "-W", "always::RuntimeWarning", str(script), *map(str, factors)],
        env=dict(full, **env), cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    if check:
        assert out.returncode == 0, out.stderr
    return out


def entries(folder, kind):
    return sorted((Path(folder) / "v2" / kind).rglob("*.bin"))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache folder holding the kernel of factor 2 (shared object, index, compiler probe); tests
    copy it."""
    folder = tmp_path_factory.mktemp("warm") / "cache"
    run(folder.parent, {"CUPRIC_CACHE_DIR": str(folder)}, 2)
    assert entries(folder, "shared_object") and entries(folder, "index")
    return folder


@pytest.fixture
def copy_of_warm(warm, tmp_path):
    folder = tmp_path / "cache"
    shutil.copytree(warm, folder, symlinks=True)
    return folder


@pytest.fixture(scope="module")
def evil_library(tmp_path_factory):
    """A shared object that creates the file `pwned` next to it when loaded: what an attacker
    would plant. Returns (library, the file it creates)."""
    d = tmp_path_factory.mktemp("evil")
    pwned = d / "pwned"
    src = d / "evil.cpp"
    src.write_text(
        "#include <fcntl.h>\n#include <unistd.h>\n"
        f'__attribute__((constructor)) static void evil() {{ close(open("{pwned}", O_CREAT | O_WRONLY, 0600)); }}\n'
        'extern "C" void cupric_tile_entry(void**, const long long*, long long, long long, void*) {}\n'
    )
    lib = d / "evil.so"
    subprocess.run([os.environ.get("CXX", "c++"), "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib, pwned


# ---- python -m cupric.cache ------------------------------------------------------------------------


def test_info_and_unknown_command(capsys):
    assert cache.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "directory" in out and all(kind in out for kind in cu.cuda.CompileCache.kinds())
    assert cache.main(["nonsense"]) == 2


def _kind_counts(info_text):
    """{kind: entries} from `python -m cupric.cache info`."""
    kinds = cu.cuda.CompileCache.kinds()
    return {w[0]: int(w[1]) for w in (ln.split() for ln in info_text.splitlines()) if w and w[0] in kinds}


@pytest.mark.nvrtc
def test_every_kind_in_one_folder_and_info_clear_cover_them(tmp_path, evil_library):
    """One process fills every kind (CPU and GPU tile kernels, an autotune choice, an NVRTC
    program) with only XDG_CACHE_HOME set: all land in $XDG_CACHE_HOME/cupric (created 0700),
    the folder CUPRIC_CACHE_DIR names the same way. A tampered precompiled header is rebuilt.
    info lists each kind; clear empties each and what older versions left there."""
    folder = tmp_path / "xdg" / "cupric"
    fill = SCRIPT + """
from cupric.tile import _cuda, _kernel
tuned = ct.autotune(configs=[{"F": 2, "B": 16}, {"F": 2, "B": 32}], key=["x"], warmup=0, rep=1)(scale)
tuned[lambda m: 64 // m["B"]](cu.asarray(x), cu.zeros(64, dtype=cu.float32))
src = scale.inspect(cu.asarray(x), out, 2, 16)["cuda_source"]
_cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
cu.cuda.Program('extern "C" __global__ void k(float* x) { x[0] = 1; }', arch="sm_90").compile("cubin")
"""
    (tmp_path / "fill.py").write_text(fill)
    base = {k: v for k, v in os.environ.items() if k != "CUPRIC_CACHE_DIR"}
    xdg = dict(base, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    subprocess.run([sys.executable, str(tmp_path / "fill.py"), "2"], env=xdg, check=True, timeout=600)
    assert folder.stat().st_mode & 0o777 == 0o700
    has_gcc = _kernel._tile.host_compiler()["gcc"]
    if has_gcc:
        (entry,) = entries(folder, "precompiled_header")
        _evil_payload(entry, evil_library[0])
        out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(folder)}, 3, pch=True)
        assert out.stdout.startswith("compiled frontend") and str(entry) in out.stderr
        assert "deleted the compile cache entry" in out.stderr and len(entries(folder, "precompiled_header")) == 1
    (folder / "tile").mkdir()
    (folder / "tile" / "old.so").write_bytes(b"left by an older version")
    env = dict(os.environ, CUPRIC_CACHE_DIR=str(folder))
    show = [sys.executable, "-m", "cupric.cache"]
    info = subprocess.run([*show, "info"], env=env, capture_output=True, text=True, check=True).stdout
    counts = _kind_counts(info)
    assert set(counts) == set(cu.cuda.CompileCache.kinds())
    assert all(n >= 1 for kind, n in counts.items() if kind != "precompiled_header" or has_gcc), info
    assert "(older versions)" in info
    cleared = subprocess.run([*show, "clear"], env=env, capture_output=True, text=True, check=True).stdout
    assert cleared.startswith("cleared ")
    info = subprocess.run([*show, "info"], env=env, capture_output=True, text=True, check=True).stdout
    assert set(_kind_counts(info).values()) == {0} and "(older versions)" not in info
    assert not (folder / "tile").exists()


@pytest.mark.skipif(cu.cuda.is_available(), reason="checks the message without a GPU")
def test_warm_without_gpu(capsys):
    assert cache.main(["warm"]) == 1
    assert "no CUDA GPU" in capsys.readouterr().out


@pytest.mark.gpu
def test_warm_then_first_calls_hit_the_cache(capsys):
    assert cache.main(["warm"]) == 0
    stats = cu.cuda.compile_cache.stats()
    x = cu.arange(10, dtype=cu.float32, device="cuda")
    y = x + x
    z = 2 * y
    after = cu.cuda.compile_cache.stats()
    assert after["misses"] == stats["misses"]  # every kernel above was warmed
    assert float(cu.sum(z)) == 180.0


# ---- entries -------------------------------------------------------------------------------------


def _flip_last_byte(path, evil):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def _evil_payload(path, evil):  # the attacker's code behind the entry's header (hash kept)
    data = path.read_bytes()
    header = len(data) - _payload_length(data)
    path.write_bytes(data[:header] + evil.read_bytes())


def _payload_length(data):
    return int.from_bytes(data[16:24], "little")


def _truncate(path, evil):
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _symlink_to_evil(path, evil):
    path.unlink()
    path.symlink_to(evil)


def _evil_file_writable_by_others(path, evil):
    _evil_payload(path, evil)
    path.chmod(0o666)


@pytest.mark.parametrize(
    "tamper", [_flip_last_byte, _evil_payload, _truncate, _symlink_to_evil, _evil_file_writable_by_others]
)
def test_tampered_shared_objects_are_never_loaded(copy_of_warm, tmp_path, evil_library, tamper):
    lib, pwned = evil_library
    (entry,) = entries(copy_of_warm, "shared_object")
    tamper(entry, lib)
    out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(copy_of_warm)}, 2)
    assert out.stdout.splitlines()[0] == "compiled frontend"  # found unusable: compiled again
    assert "RuntimeWarning: cupric: deleted the compile cache entry" in out.stderr
    assert str(entry) in out.stderr and "it will be rebuilt" in out.stderr
    assert not pwned.exists()
    again = run(tmp_path, {"CUPRIC_CACHE_DIR": str(copy_of_warm)}, 2)  # the rebuilt entry is good
    assert again.stdout.splitlines()[0] == "hit index" and "Warning" not in again.stderr


def test_tampered_index_file_is_rebuilt(copy_of_warm, tmp_path):
    (entry,) = entries(copy_of_warm, "index")
    _truncate(entry, None)
    out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(copy_of_warm)}, 2)
    assert out.stdout.splitlines()[0] == "hit frontend"  # the index was rebuilt, the binary kept
    assert "deleted the compile cache entry" in out.stderr and "it is truncated" in out.stderr
    assert run(tmp_path, {"CUPRIC_CACHE_DIR": str(copy_of_warm)}, 2).stdout.startswith("hit index")


def test_each_kernel_in_a_process_runs_its_own_code(copy_of_warm, tmp_path):
    """Kernels are loaded under names of their own (glibc reuses a library loaded under a name
    it has seen, and /proc/self/fd numbers come back)."""
    out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(copy_of_warm)}, 2, 3, 5, 7)
    assert out.stdout.splitlines()[:4] == ["hit index"] + ["compiled frontend"] * 3


@pytest.fixture
def scale_kernel():
    """An in-process CPU kernel and a launcher that checks its results."""

    @ct.kernel
    def triple(x, out, B: ct.Constant[int]):
        ct.store(out, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) * 3)

    def launch():
        triple.cache.clear()  # as in a new process: the index is read again
        x = np.random.default_rng(1).random(64).astype(np.float32)
        out = cu.zeros(64, dtype=cu.float32)
        triple[(4,)](cu.asarray(x), out, 16)
        np.testing.assert_array_equal(np.asarray(out), x * 3)
        return next(iter(triple.cache.values()))

    return triple, launch


def _index_key(compiled):
    return compiled.index_key(("cpu", _kernel._tile.host_environment(_kernel.include_dir())))


@pytest.mark.parametrize(
    "entry",
    [
        lambda lib, key, params: {"path": str(lib), "params": params},  # the old form: a path anywhere
        lambda lib, key, params: {"shared_object": f"../../../../{lib}", "params": params},
        lambda lib, key, params: {"shared_object": str(lib), "params": params},
        lambda lib, key, params: {"shared_object": key, "params": params, "path": str(lib)},
        lambda lib, key, params: {"shared_object": key, "params": "not a list"},
        lambda lib, key, params: {"shared_object": key, "params": [[True, "float32", 99, False]] * len(params)},
        lambda lib, key, params: [key, params],
        lambda lib, key, params: "\udcff not json",
    ],
)
def test_index_entries_cannot_point_outside_the_cache(cache_dir, scale_kernel, evil_library, entry):
    lib, pwned = evil_library
    _, launch = scale_kernel
    c = launch()
    key, params = c.host["key"], [list(p) for p in c.launcher.params()]
    planted = entry(lib, key, params)
    data = planted.encode(errors="surrogateescape") if isinstance(planted, str) else json.dumps(planted).encode()
    compile_cache.put("index", _index_key(c), data)  # a well-formed cache entry with hostile content
    with pytest.warns(RuntimeWarning, match="deleted the kernel index entry"):
        again = launch()
    assert not again.host.get("index_hit") and not pwned.exists()
    assert launch().host.get("index_hit")  # indexed again, correctly


@pytest.mark.nvrtc
def test_tampered_cubin_is_rebuilt(cache_dir):
    @ct.kernel
    def neg(x, B: ct.Constant[int]):
        ct.store(x, index=(ct.bid(0),), tile=-ct.load(x, index=(ct.bid(0),), shape=(B,)))

    src = neg.inspect(cu.zeros(16, dtype=cu.float32), 16)["cuda_source"]
    first = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
    for tamper in (_flip_last_byte, _truncate):
        (entry,) = entries(cache_dir, "cubin")
        tamper(entry, None)
        compile_cache.clear(memory=True, disk=False)  # as in a new process
        with pytest.warns(RuntimeWarning, match="deleted the compile cache entry"):
            again = _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")
        assert again["cubin"] == first["cubin"]
    compile_cache.put("cubin", _cuda._cubin_key(src, _kernel.include_dir(), "sm_90a"), b"\x04\x00\x00\x00logsnot elf")
    compile_cache.clear(memory=True, disk=False)
    with pytest.warns(RuntimeWarning, match="it holds no cubin"):
        assert _cuda.compile_source(src, _kernel.include_dir(), arch="sm_90a")["cubin"] == first["cubin"]


# ---- no shell --------------------------------------------------------------------------------------


def test_compiler_probe_record_never_reaches_a_shell(copy_of_warm, tmp_path):
    """The probe record holds the compiler's version and two flags; the compile flags are computed,
    never read back. A record with shell text in it (as only its owner could write) runs nothing;
    one not of the expected form (the old one had a flags line that went to popen()) is deleted
    with a warning and the compiler probed again. Older versions' probe files are not read."""
    pwned = tmp_path / "pwned"
    shell = f"$(touch {pwned}) `touch {pwned}`; touch {pwned} | touch {pwned}"
    (entry,) = entries(copy_of_warm, "compiler")
    (copy_of_warm / "tile").mkdir()
    (copy_of_warm / "tile" / "compiler-0123456789abcdef").write_text(f"g++ (GCC) 13\n-O2 {shell}\n1\n")
    records = {
        3: (f"g++ {shell}\n1\n1\n", None),  # well-formed: shell text only in the version
        4: (f"g++ (GCC) 13\n-O2 {shell}\n1\n", "not in the expected form"),
        5: ("g++ (GCC) 13\n2\n1\n", "not in the expected form"),
    }
    saved = compile_cache.directory
    for factor, (record, warning) in records.items():
        try:
            compile_cache.directory = str(copy_of_warm)
            compile_cache.put("compiler", entry.stem, record.encode())
        finally:
            compile_cache.directory = saved
        out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(copy_of_warm)}, factor)
        assert out.stdout.startswith("compiled frontend") and not pwned.exists()
        assert (warning is None) == ("RuntimeWarning" not in out.stderr), out.stderr
        if warning:
            assert warning in out.stderr


@pytest.mark.parametrize(
    "cxx", ["c++ -DX=$(touch {p})", "c++;touch {p}", "c++ `touch {p}`", "c++ -DX=1 && touch {p} ||", "$(touch {p})"]
)
def test_cxx_never_reaches_a_shell(tmp_path, cxx):
    """CXX is split at whitespace into an argument vector: the words are arguments (the compiler
    then fails, naming them) or the program is not found (the interpreter runs the kernel)."""
    pwned = tmp_path / "pwned"
    out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(tmp_path / "cache"), "CXX": cxx.format(p=pwned)}, 2, check=False)
    assert not pwned.exists()
    if out.returncode == 0:
        assert "no C++ compiler" in out.stderr and out.stdout.startswith("interpreted")
    else:
        assert "the C++ compiler failed on the generated kernel" in out.stderr and "$ c++ " in out.stderr


def test_paths_with_shell_text_are_plain_arguments(tmp_path, cache_dir, monkeypatch):
    pwned = tmp_path / "pwned"
    inc = tmp_path / f"inc $(touch {pwned}) ; `touch {pwned}` 'q"
    shutil.copytree(_kernel.include_dir(), inc)
    monkeypatch.setenv("CUPRIC_TILE_NO_PCH", "1")  # a new header folder: no precompiled header needed

    @ct.kernel
    def inc_one(x, B: ct.Constant[int]):
        ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(B,)) + 1)

    src = inc_one.inspect(cu.zeros(16, dtype=cu.float32), 16)["host_source"]
    info = _kernel._tile.compile_host(src, str(inc))
    assert not info["cache_hit"] and entries(cache_dir, "shared_object") and not pwned.exists()


# ---- the folder ----------------------------------------------------------------------------------


def _unsafe_folders(tmp_path):
    """(folder, problem) of folders the cache must not use."""
    out = []
    for mode, problem in ((0o770, "can be written by its group"), (0o777, "can be written by anyone"),
                          (0o1777, "can be written by anyone")):
        d = tmp_path / f"mode{mode:o}"
        d.mkdir()
        d.chmod(mode)
        out.append((d, problem))
    if os.geteuid() == 0:
        d = tmp_path / "foreign"
        d.mkdir()
        os.chown(d, 65534, 65534)
        out.append((d, "belongs to uid 65534"))
    else:
        out.append((Path("/"), "belongs to uid 0"))
    return out


def test_unsafe_folders_are_replaced_by_a_private_one(tmp_path):
    saved = compile_cache.directory
    for folder, problem in _unsafe_folders(tmp_path):
        try:
            with pytest.warns(RuntimeWarning, match=f"{problem}.*private temporary folder"):
                compile_cache.directory = str(folder)
            used = compile_cache.directory
            assert used != str(folder) and os.stat(used).st_mode & 0o7777 == 0o700
            assert problem in compile_cache.info()["note"]
            compile_cache.put("index", "k", b"x")
            assert not (folder / "v2").exists()
        finally:
            compile_cache.directory = saved


def test_unsafe_folder_from_the_environment(tmp_path):
    """A kernel still compiles and runs; nothing is written to the folder; the private folder
    is removed when the process exits."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(folder)}, 2)
    assert "can be written by anyone" in out.stderr and "private temporary folder" in out.stderr
    used = out.stdout.split("directory ")[1].strip()
    assert used.startswith(tempfile.gettempdir()) and not os.path.exists(used)
    assert list(folder.iterdir()) == []


def test_unwritable_folders_leave_the_cache_in_memory(tmp_path):
    (tmp_path / "file").write_text("")
    out = run(tmp_path, {"CUPRIC_CACHE_DIR": str(tmp_path / "file" / "cache")}, 2)
    assert "cannot be written" in out.stderr and "kept in memory" in out.stderr
    assert [ln.strip() for ln in out.stdout.splitlines()] == ["compiled frontend", "directory"]
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "readonly"
        ro.mkdir()
        ro.chmod(0o500)
        saved = compile_cache.directory
        try:
            with pytest.warns(RuntimeWarning, match="cannot be written.*kept in memory"):
                compile_cache.directory = str(ro)
            assert compile_cache.directory == ""
        finally:
            compile_cache.directory = saved
