"""Products: einsum, matmul, dot, tensordot, vecdot."""

from __future__ import annotations

from typing import Any

from lazyarray.handle import LazyArray, asarray
from lazyarray.ops import linalg as _linalg
from lazyarray.ops.inputs import node_of as _node

# {{{ products

def einsum(subscripts: str, *operands: Any, optimize: Any = False) -> LazyArray:
    """NumPy's einsum (subscripts without ellipsis); one fused kernel
    (*optimize*, NumPy's choice of contraction order, is lazyarray's own)."""
    return LazyArray(_linalg.einsum(subscripts, *(asarray(x).node for x in operands)))


def _product(name):
    def f(a, b, out=None):
        result = LazyArray(getattr(_linalg, name)(asarray(a).node, asarray(b).node))
        return result if out is None else _into(result, out, name)
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}, lazily."
    return f


matmul, dot, inner, outer, vdot = (_product(n) for n in
                                   ("matmul", "dot", "inner", "outer", "vdot"))


def _into(result: LazyArray, out: Any, name: str) -> Any:
    """*result* written into *out* as NumPy's product functions write it:
    ``matmul`` (a ufunc) by same-kind casting, the others in its own dtype."""
    if not isinstance(out, LazyArray):
        raise TypeError(f"{name}(out=...) must be a lazy array, not {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError("output array has wrong dimensions")
    if name != "matmul" and out.dtype != result.dtype:
        raise ValueError("output array is not acceptable (must have the right datatype, "
                         "number of dimensions, and be a C-Array)")
    out._in_place(name, result.node)
    return out


def tensordot(a: Any, b: Any, axes: int = 2) -> LazyArray:
    """NumPy's tensordot, lazily."""
    return LazyArray(_linalg.tensordot(asarray(a).node, asarray(b).node, axes))


def matrix_transpose(x: Any) -> LazyArray:
    """The transpose of the last two axes (a view)."""
    return asarray(x).mT


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """Dot products of vectors along *axis* (the first conjugated), broadcast
    over the other axes (NumPy's and the Array API's vecdot)."""
    return LazyArray(_linalg.vecdot(_node(x1), _node(x2), axis))

# }}}


__all__ = ["einsum", "matmul", "dot", "inner", "outer", "vdot", "tensordot",
           "matrix_transpose", "vecdot"]
