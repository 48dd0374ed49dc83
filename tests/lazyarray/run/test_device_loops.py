"""Eager loops on the device tier: a repeated step costs one walk of its new
graph, no planning, and the launches of its stored values; the arrays a step
names (deep values array handles hold) are stored by the plan of the value
read, not planned and computed on their own first; the short recording paths
(constants, basic keys) give the nodes the general paths give."""

import importlib

import numpy as np
import pytest

import lazyarray as la
from lazyarray.graph import Input
from lazyarray.plan.layouts import has_narrow_rows
from lazyarray.run import STATS, steps
from lazyarray.target import default_target

evaluation = importlib.import_module("lazyarray.run.evaluation")


def _jacobi_step(xp, p, y, dx, dy):
    """One sweep of the course's Laplace iteration and its relative change."""
    pn = p.copy()
    p[1:-1, 1:-1] = ((dy**2 * (pn[1:-1, 2:] + pn[1:-1, 0:-2])
                      + dx**2 * (pn[2:, 1:-1] + pn[0:-2, 1:-1])) / (2 * (dx**2 + dy**2)))
    p[:, 0] = 0
    p[:, -1] = y
    p[0, :] = p[1, :]
    p[-1, :] = p[-2, :]
    return p, xp.sum(xp.abs(p) - xp.abs(pn)) / xp.sum(xp.abs(pn))


@pytest.fixture
def walks(monkeypatch):
    """The number of graph walks evaluations make (``graph_structure`` calls)."""
    count = [0]
    original = evaluation.graph_structure

    def counting(root):
        count[0] += 1
        return original(root)

    monkeypatch.setattr(evaluation, "graph_structure", counting)
    return count


