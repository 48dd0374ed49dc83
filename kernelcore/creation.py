"""make_kernel: from domain and instruction text to a kernel (in a translation unit).

Fills in what the user left out: instruction ids, loop indices of each
instruction, arguments and temporaries (``"..."``), array shapes from access
footprints, and the single-writer dependency heuristic.

Public names: make_kernel, make_loop_kernel.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.auto_shapes import find_auto_shapes
from kernelcore.diagnostic import KernelcoreError, ParseError, UnknownNameError
from kernelcore.ir.data import ArrayArg, TemporaryVariable, ValueArg, auto
from kernelcore.ir.domain import parse_assumptions, parse_domain
from kernelcore.ir.expr import (
    AccessCollector,
    IdentityMapper,
    Reduction,
    TypeCast,
    get_dependencies,
    is_reduction_name,
    substitute,
)
from kernelcore.ir.instruction import (
    Assignment,
    BarrierInstruction,
    CallInstruction,
    CInstruction,
    InstructionBase,
    NoOpInstruction,
    assignee_subscript,
    assignee_var_name,
    has_slices,
)
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.subst import SubstitutionRule, call_bare_rules, expand_rules
from kernelcore.options import Options
from kernelcore.parse import ParsedInstruction, parse_instructions

logger = logging.getLogger(__name__)


class _ReductionResolver(IdentityMapper):
    """Calls ``sum(k, e)``, ``reduce(sum, k, e)``, ``simul_reduce(sum, k, e)`` (and
    ``max/min(k, e)`` with k an iname) -> Reduction;
    ``float32(e)`` and the other dtype names -> TypeCast."""

    def __init__(self, inames: set[str]):
        self.inames = inames

    def _reduction_inames(self, arg):
        if isinstance(arg, prim.Variable):
            names = (arg.name,)
        elif isinstance(arg, (tuple, list)) and all(
                isinstance(a, prim.Variable) for a in arg):     # (none: the value itself)
            names = tuple(a.name for a in arg)
        else:
            return None
        return names

    def map_call(self, expr):
        fn = expr.function
        params = expr.parameters
        if isinstance(fn, prim.Variable) and fn.name in ("reduce", "simul_reduce") \
                and len(params) == 3 and isinstance(params[0], prim.Variable):
            # reduce(op, inames, expr); simul_reduce: the same, allow_simultaneous
            red = self.map_call(prim.Call(params[0], params[1:]))
            if not isinstance(red, Reduction):
                raise ParseError(f"{expr}: '{params[0].name}' is not a reduction over "
                                 f"inames {params[1]}")
            return dataclasses.replace(red, allow_simultaneous=fn.name == "simul_reduce")
        segmented = _segmented_op(expr)
        if segmented is not None:       # reduce(segmented(op), inames, value, flag)
            names = self._reduction_inames(params[1])
            if names is None or any(n not in self.inames for n in names):
                raise ParseError(f"{expr}: the second argument must name inames")
            return Reduction(segmented, names, (self.rec(params[2]), self.rec(params[3])))
        if isinstance(fn, prim.Variable) and is_reduction_name(fn.name) and len(params) == 2:
            names = self._reduction_inames(params[0])
            is_reduction = names is not None and (
                fn.name not in ("max", "min") or all(n in self.inames for n in names))
            if is_reduction:
                unknown = [n for n in names if n not in self.inames]
                if unknown:
                    raise UnknownNameError(
                        f"reduction {fn.name}() over unknown iname(s) "
                        f"{', '.join(unknown)}: declare them in a domain")
                return Reduction(fn.name, names, self.rec(params[1]))
            if fn.name.startswith("arg") and names is not None and len(names) != 1:
                raise ParseError(f"{fn.name}() reduces over exactly one iname")
            if fn.name not in ("max", "min"):
                raise ParseError(f"{fn.name}() needs an iname or a tuple of inames as "
                                 f"first argument, got {params[0]}")
        if isinstance(fn, prim.Variable) and fn.name in _CAST_NAMES:
            if len(params) != 1:
                raise ParseError(f"cast {fn.name}() takes one argument, got {len(params)}")
            return TypeCast(np.dtype(fn.name), self.rec(params[0]))
        return prim.Call(fn, tuple(self.rec(p) for p in params))

    def map_constant(self, expr):
        return expr


_CAST_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "complex64", "complex128", "bool"}


_C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while bool half uchar ushort uint ulong size_t
ptrdiff_t intptr_t uintptr_t kernel __kernel global __global local __local constant
__constant private __private read_only write_only image2d_t image3d_t sampler_t event_t
true false NULL INFINITY NAN lid gid
""".split())


