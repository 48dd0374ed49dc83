"""Kernels calling kernels as loopy compiles them (issue 20): a callee kernel
becomes a device function of the generated source, called from the caller's
kernel with pointers into the caller's arrays; ``inline_callable_kernel``
inlines it instead. Both give NumPy's results."""

import numpy as np
import pytest

import kernelcore as lp
from kernelcore.callable_kernel import CallableKernel


def _child(dtype=np.float32):
    return lp.make_function(
        "{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
        [lp.GlobalArg("a", dtype, shape=(4,)), lp.GlobalArg("b", dtype, shape=(4,))],
        name="child")


def _rows_parent():
    return lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}", "[j]: out[i, j] = child([j]: x[i, j])",
        [lp.GlobalArg("x", np.float32, shape=("n", 4)),
         lp.GlobalArg("out", np.float32, shape=("n", 4)), ...], name="parent")


def _both_ways(queue, tu, callee, **kwargs):
    """The outputs of *tu* run with *callee* as a function and inlined."""
    as_function = tu(queue, **kwargs)[1]
    inlined = lp.inline_callable_kernel(tu, callee)
    assert callee not in inlined.callables_table
    as_inlined = inlined(queue, **kwargs)[1]
    for a, b in zip(as_function, as_inlined):
        np.testing.assert_allclose(a, b)
    return as_function


def _code(tu, **dtypes):
    return lp.generate_code_v2(lp.add_dtypes(tu, dtypes)).device_code()


def test_callee_is_a_device_function(queue):
    tu = lp.merge([_rows_parent(), _child()])
    code = _code(tu, x=np.float32)
    assert "static void child(__global float const *__restrict__ a, " \
        "__global float *__restrict__ b)" in code
    assert "child(&x[4 * i], &out[4 * i]);" in code
    assert code.count("__kernel") == 1
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    out, = _both_ways(queue, tu, "child", x=x)
    np.testing.assert_allclose(out, 2 * x + 1)


def test_inline_callable_kernel_inlines():
    tu = lp.inline_callable_kernel(lp.merge([_rows_parent(), _child()]), "child")
    code = _code(tu, x=np.float32)
    assert "static void child" not in code
    assert set(tu.callables_table) == {"parent"}


def test_strided_sub_array_gets_a_stride_argument(queue):
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}", "[j]: out[j, i] = child([j]: x[j, i])",
        [lp.GlobalArg("x", np.float32, shape=(4, "n")),
         lp.GlobalArg("out", np.float32, shape=(4, "n")), ...], name="parent")
    tu = lp.merge([parent, _child()])
    code = _code(tu, x=np.float32)
    # the column's stride n is passed to the callee, as loopy's with_added_arg does
    assert "int const _kc_arg_0)" in code
    assert "child(&x[i], &out[i], n);" in code
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out, = _both_ways(queue, tu, "child", x=x)
    np.testing.assert_allclose(out, 2 * x + 1)


def test_callee_hardware_axes_join_the_caller_grid(queue):
    tu = lp.merge([_rows_parent(), _child()])
    tu = lp.tag_inames(tu, {"i": "g.0"})
    tu = tu.with_kernel(lp.tag_inames(tu["child"], {"j": "l.0"}))
    ck = tu.callables_table["child"]
    assert ck.get_used_hw_axes(tu.callables_table) == (frozenset(), frozenset({0}))
    groups, local = ck.get_hw_axes_sizes({}, None, tu.callables_table)
    assert not groups and str(local[0]).endswith("{ [(4)] }")
    code = _code(tu, x=np.float32)
    assert "reqd_work_group_size(4, 1, 1)" in code
    assert "lid(0)" in code.split("static void child")[1].split("__kernel")[0]
    x = np.random.default_rng(1).random((6, 4)).astype(np.float32)
    out, = _both_ways(queue, tu, "child", x=x)
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)


def test_callee_axes_may_not_clash_with_the_call_site():
    tu = lp.merge([_rows_parent(), _child()])
    tu = lp.tag_inames(tu, {"i": "l.0"})
    tu = tu.with_kernel(lp.tag_inames(tu["child"], {"j": "l.0"}))
    tu = lp.fix_parameters(tu, n=8)
    with pytest.raises(lp.CodeGenerationError, match="local axis 0"):
        _code(tu, x=np.float32)


