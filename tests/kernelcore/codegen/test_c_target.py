"""The plain C targets: CTarget (C99 source) and ExecutableCTarget (compiled by
the system C compiler, called through ctypes with NumPy arrays)."""

import shutil
import uuid

import numpy as np
import pytest

import kernelcore as lp

pytestmark = pytest.mark.skipif(shutil.which("cc") is None,
                                 reason="no C compiler ('cc') found")


@pytest.fixture
def target():
    return lp.ExecutableCTarget()


def _c_code(knl, **dtypes):
    if dtypes:
        knl = lp.add_dtypes(knl, dtypes)
    return lp.generate_code_v2(knl).device_code()


# {{{ source

def test_tutorial_kernel_source():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]", target=lp.CTarget())
    code = _c_code(knl, a=np.float32)
    assert "#include <math.h>" in code
    assert ("void loopy_kernel(float const *restrict a, int const n, "
            "float *restrict out)") in code
    assert "for (int i = 0; i <= -1 + n; ++i)" in code
    assert "out[i] = 2.0f * a[i];" in code
    for opencl_word in ("__kernel", "__global", "get_local_id", "barrier"):
        assert opencl_word not in code


def test_opencl_output_unaffected():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    code = _c_code(knl, a=np.float32)
    assert "__kernel void" in code
    assert "__global float const *__restrict__ a" in code


def test_math_names_by_type():
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         "out[i] = sin(a[i]) + fabs(a[i]) + fmin(a[i], 1) + a[i]**3",
                         target=lp.CTarget())
    code32 = _c_code(knl, a=np.float32)
    assert "sinf(" in code32 and "fabsf(" in code32 and "fminf(" in code32
    code64 = _c_code(knl, a=np.float64)
    assert "sin(" in code64 and "sinf(" not in code64 and "fmin(" in code64


def test_ctarget_alone_does_not_run():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]", target=lp.CTarget())
    with pytest.raises(lp.InvocationError, match="ExecutableCTarget"):
        knl(None, a=np.ones(3, np.float32))

# }}}


# {{{ execution

@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_abs_wraps_as_numpys(target, dtype):
    # (abs of the most negative value is itself; what follows sees it negative)
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = abs(a[i]) // 5", target=target)
    a = np.array([np.iinfo(dtype).min, 7, -3, 0], dtype)
    _, (out,) = knl(None, a=a)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, np.abs(a) // 5)


def test_elementwise(target):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i] + 1", target=target)
    a = np.linspace(-1, 1, 37).astype(np.float32)
    evt, (out,) = knl(None, a=a)
    assert evt is None
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 2 * a + 1, rtol=1e-6)

    knl = lp.set_options(knl, return_dict=True)
    _, result = knl(None, a=a.astype(np.float64))
    assert result["out"].dtype == np.float64
    np.testing.assert_allclose(result["out"], 2 * a + 1)


def test_matvec_reduction(target, rng):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }",
                         "y[i] = sum(j, A[i, j] * x[j])", target=target)
    A = rng.standard_normal((13, 7))
    x = rng.standard_normal(7)
    _, (y,) = knl(None, A=A, x=x)
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)


def test_fortran_order_and_given_output(target, rng):
    knl = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }", "out[i, j] = a[i, j] - j",
        [lp.GlobalArg("a", np.float64, shape=("n", "m"), order="F"), "..."],
        target=target)
    a = np.asfortranarray(rng.standard_normal((4, 6)))
    expected = a - np.arange(6)
    _, (out,) = knl(None, a=a)
    np.testing.assert_allclose(out, expected)
    given = np.zeros((4, 6))
    _, (out,) = knl(None, a=a, out=given)
    assert out is given
    np.testing.assert_allclose(given, expected)
    # arrays in another layout are refused, as loopy does, not copied
    with pytest.raises(lp.InvocationError, match="strides mismatch along axis 0"):
        knl(None, a=np.ascontiguousarray(a))
    with pytest.raises(lp.InvocationError, match="'out': strides mismatch along axis 0"):
        knl(None, a=a, out=np.zeros((4, 12))[:, ::2])


