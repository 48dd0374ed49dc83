"""Inlining calls between the kernels of a translation unit.

Public names: inline_callable_kernel, inline_calls.

At a call ``[i]: y[i, :] = callee(x[i, :], n)`` the callee's arguments are
matched by position: the call's parameters with the callee's inputs (the
arrays it reads and its scalar arguments, in argument order), the assignees
with its outputs (the arrays it writes). A slice axis of a caller array stands
for the callee array's axes in order; the callee's loops become new loops of
the caller, nested inside the call instruction's loops.
"""

from __future__ import annotations

import numbers
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.callable_kernel import CallableKernel, kernel_called_names
from kernelcore.callables import get_kw_pos_association
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import ArrayArg, ValueArg
from kernelcore.ir.expr import IdentityMapper, ResolvedFunction
from kernelcore.ir.instruction import Assignment, CallInstruction, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.stages import provide
from kernelcore.transform.iname import _rename_dim, rename_iname
from kernelcore.transform.parameters import fix_parameters
from kernelcore.transform.subst import expand_subst
from kernelcore.translation_unit import TranslationUnit


def _calls(insn, name: str) -> bool:
    if not isinstance(insn, Assignment):
        return False
    e = insn.expression
    return isinstance(e, prim.Call) and isinstance(
        e.function, (prim.Variable, ResolvedFunction)) and e.function.name == name


def slice_bounds(ix: prim.Slice, extent: Any) -> tuple:
    """(start, stop, step) of a slice over an axis of length *extent*, as
    loopy reads them: element k is ``start + step*k`` while short of *stop*
    (a negative stop is an index, not counted from the end)."""
    start, stop, step = (list(ix.children) + [None] * 3)[:3]
    step = 1 if step is None else _static(step)
    if step is None or step == 0:
        raise KernelcoreError(f"slice {ix}: the step must be a nonzero integer")
    if start is None:
        start = 0 if step > 0 else extent - 1
    if stop is None:
        stop = extent if step > 0 else -1
    return start, stop, step


def _static(expr):
    """*expr* as an int if it is a literal integer, else None."""
    if isinstance(expr, numbers.Integral) and not isinstance(expr, bool):
        return int(expr)
    return None


