"""A scan across the work-items of a group that is longer than the scanned
loop (another loop of the kernel sets the group's size): the scan's local
buffer has an element for every work-item, results as NumPy's cumsum."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp


def test_a_scan_in_a_longer_work_group_has_a_buffer_for_every_work_item():
    knl = lp.make_kernel(
        ["{[i, s]: 0 <= i < 10 and 0 <= s <= i}", "{[k]: 0 <= k < 32}"],
        """
        out[i] = sum(s, x[s])  {id=scan}
        y[k] = 2 * z[k]  {id=other}
        """,
        [lp.GlobalArg("x", np.float64, shape=(10,)), lp.GlobalArg("out", np.float64, shape=(10,)),
         lp.GlobalArg("z", np.float64, shape=(32,)), lp.GlobalArg("y", np.float64, shape=(32,))])
    knl = lp.tag_inames(knl, {"i": "l.0", "k": "l.0"})
    code = lp.generate_code_v2(knl).device_code()
    assert "__local double" in code and "[32]" in code.split("__local double", 1)[1].split(";")[0]
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    x, z = np.random.default_rng(3).standard_normal((2, 32))
    out, y = cla.empty(queue, 10, np.float64), cla.empty(queue, 32, np.float64)
    knl(queue, x=cla.to_device(queue, x[:10]), z=cla.to_device(queue, z), out=out, y=y)
    np.testing.assert_allclose(out.get(), np.cumsum(x[:10]), rtol=1e-14)
    np.testing.assert_array_equal(y.get(), 2 * z)
