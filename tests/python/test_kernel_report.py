"""cupric._kernel_report: the pieces of a kernel report that read tools' output (ptxas' report,
the disassembler), and the tables reports print."""

from cupric import _kernel_report


def test_sass_says_why_when_no_disassembler_exists(monkeypatch):
    monkeypatch.setattr(_kernel_report, "disassembler", lambda: (None, "no SASS: neither nvdisasm nor cuobjdump"))
    assert _kernel_report.sass(b"\x7fELF") == (None, "no SASS: neither nvdisasm nor cuobjdump")


def test_ptxas_report_reads_each_kernels_spills():
    log = ("ptxas info    : Compiling entry function 'a' for 'sm_90a'\n"
           "ptxas info    : Function properties for a\n"
           "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 40 registers\n"
           "ptxas info    : Compiling entry function 'b' for 'sm_90a'\n"
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")
    assert _kernel_report.ptxas_report(log) == {
        "a": {"stack_bytes": 8, "spill_stores": 4, "spill_loads": 12, "registers": 40},
        "b": {"stack_bytes": 0, "spill_stores": 0, "spill_loads": 0}}


def test_a_report_table_aligns_its_columns():
    rows = [["k", "32", "0/0", "0", "0", "256", "8", "64", "100%", "warps"],
            ["a_long_name", "255", "4/12", "8", "1024", "1024", "1", "32", "50%", "registers"]]
    lines = _kernel_report.table(rows, "title").splitlines()
    assert lines[0] == "title" and lines[1].startswith("kernel") and set(lines[2]) == {"-"}
    assert len({len(line) for line in lines[1:]}) == 1  # every line as wide as the header
    assert lines[3].startswith("k ") and lines[4].endswith("registers")


def _resources(**kw):
    base = {"name": "k", "registers": 64, "local_bytes": 0, "static_shared_bytes": 2048, "max_threads": (0, 0, 0),
            "required_threads": (0, 0, 0)}
    return {**base, **kw}


def test_a_report_computes_occupancy_from_its_resources():
    r = _kernel_report.KernelReport(_resources(), "sm_90a", 256, dynamic_shared_bytes=1024)
    # 64 regs -> 2048 per warp -> 8 warps per scheduler -> 32 warps -> 4 blocks of 8 warps
    assert (r.occupancy["blocks_per_sm"], r.occupancy["limited_by"], r.shared_bytes) == (4, "registers", 3072)
    assert "4 blocks / 32 warps per SM (registers)" in repr(r)


def test_an_arch_without_limits_still_reports_the_resources():
    r = _kernel_report.KernelReport(_resources(), "sm_75", 128)
    assert r.occupancy["fraction"] is None and "no occupancy limits for sm_75" in r.occupancy["limited_by"]
    assert r.row()[:3] == ["k", "64", "0/0"] and r.row()[6:9] == ["-", "-", "-"]
    text = str(_kernel_report.Inspection("cupric.inspect(x)", "sm_75", [r], []))
    assert text.splitlines()[0] == "cupric.inspect(x) on sm_75"
