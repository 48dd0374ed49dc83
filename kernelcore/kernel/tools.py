"""Kernel helpers at loopy's module path (``loopy.kernel.tools``).

Public names: get_global_barrier_order, find_most_recent_global_barrier,
make_copy_kernel.
"""

from __future__ import annotations

from typing import Any

from kernelcore.creation import make_kernel
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import ArrayArg, ValueArg
from kernelcore.ir.instruction import BarrierInstruction
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.data import tag_array_axes
from kernelcore.translation_unit import as_kernel


def _ancestors(knl: LoopKernel, insn_id: str) -> frozenset[str]:
    """The instructions *insn_id* depends on, directly or through others."""
    seen: set[str] = set()
    todo = list(knl.id_to_insn[insn_id].depends_on)
    while todo:
        dep = todo.pop()
        if dep not in seen:
            seen.add(dep)
            todo.extend(knl.id_to_insn[dep].depends_on)
    return frozenset(seen)


def get_global_barrier_order(knl: Any) -> tuple[str, ...]:
    """The ids of the global barriers of *knl* (a kernel or a translation unit's
    entry point) in the order their dependencies impose; raises if two of them
    are not ordered by dependencies."""
    knl = as_kernel(knl)
    barriers = [i.id for i in knl.instructions
                if isinstance(i, BarrierInstruction) and i.synchronization_kind == "global"]
    before = {b: _ancestors(knl, b) for b in barriers}
    order = sorted(barriers, key=lambda b: len(before[b] & set(barriers)))
    for earlier, later in zip(order, order[1:]):
        if earlier not in before[later]:
            raise KernelcoreError(
                f"in kernel {knl.name}: global barriers '{earlier}' and '{later}' are not "
                f"ordered: make one depend on the other (e.g. {{dep={earlier}}} on "
                f"'{later}')")
    return tuple(order)


def find_most_recent_global_barrier(knl: Any, insn_id: str) -> str | None:
    """The id of the last global barrier (in :func:`get_global_barrier_order`)
    that instruction *insn_id* depends on, or None."""
    knl = as_kernel(knl)
    deps = _ancestors(knl, insn_id)
    found = [b for b in get_global_barrier_order(knl) if b in deps]
    return found[-1] if found else None


def make_copy_kernel(new_dim_tags: str, old_dim_tags: str | None = None) -> Any:
    """A translation unit copying array ``input`` to array ``output`` (of the
    same shape, ``(n0, n1, ...)``) with the axis layouts *old_dim_tags* (default:
    C order) and *new_dim_tags* (as :func:`~kernelcore.tag_array_axes` takes them)."""

    rank = len(new_dim_tags.split(","))
    old_dim_tags = old_dim_tags or ",".join(["c"] * rank)
    if len(old_dim_tags.split(",")) != rank:
        raise KernelcoreError(f"make_copy_kernel: {new_dim_tags!r} and {old_dim_tags!r} "
                              "give different numbers of axes")
    inames = [f"i{k}" for k in range(rank)]
    sizes = [f"n{k}" for k in range(rank)]
    index = ", ".join(inames)
    domain = "{{[{}]: {}}}".format(index, " and ".join(
        f"0 <= {i} < {n}" for i, n in zip(inames, sizes)))
    t_unit = make_kernel(domain, f"output[{index}] = input[{index}]",
                         [ArrayArg("input", shape=tuple(sizes)),
                          ArrayArg("output", shape=tuple(sizes)),
                          *(ValueArg(n, "int32") for n in sizes)],
                         name="copy")
    t_unit = tag_array_axes(t_unit, "input", old_dim_tags)
    return tag_array_axes(t_unit, "output", new_dim_tags)


__all__ = ["get_global_barrier_order", "find_most_recent_global_barrier",
           "make_copy_kernel"]
