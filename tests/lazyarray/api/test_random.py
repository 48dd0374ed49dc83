"""la.random: Philox4x32-10 against the paper's known answers and a pure-Python
reference, reproducibility, distributions, dtypes and shapes, fusion, jit (the device
stream of `la.random.device_rng`; NumPy's streams are in test_random_legacy.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazyarray as la
import lazyarray.random as lr
from tests.helpers import counting

N = 10 ** 6
MASK = 0xFFFFFFFF

# {{{ a pure-Python Philox4x32 (Salmon et al. 2011)


def philox_reference(counter, key, rounds=10):
    """Philox4x32-*rounds* of one counter (4 words) and key (2 words)."""
    c, (k0, k1) = list(counter), key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & MASK, (p0 >> 32) ^ c[3] ^ k1, p0 & MASK]
    return tuple(c)


#: the known-answer vectors of Random123 (counter, key, output)
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def reference_bits(rng: lr.DeviceGenerator, offset: int, n: int) -> list[tuple]:
    """The Philox words of the values ``offset .. offset+n-1`` of *rng*'s stream."""
    state = rng.state
    return [philox_reference(((offset + k) & MASK, (offset + k) >> 32, *state["stream"]),
                             state["key"]) for k in range(n)]

# }}}


def _ks_statistic(samples: np.ndarray, cdf) -> float:
    """The Kolmogorov-Smirnov distance between *samples* and *cdf*."""
    x = np.sort(samples.astype(np.float64))
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


#: the KS distance that 10^6 samples of the right distribution exceed with
#: probability 0.001 (Kolmogorov's asymptotic 1.95 / sqrt(n))
KS_LIMIT = 1.95 / math.sqrt(N)


def _normal_cdf(x):
    return 0.5 * (1 + np.frompyfunc(math.erf, 1, 1)(x / math.sqrt(2)).astype(np.float64))


def _check_moments(x: np.ndarray, mean: float, var: float, sigmas: float = 5) -> None:
    n = x.size
    assert abs(x.mean() - mean) < sigmas * math.sqrt(var / n), x.mean()
    # (the variance of a sample variance: about 2 var^2 / n for these tails; 3 for room)
    assert abs(x.var() - var) < sigmas * math.sqrt(3 * var ** 2 / n), x.var()


def test_philox_reference_gives_the_known_answers():
    for counter, key, want in KNOWN_ANSWERS:
        assert philox_reference(counter, key) == want


def test_philox_on_the_device_gives_the_known_answers(queue):
    columns = [la.asarray(np.array([v[0][j] for v in KNOWN_ANSWERS], np.uint32))
               for j in range(4)]
    keys = [la.asarray(np.array([v[1][j] for v in KNOWN_ANSWERS], np.uint32))
            for j in range(2)]
    out = np.stack([w.get() for w in lr.philox4x32(columns, keys)], axis=1)
    assert [tuple(int(w) for w in row) for row in out] == [v[2] for v in KNOWN_ANSWERS]
    # integer keys (the key schedule on the host) give the same words
    counter, key, want = KNOWN_ANSWERS[2]
    assert tuple(int(w.get()) for w in lr.philox4x32(counter, key)) == want


def test_philox_matches_the_reference_on_random_counters_and_keys(queue):
    words = np.random.default_rng(5).integers(0, 2 ** 32, (200, 6), dtype=np.uint64)
    out = lr.philox4x32([la.asarray(words[:, j].astype(np.uint32)) for j in range(4)],
                        [la.asarray(words[:, j].astype(np.uint32)) for j in (4, 5)])
    got = np.stack([w.get() for w in out], axis=1)
    for row, result in zip(words.tolist(), got.tolist()):
        assert tuple(result) == philox_reference(row[:4], row[4:])


def test_draws_are_philox_of_the_index_plus_the_offset(queue):
    rng = lr.device_rng(2024)
    rng.random(1000)                          # offset 1000 for the next draw
    assert rng.state["offset"] == 1000
    bits = rng.integers(0, 2 ** 64, 8, dtype=np.uint64).get()
    ref = reference_bits(rng, 1000, 8)
    assert bits.tolist() == [(w0 << 32) | w1 for w0, w1, _, _ in ref]
    u = rng.random(8).get()
    ref = reference_bits(rng, 1008, 8)
    assert u.tolist() == [(((w0 << 32) | w1) >> 11) * 2.0 ** -53 for w0, w1, _, _ in ref]
    u32 = rng.random(8, dtype=np.float32).get()
    ref = reference_bits(rng, 1016, 8)
    assert u32.tolist() == [(w0 >> 8) * 2.0 ** -24 for w0, _, _, _ in ref]
    # Lemire's multiply-shift, for a range below 2**32 and one above
    for low, high in ((-7, 1000), (5, 0xFFFFFFF0), (-(2 ** 62), 2 ** 62 + 12345),
                      (0, 0x5EADBEEF12345678)):
        offset = rng.state["offset"]
        got = rng.integers(low, high, 64).get()
        ref = reference_bits(rng, offset, 64)
        assert got.tolist() == [low + ((((w0 << 32) | w1) * (high - low)) >> 64)
                                for w0, w1, _, _ in ref]


