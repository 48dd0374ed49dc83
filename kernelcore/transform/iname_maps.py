"""Transformations that map inames to new ones: affine changes of variables
(by equations or by an isl map of a domain), fresh copies of reused
reduction inames, and hardware axes added to instructions that do not use
them.

Public names: affine_map_inames, map_domain, make_reduction_inames_unique,
add_inames_for_unused_hw_axes.
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError, ParseError
from kernelcore.ir.domain import aff_to_expr
from kernelcore.ir.expr import IdentityMapper, Reduction, find_reductions, substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag
from kernelcore.match import parse_match
from kernelcore.transform.iname import _duplicate_in_set, _names, _rewrite_insn
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


# {{{ affine_map_inames

def _equation_strings(equations: Any) -> list[str]:
    if isinstance(equations, str):
        equations = [equations]
    result = []
    for eq in equations:
        if isinstance(eq, tuple):
            lhs, rhs = eq
        else:
            lhs, sep, rhs = str(eq).partition("=")
            if not sep or "=" in rhs:
                raise ParseError(f"affine_map_inames: expected 'lhs = rhs', got {eq!r}")
        result.append(f"({lhs}) = ({rhs})")
    return result


def _old_in_terms_of_new(knl: LoopKernel, old: tuple[str, ...], new: tuple[str, ...],
                         equations: list[str]) -> dict[str, Any]:
    """Each old iname as an expression of the new inames (and of the other
    inames and parameters), from *equations*."""
    others = [n for n in (*knl.ordered_params(), *knl.all_inames()) if n not in old]
    text = (f"[{', '.join(others)}] -> {{ [{', '.join(new)}] -> [{', '.join(old)}] : "
            f"{' and '.join(equations)} }}")
    try:
        mapping = isl.BasicMap(text)
    except isl.Error as err:
        raise ParseError(f"affine_map_inames: equations not affine: {equations}") from err
    if not mapping.is_single_valued():
        raise KernelcoreError("affine_map_inames: the equations do not determine "
                              f"{', '.join(old)} from {', '.join(new)}")
    pw_multi = mapping.lexmin().as_pw_multi_aff()
    result = {}
    for k, name in enumerate(old):
        pieces = pw_multi.get_pw_aff(k).get_pieces()
        if len(pieces) != 1:
            raise KernelcoreError("affine_map_inames: the old inames are not one affine "
                                  "function of the new ones")
        result[name] = aff_to_expr(pieces[0][1])
    return result


def _map_domain_dims(dom, old: tuple[str, ...], new: tuple[str, ...],
                     equations: list[str]):
    var = dom.get_var_dict()
    if not any(o in var and var[o][0] == dim_type.set for o in old):
        return dom
    s = dom.to_set() if isinstance(dom, isl.BasicSet) else dom
    n = s.dim(dim_type.set)
    s = s.add_dims(dim_type.set, len(new))
    for k, name in enumerate(new):
        s = s.set_dim_name(dim_type.set, n + k, name)
    params = [str(s.get_dim_name(dim_type.param, k)) for k in range(s.dim(dim_type.param))]
    dims = [str(s.get_dim_name(dim_type.set, k)) for k in range(s.dim(dim_type.set))]
    eqs = isl.Set(f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] : "
                  f"{' and '.join(equations)} }}")
    s = (s & isl.align_spaces(eqs, s)).coalesce()
    for name in old:
        idx = s.get_var_dict()[name][1]
        s = s.project_out(dim_type.set, idx, 1)
    s = s.coalesce()
    bsets = s.get_basic_sets()
    return bsets[0] if isinstance(dom, isl.BasicSet) and len(bsets) == 1 else s


@for_each_kernel
def affine_map_inames(knl: LoopKernel, old_inames: Any, new_inames: Any,
                      equations: Any) -> LoopKernel:
    """Replace *old_inames* by *new_inames*, related to them by *equations*
    (strings ``"lhs = rhs"`` or pairs ``(lhs, rhs)``, affine in both)."""
    old, new = _names(old_inames), _names(new_inames)
    knl.check_inames(old, "affine_map_inames")
    taken = set(knl.all_inames()) | set(knl.all_params())
    clash = [n for n in new if n in taken]
    if clash:
        raise KernelcoreError(f"affine_map_inames: new iname(s) {', '.join(clash)} "
                              "already in use")
    eqs = _equation_strings(equations)
    old_exprs = _old_in_terms_of_new(knl, old, new, eqs)
    subst = {o: old_exprs[o] for o in old}
    red = {o: new for o in old}
    insns = tuple(_rewrite_insn(i, subst, red, red) for i in knl.instructions)
    domains = tuple(_map_domain_dims(d, old, new, eqs) for d in knl.domains)
    tags = {n: t for n, t in knl.iname_tags.items() if n not in old}
    rules = {name: rule.copy(expression=substitute(rule.expression, subst))
             for name, rule in knl.substitutions.items()}
    return knl.copy(domains=domains, instructions=insns, iname_tags=tags,
                    substitutions=rules)

# }}}


# {{{ map_domain

def _apply_to_domain(dom: Any, transform_map: isl.BasicMap | isl.Map,
                     in_dims: list[str]) -> Any:
    """*dom* with its dimensions *in_dims* replaced by the map's outputs."""
    s = dom.to_set() if isinstance(dom, isl.BasicSet) else dom
    relation = transform_map.wrap().flatten()
    if isinstance(relation, isl.BasicSet):
        relation = relation.to_set()
    n = s.dim(dim_type.set)
    out_dims = [n_ for n_, (dt, _) in relation.get_var_dict().items()
                if dt == dim_type.set and n_ not in in_dims]
    s = s.add_dims(dim_type.set, len(out_dims))
    for k, name in enumerate(out_dims):
        s = s.set_dim_name(dim_type.set, n + k, name)
    s = (s & isl.align_spaces(relation, s)).coalesce()
    for name in in_dims:
        s = s.project_out(dim_type.set, s.get_var_dict()[name][1], 1)
    s = s.compute_divs().coalesce()         # (existential variables as known divisions)
    bsets = s.get_basic_sets()
    return bsets[0] if isinstance(dom, isl.BasicSet) and len(bsets) == 1 else s


