"""Transformations of the instruction list and its dependencies.

Public names: add_dependency, remove_instructions, add_nosync.
"""

from __future__ import annotations

from kernelcore.diagnostic import UnknownNameError
from kernelcore.ir.kernel import LoopKernel
from kernelcore.match import parse_match
from kernelcore.translation_unit import for_each_kernel


@for_each_kernel
def add_dependency(knl: LoopKernel, insn_match, depends_on) -> LoopKernel:
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
def remove_instructions(knl: LoopKernel, insn_ids) -> LoopKernel:
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
def add_nosync(knl: LoopKernel, source, sink, bidirectional: bool = True) -> LoopKernel:
    """State that no barrier is needed between the instructions matching *source*
    and those matching *sink* (both directions unless *bidirectional* is False)."""
    src = {i.id for i in knl.instructions if parse_match(source)(knl, i)}
    snk = {i.id for i in knl.instructions if parse_match(sink)(knl, i)}
    if not src or not snk:
        raise UnknownNameError(f"add_nosync: no instruction matches "
                               f"{source if not src else sink!r}")

    def update(insn):
        extra = set()
        if insn.id in snk:
            extra |= {(s, "any") for s in src}
        if bidirectional and insn.id in src:
            extra |= {(s, "any") for s in snk}
        return insn.copy(no_sync_with=insn.no_sync_with | extra) if extra else insn

    return knl.copy(instructions=tuple(update(i) for i in knl.instructions))
