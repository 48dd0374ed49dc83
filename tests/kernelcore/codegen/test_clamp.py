"""``clamp(x, lo, hi)``: *x* limited to [*lo*, *hi*] (OpenCL's built-in; a
helper on the C target), for floats and integers, compared with NumPy's clip."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


@pytest.mark.parametrize("c_target", [False, True])
def test_clamp_matches_numpy_clip(queue, c_target):
    kw = {"target": lp.ExecutableCTarget()} if c_target else {}
    knl = lp.make_kernel("{[i]: 0<=i<n}",
                         """
                         out[i] = clamp(x[i], a, b)
                         iout[i] = clamp(k[i], 3, 7)
                         """, **kw)
    x = np.linspace(-5, 25, 61).astype(np.float32)
    k = np.arange(-2, 59, dtype=np.int32)
    args = dict(x=x, k=k, a=np.float32(5), b=np.float32(15))
    _, (iout, out) = knl(**args) if c_target else knl(queue, **args)
    assert host(out).dtype == np.float32 and host(iout).dtype == np.int32
    np.testing.assert_array_equal(host(out), np.clip(x, 5, 15))
    np.testing.assert_array_equal(host(iout), np.clip(k, 3, 7))


def test_clamp_takes_three_arguments():
    knl = lp.make_kernel("{[i]: 0<=i<4}", "out[i] = clamp(x[i], 1.0)")
    with pytest.raises(lp.LoopyError, match="3 argument"):
        lp.generate_code_v2(lp.add_dtypes(knl, {"x": np.float32}))
