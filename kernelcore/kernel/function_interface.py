"""Callables at loopy's module path (``loopy.kernel.function_interface``).

Public names: InKernelCallable, ScalarCallable, CallableKernel,
ValueArgDescriptor, ArrayArgDescriptor, FixedStrideArrayDimTag,
get_kw_pos_association, get_arg_descriptor_for_expression.
"""

from __future__ import annotations

from typing import Any

import pymbolic.primitives as prim

from kernelcore.callables import (
    ArrayArgDescriptor,
    FixedStrideArrayDimTag,
    InKernelCallable,
    ScalarCallable,
    ValueArgDescriptor,
)
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import SubArrayRef
from kernelcore.translation_unit import CallableKernel


def get_kw_pos_association(kernel: Any) -> tuple[dict[str, int], dict[int, str]]:
    """``(kw_to_pos, pos_to_kw)`` of a callee kernel: its inputs are numbered
    0, 1, ... in argument order, its outputs -1, -2, ... in argument order."""
    written = kernel.get_written_variables()
    kw_to_pos: dict[str, int] = {}
    pos_to_kw: dict[int, str] = {}
    read_count, write_count = 0, -1
    for arg in kernel.args:
        if arg.name in written:
            kw_to_pos[arg.name], pos_to_kw[write_count] = write_count, arg.name
            write_count -= 1
        if arg.name not in written or getattr(arg, "is_input", None):
            if arg.name not in kw_to_pos:
                kw_to_pos[arg.name], pos_to_kw[read_count] = read_count, arg.name
                read_count += 1
    return kw_to_pos, pos_to_kw


def get_arg_descriptor_for_expression(kernel: Any, expr: Any) -> Any:
    """The descriptor of *expr* passed as an argument of a call in *kernel*:
    :class:`ArrayArgDescriptor` for a sub-array reference, else
    :class:`ValueArgDescriptor`."""
    if isinstance(expr, SubArrayRef):
        sub = expr.subscript
        name = sub.aggregate.name if isinstance(sub, prim.Subscript) else sub.name  # type: ignore[union-attr]
        var = kernel.arg_dict.get(name) or kernel.temporary_variables.get(name)
        if var is None:
            raise KernelcoreError(f"unknown array '{name}' in a sub-array reference")
        index = sub.index if isinstance(sub.index, tuple) else (sub.index,)
        strides = var.element_strides()
        swept = [i.name for i in expr.swept_inames]
        from kernelcore.ir.expr import get_dependencies
        dim_strides = []
        for iname in swept:
            stride: Any = 0
            for idx, s in zip(index, strides):
                if iname in get_dependencies(idx):
                    stride = s if stride == 0 else stride + s
            dim_strides.append(stride)
        shape = tuple(_extent(kernel, n) for n in swept)
        return ArrayArgDescriptor(shape, var.address_space if hasattr(
            var, "address_space") else None,
            tuple(FixedStrideArrayDimTag(s) for s in dim_strides))
    return ValueArgDescriptor()


def _extent(kernel: Any, iname: str) -> Any:
    from kernelcore.transform.ilp import static_range
    lo, hi = static_range(kernel, iname)
    return hi - lo + 1


__all__ = ["InKernelCallable", "ScalarCallable", "CallableKernel", "ValueArgDescriptor",
           "ArrayArgDescriptor", "FixedStrideArrayDimTag", "get_kw_pos_association",
           "get_arg_descriptor_for_expression"]
