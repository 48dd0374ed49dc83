"""Reductions along the rows or columns of an elementwise expression (CPU
layouts): one kernel generic over the row count and the row length, so a
loop over new shapes builds nothing; results equal NumPy's."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.lower.flat import AXIS_REDUCED_LIMIT, AXIS_REDUCTION_LIMIT
from lazyarray.run import steps
from tests.helpers import counting

SHAPES = [(3, 5), (7, 64), (100, 33), (17, 1000), (256, 256), (1, 9), (9, 1), (50, 200),
          (1000, 7), (33, 129)]


def _expression(xp, a, b):
    return (a * 2 + b).sum(axis=1)


def test_new_shapes_of_a_row_sum_build_nothing(device_layouts, rng):
    device_layouts("cpu")
    planned = None
    for shape in SHAPES:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        with counting() as n:
            result = _expression(la, la.asarray(a), la.asarray(b)).get()
        np.testing.assert_allclose(result, _expression(np, a, b), rtol=1e-12, atol=1e-12)
        if planned is None:
            assert n.planned == 1
            planned = 0
        else:
            assert n.planned == 0, shape
            assert n.launches == 1, shape


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod"])
def test_new_shapes_of_column_and_nd_reductions_build_nothing(device_layouts, rng, op):
    device_layouts("cpu")
    # leading axes merged (kept) and trailing axes merged (reduced), and the reverse
    cases = [((2, 3, 4), (1, 2)), ((5, 6, 7), (1, 2)), ((4, 9, 2), (1, 2)),
             ((3, 4, 5), (0,)), ((8, 2, 3), (0,)), ((1, 30, 2), (0,))]
    counts = []
    for shape, axes in cases:
        a = rng.standard_normal(shape) * 0.9 + 1
        with counting() as n:
            result = getattr(la.asarray(a) * 1.5 - 0.25, op)(axis=axes).get()
        counts.append(n.planned)
        np.testing.assert_allclose(result, getattr(a * 1.5 - 0.25, op)(axis=axes),
                                   rtol=1e-12, atol=1e-12)
    # one kernel for each of the two structures (the mean: and its division)
    assert counts[1:3] == [0, 0] and counts[4:] == [0, 0], counts


DTYPES = [np.int32, np.int64, np.float32, np.float64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_row_and_column_reductions_equal_numpy(queue, rng, dtype, axis, keepdims):
    shapes = [(5, 1), (1, 7), (6, 33), (40, 3)]
    ops = ["sum", "prod", "max", "min", "any", "all", "mean"]
    for shape in shapes:
        if dtype == np.bool_:
            a = rng.standard_normal(shape) > 0
        else:
            a = (rng.standard_normal(shape) * 3).astype(dtype)
        if dtype in (np.float32, np.float64) and shape[0] > 2:
            a[1, 0], a[2, -1] = np.nan, np.inf
        x = la.asarray(a)
        for op in ops:
            with np.errstate(all="ignore"):
                expected = getattr(a + a, op)(axis=axis, keepdims=keepdims)
                result = getattr(x + x, op)(axis=axis, keepdims=keepdims).get()
            assert result.shape == expected.shape and result.dtype == expected.dtype, op
            eps = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(result, expected, rtol=eps, equal_nan=True,
                                       err_msg=f"{op} {shape} axis {axis}")


def test_empty_axes_and_complex_values_equal_numpy(queue, rng):
    for shape, axis in [((0, 4), 0), ((3, 0), 1), ((0, 4), 1)]:
        a = np.ones(shape)
        np.testing.assert_array_equal((la.asarray(a) * 2).sum(axis=axis).get(),
                                      (a * 2).sum(axis=axis))
    c = rng.standard_normal((6, 9)) + 1j * rng.standard_normal((6, 9))
    for op in ("sum", "prod", "mean"):
        np.testing.assert_allclose(getattr(la.asarray(c) * 2, op)(axis=1).get(),
                                   getattr(c * 2, op)(axis=1), rtol=1e-12)


def test_large_and_gpu_reductions_keep_their_layouts(device_layouts, monkeypatch, rng):
    monkeypatch.setattr(steps, "_PLANS", {})
    rows = AXIS_REDUCTION_LIMIT // 128
    for kind, shape, generic in [("cpu", (rows, 128), True), ("cpu", (2 * rows, 128), False),
                                 ("cpu", (2, 2 * AXIS_REDUCED_LIMIT), False),
                                 ("gpu", (64, 64), False)]:
        device_layouts(kind)
        a = rng.standard_normal(shape)
        result = (la.asarray(a) * 2).sum(axis=1)
        [step] = steps.plan_graph(result.node)
        assert bool(step.compiled.group) is generic, (kind, shape)
        np.testing.assert_allclose(result.get(), (a * 2).sum(axis=1), rtol=1e-12)
