"""Linearization: choose loop nesting and instruction order.

Dependencies hold within the loops the two instructions share: a dependency
between instructions that share loop ``i`` is satisfied per iteration of ``i``;
an instruction outside a loop waits for the whole loop. Loop nesting follows
domain structure (an iname bounded by another is nested inside it), then
:func:`~kernelcore.prioritize_loops` advice, then the order of inames in the
domains.

Public names: linearize, get_one_linearized_kernel, get_one_scheduled_kernel,
check_dependency_cycles.
"""

from __future__ import annotations

import logging
from typing import Any

from kernelcore.check_ordering import check_variable_access_ordered
from kernelcore.diagnostic import (
    DependencyCycleFound,
    SchedulingError,
    WriteRaceConditionWarning,
    warn_with_kernel,
)
from kernelcore.ir.data import AddressSpace
from kernelcore.ir.expr import get_dependencies
from kernelcore.ir.instruction import Assignment, assignee_subscript, assignee_var_name
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.ir.tags import is_hw_parallel, is_lane_tag
from kernelcore.preprocess import preprocess_kernel
from kernelcore.schedule.barriers import insert_local_barriers, split_kernels
from kernelcore.schedule.items import EnterLoop, LeaveLoop, RunInstruction
from kernelcore.translation_unit import for_each_kernel

logger = logging.getLogger(__name__)


