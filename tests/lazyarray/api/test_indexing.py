"""Integer-array and boolean-mask indexing, and take, against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarray as la
from tests.helpers import counting

_SETTINGS = settings(max_examples=20)


@_SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_take_matches_numpy(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = a.size if axis is None else shape[axis]
    idx_shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.asarray(data.draw(st.lists(st.integers(-n, n - 1),
                                        min_size=int(np.prod(idx_shape)),
                                        max_size=int(np.prod(idx_shape)))),
                     dtype=np.int64).reshape(idx_shape)
    got = np.take(la.asarray(a), idx, axis=axis)
    expected = np.take(a, idx, axis=axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.get(), expected)


def test_array_and_mask_indexing(queue):
    a = np.arange(20.0).reshape(4, 5)
    x = la.asarray(a)
    np.testing.assert_array_equal(x[[0, -1, 2]].get(), a[[0, -1, 2]])
    np.testing.assert_array_equal(x[np.array([[1], [3]])].get(), a[np.array([[1], [3]])])
    np.testing.assert_array_equal(x[la.asarray(np.array([3, 1]))].get(), a[[3, 1]])
    np.testing.assert_array_equal(x[a[:, 0] > 4].get(), a[a[:, 0] > 4])
    np.testing.assert_array_equal(x[x > 7].get(), a[a > 7])
    np.testing.assert_array_equal(x[x > 100].get(), a[a > 100])
    np.testing.assert_array_equal((x[[1, 2], :] * 2).get(), a[[1, 2], :] * 2)


def test_bad_indices_raise_index_error():
    x = la.asarray(np.arange(6).reshape(2, 3))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
        x[[0, 5]]
    with pytest.raises(IndexError, match="integer type"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="does not match"):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match="only integers"):
        x[0.5]
    # (a boolean scalar is NumPy's new axis of length 1 or 0)
    np.testing.assert_array_equal(x[True].get(), np.arange(6).reshape(2, 3)[True])


def test_index_bounds_are_read_once_per_index_node(monkeypatch):
    """An index array's bounds are read back when it first indexes; indexing
    with the same node again (a retrace of the same function) reads nothing,
    and still refuses an axis too short for it."""
    import pyopencl.array as cla
    a = np.arange(40.0).reshape(8, 5)
    x = la.asarray(a)
    index = la.asarray(np.array([7, 0, 3, -8])) * 1      # (a lazy index array)
    reads = []
    get = cla.Array.get

    def counted(self, *args, **kwargs):
        reads.append(1)
        return get(self, *args, **kwargs)

    monkeypatch.setattr(cla.Array, "get", counted)
    first = x[index]
    assert len(reads) == 1
    second = la.asarray(a * 2)[index]
    assert len(reads) == 1
    monkeypatch.undo()
    np.testing.assert_array_equal(first.get(), a[[7, 0, 3, -8]])
    np.testing.assert_array_equal(second.get(), 2 * a[[7, 0, 3, -8]])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        la.asarray(a.T)[index]



def test_picked_index_tables_are_checked_without_a_kernel():
    """An index that picks from a computed index table (meshmode's
    ``dof_pick_lists[dof_pick_list_indices]``, views and int32 widened too)
    is checked against the table's bounds: no kernel runs for the check,
    and the result is NumPy's."""
    a = np.arange(60.0).reshape(12, 5)
    table = np.array([[11, 0, 3], [2, 2, 9], [-12, 4, 7]], dtype=np.int32)
    picks = np.array([2, 0, 0, 1])
    x, lazy_table, lazy_picks = la.asarray(a), la.asarray(table), la.asarray(picks)
    with counting() as n:
        index = lazy_table[lazy_picks]
        got = x[index.astype(np.int64)]
        also = x[lazy_table.T[lazy_picks].reshape(-1)]
        assert n.launches == 0
    np.testing.assert_array_equal(got.get(), a[table[picks].astype(np.int64)])
    np.testing.assert_array_equal(also.get(), a[table.T[picks].reshape(-1)])