def test_jacobi_loop_replays_its_plan_and_stores_the_named_grid(queue, walks):
    n = 17
    dx, dy = 2 / (n - 1), 1 / (n - 1)
    y_host = np.linspace(0, 1, n)
    p_host = np.zeros((n, n))
    p, y = la.asarray(p_host), la.asarray(y_host)
    norms, expected = [], []
    for step in range(8):
        if step == 3:
            launches, planned, walked = STATS["launches"], STATS["planned"], walks[0]
        p, norm = _jacobi_step(la, p, y, dx, dy)
        p_host, norm_host = _jacobi_step(np, p_host, y_host, dx, dy)
        with np.errstate(divide="ignore", invalid="ignore"):
            norms.append(float(norm))
            expected.append(float(norm_host))
        # the grid the loop names was stored by the norm's plan: a leaf now
        assert type(p.node) is Input
    np.testing.assert_allclose(p.get(), p_host, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(norms[1:], expected[1:], rtol=1e-9)
    steps_counted = 5
    assert STATS["planned"] == planned                  # nothing planned again
    assert walks[0] - walked == steps_counted           # one walk per step
    # the grid's kernel, two sums and their quotient
    assert STATS["launches"] - launches == 4 * steps_counted


def test_a_held_value_is_stored_once_and_read_by_the_value_asked_for(queue):
    base = np.arange(12.0).reshape(3, 4)
    x = la.asarray(base)
    held = x
    for _ in range(20):                 # deeper than the depth at which holders are asked
        held = held * 1.5 + 1
    expected_held = base.copy()
    for _ in range(20):
        expected_held = expected_held * 1.5 + 1
    total = la.sum(la.sin(held))
    before = STATS["launches"]
    np.testing.assert_allclose(float(total), np.sum(np.sin(expected_held)), rtol=1e-12)
    assert type(held.node) is Input                     # stored by the sum's plan
    after = STATS["launches"]
    np.testing.assert_allclose(held.get(), expected_held, rtol=1e-12)
    assert STATS["launches"] == after                   # read, not computed again
    assert after - before >= 2


def test_a_reassigned_handle_is_not_computed_for_its_old_value(queue):
    x = la.asarray(np.ones(5))
    a = x
    for _ in range(20):
        a = a + 1
    total = la.sum(a)
    old = a.node
    a = la.asarray(np.zeros(5)) - 3         # the name now holds another value
    np.testing.assert_allclose(float(total), 5 * 21.0)
    # the sum's plan stored the old value; the name's new value is not computed
    assert a.node is not old and type(a.node) is not Input
    np.testing.assert_array_equal(a.get(), np.full(5, -3.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.uint16,
                                   np.int64, np.complex64, np.bool_])
@pytest.mark.parametrize("scalar", [2, -3, 0.5, 300, -129, 2**40, True, 1j])
def test_scalar_operands_equal_numpy_on_the_short_path(queue, dtype, scalar):
    values = (np.arange(6) % 3).astype(dtype)
    x = la.asarray(values)
    for name in ("add", "multiply", "less", "equal", "maximum"):
        ufunc = getattr(np, name)
        for _ in range(2):              # the second call takes the remembered typing
            try:
                expected = ufunc(values, scalar)
            except (OverflowError, TypeError) as error:
                with pytest.raises(type(error)):
                    ufunc(x, scalar)
                continue
            result = ufunc(x, scalar).get()
            assert result.dtype == expected.dtype
            np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("key", [
    (slice(1, -1), slice(2, None)), (slice(None), 0), (1,), (Ellipsis, -1),
    (None, slice(None, None, -2)), (2, 3), (slice(5, 1, -1), None, Ellipsis),
    (slice(0, 0),), (-4, slice(None))])
def test_basic_keys_read_and_write_as_numpy(queue, key):
    base = np.arange(20.0).reshape(4, 5)
    x = la.asarray(base)
    for _ in range(2):                  # the second read takes the remembered plan
        np.testing.assert_array_equal(np.asarray(x[key]), base[key])
    expected = base.copy()
    expected[key] = -7
    y = la.asarray(base)
    y[key] = -7
    np.testing.assert_array_equal(y.get(), expected)


@pytest.mark.parametrize("key, error", [((0, 0, 0), IndexError), (9, IndexError),
                                        ((slice(None), -6), IndexError)])
def test_bad_basic_keys_raise_as_numpy(queue, key, error):
    x = la.asarray(np.zeros((4, 5)))
    for _ in range(2):
        with pytest.raises(error):
            x[key]
        with pytest.raises(error):
            x[key] = 1


@pytest.mark.parametrize("step", [1, 2])
def test_windows_of_an_uncomputed_array_compute_it_once(queue, step):
    rng = np.random.default_rng(3)
    host = np.cumsum(rng.standard_normal(600))
    x = la.cumsum(la.asarray(rng.standard_normal(600) * 0 + host - np.roll(host, 1)
                             * (np.arange(600) > 0)))
    expected_x = np.cumsum(host - np.roll(host, 1) * (np.arange(600) > 0))
    width = 20
    means = []
    for i in range(40):
        if i == 16:
            planned = STATS["planned"]
        means.append(float(x[i:i + step * width:step].mean()))
    expected = [expected_x[i:i + step * width:step].mean() for i in range(40)]
    np.testing.assert_allclose(means, expected, rtol=1e-12, atol=1e-12)
    # the array was computed once; later windows (their offsets kernel
    # arguments where they are strided) plan nothing new
    assert STATS["planned"] == planned


@pytest.mark.parametrize("make", ["split", "slices"])
def test_pieces_of_many_lengths_of_an_uncomputed_array_compute_it_once(queue, make):
    # the groupby idiom: every piece reduced in one expression (not a stencil:
    # its pieces differ in length); without computing the array first, each
    # piece would be a kernel of its own
    rng = np.random.default_rng(8)
    values, order = rng.random(30_000), rng.permutation(30_000)
    bounds = np.sort(rng.choice(np.arange(1, 30_000), 60, replace=False))
    pieces = np.split(values[order], bounds)
    x = la.asarray(values)[la.asarray(order)]            # (a gather, not computed)
    edges = [0, *bounds, 30_000]
    groups = la.split(x, bounds) if make == "split" else \
        [x[lo:hi] for lo, hi in zip(edges, edges[1:])]
    planned = STATS["planned"]
    got = la.array([g.max() for g in groups]).get()
    np.testing.assert_array_equal(got, [p.max() for p in pieces])
    assert STATS["planned"] - planned <= 12          # (not one per piece: 61)


def test_new_lengths_of_an_elementwise_expression_build_nothing(queue):
    rng = np.random.default_rng(5)

    def expression(xp, x, y):
        return xp.where(x > 0, x * 2.5 - xp.sin(y), y / 3) + 1

    # (a GPU lays out results of short rows, 33x3 here, apart: they come last)
    gpu = default_target().kind == "gpu"
    shapes = [(7,), (100,), (1000,), (33, 3), (5, 4, 3), (65537,), (1,)]
    shapes.sort(key=lambda shape: gpu and has_narrow_rows(shape))
    planned = None
    for shape in shapes:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        result = expression(la, la.asarray(a), la.asarray(b)).get()
        np.testing.assert_allclose(result, expression(np, a, b), rtol=1e-12, atol=1e-15)
        assert result.shape == shape
        if planned is None:
            planned = STATS["planned"]
        elif not (gpu and has_narrow_rows(shape)):
            # one flat kernel for every length and shape (its element count an argument)
            assert STATS["planned"] == planned, shape


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.complex128, np.bool_])
def test_flat_kernels_of_each_dtype_equal_numpy(queue, dtype):
    rng = np.random.default_rng(6)
    for n in (3, 300):
        values = (rng.standard_normal(n) * 20).astype(dtype) if dtype != np.bool_ \
            else rng.standard_normal(n) > 0
        x = la.asarray(values)
        with np.errstate(all="ignore"):
            expected = (values * values + values) if dtype != np.bool_ else values & ~values
            result = (x * x + x) if dtype != np.bool_ else x & ~x
            np.testing.assert_array_equal(result.get(), expected)


