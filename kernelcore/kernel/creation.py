"""Kernel creation at loopy's module path (``loopy.kernel.creation``).

Public names: make_kernel, make_function, apply_single_writer_dependency_heuristic,
UniqueName.
"""

from __future__ import annotations

import logging

from kernelcore.creation import make_kernel
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.instruction import UniqueName
from kernelcore.translation_unit import for_each_kernel, make_function

logger = logging.getLogger(__name__)


@for_each_kernel
def apply_single_writer_dependency_heuristic(kernel: LoopKernel, warn_if_used: bool = True,
                                             error_if_used: bool = False) -> LoopKernel:
    """*kernel* with each instruction whose dependencies are not final made to
    depend on the one instruction writing a variable it reads, where exactly one
    does (what :func:`make_kernel` does when it builds a kernel). With
    *error_if_used*, a dependency that would be added raises instead; with
    *warn_if_used*, added ones are logged."""
    writers: dict[str, list[str]] = {}
    for insn in kernel.instructions:
        for name in insn.assignee_names():
            writers.setdefault(name, []).append(insn.id)
    new = []
    for insn in kernel.instructions:
        added: set[str] = set()
        if not insn.depends_on_is_final:
            for name in insn.read_dependency_names():
                found = writers.get(name, [])
                if len(found) == 1 and found[0] != insn.id and found[0] not in insn.depends_on:
                    added.add(found[0])
        if added and error_if_used:
            raise KernelcoreError(f"instruction '{insn.id}' lacks the dependencies on "
                                  f"{', '.join(sorted(added))} that the single-writer "
                                  "heuristic would add")
        if added and warn_if_used:
            logger.info("instruction '%s' now depends on %s (single writer)", insn.id,
                        ", ".join(sorted(added)))
        new.append(insn.copy(depends_on=insn.depends_on | added) if added else insn)
    return kernel.copy(instructions=tuple(new))


__all__ = ["make_kernel", "make_function", "apply_single_writer_dependency_heuristic",
           "UniqueName"]
