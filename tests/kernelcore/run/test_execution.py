"""Execution tests for kernelcore: generated kernels are run on the OpenCL
device and compared with NumPy."""

import os
import re
import subprocess
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array
import pytest

import kernelcore as lp
from tests.helpers import ROOT

# {{{ helpers

def to_dev(queue, ary):
    return cl.array.to_device(queue, ary)


def random_array(rng, shape, dtype, low=-10, high=10):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return rng.integers(low, high, size=shape).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, high, size=shape).astype(dtype)
    if dtype.kind == "c":
        real = rng.standard_normal(shape)
        imag = rng.standard_normal(shape)
        return (real + 1j*imag).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def rtol_for(dtype):
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.complex64):
        return 1e-5
    return 1e-12


def run_isolated(script, timeout=120, extra_env=None):
    """Run *script* in a fresh interpreter (for kernels whose miscompilation
    could crash or hang the test process, or to test behaviour across
    processes). The script must print OK; its stdout is returned."""
    repo_root = str(ROOT)
    env = dict(os.environ)
    env.update(extra_env or {})
    env["PYTHONPATH"] = os.pathsep.join(
        [repo_root] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0 and "OK" in proc.stdout, (
        f"subprocess exited with {proc.returncode}:\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def run_dict(knl, queue, **kwargs):
    knl = lp.set_options(knl, return_dict=True)
    evt, result = knl(queue, **kwargs)
    assert isinstance(result, dict)
    return result

# }}}


# {{{ dtypes, host vs device

DTYPES = [np.float32, np.float64, np.int32, np.int64,
          np.complex64, np.complex128]


@pytest.mark.parametrize("on_device", [False, True],
                         ids=["numpy", "clarray"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_axpy_like_dtypes(queue, rng, dtype, on_device):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i] + b[i]")
    a = random_array(rng, 37, dtype)
    b = random_array(rng, 37, dtype)

    if on_device:
        evt, (out,) = knl(queue, a=to_dev(queue, a), b=to_dev(queue, b))
        assert isinstance(out, cl.array.Array)
        out = out.get()
    else:
        evt, (out,) = knl(queue, a=a, b=b)
        assert isinstance(out, np.ndarray)

    expected = 2*a + b
    assert out.dtype == expected.dtype == np.dtype(dtype)
    assert out.shape == (37,)
    if np.dtype(dtype).kind in "iu":
        assert (out == expected).all()
    else:
        np.testing.assert_allclose(out, expected, rtol=rtol_for(dtype))


def test_numpy_in_numpy_out_and_device_in_device_out(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] - 1")
    a = rng.random(20)

    evt, (out,) = knl(queue, a=a)
    assert isinstance(out, np.ndarray)
    assert not isinstance(out, cl.array.Array)
    np.testing.assert_array_equal(out, a - 1)

    a_dev = to_dev(queue, a)
    evt, (out_dev,) = knl(queue, a=a_dev)
    assert isinstance(out_dev, cl.array.Array)
    np.testing.assert_array_equal(out_dev.get(), a - 1)
    # the input was not modified
    np.testing.assert_array_equal(a_dev.get(), a)


def test_complex_literal_and_mixed_real_complex(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        out1[i] = (1 + 2j) * z[i]
        out2[i] = z[i] * x[i] + 1j
        """)
    z = random_array(rng, 15, np.complex128)
    x = rng.standard_normal(15)
    res = run_dict(knl, queue, z=z, x=x)
    np.testing.assert_allclose(res["out1"], (1 + 2j)*z, rtol=1e-12)
    np.testing.assert_allclose(res["out2"], z*x + 1j, rtol=1e-12)
    assert res["out1"].dtype == np.complex128


def test_complex64_times_float32(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = z[i] * x[i]")
    z = random_array(rng, 15, np.complex64)
    x = rng.standard_normal(15).astype(np.float32)
    evt, (out,) = knl(queue, z=z, x=x)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, z*x, rtol=1e-5)


def test_queue_none_uses_default_device(rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 3*a[i]")
    a = rng.random(10)
    evt, (out,) = knl(None, a=a)
    np.testing.assert_allclose(out, 3*a)

# }}}


# {{{ reductions

def test_matvec_sum(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "y[i] = sum(j, A[i,j]*x[j])")
    A = rng.standard_normal((9, 13))
    x = rng.standard_normal(13)
    evt, (y,) = knl(queue, A=A, x=x)
    assert y.shape == (9,)
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)


def test_matvec_sum_on_device_float32(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "y[i] = sum(j, A[i,j]*x[j])")
    A = rng.standard_normal((9, 13)).astype(np.float32)
    x = rng.standard_normal(13).astype(np.float32)
    evt, (y,) = knl(queue, A=to_dev(queue, A), x=to_dev(queue, x))
    assert isinstance(y, cl.array.Array)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.get(), A @ x, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("red,npfunc", [
    ("sum", np.sum),
    ("product", np.prod),
    ("max", np.max),
    ("min", np.min),
    ])
@pytest.mark.parametrize("dtype", [np.float64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_reduction_kinds(queue, rng, red, npfunc, dtype):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        f"out[i] = {red}(j, a[i,j])")
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-3, 4, size=(6, 5)).astype(dtype)
    else:
        a = rng.uniform(0.5, 1.5, size=(6, 5)).astype(dtype)
    evt, (out,) = knl(queue, a=a)
    expected = npfunc(a, axis=1)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_max_min_reduction_neutral_elements(queue, rng, dtype):
    """max over negative values / min over large positive values: the
    reduction must not start from 0."""
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        """
        hi[i] = max(j, neg[i,j])
        lo[i] = min(j, pos[i,j])
        """)
    neg = (-rng.uniform(5, 50, size=(4, 6))).astype(dtype)
    pos = rng.uniform(5, 50, size=(4, 6)).astype(dtype)
    res = run_dict(knl, queue, neg=neg, pos=pos)
    np.testing.assert_array_equal(res["hi"], neg.max(axis=1))
    np.testing.assert_array_equal(res["lo"], pos.min(axis=1))


def test_conditional_inside_reduction(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "out[i] = sum(j, if(a[i,j] > 0, a[i,j], 0))")
    a = rng.standard_normal((5, 7))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.where(a > 0, a, 0).sum(axis=1),
                               rtol=1e-12)


def test_two_reductions_in_one_expression(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "out[i] = 2*sum(j, a[i,j]) - max(j, a[i,j])")
    a = rng.standard_normal((5, 7))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, 2*a.sum(axis=1) - a.max(axis=1),
                               rtol=1e-12)


def test_reduction_iname_also_used_as_loop_elsewhere(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        """
        rowsum[i] = sum(j, a[i,j])
        first_row[j] = a[0,j]
        """)
    a = rng.standard_normal((4, 6))
    res = run_dict(knl, queue, a=a)
    np.testing.assert_allclose(res["rowsum"], a.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(res["first_row"], a[0])


def test_counting_reduction_over_triangle(queue):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<=i }",
        "count[i] = sum(j, 1)",
        kernel_data=[lp.GlobalArg("count", np.int32, shape=("n",)), "..."])
    evt, (count,) = knl(queue, n=9)
    np.testing.assert_array_equal(count, np.arange(1, 10))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_complex_matvec_and_division(queue, rng, dtype):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i,j<n }",
        """
        y[i] = sum(j, A[i,j]*x[j])
        q[i] = x[i] / (A[i,i] + 3)
        """)
    A = random_array(rng, (5, 5), dtype)
    x = random_array(rng, 5, dtype)
    res = run_dict(knl, queue, A=A, x=x)
    assert res["y"].dtype == np.dtype(dtype)
    tol = 10*rtol_for(dtype)
    np.testing.assert_allclose(res["y"], A @ x, rtol=tol, atol=tol)
    np.testing.assert_allclose(res["q"], x / (np.diag(A) + 3), rtol=tol)


def test_full_reduction_into_single_element(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[0] = sum(i, a[i]*a[i])")
    a = rng.standard_normal(50)
    evt, (out,) = knl(queue, a=a)
    assert out.shape == (1,)
    np.testing.assert_allclose(out[0], np.dot(a, a), rtol=1e-12)


def test_nested_reductions(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j,k]: 0<=i<n and 0<=j<m and 0<=k<p }",
        "out[i] = sum(j, a[i,j] * max(k, b[j,k]))")
    a = rng.standard_normal((4, 5))
    b = rng.standard_normal((5, 6))
    evt, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_allclose(out, a @ b.max(axis=1), rtol=1e-12)


def test_reduction_over_two_inames(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j,k]: 0<=i<n and 0<=j<m and 0<=k<p }",
        "out[i] = sum((j,k), a[i,j,k] * w[j])")
    a = rng.standard_normal((3, 4, 5))
    w = rng.standard_normal(4)
    evt, (out,) = knl(queue, a=a, w=w)
    np.testing.assert_allclose(
        out, np.einsum("ijk,j->i", a, w), rtol=1e-12)


def test_matmul(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j,k]: 0<=i<n and 0<=j<p and 0<=k<m }",
        "c[i,j] = sum(k, a[i,k]*b[k,j])")
    a = rng.standard_normal((5, 7))
    b = rng.standard_normal((7, 3))
    evt, (c,) = knl(queue, a=a, b=b)
    assert c.shape == (5, 3)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12)


def test_empty_reduction_gives_neutral_element(queue):
    # separate domains: the i loop must not be emptied by m == 0
    knl = lp.make_kernel(
        ["{ [i]: 0<=i<n }", "{ [j]: 0<=j<m }"],
        """
        s[i] = sum(j, a[i,j])
        p[i] = product(j, a[i,j])
        """)
    a = np.zeros((4, 0))
    res = run_dict(knl, queue, a=a)
    np.testing.assert_array_equal(res["s"], np.zeros(4))
    np.testing.assert_array_equal(res["p"], np.ones(4))

# }}}


# {{{ temporaries and blocks

def test_untyped_temporary(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <> t = 2*a[i]
        out[i] = t + 1
        """)
    a = rng.standard_normal(11)
    evt, (out,) = knl(queue, a=a)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, 2*a + 1, rtol=1e-12)


def test_typed_temporary_float32(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <float32> t = a[i]
        out[i] = 2*t
        """)
    a = rng.standard_normal(11)  # float64
    evt, (out,) = knl(queue, a=a)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 2*a.astype(np.float32), rtol=1e-6)


def test_temporary_holding_reduction(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        """
        <> s = sum(j, a[i,j])
        out[i] = s*s
        """)
    a = rng.standard_normal((5, 4))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, a.sum(axis=1)**2, rtol=1e-12)


def test_temporaries_shown_in_print():
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <float32> tmp_val = a[i]
        out[i] = 2*tmp_val
        """)
    text = str(knl)
    assert "TEMPORARIES:" in text
    assert "tmp_val" in text.split("TEMPORARIES:")[1]


def test_for_end_blocks(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        """
        for i
            <> t = 2*a[i]
            for j
                out[i, j] = t + b[j]
            end
        end
        """)
    a = rng.standard_normal(4)
    b = rng.standard_normal(6)
    evt, (out,) = knl(queue, a=a, b=b)
    assert out.shape == (4, 6)
    np.testing.assert_allclose(out, np.add.outer(2*a, b), rtol=1e-12)


def test_manual_accumulator_in_nested_blocks(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        """
        for i
            <> acc = 0  {id=init}
            for j
                acc = acc + a[i,j]*a[i,j]  {id=update, dep=init}
            end
            out[i] = sqrt(acc)  {dep=update}
        end
        """)
    knl = lp.add_dtypes(knl, {"a": np.float64})
    a = rng.standard_normal((6, 5))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.sqrt((a*a).sum(axis=1)), rtol=1e-12)


def test_if_end_blocks_on_iname(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        for i
            if i % 2 == 0
                out[i] = a[i]  {id=even}
            end
            if i % 2 == 1
                out[i] = -a[i]  {id=odd, dep=even}
            end
        end
        """)
    a = rng.standard_normal(9)
    evt, (out,) = knl(queue, a=a)
    expected = np.where(np.arange(9) % 2 == 0, a, -a)
    np.testing.assert_array_equal(out, expected)


def test_if_end_block_on_data_with_dependency(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        for i
            out[i] = 0  {id=init}
            if a[i] > 0
                out[i] = a[i]  {id=overwrite, dep=init}
            end
        end
        """)
    a = rng.standard_normal(16)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out, np.maximum(a, 0))

