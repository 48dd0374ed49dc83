"""User-registered reductions and privatization of temporaries."""

import numpy as np
import pytest

import kernelcore as lp

lp.register_reduction("kc_test_sumsq", 0, "a + b*b", merge="a + b")
lp.register_reduction("kc_test_nomerge", 0, "a + b*b")


def _rows(op):
    return lp.make_kernel(["{[i]: 0<=i<n}", "{[j]: 0<=j<m}"], f"out[i] = {op}(j, a[i,j])")


@pytest.mark.parametrize("m", [0, 1, 17, 300])
def test_sequential_and_parallel_user_reduction(queue, m):
    a = np.random.default_rng(m).random((4, m))
    evt, (out,) = _rows("kc_test_sumsq")(queue, a=a)
    np.testing.assert_allclose(out, (a * a).sum(axis=1))
    knl = lp.split_iname(_rows("kc_test_sumsq"), "j", 16, inner_tag="l.0")
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, (a * a).sum(axis=1))


def test_user_reduction_across_groups(queue):
    knl = lp.make_kernel("{[j]: 0<=j<m}", "out[0] = kc_test_sumsq(j, a[j])",
                         [lp.GlobalArg("out", np.float64, shape=(1,)), "..."])
    knl = lp.split_iname(knl, "j", 32, inner_tag="l.0")
    knl = lp.split_iname(knl, "j_outer", 4, outer_tag="g.0")
    a = np.random.default_rng(0).random(10007)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out[0], (a * a).sum())


def test_parallel_user_reduction_needs_merge(queue):
    knl = lp.split_iname(_rows("kc_test_nomerge"), "j", 16, inner_tag="l.0")
    with pytest.raises(lp.KernelcoreError, match="merge"):
        knl(queue, a=np.ones((2, 5)))


def test_builtin_names_cannot_be_registered():
    with pytest.raises(lp.KernelcoreError, match="built-in"):
        lp.register_reduction("sum", 0, "a + b")


def test_privatize_gives_each_iteration_a_copy(queue):
    knl = lp.make_kernel("{[i,j]: 0<=i<4 and 0<=j<n}",
                         ["<> t = a[i] {id=w}", "out[i, j] = t*b[j] {dep=w}"])
    knl = lp.privatize_temporaries_with_inames(knl, "i")
    assert knl.temporary_variables["t"].shape == (4,)
    a, b = np.arange(4.0), np.arange(3.0)
    evt, (out,) = knl(queue, a=a, b=b)
    np.testing.assert_array_equal(out, np.outer(a, b))


def test_privatize_refuses_values_used_outside_the_loop():
    knl = lp.make_kernel(["{[i]: 0<=i<4}", "{[k]: 0<=k<1}"],
                         ["<> t = a[i] {id=w}", "out[k] = t {dep=w, inames=k}"])
    with pytest.raises(lp.KernelcoreError, match="outside"):
        lp.privatize_temporaries_with_inames(knl, "i")


def test_extract_subst_and_precompute(queue):
    knl = lp.make_kernel("{[i]: 1<=i<n-1}",
                         "out[i] = a[i-1]*a[i-1] + a[i+1]*a[i+1] + a[i]*a[i]")
    knl = lp.extract_subst(knl, "sq", "a[x]*a[x]", "x")
    assert "sq" in knl.substitutions
    a = np.arange(7.0)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out[1:], a[:-2]**2 + a[2:]**2 + a[1:-1]**2)
    with pytest.raises(lp.KernelcoreError, match="matches"):
        lp.extract_subst(knl, "cube", "a[x]*a[x]*a[x]", "x")


@pytest.mark.parametrize("n", [1, 16, 37])
def test_buffer_array_loads_updates_and_stores(queue, n):
    knl = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<8}", "out[i] = out[i] + a[i,j] {id=acc}")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.buffer_array(knl, "out", ["i_inner"], default_tag="l.0")
    code = lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float32, "out": np.float32}))
    assert "__local float out_buf[16]" in code.device_code()
    a = np.random.default_rng(n).random((n, 8), dtype=np.float32)
    evt, (out,) = knl(queue, a=a, out=np.ones(n, np.float32))
    np.testing.assert_allclose(out, 1 + a.sum(axis=1), rtol=1e-5)


def test_buffer_array_with_init_expression(queue):
    knl = lp.make_kernel("{[i,j]: 0<=i<n and 0<=j<4}", "out[i] = out[i] + a[i,j] {id=acc}")
    knl = lp.split_iname(knl, "i", 8, outer_tag="g.0", inner_tag="l.0")
    knl = lp.buffer_array(knl, "out", ["i_inner"], init_expression="0", default_tag="l.0")
    a = np.arange(40.0).reshape(10, 4)
    evt, (out,) = knl(queue, a=a, out=np.full(10, 99.0))
    np.testing.assert_allclose(out, a.sum(axis=1))


@pytest.mark.parametrize("n", [1, 5, 63, 64])
def test_scan_across_work_items(queue, n):
    knl = lp.make_kernel("{[i,j]: 0<=j<=i<n}", "out[i] = sum(j, a[j])", assumptions="n<=64")
    knl = lp.tag_inames(knl, "i:l.0")
    code = lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float32})).device_code()
    assert "__local float" in code and "barrier(" in code and "for (" not in code
    a = np.random.default_rng(n).random(n, dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.cumsum(a), rtol=1e-5)


def test_scan_rows_across_work_items(queue):
    knl = lp.make_kernel(["{[r]: 0<=r<m}", "{[i,j]: 0<=j<=i<16}"],
                         "out[r, i] = max(j, a[r, j])")
    knl = lp.tag_inames(knl, "r:g.0, i:l.0")
    a = np.random.default_rng(1).random((5, 16))
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(out, np.maximum.accumulate(a, axis=1))
