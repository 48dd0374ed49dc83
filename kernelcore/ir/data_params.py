"""Data-dependent loop bounds: domain parameters that are temporaries the
kernel computes (``<> row_len = ...`` bounding ``{[j]: 0<=j<row_len}``).

Such a loop runs inside the loops of the instruction that writes its bound,
after that instruction; its bounds are not known before the kernel runs.

Public names: data_dependent_params, data_dependent_inames, bound_writers.
"""

from __future__ import annotations

from islpy import dim_type

from kernelcore.ir.kernel import LoopKernel


def data_dependent_params(knl: LoopKernel) -> frozenset[str]:
    """The domain parameters of *knl* that are temporaries."""
    return frozenset(p for p in knl.all_params() if p in knl.temporary_variables)


def data_dependent_inames(knl: LoopKernel) -> dict[str, frozenset[str]]:
    """For each iname whose bounds depend (directly or through the domains
    around it) on data-dependent parameters: those parameters."""
    params = data_dependent_params(knl)
    if not params:
        return {}
    result: dict[str, frozenset[str]] = {}
    changed = True
    while changed:
        changed = False
        for dom in knl.domains:
            names = [dom.get_dim_name(dim_type.set, k) for k in range(dom.dim(dim_type.set))]
            found: set[str] = set()
            for k in range(dom.dim(dim_type.param)):
                p = dom.get_dim_name(dim_type.param, k)
                if p in params:
                    found.add(p)
                found |= result.get(p, frozenset())
            if not found:
                continue
            for n in names:
                new = result.get(n, frozenset()) | found
                if new != result.get(n):
                    result[n] = frozenset(new)
                    changed = True
    return result


def bound_writers(knl: LoopKernel) -> dict[str, frozenset[str]]:
    """For each iname with a data-dependent bound, the ids of the
    instructions that write the parameters it depends on."""
    result = {}
    for iname, params in data_dependent_inames(knl).items():
        result[iname] = frozenset(insn.id for insn in knl.instructions
                                  if insn.assignee_names() & params)
    return result


def add_bound_dependencies(knl: LoopKernel) -> LoopKernel:
    """*knl* with every instruction inside a loop with a data-dependent bound
    depending on the instructions that write that bound."""
    writers = bound_writers(knl)
    if not writers:
        return knl
    insns = []
    for insn in knl.instructions:
        needed: set[str] = set()
        for iname in insn.within_inames | insn.reduction_inames():
            needed |= writers.get(iname, frozenset())
        needed -= {insn.id}
        insns.append(insn.copy(depends_on=insn.depends_on | needed)
                     if not needed <= insn.depends_on else insn)
    return knl.copy(instructions=tuple(insns))