def test_argument_checks(target):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]",
                         [lp.GlobalArg("a", np.float32, shape="n"), "..."], target=target)
    with pytest.raises(lp.InvocationError, match="dtype"):
        knl(None, a=np.ones(3))
    with pytest.raises(lp.InvocationError, match="shape"):
        knl(None, a=np.ones(3, np.float32), out=np.ones(4, np.float32))
    with pytest.raises(lp.InvocationError, match="missing"):
        knl(None)
    with pytest.raises(lp.InvocationError, match="no argument"):
        knl(None, a=np.ones(3, np.float32), b=1)


def test_aliased_input_and_output(target):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[n - 1 - i]", target=target)
    x = np.arange(6.0)
    _, (out,) = knl(None, a=x, out=x)
    assert out is x
    np.testing.assert_array_equal(x, np.arange(6.0)[::-1])


def test_triangular_domain(target, rng):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<=i }",
                         "out[i] = sum(j, a[j] * (i - j + 1))", target=target)
    a = rng.standard_normal(11)
    _, (out,) = knl(None, a=a)
    expected = [sum(a[j] * (i - j + 1) for j in range(i + 1)) for i in range(11)]
    np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_int_floordiv_mod_negative(target, dtype):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         """
                         q[i] = a[i] // b[i]
                         r[i] = a[i] % b[i]
                         s[i] = max(a[i], b[i]) + min(a[i], 2) + abs(a[i])
                         """, target=target)
    a = np.array([-7, 7, -7, 7, 0, -1, 5, -9], dtype)
    b = np.array([2, -2, -2, 2, 3, 4, -3, 3], dtype)
    _, (q, r, s) = knl(None, a=a, b=b)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(s, np.maximum(a, b) + np.minimum(a, 2) + np.abs(a))


def test_large_int64_literal(target):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 5000000000",
                         target=target)
    a = np.arange(4, dtype=np.int64)
    _, (out,) = knl(None, a=a)
    np.testing.assert_array_equal(out, a + 5000000000)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_functions(target, dtype):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        """
        o1[i] = sin(x[i]) + cos(x[i]) * exp(x[i]) - log(x[i]) + sqrt(x[i])
        o2[i] = atan2(x[i], 2) + fabs(-x[i]) + fmin(x[i], 0.5) + fmax(x[i], 0.5)
        o3[i] = x[i]**2 + x[i]**x[i] + floor(3*x[i]) + tanh(x[i]) + exp10(x[i])
        o4[i] = rsqrt(x[i]) + fmod(5*x[i], 0.75) + (x[i] // 0.3) + (x[i] % 0.3)
        """, target=target)
    x = np.linspace(0.1, 2.0, 23).astype(dtype)
    _, (o1, o2, o3, o4) = knl(None, x=x)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for out in (o1, o2, o3, o4):
        assert out.dtype == dtype
    np.testing.assert_allclose(o1, np.sin(x) + np.cos(x) * np.exp(x) - np.log(x)
                               + np.sqrt(x), rtol=rtol)
    np.testing.assert_allclose(o2, np.arctan2(x, 2) + np.abs(x) + np.minimum(x, 0.5)
                               + np.maximum(x, 0.5), rtol=rtol)
    np.testing.assert_allclose(o3, x**2 + x**x + np.floor(3 * x) + np.tanh(x)
                               + 10**x, rtol=rtol)
    c1, c2 = dtype(0.75), dtype(0.3)           # the constants, in the kernel's type
    expected = 1 / np.sqrt(x) + np.fmod(5 * x, c1) + x // c2 + x % c2
    np.testing.assert_allclose(o4, expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex(target, dtype, rng):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = c * z[i] * z[i] + exp(z[i]) + abs(z[i]) + conj(z[i]) / (z[i] + 1)",
        [lp.ValueArg("c", dtype), "..."], target=target)
    z = (rng.standard_normal(9) + 1j * rng.standard_normal(9)).astype(dtype)
    _, (out,) = knl(None, z=z, c=2 - 0.5j)
    assert out.dtype == dtype
    expected = (2 - 0.5j) * z * z + np.exp(z) + abs(z) + np.conj(z) / (z + 1)
    np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == np.complex64 else 1e-12)


