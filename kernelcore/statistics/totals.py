"""Per-work-item totals of a kernel: floating point operations by dtype and
bytes of global memory by array and direction.

Public names: WorkItemTotals, get_work_item_totals.

Each instruction's floating point operations and global memory references
(as :func:`~kernelcore.statistics.get_op_map` and
:func:`~kernelcore.statistics.get_mem_access_map` find them) count once per
point of its domain: exact, with no rounding to whole work-groups or
sub-groups. Parameters must be fixed (the kernel's domain has no free ones).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymbolic.primitives as prim

from kernelcore.ir.instruction import Assignment
from kernelcore.ir.kernel import LoopKernel
from kernelcore.statistics.common import _Grid, _InsnCounter, _prepare
from kernelcore.statistics.counts import CountGranularity
from kernelcore.statistics.memory import _AccessFinder, _memory_variables
from kernelcore.statistics.ops import _OpCounter, _type_function
from kernelcore.translation_unit import TranslationUnit


@dataclass(frozen=True)
class WorkItemTotals:
    """What a kernel computes and moves, summed over its work-items."""

    #: dtype name -> floating point operations of that dtype
    flops_by_dtype: dict[str, int]
    #: (array name, ``"load"`` or ``"store"``) -> bytes of global memory
    bytes_by_access: dict[tuple[str, str], int]

    @property
    def flops(self) -> int:
        return sum(self.flops_by_dtype.values())

    @property
    def flop_dtype(self) -> str | None:
        """The dtype of most of the operations (None: there are none)."""
        by_dtype = self.flops_by_dtype
        return max(by_dtype, key=lambda d: by_dtype[d]) if by_dtype else None

    @property
    def bytes(self) -> int:
        return sum(self.bytes_by_access.values())


class _Points:
    """The points of an instruction's domain, counted when first asked for
    (instructions that neither compute nor move data are not counted)."""

    def __init__(self, times: _InsnCounter, insn: Assignment):
        self.times, self.insn = times, insn
        self.value: int | None = None

    def __call__(self) -> int:
        if self.value is None:
            self.value = int(self.times(self.insn, CountGranularity.WORKITEM)
                             .eval_with_dict({}))
        return self.value


def get_work_item_totals(knl: LoopKernel | TranslationUnit) -> WorkItemTotals:
    """The :class:`WorkItemTotals` of *knl* (a kernel or a translation unit's
    entry point)."""
    knl = _prepare(knl)
    times = _InsnCounter(knl, _Grid(knl, None), False, exact=True)
    counter = _OpCounter(_type_function(knl), False)
    variables = {name: var for name, (mtype, var) in _memory_variables(knl).items()
                 if mtype == "global"}
    by_dtype: dict[str, int] = {}
    accesses: dict[tuple[str, str], int] = {}
    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            continue
        points = _Points(times, insn)
        ops = counter._merge(counter(insn.assignee), counter(insn.expression))
        for (dtype, _), mult in ops.items():
            if dtype is None:
                continue
            dtype = np.dtype(getattr(dtype, "numpy_dtype", dtype))
            if dtype.kind in "fc":
                by_dtype[dtype.name] = by_dtype.get(dtype.name, 0) + points() * mult
        finder = _AccessFinder(variables)
        finder(insn.expression)
        assignee = insn.assignee
        if isinstance(assignee, prim.Subscript):
            for index in (assignee.index if isinstance(assignee.index, tuple)
                          else (assignee.index,)):
                finder(index)
        found = [(name, "load") for name, _ in finder.found]
        target = getattr(assignee, "name", None) or getattr(
            getattr(assignee, "aggregate", None), "name", None)
        if target in variables:
            found.append((target, "store"))
        for name, direction in found:
            itemsize = np.dtype(getattr(variables[name].dtype, "numpy_dtype",
                                        variables[name].dtype)).itemsize
            accesses[(name, direction)] = accesses.get((name, direction), 0) \
                + points() * itemsize
    return WorkItemTotals(by_dtype, accesses)


__all__ = ["WorkItemTotals", "get_work_item_totals"]
