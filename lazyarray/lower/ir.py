"""Building kernelcore's intermediate representation: indices, statements
and integer-set domains, made as objects (nothing is printed and parsed).

Public names: Ix, index_expr, affine, within, flatten, unflatten, broadcast,
out_index, assignment, barrier, domain, bounds, box, linear, below, sum_of.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore.parse import ParsedInstruction


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


def index_expr(entry) -> prim.Expression:
    """An index entry (an :class:`Ix`, an expression or an integer) as an
    expression."""
    return entry.expr() if isinstance(entry, Ix) else entry


def affine(start: int, step: int, var):
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
    flat = 0
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


def out_index(node) -> list[Ix]:
    """The index of a kernel computing *node* elementwise (inames ``i0, i1, ...``)."""
    return [Ix(prim.Variable(f"i{k}"), n) for k, n in enumerate(node.shape)]


def assignment(lhs, rhs, dtype: np.dtype | None = None, inames=None, **options
               ) -> ParsedInstruction:
    """The kernelcore statement ``lhs = rhs``: with *dtype*, declaring the
    temporary *lhs*; with *inames*, inside those loops (else the loops of
    the indices it uses); *options*: other :class:`ParsedInstruction`
    fields (``id``, ``depends_on``, ``no_sync_with``)."""
    return ParsedInstruction(
        kind="assign", assignee=lhs, expression=rhs, temp_var_type=dtype,
        explicit_inames=None if inames is None else frozenset(inames),
        source=f"{lhs} = ...", **options)


def barrier(**options) -> ParsedInstruction:
    """A global barrier; *options*: other :class:`ParsedInstruction` fields."""
    return ParsedInstruction(kind="gbarrier", source="... gbarrier", **options)


def domain(inames: list[str], *inequalities: dict) -> isl.BasicSet:
    """The points of *inames* where every inequality holds: a dict of
    coefficients (an iname's, a parameter's, or under ``1`` the constant)
    whose sum is at least 0. Other names than *inames* are parameters
    (outer inames)."""
    params = sorted({n for q in inequalities for n in q if n != 1 and n not in inames})
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=list(inames), params=params)
    points = isl.BasicSet.universe(space)
    for inequality in inequalities:
        points = points.add_constraint(isl.Constraint.ineq_from_names(space, inequality))
    return points


def bounds(iname: str, extent: int) -> list[dict]:
    """The inequalities of ``0 <= iname < extent`` (see :func:`domain`)."""
    return [{iname: 1}, {iname: -1, 1: extent - 1}]


def box(iname: str, extent: int) -> isl.BasicSet:
    """``0 <= iname < extent``."""
    return domain([iname], *bounds(iname, extent))


def linear(expr) -> dict:
    """The coefficients (see :func:`domain`) of affine *expr*: integers,
    variables, sums and products of an integer and a variable."""
    if isinstance(expr, int):
        return {1: expr}
    if isinstance(expr, prim.Variable):
        return {expr.name: 1}
    if isinstance(expr, prim.Product) and len(expr.children) == 2:
        factor, var = expr.children
        return {n: factor * c for n, c in linear(var).items()}
    assert isinstance(expr, prim.Sum), expr
    total: dict = {}
    for child in expr.children:
        for n, c in linear(child).items():
            total[n] = total.get(n, 0) + c
    return total


def below(expr, bound: int) -> dict:
    """``expr < bound`` as an inequality of :func:`domain`."""
    coefficients = {n: -c for n, c in linear(expr).items()}
    coefficients[1] = coefficients.get(1, 0) + bound - 1
    return coefficients


def sum_of(*terms) -> prim.Expression:
    """The sum of *terms*: integers, iname names, and (factor, iname name) pairs."""
    parts = [prim.Variable(t) if isinstance(t, str) else
             prim.Product((t[0], prim.Variable(t[1]))) if isinstance(t, tuple) else t
             for t in terms]
    return parts[0] if len(parts) == 1 else prim.Sum(tuple(parts))
