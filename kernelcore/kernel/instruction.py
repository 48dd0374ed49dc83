"""Instructions at loopy's module path (``loopy.kernel.instruction``), defined
in :mod:`kernelcore.ir.instruction`.

Public names: InstructionBase, MultiAssignmentBase, Assignment,
ExpressionInstruction, CallInstruction, BarrierInstruction, NoOpInstruction,
CInstruction, make_assignment, is_array_call, MemoryOrdering, MemoryScope,
VarAtomicity, AtomicInit, AtomicUpdate, OrderedAtomic.
"""

from kernelcore.ir.instruction import (
    Assignment,
    AtomicInit,
    AtomicUpdate,
    BarrierInstruction,
    CallInstruction,
    CInstruction,
    ExpressionInstruction,
    InstructionBase,
    MemoryOrdering,
    MemoryScope,
    MultiAssignmentBase,
    NoOpInstruction,
    OrderedAtomic,
    VarAtomicity,
    is_array_call,
    make_assignment,
)

__all__ = ["InstructionBase", "MultiAssignmentBase", "Assignment", "ExpressionInstruction",
           "CallInstruction", "BarrierInstruction", "NoOpInstruction", "CInstruction",
           "make_assignment", "is_array_call", "MemoryOrdering", "MemoryScope",
           "VarAtomicity", "AtomicInit", "AtomicUpdate", "OrderedAtomic"]
