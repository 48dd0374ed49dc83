"""Scheduling: ordering loops and instructions into a linearization.

Public names (loopy's ``loopy.schedule``): EnterLoop, LeaveLoop, RunInstruction,
Barrier, CallKernel, ReturnFromKernel (the items of ``kernel.linearization``), and
linearize, get_one_linearized_kernel (as in loopy, ``loopy.schedule.linearize`` is
the function; its module stays importable as ``kernelcore.schedule.linearize``).
"""

from kernelcore.schedule.items import (
    Barrier,
    CallKernel,
    EnterLoop,
    LeaveLoop,
    ReturnFromKernel,
    RunInstruction,
)
from kernelcore.schedule.linearize import get_one_linearized_kernel, linearize

__all__ = ["EnterLoop", "LeaveLoop", "RunInstruction", "Barrier", "CallKernel",
           "ReturnFromKernel", "linearize", "get_one_linearized_kernel"]
