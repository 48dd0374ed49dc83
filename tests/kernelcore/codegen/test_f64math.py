"""kernelcore's branch-free float64 math (``OpenCLTarget(math_f64="branch_free")``,
which lazyarray picks on PoCL's CPU devices): within an ulp of the exact
value (``np.longdouble``'s 64-bit significand as the reference) over random
bit patterns, the hard cases (near 1, tiny and huge values, overflow and
underflow edges) and special values exactly as NumPy's (C99's)."""

import numpy as np
import pytest

import kernelcore as lp
import lazyarray as la
from kernelcore.target.f64math import F64_HELPERS
from lazyarray.target import Target, math_f64_choice
from tests.kernelcore.codegen.pocl_remarks import pocl_cpu, vectorizer_remarks

_LD = np.longdouble
#: (x86's long double: a 64-bit significand, 11 bits more than a double's)
_EXTENDED = np.finfo(_LD).nmant >= 63


def _run(name: str, queue, *arrays: np.ndarray) -> np.ndarray:
    """``name(a[i], ...)`` of float64 *arrays* on *queue*, with kernelcore's helpers."""
    names = "ab"[:len(arrays)]
    knl = lp.make_kernel(
        "{[i]: 0 <= i < n}", f"out[i] = {name}({', '.join(f'{v}[i]' for v in names)})",
        [*(lp.GlobalArg(v, np.float64, shape="n") for v in names),
         lp.GlobalArg("out", np.float64, shape="n"), lp.ValueArg("n", np.int32)],
        target=lp.PyOpenCLTarget(math_f64="branch_free"))
    knl = lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0")
    _, (out,) = knl(queue, **dict(zip(names, arrays)), n=np.int32(arrays[0].size))
    return out


