"""The short paths of eager elementwise operations (a step remembered per
operation, shapes and dtypes) and of warm jitted calls: their results equal
NumPy's, they are taken, and they keep planning, caching and threads as the
general paths have them."""

import importlib
import threading

import numpy as np
import pytest

import lazyarray as la
from lazyarray import target as la_target
from lazyarray.errors import LazyArrayError
from lazyarray.run import steps
from tests.helpers import counting

#: (modules whose names the package's functions shadow)
evaluation = importlib.import_module("lazyarray.run.evaluation")
jit_module = importlib.import_module("lazyarray.jit")


def _rand(shape, dtype, seed):
    values = np.random.default_rng(seed).standard_normal(shape) * 10
    if np.dtype(dtype).kind == "c":
        values = values + 1j * np.random.default_rng(seed + 1).standard_normal(shape)
    return values.astype(dtype)


@pytest.fixture
def counted(monkeypatch):
    """Counts of the general path's graph structure keys and of the plans
    the short path asks for (on a first operation of its kind)."""
    counts = {"structure": 0, "plan": 0}

    def count(name, function):
        def counting(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)
        return counting

    monkeypatch.setattr(evaluation, "graph_structure",
                        count("structure", evaluation.graph_structure))
    monkeypatch.setattr(steps, "plan_graph", count("plan", steps.plan_graph))
    return counts


#: (ufunc, dtype, shapes, whether the operands are read as they are: no casts)
CASES = [
    ("add", np.float32, (1000,), (1000,), True),
    ("multiply", np.float64, (3, 4), (3, 4), True),
    ("subtract", np.int32, (7,), (7,), True),
    ("add", np.int64, (), (), True),                    # 0-d
    ("add", np.float32, (3, 1), (1, 4), True),          # broadcast
    ("maximum", np.float32, (5, 6), (6,), True),        # broadcast of a row
    ("greater", np.uint8, (4, 4), (4, 4), True),
    ("logical_and", np.bool_, (8,), (8,), True),
    ("multiply", np.complex64, (6,), (6,), True),
    ("true_divide", np.int16, (9,), (9,), False),       # computes in float32
]


@pytest.mark.parametrize("name, dtype, shape_a, shape_b, direct", CASES)
def test_eager_operation_equals_numpy_and_reuses_its_step(queue, counted, name, dtype,
                                                          shape_a, shape_b, direct):
    ufunc = getattr(np, name)
    for seed in range(3):
        a, b = _rand(shape_a, dtype, seed), _rand(shape_b, dtype, seed + 7)
        if dtype == np.bool_:
            a, b = a > 0, b > 0
        result = ufunc(la.asarray(a), la.asarray(b))
        value = result.get()
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = ufunc(a, b)
        assert value.dtype == expected.dtype and value.shape == expected.shape
        np.testing.assert_allclose(value, expected, rtol=1e-6)
        if seed == 0:
            planned = dict(counted)
    # the arrays of later seeds are new: their operation was planned once
    assert counted["plan"] == planned["plan"]
    if direct:
        assert counted["structure"] == 0            # the general path was not taken


def test_mixed_dtypes_and_repeated_operands(queue, counted):
    a = _rand((53,), np.int32, 1)
    b = _rand((53,), np.float32, 2)
    x, y = la.asarray(a), la.asarray(b)
    np.testing.assert_allclose((x + y).get(), a + b, rtol=1e-6)    # an int32 -> float64 cast
    for _ in range(2):
        np.testing.assert_array_equal((y * y).get(), b * b)
        np.testing.assert_array_equal((x - x).get(), np.zeros(53, np.int32))
    z = la.asarray(_rand((53,), np.float32, 3))
    before = dict(counted)
    # y * z is not y * y: one more plan, of two arguments
    np.testing.assert_array_equal((y * z).get(), b * z.get())
    assert counted["plan"] == before["plan"] + 1


def test_computed_operands_and_views_starting_inside_their_buffer(queue, counted):
    a = _rand((20,), np.float32, 4)
    x = la.asarray(a)
    doubled = (x * 2).compute()
    for _ in range(2):
        np.testing.assert_array_equal((doubled + x).get(), a * 2 + a)
    part = x[3:13]
    part.compute()                       # a view of x's buffer, at an offset
    other = la.asarray(a[:10].copy())
    for _ in range(2):
        np.testing.assert_array_equal((part + other).get(), a[3:13] + a[:10])


