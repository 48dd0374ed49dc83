"""Parallel iname tags (``l.N`` work-item and ``g.N`` work-group axes), grid
sizes, write-race detection, ILP and automatic parallelization.

Generated code is inspected loosely (work-group size attribute, use of the
local/group ids, presence of guards, the way an array subscript depends on the
ids) and every kernel is run on the device and compared with NumPy, for sizes
that are and are not multiples of the work-group size, including 0 and 1.
"""

from __future__ import annotations

import math
import re
import warnings

import islpy as isl
import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host

# {{{ helpers

def device_code(knl, dtypes=None):
    if dtypes:
        knl = lp.add_dtypes(knl, dtypes)
    return lp.generate_code_v2(knl).device_code()



def kernel_body(code):
    start = code.index("{", code.index("__kernel"))
    depth = 0
    for k in range(start, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return code[start + 1:k]
    raise AssertionError("unbalanced braces in generated code")


def work_group_size(code):
    m = re.search(r"reqd_work_group_size\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", code)
    assert m, f"no reqd_work_group_size attribute in:\n{code}"
    return tuple(int(x) for x in m.groups())


def uses_id(code, kind, axis):
    """Whether the kernel body reads the local ('l') or group ('g') id *axis*."""
    body = kernel_body(code)
    short = "lid" if kind == "l" else "gid"
    long = "get_local_id" if kind == "l" else "get_group_id"
    return re.search(rf"\b({short}|{long})\s*\(\s*{axis}\s*\)", body) is not None


def if_count(text):
    return len(re.findall(r"\bif\s*\(", text))


def for_count(text):
    return len(re.findall(r"\bfor\s*\(", text))


def subscript_of(code, name):
    """The subscript text of the (first) assignment to ``name[...]``."""
    m = re.search(rf"\b{name}\s*\[(?P<idx>[^\]]*)\]\s*=(?!=)", kernel_body(code))
    assert m, f"no assignment to {name} in:\n{code}"
    return m.group("idx")


def eval_subscript(idx, lid=(0, 0, 0), gid=(0, 0, 0), **params):
    """Evaluate a flat C subscript (sums and products of ids and parameters)."""
    assert "/" not in idx and "%" not in idx, idx
    env = dict(params)
    env["lid"] = env["get_local_id"] = lambda k: lid[k]
    env["gid"] = env["get_group_id"] = lambda k: gid[k]
    return eval(idx, {"__builtins__": {}}, env)


def eval_aff(aff, **params):
    """Value of a parameter-only isl Aff at the given parameter values."""
    space = aff.get_domain_space()
    point = isl.Point.zero(space)
    for name, value in params.items():
        idx = space.find_dim_by_name(isl.dim_type.param, name)
        if idx >= 0:
            point = point.set_coordinate_val(isl.dim_type.param, idx, value)
    return aff.eval(point).to_python()


def rtol_for(dtype):
    return 1e-6 if np.dtype(dtype) == np.float32 else 1e-14



def raises_kernel_problem():
    """Errors kernelcore reports for wrong programs: error classes, or warning
    classes raised as exceptions (write races)."""
    return pytest.raises((lp.KernelcoreError, lp.KernelcoreWarning))

# }}}


# {{{ the tutorial example

def _tutorial_fill():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "a[i] = 0", assumptions="n>=0")
    return lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")


def test_tutorial_parallel_fill_code():
    knl = _tutorial_fill()
    code = device_code(knl, {"a": np.float32})
    assert work_group_size(code) == (128, 1, 1)
    assert uses_id(code, "g", 0)
    assert uses_id(code, "l", 0)
    body = kernel_body(code)
    # no loop: each work-item handles one element, guarded against i >= n
    assert for_count(body) == 0
    assert if_count(body) == 1
    idx = subscript_of(code, "a")
    assert eval_subscript(idx, lid=(5, 0, 0), gid=(3, 0, 0), n=1000) == 3 * 128 + 5


