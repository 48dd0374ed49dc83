"""The C code of one device kernel (or of a callee's device function) from
its stretch of a linearized kernel.

Public names: Generator, DeviceKernel, generate_callee_function.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pymbolic.primitives as prim

from kernelcore.callable_kernel import CallableKernel
from kernelcore.codegen import cast
from kernelcore.codegen.bounds import guard_condition, loop_bounds, nonnegative_checkers
from kernelcore.codegen.callee import callee_function_problem, kernel_call_statement
from kernelcore.codegen.calls import RegisteredCallEmitter
from kernelcore.codegen.expression import PREC_NONE, PREC_REL, CExpressionMapper, HelperRegistry
from kernelcore.codegen.helpers import trace_printf
from kernelcore.codegen.storage import (
    check_definitions,
    initial_values,
    shares_globals,
    storage_size,
)
from kernelcore.codegen.vector import (
    VECTOR_WIDTHS,
    NotVectorizable,
    VectorExpressionMapper,
    check_lanes_independent,
    check_selects_in_bounds,
    vector_ctype,
    vector_temporaries,
)
from kernelcore.diagnostic import CodeGenerationError
from kernelcore.ir.data import AddressSpace, ConstantArg, ValueArg
from kernelcore.ir.domain import (
    NotAffineError,
    align_to,
    expr_to_pw_aff,
    project_to,
    pw_aff_to_expr,
    static_range,
)
from kernelcore.ir.expr import get_dependencies, substitute
from kernelcore.ir.grid import grid_sizes, hw_iname_ranges
from kernelcore.ir.instruction import (
    Assignment,
    BarrierInstruction,
    CallInstruction,
    CInstruction,
    NoOpInstruction,
    assignee_subscript,
    assignee_var_name,
)
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.ir.simplify import simplify
from kernelcore.ir.tags import LocalIndexTag, VectorizeTag, is_unrolled
from kernelcore.schedule.items import (
    Barrier,
    EnterLoop,
    LeaveLoop,
    RunInstruction,
    segments,
)
from kernelcore.schedule.linearize import linearize
from kernelcore.target.opencl import PyOpenCLTarget
from kernelcore.types import FixedTypeMapper, kernel_type_context

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceKernel:
    """One device kernel of a program: its name, prototype, work-group size and
    number of groups per axis (expressions in the kernel's parameters)."""

    name: str
    prototype: str
    local_size: tuple[int, ...]
    num_groups: tuple
    #: the host loops' indices it takes after the arguments (int scalars)
    extra_inames: tuple[str, ...] = ()


class Generator:
    """Generates one device kernel from its stretch of the linearization."""

    def __init__(self, knl: LoopKernel, name: str, items: list, helpers: HelperRegistry,
                 function: bool = False, extra_inames: tuple[str, ...] = ()):
        #: whether this is a callee's device function (not a device kernel)
        self.function = function
        self.knl = knl
        self.name = name
        self.target = knl.target or PyOpenCLTarget()
        dtypes, weak = kernel_type_context(knl)
        self.types = FixedTypeMapper(dtypes, weak, knl.callables, knl.index_dtype)
        #: the C type of loop indices
        self.index_ctype = self.target.dtype_to_ctype(knl.index_dtype)
        self.helpers = helpers
        self.items = items
        self.insn_ids = {i.insn_id for i in items if isinstance(i, RunInstruction)}
        self.hw_ranges = hw_iname_ranges(knl, self.insn_ids)
        self.vector_temps = vector_temporaries(knl) if self.target.vector_types else {}
        self.nonnegative_at = nonnegative_checkers(knl)
        self.shares_globals = shares_globals(knl)
        #: the indices of the host loops around this kernel, passed as arguments
        self.extra_inames = extra_inames
        self.subst: dict[str, object] = {}
        #: :func:`loop_bounds`'s memo: loops inside unrolled ones recur
        self.bounds_memo: dict = {}
        for r in self.hw_ranges:
            hw = prim.Variable(self.target.hw_index_name(
                isinstance(r.tag, LocalIndexTag), r.tag.axis))
            self.subst[r.iname] = hw if r.lower == 0 else prim.Sum((r.lower, hw))
            dtypes[hw.name] = knl.index_dtype
            weak.add(hw.name)

    def emit(self, expr: Any, context: Any, prec: int = PREC_NONE,
             want: np.dtype | None = None) -> str:
        """C code for *expr* where *context* holds (inames replaced as generated)."""
        mapper = CExpressionMapper(self.knl, self.target, self.types, self.helpers,
                                   self.nonnegative_at(context), self.vector_temps)
        return mapper(self.prepared(expr), prec, want)

    def prepared(self, expr: Any) -> Any:
        """*expr* with the inames generated so far replaced by their values."""
        return simplify(substitute(expr, self.subst)) if self.subst else expr

    def initial_context(self) -> Any:
        """Assumptions, plus the values each parallel iname takes: the launch
        covers the whole axis (the largest extent of the inames on it), so an
        iname of a shorter extent gets guards."""
        ctx = self.knl.assumptions_set
        space = self.knl.space
        for iname in self.extra_inames:     # a host loop's index, within its bounds
            first, last = static_range(self.knl, iname)
            index = expr_to_pw_aff(prim.Variable(iname), space)
            ctx = ctx & index.ge_set(expr_to_pw_aff(first, space)) & index.le_set(
                expr_to_pw_aff(last, space))
        groups, local = grid_sizes(self.knl, self.insn_ids)
        for r in self.hw_ranges:
            axis_sizes = local if isinstance(r.tag, LocalIndexTag) else groups
            h = expr_to_pw_aff(prim.Variable(r.iname), space)
            lo = expr_to_pw_aff(r.lower, space)
            ctx = ctx & h.ge_set(lo)
            if self.function:
                continue        # the caller's launch may be larger: guard the upper end
            try:
                size = expr_to_pw_aff(pw_aff_to_expr(axis_sizes[r.tag.axis]), space)
            except NotAffineError:
                continue        # a piecewise size: guards alone keep accesses valid
            ctx = ctx & h.lt_set(lo + size)
        return ctx.coalesce()

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
            elif isinstance(item, RunInstruction):
                ids.add(item.insn_id)
        raise AssertionError("unbalanced linearization")

    def gen(self, start: int, stop: int, active: list[str], context: Any) -> list:
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
            elif isinstance(item, Barrier):
                note = f" /* {item.comment} */" if item.comment else ""
                stmt = self.target.barrier("local")
                if stmt is not None:
                    nodes.append(cast.Statement(f"{stmt}{note};"))
                k += 1
            else:
                raise AssertionError(f"unexpected {item}")
        return cast.merge_guards(nodes)

    def _has_barrier(self, start: int, stop: int) -> bool:
        for item in self.items[start:stop]:
            if isinstance(item, Barrier) or (isinstance(item, RunInstruction) and isinstance(
                    self.knl.id_to_insn[item.insn_id], BarrierInstruction)):
                return True
        return False

    def gen_loop(self, iname: str, ids: Any, start: int, stop: int, active: list[str],
                 context: Any) -> list:
        insns = [self.knl.id_to_insn[i] for i in sorted(ids)]
        domains = [self.knl.get_insn_domain(i) for i in insns]
        if all((align_to(d, self.knl._universe) & context).is_empty() for d in domains):
            return []           # the loop never runs (an empty domain, as loopy allows)
        # bounds may only depend on enclosing inames every body instruction runs in
        shared = [n for n in active if all(n in i.within_inames for i in insns)]
        # all work-items must reach a barrier: a loop holding one is never guarded
        # (its instructions keep their own guards)
        b = loop_bounds(self.knl, iname, shared, domains, context,
                        uniform=self._has_barrier(start, stop), memo=self.bounds_memo)
        tag = self.knl.iname_tags.get(iname)
        nodes = None
        if isinstance(tag, VectorizeTag) and self.target.vector_types:
            try:
                nodes = self.gen_vector(iname, b, start, stop, context)
            except NotVectorizable as e:
                logger.debug("vec loop '%s' of %s unrolled: %s", iname, self.knl.name, e)
        if nodes is None:
            nodes = cast.hoist_guard(
                self.gen_unrolled(iname, b, start, stop, active, context) if is_unrolled(tag)
                else self.gen_slabs(iname, b, start, stop, active, context),
                iname, set().union(*(i.assignee_names() for i in insns)))
        if b.guard is True or not nodes:
            return nodes
        return [cast.If(self.emit(b.guard, context), nodes)]

    def _iname_aff(self, iname):
        return expr_to_pw_aff(prim.Variable(iname), self.knl.space)

    def _last_offset(self, iname, b) -> int | None:
        """The largest value of *iname* minus its lower bound *b.lower*, if
        that is a constant."""
        lower = expr_to_pw_aff(b.lower, self.knl.space)
        pieces = (self._iname_aff(iname) - lower).get_pieces()
        last = b.inner_context.max_val(pieces[0][1]) if len(pieces) == 1 else None
        return last.get_num_si() if last is not None and last.is_int() else None

    def gen_unrolled(self, iname: str, b: Any, start: int, stop: int, active: list[str],
                     context: Any) -> list:
        last = self._last_offset(iname, b)
        if last is None:
            raise CodeGenerationError(
                f"cannot unroll '{iname}': its extent has no constant upper bound "
                "(split it with a fixed length first)")
        lower = expr_to_pw_aff(b.lower, self.knl.space)
        nodes: list = []
        saved = self.subst.get(iname)
        for k in range(last + 1):
            ctx_k = (context & self._iname_aff(iname).eq_set(lower + k)).coalesce()
            if ctx_k.is_empty():
                continue
            self.subst[iname] = simplify(prim.Sum((b.lower, k)))
            nodes += self.gen(start, stop, active + [iname], ctx_k)
        if saved is None:
            del self.subst[iname]
        else:
            self.subst[iname] = saved
        return nodes

    def gen_vector(self, iname: str, b: Any, start: int, stop: int, context: Any) -> list:
        """The body of ``vec`` loop *iname* as vector statements, one per
        instruction (NotVectorizable if it has no such form)."""
        items = self.items[start:stop]
        if not all(isinstance(item, RunInstruction) for item in items):
            raise NotVectorizable("its body holds loops or barriers")
        width = self._lane_count(iname, b, context)
        insns = [self.knl.id_to_insn[item.insn_id] for item in items]
        check_lanes_independent(insns, iname)
        inner = b.inner_context
        mapper = VectorExpressionMapper(
            self.knl, self.target, self.types, self.helpers,
            self.nonnegative_at(inner), self.vector_temps, iname,
            self.prepared(b.lower), width)
        nodes = []
        for insn in insns:
            if isinstance(insn, CallInstruction) or not isinstance(insn, Assignment) \
                    or insn.atomic:
                raise NotVectorizable(f"instruction '{insn.id}' is not a plain assignment")
            check_selects_in_bounds(self.knl, insn, iname)
            cond = guard_condition(self.knl.get_insn_domain(insn), inner)
            conds = sorted(insn.predicates, key=str) + ([] if cond is True else [cond])
            if any(iname in get_dependencies(c) for c in conds):
                raise NotVectorizable(f"instruction '{insn.id}' runs in some lanes only")
            if iname in get_dependencies(insn.assignee):
                value = mapper.vector_code(self.prepared(insn.expression),
                                           self.types(insn.assignee).dtype)
                node: cast.Statement | cast.Block | cast.If = cast.Statement(
                    mapper.store(self.prepared(insn.assignee), value))
            elif iname in get_dependencies(insn.expression):
                raise NotVectorizable(f"instruction '{insn.id}' stores every lane's "
                                      "value in one place")
            else:
                node = self.assignment_statement(insn, inner)
            for c in conds:
                node = cast.If(self.emit(c, inner), [node])
            nodes.append(node)
        return nodes

    def _lane_count(self, iname, b, context) -> int:
        """The constant number of iterations of ``vec`` loop *iname*."""
        last = self._last_offset(iname, b)
        if last is None:
            raise NotVectorizable("its extent is not a constant")
        width = last + 1
        if width not in VECTOR_WIDTHS:
            raise NotVectorizable(f"OpenCL has no vectors of {width} elements")
        lower, upper = (expr_to_pw_aff(e, self.knl.space) for e in (b.lower, b.upper))
        if not (context & upper.lt_set(lower + (width - 1))).is_empty():
            raise NotVectorizable("it has fewer iterations in places")
        return width

    def gen_slabs(self, iname: str, b: Any, start: int, stop: int, active: list[str],
                  context: Any) -> list:
        head, tail = self.knl.iname_slabs.get(iname, (0, 0))
        if (head, tail) == (0, 0):
            return [self._for(iname, b.lower, b.upper, start, stop, active,
                              b.inner_context, context)]
        space = self.knl.space
        lo, hi = expr_to_pw_aff(b.lower, space), expr_to_pw_aff(b.upper, space)
        it = self._iname_aff(iname)
        nodes: list = []
        pieces = []
        # the slabs partition [lower, upper], also when it is shorter than them
        if head:
            pieces.append(("initial", it.lt_set(lo + head), b.lower,
                           prim.Min((simplify(prim.Sum((b.lower, head - 1))), b.upper))))
        pieces.append(("bulk", it.ge_set(lo + head) & it.le_set(hi - tail),
                       simplify(prim.Sum((b.lower, head))),
                       simplify(prim.Sum((b.upper, -tail)))))
        if tail:
            pieces.append(("final", it.gt_set(hi - tail) & it.ge_set(lo + head),
                           prim.Max((simplify(prim.Sum((b.upper, 1 - tail))),
                                     simplify(prim.Sum((b.lower, head))))), b.upper))
        for name, restriction, low, up in pieces:
            inner = (b.inner_context & restriction).coalesce()
            if inner.is_empty():
                continue
            nodes.append(cast.Comment(f"{name} slab for '{iname}'"))
            if (name == "final" and tail == 1) or (name == "initial" and head == 1):
                value = low if name == "initial" else up
                body = self.gen(start, stop, active + [iname], inner)
                nonempty = guard_condition(
                    align_to(project_to(inner, set(active)), self.knl._universe), context)
                block: list[cast.Statement | cast.If] = [
                    cast.Statement(f"{self.index_ctype} const {iname} = "
                                   f"{self.emit(value, context)};"),
                    cast.Statement("")]
                block += [cast.If(self.emit(nonempty, context), body)] \
                    if nonempty is not True else body
                nodes.append(cast.Block(block))
            else:
                nodes.append(self._for(iname, low, up, start, stop, active, inner, context))
        return nodes

    def _for(self, iname, lower, upper, start, stop, active, inner, context):
        body = self.gen(start, stop, active + [iname], inner)
        lo = self.emit(lower, context, PREC_REL + 1)
        up = self.emit(upper, context, PREC_REL + 1)
        return cast.For(f"{self.index_ctype} {iname} = {lo}; {iname} <= {up}; ++{iname}",
                        body)

    def gen_insn(self, insn: Any, context: Any) -> list:
        if isinstance(insn, NoOpInstruction):
            return []
        if isinstance(insn, BarrierInstruction):
            stmt = self.target.barrier("global" if "global" in (
                insn.mem_kind, insn.synchronization_kind) else "local")
            return [] if stmt is None else [cast.Statement(f"{stmt} /* {insn.id} */;")]
        if not isinstance(insn, (Assignment, CInstruction)):
            raise CodeGenerationError(f"cannot generate code for {type(insn).__name__}")
        dom = self.knl.get_insn_domain(insn)
        cond = guard_condition(dom, context)
        if isinstance(insn, CInstruction):
            values = [(name, self.emit(expr, context)) for name, expr in insn.iname_exprs]
            # (a loop index already in scope under its own name needs no copy)
            node: cast.Block | cast.Statement | cast.If = cast.Block([
                cast.Statement(f"{self.index_ctype} const {name} = {value};")
                for name, value in values if value != name] + [
                cast.Statement(line) for line in insn.code.split("\n")])
        elif isinstance(insn, CallInstruction) or self._calls_kernel(insn):
            node = cast.Statement(self.call_statement(insn, context))
        else:
            node = self.assignment_statement(insn, context)
        for pred in sorted(insn.predicates, key=str):
            node = cast.If(self.emit(pred, context), [node])
        if cond is not True:
            node = cast.If(self.emit(cond, context), [node])
        return [node]

    def _calls_kernel(self, insn) -> bool:
        """Whether *insn* is ``y = k(...)`` for a callee kernel ``k``."""
        fn = getattr(insn.expression, "function", None)
        return isinstance(insn.expression, prim.Call) and isinstance(
            self.knl.callables.get(getattr(fn, "name", "")), CallableKernel)

    def call_statement(self, insn: Any, context: Any) -> str:
        clbl = self.knl.callables.get(insn.expression.function.name)
        if isinstance(clbl, CallableKernel):
            return kernel_call_statement(
                self.knl, insn, clbl, self.types,
                lambda e, want: self.emit(e, context, PREC_NONE, want), self.helpers,
                generate_callee_function)
        if clbl is None:
            raise CodeGenerationError(
                f"instruction '{insn.id}' calls '{insn.expression.function}' with array "
                "slices, which needs a registered callable (register_callable)")
        emitter = RegisteredCallEmitter(
            self.knl, self.target, self.types, self.helpers,
            lambda e, want: self.emit(e, context, PREC_NONE, want))
        return emitter.call_statement(insn)

    def assignment_statement(self, insn: Any, context: Any) -> cast.Statement | cast.Block:
        lhs_t = self.types(insn.assignee).dtype
        lhs = self.emit(insn.assignee, context)
        node: cast.Statement | cast.Block
        if insn.atomic and not self.target.sequential:
            node = cast.Statement(self.atomic_update(insn, lhs, lhs_t, context))
        else:
            rhs = self.emit(insn.expression, context, PREC_NONE, lhs_t)
            node = cast.Statement(f"{lhs} = {rhs};")
        opts = self.knl.options
        if opts.trace_assignments or opts.trace_assignment_values:
            index = [self.emit(ix, context) for ix in assignee_subscript(insn.assignee)]
            node = cast.Block([node, cast.Statement(trace_printf(
                assignee_var_name(insn.assignee), index,
                lhs if opts.trace_assignment_values else None, lhs_t))])
        return node

    def atomic_update(self, insn: Any, lhs: str, dtype: np.dtype, context: Any) -> str:
        """``x = x + e`` as an atomic addition (compare-and-swap for floats);
        ``x = e`` with *e* not reading *x* as an atomic store."""
        expr = insn.expression
        ctype = self.target.dtype_to_ctype(dtype)
        if assignee_var_name(insn.assignee) not in get_dependencies(expr):
            value = self.emit(expr, context, PREC_NONE, dtype)
            return f"{self.helpers.atomic_store(ctype, dtype.kind)}(&{lhs}, {value});"
        terms = list(expr.children) if isinstance(expr, prim.Sum) else []
        if insn.assignee not in terms:
            raise CodeGenerationError(
                f"atomic instruction '{insn.id}' must have the form "
                f"{insn.assignee} = {insn.assignee} + ... (or a store of a value "
                "not reading it)")
        terms.remove(insn.assignee)
        rest = terms[0] if len(terms) == 1 else prim.Sum(tuple(terms))
        value = self.emit(rest, context, PREC_NONE, dtype)
        fn = self.helpers.atomic_add(ctype, dtype.kind)
        return f"{fn}(&{lhs}, {value});"

    # }}}

    def arg_decl(self, arg: Any, written: frozenset[str]) -> str:
        ctype = self.target.dtype_to_ctype(arg.dtype)
        if isinstance(arg, ValueArg):
            return f"{ctype} const {arg.name}"
        # (not restrict where shared: NVIDIA's compiler keeps loads across barriers)
        decl = self.target.array_arg_decl(ctype, arg.name, arg.name not in written,
                                          arg.name not in written or not self.shares_globals)
        if isinstance(arg, ConstantArg):
            decl = decl.replace("__global ", "__constant ", 1)
        elif self.function and arg.address_space != AddressSpace.GLOBAL:
            qual = self.target.address_space_qualifier(arg.address_space)
            decl = decl.replace("__global ", f"{qual} " if qual else "", 1)
        return decl

    def temp_decls(self, spaces: tuple[AddressSpace, ...] = (AddressSpace.LOCAL,
                                                          AddressSpace.PRIVATE)) -> list:
        decls = []
        used: set[str] = set()
        for iid in self.insn_ids:
            insn = self.knl.id_to_insn[iid]
            used |= insn.assignee_names() | insn.read_dependency_names()
        local_qual = self.target.address_space_qualifier(AddressSpace.LOCAL)
        for name, tv in sorted(self.knl.temporary_variables.items()):
            if tv.initializer is not None and name in used and not (
                    tv.address_space in (AddressSpace.PRIVATE, AddressSpace.GLOBAL)
                    or tv.address_space == AddressSpace.LOCAL and not local_qual):
                raise CodeGenerationError(
                    f"temporary '{name}' of kernel {self.knl.name} has an initializer "
                    f"but lives in {tv.address_space} memory: kernelcore initializes "
                    "private and global temporaries only (on the C target also local ones; "
                    "set_temporary_address_space(knl, "
                    f"'{name}', 'private'))")
            if tv.address_space not in spaces or name not in used:
                continue          # globals are arguments, allocated by the runtime
            assert tv.dtype is not None
            ctype = self.target.dtype_to_ctype(tv.dtype)
            size = storage_size(name, tv)
            if size == 0:
                continue          # nothing reads or writes an empty array (C has none)
            if tv.initializer is not None:     # (local ones only where local is plain C)
                decls.append(cast.Statement(
                    f"{ctype} {name}[{size}] = {{ {initial_values(tv, size, self.emit)} }};"))
                continue
            if tv.address_space == AddressSpace.LOCAL:
                qual = f"{local_qual} " if local_qual else ""
                align = "" if tv.alignment is None else \
                    f" __attribute__ ((aligned ({tv.alignment})))"
                decls.append(cast.Statement(f"{qual}{ctype} {name}[{size}]{align};"))
            elif tv.shape == ():
                decls.append(cast.Statement(f"{ctype} {name};"))
            elif name in self.vector_temps:
                vtype = vector_ctype(self.target, tv.dtype, self.vector_temps[name])
                count = int(np.prod(tv.shape[:-1]))
                decls.append(cast.Statement(f"{vtype} {name}[{count}];" if len(tv.shape) > 1
                                            else f"{vtype} {name};"))
            else:
                decls.append(cast.Statement(f"{ctype} {name}[{size}];"))
        return decls

    def generate(self) -> tuple[DeviceKernel, list[str]]:
        check_definitions(self.knl, self.name, self.insn_ids)
        written = self.knl.get_written_variables()
        groups, local = grid_sizes(self.knl, self.insn_ids)
        local_size = tuple(pw.get_pieces()[0][1].get_constant_val().get_num_si()
                           for pw in local) or (1,)
        num_groups = tuple(pw_aff_to_expr(pw) for pw in groups) or (1,)
        num_groups += (1,) * (len(local_size) - len(num_groups))
        local_size += (1,) * (len(num_groups) - len(local_size))
        prefix = ("static void" if self.function
                  else self.target.kernel_prefix(local_size))
        decl_args = ", ".join([self.arg_decl(a, written) for a in (
            self.knl.args if self.function else self.knl.device_arguments())]
            + [f"{self.index_ctype} const {n}" for n in self.extra_inames])
        prototype = f"{prefix} {self.name}({decl_args})"
        if self.target.sequential and self.hw_ranges and not self.function:
            body = self.sequential_body(num_groups, local_size)
        else:
            body = self.temp_decls()
            if body:
                body.append(cast.Statement(""))
            body += self.gen(0, len(self.items), [r.iname for r in self.hw_ranges],
                             self.initial_context())
        lines = [prototype, "{"]
        lines += [ln.rstrip() for ln in cast.print_nodes(body)]
        lines.append("}")
        return DeviceKernel(self.name, prototype, local_size, num_groups,
                            self.extra_inames), lines

    def sequential_body(self, num_groups: tuple, local_size: tuple) -> list:
        """The kernel's body for a sequential target (C): its parallel inames
        run as loops, the groups one after another, and in each group its
        work-items."""
        local_axes = sorted({r.tag.axis for r in self.hw_ranges
                             if isinstance(r.tag, LocalIndexTag)})
        group_axes = sorted({r.tag.axis for r in self.hw_ranges
                             if not isinstance(r.tag, LocalIndexTag)})
        group_size = int(np.prod(local_size)) if local_size else 1
        if group_size > 1 and self._has_barrier(0, len(self.items)):
            raise CodeGenerationError(
                f"kernel '{self.name}': the C target runs the work-items of a group one "
                "after another and cannot synchronize them at a barrier; remove the "
                "local parallel tags (l.N) or generate OpenCL code instead")
        body = self.temp_decls((AddressSpace.PRIVATE,))
        if body:
            body.append(cast.Statement(""))
        body += self.gen(0, len(self.items), [r.iname for r in self.hw_ranges],
                         self.initial_context())
        for axis in reversed(local_axes):
            idx = self.target.hw_index_name(True, axis)
            body = [cast.For(f"{self.index_ctype} {idx} = 0; {idx} < {local_size[axis]}; "
                             f"++{idx}", body)]
        params = self.knl.assumptions_set
        for axis in reversed(group_axes):
            idx = self.target.hw_index_name(False, axis)
            count = self.emit(num_groups[axis], params, PREC_REL + 1)
            body = [cast.For(f"{self.index_ctype} {idx} = 0; {idx} < {count}; ++{idx}",
                             body)]
        shared = self.temp_decls((AddressSpace.LOCAL,))
        if shared:
            shared.append(cast.Statement(""))
        return shared + body


def generate_callee_function(callee: LoopKernel, helpers: Any) -> str:
    """The source of the ``static void`` function of the typed kernel *callee*;
    the helpers its code needs go to *helpers* (before it)."""
    for arg in callee.args:
        if arg.dtype is None:
            raise CodeGenerationError(f"kernel '{callee.name}': the type of its argument "
                                      f"'{arg.name}' is unknown at its call")
    if callee.state < KernelState.LINEARIZED:
        callee = linearize(callee)
    problem = callee_function_problem(callee, callee.target)
    parts = segments(callee.linearization or ())
    if problem is None and len(parts) != 1:
        problem = "it needs several device kernels"
    if problem is not None:
        raise CodeGenerationError(f"kernel '{callee.name}' cannot be a device function: "
                                  f"{problem} (inline it with inline_callable_kernel)")
    _, items, _ = parts[0]
    _, lines = Generator(callee, callee.name, items, helpers, function=True).generate()
    helpers.dtypes.update(a.dtype for a in callee.args)
    return "\n".join(lines)
