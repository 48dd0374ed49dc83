"""NumPy's ufuncs (and their Array API spellings) and where, on lazy arrays."""

from __future__ import annotations

import builtins as _builtins
from typing import TYPE_CHECKING, Any, overload

import numpy as _np

from lazyarray.fallback import _note, host_call
from lazyarray.handle import LazyArray, asarray
from lazyarray.host import cdispatch as _cdispatch
from lazyarray.host.dispatch import _NO
from lazyarray.host.dispatch import host_call as _numpy_call
from lazyarray.host.dispatch import host_ready as _host_ready
from lazyarray.host.dispatch import quick_ufunc as _quick_ufunc
from lazyarray.host.policy import _MODES
from lazyarray.ops.elementwise import elementwise
from lazyarray.ops.inputs import node_of as _node
from lazyarray.tracing import ACTIVE_TRACES as _ACTIVE_TRACES
from lazyarray.ufunc_templates import UFUNCS as _UFUNCS

#: ufunc -> the lazyarray reduction computing its ``reduce`` (and the
#: identity that a masked-out element stands for)
_REDUCTIONS = {"add": ("sum", 0), "multiply": ("prod", 1), "maximum": ("max", None),
               "minimum": ("min", None), "logical_and": ("all", True),
               "logical_or": ("any", False)}
#: ufunc -> the lazyarray scan computing its ``accumulate``
_SCANS = {"add": "cumsum", "multiply": "cumprod"}
_NO_INITIAL = _np._NoValue


class Ufunc:
    """A NumPy ufunc on lazy arrays, as NumPy's ufunc objects behave: called
    with ``out=`` (also positionally), ``where=`` and ``dtype=``, and with the
    methods ``reduce``, ``accumulate``, ``outer`` and ``at``. What lazyarray
    cannot compute on the device (``at``, ``reduceat``, other reductions and
    scans) runs on the host with a :class:`LazyArrayHostFallbackWarning`."""

    def __init__(self, name: str, public_name: str | None = None):
        self._ufunc = getattr(_np, name)
        self.__name__ = public_name or name
        self.__doc__ = f"NumPy's {name} ufunc on lazy arrays (see numpy.{name})."

    def __getattr__(self, attribute: str):
        # nin, nout, nargs, identity, types, signature: NumPy's
        return getattr(self._ufunc, attribute)

    def __repr__(self) -> str:
        return f"<lazyarray ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        if not kwargs and _MODES[-1] != "device" and not _ACTIVE_TRACES[0]:
            # (host_enabled's common case inline: a ufunc of host arrays and numbers)
            result = _quick_ufunc(self._ufunc, args)
            if result is not _NO:
                return result
        if _host_ready(args, kwargs):
            return _numpy_call(self._ufunc, args, kwargs)
        return self._on_device(*args, **kwargs)

    def _on_device(self, *args, out=None, where=True, dtype=None, casting="same_kind",
                   order="K", subok=True, signature=None, **unknown):
        ufunc = self._ufunc
        if unknown:
            raise TypeError(f"{self.__name__}() got an unexpected keyword argument "
                            f"'{next(iter(unknown))}'")
        if casting not in _CASTINGS:
            raise ValueError(f"casting must be one of {', '.join(map(repr, _CASTINGS))} "
                             f"(got {casting!r})")
        if len(args) == ufunc.nin + ufunc.nout and out is None:
            args, out = args[:ufunc.nin], args[ufunc.nin:]
        if len(args) != ufunc.nin:
            raise TypeError(f"{self.__name__}() takes {ufunc.nin} positional argument(s) "
                            f"but {len(args)} were given")
        out = out if isinstance(out, tuple) or out is None else (out,)
        if out is not None and len(out) == 1 and out[0] is None:
            out = None
        if out is not None and len(out) != ufunc.nout:
            raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
        args = tuple(asarray(a) if not isinstance(a, LazyArray) and i == 0
                     and not _builtins.any(isinstance(b, LazyArray) for b in args) else a
                     for i, a in enumerate(args))
        if dtype is not None:
            args = tuple(asarray(a).astype(dtype) for a in args)
        result = ufunc(*args)
        if where is not True:
            if out is None:
                raise TypeError(f"{self.__name__}(..., where=...) without out=: NumPy leaves "
                                "the unselected elements uninitialized; pass out=")
            base = out[0] if ufunc.nout == 1 else out
            result = (_where_each(where, result, base) if ufunc.nout == 1 else
                      tuple(_where_each(where, r, o) for r, o in zip(result, base)))
        if out is None:
            return result
        results = result if ufunc.nout > 1 else (result,)
        for target, value in zip(out, results):
            _write(target, value, self.__name__, casting)
        return out[0] if ufunc.nout == 1 else out

    def reduce(self, a: Any, axis: int | tuple[int, ...] | None = 0, dtype: Any = None,
               out: Any = None, keepdims: bool = False, initial: Any = _NO_INITIAL,
               where: Any = True) -> Any:
        """NumPy's ufunc.reduce: on the device for add, multiply, maximum,
        minimum, logical_and and logical_or."""
        name = self._ufunc.__name__
        if name not in _REDUCTIONS:
            return self._on_host("reduce", (a,), dict(axis=axis, dtype=dtype, keepdims=keepdims,
                                                       initial=initial, where=where), out)
        reduction, identity = _REDUCTIONS[name]
        a = asarray(a)
        if where is not True:
            if identity is None and initial is _NO_INITIAL:
                raise ValueError(f"reduction operation '{name}' does not have an identity, "
                                 "so to use a where mask one has to specify 'initial'")
            a = _choose(where, a, identity if identity is not None else initial)
        if dtype is not None:
            a = a.astype(dtype)
        kwargs = {"dtype": dtype} if reduction in ("sum", "prod") and dtype is not None else {}
        result = getattr(a._namespace, reduction)(a, axis=axis, keepdims=keepdims, **kwargs)
        if initial is not _NO_INITIAL:
            result = self._ufunc(result, initial)
            if dtype is not None:
                result = result.astype(dtype)
        return _into(out, result, self.__name__)

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """NumPy's ufunc.accumulate: on the device for add and multiply."""
        scan = _SCANS.get(self._ufunc.__name__)
        if scan is None:
            return self._on_host("accumulate", (array,), dict(axis=axis, dtype=dtype), out)
        array = asarray(array)
        result = getattr(array._namespace, scan)(array, axis=axis, dtype=dtype)
        return _into(out, result, self.__name__)

    def outer(self, a: Any, b: Any, **kwargs: Any) -> Any:
        """NumPy's ufunc.outer: every element of *a* with every element of *b*."""
        a, b = asarray(a), asarray(b)
        return self(a.reshape(a.shape + (1,) * b.ndim), b, **kwargs)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        """NumPy's ufunc.at (unbuffered, repeated indices apply again): on the
        host; *a* gets the result."""
        _note(f"np.{self._ufunc.__name__}.at")
        if not isinstance(a, LazyArray):
            raise TypeError(f"{self.__name__}.at needs a lazy array to write into")
        host = _np.array(a)
        index = _host_values(indices)
        args = () if b is None else (_host_values(b),)
        self._ufunc.at(host, index, *args)
        a[...] = host

    def reduceat(self, array: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: Any = None) -> Any:
        """NumPy's ufunc.reduceat, on the host."""
        return self._on_host("reduceat", (array, indices), dict(axis=axis, dtype=dtype), out)

    def _on_host(self, method: str, args: tuple, kwargs: dict, out):
        """NumPy's *method* with lazy arrays copied to the host (a fallback)."""
        result = host_call(getattr(self._ufunc, method), args, kwargs,
                           f"np.{self._ufunc.__name__}.{method}")
        return _into(out, result, self.__name__)