def test_picked_index_tables_with_bad_entries():
    """A table holding an index out of bounds: refused when the pick reads
    it, accepted when the pick leaves it out (its own values are checked)."""
    a = np.arange(8.0)
    table = la.asarray(np.array([1, 20, 3, 5]))
    np.testing.assert_array_equal(la.asarray(a)[table[la.asarray(np.array([0, 3, 2]))]].get(),
                                  a[[1, 5, 3]])
    with pytest.raises(IndexError, match="index 20 is out of bounds for axis 0 with size 8"):
        la.asarray(a)[table[la.asarray(np.array([0, 1]))]]


@st.composite
def _mixed_keys(draw, shape):
    """Keys mixing integer arrays (broadcast together), boolean masks,
    integers, slices, None and ``...``; indices may be out of bounds."""
    common = draw(st.sampled_from([(2,), (3,), (2, 1), (0,)]))
    key, axis = [], 0
    while axis < len(shape):
        kind = draw(st.sampled_from(["array", "array", "slice", "int", "none", "mask"]))
        n = shape[axis]
        if kind == "none":
            key.append(None)
            continue
        if kind == "mask":
            span = draw(st.integers(1, len(shape) - axis))
            key.append(draw(hnp.arrays(np.bool_, shape[axis:axis + span])))
            axis += span
            continue
        if kind == "slice":
            key.append(slice(draw(st.integers(-n, n)), None, draw(st.sampled_from([1, -2]))))
        elif kind == "int":
            key.append(draw(st.integers(-n - 1, n) if n == 0 or draw(st.integers(0, 9)) == 0
                            else st.integers(-n, n - 1)))
        else:
            sub = tuple(draw(st.sampled_from([s, 1])) for s in common)
            sub = sub[draw(st.integers(0, len(sub))):]
            bad = draw(st.integers(0, 9)) == 0
            low, high = (-n - 2, n + 1) if bad else (-n, max(n - 1, -n))
            key.append(draw(hnp.arrays(draw(st.sampled_from([np.int64, np.int32, np.uint8]))
                                       if low >= 0 else np.int64, sub,
                                       elements=st.integers(low, high))))
        axis += 1
    if draw(st.booleans()) and key:
        at = draw(st.integers(0, len(key) - 1))
        if not isinstance(key[at], np.ndarray):
            key[at:at + 1] = [Ellipsis]
    return tuple(key)


