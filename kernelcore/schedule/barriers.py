"""Kernel splitting at global barriers, and local barrier insertion.

A global barrier (``... gbarrier``) ends one device kernel and starts the next.
A sequential loop holding one is run by the host: each stretch of its body is a
device kernel taking the loop's index as an argument, launched once per iteration
(the number of iterations must be constant). Where the kernel runs as one
work-group, the loop stays in the kernel instead: the barrier synchronizes the
group, or is dropped if the group is one work-item. Within each device kernel,
a local barrier goes before any instruction whose access to local memory conflicts
(read-after-write, write-after-read, write-after-write) with an access since
the last barrier at a different element (so possibly by another work-item),
and at the end of a loop body when the next iteration would conflict with the
end of this one. ``nosync`` options suppress barriers between the named
instructions.

Public names: split_kernels, insert_local_barriers, is_global_barrier.
"""

from __future__ import annotations

import islpy as isl

from kernelcore.check_overlap import may_touch_across_work_items
from kernelcore.diagnostic import SchedulingError
from kernelcore.ir.data import AddressSpace
from kernelcore.ir.domain import project_to
from kernelcore.ir.expr import WalkMapper
from kernelcore.ir.instruction import (
    Assignment,
    BarrierInstruction,
    assignee_subscript,
    assignee_var_name,
)
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, is_hw_parallel
from kernelcore.schedule.items import (
    Barrier,
    CallKernel,
    EnterLoop,
    LeaveLoop,
    ReturnFromKernel,
    RunInstruction,
)


def is_global_barrier(knl: LoopKernel, item) -> bool:
    """Whether the linearization *item* runs a global barrier."""
    if not isinstance(item, RunInstruction):
        return False
    insn = knl.id_to_insn[item.insn_id]
    return isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global"


def _loop_end(items: list, start: int) -> int:
    """The index of the LeaveLoop closing the loop entered at *start*."""
    depth = 0
    for k in range(start, len(items)):
        if isinstance(items[k], EnterLoop):
            depth += 1
        elif isinstance(items[k], LeaveLoop):
            depth -= 1
            if depth == 0:
                return k
    raise AssertionError("unbalanced linearization")


def _host_loop_values(knl: LoopKernel, iname: str, fixed: tuple) -> range:
    """The values of the sequential loop *iname* run by the host, given the
    values *fixed* of the host loops around it."""
    names = [iname] + [n for n, _ in fixed]
    dom = knl.get_inames_domain(names) & knl.assumptions_set
    for name, value in fixed:
        if name in dom.get_var_dict():
            dim_kind, pos = dom.get_var_dict()[name]
            dom = dom.fix_val(dim_kind, pos, value)
    dom = project_to(dom, [iname])
    if dom.dim(isl.dim_type.param):
        dom = dom.project_out(isl.dim_type.param, 0, dom.dim(isl.dim_type.param))
    lo, hi = dom.dim_min_val(0), dom.dim_max_val(0)
    if not (lo.is_int() and hi.is_int()):
        raise SchedulingError(
            f"the sequential loop '{iname}' holds a global barrier, so the host runs it, "
            "which needs a constant number of iterations (fix its bounds with "
            "fix_parameters or assumptions)")
    return range(lo.to_python(), hi.to_python() + 1)


def split_kernels(knl: LoopKernel, items: list) -> list:
    """Wrap *items* in CallKernel/ReturnFromKernel, one device kernel per stretch
    between global barriers. A sequential loop holding a global barrier is run by
    the host: its stretches are device kernels launched once per iteration, with
    the loop's value (:attr:`CallKernel.fixed`) as an argument."""
    result: list = []
    # the kernel of each stretch, by (its body, its place there): the iterations
    # of a host loop launch the same kernels
    names: dict[tuple[int, int], str] = {}
    # a launch of one work-group synchronizes at a global barrier like at a local one
    one_group = not any(isinstance(t, GroupIndexTag) for t in knl.iname_tags.values())
    one_item = not any(is_hw_parallel(t) for t in knl.iname_tags.values())

    def flush(current: list, fixed: tuple, where: tuple[int, int]) -> None:
        if where not in names:
            names[where] = f"{knl.name}_{len(names) - 1}" if names else knl.name
        result.append(CallKernel(names[where], fixed))
        result.extend(current)
        result.append(ReturnFromKernel(names[where]))

    def walk(body: list, fixed: tuple) -> None:
        current: list = []
        stretches = 0

        def flush_here(current: list) -> None:
            nonlocal stretches
            flush(current, fixed, (id(body), stretches))
            stretches += 1
        k = 0
        while k < len(body):
            item = body[k]
            if isinstance(item, EnterLoop):
                end = _loop_end(body, k)
                inner = body[k + 1:end]
                values = None
                if not one_group and any(is_global_barrier(knl, i) for i in inner):
                    values = _host_loop_values(knl, item.iname, fixed)
                if values is None:
                    # no host loop: within one work-group, the global barriers
                    # synchronize in the kernel; for one work-item, they are no-ops
                    current += [i for i in body[k:end + 1]
                                if not (one_item and is_global_barrier(knl, i))]
                else:
                    if current:
                        flush_here(current)
                        current = []
                    for value in values:
                        walk(inner, (*fixed, (item.iname, value)))
                k = end + 1
                continue
            if is_global_barrier(knl, item):
                if current:
                    flush_here(current)
                    current = []
                result.append(item)
            else:
                current.append(item)
            k += 1
        if current:
            flush_here(current)

    walk(items, ())
    if not any(isinstance(i, CallKernel) for i in result):
        flush([], (), (0, 0))
    return result


