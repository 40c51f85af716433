"""The CPU thread pool under changes of its size: workers started after a shrink must not count
themselves into the job before theirs (a later job then returned early or waited for ever). Run in
a subprocess with a time limit, so that a hang fails the test instead of the suite."""

import subprocess
import sys

SCRIPT = """
import numpy as np, cupric as cu
a = np.random.default_rng(3).standard_normal(1 << 18)
x = cu.asarray(a)
want = a.sum()
for i in range(400):
    cu.set_num_threads(1 + (i % 2) * (2 + i % 3))   # 1, 3, 1, 4, 1, 2, ...
    got = float(cu.sum(x))
    assert abs(got - want) <= 1e-9 * abs(a).sum(), (i, got, want)
    assert float(cu.max(x[::-1])) == a.max()
print("ok")
"""


def test_resizing_the_pool_between_parallel_jobs():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
