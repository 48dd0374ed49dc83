"""The check that every write to a variable is ordered, by dependencies,
against every other access to it (loopy's ``check_variable_access_ordered``).

Two instructions that touch one variable, at least one of them writing it,
run in an order the linearizer is free to choose unless one depends on the
other (directly or through others): the kernel's result would then depend on
that choice. Accesses whose element ranges provably do not meet need no
order (as loopy, only subscripted accesses are compared: a variable used
whole, a scalar, never needs one); nor do instructions that declare ``nosync`` with each other (both
ways, in a scope that covers the variable). Temporaries that share a
``base_storage`` count as one variable, whatever elements they touch.

Public names: check_variable_access_ordered, Reachable.
"""

from __future__ import annotations

from kernelcore.check_overlap import accesses_may_meet
from kernelcore.diagnostic import VariableAccessNotOrdered, warn_with_kernel
from kernelcore.ir.data import AddressSpace
from kernelcore.ir.expr import WalkMapper
from kernelcore.ir.instruction import InstructionBase
from kernelcore.ir.kernel import LoopKernel

#: the nosync scopes that order accesses to a variable of each address space
_SCOPES = {AddressSpace.GLOBAL: ("global", "any"), AddressSpace.LOCAL: ("local", "any"),
           AddressSpace.PRIVATE: ("any",)}


class _Accesses(WalkMapper):
    """The indices at which an expression touches one variable (None for a
    use of the whole variable)."""

    def __init__(self, name: str):
        self.name = name
        self.indices: list[tuple | None] = []

    def map_subscript(self, expr):
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        if getattr(expr.aggregate, "name", None) == self.name:
            self.indices.append(idx)
        else:
            self.rec(expr.aggregate)
        for i in idx:
            self.rec(i)

    def map_variable(self, expr):
        if expr.name == self.name:
            self.indices.append(None)

    def map_constant(self, expr):
        pass

    map_nan = map_constant


def _indices(insn: InstructionBase, name: str, writes_only: bool = False
             ) -> list[tuple | None]:
    """The indices at which *insn* touches (or, with *writes_only*, writes)
    the variable *name*."""
    walker = _Accesses(name)
    if writes_only:     # (a method of assignments, a tuple of C instructions)
        places = getattr(insn, "assignees", ())
        exprs = places() if callable(places) else places
    else:
        exprs = insn.expressions()
    for expr in exprs:
        if expr is not None:
            walker(expr)
    return walker.indices or [None]


def _address_space(knl: LoopKernel, name: str) -> AddressSpace:
    tv = knl.temporary_variables.get(name)
    if tv is None:
        return AddressSpace.GLOBAL
    space = tv.address_space
    return space if space in _SCOPES else AddressSpace.PRIVATE


def _declares_nosync(knl: LoopKernel, space: AddressSpace, a: str, b: str) -> bool:
    scopes = _SCOPES[space]
    insn_a, insn_b = knl.id_to_insn[a], knl.id_to_insn[b]
    return (any((b, s) in insn_a.no_sync_with for s in scopes)
            and any((a, s) in insn_b.no_sync_with for s in scopes))


class Reachable:
    """Instruction id -> the ids it depends on, directly or not (computed on
    demand; dependency cycles allowed: the linearizer reports them)."""

    def __init__(self, knl: LoopKernel):
        self.knl = knl
        self._memo: dict[str, frozenset[str]] = {}

    def __getitem__(self, insn_id: str) -> frozenset[str]:
        if insn_id not in self._memo:
            seen: set[str] = set()
            todo = [insn_id]
            while todo:
                for dep in self.knl.id_to_insn[todo.pop()].depends_on:
                    if dep not in seen and dep in self.knl.id_to_insn:
                        seen.add(dep)
                        todo.append(dep)
            self._memo[insn_id] = frozenset(seen)
        return self._memo[insn_id]


def _overlap(knl: LoopKernel, writer: InstructionBase, other: InstructionBase,
             name: str) -> bool:
    for ia in _indices(writer, name, writes_only=True):
        for ib in _indices(other, name):
            if ia is not None and ib is not None and accesses_may_meet(
                    knl, writer, ia, other, ib):
                return True
    return False


def _aliasing_classes(knl: LoopKernel) -> dict[str, frozenset[str]]:
    """Temporary name -> the temporaries sharing its base storage (and the
    storage's name), for the temporaries that have one."""
    shared: dict[str, set[str]] = {}
    for tv in knl.temporary_variables.values():
        if tv.base_storage is not None:
            shared.setdefault(tv.base_storage, {tv.base_storage}).add(tv.name)
    return {name: frozenset(group) for group in shared.values() for name in group}


def check_variable_access_ordered(knl: LoopKernel) -> None:
    """Raise :class:`~kernelcore.diagnostic.VariableAccessNotOrdered` (or warn,
    with the option ``enforce_variable_access_ordered=False``; nothing with
    ``"no_check"``) for the first write to a variable that is not ordered
    against another access to it."""
    mode = knl.options.enforce_variable_access_ordered
    if mode == "no_check":
        return
    classes = _aliasing_classes(knl)
    readers: dict[str, set[str]] = {}
    writers: dict[str, set[str]] = {}
    for insn in knl.instructions:
        for name in insn.read_dependency_names():
            readers.setdefault(name, set()).add(insn.id)
        for name in insn.assignee_names():
            writers.setdefault(name, set()).add(insn.id)
    reach = Reachable(knl)
    for name in sorted(writers):
        group = sorted(classes[name]) if name in classes else [name]
        touching = set().union(*(readers.get(n, set()) | writers.get(n, set())
                                 for n in group))
        space = _address_space(knl, name)
        for writer in sorted(writers[name]):
            for other in sorted(touching - {writer}):
                if _declares_nosync(knl, space, writer, other):
                    continue
                if other in reach[writer] or writer in reach[other]:
                    continue
                aliased = other not in readers.get(name, set()) | writers.get(name, set())
                w_insn, o_insn = knl.id_to_insn[writer], knl.id_to_insn[other]
                if aliased:
                    if (w_insn.groups & o_insn.conflicts_with_groups
                            or o_insn.groups & w_insn.conflicts_with_groups):
                        continue
                elif not _overlap(knl, w_insn, o_insn, name):
                    continue
                what = (f"the variable '{name}'" if len(group) == 1 else
                        f"the aliasing equivalence class '{', '.join(group)}'")
                message = (
                    f"No dependency relationship found between '{writer}' which writes "
                    f"{what} and '{other}' which also accesses {what}, so the order in "
                    "which they run is not defined. Either add a (possibly indirect) "
                    f"dependency between the two ('dep={writer}' on '{other}', or the "
                    "reverse), or add them to each others' nosync set to state that no "
                    "ordering is intended, or turn off this check by setting the "
                    "'enforce_variable_access_ordered' option")
                if mode is False:
                    warn_with_kernel(knl, "variable_access_ordered", message)
                    return
                raise VariableAccessNotOrdered(f"in kernel {knl.name}: {message}")


__all__ = ["check_variable_access_ordered", "Reachable"]