@settings(max_examples=40)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), st.data())
def test_mixed_advanced_indexing_matches_numpy(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = data.draw(_mixed_keys(shape))
    lazy_arrays = data.draw(st.booleans())
    lazy_key = tuple(la.asarray(k) if lazy_arrays and isinstance(k, np.ndarray) else k
                     for k in key)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            la.asarray(a)[lazy_key]
        return
    got = la.asarray(a)[lazy_key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.get(), expected)


def test_mixed_advanced_indexing_rules(queue):
    a = np.arange(120).reshape(2, 3, 4, 5)
    x = la.asarray(a)
    for key in [(slice(None), 0, slice(None), [1, 2]),       # separated: indexed axes first
                (slice(None), [0, 2], [[1], [3]]),            # adjacent: in place
                ([1, 0], slice(1, 3), None, [-1, 3]),
                (Ellipsis, [1, -1]), (1, ..., [0, 0, 2]),
                (a[:, :, 0, 0] > 30, slice(None, None, -1)),
                (slice(None), a[0, :, :, 0] % 3 == 0, [1, 2, 3, 4, 0][:1]),
                ([], slice(None))]:
        expected = a[key]
        got = x[key]
        assert got.shape == expected.shape, key
        np.testing.assert_array_equal(got.get(), expected)
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[[0, 1], :, [0, 1, 2]]


def test_take_into_an_empty_result_checks_nothing(queue):
    # (NumPy: no element is taken, so no index is out of bounds)
    for shape, axis in [((0, 0), 1), ((0, 3), 1), ((2, 0, 0), 2)]:
        h = np.zeros(shape)
        got = la.take(la.asarray(h), np.array([0]), axis=axis)
        assert got.shape == np.take(h, [0], axis=axis).shape
    with pytest.raises(la.IndexingError, match="out of bounds"):
        la.take(la.asarray(np.zeros((2, 0))), np.array([0]), axis=1)


def test_empty_mask_axes_select_nothing():
    """A boolean index with a length-0 axis selects nothing (the Array API
    allows it against any length); other lengths must match."""
    import lazyarray as la
    x = la.asarray(np.arange(6.0).reshape(2, 3))
    assert x[la.asarray(np.zeros((0, 0), bool))].shape == (0,)
    assert x[la.asarray(np.zeros((2, 0), bool))].shape == (0,)
    assert x[la.asarray(np.zeros((0,), bool))].shape == (0, 3)
    with pytest.raises(IndexError, match="does not match"):
        x[la.asarray(np.zeros((3,), bool))]


def test_element_reads_share_one_kernel():
    """Reading every element of an uncomputed array (as a test harness or a
    Python loop does) computes the array once, not a kernel per index."""
    a = np.arange(12.0).reshape(3, 4)
    b = np.linspace(-1, 20, 12).reshape(3, 4)
    result = la.asarray(a) <= la.asarray(b)
    with counting() as ran:
        values = [bool(result[idx]) for idx in np.ndindex(3, 4)]
        assert values == list((a <= b).ravel())
    assert ran.launches == 1
    x = la.asarray(a) * 2
    assert [float(x[i, j]) for i, j in [(0, 0), (2, 3), (1, 2)]] == [0.0, 22.0, 12.0]
    assert int(la.asarray(np.arange(5))[3]) == 3
    assert x[-1, -1].item() == 22.0


def test_expressions_of_elements_compile_once():
    """``x[i] == v`` over every i (a Python loop over elements, of a computed
    array or of a pending one) plans a bounded number of kernels, and agrees
    with NumPy."""
    a = np.arange(40.0)
    x = la.asarray(a)
    x.compute()
    with counting() as ran:
        assert [bool(x[i] == 3) for i in range(40)] == list(a == 3)
        assert [float(x[i] * 2 + 1) for i in range(40)] == list(a * 2 + 1)
    assert ran.planned <= 2
    y = la.asarray(a) * 3
    with counting() as ran:
        assert [bool(y[-i] == 6) for i in range(40)] == [a[-i] * 3 == 6 for i in range(40)]
    assert ran.planned <= 4
    m = la.asarray(a.reshape(5, 8)) + 1
    assert [int(m[i, j] * 1) for i in range(5) for j in range(8)] == list((a + 1).astype(int))


def test_element_input_keeps_value_after_update():
    """An element read before the array is updated in place keeps the old value."""
    x = la.asarray(np.arange(6.0))
    x.compute()
    first = x[2] + 0
    x[2] = 100.0
    assert float(first) == 2.0 and float(x[2]) == 100.0


def test_elements_of_a_view_computed_meanwhile():
    """Elements of a view, stacked, where reading the third computed the view
    (the view is then a kernel input; its base is not: once an internal error)."""
    a = np.arange(18, dtype=np.int16).reshape(2, 3, 3)
    x = la.asarray(a)
    for k in range(2):
        view = x[k]
        diagonal = [view[i, i] for i in range(3)]
        assert int(la.sum(la.stack(diagonal))) == np.trace(a[k])
        assert bool(la.all(la.linalg.trace(x)[k] == la.sum(la.stack(diagonal))))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_index_dtypes_as_numpy(mode):
    # booleans are the positions 0 and 1 (not a mask); floats raise NumPy's TypeError
    a = np.arange(1, 5)
    mask = np.array([True, False, True, False])
    for indices in (mask, la.asarray(mask), [True, False]):
        got = la.take(la.asarray(a), indices, mode=mode)
        expected = np.take(a, np.asarray(indices), mode=mode)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.get(), expected)
    for indices in (np.array([1.0]), la.asarray(np.array([1.0]))):
        with pytest.raises(TypeError, match="Cannot cast array data from dtype"):
            la.take(la.asarray(a), indices, mode=mode)
    # (a list is converted to integers as NumPy converts it)
    for indices in ([], [1.0, 2.7], [[True], [False]]):
        expected = np.take(a, indices, mode=mode)
        got = la.take(la.asarray(a), indices, mode=mode)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got.get(), expected)


def test_bool_squared_is_int8_as_numpys_operator():
    # NumPy's ** squares for the exponent 2 (bool ** 2 is int8; np.power gives int64)
    b = np.array([True, False])
    for got, expected in [(la.asarray(b) ** 2, b ** 2),
                          (la.power(la.asarray(b), 2), np.power(b, 2)),
                          (la.asarray(b) ** 1, b ** 1)]:
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.get(), expected)
