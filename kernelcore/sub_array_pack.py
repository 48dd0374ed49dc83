"""Sub-array references that are not strided slices, passed to calls through
temporaries.

Public names: SubArrayPacker.

A call argument such as ``[i]: y[i // 2, i % 2]`` (a reshape), ``[l]: x[l, l]``
(a diagonal), ``[j, k]: x[2*j + k]`` (two swept inames in one subscript) or
``[i, j]: t[0, j]`` (a swept iname that indexes nothing) is no slice of its
array. kernelcore hands the callee a temporary instead, whose axes are the swept
inames in order (axis *k* runs over the range of the *k*-th swept iname): for an
argument the call reads, a statement copies the sub-array into the temporary
before the call; for one the call writes, a statement copies the temporary into
the array after the call. An array the call both writes through such a
reference and reads (updated in place) is copied in and out, and the callee
reads the temporary as well. The callee sees the same elements in the same order
as with loopy's sub-array references, inlined or called as a device function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.ir.expr import SubArrayRef
from kernelcore.ir.instruction import Assignment, assignee_var_name


@dataclasses.dataclass(frozen=True)
class _Pack:
    """One sub-array reference passed through the temporary *name*."""

    name: str
    array: str
    subscript: Any           # the reference's array access, in terms of the swept inames
    swept: tuple[str, ...]
    lows: tuple[int, ...]
    extents: tuple[int, ...]
    writes: bool             # the call writes it (an assignee)

    def element(self) -> Any:
        """The temporary's element for the current values of the swept inames."""
        if not self.swept:
            return prim.Variable(self.name)
        return prim.Subscript(prim.Variable(self.name), tuple(
            prim.Variable(n) if lo == 0 else prim.Sum((prim.Variable(n), -lo))
            for n, lo in zip(self.swept, self.lows)))

    def whole(self) -> Any:
        """The whole temporary, as the slice the call passes."""
        if not self.swept:
            return prim.Variable(self.name)
        return prim.Subscript(prim.Variable(self.name),
                              tuple(prim.Slice((None, e)) for e in self.extents))


class SubArrayPacker:
    """Collects the sub-array references of one call statement that need a
    temporary (see the module docstring) and makes the copying statements.

    *ranges* gives the constant range ``(lo, hi)`` of an iname (raising a
    :class:`~kernelcore.diagnostic.KernelcoreError` if it has none);
    *names* makes the temporaries' names."""

    def __init__(self, ranges: Callable[[str], tuple[int, int]], names: UniqueNameGenerator):
        self.ranges = ranges
        self.names = names
        self.writes = False
        self.packs: list[_Pack] = []

    def pack(self, expr: SubArrayRef, subscript: Any) -> Any:
        """The argument passed in place of *expr* (its access lowered to
        *subscript*): a slice of a new temporary."""
        swept = tuple(v.name for v in expr.swept_inames)
        ends = [self.ranges(n) for n in swept]
        pack = _Pack(self.names("_kc_pack"), assignee_var_name(subscript), subscript, swept,
                     tuple(lo for lo, _ in ends), tuple(hi - lo + 1 for lo, hi in ends),
                     self.writes)
        self.packs.append(pack)
        return pack.whole()

    def share_updated(self, params: tuple) -> tuple:
        """*params* with an array that a packed assignee writes (updated in
        place by the callee) passed as that assignee's temporary."""
        written = {p.array: p for p in self.packs if p.writes}
        if not written:
            return params
        read_packs = {p.name: p for p in self.packs if not p.writes}
        result = []
        for p in params:
            name = _array_name(p)
            if name in read_packs and read_packs[name].array in written:
                self.packs.remove(read_packs[name])
                name = read_packs[name].array
            result.append(written[name].whole() if name in written else p)
        return tuple(result)

    def statements(self, call_id: str, within: frozenset[str], params: tuple,
                   id_gen: UniqueNameGenerator, with_parents: Callable[[frozenset], frozenset],
                   **common: Any) -> tuple[list[Assignment], list[Assignment]]:
        """The statements copying into the temporaries (before the call) and
        out of them (after it), for a call *call_id* running in *within* that
        passes *params*; *common* holds the call's predicates, tags, ..."""
        read_names = {_array_name(p) for p in params}
        before, after = [], []
        for pack in self.packs:
            inames = with_parents(within | frozenset(pack.swept))
            if not pack.writes or pack.name in read_names:
                before.append(Assignment(
                    assignee=pack.element(), expression=pack.subscript,
                    id=id_gen(f"{call_id}_pack"), within_inames=inames,
                    depends_on=frozenset(), **common))
            if pack.writes:
                after.append(Assignment(
                    assignee=pack.subscript, expression=pack.element(),
                    id=id_gen(f"{call_id}_unpack"), within_inames=inames,
                    depends_on=frozenset([call_id]), **common))
        return before, after


def _array_name(expr: Any) -> str | None:
    if isinstance(expr, prim.Variable):
        return expr.name
    if isinstance(expr, prim.Subscript) and isinstance(expr.aggregate, prim.Variable):
        return expr.aggregate.name
    return None
