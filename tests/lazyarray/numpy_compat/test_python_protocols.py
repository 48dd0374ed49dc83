"""Python's built-in protocols on lazy arrays as on NumPy's values, on both
tiers: ``round`` of a single value (NumPy's scalars take it; arrays do not),
``divmod`` of arrays and numbers."""

from __future__ import annotations

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
