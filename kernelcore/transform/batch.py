"""Running a kernel on a batch of inputs (loopy's ``to_batched``).

Public names: to_batched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import ArrayArg, ValueArg, auto
from kernelcore.ir.domain import parse_domain
from kernelcore.ir.expr import IdentityMapper
from kernelcore.ir.kernel import LoopKernel
from kernelcore.translation_unit import for_each_kernel


class _Batched(IdentityMapper):
    """Accesses to the variables *names* with the batch index in front."""

    def __init__(self, names: set[str], index: prim.Variable):
        self.names = names
        self.index = index

    def map_variable(self, expr: prim.Variable) -> Any:
        if expr.name in self.names:
            return prim.Subscript(expr, (self.index,))
        return expr

    def map_subscript(self, expr: prim.Subscript) -> Any:
        if isinstance(expr.aggregate, prim.Variable) and expr.aggregate.name in self.names:
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            return prim.Subscript(expr.aggregate, (self.index, *(self.rec(i) for i in idx)))
        return super().map_subscript(expr)

    def map_constant(self, expr: Any) -> Any:
        return expr


def _names(spec: str | Iterable[str]) -> set[str]:
    if isinstance(spec, str):
        return {s.strip() for s in spec.split(",") if s.strip()}
    return set(spec)


@for_each_kernel
def to_batched(kernel: LoopKernel, nbatches: str | int, batch_varying_args: str | Iterable[str],
               batch_iname_prefix: str = "ibatch", sequential: bool = False) -> LoopKernel:
    """*kernel* run *nbatches* times (a parameter name or an integer) in a new
    outermost loop: the arrays *batch_varying_args* get a leading axis of
    length *nbatches*, one slice per run. Unless *sequential*, temporaries
    computed from batch-varying values get one copy per run too (so the runs
    may be reordered or run in parallel); the others stay shared."""
    varying = _names(batch_varying_args)
    unknown = varying - set(kernel.arg_dict)
    if unknown:
        raise KernelcoreError(f"to_batched: no argument(s) {', '.join(sorted(unknown))}")
    taken = set(kernel.all_inames()) | set(kernel.all_params()) | set(kernel.arg_dict) \
        | set(kernel.temporary_variables)
    iname = UniqueNameGenerator(taken)(batch_iname_prefix)
    if not sequential:
        # temporaries written from batch-varying values vary with the batch too
        changed = True
        while changed:
            changed = False
            for insn in kernel.instructions:
                if insn.read_dependency_names() & varying:
                    new = (insn.assignee_names() & set(kernel.temporary_variables)) - varying
                    if new:
                        varying |= new
                        changed = True
    length: Any = prim.Variable(nbatches) if isinstance(nbatches, str) else int(nbatches)
    mapper = _Batched(varying, prim.Variable(iname))
    insns = tuple(i.with_transformed_expressions(mapper).copy(
        within_inames=i.within_inames | {iname}) for i in kernel.instructions)
    args = []
    for arg in kernel.args:
        if arg.name in varying:
            if not isinstance(arg, ArrayArg):
                raise KernelcoreError(f"to_batched: '{arg.name}' is a scalar argument; "
                                      "only arrays can vary over the batch")
            shape = arg.shape if arg.shape is auto else (length, *arg.shape)
            strides = arg.strides if not isinstance(arg.strides, tuple) else None
            arg = arg.copy(shape=shape, strides=strides)
        args.append(arg)
    if isinstance(nbatches, str) and nbatches not in kernel.arg_dict:
        args.append(ValueArg(nbatches, dtype=kernel.index_dtype))
    temps = {}
    for name, tv in kernel.temporary_variables.items():
        if name in varying:
            tv = tv.copy(shape=tv.shape if tv.shape is auto else (length, *tv.shape))
        temps[name] = tv
    domain = parse_domain(f"{{ [{iname}]: 0 <= {iname} < {nbatches} }}")
    return kernel.copy(domains=(*kernel.domains, domain), instructions=insns,
                       args=tuple(args), temporary_variables=temps)