class _SubArrayLowering(IdentityMapper):
    """loopy's sub-array references as the slices calls take:
    ``[j]: a[i, j]`` becomes ``a[i, lo:hi+1]`` (the range of *j*). Each
    swept iname must be a whole subscript, in the order of the axes."""

    def __init__(self, proto: LoopKernel):
        self.proto = proto

    def map_sub_array_ref(self, expr, *args, **kwargs):
        swept = [v.name for v in expr.swept_inames]
        sub = expr.subscript
        if not isinstance(sub, prim.Subscript):
            raise ParseError(f"sub-array reference {expr}: expected an array access")
        used: list[str] = []
        index = []
        for ix in assignee_subscript(sub):
            if not get_dependencies(ix) & set(swept):
                index.append(self.rec(ix))
                continue
            if not (isinstance(ix, prim.Variable) and ix.name in swept):
                raise ParseError(f"sub-array reference {expr}: kernelcore takes swept "
                                 "inames only as whole subscripts (a[i, j], not a[i, 2*j])")
            used.append(ix.name)
            index.append(self._slice(ix.name))
        if used != swept:
            raise ParseError(f"sub-array reference {expr}: the swept inames must each "
                             "index one axis, in the order of the axes")
        return prim.Subscript(sub.aggregate, tuple(index))

    def _slice(self, iname: str) -> prim.Slice:
        from kernelcore.transform.ilp import static_range
        if iname not in self.proto.all_inames():
            raise UnknownNameError(f"sub-array reference over unknown iname '{iname}'")
        try:
            lo, hi = static_range(self.proto, iname)
        except KernelcoreError:
            return prim.Slice((None, None))      # a parametric range: the whole axis
        return prim.Slice((None if lo == 0 else lo, hi + 1))


def _segmented_op(expr) -> str | None:
    """``segmented(op)`` (or ``segmented_flag(op)``) for a call
    ``reduce(segmented(op), inames, value, flag)``, else None."""
    if not (isinstance(expr, prim.Call) and expr.function == prim.Variable("reduce")
            and len(expr.parameters) == 4):
        return None
    kind = expr.parameters[0]
    if (isinstance(kind, prim.Call) and isinstance(kind.function, prim.Variable)
            and kind.function.name in ("segmented", "segmented_flag")
            and len(kind.parameters) == 1 and isinstance(kind.parameters[0], prim.Variable)
            and kind.parameters[0].name in ("sum", "product", "max", "min")):
        return f"{kind.function.name}({kind.parameters[0].name})"
    raise ParseError(f"{expr}: a four-argument reduce() is a segmented scan, "
                     "reduce(segmented(sum|product|max|min), inames, value, flag)")


def _second_output(pi: ParsedInstruction, expression, suffix: str) -> ParsedInstruction:
    """The instruction computing the second of *pi*'s two outputs from *expression*
    (its id: *pi*'s with *suffix*; its temporary declaration: the one written
    before the second assignee)."""
    declared = pi.extra.get("assignee_types", {}).get(1)
    return dataclasses.replace(
        pi, assignee=pi.assignee[1], expression=expression,
        temp_var_type=declared if declared is not None else None,
        id=None if pi.id is None else f"{pi.id}_{suffix}",
        extra={**pi.extra, "inames_of": pi.assignee[0]})   # runs where the first one does


def _split_segmented(pi: ParsedInstruction) -> list:
    """``v[i], f[i] = reduce(segmented(op), j, value, flag)`` as one instruction
    for the values and one for the flags (id suffix ``_flag``)."""
    if len(pi.assignee) != 2:
        raise ParseError(f"{pi.source!r}: a segmented reduction has two outputs "
                         "(the values and the segment flags)")
    e = pi.expression
    op = e.parameters[0]
    flag_expr = prim.Call(e.function, (prim.Variable("segmented_flag")(*op.parameters),)
                          + e.parameters[1:])
    return [dataclasses.replace(pi, assignee=pi.assignee[0]),
            _second_output(pi, flag_expr, "flag")]


