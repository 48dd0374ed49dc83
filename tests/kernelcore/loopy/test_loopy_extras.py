"""Issue 40: more of loopy's forms that its tests use: the options
``annotate_inames`` and ``build_options`` (flags for the C compiler),
``loopy.symbolic.is_expression_equal``, reductions over variables, pymbolic's
NaN nodes, floating-point conditions, declared outputs nothing writes, views
with offsets passed for arrays of any offset."""

import logging

import numpy as np
import pymbolic.primitives as prim
import pyopencl as cl
import pyopencl.array as cla
import pytest

import kernelcore as lp
from kernelcore.diagnostic import KernelcoreError, LoopyIndexError
from kernelcore.symbolic import is_expression_equal


def test_annotate_inames_is_accepted(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 2*a[i]", options="annotate_inames")
    assert knl.default_entrypoint.options.annotate_inames
    a = np.arange(5.0)
    _, (b,) = knl(queue, a=a)
    np.testing.assert_allclose(b, 2 * a)


def test_build_options_reach_the_c_compiler():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 2*a[i]", target=lp.ExecutableCTarget())
    a = np.arange(5.0)
    ok = lp.set_options(knl, build_options=["-Werror", "-DUNUSED=1"])
    _, (b,) = ok(a=a)
    np.testing.assert_allclose(b, 2 * a)
    broken = lp.set_options(knl, build_options=["-fno-such-flag-anywhere"])
    with pytest.raises(KernelcoreError):
        broken(a=a)


def test_build_options_must_be_strings():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "b[i] = 2*a[i]")
    with pytest.raises(KernelcoreError):
        lp.set_options(knl, build_options="-O3")


def test_is_expression_equal():
    x, y = prim.Variable("x"), prim.Variable("y")
    assert is_expression_equal(x + 2, 2 + x)
    assert is_expression_equal((x + 2)**2, x**2 + 4*x + 4)
    assert is_expression_equal((x + y)**2, x**2 + 2*x*y + y**2)
    assert not is_expression_equal(x + 1, x + 2)
    assert not is_expression_equal(x, None)
    assert is_expression_equal(3, 3) and not is_expression_equal(3, 4)


def test_reduction_over_variables(queue):
    k = prim.Variable("k")
    red = lp.Reduction("sum", k, prim.Variable("a")[k], allow_simultaneous=True)
    assert red.inames == ("k",)
    assert lp.Reduction("sum", (k, prim.Variable("j")), 1).inames == ("k", "j")
    knl = lp.make_kernel("{[k]: 0<=k<5}", [lp.Assignment("s", red)],
                         [lp.GlobalArg("a", np.float64, shape=(5,)), "..."])
    a = np.arange(5.0)
    _, (s,) = knl(queue, a=a)
    assert float(s) == a.sum()


@pytest.mark.parametrize("target", [lp.PyOpenCLTarget, lp.ExecutableCTarget])
def test_nan_nodes_and_floating_conditions(queue, target):
    var = prim.Variable
    knl = lp.make_kernel(
        "{:}",
        [lp.Assignment(var("e"), prim.NaN(np.float32)),
         lp.Assignment(var("f"), var("isnan")(prim.NaN(None))),
         lp.Assignment(var("g"), prim.NaN(np.complex64)),
         lp.Assignment(var("t"), 0.5),
         lp.Assignment(var("y"), prim.If(var("t"), 1729, 1.5)),
         lp.Assignment(var("z"), prim.If(0.0, 1, 2))],
        [lp.GlobalArg("e, f, g, y, z", shape=()), lp.TemporaryVariable("t"), ...],
        seq_dependencies=True, target=target())
    knl = lp.set_options(knl, return_dict=True)
    _, out = knl(queue) if target is lp.PyOpenCLTarget else knl()
    out = {k: np.asarray(getattr(v, "get", lambda v=v: v)()) for k, v in out.items()}
    assert out["e"].dtype == np.float32 and np.isnan(out["e"])
    assert out["f"] == 1
    assert out["g"].dtype == np.complex64 and np.isnan(out["g"])
    assert out["y"] == 1729 and out["z"] == 2


def test_declared_output_without_writes_is_returned(queue):
    knl = lp.make_kernel("{[i]: i > 0 and i < 0}", [],
                         [lp.GlobalArg("a", shape=(0,), dtype=np.float32,
                                       is_output=True, is_input=False)])
    _, (out,) = knl(queue)
    assert out.shape == (0,) and out.dtype == np.float32


