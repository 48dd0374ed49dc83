"""Running a NumPy function on host arrays: the check that every lazy array
among the arguments lives on the host tier, the arguments unwrapped to their
NumPy buffers, the function called, and its array results wrapped again
(small ones as host arrays, large ones moved to the device for later fused
work; an argument's buffer returned as it is comes back as the same handle).

Public names: host_ready, host_call, quick_call, quick_ufunc, readable, wrap, wrap_array,
mutated, forwarding, device_dtype, broadcasts_large, widened, WIDE, BROADCAST_OPERATIONS,
MUTATION, OWN_ANSWERS.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

import lazyarray.run as _run
from lazyarray.handle import LazyArray, asarray
from lazyarray.host.fusion import PENDING, UFUNCS, flush
from lazyarray.host.policy import broadcast_limit, host_enabled, host_limit
from lazyarray.mapper import is_kind
from lazyarray.values import on_device

#: a counter of writes into host buffers: a host array's device copy is
#: current while the counter has not moved since it was made
MUTATION = [0]

#: NumPy functions (and ufunc methods) that write into an argument
_WRITERS = frozenset(["copyto", "put", "put_along_axis", "place", "putmask",
                      "fill_diagonal", "at", "shuffle"])

#: NumPy functions whose host-tier answer is lazyarray's own (np.unique_values of
#: a host array sorted, as on the device), by NumPy's function: filled by
#: lazyarray.host.namespace
OWN_ANSWERS: dict = {}

#: argument types that are never device data
_PLAIN = frozenset([int, float, bool, complex, str, type(None), slice, type(Ellipsis),
                    np.ndarray, np.dtype, type, np.float64, np.float32, np.int64, np.int32,
                    np.bool_, np.complex128])

#: results up to this many elements stay on the host without asking the device
#: for the tier's limit: the least limit of any device (see
#: Target.host_tier_elements), so that small work never needs OpenCL
SMALL = 1 << 16

_ndarray = np.ndarray
_new = object.__new__
#: the classes of lazy arrays (set when lazyarray.host.array is imported)
CLASSES: list = []
_NO = object()


def mutated() -> None:
    """Note that a host buffer was written (device copies are out of date)."""
    MUTATION[0] += 1


def _ready(value) -> bool:
    kind = type(value)
    if kind in _PLAIN or kind is CLASSES[1]:
        return True
    if isinstance(value, CLASSES[1]):
        _ = value._hv                   # (a pending host array, computed: host.pending)
        return True
    if kind is list or kind is tuple:
        return all(_ready(v) for v in value)
    if isinstance(value, dict):
        return all(_ready(v) for v in value.values())
    if isinstance(value, CLASSES[0]):
        return readable(value)
    return not hasattr(value, "base_data")


def readable(array: LazyArray) -> bool:
    """Whether the device array *array* is small and its value is on the
    device already, as a computed value or a contiguous part of one (no
    kernel runs to read it): NumPy may then compute on a host copy."""
    node = array.node
    size = 1
    for n in node.shape:
        size *= n
    if size > SMALL:
        return False
    if is_kind(node, "input") and not node.owned and size > 1:
        # (an array handed in as a device buffer is read anew each time: work
        # on the whole of it stays on the device, where its data is)
        return False
    while True:
        if is_kind(node, "input"):
            return node.data is not None
        if on_device(node) is not None:
            return True
        found = _run.contiguous_part(node)
        if found is None:
            return False
        node = found[0]


def host_ready(args: tuple, kwargs: dict | None = None, writes_first: bool = False) -> bool:
    """Whether NumPy may run on these arguments here: the host tier is on and
    every lazy array among them (in lists, tuples and dicts too) is a host
    array or a small device array NumPy can read (:func:`readable`), and
    nothing NumPy writes (``out=``, the first argument of a function that
    writes into it, *writes_first*) is a device array."""
    if not host_enabled():
        return False
    host = CLASSES[1]
    for value in args:
        kind = type(value)
        if kind is not host and kind not in _PLAIN and not _ready(value):
            return False
    if kwargs:
        for value in kwargs.values():
            kind = type(value)
            if kind is not host and kind not in _PLAIN and not _ready(value):
                return False
    if writes_first and args and isinstance(args[0], CLASSES[0]) \
            and type(args[0]) is not host:
        return False
    if kwargs and "out" in kwargs:
        out = kwargs["out"]
        for target in (out if type(out) is tuple else (out,)):
            if isinstance(target, CLASSES[0]) and type(target) is not host:
                return False
    return True


def _unwrap(value, outside: list) -> Any:
    kind = type(value)
    if kind is CLASSES[1] or isinstance(value, CLASSES[1]):
        return value._hv
    if kind is list or kind is tuple:
        return kind(_unwrap(v, outside) for v in value)
    if kind is _ndarray:
        outside.append(value)
    elif isinstance(value, dict):
        return {k: _unwrap(v, outside) for k, v in value.items()}
    elif isinstance(value, CLASSES[0]):
        # (a small device array's host copy, which lazyarray may keep: results
        # sharing its memory are copied)
        value = value._host()
        outside.append(value)
    return value


def _drop_device(kwargs: dict) -> dict:
    """*kwargs* without a lazyarray ``device=`` (NumPy knows only ``"cpu"``)."""
    if "device" in kwargs and not isinstance(kwargs["device"], (str, type(None))):
        kwargs = {k: v for k, v in kwargs.items() if k != "device"}
    return kwargs


#: scalar argument types passed to NumPy as they are
_SCALARS = frozenset([int, float, bool, complex, type(None), np.float64, np.float32,
                      np.int64, np.int32, np.bool_, np.complex128, str])


#: NumPy's scalar types (a 0-d host array may hold one as its value)
NUMPY_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdgFDG")


def holding(value: Any) -> Any:
    """A new host array whose value is *value* (a NumPy array it keeps, or a
    NumPy scalar)."""
    handle = _new(CLASSES[1])
    handle._hv = value
    handle._copy = None
    return handle


def dressed(dispatch: Callable, name: str, impl: Callable) -> Callable:
    """*dispatch*, which puts the host tier in front of lazyarray's *impl*,
    named and documented as *impl* (its signature too)."""
    dispatch.__name__ = dispatch.__qualname__ = name
    dispatch.__doc__ = impl.__doc__
    dispatch.__module__ = impl.__module__
    dispatch.__wrapped__ = impl             # type: ignore[attr-defined]
    dispatch._host_tier = True              # type: ignore[attr-defined]
    return dispatch


#: keyword argument types NumPy takes as they are
_NUMBERS = frozenset([int, float, bool, type(None), str, np.dtype, type])


def _numbers(values) -> bool:
    """Whether *values* are numbers, strings, dtypes or tuples of ints (no
    arrays: NumPy's answer needs nothing of lazyarray's)."""
    for v in values:
        kind = type(v)
        if kind not in _NUMBERS and not (kind is tuple and all(type(x) is int for x in v)):
            return False
    return True


def quick_call(func: Callable, args: tuple, kwargs: dict | None = None) -> Any:
    """``func(*args, **kwargs)`` by NumPy when every argument is a host array
    or a scalar and every keyword argument passes :func:`_numbers` (the
    common call, checked and unwrapped in one pass), else _NO. The caller
    checked that the host tier is on."""
    host = CLASSES[1]
    if kwargs and not _numbers(kwargs.values()):
        return _NO
    if PENDING and getattr(func, "__name__", "") in _WRITERS:
        flush()                         # (before a write: see host.fusion)
    if not kwargs and len(args) == 1 and type(args[0]) is host:
        # (a unary function of one host array: the commonest call)
        result = func(args[0]._hv)
    else:
        plain = _buffers(args)
        if plain is None:
            return _NO
        result = func(*plain, **kwargs) if kwargs else func(*plain)
    kind = type(result)
    if kind is _ndarray:
        for a in args:
            if type(a) is host and a._hv is result:
                return a
        return holding(result) if result.size <= SMALL else wrap_array(result)
    if kind in NUMPY_SCALARS:
        return holding(result)
    if func.__name__ in _WRITERS:
        mutated()
    return wrap(result, args)


def _buffers(args: tuple) -> list | None:
    """*args* as NumPy takes them (:func:`_unwrapped`), else None."""
    plain = []
    for a in args:
        value = _unwrapped(a, 3)
        if value is _NO:
            return None
        plain.append(value)
    return plain


def _unwrapped(a: Any, depth: int) -> Any:
    """*a* as NumPy takes it: a host array's buffer (a pending one computed
    first), a scalar itself, a list or tuple (nested up to *depth* levels)
    of those with each item so (itself where nothing changed); _NO for
    anything else (the C call's rule too, lazyarray.host.cdispatch)."""
    host = CLASSES[1]
    kind = type(a)
    if kind is host:
        return a._hv
    if kind in _SCALARS:
        return a
    if isinstance(a, host):
        return a._hv                    # (a pending host array, computed now)
    if depth and (kind is list or kind is tuple):
        items = [_unwrapped(item, depth - 1) for item in a]
        if any(v is _NO for v in items):
            return _NO
        return a if all(v is item for v, item in zip(items, a)) else kind(items)
    return _NO


#: the NumPy ufuncs whose calls on large host arrays are deferred, and the
#: function deferring them (lazyarray.host.pending.deferred_call, set there)
DEFERRED_UFUNCS = frozenset(UFUNCS.values())
DEFERRED_CALL: list = []


def quick_ufunc(ufunc: Callable, args: tuple) -> Any:
    """``ufunc(*args)`` by NumPy when every argument is a host array or a
    scalar (:func:`quick_call`'s common call of a ufunc, positional
    arguments only, without its general checks), deferred where it can be
    (see :mod:`lazyarray.host.fusion`), else _NO. The caller checked that
    the host tier is on."""
    if ufunc in DEFERRED_UFUNCS:
        pending = DEFERRED_CALL[0](ufunc, args)
        if pending is not None:
            return pending
    host = CLASSES[1]
    plain = _buffers(args)
    if plain is None:
        return _NO
    result = ufunc(*plain)
    if type(result) is _ndarray:
        if result.size <= SMALL:
            handle = _new(host)
            handle._hv = result
            handle._copy = None
            return handle
        return wrap_array(result)
    if type(result) in NUMPY_SCALARS:
        # (of numbers only: NumPy's scalar, as NumPy gives it)
        return result if all(p is a for p, a in zip(plain, args)) else holding(result)
    return wrap(result, args)


def host_call(func: Callable, args: tuple, kwargs: dict | None = None) -> Any:
    """``func(*args, **kwargs)`` by NumPy with host arrays as their buffers;
    results wrapped (see :func:`wrap`)."""
    if PENDING and ((kwargs and kwargs.get("out") is not None)
                    or getattr(func, "__name__", "") in _WRITERS):
        flush()                         # (before a write: see host.fusion)
    host = CLASSES[1]
    outside: list = []
    plain = []
    for a in args:
        kind = type(a)
        if kind is host:
            plain.append(a._hv)
        elif kind is _ndarray:
            outside.append(a)
            plain.append(a)
        elif kind in _PLAIN:
            plain.append(a)
        else:
            plain.append(_unwrap(a, outside))
    if kwargs:
        out = kwargs.get("out")
        kwargs = _drop_device({k: _unwrap(v, outside) for k, v in kwargs.items()})
        if out is not None:
            mutated()
            args = (*args, *(out if type(out) is tuple else (out,)))
        result = func(*plain, **kwargs)
    else:
        result = func(*plain)
    if type(result) is _ndarray:
        for a in args:
            if type(a) is host and a._hv is result:
                return a
        if outside and any(np.may_share_memory(result, a) for a in outside):
            result = result.copy()
        return wrap_array(result)
    if getattr(func, "__name__", "") in _WRITERS:
        mutated()
    if result is None or type(result) is bool or type(result) is int:
        return result
    return wrap(result, args)


def wrap(result: Any, args: tuple = ()) -> Any:
    """NumPy's *result* as lazyarray returns it: an array (or NumPy scalar, as
    a 0-d array) as :func:`wrap_array` wraps it; a buffer of a host array
    among *args* as that array; tuples, lists and named tuples element by
    element; anything else as it is."""
    kind = type(result)
    if kind is _ndarray:
        host = CLASSES[1]
        for a in args:
            if type(a) is host and a._hv is result:
                return a
        return wrap_array(result)
    if isinstance(result, np.generic):
        return holding(result)
    if kind is tuple or kind is list:
        return kind(wrap(r, args) for r in result)
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return kind(*(wrap(r, args) for r in result))
    return result


def wrap_array(value: np.ndarray) -> LazyArray:
    """*value* as a host array (it gives up *value*), or for a result larger
    than the tier keeps on the host and of a dtype kernels compute, a device
    array holding a copy."""
    if value.size > SMALL:
        limit = host_limit()
        if limit is not None and value.size > limit and device_dtype(value.dtype):
            return asarray(value)
    return holding(value)


#: the NumPy views with new axes (``x[:, None]``) that host arrays hold, by
#: id, while they live: only an operation on one of them is asked whether it
#: :func:`broadcasts_large` (so that other operations pay one test of this
#: table's emptiness)
WIDE: dict[int, weakref.ref] = {}


#: the operators and ufuncs (by name) whose large broadcasts of host arrays
#: go to the device (:func:`broadcasts_large`): those whose answers, types
#: and errors there are NumPy's for every real dtype (not ``**``: integers
#: to negative powers raise in NumPy; not the functions NumPy computes in
#: float16 for small integers, as ``arctan2``)
BROADCAST_OPERATIONS = frozenset([
    "add", "sub", "mul", "truediv", "lt", "le", "gt", "ge", "eq", "ne", "xor",
    "and", "or", "subtract", "multiply", "true_divide", "divide", "less", "less_equal",
    "greater", "greater_equal", "equal", "not_equal", "maximum", "minimum", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"])


def widened(view: np.ndarray) -> None:
    """Note that *view* has new axes (see :data:`WIDE`)."""
    key = id(view)

    def forget(_: weakref.ref) -> None:
        WIDE.pop(key, None)
    WIDE[key] = weakref.ref(view, forget)


def broadcasts_large(values: tuple) -> bool:
    """Whether an elementwise operation of *values* (NumPy arrays and
    scalars, one of them an array) broadcasts them to a result larger than
    the host tier computes (``x[:, None] - y[None, :]`` of small arrays;
    :func:`~lazyarray.host.policy.broadcast_limit`): that work is
    recorded for the device, where it fuses with what follows, instead of
    computed by NumPy and copied there."""
    size = 1
    shapes = []
    for v in values:
        if type(v) is _ndarray:
            size *= v.size or 1
            shapes.append(v.shape)
            # (real dtypes: complex comparisons are NumPy's own order)
            if not device_dtype(v.dtype) or v.dtype.kind == "c":
                return False
        elif type(v) not in (int, float, bool):
            return False
    if size <= SMALL or len(shapes) < 2:
        return False
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return False                    # (NumPy raises its own error)
    size = 1
    for n in shape:
        size *= n
    if size <= SMALL:
        return False
    limit = broadcast_limit()
    return limit is not None and size > limit


def device_dtype(dtype: np.dtype) -> bool:
    """Whether kernels compute on arrays of *dtype*."""
    return dtype.kind in "biufc" and dtype != np.float16 and dtype.isnative


#: quick_call's common case (positional arguments only, no writer) in C, once
#: lazyarray.host.cdispatch installed it (``[call]``), else empty
C_CALL: list = []


def forwarding(name: str, impl: Callable, numpy_func: Callable) -> Callable:
    """*impl* (lazyarray's function *name*), with calls whose arrays are all
    on the host run by *numpy_func* instead."""
    writes = name in _WRITERS

    def dispatch(*args, **kwargs):
        if host_enabled():
            try:
                result = C_CALL[0](numpy_func, args) if C_CALL and not kwargs \
                    and not writes else \
                    quick_call(numpy_func, args, _drop_device(kwargs) if kwargs else None)
            except TypeError:
                result = _NO
            if result is not _NO:
                return result
        if host_ready(args, kwargs, name in _WRITERS):
            try:
                return host_call(numpy_func, args, kwargs)
            except TypeError:
                # an Array API spelling NumPy lacks (eye(n_cols=), sort(descending=)):
                # lazyarray's function takes it, or raises its own error
                pass
        return impl(*args, **kwargs)
    return dressed(dispatch, name, impl)
