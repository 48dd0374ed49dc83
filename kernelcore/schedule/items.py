"""The items a linearization (schedule) is made of.

Public names: EnterLoop, LeaveLoop, RunInstruction, Barrier, CallKernel,
ReturnFromKernel, linearization_lines, schedule_lines, segments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kernelcore.ir.data import AddressSpace
from kernelcore.ir.stages import provide

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel


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

    @property
    def synchronization_kind(self) -> str:
        """loopy's name of :attr:`kind`."""
        return self.kind


@dataclass(frozen=True)
class CallKernel:
    """Start of a device kernel; the items up to :class:`ReturnFromKernel` form it.
    *fixed* gives ``(iname, value)`` of the host loops around it (a sequential
    loop holding a global barrier is run by the host, as one device kernel per
    stretch and iteration)."""

    kernel_name: str
    fixed: tuple[tuple[str, int], ...] = ()

    @property
    def extra_inames(self) -> tuple[str, ...]:
        """loopy's name: the host loops' inames the kernel sees."""
        return tuple(n for n, _ in self.fixed)


@dataclass(frozen=True)
class ReturnFromKernel:
    kernel_name: str


def linearization_lines(items: Iterable[EnterLoop | LeaveLoop | RunInstruction | Barrier
                                        | CallKernel | ReturnFromKernel]) -> list[str]:
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
            at = ", ".join(f"{n}={v}" for n, v in item.fixed)
            lines.append("  " * depth + f"CALL KERNEL {item.kernel_name}"
                         + (f"  /* {at} */" if at else ""))
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


def _extra_args(knl, items, start: int) -> list[str]:
    """Global temporaries the device kernel starting at *start* touches."""
    globals_ = {n for n, t in knl.temporary_variables.items()
                if t.address_space == AddressSpace.GLOBAL}
    used: set[str] = set()
    for item in items[start + 1:]:
        if isinstance(item, ReturnFromKernel):
            break
        if isinstance(item, RunInstruction):
            insn = knl.id_to_insn.get(item.insn_id)
            if insn is not None:
                used |= (insn.assignee_names() | insn.read_dependency_names()) & globals_
    return sorted(used)


def schedule_lines(knl: LoopKernel) -> list[str]:
    """The linearization of *knl* as loopy prints it under ``SCHEDULE:``:
    numbered items, nested four spaces per loop or device kernel, with each
    instruction shown in full."""
    items = list(knl.linearization or ())
    width = max(len(str(len(items) - 1)), 1) + 3 if items else 4
    lines = []
    depth = 0
    for k, item in enumerate(items):
        if isinstance(item, (LeaveLoop, ReturnFromKernel)):
            depth -= 1
        if isinstance(item, EnterLoop):
            text = f"for {item.iname}"
        elif isinstance(item, LeaveLoop):
            text = f"end {item.iname}"
        elif isinstance(item, CallKernel):
            text = (f"CALL KERNEL {item.kernel_name}(extra_args="
                    f"{_extra_args(knl, items, k)}, extra_inames={list(item.extra_inames)})")
        elif isinstance(item, ReturnFromKernel):
            text = f"RETURN FROM KERNEL {item.kernel_name}"
        elif isinstance(item, Barrier):
            note = f"  /* {item.comment} */" if item.comment else ""
            text = f"... {item.kind[0]}barrier{note}"
        else:
            insn = knl.id_to_insn.get(item.insn_id)
            text = str(insn).rstrip() if insn is not None else item.insn_id
        lines.append(f"{k:>{width}}: " + "    " * depth + text)
        if isinstance(item, (EnterLoop, CallKernel)):
            depth += 1
    return lines

def segments(items: Iterable) -> list[tuple[str, list, tuple]]:
    """``(device kernel name, items, fixed host loop values)`` for each device
    kernel of the linearization *items*."""
    result = []
    current: tuple[str, list, tuple] | None = None
    for item in items:
        if isinstance(item, CallKernel):
            current = (item.kernel_name, [], item.fixed)
        elif isinstance(item, ReturnFromKernel):
            assert current is not None
            result.append(current)
            current = None
        elif current is not None:
            current[1].append(item)
    return result


provide("schedule_lines", schedule_lines)
