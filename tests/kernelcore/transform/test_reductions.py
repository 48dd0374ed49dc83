"""Reductions (``sum``, ``product``, ``max``, ``min``): sequential, over several
inames, nested, parallel (a reduction iname tagged ``l.N`` is combined through
local memory), row-wise parallel, and with ``ilp`` accumulators.

Every kernel is run on the device and compared with NumPy.  The random tests
(hypothesis, derandomized) draw an operation, a dtype, a 1-3 dimensional
array, the axes to reduce and the sizes (including 0 and 1).

Domains: an instruction only runs for the points of the projection of its
domain onto its own inames, so reduction inames are given their own domains
(``["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"]``): then ``out[i] = sum(k, ...)`` with
``m == 0`` still writes every ``out[i]``, namely the identity of the
operation.

Empty reductions give the identity: ``sum`` 0, ``product`` 1, ``max``
``-inf`` (floats) or the smallest value of the type (integers), ``min``
``+inf`` or the largest value.  NumPy's ``max``/``min`` raise ``ValueError``
for an empty reduction instead; the NumPy references below pass the identity
as ``initial=`` to get a value to compare with.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import kernelcore as lp
from tests.helpers import host

OPS = ("sum", "product", "max", "min")
DTYPES = (np.int32, np.int64, np.float32, np.float64)
CTYPES = {np.int32: "int", np.int64: "long", np.float32: "float", np.float64: "double"}


def _settings(max_examples):
    return settings(max_examples=max_examples)


# {{{ helpers


def device_code(knl, dtypes=None):
    if dtypes:
        knl = lp.add_dtypes(knl, dtypes)
    return lp.generate_code_v2(knl).device_code()


def identity(op, dtype):
    dtype = np.dtype(dtype)
    if op == "sum":
        return dtype.type(0)
    if op == "product":
        return dtype.type(1)
    if dtype.kind == "f":
        return dtype.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


def numpy_reduce(op, a, axes):
    """NumPy reference in the dtype of *a*; empty max/min give the identity."""
    axes = tuple(axes)
    dtype = a.dtype
    if op == "sum":
        return np.sum(a, axis=axes, dtype=dtype)
    if op == "product":
        return np.prod(a, axis=axes, dtype=dtype)
    fn = np.max if op == "max" else np.min
    return fn(a, axis=axes, initial=identity(op, dtype))


def make_values(op, dtype, shape, count, seed):
    """Random values for which the reduction of *count* of them is safe: no
    integer overflow, and float products that stay near 1."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        if op == "sum":
            vals = rng.integers(-50, 51, shape)
        elif op == "product":
            choices = [-1, 1, 2] if count <= 24 else [-1, 1]
            vals = rng.choice(choices, shape)
        else:
            vals = rng.integers(-10**6, 10**6, shape)
        return vals.astype(dtype)
    if op == "product":
        vals = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    else:
        vals = rng.uniform(-1, 1, shape)
    return vals.astype(dtype)


def assert_reduced(op, dtype, got, ref, count):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    if np.dtype(dtype).kind == "i" or op in ("max", "min"):
        np.testing.assert_array_equal(got, ref)
    else:
        eps = 1e-6 if np.dtype(dtype) == np.float32 else 1e-14
        tol = 4 * eps * max(count, 1)
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def _reduction_expr(op, inames, body, nested):
    if not inames:
        return body
    if nested:
        expr = body
        for name in reversed(inames):
            expr = f"{op}({name}, {expr})"
        return expr
    if len(inames) == 1:
        return f"{op}({inames[0]}, {body})"
    return f"{op}(({', '.join(inames)}), {body})"


def _domain(inames, sizes):
    cond = " and ".join(f"0<={n}<{s}" for n, s in zip(inames, sizes))
    return f"{{[{','.join(inames)}]: {cond}}}"


def reduction_kernel(op, ndim, axes, *, nested=False, kept_together=True,
                     red_together=False):
    """``out[kept] = op(reduced, a[i0, i1, ...])`` over the chosen *axes*."""
    inames = [f"i{d}" for d in range(ndim)]
    sizes = [f"n{d}" for d in range(ndim)]
    kept = [d for d in range(ndim) if d not in axes]
    red = [d for d in range(ndim) if d in axes]
    domains = []
    if kept:
        if kept_together:
            domains.append(_domain([inames[d] for d in kept], [sizes[d] for d in kept]))
        else:
            domains += [_domain([inames[d]], [sizes[d]]) for d in kept]
    if red_together and not nested:
        domains.append(_domain([inames[d] for d in red], [sizes[d] for d in red]))
    else:
        domains += [_domain([inames[d]], [sizes[d]]) for d in red]
    body = f"a[{', '.join(inames)}]"
    expr = _reduction_expr(op, [inames[d] for d in red], body, nested)
    lhs = f"out[{', '.join(inames[d] for d in kept)}]" if kept else "out"
    return lp.make_kernel(domains, f"{lhs} = {expr}")


