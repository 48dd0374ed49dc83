"""Transformations of domain parameters.

Public names: fix_parameters, assume.
"""

from __future__ import annotations

import islpy as isl

from kernelcore.diagnostic import UnknownNameError
from kernelcore.ir.data import ValueArg
from kernelcore.ir.domain import parse_assumptions
from kernelcore.ir.expr import substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.simplify import simplify
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


def _fix_in_set(s, name: str, value: int):
    var = s.get_var_dict()
    if name not in var:
        return s
    dt, idx = var[name]
    return s.fix_val(dt, idx, isl.Val.int_from_si(s.get_ctx(), value)).project_out(dt, idx, 1)


@for_each_kernel
def fix_parameters(knl: LoopKernel, **values: int) -> LoopKernel:
    """Replace parameters by fixed integer values everywhere in the kernel."""
    params = set(knl.all_params()) | {a.name for a in knl.args if isinstance(a, ValueArg)}
    unknown = sorted(set(values) - params)
    if unknown:
        raise UnknownNameError(f"fix_parameters: unknown parameter(s) {', '.join(unknown)} "
                               f"(kernel parameters: {', '.join(sorted(params))})")
    domains = []
    for dom in knl.domains:
        for name, value in values.items():
            dom = _fix_in_set(dom, name, int(value))
        domains.append(dom)

    def subst(expr):
        return substitute(expr, values)

    insns = tuple(i.with_transformed_expressions(subst) for i in knl.instructions)

    def fix_var(v):
        # (shapes folded to numbers: 'deg + 1' with deg=4 is 5)
        if getattr(v, "shape", None) and isinstance(v.shape, tuple):
            v = v.copy(shape=tuple(simplify(subst(s)) for s in v.shape))
        if isinstance(getattr(v, "strides", None), tuple):
            v = v.copy(strides=tuple(simplify(subst(s)) for s in v.strides))
        return v

    args = tuple(fix_var(a) for a in knl.args if a.name not in values)
    temps = {n: fix_var(t) for n, t in knl.temporary_variables.items()}
    assumptions = knl.assumptions
    if assumptions is not None:
        for name, value in values.items():
            assumptions = _fix_in_set(assumptions, name, int(value))
    return knl.copy(domains=tuple(domains), instructions=insns, args=args,
                    temporary_variables=temps, assumptions=assumptions)


@for_each_kernel
def assume(knl: LoopKernel, assumptions: str) -> LoopKernel:
    """Add assumptions about parameters (e.g. ``"n >= 1 and n mod 4 = 0"``)."""
    extra = parse_assumptions(assumptions, knl.ordered_params())
    current = knl.assumptions if knl.assumptions is not None else extra
    extra = extra.align_params(current.space)
    current = current.align_params(extra.space)
    return knl.copy(assumptions=(current & extra).coalesce())
