"""The items a linearization (schedule) is made of.

Public names: EnterLoop, LeaveLoop, RunInstruction, linearization_lines.
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
        else:
            lines.append("  " * depth + f"{item.insn_id}")
    return lines