# }}}


# {{{ math functions

UNARY_FUNCS = [
    ("sin", np.sin, (-3, 3)),
    ("cos", np.cos, (-3, 3)),
    ("exp", np.exp, (-3, 3)),
    ("log", np.log, (0.1, 10)),
    ("sqrt", np.sqrt, (0, 10)),
    ("abs", np.abs, (-5, 5)),
    ("floor", np.floor, (-5, 5)),
    ("ceil", np.ceil, (-5, 5)),
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,npfunc,interval", UNARY_FUNCS,
                         ids=[f[0] for f in UNARY_FUNCS])
def test_unary_math_functions(queue, rng, name, npfunc, interval, dtype):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {name}(a[i])")
    a = rng.uniform(*interval, size=25).astype(dtype)
    evt, (out,) = knl(queue, a=a)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, npfunc(a), rtol=10*rtol_for(dtype),
                               atol=10*rtol_for(dtype))


BINARY_FUNCS = [
    ("pow(a[i], b[i])", np.power, (0.1, 3)),
    ("a[i]**b[i]", np.power, (0.1, 3)),
    ("fmin(a[i], b[i])", np.fmin, (-5, 5)),
    ("fmax(a[i], b[i])", np.fmax, (-5, 5)),
    ("min(a[i], b[i])", np.minimum, (-5, 5)),
    ("max(a[i], b[i])", np.maximum, (-5, 5)),
    ]


