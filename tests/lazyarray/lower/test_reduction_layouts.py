"""Reduction layouts (lazyarray.lower.reduction) give NumPy's results.

Both the CPU layout (lanes in an ``ilp`` loop, a sequential tail) and the GPU
layout (work-group trees) run here on whatever device the tests use: the
device profile is replaced, so each layout is exercised on the CPU too.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelcore as lp
import lazyarray as la
from lazyarray import target as la_target
from lazyarray.graph import Map, Node, Reduce
from lazyarray.lower import reduction as lower_reduction
from lazyarray.lower.reduction import choose_layout
from lazyarray.ops.reductions import WIDE_SUM
from lazyarray.plan import storage
from lazyarray.run import steps as runtime
from tests.helpers import counting


@pytest.fixture(params=[("cpu", 2), ("gpu", 4)], ids=["cpu-layout", "gpu-layout"])
def profile(request, device_layouts):
    device_layouts(*request.param)
    return request.param


def _data(shape, op, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < (0.999 if op == "all" else 0.001)
    if op == "prod":
        return (1 + (rng.random(shape) - 0.5) * 1e-3).astype(dtype)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    ((5000,), None),            # one output: parts over the row
    ((3, 7001), 1),             # few long rows with a tail
    ((2048, 40), 0),            # columns that are not a multiple of the lanes
    ((100003, 3), 0),           # narrow columns, ragged parts and rows (GPU: l.1 rows)
    ((7, 5), 0),                # narrow columns, fewer rows than a group takes
    ((37, 129), 1),             # many short rows
    ((1000, 64), 1),            # short rows sharing work-groups (GPU), ragged last group
    ((200, 300), 1),            # many rows with a tail (CPU: a work-item per row)
    ((5, 9, 100), 2),           # the same over two kept axes
    ((6, 50, 33), (0, 2)),      # the innermost and an outer axis
    ((64, 300), None),          # all of a matrix
    ((300, 3, 70), (0, 1)),     # a column layout over two axes
    ((1 << 17,), None),         # one output: parts over the row in whole steps (GPU)
    ((100003,), None),          # the same with a ragged last step
    ((3, 4, 5, 6, 41), 4),      # rows over more kept axes than the grid has (a tail)
]



def _reduced(y: la.LazyArray) -> Node:
    """*y*'s node, or where it rounds a long single-precision sum added in
    double precision, that sum."""
    node = y.node
    if isinstance(node, Map) and isinstance(node.args[0], Reduce) \
            and node.args[0].dtype != node.dtype:
        return node.args[0]
    return node

@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_layouts_match_numpy(profile, shape, axis, op):
    x = _data(shape, op, np.float32)
    got = getattr(la.asarray(x), op)(axis=axis)
    want = getattr(x.astype(np.float64), op)(axis=axis)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-3)


@pytest.mark.parametrize("shape,axis", [case for case in CASES if case[1] not in (None, 2)])
@pytest.mark.parametrize("values", ["ones", "broadcast row"])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_values_the_same_down_the_reduced_axes(profile, shape, axis, values, op):
    # (a column layout's loop over rows stays when its element does not vary
    # along them: every equal row is added)
    row = np.linspace(0.5, 1.5, shape[-1])
    host = {"ones": np.ones(shape), "broadcast row": np.broadcast_to(row, shape)}[values]
    lazy = {"ones": la.ones(shape),
            "broadcast row": la.broadcast_to(la.asarray(row), shape)}[values]
    got = getattr(lazy, op)(axis=axis)
    np.testing.assert_allclose(np.asarray(got), getattr(host, op)(axis=axis), rtol=1e-12)


@pytest.mark.parametrize("shape,axis", CASES[:4])
@pytest.mark.parametrize("op", ["any", "all"])
def test_boolean_layouts(profile, shape, axis, op):
    x = _data(shape, op, np.bool_)
    x[(0,) * len(shape)] = op == "any"       # at least one deciding element
    got = getattr(la.asarray(x), op)(axis=axis)
    np.testing.assert_array_equal(np.asarray(got), getattr(x, op)(axis=axis))


@pytest.mark.parametrize("shape,axis", CASES)
def test_integer_sums_and_keepdims(profile, shape, axis):
    x = _data(shape, "sum", np.int32)
    got = la.asarray(x).sum(axis=axis, keepdims=True)
    want = x.sum(axis=axis, keepdims=True)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def _check_random_layout(shape, data):
    shape = tuple(shape)
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    kind = data.draw(st.sampled_from([("cpu", 2), ("gpu", 4)]))
    x = _data(shape, "sum", np.float32, seed=len(shape))
    saved, saved_kernels = la_target.device_profile, runtime._KERNELS
    la_target.device_profile = lambda device: kind
    runtime._KERNELS = {}
    try:
        got = np.asarray(la.asarray(x).sum(axis=axes))
    finally:
        la_target.device_profile, runtime._KERNELS = saved, saved_kernels
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=axes), rtol=1e-5,
                               atol=1e-3)


#: (every example compiles a kernel of its own: 25 took 24 s; the ``_many``
#: twin, ``slow``, runs 25)
@settings(max_examples=10)
@given(shape=st.lists(st.integers(1, 70), min_size=1, max_size=3),
       data=st.data())
def test_random_layouts(shape, data):
    _check_random_layout(shape, data)


@pytest.mark.slow
@settings(max_examples=25)
@given(shape=st.lists(st.integers(1, 70), min_size=1, max_size=3),
       data=st.data())
def test_random_layouts_many(shape, data):
    _check_random_layout(shape, data)


def test_layout_choices():
    # a long dot product on two CPU cores: two vectors of row lanes, cut into
    # 8 parts; rows under 64 elements keep one vector
    assert choose_layout("sum", (2 ** 24,), (0,), "cpu", 2) == \
        lower_reduction.Layout(row=True, lanes=32, parts=8)
    assert choose_layout("max", (4096, 63), (1,), "cpu", 2).lanes == 16
    assert choose_layout("max", (4096, 64), (1,), "cpu", 2).lanes == 32
    # many CPU rows: a work-item reduces 16 of them in turn, while that leaves
    # GROUPS_PER_UNIT work-groups per core
    assert choose_layout("sum", (16384, 64), (1,), "cpu", 2).rows == 16
    assert choose_layout("sum", (100, 64), (1,), "cpu", 2).rows == 1
    assert choose_layout("sum", (200, 300), (1,), "cpu", 2).rows == 1      # a tail
    # column sums of a big matrix: 16 groups of 256 work-items, each summing 2
    # neighbouring columns, times 16 parts of the rows (as many loads in
    # flight as 4 groups of one column per work-item on each of 132 units)
    layout = choose_layout("sum", (8192, 8192), (0,), "gpu", 132)
    assert not layout.row and layout.lanes == 256 and layout.vector == 2
    assert layout.parts == 16
    # one column per work-item when the columns do not fill whole vectors
    layout = choose_layout("sum", (8192, 8190), (0,), "gpu", 132)
    assert layout.vector == 1 and layout.parts == 16
    # CPU column sums: one work-item sums up to 256 neighbouring columns
    assert choose_layout("sum", (2048, 2048), (0,), "cpu", 2).lanes == 256
    assert choose_layout("sum", (2048, 40), (0,), "cpu", 2).lanes == 32
    # many long rows: one work-group per row, no parts
    assert choose_layout("max", (4096, 4096), (1,), "gpu", 132).parts == 1
    # many short rows share work-groups: 8 work-items per row of 64, 16 rows
    assert choose_layout("sum", (2 ** 20, 64), (1,), "gpu", 132) == \
        lower_reduction.Layout(row=True, lanes=8, parts=1, rows=16)
    assert choose_layout("sum", (4096, 4096), (1,), "gpu", 132).rows == 1
    # narrow columns: 4 work-items across the columns, 64 down the rows
    layout = choose_layout("sum", (2 ** 24, 4), (0,), "gpu", 132)
    assert (layout.lanes, layout.rows) == (4, 64) and layout.parts > 1
    # short rows and argmax keep the default schedule
    assert choose_layout("sum", (10 ** 6, 3), (1,), "gpu", 132) is None
    assert choose_layout("argmax", (4096, 4096), (1,), "gpu", 132) is None
    # the parts of one huge sum are combined by one work-group of at most 1024
    assert choose_layout("sum", (2 ** 28,), (0,), "gpu", 1000).parts == 1024
    # a GPU's split row reduction reads two elements per step: half as many parts
    assert choose_layout("sum", (2 ** 28,), (0,), "gpu", 132).parts == 512


@pytest.mark.parametrize("shape", [(100, 300), (70, 33), (64, 8192)])
def test_row_kernels(profile, shape):
    """Softmax and row normalization: one kernel, NumPy's values."""
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    x = la.asarray(a)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    with counting() as ran:
        got = np.asarray(e / e.sum(axis=1, keepdims=True))
    assert ran.launches == 1
    ea = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, ea / ea.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-7)
    norm = np.asarray((x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True))
    np.testing.assert_allclose(norm, (a - a.mean(axis=1, keepdims=True))
                               / a.std(axis=1, keepdims=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("width, lanes", [(33, True), (20, False)])
def test_cpu_row_kernels_walk_rows_in_lanes(device_layouts, width, lanes):
    """On a CPU a row kernel's reductions keep CPU_LANES running results (a
    sequential tail for the rest); rows shorter than two lanes' worth do not."""
    device_layouts("cpu", 2)
    a = np.random.default_rng(7).standard_normal((70, width)).astype(np.float32)
    x = la.asarray(a)
    y = x - x.max(axis=1, keepdims=True)
    [step] = runtime.plan([_reduced(y)])
    assert ("row0_lanes" in step.kernel.temporary_variables) == lanes
    np.testing.assert_allclose(np.asarray(y), a - a.max(axis=1, keepdims=True))


@pytest.mark.parametrize("width, vectors", [(64 + 31, 2), (63, 1)])
@pytest.mark.parametrize("op", ["max", "sum"])
def test_cpu_row_reductions_keep_two_vectors_over_long_rows(device_layouts, width, vectors, op):
    """On a CPU a row reduction over rows of at least 2 * CPU_REDUCTION_LANES
    elements keeps two vectors of running results (two chains of
    combinations), shorter rows one, in a reduction kernel and in a row
    kernel; a NaN anywhere in a row, in either vector or the tail, is its max."""
    device_layouts("cpu", 2)
    a = np.random.default_rng(9).standard_normal((70, width)).astype(np.float32)
    a[1, 3] = a[2, 16 + 5] = a[3, width - 1] = np.nan     # first vector, second, tail
    x = la.asarray(a)
    y = getattr(x, op)(axis=1)
    # the same reduction inside a row kernel (one kernel, a work-item per row)
    z = x - getattr(x, op)(axis=1, keepdims=True)
    [step] = runtime.plan([_reduced(y)])
    code = lp.generate_code_v2(step.kernel).device_code()
    assert ("float16 acc_ro[2];" in code) == (vectors == 2)
    [step] = runtime.plan([z.node])
    code = lp.generate_code_v2(step.kernel).device_code()
    assert ("float16 acc_r0_o[2];" in code) == (vectors == 2)
    np.testing.assert_allclose(np.asarray(y), getattr(a, op)(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(z), a - getattr(a, op)(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows, width", [(3, 500), (70, 500), (3, 40)])
def test_cpu_row_reductions_of_a_scalar_shifted_by_the_row(device_layouts, rows, width):
    """``2 << x`` reduced along rows on a CPU: the shift count is a vector of
    the row's lanes and the shiftee a scalar, which OpenCL does not shift by
    a vector unless widened (fuzzer seed 1014, graph 191: a build error)."""
    device_layouts("cpu", 2)
    a = np.random.default_rng(10).integers(-2**31, 2**31 - 1, (rows, width), dtype=np.int32)
    x = la.asarray(a)
    k = np.bitwise_and(x, np.int32(-5))
    v = 2 << k
    y = v - v.mean(axis=1, keepdims=True)
    kn = np.bitwise_and(a, np.int32(-5))
    vn = 2 << kn
    np.testing.assert_array_equal(np.asarray(2 << (x & 15)), 2 << (a & 15))
    np.testing.assert_allclose(np.asarray(y), vn - vn.mean(axis=1, keepdims=True), rtol=1e-12,
                               atol=1e-6)


@pytest.mark.parametrize("shape, op, keepdims, parts, blocks", [
    ((2048, 40), "sum", False, 4, 1), ((333, 17), "max", True, 4, 1),
    ((100, 64), "min", False, 1, 1), ((70, 50), "prod", False, 1, 1),
    ((4, 2000), "sum", True, 1, 4), ((16, 1030), "max", False, 1, 4),
    ((3, 17), "min", False, 1, 1), ((150, 300), "sum", False, 2, 1)])
def test_cpu_column_reductions_stream_rows(device_layouts, shape, op, keepdims, parts, blocks):
    """On a CPU, column reductions of a matrix add whole rows into a row of
    partial results per part of the rows (the matrix is read as it lies);
    rows too few for the cores are cut into blocks of columns instead, and a
    single part adds its rows into the result itself (one kernel)."""
    device_layouts("cpu", 2)
    a = _data(shape, op, np.float32, seed=3)
    a[-1, 0] = np.nan                       # in the last row read: every layout sees it
    x = la.asarray(a)
    y = getattr(x * 2, op)(axis=0, keepdims=keepdims)
    [step] = runtime.plan([_reduced(y)])
    knl = step.kernel
    part = knl.temporary_variables.get("part")
    assert (part.shape if part is not None else None) == \
        ((parts, shape[1]) if parts > 1 else None)
    code = lp.generate_code_v2(knl).device_code()
    assert code.count("__kernel") == (2 if parts > 1 else 1)
    width = -(-shape[1] // blocks)
    width += -width % lower_reduction.CPU_LANES
    assert f"{width} * gid(1)" in code              # (blocks of columns along g.1)
    np.testing.assert_allclose(np.asarray(y), getattr(a * 2, op)(axis=0, keepdims=keepdims),
                               rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("shape, parts", [
    ((20000, 4), 4), ((1003, 3), 1), ((5000, 1), 1), ((300, 15), 1), ((129, 2), 1),
    ((70000, 5), 4)])
@pytest.mark.parametrize("op, dtype", [
    ("sum", np.float32), ("max", np.float32), ("min", np.int32), ("prod", np.float64),
    ("any", np.bool_), ("sum", np.complex64)])
def test_cpu_narrow_column_reductions_read_stretches_of_rows(device_layouts, shape, parts, op,
                                                             dtype):
    """On a CPU, column reductions of fewer than 16 columns read the matrix as
    it lies, k rows at a time (up to 64 elements) into as many running
    results per part of the rows, the rows after the last whole stretch
    too; a single part combines its results in the same kernel."""
    device_layouts("cpu", 2)
    a = _data(shape, op, dtype, seed=4) if dtype != np.complex64 else (
        _data(shape, op, np.float32, seed=4) + 1j * _data(shape, op, np.float32, seed=5))
    if op == "max":
        a[-1, 0] = np.nan                   # in the rows after the last whole stretch
        a[shape[0] // 2, -1] = np.inf
    x = la.asarray(a)
    y = getattr(x, op)(axis=0, keepdims=op == "min")
    reduced = _reduced(y)
    assert isinstance(reduced, Reduce)
    assert (reduced.dtype != y.dtype) == (op == "sum" and shape[0] >= WIDE_SUM)
    [step] = runtime.plan([reduced])
    knl = step.kernel
    assert knl.temporary_variables["acc"].shape == ((64 // shape[1]) * shape[1],)
    assert ("part" in knl.temporary_variables) == (parts > 1)
    assert lp.generate_code_v2(knl).device_code().count("__kernel") == (2 if parts > 1 else 1)
    expected = getattr(a, op)(axis=0, keepdims=op == "min")
    if op == "any":
        np.testing.assert_array_equal(np.asarray(y), expected)
    else:       # (float32 sums: rounding relative to the sum of magnitudes)
        atol = 1e-6 * float(np.abs(a).sum(axis=0).max()) if op == "sum" else 0
        np.testing.assert_allclose(np.asarray(y), expected, rtol=2e-5, atol=atol)


@pytest.mark.parametrize("shape, op", [((1, 200), "min"), ((1, 5), "sum"), ((2, 3), "max")])
def test_cpu_column_reductions_of_one_or_two_rows(device_layouts, shape, op):
    """A column reduction of one row (or two short ones) on a CPU: no layout
    of its own, the result still NumPy's (one row of 200 int16 raised
    ZeroDivisionError: fuzzer seed 1019, graph 778)."""
    device_layouts("cpu", 2)
    a = np.random.default_rng(11).integers(-6, 7, shape).astype(np.int16)
    np.testing.assert_array_equal(np.asarray(getattr(la.asarray(a), op)(axis=-2)),
                                  getattr(a, op)(axis=-2))


@pytest.mark.parametrize("width", [33, 20, 100])
def test_cpu_row_kernels_compute_reduced_values_once(device_layouts, width):
    """Softmax on a CPU: the exponentials that the row sum reduces and the
    result reads are computed once per element, into a private row array."""
    device_layouts("cpu", 2)
    a = np.random.default_rng(8).standard_normal((70, width)).astype(np.float32)
    x = la.asarray(a)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    flipped = e[:, ::-1] / e.sum(axis=1, keepdims=True)   # read elsewhere: no row array
    [step] = runtime.plan([_reduced(y)])
    assert "rowvals0" in step.kernel.temporary_variables
    [other] = runtime.plan([flipped.node])
    assert "rowvals0" not in other.kernel.temporary_variables
    ea = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(y), ea / ea.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(flipped), ea[:, ::-1] / ea.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)


def test_gpu_row_groups():
    """Work-items per row of a GPU row kernel: at most ROW_SLOTS elements of
    a row array each."""
    assert lower_reduction.row_group(33) == 32
    assert lower_reduction.row_group(1024) == 32
    assert lower_reduction.row_group(1025) == 64
    assert lower_reduction.row_group(8192) == 256
    assert lower_reduction.row_group(20000) == 1024
    assert storage.ROW_LIMIT["gpu"] == 1024 * lower_reduction.ROW_SLOTS


@pytest.mark.parametrize("shape", [(64, 8192), (64, 20000)])
def test_gpu_row_kernels_read_rows_once(device_layouts, shape):
    """Softmax with a GPU's layout: one kernel, each work-item reads its
    elements of the row once into registers (unrolled slots), NumPy's values,
    also for rows longer than a CPU row kernel takes."""
    device_layouts("gpu", 4)
    a = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    x = la.asarray(a)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    [step] = runtime.plan([_reduced(y)])
    slots = -(-shape[1] // lower_reduction.row_group(shape[1]))
    rows = {n: t.shape for n, t in step.kernel.temporary_variables.items()
            if n.startswith("rowvals")}
    assert sorted(rows.values()) == [(slots,), (slots,)]     # the input and exp(x - max)
    code = lp.generate_code_v2(step.kernel).device_code()
    assert code.count("in0[") == slots
    ea = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(y), ea / ea.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("n", [1 << 17, 100003])
def test_gpu_split_row_reductions_read_neighbouring_pairs(device_layouts, n):
    """A long dot product with a GPU's layout: each step of a work-item reads
    two neighbouring elements of each input; NumPy's value."""
    device_layouts("gpu", 4)
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    y = (la.asarray(a) * la.asarray(b)).sum()
    [step] = runtime.plan([_reduced(y)])
    first = lp.generate_code_v2(step.kernel).device_code().split("__kernel")[1]
    pair = lower_reduction.GPU_ROW_PAIR
    assert first.count("in0[") == first.count("in1[") == pair
    assert f"{pair} * lid(0)" in first
    np.testing.assert_allclose(float(np.asarray(y)), a.astype(np.float64) @ b, rtol=1e-5)


@pytest.mark.parametrize("shape, axes, op, dtype", [
    ((300, 2048), (0,), "sum", np.float32),
    ((64, 3, 1024), (0,), "max", np.float32),
    ((5, 40, 1024), (0, 1), "sum", np.int32),
    ((200, 1024), (0,), "min", np.float64),
    ((100, 512), (0,), "sum", np.float32),
])
def test_gpu_column_layouts_load_vectors(device_layouts, shape, axes, op, dtype):
    """Column reductions with a GPU's layout: each work-item reduces
    neighbouring columns with vector loads; NumPy's values."""
    device_layouts("gpu", 4)
    a = _data(shape, op, dtype, seed=4)
    y = getattr(np, op)(la.asarray(a), axis=axes)
    steps = runtime.plan([_reduced(y)])
    code = "\n".join(lp.generate_code_v2(s.kernel).device_code() for s in steps)
    assert f"vload{lower_reduction.GPU_COLUMN_VECTOR}" in code
    np.testing.assert_allclose(np.asarray(y), getattr(np, op)(a, axis=axes), rtol=1e-5,
                               atol=1e-4)


@pytest.mark.parametrize("shape, op, dtype", [
    ((1 << 16, 4), "sum", np.float32),
    ((50001, 3), "max", np.float32),
    ((1 << 15, 8), "sum", np.int64),
    ((20000, 2), "min", np.float64),
])
def test_gpu_narrow_column_parts_combine_in_a_work_group(device_layouts, shape, op, dtype):
    """Column reductions of narrow matrices with a large GPU's layout: the
    rows are cut into many parts, and the second kernel's work-items
    combine them together (a group's second axis, up to the largest
    group), each a run of parts, instead of one work-item per column
    walking all of them; NumPy's values."""
    device_layouts("gpu", 132)
    a = _data(shape, op, dtype, seed=6)
    y = getattr(np, op)(la.asarray(a), axis=0)
    [step] = runtime.plan([_reduced(y)])
    layout = choose_layout(op, shape, (0,), "gpu", 132)
    assert layout.parts >= 256 and layout.rows > 1
    head, second = lp.generate_code_v2(step.kernel).device_code().split("lazyarray_kernel_0(")
    rows = lower_reduction.MAX_GROUP // layout.lanes
    group = f"reqd_work_group_size({min(layout.lanes, shape[1])}, {rows}, 1)"
    assert head.endswith(group + ")) "), head
    assert f"pgo <= {layout.parts // rows - 1};" in second
    want = getattr(np, op)(a.astype(np.float64) if a.dtype.kind == "f" else a, axis=0)
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-4)


@pytest.mark.parametrize("name", ["normalize by sum of squares", "standardize"])
def test_gpu_row_kernels_hold_operands_of_reduced_values(device_layouts, name):
    """With a GPU's layout an input that a row reduction reads through
    elementwise operations (``x`` in ``(x*x).sum(axis=1)``) and the result
    reads too is loaded once."""
    device_layouts("gpu", 4)
    fn = {"normalize by sum of squares": lambda x: x / (x * x).sum(axis=1, keepdims=True),
          "standardize": lambda x: (x - x.mean(axis=1, keepdims=True))
          / x.std(axis=1, keepdims=True)}[name]
    a = np.random.default_rng(10).standard_normal((100, 3000)).astype(np.float32)
    y = fn(la.asarray(a))
    [step] = runtime.plan([_reduced(y)])
    slots = -(-3000 // lower_reduction.row_group(3000))
    assert lp.generate_code_v2(step.kernel).device_code().count("in0[") == slots
    np.testing.assert_allclose(np.asarray(y), fn(a.astype(np.float64)), rtol=1e-4,
                               atol=1e-6)