def test_offset_crossing_32_bits_carries_into_the_second_counter_word(queue):
    rng = lr.device_rng(3)
    rng.state = {**rng.state, "offset": 2 ** 32 - 2}
    bits = rng.integers(0, 2 ** 64, 4, dtype=np.uint64).get()
    ref = reference_bits(rng, 2 ** 32 - 2, 4)
    assert bits.tolist() == [(w0 << 32) | w1 for w0, w1, _, _ in ref]


def test_same_seed_and_calls_reproduce_exactly(queue):
    def session(seed):
        rng = lr.device_rng(seed)
        return [rng.random((3, 5)).get(), rng.standard_normal(7, dtype=np.float32).get(),
                rng.integers(-3, 9, 11, dtype=np.int32).get(),
                rng.exponential(2.0, 4).get(), rng.choice(10, 5, replace=False).get()]

    a, b, c = session(42), session(42), session(43)
    for x, y, z in zip(a, b, c):
        assert x.dtype == y.dtype and np.array_equal(x, y)
        assert not np.array_equal(x, z)


def test_successive_calls_and_seeds_differ_and_state_advances(queue):
    rng = lr.device_rng(0)
    x, y = rng.random(100).get(), rng.random(100).get()
    assert not np.any(x == y)
    assert rng.state["offset"] == 200
    rng.standard_normal((4, 5))
    assert rng.state["offset"] == 220
    rng.random()
    assert rng.state["offset"] == 221
    assert not np.array_equal(lr.device_rng().random(50).get(),
                              lr.device_rng().random(50).get())
    kids = lr.device_rng(0).spawn(2)
    assert not np.array_equal(kids[0].random(10).get(), kids[1].random(10).get())
    assert lr.device_rng(rng) is rng
    assert lr.device_rng(np.random.SeedSequence(9)).state == lr.device_rng(9).state
    with pytest.raises(TypeError):
        lr.device_rng(np.random.default_rng(0))


def test_values_do_not_depend_on_the_shape_or_on_splitting_a_draw(queue):
    flat = lr.device_rng(11).random(1200).get()
    assert np.array_equal(lr.device_rng(11).random((3, 40, 10)).get().ravel(), flat)
    rng = lr.device_rng(11)
    parts = [rng.random(700).get(), rng.random((5, 100)).get().ravel()]
    assert np.array_equal(np.concatenate(parts), flat)
    z = lr.device_rng(11).standard_normal(1200).get()
    assert np.array_equal(lr.device_rng(11).standard_normal((30, 40)).get().ravel(), z)
    # a saved state replays the draws after it
    rng = lr.device_rng(11)
    rng.random(500)
    saved = rng.state
    first = rng.random(20).get()
    rng.state = saved
    assert np.array_equal(rng.random(20).get(), first)
    assert np.array_equal(first, flat[500:520])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_is_uniform(queue, dtype):
    x = lr.device_rng(1).random(N, dtype=dtype).get()
    assert x.dtype == dtype and x.min() >= 0 and x.max() < 1
    _check_moments(x, 0.5, 1 / 12)
    assert _ks_statistic(x, lambda t: t) < KS_LIMIT
    # multiples of 2**-24 / 2**-53: float32 values have at most 24 significant bits
    bits = 24 if dtype == np.float32 else 53
    scaled = x.astype(np.float64) * 2.0 ** bits
    assert np.array_equal(scaled, np.floor(scaled))
    assert len(np.unique(x)) > 0.97 * N


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_standard_normal_is_normal(queue, dtype):
    z = lr.device_rng(2).standard_normal(N, dtype=dtype).get()
    assert z.dtype == dtype and np.all(np.isfinite(z))
    _check_moments(z, 0.0, 1.0)
    assert _ks_statistic(z, _normal_cdf) < KS_LIMIT
    assert abs(np.mean(z ** 3)) < 5 * math.sqrt(15 / N)          # symmetric
    assert abs(np.mean(z ** 4) - 3) < 5 * math.sqrt(96 / N)      # normal tails


