"""actx.call_loopy inside the lazy graph: loopy programs re-created in
kernelcore, compared with arraycontext's eager PyOpenCLArrayContext running
the same programs through loopy (skipped, saying so, without arraycontext)."""

import warnings

import numpy as np
import pytest

arraycontext = pytest.importorskip(
    "arraycontext", reason="arraycontext is not installed (the 'pde' extra plus "
    "arraycontext from its repository, docs/pde-backend.md): the context's tests did not run")

import loopy as lp  # noqa: E402
import pyopencl as cl  # noqa: E402
from arraycontext import make_loopy_program  # noqa: E402

import kernelcore  # noqa: E402
import lazyarray as la  # noqa: E402
from lazyarray.arraycontext import LazyarrayArrayContext  # noqa: E402
from lazyarray.calls import CallOutput, ExternalCall  # noqa: E402
from lazyarray.errors import LazyArrayError  # noqa: E402
from lazyarray.run import default_queue  # noqa: E402
from tests.helpers import counting  # noqa: E402


@pytest.fixture(scope="module")
def queue():
    return cl.CommandQueue(cl.Context([default_queue().device]))


@pytest.fixture
def actx(queue):
    return LazyarrayArrayContext(queue)


@pytest.fixture
def eager(queue):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield arraycontext.PyOpenCLArrayContext(queue)


