"""The device stream: random numbers computed on the device by a counter-based
generator, as lazy arrays that fuse with whatever reads them.

``device_rng(seed)`` returns a :class:`DeviceGenerator` with the method names
of NumPy's ``numpy.random.Generator``. Its numbers come from Philox4x32-10,
the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel
random numbers: as easy as 1, 2, 3" (SC 2011): element ``k`` of a draw is a
pure function of the generator's key and of the counter ``offset + k``, so a
draw is an ordinary elementwise expression of an index array. It fuses with
whatever reads it (``(rng.random(n) < 0.5).sum()`` is one kernel, the numbers
are never stored), and the same seed gives the same numbers on every device
and for every shape of the same size. Each draw advances the generator's
offset by the number of values drawn.

This is a different stream from NumPy's: the same seed gives other numbers
than ``numpy.random.default_rng`` (``la.random.default_rng`` gives NumPy's).
Under ``la.jit`` a draw's key and offset are arguments of every call, which
advance, so each call draws new numbers.

Public names: DeviceGenerator, device_rng, philox4x32.
"""

from __future__ import annotations

import math
import operator
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarray.errors import ConcretizationError, user_line
from lazyarray.graph import Gather, Iota
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.construct import normalize_shape
from lazyarray.ops.elementwise import broadcast_shapes, constant
from lazyarray.tracing import TRACING, per_call_arguments

__all__ = ["DeviceGenerator", "device_rng", "philox4x32"]

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
            f"random {method}() draws on the host, which la.jit cannot repeat at each "
            f"call of {TRACING.names[-1]}() (a trace would freeze the numbers of its "
            f"first call).\n  at {user_line()}\nDraw it outside the jitted function and "
            f"pass the array in. Inside la.jit, uniform floats, normals, integers and "
            f"choice with replacement (no p) are drawn on the device, new at each call.")


#: the dtypes of a draw's per-call arguments under la.jit: key, stream, offset
_STATE_DTYPES = (_U32, _U32, _U32, _U32, _U64)


