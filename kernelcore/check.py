"""Checks of a preprocessed kernel that catch wrong programs before they run.

Public names: check_kernel.
"""

from __future__ import annotations

from kernelcore.diagnostic import KernelcoreError, WriteRaceConditionWarning
from kernelcore.ir.data import ArrayArg
from kernelcore.ir.expr import WalkMapper, find_reductions, get_dependencies
from kernelcore.ir.instruction import Assignment, assignee_subscript, assignee_var_name
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
    """Raise if the kernel would race or reduce across parallel work-items."""
    hw = {n for n in knl.all_inames() if is_hw_parallel(knl.iname_tags.get(n))
          and any(n in i.within_inames for i in knl.instructions)}
    for insn in knl.instructions:
        for expr in insn.expressions():
            for red in find_reductions(expr):
                bad = [n for n in red.inames if is_hw_parallel(knl.iname_tags.get(n))]
                if bad:
                    raise KernelcoreError(
                        f"instruction '{insn.id}' reduces over parallel iname(s) "
                        f"{', '.join(bad)}: parallel reductions are not supported yet; "
                        "keep reduction inames sequential")
    if not hw:
        return
    axes = {_axis(knl, n) for n in hw}
    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            continue
        name = assignee_var_name(insn.assignee)
        var = knl.arg_dict.get(name)
        if not isinstance(var, ArrayArg):
            continue
        sub = assignee_subscript(insn.assignee)
        used = set().union(*(get_dependencies(s) for s in sub)) if sub else set()
        # every hardware axis of the launch must select a different element
        covered = {_axis(knl, n) for n in insn.within_inames & hw & used}
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
        # reads of the same array elsewhere than the written element cross work-items
        for other in knl.instructions:
            reads = _Reads(name)
            for e in other.expressions():
                if isinstance(other, Assignment) and e is other.assignee:
                    continue
                reads(e)
            related = other.id == insn.id or insn.id in _ancestors(knl, other.id)
            for idx in reads.indices:
                if not related or tuple(idx) == tuple(sub):
                    continue
                crossing = sorted((set().union(*(get_dependencies(i) for i in idx))
                                   | used) & hw)
                if crossing:
                    raise KernelcoreError(
                        f"in kernel {knl.name}: instruction '{other.id}' reads '{name}' at "
                        f"[{', '.join(map(str, idx))}] while '{insn.id}' writes it at "
                        f"[{', '.join(map(str, sub))}]: the data flows between work-items "
                        f"along parallel iname(s) {', '.join(crossing)}, which needs a "
                        "barrier or separate kernels")


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
