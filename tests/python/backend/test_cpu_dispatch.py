"""The CPU kernels' instruction-set variants (src/backend/cpu/cpu_dispatch.hpp): the best one the
CPU supports is chosen at start-up, CUPRIC_CPU_TARGETS caps it, every variant agrees with NumPy
(cpu_variant_check.py, in a subprocess per variant), the tile language's host kernels follow the
variant, and nothing outside the dispatched units uses an instruction beyond the baseline."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import cupric as cu
import pytest

TARGETS = ["baseline", "avx2", "avx512"]  # lowest first
CONFIG = cu.show_config("dicts")
SUPPORTED = CONFIG["cpu"]["variants supported"]
NATIVE = CONFIG["build"]["baseline flags"] == "-march=native"
CHECKER = Path(__file__).with_name("cpu_variant_check.py")


def run_python(code_or_path, targets=None, args=()):
    env = dict(os.environ)
    env.pop("CUPRIC_CPU_TARGETS", None)
    if targets is not None:
        env["CUPRIC_CPU_TARGETS"] = targets
    argv = [sys.executable, *((str(code_or_path),) if isinstance(code_or_path, Path) else ("-c", code_or_path))]
    return subprocess.run([*argv, *args], env=env, capture_output=True, text=True, timeout=600)


def expected_variant(cap):
    """The best supported variant at or below `cap`."""
    allowed = TARGETS[: TARGETS.index(cap) + 1]
    return next(v for v in SUPPORTED if v in allowed)


def need(variant):
    if variant not in SUPPORTED:
        pytest.skip(f"this CPU or build has no {variant} variant (supported: {', '.join(SUPPORTED)})")


def test_variant_in_use_is_the_best_allowed():
    cap = os.environ.get("CUPRIC_CPU_TARGETS") or "avx512"
    assert CONFIG["cpu"]["variant"] == expected_variant(cap)
    assert CONFIG["cpu"]["variants supported"][-1] == "baseline"
    assert set(SUPPORTED) <= set(CONFIG["build"]["variants compiled"])


@pytest.mark.parametrize("cap", TARGETS)
def test_cpu_targets_caps_the_variant(cap):
    r = run_python("import cupric as cu; print(cu.show_config('dicts')['cpu']['variant'])", cap)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == expected_variant(cap)


def test_unknown_cpu_target_fails_the_import_naming_it():
    r = run_python("import cupric", "sse9")
    assert r.returncode != 0
    assert "CUPRIC_CPU_TARGETS='sse9' is not a CPU target: use baseline, avx2 or avx512" in r.stderr


def test_show_config_prints_the_variant(capsys):
    cu.show_config()
    out = capsys.readouterr().out
    assert f"variant: {CONFIG['cpu']['variant']}" in out and "baseline flags:" in out
    with pytest.raises(ValueError, match="mode must be 'stdout' or 'dicts', got 'text'"):
        cu.show_config("text")


@pytest.mark.parametrize("variant", TARGETS)
def test_variant_agrees_with_numpy(variant):
    need(variant)
    r = run_python(CHECKER, variant, [variant])
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert f"{variant}: 0 mismatches" in r.stdout


TILE_FLAGS = """
import cupric as cu
from cupric.tile._kernel import include_dir
print(cu.show_config('dicts')['tile host compiler']['flags'])
print(cu._cupric._tile.host_environment(include_dir()))
"""


def test_tile_host_kernels_follow_the_variant():
    """Each variant compiles tile kernels for its instruction set, under its own cache key."""
    if not CONFIG["tile host compiler"]["available"]:
        pytest.skip("no C++ compiler for the tile language's CPU path")
    march = {"baseline": CONFIG["build"]["baseline flags"], "avx2": "-march=x86-64-v3", "avx512": "-march=x86-64-v4"}
    environments = set()
    for variant in SUPPORTED:
        r = run_python(TILE_FLAGS, variant)
        assert r.returncode == 0, r.stderr
        flags, environment = r.stdout.strip().splitlines()[-2:]
        if march[variant].startswith("-march"):
            assert march[variant] in flags.split(), (variant, flags)
        assert ("-mprefer-vector-width=512" in flags) == (variant == "avx512"), flags
        environments.add(environment)
    assert len(environments) == len(SUPPORTED)  # a kernel cached for one never loads under another


# ---- no instruction beyond the baseline outside the dispatched units -----------------------------------------

# x86-64-v2 has no VEX/EVEX encodings (every AVX instruction's mnemonic starts with v) and none of
# v3's BMI1/BMI2/MOVBE instructions
BEYOND_V2 = re.compile(r"^\s*[0-9a-f]+:\s+(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|"
                       r"shrx|movbe)\b")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")
# mangled names of functions in (or local to a function in) namespace cupric::cpu::avx2 / ::avx512
DISPATCHED = re.compile(r"_ZZ?N6cupric3cpu(?:4(avx2)|6(avx512))")


def core_library():
    lib = Path(cu.__file__).resolve().parents[2] / "build" / "py" / "libcupric_core.a"
    if not lib.exists():
        pytest.skip(f"no {lib} (an editable build, as `make build`, keeps the core library)")
    if NATIVE:
        pytest.skip("a CUPRIC_MARCH_NATIVE build is for this machine alone")
    if shutil.which("objdump") is None:
        pytest.skip("no objdump")
    return lib


def test_only_dispatched_code_uses_avx():
    """Disassembles the core library: every function that uses an instruction beyond x86-64-v2 is
    in a dispatched variant's namespace, and the variants do use their instruction sets."""
    if "x86-64-v2" not in CONFIG["build"]["baseline flags"]:
        pytest.skip("the baseline is not x86-64-v2 (not an x86-64 build)")
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(core_library())], capture_output=True,
                         text=True, check=True).stdout
    offending, registers = {}, {"avx2": set(), "avx512": set()}
    function = ""
    for line in out.splitlines():
        m = FUNCTION.match(line)
        if m:
            function = m.group(1)
            continue
        dispatched = DISPATCHED.match(function)
        if dispatched:
            registers[dispatched.group(1) or dispatched.group(2)].update(re.findall(r"%([xyz]mm)\d", line))
        elif BEYOND_V2.match(line):
            offending.setdefault(function, line.strip())
    assert not offending, "functions outside the dispatched units with instructions beyond x86-64-v2:\n" + "\n".join(
        f"{f}: {i}" for f, i in list(offending.items())[:20])
    assert "ymm" in registers["avx2"] and "zmm" not in registers["avx2"], registers
    assert "zmm" in registers["avx512"], registers
