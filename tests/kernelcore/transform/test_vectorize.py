"""The ``vec`` iname tag: OpenCL vector code where the loop body allows it,
an unrolled loop otherwise; results equal NumPy's either way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelcore as lp

N = 256


def _kernel(instructions: str, args, n: int = N, width: int = 16, assumptions=None,
            names=("a", "b"), out="out"):
    data = [lp.GlobalArg(x, np.float32, shape="n") for x in names]
    data += args + [lp.ValueArg("n", np.int32)]
    knl = lp.make_kernel("{[i]: 0 <= i < n}", instructions, data,
                         assumptions=assumptions or f"n mod {4 * width} = 0 and n >= 1")
    knl = lp.split_iname(knl, "i", width, inner_tag="vec")
    return lp.split_iname(knl, "i_outer", 4, outer_tag="g.0", inner_tag="l.0")


def _run(queue, knl, n: int = N, seed: int = 0, **extra):
    rng = np.random.default_rng(seed)
    a = rng.random(n, dtype=np.float32) - np.float32(0.5)
    b = rng.random(n, dtype=np.float32) + np.float32(0.5)
    _, (out,) = knl(queue, a=a, b=b, n=np.int32(n), **extra)
    return a, b, out


def _out(dtype=np.float32):
    return [lp.GlobalArg("out", dtype, shape="n")]


def test_vector_loads_stores_and_temporaries(queue):
    knl = _kernel("""
        <> t = exp(a[i] - 1.0f)
        out[i] = if(a[i] > 0.25f, t * 2, b[i]) + sqrt(fabs(a[i]))
        """, _out())
    code = lp.generate_code_v2(knl).device_code()
    assert "vload16(0, a + " in code and "vstore16(" in code
    assert "float16 t;" in code and "select(" in code
    a, b, out = _run(queue, knl)
    t = np.exp(a - np.float32(1))
    np.testing.assert_allclose(out, np.where(a > 0.25, 2 * t, b) + np.sqrt(np.abs(a)),
                               rtol=1e-6)


@pytest.mark.parametrize("width", [2, 4, 8, 16])
def test_widths(queue, width):
    knl = _kernel("out[i] = a[i] * b[i] + fmax(a[i], 0.0f)", _out(), width=width)
    assert f"vload{width}" in lp.generate_code_v2(knl).device_code()
    a, b, out = _run(queue, knl)
    np.testing.assert_allclose(out, a * b + np.maximum(a, 0), rtol=1e-6)


def test_conversion_and_lane_index(queue):
    knl = _kernel("out[i] = a[i] + 0.5 * i", _out(np.float64))
    code = lp.generate_code_v2(knl).device_code()
    assert "convert_double16(" in code and "(int16) (0, 1, 2, 3" in code
    a, _, out = _run(queue, knl)
    # the weakly typed 0.5 * i joins float32 a: the sum is a float32, then stored
    lane_part = (0.5 * np.arange(N)).astype(np.float32)
    np.testing.assert_array_equal(out, (a + lane_part).astype(np.float64))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.int64])
def test_a_scalar_shifted_by_vector_counts_is_widened(queue, dtype):
    """OpenCL shifts no scalar by a vector: a scalar shiftee (here a kernel
    argument) is widened to the vector type of its own dtype."""
    dt = np.dtype(dtype)
    data = [lp.GlobalArg("k", dt, shape="n"), lp.ValueArg("s", dt),
            lp.GlobalArg("left", dt, shape="n"), lp.GlobalArg("right", dt, shape="n"),
            lp.ValueArg("n", np.int32)]
    knl = lp.make_kernel("{[i]: 0 <= i < n}", """
        left[i] = s << k[i]
        right[i] = s >> k[i]
        """, data, assumptions="n mod 64 = 0 and n >= 1")
    knl = lp.split_iname(knl, "i", 16, inner_tag="vec")
    knl = lp.split_iname(knl, "i_outer", 4, outer_tag="g.0", inner_tag="l.0")
    code = lp.generate_code_v2(knl).device_code()
    assert "vload16(0, k + " in code
    k = (np.arange(N) % (8 * dt.itemsize - 1)).astype(dt)
    s = dt.type(-3 if dt.kind == "i" else 5)
    _, (left, right) = knl(queue, k=k, s=s, n=np.int32(N))
    np.testing.assert_array_equal(left, (s << k).astype(dt))
    np.testing.assert_array_equal(right, (s >> k).astype(dt))


def test_vector_accumulator_of_a_reduction(queue):
    """Per-lane partial sums (a temporary privatized by the vec loop) live in a
    vector variable."""
    knl = lp.make_kernel(
        ["{[v]: 0 <= v < 8}", "{[o]: 0 <= o < 32}", "{[w]: 0 <= w < 8}"],
        """
        acc[v] = 0.0f  {id=init}
        acc[v] = acc[v] + a[8*o + v]  {id=add, dep=init}
        lanes[v] = acc[v]  {id=copy, dep=add}
        out[0] = sum(w, lanes[w])  {dep=copy}
        """,
        [lp.GlobalArg("a", np.float32, shape=(256,)),
         lp.GlobalArg("out", np.float32, shape=(1,)),
         lp.TemporaryVariable("acc", np.float32, shape=(8,), address_space="private"),
         lp.TemporaryVariable("lanes", np.float32, shape=(8,), address_space="private")])
    knl = lp.tag_inames(knl, {"v": "vec"})
    knl = lp.prioritize_loops(knl, "o,v")
    code = lp.generate_code_v2(knl).device_code()
    assert "float8 acc;" in code and "acc = acc + vload8(0, a + 8 * o);" in code
    a = np.random.default_rng(1).random(256, dtype=np.float32)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out[0], a.sum(), rtol=1e-5)


@pytest.mark.parametrize("body, reference", [
    ("out[i] = if(a[i] > 0 and b[i] < 0.5, a[i], b[i])",
     lambda a, b: np.where((a > 0) & (b < 0.5), a, b)),
    ("out[i] = if(not (a[i] <= b[i]) or b[i] != b[i], a[i], 2.0f)",
     lambda a, b: np.where(~(a <= b) | np.isnan(b), a, 2)),
    ("out[i] = if(not (a[i] <= b[i]) and b[i] == b[i], a[i], b[i])",
     lambda a, b: np.where(~(a <= b) & ~np.isnan(b), a, b)),
])
def test_conditions_joined_by_logic_are_lane_masks(queue, body, reference):
    """and / or / not of lane comparisons select lane by lane (a mask of all
    bits set where true), NaN lanes included."""
    knl = _kernel(body, _out())
    code = lp.generate_code_v2(knl).device_code()
    assert "vstore16(select(" in code
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, N).astype(np.float32)
    b = rng.uniform(-1, 1, N).astype(np.float32)
    a[::7], b[::5] = np.nan, np.nan
    _, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(out, reference(a, b).astype(np.float32))


@pytest.mark.parametrize("body, reference", [
    # integer floor division needs a helper function
    ("out[i] = a[i] + (i // 3)", lambda a, b: a + np.arange(N) // 3),
    # a strided read has no vload
    ("out[i] = a[(2*i) % n]", lambda a, b: a[(2 * np.arange(N)) % N]),
    # a comparison of 4-byte lanes selecting 8-byte values
    ("out[i] = if(a[i] > 0, 1.0, 0.0)", lambda a, b: (a > 0).astype(np.float32)),
])
def test_bodies_without_vector_form_are_unrolled(queue, body, reference):
    knl = _kernel(body, _out())
    code = lp.generate_code_v2(knl).device_code()
    assert "vstore16" not in code
    a, b, out = _run(queue, knl)
    np.testing.assert_allclose(out, reference(a, b), rtol=1e-6)


def test_fallback_keeps_vector_temporaries_as_components(queue):
    """One instruction without vector form unrolls the loop; its temporary
    still lives in a vector variable, accessed lane by lane."""
    knl = _kernel("""
        <> t = a[i] * 2
        out[i] = t + (i // 3)
        """, _out())
    code = lp.generate_code_v2(knl).device_code()
    assert "float16 t;" in code and "t.sf = " in code and "vstore16" not in code
    a, _, out = _run(queue, knl)
    np.testing.assert_allclose(out, 2 * a + np.arange(N) // 3, rtol=1e-6)


def test_a_partial_last_vector_is_unrolled_with_guards(queue):
    knl = _kernel("out[i] = a[i] * 3", _out(), assumptions="n >= 1")
    n = 100
    a, _, out = _run(queue, knl, n=n)
    np.testing.assert_allclose(out, 3 * a, rtol=1e-6)


def test_cross_lane_access_is_unrolled(queue):
    """Lane k reads what lane k-1 left in a temporary: unrolled, lane after
    lane, that is the 0 lane k-1 wrote last; instruction after instruction for
    all lanes at once it would be a[k-1]. Such a loop stays unrolled."""
    knl = lp.make_kernel(
        "{[v]: 0 <= v < 8}",
        """
        t[v] = a[v]  {id=w1}
        out[v] = t[(v + 7) % 8]  {id=r, dep=w1}
        t[v] = 0  {dep=r}
        """,
        [lp.GlobalArg("a", np.float32, shape=(8,)), lp.GlobalArg("out", np.float32, shape=(8,)),
         lp.TemporaryVariable("t", np.float32, shape=(8,), address_space="private")])
    knl = lp.tag_inames(knl, {"v": "vec"})
    assert "vstore8" not in lp.generate_code_v2(knl).device_code()
    _, (out,) = knl(queue, a=np.arange(1, 9, dtype=np.float32))
    np.testing.assert_array_equal(out[1:], np.zeros(7, np.float32))


_UNARY = {"sqrt(fabs({}))": lambda x: np.sqrt(np.abs(x)),
          "exp(fmin({}, 2.0f))": lambda x: np.exp(np.minimum(x, np.float32(2))),
          "-{}": np.negative,
          "({} * 0.5f)": lambda x: x * np.float32(0.5)}
_BINARY = {"({} + {})": np.add, "({} - {})": np.subtract, "({} * {})": np.multiply,
           "fmax({}, {})": np.maximum,
           "if({0} > {1}, {0}, {1} * 2.0f)": lambda x, y: np.where(x > y, x, y * np.float32(2))}


@st.composite
def _expressions(draw, depth=3):
    """(OpenCL-language text, NumPy function of a, b) of a random expression."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(["a", "b"]))
        return f"{name}[i]", (lambda a, b, name=name: a if name == "a" else b)
    if draw(st.booleans()):
        text, fn = draw(st.sampled_from(sorted(_UNARY.items())))
        inner, g = draw(_expressions(depth - 1))
        return text.format(inner), lambda a, b: fn(g(a, b))
    text, fn = draw(st.sampled_from(sorted(_BINARY.items(), key=lambda kv: kv[0])))
    (left, f), (right, g) = draw(_expressions(depth - 1)), draw(_expressions(depth - 1))
    return text.format(left, right), lambda a, b: fn(f(a, b), g(a, b))


@settings(max_examples=15)
@given(_expressions(), st.sampled_from([4, 8, 16]))
def test_random_expressions_match_numpy(queue, expr, width):
    text, fn = expr
    knl = _kernel(f"out[i] = {text}", _out(), width=width)
    a, b, out = _run(queue, knl)
    with np.errstate(all="ignore"):
        expected = fn(a, b).astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)