def _ulps(out: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|out - exact| in ulps of exact rounded to double, where that is finite
    and nonzero (0 elsewhere); *out* must be NaN, infinite or zero exactly
    where the rounded reference is."""
    with np.errstate(over="ignore"):
        ref = exact.astype(np.float64)
    assert np.array_equal(np.isnan(out), np.isnan(ref))
    assert np.array_equal(np.isinf(out), np.isinf(ref))
    assert np.array_equal(out[np.isinf(ref)], ref[np.isinf(ref)])
    ordinary = np.isfinite(ref) & (ref != 0)
    with np.errstate(invalid="ignore", over="ignore"):
        ulps = np.abs(out.astype(_LD) - exact) / np.spacing(np.abs(ref)).astype(_LD)
    return np.where(ordinary, ulps, 0).astype(np.float64)


def _bits(rng, n: int) -> np.ndarray:
    """Random bit patterns (every exponent as likely), NaN-free, both signs."""
    x = rng.integers(0, 0x7FF0000000000000, n, dtype=np.int64).view(np.float64)
    return x * rng.choice([-1.0, 1.0], n)


def _log_arguments() -> np.ndarray:
    rng = np.random.default_rng(11)
    near_one = 1 + rng.standard_normal(1 << 16) * 2.0 ** rng.integers(-52, 0, 1 << 16)
    tiny = rng.standard_normal(1 << 14) * 2.0 ** rng.integers(-70, -20, 1 << 14)
    return np.concatenate([np.abs(_bits(rng, 1 << 18)), near_one, tiny, near_one - 1,
                           rng.uniform(-1, 1, 1 << 15), 2.0 ** np.arange(-1074, 1024.0),
                           10.0 ** np.arange(-300, 300.0), np.sqrt([0.5, 2.0]), [5e-324]])


def _exp_arguments() -> np.ndarray:
    rng = np.random.default_rng(12)
    small = rng.standard_normal(1 << 15) * 2.0 ** rng.integers(-60, 0, 1 << 15)
    edges = [709.78, 709.782712893384, 709.7827128933841, -37.5, -745.2, 19.0, 20.0, 0.3466,
             5e-324, 2.0 ** -54, 2.0 ** -27, 22.0, 22.000000000000004, 710.4758600739439,
             710.475860073944, 1024.0, 1023.9999999999999, 1074.0, 1075.0, 1076.0]
    return np.concatenate([_bits(rng, 1 << 17), rng.uniform(-40, 40, 1 << 17), small,
                           rng.uniform(-760, 720, 1 << 15), rng.uniform(-1080, 1030, 1 << 15),
                           edges, np.negative(edges)])


_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324,
                     2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308])


@pytest.mark.skipif(not _EXTENDED, reason="np.longdouble is a double here: no reference")
def _atan_arguments() -> np.ndarray:
    rng = np.random.default_rng(15)
    edges = [0.41421356237309503, 0.414213562373095, 1.0, 1.0000000000000002,
             0.9999999999999999, 2.0 ** -27, 2.0 ** -28, 1e300, 2.0 ** 1000, 2.0 ** 1001]
    return np.concatenate([_bits(rng, 1 << 17), rng.uniform(-3, 3, 1 << 17),
                           np.tan(rng.uniform(-1.6, 1.6, 1 << 15)), edges, np.negative(edges)])


def _asin_arguments() -> np.ndarray:
    rng = np.random.default_rng(17)
    near = 1 - 2.0 ** -rng.uniform(1, 53, 1 << 15)
    small = rng.standard_normal(1 << 14) * 2.0 ** rng.integers(-40, 0, 1 << 14)
    edges = [0.5, 2.0 ** -27, 2.0 ** -28, 0.9999999999999999, 1.0000000000000002, 1.5]
    return np.concatenate([rng.uniform(-1, 1, 1 << 17), near, -near, small, _bits(rng, 1 << 14),
                           edges, np.negative(edges)])


_ARC = {"atan": "arctan", "asin": "arcsin", "acos": "arccos"}


@pytest.mark.parametrize("name", ["log", "log2", "log10", "log1p", "exp2", "expm1", "sinh",
                                  "cosh", "tanh", "atan", "asin", "acos", "cbrt"])
def test_branch_free_f64_math_is_within_an_ulp(queue, name):
    x = _log_arguments() if name.startswith("log") else _atan_arguments() \
        if name == "atan" else _asin_arguments() if name in _ARC else _exp_arguments()
    if name == "cbrt":
        x = np.concatenate([x, -x, np.arange(1, 3000.0) ** 3])
    x = np.concatenate([x, _SPECIAL])
    out = _run(name, queue, x)
    ufunc = getattr(np, _ARC.get(name, name))
    with np.errstate(all="ignore"):
        exact = ufunc(x.astype(_LD))
        numpy = ufunc(x)
    ulps = _ulps(out, exact)
    assert ulps.max() < 1, (ulps.max(), x[np.argmax(ulps)])
    assert (ulps > 0.5).mean() < 1e-2          # (nearly always correctly rounded)
    # special values and signed zeros exactly as NumPy's
    special = ~np.isfinite(numpy) | (numpy == 0) | np.isin(x, _SPECIAL)
    same = (out.view(np.int64) == numpy.view(np.int64)) | (np.isnan(out) & np.isnan(numpy))
    assert same[special].all(), x[special & ~same][:5]


@pytest.mark.skipif(not _EXTENDED, reason="np.longdouble is a double here: no reference")
def test_branch_free_pow_is_within_an_ulp(queue):
    """x**y over random bases and exponents, x near 1 with huge exponents,
    results near overflow and through the subnormals: within an ulp."""
    rng = np.random.default_rng(13)
    n = 1 << 17
    x = np.concatenate([np.abs(_bits(rng, n)), rng.uniform(0, 4, n),
                        1 + rng.standard_normal(n) * 2.0 ** rng.integers(-40, 0, n),
                        rng.uniform(0.5, 2, n)])
    y = np.concatenate([rng.standard_normal(n) * 2.0 ** rng.integers(-20, 12, n),
                        rng.uniform(-300, 300, n),
                        rng.standard_normal(n) * 2.0 ** rng.integers(0, 50, n),
                        rng.uniform(-1100, 1100, n)])
    out = _run("pow", queue, x, y)
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(_LD), y.astype(_LD))
    ulps = _ulps(out, exact)
    assert ulps.max() < 1, (ulps.max(), x[np.argmax(ulps)], y[np.argmax(ulps)])
    assert (ulps > 0.5).mean() < 2e-3


def test_branch_free_pow_special_values_are_numpys(queue):
    """Every pair of special bases and exponents: C99's values (pow(x, 0) = 1
    even for NaN, pow(1, y) = 1, negative bases with odd, even and
    non-integer exponents, signed zeros, infinities) bit for bit as NumPy's."""
    bases = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf,
                      np.nan, 5e-324, -5e-324, 1.7976931348623157e308, -1.5, 1 + 2 ** -52])
    exponents = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, 2.5, np.inf, -np.inf,
                          np.nan, 1e10, -1e10, 2.0 ** 53 + 2, 2.0 ** 53 - 1, 33.0, -7.0, 0.1,
                          1024.0, -1074.0, -1075.0, 1e300, 5e-324])
    x = np.repeat(bases, exponents.size)
    y = np.tile(exponents, bases.size)
    out = _run("pow", queue, x, y)
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    exact = ~np.isfinite(ref) | (ref == 0) | (np.abs(ref) == 1) | (np.abs(x) == 2)
    same = (out.view(np.int64) == ref.view(np.int64)) | (np.isnan(out) & np.isnan(ref))
    assert same[exact].all(), list(zip(x[exact & ~same], y[exact & ~same]))[:5]
    np.testing.assert_allclose(out, ref, rtol=4 * np.finfo(np.float64).eps, equal_nan=True)


