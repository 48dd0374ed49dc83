"""Kernel data: arguments and temporaries.

Public names: auto, AddressSpace, ArrayArg, GlobalArg, ConstantArg, ValueArg,
TemporaryVariable, KernelArgument, to_dtype, parse_shape, strides_for_order,
temp_var_scope (loopy's name of AddressSpace).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic import parse as _pymbolic_parse
from pytools.lex import ParseError as LexParseError

from kernelcore.diagnostic import ParseError, TypeInferenceFailure


class _Auto:
    """Marker: 'find this automatically'."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "auto"

    def __reduce__(self):
        return (_Auto, ())


auto = _Auto()


class AddressSpace(enum.IntEnum):
    """Where a variable lives on the device."""

    PRIVATE = 0
    LOCAL = 1
    GLOBAL = 2

    def __str__(self) -> str:
        return self.name.lower()


#: loopy's older name of :class:`AddressSpace`
temp_var_scope = AddressSpace


def to_dtype(dtype: Any) -> np.dtype | None:
    """Normalize a user dtype spec to :class:`numpy.dtype`, keeping None/auto as None."""
    if dtype is None or dtype is auto:
        return None
    dtype = getattr(dtype, "numpy_dtype", dtype)      # loopy's NumpyType
    try:
        return np.dtype(dtype)
    except TypeError as e:
        raise TypeInferenceFailure(f"not a valid dtype: {dtype!r}") from e


def _to_expr(x: Any):
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, str):
        try:
            return _pymbolic_parse(x)
        except Exception as e:
            raise ParseError(f"cannot parse shape entry {x!r}") from e
    if isinstance(x, prim.ExpressionNode):
        return x
    raise ParseError(f"invalid shape entry {x!r}")


def parse_shape(shape: Any) -> tuple | _Auto | None:
    """Normalize a shape spec: auto, None, an int, a string "n, m" (or "(n, m)"),
    or a tuple."""
    if shape is auto or shape is None:
        return shape
    if isinstance(shape, str):
        if not shape.strip():
            return ()
        shape = shape.strip()
        if shape.endswith(",") and not shape.startswith("("):     # "n,": one axis
            shape = shape[:-1]
        try:
            parsed = _to_expr(shape) if "," not in shape else _pymbolic_parse(f"({shape},)")
        except (LexParseError, ValueError, TypeError, AssertionError) as e:
            raise ParseError(f"cannot parse the shape {shape!r}: {str(e) or 'syntax error'} "
                             "(write it as 'n, m' or a tuple)") from None
        if isinstance(parsed, tuple) and len(parsed) == 1 and isinstance(parsed[0], tuple):
            parsed = parsed[0]          # "(n, m)": the parentheses are not an axis
        shape = parsed if isinstance(parsed, tuple) else (parsed,)
    elif isinstance(shape, (int, np.integer, prim.ExpressionNode)):
        shape = (shape,)
    if tuple(shape) == (None,):     # loopy's one axis of unknown extent: no shape
        return None
    return tuple(s if s is auto else _to_expr(s) for s in shape)


def c_order_strides(shape: tuple) -> tuple:
    """Element strides of a C-ordered array of *shape* as expressions."""
    strides = []
    stride: Any = 1
    for extent in reversed(shape):
        strides.append(stride)
        stride = extent if stride == 1 else stride if extent == 1 else extent * stride
    return tuple(reversed(strides))


def strides_for_order(shape: tuple, order: str) -> tuple:
    if order == "C":
        return c_order_strides(shape)
    if order == "F":
        return tuple(reversed(c_order_strides(tuple(reversed(shape)))))
    raise ParseError(f"unknown array order {order!r} (expected 'C' or 'F')")


@dataclass(frozen=True, kw_only=True)
class _Variable:
    name: str
    dtype: np.dtype | None = None

    def copy(self, **kwargs):
        return replace(self, **kwargs)

    def _type_str(self) -> str:
        return "<auto/runtime>" if self.dtype is None else str(self.dtype)