def test_view_with_offset_read_by_kernel_of_any_offset(queue):
    knl = lp.make_kernel("{[i]: 0<=i<3}", "y[i] = 2*x[i]",
                         [lp.GlobalArg("x", np.int32, shape=(3,), offset=lp.auto), "..."])
    base = cla.arange(queue, 10, dtype=np.int32)
    _, (y,) = knl(queue, x=base[4:7])
    np.testing.assert_array_equal(y.get(), [8, 10, 12])
    exact = lp.make_kernel("{[i]: 0<=i<3}", "y[i] = 2*x[i]",
                           [lp.GlobalArg("x", np.int32, shape=(3,)), "..."])
    with pytest.raises(KernelcoreError, match="offset"):
        exact(queue, x=base[4:7])


def test_floor_division_helpers_named_as_loopy(queue):
    signed = lp.make_kernel("{[i]: 0<=i<10}", "out[i] = ((i-1)*(i-2))//2 + (i-5) % 3")
    code = lp.generate_code_v2(signed).device_code()
    assert "loopy_floor_div_int32(" in code and "loopy_mod_int32(" in code
    i = np.arange(10)
    _, (out,) = signed(queue)
    np.testing.assert_array_equal(out, (i-1)*(i-2)//2 + (i-5) % 3)
    # a product of non-negative factors needs no helper
    plain = lp.make_kernel("{[i]: 0<=i<10}", "out[i] = (i*(i+1))//2")
    assert "loopy_floor_div" not in lp.generate_code_v2(plain).device_code()
    _, (out,) = plain(queue)
    np.testing.assert_array_equal(out, (i*(i+1))//2)


@pytest.mark.parametrize("order", ["C", "F"])
def test_indexof_is_the_linear_offset(queue, order):
    knl = lp.make_kernel("{[i,j]: 0<=i<3 and 0<=j<5}", "out[i,j] = indexof(out[i,j])",
                         [lp.GlobalArg("out", np.int32, shape=(3, 5), order=order,
                                       is_input=False)])
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(np.asarray(out).ravel(order=order), np.arange(15))


@pytest.mark.parametrize("target", [lp.PyOpenCLTarget, lp.ExecutableCTarget])
def test_global_temporary_with_initializer_is_a_constant(queue, target):
    table = np.array([[1.5, -2.0, 3.25], [4.0, 0.5, -1.0]], dtype=np.float32)
    knl = lp.make_kernel(
        "{[i, j]: 0<=i<2 and 0<=j<3}", "out[i, j] = 2*b[i, j]",
        [lp.GlobalArg("out", np.float32, shape=(2, 3)),
         lp.TemporaryVariable("b", np.float32, shape=(2, 3), initializer=table,
                              read_only=True, address_space=lp.AddressSpace.GLOBAL)],
        target=target())
    code = lp.generate_code_v2(knl).device_code()
    qualifier = "__constant" if target is lp.PyOpenCLTarget else "static const"
    assert f"{qualifier} float b[6] = " in code
    assert not lp.generate_code_v2(knl).global_temporaries
    _, (out,) = knl(queue) if target is lp.PyOpenCLTarget else knl()
    np.testing.assert_allclose(np.asarray(getattr(out, "get", lambda: out)()), 2 * table)


def test_global_temporary_with_initializer_is_not_written():
    knl = lp.make_kernel(
        "{[i]: 0<=i<3}", "b[i] = 1\nout[i] = b[i]",
        [lp.GlobalArg("out", np.float32, shape=(3,)),
         lp.TemporaryVariable("b", np.float32, shape=(3,), initializer=np.ones(3, np.float32),
                              address_space=lp.AddressSpace.GLOBAL)])
    with pytest.raises(KernelcoreError, match="constant"):
        lp.generate_code_v2(knl)


def test_c_kernel_reused_says_so(caplog):
    knl = lp.make_kernel("{[i]: 0<=i<4}", "a[i] = b[i]",
                         [lp.GlobalArg("a, b", np.int32, shape=(4,))],
                         target=lp.ExecutableCTarget(), name="reused_c")
    b = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(knl(b=b)[1][0], b)
    with caplog.at_level(logging.DEBUG, logger="kernelcore"):
        np.testing.assert_array_equal(knl.copy()(b=b + 1)[1][0], b + 1)
    assert "Kernel reused_c retrieved from cache" in caplog.text


def test_many_arguments_with_an_argument_size_limit(queue):
    count = 100
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}", [f"c{k}[i] = a{k}[i] + b{k}[i]" for k in range(count)],
        [lp.GlobalArg(f"{name}{k}", shape=lp.auto, dtype=np.float32)
         for name in "abc" for k in range(count)] + [...],
        target=lp.PyOpenCLTarget(limit_arg_size_nbytes=20), options={"return_dict": True})
    args = {f"{name}{k}": np.full(7, (k if name == "a" else 1000 * k), np.float32)
            for name in "ab" for k in range(count)}
    _, res = knl(queue, **args)
    for k in range(count):
        np.testing.assert_array_equal(res[f"c{k}"], np.full(7, 1001 * k, np.float32))


