"""The rest of NumPy's ndarray interface on lazy arrays: conversions to
Python objects (scalars, lists, ``repr``, DLPack), byte sizes, ``flat``,
in-place ``fill``/``sort``, shape assignment, pickling, formatting, and
methods that call the namespace's function of the same name (``x.nonzero()``
is ``la.nonzero(x)``).

Public names: NumPyMethods.
"""

from __future__ import annotations

import operator
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from lazyarray.errors import DTypeError
from lazyarray.ops import shape as shape_ops
from lazyarray.ops.elementwise import imag_part, real_part

if TYPE_CHECKING:
    from lazyarray.ops.inputs import ArrayHandle


class _Flat:
    """``x.flat``: the elements of *x* in C order, to iterate, index and
    assign (``x.flat[3] = 1`` writes into *x*)."""

    def __init__(self, array):
        self._array = array

    def _flat(self):
        return self._array.reshape(-1)

    def __len__(self) -> int:
        return self._array.size

    def __iter__(self):
        return iter(self._flat())

    def __getitem__(self, key):
        # (a copy, as NumPy's flat iterator gives: writes to it stay its own)
        picked = self._flat()[key]
        return picked.copy() if picked.ndim else picked

    def __setitem__(self, key, value) -> None:
        array = self._array
        flat = array.reshape(-1).copy()
        flat[key] = value
        array[...] = flat.reshape(array.shape)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._flat(), dtype=dtype)


class _Flags:
    """NumPy's ``x.flags`` for a lazy array: its values are C-ordered buffers
    that lazyarray writes (through assignment) but never aliases."""

    c_contiguous = contiguous = aligned = True
    owndata = True

    def __init__(self, ndim: int, size: int, writeable: bool = True):
        self.f_contiguous = ndim <= 1 or size <= 1
        self.writeable = writeable

    def __getitem__(self, name: str) -> bool:
        return getattr(self, name.lower())


#: the array class built on these methods (their views are of it)
_Array = TypeVar("_Array", bound="NumPyMethods")


def check_casting(source: np.dtype, dtype: np.dtype, casting: str) -> None:
    """NumPy's errors for a conversion from *source* to *dtype* that the
    *casting* rule forbids (and for a rule NumPy does not have)."""
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe", "same_value"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"'unsafe', 'same_value' (got {casting!r})")
    if not np.can_cast(source, dtype, "unsafe" if casting == "same_value"
                       else casting):  # type: ignore[arg-type]
        raise TypeError(f"Cannot cast array data from {source!r} to {dtype!r} "
                        f"according to the rule '{casting}'")


