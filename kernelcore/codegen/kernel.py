"""A linearized kernel -> OpenCL C source for one device kernel.

Public names: CodeGenerationResult, generate_code_v2, generate_code,
generate_header, CODEGEN_STATS.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from kernelcore.codegen import cast
from kernelcore.codegen.bounds import guard_condition, loop_bounds, nonnegative_checker
from kernelcore.codegen.expression import (
    PREC_NONE, PREC_REL, CExpressionMapper, HelperRegistry)
from kernelcore.diagnostic import CodeGenerationError
from kernelcore.ir.data import AddressSpace, ValueArg
from kernelcore.ir.instruction import Assignment, NoOpInstruction
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.schedule.items import EnterLoop, LeaveLoop, RunInstruction
from kernelcore.schedule.linearize import linearize
from kernelcore.target.opencl import PyOpenCLTarget
from kernelcore.types import TypeInferenceMapper, kernel_type_context

logger = logging.getLogger(__name__)

#: counters of work done in this process (read by tests and cache statistics)
CODEGEN_STATS = {"codegen": 0}


@dataclass(frozen=True)
class CodeGenerationResult:
    """Generated device code of a kernel, with what a launcher needs to know."""

    kernel_name: str
    source: str
    prototype: str
    local_size: tuple[int, ...]

    def device_code(self) -> str:
        return self.source


class _Generator:
    def __init__(self, knl: LoopKernel):
        self.knl = knl
        self.target = knl.target or PyOpenCLTarget()
        dtypes, weak = kernel_type_context(knl)
        self.types = TypeInferenceMapper(dtypes, weak)
        self.helpers = HelperRegistry()
        self.items = knl.linearization
        self.uses_complex = any(
            v.dtype is not None and v.dtype.kind == "c"
            for v in list(knl.args) + list(knl.temporary_variables.values()))
        self.uses_double = any(
            v.dtype is not None and v.dtype in (np.float64, np.complex128)
            for v in list(knl.args) + list(knl.temporary_variables.values()))

    def mapper(self, context):
        return CExpressionMapper(self.knl, self.target, self.types, self.helpers,
                                 nonnegative_checker(self.knl, context))

    # {{{ structure

    def _block_insns(self, start: int) -> tuple[set[str], int]:
        """Instruction ids inside the loop entered at *start*, and its end index."""
        depth = 0
        ids: set[str] = set()
        for k in range(start, len(self.items)):
            item = self.items[k]
            if isinstance(item, EnterLoop):
                depth += 1
            elif isinstance(item, LeaveLoop):
                depth -= 1
                if depth == 0:
                    return ids, k
            else:
                ids.add(item.insn_id)
        raise AssertionError("unbalanced linearization")

    def gen(self, start: int, stop: int, active: list[str], context) -> list:
        nodes: list = []
        k = start
        while k < stop:
            item = self.items[k]
            if isinstance(item, EnterLoop):
                ids, end = self._block_insns(k)
                nodes += self.gen_loop(item.iname, ids, k + 1, end, active, context)
                k = end + 1
            elif isinstance(item, RunInstruction):
                nodes += self.gen_insn(self.knl.id_to_insn[item.insn_id], context)
                k += 1
            else:
                raise AssertionError(f"unexpected {item}")
        return nodes

    def gen_loop(self, iname, ids, start, stop, active, context) -> list:
        domains = [self.knl.get_insn_domain(self.knl.id_to_insn[i]) for i in sorted(ids)]
        b = loop_bounds(self.knl, iname, active, domains, context)
        m = self.mapper(context)
        lower = m(b.lower, PREC_REL + 1)
        upper = m(b.upper, PREC_REL + 1)
        body = self.gen(start, stop, active + [iname], b.inner_context)
        loop = cast.For(f"int {iname} = {lower}; {iname} <= {upper}; ++{iname}", body)
        if b.guard is True:
            return [loop]
        return [cast.If(m(b.guard), [loop])]

    def gen_insn(self, insn, context) -> list:
        if isinstance(insn, NoOpInstruction):
            return []
        if not isinstance(insn, Assignment):
            raise CodeGenerationError(f"cannot generate code for {type(insn).__name__}")
        m = self.mapper(context)
        dom = self.knl.get_insn_domain(insn)
        cond = guard_condition(dom, context)
        lhs_t = self.types(insn.assignee).dtype
        lhs = m(insn.assignee)
        rhs = m(insn.expression, PREC_NONE, lhs_t)
        node = cast.Statement(f"{lhs} = {rhs};")
        for pred in sorted(insn.predicates, key=str):
            node = cast.If(m(pred), [node])
        if cond is not True:
            node = cast.If(m(cond), [node])
        return [node]

    # }}}

    def arg_decl(self, arg, written: frozenset[str]) -> str:
        ctype = self.target.dtype_to_ctype(arg.dtype)
        if isinstance(arg, ValueArg):
            return f"{ctype} const {arg.name}"
        const = "" if arg.name in written else " const"
        qual = self.target.address_space_qualifier(arg.address_space)
        return f"{qual} {ctype}{const} *__restrict__ {arg.name}"

    def temp_decls(self) -> list:
        decls = []
        for name, tv in sorted(self.knl.temporary_variables.items()):
            ctype = self.target.dtype_to_ctype(tv.dtype)
            if tv.address_space != AddressSpace.PRIVATE:
                raise CodeGenerationError(
                    f"temporary '{name}' in {tv.address_space} memory is not supported yet")
            if tv.shape == ():
                decls.append(cast.Statement(f"{ctype} {name};"))
            else:
                size = 1
                for s in tv.shape:
                    if not isinstance(s, (int, np.integer)):
                        raise CodeGenerationError(
                            f"private temporary '{name}' needs a constant shape, got "
                            f"{tv.shape}")
                    size *= int(s)
                decls.append(cast.Statement(f"{ctype} {name}[{size}];"))
        return decls

    def generate(self) -> CodeGenerationResult:
        for arg in self.knl.args:
            if arg.dtype is None:
                raise CodeGenerationError(
                    f"type of argument '{arg.name}' is unknown: use add_dtypes or call "
                    "the kernel with data")
        written = self.knl.get_written_variables()
        local_size = (1,)
        prefix = self.target.kernel_prefix(local_size)
        decl_args = ", ".join(self.arg_decl(a, written) for a in self.knl.args)
        prototype = f"{prefix} {self.knl.name}({decl_args})"
        body = self.temp_decls()
        if body:
            body.append(cast.Statement(""))
        body += self.gen(0, len(self.items), [], self.knl.assumptions_set)
        preamble = self.target.preamble(self.uses_complex, self.uses_double)
        preamble += list(self.helpers.helpers.values())
        lines = preamble + ["", prototype, "{"]
        lines += [ln.rstrip() for ln in cast.print_nodes(body)]
        lines.append("}")
        return CodeGenerationResult(self.knl.name, "\n".join(lines) + "\n", prototype,
                                    local_size)


def generate_code_v2(knl: LoopKernel) -> CodeGenerationResult:
    """Generate device code for a kernel whose argument types are all known."""
    start = time.perf_counter()
    if knl.state < KernelState.LINEARIZED:
        knl = linearize(knl)
    result = _Generator(knl).generate()
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
    return [generate_code_v2(knl).prototype + ";"]