def test_tutorial_parallel_fill_grid_sizes():
    knl = _tutorial_fill()
    glob, loc = knl.get_grid_size_upper_bounds()
    assert len(glob) == 1
    assert len(loc) == 1
    for n in [0, 1, 127, 128, 129, 255, 256, 257, 1000]:
        assert eval_aff(glob[0], n=n) == math.ceil(n / 128), n
        assert eval_aff(loc[0], n=n) == 128
    assert "128" in str(loc[0])
    assert "n" in str(glob[0])


@pytest.mark.parametrize("n", [0, 1, 127, 128, 129, 1000])
def test_tutorial_parallel_fill_runs(queue, rng, n):
    knl = _tutorial_fill()
    a = rng.standard_normal(n).astype(np.float32) + 3
    evt, (out,) = knl(queue, a=a)
    out = host(out)
    assert out.shape == (n,)
    assert np.all(out == 0)

def test_grid_sizes_do_not_need_types():
    """Like the tutorial: grid sizes come from the domain and tags alone, so
    they are available before argument types are known."""
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[j,i] + 1")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "i", 4, outer_tag="g.1", inner_tag="l.1")
    glob, loc = knl.get_grid_size_upper_bounds()
    assert [eval_aff(x, n=9, m=33) for x in loc] == [16, 4]
    assert [eval_aff(x, n=9, m=33) for x in glob] == [3, 3]

# }}}


# {{{ split + l.0/g.0 vector kernel

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tile", [128, 16, 5])
def test_parallel_vector_kernel(queue, rng, dtype, tile):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]*2 + b[i]")
    knl = lp.split_iname(knl, "i", tile, outer_tag="g.0", inner_tag="l.0")
    code = device_code(knl, {"a": dtype, "b": dtype})
    assert work_group_size(code) == (tile, 1, 1)
    assert uses_id(code, "l", 0) and uses_id(code, "g", 0)
    assert for_count(kernel_body(code)) == 0
    for n in sorted({0, 1, tile - 1, tile, tile + 1, 3 * tile + 2, 1000}):
        a = rng.standard_normal(n).astype(dtype)
        b = rng.standard_normal(n).astype(dtype)
        evt, (out,) = knl(queue, a=a, b=b)
        out = host(out)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, a * 2 + b, rtol=rtol_for(dtype), atol=0,
                                   err_msg=f"n={n}")


def test_parallel_vector_kernel_with_divisibility_assumption_no_guard(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]*2 + b[i]",
                         assumptions="n >= 0 and n mod 32 = 0")
    knl = lp.split_iname(knl, "i", 32, outer_tag="g.0", inner_tag="l.0")
    code = device_code(knl, {"a": np.float32, "b": np.float32})
    assert if_count(kernel_body(code)) == 0
    for n in (0, 32, 96):
        a = np.arange(n, dtype=np.float32)
        b = np.ones(n, dtype=np.float32)
        evt, (out,) = knl(queue, a=a, b=b)
        np.testing.assert_array_equal(host(out), 2 * a + 1)


def test_only_local_axis_fixed_size(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<32 }", "out[i] = a[i] + 1")
    knl = lp.tag_inames(knl, {"i": "l.0"})
    code = device_code(knl, {"a": np.float64})
    assert work_group_size(code) == (32, 1, 1)
    glob, loc = lp.add_dtypes(knl, {"a": np.float64}).get_grid_size_upper_bounds()
    assert [eval_aff(x) for x in loc] == [32]
    assert all(eval_aff(x) == 1 for x in glob)
    a = np.arange(32.0)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a + 1)


def test_local_size_must_be_constant():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i]")
    knl = lp.tag_inames(knl, {"i": "l.0"})
    with raises_kernel_problem() as excinfo:
        device_code(knl, {"a": np.float32})
    assert "i" in str(excinfo.value)