@pytest.mark.parametrize("dtype", [np.float64, np.float32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("expr,npfunc,interval", BINARY_FUNCS,
                         ids=[f[0] for f in BINARY_FUNCS])
def test_binary_math_functions(queue, rng, expr, npfunc, interval, dtype):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {expr}")
    a = rng.uniform(*interval, size=25).astype(dtype)
    b = rng.uniform(*interval, size=25).astype(dtype)
    evt, (out,) = knl(queue, a=a, b=b)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, npfunc(a, b), rtol=10*rtol_for(dtype))


def test_integer_power_and_square(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        sq[i] = a[i]**2
        cube[i] = x[i]**3
        """)
    a = rng.integers(-20, 20, size=12).astype(np.int32)
    x = rng.standard_normal(12)
    res = run_dict(knl, queue, a=a, x=x)
    np.testing.assert_array_equal(res["sq"], a**2)
    assert res["sq"].dtype.kind == "i"
    np.testing.assert_allclose(res["cube"], x**3, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_integer_min_max_abs(queue, rng, dtype):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        lo[i] = min(a[i], b[i])
        hi[i] = max(a[i], b[i])
        mag[i] = abs(a[i])
        """)
    a = rng.integers(-50, 50, size=30).astype(dtype)
    b = rng.integers(-50, 50, size=30).astype(dtype)
    res = run_dict(knl, queue, a=a, b=b)
    np.testing.assert_array_equal(res["lo"], np.minimum(a, b))
    np.testing.assert_array_equal(res["hi"], np.maximum(a, b))
    np.testing.assert_array_equal(res["mag"], np.abs(a))
    assert res["lo"].dtype == np.dtype(dtype)

# }}}


# {{{ integer arithmetic

@pytest.mark.parametrize("dtype", [np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_floor_division_and_modulo_negative_operands(queue, dtype):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        q3[i] = a[i] // 3
        r3[i] = a[i] % 3
        qm3[i] = a[i] // -3
        rm3[i] = a[i] % -3
        """)
    vals = np.arange(-9, 10)
    a = np.repeat(vals, 4).astype(dtype)
    b = np.tile([-4, -3, 3, 4], len(vals)).astype(dtype)

    res = run_dict(knl, queue, a=a, b=b)
    np.testing.assert_array_equal(res["q"], np.floor_divide(a, b))
    np.testing.assert_array_equal(res["r"], np.mod(a, b))
    np.testing.assert_array_equal(res["q3"], np.floor_divide(a, 3))
    np.testing.assert_array_equal(res["r3"], np.mod(a, 3))
    np.testing.assert_array_equal(res["qm3"], np.floor_divide(a, -3))
    np.testing.assert_array_equal(res["rm3"], np.mod(a, -3))
    for key in ["q", "r", "q3", "r3", "qm3", "rm3"]:
        assert res[key].dtype.kind == "i", (key, res[key].dtype)


def test_integer_true_division_gives_float64(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] / b[i]")
    a = np.array([-7, -6, 1, 5, 7, 9], dtype=np.int32)
    b = np.array([2, 4, 3, -2, 7, -4], dtype=np.int32)
    evt, (out,) = knl(queue, a=a, b=b)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, a / b, rtol=1e-15)


def test_index_arithmetic_in_subscripts(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = a[2*i + 1] - a[2*i]")
    a = rng.standard_normal(2*7)
    # n cannot be found from a's shape (2*n), so it is passed
    evt, (out,) = knl(queue, a=a, n=7)
    assert out.shape == (7,)
    np.testing.assert_allclose(out, a[1::2] - a[::2], rtol=1e-12)


def test_fixed_size_kernel_without_parameters(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<10 }", "out[i] = 3*i + 1")
    evt, (out,) = knl(queue)
    assert out.shape == (10,)
    assert out.dtype.kind == "i"
    np.testing.assert_array_equal(out, 3*np.arange(10) + 1)


def test_python_scalar_arguments(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]*k + c")
    a = rng.standard_normal(6)
    evt, (out,) = knl(queue, a=a, k=3, c=0.25)
    np.testing.assert_allclose(out, 3*a + 0.25, rtol=1e-12)


def test_iname_used_as_value(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = i*i - 3",
                         kernel_data=[lp.GlobalArg("out", np.int32,
                                                   shape=("n",)), "..."])
    evt, (out,) = knl(queue, n=10)
    np.testing.assert_array_equal(out, np.arange(10)**2 - 3)

# }}}


@pytest.mark.parametrize("expr,dtypes,expected_dtype", [
    ("a[i] + b[i]", (np.float32, np.float64), np.float64),
    ("a[i] + b[i]", (np.int32, np.int64), np.int64),
    ("a[i] + b[i]", (np.int32, np.float32), np.float64),
    ("a[i] * 2.5", (np.float32, np.float32), np.float32),
    ("a[i] * 2.5", (np.int32, np.int32), np.float64),
    ("a[i] + 1", (np.int64, np.int64), np.int64),
    ("a[i] * b[i]", (np.float32, np.complex64), np.complex64),
    ])
def test_type_promotion(queue, rng, expr, dtypes, expected_dtype):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {expr}")
    a = random_array(rng, 9, dtypes[0])
    b = random_array(rng, 9, dtypes[1])
    kwargs = {"a": a}
    if "b[i]" in expr:
        kwargs["b"] = b
    evt, (out,) = knl(queue, **kwargs)
    expected = eval(expr.replace("[i]", ""), {"a": a, "b": b})
    assert out.dtype == np.dtype(expected_dtype) == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=rtol_for(expected_dtype))


def test_three_dimensional_permutation(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j,k]: 0<=i<n and 0<=j<m and 0<=k<p }",
        "out[k,i,j] = a[i,j,k] + 10*j")
    a = rng.standard_normal((2, 3, 4))
    evt, (out,) = knl(queue, a=a)
    assert out.shape == (4, 2, 3)
    expected = np.transpose(a, (2, 0, 1)) + 10*np.arange(3)[None, None, :]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_colon_separated_dependencies(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        tmp1[i] = a[i] + 1  {id=w1}
        tmp2[i] = 2*a[i]  {id=w2}
        out[i] = tmp1[i]*tmp2[i]  {id=combine, dep=w1:w2}
        """)
    text = knl.stringify(with_dependencies=True)
    dep_lines = [line for line in text.splitlines()
                 if line.strip().startswith("combine :")]
    assert len(dep_lines) == 1, text
    assert "w1" in dep_lines[0] and "w2" in dep_lines[0], text

    a = rng.standard_normal(8)
    res = run_dict(knl, queue, a=a)
    np.testing.assert_allclose(res["out"], (a + 1)*2*a, rtol=1e-12)


def test_seq_dependencies(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        out[i] = 2*a[i]
        out[i] = out[i] + 1
        out[i] = out[i] * 3
        """,
        seq_dependencies=True)
    a = rng.standard_normal(8)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, (2*a + 1)*3, rtol=1e-12)


def test_temporary_array_with_fixed_shape(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j,k]: 0<=i<n and 0<=j<4 and 0<=k<4 }",
        """
        for i
            for j
                tmp[j] = a[i,j] * 2  {id=fill}
            end
            out[i] = sum(k, tmp[k]*tmp[k])  {dep=fill}
        end
        """,
        kernel_data=[
            lp.TemporaryVariable("tmp", np.float64, shape=(4,)),
            "..."])
    a = rng.standard_normal((5, 4))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, ((2*a)**2).sum(axis=1), rtol=1e-12)


# {{{ operator precedence and literals

FLOAT_EXPRS = [
    "(a[i] + b[i]) * c[i]",
    "a[i] - (b[i] + c[i])",
    "a[i] - b[i] - c[i]",
    "a[i] - (b[i] - c[i])",
    "a[i] / (b[i] * c[i])",
    "a[i] / b[i] / c[i]",
    "a[i] / (b[i] / c[i])",
    "-(a[i] - b[i])",
    "a[i] - -b[i]",
    "-a[i]**2",
    "(-a[i])**2",
    "a[i]**2 * b[i]",
    "c[i]**-2",
    "2**c[i]",
    "c[i]**0.5 + 1",
    "(a[i] + 1) / (b[i] - 10)",
    ]


@pytest.mark.parametrize("expr", FLOAT_EXPRS)
def test_float_operator_precedence(queue, rng, expr):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {expr}")
    a = rng.standard_normal(12)
    b = rng.standard_normal(12)
    c = rng.uniform(0.5, 2, size=12)
    kwargs = {name: val for name, val in [("a", a), ("b", b), ("c", c)]
              if f"{name}[i]" in expr}
    evt, (out,) = knl(queue, **kwargs)
    expected = eval(expr.replace("[i]", ""), {"a": a, "b": b, "c": c})
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("expr", ["-a[i]", "-a[i] * b[i]", "-(-a[i])"])
def test_float_negation_flips_the_sign_bit_of_nan_and_zero(queue, expr):
    """Unary minus is a negation (as NumPy's negative), not a product with
    -1.0: NaN and zeros get their sign bit flipped."""
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {expr}")
    a = np.array([np.nan, -np.nan, 0.0, -0.0, 1.5, -np.inf])
    b = np.array([2.0, 2.0, 1.0, 1.0, -1.0, 0.5])
    kwargs = {"a": a, "b": b} if "b[i]" in expr else {"a": a}
    evt, (out,) = knl(queue, **kwargs)
    expected = eval(expr.replace("[i]", ""), {"a": a, "b": b})
    np.testing.assert_array_equal(out.view(np.uint64), expected.view(np.uint64))
    typed = lp.add_dtypes(knl, {name: np.float64 for name in kwargs})
    assert "-1.0 *" not in lp.generate_code_v2(typed).device_code()


INT_EXPRS = [
    "x[i] // (y[i] // 2 + 1)",
    "x[i] % (y[i] + 7)",
    "-x[i] // 3",
    "-(x[i] // 3)",
    "x[i] - x[i] // 3 * 3",
    "(x[i] + y[i]) % 5 * 2",
    # explicit parentheses: the instruction language (like loopy's) groups
    # an unparenthesized "a * b // c" as "a * (b // c)", unlike Python
    "(x[i] * (y[i] - 3)) // 4",
    ]


@pytest.mark.parametrize("expr", INT_EXPRS)
def test_integer_operator_precedence(queue, rng, expr):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {expr}")
    x = rng.integers(-40, 40, size=30).astype(np.int32)
    y = rng.integers(1, 20, size=30).astype(np.int32)
    kwargs = {name: val for name, val in [("x", x), ("y", y)]
              if f"{name}[i]" in expr}
    evt, (out,) = knl(queue, **kwargs)
    expected = eval(expr.replace("[i]", ""), {"x": x, "y": y})
    assert out.dtype.kind == "i"
    np.testing.assert_array_equal(out, expected)


def test_nested_conditional_expressions(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = if(a[i] > 0, if(b[i] > 0, 1.5, 2.5), 3.5) * 2")
    a = rng.standard_normal(40)
    b = rng.standard_normal(40)
    evt, (out,) = knl(queue, a=a, b=b)
    expected = np.where(a > 0, np.where(b > 0, 1.5, 2.5), 3.5) * 2
    np.testing.assert_array_equal(out, expected)


def test_float64_literal_keeps_double_precision(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = a[i] + 0.1 + 1e-300*a[i]")
    a = rng.standard_normal(10)
    evt, (out,) = knl(queue, a=a)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, a + 0.1 + 1e-300*a)


def test_float32_with_python_float_literal(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] * 0.1")
    a = rng.standard_normal(10).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, a * np.float32(0.1), rtol=1e-6)


def test_large_integer_literal_int64(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = x[i] * 3000000000 + 1099511627776")
    x = np.arange(-3, 4, dtype=np.int64)
    evt, (out,) = knl(queue, x=x)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, x*3000000000 + 2**40)

# }}}


# {{{ comparisons and conditional expressions

@pytest.mark.parametrize("op,npop", [
    ("<", np.less), ("<=", np.less_equal),
    (">", np.greater), (">=", np.greater_equal),
    ("==", np.equal), ("!=", np.not_equal),
    ])
def test_comparisons(queue, rng, op, npop):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         f"out[i] = if(a[i] {op} b[i], 1, 0)")
    knl = lp.add_dtypes(knl, {"out": np.int32})
    a = rng.integers(-2, 3, size=40).astype(np.int32)
    b = rng.integers(-2, 3, size=40).astype(np.int32)
    evt, (out,) = knl(queue, a=a, b=b)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, npop(a, b).astype(np.int32))


def test_logical_operators(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = if((a[i] > 0 and b[i] > 0) or not (a[i] > -2), 1, 0)")
    knl = lp.add_dtypes(knl, {"out": np.int32})
    a = rng.integers(-4, 4, size=50).astype(np.int32)
    b = rng.integers(-4, 4, size=50).astype(np.int32)
    evt, (out,) = knl(queue, a=a, b=b)
    expected = ((a > 0) & (b > 0)) | ~(a > -2)
    np.testing.assert_array_equal(out, expected.astype(np.int32))


def test_comparison_stored_in_temporary(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <> positive = a[i] > 0
        out[i] = if(positive, a[i], -2*a[i])
        """)
    a = rng.standard_normal(20)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out, np.where(a > 0, a, -2*a))


def test_conditional_expression_selects_values(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = if(a[i] > b[i], a[i], 2*b[i])")
    a = rng.standard_normal(30)
    b = rng.standard_normal(30)
    evt, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(out, np.where(a > b, a, 2*b))

# }}}


# {{{ domains

def test_triangular_domain_prefix_sum(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<=i }",
        "out[i] = sum(j, a[j])")
    a = rng.standard_normal(17)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.cumsum(a), rtol=1e-12)


@pytest.mark.parametrize("tag", [None, "l.0"], ids=["sequential", "work-group"])
def test_prefix_scans_start_from_the_first_term(queue, tag):
    """A prefix scan's first value is its first term, not the identity
    combined with it: ``0.0 + -0.0`` is ``+0.0``, so running sums of negative
    zeros would lose their sign; a later term does combine (with a NaN too)."""
    knl = lp.make_kernel("{ [i,j]: 0<=i<16 and 0<=j<=i }", "out[i] = sum(j, a[j])")
    if tag is not None:
        knl = lp.tag_inames(knl, {"i": tag})
    a = np.full(16, -0.0)
    a[9] = np.nan
    evt, (out,) = knl(queue, a=a)
    want = np.cumsum(a)
    np.testing.assert_array_equal(out, want)
    assert np.signbit(out[:9]).all()


def test_triangular_domain_lower_copy_in_place(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<=i }",
        "out[i,j] = a[i,j]")
    a = rng.standard_normal((6, 6))
    out = np.zeros((6, 6))
    evt, (out_ret,) = knl(queue, a=a, out=out)
    np.testing.assert_array_equal(out, np.tril(a))
    np.testing.assert_array_equal(out_ret, np.tril(a))


