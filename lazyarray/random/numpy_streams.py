"""NumPy's own random streams, returned as lazy arrays.

:class:`RandomState` (NumPy's legacy ``numpy.random.RandomState``, Mersenne
Twister) and :class:`Generator` (``numpy.random.Generator``, PCG64 from
:func:`default_rng`) draw on the host with NumPy's generators, so the same
seed gives the same numbers as NumPy, bit for bit; arrays come back as lazy
arrays, scalars as NumPy returns them. The module-level functions of
``la.random`` (``seed``, ``rand``, ``normal``...) use NumPy's global legacy
state itself: seeding either seeds both.

Under ``la.jit`` the same calls draw from a device stream instead (see
:mod:`lazyarray.random.traced`).

Public names: RandomState, Generator, default_rng, GLOBAL, LEGACY_FUNCTIONS.
"""

from __future__ import annotations

import inspect
import operator
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarray.handle import LazyArray, asarray
from lazyarray.host.dispatch import wrap_array
from lazyarray.host.policy import host_enabled
from lazyarray.random.descriptions import DESCRIPTIONS
from lazyarray.random.device import DeviceGenerator
from lazyarray.random.traced import draw_on_device, refuse_on_host
from lazyarray.tracing import HOST_DRAWS, TRACING, per_call_arguments

__all__ = ["GLOBAL", "LEGACY_FUNCTIONS", "Generator", "RandomState", "default_rng"]

# {{{ host calls


def _to_host(value: Any) -> Any:
    """*value* with lazy arrays (also inside lists and tuples) as NumPy arrays."""
    if isinstance(value, LazyArray):
        return value.get()
    if isinstance(value, (list, tuple)) and any(isinstance(v, (LazyArray, list, tuple))
                                                for v in value):
        return type(value)(_to_host(v) for v in value)
    return value


def _to_lazy(result: Any) -> Any:
    """A NumPy array of numbers as a lazy array; anything else (NumPy
    scalars, Python numbers, bytes, arrays of strings) as it is."""
    if isinstance(result, np.ndarray) and result.dtype.kind in "biufc" \
            and result.dtype != np.float16:
        # (small draws stay on the host tier, larger ones go to the device)
        return wrap_array(result) if host_enabled() else asarray(result)
    return result


#: argument types a draw passes to NumPy as they are (``rand(4, 4)``, ``randn()``)
_NUMBERS = frozenset([int, float, bool, type(None)])


def _host_call(method: Callable, args: tuple, kwargs: dict) -> Any:
    """*method* (a NumPy generator's) called with lazy arguments fetched, its
    array result as a lazy array. A lazy *out* gets the result assigned."""
    if not kwargs and all(type(a) in _NUMBERS for a in args):
        return _to_lazy(method(*args))  # (the commonest draw: numbers only)
    out = kwargs.get("out")
    args = tuple(_to_host(a) for a in args)
    kwargs = {k: _to_host(v) for k, v in kwargs.items() if k != "out"}
    if isinstance(out, LazyArray):
        buffer = np.empty(out.shape, out.dtype)
        method(*args, out=buffer, **kwargs)
        out[...] = buffer
        return out
    if out is not None:
        kwargs["out"] = out
    return _to_lazy(method(*args, **kwargs))


# }}}


