"""Registered callables: the function-interface spec's CBLAS gemv example, scalar
callables inside expressions, and the errors around them."""

import ctypes.util
import os

import numpy as np
import pytest
from pymbolic import var

import kernelcore as lp
from kernelcore.diagnostic import KernelcoreError


class CBLASGEMV(lp.ScalarCallable):
    """The spec's example: ``y[:] = gemv(A[:, :], x[:])`` becomes a cblas call."""

    def with_types(self, arg_id_to_dtype, callables_table):
        mat_dtype = arg_id_to_dtype.get(0)
        vec_dtype = arg_id_to_dtype.get(1)
        if mat_dtype is None or vec_dtype is None:
            return self, callables_table
        if mat_dtype != vec_dtype:
            raise KernelcoreError("GEMV requires same dtypes for matrix and vector")
        names = {np.float32: "cblas_sgemv", np.float64: "cblas_dgemv"}
        if vec_dtype.numpy_dtype.type not in names:
            raise KernelcoreError("GEMV is only supported for float32 and float64")
        return (self.copy(name_in_target=names[vec_dtype.numpy_dtype.type],
                          arg_id_to_dtype={0: vec_dtype, 1: vec_dtype, -1: vec_dtype}),
                callables_table)

    def with_descrs(self, arg_id_to_descr, callables_table):
        mat, vec, res = (arg_id_to_descr.get(k) for k in (0, 1, -1))
        if mat is None or vec is None or res is None:
            return self, callables_table
        assert mat.shape[1] == vec.shape[0]
        assert mat.shape[0] == res.shape[0]
        assert len(vec.shape) == len(res.shape) == 1
        assert vec.dim_tags[0].stride == 1
        assert mat.dim_tags[1].stride == 1
        assert res.dim_tags[0].stride == 1
        return self.copy(arg_id_to_descr=arg_id_to_descr), callables_table

    def emit_call_insn(self, insn, target, expression_to_code_mapper):
        m, n = self.arg_id_to_descr[0].shape
        ecm = expression_to_code_mapper
        mat, vec = insn.expression.parameters
        result, = insn.assignees
        params = [var("CblasRowMajor"), var("CblasNoTrans"), m, n, 1, ecm(mat).expr,
                  n, ecm(vec).expr, 1, 0, ecm(result).expr, 1]
        return var(self.name_in_target)(*params), False

    def generate_preambles(self, target):
        assert isinstance(target, lp.CTarget)
        yield ("99_cblas", "#include <cblas.h>")


def gemv_kernel(n, dtype, target):
    knl = lp.make_kernel(
        "{:}", "y[:] = gemv(A[:, :], x[:])",
        [lp.GlobalArg("A", dtype=dtype, shape=(n, n)),
         lp.GlobalArg("x", dtype=dtype, shape=(n,)),
         lp.GlobalArg("y", shape=(n,)), ...],
        target=target)
    return lp.register_callable(knl, "gemv", CBLASGEMV(name="gemv"))


@pytest.mark.parametrize("dtype,fname", [(np.float64, "cblas_dgemv"),
                                         (np.float32, "cblas_sgemv")])
def test_gemv_generates_cblas_call(dtype, fname):
    code = lp.generate_code_v2(gemv_kernel(10, dtype, lp.CTarget())).device_code()
    assert code.startswith("#include <cblas.h>")
    assert (f"{fname}(CblasRowMajor, CblasNoTrans, 10, 10, 1, A, 10, x, 1, 0, y, 1);"
            in code)


def test_gemv_result_type_comes_from_the_callable():
    knl = lp.infer_types(gemv_kernel(10, np.float32, lp.CTarget()))
    assert knl.arg_dict["y"].dtype == np.float32


def test_statistics_refuse_opaque_calls():
    knl = gemv_kernel(10, np.float64, lp.CTarget())
    with pytest.raises(KernelcoreError, match="opaque"):
        lp.get_op_map(knl)


def test_gemv_rejects_integer_types():
    with pytest.raises(KernelcoreError, match="only supported"):
        lp.generate_code_v2(gemv_kernel(4, np.int32, lp.CTarget()))


def _has_cblas() -> bool:
    return ctypes.util.find_library("openblas") is not None and any(
        os.path.exists(p) for p in ("/usr/include/cblas.h",
                                    "/usr/include/x86_64-linux-gnu/cblas.h",
                                    "/usr/include/openblas/cblas.h"))