# }}}


# {{{ 2-D grids: tiled transpose, group-only grid

def _tiled_transpose():
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[j,i]")
    # out[i, j] is contiguous along j: j walks the innermost local axis l.0
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    return knl


def test_tiled_transpose_code():
    knl = _tiled_transpose()
    code = device_code(knl, {"a": np.float32})
    assert work_group_size(code) == (16, 16, 1)
    for kind in "lg":
        for axis in (0, 1):
            assert uses_id(code, kind, axis)
    assert for_count(kernel_body(code)) == 0
    assert if_count(kernel_body(code)) >= 1
    # neighbouring work-items along l.0 write neighbouring elements of out
    idx = subscript_of(code, "out")
    n, m = 40, 50
    base = eval_subscript(idx, lid=(3, 2, 0), gid=(1, 1, 0), n=n, m=m)
    assert base == (16 * 1 + 2) * m + (16 * 1 + 3)
    assert eval_subscript(idx, lid=(4, 2, 0), gid=(1, 1, 0), n=n, m=m) == base + 1
    assert eval_subscript(idx, lid=(3, 3, 0), gid=(1, 1, 0), n=n, m=m) == base + m
    assert eval_subscript(idx, lid=(3, 2, 0), gid=(2, 1, 0), n=n, m=m) == base + 16


def test_tiled_transpose_grid_sizes():
    knl = lp.add_dtypes(_tiled_transpose(), {"a": np.float32})
    glob, loc = knl.get_grid_size_upper_bounds()
    assert len(glob) == 2 and len(loc) == 2
    for n, m in [(0, 0), (1, 1), (16, 16), (17, 5), (33, 48), (1, 40)]:
        assert [eval_aff(x, n=n, m=m) for x in loc] == [16, 16]
        assert [eval_aff(x, n=n, m=m) for x in glob] == \
            [math.ceil(m / 16), math.ceil(n / 16)], (n, m)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,m", [(0, 0), (0, 3), (3, 0), (1, 1), (16, 16), (17, 5),
                                 (33, 48), (1, 40), (64, 32)])
def test_tiled_transpose_runs(queue, rng, dtype, n, m):
    knl = _tiled_transpose()
    a = rng.standard_normal((m, n)).astype(dtype)
    evt, (out,) = knl(queue, a=a)
    out = host(out)
    assert out.shape == (n, m)
    np.testing.assert_array_equal(out, a.T)


def test_tiled_square_transpose_with_assumption(queue, rng):
    knl = lp.make_kernel("{ [i,j]: 0<=i,j<n }", "out[i,j] = a[j,i]",
                         assumptions="n >= 1 and n mod 16 = 0")
    knl = lp.split_iname(knl, "j", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.1", inner_tag="l.1")
    code = device_code(knl, {"a": np.float32})
    assert if_count(kernel_body(code)) == 0
    for n in (16, 48):
        a = rng.standard_normal((n, n)).astype(np.float32)
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), a.T)


@pytest.mark.parametrize("n,m", [(0, 0), (1, 1), (3, 7), (9, 1)])
def test_group_only_2d_grid(queue, n, m):
    knl = lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<m }", "out[i,j] = a[i,j] + 1")
    knl = lp.tag_inames(knl, "i:g.1, j:g.0")
    code = device_code(knl, {"a": np.float64})
    assert work_group_size(code) == (1, 1, 1)
    assert uses_id(code, "g", 0) and uses_id(code, "g", 1)
    glob, loc = lp.add_dtypes(knl, {"a": np.float64}).get_grid_size_upper_bounds()
    assert [eval_aff(x, n=n, m=m) for x in glob] == [m, n]
    a = np.arange(n * m, dtype=np.float64).reshape(n, m)
    evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a + 1)


