"""Box kernels: 2-D stencils, windows at new places and of new sizes, joins
(``roll``, ``pad``, ``concatenate``, slice assignments with boundary rows
and columns) and broadcasts of device arrays take their extents, starts and
offsets as arguments. The first shape of a structure gets a kernel of its
own (a loop at one shape runs as before), the second builds the generic
kernel, later ones build nothing; a plan of generic kernels run more than
``SPECIALIZE_RUNS`` times is planned again for its shapes. Results equal
NumPy's on CPU and GPU layouts."""

import numpy as np
import pytest

import lazyarray as la
import lazyarray.run.steps as steps
from lazyarray.lower.boxes import BOX_READ_LIMIT
from tests.helpers import counting
from tests.lazyarray.run.test_flat_ranges import _values

EXPRESSIONS = {
    "five-point stencil": lambda xp, u: (u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1]
                                         + u[:-2, 1:-1] - 4 * u[1:-1, 1:-1]),
    "roll along rows": lambda xp, u: xp.roll(u, 3, axis=0) - u,
    "roll along columns": lambda xp, u: xp.roll(u, -2, axis=1) * 2,
    "periodic Laplacian": lambda xp, u: (xp.roll(u, 1, 0) + xp.roll(u, -1, 0)
                                         + xp.roll(u, 1, 1) + xp.roll(u, -1, 1) - 4 * u),
    "pad": lambda xp, u: xp.pad(u, 2) + 1,
    "pad by edges": lambda xp, u: xp.pad(u, ((1, 2), (3, 0)), mode="edge"),
    "pad by wrapping": lambda xp, u: xp.pad(u, 1, mode="wrap"),
    "concatenate": lambda xp, u: xp.concatenate([u, 2 * u[::-1]], axis=1),
    "window mean": lambda xp, u: u[2:5, 1:4].mean(),
    "strided": lambda xp, u: u[::2, 1::3] * 3,
    "broadcast row and column": lambda xp, u: u - u[:, :1] + u[:1, :],
    "outer product of views": lambda xp, u: u[0][None, :] * u[:, 0][:, None],
    "row of a fixed index": lambda xp, u: u[2] * 2 - u[-1],
    "positions": lambda xp, u: u + xp.arange(u.shape[1]),
    "sum of differences": lambda xp, u: (u[1:, :] - u[:-1, :]).sum(),
    "largest change": lambda xp, u: xp.max(xp.abs(u[1:-1, 1:-1] - u[:-2, 1:-1])),
    "column sums of differences": lambda xp, u: (u[1:] * 2 - u[:-1]).sum(axis=0),
    "row maxima of a roll": lambda xp, u: xp.max(xp.roll(u, 1, axis=0) + u, axis=1,
                                                 keepdims=True),
}
SHAPES = [(5, 7), (9, 9), (13, 4), (40, 33), (3, 200)]
DTYPES = [np.float64, np.float32, np.int64, np.complex128, np.bool_]


def _jacobi(xp, p, y):
    """The course's Laplace sweep: a stencil into the interior, then the
    boundary columns and rows written."""
    pn = p.copy()
    p[1:-1, 1:-1] = (pn[1:-1, 2:] + pn[1:-1, 0:-2] + pn[2:, 1:-1] + pn[0:-2, 1:-1]) / 4
    p[:, 0] = 0
    p[:, -1] = y
    p[0, :] = p[1, :]
    p[-1, :] = p[-2, :]
    return p


# (no maximum of complex numbers: lazyarray refuses NumPy's lexicographic one)
CASES = [(name, dtype) for name in sorted(EXPRESSIONS) for dtype in DTYPES
         if not (dtype == np.complex128 and name in ("largest change", "row maxima of a roll"))]


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_box_kernels_give_numpys_values(layout_kind, rng, name, dtype):
    expression = EXPRESSIONS[name]
    for shape in SHAPES:
        a = _values(rng, shape, dtype)
        with np.errstate(all="ignore"):
            try:
                want = expression(np, a)
            except TypeError:           # (NumPy refuses: bool subtraction)
                with la.tier("device"), pytest.raises(TypeError):
                    expression(la, la.asarray(a))
                return
        with la.tier("device"):
            got = np.asarray(expression(la, la.asarray(a)))
        assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, shape
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(shape))


