"""argmax and argmin over an iname of the work-group (``l.0``): the
work-items' (value, index) pairs combined through local memory, the first
index of the best value (NaN the best) winning, as in NumPy."""

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("n", [128, 100, 7])
def test_arg_reduction_over_a_work_group(queue, op, n):
    knl = lp.make_kernel(f"{{[i]: 0<=i<{n}}}", f"best_val, best_idx = {op}(i, a[i], i)")
    knl = lp.tag_inames(knl, {"i": "l.0"})
    knl = lp.set_options(lp.add_dtypes(knl, {"a": np.float64}), return_dict=True)
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, n).astype(np.float64)      # many ties
    _, out = knl(queue, a=a)
    val, idx = out["best_val"], out["best_idx"]
    expected = getattr(np, op)(a)
    assert int(host(idx)) == expected
    assert float(host(val)) == a[expected]


def test_arg_reduction_with_nans_per_group(queue):
    knl = lp.make_kernel("{[r, i]: 0<=r<5 and 0<=i<32}",
                         "out[r] = argmax(i, a[r, i])")
    knl = lp.tag_inames(knl, {"r": "g.0", "i": "l.0"})
    a = np.random.default_rng(4).random((5, 32))
    a[1, [7, 20]] = np.nan
    a[2, [25, 3]] = np.nan
    a[3, :] = 0.5
    _, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), np.argmax(a, axis=1))