@pytest.mark.skipif(not _EXTENDED, reason="np.longdouble is a double here: no reference")
@pytest.mark.parametrize("name", ["atan2", "hypot"])
def test_branch_free_atan2_and_hypot_are_within_an_ulp_and_their_special_values_numpys(
        queue, name):
    """atan2(y, x) and hypot(y, x) over random bit patterns, ordinary values
    and quotients that overflow or underflow: within an ulp; every pair of
    special values (signed zeros, infinities, NaN, the smallest and largest
    values) bit for bit as NumPy's (C99's)."""
    rng = np.random.default_rng(16)
    n = 1 << 17
    special = np.concatenate([_SPECIAL, [-2.5, 0.75, 1e-300, -1e300]])
    y = np.concatenate([_bits(rng, n), rng.standard_normal(n), rng.standard_normal(n) * 1e-300,
                        np.repeat(special, special.size)])
    x = np.concatenate([_bits(rng, n), rng.standard_normal(n), rng.standard_normal(n) * 1e300,
                        np.tile(special, special.size)])
    out = _run(name, queue, y, x)
    ufunc = {"atan2": np.arctan2, "hypot": np.hypot}[name]
    with np.errstate(all="ignore"):
        exact = ufunc(y.astype(_LD), x.astype(_LD))
        numpy = ufunc(y, x)
    ulps = _ulps(out, exact)
    assert ulps.max() < 1, (ulps.max(), y[np.argmax(ulps)], x[np.argmax(ulps)])
    assert (ulps > 0.5).mean() < 3e-3
    k = special.size ** 2
    same = (out.view(np.int64) == numpy.view(np.int64)) | (np.isnan(out) & np.isnan(numpy))
    exact_special = ~np.isfinite(numpy) | (numpy == 0) \
        | np.isin(np.abs(numpy), [np.pi, np.pi / 2, *np.abs(special)])
    assert same[-k:][exact_special[-k:]].all()


def test_only_their_float64_functions_use_the_helpers():
    target = lp.PyOpenCLTarget(math_f64="branch_free")
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    assert target.function_name("log", [f64], f64) == "kc_log_f64"
    assert target.function_name("pow", [f64, f64], f64) == "kc_pow_f64"
    assert target.function_name("tanh", [f64], f64) == "kc_tanh_f64"
    assert target.function_name("exp", [f64], f64) == "exp"   # (PoCL vectorizes its own)
    assert target.function_name("log", [f32], f32) == "log"   # (math_f32 decides)
    assert lp.PyOpenCLTarget().function_name("log", [f64], f64) == "log"
    both = lp.PyOpenCLTarget(math_f32="branch_free", math_f64="branch_free")
    assert both.function_name("log", [f32], f32) == "kc_log_f32"
    assert both.function_name("log", [f64], f64) == "kc_log_f64"
    assert target != lp.PyOpenCLTarget() and hash(target) != hash(lp.PyOpenCLTarget())
    assert target != both and "math_f64='branch_free'" in repr(target)
    with pytest.raises(ValueError, match="math_f64 must be"):
        lp.PyOpenCLTarget(math_f64="fast")