# }}}


# {{{ random sequential reductions

@st.composite
def reduction_cases(draw, max_size=6):
    op = draw(st.sampled_from(OPS))
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 3))
    axes = draw(st.sets(st.integers(0, ndim - 1), min_size=1, max_size=ndim))
    shape = tuple(draw(st.integers(0, max_size)) for _ in range(ndim))
    nested = draw(st.booleans()) if len(axes) > 1 else False
    kept_together = draw(st.booleans())
    red_together = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    return dict(op=op, dtype=dtype, ndim=ndim, axes=tuple(sorted(axes)), shape=shape,
                nested=nested, kept_together=kept_together, red_together=red_together,
                seed=seed)


def _run_case(queue, case):
    note(repr(case))
    knl = reduction_kernel(case["op"], case["ndim"], case["axes"], nested=case["nested"],
                           kept_together=case["kept_together"],
                           red_together=case["red_together"])
    count = math.prod(case["shape"][d] for d in case["axes"])
    a = make_values(case["op"], case["dtype"], case["shape"], count, case["seed"])
    evt, (out,) = knl(queue, a=a)
    ref = numpy_reduce(case["op"], a, case["axes"])
    assert_reduced(case["op"], case["dtype"], host(out), ref, count)


@_settings(25)
@given(case=reduction_cases())
def test_random_reductions(queue, case):
    _run_case(queue, case)


@pytest.mark.slow
@_settings(300)
@given(case=reduction_cases(max_size=12))
def test_random_reductions_many(queue, case):
    _run_case(queue, case)


# }}}


# {{{ identities of empty reductions

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_empty_reduction_identity(queue, op, dtype):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], f"out[i] = {op}(k, a[i, k])")
    a = np.zeros((4, 0), dtype)
    evt, (out,) = knl(queue, a=a)
    out = host(out)
    assert out.dtype == np.dtype(dtype) and out.shape == (4,)
    np.testing.assert_array_equal(out, np.full(4, identity(op, dtype), dtype))
    if op in ("max", "min"):
        # NumPy has no identity for these: it raises where we return one
        with pytest.raises(ValueError):
            getattr(np, op)(a, axis=1)


@pytest.mark.parametrize("op", OPS)
def test_empty_reduction_identity_scalar(queue, op):
    knl = lp.make_kernel("{[k]: 0<=k<m}", f"out = {op}(k, a[k])")
    for dtype in (np.int32, np.float64):
        evt, (out,) = knl(queue, a=np.zeros(0, dtype))
        out = host(out)
        assert out.shape == () and out.dtype == np.dtype(dtype)
        assert out[()] == identity(op, dtype)


def test_empty_reduction_identity_values():
    assert identity("max", np.float32) == -np.inf
    assert identity("min", np.float64) == np.inf
    assert identity("max", np.int32) == -2**31
    assert identity("min", np.int32) == 2**31 - 1
    assert identity("max", np.int64) == -2**63
    assert identity("min", np.int64) == 2**63 - 1


def test_empty_reduction_one_domain_writes_nothing(queue):
    """With the reduction iname in the same domain as ``i``, the projection onto
    ``i`` is empty when m == 0, so ``out`` is not written at all."""
    knl = lp.make_kernel("{[i,k]: 0<=i<n and 0<=k<m}", "out[i] = sum(k, a[i, k])",
                         [lp.GlobalArg("a", np.float64, shape=("n", "m")),
                          lp.GlobalArg("out", np.float64, shape=("n",)), "..."])
    sentinel = np.full(3, 42.0)
    evt, (out,) = knl(queue, a=np.zeros((3, 0)), out=sentinel.copy())
    np.testing.assert_array_equal(host(out), sentinel)
    # with m > 0 it does write
    a = np.arange(6.0).reshape(3, 2)
    evt, (out,) = knl(queue, a=a, out=sentinel.copy())
    np.testing.assert_array_equal(host(out), a.sum(1))