def _host_tier_method(name: str):
    """Ufunc.*name* with calls whose arrays are all host arrays run by NumPy."""
    device = getattr(Ufunc, name)

    def method(self, *args, **kwargs):
        if _host_ready(args, kwargs, name == "at"):
            return _numpy_call(getattr(self._ufunc, name), args, kwargs)
        return device(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = device.__doc__
    return method


for _method in ("reduce", "accumulate", "outer", "at", "reduceat"):
    setattr(Ufunc, _method, _host_tier_method(_method))
# (calls of host arrays and numbers through HostArray's C methods' module)
_cdispatch.calls_of(Ufunc)


def _host_values(value):
    if isinstance(value, LazyArray):
        return _np.asarray(value)
    if isinstance(value, tuple):
        return tuple(_host_values(v) for v in value)
    return value


def _where_each(where, value, base):
    return _choose(where, value, base)


#: NumPy's casting rules
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _write(target, value, name: str, casting: str) -> None:
    """*value* written into the array *target* (NumPy's out=, converted by
    the *casting* rule)."""
    if isinstance(target, LazyArray):
        target._in_place(name, asarray(value).node, casting)
    elif isinstance(target, _np.ndarray):
        _np.copyto(target, _np.asarray(value), casting=casting)  # type: ignore[arg-type]
    else:
        raise TypeError(f"out= must be an array, not {type(target).__name__}")


def _into(out, result, name: str):
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) else out
    _write(target, result, name, "same_kind")
    return target


for _name in sorted(_UFUNCS):
    if hasattr(_np, _name):
        globals()[_name] = Ufunc(_name)

#: Array API (and NumPy alias) spellings of the ufuncs
_UFUNC_ALIASES = {
    "abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
    "asinh": "arcsinh", "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "bitwise_invert": "invert", "bitwise_not": "invert", "conj": "conjugate",
    "pow": "power"}
for _alias, _name in _UFUNC_ALIASES.items():
    globals()[_alias] = Ufunc(_name, _alias)

if TYPE_CHECKING:
    # the ufuncs the package imports by name, as type checkers see them
    arctan2: Ufunc
    conj: Ufunc
    copysign: Ufunc
    floor_divide: Ufunc
    isinf: Ufunc
    isnan: Ufunc
    log10: Ufunc
    maximum: Ufunc
    minimum: Ufunc
    not_equal: Ufunc
    remainder: Ufunc
    sign: Ufunc
    sqrt: Ufunc
    trunc: Ufunc


def _choose(condition, x, y) -> LazyArray:
    return LazyArray(elementwise("where", _node(condition), _node(x), _node(y)))


@overload
def where(condition: Any, /) -> tuple[LazyArray, ...]: ...
@overload
def where(condition: Any, x: Any, y: Any, /) -> LazyArray: ...
def where(condition: Any, x: Any = None, y: Any = None, /) -> LazyArray | tuple[LazyArray, ...]:
    """Elements of *x* where *condition* holds, else of *y* (NumPy's where);
    with the condition alone, the indices where it holds (``nonzero``)."""
    if x is None and y is None:
        return LazyArray._namespace.nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _choose(condition, x, y)


__all__ = ["where", "Ufunc", *(n for n in sorted(_UFUNCS) if hasattr(_np, n)), *_UFUNC_ALIASES]