def test_multiple_domains(queue, rng):
    knl = lp.make_kernel(
        ["{[i]: 0<=i<n}", "{[j]: 0<=j<=i}"],
        "out[i] = sum(j, a[j])")
    a = rng.standard_normal(13)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.cumsum(a), rtol=1e-12)


def test_multiple_domains_with_explicit_parameter_syntax(queue, rng):
    knl = lp.make_kernel(
        ["[n] -> {[i]: 0<=i<n}", "[i] -> {[j]: i<=j<i+3}"],
        "out[i] = sum(j, a[j])")
    a = rng.standard_normal(12)
    evt, (out,) = knl(queue, a=a, n=10)
    expected = np.array([a[k:k+3].sum() for k in range(10)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_upper_triangular_domain(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and i<=j<n }",
        "out[i] = sum(j, a[i,j])")
    a = rng.standard_normal((6, 6))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.triu(a).sum(axis=1), rtol=1e-12)


_TWO_UPPER_BOUNDS_SCRIPT = """
import numpy as np
import kernelcore as lp
knl = lp.make_kernel(
    "{ [i]: 0<=i<n and i<m }",
    "out[i] = a[i] + 1",
    kernel_data=[
        lp.GlobalArg("a", np.float64, shape=("n",)),
        lp.GlobalArg("out", np.float64, shape=("n",)),
        "..."])
queue = lp.default_queue()
a = np.linspace(-1, 1, 8)
for m in [3, 8, 20]:
    out = np.zeros(8)
    knl(queue, a=a, out=out, m=m)
    k = min(8, m)
    np.testing.assert_allclose(out[:k], a[:k] + 1, rtol=1e-12)
    np.testing.assert_array_equal(out[k:], 0)
print("OK")
"""