def test_empty_outer_iname_with_nonempty_reduction(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], "out[i] = sum(k, a[i, k])")
    evt, (out,) = knl(queue, a=np.ones((0, 5), np.float32))
    assert host(out).shape == (0,)


# }}}


# {{{ several inames, nesting

@pytest.mark.parametrize("op", OPS)
def test_reduction_over_two_inames(queue, op):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[j,k]: 0<=j<p and 0<=k<m}"],
                         f"out[i] = {op}((j, k), a[i, j, k])")
    for shape in [(3, 4, 5), (2, 1, 1), (3, 0, 4), (3, 4, 0), (1, 7, 2)]:
        count = shape[1] * shape[2]
        a = make_values(op, np.float64, shape, count, seed=sum(shape))
        evt, (out,) = knl(queue, a=a)
        assert_reduced(op, np.float64, host(out), numpy_reduce(op, a, (1, 2)), count)


def test_reduction_over_two_inames_separate_domains(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[j]: 0<=j<p}", "{[k]: 0<=k<m}"],
                         "out[i] = sum((j, k), a[i, j, k] * b[j])")
    rng = np.random.default_rng(7)
    a = rng.integers(-9, 10, (4, 5, 6)).astype(np.int64)
    b = rng.integers(-9, 10, 5).astype(np.int64)
    evt, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(host(out), np.einsum("ijk,j->i", a, b))


def test_reduction_over_outer_and_inner_axes(queue):
    knl = lp.make_kernel(["{[j]: 0<=j<n1}", "{[i,k]: 0<=i<n0 and 0<=k<n2}"],
                         "out[j] = max((i, k), a[i, j, k])")
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (3, 4, 5)).astype(np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a.max(axis=(0, 2)))


def test_nested_reductions(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[j]: 0<=j<p}", "{[k]: 0<=k<m}"],
                         "out[i] = max(j, sum(k, a[i, j, k]))")
    rng = np.random.default_rng(11)
    for shape in [(3, 4, 5), (1, 1, 1), (2, 3, 0), (2, 0, 3)]:
        a = rng.uniform(-1, 1, shape)
        evt, (out,) = knl(queue, a=a)
        ref = np.max(a.sum(axis=2), axis=1, initial=-np.inf)
        np.testing.assert_allclose(host(out), ref, rtol=1e-12, atol=1e-12)


def test_nested_reduction_in_product_with_outer_values(queue):
    """The inner reduction depends on the outer reduction iname and on i."""
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[j]: 0<=j<p}", "{[k]: 0<=k<m}"],
                         "out[i] = sum(j, c[j] * min(k, a[i, j, k] + i))")
    rng = np.random.default_rng(5)
    a = rng.integers(-100, 100, (4, 3, 6)).astype(np.int32)
    c = rng.integers(-5, 6, 3).astype(np.int32)
    evt, (out,) = knl(queue, a=a, c=c)
    ref = ((a + np.arange(4, dtype=np.int32)[:, None, None]).min(axis=2) * c).sum(axis=1)
    np.testing.assert_array_equal(host(out), ref.astype(np.int32))


def test_two_reductions_in_one_expression(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}", "{[kk]: 0<=kk<m}"],
                         "out[i] = max(k, a[i, k]) - min(kk, a[i, kk])")
    rng = np.random.default_rng(9)
    a = rng.integers(-1000, 1000, (6, 7)).astype(np.int64)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a.max(1) - a.min(1))


def test_reduction_into_temporary(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<n}"],
                         """
                         <> total = sum(k, a[k]) {id=tot}
                         out[i] = a[i] / total {dep=tot}
                         """)
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 1.5, 13)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), a / a.sum(), rtol=1e-12)


def test_dot_product_reduction(queue):
    knl = lp.make_kernel("{[k]: 0<=k<m}", "out = sum(k, a[k]*b[k])")
    rng = np.random.default_rng(4)
    for m in (0, 1, 100):
        a, b = rng.uniform(-1, 1, m), rng.uniform(-1, 1, m)
        evt, (out,) = knl(queue, a=a, b=b)
        np.testing.assert_allclose(host(out), a @ b, rtol=1e-12, atol=1e-12)


def test_reduction_code_structure():
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], "out[i] = max(k, a[i, k])")
    code = device_code(knl, {"a": np.float32})
    # a private accumulator set to the identity, updated in the k loop, stored
    assert re.search(r"^\s*float acc_k\w*;", code, re.M), code
    assert re.search(r"acc_k\w* = -INFINITY", code), code
    assert re.search(r"for \(int k = 0; k <= -1 \+ m; \+\+k\)", code), code
    assert "__local" not in code and "barrier(" not in code


