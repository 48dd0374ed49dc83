"""make_kernel: from domain and instruction text to a kernel (in a translation unit).

Fills in what the user left out: instruction ids, loop indices of each
instruction, arguments and temporaries (``"..."``), array shapes from access
footprints, and the single-writer dependency heuristic.

Public names: make_kernel, make_loop_kernel, make_copy_kernel.
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

from kernelcore.auto_shapes import find_auto_shapes, strides_as_arguments
from kernelcore.creation_forms import (
    ReductionResolver,
    SubArrayLowering,
    add_inames_from_temporaries,
    apply_queries,
    as_options,
    slice_accesses,
    split_arg_reductions,
)
from kernelcore.diagnostic import (
    KernelcoreError,
    ParseError,
    TypeInferenceFailure,
    UnknownNameError,
)
from kernelcore.ir.data import ArrayArg, TemporaryVariable, ValueArg, auto
from kernelcore.ir.domain import check_bounded, parse_assumptions, parse_domain, static_range
from kernelcore.ir.expr import (
    AccessCollector,
    get_dependencies,
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
from kernelcore.ir.optional import Optional
from kernelcore.ir.stages import provide
from kernelcore.ir.subst import SubstitutionRule, call_bare_rules, expand_rules
from kernelcore.options import Options
from kernelcore.parse import ParsedInstruction, parse_instructions
from kernelcore.sub_array_pack import SubArrayPacker
from kernelcore.transform.data import tag_array_axes
from kernelcore.transform.iname import duplicate_inames, prioritize_loops
from kernelcore.transform.parameters import fix_parameters
from kernelcore.translation_unit import make_program
from kernelcore.version import LOOPY_USE_LANGUAGE_VERSION_2017_2, MOST_RECENT_LANGUAGE_VERSION

logger = logging.getLogger(__name__)


_C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto
if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while bool half uchar ushort uint ulong size_t
ptrdiff_t intptr_t uintptr_t kernel __kernel global __global local __local constant
__constant private __private read_only write_only image2d_t image3d_t sampler_t event_t
true false NULL INFINITY NAN
""".split())


