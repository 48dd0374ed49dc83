"""``add_prefetch`` of an array that instructions read through substitution
rules (loopy's stencil test): the rules reading it are expanded first, so
their reads are prefetched too."""

import numpy as np

import kernelcore as lp
from tests.helpers import host


def _stencil(n):
    return lp.make_kernel(
        f"{{[i,j]: 0<= i,j < {n}}}",
        ["a_offset(ii, jj) := a[ii+1, jj+1]",
         "twice(ii, jj) := 2*a_offset(ii, jj)",
         "z[i,j] = -twice(i,j) + a_offset(i,j-1) + a_offset(i,j+1)"
         " + a_offset(i-1,j) + a_offset(i+1,j)"],
        [lp.GlobalArg("a", np.float32, shape=(n+2, n+2)),
         lp.GlobalArg("z", np.float32, shape=(n+2, n+2))])


def test_prefetch_through_rules(queue):
    n = 32
    knl = lp.split_iname(_stencil(n), "i", 16, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.add_prefetch(knl, "a", ["i_inner", "j_inner"], default_tag="l.auto")
    entry = knl.default_entrypoint
    assert not entry.substitutions          # both rules read 'a': expanded
    assert entry.temporary_variables["a_fetch"].shape == (18, 18)
    a = np.random.default_rng(1).random((n + 2, n + 2), dtype=np.float32)
    z = np.zeros_like(a)
    _, (z,) = knl(queue, a=a, z=z)
    ref = (-2*a[1:n+1, 1:n+1] + a[1:n+1, :n] + a[1:n+1, 2:] + a[:n, 1:n+1]
           + a[2:, 1:n+1])
    np.testing.assert_allclose(host(z)[:n, :n], ref, rtol=1e-5)


def test_rules_not_reading_the_array_stay():
    knl = lp.make_kernel("{[i]: 0<=i<8}",
                         ["r(k) := a[k]", "s(k) := 3*k", "z[i] = r(i) + s(i)"],
                         [lp.GlobalArg("a, z", np.float32, shape=(8,))])
    knl = lp.add_prefetch(knl, "a", "i", default_tag=None)
    assert set(knl.default_entrypoint.substitutions) == {"s"}