@pytest.mark.parametrize("name", ["five-point stencil", "pad by edges", "concatenate",
                                  "broadcast row and column", "sum of differences",
                                  "column sums of differences", "row maxima of a roll"])
def test_new_shapes_build_nothing_after_the_second(layout_kind, rng, name):
    expression = EXPRESSIONS[name]
    planned = []
    for shape in [(200, 201), (202, 190), (157, 300), (100, 300), (211, 233)]:
        a = rng.standard_normal(shape)
        with la.tier("device"), counting() as c:
            got = np.asarray(expression(la, la.asarray(a)))
        planned.append(c.planned)
        np.testing.assert_allclose(got, expression(np, a), rtol=1e-12, atol=1e-12)
    assert planned[0] >= 1 and sum(planned[2:]) == 0, planned


def test_windows_at_new_places_and_of_new_sizes_build_nothing(layout_kind, rng):
    # image patches: a window of a 2-D array at each place, of two sizes
    a = rng.standard_normal((400, 300))
    planned = []
    with la.tier("device"):
        x = la.asarray(a)
        for k, (i, j) in enumerate([(3, 5), (17, 2), (40, 90), (200, 1), (111, 222)]):
            n = 32 if k % 2 else 20
            with counting() as c:
                got = float(x[i:i + n, j:j + n].mean()), float(x[i:i + n, j:j + 2 * n].max())
            planned.append(c.planned)
            assert got[0] == pytest.approx(a[i:i + n, j:j + n].mean(), rel=1e-12)
            assert got[1] == a[i:i + n, j:j + 2 * n].max()
    assert sum(planned[2:]) == 0, planned


def test_jacobi_sweeps_on_new_grids_build_nothing_and_specialize_when_hot(
        layout_kind, rng, monkeypatch):
    monkeypatch.setattr(steps, "SPECIALIZE_RUNS", 3)
    planned = []
    for n in [300, 260, 333, 280]:
        y_host = np.linspace(0, 1, n)
        p_host = rng.standard_normal((n, n))
        with la.tier("device"):
            p, y = la.asarray(p_host), la.asarray(y_host)
            counts = []
            for _ in range(6):
                with counting() as c:
                    p = _jacobi(la, p, y)
                    got = p.get()
                counts.append(c.planned)
                p_host = _jacobi(np, p_host, y_host)
                np.testing.assert_allclose(got, p_host, rtol=1e-12, atol=1e-12)
        planned.append(counts)
    # the first grid plans its kernel; the second the generic one, which the
    # later grids run; on a CPU device until their plan ran SPECIALIZE_RUNS
    # times, then the plan is made again with kernels of the grid's shape,
    # once (GPUs ran box kernels as fast as shaped ones: they keep them)
    assert planned[0][0] >= 1 and sum(planned[0][1:]) == 0, planned
    assert planned[1][0] >= 1, planned
    for counts in planned[2:]:
        assert counts[0] == 0 and counts[-1] == 0, planned
        assert sum(counts) == (1 if layout_kind == "cpu" else 0), planned


def test_slice_assignment_chains_beyond_the_read_limit_compute_right(rng):
    # each pending "copy the next row" doubles the reads of an element's
    # expression: past BOX_READ_LIMIT the join gets the kernel of its shape
    writes = int(np.log2(BOX_READ_LIMIT)) + 2
    for n in (70, 71):
        a = rng.standard_normal((n, n))
        with la.tier("device"):
            p = la.asarray(a)
            for k in range(writes):
                p[k % 3, :] = p[k % 3 + 1, :] * 0.5
                p[:, -1 - k % 2] = p[:, -2 - k % 2] + 1
            got = p.get()
        for k in range(writes):
            a[k % 3, :] = a[k % 3 + 1, :] * 0.5
            a[:, -1 - k % 2] = a[:, -2 - k % 2] + 1
        np.testing.assert_allclose(got, a, rtol=1e-12, atol=1e-12)


def test_three_dimensional_joins_keep_kernels_of_their_shape(rng):
    # (box kernels are one- and two-dimensional: PoCL misread a 3-D value's
    # elements whose leading axes were divided out of the row number)
    for shape in [(1, 3, 2), (2, 3, 4), (3, 1, 5)]:
        a = rng.standard_normal(shape)
        with la.tier("device"):
            got = np.asarray(np.pad(la.asarray(a), 1, constant_values=7.0))
        np.testing.assert_array_equal(got, np.pad(a, 1, constant_values=7.0))


