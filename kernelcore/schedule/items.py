"""The items a linearization (schedule) is made of.

Public names: EnterLoop, LeaveLoop, RunInstruction, Barrier, CallKernel,
ReturnFromKernel, linearization_lines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnterLoop:
    iname: str


@dataclass(frozen=True)
class LeaveLoop:
    iname: str


@dataclass(frozen=True)
class RunInstruction:
    insn_id: str


@dataclass(frozen=True)
class Barrier:
    """A barrier inserted by kernelcore (local: within a work-group)."""

    kind: str
    comment: str = ""


@dataclass(frozen=True)
class CallKernel:
    """Start of a device kernel; the items up to :class:`ReturnFromKernel` form it."""

    kernel_name: str


@dataclass(frozen=True)
class ReturnFromKernel:
    kernel_name: str


def linearization_lines(items) -> list[str]:
    """A readable listing of a linearization, one item per line, indented."""
    lines = []
    depth = 0
    for item in items:
        if isinstance(item, EnterLoop):
            lines.append("  " * depth + f"for {item.iname}")
            depth += 1
        elif isinstance(item, LeaveLoop):
            depth -= 1
            lines.append("  " * depth + f"end {item.iname}")
        elif isinstance(item, CallKernel):
            lines.append("  " * depth + f"CALL KERNEL {item.kernel_name}")
            depth += 1
        elif isinstance(item, ReturnFromKernel):
            depth -= 1
            lines.append("  " * depth + f"RETURN FROM KERNEL {item.kernel_name}")
        elif isinstance(item, Barrier):
            note = f"  /* {item.comment} */" if item.comment else ""
            lines.append("  " * depth + f"... {item.kind[0]}barrier{note}")
        else:
            lines.append("  " * depth + f"{item.insn_id}")
    return lines