@pytest.mark.skipif(not _has_cblas(), reason="needs OpenBLAS with cblas.h "
                    "(scripts/bootstrap.sh installs libopenblas-dev)")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gemv_runs_through_openblas(dtype):
    n = 37
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    x = rng.standard_normal(n).astype(dtype)
    knl = gemv_kernel(n, dtype, lp.ExecutableCTarget(libraries=("openblas",)))
    _, (y,) = knl(None, A=a, x=x)
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, a @ x, rtol=rtol, atol=rtol)


class Cube(lp.ScalarCallable):
    """``cube(x)``: a scalar callable with a helper function in the preamble."""

    def with_types(self, arg_id_to_dtype, callables_table):
        t = arg_id_to_dtype.get(0)
        if t is None:
            return self, callables_table
        if t.numpy_dtype.kind != "f":
            raise KernelcoreError("cube takes floating-point values")
        ctype = {4: "float", 8: "double"}[t.numpy_dtype.itemsize]
        return (self.copy(name_in_target=f"cube_{ctype}",
                          arg_id_to_dtype={0: t, -1: t}), callables_table)

    def generate_preambles(self, target):
        ctype = self.name_in_target.split("_")[1]
        yield ("50_cube", f"static inline {ctype} {self.name_in_target}({ctype} v) "
                          "{ return v * v * v; }")


def test_scalar_callable_in_expression_runs_on_opencl(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = 2 * cube(a[i]) + 1")
    knl = lp.register_callable(knl, "cube", Cube(name="cube"))
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    a = np.linspace(-2, 2, 100).astype(np.float32)
    _, (out,) = knl(queue, a=a)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 2 * a**3 + 1, rtol=1e-6, atol=1e-6)
    code = lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float32})).device_code()
    assert "cube_float(" in code and "static inline float cube_float" in code


class CubePlusOne(lp.ScalarCallable):
    """``cube_plus_one(x)``: registers :class:`Cube` in the callables context it
    is given (loopy's ``clbl_inf_ctx.with_callable``) and calls it."""

    def with_types(self, arg_id_to_dtype, clbl_inf_ctx):
        from kernelcore.translation_unit import CallablesInferenceContext
        assert isinstance(clbl_inf_ctx, CallablesInferenceContext)
        t = arg_id_to_dtype.get(0)
        if t is None:
            return self, clbl_inf_ctx
        cube, _ = Cube(name="cube").with_types({0: t}, clbl_inf_ctx)
        helper, clbl_inf_ctx = clbl_inf_ctx.with_callable("cube", cube)
        return (self.copy(name_in_target=f"{cube.name_in_target}_plus_one",
                          arg_id_to_dtype={0: t, -1: t}), clbl_inf_ctx)

    def generate_preambles(self, target):
        ctype = self.name_in_target.split("_")[1]
        yield ("60_cube_plus_one", f"static inline {ctype} {self.name_in_target}({ctype} v) "
                                   f"{{ return cube_{ctype}(v) + 1; }}")


def test_callable_registers_a_helper_in_the_inference_context(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = cube_plus_one(a[i])",
                         [lp.GlobalArg("a", np.float64, shape="n"), ...])
    knl = lp.register_callable(knl, "cube_plus_one", CubePlusOne(name="cube_plus_one"))
    a = np.linspace(-2, 2, 9)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, a**3 + 1)
    code = lp.generate_code_v2(knl).device_code()
    assert code.index("double cube_double(") < code.index("double cube_double_plus_one(")


def test_inference_context_gives_a_second_specialization_a_new_id():
    from kernelcore.translation_unit import CallablesInferenceContext
    f32, f64 = (lp.NumpyType(np.dtype(t)) for t in (np.float32, np.float64))
    c32, _ = Cube(name="cube").with_types({0: f32}, {})
    c64, _ = Cube(name="cube").with_types({0: f64}, {})
    ctx = CallablesInferenceContext({})
    first, ctx = ctx.with_callable("cube", c32)
    again, same = ctx.with_callable("cube", c32)
    assert same is ctx
    second, ctx = ctx.with_callable("cube", c64)
    assert (first, again, second) == ("cube", "cube", "cube_0")
    assert ctx["cube_0"] is c64 and ctx.added == ("cube", "cube_0")
    prog = ctx.finish_program(lp.make_kernel("{[i]: 0<=i<4}", "out[i] = 1"))
    assert {"cube", "cube_0"} <= set(prog.callables_table)