def _eager_call(eager, prg, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = {k: eager.from_numpy(v) if isinstance(v, np.ndarray) else v
                for k, v in kwargs.items()}
        return {k: eager.to_numpy(v) for k, v in eager.call_loopy(prg, **args).items()}


def _lazy_call(actx, prg, **kwargs):
    args = {k: actx.from_numpy(v) if isinstance(v, np.ndarray) else v
            for k, v in kwargs.items()}
    return actx.call_loopy(prg, **args)


class _Outputs(dict):
    """A call's outputs, with the external call each output's node was an
    output of (*calls*: computing a value makes its handle's node a computed
    input)."""

    calls: dict


def _agree(actx, eager, prg, rtol=1e-13, **kwargs):
    got = _Outputs(_lazy_call(actx, prg, **kwargs))
    want = _eager_call(eager, prg, **kwargs)
    assert set(got) == set(want)
    for name, value in got.items():
        assert isinstance(value, la.LazyArray)
        assert isinstance(value.node, CallOutput), name
    got.calls = {name: value.node.call for name, value in got.items()}
    for name, value in got.items():
        np.testing.assert_allclose(actx.to_numpy(value), want[name], rtol=rtol, atol=0)
    return got


RNG = np.random.default_rng(18)


def test_outputs_are_nodes_of_the_graph(actx, eager):
    prg = make_loopy_program("{[i, j]: 0 <= i < n and 0 <= j < m}",
                             ["out[i] = sum(j, 2 * x[i, j]) + 1",
                              "out2[i, j] = abs(x[i, j])"])
    x = RNG.standard_normal((70, 3))
    got = _agree(actx, eager, prg, x=x)
    # one call, two outputs; nothing ran before a value was asked for
    assert got.calls["out"] is got.calls["out2"]
    assert isinstance(got.calls["out"], ExternalCall)
    # the outputs feed lazy work, and the arguments may be lazy work
    lazy_x = actx.from_numpy(x) * 3 - 1
    again = actx.call_loopy(prg, x=lazy_x)
    total = again["out"] + again["out2"].sum(axis=1)
    text = la.explain(total, show_code=True, print_it=False)
    assert "[external call]" in text and "[read whole by an external call]" in text
    assert "an output of the call it reads" in text and "mm_actx_kernel(" in text
    want = _eager_call(eager, prg, x=x * 3 - 1)
    np.testing.assert_allclose(actx.to_numpy(total), want["out"] + want["out2"].sum(axis=1),
                               rtol=1e-13)


def test_the_same_call_is_one_node_and_runs_once(actx):
    prg = make_loopy_program("{[i]: 0 <= i < n}", "out[i] = 2 * x[i]")
    prg = lp.add_dtypes(prg, {"x": np.float64})
    x = actx.from_numpy(np.arange(10.0))
    a = actx.call_loopy(prg, x=x)["out"]
    b = actx.call_loopy(prg, x=x)["out"]
    assert a.node is b.node
    np.testing.assert_array_equal(actx.to_numpy(a + b), 4 * np.arange(10.0))


def test_scalars_temporaries_and_casts(actx, eager):
    prg = make_loopy_program(
        "{[i]: 0 <= i < n}",
        ["<> t = x[i] * alpha",
         "out[i] = t * t + k",
         "iout[i] = i"],
        [lp.GlobalArg("x", np.float64, shape=lp.auto),
         lp.GlobalArg("iout", np.int32, shape=lp.auto),
         lp.ValueArg("alpha", np.float64), lp.ValueArg("k", np.int32), ...])
    x = RNG.standard_normal(33)
    _agree(actx, eager, prg, x=x, alpha=0.5, k=3)
    # other scalar values: other callees, the right values
    _agree(actx, eager, prg, x=x, alpha=-2.0, k=1)


def test_an_updated_argument_is_copied(actx, eager):
    prg = make_loopy_program("{[i]: 0 <= i < n}", "y[i] = y[i] + 2 * x[i]",
                             [lp.GlobalArg("x,y", np.float64, shape=lp.auto), ...])
    x, y = RNG.standard_normal(20), RNG.standard_normal(20)
    lazy_y = actx.from_numpy(y)
    got = actx.call_loopy(prg, x=actx.from_numpy(x), y=lazy_y)["y"]
    np.testing.assert_allclose(actx.to_numpy(got), y + 2 * x, rtol=1e-14)
    # the argument itself is unchanged (lazy arrays are values)
    np.testing.assert_array_equal(actx.to_numpy(lazy_y), y)


def test_reductions_to_a_scalar_and_over_two_inames(actx, eager):
    prg = make_loopy_program("{[i, j]: 0 <= i < n and 0 <= j < m}",
                             ["total = sum((i, j), x[i, j] * x[i, j])",
                              "big = max(j, sum(i, x[i, j]))"],
                             [lp.GlobalArg("x", np.float64, shape=lp.auto),
                              lp.GlobalArg("total,big", np.float64, shape=()), ...])
    _agree(actx, eager, prg, x=RNG.standard_normal((9, 4)))


def test_einsum_like_program_with_an_element_loop(actx, eager):
    # the shape of meshmode's element-local operators: out[e, i] = sum_j A[i, j] u[e, j]
    prg = make_loopy_program("{[e, i, j]: 0 <= e < nel and 0 <= i, j < nd}",
                             "out[e, i] = sum(j, mat[i, j] * u[e, j])")
    got = _agree(actx, eager, prg, mat=RNG.standard_normal((4, 4)),
                 u=RNG.standard_normal((100, 4)))
    # the element loop is spread over the device
    code = kernelcore.generate_code_v2(got.calls["out"].callee.kernel).device_code()
    assert "gid(0)" in code and "lid(0)" in code


def test_call_loopy_inside_compile_is_replayed(actx, eager):
    prg = make_loopy_program("{[i]: 0 <= i < n}", "out[i] = a * x[i] + y[i]",
                             [lp.GlobalArg("x,y", np.float64, shape=lp.auto),
                              lp.ValueArg("a", np.float64), ...])

    def step(t, u, v):
        w = actx.call_loopy(prg, x=u, y=v, a=t)["out"]
        return actx.np.sin(w) + t

    compiled = actx.compile(step)
    u, v = RNG.standard_normal(50), RNG.standard_normal(50)
    lu, lv = actx.from_numpy(u), actx.from_numpy(v)
    for t in (0.0, 0.25, 1.5):
        got = actx.to_numpy(compiled(t, lu, lv))
        want = np.sin(_eager_call(eager, prg, x=u, y=v, a=t)["out"]) + t
        np.testing.assert_allclose(got, want, rtol=1e-13)
    assert compiled.trace_count == 1
    with counting() as ran:
        compiled(2.0, lu, lv)
        # replayed: the loopy kernel and the sine, no planning
    assert ran.launches <= 3


def test_frozen_and_numpy_arguments(actx, eager):
    prg = make_loopy_program("{[i]: 0 <= i < n}", "out[i] = x[i] - y[i]")
    x, y = RNG.standard_normal(8), RNG.standard_normal(8)
    frozen = actx.freeze(actx.from_numpy(x))
    got = actx.call_loopy(prg, x=frozen, y=actx.from_numpy(y))["out"]
    np.testing.assert_allclose(actx.to_numpy(got), x - y)


def test_untranslatable_programs_run_eagerly_outside_compile(actx, eager, caplog):
    # an argument laid out in Fortran order is not re-created (lazy arrays are C)
    prg = make_loopy_program("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i, j] = 2 * x[i, j]",
                             [lp.GlobalArg("x", np.float64, shape=("n", "m"), order="F"),
                              lp.GlobalArg("out", np.float64, shape=("n", "m")), ...])
    x = np.asfortranarray(RNG.standard_normal((3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = actx.call_loopy(prg, x=eager.from_numpy(x))["out"]
    assert "eagerly" in caplog.text and "C order" in caplog.text
    np.testing.assert_allclose(actx.to_numpy(out), 2 * x)

    compiled = actx.compile(lambda u: actx.call_loopy(prg, x=u)["out"])
    with pytest.raises(LazyArrayError, match="not translated"):
        compiled(actx.from_numpy(np.ascontiguousarray(x)))


# {{{ the program classes meshmode and grudge pass beyond plain assignments

def _numpy_calls(actx, got):
    return {k: actx.to_numpy(v) for k, v in got.items()}


def test_global_barrier_then_a_scatter(actx, eager):
    # the shape of meshmode's L2 projection (conn_projection_knl): zero the
    # result, a global barrier, then add into rows picked by an index array
    prg = make_loopy_program(
        ["{[i0, j0]: 0 <= i0 < nout and 0 <= j0 < m}",
         "{[e, j]: 0 <= e < nel and 0 <= j < m}"],
        """
        result[i0, j0] = 0 {id=init}
        ... gbarrier {id=barrier, dep=init}
        result[to_el[e], j] = result[to_el[e], j] + 2 * ary[e, j] {id=add, dep=barrier}
        """,
        [lp.GlobalArg("result", np.float64, shape=("nout", "m"), is_input=False),
         lp.GlobalArg("ary", np.float64, shape=("nel", "m")),
         lp.GlobalArg("to_el", np.int32, shape=("nel",)),
         lp.ValueArg("nout", np.int32), ...])
    ary = RNG.standard_normal((6, 3))
    to_el = np.array([4, 0, 7, 2, 4, 1], dtype=np.int32)
    got = _agree(actx, eager, prg, ary=ary, to_el=to_el, nout=9)
    want = np.zeros((9, 3))
    np.add.at(want, to_el, 2 * ary)
    np.testing.assert_allclose(actx.to_numpy(got["result"]), want, rtol=1e-14)
    # two device kernels (one per side of the barrier) in one external call,
    # each spread over the device: the zeroing over rows, the scatter (rows
    # not known to be distinct) over columns, looping over the elements
    code = kernelcore.generate_code_v2(got.calls["result"].callee.kernel).device_code()
    first, second = code.split("__kernel")[1:]
    assert "gid(0)" in first and "gid(0)" in second and "for (int e = 0" in second

    compiled = actx.compile(lambda a: actx.call_loopy(prg, ary=a, to_el=to_el, nout=9)["result"])
    lazy_ary = actx.from_numpy(ary)
    np.testing.assert_allclose(actx.to_numpy(compiled(lazy_ary)), want, rtol=1e-14)
    with counting() as ran:
        np.testing.assert_allclose(actx.to_numpy(compiled(2 * lazy_ary)), 2 * want, rtol=1e-14)
        # replayed: the doubling and the program's two kernels
    assert ran.launches <= 3


def test_meshmode_concurrent_element_loops_are_spread(actx, eager):
    # meshmode tags the element loop of its programs as free of dependencies
    # between elements (its own context parallelizes it): so does this one
    from meshmode.transform_metadata import ConcurrentElementInameTag
    prg = make_loopy_program(
        ["{[i0, j0]: 0 <= i0 < nout and 0 <= j0 < m}",
         "{[e, j]: 0 <= e < nel and 0 <= j < m}"],
        """
        result[i0, j0] = 0 {id=init}
        ... gbarrier {id=barrier, dep=init}
        result[to_el[e], j] = result[to_el[e], j] + ary[e, j] * ary[e, j] {dep=barrier}
        """,
        [lp.GlobalArg("result", np.float64, shape=("nout", "m"), is_input=False),
         lp.GlobalArg("ary", np.float64, shape=("nel", "m")),
         lp.GlobalArg("to_el", np.int32, shape=("nel",)),
         lp.ValueArg("nout", np.int32), ...])
    prg = lp.tag_inames(prg, {"e": ConcurrentElementInameTag(),
                              "i0": ConcurrentElementInameTag()})
    ary = RNG.standard_normal((150, 3))
    to_el = RNG.permutation(200)[:150].astype(np.int32)
    got = _agree(actx, eager, prg, ary=ary, to_el=to_el, nout=200)
    want = np.zeros((200, 3))
    want[to_el] = ary * ary
    np.testing.assert_allclose(actx.to_numpy(got["result"]), want, rtol=1e-14)
    code = kernelcore.generate_code_v2(got.calls["result"].callee.kernel).device_code()
    assert all("gid(0)" in k for k in code.split("__kernel")[1:])


def test_atomic_updates_spread_over_the_device(actx, eager):
    prg = make_loopy_program(
        "{[i]: 0 <= i < n}",
        "hist[bins[i]] = hist[bins[i]] + w[i] {atomic}",
        [lp.GlobalArg("hist", np.int32, shape=("nbins",), for_atomic=True),
         lp.GlobalArg("bins,w", np.int32, shape=("n",)), lp.ValueArg("nbins", np.int32), ...])
    bins = RNG.integers(0, 5, 300).astype(np.int32)
    w = RNG.integers(-3, 10, 300).astype(np.int32)
    hist = RNG.integers(0, 4, 5).astype(np.int32)
    got = _agree(actx, eager, prg, hist=hist, bins=bins, w=w)
    want = hist.copy()
    np.add.at(want, bins, w)
    np.testing.assert_array_equal(actx.to_numpy(got["hist"]), want)
    # the loop over i runs in parallel: only hist is written, atomically
    code = kernelcore.generate_code_v2(got.calls["hist"].callee.kernel).device_code()
    assert "gid(0)" in code and "atomic" in code


def test_argmax_style_reduction_with_two_outputs(actx, eager):
    prg = make_loopy_program("{[i, j]: 0 <= i < n and 0 <= j < m}",
                             ["mx[i], at[i] = argmax(j, a[i, j], j) {id=am}",
                              "lo[i], at_lo[i] = argmin(j, a[i, j], j)",
                              "shifted[i] = at[i] + 1 {dep=am}"],
                             [lp.GlobalArg("a", np.float64, shape=("n", "m")),
                              lp.GlobalArg("at", np.int32, shape=("n",), is_input=False), ...])
    a = RNG.standard_normal((40, 7))
    got = _numpy_calls(actx, _agree(actx, eager, prg, a=a))
    np.testing.assert_array_equal(got["mx"], a.max(axis=1))
    np.testing.assert_array_equal(got["at"], a.argmax(axis=1))
    np.testing.assert_array_equal(got["lo"], a.min(axis=1))
    np.testing.assert_array_equal(got["at_lo"], a.argmin(axis=1))
    np.testing.assert_array_equal(got["shifted"], a.argmax(axis=1) + 1)
    # the index in the kernel's index type, as loopy's
    assert got["at_lo"].dtype == _eager_call(eager, prg, a=a)["at_lo"].dtype


def test_a_kernel_calling_a_kernel(actx, eager):
    child = lp.make_function(
        "{[j]: 0 <= j < 4}", "b[j] = 2 * a[j] + c",
        [lp.GlobalArg("a,b", np.float64, shape=(4,)), lp.ValueArg("c", np.float64)],
        name="child", lang_version=(2018, 2))
    parent = make_loopy_program(
        "{[i, j]: 0 <= i < n and 0 <= j < 4}",
        "[j]: out[i, j] = child([j]: x[i, j], 1.5)",
        [lp.GlobalArg("x,out", np.float64, shape=("n", 4)), ...])
    prg = lp.merge([parent, child])
    x = RNG.standard_normal((30, 4))
    got = _agree(actx, eager, prg, x=x)
    np.testing.assert_allclose(actx.to_numpy(got["out"]), 2 * x + 1.5, rtol=1e-15)
    # the callee is a function of the generated source, called per row
    code = kernelcore.generate_code_v2(got.calls["out"].callee.kernel).device_code()
    assert "child(" in code

# }}}