class NumPyMethods:
    """ndarray methods and attributes of :class:`~lazyarray.handle.LazyArray`
    beyond the arithmetic, views and reductions defined with it."""

    if TYPE_CHECKING:
        # what LazyArray, the class built on these methods, provides them
        _base: ArrayHandle | None
        _readonly: bool

        @property
        def shape(self) -> tuple: ...

        @property
        def dtype(self) -> np.dtype: ...

        @property
        def ndim(self) -> int: ...

        @property
        def size(self) -> int: ...

        def _refuse_value(self, what: str) -> None: ...

        def _host(self) -> np.ndarray: ...

        def _host_copy(self) -> np.ndarray: ...

        def reshape(self, *shape: Any, copy: bool | None = None) -> ArrayHandle: ...

        def __getitem__(self, key: Any) -> ArrayHandle: ...

        def __setitem__(self, key: Any, value: Any) -> None: ...

        def _view(self: _Array, forward: Any, write_back: Any, layout_step: Any) -> _Array: ...

        def swapaxes(self: _Array, axis1: Any, axis2: Any) -> _Array: ...

    #: the lazyarray module (see :func:`lazyarray.protocols.install`)
    _namespace: ClassVar[ModuleType]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[k] for k in range(self.shape[0]))

    def __array_namespace__(self, api_version=None):
        """The lazyarray module, as a Python Array API namespace."""
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"lazyarray implements the array API 2024.12, "
                             f"not {api_version!r}")
        return self._namespace

    # {{{ parts and the last two axes (views)

    @property
    def mT(self: _Array) -> _Array:
        """The transpose of the last two axes (a view)."""
        if self.ndim < 2:
            raise ValueError("mT needs an array of at least 2 dimensions")
        return self.swapaxes(-1, -2)

    @property
    def real(self: _Array) -> _Array:
        """The real part (a view; of a real array, the array itself)."""
        if self.dtype.kind != "c":
            return self._view(lambda b: b, lambda b, v: v, lambda s: s)
        return self._view(real_part, shape_ops.part_write_back("real"), lambda s: s.real)

    @real.setter
    def real(self, value: Any) -> None:
        self.real[...] = value

    @property
    def imag(self: _Array) -> _Array:
        """The imaginary part (a view; of a real array, read-only zeros)."""
        if self.dtype.kind != "c":
            return self._view(imag_part, shape_ops.part_write_back("imag"), lambda s: s)
        return self._view(imag_part, shape_ops.part_write_back("imag"), lambda s: s.imag)

    @imag.setter
    def imag(self, value: Any) -> None:
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def __delitem__(self, key: Any) -> None:
        raise ValueError("cannot delete array elements")

    # }}}

    # {{{ sizes and layout

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of all elements."""
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        """The strides of the value's C-ordered buffer (a lazy view has no
        strides of its own: it is computed into a buffer of its own shape)."""
        return tuple(int(np.prod(self.shape[k + 1:], dtype=np.int64)) * self.dtype.itemsize
                     for k in range(self.ndim))

    @property
    def flags(self) -> _Flags:
        """NumPy's flags: a lazy array's value is one C-ordered buffer."""
        return _Flags(self.ndim, self.size, not self._readonly)

    @property
    def base(self) -> None:
        """None: a lazy array owns its value (views write through their base instead)."""
        return None

    @property
    def flat(self) -> _Flat:
        """The elements in C order (iterate, index, assign)."""
        return _Flat(self)

    # }}}

    # {{{ conversions to Python and bytes

    def tolist(self) -> Any:
        """The value as nested Python lists of Python scalars."""
        self._refuse_value(".tolist()")
        return self._host().tolist()

    def tobytes(self, order: str = "C") -> bytes:
        """The value's bytes."""
        self._refuse_value(".tobytes()")
        return self._host().tobytes(order)  # type: ignore[arg-type]

    def __str__(self) -> str:
        """NumPy's ``str`` of the value (what ``print(x)`` shows)."""
        self._refuse_value("str() or print()")
        return str(self._host())

    def __format__(self, spec: str) -> str:
        self._refuse_value("format() (an f-string)")
        host = self._host()
        return format(host[()] if host.ndim == 0 else host, spec)

    def __reduce__(self):
        """Pickling stores the computed value (unpickled: a new lazy array on
        the default device)."""
        self._refuse_value("pickling")
        return (self._namespace.asarray, (self._host_copy(),))

    def _value_hash(self) -> int:
        """``hash(x)`` of a 0-d array: its value's, as NumPy's scalars hash
        (``x[i]`` as a dict key or in a ``Counter``); arrays of more
        dimensions are unhashable, as NumPy's."""
        if self.ndim:
            raise TypeError(f"unhashable type: an array of shape {self.shape} (only 0-d "
                            "arrays, single values, hash by value)")
        self._refuse_value("hash() (a dict key or set element)")
        return hash(self._host()[()])

    def __round__(self, ndigits: int | None = None):
        """``round(x)`` of a 0-d array as of a NumPy scalar: a Python int,
        or with *ndigits* a 0-d array (NumPy's ``round``)."""
        if self.ndim:
            raise TypeError(f"round() of an array of shape {self.shape}: only 0-d arrays "
                            "(single values) take round(); use np.round(x, decimals)")
        if ndigits is None:
            self._refuse_value("round()")
            value: Any = self._host()[()]
            return round(value)
        return self._namespace.round(self, operator.index(ndigits))

    def __divmod__(self, other):
        return self._namespace.divmod(self, other)

    def __rdivmod__(self, other):
        return self._namespace.divmod(other, self)

    def __contains__(self, value) -> bool:
        return bool((self == value).any())

    def item(self, *index: Any) -> bool | int | float | complex:
        """An element as a Python scalar: the only one, or the one at a flat
        index, or at one index per axis (NumPy's ``item``)."""
        self._refuse_value(".item()")
        if not index:
            return self._host().item()
        where = index[0] if len(index) == 1 else index
        if isinstance(where, tuple):
            if len(where) != self.ndim:
                raise ValueError("incorrect number of indices for array")
            element = self[where]
        else:
            position, size = operator.index(where), self.size
            if not -size <= position < size:
                raise IndexError(f"index {position} is out of bounds for size {size}")
            element = self.reshape(-1)[position]  # type: ignore[index]
        return element._host().item()  # type: ignore[attr-defined]

    def __float__(self):
        self._refuse_value("float()")
        return float(self._host())

    def __int__(self):
        self._refuse_value("int()")
        return int(self._host())

    def __bool__(self):
        self._refuse_value("bool() (an `if`, `while`, `and`, `or` or `not` on an array)")
        return bool(self._host())

    def __complex__(self):
        self._refuse_value("complex()")
        return complex(self._host())

    def __index__(self):
        if self.dtype.kind not in "iu" or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to an index")
        self._refuse_value("use as an index or size (`range(n)`, `x[n]`, `[0] * n`)")
        return int(self._host())

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the computed value (a host copy)."""
        self._refuse_value("DLPack export")
        options = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                     ("copy", copy)) if v is not None}
        return self._host_copy().__dlpack__(**options)

    def __dlpack_device__(self):
        return self._host().__dlpack_device__()

    def __repr__(self) -> str:
        self._refuse_value("repr() or print()")
        return (f"lazyarray({np.array2string(self._host(), separator=', ')}, "
                f"dtype={self.dtype})")

    # }}}

    # {{{ in place

    def fill(self, value: Any) -> None:
        """Every element set to *value* (converted to the array's dtype)."""
        self[...] = value

    def sort(self, axis: int = -1, kind: str | None = None, order: str | None = None, *,
             stable: bool | None = None) -> None:
        """Sorted in place along *axis* (as ``x[...] = la.sort(x, axis)``, on
        the device)."""
        self[...] = self._namespace.sort(self, axis=axis, kind=kind, order=order, stable=stable)

    def _set_shape(self, shape) -> None:
        """``x.shape = shape``: *x* itself reshaped (NumPy's rule: no copy
        may be needed, which always holds for a lazy array's own value)."""
        if self._base is not None:
            raise AttributeError("cannot set the shape of a view of another array; "
                                 "reshape it instead (v = v.reshape(shape))")
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.node = self.reshape(shape).node

    # }}}

    # {{{ the namespace's functions as methods

    def nonzero(self) -> tuple[ArrayHandle, ...]:
        """The indices of the nonzero elements, one array per axis (``la.nonzero``)."""
        return self._namespace.nonzero(self)

    def argsort(self, axis: int | None = -1, kind: str | None = None, order: str | None = None, *,
                stable: bool | None = None) -> ArrayHandle:
        """Indices that sort along *axis* (``la.argsort``)."""
        return self._namespace.argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> ArrayHandle:
        """Where *v* would be inserted to keep this sorted array sorted."""
        return self._namespace.searchsorted(self, v, side=side, sorter=sorter)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
              out: Any = None) -> Any:
        """The sum along the diagonal with *offset* (``la.trace``)."""
        return self._namespace.trace(self, offset, axis1, axis2, dtype, out)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> ArrayHandle:
        """The diagonal with *offset* of the axes *axis1*, *axis2* (``la.diagonal``)."""
        return self._namespace.diagonal(self, offset, axis1, axis2)

    def ptp(self, axis: int | tuple[int, ...] | None = None, out: Any = None, keepdims: bool = False
            ) -> Any:
        """Largest minus smallest value along *axis* (``la.ptp``)."""
        return self._namespace.ptp(self, axis=axis, out=out, keepdims=keepdims)

    def compress(self, condition: Any, axis: int | tuple[int, ...] | None = None, out: Any = None
                 ) -> Any:
        """Elements where *condition* holds along *axis* (``la.compress``)."""
        return self._namespace.compress(condition, self, axis=axis, out=out)

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        """Elements chosen from *choices* by this index array (``la.choose``)."""
        return self._namespace.choose(self, choices, out=out, mode=mode)

    def view(self, dtype: Any = None, type: Any = None) -> ArrayHandle:
        """A view of the whole array (another dtype's view of the bytes is not
        supported: use ``astype`` to convert values)."""
        if dtype is not None and np.dtype(dtype) != self.dtype or type is not None:
            raise DTypeError("lazyarray cannot reinterpret an array's bytes as another "
                             f"dtype ({self.dtype} as {dtype}); use astype to convert values")
        return self[...]

    # }}}
