"""Storing values in temporaries: ``precompute`` (of a substitution rule),
``add_prefetch`` (of an array read) and ``buffer_array`` (of an array read and
written: loaded, worked on in the temporary, stored back).

Both find the values the using instructions need while the *sweep* inames
vary (the footprint, as an ISL set of index tuples parametrized by the
remaining, *outer* inames), allocate a temporary over the footprint's
bounding box, add one instruction that fills it (in new inames, one per
storage axis), and make the users read the temporary instead.

Storage inames get *default_tag*: ``"l.auto"`` maps them, innermost first, onto
the kernel's work-group axes (splitting a storage iname longer than its axis),
so all work-items of a group cooperate in the fetch; ``None`` keeps loops.
``precompute`` names the storage inames after the rule's arguments (``i`` ->
``i_0``), as loopy does. A temporary in global memory may have a length
known only when called (a sweep of parametric length); its users wait for
it behind a global barrier ``<rule>_barrier``.

Public names: precompute, add_prefetch, buffer_array.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import islpy as isl
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, StaticValueFindingError, UnknownNameError
from kernelcore.ir.data import AddressSpace, TemporaryVariable, auto
from kernelcore.ir.domain import (
    NotAffineError,
    aff_to_expr,
    affine_simplify,
    expr_to_pw_aff,
    move_names_to_params,
    project_to,
    static_max_of_pw_aff,
)
from kernelcore.ir.expr import IdentityMapper, get_dependencies, substitute
from kernelcore.ir.instruction import Assignment, BarrierInstruction, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.simplify import simplify
from kernelcore.ir.subst import expand_rules
from kernelcore.match import parse_match
from kernelcore.parse import parse_expression
from kernelcore.transform.inline import slice_bounds
from kernelcore.transform.instruction import find_most_recent_global_barrier
from kernelcore.transform.precompute_reductions import localize_reduction_inames
from kernelcore.transform.precompute_storage import check_reused_inames, tag_storage
from kernelcore.transform.rule_copies import (
    RuleInstantiator,
    drop_unused_rules,
    expand_rules_reading,
)
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


class _UseFinder(IdentityMapper):
    """Records (and rewrites) uses; *is_use* returns the argument tuple or None."""

    def __init__(self, is_use, replace=None):
        self.is_use = is_use
        self.replace = replace
        self.uses: list[tuple[tuple, frozenset[str]]] = []
        self.bound: frozenset[str] = frozenset()

    def _visit(self, expr, recurse):
        args = self.is_use(expr)
        if args is not None:
            args = tuple(self.rec(a) for a in args)
            self.uses.append((args, self.bound))
            return self.replace(args) if self.replace else expr
        return recurse(expr)

    def map_subscript(self, expr):
        return self._visit(expr, super().map_subscript)

    def map_call(self, expr):
        return self._visit(expr, super().map_call)

    def map_reduction(self, expr):
        outer = self.bound
        self.bound = outer | frozenset(expr.inames)
        try:
            return super().map_reduction(expr)
        finally:
            self.bound = outer

    def map_constant(self, expr):
        return expr


def _with_index_rewritten(assignee, rewriter):
    """*assignee* with *rewriter* applied to its indices (not to the array)."""
    if not isinstance(assignee, prim.Subscript):
        return assignee
    return prim.Subscript(assignee.aggregate,
                          tuple(rewriter(i) for i in assignee_subscript(assignee)))


def _names(spec) -> list[str]:
    if spec is None:
        return []
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",") if s.strip()]
    return list(spec)


def _single_aff(pw: isl.PwAff, what: str) -> isl.Aff:
    pieces = pw.get_pieces()
    if len(pieces) == 1:
        return pieces[0][1]
    try:
        return static_max_of_pw_aff(pw.neg()).neg()
    except StaticValueFindingError:
        raise StaticValueFindingError(f"{what}: the footprint's lower bound {pw} is not "
                                      "one affine expression") from None


def _single_use_index(users, k: int, sweep: set[str]) -> Any:
    """The index along axis *k* of all uses when it is one expression free of
    the *sweep* inames, else None."""
    exprs = {args[k] for _, uses in users for args, _ in uses}
    if len(exprs) != 1:
        return None
    (expr,) = exprs
    return None if get_dependencies(expr) & sweep else expr


def _fetch_dependencies(knl: LoopKernel, fetch: Assignment, users,
                        rules: dict) -> frozenset[str]:
    """What the computing instruction *fetch* depends on (loopy's rule): the
    dependencies of each user that has one writing what *fetch* reads
    (through the *rules* it calls too), and the last global barrier each user
    depends on."""
    reads = get_dependencies(expand_rules(fetch.expression, rules))
    user_ids = {u.id for u, _ in users}
    deps: set[str] = set()
    for user, _ in users:
        if any(set(knl.id_to_insn[d].assignee_names()) & reads
               for d in user.depends_on if d in knl.id_to_insn):
            deps |= user.depends_on
        barrier = find_most_recent_global_barrier(knl, user.id)
        if barrier is not None:
            deps.add(barrier)
    return frozenset(deps - user_ids)


def _precompute(knl: LoopKernel, *, is_use, value_of, base_name: str, sweep, within,
                dim_arg_names, default_tag, temporary_name, temporary_address_space,
                fetch_outer_inames, insn_id, store_of=None,
                dim_base: str | None = None, axis_bases: tuple[str, ...] = (),
                keep_length1_uses: bool = False, store_insn_base: str | None = None,
                body_inames: Iterable[str] = (), extra_rules: dict | None = None,
                footprint_index: tuple | None = None,
                footprint_shape: tuple = (), barrier_base: str | None = None) -> LoopKernel:
    sweep = set(_names(sweep))
    knl.check_inames(sweep, "precompute/add_prefetch sweep")
    match = parse_match(within)
    inames = set(knl.all_inames())

    # {{{ find the uses

    users = []
    for insn in knl.instructions:
        if not isinstance(insn, Assignment) or not match(knl, insn):
            continue
        finder = _UseFinder(is_use)
        # (a fetch also serves the assignee's indices: a[idx[i]] = ...)
        for e in (insn.expression, *insn.predicates) + (
                (insn.assignee,) if store_of is not None
                else assignee_subscript(insn.assignee)):
            finder(e)
        if finder.uses:
            users.append((insn, finder.uses))
    if not users:
        raise KernelcoreError(f"{base_name}: no matching use found")
    rank = len(users[0][1][0][0])
    common = frozenset.intersection(*(i.within_inames | bound
                                      for i, uses in users for _, bound in uses))
    deps: set[str] = set()
    for _, uses in users:
        for args, _bound in uses:
            if len(args) != rank:
                raise KernelcoreError(f"{base_name}: uses with different numbers of indices")
            for a in args:
                deps |= get_dependencies(a) & inames
    deps |= set(body_inames) & inames
    if footprint_index is not None:     # the footprint is given: the uses do not count
        if len(footprint_index) != rank:
            raise KernelcoreError(f"{base_name}: the footprint {footprint_index} has "
                                  f"{len(footprint_index)} indices, the uses {rank}")
        deps = set().union(*(get_dependencies(a) for a in footprint_index
                             if not isinstance(a, prim.Slice))) & inames
        sources: list = [(frozenset(), [(footprint_index, frozenset())])]
    else:
        sources = [(insn.within_inames, uses) for insn, uses in users]
    if fetch_outer_inames is not None:
        outer = set(_names(fetch_outer_inames)) - sweep     # (a swept iname is no outer one)
    else:
        outer = (set(common) - sweep) & deps
    # inames of some uses only (neither swept nor outer): the footprint covers
    # every value they take
    implicit = deps - sweep - outer

    # }}}

    # {{{ footprint

    footprint = None
    for within_inames, uses in sources:
        for args, bound in uses:
            used = ((within_inames | bound) & (sweep | outer | implicit)) | outer
            dom = knl.get_inames_domain(used)
            dims = [f"__kc_a{k}" for k in range(rank)]
            ext = dom.insert_dims(dim_type.set, dom.dim(dim_type.set), rank)
            for k, d in enumerate(dims):
                ext = ext.set_dim_name(dim_type.set, dom.dim(dim_type.set) + k, d)
            for k, a in enumerate(args):
                dim = expr_to_pw_aff(prim.Variable(dims[k]), ext.space)
                try:
                    if isinstance(a, prim.Slice):       # a given footprint's whole range
                        lo, hi, _ = slice_bounds(a, footprint_shape[k])
                        ext = ext & dim.ge_set(expr_to_pw_aff(lo, ext.space)) & dim.lt_set(
                            expr_to_pw_aff(hi, ext.space))
                        continue
                    val = expr_to_pw_aff(a, ext.space)
                except NotAffineError as e:
                    raise KernelcoreError(f"{base_name}: index {a} is not affine ({e})") \
                        from None
                ext = ext & dim.eq_set(val)
            img = move_names_to_params(ext, sorted(outer))
            img = project_to(img, dims)
            footprint = img if footprint is None else footprint.union(
                img.align_params(footprint.space)).coalesce()
    assert footprint is not None
    aspace = temporary_address_space if temporary_address_space is not None else auto
    if isinstance(aspace, str):
        aspace = {"private": AddressSpace.PRIVATE, "local": AddressSpace.LOCAL,
                  "global": AddressSpace.GLOBAL}[aspace]
    bases: list = []
    extents: list = []
    for k in range(rank):
        lo = _single_aff(footprint.dim_min(k), base_name)
        base = aff_to_expr(lo)
        shifted = footprint.insert_dims(dim_type.set, rank, 1).set_dim_name(
            dim_type.set, rank, "__kc_d")
        shifted = shifted & expr_to_pw_aff(prim.Variable("__kc_d"), shifted.space).eq_set(
            expr_to_pw_aff(prim.Variable(f"__kc_a{k}"), shifted.space)
            - expr_to_pw_aff(base, shifted.space))
        span = project_to(shifted, ["__kc_d"])
        top = span.dim_max_val(0)
        bases.append(base)
        if top.is_int():
            extents.append(top.get_num_si() + 1)
            continue
        if aspace == AddressSpace.GLOBAL:   # (the host allocates it per call)
            extents.append(simplify(prim.Sum((
                aff_to_expr(_single_aff(span.dim_max(0), base_name)), 1))))
            continue
        # a length that depends on the kernel's parameters (not on outer
        # inames): a temporary of variable size, as loopy makes
        span_params = {span.get_dim_name(dim_type.param, p)
                       for p in range(span.dim(dim_type.param))}
        try:
            if span_params & outer:
                raise StaticValueFindingError("depends on outer inames")
            longest = static_max_of_pw_aff(span.dim_max(0), knl.assumptions_set.params())
        except StaticValueFindingError:
            raise StaticValueFindingError(
                f"{base_name}: the footprint along axis {k} has no constant length; "
                "sweep inames of fixed extent (split them first), or store it in "
                "global memory") from None
        extents.append(simplify(prim.Sum((aff_to_expr(longest), 1))))

    # }}}

    names = UniqueNameGenerator(inames | set(knl.all_params()) | set(knl.arg_dict)
                                | set(knl.temporary_variables))
    temp = temporary_name or names(f"{base_name}")
    if temp in knl.arg_dict:
        raise KernelcoreError(f"{base_name}: name '{temp}' is already in use")
    if temp not in names.existing_names:
        names.add_name(temp)
    all_dim_names = _names(dim_arg_names) or [
        names(axis_bases[k] if axis_bases else f"{dim_base or temp}_dim_{k}")
        for k in range(rank)]
    if len(all_dim_names) != rank:
        raise KernelcoreError(f"{base_name}: {rank} storage axes, {len(all_dim_names)} names")
    # axes of length 1 need no storage index
    kept = [k for k in range(rank) if not isinstance(extents[k], int) or extents[k] > 1]
    dim_names = [all_dim_names[k] for k in kept]

    # {{{ the storage domain: indices of the footprint, shifted to start at 0

    fp = footprint.insert_dims(dim_type.set, rank, len(kept))
    for j, d in enumerate(dim_names):
        fp = fp.set_dim_name(dim_type.set, rank + j, d)
    for k, d in zip(kept, dim_names):
        fp = fp & expr_to_pw_aff(prim.Variable(d), fp.space).eq_set(
            expr_to_pw_aff(prim.Variable(f"__kc_a{k}"), fp.space)
            - expr_to_pw_aff(bases[k], fp.space))
    storage_dom: isl.Set | isl.BasicSet = project_to(fp, dim_names).coalesce()
    check_reused_inames(knl, base_name, storage_dom, dim_names)
    bsets = storage_dom.get_basic_sets()
    storage_dom = bsets[0] if len(bsets) == 1 else storage_dom

    # }}}

    fetch_id = insn_id or names(f"{temp}_rule")
    if fetch_id in knl.id_to_insn:
        raise KernelcoreError(f"{base_name}: instruction id '{fetch_id}' is already in use")
    offsets = {k: prim.Variable(d) for k, d in zip(kept, dim_names)}
    if keep_length1_uses:       # unswept length-1 axes: the uses' own index
        for k in range(rank):
            same = None if k in offsets else _single_use_index(users, k, sweep)
            if same is not None:
                bases[k] = same
    index = tuple(_simplify(prim.Sum((offsets[k], bases[k]))) if k in offsets else bases[k]
                  for k in range(rank))
    storage = tuple(prim.Variable(d) for d in dim_names)
    # reductions in the value get inames of their own, bounded by the storage indices
    sweep_values = {a.name: index[k] for k, a in enumerate(users[0][1][0][0])
                    if isinstance(a, prim.Variable) and a.name in sweep}
    value, red_domain, red_tags = localize_reduction_inames(
        knl, value_of(index), sweep_values, dim_names, set(outer), names)
    fetch = Assignment(id=fetch_id,
                       assignee=prim.Subscript(prim.Variable(temp), storage) if storage
                       else prim.Variable(temp),
                       expression=value,
                       within_inames=frozenset(outer) | frozenset(dim_names))

    def replace(args):
        sub = tuple(affine_simplify(prim.Sum((args[k], prim.Product((-1, bases[k])))),
                                    knl.space) for k in kept)
        return prim.Subscript(prim.Variable(temp), sub) if sub else prim.Variable(temp)

    fetch = fetch.copy(depends_on=_fetch_dependencies(
        knl, fetch, users, {**knl.substitutions, **(extra_rules or {})}))
    # a global temporary is complete for its users after a global barrier,
    # named as in loopy (``<rule>_barrier``)
    barrier = None
    if aspace == AddressSpace.GLOBAL and barrier_base is not None:
        barrier = BarrierInstruction(
            id=UniqueNameGenerator(set(knl.id_to_insn) | {fetch_id})(f"{barrier_base}_barrier"),
            depends_on=frozenset({fetch_id}), within_inames=frozenset(outer),
            synchronization_kind="global", mem_kind="global")
    user_deps = {fetch_id} if barrier is None else {fetch_id, barrier.id}
    new_insns: list = []
    for insn in knl.instructions:
        if any(insn is u for u, _ in users):
            rewriter = _UseFinder(is_use, replace)
            insn = insn.copy(expression=rewriter(insn.expression),  # type: ignore[attr-defined]
                             predicates=frozenset(rewriter(p) for p in insn.predicates),
                             depends_on=insn.depends_on | user_deps,
                             assignee=rewriter(insn.assignee)  # type: ignore[attr-defined]
                             if store_of is not None
                             else _with_index_rewritten(insn.assignee, rewriter))  # type: ignore[attr-defined]
        new_insns.append(insn)
    position = min(k for k, i in enumerate(new_insns) if any(i.id == u.id for u, _ in users))
    new_insns.insert(position, fetch)
    if barrier is not None:
        new_insns.insert(position + 1, barrier)
    if store_of is not None:
        target, value = store_of(index, fetch.assignee)
        if target is not None:
            user_ids = {u.id for u, _ in users}
            store_id = UniqueNameGenerator(set(knl.id_to_insn) | {fetch_id})(
                store_insn_base or f"{temp}_store")
            new_insns = [i.copy(depends_on=i.depends_on | {store_id})
                         if i.depends_on & user_ids and i.id not in user_ids else i
                         for i in new_insns]
            last = max(k for k, i in enumerate(new_insns) if i.id in user_ids)
            new_insns.insert(last + 1, Assignment(
                id=store_id, assignee=target, expression=value,
                within_inames=fetch.within_inames, depends_on=frozenset(user_ids)))
    temps = dict(knl.temporary_variables)
    shape = tuple(extents[k] for k in kept)
    if temp in temps:       # a temporary of the same shape is filled again
        old = temps[temp]
        if tuple(old.shape) != shape or (aspace is not auto and old.address_space is not auto
                                         and old.address_space != aspace):
            raise KernelcoreError(f"{base_name}: name '{temp}' is already in use by a "
                                  f"temporary of shape {old.shape} in {old.address_space}; "
                                  f"this storage needs shape {shape}")
        if old.address_space is auto and aspace is not auto:
            temps[temp] = old.copy(address_space=aspace)
    else:
        temps[temp] = TemporaryVariable(temp, None, shape, address_space=aspace)
    tags = dict(knl.iname_tags)
    for d in dim_names:
        tags[d] = None
    tags.update(red_tags)
    knl = knl.copy(domains=knl.domains + (storage_dom,) + (
        () if red_domain is None else (red_domain,)), instructions=tuple(new_insns),
                   temporary_variables=temps, iname_tags=tags)
    return tag_storage(knl, dim_names, [extents[k] for k in kept], default_tag, outer)


def _simplify(expr):
    return simplify(expr)


@for_each_kernel
def precompute(knl: LoopKernel, subst_rule_name: str, sweep_inames: Iterable[str] = (), *,
               within: Any = None, storage_axes: Iterable[str] | None = None,
               precompute_inames: Iterable[str] | None = None, temporary_name: str | None = None,
               temporary_address_space: Any = None, default_tag: str = "l.auto",
               fetch_outer_inames: Iterable[str] | None = None, compute_insn_id: str | None = None,
               precompute_outer_inames: Iterable[str] | None = None,
               _enable_mirgecom_workaround: bool = False) -> LoopKernel:
    """Store the values of substitution rule *subst_rule_name* that the users need
    over the *sweep_inames* in a temporary, computed once (see module doc).
    *precompute_outer_inames* is loopy's name of *fetch_outer_inames*. The
    storage indices are named after the rule's arguments, the computing
    instruction after the rule (as in loopy). With *_enable_mirgecom_workaround*
    (loopy's name) a storage axis of length 1 that no swept iname moves is
    computed at the index all uses give it, not at its constant value."""
    if precompute_outer_inames is not None:
        if fetch_outer_inames is not None:
            raise KernelcoreError("precompute: give fetch_outer_inames or "
                                  "precompute_outer_inames, not both")
        fetch_outer_inames = precompute_outer_inames
    if subst_rule_name not in knl.substitutions:
        raise UnknownNameError(f"precompute: no substitution rule '{subst_rule_name}' "
                               f"(rules: {', '.join(knl.substitutions) or 'none'})")
    if storage_axes is not None:
        raise KernelcoreError("precompute: storage_axes is not supported; storage follows "
                              "the rule's arguments")
    rule = knl.substitutions[subst_rule_name]
    others = {n: r for n, r in knl.substitutions.items() if n != subst_rule_name}
    # swept inames the rule's body uses itself (not through its arguments) are
    # storage axes too, after the arguments (loopy's "direct sweep axes")
    body = get_dependencies(expand_rules(rule.expression, others)) - set(rule.arguments)
    direct = tuple(sorted(set(_names(sweep_inames)) & body))
    nargs = len(rule.arguments)

    def is_use(expr):
        if isinstance(expr, prim.Call) and isinstance(expr.function, prim.Variable) \
                and expr.function.name == subst_rule_name:
            return tuple(expr.parameters) + tuple(prim.Variable(d) for d in direct)
        return None

    instantiators: list[RuleInstantiator] = []
    new_rules: dict = {}        # (the copies value_of makes, for reading dependencies)

    def value_of(index):
        value = substitute(rule.expression, dict(zip(rule.arguments, index[:nargs])))
        if not direct:
            return expand_rules(value, others)
        # the rules the body calls that use the swept inames are called as
        # copies using the storage inames
        inst = RuleInstantiator(others, dict(zip(direct, index[nargs:])),
                                set(knl.all_inames()) | set(knl.arg_dict)
                                | set(knl.temporary_variables))
        instantiators.append(inst)
        value = inst(value)
        new_rules.update(inst.new_rules)
        return value

    used_before = set(knl.substitutions)
    result = _precompute(knl, is_use=is_use, value_of=value_of,
                       base_name=temporary_name or f"{subst_rule_name}_0", sweep=sweep_inames,
                       within=within, dim_arg_names=precompute_inames,
                       default_tag=default_tag, temporary_name=temporary_name,
                       temporary_address_space=temporary_address_space,
                       fetch_outer_inames=fetch_outer_inames,
                       insn_id=compute_insn_id or UniqueNameGenerator(set(knl.id_to_insn))(
                           subst_rule_name),
                       axis_bases=tuple(rule.arguments) + direct, body_inames=body,
                       extra_rules=new_rules, barrier_base=subst_rule_name,
                       keep_length1_uses=_enable_mirgecom_workaround)
    if not instantiators:
        return result
    copies: dict[str, str] = {}
    for inst in instantiators:
        result = result.copy(substitutions={**result.substitutions, **inst.new_rules})
        copies.update(inst.copies)
    return drop_unused_rules(result, used_before, copies)


def _array_use(var_name: str):
    """The *is_use* test of :func:`_precompute` for reads of array *var_name*:
    the subscript of a use, None for other expressions."""
    def is_use(expr):
        if isinstance(expr, prim.Subscript) and isinstance(expr.aggregate, prim.Variable) \
                and expr.aggregate.name == var_name:
            return expr.index if isinstance(expr.index, tuple) else (expr.index,)
        return None
    return is_use


@for_each_kernel
def add_prefetch(knl: LoopKernel, var_name: str, sweep_inames: Iterable[str] = (),
                 dim_arg_names: Iterable[str] | None = None, default_tag: str = "l.auto",
                 temporary_name: str | None = None, temporary_address_space: Any = None,
                 fetch_bounding_box: bool = False, fetch_outer_inames: Iterable[str] | None = None,
                 prefetch_insn_id: str | None = None, within: Any = None) -> LoopKernel:
    """Fetch the part of array *var_name* the users read while *sweep_inames* vary
    into a temporary (local memory when work-items share the fetch)."""
    footprint_index = None
    if "[" in var_name:         # 'a[i, :]': the footprint is given, ':' a whole axis
        given = parse_expression(var_name)
        if not isinstance(given, prim.Subscript) or not isinstance(given.aggregate,
                                                                   prim.Variable):
            raise KernelcoreError(f"add_prefetch: expected an array or a subscript of "
                                  f"one, got {var_name!r}")
        var_name = given.aggregate.name
        footprint_index = assignee_subscript(given)
    if var_name not in knl.arg_dict and var_name not in knl.temporary_variables:
        raise UnknownNameError(f"add_prefetch: no array called '{var_name}'")
    del fetch_bounding_box      # the footprint's bounding box is always fetched

    knl = expand_rules_reading(knl, var_name, parse_match(within))
    is_use = _array_use(var_name)

    def value_of(index):
        return prim.Subscript(prim.Variable(var_name), index)

    return _precompute(knl, is_use=is_use, value_of=value_of, base_name=f"{var_name}_fetch",
                       sweep=sweep_inames, within=within, dim_arg_names=dim_arg_names,
                       default_tag=default_tag, temporary_name=temporary_name,
                       temporary_address_space=temporary_address_space,
                       fetch_outer_inames=fetch_outer_inames,
                       insn_id=prefetch_insn_id or f"{var_name}_fetch_rule",
                       dim_base=var_name, footprint_index=footprint_index,
                       footprint_shape=getattr(knl.get_var(var_name), "shape", ()))


@for_each_kernel
def buffer_array(knl: LoopKernel, var_name: str, buffer_inames: Iterable[str],
                 init_expression: Any = None, store_expression: Any = None, within: Any = None,
                 default_tag: str = "l.auto", temporary_name: str | None = None,
                 temporary_address_space: Any = None, fetch_bounding_box: bool = False
                 ) -> LoopKernel:
    """Work on the part of array *var_name* that *buffer_inames* sweep in a
    temporary: loaded first (or set to *init_expression*, which may use
    ``base``, the array element), updated by the instructions, stored back
    after them (*store_expression* may use ``buffer`` and ``base``;
    ``"False"`` skips the store)."""
    if var_name not in knl.arg_dict:
        raise UnknownNameError(f"buffer_array: no array argument called '{var_name}'")
    del fetch_bounding_box      # the footprint's bounding box is always buffered
    init = None if init_expression is None else (
        parse_expression(init_expression) if isinstance(init_expression, str)
        else init_expression)
    store = None if store_expression is None else (
        parse_expression(store_expression) if isinstance(store_expression, str)
        else store_expression)

    is_use = _array_use(var_name)

    def element(index):
        return prim.Subscript(prim.Variable(var_name), index)

    def value_of(index):
        return element(index) if init is None else substitute(init, {"base": element(index)})

    def store_of(index, buffer):
        if store is False or (isinstance(store, prim.Variable) and store.name == "False"):
            return None, None
        value = buffer if store is None else substitute(
            store, {"buffer": buffer, "base": element(index)})
        return element(index), value

    return _precompute(knl, is_use=is_use, value_of=value_of, base_name=f"{var_name}_buf",
                       sweep=buffer_inames, within=within, dim_arg_names=None,
                       default_tag=default_tag, temporary_name=temporary_name,
                       temporary_address_space=temporary_address_space,
                       fetch_outer_inames=None,
                       insn_id=UniqueNameGenerator(set(knl.id_to_insn))(f"init_{var_name}"),
                       store_insn_base=f"store_{var_name}",
                       store_of=store_of)
