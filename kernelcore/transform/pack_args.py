"""Passing a callee kernel's array arguments through temporaries of its own shapes.

Public names: pack_and_unpack_args_for_call.

:func:`pack_and_unpack_args_for_call` rewrites the calls to one kernel of a
translation unit so that each array argument is a temporary of the shape the
callee declares: before the call a loop copies the caller's sub-array into it
(for an argument the callee reads), after the call a loop copies it back (for
one the callee writes). The elements go over in C order: the sub-array's
elements, counted in the order of its axes, fill the temporary's elements in
the order of its axes, so a ``(3, 2)`` sub-array can be passed for a ``(6,)``
argument.
"""

from __future__ import annotations

import math
from typing import Any

import islpy as isl
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.callable_kernel import CallableKernel
from kernelcore.callables import get_kw_pos_association
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, ArrayArg, TemporaryVariable
from kernelcore.ir.instruction import Assignment, CallInstruction, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.inline import slice_bounds
from kernelcore.translation_unit import TranslationUnit


def _calls(insn: Any, name: str) -> bool:
    fn = getattr(getattr(insn, "expression", None), "function", None)
    return isinstance(insn, Assignment) and getattr(fn, "name", None) == name


def _static_shape(shape: Any, what: str) -> tuple[int, ...]:
    if not isinstance(shape, tuple) or not all(isinstance(s, int) for s in shape):
        raise KernelcoreError(f"pack_and_unpack_args_for_call: {what} needs a constant "
                              f"shape, has {shape}")
    return shape


def _unravel(flat: Any, shape: tuple[int, ...]) -> tuple:
    """The C-order index of element *flat* of an array of *shape*."""
    index = []
    for axis in range(len(shape)):
        inner = math.prod(shape[axis + 1:])
        part = flat if inner == 1 else prim.FloorDiv(flat, inner)
        index.append(part if axis == 0 else prim.Remainder(part, shape[axis]))
    return tuple(index)