class _NumpyStream:
    """What both kinds of NumPy stream share: the NumPy object that draws
    (``_numpy``), host calls, and the device stream that stands for it under
    ``la.jit``."""

    _numpy: Any

    def _setup(self, numpy_object: Any, fresh: bool, restarts: bool = True) -> None:
        """Wrap *numpy_object*. Made while ``la.jit`` traces (and *restarts*:
        not the global state, which lives on whenever its module loads), the
        stream starts again at every call of the jitted function: from new
        entropy where *fresh* (no seed was given), else from the state it has
        now."""
        self._numpy = numpy_object
        #: (the host state, pickled; the device stream made from it) or None
        self._device: tuple[bytes, DeviceGenerator] | None = None
        if restarts and TRACING.names:
            initial = self._host_state()
            self._restarted(self._renew if fresh else lambda: self._set_host_state(initial))

    def _restarted(self, change: Callable[[], Any]) -> None:
        """Run *change* (a new seed or state) and start a new device stream
        (from the new state, at offset 0); inside ``la.jit``, at every call."""
        def run() -> tuple:
            change()
            self._device = None
            return ()
        run()
        if TRACING.names:
            per_call_arguments(run, ())

    def __getstate__(self) -> dict:
        # (pickled without its device stream, which is made again when needed)
        return {**self.__dict__, "_device": None}

    def _host_state(self) -> Any:
        raise NotImplementedError

    def _set_host_state(self, state: Any) -> None:
        raise NotImplementedError

    def _renew(self) -> None:
        """Start again from fresh entropy."""
        raise NotImplementedError

    def _device_stream(self) -> DeviceGenerator:
        """The device stream that draws for this stream under ``la.jit``: made
        from the host state (a new one whenever the host state changed), its
        offset advancing over the jitted calls."""
        state = pickle.dumps(self._host_state())
        if self._device is None or self._device[0] != state:
            words = np.frombuffer(state + bytes(-len(state) % 4), np.uint32)
            self._device = (state, DeviceGenerator(np.random.SeedSequence(words.tolist())))
        return self._device[1]

    def _draw(self, name: str, signature: inspect.Signature, args: tuple,
              kwargs: dict) -> Any:
        """``name(*args, **kwargs)`` drawn by NumPy, or on the device while
        ``la.jit`` traces (*signature* binds the arguments)."""
        if TRACING.names:
            return draw_on_device(self, name, signature.bind(None, *args, **kwargs))
        HOST_DRAWS[0] += 1
        return _host_call(getattr(self._numpy, name), args, kwargs)

    def _shuffled_order(self, n: int) -> np.ndarray:
        """``arange(n)`` shuffled by NumPy's ``shuffle`` (the same numbers as
        shuffling any *n* rows)."""
        order = np.arange(n, dtype=np.int64)
        HOST_DRAWS[0] += 1
        self._numpy.shuffle(order)
        return order

    def _pick(self, a: LazyArray, index: Any, axis: int) -> Any:
        """The elements of *a* at *index* (drawn) along *axis*; a NumPy scalar
        where *a* is 1-d and *index* a scalar, as NumPy returns."""
        picked = a.take(np.asarray(index, dtype=np.int64), axis)
        return picked.get()[()] if picked.ndim == 0 else picked


def _method(name: str, numpy_class: type, owner: str) -> Callable:
    """The method *name* of a wrapper class: NumPy's method of *numpy_class*,
    with its signature, drawing as :meth:`_NumpyStream._draw` does."""
    if name in ("rand", "randn"):
        signature = inspect.Signature([
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY),
            inspect.Parameter("dims", inspect.Parameter.VAR_POSITIONAL)])
    else:
        signature = inspect.signature(getattr(numpy_class, name))

    def method(self: _NumpyStream, *args: Any, **kwargs: Any) -> Any:
        return self._draw(name, signature, args, kwargs)
    method.__name__ = name
    method.__qualname__ = f"{owner}.{name}"
    method.__doc__ = DESCRIPTIONS[name]
    method.__signature__ = signature              # type: ignore[attr-defined]
    return method


# {{{ RandomState