def test_local_only_2d_block(queue):
    knl = lp.make_kernel("{ [i,j]: 0<=i<4 and 0<=j<8 }", "out[i,j] = 10*i + j + a[i,j]")
    knl = lp.tag_inames(knl, {"i": "l.1", "j": "l.0"})
    code = device_code(knl, {"a": np.float32})
    assert work_group_size(code) == (8, 4, 1)
    a = np.zeros((4, 8), np.float32)
    evt, (out,) = knl(queue, a=a)
    expected = 10 * np.arange(4)[:, None] + np.arange(8)[None, :]
    np.testing.assert_array_equal(host(out), expected)


def test_parallel_outer_sequential_inner_loop(queue, rng):
    """Rows in parallel, a sequential reduction inside each work-item."""
    knl = lp.make_kernel(["{ [i]: 0<=i<n }", "{ [k]: 0<=k<m }"], "out[i] = sum(k, a[i,k])")
    knl = lp.split_iname(knl, "i", 8, outer_tag="g.0", inner_tag="l.0")
    for n, m in [(0, 3), (1, 0), (1, 1), (7, 5), (8, 8), (20, 3)]:
        a = rng.integers(-5, 6, size=(n, m)).astype(np.float64)
        evt, (out,) = knl(queue, a=a, out=np.full(n, -12345.0))
        np.testing.assert_array_equal(host(out), a.sum(axis=1))

# }}}


# {{{ instructions on different parallel inames

def test_instructions_each_with_own_parallel_inames(queue):
    """Two instructions on the same hardware axes through different inames of
    different extents: each only runs where its own domain holds (and neither
    races: each writes at an index built from its own parallel inames)."""
    # separate domains: with one shared domain an empty i range would (as in
    # loopy) also leave the k instruction without points
    knl = lp.make_kernel(
        ["{ [i]: 0<=i<n }", "{ [k]: 0<=k<n+5 }"],
        ["out1[i] = 2*a[i] {id=w1}",
         "out2[k] = b[k] + 1 {id=w2}"])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "k", 16, outer_tag="g.0", inner_tag="l.0")
    for n in (0, 1, 11, 12, 16, 40):
        a = np.arange(n, dtype=np.float32)
        b = np.arange(n + 5, dtype=np.float32) * 3
        evt, (o1, o2) = knl(queue, a=a, b=b)
        np.testing.assert_array_equal(host(o1), 2 * a, err_msg=f"n={n}")
        np.testing.assert_array_equal(host(o2), b + 1, err_msg=f"n={n}")


def test_instructions_with_unrelated_parallel_extents(queue):
    """As above with independent extents and tile sizes: the number of groups
    is the larger of the two instructions' needs."""
    knl = lp.make_kernel(
        ["{ [i]: 0<=i<n }", "{ [k]: 0<=k<m }"],
        ["out1[i] = 2*a[i] {id=w1}",
         "out2[k] = b[k] + 1 {id=w2}"])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, "k", 8, outer_tag="g.0", inner_tag="l.0")
    code = device_code(knl, {"a": np.float32, "b": np.float32})
    assert work_group_size(code) == (16, 1, 1)
    for n, m in [(0, 5), (5, 0), (1, 1), (16, 8), (17, 40), (100, 3)]:
        a = np.arange(n, dtype=np.float32)
        b = np.arange(m, dtype=np.float32) * 3
        evt, (o1, o2) = knl(queue, a=a, b=b)
        np.testing.assert_array_equal(host(o1), 2 * a, err_msg=f"n={n} m={m}")
        np.testing.assert_array_equal(host(o2), b + 1, err_msg=f"n={n} m={m}")


