"""LAZYARRAY_TUNE=1: kernels get their fastest work-group and tile sizes;
results never change."""

import logging
import time

import numpy as np
import pytest

import kernelcore as lp
import lazyarray as la
from lazyarray import target as la_target
from lazyarray.lower.kernel import build_kernel
from lazyarray.plan.inputs import KernelInput
from lazyarray.run import tune


def test_tuned_results_are_unchanged(monkeypatch, caplog, fresh_kernels):
    # (more elements than untuned eager row sums generic over their sizes read)
    a = np.random.default_rng(0).standard_normal((200, 400)).astype(np.float32)

    def compute():
        x = la.asarray(a)
        return np.asarray(np.sin(x) * 2 + x / 3), np.asarray((x * x).sum(axis=1))

    fresh_kernels()
    monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")
    plain, plain_sums = compute()
    monkeypatch.setenv("LAZYARRAY_TUNE", "1")
    fresh_kernels()
    with caplog.at_level(logging.INFO, logger="lazyarray.run.tune"):
        tuned, tuned_sums = compute()
    assert "tuned kernel" in caplog.text
    np.testing.assert_array_equal(tuned, plain)
    np.testing.assert_array_equal(tuned_sums, plain_sums)       # reductions are not tuned
    np.testing.assert_allclose(tuned, np.sin(a) * 2 + a / np.float32(3), rtol=1e-6, atol=1e-6)


def test_the_fastest_size_is_kept():
    x = la.asarray(np.ones((64, 1024), np.float32))    # (no size is halved to fit)
    node = (x * 2).node
    inputs = {x.node: KernelInput(x.node, "in0", scalar=False)}

    codes = {}

    def run(knl):       # pretend that groups of 128 are the fastest
        # (code generated on the untimed first run: only the sleep is timed)
        if id(knl) not in codes:
            codes[id(knl)] = lp.generate_code_v2(knl).device_code()
        time.sleep(0.0005 if "reqd_work_group_size(128" in codes[id(knl)] else 0.002)

    best, timings = tune.tune(build_kernel(node, inputs), lambda c: build_kernel(node, inputs, c),
                              tune.candidates("cpu", reduction=False), run)
    assert "reqd_work_group_size(128" in lp.generate_code_v2(best).device_code()
    assert min(timings, key=timings.get) == "group_size=(128,)"


def test_knobs_a_schedule_does_not_use_are_not_timed():
    x = la.asarray(np.ones((64, 64), np.float32))
    node = (2 * x.T).node           # a blocked transpose takes no group size
    inputs = {x.node: KernelInput(x.node, "in0", scalar=False)}
    calls = []
    group_sizes = [c for c in tune.candidates("cpu", reduction=False) if c[0] == "group_size"]
    best, timings = tune.tune(build_kernel(node, inputs), lambda c: build_kernel(node, inputs, c),
                              group_sizes, calls.append)
    assert timings == {} and calls == []


def _kind() -> str:
    from lazyarray.target import device_profile
    return device_profile(lp.default_queue().device)[0]


def _tuned_and_plain(monkeypatch, caplog, fresh_kernels, compute):
    """*compute()* untuned, then tuned (from empty kernel caches), and the log
    of the tuned run."""
    fresh_kernels()
    monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")
    plain = compute()
    monkeypatch.setenv("LAZYARRAY_TUNE", "1")
    fresh_kernels()
    with caplog.at_level(logging.INFO, logger="lazyarray.run.tune"):
        tuned = compute()
    return plain, tuned, caplog.text


