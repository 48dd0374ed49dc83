"""Transformations of loop indices (inames).

Public names: prioritize_loops.
"""

from __future__ import annotations

from kernelcore.ir.kernel import LoopKernel


def _names(spec) -> tuple[str, ...]:
    if isinstance(spec, str):
        return tuple(s.strip() for s in spec.split(",") if s.strip())
    return tuple(spec)


def prioritize_loops(knl: LoopKernel, loop_priority) -> LoopKernel:
    """Advise the nesting order of loops: ``"i,j"`` nests ``i`` outside ``j``
    where the kernel leaves the choice open."""
    names = _names(loop_priority)
    knl.check_inames(names, "prioritize_loops")
    return knl.copy(loop_priority=knl.loop_priority + (names,))
