"""Instructions: what a kernel executes for each point of its loop domain.

Public names: InstructionBase, Assignment, CallInstruction, BarrierInstruction,
NoOpInstruction, CInstruction, has_slices, and loopy's names:
MultiAssignmentBase, ExpressionInstruction, make_assignment, is_array_call,
MemoryOrdering, MemoryScope, VarAtomicity, AtomicInit, AtomicUpdate,
OrderedAtomic.
"""

from __future__ import annotations

import enum
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, Self

import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import auto
from kernelcore.ir.expr import SubArrayRef, find_reductions, get_dependencies
from kernelcore.ir.optional import Optional
from kernelcore.parse import parse_expression


@dataclass(frozen=True, kw_only=True)
class InstructionBase:
    """Fields every instruction has.

    *depends_on* lists ids of instructions that must run first (within the inames
    both share); *within_inames* are the loops the instruction runs in;
    *predicates* are conditions (expressions) it is guarded by.
    """

    id: str
    depends_on: frozenset[str] = frozenset()
    depends_on_is_final: bool = False
    within_inames: frozenset[str] = frozenset()
    priority: int = 0
    tags: frozenset[str] = frozenset()
    no_sync_with: frozenset[tuple[str, str]] = frozenset()
    predicates: frozenset[Any] = frozenset()
    within_inames_is_final: bool = False
    #: loopy's instruction groups: the groups the instruction is in, and those
    #: it conflicts with (kernelcore records them, and :func:`add_nosync` reads
    #: them; its linearizer does not keep conflicting groups apart)
    groups: frozenset[str] = frozenset()
    conflicts_with_groups: frozenset[str] = frozenset()

    def copy(self, **kwargs: Any) -> Self:
        """A copy with the fields *kwargs* changed (loopy's spellings accepted,
        as by the constructors)."""
        for name in ("assignee", "expression"):
            if isinstance(kwargs.get(name), str):
                kwargs[name] = _as_expr(kwargs[name])
        new = object.__new__(type(self))
        _init_fields(new, {**{f.name: getattr(self, f.name) for f in fields(self)}, **kwargs})
        return new

    def assignee_names(self) -> frozenset[str]:
        return frozenset()

    def read_dependency_names(self) -> frozenset[str]:
        result: frozenset[str] = frozenset()
        for p in self.predicates:
            result |= get_dependencies(p)
        return result

    def expressions(self) -> tuple:
        """Every expression the instruction holds (for walks)."""
        return tuple(self.predicates)

    def reduction_inames(self) -> frozenset[str]:
        """The inames the reductions in the instruction reduce over."""
        return frozenset(n for e in self.expressions() for r in find_reductions(e)
                         for n in r.inames)

    def with_transformed_expressions(self, f: Callable[[Any], Any]) -> Self:
        return self.copy(predicates=frozenset(f(p) for p in self.predicates))

    def _options_str(self) -> str:
        opts = [f"id={self.id}"]
        if self.priority:
            opts.append(f"priority={self.priority}")
        if getattr(self, "atomic", False):
            opts.append("atomic")
        if self.tags:
            opts.append("tags=" + ":".join(sorted(self.tags)))
        if self.no_sync_with:
            opts.append("no_sync_with=" + ":".join(
                f"{other}@{scope}" for other, scope in sorted(self.no_sync_with)))
        if self.predicates:
            opts.append("if=" + " and ".join(sorted(str(p) for p in self.predicates)))
        return "{" + ", ".join(opts) + "}"


def assignee_var_name(assignee: Any) -> str:
    if isinstance(assignee, prim.Variable):
        return assignee.name
    if isinstance(assignee, prim.Subscript) and isinstance(assignee.aggregate, prim.Variable):
        return assignee.aggregate.name
    raise ValueError(f"invalid assignment target: {assignee}")


def assignee_subscript(assignee: Any) -> tuple:
    if isinstance(assignee, prim.Subscript):
        idx = assignee.index
        return idx if isinstance(idx, tuple) else (idx,)
    return ()


def _name_set(value: Any) -> frozenset:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset(s.strip() for s in value.split(",") if s.strip())
    return frozenset(value)


def _as_expr(value: Any) -> Any:
    return parse_expression(value) if isinstance(value, str) else value


def _init_fields(insn: InstructionBase, values: dict[str, Any]) -> None:
    """Set the fields of *insn* from *values* (loopy's spellings: names as
    comma-separated strings or iterables, expressions as strings; an id of
    None is given one when the kernel is made), defaults for the others."""
    values = dict(values)
    for name in ("depends_on", "within_inames", "tags", "groups", "conflicts_with_groups"):
        if name in values:
            values[name] = _name_set(values[name])
    if "predicates" in values:
        values["predicates"] = frozenset(_as_expr(p) for p in values["predicates"] or ())
    if values.get("no_sync_with") is None:
        values.pop("no_sync_with", None)
    for f in fields(insn):
        if f.name in values:
            value = values.pop(f.name)
        elif f.default is not MISSING:
            value = f.default
        elif f.default_factory is not MISSING:
            value = f.default_factory()
        else:
            raise TypeError(f"{type(insn).__name__}: missing argument '{f.name}'")
        object.__setattr__(insn, f.name, value)
    if values:
        raise TypeError(f"{type(insn).__name__}: unexpected argument(s) "
                        f"{', '.join(sorted(values))}")