def test_selects_that_would_read_outside_an_array_are_unrolled(queue):
    """As a vector ``select``, an ``if`` reads both branches in every lane:
    a branch valid only under its condition (a concatenation's shifted
    read) must not be vectorized, one valid everywhere may be."""
    n, m = 64, 48
    knl = lp.make_kernel(
        "{[i]: 0 <= i < n + m}", "out[i] = if(i < n, a[i], b[i - n])",
        [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("b", np.float32, shape="m"),
         lp.GlobalArg("out", np.float32, shape="n + m"), lp.ValueArg("n", np.int32),
         lp.ValueArg("m", np.int32)],
        assumptions="n mod 16 = 0 and m mod 16 = 0 and n >= 16 and m >= 16")
    knl = lp.split_iname(knl, "i", 16, inner_tag="vec", outer_tag="g.0")
    code = lp.generate_code_v2(lp.add_dtypes(knl, {})).device_code()
    assert "select" not in code and "vload" not in code, code
    a = np.arange(n, dtype=np.float32)
    b = -np.arange(m, dtype=np.float32)
    _, (out,) = knl(queue, a=a, b=b, n=np.int32(n), m=np.int32(m))
    np.testing.assert_array_equal(out.get() if hasattr(out, "get") else out,
                                  np.concatenate([a, b]))

    safe = _kernel("out[i] = if(a[i] > 0, a[i], b[i])", _out())
    assert "select(" in lp.generate_code_v2(safe).device_code()
    a, b, out = _run(queue, safe)
    np.testing.assert_array_equal(out.get() if hasattr(out, "get") else out,
                                  np.where(a > 0, a, b))