def _split_make_tuple(pi: ParsedInstruction) -> list:
    """``a, b = make_tuple(x, y)`` as ``a = x`` and ``b = y`` (ids: the
    instruction's, then with ``_1``, ``_2``, ...)."""
    values = pi.expression.parameters
    if len(values) != len(pi.assignee):
        raise ParseError(f"{pi.source!r}: make_tuple() of {len(values)} values assigned "
                         f"to {len(pi.assignee)} places")
    written = {assignee_var_name(a) for a in pi.assignee}
    if any(get_dependencies(v) & written for v in values):
        raise ParseError(f"{pi.source!r}: the values of make_tuple() read what it assigns; "
                         "copy them to temporaries first")
    return [dataclasses.replace(pi, assignee=a, expression=v, extra=dict(pi.extra),
                                id=pi.id if k == 0 or pi.id is None else f"{pi.id}_{k}")
            for k, (a, v) in enumerate(zip(pi.assignee, values))]


def _split_arg_reductions(parsed: list) -> list:
    """loopy's two-output reductions ``m[i], idx[i] = argmax(k, a[i, k], k)``
    as two instructions: ``m[i] = max(k, a[i, k])`` and ``idx[i] =
    argmax(k, a[i, k])`` (the second id gets ``_index``); ``make_tuple``
    assignments as one instruction per value (:func:`_split_make_tuple`)."""
    out: list = []
    for pi in parsed:
        e = getattr(pi, "expression", None)
        if (isinstance(pi, ParsedInstruction) and isinstance(pi.assignee, tuple)
                and isinstance(e, prim.Call) and e.function == prim.Variable("make_tuple")):
            out += _split_make_tuple(pi)
            continue
        if isinstance(pi, ParsedInstruction) and isinstance(pi.assignee, tuple) \
                and _segmented_op(e) is not None:
            out += _split_segmented(pi)
            continue
        if not (isinstance(pi, ParsedInstruction) and isinstance(pi.assignee, tuple)
                and isinstance(e, prim.Call) and isinstance(e.function, prim.Variable)
                and e.function.name in ("argmax", "argmin")):
            out.append(pi)
            continue
        if len(pi.assignee) != 2 or len(e.parameters) != 3:
            raise ParseError(f"{pi.source!r}: a two-output {e.function.name} is written "
                             f"'m[i], idx[i] = {e.function.name}(k, a[i, k], k)'")
        over, value, index = e.parameters
        names = [v.name for v in (over if isinstance(over, tuple) else (over,))
                 if isinstance(v, prim.Variable)]
        if not (len(names) == 1 and isinstance(index, prim.Variable)
                and index.name == names[0]):
            raise ParseError(f"{pi.source!r}: kernelcore's {e.function.name} reports the "
                             "reduction iname itself (third argument: the iname)")
        op = "max" if e.function.name == "argmax" else "min"
        out.append(dataclasses.replace(pi, assignee=pi.assignee[0],
                                       expression=prim.Variable(op)(over, value)))
        out.append(_second_output(pi, e.function(over, value), "index"))
    return out


def _check_names(names, what: str) -> None:
    for name in names:
        if name in _C_RESERVED or name.startswith("kc_") or name.startswith("__"):
            raise ParseError(f"{what} name '{name}' is reserved in OpenCL C (or by "
                             "kernelcore's generated code); rename it")


def _domain_inames(dom) -> list[str]:
    return [dom.get_dim_name(isl.dim_type.set, i) for i in range(dom.dim(isl.dim_type.set))]


def _each_name(item: Any) -> list:
    """*item* once per name of its comma-separated name (``GlobalArg("a, b",
    ...)`` declares ``a`` and ``b`` alike, as in loopy)."""
    if "," not in item.name:
        return [item]
    return [item.copy(name=n.strip()) for n in item.name.split(",") if n.strip()]