def _declared_type(value: Any, stacklevel: int = 3) -> Any:
    """*temp_var_type* as loopy takes it (``Optional()``: no temporary,
    ``Optional(None)``: one of inferred type, ``Optional(dtype)``) as kernelcore
    keeps it (None, :data:`auto`, the dtype); a bare value is taken with
    loopy's deprecation warning."""
    if isinstance(value, Optional):
        if not value.has_value:
            return None
        return auto if value.value is None else value.value
    warnings.warn("temp_var_type should be an Optional (Optional(): no temporary, "
                  "Optional(None): a temporary of inferred type, Optional(dtype))",
                  DeprecationWarning, stacklevel=stacklevel)
    return value


@dataclass(frozen=True, kw_only=True, init=False)
class Assignment(InstructionBase):
    """``assignee = expression``; *temp_var_type* is set when the line declares a
    temporary (``<> t = ...``: :data:`~kernelcore.ir.data.auto`, ``<float32> t``:
    that dtype); *atomic* updates (``x[j] = x[j] + e {atomic}``) are safe when
    several work-items update one element."""

    assignee: Any
    expression: Any
    temp_var_type: np.dtype | Any | None = None
    atomic: bool = False

    def __init__(self, assignee: Any, expression: Any, id: str | None = None,
                 depends_on: Any = frozenset(), **kwargs: Any):
        """``Assignment(assignee, expression, id=None, depends_on=None, ...)``
        as in loopy; strings are parsed."""
        if "temp_var_type" in kwargs:
            kwargs["temp_var_type"] = _declared_type(kwargs["temp_var_type"])
        _init_fields(self, dict(assignee=_as_expr(assignee), expression=_as_expr(expression),
                                id=id, depends_on=depends_on, **kwargs))

    @property
    def assignees(self) -> tuple:
        """loopy's tuple of written places: here the one :attr:`assignee`."""
        return (self.assignee,)

    def assignee_names(self) -> frozenset[str]:
        return frozenset([assignee_var_name(self.assignee)])

    def read_dependency_names(self) -> frozenset[str]:
        sub_deps: frozenset[str] = frozenset()
        for s in assignee_subscript(self.assignee):
            sub_deps |= get_dependencies(s)
        return super().read_dependency_names() | get_dependencies(self.expression) \
            | sub_deps

    def expressions(self) -> tuple:
        return (self.assignee, self.expression) + super().expressions()

    def with_transformed_expressions(self, f: Callable[[Any], Any]) -> Self:
        return super().with_transformed_expressions(f).copy(
            assignee=f(self.assignee), expression=f(self.expression))

    def __str__(self) -> str:
        return f"{self.assignee} = {self.expression}  {self._options_str()}"


def has_slices(expr: Any) -> bool:
    """Whether *expr* subscripts an array with a slice (``x[:]``)."""
    if isinstance(expr, prim.Slice):
        return True
    if isinstance(expr, prim.Subscript):
        return any(has_slices(i) for i in assignee_subscript(expr))
    if isinstance(expr, prim.Call):
        return any(has_slices(p) for p in expr.parameters)
    return False