@pytest.mark.parametrize("shift", [0, 4, 1, 2])
def test_aligned_local_vectors_are_single_accesses(queue, shift):
    """A vector of an aligned local array at a multiple of its width is read
    and written as one (aligned) vector; elsewhere with vload/vstore; both
    equal NumPy. Without an alignment, always vload/vstore."""
    knl = lp.make_kernel(
        "{[g, l, v]: 0 <= g < 4 and 0 <= l < 16 and 0 <= v < 4}",
        f"""
        t[4*l + v + {shift}] = a[64*g + 4*l + v] + 1.0f  {{id=put}}
        out[64*g + 4*l + v] = 2 * t[4*l + v + {shift}]  {{dep=put}}
        """,
        [lp.GlobalArg("a", np.float32, shape=(256,)), lp.GlobalArg("out", np.float32, shape=(256,)),
         lp.TemporaryVariable("t", np.float32, shape=(68,),
                              address_space=lp.AddressSpace.LOCAL, alignment=16)])
    knl = lp.tag_inames(knl, {"g": "g.0", "l": "l.0", "v": "vec"})
    code = lp.generate_code_v2(knl).device_code()
    assert "__local float t[68] __attribute__ ((aligned (16)));" in code
    aligned = shift % 4 == 0
    assert ("*(__local float4 *)" in code) == aligned
    assert ("vload4(0, t" in code) == (not aligned)
    a = np.random.default_rng(shift).random(256, dtype=np.float32)
    _, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(out, 2 * (a + np.float32(1)))
    plain = lp.generate_code_v2(lp.set_temporary_alignment(knl, "t", None)).device_code()
    assert "__local float t[68];" in plain and "*(__local" not in plain
    with pytest.raises(ValueError, match="power of two"):
        lp.TemporaryVariable("u", np.float32, shape=(4,), alignment=24)


