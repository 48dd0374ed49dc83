"""Data types: conversions, promotion, finfo/iinfo and the Array API's inspection."""

from __future__ import annotations

import builtins as _builtins
from typing import Any

import numpy as _np

import lazyarray.run as _run
from lazyarray.handle import LazyArray, asarray
from lazyarray.target import Device

# {{{ data types

def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> LazyArray:
    """*x* converted to *dtype* (the Array API's astype)."""
    x = asarray(x)
    if device is not None:
        x = x.to_device(device)
    return x.astype(dtype, copy=copy)


def _dtype_of(x):
    return x.dtype if isinstance(x, LazyArray) else x


def result_type(*arrays_and_dtypes: Any) -> _np.dtype:
    """NumPy's result_type; lazy arrays count by their dtypes."""
    return _np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


def can_cast(from_: Any, to: Any, /, casting: str = "safe") -> _builtins.bool:
    """Whether *from_* (a dtype or an array's dtype) casts to *to* under *casting*."""
    return _builtins.bool(_np.can_cast(_dtype_of(from_), to, casting=casting))  # type: ignore[arg-type]


class _FloatInfo:
    """The Array API's finfo object: limits as Python floats."""

    def __init__(self, info):
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(info.resolution)
        self.tiny = self.smallest_normal
        self.precision = int(info.precision)
        self.dtype = info.dtype

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"dtype={self.dtype})")


def finfo(type: Any, /) -> _FloatInfo:
    """Machine limits of a floating dtype (or of an array's dtype), as Python
    numbers (complex types give their real part's limits)."""
    return _FloatInfo(_np.finfo(_dtype_of(type)))


def iinfo(type: Any, /) -> _np.iinfo:
    """Machine limits of an integer dtype (or of an array's dtype)."""
    return _np.iinfo(_dtype_of(type))


def isdtype(dtype: Any, kind: Any) -> _builtins.bool:
    """Whether *dtype* is of *kind* (the Array API's isdtype)."""
    return _builtins.bool(_np.isdtype(_np.dtype(dtype), kind))


class _NamespaceInfo:
    """What ``la.__array_namespace_info__()`` returns: lazyarray's devices and
    dtypes, for the Array API's inspection functions."""

    _KINDS = {"bool": ("bool",), "signed integer": ("int8", "int16", "int32", "int64"),
              "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
              "real floating": ("float32", "float64"),
              "complex floating": ("complex64", "complex128")}
    _KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
    _KINDS["numeric"] = (_KINDS["integral"] + _KINDS["real floating"]
                         + _KINDS["complex floating"])

    def capabilities(self) -> dict:
        return {"boolean indexing": False, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> Device:
        return Device(_run.default_queue().device)

    def devices(self) -> list:
        return [self.default_device()]

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": _np.dtype(_np.float64),
                "complex floating": _np.dtype(_np.complex128),
                "integral": _np.dtype(_np.int64), "indexing": _np.dtype(_np.int64)}

    def dtypes(self, *, device=None, kind=None) -> dict:
        if kind is None:
            names = self._KINDS["bool"] + self._KINDS["numeric"]
        else:
            kinds = (kind,) if isinstance(kind, str) else tuple(kind)
            names = []  # type: ignore[assignment]
            for k in kinds:
                if k not in self._KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}")
                names += [n for n in self._KINDS[k] if n not in names]  # type: ignore[operator]
        return {n: _np.dtype(n) for n in names}


def __array_namespace_info__() -> _NamespaceInfo:
    """The Array API inspection object (devices, default and supported dtypes)."""
    return _NamespaceInfo()

# }}}


#: NumPy's dtype names, aliases and abstract scalar types (``la.double``,
#: ``la.intc``, ``np.issubdtype(x.dtype, la.floating)``)
DTYPE_NAMES = ("dtype", "double", "single", "half", "cdouble", "csingle", "clongdouble",
               "longdouble", "float16", "int_", "intc", "intp", "uint", "uintc", "uintp",
               "byte", "ubyte", "short", "ushort", "longlong", "ulonglong", "long", "ulong",
               "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
               "floating", "complexfloating", "bool_", "object_", "str_", "bytes_")
for _name in DTYPE_NAMES:
    if hasattr(_np, _name):
        globals()[_name] = getattr(_np, _name)


def issubdtype(arg1: Any, arg2: Any) -> _builtins.bool:
    """NumPy's issubdtype (lazy arrays' dtypes are NumPy dtypes)."""
    return _np.issubdtype(_dtype_of(arg1), _dtype_of(arg2))


__all__ = ["astype", "result_type", "can_cast", "finfo", "iinfo", "isdtype", "issubdtype",
           "__array_namespace_info__", *(n for n in DTYPE_NAMES if hasattr(_np, n))]