def test_mixed_parallel_inames_2d(queue):
    """One instruction parallel over (i, j), another over (k, l) on the same
    axes, with a sequential loop inside the second."""
    knl = lp.make_kernel(
        "{ [i,j,k,l,r]: 0<=i<n and 0<=j<4 and 0<=k<n and 0<=l<4 and 0<=r<3 }",
        ["out1[i,j] = a[i,j] * 2 {id=w1}",
         "out2[k,l] = sum(r, a[k,l] + r) {id=w2}"])
    knl = lp.tag_inames(knl, {"i": "g.0", "j": "l.0", "k": "g.0", "l": "l.0"})
    for n in (0, 1, 5):
        a = np.arange(4 * n, dtype=np.float64).reshape(n, 4)
        evt, (o1, o2) = knl(queue, a=a)
        np.testing.assert_array_equal(host(o1), 2 * a)
        np.testing.assert_array_equal(host(o2), 3 * a + 3)


def test_instruction_outside_parallel_loops_is_rejected(queue):
    """A global write by an instruction that does not run in the kernel's
    parallel loops would be done by every work-item (loopy rejects it)."""
    knl = lp.make_kernel(
        "{ [i,k]: 0<=i<n and 0<=k<m }",
        ["out1[i] = 2*a[i] {id=par}",
         "out2[k] = b[k] + 1 {id=seq}"])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    with raises_kernel_problem() as excinfo:
        device_code(knl, {"a": np.float32, "b": np.float32})
        knl(queue, a=np.ones(4, np.float32), b=np.ones(3, np.float32))
    assert "seq" in str(excinfo.value) or "i_" in str(excinfo.value)

# }}}


# {{{ write races

def _need_race_check():
    assert hasattr(lp, "WriteRaceConditionWarning"), "write-race detection is missing"


def _racy_kernels():
    fixed = lp.make_kernel("{ [ii]: 0<=ii<16 }", "out[0] = a[ii] {id=racy}")
    yield "local", lp.tag_inames(fixed, {"ii": "l.0"}), ("racy", "ii")
    yield "group", lp.tag_inames(fixed, {"ii": "g.0"}), ("racy", "ii")
    split = lp.make_kernel("{ [ii]: 0<=ii<n }", "out[0] = a[ii] {id=racy}")
    yield "split", lp.split_iname(split, "ii", 8, outer_tag="g.0", inner_tag="l.0"), \
        ("racy", "ii_")
    two_d = lp.make_kernel("{ [ii,jj]: 0<=ii<n and 0<=jj<8 }",
                           "out[ii] = a[ii,jj] {id=racy}")
    yield "2d", lp.tag_inames(two_d, {"ii": "g.0", "jj": "l.0"}), ("racy", "jj")


@pytest.mark.parametrize("which", ["local", "group", "split", "2d"])
def test_write_race_is_reported(queue, which):
    _need_race_check()
    _, knl, names = {k: (k, kn, nm) for k, kn, nm in _racy_kernels()}[which]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with raises_kernel_problem() as excinfo:
            device_code(knl, {"a": np.float32})
            knl(queue, a=np.ones((16, 8) if which == "2d" else 16, np.float32))
    msg = str(excinfo.value)
    assert any(name in msg for name in names), msg


def test_no_race_reported_for_parallel_subscripts(queue):
    _need_race_check()
    knl = lp.make_kernel("{ [ii,jj]: 0<=ii<n and 0<=jj<8 }",
                         "out[ii,jj] = a[ii,jj] + 1 {id=fine}")
    knl = lp.tag_inames(knl, {"ii": "g.0", "jj": "l.0"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", lp.KernelcoreWarning)
        a = np.arange(24, dtype=np.float32).reshape(3, 8)
        evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), a + 1)


def test_private_temporary_per_work_item_is_no_race(queue):
    _need_race_check()
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         ["<> t = 3*a[i]", "out[i] = t - 1"])
    knl = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error", lp.KernelcoreWarning)
        a = np.arange(40, dtype=np.float32)
        evt, (out,) = knl(queue, a=a)
    np.testing.assert_array_equal(host(out), 3 * a - 1)