def _resolve_kernel_data(kernel_data, written, arrays, scalars, functions, inames,
                         domain_params, declared_temps, order):
    """Arguments (and user temporaries) from kernel_data plus auto-discovered ones."""
    if kernel_data is None or isinstance(kernel_data, str):
        kernel_data = [kernel_data or "..."]
    explicit = []
    temps = {}
    auto_rest = False
    for item in kernel_data:
        if item is Ellipsis:
            auto_rest = True
        elif isinstance(item, str):
            if item.strip() == "...":
                auto_rest = True
                continue
            for name in item.split(","):
                name = name.strip()
                if name:
                    explicit.append(ArrayArg(name) if name in arrays else ValueArg(name))
        elif isinstance(item, TemporaryVariable):
            temps.update((t.name, t) for t in _each_name(item))
        elif isinstance(item, (ArrayArg, ValueArg)):
            explicit.extend(_each_name(item))
        else:
            raise ParseError(f"invalid kernel_data entry {item!r}")
    known = {a.name for a in explicit} | set(temps) | set(declared_temps) | set(inames)
    needed = (set(arrays) | set(scalars) | set(written) | set(domain_params)) - known
    needed -= set(functions) - set(arrays) - set(written)
    args = list(explicit)
    if not auto_rest:
        # loopy's kernels take undeclared domain parameters (fix_parameters may bind them)
        args.extend(ValueArg(name) for name in sorted(needed & set(domain_params)))
        needed -= set(domain_params)
    if needed:
        if not auto_rest:
            raise UnknownNameError(
                f"undeclared variable(s) {', '.join(sorted(needed))}: add them to "
                "kernel_data or add '...' to kernel_data to declare them automatically")
        for name in sorted(needed):
            if name in arrays or name in written:
                args.append(ArrayArg(name, shape=auto if name in arrays else (), order=order))
            else:
                args.append(ValueArg(name))
    return args, temps


def _insn_inames(pi: ParsedInstruction, exprs, inames: set[str],
                 knl_domains_parent) -> frozenset:
    used: set[str] = set(pi.block_inames)
    if pi.explicit_inames is not None:
        used |= pi.explicit_inames
    for e in exprs:
        if e is not None:
            used |= get_dependencies(e) & inames
    return _with_parent_inames(frozenset(used), knl_domains_parent)


def _with_parent_inames(inames: frozenset[str], domain_parent_inames) -> frozenset[str]:
    """*inames* and the inames of the domains enclosing theirs."""
    used = set(inames)
    todo = list(used)
    while todo:
        for p in domain_parent_inames(todo.pop()) - used:
            used.add(p)
            todo.append(p)
    return frozenset(used)