@dataclass(frozen=True, kw_only=True, init=False)
class CallInstruction(Assignment):
    """``y[:] = f(A[:, :], x[:])``: a call of a registered function or a
    kernel that takes or returns whole arrays (written as full slices), or
    that returns several values (``a[i], b[i] = f(x[i])``: the assignees
    after the first are *extra_assignees*) or none (``f(x[i])``, loopy's
    ``CallInstruction((), call)``: *assignee* is None)."""

    extra_assignees: tuple = ()

    def __init__(self, assignees: Any = None, expression: Any = None, id: str | None = None,
                 depends_on: Any = frozenset(), *, temp_var_types: Any = None,
                 **kwargs: Any):
        """``CallInstruction(assignees, expression, id=None, ...)`` as in loopy
        (*assignees* a tuple or its text, e.g. ``"(x, y)"``), or with
        ``assignee=`` and ``extra_assignees=`` as kernelcore's passes make it."""
        if assignees is not None:
            assignees = _as_expr(assignees) if assignees != "" else ()
            assignees = tuple(assignees) if isinstance(assignees, tuple) else (assignees,)
            kwargs.update(assignee=assignees[0] if assignees else None,
                          extra_assignees=assignees[1:])
        if temp_var_types:
            kwargs.setdefault("temp_var_type", temp_var_types[0])
        if "temp_var_type" in kwargs:
            kwargs["temp_var_type"] = _declared_type(kwargs["temp_var_type"])
        _init_fields(self, dict(expression=_as_expr(expression), id=id,
                                depends_on=depends_on, **kwargs))

    @property
    def assignees(self) -> tuple:
        if self.assignee is None:
            return ()
        return (self.assignee,) + tuple(self.extra_assignees)

    def assignee_names(self) -> frozenset[str]:
        return frozenset(assignee_var_name(a) for a in self.assignees)

    def read_dependency_names(self) -> frozenset[str]:
        result = super().read_dependency_names()
        for a in self.extra_assignees:
            for s in assignee_subscript(a):
                result |= get_dependencies(s)
        return result

    def expressions(self) -> tuple:
        if self.assignee is None:       # (a call without results: only its expression)
            return (self.expression,) + InstructionBase.expressions(self)
        return super().expressions() + tuple(self.extra_assignees)

    def with_transformed_expressions(self, f: Callable[[Any], Any]) -> Self:
        if self.assignee is None:
            return InstructionBase.with_transformed_expressions(self, f).copy(
                expression=f(self.expression))
        return super().with_transformed_expressions(f).copy(
            extra_assignees=tuple(f(a) for a in self.extra_assignees))

    def __str__(self) -> str:
        if self.assignee is None:
            return f"{self.expression}  {self._options_str()}"
        lhs = ", ".join(str(a) for a in self.assignees)
        return f"{lhs} = {self.expression}  {self._options_str()}"


@dataclass(frozen=True, kw_only=True)
class BarrierInstruction(InstructionBase):
    """An explicit barrier: ``"local"`` (within a work-group) or ``"global"``
    (across the whole launch: the kernel is split into several device kernels)."""

    synchronization_kind: str = "global"
    mem_kind: str = "local"
    #: set by save_and_reload_temporaries: the private and local values live
    #: across this global barrier are saved and reloaded (or kept, where the
    #: barrier does not end a device kernel)
    values_saved: bool = False

    def __str__(self) -> str:
        kind = "gbarrier" if self.synchronization_kind == "global" else "lbarrier"
        return f"... {kind}  {self._options_str()}"


@dataclass(frozen=True, kw_only=True, init=False)
class NoOpInstruction(InstructionBase):
    """An instruction that does nothing; a target for dependencies."""

    def __init__(self, id: str | None = None, depends_on: Any = frozenset(), **kwargs: Any):
        """``NoOpInstruction(id=None, depends_on=None, ...)`` as in loopy."""
        _init_fields(self, dict(id=id, depends_on=depends_on, **kwargs))

    def __str__(self) -> str:
        return f"... nop  {self._options_str()}"


@dataclass(frozen=True, kw_only=True, init=False)
class CInstruction(InstructionBase):
    """Raw C *code* run at each point of its inames. *iname_exprs* are
    ``(name, expression)`` pairs: the code sees each *name* as a constant
    ``int`` of the expression's value (the inames it needs). *read_variables*
    (names) and *assignees* (variables or subscripts) say what the code reads
    and writes; they are used for dependencies only."""

    iname_exprs: tuple = ()
    code: str = ""
    read_variables: frozenset[str] = frozenset()
    assignees: tuple = ()

    def __init__(self, iname_exprs: Any = (), code: str = "",
                 read_variables: Any = frozenset(), assignees: Any = (),
                 id: str | None = None, depends_on: Any = frozenset(),
                 within_inames: Any = frozenset(), **kwargs: Any):
        """*iname_exprs* may also hold bare iname names, or be one string of
        comma-separated names; *assignees* may be a string of
        semicolon-separated expressions or a sequence of strings."""

        if isinstance(iname_exprs, str):
            iname_exprs = [n.strip() for n in iname_exprs.split(",") if n.strip()]
        pairs = tuple(dict.fromkeys(   # (a name given twice is defined once)
            (i, prim.Variable(i)) if isinstance(i, str)
            else (i[0], parse_expression(i[1]) if isinstance(i[1], str) else i[1])
            for i in iname_exprs))
        if isinstance(assignees, str):
            assignees = [a.strip() for a in assignees.split(";") if a.strip()]
        targets = tuple(parse_expression(a) if isinstance(a, str) else a for a in assignees)
        if isinstance(depends_on, str):
            depends_on = [d.strip() for d in depends_on.split(",") if d.strip()]
        if isinstance(within_inames, str):
            within_inames = [n.strip() for n in within_inames.split(",") if n.strip()]
        values = dict(
            id=id, depends_on=frozenset(depends_on or ()),
            within_inames=frozenset(within_inames or ()), iname_exprs=pairs,
            code=textwrap.dedent(code).strip("\n"),
            read_variables=frozenset(read_variables), assignees=targets, **kwargs)
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def assignee(self) -> Any:
        """The first of :attr:`assignees` (None if there is none), for passes
        that look at one written place per instruction."""
        return self.assignees[0] if self.assignees else None

    def assignee_names(self) -> frozenset[str]:
        return frozenset(assignee_var_name(a) for a in self.assignees)

    def read_dependency_names(self) -> frozenset[str]:
        result = super().read_dependency_names() | self.read_variables
        for _, expr in self.iname_exprs:
            result |= get_dependencies(expr)
        for a in self.assignees:
            for s in assignee_subscript(a):
                result |= get_dependencies(s)
        return result

    def expressions(self) -> tuple:
        return tuple(e for _, e in self.iname_exprs) + self.assignees \
            + super().expressions()

    def with_transformed_expressions(self, f: Callable[[Any], Any]) -> Self:
        return super().with_transformed_expressions(f).copy(
            iname_exprs=tuple((n, f(e)) for n, e in self.iname_exprs),
            assignees=tuple(f(a) for a in self.assignees))

    def __str__(self) -> str:
        head = (f"{', '.join(str(a) for a in self.assignees)} <- CODE("
                f"{', '.join(sorted(self.read_variables))}|"
                f"{', '.join(f'{n}={e}' for n, e in self.iname_exprs)})")
        return f"{head}  {self._options_str()}\n    " + "\n    ".join(
            self.code.split("\n"))