def test_split_and_unrolled(target):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] * i", target=target)
    knl = lp.split_iname(knl, "i", 4, inner_tag="unr")
    code = _c_code(knl.copy(target=lp.CTarget()), a=np.float64)
    assert "i_inner" not in code                       # unrolled away
    for n in (0, 1, 7, 8, 13):
        a = np.arange(n, dtype=np.float64) + 0.5
        _, (out,) = knl(None, a=a)
        np.testing.assert_allclose(out, a * np.arange(n))

# }}}


# {{{ parallel tags run sequentially

def test_parallel_tags_sequentialized(target, rng):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<n }",
                         "y[i] = sum(j, A[i, j] * x[j]) + i", target=target)
    knl = lp.split_iname(knl, "i", 8, outer_tag="g.0", inner_tag="l.0")
    code = _c_code(knl.copy(target=lp.CTarget()), A=np.float64, x=np.float64)
    assert "_kc_gid0" in code and "_kc_lid0 < 8" in code
    for n in (5, 16, 21):
        A = rng.standard_normal((n, n))
        x = rng.standard_normal(n)
        _, (y,) = knl(None, A=A, x=x)
        np.testing.assert_allclose(y, A @ x + np.arange(n), rtol=1e-12)


def test_atomic_update_sequentialized(target):
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }", "total[0] = total[0] + a[i] {atomic}",
        [lp.GlobalArg("total", np.float32, shape=(1,), for_atomic=True), "..."],
        target=target)
    knl = lp.split_iname(knl, "i", 4, outer_tag="g.0", inner_tag="l.0")
    total = np.zeros(1, np.float32)
    knl(None, a=np.ones(10, np.float32), total=total)
    assert total[0] == 10


def test_global_barrier_runs_kernels_in_order(target):
    knl = lp.make_kernel(
        "[n] -> {[i] : 0<=i<n}",
        """
        for i
           <>tmp = arr[i] {id=maketmp,dep=*}
           ... gbarrier {id=bar,dep=*maketmp}
           arr[(i + 1) % n] = tmp {id=rotate,dep=*bar}
        end
        """,
        [lp.GlobalArg("arr", shape=("n",), dtype=np.int32), "..."],
        assumptions="n mod 16 = 0", target=target)
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0", outer_tag="g.0")
    knl = lp.save_and_reload_temporaries(knl)
    arr = np.arange(32, dtype=np.int32)
    _, (out,) = knl(None, arr=arr.copy())
    np.testing.assert_array_equal(out, np.roll(arr, 1))
    with pytest.raises(lp.InvocationError, match="assumptions"):
        knl(None, arr=np.arange(17, dtype=np.int32))


def test_local_barrier_rejected(target):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]", target=target)
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.add_prefetch(knl, "a", ["i_inner"], default_tag="l.auto")
    with pytest.raises(lp.CodeGenerationError, match="barrier"):
        knl(None, a=np.arange(40.0))

# }}}


# {{{ the library cache

def test_compiled_library_is_cached(target):
    from kernelcore.runtime import c_invoke

    name = f"cache_probe_{uuid.uuid4().hex[:12]}"
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 3", name=name,
                         target=target)
    a = np.arange(5, dtype=np.float32)
    before = dict(c_invoke.STATS)
    knl(None, a=a)
    assert c_invoke.STATS["compiles"] == before["compiles"] + 1
    _, (out,) = knl(None, a=a)                 # same executor: nothing rebuilt
    np.testing.assert_array_equal(out, a + 3)
    assert c_invoke.STATS["compiles"] == before["compiles"] + 1

    # a fresh process would find the library on disk: forget it in memory
    c_invoke._LIBRARIES.clear()
    c_invoke._EXECUTORS.clear()
    again = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 3", name=name,
                           target=lp.ExecutableCTarget())
    _, (out,) = again(None, a=a)
    np.testing.assert_array_equal(out, a + 3)
    assert c_invoke.STATS["compiles"] == before["compiles"] + 1
    assert c_invoke.STATS["disk_hits"] == before["disk_hits"] + 1