class _Accesses(WalkMapper):
    def __init__(self, names: set[str]):
        self.names = names
        self.found: list[tuple[str, tuple]] = []

    def map_variable(self, expr):
        if expr.name in self.names:
            self.found.append((expr.name, ()))

    def map_subscript(self, expr):
        agg = expr.aggregate
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        if getattr(agg, "name", None) in self.names:
            self.found.append((agg.name, tuple(idx)))
        for i in idx:
            self.rec(i)

    def map_constant(self, expr):
        pass

    map_nan = map_constant


def _local_accesses(knl, insn, local_names: set[str]) -> list[tuple[str, str, tuple]]:
    result = []
    if isinstance(insn, Assignment):
        name = assignee_var_name(insn.assignee)
        if name in local_names:
            result.append((name, "w", tuple(assignee_subscript(insn.assignee))))
        reads = [insn.expression, *assignee_subscript(insn.assignee), *insn.predicates]
    else:
        reads = list(insn.predicates)
    finder = _Accesses(local_names)
    for e in reads:
        finder(e)
    result += [(n, "r", idx) for n, idx in finder.found]
    return result


def _conflict(knl, insn, accesses, pending):
    for name, kind, idx in accesses:
        for p_id, p_name, p_kind, p_idx in pending:
            if p_name != name or (kind == "r" and p_kind == "r"):
                continue
            if idx == p_idx and idx:
                continue          # the same element: the same work-item
            if not may_touch_across_work_items(knl, insn, idx, knl.id_to_insn[p_id], p_idx):
                continue          # each work-item keeps to elements of its own
            if {(p_id, "any"), (p_id, "local")} & insn.no_sync_with or {
                    (insn.id, "any"), (insn.id, "local")} & knl.id_to_insn[p_id].no_sync_with:
                continue
            return f"for {name} ({insn.id} depends on {p_id})" \
                if p_id in insn.depends_on else f"for {name} ({insn.id} after {p_id})"
    return None


def insert_local_barriers(knl: LoopKernel, items: list) -> list:
    """*items* with local barriers where local-memory accesses need them."""
    local_names = {n for n, tv in knl.temporary_variables.items()
                   if tv.address_space == AddressSpace.LOCAL}
    if not local_names:
        return items

    def walk(seq: list, pending: list) -> tuple[list, list]:
        out: list = []
        k = 0
        while k < len(seq):
            item = seq[k]
            if isinstance(item, EnterLoop):
                depth, end = 0, k
                for end in range(k, len(seq)):
                    if isinstance(seq[end], EnterLoop):
                        depth += 1
                    elif isinstance(seq[end], LeaveLoop):
                        depth -= 1
                        if depth == 0:
                            break
                body = seq[k + 1:end]
                # a conflict with anything in the loop is settled before it starts
                why = None
                for insn, acc in _region(knl, body, local_names, stop_at_barrier=False):
                    why = why or _conflict(knl, insn, acc, pending)
                if why:
                    out.append(Barrier("local", why))
                    pending = []
                new_body, after = walk(body, list(pending))
                # the next iteration starts after this one's last accesses
                first_region = _region(knl, new_body, local_names)
                carried = None
                for insn, acc in first_region:
                    carried = carried or _conflict(knl, insn, acc, after)
                if carried:
                    new_body.append(Barrier("local", f"{carried}, next iteration"))
                    after = []
                out += [item] + new_body + [seq[end]]
                pending = pending + after
                k = end + 1
                continue
            if isinstance(item, RunInstruction):
                insn = knl.id_to_insn[item.insn_id]
                if isinstance(insn, BarrierInstruction):
                    out.append(item)
                    pending = []
                    k += 1
                    continue
                acc = _local_accesses(knl, insn, local_names)
                why = _conflict(knl, insn, acc, pending)
                if why:
                    out.append(Barrier("local", why))
                    pending = []
                pending = pending + [(insn.id, n, kd, ix) for n, kd, ix in acc]
            elif isinstance(item, Barrier):
                pending = []
            out.append(item)
            k += 1
        return out, pending

    result: list = []
    segment: list | None = []
    for item in items:
        if isinstance(item, CallKernel):
            segment = []
            result.append(item)
        elif isinstance(item, ReturnFromKernel):
            assert segment is not None
            result += walk(segment, [])[0]
            result.append(item)
            segment = None
        elif segment is None:
            result.append(item)
        else:
            segment.append(item)
    return result


def _region(knl, body: list, local_names, stop_at_barrier: bool = True):
    """(instruction, accesses) of the body (up to its first barrier)."""
    region = []
    for item in body:
        if isinstance(item, Barrier) and stop_at_barrier:
            break
        if isinstance(item, RunInstruction):
            insn = knl.id_to_insn[item.insn_id]
            if isinstance(insn, BarrierInstruction) and stop_at_barrier:
                break
            region.append((insn, _local_accesses(knl, insn, local_names)))
    return region
