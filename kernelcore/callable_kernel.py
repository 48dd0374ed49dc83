"""Kernels callable from other kernels: loopy's ``CallableKernel``.

Public names: CallableKernel, callee_kernels, kernel_called_names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import pymbolic.primitives as prim

from kernelcore.callables import (
    ArrayArgDescriptor,
    FixedStrideArrayDimTag,
    InKernelCallable,
    NumpyType,
    ValueArgDescriptor,
    get_kw_pos_association,
)
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, ArrayArg, ValueArg
from kernelcore.ir.domain import expr_to_pw_aff, pw_aff_to_expr
from kernelcore.ir.expr import called_names, substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.stages import stage
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag


class CallableKernel(InKernelCallable):
    """A kernel as a callable of a translation unit (*subkernel*). Its
    arguments are numbered as :func:`~kernelcore.callables.
    get_kw_pos_association` says: inputs 0, 1, ..., outputs -1, -2, ...."""

    subkernel: LoopKernel
    init_arg_names = ("subkernel", "arg_id_to_dtype", "arg_id_to_descr")

    def __init__(self, subkernel: LoopKernel, arg_id_to_dtype: Mapping | None = None,
                 arg_id_to_descr: Mapping | None = None):
        if not isinstance(subkernel, LoopKernel):
            raise KernelcoreError(f"CallableKernel: expected a LoopKernel, got "
                                  f"{type(subkernel).__name__}")
        super().__init__(subkernel.name, arg_id_to_dtype, arg_id_to_descr, subkernel.name)
        self._set(subkernel=subkernel)

    def _positions(self) -> dict[int, str]:
        return get_kw_pos_association(self.subkernel)[1]

    def with_types(self, arg_id_to_dtype: Mapping, callables_table: Any
                   ) -> tuple[CallableKernel, Any]:
        """The callee with the types the caller passes: arguments of unknown
        type take them, known ones must agree; returns ``(copy, table)``."""
        knl = self.subkernel
        new_args = []
        for arg in knl.args:
            dtype = None
            for pos, name in self._positions().items():
                if name == arg.name and pos in arg_id_to_dtype:
                    t = arg_id_to_dtype[pos]
                    dtype = getattr(t, "numpy_dtype", t)
            if dtype is not None and arg.dtype is not None and arg.dtype != dtype:
                raise KernelcoreError(
                    f"kernel '{knl.name}' takes '{arg.name}' as {arg.dtype}, the call "
                    f"passes {dtype}")
            new_args.append(arg.copy(dtype=dtype) if arg.dtype is None and dtype is not None
                            else arg)
        knl = knl.copy(args=tuple(new_args))
        with contextlib.suppress(KernelcoreError):
            knl = stage("infer_types")(knl)
        types = {pos: NumpyType(knl.arg_dict[name].dtype)  # type: ignore[arg-type]
                 for pos, name in self._positions().items()
                 if knl.arg_dict[name].dtype is not None}
        return self.copy(subkernel=knl, arg_id_to_dtype=types), callables_table

    def with_descrs(self, arg_id_to_descr: Mapping, callables_table: Any
                    ) -> tuple[CallableKernel, Any]:
        """The callee specialized for the sub-arrays the caller passes: its
        array arguments take their strides and address spaces (their
        dimensionality and static extents must agree); returns ``(copy,
        table)``."""
        positions = self._positions()
        new_args = {a.name: a for a in self.subkernel.args}
        for pos, descr in arg_id_to_descr.items():
            if pos not in positions:
                continue
            arg = new_args[positions[pos]]
            where = f"in a call to kernel '{self.subkernel.name}', '{arg.name}'"
            if isinstance(arg, ValueArg):
                if isinstance(descr, ArrayArgDescriptor):
                    raise KernelcoreError(f"{where} is a scalar, the call passes an array")
                continue
            if isinstance(descr, ValueArgDescriptor):
                raise KernelcoreError(f"{where} is an array, the call passes a scalar")
            shape = tuple(getattr(arg, "shape", ()) or ())
            if len(shape) != len(descr.shape) or any(
                    isinstance(a, int) and isinstance(b, int) and a != b
                    for a, b in zip(shape, descr.shape)):
                raise KernelcoreError(f"{where} has shape {shape}, the call passes shape "
                                      f"{tuple(descr.shape)}")
            new_args[arg.name] = arg.copy(
                strides=tuple(t.stride for t in descr.dim_tags),
                address_space=descr.address_space)
        knl = self.subkernel.copy(args=tuple(new_args[a.name] for a in self.subkernel.args))
        descrs = dict(arg_id_to_descr)
        for pos, name in positions.items():
            arg = knl.arg_dict[name]
            if isinstance(arg, ValueArg):
                descrs[pos] = ValueArgDescriptor()
            elif isinstance(arg.shape, tuple):
                descrs[pos] = ArrayArgDescriptor(tuple(arg.shape), arg.address_space, tuple(
                    FixedStrideArrayDimTag(st) for st in arg.element_strides()))
        return self.copy(subkernel=knl, arg_id_to_descr=descrs), callables_table

    def with_added_arg(self, arg_dtype: Any, arg_descr: Any) -> tuple[CallableKernel, str]:
        """``(copy, name)``: the callee with one more argument (last), of type
        *arg_dtype*, under a fresh *name*: a scalar for a
        :class:`ValueArgDescriptor`, an array of the descriptor's shape,
        strides and address space for an :class:`ArrayArgDescriptor`."""
        if not isinstance(arg_descr, (ValueArgDescriptor, ArrayArgDescriptor)):
            raise KernelcoreError(f"with_added_arg: {arg_descr!r} is not an argument "
                                  "descriptor (ValueArgDescriptor or ArrayArgDescriptor)")
        knl = self.subkernel
        taken = set(knl.arg_dict) | set(knl.temporary_variables) | set(knl.all_inames())
        k = 0
        while f"_kc_arg_{k}" in taken:
            k += 1
        name = f"_kc_arg_{k}"
        dtype = getattr(arg_dtype, "numpy_dtype", arg_dtype)
        if isinstance(arg_descr, ArrayArgDescriptor):
            added: ValueArg | ArrayArg = ArrayArg(
                name, dtype, shape=tuple(arg_descr.shape),
                strides=tuple(t.stride for t in arg_descr.dim_tags),
                address_space=arg_descr.address_space or AddressSpace.GLOBAL)
        else:
            added = ValueArg(name, dtype)
        knl = knl.copy(args=knl.args + (added,))
        new = self.copy(subkernel=knl)
        pos = max((p for p in new._positions() if p >= 0), default=-1)
        types = dict(self.arg_id_to_dtype or {})
        types[pos] = arg_dtype if isinstance(arg_dtype, NumpyType) else NumpyType(arg_dtype)
        descrs = dict(self.arg_id_to_descr or {})
        descrs[pos] = arg_descr
        return new.copy(arg_id_to_dtype=types, arg_id_to_descr=descrs), name

    def with_name(self, name: str) -> CallableKernel:
        return self.copy(subkernel=self.subkernel.copy(name=name))

    def is_type_specialized(self) -> bool:
        """Whether the types of all the callee's arguments are known."""
        return all(a.dtype is not None for a in self.subkernel.args)

    def is_ready_for_codegen(self) -> bool:
        """Whether types and argument descriptors are known."""
        return self.is_type_specialized() and self.arg_id_to_descr is not None

    def emit_call(self, expression_to_code_mapper: Any, expression: Any, target: Any) -> Any:
        """A kernel is not a value: calls of it are instructions of their own."""
        raise KernelcoreError(f"kernel '{self.name}' cannot be called inside an "
                              "expression: use a call instruction")

    def emit_call_insn(self, insn: Any, target: Any, expression_to_code_mapper: Any
                       ) -> tuple[Any, bool]:
        """``(call, False)``: the callee's function called with the call's
        parameters and assignees in the callee's argument order (arrays by
        address)."""
        given = {**dict(enumerate(insn.expression.parameters)),
                 **{-k - 1: a for k, a in enumerate(insn.assignees)}}
        by_name = {name: given[pos] for pos, name in self._positions().items()}
        ecm = expression_to_code_mapper
        return (prim.Variable(self.subkernel.name)(
            *(ecm(by_name[a.name]).expr for a in self.subkernel.args)), False)

    def get_used_hw_axes(self, callables_table: Any) -> tuple[frozenset, frozenset]:
        """``(group axes, local axes)`` the callee's inames are tagged with."""
        tags = self.subkernel.iname_tags.values()
        return (frozenset(t.axis for t in tags if isinstance(t, GroupIndexTag)),
                frozenset(t.axis for t in tags if isinstance(t, LocalIndexTag)))

    def get_hw_axes_sizes(self, arg_id_to_arg: Mapping, space: Any, callables_table: Any
                          ) -> tuple[dict, dict]:
        """``({axis: PwAff}, {axis: PwAff})``: the callee's grid, its scalar
        arguments replaced by the call's values (*arg_id_to_arg*) when
        *space* (the caller's parameter space) is given."""
        groups, local = self.subkernel.get_grid_size_upper_bounds(
            callables_table, return_dict=True)
        if space is None:
            return groups, local
        positions = self._positions()
        values = {positions[p]: v for p, v in arg_id_to_arg.items() if p in positions}

        def to_caller(pw):
            return expr_to_pw_aff(substitute(pw_aff_to_expr(pw), values), space)
        return ({a: to_caller(v) for a, v in groups.items()},
                {a: to_caller(v) for a, v in local.items()})

    def get_called_callables(self, callables_table: Mapping, recursive: bool = True
                             ) -> frozenset[str]:
        direct = kernel_called_names(self.subkernel) & set(callables_table)
        if not recursive:
            return frozenset(direct)
        result = set(direct)
        for name in direct:
            result |= callables_table[name].get_called_callables(callables_table, True)
        return frozenset(result)


def callee_kernels(knl: LoopKernel) -> dict[str, LoopKernel]:
    """The kernels *knl* calls as functions, and the ones they call, by name."""
    callees: dict[str, LoopKernel] = {}
    pending = [knl]
    while pending:
        for name, callable_ in pending.pop().callables.items():
            if isinstance(callable_, CallableKernel) and name not in callees:
                callees[name] = callable_.subkernel
                pending.append(callable_.subkernel)
    return callees


def kernel_called_names(knl: LoopKernel) -> frozenset[str]:
    """The names of the functions *knl* calls."""
    return frozenset().union(*(called_names(e) for insn in knl.instructions
                               for e in insn.expressions()))