class RandomState(_NumpyStream):
    """NumPy's legacy generator (``numpy.random.RandomState``, Mersenne
    Twister) with draws returned as lazy arrays: the same numbers as NumPy
    for the same *seed* (an int, an array of ints, a NumPy bit generator, or
    None for fresh entropy). It has NumPy's methods, with their arguments;
    lazy arrays may be passed for any of them."""

    def __init__(self, seed: Any = None) -> None:
        self._setup(np.random.RandomState(_to_host(seed)), fresh=seed is None)

    @classmethod
    def _wrapping(cls, numpy_object: Any, restarts: bool = True) -> RandomState:
        """A RandomState that draws with *numpy_object* (a NumPy RandomState,
        or the ``numpy.random`` module for the global state, which does not
        *restart*: see :meth:`_setup`)."""
        state = cls.__new__(cls)
        state._setup(numpy_object, fresh=False, restarts=restarts)
        return state

    def __repr__(self) -> str:
        return f"RandomState(MT19937) at 0x{id(self):x}"

    def _host_state(self) -> Any:
        return self._numpy.get_state()

    def _set_host_state(self, state: Any) -> None:
        self._numpy.set_state(state)

    def _renew(self) -> None:
        self._numpy.seed()

    def seed(self, seed: Any = None) -> None:
        """Reset the state from *seed* (None: fresh entropy), as NumPy's
        ``seed``. Inside ``la.jit``, every call of the jitted function seeds
        again (seed with a constant or a static argument)."""
        seed = _to_host(seed)
        self._restarted(lambda: self._numpy.seed(seed))

    def get_state(self, legacy: bool = True) -> Any:
        """NumPy's state tuple (or dict with ``legacy=False``) of the host
        stream."""
        return self._numpy.get_state(legacy=legacy)

    def set_state(self, state: Any) -> None:
        """Restore a state from :meth:`get_state` (NumPy's ``set_state``);
        inside ``la.jit``, at every call of the jitted function."""
        self._restarted(lambda: self._numpy.set_state(state))

    def shuffle(self, x: Any) -> None:
        """Shuffle *x* in place along its first axis, as NumPy does (a lazy
        array: its rows are gathered on the device in NumPy's order)."""
        if TRACING.names:
            refuse_on_host("shuffle")
        if not isinstance(x, LazyArray):
            self._numpy.shuffle(x)
        elif x.ndim == 0:
            raise TypeError("shuffle: a 0-d array cannot be shuffled")
        else:
            x[...] = x.take(self._shuffled_order(x.shape[0]), 0)

    def permutation(self, x: Any) -> Any:
        """``arange(x)`` shuffled (an int), or a shuffled copy of the array *x*
        (along its first axis), as NumPy's ``permutation``."""
        if TRACING.names:
            refuse_on_host("permutation")
        if not isinstance(x, LazyArray):
            return _host_call(self._numpy.permutation, (x,), {})
        if x.ndim == 0:
            raise IndexError("x must be an integer or at least 1-dimensional")
        return x.take(self._shuffled_order(x.shape[0]), 0)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        """Elements of the 1-d array *a* (or of ``arange(a)``) picked at
        random, with or without replacement, with probabilities *p*, as
        NumPy's ``choice``."""
        if TRACING.names:
            return draw_on_device(self, "choice", inspect.signature(
                RandomState.choice).bind(None, a, size, replace, p))
        if not isinstance(a, LazyArray) or a.ndim == 0:     # (0-d: a population size)
            return _host_call(self._numpy.choice, (a, size, replace, p), {})
        if a.ndim != 1:
            raise ValueError("a must be 1-dimensional")
        index = self._numpy.choice(a.shape[0], size, replace, _to_host(p))
        return self._pick(a, index, 0)


_LEGACY_SPECIAL = {"seed", "get_state", "set_state", "shuffle", "permutation", "choice"}
for _name in sorted(n for n in dir(np.random.RandomState) if not n.startswith("_")):
    if _name not in _LEGACY_SPECIAL:
        setattr(RandomState, _name, _method(_name, np.random.RandomState, "RandomState"))

#: the global legacy state: NumPy's own (``numpy.random.seed`` seeds it too)
GLOBAL = RandomState._wrapping(np.random, restarts=False)

# }}}


# {{{ Generator