def test_work_group_tree_after_a_local_loop_is_no_race(queue):
    """Per-work-item partial sums (written under one l.0 iname) combined by a
    reduction over another l.0 iname into one element per group: the
    reduction covers the local axis, so there is no race."""
    _need_race_check()
    knl = lp.make_kernel(
        "{ [g, r, l, l2]: 0 <= g < 4 and 0 <= r < 8 and 0 <= l, l2 < 16 }",
        """
        <float32> p = sum(r, a[128*g + 16*r + l])  {id=lanes}
        out[g] = sum(l2, p)  {dep=lanes, inames=g}
        """, [lp.GlobalArg("a", np.float32, shape=(512,)),
              lp.GlobalArg("out", np.float32, shape=(4,))])
    knl = lp.tag_inames(knl, {"g": "g.0", "l": "l.0", "l2": "l.0"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", lp.KernelcoreWarning)
        a = np.arange(512, dtype=np.float32)
        evt, (out,) = knl(queue, a=a)
    np.testing.assert_allclose(host(out), a.reshape(4, 128).sum(axis=1))

# }}}


# {{{ ILP

@pytest.mark.parametrize("ilp_tag", ["ilp", "ilp.unr", "ilp.seq"])
@pytest.mark.parametrize("factor", [4, 8])
@pytest.mark.parametrize("outer_tag", [None, "g.0"])
def test_ilp_with_private_temporary(queue, ilp_tag, factor, outer_tag):
    knl = lp.make_kernel("{ [i]: 0<=i<n }",
                         ["<> t = 2*a[i]", "out[i] = t + 1"])
    knl = lp.split_iname(knl, "i", factor, inner_tag=ilp_tag, outer_tag=outer_tag)
    for n in (0, 1, factor - 1, factor, factor + 1, 13, 100):
        a = np.arange(n, dtype=np.float32) - 5
        evt, (out,) = knl(queue, a=a)
        np.testing.assert_array_equal(host(out), 2 * a + 1, err_msg=f"n={n}")


def test_ilp_unrolled_has_no_inner_loop():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", ["<> t = 2*a[i]", "out[i] = t + 1"],
                         assumptions="n >= 0 and n mod 4 = 0")
    knl = lp.split_iname(knl, "i", 4, inner_tag="ilp")
    code = device_code(knl, {"a": np.float32})
    assert "i_inner" not in kernel_body(code)
    assert len(re.findall(r"\bout\s*\[", kernel_body(code))) == 4

# }}}


# {{{ auto_parallelize

def _auto_cases():
    return {
        "1d": (lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i] + 1"),
               lambda n: {"a": np.arange(n, dtype=np.float32)},
               lambda d: [2 * d["a"] + 1]),
        "2d": (lp.make_kernel("{ [i,j]: 0<=i<n and 0<=j<n+3 }", "out[i,j] = a[i,j] - j"),
               lambda n: {"a": np.arange(n * (n + 3), dtype=np.float64)
                          .reshape(n, n + 3)},
               lambda d: [d["a"] - np.arange(d["a"].shape[1])[None, :]]),
        "reduction": (lp.make_kernel("{ [i,k]: 0<=i<n and 0<=k<5 }",
                                     "out[i] = sum(k, a[i,k]*k)"),
                      lambda n: {"a": np.arange(5 * n, dtype=np.float64).reshape(n, 5)},
                      lambda d: [d["a"] @ np.arange(5.0)]),
    }


@pytest.mark.parametrize("case", ["1d", "2d", "reduction"])
def test_auto_parallelize_preserves_results(queue, case):
    knl, inputs, ref = _auto_cases()[case]
    par = lp.auto_parallelize(knl)
    tags = {str(t) for t in par.iname_tags.values() if t is not None}
    assert any(t.startswith(("l.", "g.")) for t in tags), par
    for n in (0, 1, 7, 64, 65, 300):
        data = inputs(n)
        evt, outs = par(queue, **data)
        for got, want in zip(outs, ref(data)):
            np.testing.assert_array_equal(host(got), want, err_msg=f"{case} n={n}")


