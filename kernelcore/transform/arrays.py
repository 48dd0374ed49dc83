"""Reshaping array arguments and temporaries (loopy's ``split_array_axis``).

Public names: split_array_axis, split_arg_axis.
"""

from __future__ import annotations

from typing import Any

import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError, UnknownNameError
from kernelcore.ir.expr import IdentityMapper
from kernelcore.ir.kernel import LoopKernel
from kernelcore.translation_unit import for_each_kernel


class _AxisSplitter(IdentityMapper):
    def __init__(self, names: set[str], axis: int, count: int, order: str):
        self.names, self.axis, self.count, self.order = names, axis, count, order

    def map_subscript(self, expr):
        agg = expr.aggregate
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        index = tuple(self.rec(i) for i in index)
        if isinstance(agg, prim.Variable) and agg.name in self.names:
            idx = index[self.axis]
            outer, inner = prim.FloorDiv(idx, self.count), prim.Remainder(idx, self.count)
            pair = (outer, inner) if self.order == "C" else (inner, outer)
            index = index[:self.axis] + pair + index[self.axis + 1:]
        return prim.Subscript(agg, index)

    def map_constant(self, expr):
        return expr


def _split_var(var: Any, axis: int, count: int, order: str) -> Any:
    if not isinstance(var.shape, tuple):
        raise KernelcoreError(f"split_array_axis: '{var.name}' has no known shape")
    if not 0 <= axis < len(var.shape):
        raise KernelcoreError(f"split_array_axis: '{var.name}' has no axis {axis}")
    extent = var.shape[axis]
    strides = var.element_strides()
    stride = strides[axis]
    outer_len = (extent + count - 1) // count if isinstance(extent, int) \
        else prim.FloorDiv(extent + (count - 1), count)
    if order == "C":
        new_shape, new_strides = (outer_len, count), (stride * count, stride)
    else:
        new_shape, new_strides = (count, outer_len), (stride, stride * count)  # type: ignore[assignment]
    return var.copy(shape=var.shape[:axis] + new_shape + var.shape[axis + 1:],
                    strides=strides[:axis] + new_strides + strides[axis + 1:])


def split_array_axis(kernel: Any, array_names: Any, axis_nr: int, count: int,
                     order: str = "C") -> Any:
    """Split axis *axis_nr* of the arrays *array_names* (names, or one
    comma-separated string) into two axes of lengths ``ceil(n/count)`` and
    *count* (in this order for *order* ``"C"``, swapped for ``"F"``); an
    access ``a[..., i, ...]`` becomes ``a[..., i // count, i % count, ...]``.
    The memory layout stays as it was."""
    return for_each_kernel(lambda k: _split_array_axis(
        k, array_names, axis_nr, count, order))(kernel)


def _split_array_axis(knl: LoopKernel, array_names: Any, axis_nr: int, count: int,
                      order: str) -> LoopKernel:
    if order not in ("C", "F"):
        raise KernelcoreError(f"split_array_axis: order must be 'C' or 'F', got {order!r}")
    names = [s.strip() for s in array_names.split(",")] if isinstance(array_names, str) \
        else list(array_names)
    args = list(knl.args)
    temps = dict(knl.temporary_variables)
    for name in names:
        if name in knl.arg_dict:
            k = [a.name for a in args].index(name)
            args[k] = _split_var(args[k], axis_nr, count, order)
        elif name in temps:
            temps[name] = _split_var(temps[name], axis_nr, count, order)
        else:
            raise UnknownNameError(f"split_array_axis: no array called '{name}'")
    mapper = _AxisSplitter(set(names), axis_nr, count, order)
    insns = tuple(i.with_transformed_expressions(mapper) for i in knl.instructions)
    return knl.copy(args=tuple(args), temporary_variables=temps, instructions=insns)


#: loopy's older name of :func:`split_array_axis`
split_arg_axis = split_array_axis

__all__ = ["split_array_axis", "split_arg_axis"]