def make_loop_kernel(domains: Any, instructions: Any, kernel_data: Sequence | None = None, *,
                name: str = "loopy_kernel", assumptions: str | isl.Set | None = None,
                target: Any = None, lang_version: Any = None,
                seq_dependencies: bool = False, options: Options | None = None,
                silenced_warnings: Any = None, index_dtype: Any = np.int32,
                loop_priority: Any = (), default_offset: Any = 0, default_order: Any = "C",
                fixed_parameters: Mapping[str, int] | None = None,
                tags: frozenset = frozenset(),
                temporary_variables: Mapping[str, TemporaryVariable] | None = None
                ) -> LoopKernel:
    """Build a :class:`LoopKernel` from ISL domains and instruction-language
    statements (what :func:`make_kernel` wraps in a translation unit; code
    building kernels for its own use calls this).

    *kernel_data* lists arguments/temporaries; ``"..."`` (default) adds the
    rest automatically. *silenced_warnings* names checks to skip (e.g.
    ``"write_race(insn)"``); *lang_version* is accepted for loopy compatibility.
    *index_dtype* (``np.int32`` or ``np.int64``) types loop indices and the
    offsets computed from them; arrays or loops longer than ``2**31 - 1``
    need ``np.int64`` (fixed sizes get it without asking, see
    :mod:`kernelcore.index_width`).
    *loop_priority* (loop nestings, as :func:`prioritize_loops` takes them),
    *fixed_parameters* (as :func:`fix_parameters` takes them) and *tags* (the
    kernel's) are applied to the kernel made; *default_order* (``"C"``, ``"F"``
    or :data:`auto`, meaning C) orders the arrays that ``"..."`` declares.
    *default_offset* is 0 or :data:`auto` (loopy's "any offset"): kernelcore's
    arrays start at their buffer, a view with an offset is refused at call time.
    *temporary_variables* (name to :class:`TemporaryVariable`) adds to *kernel_data*.
    """
    if temporary_variables:
        kernel_data = [*([kernel_data or "..."] if kernel_data is None or isinstance(
            kernel_data, str) else kernel_data), *temporary_variables.values()]
    if not (default_offset is auto or default_offset in (0, None)):
        raise KernelcoreError(f"default_offset={default_offset!r}: kernelcore's arrays "
                              "start at their buffer (use 0 or lp.auto)")
    default_order = "C" if default_order is auto else default_order
    if lang_version is not None:
        from kernelcore.version import (
            LOOPY_USE_LANGUAGE_VERSION_2017_2,
            MOST_RECENT_LANGUAGE_VERSION,
        )
        if not (isinstance(lang_version, tuple) and len(lang_version) == 2
                and LOOPY_USE_LANGUAGE_VERSION_2017_2 <= lang_version
                <= MOST_RECENT_LANGUAGE_VERSION):
            raise KernelcoreError(f"language version {lang_version!r} is not known "
                                  "(use one of kernelcore.version's "
                                  "LOOPY_USE_LANGUAGE_VERSION_* values)")
    index_dtype = np.dtype(index_dtype)
    if index_dtype not in (np.int32, np.int64):
        raise KernelcoreError(f"index_dtype must be int32 or int64, got {index_dtype}")
    if isinstance(domains, (str, isl.BasicSet, isl.Set)):
        domains = [domains]
    domains = [parse_domain(d) for d in domains]
    iname_set: set[str] = set()
    for dom in domains:
        for n in _domain_inames(dom):
            if n in iname_set:
                raise ParseError(f"iname '{n}' is declared in more than one domain")
            iname_set.add(n)
    _check_names(iname_set, "iname")
    _check_names([name], "kernel")

    parsed = parse_instructions(instructions)
    resolver = _ReductionResolver(iname_set)
    proto = LoopKernel(name=name, domains=tuple(domains), instructions=(), args=())
    all_params = set(proto.all_params())

    # {{{ gather names

    id_gen = UniqueNameGenerator(forced_prefix="")
    for pi in parsed:
        if isinstance(pi, InstructionBase):
            if pi.id is not None:
                id_gen.add_name(pi.id)
        elif pi.id is not None:
            if pi.id in id_gen.existing_names:
                raise ParseError(f"duplicate instruction id '{pi.id}'")
            id_gen.add_name(pi.id)

    rules = {pi.assignee: SubstitutionRule(pi.assignee, pi.extra["arguments"],
                                           resolver(pi.expression))
             for pi in parsed if isinstance(pi, ParsedInstruction) and pi.kind == "subst"}
    parsed = _split_arg_reductions([pi for pi in parsed if not (
        isinstance(pi, ParsedInstruction) and pi.kind == "subst")])
    bare = frozenset(n for n, r in rules.items() if not r.arguments)
    if bare:
        rules = {n: dataclasses.replace(r, expression=call_bare_rules(r.expression, bare))
                 for n, r in rules.items()}
        parsed = [dataclasses.replace(
            pi, expression=call_bare_rules(pi.expression, bare),
            predicates=frozenset(call_bare_rules(p, bare) for p in pi.predicates))
            if isinstance(pi, ParsedInstruction) else pi for pi in parsed]

    def expanded(expr):
        return None if expr is None else expand_rules(expr, rules)

    collector = AccessCollector()
    written: dict[str, list] = {}
    declared_temps: dict[str, Any] = {}
    insns: list[InstructionBase] = []
    inames_to_dup: list[tuple[str, tuple]] = []
    queries: list[tuple[str, str | None, str | None]] = []
    for pi in parsed:
        if isinstance(pi, InstructionBase):
            if pi.id is None:
                pi = pi.copy(id=id_gen("insn"))
            if not pi.within_inames_is_final and not (
                    isinstance(pi, CInstruction) and pi.within_inames):
                # loopy's rule: the inames its expressions use (for C code: its iname
                # expressions and assignees), the loops around those included
                used = frozenset().union(*(get_dependencies(e) for e in pi.expressions()))
                pi = pi.copy(within_inames=_with_parent_inames(
                    pi.within_inames | (used & frozenset(iname_set)),
                    proto.domain_parent_inames))
            if getattr(pi, "temp_var_type", None) is not None:
                declared_temps[assignee_var_name(pi.assignee)] = (  # type: ignore[attr-defined]
                    "auto" if pi.temp_var_type is auto else pi.temp_var_type)  # type: ignore[attr-defined]
            for written_name in pi.assignee_names():
                written.setdefault(written_name, []).append(pi.id)
            insns.append(pi)
            continue
        for n in pi.block_inames | (pi.explicit_inames or frozenset()):
            if n not in iname_set:
                raise UnknownNameError(f"loop over unknown iname '{n}' in "
                                       f"{pi.source!r}: declare it in a domain")
        insn_id = pi.id or id_gen("insn")
        predicates = frozenset(resolver(p) for p in pi.predicates)
        assignee = expression = None
        extra: tuple = ()
        if pi.kind == "assign":
            lower = _SubArrayLowering(proto)
            if isinstance(pi.assignee, tuple):      # a, b = f(x): several outputs
                assignee, *rest = (resolver(lower(a)) for a in pi.assignee)
                extra = tuple(rest)
                for k, declared in pi.extra.get("assignee_types", {}).items():
                    declared_temps[assignee_var_name(extra[k - 1])] = declared
            else:
                assignee = resolver(lower(pi.assignee))
            expression = resolver(lower(pi.expression))
        within = _insn_inames(pi, [expanded(assignee), *map(expanded, extra),
                                   expanded(resolver(pi.extra.get("inames_of", 0))),
                                   expanded(expression), *map(expanded, predicates)],
                              iname_set, proto.domain_parent_inames)
        common = dict(id=insn_id, depends_on=frozenset(pi.depends_on),
                      depends_on_is_final=pi.depends_on_is_final, within_inames=within,
                      priority=pi.priority, tags=pi.tags, no_sync_with=pi.no_sync_with,
                      predicates=predicates)
        if pi.kind == "nop":
            insns.append(NoOpInstruction(**common))
            continue
        if pi.kind in ("lbarrier", "gbarrier"):
            insns.append(BarrierInstruction(
                synchronization_kind="local" if pi.kind == "lbarrier" else "global",
                mem_kind=pi.extra.get("mem_kind", "local"), **common))
            continue
        target_name = assignee_var_name(assignee)
        if target_name in iname_set:
            raise ParseError(f"cannot assign to iname '{target_name}' in {pi.source!r}")
        if pi.temp_var_type is not None:
            prev = declared_temps.get(target_name)
            if prev is not None and prev != pi.temp_var_type and "auto" not in (
                    prev, pi.temp_var_type):
                from kernelcore.diagnostic import TypeInferenceFailure
                raise TypeInferenceFailure(
                    f"temporary '{target_name}' declared with conflicting types "
                    f"{prev} and {pi.temp_var_type}")
            declared_temps[target_name] = pi.temp_var_type
        insn_class: type[Assignment] = Assignment
        if has_slices(assignee) or has_slices(expression) or extra:
            if not isinstance(expression, prim.Call):
                raise ParseError(f"in {pi.source!r}: array slices ('x[:]') may only "
                                 "be passed to or returned from a function call")
            insn_class = CallInstruction
            if extra:
                common["extra_assignees"] = extra
        insns.append(insn_class(assignee=assignee, expression=expression,
                                atomic=bool(pi.extra.get("atomic")),
                                temp_var_type=None if pi.temp_var_type is None
                                else (auto if pi.temp_var_type == "auto" else pi.temp_var_type),
                                **common))
        if pi.extra.get("dup"):
            inames_to_dup.append((insn_id, pi.extra["dup"]))
        if "dep_query" in pi.extra or "nosync_query" in pi.extra:
            queries.append((insn_id, pi.extra.get("dep_query"), pi.extra.get("nosync_query")))
        for written_name in [target_name] + [assignee_var_name(a) for a in extra]:
            written.setdefault(written_name, []).append(insn_id)

    # (array, where: an instruction or a set of inames, subscript)
    access_list: list[tuple[str, Any, tuple]] = []
    for insn in insns:
        reads = [expanded(e) for e in insn.expressions()]
        if isinstance(insn, Assignment):
            reads.remove(expanded(insn.assignee))
            reads += list(assignee_subscript(insn.assignee))
            sub = assignee_subscript(insn.assignee)
            # a whole-array slice (``y[:] = f(...)``) says nothing about extents
            if not has_slices(insn.assignee):
                if sub:
                    access_list.append((assignee_var_name(insn.assignee), insn, sub))
                else:
                    collector.bare.add(assignee_var_name(insn.assignee))
        for e in reads:
            collector.accesses = []
            collector(e)
            for arr, idx, bound in collector.accesses:
                if any(isinstance(i, prim.Slice) for i in idx):
                    continue
                access_list.append((arr, insn.within_inames | bound, idx))
    arrays = {a for a, _, _ in access_list}
    scalars = collector.bare - iname_set - arrays

    # }}}

    args, temps = _resolve_kernel_data(
        kernel_data, written, arrays, scalars, collector.functions - set(rules), iname_set,
        all_params, declared_temps, default_order)
    _check_names([a.name for a in args], "argument")
    _check_names(list(temps) + list(declared_temps), "temporary")
    for tname, ttype in declared_temps.items():
        if tname in all_params:
            raise ParseError(f"temporary '{tname}' has the name of a domain parameter "
                             f"'{tname}'; rename it")
        if tname in temps:
            continue
        if any(a.name == tname for a in args):
            raise ParseError(f"'{tname}' is declared as a temporary and as an argument")
        temps[tname] = TemporaryVariable(
            tname, dtype=None if ttype == "auto" else ttype,
            shape=auto if tname in arrays else (),
            address_space=auto)

    # {{{ dependencies

    ids = [i.id for i in insns]
    final_insns = []
    for k, insn in enumerate(insns):
        deps: set[str] = set()
        for pattern in insn.depends_on:
            matches = fnmatch.filter(ids, pattern)
            if not matches:
                raise UnknownNameError(f"instruction '{insn.id}' depends on unknown "
                                       f"instruction '{pattern}'")
            deps |= set(matches)
        if not insn.depends_on_is_final:
            for var in insn.read_dependency_names():
                writers = written.get(var, [])
                if len(writers) == 1 and writers[0] != insn.id:
                    deps.add(writers[0])
        if seq_dependencies and k > 0:
            deps.add(insns[k - 1].id)
        deps.discard(insn.id)
        final_insns.append(insn.copy(depends_on=frozenset(deps)))

    # }}}

    knl = LoopKernel(
        name=name, domains=tuple(domains), instructions=tuple(final_insns),
        args=tuple(args), temporary_variables=temps,
        iname_tags={n: None for n in proto.all_inames()}, tags=frozenset(tags),
        assumptions=parse_assumptions(assumptions, proto.all_params()),
        options=options or Options(), target=target, substitutions=rules,
        index_dtype=index_dtype,
        silenced_warnings=frozenset([silenced_warnings] if isinstance(silenced_warnings, str)
                                    else silenced_warnings or ()))
    if fixed_parameters:        # before the shapes are found, as these may depend on them
        from kernelcore.transform.parameters import fix_parameters
        knl = fix_parameters(knl, **fixed_parameters)
        access_list = [(arr, where, tuple(substitute(i, fixed_parameters) for i in idx))
                       for arr, where, idx in access_list]
    knl = _apply_queries(knl, queries)
    from kernelcore.transform.iname import duplicate_inames, prioritize_loops
    for insn_id, pairs in inames_to_dup:
        for old, new in pairs:
            knl = duplicate_inames(knl, old, within=f"id:{insn_id}", new_inames=new)
    knl = find_auto_shapes(knl, access_list)
    for nesting in sorted(loop_priority, key=str):
        knl = prioritize_loops(knl, nesting)
    logger.debug("created kernel %s with %d instructions", name, len(final_insns))
    return knl