def test_auto_parallelize_keeps_reduction_sequential():
    knl, _, _ = _auto_cases()["reduction"]
    par = lp.auto_parallelize(knl)
    for name, tag in par.iname_tags.items():
        if name.startswith("k"):
            assert tag is None or not str(tag).startswith(("l.", "g.")), (name, tag)


def test_auto_parallelize_contiguous_local_axis():
    knl, _, _ = _auto_cases()["2d"]
    par = lp.auto_parallelize(knl)
    code = device_code(par, {"a": np.float64})
    idx = subscript_of(code, "out")
    n = 100
    base = eval_subscript(idx, lid=(1, 0, 0), gid=(0, 0, 0), n=n)
    assert eval_subscript(idx, lid=(2, 0, 0), gid=(0, 0, 0), n=n) == base + 1


def test_auto_parallelize_leaves_parallel_kernel_alone():
    knl = _tutorial_fill()
    assert str(lp.auto_parallelize(knl)) == str(knl)


def test_auto_parallelize_explicit_device(queue):
    knl, inputs, ref = _auto_cases()["1d"]
    par = lp.auto_parallelize(knl, device=queue.device)
    data = inputs(77)
    evt, (out,) = par(queue, **data)
    np.testing.assert_array_equal(host(out), ref(data)[0])


@pytest.mark.parametrize("short", [1, 3, 4, 32, 64, 100, 128])
def test_auto_parallelize_short_fast_loop_on_gpu(queue, short):
    """On a GPU a short contiguous loop fills work-groups together with the
    next loop (a transposed skinny matrix: once groups of 4 work-items);
    results unchanged (the GPU layout runs on any device)."""
    knl = lp.make_kernel(f"{{ [i,j]: 0<=i<n and 0<=j<{short} }}", "out[i,j] = 2*a[j,i]",
                         [lp.GlobalArg("a", np.float32, shape=(short, "n")),
                          lp.GlobalArg("out", np.float32, shape=("n", short)), "..."])
    knl = lp.fix_parameters(knl, n=1000)
    par = lp.auto_parallelize(knl, "gpu")
    tags = {name: str(tag) for name, tag in par.iname_tags.items() if tag is not None}
    if short > 1:
        assert tags["j"] == "l.0" and "l.1" in tags.values(), tags
    sizes = par.get_grid_size_upper_bounds_as_exprs()[1]
    assert math.prod(int(s) for s in sizes) >= min(256, 1000 * short) // 2, sizes
    a = np.arange(1000 * short, dtype=np.float32).reshape(short, 1000)
    evt, (out,) = par(queue, a=a)
    np.testing.assert_array_equal(host(out), 2 * a.T)