# }}}


# {{{ parallel reductions (reduction iname split, inner part on l.0)

GROUP_SIZES = (16, 64, 100, 256)


def parallel_reduction_kernel(op, group_size):
    knl = lp.make_kernel("{[k]: 0<=k<m}", f"out = {op}(k, a[k])")
    return lp.split_iname(knl, "k", group_size, inner_tag="l.0")


@pytest.mark.parametrize("group_size", GROUP_SIZES)
def test_parallel_reduction_code(group_size):
    knl = parallel_reduction_kernel("sum", group_size)
    code = device_code(knl, {"a": np.float32})
    assert f"reqd_work_group_size({group_size}, 1, 1)" in code
    assert re.search(rf"__local float \w+\[{group_size}\];", code), code
    # log2 tree steps, each preceded by a barrier, plus one before the final read
    steps = math.ceil(math.log2(group_size))
    assert len(re.findall(r"\bbarrier\(CLK_LOCAL_MEM_FENCE\)", code)) == steps + 1
    # only one work-item stores the result
    assert re.search(r"if \(lid\(0\) == 0\)\s*\n\s*out\[0\] = ", code), code


@pytest.mark.parametrize("group_size", GROUP_SIZES)
def test_parallel_sum_lengths(queue, group_size):
    knl = parallel_reduction_kernel("sum", group_size)
    g = group_size
    rng = np.random.default_rng(g)
    for m in (0, 1, 2, g // 2 + 1, g - 1, g, g + 1, 5 * g + 3):
        a = rng.uniform(-1, 1, m)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(host(out), a.sum(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("group_size", [1, 2, 3, 5])
def test_parallel_reduction_tiny_groups(queue, group_size):
    knl = parallel_reduction_kernel("max", group_size)
    rng = np.random.default_rng(100 + group_size)
    for m in (0, 1, group_size, 2 * group_size + 1, 17):
        a = rng.integers(-1000, 1000, m).astype(np.int32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), numpy_reduce("max", a, (0,)))


@st.composite
def parallel_cases(draw):
    op = draw(st.sampled_from(OPS))
    dtype = draw(st.sampled_from(DTYPES))
    g = draw(st.sampled_from(GROUP_SIZES))
    m = draw(st.one_of(st.integers(0, 3), st.integers(0, g - 1),
                       st.integers(g - 2, 3 * g + 5)))
    seed = draw(st.integers(0, 2**31 - 1))
    return dict(op=op, dtype=dtype, g=g, m=m, seed=seed)


def _run_parallel(queue, case):
    note(repr(case))
    knl = parallel_reduction_kernel(case["op"], case["g"])
    a = make_values(case["op"], case["dtype"], (case["m"],), case["m"], case["seed"])
    evt, (out,) = knl(queue, a=a)
    assert_reduced(case["op"], case["dtype"], host(out), numpy_reduce(case["op"], a, (0,)),
                   case["m"])


@_settings(8)
@given(case=parallel_cases())
def test_random_parallel_reductions(queue, case):
    _run_parallel(queue, case)


@pytest.mark.slow
@_settings(200)
@given(case=parallel_cases())
def test_random_parallel_reductions_many(queue, case):
    _run_parallel(queue, case)


def test_parallel_reduction_unsplit_iname(queue):
    """A fixed-length reduction iname tagged l.0 directly."""
    for op in OPS:
        knl = lp.make_kernel("{[k]: 0<=k<24}", f"out = {op}(k, a[k])")
        knl = lp.tag_inames(knl, {"k": "l.0"})
        a = make_values(op, np.float64, (24,), 24, seed=1)
        evt, (out,) = knl(queue, a=a)
        assert_reduced(op, np.float64, host(out), numpy_reduce(op, a, (0,)), 24)


def test_parallel_dot_product(queue):
    knl = lp.make_kernel("{[k]: 0<=k<m}", "out = sum(k, a[k]*b[k])")
    knl = lp.split_iname(knl, "k", 64, inner_tag="l.0")
    rng = np.random.default_rng(8)
    for m in (0, 3, 64, 300):
        a = rng.uniform(-1, 1, m).astype(np.float32)
        b = rng.uniform(-1, 1, m).astype(np.float32)
        evt, (out,) = knl(queue, a=a, b=b)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(host(out), ref, rtol=1e-5, atol=1e-5)


def test_parallel_inner_of_nested_reduction(queue):
    knl = lp.make_kernel(["{[j]: 0<=j<p}", "{[k]: 0<=k<m}"], "out = max(j, sum(k, a[j, k]))")
    knl = lp.split_iname(knl, "k", 16, inner_tag="l.0")
    rng = np.random.default_rng(12)
    for shape in [(5, 37), (1, 1), (3, 16), (4, 0)]:
        a = rng.uniform(-1, 1, shape)
        evt, (out,) = knl(queue, a=a)
        ref = np.max(a.sum(axis=1), initial=-np.inf)
        np.testing.assert_allclose(host(out), ref, rtol=1e-12, atol=1e-12)


def test_parallel_two_iname_reduction(queue):
    knl = lp.make_kernel(["{[j]: 0<=j<p}", "{[k]: 0<=k<m}"], "out = sum((j, k), a[j, k])")
    knl = lp.split_iname(knl, "k", 16, inner_tag="l.0")
    rng = np.random.default_rng(13)
    for shape in [(5, 37), (0, 4), (3, 0), (2, 16)]:
        a = rng.integers(-100, 100, shape).astype(np.int32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a.sum(dtype=np.int32))


def test_two_parallel_reductions_in_one_instruction(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}", "{[kk]: 0<=kk<m}"],
                         "out[i] = sum(k, a[i, k]) + max(kk, a[i, kk])")
    knl = lp.tag_inames(knl, {"i": "g.0"})
    knl = lp.split_iname(knl, "k", 8, inner_tag="l.0")
    knl = lp.split_iname(knl, "kk", 8, inner_tag="l.0")
    rng = np.random.default_rng(14)
    for shape in [(3, 1), (5, 17), (2, 40)]:
        a = rng.uniform(-1, 1, shape)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(host(out), a.sum(1) + a.max(1), rtol=1e-12, atol=1e-12)


def test_parallel_reduction_into_private_temporary(queue):
    """Every work-item reads the reduced value, so every work-item must hold it:
    the private temporary may not be assigned by work-item 0 only."""
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<n}"],
                         """
                         <> total = sum(k, a[k]) {id=tot}
                         out[i] = a[i] / total {dep=tot}
                         """)
    knl = lp.split_iname(knl, "k", 16, inner_tag="l.0")
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0")
    code = device_code(knl, {"a": np.float64})
    assert re.search(r"^\s*double total;", code, re.M), code      # private
    assert not re.search(r"if \(lid\(0\) == 0\)\s*\n\s*total = ", code), code
    rng = np.random.default_rng(15)
    for n in (1, 16, 40):
        a = rng.uniform(0.5, 1.5, n)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(host(out), a / a.sum(), rtol=1e-12)


