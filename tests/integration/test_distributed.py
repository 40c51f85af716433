"""cupric.distributed.Cluster: a local Dask cluster for cupric chunks. On the CPU (CI): worker
processes, Dask arrays of cupric chunks made on the workers (random, elementwise chains, tree
reductions, rechunk, blocked matmul) equal to the same graph over NumPy chunks; bad arguments. On
GPUs (marked gpu): one worker per GPU, each worker's default device its GPU."""

import cupric as cu
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with cu.distributed.Cluster(devices=[], n_workers=2) as cluster, distributed.Client(cluster) as c:
        yield c


def _pair():
    """The same random (600, 400) Dask array over cupric chunks (made on the workers) and NumPy's."""
    rs = da.random.RandomState(3, RandomState=cu.random.default_rng)
    d = rs.standard_normal((600, 400), chunks=(150, 100))
    n = d.map_blocks(lambda b: np.asarray(b.to_device("cpu") if hasattr(b, "to_device") else b), dtype=d.dtype)
    return d, n


@pytest.mark.parametrize(
    "name, fn",
    [
        ("elementwise-chain", lambda d: (da.exp(d * 0.5) - d * d + 1).sum(axis=0)),
        ("tree-reduction", lambda d: d.sum()),
        ("rechunk", lambda d: (d.rechunk((200, 400)) * 3)[::7]),
        ("matmul", lambda d: d @ d.T[:, :200]),
        ("mean-std", lambda d: d.mean(axis=1) + d.std(axis=1)),
    ],
)
def test_graphs_of_cupric_chunks_on_worker_processes(client, name, fn):
    d, n = _pair()
    got = client.compute(fn(d)).result(timeout=120)
    assert isinstance(got, cu.ndarray)  # the result comes back as a cupric array
    want = fn(n).compute(scheduler="threads")
    np.testing.assert_allclose(np.asarray(got.to_device("cpu")), np.asarray(want), rtol=1e-10, atol=1e-9)


def test_chunks_are_made_on_the_workers(client):
    d, _ = _pair()
    where = client.compute(d.map_blocks(lambda b: np.full((1, 1), str(b.device) == "cpu"), chunks=(1, 1), dtype=bool))
    assert np.asarray(where.result(timeout=60)).all()
    assert len(client.scheduler_info()["workers"]) == 2


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_workers must be at least 1, got 0"):
        cu.distributed.Cluster(devices=[], n_workers=0)
    with pytest.raises(ValueError, match=r"one worker per GPU: 2 devices \[0, 1\], n_workers=3"):
        cu.distributed.Cluster(devices=[0, 1], n_workers=3)


def test_gpu_workers_see_only_their_gpu_and_make_chunks_there(monkeypatch):
    """Each GPU worker's environment names its GPU and makes cuda:0 its default device, whatever the
    parent's CUPRIC_DEVICE (these tests set it to cpu: a worker inheriting it put chunks on the CPU)."""
    import distributed
    from cupric.distributed import _gpu_workers

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,7")
    specs = _gpu_workers(distributed, [0, 2], 1)
    envs = {name: spec["options"]["env"] for name, spec in specs.items()}
    assert {n: e["CUDA_VISIBLE_DEVICES"] for n, e in envs.items()} == {"gpu-0": "3", "gpu-2": "7"}
    assert {e["CUPRIC_DEVICE"] for e in envs.values()} == {"cuda:0"}
    assert {e["NCCL_NVLS_ENABLE"] for e in envs.values()} == {"0"}
    with pytest.raises(ValueError, match=r"no GPU 3 \(this process sees 3\)"):
        _gpu_workers(distributed, [3], 1)


