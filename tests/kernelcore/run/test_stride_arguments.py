"""Strides as kernel arguments (``default_order=lp.auto``, fixed-stride axis
tags with an ``auto`` stride), found from the arrays passed; which results
come back as numpy arrays."""

from __future__ import annotations

import numpy as np
import pyopencl.array as cl_array
import pytest

import kernelcore as lp
from kernelcore.kernel.array import FixedStrideArrayDimTag


def test_any_order_takes_a_transposed_view(queue):
    knl = lp.make_einsum("ij,j->i", ("a", "b"), default_order=lp.auto)
    names = [a.name for a in knl.default_entrypoint.args]
    assert {"a_stride0", "a_stride1", "out_stride0"} <= set(names)
    rng = np.random.default_rng(0)
    base = rng.random((5, 4))
    a_dev = cl_array.to_device(queue, base).transpose((1, 0))
    b = rng.random(5)
    _, (out,) = knl(queue, a=a_dev, b=b)
    assert isinstance(out, cl_array.Array)      # a device array was passed
    np.testing.assert_allclose(out.get(), base.T @ b)


def test_auto_stride_axis_tag(queue):
    knl = lp.make_kernel(
        "{[i]: 0<=i<10}", "y[i] = 2*x[i]",
        [lp.GlobalArg("x", np.float64, shape=lp.auto,
                      dim_tags=[FixedStrideArrayDimTag(lp.auto)]), "..."])
    knl = lp.rename_argument(knl, "x", "x_new")
    x = cl_array.to_device(queue, np.arange(20.0))[::2]
    _, (y,) = knl(queue, x_new=x)
    np.testing.assert_array_equal(y.get(), 2 * np.arange(0.0, 20.0, 2))
    with pytest.raises(lp.LoopyError, match="not both"):
        lp.GlobalArg("z", np.float64, shape=(3,), strides=(1,),
                     dim_tags=[FixedStrideArrayDimTag(1)])


def test_numpy_outputs_passed_get_their_results(queue):
    knl = lp.make_kernel("{[i]: 0<=i<4}", "y[i] = x[i] + 1", [
        lp.GlobalArg("x,y", np.float32, shape="n,"), "..."])
    x_dev = cl_array.to_device(queue, np.arange(4, dtype=np.float32))
    y_host = np.zeros(4, np.float32)
    _, (y,) = knl(queue, x=x_dev, y=y_host)
    assert y is y_host
    np.testing.assert_array_equal(y_host, np.arange(1, 5))
    _, (y,) = knl(queue, x=np.arange(4, dtype=np.float32))
    assert isinstance(y, np.ndarray)
