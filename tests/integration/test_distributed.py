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