def test_sized_launches_rerun_at_new_and_repeated_shapes(rng):
    # a box kernel run again sets its sizes each run: a repeated shape, a
    # new one and the earlier one again all get their own extents
    expression = EXPRESSIONS["five-point stencil"]
    with la.tier("device"):
        for shape in [(40, 50), (41, 52), (43, 51), (43, 51), (44, 51), (41, 52)]:
            a = rng.standard_normal(shape)
            got = np.asarray(expression(la, la.asarray(a)))
            np.testing.assert_allclose(got, expression(np, a), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
def test_rows_picked_by_index_arrays_of_new_counts_build_nothing(layout_kind, rng, dtype):
    # X[idx] (negative indices count from the end) and X[mask] of a 2-D
    # array, in expressions and sums: the counts change, the kernels stay
    planned = []
    for n, m, d in [(50, 7, 3), (90, 60, 2), (500, 300, 5), (501, 299, 4), (70, 4096, 3),
                    (11, 300, 2)]:
        a = _values(rng, (n, d), dtype)
        idx, w = rng.integers(-n, n, m), _values(rng, d, dtype)
        with la.tier("device"), counting() as c:
            x, i, v = la.asarray(a), la.asarray(idx), la.asarray(w)
            got = [np.asarray(x[i]), np.asarray(x[i] * v), np.asarray(x[x.real[:, 0] > 0.3]),
                   np.asarray(x[i, 1:] - x[i, :-1])]
            if dtype != np.complex128:  # (complex sums keep their layouts)
                got.append(np.asarray((x[i] * 2).sum()))
        planned.append(c.planned)
        want = [a[idx], a[idx] * w, a[a.real[:, 0] > 0.3], a[idx, 1:] - a[idx, :-1],
                (a[idx] * 2).sum()]
        for g, e in zip(got, want):
            assert g.dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    assert sum(planned[2:]) == 0, planned


def test_scalars_equal_but_for_the_sign_of_a_zero_part_are_set_again():
    # (helper session's find: 1j and -0+1j compare equal, and the kernel kept
    # the first; each result must carry NumPy's signed zeros)
    with la.tier("device"):
        for n, s in [(10, 1j), (11, 1j), (12, complex(-0.0, 1.0)), (13, complex(1.0, 0.0)),
                     (14, complex(1.0, -0.0)), (15, 0.0), (16, -0.0)]:
            a = np.full((3, n), complex(-0.0, -0.0))
            for got, want in [(np.asarray(la.asarray(a[0]) + s), a[0] + s),
                              (np.asarray(la.asarray(a)[1:, ::-1] + s), a[1:, ::-1] + s)]:
                np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
                np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


def test_means_of_masked_rows_build_nothing_after_the_second(layout_kind, rng):
    # k-means' update, X[labels == j].mean(axis=0): the count of rows changes
    # every iteration; each count would build its kernel
    planned = []
    for n in [300, 1000, 1001, 4000, 777]:
        a = rng.standard_normal((n, 3))
        labels = rng.integers(0, 3, n)
        with la.tier("device"), counting() as c:
            x, lab = la.asarray(a), la.asarray(labels)
            got = [np.asarray(x[lab == j].mean(axis=0)) for j in range(3)]
        planned.append(c.planned)
        for j in range(3):
            np.testing.assert_allclose(got[j], a[labels == j].mean(axis=0), rtol=1e-12)
    assert sum(planned[2:]) == 0, planned


@pytest.mark.parametrize("op", ["sum", "max", "var"])
def test_reductions_over_no_axes_are_identities_at_every_shape(op):
    # (the slow fuzzer's find on the H200: axis=() reached the axis path and
    # raised IndexError from the second shape on)
    for shape in [(3, 4), (5, 6), (7, 2)]:
        a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        with la.tier("device"):
            got = np.asarray(getattr(la.pad(la.asarray(a), 1, mode="wrap") * 2, op)(axis=()))
        np.testing.assert_array_equal(got, getattr(np.pad(a, 1, mode="wrap") * 2, op)(axis=()))