# {{{ loopy's names

#: loopy's base class of instructions assigning to one or more variables
MultiAssignmentBase = Assignment
#: loopy's old name of :class:`Assignment`
ExpressionInstruction = Assignment


class MemoryOrdering(enum.IntEnum):
    """Ordering of an atomic operation (OpenCL 2.0's memory_order)."""

    RELAXED = 0
    ACQUIRE = 1
    RELEASE = 2
    ACQ_REL = 3
    SEQ_CST = 4


class MemoryScope(enum.IntEnum):
    """Scope of an atomic operation (OpenCL 2.0's memory_scope)."""

    WORK_ITEM = 0
    WORK_GROUP = 1
    DEVICE = 2
    ALL_SVM_DEVICES = 3
    auto = -1


@dataclass(frozen=True)
class VarAtomicity:
    """A variable an instruction accesses atomically."""

    var_name: str


@dataclass(frozen=True)
class OrderedAtomic(VarAtomicity):
    """An atomic access with an ordering and a scope."""

    ordering: MemoryOrdering = MemoryOrdering.SEQ_CST
    scope: MemoryScope = MemoryScope.auto


class AtomicInit(OrderedAtomic):
    """The assignment initializes the variable atomically."""


class AtomicUpdate(OrderedAtomic):
    """The assignment updates the variable atomically (``{atomic}``)."""


def is_array_call(assignees: Any, expression: Any) -> bool:
    """Whether an assignment of *expression* to *assignees* is a call taking
    or returning whole arrays (slices or ``[i]: a[i]`` sub-array references)."""
    if not isinstance(expression, prim.Call):
        return False
    items = list(assignees if isinstance(assignees, tuple) else (assignees,))
    items += list(expression.parameters)
    return any(isinstance(x, SubArrayRef) or has_slices(x) for x in items)


def make_assignment(assignees: Any, expression: Any, temp_var_types: Any = None,
                    **kwargs: Any) -> Assignment:
    """An :class:`Assignment` (a :class:`CallInstruction` for array-valued
    calls) of *expression* to *assignees* (strings are parsed); the other
    keyword arguments are the instruction's fields (``id``, ``depends_on``,
    ``within_inames``, ...), as in loopy."""
    if isinstance(assignees, (tuple, list)):
        if len(assignees) != 1:
            raise KernelcoreError("make_assignment: several assignees are only "
                                  "supported in the instruction language")
        assignees = assignees[0]
    assignee, expression = _as_expr(assignees), _as_expr(expression)
    if temp_var_types:
        kwargs.setdefault("temp_var_type", temp_var_types[0])
    if not isinstance(kwargs.get("temp_var_type", Optional()), Optional):
        kwargs["temp_var_type"] = Optional(kwargs["temp_var_type"])
    kwargs.setdefault("id", kwargs.pop("id", None) or "insn")
    for name in ("depends_on", "within_inames", "tags", "groups", "conflicts_with_groups"):
        if isinstance(kwargs.get(name), str):
            kwargs[name] = frozenset(s.strip() for s in kwargs[name].split(",") if s)
        elif kwargs.get(name) is not None:
            kwargs[name] = frozenset(kwargs[name])
    cls = CallInstruction if is_array_call(assignee, expression) else Assignment
    return cls(assignee=assignee, expression=expression, **kwargs)

# }}}