def test_gpu_rows_of_four_keep_their_layout(monkeypatch, device_layouts):
    device_layouts("gpu", 4)
    monkeypatch.setattr(steps, "_PLANS", {})
    a = np.random.default_rng(7).standard_normal((500, 4)).astype(np.float32)
    b = np.random.default_rng(8).standard_normal((500, 5)).astype(np.float32)
    for values, flat in ((a, False), (b, True)):
        x = la.asarray(values)
        result = x * 2 + 1
        [step] = steps.plan_graph(result.node)
        assert bool(step.compiled.group) is flat
        np.testing.assert_allclose(result.get(), values * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8, np.bool_])
def test_reductions_of_new_lengths_build_nothing(queue, dtype):
    rng = np.random.default_rng(9)
    host = (rng.standard_normal(3000) * 5).astype(dtype) if dtype != np.bool_ \
        else rng.standard_normal(3000) > 1
    if dtype in (np.float64, np.float32):
        host[[5, 700]] = [np.nan, np.inf]
    x = la.asarray(host)
    ops = ["sum", "any", "all"] if dtype == np.bool_ else ["sum", "max", "min", "prod"]
    windows = [(0, 1), (3, 2), (1, 63), (2, 64), (10, 65), (4, 257), (700, 300), (0, 3000),
               (6, 5), (7, 1000), (8, 31), (9, 33), (11, 129), (12, 2000)]
    for start, width in windows:
        x[start:start + width]      # (a loop over windows: they become inputs of their own)
    eps = 1e-5 if dtype == np.float32 else 1e-12
    planned = None
    for start, width in windows:
        part = host[start:start + width]
        for op in ops:
            with np.errstate(all="ignore"):
                expected = getattr(part, op)()
                value = getattr(x[start:start + width], op)().get()
            scale = float(np.abs(part.astype(np.float64)).sum()) if op == "sum" else 0
            np.testing.assert_allclose(value, expected, rtol=eps, atol=eps * scale,
                                       equal_nan=True)
        if planned is None:
            planned = STATS["planned"]
    assert STATS["planned"] == planned          # every later length: no new kernel


def test_a_computed_constant_stays_a_constant_in_later_graphs(queue):
    from lazyarray.graph import Const
    from lazyarray.handle import LazyArray
    zero = Const(0, np.int64, False)
    held = LazyArray(zero)              # a constant evaluated as a value of its own
    assert held.get() == 0

    @la.jit
    def shifted(offset):
        return la.arange(4, dtype=np.int64) + offset + 0 * la.asarray(np.int64(0))

    np.testing.assert_array_equal(shifted(np.array(5)).get(), np.arange(4) + 5)
    np.testing.assert_array_equal((la.asarray(np.arange(3)) + held).get(), np.arange(3))