def test_normal_uniform_exponential_parameters(queue):
    rng = lr.device_rng(3)
    _check_moments(rng.normal(-2.0, 3.0, N).get(), -2.0, 9.0)
    u = rng.uniform(-1.0, 3.0, N).get()
    assert u.min() >= -1.0 and u.max() < 3.0
    _check_moments(u, 1.0, 16 / 12)
    e = rng.exponential(2.5, N).get()
    assert e.min() >= 0
    _check_moments(e, 2.5, 2.5 ** 2, sigmas=6)
    assert _ks_statistic(e, lambda t: -np.expm1(-t / 2.5)) < KS_LIMIT
    # array parameters broadcast (size defaults to their shape)
    loc = np.array([0.0, 100.0, -100.0])
    v = rng.normal(la.asarray(loc), 0.5)
    assert v.shape == (3,) and np.all(np.abs(v.get() - loc) < 5)
    w = rng.uniform(np.zeros((2, 1)), np.array([1.0, 10.0]), size=(2, 2))
    assert w.shape == (2, 2) and np.all(w.get() < [1.0, 10.0])
    with pytest.raises(ValueError):
        rng.normal(np.zeros(3), 1.0, size=(2,))
    with pytest.raises(ValueError):
        rng.normal(0.0, -1.0)
    with pytest.raises(ValueError):
        rng.exponential(-1.0)


@pytest.mark.parametrize("low, high, dtype, endpoint", [
    (-5, 5, np.int64, False), (-3, 4, np.int32, True), (0, 256, np.uint8, False),
    (0, 255, np.uint8, True), (-128, 127, np.int8, True), (10, 11, np.int64, False)])
def test_integers_cover_their_range_uniformly(queue, low, high, dtype, endpoint):
    n = 200_000
    x = lr.device_rng(4).integers(low, high, n, dtype=dtype, endpoint=endpoint).get()
    last = high if endpoint else high - 1
    assert x.dtype == dtype and x.shape == (n,)
    values, counts = np.unique(x, return_counts=True)
    assert values.tolist() == list(range(low, last + 1))
    k = last - low + 1
    expected = n / k
    assert np.all(np.abs(counts - expected) < 5.5 * math.sqrt(expected) + 1)


def test_integers_wide_ranges_and_defaults(queue):
    rng = lr.device_rng(5)
    x = rng.integers(-(2 ** 63), 2 ** 63, 10 ** 5).get()         # all of int64
    assert x.dtype == np.int64 and (x < 0).mean() == pytest.approx(0.5, abs=0.01)
    assert abs(x.astype(np.float64).mean()) < 5 * 2.0 ** 63 / math.sqrt(3e5)
    y = rng.integers(0, 2 ** 64 - 1, 10 ** 5, dtype=np.uint64, endpoint=True).get()
    assert y.dtype == np.uint64 and (y >= 2 ** 63).mean() == pytest.approx(0.5, abs=0.01)
    big = 3 * 2 ** 61
    z = rng.integers(-big, big, 10 ** 5).get()
    assert z.min() >= -big and z.max() < big
    assert abs(z.astype(np.float64).mean()) < 5 * big / math.sqrt(3e5)
    d = rng.integers(6, size=1000).get()                          # high=None: [0, low)
    assert d.dtype == np.int64 and set(d.tolist()) == set(range(6))
    b = rng.integers(0, 2, 1000, dtype=bool).get()
    assert b.dtype == np.bool_ and 400 < b.sum() < 600


def test_integers_refuse_bad_bounds(queue):
    rng = lr.device_rng(6)
    for args, kwargs in [((5, 5), {}), ((5, 4), {"endpoint": True}), ((-1, 10),
                         {"dtype": np.uint8}), ((0, 257), {"dtype": np.uint8}),
                         ((0, 2 ** 63 + 1), {})]:
        with pytest.raises(ValueError):
            rng.integers(*args, **kwargs)
    with pytest.raises(TypeError):
        rng.integers(0, 10, dtype=np.float64)
    with pytest.raises(TypeError):
        rng.integers(0, np.array([3, 4]))
    with pytest.raises(TypeError):
        rng.random(3, dtype=np.int32)


@pytest.mark.parametrize("size, shape", [(None, ()), (5, (5,)), ((2, 3), (2, 3)),
                                         ((0, 4), (0, 4))])
