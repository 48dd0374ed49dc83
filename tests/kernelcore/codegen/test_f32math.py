"""kernelcore's branch-free float32 ``sin``, ``cos``, ``tan`` and logarithms
(``OpenCLTarget(math_f32="branch_free")``, which lazyarray picks on PoCL's
CPU devices): correctly rounded against float64 results rounded to float32,
over random bit patterns, the hard cases (near multiples of pi/2, near 1,
powers of 2 and 10) and special values; other functions and types keep
OpenCL's built-ins."""

import math

import numpy as np
import pytest

import kernelcore as lp
import lazyarray as la
from kernelcore.target.f32math import F32_HELPERS, TWO_OVER_PI_CHUNKS
from lazyarray.target import Target, math_f32_choice
from tests.kernelcore.codegen.pocl_remarks import pocl_cpu, vectorizer_remarks


def _arguments() -> np.ndarray:
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2 ** 32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    small = (rng.standard_normal(1 << 16) * 10.0 ** rng.uniform(-8, 6, 1 << 16))
    # float32s nearest to k pi/2 (and their neighbours): the hardest reductions
    k = np.concatenate([np.arange(1, 20000), rng.integers(1, 2 ** 52, 4000)]).astype(np.float64)
    near = (k * (np.pi / 2)).astype(np.float32)
    near = np.concatenate([near, np.nextafter(near, np.float32(np.inf)),
                           np.nextafter(near, np.float32(0))])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38,
               3.4028235e38, -3.4028235e38, 1.0, np.pi / 4, 105414350.0, 1e22]
    return np.concatenate([bits, small.astype(np.float32), near, np.float32(special)])


def _run(name: str, queue, *arrays: np.ndarray) -> np.ndarray:
    """``name(a[i], ...)`` of float32 *arrays* (one or two) on *queue*, with
    kernelcore's helpers."""
    names = "ab"[:len(arrays)]
    knl = lp.make_kernel(
        "{[i]: 0 <= i < n}", f"out[i] = {name}({', '.join(f'{v}[i]' for v in names)})",
        [*(lp.GlobalArg(v, np.float32, shape="n") for v in names),
         lp.GlobalArg("out", np.float32, shape="n"), lp.ValueArg("n", np.int32)],
        target=lp.PyOpenCLTarget(math_f32="branch_free"))
    knl = lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
    _, (out,) = knl(queue, **dict(zip(names, arrays)), n=np.int32(arrays[0].size))
    return out


def _assert_within_an_ulp(out: np.ndarray, ref: np.ndarray, off: int) -> None:
    """*out* NaN exactly where *ref* is, elsewhere at most a float ulp from
    it, and off at all at most *off* times."""
    nan = np.isnan(ref)
    assert np.isnan(out[nan]).all() and not np.isnan(out[~nan]).any()
    ulps = np.abs(out[~nan].view(np.int32).astype(np.int64)
                  - ref[~nan].view(np.int32).astype(np.int64))
    assert ulps.max() <= 1
    assert (ulps > 0).sum() <= off


def _log_arguments() -> np.ndarray:
    rng = np.random.default_rng(2)
    bits = rng.integers(0, 2 ** 32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near_one = np.float32(1) + rng.standard_normal(1 << 15).astype(np.float32) \
        * np.float32(2.0) ** rng.integers(-30, 0, 1 << 15).astype(np.float32)
    powers = np.float32(2.0) ** np.arange(-149, 128, dtype=np.float32)
    tens = np.float32(10.0) ** np.arange(-10, 11, dtype=np.float32)
    small = rng.standard_normal(1 << 14).astype(np.float32) * np.float32(2.0) ** rng.integers(
        -40, 0, 1 << 14).astype(np.float32)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -1.5, 1e-45, 3.4028235e38,
               np.sqrt(2), np.sqrt(0.5), 2 ** -29, -2 ** -29, 2 ** -30, -0.9999999]
    return np.concatenate([bits, near_one, powers, tens, small, np.float32(special)])


def _exp_arguments() -> np.ndarray:
    rng = np.random.default_rng(3)
    wide = rng.uniform(-150, 130, 1 << 17).astype(np.float32)
    small = rng.standard_normal(1 << 15).astype(np.float32) * np.float32(2.0) ** rng.integers(
        -40, 0, 1 << 15).astype(np.float32)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.0625, -0.0625, 1e-45, 88.72, 89.4, 89.5,
             127.99, 128.0, -149.0, -150.0, -87.0, -103.9, -104.0]
    return np.concatenate([wide, small, np.arange(-150, 129, dtype=np.float32),
                           np.float32(edges)])


