"""Keeping private temporaries alive across global barriers.

Each global barrier ends a device kernel, and neither private nor local memory
outlives one. :func:`save_and_reload_temporaries` finds private and local
temporaries written in one device kernel and read in a later one, stores them
into a global "save slot" (one copy per work-item for private ones, per
work-group for local ones) at the end of the writing kernel, and loads them
back at the start of the reading kernel.

Public names: save_and_reload_temporaries.
"""

from __future__ import annotations

import islpy as isl
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, TemporaryVariable
from kernelcore.ir.domain import pw_aff_to_expr
from kernelcore.ir.grid import hw_iname_ranges
from kernelcore.ir.instruction import Assignment, BarrierInstruction
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.ir.tags import GroupIndexTag, is_hw_parallel
from kernelcore.schedule.items import CallKernel, RunInstruction
from kernelcore.schedule.linearize import linearize
from kernelcore.translation_unit import for_each_kernel


def _kernel_of(knl) -> tuple[dict[str, int], list[list[str]]]:
    where: dict[str, int] = {}
    barriers_after: list[list[str]] = []
    k = -1
    for item in knl.linearization:
        if isinstance(item, CallKernel):
            k += 1
            barriers_after.append([])
        elif isinstance(item, RunInstruction):
            insn = knl.id_to_insn[item.insn_id]
            if isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global":
                if k >= 0:      # (one before the first kernel separates nothing)
                    barriers_after[k].append(insn.id)
            else:
                where[item.insn_id] = k
    return where, barriers_after


def _element_loops(shape: tuple[int, ...], base: str, names: UniqueNameGenerator,
                   domains: list) -> list[str]:
    """New loop indices over an array of *shape*, their domain appended to *domains*."""
    dims = [names(f"{base}_{k}") for k in range(len(shape))]
    if dims:
        bounds = " and ".join(f"0 <= {d} < {n}" for d, n in zip(dims, shape))
        domains.append(isl.BasicSet(f"{{ [{', '.join(dims)}]: {bounds} }}"))
    return dims


def _element(name: str, head: tuple, dims: list[str]) -> prim.Expression:
    index = head + tuple(prim.Variable(d) for d in dims)
    return prim.Subscript(prim.Variable(name), index) if index else prim.Variable(name)


def _check_same_parallel_axes(knl: LoopKernel, name: str, accessors: list) -> None:
    """Raise unless the instructions writing *name* and reading it back run
    on the same parallel axes (else which copy a work-item reloads is
    ambiguous), as loopy requires."""
    def axes(insn) -> list[str]:
        return sorted(str(t) for n in insn.within_inames
                      if is_hw_parallel(t := knl.iname_tags.get(n)))
    first = axes(accessors[0])
    for insn in accessors[1:]:
        if axes(insn) != first:
            raise KernelcoreError(
                f"save_and_reload_temporaries: '{name}' is accessed on inconsistent "
                f"parallel axes ('{accessors[0].id}' runs on {first or 'none'}, "
                f"'{insn.id}' on {axes(insn) or 'none'}): which copy to reload "
                "is ambiguous")


@for_each_kernel
def save_and_reload_temporaries(knl: LoopKernel) -> LoopKernel:
    """A copy of *knl* that saves and reloads private and local temporaries live
    across global barriers (linearize it again afterwards)."""
    if knl.state < KernelState.LINEARIZED:
        knl = linearize(knl)
    where, barriers_after = _kernel_of(knl)
    ranges = {r.iname: r for r in hw_iname_ranges(knl)}
    insns = {i.id: i for i in knl.instructions}
    order = [i.id for i in knl.instructions]
    temps = dict(knl.temporary_variables)
    domains = list(knl.domains)
    names = UniqueNameGenerator(set(knl.all_inames()) | set(knl.all_params())
                                | set(knl.arg_dict) | set(temps))
    for name, tv in knl.temporary_variables.items():
        if tv.address_space not in (AddressSpace.PRIVATE, AddressSpace.LOCAL):
            continue
        writers = [i for i in knl.instructions if name in i.assignee_names()]
        readers = [i for i in knl.instructions if name in i.read_dependency_names()]
        written_in = {where[w.id] for w in writers}
        for k in sorted({where[r.id] for r in readers} - written_in):
            before = [w for w in writers if where[w.id] < k]
            if not before:
                continue
            source = max(where[w.id] for w in before)
            last_writers = [w for w in before if where[w.id] == source]
            _check_same_parallel_axes(knl, name, last_writers
                                      + [r for r in readers if where[r.id] == k])
            hw = sorted((set().union(*(w.within_inames for w in last_writers)))
                        & set(ranges), key=knl.all_inames().index)
            if tv.address_space == AddressSpace.LOCAL:   # one copy per work-group
                hw = [h for h in hw if isinstance(knl.iname_tags.get(h), GroupIndexTag)]
            if not all(isinstance(n, int) for n in tv.shape):
                raise KernelcoreError(f"save_and_reload_temporaries: '{name}' has shape "
                                      f"{tv.shape}; only constant shapes can be saved")
            slot = f"{name}_save_slot"
            if slot not in temps:
                shape = tuple(pw_aff_to_expr(ranges[h].size) for h in hw) + tuple(tv.shape)
                temps[slot] = TemporaryVariable(slot, tv.dtype, shape,
                                                address_space=AddressSpace.GLOBAL)
            index = tuple(prim.Variable(h) if ranges[h].lower == 0 else
                          prim.Sum((prim.Variable(h),
                                    prim.Product((-1, ranges[h].lower))))  # type: ignore[arg-type]
                          for h in hw)
            save_id, reload_id = f"{name}.save", f"{name}.reload.{k}"
            if save_id not in insns:
                dims = _element_loops(tv.shape, f"{name}_save_dim", names, domains)
                insns[save_id] = Assignment(
                    id=save_id, assignee=_element(slot, index, dims),
                    expression=_element(name, (), dims),
                    within_inames=frozenset(hw) | frozenset(dims),
                    depends_on=frozenset(w.id for w in last_writers))
                order.insert(max(order.index(w.id) for w in last_writers) + 1, save_id)
            gbars = [b for j in range(source, k) for b in barriers_after[j]]
            for b in gbars:
                insns[b] = insns[b].copy(depends_on=insns[b].depends_on | {save_id})
            reader_ids = [r.id for r in readers if where[r.id] == k]
            dims = _element_loops(tv.shape, f"{name}_reload_dim", names, domains)
            insns[reload_id] = Assignment(
                id=reload_id, assignee=_element(name, (), dims),
                expression=_element(slot, index, dims),
                within_inames=frozenset(hw) | frozenset(dims),
                depends_on=frozenset(gbars) | {save_id})
            order.insert(min(order.index(r) for r in reader_ids), reload_id)
            for r in reader_ids:
                insns[r] = insns[r].copy(depends_on=insns[r].depends_on | {reload_id})
    # (global barriers inside one device kernel keep the values: nothing to save,
    # but the definition check must know that saving was asked for)
    for iid, insn in insns.items():
        if isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global":
            insns[iid] = insn.copy(values_saved=True)
    return knl.copy(instructions=tuple(insns[i] for i in order), temporary_variables=temps,
                    domains=tuple(domains), state=KernelState.PREPROCESSED, linearization=None)