def _apply_queries(knl: LoopKernel, queries) -> LoopKernel:
    """The instruction options ``dep_query=MATCH`` (depend on the instructions
    matched) and ``nosync_query=MATCH[@SCOPE]`` (need no synchronization with them)."""
    from kernelcore.match import parse_match
    insns = dict(knl.id_to_insn)
    for insn_id, dep_query, nosync_query in queries:
        insn = insns[insn_id]
        if dep_query:
            match = parse_match(dep_query)
            insn = insn.copy(depends_on=insn.depends_on | {
                i.id for i in knl.instructions if i.id != insn_id and match(knl, i)})
        if nosync_query:
            query, _, scope = nosync_query.partition("@")
            match = parse_match(query)
            insn = insn.copy(no_sync_with=insn.no_sync_with | {
                (i.id, scope or "any") for i in knl.instructions if match(knl, i)})
        insns[insn_id] = insn
    return knl.copy(instructions=tuple(insns[i.id] for i in knl.instructions))


def make_kernel(*args: Any, **kwargs: Any) -> Any:
    """A :class:`~kernelcore.translation_unit.TranslationUnit` whose default
    entry point is the kernel built from *args* and *kwargs* (those of
    :func:`make_loop_kernel`), the functions it calls resolved."""
    from kernelcore.translation_unit import make_program
    return make_program(make_loop_kernel(*args, **kwargs))


make_kernel.__signature__ = inspect.signature(make_loop_kernel).replace(  # type: ignore
    return_annotation="TranslationUnit")
