"""``la.random``: random numbers computed on the device, as lazy arrays.

``default_rng(seed)`` returns a :class:`Generator` with the method names of
NumPy's ``numpy.random.Generator``. Its numbers come from Philox4x32-10, the
counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random
numbers: as easy as 1, 2, 3" (SC 2011): element ``k`` of a draw is a pure
function of the generator's key and of the counter ``offset + k``, so a draw
is an ordinary elementwise expression of an index array. It fuses with
whatever reads it (``(rng.random(n) < 0.5).sum()`` is one kernel, the numbers
are never stored), and the same seed gives the same numbers on every device
and for every shape of the same size. Each draw advances the generator's
offset by the number of values drawn.

The numbers differ from NumPy's for the same seed (NumPy's default generator
is PCG64 with other conversion methods).

Public names: Generator, default_rng, philox4x32.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarray.errors import ConcretizationError
from lazyarray.graph import Gather, Iota
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.construct import normalize_shape
from lazyarray.ops.elementwise import broadcast_shapes, constant
from lazyarray.tracing import TRACING

__all__ = ["Generator", "default_rng", "philox4x32"]

# {{{ Philox4x32-10

#: the round multipliers and the Weyl increments of the key schedule (Salmon et al.)
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
PHILOX_ROUNDS = 10
_MASK32 = 0xFFFFFFFF
_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)

Word = LazyArray | int | np.integer


def _word(x: Word) -> LazyArray:
    """*x* as a lazy uint32 array (an integer: a 0-d constant, a kernel argument)."""
    if isinstance(x, LazyArray):
        return x if x.dtype == _U32 else x.astype(_U32)
    if isinstance(x, (int, np.integer)):
        return LazyArray(constant(int(x) & _MASK32, _U32))
    return asarray(x).astype(_U32)


def _mulhilo(a: LazyArray, multiplier: int) -> tuple[LazyArray, LazyArray]:
    """The high and low 32-bit words of the 64-bit product ``a * multiplier``."""
    product = a.astype(_U64) * np.uint64(multiplier)
    return (product >> 32).astype(_U32), product.astype(_U32)


def philox4x32(counter: Sequence[Word], key: Sequence[Word],
               rounds: int = PHILOX_ROUNDS) -> tuple[LazyArray, LazyArray, LazyArray, LazyArray]:
    """The Philox4x32 bijection of Salmon et al. (10 rounds by default): the
    four uint32 output words for the four counter words and two key words
    (lazy arrays, broadcast together, or integers taken modulo 2**32).

    A lazy building block: under ``la.jit``, a counter passed in as an array
    argument gives new numbers on every call."""
    if len(counter) != 4 or len(key) != 2:
        raise ValueError("philox4x32 takes 4 counter words and 2 key words")
    c = [_word(w) for w in counter]
    k: list[Any] = list(key)
    for r in range(rounds):
        if r:
            # the key schedule: a Weyl sequence (integers on the host, arrays here)
            k = [(int(w) + inc) & _MASK32 if isinstance(w, (int, np.integer))
                 else _word(w) + np.uint32(inc) for w, inc in zip(k, PHILOX_W)]
        hi0, lo0 = _mulhilo(c[0], PHILOX_M[0])
        hi1, lo1 = _mulhilo(c[2], PHILOX_M[1])
        k0, k1 = _word(k[0]), _word(k[1])
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return c[0], c[1], c[2], c[3]

# }}}

# {{{ bits to numbers


def _unit_float64(hi: LazyArray, lo: LazyArray) -> LazyArray:
    """float64 in [0, 1): the top 53 bits of the 64-bit word ``hi:lo`` times 2**-53."""
    bits = (hi.astype(_U64) << 21) | (lo >> 11).astype(_U64)
    return bits.astype(np.float64) * 2.0 ** -53


def _unit_float32(word: LazyArray) -> LazyArray:
    """float32 in [0, 1): the top 24 bits of *word* times 2**-24."""
    return (word >> 8).astype(np.float32) * np.float32(2.0 ** -24)


def _mulhi64(x: LazyArray, r: int) -> LazyArray:
    """``floor(x * r / 2**64)`` for uint64 *x* and an integer ``0 <= r < 2**64``
    (the product's high word, from 32-bit halves)."""
    rl, rh = np.uint64(r & _MASK32), np.uint64(r >> 32)
    xl, xh = x & np.uint64(_MASK32), x >> 32
    ll, hl = xl * rl, xh * rl
    mid = (ll >> 32) + (hl & np.uint64(_MASK32))
    if not rh:
        return (hl >> 32) + (mid >> 32)
    lh, hh = xl * rh, xh * rh
    mid = mid + (lh & np.uint64(_MASK32))
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32)


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _float_dtype(dtype, method: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"Unsupported dtype {dtype} for {method}: float32 or float64")
    return dtype


