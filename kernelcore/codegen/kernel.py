"""A linearized kernel -> OpenCL C source (one device kernel per stretch between
global barriers).

Public names: CodeGenerationResult, DeviceKernel,
generate_code_v2, generate_code, generate_header, CODEGEN_STATS.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

import numpy as np

from kernelcore.codegen.expression import HelperRegistry
from kernelcore.codegen.generator import DeviceKernel, Generator
from kernelcore.codegen.preambles import kernel_preambles
from kernelcore.codegen.storage import (
    check_definitions_across_global_barriers,
    constant_declarations,
)
from kernelcore.creation import check_names
from kernelcore.diagnostic import (
    CodeGenerationError,
    UnscheduledInstructionError,
    recording_warnings,
)
from kernelcore.ir.expr import called_names
from kernelcore.ir.instruction import BarrierInstruction
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.schedule.items import RunInstruction, segments
from kernelcore.schedule.linearize import linearize
from kernelcore.target.opencl import PyOpenCLTarget
from kernelcore.translation_unit import TranslationUnit

logger = logging.getLogger(__name__)

#: counters of work done in this process (read by tests and cache statistics)
CODEGEN_STATS = {"codegen": 0}


@dataclass(frozen=True)
class CodeGenerationResult:
    """Generated device code: one source holding every device kernel, which the
    host launches in order."""

    source: str
    kernels: tuple[DeviceKernel, ...]
    #: global temporaries the host allocates per call: (name, dtype name, shape)
    global_temporaries: tuple[tuple[str, str, tuple], ...] = ()
    #: (category, message) of the warnings issued while generating the code,
    #: issued again when the code is taken from a cache
    warnings: tuple[tuple[type, str], ...] = ()
    #: the launches, in order: (index into :attr:`kernels`, the values of the
    #: kernel's :attr:`~DeviceKernel.extra_inames`); empty: each kernel once
    launches: tuple[tuple[int, tuple[int, ...]], ...] = ()

    def host_code(self) -> str:
        """The host's part: the launches in order, one line each (the kernel and
        the values of its host loop indices)."""
        lines = []
        for k, values in self.launch_list():
            dk = self.kernels[k]
            at = ", ".join(f"{n}={v}" for n, v in zip(dk.extra_inames, values))
            lines.append(f"launch {dk.name}" + (f"  ({at})" if at else ""))
        return "\n".join(lines) + "\n"

    def launch_list(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The launches (:attr:`launches`, or each kernel once, in order)."""
        return self.launches or tuple((k, ()) for k in range(len(self.kernels)))

    def device_code(self) -> str:
        return self.source

    @property
    def device_programs(self) -> tuple[DeviceKernel, ...]:
        """loopy's name for the device kernels, one per launch."""
        return self.kernels


def _generate(knl: LoopKernel) -> CodeGenerationResult:
    for arg in knl.args:
        if arg.dtype is None:
            raise CodeGenerationError(
                f"type of argument '{arg.name}' is unknown: use add_dtypes or call "
                "the kernel with data")
    target = knl.target or PyOpenCLTarget()
    helpers = HelperRegistry(target.helper_linkage)
    kernels: list[DeviceKernel] = []
    bodies: list[str] = []
    launches = []
    for name, items, fixed in segments(knl.linearization or ()):
        index = next((k for k, dk in enumerate(kernels) if dk.name == name), None)
        if index is None:       # (the iterations of a host loop launch it again)
            dk, lines = Generator(knl, name, items, helpers,
                                  extra_inames=tuple(n for n, _ in fixed)).generate()
            index = len(kernels)
            kernels.append(dk)
            bodies += [""] + lines
        launches.append((index, tuple(v for _, v in fixed)))
    variables = list(knl.args) + list(knl.temporary_variables.values())
    dtypes = helpers.dtypes | {v.dtype for v in variables if v.dtype is not None}
    uses_complex = any(dt.kind == "c" for dt in dtypes)
    uses_double = any(dt in (np.float64, np.complex128) for dt in dtypes)
    functions = {n for insn in knl.instructions for e in insn.expressions()
                 for n in called_names(e)}
    for key, code in kernel_preambles(knl, dtypes, functions).items():
        helpers.preambles.setdefault(key, code)
    preamble = [code for _, code in sorted(helpers.preambles.items())]
    preamble += target.preamble(uses_complex, uses_double,
                                target.dtype_to_ctype(knl.index_dtype))
    preamble += [f"#pragma OPENCL EXTENSION {e}: enable" for e in sorted(helpers.extensions)]
    preamble += list(helpers.helpers.values())
    preamble += constant_declarations(knl, target)
    temps = tuple((tv.name, tv.dtype.name, tuple(tv.shape))
                  for tv in knl.device_arguments()[len(knl.args):])
    return CodeGenerationResult("\n".join(preamble + bodies) + "\n", tuple(kernels), temps,
                                launches=tuple(launches))


def _check_all_scheduled(knl: LoopKernel) -> None:
    """Raise if an instruction of *knl* is missing from its linearization (it
    was added after linearizing; barriers a launch of one work-item does not
    need are left out on purpose)."""
    run = {item.insn_id for item in knl.linearization or ()
           if isinstance(item, RunInstruction)}
    missing = sorted(i.id for i in knl.instructions
                     if i.id not in run and not isinstance(i, BarrierInstruction))
    if missing:
        raise UnscheduledInstructionError(
            f"kernel {knl.name}: instruction(s) {', '.join(missing)} are not in the "
            "linearization (added after linearizing? linearize the kernel again)")


def generate_code_v2(knl: LoopKernel) -> CodeGenerationResult:
    """Generate device code for a kernel (or a translation unit's entry point)
    whose argument types are all known."""
    if isinstance(knl, TranslationUnit):
        knl = knl.executable_kernel()
    check_names([knl.name], "kernel")  # (loopy makes such kernels; they do not compile)
    start = time.perf_counter()
    with recording_warnings() as recorded:
        if knl.state < KernelState.LINEARIZED:
            knl = linearize(knl)
        _check_all_scheduled(knl)
        result = _generate(knl)
        # (after the device kernels' own check, which names the kernel)
        check_definitions_across_global_barriers(knl)
    result = replace(result, warnings=tuple(recorded))
    CODEGEN_STATS["codegen"] += 1
    logger.info("generated code for %s in %.1f ms", knl.name,
                1e3 * (time.perf_counter() - start))
    return result


def generate_code(knl: LoopKernel) -> tuple[str, CodeGenerationResult]:
    """(device source, result) — loopy's older interface."""
    result = generate_code_v2(knl)
    return result.device_code(), result


def generate_header(knl: LoopKernel) -> list[str]:
    """The kernel prototypes (declarations) of the generated code."""
    return [k.prototype + ";" for k in generate_code_v2(knl).kernels]
