"""Host arrays reuse the buffer of a temporary as NumPy does (its temporary
elision, for buffers of 256 KiB or more): ``a * 2 + b`` adds ``b`` into the
buffer of ``a * 2``, which nothing else holds. Answers, dtypes and every array
a name or a view holds stay NumPy's."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.host.elision import ELIDE_BYTES

N = ELIDE_BYTES // 8 + 100          # float64 elements: over the threshold


@pytest.fixture
def host():
    with la.tier("host"):
        yield


def _pair(values):
    return la.asarray(values.copy()), values.copy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_chained_operators_give_numpys_answers_and_leave_named_arrays_alone(host, dtype):
    rng = np.random.default_rng(5)
    a_np = (rng.random(N) * 100).astype(dtype) + 1
    b_np = (rng.random(N) * 100).astype(dtype) + 1
    a, b = la.asarray(a_np.copy()), la.asarray(b_np.copy())
    cases = [
        (lambda x, y: x * 2 + y), (lambda x, y: 3 - (x + y)), (lambda x, y: (x - y) * (x + y)),
        (lambda x, y: 2.5 * (x + y) / 4), (lambda x, y: (x + y) // 3 % 5),
        (lambda x, y: (x * y) + 0.5), (lambda x, y: (x + 1) + y[::-1]),
    ]
    for f in cases:
        got, want = f(a, b).get(), f(a_np, b_np)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(a.get(), a_np)
    np.testing.assert_array_equal(b.get(), b_np)


def test_a_named_intermediate_and_the_base_of_a_view_are_not_written(host):
    a, a_np = _pair(np.linspace(0, 1, N))
    t = a + 1                     # named: not a temporary
    u = t * 2
    np.testing.assert_array_equal(t.get(), a_np + 1)
    np.testing.assert_array_equal(u.get(), (a_np + 1) * 2)
    v = (a + 1)[1:]               # a view of a temporary's buffer
    w = v * 3
    np.testing.assert_array_equal(v.get(), (a_np + 1)[1:])
    np.testing.assert_array_equal(w.get(), (a_np + 1)[1:] * 3)
    parts = [a + 2]
    x = parts[0] - 1              # held by a list
    np.testing.assert_array_equal(parts[0].get(), a_np + 2)
    np.testing.assert_array_equal(x.get(), (a_np + 2) - 1)


def test_results_whose_dtype_or_shape_differ_take_a_new_buffer(host):
    a, a_np = _pair(np.arange(N, dtype=np.int32))
    got = (a + 1) / 2                        # int to float: a new buffer
    np.testing.assert_array_equal(got.get(), (a_np + 1) / 2)
    col = la.asarray(np.arange(4.0)[:, None])
    row_np = np.linspace(0, 1, N // 4)
    got = (la.asarray(row_np) * 2) + col     # broadcasts to a larger shape
    np.testing.assert_array_equal(got.get(), row_np * 2 + np.arange(4.0)[:, None])
    f32 = la.asarray(np.ones(N, np.float32))
    got = (f32 * 2) + np.float64(1.5)        # float32 + float64 scalar: float64
    assert got.dtype == np.float64


@pytest.fixture
def taken(monkeypatch):
    """Whether each reuse of a temporary's buffer the host tier tried took it."""
    import lazyarray.host.elision as elision

    tried: list[bool] = []
    real = elision.into_own_buffer
    monkeypatch.setattr(elision, "into_own_buffer",
                        lambda *args: tried.append(real(*args)) or tried[-1])
    return tried


def test_the_temporary_takes_the_result_and_small_ones_do_not(host, taken):
    # (integers: float arithmetic of large host arrays is deferred, host.fusion)
    a, a_np = _pair(np.arange(N, dtype=np.int64))
    b = la.asarray(np.arange(N, dtype=np.int64) * 3)
    got = a * 2 + b - 1
    np.testing.assert_array_equal(got.get(), a_np * 2 + np.arange(N) * 3 - 1)
    assert taken == [True, True]           # (a * 2) + b, then (...) - 1
    small = la.asarray(np.ones(100))
    small * 2 + small
    assert taken == [True, True]


def test_a_temporary_on_the_right_of_a_sum_or_product_takes_the_result(host, taken):
    """As NumPy does for operators whose operands may change places."""
    a, a_np = _pair(np.arange(N, dtype=np.int64))
    b, b_np = _pair(np.arange(N, dtype=np.int64) * 5 - 7)
    got = a + b * 3                 # b * 3 is the temporary, on the right
    np.testing.assert_array_equal(got.get(), a_np + b_np * 3)
    got = a - b * 3                 # not for a difference
    np.testing.assert_array_equal(got.get(), a_np - b_np * 3)
    assert taken == [True]
    np.testing.assert_array_equal(b.get(), b_np)
    kept = b * 3
    got = a * kept                  # a name holds it
    np.testing.assert_array_equal(kept.get(), b_np * 3)
    assert taken == [True]


@pytest.mark.parametrize("seed", range(6))
def test_random_expressions_of_temporaries_give_numpys_answers(host, seed):
    """Random expression trees of operators over large host arrays and
    numbers, every dtype kind: NumPy's values and dtypes, bit for bit, and
    the named arrays unchanged."""
    rng = np.random.default_rng(seed)
    dtype = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_][seed % 6]
    n = ELIDE_BYTES // np.dtype(dtype).itemsize + 7
    values = [(rng.random(n) * 50).astype(dtype) + (0 if dtype == np.bool_ else 1)
              for _ in range(3)]
    lazy = [la.asarray(v.copy()) for v in values]
    operators = ["+", "*", "-", "&", "|", "^"] if dtype in (np.int64, np.int32, np.uint8) \
        else ["+", "*", "-", "/"] if dtype != np.bool_ else ["&", "|", "^", "+", "*"]

    def expression(depth):
        if depth == 0 or rng.random() < 0.2:
            return f"v[{rng.integers(0, 3)}]" if rng.random() < 0.8 else str(int(
                rng.integers(1, 4)))
        return f"({expression(depth - 1)} {rng.choice(operators)} {expression(depth - 1)})"

    for _ in range(40):
        text = expression(4)
        with np.errstate(all="ignore"):
            want = eval(text, {"v": values})
            got = eval(text, {"v": lazy})
        got = got.get() if hasattr(got, "get") else got
        assert np.asarray(got).dtype == np.asarray(want).dtype, text
        np.testing.assert_array_equal(got, want, err_msg=text)
    for v, x in zip(values, lazy):
        np.testing.assert_array_equal(x.get(), v)