def _shape_of(x) -> tuple:
    return x.shape if isinstance(x, LazyArray) else np.shape(x)


def _check_nonnegative(value, name: str) -> None:
    """NumPy's ValueError for a negative scale (checked for host values; the
    values of lazy arrays are not looked at)."""
    if not isinstance(value, LazyArray) and np.any(np.asarray(value) < 0):
        raise ValueError(f"{name} < 0")

# }}}


def _refuse_while_tracing(method: str) -> None:
    if TRACING.names:
        raise ConcretizationError(
            f"Generator.{method}() was called while la.jit traces {TRACING.names[-1]}(): a "
            f"generator's numbers depend on its state (a counter it advances on each "
            f"draw), which a trace would freeze, so every later call would return the "
            f"same numbers. Draw outside the jitted function and pass the array in, or "
            f"pass a counter array as an argument and build the numbers with "
            f"la.random.philox4x32(counter words, key words).")


class Generator:
    """A counter-based random generator (Philox4x32-10) whose draws are lazy
    arrays computed on the device, with the methods of NumPy's
    ``numpy.random.Generator``. Make one with :func:`default_rng`.

    Its state is a 64-bit key and a 64-bit stream number (both from the seed)
    and a 64-bit offset; a draw of *n* values uses the counters ``offset`` to
    ``offset + n - 1`` and advances the offset by *n*. ``size=None`` gives a
    0-d lazy array (NumPy gives a Python scalar; ``float(x)`` converts).
    Drawing inside a function ``la.jit`` traces raises
    :class:`lazyarray.ConcretizationError`.
    """

    def __init__(self, seed_sequence: np.random.SeedSequence):
        self._seed_sequence = seed_sequence
        k0, k1, s0, s1 = (int(w) for w in seed_sequence.generate_state(4, np.uint32))
        self._key, self._stream = (k0, k1), (s0, s1)
        self._offset = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"Generator(Philox4x32-10, key=0x{self._key[1]:08x}{self._key[0]:08x}, "
                f"offset={self._offset})")

    @property
    def state(self) -> dict:
        """The generator's state: ``{"key": (k0, k1), "stream": (s0, s1),
        "offset": n}`` (assign a saved one to replay the draws after it)."""
        return {"key": self._key, "stream": self._stream, "offset": self._offset}

    @state.setter
    def state(self, value: dict) -> None:
        self._key = tuple(int(w) & _MASK32 for w in value["key"])
        self._stream = tuple(int(w) & _MASK32 for w in value["stream"])
        self._offset = int(value["offset"]) % 2 ** 64

    def spawn(self, n_children: int) -> list[Generator]:
        """*n_children* new generators with independent streams (NumPy's spawn,
        through the seed's ``SeedSequence``)."""
        return [Generator(s) for s in self._seed_sequence.spawn(n_children)]

    # {{{ drawing bits

    def _advance(self, n: int) -> int:
        """The offset of a draw of *n* values (the state moves past them)."""
        with self._lock:
            offset = self._offset
            self._offset = (offset + n) % 2 ** 64
        return offset

    def _words(self, shape: tuple, method: str) -> tuple[LazyArray, ...]:
        """Four uint32 arrays of *shape*: the Philox output for each element's
        counter (its C-order index plus the draw's offset)."""
        _refuse_while_tracing(method)
        n = math.prod(shape)
        offset = self._advance(n)
        index = LazyArray(Iota((n,), 0)).astype(_U64) + np.uint64(offset)
        counter = (index.astype(_U32), (index >> 32).astype(_U32), *self._stream)
        return tuple(w.reshape(shape) for w in philox4x32(counter, self._key))

    def _host_generator(self, n: int, method: str) -> np.random.Generator:
        """A NumPy generator seeded from this generator's state, which moves
        past *n* values (at least one)."""
        _refuse_while_tracing(method)
        offset = self._advance(max(int(n), 1))
        return np.random.default_rng(
            [*self._key, *self._stream, offset & _MASK32, offset >> 32])

    # }}}

    # {{{ floats

    def random(self, size=None, dtype=np.float64) -> LazyArray:
        """Floats uniform in [0, 1) of shape *size*: the top 24 (float32) or 53
        (float64) bits of each element's Philox output, scaled to a multiple
        of 2**-24 or 2**-53."""
        dtype = _float_dtype(dtype, "random")
        w = self._words(normalize_shape(() if size is None else size), "random")
        return _unit_float64(w[0], w[1]) if dtype == _FLOATS[1] else _unit_float32(w[0])

    def uniform(self, low=0.0, high=1.0, size=None) -> LazyArray:
        """float64 values uniform in [low, high): ``low + (high - low) * random()``
        (*low* and *high* may be arrays; *size* defaults to their broadcast shape)."""
        shape = self._size(size, low, high)
        result = low + (high - low) * self.random(shape)
        return self._check_shape(result, shape, "uniform")

    def standard_normal(self, size=None, dtype=np.float64) -> LazyArray:
        """Normally distributed values (mean 0, variance 1) by the Box-Muller
        transform: ``sqrt(-2 log u1) * cos(2 pi u2)``, with u1 in (0, 1] and u2
        in [0, 1) from one Philox output (two 53-bit halves for float64, two
        24-bit words for float32, computed in float32). Each element uses
        only the cosine output: the sine one would need another element's
        work-item to compute the same Philox block again. float32 values are
        at most ``sqrt(48 log 2) = 5.77`` in magnitude, float64 ones 8.57."""
        dtype = _float_dtype(dtype, "standard_normal")
        w = self._words(normalize_shape(() if size is None else size), "standard_normal")
        if dtype == _FLOATS[1]:
            u1, u2 = 1.0 - _unit_float64(w[0], w[1]), _unit_float64(w[2], w[3])
        else:
            u1, u2 = 1.0 - _unit_float32(w[0]), _unit_float32(w[1])
        return np.sqrt(-2.0 * np.log(u1)) * np.cos((2.0 * np.pi) * u2)

    def normal(self, loc=0.0, scale=1.0, size=None) -> LazyArray:
        """float64 normal values of mean *loc* and standard deviation *scale*
        (arrays allowed; a negative *scale* held on the host raises ValueError)."""
        _check_nonnegative(scale, "scale")
        shape = self._size(size, loc, scale)
        result = loc + scale * self.standard_normal(shape)
        return self._check_shape(result, shape, "normal")

    def exponential(self, scale=1.0, size=None) -> LazyArray:
        """float64 exponential values of mean *scale*: ``-scale * log(1 - u)``
        for u uniform in [0, 1) (at most 36.7 times *scale*)."""
        _check_nonnegative(scale, "scale")
        shape = self._size(size, scale)
        result = -np.log1p(-self.random(shape)) * scale
        return self._check_shape(result, shape, "exponential")

    @staticmethod
    def _size(size, *params) -> tuple:
        """The shape of a draw: *size*, or the broadcast shape of the parameters."""
        if size is not None:
            return normalize_shape(size)
        return broadcast_shapes(*(_shape_of(p) for p in params))

    @staticmethod
    def _check_shape(result: LazyArray, shape: tuple, method: str) -> LazyArray:
        if result.shape != shape:
            raise ValueError(f"{method}: the parameters of shape {result.shape} do not "
                             f"broadcast to size {shape}")
        return result

    # }}}

    # {{{ integers

    def integers(self, low, high=None, size=None, dtype=np.int64,
                 endpoint: bool = False) -> LazyArray:
        """Integers of *dtype* uniform in [low, high) ([low, high] with
        *endpoint*; ``high=None``: [0, low)). *low* and *high* are scalars.

        Each element maps a 64-bit Philox output ``x`` to ``low + floor(x * r /
        2**64)`` for a range of ``r`` values (Lemire's multiply-shift, without
        rejection): every value has probability ``floor(2**64 / r) / 2**64`` or
        that plus ``2**-64``, a relative bias below ``r / 2**64`` (under
        ``2.4e-10`` for ranges up to ``2**32``)."""
        if high is None:
            low, high = 0, low
        for name, bound in (("low", low), ("high", high)):
            if isinstance(bound, LazyArray) or np.ndim(bound) != 0:
                raise TypeError(f"integers: {name} must be a scalar (array bounds are "
                                f"not supported)")
        low, high = operator.index(low), operator.index(high)
        dtype = np.dtype(dtype)
        if dtype.kind not in "iub":
            raise TypeError(f"Unsupported dtype {dtype} for integers")
        info = np.iinfo(np.uint8) if dtype.kind == "b" else np.iinfo(dtype)
        top = 1 if dtype.kind == "b" else info.max
        last = high if endpoint else high - 1
        if low < info.min:
            raise ValueError(f"low is out of bounds for {dtype}")
        if last > top:
            raise ValueError(f"high is out of bounds for {dtype}")
        if low > last:
            raise ValueError("low > high" if endpoint else "low >= high")
        shape = normalize_shape(() if size is None else size)
        w = self._words(shape, "integers")
        bits = (w[0].astype(_U64) << 32) | w[1].astype(_U64)
        r = last - low + 1
        offsets = bits if r == 2 ** 64 else _mulhi64(bits, r)
        values = offsets + np.uint64(low % 2 ** 64)        # (wraps to the signed value)
        return values.astype(dtype)

    # }}}

    # {{{ choice and permutations

    def choice(self, a, size=None, replace: bool = True, p=None, axis: int = 0,
               shuffle: bool = True) -> LazyArray:
        """Elements of *a* (an array, along *axis*) or of ``arange(a)`` (an int)
        picked at random. With replacement and uniform weights the indices
        are drawn on the device (:meth:`integers`); without replacement or
        with probabilities *p*, they are drawn on the host by NumPy's
        ``Generator.choice``, seeded from this generator's state (which
        advances), and the elements are gathered on the device."""
        if isinstance(a, (int, np.integer)):
            population, n = None, int(a)
            if n < 0:
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            population = asarray(a)
            if population.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not a 0-d array")
            axis = operator.index(axis) % population.ndim
            n = population.shape[axis]
        shape = normalize_shape(() if size is None else size)
        if replace and p is None:
            if n == 0 and math.prod(shape):
                raise ValueError("a cannot be empty unless no samples are taken")
            index = self.integers(0, max(n, 1), shape)
        else:
            host = self._host_generator(math.prod(shape), "choice")
            index = asarray(np.asarray(host.choice(
                n, size, replace=replace, p=None if p is None else np.asarray(p),
                shuffle=shuffle), dtype=np.int64))
        if population is None:
            return index
        return LazyArray(Gather(population.node, index.node, axis))

    def permutation(self, x, axis: int = 0) -> LazyArray:
        """``arange(x)`` shuffled (an int), or a copy of *x* with its slices along
        *axis* shuffled. The order is drawn on the host by NumPy, seeded from
        this generator's state; the elements are gathered on the device."""
        if isinstance(x, (int, np.integer)):
            order = self._host_generator(int(x), "permutation").permutation(int(x))
            return asarray(order.astype(np.int64))
        x = asarray(x)
        axis, order = self._order(x.shape, axis, "permutation")
        return LazyArray(Gather(x.node, asarray(order).node, axis))

    def shuffle(self, x, axis: int = 0) -> None:
        """Shuffle the slices of *x* (a lazy or NumPy array) along *axis* in place,
        as :meth:`permutation` orders them (``x[...] = permuted x``; a NumPy
        array is shuffled on the host)."""
        if isinstance(x, np.ndarray):
            axis, order = self._order(x.shape, axis, "shuffle")
            x[...] = np.take(x, order, axis)
        elif isinstance(x, LazyArray):
            x[...] = self.permutation(x, axis)
        else:
            raise TypeError("shuffle needs a lazy array or a NumPy array")

    def _order(self, shape: tuple, axis: int, method: str) -> tuple[int, np.ndarray]:
        """The normalized *axis* of an array of *shape* and a random order of
        its slices along it (drawn on the host)."""
        if not shape:
            raise IndexError("x must be an integer or at least 1-dimensional")
        axis = operator.index(axis) % len(shape)
        n = shape[axis]
        return axis, self._host_generator(n, method).permutation(n).astype(np.int64)

    # }}}


SeedLike = int | Sequence[int] | np.random.SeedSequence | Generator | None


def default_rng(seed: SeedLike = None) -> Generator:
    """A new :class:`Generator` seeded by *seed* (an int, a sequence of ints,
    a ``numpy.random.SeedSequence``, or None for fresh entropy from the
    operating system); a :class:`Generator` is returned as it is. The key
    and stream come from NumPy's ``SeedSequence`` of the seed, so different
    seeds give unrelated streams."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return Generator(seed)
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        raise TypeError("default_rng takes an int, a sequence of ints or a SeedSequence, "
                        "not a NumPy generator")
    return Generator(np.random.SeedSequence(seed))
