"""LAZYARRAY_TUNE=1: elementwise kernels get the fastest work-group size;
results never change."""

import logging
import time

import numpy as np

import kernelcore as lp
import lazyarray as la
from lazyarray import runtime, tune
from lazyarray.lower import build_kernel


def test_tuned_results_are_unchanged(monkeypatch, caplog):
    a = np.random.default_rng(0).standard_normal((200, 300)).astype(np.float32)

    def compute():
        x = la.asarray(a)
        return np.asarray(np.sin(x) * 2 + x / 3), np.asarray((x * x).sum(axis=1))

    monkeypatch.setattr(runtime, "_KERNELS", {})
    monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")
    plain, plain_sums = compute()
    monkeypatch.setenv("LAZYARRAY_TUNE", "1")
    monkeypatch.setattr(runtime, "_KERNELS", {})
    with caplog.at_level(logging.INFO, logger="lazyarray.tune"):
        tuned, tuned_sums = compute()
    assert "tuned work-group size" in caplog.text
    np.testing.assert_array_equal(tuned, plain)
    np.testing.assert_array_equal(tuned_sums, plain_sums)       # reductions are not tuned
    np.testing.assert_allclose(tuned, np.sin(a) * 2 + a / np.float32(3), rtol=1e-6, atol=1e-6)


def test_the_fastest_size_is_kept():
    x = la.asarray(np.ones((64, 128), np.float32))
    node = (x * 2).node
    inputs = {id(x.node): (x.node, "in0")}

    codes = {}

    def run(knl):       # pretend that groups of 128 are the fastest
        # (code generated on the untimed first run: only the sleep is timed)
        if id(knl) not in codes:
            codes[id(knl)] = lp.generate_code_v2(knl).device_code()
        time.sleep(0.0005 if "reqd_work_group_size(128" in codes[id(knl)] else 0.002)

    best, timings = tune.tune(build_kernel(node, inputs), lambda g: build_kernel(node, inputs, g),
                              "cpu", run)
    assert "reqd_work_group_size(128" in lp.generate_code_v2(best).device_code()
    assert min(timings, key=timings.get) == 128


def test_schedules_without_a_group_size_are_not_timed():
    x = la.asarray(np.ones((64, 64), np.float32))
    node = (2 * x.T).node           # a blocked transpose: one version only
    inputs = {id(x.node): (x.node, "in0")}
    calls = []
    best, timings = tune.tune(build_kernel(node, inputs), lambda g: build_kernel(node, inputs, g),
                              "cpu", calls.append)
    assert timings == {} and calls == []