def test_scalar_arguments_and_several_outputs(queue):
    sumdiff = lp.make_function(
        "{:}", """
        s = x + y
        d = x - y
        """,
        [lp.ValueArg("x", np.float64), lp.ValueArg("y", np.float64),
         lp.GlobalArg("s", np.float64, shape=()), lp.GlobalArg("d", np.float64, shape=())],
        name="sumdiff")
    parent = lp.make_kernel(
        "{[i]: 0<=i<n}", """
        t, u = sumdiff(x[i], 2*y[i])  {id=call}
        a[i] = t * u  {dep=call}
        """, [lp.TemporaryVariable("t", np.float64), lp.TemporaryVariable("u", np.float64),
              lp.GlobalArg("x", np.float64, shape="n"),
              lp.GlobalArg("y", np.float64, shape="n"),
              lp.GlobalArg("a", np.float64, shape="n"), ...], name="parent")
    tu = lp.merge([parent, sumdiff])
    code = _code(tu)
    assert "static void sumdiff(double const x, double const y, double *__restrict__ s, " \
        "double *__restrict__ d)" in code
    assert "sumdiff(x[i], 2.0 * y[i], &t, &u);" in code
    x = np.linspace(-1, 1, 7)
    y = np.linspace(0, 3, 7)
    a, = _both_ways(queue, tu, "sumdiff", x=x, y=y)
    np.testing.assert_allclose(a, (x + 2 * y) * (x - 2 * y))


def test_callee_with_a_size_argument_and_a_grandchild(queue):
    grandchild = lp.make_function(
        "{[k]: 0<=k<m}", "w[k] = v[k] * v[k]",
        [lp.ValueArg("m", np.int32), lp.GlobalArg("v", np.float64, shape=("m",)),
         lp.GlobalArg("w", np.float64, shape=("m",))], name="square")
    child = lp.make_function(
        "{[k]: 0<=k<m}", """
        [k]: tmp[k] = square(m, [k]: v[k])  {id=sq}
        w[k] = tmp[k] + 1  {dep=sq}
        """,
        [lp.ValueArg("m", np.int32), lp.GlobalArg("v", np.float64, shape=("m",)),
         lp.GlobalArg("w", np.float64, shape=("m",)),
         lp.TemporaryVariable("tmp", np.float64, shape=(5,),
                              address_space=lp.AddressSpace.PRIVATE)],
        name="sq_plus_one", assumptions="0 <= m <= 5")
    parent = lp.make_kernel(
        "{[i, k]: 0<=i<n and 0<=k<5}", "[k]: y[i, k] = sq_plus_one(5, [k]: x[i, k])",
        [lp.GlobalArg("x", np.float64, shape=("n", 5)),
         lp.GlobalArg("y", np.float64, shape=("n", 5)), ...], name="parent")
    tu = lp.merge([parent, child, grandchild])
    assert tu.callables_table["parent"].get_called_callables(tu.callables_table) \
        == frozenset({"sq_plus_one", "square"})
    assert tu.callables_table["parent"].get_called_callables(
        tu.callables_table, recursive=False) == frozenset({"sq_plus_one"})
    code = _code(tu)
    assert "static void square(" in code and "static void sq_plus_one(" in code
    assert code.index("static void square(") < code.index("static void sq_plus_one(")
    x = np.random.default_rng(2).random((3, 5))
    _, (y,) = tu(queue, x=x)
    np.testing.assert_allclose(y, x * x + 1)
    inlined = lp.inline_callable_kernel(lp.inline_callable_kernel(tu, "sq_plus_one"),
                                        "square")
    np.testing.assert_allclose(inlined(queue, x=x)[1][0], y)


def test_callee_with_a_local_temporary_is_inlined(queue):
    child = lp.make_function(
        "{[j]: 0<=j<4}", """
        tmp[j] = a[j]  {id=w}
        b[j] = 2*tmp[3 - j]  {dep=w}
        """,
        [lp.GlobalArg("a", np.float32, shape=(4,)), lp.GlobalArg("b", np.float32, shape=(4,)),
         lp.TemporaryVariable("tmp", np.float32, shape=(4,),
                              address_space=lp.AddressSpace.LOCAL)], name="child")
    child = child.with_kernel(lp.tag_inames(child["child"], {"j": "l.0"}))
    tu = lp.tag_inames(lp.merge([_rows_parent(), child]), {"i": "g.0"})
    code = _code(tu, x=np.float32)
    assert "static void child" not in code          # a __local array needs the kernel
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    _, (out,) = tu(queue, x=x)
    np.testing.assert_allclose(out, 2 * x[:, ::-1])


def test_callee_in_an_expression_is_an_error():
    ck = lp.merge([_rows_parent(), _child()]).callables_table["child"]
    assert isinstance(ck, CallableKernel)
    with pytest.raises(lp.KernelcoreError, match="inside an expression"):
        ck.emit_call(None, None, None)