def test_integer_arguments_are_converted_to_the_callable_type(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = cube(a[i])",
                         [lp.GlobalArg("a", np.float64, shape="n"), ...])
    knl = lp.register_callable(knl, "cube", Cube(name="cube"))
    a = np.arange(5, dtype=np.float64)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, a**3)


def test_unknown_function_suggests_register_callable(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = frobnicate(a[i])")
    with pytest.raises(KernelcoreError, match="register_callable"):
        knl(queue, a=np.ones(4, np.float32))


def test_callable_that_never_specializes_is_reported(queue):
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = f(a[i])",
                         [lp.GlobalArg("a", np.float32, shape="n"),
                          lp.GlobalArg("out", np.float32, shape="n"), ...])
    knl = lp.register_callable(knl, "f", lp.ScalarCallable(name="f"))
    with pytest.raises(KernelcoreError, match="did not specialize"):
        lp.generate_code_v2(knl)


def test_register_callable_checks_its_argument():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = a[i]")
    with pytest.raises(KernelcoreError, match="InKernelCallable"):
        lp.register_callable(knl, "f", lambda x: x)


def test_slices_outside_calls_are_rejected():
    with pytest.raises(KernelcoreError, match="slices"):
        lp.make_kernel("{:}", "y[:] = x[:]",
                       [lp.GlobalArg("x", np.float32, shape=(4,)),
                        lp.GlobalArg("y", np.float32, shape=(4,))])


def test_array_call_without_registered_callable_is_reported():
    knl = lp.make_kernel(
        "{:}", "y[:] = g(x[:])",
        [lp.GlobalArg("x", np.float32, shape=(4,)),
         lp.GlobalArg("y", np.float32, shape=(4,))], target=lp.CTarget())
    with pytest.raises(KernelcoreError, match="register_callable"):
        lp.generate_code_v2(knl)


# {{{ kernels calling kernels

def _twice():
    return lp.make_function(
        "{[j]: 0<=j<4}", "b[j] = 2*a[j] + 1",
        [lp.GlobalArg("a", np.float32, shape=(4,)),
         lp.GlobalArg("b", np.float32, shape=(4,))], name="twice")


def _row_caller():
    return lp.make_kernel(
        "{[i]: 0<=i<n}",
        """
        [i]: y[i, :] = twice(x[i, :])
        z[i] = y[i, 0] + y[i, 3]
        """,
        [lp.GlobalArg("x", np.float32, shape=("n", 4)),
         lp.GlobalArg("y", np.float32, shape=("n", 4)), ...])


def test_merge_makes_callers_the_entry_points():
    tu = lp.merge([_row_caller(), _twice()])
    assert tu.entrypoints == frozenset({"loopy_kernel"})
    assert isinstance(tu.callables_table["twice"], lp.CallableKernel)
    assert tu["twice"].name == "twice"
    assert tu.default_entrypoint.name == "loopy_kernel"


def test_calling_without_inlining_runs(queue):
    tu = lp.merge([_row_caller(), _twice()])
    x = np.random.default_rng(3).random((3, 4)).astype(np.float32)
    _, (y, z) = tu(queue, x=x)
    np.testing.assert_allclose(y, 2 * x + 1, rtol=1e-6)
    np.testing.assert_allclose(z, y[:, 0] + y[:, 3], rtol=1e-6)


def test_inlined_row_call_matches_numpy(queue):
    tu = lp.inline_callable_kernel(lp.merge([_row_caller(), _twice()]), "twice")
    assert set(tu.callables_table) == {"loopy_kernel"}
    knl = tu.default_entrypoint
    assert not any(isinstance(i, lp.CallInstruction) for i in knl.instructions)
    assert "twice(" not in "\n".join(str(i) for i in knl.instructions)
    x = np.random.default_rng(1).random((7, 4)).astype(np.float32)
    _, (y, z) = tu(queue, x=x)
    np.testing.assert_allclose(y, 2 * x + 1, rtol=1e-6)
    np.testing.assert_allclose(z, y[:, 0] + y[:, 3], rtol=1e-6)


