"""cupric.cuda.compile_cache: hits and misses, invalidation on source / option / version / arch
change, the disk tier across processes, environment switches, concurrent writer processes."""

import os
import pathlib
import subprocess
import sys
import time

import cupric as cu
import pytest
from cuda_helpers import SAXPY

cache = cu.cuda.compile_cache


def delta(before):
    after = cache.stats()
    return {k: after[k] - before[k] for k in before}


def disk_files(folder):
    return sorted(p for p in pathlib.Path(folder).rglob("*") if p.is_file())


@pytest.mark.nvrtc
def test_hit_miss_and_invalidation(cache_dir):
    prog = cu.cuda.Program(SAXPY, arch="sm_90")
    before = cache.stats()
    first = prog.compile("cubin")
    assert delta(before)["misses"] == 1 and delta(before)["stores"] == 1
    again = prog.compile("cubin")
    assert again.code == first.code and delta(before)["memory_hits"] == 1
    cache.clear(memory=True, disk=False)
    from_disk = prog.compile("cubin")
    assert from_disk.code == first.code and delta(before)["disk_hits"] == 1
    # Anything that changes the output is part of the key.
    for changed in (cu.cuda.Program(SAXPY + "\n// changed", arch="sm_90"),
                    cu.cuda.Program(SAXPY, arch="sm_80"),
                    cu.cuda.Program(SAXPY, arch="sm_90", defines={"X": 1}),
                    cu.cuda.Program(SAXPY, arch="sm_90", fast_math=True)):
        misses = cache.stats()["misses"]
        changed.compile("cubin")
        assert cache.stats()["misses"] == misses + 1
    misses = cache.stats()["misses"]
    prog.compile("ptx")  # another target
    assert cache.stats()["misses"] == misses + 1
    misses = cache.stats()["misses"]
    prog.compile("cubin", cache=False)  # bypass: neither a hit nor a miss
    assert cache.stats()["misses"] == misses


@pytest.mark.nvrtc
def test_key_depends_on_compiler_version_and_name_expressions():
    prog = cu.cuda.Program(SAXPY, arch="sm_90")
    key = prog.cache_key("cubin", nvrtc_version="13.0")
    assert len(key) == 64 and key == prog.cache_key("cubin", nvrtc_version="13.0")
    assert key != prog.cache_key("cubin", nvrtc_version="13.1")
    assert key != prog.cache_key("ptx", nvrtc_version="13.0")
    assert key != prog.cache_key("cubin", ["saxpy"], nvrtc_version="13.0")
    assert key != cu.cuda.Program(SAXPY, "other.cu", arch="sm_90").cache_key("cubin", nvrtc_version="13.0")
    v = cu.cuda.versions()["nvrtc"]["version"]
    assert prog.cache_key("cubin") == prog.cache_key("cubin", nvrtc_version=f"{v[0]}.{v[1]}")


def test_put_get_and_make_key(cache_dir):
    key = cu.cuda.CompileCache.make_key("a", b"\x00\x01", 3)
    assert key != cu.cuda.CompileCache.make_key("a", b"\x00", "\x013")
    assert cache.get("nvrtc", key) is None
    cache.put("nvrtc", key, b"\x00payload\xff")
    assert cache.get("nvrtc", key) == b"\x00payload\xff"
    cache.clear(memory=True, disk=False)
    assert cache.get("nvrtc", key) == b"\x00payload\xff"
    files = disk_files(cache_dir)
    assert len(files) == 1 and files[0].name == key + ".bin"
    assert cache.disk_usage() == files[0].stat().st_size
    cache.clear()
    assert cache.get("nvrtc", key) is None and disk_files(cache_dir) == []


