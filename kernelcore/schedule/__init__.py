"""Scheduling: ordering loops and instructions into a linearization.

Public names (loopy's ``loopy.schedule``): EnterLoop, LeaveLoop, RunInstruction,
Barrier, CallKernel, ReturnFromKernel (the items of ``kernel.linearization``).
"""

from kernelcore.schedule.items import (
    Barrier,
    CallKernel,
    EnterLoop,
    LeaveLoop,
    ReturnFromKernel,
    RunInstruction,
)

__all__ = ["EnterLoop", "LeaveLoop", "RunInstruction", "Barrier", "CallKernel",
           "ReturnFromKernel"]