def _inverse_arguments() -> np.ndarray:
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2 ** 32, 1 << 17, dtype=np.uint64).astype(np.uint32).view(np.float32)
    unit = rng.uniform(-1, 1, 1 << 16).astype(np.float32)
    near = np.float32(1) - np.float32(2.0) ** -rng.integers(1, 25, 1 << 12).astype(np.float32)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.41421357, 2 ** -12, -2 ** -12,
             1.0000001, 3.4028235e38, 1e-45]
    return np.concatenate([bits, unit, near, -near, 1 / near, np.float32(edges)])


_INVERSE = {"atan": "arctan", "asin": "arcsin", "acos": "arccos", "asinh": "arcsinh",
            "acosh": "arccosh", "atanh": "arctanh"}


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "log", "log2", "log10", "log1p",
                                  "exp2", "expm1", "sinh", "cosh", "cbrt", *_INVERSE])
def test_branch_free_math_is_correctly_rounded(queue, name):
    x = _arguments() if name in ("sin", "cos", "tan") else _log_arguments() \
        if name.startswith("log") or name == "cbrt" else _inverse_arguments() \
        if name in _INVERSE \
        else _exp_arguments()
    out = _run(name, queue, x)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ref = getattr(np, _INVERSE.get(name, name))(x.astype(np.float64)).astype(np.float32)
    # (the reference rounds twice: it may be a float32 ulp off once in a while)
    _assert_within_an_ulp(out, ref, x.size // 100000 + 1)
    assert np.array_equal(np.isinf(out), np.isinf(ref))
    if name in ("sin", "tan", "log1p", "expm1", "sinh", "atan", "asin", "asinh", "atanh",
                "cbrt"):
        # (the sign of zero kept)
        assert np.signbit(_run(name, queue, np.float32([-0.0, 0.0]))).tolist() == [True, False]


def test_branch_free_pow_matches_numpy(queue):
    """x**y: at most a float ulp from the float64 power rounded (rarely
    off at all), and C99's special values exactly (zeros, infinities, NaN,
    negative bases, odd and even integer exponents)."""
    rng = np.random.default_rng(6)
    bases = np.concatenate([np.float32([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
                                        np.inf, -np.inf, np.nan, 1e-45, 3.4e38, -1.5]),
                            rng.uniform(-10, 10, 40).astype(np.float32),
                            (10.0 ** rng.uniform(-30, 30, 40)).astype(np.float32)])
    exponents = np.concatenate([np.float32([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5,
                                            2.5, np.inf, -np.inf, np.nan, 1e10, -1e10,
                                            16777217.0, 33.0, -7.0, 0.1]),
                                rng.uniform(-5, 5, 30).astype(np.float32)])
    x = np.repeat(bases, exponents.size)
    y = np.tile(exponents, bases.size)
    out = _run("pow", queue, x, y)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    _assert_within_an_ulp(out, ref, 3)
    nan = np.isnan(ref)
    exact = ~nan & (np.isinf(ref) | (ref == 0) | (np.abs(ref) == 1))
    assert np.array_equal(out[exact].view(np.uint32), ref[exact].view(np.uint32))


@pytest.mark.parametrize("name", ["atan2", "hypot"])
def test_branch_free_atan2_and_hypot_are_correctly_rounded(queue, name):
    """Every pair of special values (signed zeros, infinities, NaN), tiny and
    huge values, and random pairs: at most a float ulp from the float64
    result rounded (rarely off at all), special values bit-exact."""
    rng = np.random.default_rng(7)
    special = np.float32([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
                          3.4e38, -3.4e38, 2.5, -0.75])
    a = np.concatenate([np.repeat(special, special.size),
                        rng.standard_normal(1 << 14).astype(np.float32),
                        (10.0 ** rng.uniform(-40, 38, 1 << 14)).astype(np.float32)])
    b = np.concatenate([np.tile(special, special.size),
                        rng.standard_normal(1 << 14).astype(np.float32),
                        -(10.0 ** rng.uniform(-40, 38, 1 << 14)).astype(np.float32)])
    out = _run(name, queue, a, b)
    fn = {"atan2": np.arctan2, "hypot": np.hypot}[name]
    with np.errstate(all="ignore"):
        ref = fn(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    _assert_within_an_ulp(out, ref, a.size // 100000 + 1)
    nan = np.isnan(ref)
    k = special.size ** 2
    np.testing.assert_array_equal(out[:k][~nan[:k]].view(np.uint32),
                                  ref[:k][~nan[:k]].view(np.uint32))


def test_chunks_are_the_bits_of_two_over_pi():
    value = sum(c * 2.0 ** (-24 * (j + 1)) for j, c in enumerate(TWO_OVER_PI_CHUNKS))
    assert value == 2 / math.pi
    assert all(0 <= c < 2 ** 24 for c in TWO_OVER_PI_CHUNKS)
    # 2/pi = 0.a2f9836e4e44... in hexadecimal
    assert TWO_OVER_PI_CHUNKS[:2] == (0xA2F983, 0x6E4E44)


def test_only_their_float32_functions_use_the_helpers():
    target = lp.PyOpenCLTarget(math_f32="branch_free")
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    assert target.function_name("sin", [f32], f32) == "kc_sin_f32"
    assert target.function_name("cos", [f32], f32) == "kc_cos_f32"
    assert target.function_name("sin", [f64], f64) == "sin"
    assert target.function_name("tan", [f32], f32) == "kc_tan_f32"
    assert target.function_name("sinh", [f32], f32) == "kc_sinh_f32"
    assert target.function_name("exp", [f32], f32) == "exp"  # (PoCL vectorizes its own)
    assert target.function_name("tanh", [f32], f32) == "tanh"
    assert target.function_name("log1p", [f32], f32) == "kc_log1p_f32"
    assert target.function_name("log", [f64], f64) == "log"
    assert target.function_name("pow", [f32, f32], f32) == "kc_pow_f32"
    assert target.function_name("pow", [f64, f64], f64) == "pow"
    assert lp.PyOpenCLTarget().function_name("sin", [f32], f32) == "sin"
    assert target != lp.PyOpenCLTarget() and hash(target) != hash(lp.PyOpenCLTarget())
    assert "math_f32='branch_free'" in repr(target)
    with pytest.raises(ValueError, match="math_f32 must be"):
        lp.PyOpenCLTarget(math_f32="fast")


@pytest.mark.parametrize("name, width", [("sin", 16), ("cos", 16), ("sin", 4), ("cos", 8)])
def test_vector_sin_and_cos_equal_the_helpers(queue, name, width):
    """In a ``vec`` loop sin and cos of float32 call their vector versions
    (a fast path for whole vectors below 2^18), bitwise equal to the scalar
    helpers' results; targets without them (C) unroll such a loop."""
    x = _arguments()
    x = np.concatenate([x, np.zeros(-x.size % 16, np.float32)])
    knl = lp.make_kernel(
        "{[i]: 0 <= i < n}", f"out[i] = {name}(a[i])",
        [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("out", np.float32, shape="n"),
         lp.ValueArg("n", np.int32)],
        target=lp.PyOpenCLTarget(math_f32="branch_free"), assumptions="n mod 16 = 0")
    knl = lp.split_iname(knl, "i", width, outer_tag="g.0", inner_tag="vec")
    code = lp.generate_code_v2(knl).device_code()
    assert f"kc_{name}_f32v{width}(vload{width}(" in code
    _, (out,) = knl(queue, a=x, n=np.int32(x.size))
    scalar = _run(name, queue, x)
    same = (out.view(np.uint32) == scalar.view(np.uint32)) | (np.isnan(out) & np.isnan(scalar))
    assert same.all(), x[~same][:5]
    assert lp.CTarget().vector_helper(f"kc_{name}_f32", width) is None


@pytest.fixture
def branch_free_cpu(monkeypatch, device_layouts):
    """lazyarray's CPU target with kernelcore's float32 math, on any device."""
    import lazyarray.target as la_target
    device_layouts("cpu", 2)
    monkeypatch.setattr(la_target, "math_f32_choice", lambda device: "branch_free")
    monkeypatch.setattr(la_target, "_TARGETS", {})


def _code(y) -> str:
    from lazyarray.run import steps
    return "\n".join(lp.generate_code_v2(s.kernel).device_code() for s in steps.plan([y.node]))


def test_lazyarray_computes_sin_and_cos_on_vectors(queue, branch_free_cpu):
    """Float32 arithmetic with sin and cos over rows of a multiple of 64
    elements: each work-item computes 16 elements as one vector, with the
    vector sin and cos; the same values as the layout of one element per
    work-item (a row of another length); other kernels keep that layout."""
    x = _arguments()[:4096 * 5].reshape(5, 4096)
    ragged = [la.asarray(np.append(v, np.float32(0.5))) for v in x]
    lazy = [la.asarray(v) for v in x]

    def w1(a, b, c, d, e):
        return a * b + c * d - np.sin(e) / np.cos(e)

    assert "kc_sin_f32v16(" in _code(w1(*lazy)) and "kc_cos_f32v16(" in _code(w1(*lazy))
    assert "v16(" not in _code(w1(*ragged))
    with np.errstate(all="ignore"):
        got, want = np.asarray(w1(*lazy)), np.asarray(w1(*ragged))[:4096]
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all()
    # rows of a matrix; no elements
    m = x[:, :3 * 128].reshape(15, 128)
    got = np.asarray(np.cos(la.asarray(m)) * 3)
    want = np.asarray(np.cos(la.asarray(np.pad(m, ((0, 0), (0, 1))))) * 3)[:, :128]
    assert "kc_cos_f32v16(" in _code(np.cos(la.asarray(m)) * 3)
    assert ((got.view(np.uint32) == want.view(np.uint32)) | np.isnan(got)).all()
    assert np.asarray(np.sin(la.asarray(np.zeros((3, 0), np.float32)))).shape == (3, 0)
    for other in (np.sin(lazy[0]) + np.exp(lazy[1]), np.sin(lazy[0][::2]) * 2,
                  np.sin(lazy[0].astype(np.float64)), np.sin(lazy[0][:32])):
        assert "v16(" not in _code(other)


def test_lazyarray_uses_them_on_pocl_cpus_and_agrees_with_numpy(queue):
    device = queue.device
    target = Target.of(device)
    assert target.math_f32 == math_f32_choice(device)
    x = _arguments()[:70000]
    lx = la.asarray(x)
    code = la.explain(np.sin(lx) * 2 + np.cos(lx), show_code=True)
    if target.math_f32 == "branch_free":
        assert "kc_sin_f32(" in code and "kc_cos_f32(" in code
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for fn in (np.sin, np.cos, np.tan, np.log, np.log2, np.log10, np.log1p, np.exp2,
                   np.expm1, np.sinh, np.cosh, np.arctan, np.arcsin, np.arccos, np.arcsinh,
                   np.arccosh, np.arctanh, np.cbrt):
            got = np.asarray(fn(lx))
            np.testing.assert_allclose(got, fn(x), rtol=2.5e-7, atol=1e-45, equal_nan=True)
        np.testing.assert_allclose(np.asarray(abs(lx) ** 1.5), np.abs(x) ** np.float32(1.5),
                                   rtol=2.5e-7, atol=1e-45, equal_nan=True)
        for fn in (np.arctan2, np.hypot):
            np.testing.assert_allclose(np.asarray(fn(lx, lx[::-1])), fn(x, x[::-1]),
                                       rtol=2.5e-7, atol=1e-45, equal_nan=True)
        got = np.asarray(np.sin(lx.astype(np.float64)))
        np.testing.assert_allclose(got, np.sin(x.astype(np.float64)), rtol=1e-15,
                                   equal_nan=True)


#: kernels mixing helpers (two calls of one function, sin and cos of one value, W1's expression)
_MIXES = ["kc_sin_f32(x[i]) + kc_sin_f32(z[i])", "kc_sin_f32(x[i]) * 2.0f + kc_cos_f32(x[i])",
          "x[i] * z[i] + z[i] * x[i] - kc_sin_f32(z[i])",
          "kc_log_f32(x[i]) + kc_atan_f32(z[i]) + kc_exp2_f32(x[i])"]


@pytest.mark.skipif(not pocl_cpu(), reason="checks PoCL's vectorizer: no PoCL CPU device here")
def test_pocl_vectorizes_every_helper_and_mixes(tmp_path):
    """The helpers exist to be vectorized by PoCL: its loop vectorizer's
    remarks name no loop it left (as it does when clang's SLP pass paired two
    computations first, or a call stayed a call)."""
    log = vectorizer_remarks("f32math", "F32_HELPERS", "f32_helper_source", "float", _MIXES,
                             len(F32_HELPERS), tmp_path)
    assert log.count("vectorized loop") >= len(F32_HELPERS) + len(_MIXES)
    assert "loop not vectorized" not in log and "SLP vectorized" not in log, log[-3000:]
