"""Calls with strided and shifted sub-arrays: slices with a step
(``X[5:40:3]``, ``Y[39:5:-3]``) and loopy's sub-array references whose swept
iname is scaled or shifted (``[j]: x[i, 2*j]``, ``[k]: z[i + k]``), passed
to a device function or inlined; results compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def _squares():
    return lp.make_function("{[i]: 0<=i<n}", "y[i] = i**2",
                            [lp.ValueArg("n", np.int32), ...], name="squares")


@pytest.mark.parametrize("inline", [False, True])
@pytest.mark.parametrize("start", [5, 7])
def test_slices_with_steps(queue, inline, start):
    up, down = len(range(start, 40, 3)), len(range(39, start, -3))
    t_unit = lp.make_kernel(
        "{[i, j]: 0<=i, j<40}",
        f"""
        X[i] = 42
        X[{start}:40:3] = squares({up})
        Y[j] = 7
        Y[39:{start}:-3] = squares({down})
        """, [lp.GlobalArg("X,Y", np.int64, shape=40)], seq_dependencies=True)
    t_unit = lp.merge([t_unit, _squares()])
    if inline:
        t_unit = lp.inline_callable_kernel(t_unit, "squares")
    _, (x, y) = t_unit(queue)
    ex = np.full(40, 42)
    ex[start:40:3] = np.arange(up)**2
    ey = np.full(40, 7)
    ey[39:start:-3] = np.arange(down)**2
    np.testing.assert_array_equal(host(x), ex)
    np.testing.assert_array_equal(host(y), ey)


def _scale():
    return lp.make_function("{[j]: 0<=j<4}", "b[j] = 10*a[j]", name="scale")


@pytest.mark.parametrize("inline", [False, True])
def test_scaled_and_shifted_sub_array_references(queue, inline):
    t_unit = lp.make_kernel(
        "{[i, j]: 0<=i<3 and 0<=j<4}",
        "[j]: out[i, j + 1] = scale([j]: x[i, 2*j + 1])",
        [lp.GlobalArg("x", np.float64, shape=(3, 9)),
         lp.GlobalArg("out", np.float64, shape=(3, 5))])
    t_unit = lp.merge([t_unit, _scale()])
    if inline:
        t_unit = lp.inline_callable_kernel(t_unit, "scale")
    x = np.random.default_rng(2).random((3, 9))
    out = np.zeros((3, 5))
    _, (res,) = t_unit(queue, x=x, out=out)
    expected = np.zeros((3, 5))
    expected[:, 1:] = 10*x[:, 1:9:2]
    np.testing.assert_allclose(host(res), expected)


@pytest.mark.parametrize("inline", [False, True])
def test_sub_array_over_an_outer_loop_offset(queue, inline):
    callee = lp.make_function("{[d]: 0<=d<1}", "c[d] = a[d] - b[d]", name="diff")
    t_unit = lp.make_kernel(
        "{[i, k]: 0<=i<10 and 0<=k<1}",
        "[k]: z[i + k] = diff([k]: x[i + k], [k]: y[i + k])",
        [lp.GlobalArg("x, y", np.float64, shape=(10,)), ...])
    t_unit = lp.merge([t_unit, callee])
    if inline:
        t_unit = lp.inline_callable_kernel(t_unit, "diff")
    rng = np.random.default_rng(4)
    x, y = rng.random(10), rng.random(10)
    _, (z,) = t_unit(queue, x=x, y=y)
    assert host(z).shape == (10,)
    np.testing.assert_allclose(host(z), x - y)


def test_a_subscript_not_linear_in_the_swept_iname_is_refused_over_a_parametric_range():
    # (over a constant range it is passed through a temporary: test_sub_array_packing)
    with pytest.raises(lp.ParseError, match="positive integer"):
        lp.make_kernel("{[i]: 0<=i<n}", "[i]: out[i] = scale([i]: x[n - 1 - i])")


@pytest.mark.parametrize("order", ["C", "F"])
def test_linear_subscripts_count_in_memory_order(queue, order):
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        a[[i*n + i]] = 1
        b[[2*i + 1]] = i
        """,
        [lp.GlobalArg("a", np.float32, shape="n, n", order=order),
         lp.GlobalArg("b", np.int32, shape=(20,)), ...], assumptions="n <= 10")
    a = np.zeros((10, 10), np.float32, order=order)
    b = np.zeros(20, np.int32)
    _, (ra, rb) = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(host(ra), np.eye(10, dtype=np.float32))
    expected = np.zeros(20, np.int32)
    expected[1::2] = np.arange(10)
    np.testing.assert_array_equal(host(rb), expected)
    flat = np.zeros((2, 3, 4), np.int32)
    knl3 = lp.make_kernel("{[k]: 0<=k<24}", "c[[k]] = k",
                          [lp.GlobalArg("c", np.int32, shape=(2, 3, 4), order=order)])
    _, (rc,) = knl3(queue, c=np.asarray(flat, order=order))
    np.testing.assert_array_equal(host(rc).ravel(order=order), np.arange(24))


@pytest.mark.parametrize("inline", [False, True])
def test_argument_updated_in_place_is_input_and_output(queue, inline):
    twice = lp.make_function("{[i]: 0<=i<10}", "x[i] = 2*x[i] + y[i]", name="twice")
    t_unit = lp.make_kernel(
        "{[k]: 0<=k<2}", "x[k, :] = twice(x[k, :], y[:])",
        [lp.GlobalArg("x", np.float64, shape=(2, 10)),
         lp.GlobalArg("y", np.float64, shape=(10,))])
    t_unit = lp.merge([t_unit, twice])
    if inline:
        t_unit = lp.inline_callable_kernel(t_unit, "twice")
    rng = np.random.default_rng(8)
    x, y = rng.random((2, 10)), rng.random(10)
    _, (out,) = t_unit(queue, x=x.copy(), y=y)
    np.testing.assert_allclose(host(out), 2*x + y)