@for_each_kernel
def map_domain(knl: LoopKernel, transform_map: isl.BasicMap | isl.Map) -> LoopKernel:
    """Replace the inames that *transform_map* (a bijective isl map from some
    inames of one domain to new ones) takes by its outputs: the domain becomes
    its image, each old iname is rewritten as the affine function of the new
    ones the map's inverse gives, and instructions in the old inames run in
    the new ones."""
    if isinstance(transform_map, isl.BasicMap):
        transform_map = isl.Map.from_basic_map(transform_map)
    if not transform_map.is_bijective():
        raise KernelcoreError("map_domain: the transform_map must be bijective")
    var = transform_map.get_var_dict()
    in_dims = [n for n, (dt, _) in var.items() if dt == dim_type.in_]
    out_dims = [n for n, (dt, _) in var.items() if dt == dim_type.out]
    for prio in knl.loop_priority:
        if set(prio) & set(in_dims):
            raise ValueError(f"Loop priority {tuple(prio)} contains iname(s) transformed by "
                             f"map {transform_map} in map_domain.")
    rules = ("Transform map must be applicable to exactly one domain. (It applies to a "
             "domain whose inames include its input inames.)")
    targets = [k for k, d in enumerate(knl.domains)
               if set(in_dims) <= {n for n, (dt, _) in d.get_var_dict().items()
                                   if dt == dim_type.set}]
    if not targets:
        raise KernelcoreError(f"map_domain: transform map {transform_map} was not "
                              f"applicable to any domain. {rules}")
    if len(targets) > 1:
        raise KernelcoreError(f"map_domain: transform map {transform_map} was applicable "
                              f"to more than one domain. {rules}")
    pw_multi = transform_map.reverse().lexmin().as_pw_multi_aff()
    subst = {}
    for k, name in enumerate(in_dims):
        pieces = pw_multi.get_pw_aff(k).get_pieces()
        if len(pieces) != 1:
            raise KernelcoreError(f"map_domain: iname '{name}' is not one affine function "
                                  "of the new inames")
        subst[name] = aff_to_expr(pieces[0][1])
    red = {name: (tuple(out_dims) if k == 0 else ()) for k, name in enumerate(in_dims)}
    mapped = set(in_dims)
    insns = []
    for insn in knl.instructions:
        overlap = mapped & insn.within_inames
        if overlap and overlap != mapped:
            raise KernelcoreError(
                f"map_domain: statement '{insn.id}' is within only a part of the mapped "
                f"inames of {transform_map}. Statements must be within all or none of the "
                "mapped inames.")
        for r in (r for e in insn.expressions() for r in find_reductions(e)):
            if mapped & set(r.inames) and not mapped <= set(r.inames):
                raise KernelcoreError(f"map_domain: a reduction of '{insn.id}' runs over "
                                      "only a part of the mapped inames")
        insns.append(_rewrite_insn(insn, subst, red, red) if overlap or any(
            mapped & set(r.inames) for e in insn.expressions() for r in find_reductions(e))
            else insn)
    domains = list(knl.domains)
    (target,) = targets
    domains[target] = _apply_to_domain(domains[target], transform_map, in_dims)
    tags = {n: t for n, t in knl.iname_tags.items() if n not in mapped}
    return knl.copy(domains=tuple(domains), instructions=tuple(insns), iname_tags=tags)

# }}}


# {{{ make_reduction_inames_unique