def check_dependency_cycles(knl: LoopKernel) -> None:
    """Raise :class:`DependencyCycleFound` (a :class:`SchedulingError`) naming a
    cycle if the dependencies have one."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(iid: str) -> None:
        state[iid] = 1
        path.append(iid)
        for dep in sorted(knl.id_to_insn[iid].depends_on):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep]
                raise DependencyCycleFound("dependency cycle between instructions: "
                                      + " -> ".join(reversed(cycle)))
            if dep not in state:
                visit(dep)
        path.pop()
        state[iid] = 2

    for insn in knl.instructions:
        if insn.id not in state:
            visit(insn.id)


def _priority_pairs(knl: LoopKernel) -> set[tuple[str, str]]:
    """(outer, inner) pairs the user asked for."""
    pairs = set()
    for prio in knl.loop_priority:
        for a_idx, a in enumerate(prio):
            for b in prio[a_idx + 1:]:
                pairs.add((a, b))
    return pairs


class _Linearizer:
    def __init__(self, knl: LoopKernel):
        self.knl = knl
        self.insns = knl.instructions
        self.order = {insn.id: k for k, insn in enumerate(self.insns)}
        self.iname_order = {n: k for k, n in enumerate(knl.all_inames())}
        self.parents = {n: knl.domain_parent_inames(n) for n in knl.all_inames()}
        self.prio = _priority_pairs(knl)
        self.done: set[str] = set()
        self.items: list = []
        self.ancestors: dict[str, frozenset[str]] = {}

    def _key(self, iid: str):
        insn = self.knl.id_to_insn[iid]
        return (-insn.priority, self.order[iid])

    def _choose_loop(self, insn, active: set[str]) -> str:
        todo = insn.within_inames - active
        openable = [n for n in todo if self.parents[n] <= active]
        unconstrained = [n for n in openable
                         if not any((m, n) in self.prio for m in todo if m != n)]
        pool = unconstrained or openable
        # ilp and vec loops go innermost: their iterations should interleave
        # with the loops inside them
        return min(pool, key=lambda n: (is_lane_tag(self.knl.iname_tags.get(n)),
                                        self.iname_order[n]))

    def _loop_body(self, loop: str, remaining: set[str], active_set: set[str],
                   ready: set[str]) -> tuple[set[str], int]:
        """Instructions that can run in one *loop* here, and how many were left
        out only for waiting on *ready* instructions outside it."""
        body = {iid for iid in remaining if loop in self.knl.id_to_insn[iid].within_inames}
        if is_lane_tag(self.knl.iname_tags.get(loop)):
            # an ilp (or vec) loop only wraps work that needs no further
            # sequential loops, so its iterations interleave inside those loops
            ilp = {n for n, t in self.knl.iname_tags.items() if is_lane_tag(t)}
            body = {iid for iid in body
                    if self.knl.id_to_insn[iid].within_inames - active_set <= ilp}
        premature = 0
        whole = frozenset(body)
        changed = True
        while changed:
            changed = False
            for iid in list(body):
                outside = {d for d in self.knl.id_to_insn[iid].depends_on
                           if d not in self.done and d not in body}
                if outside:
                    # premature: what it waits for could all run before this loop
                    premature += outside <= ready or not any(
                        self._ancestors(d) & whole for d in outside if d not in whole)
                    body.discard(iid)
                    changed = True
        return body, premature

    def _ancestors(self, iid: str) -> frozenset[str]:
        """The instructions *iid* depends on, directly or through others."""
        stack = [iid]
        while stack:        # post-order, without recursion (chains can be long)
            top = stack[-1]
            deps = self.knl.id_to_insn[top].depends_on
            todo = [d for d in deps if d not in self.ancestors and d not in stack]
            if todo and top not in self.ancestors:
                stack.extend(todo)
                continue
            stack.pop()
            if top not in self.ancestors:
                self.ancestors[top] = frozenset(deps).union(
                    *(self.ancestors.get(d, frozenset()) for d in deps))
        return self.ancestors[iid]

    def run(self, active: tuple[str, ...], block: set[str]) -> None:
        remaining = set(block)
        active_set = set(active)
        hw = {n for n in active if is_hw_parallel(self.knl.iname_tags.get(n))}
        while remaining:
            ready = sorted((iid for iid in remaining
                            if self.knl.id_to_insn[iid].depends_on <= self.done),
                           key=self._key)
            if not ready:
                raise SchedulingError(
                    "cannot order instructions " + ", ".join(sorted(remaining))
                    + f" inside loops ({', '.join(active) or 'top level'}): they depend "
                    "on instructions that must run outside these loops")
            runnable = [iid for iid in ready
                        if self.knl.id_to_insn[iid].within_inames | hw == active_set]
            if runnable:
                iid = runnable[0]
                self.items.append(RunInstruction(iid))
                self.done.add(iid)
                remaining.discard(iid)
                continue
            # open a loop for a ready instruction, preferring one whose loop body
            # does not leave out work that only waits for other ready instructions
            # (those should run first)
            ready_set = set(ready)
            best = None
            for iid in ready:
                loop = self._choose_loop(self.knl.id_to_insn[iid], active_set)
                body, premature = self._loop_body(loop, remaining, active_set, ready_set)
                if best is None or premature < best[0]:
                    best = (premature, loop, body)
                if not premature:
                    break
            assert best is not None
            _, loop, body = best
            self.items.append(EnterLoop(loop))
            self.run(active + (loop,), body)
            self.items.append(LeaveLoop(loop))
            remaining -= body


def _check_private_temporaries(knl: LoopKernel, items: list) -> None:
    """A private or local value written in one run of a loop and read in another
    run of that loop would be overwritten in between: refuse such a schedule."""
    where: dict[str, dict[str, int]] = {}
    stack: list[tuple[str, int]] = []
    count = 0
    for item in items:
        if isinstance(item, EnterLoop):
            count += 1
            stack.append((item.iname, count))
        elif isinstance(item, LeaveLoop):
            stack.pop()
        else:
            where[item.insn_id] = dict(stack)
    for name, tv in knl.temporary_variables.items():
        if tv.address_space not in (AddressSpace.PRIVATE, AddressSpace.LOCAL):
            continue
        writers = [i for i in knl.instructions if name in i.assignee_names()]
        readers = [i for i in knl.instructions if name in i.read_dependency_names()]
        for w in writers:
            indexed_by = set().union(*(get_dependencies(x) for x in
                                       assignee_subscript(w.assignee)))  # type: ignore[attr-defined]
            for r in readers:
                for loop in (set(where[w.id]) & set(where[r.id])) - indexed_by:
                    if where[w.id][loop] != where[r.id][loop]:
                        raise SchedulingError(
                            f"{tv.address_space} temporary '{name}' is written by '{w.id}' "
                            f"and read by '{r.id}' in different runs of loop '{loop}', so "
                            "each value would be overwritten before it is read. Usually "
                            "another temporary forces the loops apart: tag the inames it "
                            "is shared across 'ilp' (one copy per iteration) instead of "
                            "'unr'/'for'")


def _warn_lane_write_races(knl: LoopKernel) -> None:
    """loopy's check: the iterations of an ``ilp`` or ``vec`` loop count as
    running at once, so writing a variable that is not private (those get a
    copy per iteration) at a place that does not depend on the loop's iname
    is a write race."""
    lanes = {n for n, t in knl.iname_tags.items() if is_lane_tag(t)}
    for insn in knl.instructions:
        racing = insn.within_inames & lanes
        if not racing or not isinstance(insn, Assignment) or insn.atomic:
            continue
        name = assignee_var_name(insn.assignee)
        temp = knl.temporary_variables.get(name)
        if temp is not None and temp.address_space == AddressSpace.PRIVATE:
            continue
        used = set().union(*map(get_dependencies, assignee_subscript(insn.assignee)))
        if racing - used:
            warn_with_kernel(
                knl, f"write_race({insn.id})",
                f"instruction '{insn.id}' writes '{name}' at one place in every iteration "
                f"of the ilp/vec loop(s) {', '.join(sorted(racing - used))}, whose "
                "iterations count as running at once", WriteRaceConditionWarning)


@for_each_kernel
def linearize(knl: LoopKernel) -> LoopKernel:
    """A copy of the (preprocessed) kernel with :attr:`linearization` set."""
    if knl.state < KernelState.PREPROCESSED:
        knl = preprocess_kernel(knl)
    if knl.state >= KernelState.LINEARIZED:
        return knl
    check_dependency_cycles(knl)
    check_variable_access_ordered(knl)
    _warn_lane_write_races(knl)
    lin = _Linearizer(knl)
    parallel = tuple(n for n in knl.all_inames() if is_hw_parallel(knl.iname_tags.get(n)))
    lin.run(parallel, {insn.id for insn in knl.instructions})
    _check_private_temporaries(knl, lin.items)
    items = insert_local_barriers(knl, split_kernels(knl, lin.items))
    logger.debug("linearized %s into %d items", knl.name, len(items))
    return knl.copy(linearization=tuple(items), state=KernelState.LINEARIZED)


def get_one_linearized_kernel(knl: Any, callables_table: Any = None) -> Any:
    """loopy's name of :func:`linearize`; *callables_table* (loopy passes
    the unit's) is not needed."""
    return linearize(knl)


get_one_scheduled_kernel = get_one_linearized_kernel