def test_matrix_products_are_tuned_without_changing_a_bit(monkeypatch, caplog, fresh_kernels):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((256, 256)).astype(np.float32) for _ in range(2))
    plain, tuned, log = _tuned_and_plain(
        monkeypatch, caplog, fresh_kernels, lambda: np.asarray(la.asarray(a) @ la.asarray(b)))
    tried = [c for c in tune.CANDIDATES[_kind()]["contraction"] if f"contraction={c}" in log]
    assert len(tried) >= 3, log
    np.testing.assert_array_equal(tuned, plain)
    np.testing.assert_allclose(tuned, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_transposes_are_tuned(monkeypatch, caplog, fresh_kernels):
    a = np.random.default_rng(2).standard_normal((96, 160)).astype(np.float32)
    plain, tuned, log = _tuned_and_plain(
        monkeypatch, caplog, fresh_kernels, lambda: np.asarray(2 * la.asarray(a).T))
    tried = [c for c in tune.CANDIDATES[_kind()]["transpose"] if f"transpose={c}" in log]
    assert len(tried) >= 2, log
    np.testing.assert_array_equal(tuned, 2 * a.T)
    np.testing.assert_array_equal(plain, 2 * a.T)


def test_other_reductions_are_not_tuned(monkeypatch, caplog, fresh_kernels):
    # (more elements than untuned eager column sums generic over their sizes read)
    a = np.random.default_rng(3).standard_normal((300, 400)).astype(np.float32)
    plain, tuned, log = _tuned_and_plain(
        monkeypatch, caplog, fresh_kernels, lambda: np.asarray(la.asarray(a).sum(axis=0)))
    assert "tuned kernel" not in log
    np.testing.assert_array_equal(tuned, plain)


@pytest.mark.parametrize("extents", [(64, 256, 256), (256, 256, 8)])
def test_gpu_blockings_apply_only_where_the_default_does(extents):
    from lazyarray.lower.contraction import contraction_schedule
    m, n, k = extents
    knl = lp.make_kernel(f"{{[i, j, k]: 0 <= i < {m} and 0 <= j < {n} and 0 <= k < {k}}}",
                         "out[i, j] = sum(k, a[i, k] * b[k, j])",
                         [lp.GlobalArg("a", np.float32, shape=(m, k)),
                          lp.GlobalArg("b", np.float32, shape=(k, n)),
                          lp.GlobalArg("out", np.float32, shape=(m, n))])
    sizes = {"i": m, "j": n, "k": k}
    assert contraction_schedule(knl, ["i", "j"], "k", sizes) is None
    for group, block, k_tile in tune.CANDIDATES["gpu"]["contraction"]:
        assert contraction_schedule(knl, ["i", "j"], "k", sizes, group, block, k_tile) is None


def test_turning_tuning_on_tunes_kernels_cached_on_disk(monkeypatch, caplog, tmp_path,
                                                         fresh_kernels):
    from lazyarray.run import cache
    monkeypatch.setenv("LAZYARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_DISK", {})
    a = np.random.default_rng(4).standard_normal((128, 192)).astype(np.float32)

    def fresh_process_log() -> str:
        """The tuning log of computing ``3a - 1`` with an empty in-process cache."""
        fresh_kernels()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="lazyarray.run.tune"):
            np.testing.assert_allclose(np.asarray(la.asarray(a) * 3 - 1), a * 3 - 1,
                                       rtol=1e-6, atol=1e-6)
        return caplog.text

    assert "tuned kernel" not in fresh_process_log()       # stores an untuned recipe
    monkeypatch.setenv("LAZYARRAY_TUNE", "1")
    assert "tuned kernel" in fresh_process_log()           # not the untuned recipe
    hits = cache.STATS["disk_hits"]
    assert "tuned kernel" not in fresh_process_log()       # the tuned recipe
    assert cache.STATS["disk_hits"] == hits + 1


def test_a_blocking_that_does_not_apply_is_not_built(monkeypatch):
    """A product too small for the GPU's default blocking keeps its reduction
    layout: a smaller blocking (another order of the additions) is refused."""
    monkeypatch.setattr(la_target, "device_profile", lambda device: ("gpu", 4))
    x = la.asarray(np.ones((64, 64), np.float32))
    node = (x @ x).node
    inputs = {x.node: KernelInput(x.node, "in0", scalar=False)}
    small = ("contraction", ((8, 8), (8, 8), 16))
    with pytest.raises(tune.NotApplicable, match="does not apply"):
        build_kernel(node, inputs, small)
    calls = []
    best, timings = tune.tune(build_kernel(node, inputs), lambda c: build_kernel(node, inputs, c),
                              [small], calls.append)
    assert timings == {} and calls == []