def test_inlined_callee_with_parameter_reduction_and_temporary(queue):
    callee = lp.make_function(
        "{[j, k]: 0<=j, k<m}",
        """
        <> s = sum(k, a[k] * a[k])
        out[j] = a[j] / sqrt(s) * scale
        """,
        [lp.GlobalArg("a", np.float64, shape=("m",)),
         lp.ValueArg("m", np.int32), lp.ValueArg("scale", np.float64),
         lp.GlobalArg("out", np.float64, shape=("m",))], name="normalize")
    caller = lp.make_kernel(
        "{[i]: 0<=i<n}",
        "[i]: res[i, :] = normalize(v[i, :], 5, 3.0)",
        [lp.GlobalArg("v", np.float64, shape=("n", 5)),
         lp.GlobalArg("res", np.float64, shape=("n", 5)), ...])
    tu = lp.inline_callable_kernel(lp.merge([caller, callee]), "normalize")
    tu = tu.with_kernel(lp.tag_inames(tu.default_entrypoint, {"i": "g.0"}))
    v = np.random.default_rng(2).random((6, 5))
    _, (res,) = tu(queue, v=v)
    expected = 3.0 * v / np.linalg.norm(v, axis=1, keepdims=True)
    np.testing.assert_allclose(res, expected, rtol=1e-12)


def test_inlined_call_returning_a_scalar_into_an_element(queue):
    callee = lp.make_function(
        "{[k]: 0<=k<3}", "r = sum(k, w[k])",
        [lp.GlobalArg("w", np.float32, shape=(3,)),
         lp.GlobalArg("r", np.float32, shape=())], name="total")
    caller = lp.make_kernel(
        "{[i]: 0<=i<n}", "[i]: t[i] = total(m[i, :])",
        [lp.GlobalArg("m", np.float32, shape=("n", 3)),
         lp.GlobalArg("t", np.float32, shape=("n",)), ...])
    tu = lp.inline_callable_kernel(lp.merge([caller, callee]), "total")
    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    _, (t,) = tu(queue, m=m)
    np.testing.assert_allclose(t, m.sum(axis=1))


def test_statistics_of_an_inlined_translation_unit():
    tu = lp.inline_callable_kernel(lp.merge([_row_caller(), _twice()]), "twice")
    ops = lp.get_op_map(tu).eval_and_sum({"n": 10})
    # per row: 4 multiplications and 4 additions in the callee, 1 addition for z
    assert ops == 90


def test_inlining_checks_argument_shapes():
    caller = lp.make_kernel(
        "{[i]: 0<=i<n}", "[i]: y[i, :] = twice(x[i, :])",
        [lp.GlobalArg("x", np.float32, shape=("n", 5)),
         lp.GlobalArg("y", np.float32, shape=("n", 5)), ...])
    with pytest.raises(KernelcoreError, match="shape mismatch for 'a'"):
        lp.inline_callable_kernel(lp.merge([caller, _twice()]), "twice")


def test_inlining_checks_argument_counts():
    caller = lp.make_kernel(
        "{[i]: 0<=i<n}", "[i]: y[i, :] = twice(x[i, :], x[i, :])",
        [lp.GlobalArg("x", np.float32, shape=("n", 4)),
         lp.GlobalArg("y", np.float32, shape=("n", 4)), ...])
    with pytest.raises(KernelcoreError, match="takes 1 input"):
        lp.inline_callable_kernel(lp.merge([caller, _twice()]), "twice")


def test_unknown_kernel_name_in_translation_unit():
    tu = lp.merge([_row_caller(), _twice()])
    with pytest.raises(KernelcoreError, match="no kernel named 'thrice'"):
        lp.inline_callable_kernel(tu, "thrice")

# }}}


def test_a_call_with_keyword_arguments_is_refused_with_a_clear_error():
    """Callables take their arguments by position (as loopy's); a keyword
    argument is named in the error, not an empty NotImplementedError."""
    class Maximum(lp.ScalarCallable):
        def with_types(self, arg_id_to_dtype, clbl_inf_ctx):
            return self, clbl_inf_ctx

    knl = lp.register_callable(lp.make_kernel("{[i]: 0<=i<n}", "out[i] = f(a[i], b=2.0f)"),
                               "f", Maximum(name="f"))
    with pytest.raises(KernelcoreError, match="keyword arguments are not supported"):
        knl(lp.default_queue(), a=np.arange(4, dtype=np.float32))


def test_keyword_arguments_with_sub_arrays_are_a_parse_error():
    """pymbolic's parser asserts on ``f(c=[j]: y[i, j])``: the error names the
    statement and the fix instead."""
    with pytest.raises(lp.ParseError, match=r"child\(c=.*pass its arguments by position"):
        lp.make_kernel("{[i, j]: 0<=i<3 and 0<=j<4}",
                       "[j]: out[i, j] = child(c=[j]: y[i, j], a=[j]: x[i, j])")