@pytest.mark.parametrize("shift", [0, 1])
def test_aligned_global_vectors_are_single_accesses(queue, shift):
    """Arguments declared aligned are read and written as whole vectors at
    multiples of the width (a pointer cast, const for an array only read),
    elsewhere with vload/vstore; the results equal NumPy's. Undeclared
    arguments keep vload/vstore."""
    def kernel(alignment):
        knl = lp.make_kernel(
            "{[i, v]: 0 <= i < 16 and 0 <= v < 4}",
            f"out[4*i + v] = 2 * a[4*i + v + {shift}]",
            [lp.GlobalArg("a", np.float32, shape=(68,), alignment=alignment),
             lp.GlobalArg("out", np.float32, shape=(64,), alignment=alignment)])
        return lp.tag_inames(knl, {"i": "g.0", "v": "vec"})

    code = lp.generate_code_v2(kernel(16)).device_code()
    assert "*(__global float4 *) (out + 4 * gid(0)) = " in code
    assert ("*(__global float4 const *) (a + 4 * gid(0))" in code) == (shift == 0)
    assert ("vload4(0, a + " in code) == (shift != 0)
    a = np.random.default_rng(shift).random(68, dtype=np.float32)
    _, (out,) = kernel(16)(queue, a=a)
    np.testing.assert_array_equal(out, 2 * a[shift:shift + 64])
    plain = lp.generate_code_v2(kernel(None)).device_code()
    assert "*(__global" not in plain and "vstore4(" in plain
    with pytest.raises(ValueError, match="power of two"):
        lp.GlobalArg("b", np.float32, shape=(4,), alignment=12)


@pytest.mark.parametrize("width", [4, 8, 16])
@pytest.mark.parametrize("body, reference", [
    ("out[i] = a[i] ** b[i]", lambda a, b: a ** b),
    ("out[i] = pow(a[i], 0.1)", lambda a, b: a ** 0.1),
    ("out[i] = fmod(a[i], b[i])", np.fmod),
])
def test_double_powers_and_fmod_of_eight_or_more_lanes_are_unrolled(queue, width, body,
                                                                   reference):
    """PoCL's ``pow`` and ``fmod`` of 8 or 16 doubles are wrong in some lanes
    (``pow(4.0, 0.1)`` gave ``2**-0.1``): such loops are unrolled; 4 lanes
    stay vectors. Small integers (4.0 among them) and random values, equal
    to NumPy's to rounding either way."""
    data = [lp.GlobalArg(x, np.float64, shape="n") for x in ("a", "b", "out")]
    knl = lp.make_kernel("{[i]: 0 <= i < n}", body, data + [lp.ValueArg("n", np.int32)],
                         assumptions=f"n mod {4 * width} = 0 and n >= 1")
    knl = lp.split_iname(knl, "i", width, inner_tag="vec")
    knl = lp.split_iname(knl, "i_outer", 4, outer_tag="g.0", inner_tag="l.0")
    code = lp.generate_code_v2(knl).device_code()
    assert (f"vstore{width}" in code) == (width < 8)
    rng = np.random.default_rng(11)
    a = np.concatenate([np.arange(N // 2) % 9, rng.random(N // 2) * 50]).astype(np.float64)
    b = rng.random(N) * 3 + 0.1
    _, (out,) = knl(queue, a=a, b=b, n=np.int32(N))
    np.testing.assert_allclose(out, reference(a, b), rtol=1e-13)
