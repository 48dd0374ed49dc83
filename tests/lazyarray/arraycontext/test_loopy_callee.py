"""The call_loopy program classes beyond plain assignments (global barriers,
atomic updates, argmax-style reductions, calls of other kernels) as lazy
external calls, in the project's own environment: kernelcore programs like
those lazyarray.arraycontext.loopy_translate makes of loopy's, run through
LoopyCallee in the lazy graph and compared with NumPy."""

import numpy as np

import kernelcore as lp
import lazyarray as la
from lazyarray.arraycontext.loopy_call import LoopyCallee
from lazyarray.arraycontext.loopy_translate import GROUP_SIZE, Translation
from lazyarray.calls import CallOutput, call
from lazyarray.handle import LazyArray
from lazyarray.run import STATS

RNG = np.random.default_rng(38)
OPTIONS = lp.Options(return_dict=True, no_numpy=True)


def _spread(knl, *inames):
    for name in inames:
        knl = lp.split_iname(knl, name, GROUP_SIZE, outer_tag="g.0", inner_tag="l.0")
    return knl


def _call(knl, spread, scalars=None, **arrays):
    """The outputs of kernelcore program *knl* (*spread*: with loops over
    the device) called lazily on the NumPy *arrays*."""
    nodes = {k: la.asarray(v).node for k, v in arrays.items()}
    callee = LoopyCallee(Translation(knl, spread, "test"),
                         {k: (n.shape, n.dtype) for k, n in nodes.items()}, scalars or {}, {})
    run, callee.runs = callee.run, 0

    def counted(*args):
        callee.runs += 1
        return run(*args)

    callee.run = counted
    outputs = call(callee, nodes)
    assert all(isinstance(n, CallOutput) for n in outputs.values())
    return callee, {k: LazyArray(n) for k, n in outputs.items()}


def _launches(*arrays):
    before = STATS["launches"]
    values = [np.asarray(a) for a in arrays]
    return STATS["launches"] - before, values


def test_global_barrier_then_a_scatter():
    knl = lp.make_kernel(
        ["{[i0, j0]: 0 <= i0 < nout and 0 <= j0 < m}", "{[e, j]: 0 <= e < nel and 0 <= j < m}"],
        """
        result[i0, j0] = 0 {id=init}
        ... gbarrier {id=barrier, dep=init}
        result[to_el[e], j] = result[to_el[e], j] + 2 * ary[e, j] {id=add, dep=barrier}
        """,
        [lp.GlobalArg("result", np.float64, shape=("nout", "m")),
         lp.GlobalArg("ary", np.float64, shape=("nel", "m")),
         lp.GlobalArg("to_el", np.int32, shape=("nel",)), lp.ValueArg("nout", np.int32), ...],
        options=OPTIONS)
    ary = RNG.standard_normal((300, 3))
    to_el = RNG.integers(0, 90, 300).astype(np.int32)
    callee, out = _call(knl, _spread(knl, "i0", "j"), {"nout": 90}, ary=ary, to_el=to_el)
    want = np.zeros((90, 3))
    np.add.at(want, to_el, 2 * ary)
    count, (got,) = _launches(out["result"] + 1)
    np.testing.assert_allclose(got, want + 1, rtol=1e-13)
    # the program's two device kernels (one per side of the barrier), the + 1
    assert lp.generate_code_v2(callee.kernel).device_code().count("__kernel") == 2
    assert callee.runs == 1 and count == 3      # the call, its output, the + 1


def test_atomic_updates_spread_over_the_device():
    knl = lp.make_kernel(
        "{[i]: 0 <= i < n}", "hist[bins[i]] = hist[bins[i]] + w[i] {atomic}",
        [lp.GlobalArg("hist", np.int32, shape=("nbins",), for_atomic=True),
         lp.GlobalArg("bins,w", np.int32, shape=("n",)), lp.ValueArg("nbins", np.int32), ...],
        options=OPTIONS)
    bins = RNG.integers(0, 6, 1000).astype(np.int32)
    w = RNG.integers(-5, 10, 1000).astype(np.int32)
    hist = RNG.integers(0, 4, 6).astype(np.int32)
    callee, out = _call(knl, _spread(knl, "i"), hist=hist, bins=bins, w=w)
    want = hist.copy()
    np.add.at(want, bins, w)
    np.testing.assert_array_equal(np.asarray(out["hist"]), want)
    code = lp.generate_code_v2(callee.kernel).device_code()
    assert "gid(0)" in code and "atomic" in code


def test_argmax_style_reduction_with_two_outputs():
    knl = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}",
                         ["mx[i], at[i] = argmax(j, a[i, j], j)",
                          "lo[i], at_lo[i] = argmin(j, a[i, j], j)"],
                         [lp.GlobalArg("a", np.float64, shape=("n", "m")), ...],
                         options=OPTIONS)
    a = RNG.standard_normal((100, 9))
    callee, out = _call(knl, _spread(knl, "i"), a=a)
    count, (got,) = _launches(out["mx"] - out["lo"] + 10 * out["at"] + out["at_lo"])
    np.testing.assert_allclose(
        got, a.max(axis=1) - a.min(axis=1) + 10 * a.argmax(axis=1) + a.argmin(axis=1),
        rtol=1e-15)
    # the program ran once for its four outputs: its launch, a step per
    # output taken out of its value (no kernel), the kernel summing them
    assert callee.runs == 1 and count == 6
    np.testing.assert_array_equal(np.asarray(out["at"]), a.argmax(axis=1))
    np.testing.assert_array_equal(np.asarray(out["lo"]), a.min(axis=1))


def test_a_kernel_calling_a_kernel():
    child = lp.make_function(
        "{[j]: 0 <= j < 4}", "b[j] = 2 * a[j] + c",
        [lp.GlobalArg("a,b", np.float64, shape=(4,)), lp.ValueArg("c", np.float64)],
        name="child")
    parent = lp.make_kernel(
        "{[i, j]: 0 <= i < n and 0 <= j < 4}", "[j]: out[i, j] = child([j]: x[i, j], 1.5)",
        [lp.GlobalArg("x,out", np.float64, shape=("n", 4)), ...], options=OPTIONS)
    tu = lp.merge([parent, child])
    x = RNG.standard_normal((200, 4))
    callee, out = _call(tu, _spread(tu, "i"), x=x)
    np.testing.assert_allclose(np.asarray(out["out"]), 2 * x + 1.5, rtol=1e-15)
    assert "child(" in lp.generate_code_v2(callee.kernel).device_code()