def test_domain_with_two_upper_bounds():
    """i < min(n, m).  Run in a separate process: a wrong loop bound makes
    the kernel write out of bounds, which can crash the interpreter."""
    run_isolated(_TWO_UPPER_BOUNDS_SCRIPT)


_TWO_LOWER_BOUNDS_SCRIPT = """
import numpy as np
import kernelcore as lp
knl = lp.make_kernel(
    "{ [i]: 0<=i<n and m<=i }",
    "out[i] = a[i] + 1",
    kernel_data=[
        lp.GlobalArg("a", np.float64, shape=("n",)),
        lp.GlobalArg("out", np.float64, shape=("n",)),
        "..."])
queue = lp.default_queue()
a = np.linspace(-1, 1, 8)
for m in [-3, 0, 5, 8, 12]:
    out = np.zeros(8)
    knl(queue, a=a, out=out, m=m)
    k = min(8, max(m, 0))
    np.testing.assert_allclose(out[k:], a[k:] + 1, rtol=1e-12)
    np.testing.assert_array_equal(out[:k], 0)
print("OK")
"""


def test_domain_with_two_lower_bounds():
    """max(0, m) <= i < n, in a separate process (see above)."""
    run_isolated(_TWO_LOWER_BOUNDS_SCRIPT)


_CLIPPED_TRIANGLE_SCRIPT = """
import numpy as np
import kernelcore as lp
knl = lp.make_kernel(
    "{ [i,j]: 0<=i<n and 0<=j<m and j<=i }",
    "out[i] = sum(j, a[j])",
    kernel_data=[
        lp.GlobalArg("a", np.float64, shape=("m",)),
        lp.GlobalArg("out", np.float64, shape=("n",)),
        "..."])
queue = lp.default_queue()
a = np.linspace(-1, 1, 5)
evt, (out,) = knl(queue, a=a, n=8)
expected = np.array([a[:min(i, 4) + 1].sum() for i in range(8)])
np.testing.assert_allclose(out, expected, rtol=1e-12)
print("OK")
"""