@dataclass(frozen=True, kw_only=True)
class _ArrayBase(_Variable):
    shape: Any = auto
    order: str = "C"
    strides: Any = None
    #: names of the axes (loopy's; they change no code)
    dim_names: tuple[str, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", to_dtype(self.dtype))
        object.__setattr__(self, "shape", parse_shape(self.shape))
        if self.order not in ("C", "F"):
            raise ParseError(f"array '{self.name}': unknown order {self.order!r}")
        if self.strides is not None and self.strides is not auto:
            object.__setattr__(self, "strides", parse_shape(self.strides))

    @property
    def ndim(self) -> int:
        assert isinstance(self.shape, tuple)
        return len(self.shape)

    def element_strides(self) -> tuple:
        """Strides in elements, as expressions in the kernel's parameters."""
        if isinstance(self.strides, tuple):
            return self.strides
        return strides_for_order(self.shape, self.order)

    def _shape_str(self) -> str:
        if self.shape is auto:
            return "<auto>"
        if self.shape is None:
            return "<none>"
        return "(" + ", ".join(str(s) for s in self.shape) + ")"

    def _dim_tags_str(self) -> str:
        if not isinstance(self.shape, tuple):
            return "<auto>"
        n = len(self.shape)
        return "(" + ", ".join(f"N{n-1-k}:stride:{s}"
                               for k, s in enumerate(self.element_strides())) + ")"


def _strides_of_dim_tags(name: str, dim_tags: Any, strides: Any) -> tuple:
    """The strides loopy's fixed-stride axis tags (objects with a ``stride``,
    which may be :data:`auto`) give."""
    if strides is not None:
        raise ParseError(f"array '{name}': give strides or dim_tags, not both")
    if isinstance(dim_tags, str) or not all(hasattr(t, "stride") for t in dim_tags):
        raise ParseError(f"array '{name}': dim_tags must be fixed-stride axis tags "
                         "(use tag_array_axes for 'c', 'f' or 'stride:...')")
    return tuple(t.stride for t in dim_tags)


def _dim_names(names: Any) -> tuple[str, ...] | None:
    if names is None:
        return None
    if isinstance(names, str):
        return tuple(n.strip() for n in names.split(",") if n.strip())
    return tuple(names)


def _check_alignment(name: str, alignment: int | None) -> None:
    if alignment is not None and (alignment <= 0 or alignment & (alignment - 1)):
        raise ValueError(f"'{name}': alignment {alignment} is not a power of two")


@dataclass(frozen=True, kw_only=True)
class ArrayArg(_ArrayBase):
    """An array argument in global memory (loopy's GlobalArg); *for_atomic*
    allows atomic updates of its elements. *alignment* (bytes, a power of
    two, or None) declares that the array starts at a multiple of it, so
    that vector accesses at multiples of their size are single aligned loads
    and stores. (kernelcore refuses views that start inside their buffer, and
    OpenCL aligns buffers to the device's base address alignment, at least
    64 bytes: up to that, the declaration holds for every array passed.)
    *offset* is loopy's: a number of elements (the array's element 0 is
    that far into the buffer passed: ``offset=3`` makes ``y[i]`` the
    buffer's element ``3 + i``) or :data:`auto` (taken, the array still
    starts at its buffer; a view starting inside its buffer that the kernel
    only reads is passed as a copy)."""

    address_space: AddressSpace = AddressSpace.GLOBAL
    is_output: bool | None = None
    is_input: bool | None = None
    for_atomic: bool = False
    alignment: int | None = None
    offset: Any = 0

    def __init__(self, name: str, dtype: Any = None, shape: Any = auto, *,
                 order: str = "C", strides: Any = None,
                 address_space: AddressSpace = AddressSpace.GLOBAL,
                 is_output: bool | None = None, is_input: bool | None = None,
                 for_atomic: bool = False, alignment: int | None = None,
                 offset: Any = 0, dim_names: Any = None, dim_tags: Any = None):
        _check_alignment(name, alignment)
        if dim_tags is not None:
            strides = _strides_of_dim_tags(name, dim_tags, strides)
        if offset is None:
            offset = 0
        if not (offset is auto or (isinstance(offset, (int, np.integer))
                                   and not isinstance(offset, bool) and offset >= 0)):
            raise ParseError(f"array '{name}': offset={offset!r}: give a number of "
                             "elements >= 0, or lp.auto (any offset, where views that "
                             "start inside their buffer are refused when called)")
        if isinstance(offset, (int, np.integer)):
            offset = int(offset)
        for k, v in dict(name=name, dtype=dtype, shape=shape, order=order,
                         strides=strides, address_space=address_space,
                         is_output=is_output, is_input=is_input,
                         for_atomic=for_atomic, alignment=alignment,
                         offset=offset, dim_names=_dim_names(dim_names)).items():
            object.__setattr__(self, k, v)
        self.__post_init__()

    def __str__(self) -> str:
        return (f"{self.name}: type: {self._type_str()}, shape: {self._shape_str()}, "
                f"dim_tags: {self._dim_tags_str()} aspace: {self.address_space}")


GlobalArg = ArrayArg


class ConstantArg(ArrayArg):
    """A read-only array argument in the device's constant memory
    (``__constant`` in OpenCL C; plain global memory on the C target)."""

    def __str__(self) -> str:
        return super().__str__().replace("aspace: global", "aspace: constant")


@dataclass(frozen=True, kw_only=True)
class ValueArg(_Variable):
    """A scalar argument passed by value; *approximately* is a typical value,
    used where a value is needed without one being given (operation counts
    in :mod:`kernelcore.statistics`)."""

    approximately: Any = 1000
    is_output: bool = False
    is_input: bool = True

    def __init__(self, name: str, dtype: Any = None, approximately: Any = 1000, *,
                 is_output: bool = False, is_input: bool = True, tags: Any = None):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", to_dtype(dtype))
        object.__setattr__(self, "approximately", approximately)
        object.__setattr__(self, "is_output", is_output)
        object.__setattr__(self, "is_input", is_input)

    def __str__(self) -> str:
        return f"{self.name}: ValueArg, type: {self._type_str()}"


KernelArgument = ArrayArg | ValueArg


@dataclass(frozen=True, kw_only=True)
class TemporaryVariable(_ArrayBase):
    """A variable that lives only during the kernel's execution.

    *address_space* is :data:`auto` until chosen (an :class:`AddressSpace` or its
    name, e.g. ``"local"``); a scalar temporary has shape (). *alignment*
    (bytes, a power of two, or None) is declared for the array, and lets
    vector accesses at multiples of their size use single aligned loads.
    An *initializer* (an array of the values) gives the dtype and an ``auto``
    (or not given) shape. *for_atomic* allows atomic updates of its elements (as for arrays).
    Temporaries naming one *base_storage* share their memory (see
    :func:`~kernelcore.transform.temporaries.allocate_temporaries_for_base_storage`).
    """

    address_space: Any = auto
    initializer: Any = None
    read_only: bool = False
    alignment: int | None = None
    base_storage: str | None = None
    for_atomic: bool = False

    def __init__(self, name: str, dtype: Any = None, shape: Any = (), *,
                 address_space: Any = auto, order: str = "C", strides: Any = None,
                 initializer: Any = None, read_only: bool = False,
                 alignment: int | None = None, base_storage: str | None = None,
                 for_atomic: bool = False, dim_names: Any = None):
        _check_alignment(name, alignment)
        if initializer is not None:     # loopy's: the initializer's dtype and shape
            initializer = np.asarray(initializer)
            dtype = initializer.dtype if dtype is None else dtype
            # (also when no shape is given: loopy's default shape is auto)
            shape = initializer.shape if shape is auto or (
                shape == () and initializer.ndim) else shape
        if isinstance(address_space, str):
            try:
                address_space = AddressSpace[address_space.upper()]
            except KeyError:
                raise ValueError(f"temporary '{name}': unknown address space "
                                 f"{address_space!r} (private, local or global)") from None
        for k, v in dict(name=name, dtype=dtype, shape=shape, order=order,
                         strides=strides, address_space=address_space,
                         initializer=initializer, read_only=read_only,
                         alignment=alignment, base_storage=base_storage,
                         for_atomic=for_atomic, dim_names=_dim_names(dim_names)).items():
            object.__setattr__(self, k, v)
        self.__post_init__()

    def __str__(self) -> str:
        shape = "" if self.shape == () else f", shape: {self._shape_str()}"
        aspace = "<auto>" if self.address_space is auto else str(self.address_space)
        return f"{self.name}: type: {self._type_str()}{shape} aspace: {aspace}"


__all__ = ["auto", "AddressSpace", "ArrayArg", "GlobalArg", "ConstantArg", "ValueArg",
           "TemporaryVariable", "KernelArgument", "to_dtype", "parse_shape",
           "strides_for_order", "temp_var_scope"]
