"""Reductions become explicit accumulator code (sequential in each work-item).

``out[i] = sum(k, e)`` turns into ``acc = 0`` (within i), ``acc = acc + e``
(within i, k) and ``out[i] = acc``, ordered by dependencies.

Public names: realize_reduction, reduction_identity.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.ir.data import AddressSpace, TemporaryVariable
from kernelcore.ir.expr import IdentityMapper, Reduction
from kernelcore.ir.instruction import Assignment
from kernelcore.types import TypeInferenceMapper, kernel_type_context


def reduction_identity(op: str, dtype: np.dtype):
    """The neutral element of *op* for *dtype* (max: -inf or the smallest integer)."""
    if op == "sum":
        return dtype.type(0)
    if op == "product":
        return dtype.type(1)
    if op in ("max", "min"):
        if dtype.kind == "f":
            return dtype.type(-np.inf if op == "max" else np.inf)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return dtype.type(info.min if op == "max" else info.max)
        if dtype.kind == "b":
            return dtype.type(op != "max")
    raise TypeError(f"no identity for reduction '{op}' over {dtype}")


def _combine(op: str, acc, value):
    if op == "sum":
        return prim.Sum((acc, value))
    if op == "product":
        return prim.Product((acc, value))
    return prim.Call(prim.Variable(op), (acc, value))


class _Realizer(IdentityMapper):
    def __init__(self, knl, insn, types: TypeInferenceMapper, names: UniqueNameGenerator):
        self.knl = knl
        self.insn = insn
        self.types = types
        self.names = names
        self.new_insns: list[Assignment] = []
        self.new_temps: dict[str, TemporaryVariable] = {}
        self.outer_inames = insn.within_inames

    def map_constant(self, expr):
        return expr

    def map_reduction(self, expr: Reduction):
        dtype = self.types(expr.expr).dtype
        if dtype.kind == "b" and expr.operation in ("sum", "product"):
            dtype = np.dtype(np.int64)
        acc = self.names(f"acc_{'_'.join(expr.inames)}")
        self.new_temps[acc] = TemporaryVariable(acc, dtype, (),
                                                address_space=AddressSpace.PRIVATE)
        within = self.outer_inames
        init_id = self.names(f"{self.insn.id}_{acc}_init")
        update_id = self.names(f"{self.insn.id}_{acc}_update")
        init = Assignment(id=init_id, assignee=prim.Variable(acc),
                          expression=reduction_identity(expr.operation, dtype),
                          within_inames=within, depends_on=self.insn.depends_on,
                          predicates=self.insn.predicates)
        saved = self.outer_inames
        self.outer_inames = within | frozenset(expr.inames)
        inner = self.rec(expr.expr)
        self.outer_inames = saved
        update = Assignment(id=update_id, assignee=prim.Variable(acc),
                            expression=_combine(expr.operation, prim.Variable(acc), inner),
                            within_inames=within | frozenset(expr.inames),
                            depends_on=self.insn.depends_on | {init_id}
                            | {i.id for i in self.new_insns if i.id.endswith("_update")},
                            predicates=self.insn.predicates)
        self.new_insns += [init, update]
        return prim.Variable(acc)


def realize_reduction(knl):
    """A copy of the (typed) kernel without Reduction nodes."""
    dtypes, weak = kernel_type_context(knl)
    types = TypeInferenceMapper(dtypes, weak)
    names = UniqueNameGenerator(set(dtypes) | {i.id for i in knl.instructions})
    new_insns = []
    temps = dict(knl.temporary_variables)
    changed = False
    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            new_insns.append(insn)
            continue
        realizer = _Realizer(knl, insn, types, names)
        expr = realizer(insn.expression)
        if not realizer.new_insns:
            new_insns.append(insn)
            continue
        changed = True
        temps.update(realizer.new_temps)
        new_insns += realizer.new_insns
        updates = {i.id for i in realizer.new_insns if i.id.endswith("_update")}
        new_insns.append(insn.copy(expression=expr, depends_on=insn.depends_on | updates))
    if not changed:
        return knl
    return knl.copy(instructions=tuple(new_insns), temporary_variables=temps)
