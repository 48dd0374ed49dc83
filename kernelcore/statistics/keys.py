"""The keys of statistics maps: :class:`Op`, :class:`MemAccess`, :class:`Sync`.

Public names: Op, MemAccess, Sync.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim

from kernelcore.statistics.counts import _check_granularity

# {{{ keys

def _norm_dtype(dtype):
    if dtype is None:
        return None
    return np.dtype(getattr(dtype, "numpy_dtype", dtype))


def _dtype_str(dtype) -> str:
    return "None" if dtype is None else f"np:{dtype!r}"


def _strides_str(strides) -> str:
    if strides is None:
        return "None"
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(strides.items())) + "}"


def _canonical(expr):
    """A hashable form of a stride expression equal for reordered sums and
    products (``m*ell`` and ``ell*m``)."""
    if isinstance(expr, (prim.Sum, prim.Product)):
        kind = type(expr).__name__
        kids = []
        for child in map(_canonical, expr.children):
            if isinstance(child, tuple) and child[0] == kind:
                kids.extend(child[1])
            else:
                kids.append(child)
        return (kind, tuple(sorted(kids, key=repr)))
    return expr


class _Key:
    """Common behaviour of statistics keys: fields, equality, copy."""

    fields: tuple[str, ...] = ()
    kernel_name: str | None

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.fields)

    def _hashable(self) -> tuple:
        return tuple(frozenset((k, _canonical(x)) for k, x in v.items())
                     if isinstance(v, dict) else v for v in self._values())

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._hashable() == other._hashable()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + self._hashable())

    def copy(self, **kwargs):
        values = {f: getattr(self, f) for f in self.fields}
        values.update(kwargs)
        return type(self)(**values)

    def __repr__(self) -> str:
        return str(self)

    def matches(self, other: _Key) -> bool:
        """Whether *self* names the same kind of event as *other* where
        *self*'s ``kernel_name`` is None (a key without a kernel name stands
        for every kernel, so programs written for one kernel keep working)."""
        if type(self) is not type(other):
            return False
        if self.kernel_name is None:
            other = other.copy(kernel_name=None)
        return self == other


class Op(_Key):
    """An arithmetic operation: *dtype* operated on, *name* (``add``, ``mul``,
    ``div``, ``pow``, ``shift``, ``bw``, ``maximum``, ``minimum``,
    ``func:<name>``) and *count_granularity*. None fields are wildcards produced
    by :meth:`ToCountMap.group_by`."""

    fields = ("dtype", "name", "count_granularity", "kernel_name")

    def __init__(self, dtype=None, name=None, count_granularity=None, kernel_name=None):
        _check_granularity(count_granularity)
        self.dtype = _norm_dtype(dtype)
        self.name = name
        self.count_granularity = count_granularity
        #: the kernel in which the operation occurs
        self.kernel_name = kernel_name

    def __str__(self) -> str:
        """The tutorial's form: dtype, name, granularity."""
        return f"Op({_dtype_str(self.dtype)}, {self.name}, {self.count_granularity})"

    def __repr__(self) -> str:
        """loopy's form: :meth:`__str__`'s fields, then the kernel name
        (quoted) when there is one."""
        if self.kernel_name is None:
            return str(self)
        return f'{str(self)[:-1]}, "{self.kernel_name}")'


class MemAccess(_Key):
    """A kind of memory access: memory type *mtype* (``global``/``local``),
    *dtype*, strides of the flat index along local ids (*lid_strides*) and group
    ids (*gid_strides*), *direction* (``load``/``store``), *variable* and
    *count_granularity*."""

    fields = ("mtype", "dtype", "lid_strides", "gid_strides", "direction",
              "variable", "count_granularity", "kernel_name", "variable_tags")

    def __init__(self, mtype=None, dtype=None, lid_strides=None, gid_strides=None,
                 direction=None, variable=None, count_granularity=None, *,
                 variable_tags=None, kernel_name=None):
        _check_granularity(count_granularity)
        if mtype not in (None, "global", "local"):
            raise ValueError(f"MemAccess: mtype must be 'global' or 'local', got {mtype!r}")
        if direction not in (None, "load", "store"):
            raise ValueError(f"MemAccess: direction must be 'load' or 'store', got "
                             f"{direction!r}")
        self.mtype = mtype
        self.dtype = _norm_dtype(dtype)
        self.lid_strides = None if lid_strides is None else dict(sorted(lid_strides.items()))
        self.gid_strides = None if gid_strides is None else dict(sorted(gid_strides.items()))
        self.direction = direction
        self.variable = variable
        self.count_granularity = count_granularity
        #: the kernel in which the access occurs
        self.kernel_name = kernel_name
        self.variable_tags = None if variable_tags is None else frozenset(variable_tags)

    def __str__(self) -> str:
        return (f"MemAccess({self.mtype}, {_dtype_str(self.dtype)}, "
                f"{_strides_str(self.lid_strides)}, {_strides_str(self.gid_strides)}, "
                f"{self.direction}, {self.variable}, {self.count_granularity})")

    def __repr__(self) -> str:
        """loopy's form: every field, variable tags and the kernel name included."""
        tags = "None" if not self.variable_tags else str(self.variable_tags)
        return (f"MemAccess({self.mtype}, {_dtype_str(self.dtype)}, "
                f"{_strides_str(self.lid_strides)}, {_strides_str(self.gid_strides)}, "
                f"{self.direction}, {self.variable}, {tags}, {self.count_granularity}, "
                f"{self.kernel_name!r})")

class Sync(str):
    """A kind of synchronization, *kind* (``barrier_local``,
    ``barrier_global``, ``kernel_launch``) in kernel *kernel_name*. It is
    also the string *kind* itself (``sync_map["kernel_launch"]`` works, and
    maps print as before)."""

    fields = ("kind", "kernel_name")
    kind: str
    kernel_name: str | None

    def __new__(cls, kind=None, kernel_name=None):
        self = super().__new__(cls, "None" if kind is None else kind)
        self.kind = kind
        self.kernel_name = kernel_name
        return self

    def copy(self, **kwargs: str | None) -> Sync:
        values = {"kind": self.kind, "kernel_name": self.kernel_name, **kwargs}
        return Sync(**values)

    def matches(self, other: object) -> bool:
        """Whether *other* is this kind of synchronization (in this kernel,
        unless *kernel_name* is None)."""
        if str(self) != str(other):
            return False
        return self.kernel_name is None or self.kernel_name == getattr(
            other, "kernel_name", None)

    def __eq__(self, other) -> bool:
        if isinstance(other, Sync):
            return self.kind == other.kind and self.kernel_name == other.kernel_name
        return str.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return f"Sync({self.kind}, {self.kernel_name})"

# }}}