def test_constant_offset_in_elements(queue):
    knl = lp.make_kernel("{[i]: 0<=i<7}", "y[i] = 2*y[i]",
                         [lp.GlobalArg("y", np.float64, offset=3, shape=10)])
    assert "y[3 + i]" in lp.generate_code_v2(knl).device_code().replace("i + 3", "3 + i")
    y = np.arange(10.0)
    _, (out,) = knl(queue, y=y)
    np.testing.assert_array_equal(out, np.r_[np.arange(3.0), 2 * np.arange(3.0, 10.0)])


def test_callee_of_any_offset_called_on_an_offset_array(queue):
    dosify = lp.make_function("{[i]: 0<=i<7}", "y[i] = 2*y[i]",
                              [lp.GlobalArg("y", offset=lp.auto)], name="dosify")
    caller = lp.make_kernel("{[i]: 0<=i<7}", "[i]: y[i] = dosify([i]: y[i])",
                            [lp.GlobalArg("y", np.int64, offset=3, shape=10)])
    knl = lp.merge([caller, dosify])
    y = np.arange(10)
    _, (out,) = knl(queue, y=y)
    np.testing.assert_array_equal(out, np.r_[np.arange(3), 2 * np.arange(3, 10)])


def test_callee_bounds_under_the_callers_parameters(queue):
    arange = lp.make_function("{[i]: 0<=i<n}", "y[i] = i", name="arange")
    caller = lp.make_kernel("{[i]: 0<=i<20}", "[i]: Y[i] = arange(N)",
                            [lp.GlobalArg("Y", np.int32, shape=(20,)),
                             lp.ValueArg("N", dtype=np.int32)], name="epoint")
    knl = lp.merge([caller, arange])
    with pytest.raises(LoopyIndexError):
        lp.generate_code_v2(knl)
    knl = knl.with_kernel(lp.assume(knl.default_entrypoint, "N <= 20"))
    _, (y,) = knl(queue, N=15, Y=np.full(20, -1, np.int32))
    np.testing.assert_array_equal(y, np.r_[np.arange(15), np.full(5, -1)])


def test_fixed_parameters_fold_temporary_shapes(queue):
    knl = lp.make_kernel("{[a, i]: 0<=a<=deg and 0<=i<3}",
                         """
                         <> t[a, i] = a + i
                         out[a, i] = 2*t[a, i]
                         """, [lp.GlobalArg("out", np.int32, shape=("deg+1", 3)), "..."])
    knl = lp.fix_parameters(knl, deg=4)
    entry = knl.default_entrypoint
    assert entry.temporary_variables["t"].shape == (5, 3)
    assert entry.arg_dict["out"].shape == (5, 3)
    _, (out,) = knl(queue)
    np.testing.assert_array_equal(out, 2 * (np.arange(5)[:, None] + np.arange(3)))


def test_allocator_makes_outputs_and_global_temporaries(queue):
    allocated = []

    def allocator(nbytes):
        allocated.append(nbytes)
        return cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, nbytes)

    knl = lp.make_kernel("{[i]: 0<=i<10}",
                         """
                         t[i] = 2*i  {id=w}
                         ... gbarrier  {id=b, dep=w}
                         y[i] = t[9 - i]  {dep=b}
                         """,
                         [lp.TemporaryVariable("t", np.int32, shape=(10,),
                                               address_space=lp.AddressSpace.GLOBAL),
                          lp.GlobalArg("y", np.int32, shape=(10,))])
    _, (y,) = knl(queue, allocator=allocator)
    np.testing.assert_array_equal(y.get(), 2 * np.arange(10)[::-1])
    assert sorted(allocated) == [40, 40]


def test_vector_axis_first_and_indexof_vec(queue):
    knl = lp.make_kernel("{[i,j,k]: 0<=i,j,k<4}", "out[i,j,k] = indexof_vec(out[i,j,k])",
                         [lp.GlobalArg("out", np.int32, shape=lp.auto, is_input=False)])
    knl = lp.tag_inames(knl, {"i": "vec"})
    knl = lp.tag_data_axes(knl, "out", "vec,c,c")
    assert knl.default_entrypoint.arg_dict["out"].element_strides() == (1, 16, 4)
    _, (out,) = knl(queue)
    assert out.strides == (4, 64, 16)       # allocated in the declared layout
    raw = np.empty(64, np.int32)
    cl.enqueue_copy(queue, raw, out.base_data)
    np.testing.assert_array_equal(raw, np.arange(64))   # each element's own offset