class _ReductionUniquifier(IdentityMapper):
    """Renames the inames of every reduction after the first over them."""

    def __init__(self, knl: LoopKernel, inames: frozenset[str] | None,
                 counts: dict[str, int], renamed: list[tuple[str, str]],
                 taken: set[str]) -> None:
        self.knl = knl
        self.inames = inames
        self.counts = counts
        self.renamed = renamed
        self.taken = taken

    def map_reduction(self, expr: Reduction) -> Any:
        for n in expr.inames:
            self.counts[n] = self.counts.get(n, 0) + 1
        if expr.allow_simultaneous:
            return Reduction(expr.operation, expr.inames, self.rec(expr.expr),
                             expr.allow_simultaneous)
        new_inames = []
        subst: dict[str, Any] = {}
        for n in expr.inames:
            if (self.inames is not None and n not in self.inames) or self.counts[n] <= 1:
                new_inames.append(n)
                continue
            k = 0
            while f"{n}_{k}" in self.taken:
                k += 1
            fresh = f"{n}_{k}"
            self.taken.add(fresh)
            self.renamed.append((n, fresh))
            subst[n] = prim.Variable(fresh)
            new_inames.append(fresh)
        body = substitute(expr.expr, subst) if subst else expr.expr
        return Reduction(expr.operation, tuple(new_inames), self.rec(body))


@for_each_kernel
def make_reduction_inames_unique(knl: LoopKernel, inames: Any = None,
                                 within: Any = None) -> LoopKernel:
    """Give each reduction over an iname some earlier reduction already uses a
    fresh copy of that iname (same bounds and tags); *inames* limits which."""
    only = None if inames is None else frozenset(_names(inames))
    match = parse_match(within)
    counts: dict[str, int] = {}
    renamed: list[tuple[str, str]] = []
    taken = set(knl.all_inames()) | set(knl.all_params()) | set(knl.arg_dict) \
        | set(knl.temporary_variables) | set(knl.substitutions)
    mapper = _ReductionUniquifier(knl, only, counts, renamed, taken)
    insns = []
    for insn in knl.instructions:
        if match(knl, insn):
            insn = insn.with_transformed_expressions(mapper)
        insns.append(insn)
    domains = list(knl.domains)
    tags = dict(knl.iname_tags)
    metadata = dict(knl.iname_metadata)
    for old, fresh in renamed:
        if any(old in knl.domain_parent_inames(i) for i in knl.all_inames()):
            raise KernelcoreError(f"make_reduction_inames_unique: '{old}' bounds other "
                                  "inames; copying it is not supported")
        domains = [_duplicate_in_set(d, old, fresh) for d in domains]
        if old in tags:
            tags[fresh] = tags[old]
        if old in metadata:
            metadata[fresh] = metadata[old]
    return knl.copy(instructions=tuple(insns), domains=tuple(domains), iname_tags=tags,
                    iname_metadata=metadata)

# }}}


# {{{ add_inames_for_unused_hw_axes

def _axis_inames(knl: LoopKernel, tag_type: Any) -> list[str | None]:
    """For each axis of *tag_type* up to the highest used, the one iname tagged
    with it (None when several are)."""
    by_axis: dict[int, list[str]] = {}
    for name, tag in knl.iname_tags.items():
        if isinstance(tag, tag_type):
            by_axis.setdefault(tag.axis, []).append(name)
    result: list[str | None] = []
    for axis in range(max(by_axis, default=-1) + 1):
        names = by_axis.get(axis)
        if not names:
            raise KernelcoreError(f"add_inames_for_unused_hw_axes: no iname is tagged "
                                  f"{'l' if tag_type is LocalIndexTag else 'g'}.{axis}")
        result.append(names[0] if len(names) == 1 else None)
    return result


@for_each_kernel
def add_inames_for_unused_hw_axes(knl: LoopKernel, within: Any = None) -> LoopKernel:
    """Add to each instruction (that *within* matches) the kernel's inames on
    the hardware axes (``g.N``, ``l.N``) it does not use."""
    match = parse_match(within)
    axes = {t: _axis_inames(knl, t) for t in (LocalIndexTag, GroupIndexTag)}
    insns = []
    for insn in knl.instructions:
        if match(knl, insn):
            used = {knl.iname_tags.get(n) for n in insn.within_inames}
            added: set[str] = set()
            for tag_type, names in axes.items():
                for axis, name in enumerate(names):
                    if tag_type(axis) in used:
                        continue
                    if name is None:
                        raise KernelcoreError(
                            f"add_inames_for_unused_hw_axes: several inames are tagged "
                            f"{tag_type(axis)}; cannot add one to '{insn.id}'")
                    added.add(name)
            if added:
                insn = insn.copy(within_inames=insn.within_inames | added)
        insns.append(insn)
    return knl.copy(instructions=tuple(insns))

# }}}
