"""Python's built-in protocols on lazy arrays as on NumPy's values, on both
tiers: ``round`` of a single value (NumPy's scalars take it; arrays do not),
``divmod`` of arrays and numbers, ``hash`` of a single value (a dict key, a
``Counter`` over an array)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import lazyarray as la

VALUES = np.array([2.5, -1.567, 7.0, 3.25])
INTEGERS = np.array([7, -8, 9, 0])


@pytest.fixture(params=["host", "device"])
def tier(request):
    with la.tier(request.param):
        yield request.param


@pytest.mark.parametrize("values", [VALUES, INTEGERS], ids=["float64", "int64"])
def test_round_of_one_element_is_numpys_scalar_round(tier, values):
    x = la.asarray(values)
    for k in range(len(values)):
        got = round(x[k])
        assert type(got) is int and got == round(values[k])
        rounded = round(x[k], 2)
        if tier == "host":              # (an element read there is NumPy's scalar)
            assert type(rounded) is type(round(values[k], 2))
        else:
            assert isinstance(rounded, la.LazyArray) and rounded.shape == ()
        assert rounded.dtype == round(values[k], 2).dtype
        np.testing.assert_array_equal(np.asarray(rounded), round(values[k], 2))


def test_round_of_an_array_says_to_use_np_round(tier):
    with pytest.raises(TypeError, match=r"np.round"):
        round(la.asarray(VALUES))


@pytest.mark.parametrize("values", [VALUES, INTEGERS], ids=["float64", "int64"])
def test_divmod_matches_numpy(tier, values):
    x = la.asarray(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        cases = [(divmod(x, 3), divmod(values, 3)),
                 (divmod(17, x[:3]), divmod(17, values[:3])),
                 (divmod(x[1], 2), divmod(values[1], 2)),
                 (divmod(x, x[::-1]), divmod(values, values[::-1]))]
        for got, want in cases:
            assert len(got) == 2
            for g, w in zip(got, want):
                assert g.dtype == np.asarray(w).dtype
                np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("values", [np.array([3, 1, 3, 2, 3, 1]), np.array([0.5, 2.0, 0.5])],
                         ids=["int64", "float64"])
def test_single_values_hash_as_numpys_scalars(tier, values):
    x = la.asarray(values)
    counts = collections.Counter(x)            # (iteration gives 0-d arrays)
    assert {k.item(): n for k, n in counts.items()} == collections.Counter(values.tolist())
    table = {x[0]: "first"}
    assert table[values[0].item()] == "first"   # (equal values, equal hashes)
    assert hash(x[1]) == hash(values[1])


def test_arrays_of_more_dimensions_stay_unhashable(tier):
    with pytest.raises(TypeError, match="unhashable"):
        hash(la.asarray(VALUES))
    with pytest.raises(TypeError, match="unhashable"):
        {la.ones((2, 2)): 1}


@pytest.mark.parametrize("tier", ["auto", "device"])
def test_flat_slices_are_copies_as_numpys(tier):
    with la.tier(tier):
        a = la.arange(10.0)
        picked = a.flat[1:4]
        picked[0] = 99
        np.testing.assert_array_equal(np.asarray(a)[:4], [0, 1, 2, 3])
        np.testing.assert_array_equal(np.asarray(picked), [99, 2, 3])
        a.flat[2] = -1                      # (writes through flat still reach a)
        assert float(a.flat[2]) == -1.0


def test_lazyarrays_axis_errors_are_numpys_axis_errors():
    with la.tier("device"):
        with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds"):
            la.cumsum(la.ones((2, 2)), axis=3)
        with pytest.raises(np.exceptions.AxisError):
            la.ones((2, 2)).sum(axis=-3)


def test_complex_max_and_argmax_say_that_the_device_does_not_order_complex_values():
    # (at the call; they failed when computed, deep in kernelcore)
    with la.tier("device"):
        x = la.asarray(np.array([1 + 2j, 3 - 1j, 3 + 0j, -1j]))
        for method in ("max", "min", "argmax", "argmin"):
            with pytest.raises(TypeError, match=f"{method} of complex values"):
                getattr(x, method)()