class Generator(_NumpyStream):
    """NumPy's ``numpy.random.Generator`` on *bit_generator* (a NumPy bit
    generator: ``PCG64``, ``Philox``...), with draws returned as lazy
    arrays: the same numbers as NumPy's. Usually made by
    :func:`default_rng`. It has NumPy's methods, with their arguments; lazy
    arrays may be passed for any of them."""

    def __init__(self, bit_generator: np.random.BitGenerator) -> None:
        self._setup(np.random.Generator(bit_generator), fresh=False)

    @classmethod
    def _wrapping(cls, numpy_generator: np.random.Generator, fresh: bool) -> Generator:
        generator = cls.__new__(cls)
        generator._setup(numpy_generator, fresh)
        return generator

    def __repr__(self) -> str:
        return f"Generator({type(self.bit_generator).__name__}) at 0x{id(self):x}"

    @property
    def bit_generator(self) -> np.random.BitGenerator:
        """NumPy's bit generator that draws the numbers."""
        return self._numpy.bit_generator

    def _host_state(self) -> Any:
        return self._numpy.bit_generator.state

    def _set_host_state(self, state: Any) -> None:
        self._numpy.bit_generator.state = state

    def _renew(self) -> None:
        self._numpy = np.random.Generator(type(self._numpy.bit_generator)())

    def spawn(self, n_children: int) -> list[Generator]:
        """*n_children* new generators with independent streams (NumPy's
        ``spawn``: the same streams as NumPy's children)."""
        return [Generator._wrapping(g, fresh=False) for g in self._numpy.spawn(n_children)]

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffle *x* in place along *axis*, as NumPy does (a lazy array: its
        slices are gathered on the device in NumPy's order)."""
        if TRACING.names:
            refuse_on_host("shuffle")
        if not isinstance(x, LazyArray):
            self._numpy.shuffle(x, axis)
            return
        axis = _axis(x, axis)
        x[...] = x.take(self._shuffled_order(x.shape[axis]), axis)

    def permutation(self, x: Any, axis: int = 0) -> Any:
        """``arange(x)`` shuffled (an int), or a copy of the array *x* with its
        slices along *axis* shuffled, as NumPy's ``permutation``."""
        if TRACING.names:
            refuse_on_host("permutation")
        if not isinstance(x, LazyArray):
            return _host_call(self._numpy.permutation, (x, axis), {})
        axis = _axis(x, axis)
        return x.take(self._shuffled_order(x.shape[axis]), axis)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None,
               axis: int = 0, shuffle: bool = True) -> Any:
        """Elements of *a* along *axis* (or of ``arange(a)``) picked at random,
        with or without replacement, with probabilities *p*, as NumPy's
        ``choice``."""
        if TRACING.names:
            return draw_on_device(self, "choice", inspect.signature(
                Generator.choice).bind(None, a, size, replace, p, axis, shuffle))
        if not isinstance(a, LazyArray) or a.ndim == 0:     # (0-d: a population size)
            return _host_call(self._numpy.choice, (a, size, replace, p, axis, shuffle), {})
        axis = _axis(a, axis)
        index = self._numpy.choice(a.shape[axis], size, replace, _to_host(p),
                                   shuffle=shuffle)
        return self._pick(a, index, axis)


def _axis(x: LazyArray, axis: int) -> int:
    """*axis* of *x* normalized (NumPy's errors for none or one out of range)."""
    if x.ndim == 0:
        raise IndexError("x must be an integer or at least 1-dimensional")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(axis, x.ndim)
    return axis % x.ndim


_GENERATOR_SPECIAL = {"shuffle", "permutation", "choice", "spawn", "bit_generator"}
for _name in sorted(n for n in dir(np.random.Generator) if not n.startswith("_")):
    if _name not in _GENERATOR_SPECIAL:
        setattr(Generator, _name, _method(_name, np.random.Generator, "Generator"))


def default_rng(seed: Any = None) -> Generator:
    """A :class:`Generator` with NumPy's numbers for *seed*, as
    ``numpy.random.default_rng(seed)`` (PCG64): an int, a sequence of ints,
    a ``SeedSequence``, a NumPy bit generator or generator (shared, as NumPy
    does), or None for fresh entropy. A :class:`Generator` is returned as it
    is. Made inside ``la.jit``, it starts again at every call."""
    if isinstance(seed, Generator):
        return seed
    return Generator._wrapping(np.random.default_rng(_to_host(seed)), fresh=seed is None)

# }}}


def _global_function(name: str) -> Callable:
    """The module-level function *name* of ``la.random``: the global state's
    method (NumPy's module functions draw from that state too)."""
    method = getattr(RandomState, name, None)
    if name in ("ranf", "sample"):
        method = RandomState.random_sample  # type: ignore[attr-defined]
    if method is None:
        numpy_function = getattr(np.random, name)

        def function(*args: Any, **kwargs: Any) -> Any:
            return numpy_function(*args, **kwargs)
        signature = inspect.signature(numpy_function)
        doc = DESCRIPTIONS[name]
    else:
        def function(*args: Any, **kwargs: Any) -> Any:
            return method(GLOBAL, *args, **kwargs)
        full = inspect.signature(method)
        signature = full.replace(parameters=list(full.parameters.values())[1:])
        doc = method.__doc__
    function.__name__ = function.__qualname__ = name
    function.__module__ = "lazyarray.random"
    function.__doc__ = doc
    function.__signature__ = signature            # type: ignore[attr-defined]
    return function


#: NumPy's module-level legacy functions, by name, on the global state
LEGACY_FUNCTIONS = {name: _global_function(name) for name in sorted(
    n for n in dir(np.random) if not n.startswith("_")
    and callable(getattr(np.random, n)) and not isinstance(getattr(np.random, n), type)
    and n not in ("default_rng", "test"))}
