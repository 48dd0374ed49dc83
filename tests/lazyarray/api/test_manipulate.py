"""Shape manipulation against NumPy, over hypothesis-drawn shapes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from tests.helpers import counting

_SETTINGS = settings(max_examples=15)
#: test_views_match_numpy by default (every example compiles kernels of its
#: own); its ``_many`` twin, ``slow``, runs _SETTINGS
_FEW = settings(max_examples=6)


@st.composite
def arrays(draw, min_dims=1, max_dims=3):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=min_dims, max_size=max_dims)))
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) - 5


def _same(got, expected):
    assert isinstance(got, la.LazyArray)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.get(), expected)


@_FEW
@given(arrays(), st.data())
def test_views_match_numpy(a, data):
    _check_views(a, data)


@pytest.mark.slow
@_SETTINGS
@given(arrays(), st.data())
def test_views_match_numpy_many(a, data):
    _check_views(a, data)


def _check_views(a, data):
    x = la.asarray(a)
    nd = a.ndim
    axis = data.draw(st.integers(-nd, nd - 1))
    other = data.draw(st.integers(-nd, nd - 1))
    _same(np.flip(x, axis), np.flip(a, axis))
    _same(np.flip(x), np.flip(a))
    _same(np.moveaxis(x, axis, other), np.moveaxis(a, axis, other))
    _same(np.swapaxes(x, axis, other), np.swapaxes(a, axis, other))
    _same(np.expand_dims(x, axis), np.expand_dims(a, axis))
    shift = data.draw(st.integers(-6, 6))
    _same(np.roll(x, shift, axis), np.roll(a, shift, axis))
    _same(np.roll(x, shift), np.roll(a, shift))
    reps = data.draw(st.integers(0, 3))
    _same(np.repeat(x, reps, axis), np.repeat(a, reps, axis))
    tile_reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    _same(np.tile(x, tile_reps), np.tile(a, tile_reps))
    target = tuple(data.draw(st.lists(st.integers(1, 2), min_size=0, max_size=2))) + \
        tuple(1 if s == 1 and data.draw(st.booleans()) else s for s in a.shape)
    target = tuple(data.draw(st.sampled_from([s, 3])) if s == 1 else s
                   for s in target[:len(target) - nd]) + tuple(
        data.draw(st.sampled_from([1, 2])) if s == 1 else s for s in a.shape)
    _same(np.broadcast_to(x, target), np.broadcast_to(a, target))


@_SETTINGS
@given(arrays(), st.data())
def test_pad_matches_numpy(a, data):
    widths = [tuple(data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=2)))
              for _ in range(a.ndim)]
    modes = ["constant"] if 0 in a.shape else ["constant", "edge", "wrap"]
    mode = data.draw(st.sampled_from(modes))
    kwargs = {"constant_values": 7} if mode == "constant" else {}
    _same(np.pad(la.asarray(a), widths, mode=mode, **kwargs),
          np.pad(a, widths, mode=mode, **kwargs))


@_SETTINGS
@given(arrays(), st.data())
def test_split_matches_numpy(a, data):
    axis = data.draw(st.integers(0, a.ndim - 1))
    n = a.shape[axis]
    if n and data.draw(st.booleans()):
        sections = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    else:
        sections = sorted(data.draw(st.lists(st.integers(0, n + 1), max_size=3)))
    got = np.split(la.asarray(a), sections, axis=axis)
    expected = np.split(a, sections, axis=axis)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        _same(g, e)


def test_squeeze_and_methods(queue):
    a = np.arange(6).reshape(1, 2, 1, 3)
    x = la.asarray(a)
    _same(np.squeeze(x), np.squeeze(a))
    _same(x.squeeze(axis=2), a.squeeze(axis=2))
    _same(x.swapaxes(1, 3), a.swapaxes(1, 3))
    _same(x.flatten(), a.flatten())
    _same(la.permute_dims(x, (3, 2, 1, 0)), np.transpose(a, (3, 2, 1, 0)))
    assert type(la.broadcast_arrays(np.ones((3, 1)), np.arange(4))) is list  # (Array API 2024.12)
    b1, b2 = la.broadcast_arrays(np.ones((3, 1)), np.arange(4))
    assert b1.shape == b2.shape == (3, 4)
    with pytest.raises(la.ShapeError, match="size not equal to one"):
        x.squeeze(axis=1)
    with pytest.raises(la.ShapeError, match="cannot broadcast"):
        la.broadcast_to(a, (2, 2))
    with pytest.raises(la.ShapeError, match="equal division"):
        la.split(np.arange(5), 2)


def test_padded_stencil_is_one_kernel(queue):
    a = np.linspace(0, 1, 20, dtype=np.float32).reshape(4, 5)
    x = la.asarray(a)
    with counting() as ran:
        p = np.pad(x, 1, mode="edge")
        got = (p[2:, 1:-1] + p[:-2, 1:-1] - 2 * x).get()
    assert ran.launches == 1
    pa = np.pad(a, 1, mode="edge")
    np.testing.assert_allclose(got, pa[2:, 1:-1] + pa[:-2, 1:-1] - 2 * a, rtol=1e-6)


@pytest.mark.parametrize("value", [200, np.uint8(200), 2**40])
def test_pad_refuses_values_outside_the_dtype_as_numpy(value):
    # (helper session's find: the constant was cast, 200 padding int8 with -56)
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    with pytest.raises(OverflowError):
        np.pad(a, 1, constant_values=value)
    with la.tier("device"), pytest.raises(OverflowError):
        np.pad(la.asarray(a), 1, constant_values=value)


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_a_concatenated_broadcast_stored_as_its_kernels_input_is_read_as_it(monkeypatch,
                                                                            kind):
    # (the H200 fuzzer, seed 1031 graph 527: the join looked through the
    # stored broadcast to the power and the reductions behind it, which the
    # kernel does not read: "Expr has no method map_input")
    from lazyarray import target
    monkeypatch.setattr(target, "device_profile", lambda device: (kind, 4))
    a = np.array([3, 1, 0, 6, 5, 4, 5, 6], dtype=np.uint32).reshape(2, 1, 4)
    b = np.array([[4]], dtype=np.uint8)

    def program(xp, x, y):
        # (each step named, as the fuzzer writes it: the handles keep them)
        v2 = x.std(axis=2)
        v3 = v2.var(axis=0)
        v5 = xp.matmul(v3, y)
        v6 = v5 ** 0.0
        v7 = xp.broadcast_to(v6, (3,))
        return xp.concatenate([v3, v7], axis=-1), (v2, v3, v5, v6, v7)

    got, named = program(la, la.asarray(a), la.asarray(b))
    np.testing.assert_allclose(np.asarray(got), program(np, a, b)[0], rtol=1e-15)
    del named