def test_triangle_clipped_by_second_bound():
    """j < min(m, i+1): an inner upper bound with two terms, in a separate
    process (see above)."""
    run_isolated(_CLIPPED_TRIANGLE_SCRIPT)


def test_auto_shape_with_two_term_bound_fails_cleanly():
    """The footprint of a[j] for j < min(m, i+1) has no single affine upper
    bound: kernelcore may pick a bound or raise StaticValueFindingError,
    but must not leak an internal (e.g. isl) exception."""
    try:
        knl = lp.make_kernel(
            "{ [i,j]: 0<=i<n and 0<=j<m and j<=i }",
            "out[i] = sum(j, a[j])")
        lp.generate_code_v2(
            lp.add_dtypes(knl, {"a": np.float64})).device_code()
    except lp.KernelcoreError as err:
        assert isinstance(err, lp.StaticValueFindingError), repr(err)


def test_nonzero_based_reduction_iname(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 2<=j<m }",
        "out[i] = sum(j, a[i,j])")
    a = rng.standard_normal((3, 7))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, a[:, 2:].sum(axis=1), rtol=1e-12)


def test_offset_domain(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 2<=i<n }",
        "out[i-2] = a[i] - a[i-2]")
    a = rng.standard_normal(10)
    evt, (out,) = knl(queue, a=a)
    assert out.shape == (8,)
    np.testing.assert_allclose(out, a[2:] - a[:-2], rtol=1e-12)

# }}}


# {{{ arguments

def test_explicit_value_arg(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = alpha*a[i]",
        kernel_data=[
            lp.GlobalArg("a", np.float32, shape=("n",)),
            lp.GlobalArg("out", np.float32, shape=("n",)),
            lp.ValueArg("alpha", np.float32),
            lp.ValueArg("n", np.int32),
            ])
    a = rng.standard_normal(10).astype(np.float32)
    evt, (out,) = knl(queue, a=a, alpha=np.float32(1.5), n=10)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 1.5*a, rtol=1e-6)

    # n can still be found from the shape of a
    evt, (out,) = knl(queue, a=a, alpha=-2.0)
    np.testing.assert_allclose(out, -2*a, rtol=1e-6)


def test_implicit_scalar_argument(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = alpha*a[i] + beta")
    a = rng.standard_normal(10)
    evt, (out,) = knl(queue, a=a, alpha=np.float64(3.0),
                      beta=np.float64(0.5))
    np.testing.assert_allclose(out, 3*a + 0.5, rtol=1e-12)


def test_domain_parameter_not_from_shapes(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<m }",
        "out[i] = 2*a[i]",
        kernel_data=[lp.GlobalArg("a", np.float64, shape=("n",)),
                     lp.ValueArg("n", np.int32), "..."])
    a = rng.standard_normal(10)
    evt, (out,) = knl(queue, a=a, m=4)
    assert out.shape == (4,)
    np.testing.assert_allclose(out, 2*a[:4], rtol=1e-12)


@pytest.mark.parametrize("shape", [("n", "m"), "n, m", "n,m"])
def test_explicit_shapes_and_ellipsis(queue, rng, shape):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "out[i] = sum(j, a[i,j])",
        kernel_data=[lp.GlobalArg("a", np.float64, shape=shape), "..."])
    a = rng.standard_normal((5, 3))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-12)


def test_explicit_shape_larger_than_footprint(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = a[i]",
        kernel_data=[lp.GlobalArg("a", np.float64, shape=("n+2",)), "..."])
    a = rng.standard_normal(9)
    evt, (out,) = knl(queue, a=a)
    # n is found from a's shape: n + 2 == 9
    assert out.shape == (7,)
    np.testing.assert_array_equal(out, a[:7])


def test_arrayarg_alias(queue, rng):
    assert isinstance(lp.GlobalArg("x", np.float32, shape=(3,)), lp.ArrayArg)
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = a[i] + 1",
        kernel_data=[lp.ArrayArg("a", np.int32, shape=lp.auto), "..."])
    a = np.arange(5, dtype=np.int32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out, a + 1)


def test_output_order_follows_kernel_data(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        zz_first[i] = 2*a[i]
        aa_second[i] = 3*a[i]
        """,
        kernel_data=[
            lp.GlobalArg("zz_first", shape=lp.auto),
            lp.GlobalArg("aa_second", shape=lp.auto),
            "..."])
    a = rng.standard_normal(5)
    evt, (first, second) = knl(queue, a=a)
    np.testing.assert_allclose(first, 2*a)
    np.testing.assert_allclose(second, 3*a)


def test_fortran_order_argument(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "out[i,j] = 2*a[i,j] + j",
        kernel_data=[
            lp.GlobalArg("a", np.float64, shape=("n", "m"), order="F"),
            "..."])
    a = np.asfortranarray(rng.standard_normal((4, 7)))
    assert a.flags.f_contiguous and not a.flags.c_contiguous
    evt, (out,) = knl(queue, a=a)
    assert out.shape == (4, 7)
    np.testing.assert_allclose(out, 2*a + np.arange(7)[None, :], rtol=1e-12)


def test_fortran_order_output(queue, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "out[i,j] = a[i,j]",
        kernel_data=[
            lp.GlobalArg("out", np.float64, shape=("n", "m"), order="F"),
            "..."])
    a = rng.standard_normal((3, 5))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out, a)
    assert out.flags.f_contiguous


def test_device_array_with_offset_honoured_or_rejected(queue, rng):
    """Views into a device buffer (nonzero offset) are either handled
    correctly or (as loopy does by default) rejected with an
    InvocationError naming the argument -- never silently misread."""
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    host = rng.standard_normal(20)
    dev = to_dev(queue, host)
    view = dev[5:]
    assert view.offset != 0
    try:
        evt, (out,) = knl(queue, a=view)
    except lp.InvocationError as err:
        assert "'a'" in str(err) or "a " in str(err), str(err)
        assert "offset" in str(err).lower(), str(err)
    else:
        assert out.shape == (15,)
        np.testing.assert_array_equal(out.get(), 2*host[5:])

    # an output view: written in place at its offset, or rejected
    target = to_dev(queue, np.zeros(20))
    try:
        knl(queue, a=dev[:10].copy(), out=target[10:])
    except lp.InvocationError as err:
        assert "out" in str(err), str(err)
        assert "offset" in str(err).lower(), str(err)
        np.testing.assert_array_equal(target.get(), 0)
    else:
        expected = np.zeros(20)
        expected[10:] = 2*host[:10]
        np.testing.assert_array_equal(target.get(), expected)


def test_written_numpy_argument_updated_in_place(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = out[i] + a[i]")
    a = rng.standard_normal(8)
    out = np.ones(8)
    evt, (out_ret,) = knl(queue, a=a, out=out)
    np.testing.assert_allclose(out, 1 + a, rtol=1e-12)
    np.testing.assert_allclose(out_ret, 1 + a, rtol=1e-12)


def test_written_device_argument_updated_in_place(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = out[i] * a[i]")
    a = rng.standard_normal(8)
    out = to_dev(queue, np.full(8, 2.0))
    evt, (out_ret,) = knl(queue, a=to_dev(queue, a), out=out)
    np.testing.assert_allclose(out.get(), 2*a, rtol=1e-12)
    np.testing.assert_allclose(out_ret.get(), 2*a, rtol=1e-12)

# }}}


# {{{ empty domains at run time

def test_n_zero_numpy(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    a = np.zeros(0, dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    assert isinstance(out, np.ndarray)
    assert out.shape == (0,)
    assert out.dtype == np.float32


def test_n_zero_device(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    a = cl.array.empty(queue, 0, dtype=np.float64)
    evt, (out,) = knl(queue, a=a)
    assert isinstance(out, cl.array.Array)
    assert out.shape == (0,)


def test_zero_extent_second_axis(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }",
                         "out[i,j] = a[i,j] + 1")
    a = np.zeros((3, 0))
    evt, (out,) = knl(queue, a=a)
    assert out.shape == (3, 0)


def test_n_zero_explicit_parameter(queue):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }", "out[i] = 1.5",
        kernel_data=[lp.GlobalArg("out", np.float64, shape=("n",)), "..."])
    evt, (out,) = knl(queue, n=0)
    assert out.shape == (0,)

# }}}


# {{{ options, transformations, code generation

def test_return_dict(queue, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        out[i] = 2*a[i]
        out2[i] = a[i] + 1
        """)
    knl = lp.set_options(knl, return_dict=True)
    a = rng.standard_normal(6)
    evt, result = knl(queue, a=a)
    assert isinstance(result, dict)
    assert set(result) == {"out", "out2"}
    np.testing.assert_allclose(result["out"], 2*a)
    np.testing.assert_allclose(result["out2"], a + 1)


