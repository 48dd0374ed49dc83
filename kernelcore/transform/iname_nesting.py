"""Whether the loops of a kernel's instructions can nest at all, and which
iname duplications would make them (loopy's ``get_iname_duplication_options``
and ``has_schedulable_iname_nesting``).

Each instruction runs in a set of (sequential) loops. Loops that every
instruction runs in can enclose everything; the others must nest so that
each instruction's loops form a chain. Where the instructions' loops cannot
be split into groups that share no loop, and no loop is shared by all of
them, some instruction needs its own copy of a loop: each option names an
iname and the instructions (``within``, a match string for
:func:`~kernelcore.transform.iname.duplicate_inames`) that would get the copy.

Public names: get_iname_duplication_options, has_schedulable_iname_nesting.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import Any

from kernelcore.ir.tags import ConcurrentTag
from kernelcore.translation_unit import as_kernel

InameSets = frozenset[frozenset[str]]


def _groups(sets: InameSets) -> list[frozenset[str]]:
    """The unions of *sets* that are connected by shared inames."""
    groups: list[frozenset[str]] = []
    for s in sets:
        touching = [g for g in groups if g & s]
        merged = s.union(*touching)
        groups = [g for g in groups if not g & s] + [merged]
    return groups


def _options(sets: InameSets, enclosing: frozenset[str]
             ) -> Iterator[tuple[str, tuple[frozenset[str], ...]]]:
    """(iname, iname sets of the instructions to give a copy of it), the sets
    written with the *enclosing* inames (those shared by all, removed on the way)
    put back."""
    shared = frozenset.intersection(*sets) if sets else frozenset()
    if shared:
        rest = frozenset(s - shared for s in sets) - {frozenset()}
        yield from _options(rest, enclosing | shared)
        return
    groups = _groups(sets)
    if len(groups) > 1:
        for g in groups:
            yield from _options(frozenset(s for s in sets if s <= g), enclosing)
        return
    for g in groups:            # one group, no iname shared by all its sets
        for iname in sorted(g):
            users = sorted((s for s in sets if iname in s), key=sorted)
            for k in range(1, len(users)):
                for chosen in combinations(users, k):
                    yield iname, tuple(s | enclosing for s in chosen)


def get_iname_duplication_options(kernel: Any) -> Iterator[tuple[str, str]]:
    """Options ``(iname, within)`` for :func:`duplicate_inames` when the
    instructions' loops cannot nest (none when they can; one duplication may
    not be enough). Parallel inames are left out: they need no nesting."""
    knl = as_kernel(kernel)
    parallel = {n for n, t in knl.iname_tags.items() if isinstance(t, ConcurrentTag)}
    sets = frozenset(frozenset(i.within_inames - parallel) for i in knl.instructions)
    for iname, chosen in _options(sets - {frozenset()}, frozenset()):
        ids = [i.id for i in knl.instructions if i.within_inames - parallel in chosen]
        if ids:
            yield iname, " or ".join(f"id:{i}" for i in ids)


def has_schedulable_iname_nesting(kernel: Any) -> bool:
    """Whether the instructions' loops can nest without duplicating an iname."""
    return next(get_iname_duplication_options(kernel), None) is None