def test_a_shared_operation_is_computed_once(queue):
    x, y = la.asarray(_rand((30,), np.float32, 5)), la.asarray(_rand((30,), np.float32, 6))
    (x + y).get()
    first, second = x + y, x + y
    assert first.node is second.node
    with counting() as ran:
        first.block_until_ready()
        np.testing.assert_array_equal(second.get(), x.get() + y.get())
    assert ran.launches == 1


def test_a_new_kernel_table_plans_again(queue, monkeypatch):
    x, y = la.asarray(_rand((12,), np.float64, 7)), la.asarray(_rand((12,), np.float64, 8))
    (x * y).get()
    for renew in (lambda: monkeypatch.setattr(steps, "_KERNELS", {}),
                  lambda: steps._KERNELS.clear()):
        renew()
        with counting() as ran:
            np.testing.assert_array_equal((x * y).get(), x.get() * y.get())
            assert ran.planned == 1
            np.testing.assert_array_equal((y * x).get(), x.get() * y.get())
        assert ran.planned == 1


def test_another_target_plans_its_own_kernel(queue, monkeypatch):
    x, y = la.asarray(_rand((17,), np.float32, 9)), la.asarray(_rand((17,), np.float32, 10))
    (x - y).get()
    monkeypatch.setattr(la_target, "device_profile", lambda device: ("gpu", 4))
    with counting() as ran:
        np.testing.assert_array_equal((x - y).get(), x.get() - y.get())
    assert ran.planned == 1


def test_placeholders_of_a_trace_are_refused_as_before(queue):
    leaked = []

    @la.jit
    def f(x):
        leaked.append(x)
        return x + 1

    f(_rand((4,), np.float32, 11))
    with pytest.raises(LazyArrayError, match="placeholders, which hold no values"):
        (leaked[0] + leaked[0]).get()


@pytest.fixture
def simple_runs(monkeypatch):
    """How often warm jitted calls took the short path of simple programs."""
    runs = []
    run_simple = jit_module.run_simple

    def counting(*args):
        runs.append(1)
        return run_simple(*args)

    monkeypatch.setattr(jit_module, "run_simple", counting)
    return runs


def test_jitted_steps_read_arguments_after_an_unused_one(queue, simple_runs):
    @la.jit
    def f(a, unused, c):
        total = la.sum(a * 2)
        return c * total + a

    a, b, c = (np.abs(_rand((40,), np.float32, seed)) for seed in (12, 13, 14))
    expected = c * np.sum(a * 2) + a
    # (the program takes its arrays by name: a, c, unused; the steps' values follow)
    np.testing.assert_allclose(f(a, b, c).get(), expected, rtol=1e-5)
    x, y, z = la.asarray(a), la.asarray(b), la.asarray(c)
    for _ in range(3):
        np.testing.assert_allclose(f(x, y, z).get(), expected, rtol=1e-5)
    assert len(simple_runs) == 3
    assert f.trace_count == 1


def test_jitted_calls_on_new_dtypes_and_0d(queue, simple_runs):
    @la.jit
    def f(a, b):
        return a * b - a

    for dtype, shape in ((np.float32, (10,)), (np.int64, (3, 3)), (np.float64, ()),
                         (np.complex128, (4,))):
        a, b = _rand(shape, dtype, 15), _rand(shape, dtype, 16)
        for _ in range(2):
            value = f(la.asarray(a), la.asarray(b)).get()
            assert value.dtype == (a * b - a).dtype and value.shape == shape
            np.testing.assert_allclose(value, a * b - a, rtol=1e-6)
    assert f.trace_count == 4
    assert len(simple_runs) == 8