def test_lazyarray_uses_them_on_pocl_cpus_and_agrees_with_numpy(queue, monkeypatch):
    """On the device tier, float64 ufuncs, lazyarray's functions and x**y
    match NumPy within the tolerance of the semantics tests (4 eps); with the
    helpers forced on any device as well."""
    import lazyarray.target as la_target
    device = queue.device
    assert Target.of(device).math_f64 == math_f64_choice(device)
    rng = np.random.default_rng(14)
    x = np.concatenate([rng.uniform(-30, 30, 40000), rng.standard_normal(30000) * 1e-5,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0]])
    y = rng.uniform(-4, 4, x.size)
    for choice in (math_f64_choice(device), "branch_free"):
        monkeypatch.setattr(la_target, "math_f64_choice", lambda device, c=choice: c)
        monkeypatch.setattr(la_target, "_TARGETS", {})
        lx, ly = la.asarray(x), la.asarray(y)
        if choice == "branch_free":
            code = la.explain(np.log(lx) + lx ** ly, show_code=True)
            assert "kc_log_f64(" in code and "kc_pow_f64(" in code
        with np.errstate(all="ignore"):
            for fn in (np.log, np.log2, np.log10, np.log1p, np.exp2, np.expm1, np.sinh,
                       np.cosh, np.tanh, np.arctan, np.cbrt):
                np.testing.assert_allclose(np.asarray(fn(lx)), fn(x), rtol=4e-16, atol=0,
                                           equal_nan=True, err_msg=fn.__name__)
            np.testing.assert_allclose(np.asarray(abs(lx) ** ly), np.abs(x) ** y,
                                       rtol=4 * np.finfo(np.float64).eps, equal_nan=True)
            np.testing.assert_allclose(np.asarray(lx ** 3.0), x ** 3.0,
                                       rtol=4 * np.finfo(np.float64).eps, equal_nan=True)
            for fn in (np.arctan2, np.hypot):
                np.testing.assert_allclose(np.asarray(fn(lx, ly)), fn(x, y), rtol=4e-16,
                                           atol=0, equal_nan=True, err_msg=fn.__name__)
            for fn in (np.arcsin, np.arccos):
                np.testing.assert_allclose(np.asarray(fn(lx / 30)), fn(x / 30), rtol=4e-16,
                                           atol=0, equal_nan=True, err_msg=fn.__name__)
            # lazyarray's own functions; sin and cos stay OpenCL's built-ins
            np.testing.assert_allclose(la.log(lx).get(), np.log(x), rtol=4e-16, equal_nan=True)
            for la_fn, fn in ((la.sin, np.sin), (la.cos, np.cos)):
                np.testing.assert_allclose(la_fn(lx).get(), fn(x), rtol=1e-15, atol=1e-300,
                                           equal_nan=True)


#: kernels mixing helpers (two calls of one function, an MLP's and a softmax's expressions)
_MIXES = ["kc_log_f64(x[i]) + kc_log_f64(z[i])", "kc_tanh_f64(x[i] * z[i] + x[i])",
          "kc_pow_f64(x[i], 1.5) * kc_log1p_f64(z[i]) + exp(x[i])"]


@pytest.mark.skipif(not pocl_cpu(), reason="checks PoCL's vectorizer: no PoCL CPU device here")
def test_pocl_vectorizes_every_f64_helper_and_mixes(tmp_path):
    """The helpers exist to be vectorized by PoCL: its loop vectorizer's
    remarks name no loop it left (as it does when clang's SLP pass paired two
    computations first, or a call stayed a call)."""
    log = vectorizer_remarks("f64math", "F64_HELPERS", "f64_helper_source", "double", _MIXES,
                             len(F64_HELPERS), tmp_path)
    assert log.count("vectorized loop") >= len(F64_HELPERS) + len(_MIXES)
    assert "loop not vectorized" not in log and "SLP vectorized" not in log, log[-3000:]
