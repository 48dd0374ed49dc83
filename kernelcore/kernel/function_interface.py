"""Callables at loopy's module path (``loopy.kernel.function_interface``).

Public names: InKernelCallable, ScalarCallable, CallableKernel,
ValueArgDescriptor, ArrayArgDescriptor, FixedStrideArrayDimTag,
get_kw_pos_association, get_arg_descriptor_for_expression (defined in
:mod:`kernelcore.callables` and :mod:`kernelcore.translation_unit`).
"""

from kernelcore.callable_kernel import CallableKernel
from kernelcore.callables import (
    ArrayArgDescriptor,
    FixedStrideArrayDimTag,
    InKernelCallable,
    ScalarCallable,
    ValueArgDescriptor,
    get_arg_descriptor_for_expression,
    get_kw_pos_association,
)

__all__ = ["InKernelCallable", "ScalarCallable", "CallableKernel", "ValueArgDescriptor",
           "ArrayArgDescriptor", "FixedStrideArrayDimTag", "get_kw_pos_association",
           "get_arg_descriptor_for_expression"]
