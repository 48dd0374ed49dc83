"""Transformations of loop indices (inames).

Public names: prioritize_loops, split_iname, tag_inames, duplicate_inames,
rename_iname, join_inames, split_reduction_inward, split_reduction_outward.
"""

from __future__ import annotations

import islpy as isl
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, ParseError, UnknownNameError
from kernelcore.ir.expr import IdentityMapper, Reduction, SubstitutionMapper
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import is_hw_parallel, parse_tag
from kernelcore.match import parse_match

dim_type = isl.dim_type


def _names(spec) -> tuple[str, ...]:
    if isinstance(spec, str):
        return tuple(s.strip() for s in spec.split(",") if s.strip())
    return tuple(spec)


def prioritize_loops(knl: LoopKernel, loop_priority) -> LoopKernel:
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
        self.inner = SubstitutionMapper(subst.get)

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
    indep = set()
    for n in insn.independent_inames:
        indep.update(within_map.get(n, (n,)))
    return insn.copy(within_inames=frozenset(within), independent_inames=frozenset(indep))


def _uses_iname(insn, iname: str) -> bool:
    if iname in insn.within_inames:
        return True
    from kernelcore.ir.expr import find_reductions
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


def split_iname(knl: LoopKernel, split_iname: str, inner_length: int, *,
                outer_iname: str | None = None, inner_iname: str | None = None,
                outer_tag=None, inner_tag=None, slabs: tuple[int, int] = (0, 0),
                within=None) -> LoopKernel:
    """Replace *split_iname* by ``inner + inner_length*outer`` with
    ``0 <= inner < inner_length``; *slabs* ``(a, b)`` peels the first *a* and last
    *b* iterations of the outer loop off into separate code."""
    knl.check_inames([split_iname], "split_iname")
    if not isinstance(inner_length, int) or inner_length < 1:
        raise KernelcoreError(f"split_iname: length must be a positive integer, got "
                              f"{inner_length!r}")
    if is_hw_parallel(knl.iname_tags.get(split_iname)):
        raise KernelcoreError(f"split_iname: '{split_iname}' is tagged "
                              f"{knl.iname_tags[split_iname]}; split it before tagging")
    if within is not None:
        match = parse_match(within)
        users = [i for i in knl.instructions if _uses_iname(i, split_iname)]
        if not all(match(knl, i) for i in users):
            # only some instructions: give them their own copy of the iname first
            copy = _unique(knl, split_iname)
            knl = duplicate_inames(knl, split_iname, within=within, new_inames=[copy])
            split_iname = copy
    outer = outer_iname or _unique(knl, f"{split_iname}_outer")
    inner = inner_iname or _unique(knl, f"{split_iname}_inner")
    for name in (outer, inner):
        if name in knl.all_inames():
            raise KernelcoreError(f"split_iname: iname '{name}' already exists")
    domains = tuple(_split_set(d, split_iname, outer, inner, inner_length)
                    for d in knl.domains)
    new_expr = prim.Sum((prim.Variable(inner),
                         prim.Product((inner_length, prim.Variable(outer)))))
    insns = tuple(_rewrite_insn(i, {split_iname: new_expr}, {split_iname: (outer, inner)},
                                {split_iname: (outer, inner)})
                  for i in knl.instructions)
    tags = {n: t for n, t in knl.iname_tags.items() if n != split_iname}
    tags[outer] = parse_tag(outer_tag)
    tags[inner] = parse_tag(inner_tag)
    prio = tuple(tuple(x for n in p for x in ((outer, inner) if n == split_iname else (n,)))
                 for p in knl.loop_priority)
    slab_map = {n: s for n, s in knl.iname_slabs.items() if n != split_iname}
    if tuple(slabs) != (0, 0):
        slab_map[outer] = tuple(slabs)
    return knl.copy(domains=domains, instructions=insns, iname_tags=tags,
                    loop_priority=prio, iname_slabs=slab_map)


def _parse_tag_spec(spec) -> list[tuple[str, object]]:
    if isinstance(spec, dict):
        return list(spec.items())
    if isinstance(spec, str):
        pairs = []
        for item in spec.split(","):
            if not item.strip():
                continue
            name, sep, tag = item.partition(":")
            if not sep:
                raise ParseError(f"tag_inames: expected 'iname:tag', got {item.strip()!r}")
            pairs.append((name.strip(), tag.strip()))
        return pairs
    return list(spec)


def tag_inames(knl: LoopKernel, iname_to_tag, force: bool = False) -> LoopKernel:
    """Set implementation tags: ``{"i": "l.0"}``, ``"i:l.0, j:g.0"`` or pairs.
    A name may be a glob (``"i_*"``)."""
    import fnmatch
    tags = dict(knl.iname_tags)
    for name, tag in _parse_tag_spec(iname_to_tag):
        names = fnmatch.filter(knl.all_inames(), name) if any(c in name for c in "*?[") \
            else [name]
        if not names:
            raise UnknownNameError(f"tag_inames: no iname matches '{name}'")
        knl.check_inames(names, "tag_inames")
        new = parse_tag(tag)
        for n in names:
            old = tags.get(n)
            if old is not None and old != new and not force:
                raise KernelcoreError(f"tag_inames: '{n}' is already tagged {old}; "
                                      f"cannot also tag it {new} (use force=True)")
            tags[n] = new
    return knl.copy(iname_tags=tags)


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


def duplicate_inames(knl: LoopKernel, inames, within=None, new_inames=None,
                     tags=None) -> LoopKernel:
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
