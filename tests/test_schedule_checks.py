"""Schedules that would silently compute wrong values are refused."""

import numpy as np
import pytest

import kernelcore as lp


def _blocked_matmul(inner_tag):
    knl = lp.make_kernel("{[i,j,k]: 0<=i,j,k<n}", "c[i, j] = sum(k, a[i, k]*b[k, j])")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 64, outer_tag="g.0")
    knl = lp.split_iname(knl, "j_inner", 4, outer_tag="l.0", inner_tag=inner_tag)
    knl = lp.split_iname(knl, "k", 16)
    knl = lp.add_prefetch(knl, "a", ["k_inner", "i_inner"], default_tag="l.auto")
    return lp.add_prefetch(knl, "b", ["k_inner", "j_inner_outer", "j_inner_inner"],
                           default_tag="l.auto")


def test_shared_accumulator_across_unrolled_iname_is_refused():
    # with 'unr' the scalar accumulator is shared by the four j values, which
    # forces the j loop around the k loop and the tile fetch out of it
    knl = lp.add_dtypes(_blocked_matmul("unr"), {"a": np.float32, "b": np.float32})
    with pytest.raises(lp.SchedulingError, match="a_fetch"):
        lp.generate_code_v2(knl)


@pytest.mark.parametrize("n", [16, 64, 70])
def test_ilp_accumulators_keep_fetch_and_update_together(queue, n):
    knl = _blocked_matmul("ilp")
    rng = np.random.default_rng(n)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    evt, (c,) = knl(queue, a=a, b=b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_private_value_is_read_in_the_run_that_wrote_it(queue):
    knl = lp.make_kernel(
        "{[i,j]: 0<=i<n and 0<=j<m}",
        """
        <> t = a[i] {id=w}
        out[i, j] = t + b[j] {id=r, dep=w}
        """)
    evt, (out,) = knl(queue, a=np.arange(3.0), b=np.arange(2.0))
    np.testing.assert_array_equal(out, np.arange(3.0)[:, None] + np.arange(2.0))
    code = lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float64, "b": np.float64}))
    # the write of t sits in the i loop, outside the j loop that reads it
    body = code.device_code()
    assert body.index("t = a[i]") < body.index("for (int j")
