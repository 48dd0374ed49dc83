"""``actx.compile``: a function of array containers traced once per argument
signature by ``la.jit``, then replayed as its planned kernels.

The arguments are flattened by the context's container walker into leaves:
arrays (lazy, or frozen pyopencl arrays, thawed first) and scalars. Python
numbers are traced as values (``la.jit``'s scalar parameters), so an RK
stage's new time ``t`` or a new ``dt`` runs the same kernels; NumPy scalars
and other leaves are part of the signature. The signature (the compile key)
is the containers' structures, each leaf's kind (array shape and dtype,
Python number type, or a static value) and the keyword names.

NumPy's numeric scalars (``np.float64(t)``, as a time loop that starts
from ``t = np.float64(0)`` passes) are traced values too, keyed by their
type: a new value reuses the trace. Inside the trace they keep their dtype
(NumPy scalars are not weak, NEP 50), as the call would have computed with
them eagerly.

The function sees a traced number as a :class:`TracedScalar`, a 0-d lazy
array that arraycontext's containers broadcast as they broadcast numbers:
``state + dt / 2 * k1`` works in a compiled RK step as it does eagerly with
a float ``dt``.

Public names: CompiledFunction, TracedScalar, compile_key, flatten_call,
unflatten_call.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pyopencl as cl

import lazyarray as la
from lazyarray.arraycontext.traversal import Structure, Walker
from lazyarray.graph import Map, is_weak
from lazyarray.handle import LazyArray
from lazyarray.run import using_queue


class TracedScalar(LazyArray):
    """A Python number passed to a compiled function, as the trace sees it:
    a 0-d lazy array (a scalar parameter of the kernels) that counts as a
    :class:`numbers.Number`, so arraycontext's containers broadcast it over
    their arrays as they broadcast numbers (``dt * state``). Arithmetic
    between traced scalars and numbers gives a traced scalar again
    (``dt / 2``); with arrays it gives lazy arrays."""


def _as_scalar(x: Any, numbers_only: bool = False) -> Any:
    """*x* as a :class:`TracedScalar` if it is a 0-d lazy array computed
    from numbers only (traced or written): Python numbers (a weak result),
    or *numbers_only*, which the caller knows (its operands were traced
    scalars and numbers)."""
    if type(x) is LazyArray and x.ndim == 0 and (numbers_only or is_weak(x.node)):
        return TracedScalar(x.node)
    return x


def _is_number(x: Any) -> bool:
    return isinstance(x, (TracedScalar, int, float, complex, np.number))


def _scalar_operator(name: str) -> Callable[..., Any]:
    base = getattr(LazyArray, name)

    def op(self: Any, *other: Any) -> Any:
        result = base(self, *other)
        if result is NotImplemented:
            return result
        return _as_scalar(result, all(_is_number(o) for o in other))

    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    for _dunder in (f"__{_name}__", f"__r{_name}__"):
        setattr(TracedScalar, _dunder, _scalar_operator(_dunder))
for _dunder in ("__neg__", "__pos__", "__abs__"):
    setattr(TracedScalar, _dunder, _scalar_operator(_dunder))
numbers.Number.register(TracedScalar)


#: NumPy scalar types not traced as values (no Python number holds them)
_UNTRACED = (np.uint64, np.longdouble, np.clongdouble, np.float16)


def _traced_numpy_scalar(leaf: Any) -> bool:
    """Whether *leaf* is a NumPy scalar traced as a value: numeric, not a
    bool, and held exactly by a Python number (for the trip through
    ``la.jit``'s scalar parameters)."""
    return isinstance(leaf, np.number) and not isinstance(leaf, _UNTRACED)


def _leaf_key(leaf: Any) -> Hashable:
    if isinstance(leaf, LazyArray) or hasattr(leaf, "shape") and hasattr(leaf, "dtype") \
            and not isinstance(leaf, np.generic):
        return ("array", tuple(leaf.shape), np.dtype(leaf.dtype).str)
    if isinstance(leaf, (int, float, complex)) and not isinstance(leaf, (bool, np.generic)):
        return ("number", type(leaf))
    if _traced_numpy_scalar(leaf):
        return ("number", type(leaf))
    try:
        hash(leaf)
    except TypeError:
        raise TypeError(f"cannot pass a {type(leaf).__name__} to a compiled function "
                        "(arrays, numbers and containers of them)") from None
    return ("static", type(leaf), leaf)


def compile_key(leaves: list[Any], structure: Structure, keywords: tuple[str, ...]
                ) -> tuple:
    """The signature of a call: container structure, keyword names, and per
    leaf its shape and dtype, Python number type, or static value."""
    return (structure.key, keywords, tuple(_leaf_key(x) for x in leaves))


class CompiledFunction:
    """*f* compiled for the context: one ``la.jit`` trace per signature
    (:func:`compile_key`), run on *queue*. *thaw* turns frozen leaves into
    lazy arrays; *wrap_result* post-processes the rebuilt result (attaching
    the array context to containers)."""

    def __init__(self, f: Callable[..., Any], walker: Walker,
                 queue: cl.CommandQueue | None,
                 thaw: Callable[[Any], Any] = lambda x: x,
                 wrap_result: Callable[[Any], Any] = lambda x: x):
        self.f = f
        self._walker = walker
        self._queue = queue
        self._thaw = thaw
        self._wrap = wrap_result
        self._programs: dict[tuple, tuple[Any, list[Any]]] = {}
        #: how many signatures were traced
        self.trace_count = 0

    def _program(self, key: tuple, structure: Structure, statics: list[Any]) -> Any:
        entry = self._programs.get(key)
        if entry is not None:
            return entry
        out_structure: list[Structure] = []
        walker, f = self._walker, self.f
        names = key[1]

        def flat(arrays: tuple, numbers_: tuple) -> tuple:
            it_a, it_n, it_s = iter(arrays), iter(numbers_), iter(statics)
            leaves = []
            for kind in key[2]:
                leaves.append(next(it_a) if kind[0] == "array"
                              else _traced(next(it_n), kind[1]) if kind[0] == "number"
                              else next(it_s))
            args = unflatten_call(walker, structure, leaves)
            positional, keywords = args[:len(args) - len(names)], args[len(args) - len(names):]
            result = f(*positional, **dict(zip(names, keywords)))
            out_leaves, out_struct = walker.flatten(result)
            out_structure[:] = [out_struct]
            return tuple(x if isinstance(x, LazyArray) else la.asarray(x) for x in out_leaves)

        flat.__name__ = getattr(f, "__name__", "compiled")
        entry = (la.jit(flat), out_structure)
        self._programs[key] = entry
        self.trace_count += 1
        return entry

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = tuple(sorted(kwargs))
        leaves, structure = flatten_call(self._walker, [*args, *(kwargs[n] for n in names)])
        leaves = [self._thaw(x) if hasattr(x, "shape") and not isinstance(x, LazyArray)
                  and not isinstance(x, np.generic) else x for x in leaves]
        key = compile_key(leaves, structure, names)
        arrays = tuple(x for x, k in zip(leaves, key[2]) if k[0] == "array")
        numbers_ = tuple(x.item() if isinstance(x, np.generic) else x
                         for x, k in zip(leaves, key[2]) if k[0] == "number")
        statics = [x for x, k in zip(leaves, key[2]) if k[0] == "static"]
        jitted, out_structure = self._program(key, structure, statics)
        with using_queue(self._queue):
            out = jitted(arrays, numbers_)
        if not isinstance(out, tuple):
            out = (out,)
        return self._wrap(self._walker.unflatten(out_structure[0], list(out)))


def _traced(value: LazyArray, kind: type) -> TracedScalar:
    """The traced scalar of a number of type *kind* whose value the trace
    sees as *value* (a scalar parameter, weak as Python numbers are): a
    NumPy scalar's converted to its dtype, not weak."""
    if issubclass(kind, np.generic):
        return TracedScalar(Map("astype", (value.node,), (), np.dtype(kind)))
    return TracedScalar(value.node)


def flatten_call(walker: Walker, args: list[Any]) -> tuple[list[Any], Structure]:
    """The leaves of a call's arguments (each flattened by *walker*) and
    their structure."""
    leaves: list[Any] = []
    children = []
    for a in args:
        mine, structure = walker.flatten(a)
        leaves.extend(mine)
        children.append(structure)
    return leaves, Structure(("call", tuple(c.key for c in children)), None, tuple(children))


def unflatten_call(walker: Walker, structure: Structure, leaves: list[Any]) -> list[Any]:
    """The arguments of :func:`flatten_call`'s *structure* with *leaves*."""
    args = []
    start = 0
    assert structure.children is not None
    for child in structure.children:
        n = child.leaf_count
        args.append(walker.unflatten(child, leaves[start:start + n]))
        start += n
    return args


__all__ = ["CompiledFunction", "TracedScalar", "compile_key", "flatten_call", "unflatten_call"]