class _Packing:
    """The temporaries, loops and copies for the calls of one kernel."""

    def __init__(self, knl: LoopKernel):
        self.knl = knl
        self.names = UniqueNameGenerator(
            set(knl.all_inames()) | set(knl.all_params()) | set(knl.arg_dict)
            | set(knl.temporary_variables) | {i.id for i in knl.instructions})
        self.domains: list[isl.BasicSet] = []
        self.temps: dict[str, TemporaryVariable] = {}

    def sweep(self, expr: Any, callee_shape: tuple[int, ...], what: str,
              temp: str | None = None) -> tuple[Any, Any, frozenset[str]]:
        """(caller element, temporary element, new inames) for the caller's
        sub-array *expr* passed for an argument of *callee_shape*, through a new
        temporary or the existing one *temp*."""
        if isinstance(expr, prim.Variable):
            var = self.knl.get_var(expr.name)
            expr = prim.Subscript(expr, tuple(prim.Slice((None,)) for _ in var.shape))
        if not isinstance(expr, prim.Subscript) or not isinstance(expr.aggregate,
                                                                  prim.Variable):
            raise KernelcoreError(f"pack_and_unpack_args_for_call: {what}: expected an "
                                  f"array or a slice of one, got {expr}")
        var = self.knl.get_var(expr.aggregate.name)
        index = list(assignee_subscript(expr))
        inames, extents = [], []
        for axis, ix in enumerate(index):
            if not isinstance(ix, prim.Slice):
                continue
            start, stop, step = slice_bounds(ix, var.shape[axis])
            if not all(isinstance(v, int) for v in (start, stop)):
                raise KernelcoreError(f"pack_and_unpack_args_for_call: {what}: the slice "
                                      f"{ix} needs constant ends")
            count = max(0, -((start - stop) // step))
            iname = self.names(f"{expr.aggregate.name}_pack_dim_{axis}")
            inames.append(iname)
            extents.append(count)
            moved = prim.Variable(iname) if step == 1 else step * prim.Variable(iname)
            index[axis] = moved if start == 0 else start + moved
        if math.prod(extents) != math.prod(callee_shape):
            raise KernelcoreError(f"pack_and_unpack_args_for_call: {what}: {expr} has "
                                  f"{math.prod(extents)} elements, the callee's argument "
                                  f"{math.prod(callee_shape)}")
        if inames:
            self.domains.append(isl.BasicSet(
                "{ [" + ", ".join(inames) + "] : "
                + " and ".join(f"0 <= {n} < {e}" for n, e in zip(inames, extents)) + " }"))
        if tuple(extents) == callee_shape:
            packed_index = tuple(prim.Variable(n) for n in inames)
        else:
            flat: Any = 0
            for n, e in zip(inames, extents):
                flat = prim.Variable(n) if flat == 0 else flat * e + prim.Variable(n)
            packed_index = _unravel(flat, callee_shape)
        name = temp or self.names(f"{expr.aggregate.name}_pack")
        if temp is None:
            self.temps[name] = TemporaryVariable(name, dtype=var.dtype, shape=callee_shape,
                                                 address_space=AddressSpace.PRIVATE)
        caller = prim.Subscript(expr.aggregate, tuple(index)) if index else expr.aggregate
        packed = (prim.Subscript(prim.Variable(name), packed_index) if callee_shape
                  else prim.Variable(name))
        return caller, packed, frozenset(inames)


def _pack_call(knl: LoopKernel, insn: Any, callee: LoopKernel,
               args_to_pack: frozenset[str] | None) -> LoopKernel:
    packing = _Packing(knl)
    _, pos_to_kw = get_kw_pos_association(callee)
    params = list(insn.expression.parameters)
    assignees = list(insn.assignees if isinstance(insn, CallInstruction) else (insn.assignee,))
    before: list[Assignment] = []
    after: list[Assignment] = []
    temp_of: dict[str, str] = {}       # callee argument -> its temporary

    def pack(expr: Any, arg_name: str, reads: bool) -> Any:
        arg = callee.arg_dict[arg_name]
        if not isinstance(arg, ArrayArg) or (args_to_pack is not None
                                             and arg_name not in args_to_pack):
            return expr
        where = f"argument '{arg_name}' of call '{insn.id}'"
        # an argument updated in place goes out through the temporary it came in by
        caller, packed, inames = packing.sweep(expr, _static_shape(arg.shape, where), where,
                                               None if reads else temp_of.get(arg_name))
        common = dict(within_inames=insn.within_inames | inames, predicates=insn.predicates)
        if reads:
            before.append(Assignment(id=packing.names(f"{insn.id}_pack"), assignee=packed,
                                     expression=caller, depends_on=insn.depends_on,
                                     **common))
        else:
            after.append(Assignment(id=packing.names(f"{insn.id}_unpack"), assignee=caller,
                                    expression=packed, depends_on=frozenset([insn.id]),
                                    **common))
        temp = packed.aggregate if isinstance(packed, prim.Subscript) else packed
        assert isinstance(temp, prim.Variable)
        temp_of[arg_name] = temp.name
        return temp

    new_params = tuple(pack(p, pos_to_kw[k], True) for k, p in enumerate(params))
    new_assignees = [pack(a, pos_to_kw[-k - 1], False) for k, a in enumerate(assignees)]
    fields: dict[str, Any] = dict(expression=prim.Call(insn.expression.function, new_params),
                                  depends_on=insn.depends_on | {i.id for i in before})
    if isinstance(insn, CallInstruction):
        fields.update(assignee=new_assignees[0], extra_assignees=tuple(new_assignees[1:]))
    else:
        fields.update(assignee=new_assignees[0])
    call = insn.copy(**fields)
    unpacked = frozenset(i.id for i in after)
    instructions = []
    for ci in knl.instructions:
        if ci.id == insn.id:
            instructions += [*before, call, *after]
        elif insn.id in ci.depends_on:
            instructions.append(ci.copy(depends_on=ci.depends_on | unpacked))
        else:
            instructions.append(ci)
    return knl.copy(domains=knl.domains + tuple(packing.domains),
                    instructions=tuple(instructions),
                    temporary_variables={**knl.temporary_variables, **packing.temps},
                    iname_tags={**knl.iname_tags, **{
                        n: None for d in packing.domains
                        for n in d.get_var_names(isl.dim_type.set)}})


def pack_and_unpack_args_for_call(tu: TranslationUnit, call_name: str,
                                  args_to_pack: Any = None) -> TranslationUnit:
    """*tu* with the array arguments of each call to its kernel *call_name*
    (those named in *args_to_pack*, default all) passed through temporaries
    of the shapes the callee declares (see the module docstring)."""
    clbl = tu.callables_table.get(call_name)
    if not isinstance(clbl, CallableKernel):
        raise KernelcoreError(f"pack_and_unpack_args_for_call: '{call_name}' is not a "
                              "kernel of the translation unit")
    callee = clbl.subkernel
    wanted = None if args_to_pack is None else frozenset(args_to_pack)
    table = dict(tu.callables_table)
    for name, c in tu.callables_table.items():
        if not isinstance(c, CallableKernel) or name == call_name:
            continue
        knl = c.subkernel
        for site_id in [i.id for i in knl.instructions if _calls(i, call_name)]:
            knl = _pack_call(knl, knl.id_to_insn[site_id], callee, wanted)
        table[name] = c.copy(subkernel=knl)
    return tu.copy(callables_table=table)
