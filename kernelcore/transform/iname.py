"""Transformations of loop indices (inames).

Public names: prioritize_loops, split_iname, tag_inames, duplicate_inames,
rename_iname, rename_inames, join_inames, split_reduction_inward, split_reduction_outward,
prepare_split and split_in_body (what splitting an iname in two starts with, and
what it changes in the kernel's body).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable
from typing import Any, Literal

import islpy as isl
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, ParseError, UnknownNameError
from kernelcore.ir.domain import project_to, static_range
from kernelcore.ir.expr import IdentityMapper, Reduction, find_reductions, substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import add_metadata_tag, is_hw_parallel, is_metadata_tag, parse_tag
from kernelcore.match import parse_match
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


def _names(spec) -> tuple[str, ...]:
    if isinstance(spec, str):
        return tuple(s.strip() for s in spec.split(",") if s.strip())
    return tuple(spec)


@for_each_kernel
def prioritize_loops(knl: LoopKernel, loop_priority: Any) -> LoopKernel:
    """Advise the nesting order of loops: ``"i,j"`` nests ``i`` outside ``j``
    where the kernel leaves the choice open."""
    names = _names(loop_priority)
    knl.check_inames(names, "prioritize_loops")
    return knl.copy(loop_priority=knl.loop_priority + (names,))


# {{{ renaming inames inside expressions (reduction inames included)

class _InameRewriter(IdentityMapper):
    """Substitute inames by expressions; reduction inames by lists of names."""

    def __init__(self, subst: dict, red_rename: dict[str, tuple[str, ...]]):
        self.subst = subst
        self.red_rename = red_rename

    def map_variable(self, expr):
        return self.subst.get(expr.name, expr)

    def map_reduction(self, expr):
        inames = []
        for n in expr.inames:
            inames.extend(self.red_rename.get(n, (n,)))
        return Reduction(expr.operation, tuple(inames), self.rec(expr.expr))

    def map_constant(self, expr):
        return expr


def _rewrite_insn(insn, subst, red_rename, within_map):
    rw = _InameRewriter(subst, red_rename)
    insn = insn.with_transformed_expressions(rw)
    within = set()
    for n in insn.within_inames:
        within.update(within_map.get(n, (n,)))
    return insn.copy(within_inames=frozenset(within))


def _uses_iname(insn, iname: str) -> bool:
    if iname in insn.within_inames:
        return True
    return any(iname in r.inames for e in insn.expressions() for r in find_reductions(e))

# }}}


def _set_dim_names(s, dt, idx, names):
    for k, name in enumerate(names):
        s = s.set_dim_name(dt, idx + k, name)
    return s


def _split_set(s, old: str, outer: str, inner: str, factor: int):
    var = s.get_var_dict()
    if old not in var:
        return s
    dt, idx = var[old]
    s = s.insert_dims(dt, idx + 1, 2)
    s = _set_dim_names(s, dt, idx + 1, [outer, inner])
    space = s.space
    s = s.add_constraint(isl.Constraint.eq_from_names(space, {old: 1, inner: -1,
                                                             outer: -factor}))
    s = s.add_constraint(isl.Constraint.ineq_from_names(space, {inner: 1}))
    s = s.add_constraint(isl.Constraint.ineq_from_names(space, {inner: -1, 1: factor - 1}))
    return s.project_out(dt, idx, 1)


def _unique(knl: LoopKernel, base: str) -> str:
    gen = UniqueNameGenerator(set(knl.all_inames()) | set(knl.all_params())
                              | set(knl.arg_dict) | set(knl.temporary_variables))
    return gen(base)


def prepare_split(knl: LoopKernel, split_iname: str, what: str, count: Any, count_name: str,
                  outer_iname: str | None, inner_iname: str | None, within: Any
                  ) -> tuple[LoopKernel, str, str, str]:
    """What splitting *split_iname* in two (*what*: the transformation's name)
    starts with: the checks (an existing iname, not on a hardware axis, a
    positive integer *count*), a copy of the iname for the instructions
    *within* selects where it selects only some of them, and the new inames'
    names. Returns ``(kernel, iname to split, outer, inner)``."""
    knl.check_inames([split_iname], what)
    if not isinstance(count, int) or count < 1:
        raise KernelcoreError(f"{what}: the {count_name} must be a positive integer, got "
                              f"{count!r}")
    if is_hw_parallel(knl.iname_tags.get(split_iname)):
        raise KernelcoreError(f"{what}: '{split_iname}' is tagged "
                              f"{knl.iname_tags[split_iname]}; apply {what} before tagging")
    base = split_iname
    if within is not None:
        match = parse_match(within)
        users = [i for i in knl.instructions if _uses_iname(i, split_iname)]
        if not all(match(knl, i) for i in users):
            # only some instructions: give them their own copy of the iname first
            copy = _unique(knl, split_iname)
            knl = duplicate_inames(knl, split_iname, within=within, new_inames=[copy])
            split_iname = copy
    outer = outer_iname or _unique(knl, f"{base}_outer")
    inner = inner_iname or _unique(knl, f"{base}_inner")
    for name in (outer, inner):
        if name in knl.all_inames():
            raise KernelcoreError(f"{what}: iname '{name}' already exists")
    return knl, split_iname, outer, inner


@for_each_kernel
def split_iname(knl: LoopKernel, split_iname: str, inner_length: int, *,
                outer_iname: str | None = None, inner_iname: str | None = None,
                outer_tag: Any = None, inner_tag: Any = None, slabs: tuple[int, int] = (0, 0),
                within: Any = None) -> LoopKernel:
    """Replace *split_iname* by ``inner + inner_length*outer`` with
    ``0 <= inner < inner_length``; *slabs* ``(a, b)`` peels the first *a* and last
    *b* iterations of the outer loop off into separate code."""
    knl, split_iname, outer, inner = prepare_split(
        knl, split_iname, "split_iname", inner_length, "length", outer_iname, inner_iname,
        within)
    domains = tuple(_split_set(d, split_iname, outer, inner, inner_length)
                    for d in knl.domains)
    new_expr = prim.Sum((prim.Variable(inner),
                         prim.Product((prim.Variable(outer), inner_length))))
    slab_map = {n: s for n, s in knl.iname_slabs.items() if n != split_iname}
    if tuple(slabs) != (0, 0):
        slab_map[outer] = tuple(slabs)  # type: ignore[assignment]
    return knl.copy(domains=domains, iname_slabs=slab_map,
                    **split_in_body(knl, split_iname, new_expr, outer, inner, outer_tag,
                                    inner_tag))


def split_in_body(knl: LoopKernel, split_iname: str, new_expr: Any, outer: str, inner: str,
                  outer_tag: Any, inner_tag: Any) -> dict[str, Any]:
    """The fields of *knl* that splitting *split_iname* into *outer* and
    *inner* changes besides its domains: instructions and substitution rules
    reading *new_expr* for it, the new inames' tags, the loop priorities."""
    pair = {split_iname: (outer, inner)}
    insns = tuple(_rewrite_insn(i, {split_iname: new_expr}, pair, pair)
                  for i in knl.instructions)
    # rule expressions using the iname (outside their own arguments) follow it
    rules = {n: (r if split_iname in r.arguments else dataclasses.replace(
        r, expression=substitute(r.expression, {split_iname: new_expr})))
        for n, r in knl.substitutions.items()}
    tags = {n: t for n, t in knl.iname_tags.items() if n != split_iname}
    tags[outer] = parse_tag(outer_tag)
    tags[inner] = parse_tag(inner_tag)
    prio = tuple(tuple(x for n in p for x in ((outer, inner) if n == split_iname else (n,)))
                 for p in knl.loop_priority)
    return {"instructions": insns, "substitutions": rules, "iname_tags": tags,
            "loop_priority": prio}


def _parse_tag_spec(spec) -> list[tuple[str, object]]:
    if isinstance(spec, dict):
        return list(spec.items())
    if isinstance(spec, str):
        pairs: list[tuple[str, object]] = []
        for item in spec.split(","):
            if not item.strip():
                continue
            name, sep, tag = item.partition(":")
            if not sep:
                raise ParseError(f"tag_inames: expected 'iname:tag', got {item.strip()!r}")
            pairs.append((name.strip(), tag.strip()))
        return pairs
    return list(spec)


@for_each_kernel
def tag_inames(knl: LoopKernel, iname_to_tag: Any, force: bool = False) -> LoopKernel:
    """Set implementation tags: ``{"i": "l.0"}``, ``"i:l.0, j:g.0"`` or pairs.
    A name may be a glob (``"i_*"``); a tag may be a list of tags, and a
    :class:`pytools.tag.Tag` is added as metadata next to the implementation tag."""
    tags = dict(knl.iname_tags)
    metadata = dict(knl.iname_metadata)
    for name, tag_spec in _parse_tag_spec(iname_to_tag):
        names = fnmatch.filter(knl.all_inames(), name) if any(c in name for c in "*?[") \
            else [name]
        if not names:
            raise UnknownNameError(f"tag_inames: no iname matches '{name}'")
        knl.check_inames(names, "tag_inames")
        specs = tag_spec if isinstance(tag_spec, (list, tuple, set, frozenset)) \
            else [tag_spec]
        for tag in specs:
            if is_metadata_tag(tag):
                for n in names:
                    metadata[n] = add_metadata_tag(metadata.get(n, frozenset()), tag)
                continue
            new = parse_tag(tag)
            for n in names:
                old = tags.get(n)
                if old is not None and old != new and not force:
                    raise KernelcoreError(f"tag_inames: '{n}' is already tagged {old}; "
                                          f"cannot also tag it {new} (use force=True)")
                tags[n] = new
    return knl.copy(iname_tags=tags, iname_metadata=metadata)


def _duplicate_in_set(dom, old: str, new: str):
    s = dom.to_set() if isinstance(dom, isl.BasicSet) else dom
    var = s.get_var_dict()
    if old not in var or var[old][0] != dim_type.set:
        return dom
    n = s.dim(dim_type.set)
    dup = s.insert_dims(dim_type.set, n, 1).set_dim_name(dim_type.set, n, new)
    copy = isl.align_spaces(s.set_dim_name(dim_type.set, var[old][1], new), dup)
    result = (dup & copy).coalesce()
    bsets = result.get_basic_sets()
    return bsets[0] if len(bsets) == 1 else result


@for_each_kernel
def duplicate_inames(knl: LoopKernel, inames: Iterable[str], within: Any = None,
                     new_inames: Iterable[str] | None = None, tags: Any = None) -> LoopKernel:
    """Give the matching instructions fresh copies of *inames*, with the same bounds."""
    names = _names(inames)
    knl.check_inames(names, "duplicate_inames")
    match = parse_match(within)
    new_names = list(_names(new_inames)) if new_inames else []
    for k, n in enumerate(names):
        if k >= len(new_names):
            new_names.append(_unique(knl, n))
    rename = dict(zip(names, new_names))
    for old in names:
        if any(old in knl.domain_parent_inames(i) for i in knl.all_inames()):
            raise KernelcoreError(f"duplicate_inames: '{old}' bounds other inames; "
                                  "duplicating it is not supported")
    domains = list(knl.domains)
    for old, new in rename.items():
        domains = [_duplicate_in_set(d, old, new) for d in domains]
    subst = {o: prim.Variable(n) for o, n in rename.items()}
    red = {o: (n,) for o, n in rename.items()}
    insns = tuple(_rewrite_insn(i, subst, red, red) if match(knl, i) else i
                  for i in knl.instructions)
    new_tags = dict(knl.iname_tags)
    for old, new in rename.items():
        new_tags[new] = parse_tag((tags or {}).get(old))
    return knl.copy(domains=tuple(domains), instructions=insns, iname_tags=new_tags)


@for_each_kernel
def rename_iname(knl: LoopKernel, old_iname: str, new_iname: str,
                 existing_ok: bool = False) -> LoopKernel:
    """Call iname *old_iname* *new_iname* everywhere. With *existing_ok*, an
    existing *new_iname* with the same bounds absorbs *old_iname*."""
    knl.check_inames([old_iname], "rename_iname")
    if new_iname in knl.all_inames():
        if not existing_ok:
            raise KernelcoreError(f"rename_iname: iname '{new_iname}' already exists "
                                  "(pass existing_ok=True to merge)")
        old_dom = knl.get_inames_domain([old_iname])
        new_dom = knl.get_inames_domain([new_iname])
        renamed = old_dom.set_dim_name(dim_type.set,
                                       old_dom.get_var_dict()[old_iname][1], "__kc_x")
        other = new_dom.set_dim_name(dim_type.set,
                                     new_dom.get_var_dict()[new_iname][1], "__kc_x")
        if not project_to(renamed, ["__kc_x"]).is_equal(project_to(other, ["__kc_x"])):
            raise KernelcoreError(f"rename_iname: '{old_iname}' and '{new_iname}' have "
                                  "different bounds; cannot merge them")
        domains = tuple(_drop_iname(d, old_iname) for d in knl.domains)
    else:
        if new_iname in knl.all_params() or new_iname in knl.arg_dict:
            raise KernelcoreError(f"rename_iname: name '{new_iname}' is already in use")
        domains = tuple(_rename_dim(d, old_iname, new_iname) for d in knl.domains)
    subst = {old_iname: prim.Variable(new_iname)}
    red = {old_iname: (new_iname,)}
    insns = tuple(_rewrite_insn(i, subst, red, red) for i in knl.instructions)
    tags = {n: t for n, t in knl.iname_tags.items() if n != old_iname}
    tags.setdefault(new_iname, knl.iname_tags.get(old_iname))
    prio = tuple(tuple(new_iname if n == old_iname else n for n in p)
                 for p in knl.loop_priority)
    slabs = {(new_iname if n == old_iname else n): v for n, v in knl.iname_slabs.items()}
    return knl.copy(domains=domains, instructions=insns, iname_tags=tags,
                    loop_priority=prio, iname_slabs=slabs)


@for_each_kernel
def rename_inames(knl: LoopKernel, old_inames: Iterable[str], new_iname: str,
                  existing_ok: bool = False) -> LoopKernel:
    """Call every iname of *old_inames* *new_iname* (loopy's): the first takes
    the name (or, with *existing_ok*, merges into an existing *new_iname*), the
    others, which must have the same bounds, merge into it."""
    names = list(_names(old_inames))
    if not names:
        return knl
    knl = rename_iname(knl, names[0], new_iname, existing_ok=existing_ok)
    for old in names[1:]:
        knl = rename_iname(knl, old, new_iname, existing_ok=True)
    return knl


def _rename_dim(dom, old: str, new: str):
    var = dom.get_var_dict()
    if old not in var:
        return dom
    dt, idx = var[old]
    return dom.set_dim_name(dt, idx, new)


def _drop_iname(dom, name: str):
    var = dom.get_var_dict()
    if name not in var or var[name][0] != dim_type.set:
        return dom
    return dom.project_out(dim_type.set, var[name][1], 1)


@for_each_kernel
def join_inames(knl: LoopKernel, inames: Iterable[str], new_iname: str | None = None,
                tag: Any = None, within: Any = None) -> LoopKernel:
    """Replace *inames* (outermost first) by one iname running over their product;
    every iname but the first needs a constant extent starting at 0."""
    names = _names(inames)
    knl.check_inames(names, "join_inames")
    if within is not None:
        raise KernelcoreError("join_inames: within= is not supported; join for all "
                              "instructions")
    extents = []
    for n in names[1:]:
        lo, hi = static_range(knl, n)
        if lo != 0:
            raise KernelcoreError(f"join_inames: '{n}' must start at 0 (starts at {lo})")
        extents.append(hi + 1)
    new = new_iname or _unique(knl, "_".join(names))
    strides = []
    stride = 1
    for e in reversed(extents):
        strides.append(stride)
        stride *= e
    strides.append(stride)
    strides.reverse()          # stride of names[k]
    domains = []
    for dom in knl.domains:
        var = dom.get_var_dict()
        if not any(n in var and var[n][0] == dim_type.set for n in names):
            domains.append(dom)
            continue
        if not all(n in var and var[n][0] == dim_type.set for n in names):
            raise KernelcoreError("join_inames: the inames must be declared in one domain")
        n_set = dom.dim(dim_type.set)
        d = dom.insert_dims(dim_type.set, n_set, 1).set_dim_name(dim_type.set, n_set, new)
        coeffs: dict[str | Literal[1], isl.Val | int] = {new: -1}
        for n, st in zip(names, strides):
            coeffs[n] = st
        d = d.add_constraint(isl.Constraint.eq_from_names(d.space, coeffs))
        for n in names:
            idx = d.get_var_dict()[n][1]
            d = d.project_out(dim_type.set, idx, 1)
        domains.append(d)
    subst = {}
    for k, (n, st) in enumerate(zip(names, strides)):
        value: prim.ExpressionNode = prim.Variable(new)
        if st != 1:
            value = prim.FloorDiv(value, st)
        if k > 0:
            value = prim.Remainder(value, extents[k - 1])
        subst[n] = value
    within_map = {n: (new,) for n in names}
    for insn in knl.instructions:
        for e in insn.expressions():
            if any(set(r.inames) & set(names) for r in find_reductions(e)):
                raise KernelcoreError("join_inames: cannot join reduction inames")
    insns = tuple(_rewrite_insn(i, subst, {}, within_map) for i in knl.instructions)
    tags = {n: t for n, t in knl.iname_tags.items() if n not in names}
    tags[new] = parse_tag(tag)
    return knl.copy(domains=tuple(domains), instructions=insns, iname_tags=tags)


class _ReductionSplitter(IdentityMapper):
    def __init__(self, inames: set[str], inward: bool):
        self.inames = inames
        self.inward = inward

    def map_reduction(self, expr):
        inner_expr = self.rec(expr.expr)
        chosen = tuple(n for n in expr.inames if n in self.inames)
        rest = tuple(n for n in expr.inames if n not in self.inames)
        if not chosen or not rest:
            return Reduction(expr.operation, expr.inames, inner_expr)
        inner, outer = (chosen, rest) if self.inward else (rest, chosen)
        return Reduction(expr.operation, outer, Reduction(expr.operation, inner, inner_expr))

    def map_constant(self, expr):
        return expr


def _split_reduction(knl, inames, within, inward: bool) -> LoopKernel:
    names = set(_names(inames))
    knl.check_inames(names, "split_reduction")
    match = parse_match(within)
    mapper = _ReductionSplitter(names, inward)
    insns = tuple(i.with_transformed_expressions(mapper) if match(knl, i) else i
                  for i in knl.instructions)
    return knl.copy(instructions=insns)


@for_each_kernel
def split_reduction_inward(knl: LoopKernel, inames: Iterable[str], within: Any = None
                           ) -> LoopKernel:
    """``sum((i, j), e)`` with *inames* = i becomes ``sum(j, sum(i, e))``."""
    return _split_reduction(knl, inames, within, inward=True)


@for_each_kernel
def split_reduction_outward(knl: LoopKernel, inames: Iterable[str], within: Any = None
                            ) -> LoopKernel:
    """``sum((i, j), e)`` with *inames* = i becomes ``sum(i, sum(j, e))``."""
    return _split_reduction(knl, inames, within, inward=False)