class DeviceGenerator:
    """A counter-based random generator (Philox4x32-10) whose draws are lazy
    arrays computed on the device, with the methods of NumPy's
    ``numpy.random.Generator``. Make one with :func:`device_rng`. Its numbers
    are not NumPy's (a different stream).

    Its state is a 64-bit key and a 64-bit stream number (both from the seed)
    and a 64-bit offset; a draw of *n* values uses the counters ``offset`` to
    ``offset + n - 1`` and advances the offset by *n*. ``size=None`` gives a
    0-d lazy array (NumPy gives a Python scalar; ``float(x)`` converts).
    Inside a function ``la.jit`` traces, a draw's key, stream and offset are
    arguments of every call, taken from the generator (which advances) at
    each call: each call draws new numbers. What draws on the host
    (:meth:`permutation`, :meth:`shuffle`, :meth:`choice` without
    replacement or with *p*) raises :class:`lazyarray.ConcretizationError`
    there.
    """

    def __init__(self, seed_sequence: np.random.SeedSequence):
        self._seed_sequence = seed_sequence
        k0, k1, s0, s1 = (int(w) for w in seed_sequence.generate_state(4, np.uint32))
        self._key, self._stream = (k0, k1), (s0, s1)
        self._offset = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"DeviceGenerator(Philox4x32-10, key=0x{self._key[1]:08x}{self._key[0]:08x}, "
                f"offset={self._offset})")

    @property
    def state(self) -> dict:
        """The generator's state: ``{"key": (k0, k1), "stream": (s0, s1),
        "offset": n}`` (assign a saved one to replay the draws after it)."""
        return {"key": self._key, "stream": self._stream, "offset": self._offset}

    @state.setter
    def state(self, value: dict) -> None:
        self._key = tuple(int(w) & _MASK32 for w in value["key"])  # type: ignore[assignment]
        self._stream = tuple(int(w) & _MASK32 for w in value["stream"])  # type: ignore[assignment]
        self._offset = int(value["offset"]) % 2 ** 64

    def spawn(self, n_children: int) -> list[DeviceGenerator]:
        """*n_children* new generators with independent streams (NumPy's spawn,
        through the seed's ``SeedSequence``)."""
        return [DeviceGenerator(s) for s in self._seed_sequence.spawn(n_children)]

    # {{{ drawing bits

    def _advance(self, n: int) -> int:
        """The offset of a draw of *n* values (the state moves past them)."""
        with self._lock:
            offset = self._offset
            self._offset = (offset + n) % 2 ** 64
        return offset

    def _draw_state(self, n: int) -> tuple[int, int, int, int, int]:
        """The key words, stream words and offset of a draw of *n* values
        (the state moves past them)."""
        offset = self._advance(n)
        return (*self._key, *self._stream, offset)

    def _words(self, shape: tuple, method: str) -> tuple[LazyArray, ...]:
        """Four uint32 arrays of *shape*: the Philox output for each element's
        counter (its C-order index plus the draw's offset). Under ``la.jit``
        the key, stream and offset are per-call arguments."""
        n = math.prod(shape)
        index = LazyArray(Iota((n,), 0)).astype(_U64)
        if TRACING.names:
            k0, k1, s0, s1, offset = (LazyArray(p) for p in per_call_arguments(
                lambda: self._draw_state(n), _STATE_DTYPES))
            index = index + offset
        else:
            k0, k1, s0, s1, start = self._draw_state(n)  # type: ignore[assignment]
            index = index + np.uint64(start)
        counter = (index.astype(_U32), (index >> 32).astype(_U32), s0, s1)
        return tuple(w.reshape(shape) for w in philox4x32(counter, (k0, k1)))

    def _host_generator(self, n: int, method: str) -> np.random.Generator:
        """A NumPy generator seeded from this generator's state, which moves
        past *n* values (at least one)."""
        _refuse_while_tracing(method)
        offset = self._advance(max(int(n), 1))
        return np.random.default_rng(
            [*self._key, *self._stream, offset & _MASK32, offset >> 32])

    # }}}

    # {{{ floats

    def random(self, size: int | tuple[int, ...] | None = None, dtype: Any = np.float64
               ) -> LazyArray:
        """Floats uniform in [0, 1) of shape *size*: the top 24 (float32) or 53
        (float64) bits of each element's Philox output, scaled to a multiple
        of 2**-24 or 2**-53."""
        dtype = _float_dtype(dtype, "random")
        w = self._words(normalize_shape(() if size is None else size), "random")
        return _unit_float64(w[0], w[1]) if dtype == _FLOATS[1] else _unit_float32(w[0])

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: int | tuple[int, ...] | None = None
                ) -> LazyArray:
        """float64 values uniform in [low, high): ``low + (high - low) * random()``
        (*low* and *high* may be arrays; *size* defaults to their broadcast shape)."""
        shape = self._size(size, low, high)
        result = low + (high - low) * self.random(shape)
        return self._check_shape(result, shape, "uniform")

    def standard_normal(self, size: int | tuple[int, ...] | None = None, dtype: Any = np.float64
                        ) -> LazyArray:
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
        return np.sqrt(-2.0 * np.log(u1)) * np.cos((2.0 * np.pi) * u2)  # type: ignore[return-value]

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: int | tuple[int, ...] | None = None
               ) -> LazyArray:
        """float64 normal values of mean *loc* and standard deviation *scale*
        (arrays allowed; a negative *scale* held on the host raises ValueError)."""
        _check_nonnegative(scale, "scale")
        shape = self._size(size, loc, scale)
        result = loc + scale * self.standard_normal(shape)
        return self._check_shape(result, shape, "normal")

    def exponential(self, scale: Any = 1.0, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 exponential values of mean *scale*: ``-scale * log(1 - u)``
        for u uniform in [0, 1) (at most 36.7 times *scale*)."""
        _check_nonnegative(scale, "scale")
        shape = self._size(size, scale)
        result = -np.log1p(-self.random(shape)) * scale
        return self._check_shape(result, shape, "exponential")

    def standard_exponential(self, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 exponential values of mean 1."""
        return self.exponential(1.0, size)

    def _open_unit(self, size, *params) -> tuple[tuple, LazyArray]:
        """The shape of a draw and float64 values uniform in (0, 1) of it:
        ``(k + 1/2) / 2**52`` for 52 random bits ``k`` (0 and 1 excluded, so
        logarithms stay finite)."""
        shape = self._size(size, *params)
        return shape, (np.floor(self.random(shape) * 2.0 ** 52) + 0.5) * 2.0 ** -52  # type: ignore[return-value]

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: int | tuple[int, ...] | None = None
                  ) -> LazyArray:
        """float64 values whose logarithm is normal (mean *mean*, standard
        deviation *sigma*)."""
        return np.exp(self.normal(mean, sigma, size))  # type: ignore[return-value]

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: int | tuple[int, ...] | None = None
                ) -> LazyArray:
        """float64 Laplace (double exponential) values around *loc*."""
        _check_nonnegative(scale, "scale")
        shape, u = self._open_unit(size, loc, scale)
        v = u - 0.5
        return self._check_shape(loc - scale * np.sign(v) * np.log1p(-2.0 * np.abs(v)),
                                 shape, "laplace")

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: int | tuple[int, ...] | None = None
                 ) -> LazyArray:
        """float64 logistic values around *loc*."""
        _check_nonnegative(scale, "scale")
        shape, u = self._open_unit(size, loc, scale)
        return self._check_shape(loc + scale * np.log(u / (1.0 - u)), shape, "logistic")

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: int | tuple[int, ...] | None = None
               ) -> LazyArray:
        """float64 Gumbel (extreme value) values of mode *loc*."""
        _check_nonnegative(scale, "scale")
        shape, u = self._open_unit(size, loc, scale)
        return self._check_shape(loc - scale * np.log(-np.log(u)), shape, "gumbel")

    def rayleigh(self, scale: Any = 1.0, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 Rayleigh values of mode *scale*."""
        _check_nonnegative(scale, "scale")
        shape, u = self._open_unit(size, scale)
        return self._check_shape(scale * np.sqrt(-2.0 * np.log(u)), shape, "rayleigh")

    def weibull(self, a: Any, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 Weibull values of shape *a* (positive) and scale 1."""
        _check_nonnegative(a, "a")
        shape, u = self._open_unit(size, a)
        return self._check_shape((-np.log(u)) ** (1.0 / a), shape, "weibull")

    def pareto(self, a: Any, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 Pareto II (Lomax) values of shape *a* (positive): Pareto
        values of minimum 1, minus 1."""
        _check_nonnegative(a, "a")
        shape, u = self._open_unit(size, a)
        return self._check_shape(u ** (-1.0 / a) - 1.0, shape, "pareto")

    def power(self, a: Any, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 values in [0, 1] of density proportional to ``x**(a - 1)``."""
        _check_nonnegative(a, "a")
        shape, u = self._open_unit(size, a)
        return self._check_shape(u ** (1.0 / a), shape, "power")

    def standard_cauchy(self, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """float64 Cauchy (Lorentz) values of mode 0 and scale 1."""
        _, u = self._open_unit(size)
        return np.tan(np.pi * (u - 0.5))  # type: ignore[return-value]

    def geometric(self, p: Any, size: int | tuple[int, ...] | None = None) -> LazyArray:
        """int64 numbers of Bernoulli trials of success probability *p* up to
        the first success (at least 1)."""
        shape, u = self._open_unit(size, p)
        trials = np.maximum(np.ceil(np.log(u) / np.log1p(-p)), 1.0)
        return self._check_shape(trials.astype(np.int64), shape, "geometric")

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

    def integers(self, low: Any, high: Any = None, size: int | tuple[int, ...] | None = None,
                 dtype: Any = np.int64, endpoint: bool = False) -> LazyArray:
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

    def choice(self, a: Any, size: int | tuple[int, ...] | None = None, replace: bool = True,
               p: Any = None, axis: int = 0, shuffle: bool = True) -> LazyArray:
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
            axis = np.lib.array_utils.normalize_axis_index(operator.index(axis),
                                                           population.ndim)
            n = population.shape[axis]
        shape = normalize_shape(() if size is None else size)
        if replace and p is None:
            if n == 0 and math.prod(shape):  # type: ignore[arg-type]
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

    def permutation(self, x: Any, axis: int = 0) -> LazyArray:
        """``arange(x)`` shuffled (an int), or a copy of *x* with its slices along
        *axis* shuffled. The order is drawn on the host by NumPy, seeded from
        this generator's state; the elements are gathered on the device."""
        if isinstance(x, (int, np.integer)):
            order = self._host_generator(int(x), "permutation").permutation(int(x))
            return asarray(order.astype(np.int64))
        x = asarray(x)
        axis, order = self._order(x.shape, axis, "permutation")
        return LazyArray(Gather(x.node, asarray(order).node, axis))

    def shuffle(self, x: Any, axis: int = 0) -> None:
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


SeedLike = int | Sequence[int] | np.random.SeedSequence | DeviceGenerator | None


def device_rng(seed: SeedLike = None) -> DeviceGenerator:
    """A new :class:`DeviceGenerator` (the device stream, not NumPy's numbers)
    seeded by *seed*: an int, a sequence of ints, a
    ``numpy.random.SeedSequence``, or None for fresh entropy from the
    operating system; a :class:`DeviceGenerator` is returned as it is.
    Different seeds give unrelated streams."""
    if isinstance(seed, DeviceGenerator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return DeviceGenerator(seed)
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        raise TypeError("device_rng takes an int, a sequence of ints or a SeedSequence, "
                        "not a NumPy generator")
    return DeviceGenerator(np.random.SeedSequence(seed))