def test_fix_parameters(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.fix_parameters(knl, n=16)
    typed = lp.add_dtypes(knl, {"a": np.float32})
    code = lp.generate_code_v2(typed).device_code()
    assert "int const n" not in code
    assert "16" in code or "15" in code

    a = rng.standard_normal(16).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    assert out.shape == (16,)
    np.testing.assert_array_equal(out, 2*a)


def test_add_and_infer_dtypes():
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        <> t = a[i] * 2
        out[i] = t
        """)
    knl = lp.add_and_infer_dtypes(knl, {"a": np.float32})
    code = lp.generate_code_v2(knl).device_code()
    assert "__global float *__restrict__ out" in code


def test_generate_code_v2_device_code():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.add_dtypes(knl, {"a": np.float64})
    code = lp.generate_code_v2(knl).device_code()
    assert "__kernel" in code
    assert "double" in code

    code2, info = lp.generate_code(knl)
    assert "__kernel" in code2


def test_kernel_name(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]",
                         name="my_doubler")
    typed = lp.add_dtypes(knl, {"a": np.float32})
    code = lp.generate_code_v2(typed).device_code()
    assert "my_doubler(" in code
    assert "loopy_kernel" not in code
    a = rng.standard_normal(4).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out, 2*a)


def test_assumptions_accepted(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]",
                         assumptions="n>=1")
    a = rng.standard_normal(3)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, 2*a)


def test_linearization_is_available():
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i,j] = a[j,i]")
    knl = lp.add_dtypes(knl, {"a": np.float32})
    knl = lp.prioritize_loops(knl, "i,j")
    lin = lp.get_one_linearized_kernel(lp.preprocess_kernel(knl))
    assert len(lin.linearization) >= 5  # 2 x enter, insn, 2 x leave
    assert str(lin)


def test_print_linearization_shows_loop_order(capsys):
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i,j] = a[j,i]")
    knl = lp.add_dtypes(knl, {"a": np.float32})
    knl = lp.prioritize_loops(knl, "j,i")
    lin = lp.get_one_linearized_kernel(lp.preprocess_kernel(knl))
    lp.print_linearization(lin)
    text = capsys.readouterr().out
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    j_line = next(k for k, line in enumerate(lines) if re.search(r"\bj\b", line))
    i_line = next(k for k, line in enumerate(lines) if re.search(r"\bi\b", line))
    assert j_line < i_line, text

# }}}


# {{{ caching

def test_cache_same_dtypes_no_new_codegen(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = 5*a[i] - 1",
                         name="cache_probe_same_dtype")
    a = rng.standard_normal(10).astype(np.float32)

    evt, (out1,) = knl(queue, a=a)
    after_first = lp.cache_stats()["codegen"]

    evt, (out2,) = knl(queue, a=a)
    # different size, same dtype: still no new code
    evt, (out3,) = knl(queue, a=a[:7].copy())
    # device array of the same dtype
    evt, (out4,) = knl(queue, a=to_dev(queue, a))
    assert lp.cache_stats()["codegen"] == after_first

    np.testing.assert_allclose(out1, 5*a - 1, rtol=1e-6)
    np.testing.assert_array_equal(out1, out2)
    np.testing.assert_array_equal(out3, out1[:7])
    np.testing.assert_array_equal(out4.get(), out1)


def test_cache_new_dtype_triggers_codegen(queue, rng):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = 7*a[i] + 2",
                         name="cache_probe_new_dtype")
    a = rng.standard_normal(10).astype(np.float32)

    knl(queue, a=a)
    before = lp.cache_stats()["codegen"]
    evt, (out,) = knl(queue, a=a.astype(np.float64))
    assert lp.cache_stats()["codegen"] > before
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, 7*a.astype(np.float64) + 2, rtol=1e-12)


def test_cache_distinguishes_fixed_parameters(queue, rng):
    base = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 1",
                          name="cache_probe_fixed")
    for n in [4, 6, 4]:
        knl = lp.fix_parameters(base, n=n)
        a = rng.standard_normal(n)
        evt, (out,) = knl(queue, a=a)
        assert out.shape == (n,)
        np.testing.assert_allclose(out, a + 1, rtol=1e-12)


def test_cache_distinguishes_same_name_different_body(queue, rng):
    a = rng.standard_normal(5)
    for factor in [2, 3, 2]:
        knl = lp.make_kernel("{ [i]: 0<=i<n }", f"out[i] = {factor}*a[i]",
                             name="cache_probe_same_name")
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(out, factor*a, rtol=1e-12)


def test_cache_stats_has_counters():
    stats = lp.cache_stats()
    assert isinstance(stats, dict)
    assert "codegen" in stats and "builds" in stats
    assert all(isinstance(v, int) for v in stats.values())


def test_cache_identical_rebuilt_kernel_reuses_code(queue, rng):
    """An identical kernel built a second time hits the (on-disk or
    in-memory) cache instead of generating code again."""
    def build():
        return lp.make_kernel("{ [i]: 0<=i<n }",
                              "out[i] = 11*a[i] + 4",
                              name="cache_probe_rebuilt")
    a = rng.standard_normal(10)
    build()(queue, a=a)
    before = lp.cache_stats()["codegen"]
    evt, (out,) = build()(queue, a=a)
    assert lp.cache_stats()["codegen"] == before
    np.testing.assert_allclose(out, 11*a + 4, rtol=1e-12)


def test_cache_dir_env_is_used(queue, rng, kernelcore_cache_dir):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = 13*a[i] + 6",
                         name="cache_probe_disk")
    knl(queue, a=rng.standard_normal(4))
    entries = [os.path.join(root, f)
               for root, _, files in os.walk(kernelcore_cache_dir)
               for f in files]
    assert entries, "nothing written to KERNELCORE_CACHE_DIR"


_CROSS_PROCESS_SCRIPT = """
import json
import numpy as np
import kernelcore as lp
knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 19*a[i] + 8",
                     name="cache_probe_cross_process")