@pytest.mark.parametrize("short", [1, 3, 4, 8, 16, 33])
def test_auto_parallelize_short_fast_loop_on_cpu(queue, short):
    """On a CPU a contiguous loop of at most CPU_SHORT_FAST iterations shares
    its work-groups of 64 with the next loop (PoCL runs each work-group as a
    call of its own); from a vector's width on, groups run along it alone."""
    from kernelcore.transform.parallel import CPU_SHORT_FAST
    knl = lp.make_kernel(f"{{ [i,j]: 0<=i<n and 0<=j<{short} }}", "out[i,j] = a[i,j] + 1",
                         [lp.GlobalArg("a", np.float32, shape=("n", short)), "..."])
    knl = lp.fix_parameters(knl, n=1001)
    par = lp.auto_parallelize(knl, "cpu")
    tags = {name: str(tag) for name, tag in par.iname_tags.items() if tag is not None}
    sizes = [int(s) for s in par.get_grid_size_upper_bounds_as_exprs()[1]]
    if short <= CPU_SHORT_FAST:
        assert tags["j"] == "l.0" and "l.1" in tags.values(), tags
        assert math.prod(sizes) == short * (64 // short), sizes
    else:
        assert "l.1" not in tags.values(), tags
    a = np.arange(1001 * short, dtype=np.float32).reshape(1001, short)
    evt, (out,) = par(queue, a=a)
    np.testing.assert_array_equal(host(out), a + 1)


@pytest.mark.parametrize("n, items", [(1 << 20, None), (3000, 4), (1025, 2), (5, 8)])
def test_auto_parallelize_several_items_per_work_item_on_gpu(queue, n, items):
    """On a GPU a long loop (or one given *items*) gives each work-item several
    elements a work-group's width apart: coalesced, guarded at the end, and
    every element computed once (the GPU layout runs on any device)."""
    from kernelcore.transform.parallel import GPU_ITEMS
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = sqrt(a[i]) * 3",
                         [lp.GlobalArg("a", np.float32, shape=("n",)), "..."])
    knl = lp.fix_parameters(knl, n=n)
    par = lp.auto_parallelize(knl, "gpu", items=items)
    per = items or GPU_ITEMS
    tags = {name: str(tag) for name, tag in par.iname_tags.items() if tag is not None}
    assert sorted(tags.values()) == ["g.0", "l.0", "unr"], tags
    gsize, lsize = (tuple(int(v) for v in s) for s in par.get_grid_size_upper_bounds_as_exprs())
    assert gsize[0] * lsize[0] * per >= n > (gsize[0] - 1) * lsize[0] * per
    code = device_code(par, {})
    idx = subscript_of(code, "out")
    base = eval_subscript(idx, lid=(1, 0, 0), gid=(0, 0, 0))
    assert eval_subscript(idx, lid=(2, 0, 0), gid=(0, 0, 0)) == base + 1
    a = np.random.default_rng(n).random(n, dtype=np.float32)
    evt, (out,) = par(queue, a=a)
    np.testing.assert_array_equal(host(out), np.sqrt(a) * np.float32(3))
    # one work-item per element on CPUs, and on GPUs for short loops
    assert "unr" not in {str(t) for t in lp.auto_parallelize(knl, "cpu").iname_tags.values()}


@pytest.mark.parametrize("rows, cols, expected", [(1026, 1026, True), (4096, 512, False),
                                                  (64, 4098, False), (1030, 2053, True)])
def test_rows_of_a_large_2d_kernel_give_items_per_work_item_on_gpu(queue, rows, cols,
                                                                   expected):
    """A 2-D kernel of 2^20+ elements whose rows fill GPU_ITEMS work-groups
    gives each work-item several elements of its row (a stencil: neighbours
    read across rows and columns); every element once, as NumPy."""
    knl = lp.make_kernel(
        f"{{ [i,j]: 0<=i<{rows - 2} and 0<=j<{cols - 2} }}",
        "out[i+1,j+1] = a[i+1,j+1] + 0.25f*(a[i+2,j+1] + a[i,j+1] + a[i+1,j+2] + a[i+1,j]"
        " - 4*a[i+1,j+1])",
        [lp.GlobalArg("a", np.float32, shape=(rows, cols)),
         lp.GlobalArg("out", np.float32, shape=(rows, cols))])
    par = lp.auto_parallelize(knl, "gpu")
    tags = {str(t) for t in par.iname_tags.values() if t is not None}
    assert ("unr" in tags) == expected, tags
    a = np.random.default_rng(rows).random((rows, cols), dtype=np.float32)
    out = np.zeros_like(a)
    evt, (got,) = par(queue, a=a, out=out)
    ref = np.zeros_like(a)
    ref[1:-1, 1:-1] = a[1:-1, 1:-1] + np.float32(0.25) * (
        a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] - 4 * a[1:-1, 1:-1])
    np.testing.assert_allclose(host(got), ref, rtol=1e-6, atol=1e-6)

# }}}

# vim: foldmethod=marker
