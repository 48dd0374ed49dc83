"""Index expressions of graph nodes: where a value computed elementwise
reads its operands (affine maps, broadcasts, C-order flattening), as
pymbolic expressions over the inames ``i0, i1, ...`` of its kernel. The
planner counts reads with them; lowering writes them into kernels.

Public names: Ix, index_expr, affine, within, flatten, unflatten, broadcast,
out_index.
"""

from __future__ import annotations

from dataclasses import dataclass

import pymbolic.primitives as prim

from lazyarray.graph import Node


@dataclass(frozen=True)
class Ix:
    """The index ``scale*var + offset``, where *var* (an iname, or a row
    position: an expression) takes the values ``0 .. extent - 1``."""

    var: prim.Expression
    extent: int
    scale: int = 1
    offset: int = 0

    def expr(self) -> prim.Expression:
        """This index as an expression."""
        term = self.var if self.scale == 1 else prim.Product((self.scale, self.var))
        return term if self.offset == 0 else prim.Sum((self.offset, term))

    def bounds(self) -> tuple[int, int]:
        """The smallest and the largest value this index takes."""
        ends = (self.offset, self.offset + self.scale * (self.extent - 1))
        return min(ends), max(ends)


def index_expr(entry: Ix | prim.Expression | int) -> prim.Expression:
    """An index entry (an :class:`Ix`, an expression or an integer) as an
    expression."""
    return entry.expr() if isinstance(entry, Ix) else entry


def affine(start: int, step: int, var: Ix | prim.Expression | int
           ) -> Ix | prim.Expression | int:
    """``start + step*var``."""
    if isinstance(var, Ix):
        if step == 0:
            return start
        return Ix(var.var, var.extent, step * var.scale, start + step * var.offset)
    term = var if step == 1 else prim.Product((step, var))
    return term if start == 0 else prim.Sum((start, term))


def within(index: list, shape: tuple) -> bool:
    """Whether *index* lies inside *shape* wherever it is evaluated."""
    for entry, extent in zip(index, shape):
        if isinstance(entry, Ix):
            low, high = entry.bounds()
        elif isinstance(entry, int):
            low = high = entry
        else:
            return False
        if low < 0 or high >= extent:
            return False
    return True


def flatten(index: list, shape: tuple) -> prim.Expression:
    """The C-order flat offset of *index* in *shape*."""
    flat: prim.Expression = 0
    for k, (var, extent) in enumerate(zip(index, shape)):
        var = index_expr(var)
        flat = var if k == 0 else prim.Sum((prim.Product((flat, extent)), var))
    return flat


def unflatten(flat: prim.Expression, shape: tuple) -> list:
    """The index in *shape* of C-order flat offset *flat*."""
    result = []
    stride = 1
    for extent in reversed(shape):
        part = flat if stride == 1 else prim.FloorDiv(flat, stride)
        result.append(prim.Remainder(part, extent) if extent != 1 else 0)
        stride *= extent
    return list(reversed(result))


def broadcast(index: list, arg_shape: tuple, shape: tuple) -> list:
    """The index an operand of *arg_shape* is read at where a value of
    *shape* is computed at *index* (NumPy's broadcasting)."""
    offset = len(shape) - len(arg_shape)
    return [0 if arg_shape[k] == 1 and shape[k + offset] != 1 else index[k + offset]
            for k in range(len(arg_shape))]


def out_index(node: Node) -> list[Ix]:
    """The index of a kernel computing *node* elementwise (inames ``i0, i1, ...``)."""
    return [Ix(prim.Variable(f"i{k}"), n) for k, n in enumerate(node.shape)]