knl = lp.set_options(knl, write_code=True)
a = np.arange(6.0)
evt, (out,) = knl(lp.default_queue(), a=a)
np.testing.assert_array_equal(out, 19*a + 8)
print("STATS=" + json.dumps(lp.cache_stats()))
print("OK")
"""


def _stats_from_output(stdout):
    import json
    line, = [ln for ln in stdout.splitlines() if ln.startswith("STATS=")]
    return json.loads(line[len("STATS="):])


def test_on_disk_cache_across_processes(tmp_path):
    """A second process with the same KERNELCORE_CACHE_DIR reuses cached
    work; write_code still shows the code in both processes."""
    env = {"KERNELCORE_CACHE_DIR": str(tmp_path / "cache")}
    first = run_isolated(_CROSS_PROCESS_SCRIPT, extra_env=env)
    second = run_isolated(_CROSS_PROCESS_SCRIPT, extra_env=env)
    assert "__kernel" in first and "__kernel" in second
    s1 = _stats_from_output(first)
    s2 = _stats_from_output(second)
    assert s1["codegen"] >= 1
    assert (s2["codegen"] + s2["builds"]) < (s1["codegen"] + s1["builds"]), \
        (s1, s2)


_CACHING_DISABLED_SCRIPT = """
import numpy as np
import kernelcore as lp
lp.set_caching_enabled(False)
knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 23*a[i]",
                     name="cache_probe_off")
a = np.arange(6.0)
evt, (out,) = knl(lp.default_queue(), a=a)
np.testing.assert_array_equal(out, 23*a)
print("OK")
"""


def test_caching_disabled_writes_nothing_to_disk(tmp_path):
    cache_dir = tmp_path / "cache"
    run_isolated(_CACHING_DISABLED_SCRIPT,
                 extra_env={"KERNELCORE_CACHE_DIR": str(cache_dir)})
    written = [p for p in cache_dir.rglob("*") if p.is_file()] \
        if cache_dir.exists() else []
    assert written == []


def test_caching_disabled_still_runs(queue, rng):
    lp.set_caching_enabled(False)
    try:
        knl = lp.make_kernel("{ [i]: 0<=i<n }",
                             "out[i] = 17*a[i] - 3",
                             name="cache_probe_disabled")
        a = rng.standard_normal(4)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(out, 17*a - 3, rtol=1e-12)
    finally:
        lp.set_caching_enabled(True)

# }}}

# vim: foldmethod=marker


def test_indirect_index_clamped_with_64_bit_min_max(queue):
    """``max(x, 0)`` on 64-bit integers needs a typed literal (the OpenCL
    overload is ambiguous otherwise); data-dependent subscripts with casts are
    not affine, which the bounds checks must accept."""
    knl = lp.make_kernel(
        "{[i]: 0<=i<n}", "out[i] = a[min(max(int64(b[i]), 0), 3)]",
        [lp.GlobalArg("a", np.float32, shape=(4,)),
         lp.GlobalArg("b", np.int64, shape="n"), ...])
    a = np.array([10, 20, 30, 40], np.float32)
    b = np.array([-5, 0, 2, 3, 9], np.int64)
    _, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(out, a[np.clip(b, 0, 3)])


def test_single_precision_division_and_sqrt_round_correctly(queue):
    """Programs are built asking for correctly rounded float32 division and
    square roots where the device offers them (NVIDIA's OpenCL does not by
    default), so they match NumPy bit for bit."""
    from kernelcore.runtime.build import build_options
    supported = queue.device.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT
    assert ("-cl-fp32-correctly-rounded-divide-sqrt" in build_options(queue.device)) \
        == bool(supported)
    rng = np.random.default_rng(7)
    a, b = (rng.uniform(0.1, 10, 4096).astype(np.float32) for _ in range(2))
    knl = lp.make_kernel("{[i]: 0 <= i < 4096}",
                         ["q[i] = a[i] / b[i]", "r[i] = sqrt(a[i])"])
    _, out = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(out[0], a / b)
    np.testing.assert_array_equal(out[1], np.sqrt(a))


def test_guards_are_not_repeated_inside_themselves():
    """An ``if`` inside an ``if`` of the same condition is opened (not inside
    a loop, which may rebind the condition's names); adjacent ones merge."""
    from kernelcore.codegen.cast import For, If, Statement, merge_guards, print_nodes
    a, b, c = (Statement(f"{v} = 0;") for v in "abc")
    nodes = merge_guards([If("x > 0", [a, If("x > 0", [b, If("y > 0", [If("x > 0", [c])])])]),
                          If("x > 0", [c]),
                          For("int x = 0; x < 4; ++x", [If("x > 0", [a])])])
    text = "\n".join(print_nodes(nodes))
    assert text.count("if (x > 0)") == 2          # the outer one, and the one in the loop
    assert text.count("if (y > 0)") == 1
    assert text.count("c = 0;") == 2 and text.count("a = 0;") == 2
