"""Global barriers inside sequential loops: the host runs the loop, launching
the device kernels of its body once per iteration with the loop's index as an
argument (as loopy's host code does); results compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host

SMOOTH = """
for t
    ... gbarrier                        {id=top}
    s[i] = y[t, i] + y[t, i + 1]        {id=add, dep=*top}
    ... gbarrier                        {id=mid, dep=*add}
    y[t + 1, i] = s[i]                  {id=store, dep=*mid}
    z[t, i] = 2*s[i]                    {id=double, dep=*mid}
end
"""


def _smooth(ntrips=3, fixed=True):
    knl = lp.make_kernel(
        "{[i, t]: 0<=i<n and 0<=t<ntrips}", SMOOTH,
        [lp.GlobalArg("y", np.float64, shape=("ntrips + 1", "n + 1")),
         lp.GlobalArg("s", np.float64, shape=("n",)),
         lp.GlobalArg("z", np.float64, shape=("ntrips", "n")), lp.ValueArg("n", np.int32),
         ...])
    return lp.fix_parameters(knl, ntrips=ntrips) if fixed else knl


def _expected(y, ntrips):
    y = y.copy()
    n = y.shape[1] - 1
    for t in range(ntrips):
        y[t + 1, :n] = y[t, :n] + y[t, 1:]
    return y, 2 * y[1:, :n]


def test_host_loop_launches_each_kernel_per_iteration(queue):
    knl = lp.split_iname(_smooth(), "i", 64, outer_tag="g.0", inner_tag="l.0")
    code = lp.generate_code_v2(knl)
    assert len(code.device_programs) == 2
    assert [dk.extra_inames for dk in code.device_programs] == [("t",), ("t",)]
    assert [values for _, values in code.launch_list()] == [(0,), (0,), (1,), (1,), (2,), (2,)]
    assert "int const t)" in code.device_code()
    assert "launch loopy_kernel_0  (t=2)" in code.host_code()
    y = np.random.default_rng(1).random((4, 301))
    _, (out_y, _, out_z) = knl(queue, y=y.copy(), n=300)
    ey, ez = _expected(y, 3)
    np.testing.assert_allclose(host(out_y), ey)
    np.testing.assert_allclose(host(out_z), ez)


def test_host_loop_on_the_c_target():
    knl = lp.split_iname(_smooth(4), "i", 16, outer_tag="g.0")
    knl = knl.copy(target=lp.ExecutableCTarget())
    y = np.random.default_rng(2).random((5, 41))
    _, (_, _, out_z) = knl(y=y.copy(), n=40)
    np.testing.assert_allclose(out_z, _expected(y, 4)[1])


def test_one_work_group_keeps_the_loop_in_the_kernel(queue):
    # one work-item: the barriers are no-ops
    knl = _smooth()
    code = lp.generate_code_v2(knl)
    assert len(code.device_programs) == 1
    assert "barrier" not in code.device_code()
    y = np.random.default_rng(3).random((4, 11))
    _, (_, _, out_z) = knl(queue, y=y.copy(), n=10)
    np.testing.assert_allclose(host(out_z), _expected(y, 3)[1])
    # one work-group of several work-items: a barrier of the group
    knl = lp.fix_parameters(_smooth(fixed=False), n=16, ntrips=3)
    knl = lp.tag_inames(knl, {"i": "l.0"})
    code = lp.generate_code_v2(knl)
    assert len(code.device_programs) == 1
    assert "barrier(CLK_GLOBAL_MEM_FENCE)" in code.device_code()
    y = np.random.default_rng(4).random((4, 17))
    _, (_, _, out_z) = knl(queue, y=y.copy())
    np.testing.assert_allclose(host(out_z), _expected(y, 3)[1])


def test_host_loop_needs_a_constant_trip_count():
    knl = lp.split_iname(_smooth(fixed=False), "i", 64, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(lp.LoopyError, match="constant number of iterations"):
        lp.generate_code_v2(knl)


def test_temporary_written_across_groups_is_global(queue):
    knl = lp.make_kernel(
        "{[i, t]: 0<=i<n and 0<=t<2}",
        """
        for t
            ... gbarrier
            <> tmp[i] = a[i] + t    {id=w}
            ... gbarrier
            out[t, i] = 2*tmp[i]    {id=r}
        end
        """, [lp.GlobalArg("a", np.float32, shape=("n",)), ...], seq_dependencies=True)
    knl = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    pre = lp.preprocess_kernel(knl)
    assert pre["loopy_kernel"].temporary_variables["tmp"].address_space \
        == lp.AddressSpace.GLOBAL
    a = np.arange(100, dtype=np.float32)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), 2 * (a + np.arange(2)[:, None]))