def test_parallel_reduction_into_explicitly_private_temporary(queue):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<n}"],
                         """
                         <> total = sum(k, a[k]) {id=tot}
                         out[i] = a[i] / total {dep=tot}
                         """)
    knl = lp.set_temporary_scope(knl, "total", "private")
    knl = lp.split_iname(knl, "k", 16, inner_tag="l.0")
    knl = lp.split_iname(knl, "i", 16, inner_tag="l.0")
    code = device_code(knl, {"a": np.float64})
    assert not re.search(r"if \(lid\(0\) == 0\)\s*\n\s*total = ", code), code
    rng = np.random.default_rng(16)
    for n in (1, 16, 40):
        a = rng.uniform(0.5, 1.5, n)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(host(out), a / a.sum(), rtol=1e-12)


# }}}


# {{{ row-wise parallel reductions (rows on g.0, reduction on l.0)

def rowwise_kernel(op, group_size):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], f"out[i] = {op}(k, a[i, k])")
    knl = lp.tag_inames(knl, {"i": "g.0"})
    return lp.split_iname(knl, "k", group_size, inner_tag="l.0")


def test_rowwise_code_structure():
    code = device_code(rowwise_kernel("max", 32), {"a": np.float32})
    assert "reqd_work_group_size(32, 1, 1)" in code
    assert re.search(r"__local float \w+\[32\];", code), code
    assert re.search(r"\bout\[gid\(0\)\] = ", code), code


@st.composite
def rowwise_cases(draw):
    op = draw(st.sampled_from(OPS))
    dtype = draw(st.sampled_from(DTYPES))
    g = draw(st.sampled_from((16, 32, 100)))
    n = draw(st.integers(0, 6))
    m = draw(st.one_of(st.integers(0, 3), st.integers(0, 3 * g + 5)))
    seed = draw(st.integers(0, 2**31 - 1))
    return dict(op=op, dtype=dtype, g=g, n=n, m=m, seed=seed)


