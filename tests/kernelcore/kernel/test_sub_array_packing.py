"""Calls passing sub-arrays that are no strided slices (reshapes, diagonals,
transposes, swept inames indexing nothing), through temporaries
(:mod:`kernelcore.sub_array_pack`), and ``pack_and_unpack_args_for_call``;
called as device functions and inlined, results compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def _scale(name, factor, domain="{[i]: 0<=i<6}", body="b[i] = {f}*a[i]"):
    return lp.make_function(domain, body.format(f=factor), name=name)


def _run(queue, t_unit, inline, callees, **kwargs):
    if inline:
        for name in callees:
            t_unit = lp.inline_callable_kernel(t_unit, name)
    t_unit = lp.set_options(t_unit, return_dict=True)
    _, out = t_unit(queue, **kwargs)
    return {k: host(v) for k, v in out.items()}


@pytest.mark.parametrize("inline", [False, True])
def test_reshape_diagonal_and_two_swept_inames_in_one_subscript(queue, inline):
    t_unit = lp.make_kernel(
        "{[i, j, k, l]: 0<=i<6 and 0<=j<3 and 0<=k<2 and 0<=l<6}",
        """
        [i]: y1[i//2, i%2] = f1([i]: x1[i//2, i%2])
        [j, k]: y2[2*j + k] = f2([j, k]: x2[2*j + k])
        [l]: y3[l, l] = f3([l]: x3[l, l])
        """)
    callees = [_scale("f1", 2), _scale("f2", 3, "{[i, j]: 0<=i<3 and 0<=j<2}",
                                       "b[i, j] = {f}*a[i, j] + i"), _scale("f3", 5)]
    t_unit = lp.merge([t_unit, *callees])
    rng = np.random.default_rng(1)
    x1, x2, x3 = rng.random((3, 2)), rng.random(6), rng.random((6, 6))
    out = _run(queue, t_unit, inline, ["f1", "f2", "f3"], x1=x1, x2=x2, x3=x3)
    np.testing.assert_allclose(out["y1"], 2 * x1)
    np.testing.assert_allclose(out["y2"], 3 * x2 + np.repeat(np.arange(3), 2))
    np.testing.assert_allclose(np.diag(out["y3"]), 5 * np.diag(x3))


@pytest.mark.parametrize("inline", [False, True])
def test_transposed_and_reversed_sub_arrays(queue, inline):
    t_unit = lp.make_kernel(
        "{[i, j, k]: 0<=i<4 and 0<=j, k<3}",
        """
        [j, k]: t[j, k] = g([j, k]: x[k, j])
        [i]: r[i] = f([i]: v[3 - i])
        """, [lp.GlobalArg("x,t", np.float64, shape=(3, 3)),
              lp.GlobalArg("v,r", np.float64, shape=(4,))])
    t_unit = lp.merge([t_unit, _scale("f", 1, "{[i]: 0<=i<4}", "b[i] = a[i] + 10*i"),
                       _scale("g", 2, "{[i, j]: 0<=i, j<3}", "b[i, j] = {f}*a[i, j]")])
    rng = np.random.default_rng(2)
    x, v = rng.random((3, 3)), rng.random(4)
    out = _run(queue, t_unit, inline, ["f", "g"], x=x, v=v)
    np.testing.assert_allclose(out["t"], 2 * x.T)
    np.testing.assert_allclose(out["r"], v[::-1] + 10 * np.arange(4))


@pytest.mark.parametrize("inline", [False, True])
def test_repeated_index_and_call_without_arguments(queue, inline):
    ones = lp.make_function("{[i]: 0<=i<10}", "g[i] = 1", name="ones")
    t_unit = lp.make_kernel(
        ["{[i]: 0<=i<10}", "{[j]: 0<=j<10}"],
        """
        z[i, j] = 0                {id=zero}
        [i]: z[i, i] = ones()      {dep=zero, dup=i}
        """, [lp.GlobalArg("z", np.float64, shape=(10, 10), is_input=False), ...])
    out = _run(queue, lp.merge([t_unit, ones]), inline, ["ones"])
    np.testing.assert_array_equal(out["z"], np.eye(10))


def test_swept_iname_indexing_nothing_gives_a_zero_stride(queue):
    times_two = lp.make_function(
        "{[j1, j2]: 0<=j1<2 and 0<=j2<3}", "out[j1, j2] = 2*inp[j1, j2] + j1",
        name="times_two")
    t_unit = lp.make_kernel(
        "{[i1, i2]: 0<=i1<2 and 0<=i2<3}",
        "[i1, i2]: y[i1, i2] = times_two([i1, i2]: x[i2])",
        [lp.GlobalArg("x", np.float64, shape=(3,)), ...])
    t_unit = lp.merge([t_unit, times_two])
    x = np.array([1.0, 2.0, 3.0])
    for inline in (False, True):
        out = _run(queue, t_unit, inline, ["times_two"], x=x)
        np.testing.assert_allclose(out["y"], 2 * np.stack([x, x]) + [[0], [1]])


@pytest.mark.parametrize("inline", [False, True])
def test_diagonal_updated_in_place(queue, inline):
    twice = lp.make_function("{[i]: 0<=i<4}", "x[i] = 2*x[i] + i", name="twice")
    t_unit = lp.make_kernel("{[i]: 0<=i<4}", "[i]: a[i, i] = twice([i]: a[i, i])",
                            [lp.GlobalArg("a", np.float64, shape=(4, 4))])
    a = np.arange(16.0).reshape(4, 4)
    out = _run(queue, lp.merge([t_unit, twice]), inline, ["twice"], a=a.copy())
    expected = a.copy()
    expected[np.diag_indices(4)] = 2 * np.diag(a) + np.arange(4)
    np.testing.assert_allclose(out["a"], expected)


def test_sub_array_with_a_parametric_range_is_still_refused():
    with pytest.raises(lp.ParseError, match=r"must be c\*j \+ d"):
        lp.make_kernel("{[i, j]: 0<=i<n and 0<=j<n}",
                       "[j]: out[i, j] = child([j]: x[i, j // 2])")


@pytest.mark.parametrize("inline", [False, True])
def test_pack_and_unpack_args_for_call_reshapes(queue, inline):
    t_unit = lp.make_kernel(
        "{[i, j, k]: 0<=i<3 and 0<=j<2 and 0<=k<6}",
        """
        [i, j]: y1[i, j] = f1([i, j]: x1[i, j])
        [k]: y2[k] = f2([k]: x2[k])
        [i, j]: x3[i, j] = f3([i, j]: x3[i, j])
        """, [lp.GlobalArg("x3", np.float64, shape=(3, 2)), ...])
    t_unit = lp.merge([t_unit, _scale("f1", 2, body="b[i] = {f}*a[i] + i"),
                       _scale("f2", 3, "{[i, j]: 0<=i<2 and 0<=j<3}",
                              "b[i, j] = {f}*a[i, j] + 10*i"),
                       lp.make_function("{[i]: 0<=i<6}", "x[i] = -x[i]", name="f3")])
    for name in ("f1", "f2", "f3"):
        t_unit = lp.pack_and_unpack_args_for_call(t_unit, name)
    rng = np.random.default_rng(3)
    x1, x2, x3 = rng.random((3, 2)), rng.random(6), rng.random((3, 2))
    out = _run(queue, t_unit, inline, ["f1", "f2", "f3"], x1=x1, x2=x2, x3=x3.copy())
    np.testing.assert_allclose(out["y1"], 2 * x1 + np.arange(6).reshape(3, 2))
    np.testing.assert_allclose(out["y2"], 3 * x2 + np.repeat([0, 10], 3))
    np.testing.assert_allclose(out["x3"], -x3)


def test_pack_and_unpack_args_for_call_checks_sizes():
    t_unit = lp.merge([
        lp.make_kernel("{[i]: 0<=i<4}", "[i]: y[i] = f([i]: x[i])"),
        _scale("f", 2)])
    with pytest.raises(lp.KernelcoreError, match="4 elements"):
        lp.pack_and_unpack_args_for_call(t_unit, "f")


def test_call_with_two_outputs_and_a_parametric_sub_array(queue):
    argmin = lp.make_function(
        "{[i]: 0<=i<n}",
        [lp.Assignment("index", 0, id="init_index"),
         lp.Assignment("acc", "1e30", id="init_acc"),
         lp.Assignment("index", "i if acc == a[i] else index", id="pick",
                       depends_on="update"),
         lp.Assignment("acc", "min(acc, a[i])", id="update",
                       depends_on="init_acc,init_index")],
        [lp.GlobalArg("a", np.float64),
         lp.GlobalArg("acc, index", is_input=False, is_output=True, shape=lp.auto), ...],
        name="find_min")
    argmin = lp.fix_parameters(argmin, n=10)
    t_unit = lp.make_kernel("{[i]: 0<=i<n}",
                            "[]: lo[()], []: at[()] = find_min([i]: b[i])")
    t_unit = lp.merge([lp.fix_parameters(t_unit, n=10), argmin])
    b = np.random.default_rng(4).normal(size=10)
    out = _run(queue, t_unit, False, [], b=b)
    assert out["lo"] == b.min()
    assert out["at"] == b.argmin()


@pytest.mark.parametrize("inline", [False, True])
def test_callee_grid_from_the_scalars_of_the_call(queue, inline):
    arange = lp.make_function("{[i]: 0<=i<n}", "y[i] = 3*i", name="arange")
    t_unit = lp.merge([arange, lp.make_kernel("{[i]: 0<=i<10}", "[i]: y[i] = arange(10)")])
    t_unit = lp.split_iname(t_unit, "i", 2, outer_tag="g.0", within="in_kernel:arange")
    out = _run(queue, t_unit, inline, ["arange"])
    np.testing.assert_array_equal(out["y"], 3 * np.arange(10))


def test_callee_local_axis_beside_the_callers(queue):
    twice = lp.tag_inames(lp.make_function("{[i]: 0<=i<10}", "y[i] = 2*x[i]", name="twice"),
                          {"i": "l.1"})
    t_unit = lp.make_kernel(
        "{[i]: 0<=i<10}", "y[:, i] = twice(x[:, i])",
        [lp.GlobalArg("x", np.float64, shape=(10, 10)),
         lp.GlobalArg("y", np.float64, shape=(10, 10))])
    t_unit = lp.merge([lp.tag_inames(t_unit, {"i": "l.0"}), twice])
    x = np.random.default_rng(5).random((10, 10))
    out = _run(queue, t_unit, False, [], x=x)
    np.testing.assert_allclose(out["y"], 2 * x)