class _ArgumentBinding:
    """A caller array seen through a callee array argument: callee index
    components fill the caller's slice axes (offset by the slice starts)."""

    def __init__(self, caller: LoopKernel, callee_arg: ArrayArg, expr, where: str):
        if isinstance(expr, prim.Variable):
            var = caller.get_var(expr.name)
            axes = var.shape if var.shape is not None else (None,)  # (no shape: one axis)
            expr = prim.Subscript(expr, tuple(prim.Slice((None,)) for _ in axes))
        if not isinstance(expr, prim.Subscript) or not isinstance(
                expr.aggregate, prim.Variable):
            raise KernelcoreError(f"{where}: array argument '{callee_arg.name}' must be "
                                  f"passed an array or array slice, got {expr}")
        self.name = expr.aggregate.name
        var = caller.get_var(self.name)
        self.index = assignee_subscript(expr)
        shape = var.shape if var.shape is not None else (None,)   # (no shape: one axis)
        if len(self.index) != len(shape):
            raise KernelcoreError(f"{where}: '{self.name}' has {len(shape)} axes but "
                                  f"{expr} gives {len(self.index)} subscripts")
        self.slots = []
        extents = []
        for axis, ix in enumerate(self.index):
            if not isinstance(ix, prim.Slice):
                continue
            start, stop, step = slice_bounds(ix, shape[axis])
            self.slots.append((axis, start, step))
            extents.append(-((start - stop) // step) if _static(stop) is not None
                           and _static(start) is not None else None)
        # (an array without a shape: one axis of unknown extent)
        callee_shape = (None,) if callee_arg.shape is None else tuple(callee_arg.shape)
        if len(self.slots) != len(callee_shape):
            raise KernelcoreError(
                f"{where}: '{callee_arg.name}' of the callee has {len(callee_shape)} "
                f"axes but {expr} passes {len(self.slots)} slice axes")
        for axis, (have, want) in enumerate(zip(extents, callee_shape)):
            if have is not None and _static(want) is not None and have != want:
                raise KernelcoreError(
                    f"{where}: shape mismatch for '{callee_arg.name}': axis {axis} has "
                    f"extent {want} in the callee but {have} in {expr}")

    def subscript(self, callee_index: tuple):
        full = list(self.index)
        for (axis, start, step), ix in zip(self.slots, callee_index):
            moved = ix if step == 1 else prim.Product((step, ix))
            full[axis] = moved if start == 0 else prim.Sum((start, moved))
        if not full:            # a scalar (a private temporary of the caller)
            return prim.Variable(self.name)
        return prim.Subscript(prim.Variable(self.name), tuple(full))


class _Rewriter(IdentityMapper):
    """Callee expressions in caller terms."""

    def __init__(self, arrays: dict, values: dict, renames: dict):
        self.arrays = arrays
        self.values = values
        self.renames = renames

    def map_variable(self, expr):
        if expr.name in self.values:
            return self.values[expr.name]
        if expr.name in self.arrays:
            return self.arrays[expr.name].subscript(())
        if expr.name in self.renames:
            return prim.Variable(self.renames[expr.name])
        return expr

    def map_subscript(self, expr):
        index = tuple(self.rec(i) for i in assignee_subscript(expr))
        name = expr.aggregate.name
        if name in self.arrays:
            return self.arrays[name].subscript(index)
        return prim.Subscript(self.map_variable(expr.aggregate), index)


def _inline_call(caller: LoopKernel, callee: LoopKernel, insn,
                 names: UniqueNameGenerator) -> LoopKernel:
    where = f"call '{insn.id}' of '{callee.name}' in '{caller.name}'"
    _, pos_to_kw = get_kw_pos_association(callee)
    inputs = [callee.arg_dict[pos_to_kw[k]] for k in sorted(k for k in pos_to_kw if k >= 0)]
    outputs = [callee.arg_dict[pos_to_kw[k]]
               for k in sorted((k for k in pos_to_kw if k < 0), reverse=True)]
    params = insn.expression.parameters
    assignees = insn.assignees if isinstance(insn, CallInstruction) else (insn.assignee,)
    if len(params) != len(inputs) or len(assignees) != len(outputs):
        raise KernelcoreError(
            f"{where}: the callee takes {len(inputs)} input(s) "
            f"({', '.join(a.name for a in inputs)}) and returns {len(outputs)} "
            f"output(s) ({', '.join(a.name for a in outputs)}); the call passes "
            f"{len(params)} and assigns {len(assignees)}")

    callee = expand_subst(callee)
    values = {}
    fixed = {}
    for arg, p in zip(inputs, params):
        if not isinstance(arg, ValueArg):
            continue
        if _static(p) is not None:
            fixed[arg.name] = _static(p)
        elif isinstance(p, prim.Variable) and (p.name in caller.all_params() or isinstance(
                caller.arg_dict.get(p.name), ValueArg)):
            callee = callee.copy(domains=tuple(_rename_dim(d, arg.name, p.name)
                                               for d in callee.domains))
            values[arg.name] = p
        elif arg.name in callee.all_params():
            raise KernelcoreError(
                f"{where}: '{arg.name}' bounds the callee's loops, so it must be passed "
                f"an integer or a parameter of the caller, not {p}")
        else:
            values[arg.name] = p
    if fixed:
        callee = fix_parameters(callee, **fixed)
        values.update(fixed)
    arrays: dict[str, _ArgumentBinding] = {}
    for arg, p in list(zip(inputs, params)) + list(zip(outputs, assignees)):
        if isinstance(arg, ArrayArg):
            binding = _ArgumentBinding(caller, arg, p, where)
            if arg.name in arrays and arrays[arg.name].name != binding.name:
                raise KernelcoreError(f"{where}: '{arg.name}' is read and written by the "
                                      "callee, so pass the same array for both")
            arrays[arg.name] = binding

    for iname in callee.all_inames():
        callee = rename_iname(callee, iname, names(f"{callee.name}_{iname}"))
    renames = {t: names(f"{callee.name}_{t}") for t in callee.temporary_variables}
    rewriter = _Rewriter(arrays, values, renames)
    id_map = {i.id: names(f"{callee.name}_{i.id}") for i in callee.instructions}
    new_insns = []
    for ci in callee.instructions:
        ci = ci.with_transformed_expressions(rewriter)
        deps = frozenset(id_map[d] for d in ci.depends_on) | insn.depends_on
        new_insns.append(ci.copy(
            id=id_map[ci.id], depends_on=deps,
            within_inames=ci.within_inames | insn.within_inames,
            predicates=ci.predicates | insn.predicates))
    inlined_ids = frozenset(id_map.values())

    instructions = []
    for ci in caller.instructions:
        if ci.id == insn.id:
            instructions += new_insns
            continue
        if insn.id in ci.depends_on:
            ci = ci.copy(depends_on=(ci.depends_on - {insn.id}) | inlined_ids)
        instructions.append(ci)
    temps = dict(caller.temporary_variables)
    for old, new in renames.items():
        temps[new] = callee.temporary_variables[old].copy(name=new)
    return caller.copy(
        domains=caller.domains + callee.domains, instructions=tuple(instructions),
        temporary_variables=temps, iname_tags={**caller.iname_tags, **callee.iname_tags},
        loop_priority=caller.loop_priority + callee.loop_priority,
        iname_slabs={**caller.iname_slabs, **callee.iname_slabs},
        callables={**callee.callables, **caller.callables},
        preambles=caller.preambles + tuple(p for p in callee.preambles
                                           if p not in caller.preambles),
        preamble_generators=caller.preamble_generators + tuple(
            g for g in callee.preamble_generators if g not in caller.preamble_generators))


def _inline_into(caller: LoopKernel, callee: LoopKernel) -> LoopKernel:
    if callee.index_dtype != caller.index_dtype and any(
            _calls(i, callee.name) for i in caller.instructions):
        raise KernelcoreError(
            f"kernel '{caller.name}' (index type {caller.index_dtype}) calls kernel "
            f"'{callee.name}' (index type {callee.index_dtype}): make their index_dtype "
            "the same")
    names = UniqueNameGenerator(
        set(caller.all_inames()) | set(caller.all_params()) | set(caller.arg_dict)
        | set(caller.temporary_variables) | {i.id for i in caller.instructions})
    while True:
        site = next((i for i in caller.instructions if _calls(i, callee.name)), None)
        if site is None:
            return caller
        caller = _inline_call(caller, callee, site, names)


def inline_callable_kernel(tu: TranslationUnit, function_name: str) -> TranslationUnit:
    """*tu* with every call to its kernel *function_name* replaced by the
    kernel's instructions; the callee stays only if it is an entry point."""
    callee = tu[function_name]
    if not isinstance(callee, LoopKernel):
        raise KernelcoreError(f"'{function_name}' is not a kernel of the translation unit")
    table = {}
    for name, clbl in tu.callables_table.items():
        if name == function_name and name not in tu.entrypoints:
            continue
        if isinstance(clbl, CallableKernel) and name != function_name:
            clbl = clbl.copy(subkernel=_inline_into(clbl.subkernel, callee))
        table[name] = clbl
    return tu.copy(callables_table=table)


def inline_calls(knl: LoopKernel, kernels: dict[str, LoopKernel]) -> LoopKernel:
    """*knl* with its calls to the kernels *kernels* (by name) inlined, the
    calls inside those too."""
    seen: list[str] = []
    while True:
        pending = sorted((kernel_called_names(knl) & set(kernels)) - {knl.name})
        if not pending:
            return knl
        name = pending[0]
        if seen.count(name) > 32:
            raise KernelcoreError(f"kernel '{name}' calls itself (recursion is not "
                                  "supported)")
        seen.append(name)
        new = _inline_into(knl, kernels[name])
        if new is knl:
            raise KernelcoreError(f"kernel '{knl.name}' calls kernel '{name}' in a form "
                                  "kernelcore cannot inline")
        knl = new

provide("inline_calls", inline_calls)
