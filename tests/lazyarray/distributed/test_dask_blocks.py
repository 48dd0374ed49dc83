"""lazyarray.dask: block tasks on a 2-process LocalCluster (loopback) against
dask.array with NumPy, and lazy-array chunks that stay lazy with the
threaded and synchronous schedulers."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.helpers import ROOT

da = pytest.importorskip("dask.array", reason="dask is not installed (the 'scale' extra)")
distributed = pytest.importorskip("distributed",
                                  reason="distributed is not installed (the 'scale' extra)")

import lazyarray as la  # noqa: E402
import lazyarray.dask as ld  # noqa: E402

sys.path.insert(0, str(ROOT / "examples"))
import heat_dask  # noqa: E402
from heat_mpi import numpy_heat  # noqa: E402


def stencil(p):
    """A 5-point update of the block padded by one cell, padded back (the
    shape map_overlap trims)."""
    xp = la if isinstance(p, la.LazyArray) else np
    c = p[1:-1, 1:-1]
    new = c + 0.2 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * c)
    return xp.pad(new, 1)


def scaled(x, factor):
    return la.sin(x) * factor if isinstance(x, la.LazyArray) else np.sin(x) * factor


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    client = distributed.Client(cluster)
    client.register_plugin(ld.WorkerSetup(base=str(tmp_path_factory.mktemp("pocl"))))
    yield client
    client.close()
    cluster.close()


def test_map_overlap_and_blocks_on_two_processes(client, rng):
    g = rng.standard_normal((30, 22))
    x = da.from_array(g, chunks=(10, 11))
    for boundary in ("periodic", 0.5, "nearest"):
        got = client.compute(ld.map_overlap(stencil, x, depth=1, boundary=boundary)).result()
        want = da.map_overlap(stencil, x, depth=1, boundary=boundary).compute(
            scheduler="sync")
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    got = client.compute(ld.map_blocks(scaled, x, static={"factor": 2})).result()
    np.testing.assert_allclose(got, np.sin(g) * 2, rtol=1e-12)
    # both worker processes ran blocks, each jitted task tracing its function
    # at most once (tasks of one function with equal constants share its
    # program: la.jit's SHARED_PROGRAMS)
    traces = client.run(lambda: {t: j.trace_count for t, j in ld._JITTED.items()})
    assert len(traces) == 2 and all(traces.values())
    assert all(count <= 1 for per in traces.values() for count in per.values())
    assert all(sum(per.values()) >= 1 for per in traces.values())


@pytest.mark.parametrize("bc", ["dirichlet", pytest.param("periodic", marks=pytest.mark.slow)])
def test_heat_dask_blocks(client, bc):
    n, steps = 20, 3
    got = heat_dask.run_blocks(n, steps, bc, 8, client)
    np.testing.assert_allclose(got, numpy_heat(n, steps, bc), rtol=1e-12, atol=1e-12)


def test_device_chunks_stay_lazy(rng):
    g = rng.standard_normal((8, 8))
    x = da.from_array(g, chunks=4).to_backend("lazyarray")
    assert isinstance(x._meta, la.LazyArray)
    seen: list = []

    def watched(p):
        seen.append(type(p))
        return stencil(p)

    for boundary in ("periodic", 0.25):
        y = x.map_overlap(watched, depth=1, boundary=boundary, meta=la.empty((0, 0)))
        got = y.compute(scheduler="threads")
        assert isinstance(got, la.LazyArray)
        want = da.map_overlap(stencil, da.from_array(g, chunks=4), depth=1,
                              boundary=boundary).compute(scheduler="sync")
        np.testing.assert_allclose(got.get(), want, rtol=1e-12)
    assert seen and set(seen) == {la.LazyArray}
    total = x.sum().compute(scheduler="sync")
    assert np.isclose(float(total), g.sum(), rtol=1e-12)
    assert isinstance((x + 1).rechunk((6, 8)).compute(scheduler="sync"), la.LazyArray)
    np.testing.assert_allclose(x.mean(axis=0).compute(scheduler="sync").get(), g.mean(axis=0),
                               rtol=1e-12)
    import dask
    with dask.config.set({"array.backend": "lazyarray"}):
        ones = da.ones((6, 6), chunks=3)
    assert isinstance(ones._meta, la.LazyArray)
    assert isinstance(ones.compute(scheduler="sync"), la.LazyArray)
    assert isinstance(x.to_backend("numpy").compute(scheduler="sync"), np.ndarray)


@pytest.mark.slow
def test_heat_dask_device_chunks():
    n, steps = 12, 2
    got = heat_dask.run_device(n, steps, "periodic", 6)
    np.testing.assert_allclose(got, numpy_heat(n, steps, "periodic"), rtol=1e-12, atol=1e-12)


def test_dask_random_state_on_the_lazyarray_backend_draws_numpys_numbers():
    import dask
    with dask.config.set({"array.backend": "lazyarray"}):
        got = da.random.RandomState(7).random_sample((6, 4), chunks=(3, 2)).compute()
    with dask.config.set({"array.backend": "numpy"}):
        want = da.random.RandomState(7).random_sample((6, 4), chunks=(3, 2)).compute()
    assert isinstance(got, la.LazyArray)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_dask_default_rng_on_the_lazyarray_backend_draws_numpys_numbers():
    import dask
    with dask.config.set({"array.backend": "lazyarray"}):
        rng = da.random.default_rng(11)
        x = rng.standard_normal((6, 4), chunks=(3, 2))
        y = rng.integers(0, 10, size=(5,), chunks=2)
        got_x, got_y = x.compute(scheduler="sync"), y.compute(scheduler="sync")
    with dask.config.set({"array.backend": "numpy"}):
        rng = da.random.default_rng(11)
        want_x = rng.standard_normal((6, 4), chunks=(3, 2)).compute()
        want_y = rng.integers(0, 10, size=(5,), chunks=2).compute()
    assert isinstance(got_x, la.LazyArray) and isinstance(got_y, la.LazyArray)
    np.testing.assert_array_equal(np.asarray(got_x), want_x)
    np.testing.assert_array_equal(np.asarray(got_y), want_y)
