"""Transformations of the instruction list and its dependencies.

Public names: add_dependency, remove_instructions, add_nosync, add_barrier,
find_instructions, add_inames_to_insn, remove_inames_from_insn, remove_predicates_from_insn,
get_global_barrier_order, find_most_recent_global_barrier, UniqueName,
uniquify_instruction_ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, UnknownNameError
from kernelcore.ir.expr import get_dependencies
from kernelcore.ir.instruction import BarrierInstruction
from kernelcore.ir.kernel import LoopKernel
from kernelcore.match import parse_match
from kernelcore.translation_unit import as_kernel, for_each_kernel


@for_each_kernel
def add_dependency(knl: LoopKernel, insn_match: Any, depends_on: Any) -> LoopKernel:
    """Make the matching instructions depend on *depends_on* (an id, or a match
    selecting the prerequisite instructions)."""
    match = parse_match(insn_match)
    if isinstance(depends_on, str) and depends_on in knl.id_to_insn:
        prereqs = {depends_on}
    else:
        dep_match = parse_match(depends_on)
        prereqs = {i.id for i in knl.instructions if dep_match(knl, i)}
    if not prereqs:
        raise UnknownNameError(f"add_dependency: no instruction matches {depends_on!r}")
    targets = [i for i in knl.instructions if match(knl, i)]
    if not targets:
        raise UnknownNameError(f"add_dependency: no instruction matches {insn_match!r}")
    target_ids = {i.id for i in targets}
    insns = tuple(i.copy(depends_on=i.depends_on | (prereqs - {i.id}))
                  if i.id in target_ids else i for i in knl.instructions)
    return knl.copy(instructions=insns)


@for_each_kernel
def remove_instructions(knl: LoopKernel, insn_ids: Iterable[str]) -> LoopKernel:
    """Remove instructions; whatever depended on them inherits their dependencies."""
    ids = {s.strip() for s in insn_ids.split(",")} if isinstance(insn_ids, str) \
        else set(insn_ids)
    unknown = ids - set(knl.id_to_insn)
    if unknown:
        raise UnknownNameError(f"remove_instructions: unknown instruction(s) "
                               f"{', '.join(sorted(unknown))}")

    def resolved(deps: frozenset[str]) -> frozenset[str]:
        result: set[str] = set()
        todo = list(deps)
        seen: set[str] = set()
        while todo:
            d = todo.pop()
            if d in seen:
                continue
            seen.add(d)
            if d in ids:
                todo.extend(knl.id_to_insn[d].depends_on)
            else:
                result.add(d)
        return frozenset(result)

    insns = tuple(i.copy(depends_on=resolved(i.depends_on))
                  for i in knl.instructions if i.id not in ids)
    return knl.copy(instructions=insns)


@for_each_kernel
def add_nosync(knl: LoopKernel, scope: str, source: Any, sink: Any,
               bidirectional: bool = False, force: bool = False,
               empty_ok: bool = False) -> LoopKernel:
    """State that the instructions matching *sink* need no synchronization of
    *scope* (``"local"``, ``"global"`` or ``"any"``) with those matching
    *source* (nor the other way round, with *bidirectional*), as loopy's: only
    where the sink depends on the source, directly or not, or their groups
    conflict, unless *force*.
    Matching no instruction raises unless *empty_ok*."""
    if scope not in ("local", "global", "any"):
        raise KernelcoreError(f"add_nosync: unknown scope {scope!r} (local, global, any)")
    src = {i.id for i in knl.instructions if parse_match(source)(knl, i)}
    snk = {i.id for i in knl.instructions if parse_match(sink)(knl, i)}
    if not (src and snk):
        if empty_ok:
            return knl
        raise UnknownNameError(f"add_nosync: no instruction matches "
                               f"{source if not src else sink!r}")
    deps = {i.id: i.depends_on for i in knl.instructions}

    def reaches(a: str, b: str) -> bool:
        """Whether *a* depends on *b*, directly or not."""
        seen, todo = set(), [a]
        while todo:
            for d in deps.get(todo.pop(), ()):
                if d == b:
                    return True
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return False

    by_id = knl.id_to_insn

    def conflicting(a: str, b: str) -> bool:
        return bool(by_id[a].groups & by_id[b].conflicts_with_groups
                    or by_id[b].groups & by_id[a].conflicts_with_groups)

    pairs = {(k, s) for k in snk for s in src
             if force or reaches(k, s) or conflicting(k, s)}
    if bidirectional:
        pairs |= {(s, k) for k, s in pairs}
    added: dict[str, set] = {}
    for waiter, other in pairs:
        added.setdefault(waiter, set()).add((other, scope))
    return knl.copy(instructions=tuple(
        i.copy(no_sync_with=i.no_sync_with | added[i.id]) if i.id in added else i
        for i in knl.instructions))


def _matching(knl: LoopKernel, match, what: str) -> list:
    found = [i for i in knl.instructions if parse_match(match)(knl, i)]
    if not found:
        raise UnknownNameError(f"{what}: no instruction of kernel {knl.name} matches "
                               f"{match!r}")
    return found


def find_instructions(knl: Any, insn_match: Any) -> list:
    """The instructions of *knl* (a kernel or a translation unit's entry point)
    that *insn_match* selects."""
    knl = as_kernel(knl)
    return [i for i in knl.instructions if parse_match(insn_match)(knl, i)]


@for_each_kernel
def add_barrier(knl: LoopKernel, insn_before: Any, insn_after: Any, id_based_on: str | None = None,
                tags: Any = None, synchronization_kind: str = "global",
                mem_kind: str | None = None, within_inames: Any = None) -> LoopKernel:
    """A barrier (``"global"`` or ``"local"``) after the instructions matching
    *insn_before* and before those matching *insn_after*, with an id made from
    *id_based_on* (default ``"barrier"``)."""
    if synchronization_kind not in ("global", "local"):
        raise KernelcoreError(f"add_barrier: synchronization_kind must be 'global' or "
                              f"'local', got {synchronization_kind!r}")
    before = {i.id for i in _matching(knl, insn_before, "add_barrier")}
    after = {i.id for i in _matching(knl, insn_after, "add_barrier")}
    barrier_id = UniqueNameGenerator(set(knl.id_to_insn))(id_based_on or "barrier")
    barrier = BarrierInstruction(
        id=barrier_id, depends_on=frozenset(before),
        within_inames=frozenset(within_inames or ()), tags=frozenset(tags or ()),
        synchronization_kind=synchronization_kind, mem_kind=mem_kind or "local")
    insns = tuple(i.copy(depends_on=i.depends_on | {barrier_id}) if i.id in after else i
                  for i in knl.instructions)
    return knl.copy(instructions=(*insns, barrier))


@for_each_kernel
def remove_inames_from_insn(knl: LoopKernel, inames: Iterable[str], insn_match: Any) -> LoopKernel:
    """The matching instructions no longer run in *inames* (their expressions
    must not use them)."""
    inames = frozenset(inames)
    targets = {i.id for i in _matching(knl, insn_match, "remove_inames_from_insn")}
    insns = []
    for insn in knl.instructions:
        if insn.id in targets:
            used = frozenset().union(*(get_dependencies(e) for e in insn.expressions()))
            if used & inames:
                raise KernelcoreError(f"remove_inames_from_insn: instruction '{insn.id}' "
                                      f"uses {', '.join(sorted(used & inames))}")
            insn = insn.copy(within_inames=insn.within_inames - inames)
        insns.append(insn)
    return knl.copy(instructions=tuple(insns))


@for_each_kernel
def add_inames_to_insn(knl: LoopKernel, inames: Any, insn_match: Any) -> LoopKernel:
    """The matching instructions also run in *inames* (a list or a
    comma-separated string of inames of the kernel)."""
    names = frozenset(n.strip() for n in inames.split(",") if n.strip()) \
        if isinstance(inames, str) else frozenset(inames)
    knl.check_inames(names, "add_inames_to_insn")
    targets = {i.id for i in _matching(knl, insn_match, "add_inames_to_insn")}
    return knl.copy(instructions=tuple(
        i.copy(within_inames=i.within_inames | names) if i.id in targets else i
        for i in knl.instructions))


@for_each_kernel
def remove_predicates_from_insn(knl: LoopKernel, predicates: Any, insn_match: Any) -> LoopKernel:
    """The matching instructions without the conditions *predicates*."""
    targets = {i.id for i in _matching(knl, insn_match, "remove_predicates_from_insn")}
    return knl.copy(instructions=tuple(
        i.copy(predicates=i.predicates - frozenset(predicates)) if i.id in targets else i
        for i in knl.instructions))


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


@dataclass(frozen=True)
class UniqueName:
    """An instruction id to be made unique (``name``, ``name_0``, ...) by
    :func:`uniquify_instruction_ids`."""

    name: str


@for_each_kernel
def uniquify_instruction_ids(knl: LoopKernel) -> LoopKernel:
    """Give each instruction whose id is None (``insn``, ``insn_0``, ...) or a
    :class:`UniqueName` a fresh id; existing ids stay as they are."""
    taken = {i.id for i in knl.instructions if isinstance(i.id, str)}
    names = UniqueNameGenerator(taken)
    insns = []
    for insn in knl.instructions:
        if insn.id is None:
            insn = insn.copy(id=names("insn"))
        elif isinstance(insn.id, UniqueName):
            insn = insn.copy(id=names(insn.id.name))
        insns.append(insn)
    return knl.copy(instructions=tuple(insns))