@pytest.mark.parametrize("read", ["element", "window sum", "whole"])
def test_a_loop_reading_part_of_its_state_keeps_no_chain_of_old_values(read):
    # reading one element computes the state; its handle then holds the value
    # as a leaf, so the graph (and buffer) of every earlier step can be freed
    import gc

    from lazyarray.graph import Map

    def maps() -> int:
        gc.collect()
        return sum(type(o) is Map for o in gc.get_objects())

    before = maps()             # (other tests' jitted programs hold theirs)
    acc = la.asarray(np.zeros(5000))
    with la.tier("device"):
        for step in range(200):
            acc = acc + 1.0
            if read == "element":
                value = float(acc[2500])
            elif read == "window sum":
                value = float(acc[100:200].sum()) / 100
            else:
                value = float(acc.get()[7])
            assert value == step + 1
    assert maps() - before < 20
    np.testing.assert_array_equal(acc.get(), np.full(5000, 200.0))


def test_a_row_read_after_a_column_write_computes_the_held_array(queue, rng):
    # history[:, n] = u * n, then a row of history read: the array the loop
    # holds is computed (as NumPy computes it), so each step is the same
    # structure at a new column (a box kernel), not a growing graph built anew
    history, u = np.zeros((300, 300)), rng.standard_normal(300)
    built = []
    with la.tier("device"):
        h, x = la.asarray(history), la.asarray(u)
        for n in range(10):
            planned = STATS["planned"]
            h[:, n] = x * n
            history[:, n] = u * n
            np.testing.assert_array_equal(np.asarray(h[0]), history[0])
            built.append(STATS["planned"] - planned)
            assert type(h.node) is Input                # (computed: a leaf)
    np.testing.assert_array_equal(h.get(), history)
    assert sum(built[3:]) == 0, built


def test_a_part_of_a_held_array_beyond_the_limit_is_computed_alone(queue, rng, monkeypatch):
    # (helper session's find: a row of la.eye(25000) computed all 4.7 GiB
    # first, more than the device's largest buffer)
    monkeypatch.setattr(evaluation, "HELD_BASE_LIMIT", 1000)
    a = rng.standard_normal((40, 40))
    with la.tier("device"):
        x = la.asarray(a) * 2 + 1
        row = np.asarray(x[3])
        assert type(x.node) is not Input                # (still pending)
        small = la.asarray(a[:20, :20]) * 2 + 1
        np.testing.assert_array_equal(np.asarray(small[3]), (a[:20, :20] * 2 + 1)[3])
        assert type(small.node) is Input                # (computed: within the limit)
    np.testing.assert_array_equal(row, (a * 2 + 1)[3])


def test_remembered_plans_keep_no_kernel_the_kernel_table_let_go(queue, monkeypatch):
    import gc

    monkeypatch.setattr(steps, "KERNELS_KEPT", 4)
    monkeypatch.setattr(steps, "_KERNELS", {})
    monkeypatch.setattr(steps, "_PLANS", {})
    monkeypatch.setattr(steps, "_MAP_PLANS", {})
    # (kernels of earlier tests, which the table set aside holds)
    earlier = {id(o) for o in gc.get_objects() if type(o) is steps._Compiled}
    x = la.asarray(np.linspace(0.0, 1.0, 50))
    with la.tier("device"):
        for k in range(12):                  # 12 structures: each plans a kernel of its own
            expected = np.linspace(0.0, 1.0, 50) * (k + 2)
            for _ in range(k + 1):
                expected = np.sin(expected)
            y = x * (k + 2)
            for _ in range(k + 1):
                y = la.sin(y)
            np.testing.assert_allclose(y.get(), expected, rtol=1e-12)
            z = x + la.asarray(np.full(50, float(k)))        # a plan of one operation
            np.testing.assert_array_equal(z.get(), np.linspace(0.0, 1.0, 50) + k)
    gc.collect()
    alive = [o for o in gc.get_objects()
             if type(o) is steps._Compiled and id(o) not in earlier]
    assert len(steps._PLANS) >= 12 and len(alive) <= len(steps._KERNELS) <= 4


def test_array_templates_of_many_shapes_stay_bounded(queue, monkeypatch):
    from lazyarray.run import launch

    monkeypatch.setattr(launch, "TEMPLATES_KEPT", 8)
    monkeypatch.setattr(launch, "_TEMPLATES", {})
    with la.tier("device"):
        for n in range(3, 23):
            np.testing.assert_array_equal((la.arange(n) * 2).get(), np.arange(n) * 2)
    assert 0 < len(launch._TEMPLATES) <= 8