def test_with_descrs_specializes_the_callee_strides():
    from kernelcore.kernel.function_interface import (
        ArrayArgDescriptor,
        FixedStrideArrayDimTag,
        ValueArgDescriptor,
    )
    tu = lp.merge([_rows_parent(), _child()])
    ck = tu.callables_table["child"]
    d = ArrayArgDescriptor((4,), lp.AddressSpace.GLOBAL, (FixedStrideArrayDimTag(7),))
    new, table = ck.with_descrs({0: d, -1: d}, tu.callables_table)
    assert table is tu.callables_table
    assert new.subkernel.arg_dict["a"].element_strides() == (7,)
    assert new.arg_id_to_descr[0] == d
    assert not new.is_ready_for_codegen() or new.arg_id_to_descr is not None
    with pytest.raises(lp.KernelcoreError, match="scalar"):
        ck.with_descrs({0: ValueArgDescriptor()}, {})
    added, name = new.with_added_arg(lp.NumpyType(np.int32), ValueArgDescriptor())
    assert name == "_kc_arg_0"
    assert added.subkernel.arg_dict[name].dtype == np.int32
    assert added.arg_id_to_dtype[1] == lp.NumpyType(np.int32)
    # an array: loopy's shape, strides and address space from the descriptor
    row = ArrayArgDescriptor((3, 4), lp.AddressSpace.GLOBAL,
                             (FixedStrideArrayDimTag(8), FixedStrideArrayDimTag(2)))
    more, array_name = added.with_added_arg(lp.NumpyType(np.float32), row)
    assert array_name == "_kc_arg_1"
    arg = more.subkernel.arg_dict[array_name]
    assert isinstance(arg, lp.ArrayArg) and arg.dtype == np.float32
    assert tuple(arg.shape) == (3, 4) and arg.element_strides() == (8, 2)
    assert more.arg_id_to_descr[2] == row and more.arg_id_to_dtype[2] == lp.NumpyType(
        np.float32)
    assert [a.name for a in more.subkernel.args][-2:] == ["_kc_arg_0", "_kc_arg_1"]
    with pytest.raises(lp.KernelcoreError, match="not an argument descriptor"):
        more.with_added_arg(lp.NumpyType(np.float32), "row")
    assert ValueArgDescriptor().map_expr(lambda e: e) == ValueArgDescriptor()
    assert ValueArgDescriptor().depends_on() == frozenset()


def test_statistics_count_the_callee_work():
    tu = lp.add_dtypes(lp.merge([_rows_parent(), _child()]), {"x": np.float32})
    ops = lp.get_op_map(tu, subgroup_size=32)
    mul = ops.filter_by(name="mul").eval_and_sum({"n": 10})
    assert mul == 10 * 4


def test_c_target_calls_the_function():
    child = lp.make_function(
        "{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
        [lp.GlobalArg("a", np.float64, shape=(4,)), lp.GlobalArg("b", np.float64, shape=(4,))],
        name="child", target=lp.ExecutableCTarget())
    parent = lp.make_kernel(
        "{[i, j]: 0<=i<n and 0<=j<4}", "[j]: out[i, j] = child([j]: x[i, j])",
        [lp.GlobalArg("x", np.float64, shape=("n", 4)),
         lp.GlobalArg("out", np.float64, shape=("n", 4)), ...],
        name="parent", target=lp.ExecutableCTarget())
    tu = lp.merge([parent, child])
    code = _code(tu)
    assert "static void child(double const *restrict a, double *restrict b)" in code
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    _, (out,) = tu(None, x=x)
    np.testing.assert_allclose(out, 2 * x + 1)


def test_callee_with_a_global_barrier_is_inlined(queue):
    ones_and_zeros = lp.make_function(
        "{[i, j]: 0<=i<6 and 0<=j<3}",
        """
        x[i] = 0.0
        ...gbarrier
        x[j] = 1.0
        """, seq_dependencies=True, name="ones_and_zeros")
    tu = lp.merge([lp.make_kernel("{[i]: 0<=i<6}", "[i]: y[i] = ones_and_zeros()",
                                  [lp.GlobalArg("y", np.float64, shape=(6,))]),
                   ones_and_zeros])
    code = lp.generate_code_v2(tu).device_code()
    assert "static void ones_and_zeros" not in code
    _, (y,) = tu(queue)
    np.testing.assert_array_equal(y, [1, 1, 1, 0, 0, 0])


@pytest.mark.parametrize("inline", [False, True])
def test_calls_between_kernels_of_different_index_types_are_refused(inline):
    doublify = lp.make_function("{[i]: 0<=i<10}", "x[i] = x[i] * 2", name="doublify",
                                index_dtype=np.int64)
    tu = lp.merge([lp.make_kernel("{[i]: 0<=i<10}", "[i]: X[i] = doublify([i]: X[i])",
                                  [lp.GlobalArg("X", np.float32, shape=(10,))]),
                   doublify])
    with pytest.raises(lp.LoopyError, match="index_dtype"):
        if inline:
            lp.inline_callable_kernel(tu, "doublify")
        else:
            lp.generate_code_v2(tu)
