"""Counting synchronization: barriers and kernel launches
(:func:`get_synchronization_map`).

Public names: get_synchronization_map.
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any

import islpy as isl

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.instruction import BarrierInstruction
from kernelcore.ir.kernel import KernelState
from kernelcore.schedule.items import (
    Barrier,
    CallKernel,
    EnterLoop,
    LeaveLoop,
    ReturnFromKernel,
    RunInstruction,
)
from kernelcore.schedule.linearize import linearize
from kernelcore.statistics.common import _domain_of, _prepare, _process_subgroup_size
from kernelcore.statistics.countmap import ToCountMap
from kernelcore.statistics.counts import Count
from kernelcore.statistics.footprint import point_count
from kernelcore.statistics.keys import Sync

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel
    from kernelcore.translation_unit import TranslationUnit

dim_type = isl.dim_type


# {{{ synchronization

def get_synchronization_map(knl: LoopKernel | TranslationUnit, subgroup_size: Any = None,
                            exact_counts: bool | None = None) -> ToCountMap:
    """Count synchronization events per work-item: ``barrier_local`` /
    ``barrier_global`` (once per iteration of the sequential loops around each
    barrier) and ``kernel_launch`` (once per device kernel). *exact_counts*:
    as for :func:`~kernelcore.statistics.get_op_map`."""
    _process_subgroup_size(subgroup_size)
    knl = _prepare(knl)
    if knl.state < KernelState.LINEARIZED or knl.linearization is None:
        knl = linearize(knl)
    result: dict = {}
    loops: list[str] = []
    cache: dict = {}

    def add(key):
        t = tuple(loops)
        if t not in cache:
            cache[t] = point_count(_domain_of(knl, t), exact_counts) if t \
                else Count.constant(1)
        result[key] = result[key] + cache[t] if key in result else cache[t]

    for item in knl.linearization:  # type: ignore[union-attr]
        if isinstance(item, EnterLoop):
            loops.append(item.iname)
        elif isinstance(item, LeaveLoop):
            loops.pop()
        elif isinstance(item, Barrier):
            add(Sync(f"barrier_{item.kind}", knl.name))
        elif isinstance(item, CallKernel):
            add(Sync("kernel_launch", knl.name))
        elif isinstance(item, RunInstruction):
            insn = knl.id_to_insn[item.insn_id]
            if isinstance(insn, BarrierInstruction):
                add(Sync(f"barrier_{insn.synchronization_kind}", knl.name))
        elif isinstance(item, ReturnFromKernel):
            pass
        else:
            raise KernelcoreError(f"unexpected linearization item {item!r}")
    return ToCountMap(result)

# }}}
