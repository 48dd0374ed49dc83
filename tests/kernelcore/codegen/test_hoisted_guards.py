"""A condition that a loop neither changes nor indexes by its loop index is
tested once, around the loop (and around the loops next to it testing the
same), as loopy places it."""

import numpy as np

import kernelcore as lp
from tests.helpers import host


def _kernel(second: str):
    return lp.make_kernel(
        "{[i,j]: 0<=i<10 and 0<=j<6}",
        f"""
        for j
            <> a = (j % 2 == 0)  {{id=a}}
            y[i, j] = i  {{if=a, dep=a, id=y}}
            {second}
        end
        """, [lp.GlobalArg("y, z", np.int32, shape=(10, 6)), "..."])


def test_invariant_condition_tested_once(queue):
    knl = _kernel("z[i, j] = 2*i  {if=a, dep=y}")
    code = lp.generate_code_v2(knl).device_code()
    assert code.count("if (a)") == 1
    assert code.index("if (a)") < code.index("for (int i")
    _, (y, z) = knl(queue, y=np.zeros((10, 6), np.int32), z=np.zeros((10, 6), np.int32))
    i = np.arange(10)[:, None]
    even = (np.arange(6) % 2 == 0)[None, :]
    np.testing.assert_array_equal(host(y), np.where(even, i, 0))
    np.testing.assert_array_equal(host(z), np.where(even, 2 * i, 0))


def test_condition_the_loop_changes_stays_inside(queue):
    knl = lp.make_kernel(
        "{[i]: 0<=i<5}",
        """
        <> a = 1  {id=a0}
        for i
            y[i] = i  {if=a, dep=a0, id=y}
            a = 0  {if=a, dep=y, id=a1}
        end
        """, [lp.GlobalArg("y", np.int32, shape=(5,)), "..."])
    code = lp.generate_code_v2(knl).device_code()
    assert code.index("for (int i") < code.index("if (a)")
    _, (y,) = knl(queue, y=np.full(5, -1, np.int32))
    np.testing.assert_array_equal(host(y), [0, -1, -1, -1, -1])
