"""Checks of a preprocessed kernel that catch wrong programs before they run.

Public names: check_kernel.
"""

from __future__ import annotations

from kernelcore.diagnostic import (
    KernelcoreError, MissingBarrierError, WriteRaceConditionWarning)
from kernelcore.ir.data import AddressSpace, ArrayArg
from kernelcore.ir.expr import WalkMapper, find_reductions, get_dependencies
from kernelcore.ir.instruction import (
    Assignment, BarrierInstruction, assignee_subscript, assignee_var_name)
from kernelcore.ir.tags import LocalIndexTag, is_hw_parallel


class _Reads(WalkMapper):
    def __init__(self, name: str):
        self.name = name
        self.indices: list[tuple] = []

    def map_subscript(self, expr):
        agg = expr.aggregate
        if getattr(agg, "name", None) == self.name:
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            self.indices.append(idx)
        for i in (expr.index if isinstance(expr.index, tuple) else (expr.index,)):
            self.rec(i)

    def map_constant(self, expr):
        pass

    map_nan = map_constant


def _silenced(knl, kind: str, insn_id: str) -> bool:
    return f"{kind}({insn_id})" in knl.silenced_warnings or kind in knl.silenced_warnings


def check_kernel(knl) -> None:
    """Raise if the kernel would race, or move data between work-items without
    a global barrier."""
    hw = {n for n in knl.all_inames() if is_hw_parallel(knl.iname_tags.get(n))
          and any(n in i.within_inames for i in knl.instructions)}
    if not hw:
        return
    # a global barrier ends a device kernel: only the parallel inames of the
    # instructions after the same global barriers share a launch
    stretch = {i.id: frozenset(a for a in _ancestors(knl, i.id)
                               if _is_global_barrier(knl.id_to_insn[a]))
               for i in knl.instructions}
    launch_axes: dict[frozenset, set] = {}
    for i in knl.instructions:
        launch_axes.setdefault(stretch[i.id], set()).update(
            _axis(knl, n) for n in i.within_inames & hw)
    for insn in knl.instructions:
        axes = launch_axes[stretch[insn.id]]
        if not isinstance(insn, Assignment):
            continue
        name = assignee_var_name(insn.assignee)
        var = knl.arg_dict.get(name) or knl.temporary_variables.get(name)
        if not (isinstance(var, ArrayArg) or getattr(var, "address_space", None)
                == AddressSpace.GLOBAL):
            continue
        if insn.atomic:
            if not getattr(var, "for_atomic", False):
                raise KernelcoreError(
                    f"instruction '{insn.id}' updates '{name}' atomically, but '{name}' is "
                    f"not declared for atomics: use lp.GlobalArg('{name}', ..., "
                    "for_atomic=True)")
            continue
        sub = assignee_subscript(insn.assignee)
        used = set().union(*(get_dependencies(s) for s in sub)) if sub else set()
        # every hardware axis of the launch must select a different element
        # (axes that the instruction reduces over combine into one value)
        reduced = {n for e in insn.expressions() for r in find_reductions(e)
                   for n in r.inames}
        covered = {_axis(knl, n) for n in insn.within_inames & hw & used} | {
            _axis(knl, n) for n in reduced if is_hw_parallel(knl.iname_tags.get(n))}
        missing = sorted(f"{kind}.{axis}" for kind, axis in axes - covered)
        if missing and not _silenced(knl, "write_race", insn.id):
            loose = sorted((insn.within_inames & hw) - used)
            raise WriteRaceConditionWarning(
                f"in kernel {knl.name}: instruction '{insn.id}' writes '{name}' at an index "
                f"that does not vary along parallel axis(es) {', '.join(missing)}"
                + (f" (iname(s) {', '.join(loose)} are not in its subscript)" if loose
                   else "")
                + ", so several work-items write the same element (add "
                f"'write_race({insn.id})' to silenced_warnings if that is intended)")
        # reads of the same array at other elements, ordered by a dependency,
        # move data between work-items: that needs a global barrier between them
        for other in knl.instructions:
            reads = _Reads(name)
            for e in other.expressions():
                if isinstance(other, Assignment) and e is other.assignee:
                    continue
                reads(e)
            if other.id == insn.id:
                pair = None
            elif insn.id in _ancestors(knl, other.id):
                pair = (other.id, insn.id)        # read after write
            elif other.id in _ancestors(knl, insn.id):
                pair = (insn.id, other.id)        # write after read
            else:
                continue
            for idx in reads.indices:
                if tuple(idx) == tuple(sub):
                    continue
                crossing = sorted((set().union(*(get_dependencies(i) for i in idx))
                                   | used) & hw)
                if not crossing:
                    continue
                if pair is None:
                    raise KernelcoreError(
                        f"in kernel {knl.name}: instruction '{insn.id}' reads '{name}' at "
                        f"[{', '.join(map(str, idx))}] and writes it at "
                        f"[{', '.join(map(str, sub))}]: other work-items (parallel "
                        f"iname(s) {', '.join(crossing)}) may read what it overwrites")
                later, earlier = pair
                if _separated_by_global_barrier(knl, later, earlier) or \
                        _nosync(knl, later, earlier):
                    continue
                raise MissingBarrierError(
                    f"Dependency '{later} depends on {earlier}' (for variable '{name}') "
                    "requires synchronization by a global barrier (add a '... gbarrier' "
                    "between them, or a 'nosync' instruction option (no_sync_with) to state "
                    "that no synchronization is needed)")


def _is_global_barrier(insn) -> bool:
    return isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global"


def _nosync(knl, a: str, b: str) -> bool:
    return (b, "any") in knl.id_to_insn[a].no_sync_with or \
        (a, "any") in knl.id_to_insn[b].no_sync_with


def _separated_by_global_barrier(knl, later: str, earlier: str) -> bool:
    for bid in _ancestors(knl, later):
        if _is_global_barrier(knl.id_to_insn[bid]) and earlier in _ancestors(knl, bid):
            return True
    return False


def _axis(knl, iname: str) -> tuple[str, int]:
    tag = knl.iname_tags[iname]
    return ("l" if isinstance(tag, LocalIndexTag) else "g", tag.axis)


def _ancestors(knl, insn_id: str) -> set[str]:
    seen: set[str] = set()
    todo = [insn_id]
    while todo:
        for dep in knl.id_to_insn[todo.pop()].depends_on:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen
