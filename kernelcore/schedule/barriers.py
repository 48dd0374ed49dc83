"""Kernel splitting at global barriers, and local barrier insertion.

A global barrier (``... gbarrier``) ends one device kernel and starts the next;
it may not sit inside a sequential loop. Within each device kernel, a local
barrier goes before any instruction whose access to local memory conflicts
(read-after-write, write-after-read, write-after-write) with an access since
the last barrier at a different element (so possibly by another work-item),
and at the end of a loop body when the next iteration would conflict with the
end of this one. ``nosync`` options suppress barriers between the named
instructions.

Public names: split_kernels, insert_local_barriers.
"""

from __future__ import annotations

from kernelcore.diagnostic import SchedulingError
from kernelcore.ir.data import AddressSpace
from kernelcore.ir.expr import WalkMapper
from kernelcore.ir.instruction import (
    Assignment,
    BarrierInstruction,
    assignee_subscript,
    assignee_var_name,
)
from kernelcore.ir.kernel import LoopKernel
from kernelcore.schedule.items import (
    Barrier,
    CallKernel,
    EnterLoop,
    LeaveLoop,
    ReturnFromKernel,
    RunInstruction,
)


def split_kernels(knl: LoopKernel, items: list) -> list:
    """Wrap *items* in CallKernel/ReturnFromKernel, one device kernel per stretch
    between top-level global barriers."""
    result: list = []
    names = [knl.name]
    depth = 0
    current: list = []

    def flush():
        result.append(CallKernel(names[-1]))
        result.extend(current)
        result.append(ReturnFromKernel(names[-1]))

    for item in items:
        if isinstance(item, EnterLoop):
            depth += 1
        elif isinstance(item, LeaveLoop):
            depth -= 1
        if isinstance(item, RunInstruction):
            insn = knl.id_to_insn[item.insn_id]
            if isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global":
                if depth:
                    raise SchedulingError(
                        f"global barrier '{insn.id}' is inside a sequential loop; global "
                        "barriers may only separate whole parallel loop nests")
                if current:
                    flush()
                    current = []
                    names.append(f"{knl.name}_{len(names) - 1}")
                result.append(item)
                continue
        current.append(item)
    if current or not result:
        flush()
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
            if (p_id, "any") in insn.no_sync_with or (insn.id, "any") in \
                    knl.id_to_insn[p_id].no_sync_with:
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