def check_names(names: Any, what: str) -> None:
    """Refuse names the generated OpenCL C cannot use (keywords, kernelcore's
    own prefixes); *what* says what they name."""
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
            # a temporary declared without a shape but subscripted: its shape
            # comes from its accesses (loopy's default)
            temps.update((t.name, t.copy(shape=auto) if t.shape == () and t.name in arrays
                          and t.initializer is None else t) for t in _each_name(item))
        elif isinstance(item, (ArrayArg, ValueArg)):
            explicit.extend(_each_name(item))
        else:
            raise ParseError(f"invalid kernel_data entry {item!r}")
    known = {a.name for a in explicit} | set(temps) | set(declared_temps) | set(inames)
    # names in the declared shapes and strides are parameters too
    shape_params = set().union(*(
        get_dependencies(e) for a in explicit if isinstance(a, ArrayArg)
        for part in (a.shape, a.strides) if isinstance(part, tuple) for e in part
        if e is not auto))
    domain_params = set(domain_params) | (shape_params - set(arrays) - set(written))
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
                seq_dependencies: bool = False, options: Options | dict | str | None = None,
                silenced_warnings: Any = None, index_dtype: Any = np.int32,
                loop_priority: Any = (), default_offset: Any = 0, default_order: Any = "C",
                fixed_parameters: Mapping[str, int] | None = None,
                tags: frozenset = frozenset(),
                temporary_variables: Mapping[str, TemporaryVariable] | None = None,
                substitutions: Mapping[str, SubstitutionRule] | None = None,
                infer_inames: bool = False,
                preambles: Sequence[tuple[str, str]] = (),
                preamble_generators: Sequence[Any] = ()) -> LoopKernel:
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
    or :data:`auto`: any strides, arguments of the kernel named
    ``<array>_stride<axis>``) orders the arrays that ``"..."`` declares.
    *default_offset* is 0 or :data:`auto` (loopy's "any offset"): kernelcore's
    arrays start at their buffer, a view with an offset is refused at call time.
    *temporary_variables* (name to :class:`TemporaryVariable`) adds to *kernel_data*;
    *substitutions* (name to :class:`SubstitutionRule`) to the rules the
    statements define (a name defined in both is an error).
    *preambles* ((key, C code) pairs) and *preamble_generators* (functions
    giving such pairs) add code before the kernel's, as loopy's.
    With *infer_inames* (what :func:`make_kernel` does, as loopy), an
    instruction outside ``for`` blocks and without ``inames=`` also runs in
    the loops of the temporaries it reads
    (:func:`~kernelcore.creation_forms.add_inames_from_temporaries`).
    """
    if temporary_variables:
        kernel_data = [*([kernel_data or "..."] if kernel_data is None or isinstance(
            kernel_data, str) else kernel_data), *temporary_variables.values()]
    if not (default_offset is auto or default_offset in (0, None)):
        raise KernelcoreError(f"default_offset={default_offset!r}: kernelcore's arrays "
                              "start at their buffer (use 0 or lp.auto)")
    any_order = default_order is auto       # (strides of the arrays found: arguments)
    default_order = "C" if default_order is auto else default_order
    if lang_version is not None:
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
    check_names(iname_set, "iname")

    parsed = parse_instructions(instructions)
    resolver = ReductionResolver(iname_set)
    proto = LoopKernel(name=name, domains=tuple(domains), instructions=[], args=())
    in_blocks: set[str] = set()
    declared_arrays = {a.name: a for item in (kernel_data or ())
                       if isinstance(item, (ArrayArg, TemporaryVariable))
                       for a in _each_name(item)}
    all_params = set(proto.all_params())

    # {{{ gather names

    id_gen = UniqueNameGenerator(forced_prefix="")
    var_gen = UniqueNameGenerator(iname_set | all_params | set(declared_arrays))
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
    for rule_name, rule in (substitutions or {}).items():
        if rule_name in rules:
            raise KernelcoreError(f"substitution rule '{rule_name}' is defined both in "
                                  "the statements and in substitutions=")
        rules[rule_name] = dataclasses.replace(
            rule, arguments=tuple(rule.arguments), expression=resolver(rule.expression))
    parsed = split_arg_reductions([pi for pi in parsed if not (
        isinstance(pi, ParsedInstruction) and pi.kind == "subst")])
    bare = frozenset(n for n, r in rules.items() if not r.arguments)
    if bare:
        rules = {n: dataclasses.replace(r, expression=call_bare_rules(r.expression, bare))
                 for n, r in rules.items()}
        parsed = [dataclasses.replace(
            pi, expression=call_bare_rules(pi.expression, bare),
            assignee=_call_bare_rules_in_assignee(pi.assignee, bare),
            predicates=frozenset(call_bare_rules(p, bare) for p in pi.predicates))
            if isinstance(pi, ParsedInstruction) else pi for pi in parsed]

    def expanded(expr):
        return None if expr is None else expand_rules(expr, rules)

    collector = AccessCollector()
    written: dict[str, list] = {}
    declared_temps: dict[str, Any] = {}
    insns: list[InstructionBase] = []
    inames_to_dup: list[tuple[str, tuple]] = []
    later_copies: dict[str, set[str]] = {}
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
        insn_id = pi.id or id_gen(pi.extra.get("id_prefix", "insn"))
        if pi.block_inames or pi.explicit_inames is not None:
            in_blocks.add(insn_id)  # in 'for' blocks or given: its inames are final
        predicates = frozenset(resolver(p) for p in pi.predicates)
        assignee = expression = None
        extra: tuple = ()
        packer = SubArrayPacker(lambda n: static_range(proto, n), var_gen)
        if pi.kind == "call":
            expression = resolver(SubArrayLowering(proto, declared_arrays, packer)(
                pi.expression))
        if pi.kind == "assign":
            lower = SubArrayLowering(proto, declared_arrays, packer)
            packer.writes = True
            if isinstance(pi.assignee, tuple):      # a, b = f(x): several outputs
                assignee, *rest = (resolver(lower(a)) for a in pi.assignee)
                extra = tuple(rest)
                for k, declared in pi.extra.get("assignee_types", {}).items():
                    declared_temps[assignee_var_name(extra[k - 1])] = declared
            else:
                assignee = resolver(lower(pi.assignee))
            packer.writes = False
            expression = resolver(lower(pi.expression))
            if packer.packs and isinstance(expression, prim.Call):
                expression = prim.Call(expression.function,
                                       packer.share_updated(expression.parameters))
        within = _insn_inames(pi, [expanded(assignee), *map(expanded, extra),
                                   expanded(resolver(pi.extra.get("inames_of", 0))),
                                   expanded(expression), *map(expanded, predicates)],
                              iname_set, proto.domain_parent_inames)
        common = dict(id=insn_id, depends_on=frozenset(pi.depends_on),
                      depends_on_is_final=pi.depends_on_is_final, within_inames=within,
                      priority=pi.priority, tags=pi.tags, no_sync_with=pi.no_sync_with,
                      predicates=predicates, groups=pi.extra.get("groups", frozenset()),
                      conflicts_with_groups=pi.extra.get("conflicts", frozenset()))
        if pi.kind == "nop":
            insns.append(NoOpInstruction(**common))
            continue
        if pi.kind in ("lbarrier", "gbarrier"):
            insns.append(BarrierInstruction(
                synchronization_kind="local" if pi.kind == "lbarrier" else "global",
                mem_kind=pi.extra.get("mem_kind", "local"), **common))
            continue
        if pi.kind == "call":
            insns.append(CallInstruction((), expression, **common))
            continue
        target_name = assignee_var_name(assignee)
        if target_name in iname_set:
            raise ParseError(f"cannot assign to iname '{target_name}' in {pi.source!r}")
        if pi.temp_var_type is not None:
            prev = declared_temps.get(target_name)
            if prev is not None and prev != pi.temp_var_type and "auto" not in (
                    prev, pi.temp_var_type):
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
        before, after = packer.statements(
            insn_id, within, getattr(expression, "parameters", ()), id_gen,
            lambda inames: _with_parent_inames(inames, proto.domain_parent_inames),
            predicates=predicates, tags=pi.tags, priority=pi.priority)
        if before:
            common["depends_on"] = common["depends_on"] | {i.id for i in before}
        insns += before
        insns.append(insn_class(assignee=assignee, expression=expression,
                                atomic=bool(pi.extra.get("atomic")),
                                temp_var_type=Optional() if pi.temp_var_type is None
                                else Optional(None if pi.temp_var_type == "auto"
                                              else pi.temp_var_type),
                                **common))
        insns += after
        for pack in packer.packs:
            declared_temps[pack.name] = "auto"
        for copy in before:         # the copies in come before the call's copies out
            later_copies[copy.id] = {c.id for c in after}
        for copy in before + after:
            in_blocks.add(copy.id)
            written.setdefault(assignee_var_name(copy.assignee), []).append(copy.id)
        if packer.packs:
            in_blocks.add(insn_id)
        if pi.extra.get("dup") and not packer.packs:
            inames_to_dup.append((insn_id, pi.extra["dup"]))
        elif pi.extra.get("dup"):       # the swept inames run in the copies
            for dup_insn in [insns[-len(after) - 1], *before, *after]:
                pairs = tuple(pair for pair in pi.extra["dup"]
                              if pair[0] in dup_insn.within_inames)
                if pairs:
                    inames_to_dup.append((dup_insn.id, pairs))
        if "dep_query" in pi.extra or "nosync_query" in pi.extra:
            queries.append((insn_id, pi.extra.get("dep_query"), pi.extra.get("nosync_query")))
        for written_name in [target_name] + [assignee_var_name(a) for a in extra]:
            written.setdefault(written_name, []).append(insn_id)

    if infer_inames:
        insns = add_inames_from_temporaries(
            insns, in_blocks, set(declared_temps) | {t.name for item in (kernel_data or ())
                                          if isinstance(item, TemporaryVariable)
                                          for t in _each_name(item)}, proto)
    # (array, where: an instruction or a set of inames, subscript)
    access_list: list[tuple[str, Any, tuple]] = []
    for insn in insns:
        reads = [expanded(e) for e in insn.expressions()]
        if isinstance(insn, Assignment) and insn.assignee is not None:
            place = expanded(insn.assignee)
            reads.remove(place)
            reads += list(assignee_subscript(place))
            sub = assignee_subscript(place)
            # a whole-array slice (``y[:] = f(...)``) says nothing about extents
            if not has_slices(insn.assignee):
                if sub:
                    access_list.append((assignee_var_name(insn.assignee), insn, sub))
                else:
                    collector.bare.add(assignee_var_name(insn.assignee))
            else:
                access_list += [(assignee_var_name(insn.assignee), (insn, nonempty), ends)
                                for ends, nonempty in slice_accesses(sub)]
        for e in reads:
            collector.accesses = []
            collector(e)
            for arr, idx, bound in collector.accesses:
                access_list += [(arr, (insn.within_inames | bound, nonempty), ends)
                                for ends, nonempty in slice_accesses(idx)]
    arrays = {a for a, _, _ in access_list}
    scalars = collector.bare - iname_set - arrays

    # }}}

    args, temps = _resolve_kernel_data(
        kernel_data, written, arrays, scalars, collector.functions - set(rules), iname_set,
        all_params, declared_temps, default_order)
    check_names([a.name for a in args], "argument")
    declared = {n.strip() for d in (kernel_data if isinstance(kernel_data, (list, tuple))
                                    else ()) for n in getattr(d, "name", "").split(",")}
    check_names(list(temps) + list(declared_temps), "temporary")
    for tname, ttype in declared_temps.items():
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
                if len(writers) == 1 and writers[0] != insn.id \
                        and writers[0] not in later_copies.get(insn.id, ()):
                    deps.add(writers[0])
        if seq_dependencies and k > 0:
            deps.add(insns[k - 1].id)
        deps.discard(insn.id)
        final_insns.append(insn.copy(depends_on=frozenset(deps)))

    # }}}

    knl = LoopKernel(
        name=name, domains=tuple(domains), instructions=list(final_insns),
        args=tuple(args), temporary_variables=temps,
        iname_tags={n: None for n in proto.all_inames()}, tags=frozenset(tags),
        assumptions=parse_assumptions(assumptions, proto.ordered_params()),
        options=as_options(options), target=target, substitutions=rules,
        index_dtype=index_dtype,
        preambles=tuple((str(k), str(c)) for k, c in preambles),
        preamble_generators=tuple(preamble_generators),
        silenced_warnings=frozenset([silenced_warnings] if isinstance(silenced_warnings, str)
                                    else silenced_warnings or ()))
    if fixed_parameters:        # before the shapes are found, as these may depend on them
        knl = fix_parameters(knl, **fixed_parameters)
        access_list = [(arr, where, tuple(substitute(i, fixed_parameters) for i in idx))
                       for arr, where, idx in access_list]
    knl = apply_queries(knl, queries)
    for insn_id, pairs in inames_to_dup:
        for old, new in pairs:
            knl = duplicate_inames(knl, old, within=f"id:{insn_id}", new_inames=new)
    looped: frozenset[str] = frozenset().union(
        *(i.within_inames | i.reduction_inames() for i in knl.instructions))
    for dom in knl.domains:
        check_bounded(dom, looped)
    knl = find_auto_shapes(knl, access_list)
    knl = strides_as_arguments(knl, [a.name for a in args if a.name not in declared]
                               if any_order else ())
    for nesting in sorted(loop_priority, key=str):
        knl = prioritize_loops(knl, nesting)
    logger.debug("created kernel %s with %d instructions", name, len(final_insns))
    return knl


def _call_bare_rules_in_assignee(assignee: Any, bare: frozenset[str]) -> Any:
    """*assignee* (one, several or none) with the rules without arguments
    its indices use (``i := ii + 1``; ``out[i] = ...``) called."""
    if assignee is None or isinstance(assignee, str):
        return assignee
    if isinstance(assignee, tuple):
        return tuple(_call_bare_rules_in_assignee(a, bare) for a in assignee)
    return call_bare_rules(assignee, bare)


def make_kernel(*args: Any, **kwargs: Any) -> Any:
    """A :class:`~kernelcore.translation_unit.TranslationUnit` whose default
    entry point is the kernel built from *args* and *kwargs* (those of
    :func:`make_loop_kernel`), the functions it calls resolved."""
    kwargs.setdefault("infer_inames", True)
    return make_program(make_loop_kernel(*args, **kwargs))


def make_copy_kernel(new_dim_tags: str, old_dim_tags: str | None = None) -> Any:
    """A translation unit copying array ``input`` to array ``output`` (of the
    same shape, ``(n0, n1, ...)``) with the axis layouts *old_dim_tags* (default:
    C order) and *new_dim_tags* (as :func:`~kernelcore.tag_array_axes` takes them)."""

    rank = len(new_dim_tags.split(","))
    old_dim_tags = old_dim_tags or ",".join(["c"] * rank)
    if len(old_dim_tags.split(",")) != rank:
        raise KernelcoreError(f"make_copy_kernel: {new_dim_tags!r} and {old_dim_tags!r} "
                              "give different numbers of axes")
    inames = [f"i{k}" for k in range(rank)]
    sizes = [f"n{k}" for k in range(rank)]
    index = ", ".join(inames)
    domain = "{{[{}]: {}}}".format(index, " and ".join(
        f"0 <= {i} < {n}" for i, n in zip(inames, sizes)))
    t_unit = make_kernel(domain, f"output[{index}] = input[{index}]",
                         [ArrayArg("input", shape=tuple(sizes)),
                          ArrayArg("output", shape=tuple(sizes)),
                          *(ValueArg(n, "int32") for n in sizes)],
                         name="copy")
    t_unit = tag_array_axes(t_unit, "input", old_dim_tags)
    return tag_array_axes(t_unit, "output", new_dim_tags)


make_kernel.__signature__ = inspect.signature(make_loop_kernel).replace(  # type: ignore
    return_annotation="TranslationUnit")

provide("make_loop_kernel", make_loop_kernel)