def test_threads_share_the_short_paths(queue):
    f = la.jit(lambda a, b: a * b + a)
    inputs = [(_rand((64,), np.float32, 2 * k), _rand((64,), np.float32, 2 * k + 1))
              for k in range(4)]
    arrays = [(la.asarray(a), la.asarray(b)) for a, b in inputs]
    errors = []

    def work(k):
        try:
            a, b = inputs[k]
            x, y = arrays[k]
            for _ in range(30):
                np.testing.assert_array_equal((x + y).get(), a + b)
                np.testing.assert_allclose(f(x, y).get(), a * b + a, rtol=1e-6)
        except Exception as e:          # (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert f.trace_count == 1


def _direct_runs(monkeypatch) -> list:
    """The runs of bound launches by position (the warm simple path)."""
    from lazyarray.run.launch import BoundLaunch
    runs = []
    run_at = BoundLaunch.run_at

    def counting(self, *args):
        runs.append(1)
        return run_at(self, *args)

    monkeypatch.setattr(BoundLaunch, "run_at", counting)
    return runs


def test_warm_jitted_steps_launch_by_position(queue, monkeypatch):
    """A two-step program (a reduction, then an elementwise kernel reading it
    and both arguments) runs its bound launches directly once warm; the
    results stay NumPy's and every launch is counted."""
    runs = _direct_runs(monkeypatch)
    f = la.jit(lambda a, b: b * la.sum(a) - a)
    a, b = _rand((300,), np.float64, 21), _rand((300,), np.float64, 22)
    x, y = la.asarray(a), la.asarray(b)
    for _k in range(4):
        with counting() as ran:
            np.testing.assert_allclose(f(x, y).get(), b * np.sum(a) - a, rtol=1e-12)
        assert ran.launches == 2
    assert len(runs) == 2 * 3        # (the first call binds the launches)
    # a new queue gets launches of its own, and the same values
    other = __import__("pyopencl").CommandQueue(queue.context)
    with la.run.using_queue(other):
        for _ in range(2):
            np.testing.assert_allclose(f(la.asarray(a), la.asarray(b)).get(),
                                       b * np.sum(a) - a, rtol=1e-12)
        other.finish()
    assert len(runs) == 2 * 4


def test_warm_jitted_call_reads_a_view_inside_its_buffer(queue, monkeypatch):
    """A pyopencl slice (starting inside its buffer) passed to a warm jitted
    function takes the general path, which reads it through a copy."""
    import pyopencl.array as cla
    runs = _direct_runs(monkeypatch)
    f = la.jit(lambda a, b: a * b + 1)
    host = _rand((50,), np.float32, 23)
    whole = cla.to_device(queue, host)
    x, y = la.asarray(host[:40]), la.asarray(host[10:])
    for _ in range(2):
        np.testing.assert_allclose(f(x, y).get(), host[:40] * host[10:] + 1, rtol=1e-6)
    assert len(runs) == 1
    np.testing.assert_allclose(f(la.asarray(whole[10:]), la.asarray(whole[:40])).get(),
                               host[10:] * host[:40] + 1, rtol=1e-6)
    assert len(runs) == 1


def test_warm_jitted_calls_are_timed_when_asked(queue, monkeypatch, caplog):
    """Once the simple path is warm, setting lazyarray's logger to info still
    logs each kernel's time."""
    import logging
    f = la.jit(lambda a, b: a - b)
    x, y = la.asarray(_rand((20,), np.float32, 24)), la.asarray(_rand((20,), np.float32, 25))
    for _ in range(2):
        f(x, y)
    log = logging.getLogger("lazyarray")
    monkeypatch.setattr(log, "level", logging.INFO)
    with caplog.at_level(logging.INFO, logger="lazyarray"):
        np.testing.assert_array_equal(f(x, y).get(), x.get() - y.get())
    assert any(r.getMessage().startswith("ran Map(20,) float32") for r in caplog.records)


def test_the_round_trip_of_an_empty_command_is_measured_once_per_queue(monkeypatch):
    # (the jit's GPU trial subtracts it from a call's wait)
    import lazyarray.run as run

    device = importlib.import_module("lazyarray.run.device")
    monkeypatch.setattr(device, "_ROUND_TRIPS", {})
    first = run.round_trip()
    assert 0 < first < 1
    fills = []
    monkeypatch.setattr(device.cl, "enqueue_fill_buffer", lambda *a, **k: fills.append(a))
    assert run.round_trip() == first and not fills
