"""Instructions at loopy's module path (``loopy.kernel.instruction``).

Public names: InstructionBase, MultiAssignmentBase, Assignment,
ExpressionInstruction, CallInstruction, BarrierInstruction, NoOpInstruction,
CInstruction, make_assignment, is_array_call, MemoryOrdering, MemoryScope,
VarAtomicity, AtomicInit, AtomicUpdate, OrderedAtomic.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import SubArrayRef
from kernelcore.ir.instruction import (
    Assignment,
    BarrierInstruction,
    CallInstruction,
    CInstruction,
    InstructionBase,
    NoOpInstruction,
    has_slices,
)
from kernelcore.parse import parse_expression

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


def _as_expr(x: Any) -> Any:
    return parse_expression(x) if isinstance(x, str) else x


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
    kwargs.setdefault("id", kwargs.pop("id", None) or "insn")
    for name in ("depends_on", "within_inames", "tags"):
        if isinstance(kwargs.get(name), str):
            kwargs[name] = frozenset(s.strip() for s in kwargs[name].split(",") if s)
        elif kwargs.get(name) is not None:
            kwargs[name] = frozenset(kwargs[name])
    cls = CallInstruction if is_array_call(assignee, expression) else Assignment
    return cls(assignee=assignee, expression=expression, **kwargs)


__all__ = ["InstructionBase", "MultiAssignmentBase", "Assignment", "ExpressionInstruction",
           "CallInstruction", "BarrierInstruction", "NoOpInstruction", "CInstruction",
           "make_assignment", "is_array_call", "MemoryOrdering", "MemoryScope",
           "VarAtomicity", "AtomicInit", "AtomicUpdate", "OrderedAtomic"]