def test_dtype_and_shape_of_every_method(queue, size, shape):
    rng = lr.device_rng(7)
    draws = {
        "random": (rng.random(size), np.float64),
        "random32": (rng.random(size, dtype=np.float32), np.float32),
        "uniform": (rng.uniform(size=size), np.float64),
        "standard_normal": (rng.standard_normal(size), np.float64),
        "standard_normal32": (rng.standard_normal(size, dtype=np.float32), np.float32),
        "normal": (rng.normal(size=size), np.float64),
        "exponential": (rng.exponential(size=size), np.float64),
        "integers": (rng.integers(0, 10, size), np.int64),
        "integers8": (rng.integers(0, 10, size, dtype=np.uint8), np.uint8),
        "choice": (rng.choice(10, size), np.int64),
        "choice_p": (rng.choice(10, size, p=np.full(10, 0.1)), np.int64),
    }
    for name, (x, dtype) in draws.items():
        assert isinstance(x, la.LazyArray), name
        assert x.shape == shape and x.dtype == dtype, name
        assert x.get().shape == shape, name
    assert isinstance(float(rng.random()), float)


def test_fused_draw_and_reduction(queue):
    rng = lr.device_rng(8)
    n = 4 * 10 ** 6
    with counting() as ran:
        count = int((rng.random(n) < 0.5).sum())
    assert ran.launches <= 2          # the numbers are never stored
    assert abs(count - n / 2) < 5 * math.sqrt(n / 4)
    inside = float((rng.random(N) ** 2 + rng.random(N) ** 2 < 1).mean())
    assert abs(4 * inside - math.pi) < 4 * 5 * math.sqrt(0.25 / N)


def test_generator_inside_jit_draws_new_numbers_each_call_and_a_counter_argument_works(queue):
    rng = lr.device_rng(9)

    @la.jit
    def noisy(x):
        return x + rng.random(x.shape)

    first, second = noisy(np.zeros(4)).get(), noisy(np.zeros(4)).get()
    assert noisy.trace_count == 1 and rng.state["offset"] == 8
    # the draws the calls made: the generator's next numbers, in order
    assert np.array_equal(np.concatenate([first, second]), lr.device_rng(9).random(8).get())
    with pytest.raises(la.ConcretizationError, match="outside the jitted function"):
        la.jit(lambda x: x + rng.permutation(4))(np.zeros(4))

    @la.jit
    def uniform(offset):
        index = la.arange(16).astype(np.uint64) + offset
        w = lr.philox4x32((index.astype(np.uint32), 0, 0, 0), (1234, 5678))
        return (w[0] >> 8).astype(np.float32) * np.float32(2.0 ** -24)

    a = uniform(np.array(0, np.uint64)).get()
    b = uniform(np.array(16, np.uint64)).get()
    assert uniform.trace_count == 1 and not np.any(a == b)
    ref = [philox_reference((k, 0, 0, 0), (1234, 5678))[0] >> 8 for k in range(16, 32)]
    assert b.tolist() == [r * 2.0 ** -24 for r in ref]


def test_choice(queue):
    rng = lr.device_rng(10)
    x = rng.choice(5, 10 ** 4).get()
    assert set(x.tolist()) == set(range(5))
    pool = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    rows = rng.choice(la.asarray(pool), 50).get()
    assert rows.shape == (50, 2) and all(tuple(r) in {(1, 2), (3, 4), (5, 6)} for r in rows)
    cols = rng.choice(pool, 4, axis=1).get()
    assert cols.shape == (3, 4) and set(cols[0].tolist()) <= {1.0, 2.0}
    distinct = rng.choice(100, 100, replace=False).get()
    assert sorted(distinct.tolist()) == list(range(100))
    weighted = rng.choice([10, 20, 30], 1000, p=[0.0, 0.25, 0.75]).get()
    assert set(weighted.tolist()) == {20, 30} and 150 < (weighted == 20).sum() < 350
    with pytest.raises(ValueError):
        rng.choice(3, 5, replace=False)
    with pytest.raises(ValueError):
        rng.choice(0, 3)


def test_permutation_and_shuffle(queue):
    rng = lr.device_rng(12)
    p = rng.permutation(50).get()
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(50))
    assert p.tolist() != list(range(50))
    data = np.arange(20.0).reshape(10, 2)
    q = rng.permutation(la.asarray(data)).get()
    assert sorted(map(tuple, q)) == sorted(map(tuple, data)) and not np.array_equal(q, data)
    x = la.asarray(data)
    alias = x
    rng.shuffle(x)
    s = x.get()
    assert alias.get() is not None and np.array_equal(alias.get(), s)
    assert sorted(map(tuple, s)) == sorted(map(tuple, data)) and not np.array_equal(s, data)
    h = np.arange(30)
    rng.shuffle(h)
    assert sorted(h.tolist()) == list(range(30)) and h.tolist() != list(range(30))
    with pytest.raises(TypeError):
        rng.shuffle([1, 2, 3])
    replay = lr.device_rng(12)
    assert np.array_equal(replay.permutation(50).get(), p)
