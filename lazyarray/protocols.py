"""NumPy's protocols on lazy arrays: ``np.sin(x)`` and ``np.add.reduce(x)``
(``__array_ufunc__``), ``np.concatenate([x, y])`` and any other NumPy
function (``__array_function__``). Each goes to lazyarray's version of the
function when there is one, else runs NumPy on the host
(:mod:`lazyarray.fallback`).

Public names: install, array_ufunc, array_function, implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from lazyarray.errors import NoDeviceVersion
from lazyarray.fallback import device_or_host, host_call
from lazyarray.handle import LazyArray
from lazyarray.ops import linalg
from lazyarray.ops.elementwise import elementwise
from lazyarray.ops.inputs import node_of as _node
from lazyarray.ufunc_templates import UFUNCS

#: NumPy's submodules whose functions lazyarray's namespaces of the same
#: names implement (``np.linalg.norm`` -> ``la.linalg.norm``)
_NAMESPACES = {"numpy": "", "numpy.linalg": "linalg", "numpy.fft": "fft",
               "numpy.lib.stride_tricks": "lib.stride_tricks"}


def install(namespace: ModuleType) -> None:
    """Give lazy arrays NumPy's protocols and the Array API's namespace,
    *namespace* (the lazyarray module, once it has all its functions: the
    protocols and the methods that call its functions, ``x.nonzero()``,
    answer with them)."""
    LazyArray._namespace = namespace
    LazyArray.__array_ufunc__ = _array_ufunc
    LazyArray.__array_function__ = _array_function


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    return array_ufunc(ufunc, method, inputs, kwargs)


def _array_function(self, func, types, args, kwargs):
    return array_function(func, args, kwargs)


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``ufunc.method(*inputs, **kwargs)`` with lazy arrays among the inputs."""
    out = kwargs.get("out")
    out = out if isinstance(out, tuple) or out is None else (out,)
    if out is not None and len(out) == 1 and isinstance(out[0], LazyArray):
        # ``out=x``: the result written into x, as ``x op= y`` writes it
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        result = array_ufunc(ufunc, method, inputs, kwargs)
        if result is NotImplemented:
            return result
        return out[0]._in_place(ufunc.__name__, result.node)
    if out is None and kwargs.get("where", True) is True \
            and kwargs.get("casting", "same_kind") == "same_kind":
        kwargs = {k: v for k, v in kwargs.items() if k not in ("out", "where", "casting")}
    if method != "__call__" or kwargs:
        return _ufunc_method(ufunc, method, inputs, kwargs, out)
    if ufunc in (np.equal, np.not_equal) and any(x is None for x in inputs):
        # (each element compared with None, as ``x == None``)
        array = next(x for x in inputs if isinstance(x, LazyArray))
        return array == None if ufunc is np.equal else array != None    # noqa: E711
    if ufunc is np.matmul:
        return LazyArray(linalg.matmul(*(_node(x) for x in inputs)))
    if ufunc.__name__ in ("vecdot", "divmod", "modf"):
        return getattr(LazyArray._namespace, ufunc.__name__)(*inputs)
    if ufunc.__name__ not in UFUNCS:
        return host_call(ufunc, inputs, {})
    return device_or_host(lambda: LazyArray(elementwise(ufunc.__name__, *map(_node, inputs))),
                          ufunc, inputs)


def array_function(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """NumPy's *func* called with lazy arrays among its arguments."""
    impl = implementation(func)
    if impl is None:
        return host_call(func, args, kwargs)
    try:
        return impl(*args, **kwargs)
    except NoDeviceVersion:             # (dtypes the device does not compute: long doubles)
        return host_call(func, args, kwargs)


def _ufunc_method(ufunc, method: str, inputs: tuple, kwargs: dict, out):
    """``np.<ufunc>.<method>(...)`` (or a call with ``where=``/``dtype=``) on
    lazy arrays: lazyarray's ufunc object of that name, else NumPy on the host."""
    own = getattr(LazyArray._namespace, ufunc.__name__, None)
    if out is not None:
        kwargs = dict(kwargs, out=out if len(out) > 1 else out[0])
    if getattr(own, "_ufunc", None) is ufunc:
        return getattr(own, "__call__" if method == "__call__" else method)(*inputs, **kwargs)
    return host_call(getattr(ufunc, method) if method != "__call__" else ufunc, inputs, kwargs,
                     f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"))


def implementation(func: Callable[..., Any]) -> Callable | None:
    """lazyarray's version of the NumPy function *func* (called for
    ``np.f(lazy)``), or None: a function of the same name in the matching
    lazyarray namespace, defined by lazyarray."""
    module = getattr(func, "__module__", None) or "numpy"
    sub = _NAMESPACES.get(module, None if module.startswith("numpy.") else "")
    if sub is None:
        return None
    namespace: Any = LazyArray._namespace
    for part in sub.split(".") if sub else ():
        namespace = getattr(namespace, part, None)
    impl = getattr(namespace, func.__name__, None) if namespace is not None else None
    if impl is None or not callable(impl) or isinstance(impl, type) \
            or not (getattr(impl, "__module__", None) or "").startswith("lazyarray") \
            or getattr(impl, "__module__", None) == "lazyarray.fallback":
        return None
    return impl