def _run_rowwise(queue, case):
    note(repr(case))
    knl = rowwise_kernel(case["op"], case["g"])
    a = make_values(case["op"], case["dtype"], (case["n"], case["m"]), case["m"],
                    case["seed"])
    evt, (out,) = knl(queue, a=a)
    assert_reduced(case["op"], case["dtype"], host(out), numpy_reduce(case["op"], a, (1,)),
                   case["m"])


@_settings(8)
@given(case=rowwise_cases())
def test_random_rowwise_parallel_reductions(queue, case):
    _run_rowwise(queue, case)


@pytest.mark.slow
@_settings(150)
@given(case=rowwise_cases())
def test_random_rowwise_parallel_reductions_many(queue, case):
    _run_rowwise(queue, case)


def test_rowwise_with_rows_on_second_local_axis(queue):
    """Rows split over g.0/l.1, the reduction over l.0: a 2D work-group."""
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], "out[i] = sum(k, a[i, k])")
    knl = lp.split_iname(knl, "i", 4, outer_tag="g.0", inner_tag="l.1")
    knl = lp.split_iname(knl, "k", 16, inner_tag="l.0")
    code = device_code(knl, {"a": np.float64})
    assert "reqd_work_group_size(16, 4, 1)" in code
    assert re.search(r"__local double \w+\[4\]\[16\]|__local double \w+\[64\]", code), code
    rng = np.random.default_rng(17)
    for shape in [(0, 3), (3, 0), (5, 17), (9, 40), (1, 1), (8, 16)]:
        a = rng.uniform(-1, 1, shape)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_allclose(host(out), a.sum(1), rtol=1e-12, atol=1e-12)


# }}}


# {{{ ilp accumulators

@pytest.mark.parametrize("factor", [2, 3, 4, 8])
@pytest.mark.parametrize("op", OPS)
def test_ilp_accumulators(queue, op, factor):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], f"out[i] = {op}(k, a[i, k])")
    knl = lp.split_iname(knl, "i", factor, inner_tag="ilp")
    code = device_code(knl, {"a": np.float64})
    # one accumulator per ilp lane, in a private array
    assert re.search(rf"^\s*double acc_k\w*\[{factor}\];", code, re.M), code
    assert "__local" not in code
    for shape in [(0, 5), (3, 0), (1, 1), (factor, 3), (2 * factor + 1, 31)]:
        count = shape[1]
        a = make_values(op, np.float64, shape, count, seed=shape[0] * 100 + shape[1])
        evt, (out,) = knl(queue, a=a)
        assert_reduced(op, np.float64, host(out), numpy_reduce(op, a, (1,)), count)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_ilp_accumulators_in_parallel_kernel(queue, dtype):
    """Rows split g.0 / l.0 / ilp: each work-item accumulates 4 rows at once."""
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], "out[i] = sum(k, a[i, k])")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0")
    knl = lp.split_iname(knl, "i_inner", 4, outer_tag="l.0", inner_tag="ilp")
    code = device_code(knl, {"a": dtype})
    assert "reqd_work_group_size(4, 1, 1)" in code
    assert re.search(rf"^\s*{CTYPES[dtype]} acc_k\w*\[4\];", code, re.M), code
    for shape in [(0, 5), (3, 0), (1, 1), (5, 31), (37, 100), (16, 3)]:
        a = make_values("sum", dtype, shape, shape[1], seed=shape[0] + 7 * shape[1])
        evt, (out,) = knl(queue, a=a)
        assert_reduced("sum", dtype, host(out), numpy_reduce("sum", a, (1,)), shape[1])


@_settings(15)
@given(op=st.sampled_from(OPS), dtype=st.sampled_from(DTYPES),
       factor=st.integers(2, 6), n=st.integers(0, 20), m=st.integers(0, 12),
       seed=st.integers(0, 2**31 - 1))
def test_random_ilp_reductions(queue, op, dtype, factor, n, m, seed):
    knl = lp.make_kernel(["{[i]: 0<=i<n}", "{[k]: 0<=k<m}"], f"out[i] = {op}(k, a[i, k])")
    knl = lp.split_iname(knl, "i", factor, inner_tag="ilp")
    a = make_values(op, dtype, (n, m), m, seed)
    evt, (out,) = knl(queue, a=a)
    assert_reduced(op, dtype, host(out), numpy_reduce(op, a, (1,)), m)


# }}}

# vim: foldmethod=marker