def test_size_bound_trims_least_recently_used(cache_dir):
    saved = cache.max_disk_bytes
    try:
        keys = [cu.cuda.CompileCache.make_key(i) for i in range(6)]
        for i, k in enumerate(keys):
            cache.put("nvrtc", k, bytes(1000))
            path = next(p for p in disk_files(cache_dir) if p.name == k + ".bin")
            os.utime(path, (time.time() - 1000 + i, time.time() - 1000 + i))
        cache.max_disk_bytes = 3500
        cache.put("nvrtc", cu.cuda.CompileCache.make_key("newest"), bytes(1000))
        assert cache.disk_usage() <= 3500
        cache.clear(memory=True, disk=False)
        assert cache.get("nvrtc", keys[0]) is None  # the oldest went first
        assert cache.get("nvrtc", cu.cuda.CompileCache.make_key("newest")) is not None
    finally:
        cache.max_disk_bytes = saved


def run(code, env, inherit=True):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **env) if inherit else env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_environment_switches(tmp_path):
    show = "import cupric as cu; print(repr(cu.cuda.compile_cache.directory))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUPRIC_")}
    assert run(show, {**env, "CUPRIC_CACHE_DIR": str(tmp_path)}, False) == repr(str(tmp_path))
    assert run(show, {**env, "CUPRIC_CACHE_DIR": ""}, False) == "''"
    assert run(show, {**env, "CUPRIC_CACHE_DIR": str(tmp_path), "CUPRIC_DISABLE_DISK_CACHE": "1"}, False) == "''"
    assert run(show, dict(env, HOME=str(tmp_path), XDG_CACHE_HOME=""), False) == repr(str(tmp_path / ".cache/cupric"))
    assert run(show, dict(env, XDG_CACHE_HOME=str(tmp_path / "xdg")), False) == repr(str(tmp_path / "xdg/cupric"))


@pytest.mark.nvrtc
def test_disk_tier_is_shared_between_processes(tmp_path):
    code = f"""
import cupric as cu, time
prog = cu.cuda.Program({SAXPY!r}, arch="sm_90")
t = time.perf_counter(); prog.compile("cubin"); dt = time.perf_counter() - t
s = cu.cuda.compile_cache.stats()
print(s["misses"], s["disk_hits"], dt)
"""
    env = {"CUPRIC_CACHE_DIR": str(tmp_path)}
    misses, hits, cold = run(code, env).split()
    assert (misses, hits) == ("1", "0")
    misses, hits, warm = run(code, env).split()
    assert (misses, hits) == ("0", "1")
    assert float(warm) < float(cold)


@pytest.mark.nvrtc
def test_concurrent_writer_processes(tmp_path):
    code = f"""
import cupric as cu
for i in range(3):
    cu.cuda.Program({SAXPY!r} + "// %d" % i, arch="sm_80").compile("ptx")
print("ok")
"""
    env = dict(os.environ, CUPRIC_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out.strip() == "ok", err
    files = disk_files(tmp_path)
    assert len(files) == 3 and all(f.suffix == ".bin" for f in files)  # no temporary files left behind
    check = f"""
import cupric as cu
codes = [cu.cuda.Program({SAXPY!r} + "// %d" % i, arch="sm_80").compile("ptx").code for i in range(3)]
s = cu.cuda.compile_cache.stats()
print(s["disk_hits"], s["misses"], all(b".entry saxpy" in c for c in codes))
"""
    assert run(check, {"CUPRIC_CACHE_DIR": str(tmp_path)}) == "3 0 True"


@pytest.mark.nvrtc
def test_corrupt_entry_is_recompiled(cache_dir):
    prog = cu.cuda.Program(SAXPY, arch="sm_90")
    good = prog.compile("cubin").code
    (path,) = disk_files(cache_dir)
    path.write_bytes(path.read_bytes()[:100])
    cache.clear(memory=True, disk=False)
    before = cache.stats()
    with pytest.warns(RuntimeWarning, match="deleted the compile cache entry .*: it is truncated; it will be rebuilt"):
        assert prog.compile("cubin").code == good
    assert delta(before)["disk_errors"] == 1 and delta(before)["misses"] == 1