@pytest.mark.gpu
def test_one_worker_per_gpu():
    """Each worker sees only its GPU: its default device is cuda:0 there, where its chunks are made."""
    gpus = cu.distributed.gpu_devices()
    if not gpus:
        pytest.skip("no GPU")
    with cu.distributed.Cluster() as cluster, distributed.Client(cluster) as c:
        assert len(c.scheduler_info()["workers"]) == len(gpus)
        devices = c.run(lambda: str(cu.asarray([1.0]).device))
        assert set(devices.values()) == {"cuda:0"}
        rs = da.random.RandomState(5, RandomState=cu.random.default_rng)
        d = rs.standard_normal((4096, 1024), chunks=(1024, 1024))
        got = c.compute((d * 2 + 1).sum(axis=0)).result(timeout=120)
        want = (d.map_blocks(lambda b: np.asarray(b.to_device("cpu")), dtype=d.dtype) * 2 + 1).sum(axis=0)
        np.testing.assert_allclose(np.asarray(got.to_device("cpu")), want.compute(scheduler="threads"), rtol=1e-10)


def _nccl_or_skip():
    from cupric.cuda import nccl

    try:
        return nccl.version()
    except cu.cuda.LibraryNotFoundError as e:
        assert "nvidia-nccl-cu13" in str(e)
        pytest.skip("NCCL is not installed (pip install nvidia-nccl-cu13)")


def test_nccl_group_refuses_bad_input_before_any_task(client):
    """NcclGroup: unknown or repeated workers are refused on the client; workers without a GPU are
    found before any joins (a rank that never joins leaves the others waiting in NCCL's init; the
    error names them); a part count that is not one per worker, an
    unknown op or a closed group are refused before any task is submitted."""
    from cupric.distributed._nccl_group import _check_parts

    _nccl_or_skip()
    workers = sorted(client.scheduler_info()["workers"])
    with pytest.raises(ValueError, match=r"no such workers \['tcp://nowhere:1'\]"):
        cu.distributed.NcclGroup(client, workers=["tcp://nowhere:1"])
    with pytest.raises(ValueError, match="a worker is listed twice"):
        cu.distributed.NcclGroup(client, workers=[workers[0], workers[0]])
    with pytest.raises(ValueError, match="no workers"):
        cu.distributed.NcclGroup(client, workers=[])
    with pytest.raises(RuntimeError, match=r"workers without a GPU: \['tcp://"):
        cu.distributed.NcclGroup(client)
    with pytest.raises(ValueError, match="one part per worker: 2 workers, 3 parts"):
        _check_parts([1, 2, 3], workers, "sum", True)
    with pytest.raises(ValueError, match="op must be one of sum, prod, max, min, avg, got 'mean'"):
        _check_parts([1, 2], workers, "mean", True)
    with pytest.raises(ValueError, match="the group is closed"):
        _check_parts([1, 2], workers, "sum", False)


@pytest.mark.gpu
def test_nccl_group_all_reduces_the_workers_arrays():
    """One rank per GPU worker: each worker's array (made there, on its GPU) becomes the sum (and
    the max) over the workers, in place; Dask's own reduction of the same parts agrees."""
    _nccl_or_skip()
    if not cu.distributed.gpu_devices():
        pytest.skip("no GPU")

    def make(r, n=1 << 20):
        import cupric as cu

        return cu.arange(n, dtype=cu.float32) * (r + 1) + r

    with cu.distributed.Cluster() as cluster, distributed.Client(cluster) as c:
        with cu.distributed.NcclGroup(c) as group:
            n = group.size
            for op, want in (
                ("sum", sum(np.arange(1 << 20, dtype=np.float64) * (r + 1) + r for r in range(n))),
                ("max", np.arange(1 << 20, dtype=np.float64) * n + (n - 1)),
            ):
                parts = [c.submit(make, r, workers=[w], pure=False) for r, w in enumerate(group.workers)]
                got = c.gather(group.all_reduce(parts, op=op))
                assert len(got) == n
                for g in got:
                    assert str(g.device) == "cuda:0"
                    np.testing.assert_allclose(np.asarray(g.to_device("cpu")), want, rtol=1e-6)
        assert "closed" in repr(group)