def test_c_function_is_the_compiled_kernel_called_by_ctypes(target):
    """``lp.c_function``: the kernel's C function, arguments in its order
    (arrays as addresses), built once and then taken from the cache."""
    import ctypes

    from kernelcore.runtime import c_invoke

    name = f"function_probe_{uuid.uuid4().hex[:12]}"
    knl = lp.make_kernel("{ [i]: 0<=i<8 }", "out[i] = s * a[i] - 1",
                         [lp.GlobalArg("a", np.float64, shape=(8,)),
                          lp.GlobalArg("out", np.float64, shape=(8,)),
                          lp.ValueArg("s", np.float64)], name=name, target=target)
    before = dict(c_invoke.STATS)
    function = lp.c_function(knl)
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double]
    function.restype = None
    a, out = np.linspace(0, 1, 8), np.zeros(8)
    function(a.ctypes.data, out.ctypes.data, 2.5)
    np.testing.assert_array_equal(out, 2.5 * a - 1)
    assert lp.c_function(knl).__name__ == name
    assert c_invoke.STATS["compiles"] == before["compiles"] + 1


def test_missing_compiler():
    from kernelcore.runtime.c_invoke import CCompilationError

    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] + 4",
                         name=f"nocc_{uuid.uuid4().hex[:12]}",
                         target=lp.ExecutableCTarget(compiler="no-such-compiler-xyz"))
    with pytest.raises(CCompilationError, match="not found"):
        knl(None, a=np.ones(3))

# }}}


def test_c_compilation_error_quotes_the_source_line():
    from kernelcore.runtime.c_invoke import CCompilationError

    class Broken(lp.ScalarCallable):
        def with_types(self, arg_id_to_dtype, callables_table):
            t = arg_id_to_dtype.get(0)
            if t is None:
                return self, callables_table
            return (self.copy(name_in_target="broken", arg_id_to_dtype={0: t, -1: t}),
                    callables_table)

        def generate_preambles(self, target):
            yield ("00_broken", f"this is not C {uuid.uuid4().hex};")

    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = broken(a[i])",
                         target=lp.ExecutableCTarget())
    knl = lp.register_callable(knl, "broken", Broken(name="broken"))
    with pytest.raises(CCompilationError) as info:
        knl(None, a=np.ones(3, np.float32))
    msg = str(info.value)
    assert msg.startswith("C compilation of kernel 'loopy_kernel' (")
    assert ">    1 | this is not C" in msg
    assert "--- compiler log ---" in msg


def test_long_double_math_on_the_c_target():
    """NumPy's longdouble is C's long double: ``sinl``/``powl`` and ``L``
    literals, agreeing with NumPy's long-double functions (where longdouble
    is just a double, the same kernel is plain double code)."""
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = sin(a[i]) * 3 + pow(a[i], 2.5)",
                         [lp.GlobalArg("a,out", np.longdouble, shape="n"), ...],
                         target=lp.ExecutableCTarget())
    a = np.linspace(0.01, 3, 50).astype(np.longdouble)
    _, (out,) = knl(a=a)
    assert out.dtype == np.longdouble
    np.testing.assert_allclose(out, np.sin(a) * 3 + a ** np.longdouble(2.5),
                               rtol=8 * np.finfo(np.longdouble).eps)
    code = lp.generate_code_v2(knl).device_code()
    if np.dtype(np.longdouble).itemsize > 8:
        assert "long double const *" in code and "sinl(" in code and "powl(" in code
        assert "2.5e+00L" in code
