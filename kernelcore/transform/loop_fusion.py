"""Loop fusion inside one kernel (loopy's ``get_kennedy_unweighted_fusion_candidates``
and ``rename_inames_in_batch``).

A candidate loop is an iname; the statements it encloses are "sites": an
instruction's assignment (inside its ``within_inames``) and each reduction of
its expression (also inside the reduction's inames and those of the
reductions around it). Two candidates are fused (renamed to one new iname)
when they sit directly in the same enclosing loops, have the same bounds,
fusing them creates no dependency cycle through other statements, and no
element accessed by both loops (one of them writing it) is touched by the
earlier loop in a later iteration than by the later loop.

Public names: get_kennedy_unweighted_fusion_candidates, rename_inames_in_batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import islpy as isl
import pymbolic.primitives as prim
from islpy import dim_type

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.domain import NotAffineError, align_to, expr_to_pw_aff, project_to
from kernelcore.ir.expr import Reduction, WalkMapper, substitute
from kernelcore.ir.instruction import Assignment, assignee_subscript, assignee_var_name
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.iname import rename_inames
from kernelcore.translation_unit import for_each_kernel


@dataclass(frozen=True)
class _Access:
    """One array (or scalar) access: *bound* are the reduction inames around it."""

    name: str
    index: tuple
    bound: frozenset[str]
    write: bool


class _SiteFinder(WalkMapper):
    """Reduction sites (their inames plus those of enclosing reductions) and
    accesses, with the reduction inames bound where each occurs."""

    def __init__(self) -> None:
        self.bound: frozenset[str] = frozenset()
        self.sites: list[frozenset[str]] = []
        self.parents: list[int | None] = []
        self.current: int | None = None
        self.accesses: list[_Access] = []

    def map_reduction(self, expr: Reduction) -> None:
        outer, outer_site = self.bound, self.current
        self.bound = outer | frozenset(expr.inames)
        self.sites.append(self.bound)
        self.parents.append(outer_site)
        self.current = len(self.sites) - 1
        self.rec(expr.expr)
        self.bound, self.current = outer, outer_site

    def map_subscript(self, expr: prim.Subscript) -> None:
        if isinstance(expr.aggregate, prim.Variable):
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            self.accesses.append(_Access(expr.aggregate.name, tuple(idx), self.bound, False))
            for i in idx:
                self.rec(i)
        else:
            super().map_subscript(expr)

    def map_variable(self, expr: prim.Variable) -> None:
        self.accesses.append(_Access(expr.name, (), self.bound, False))

    def map_constant(self, expr: Any) -> None:
        pass

    map_nan = map_constant


class _Sites:
    """The sites of every instruction of a kernel, their inames and the
    dependency edges between them."""

    def __init__(self, knl: LoopKernel):
        self.knl = knl
        self.enclosing: dict[tuple[str, int], frozenset[str]] = {}
        self.accesses: dict[str, list[_Access]] = {}
        self.edges: set[tuple[tuple[str, int], tuple[str, int]]] = set()
        by_insn: dict[str, list[tuple[str, int]]] = {}
        inames = knl.all_inames()
        for insn in knl.instructions:
            finder = _SiteFinder()
            for expr in insn.expressions():
                finder(expr)
            within = frozenset(insn.within_inames)
            keys = [(insn.id, -1)] + [(insn.id, k) for k in range(len(finder.sites))]
            self.enclosing[keys[0]] = within
            for k, bound in enumerate(finder.sites):
                self.enclosing[keys[k + 1]] = within | bound
                parent = finder.parents[k]
                self.edges.add((keys[k + 1], keys[0] if parent is None else keys[parent + 1]))
            by_insn[insn.id] = keys
            accesses = [a for a in finder.accesses if a.name not in inames]
            if isinstance(insn, Assignment):
                accesses.append(_Access(assignee_var_name(insn.assignee),
                                        tuple(assignee_subscript(insn.assignee)),
                                        frozenset(), True))
            else:
                accesses += [_Access(n, (), frozenset(), True) for n in insn.assignee_names()]
            self.accesses[insn.id] = accesses
        for insn in knl.instructions:
            for dep in insn.depends_on:
                for src in by_insn.get(dep, ()):
                    for dst in by_insn[insn.id]:
                        self.edges.add((src, dst))
        self.order = {insn.id: k for k, insn in enumerate(knl.instructions)}

    def sites_of(self, iname: str) -> frozenset[tuple[str, int]]:
        return frozenset(s for s, enc in self.enclosing.items() if iname in enc)


def _context(sites: _Sites, iname: str) -> frozenset[str] | None:
    """The loops directly around loop *iname* (None: it encloses nothing)."""
    own = sites.sites_of(iname)
    if not own:
        return None
    outer = frozenset.intersection(*(sites.enclosing[s] for s in own))
    return frozenset(n for n in outer if sites.sites_of(n) != own)


def _bounds_key(knl: LoopKernel, iname: str) -> isl.Set:
    dom = project_to(knl.get_inames_domain([iname]), [iname])
    return dom.set_dim_name(dim_type.set, 0, "__kc_fused")


def _has_path(edges: dict[Any, set[Any]], start: Any, goal: Any) -> bool:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        for nxt in edges.get(node, ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _is_acyclic(edges: dict[Any, set[Any]]) -> bool:
    state: dict[Any, int] = {}

    def visit(node: Any) -> bool:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1 or (nxt not in state and not visit(nxt)):
                return False
        state[node] = 2
        return True

    return all(visit(n) for n in list(edges) if n not in state)


def _dim_names(s: isl.Set, kind: Any) -> list[str]:
    return [str(s.get_dim_name(kind, k)) for k in range(s.dim(kind))]


def _carried_conflict(knl: LoopKernel, context: frozenset[str],
                      first: tuple[str, frozenset[str], _Access],
                      second: tuple[str, frozenset[str], _Access]) -> bool:
    """Whether loop *first* (candidate iname, inames around the access, access)
    touches an element in a later iteration than loop *second* does."""
    names: list[str] = []
    sets = []
    indices = []
    for tag, (cand, around, acc) in (("p", first), ("q", second)):
        ren = {n: (f"__kc_{tag}" if n == cand else f"__kc_{tag}_{n}")
               for n in around if n not in context}
        dom = project_to(knl.get_inames_domain(around), around)
        for k, name in enumerate(_dim_names(dom, dim_type.set)):
            dom = dom.set_dim_name(dim_type.set, k, ren.get(name, name))
        names += [n for n in ren.values() if n not in names]
        sets.append(dom)
        indices.append(tuple(substitute(ix, {o: prim.Variable(n) for o, n in ren.items()})
                             for ix in acc.index))
    if len(indices[0]) != len(indices[1]):
        return True
    names += sorted(context)
    params = sorted(set(_dim_names(sets[0], dim_type.param))
                    | set(_dim_names(sets[1], dim_type.param)))
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=names, params=params)
    both = align_to(sets[0], isl.Set.universe(space)) & align_to(sets[1], isl.Set.universe(space))
    try:
        for a, b in zip(*indices):
            both = both & expr_to_pw_aff(a, space).eq_set(expr_to_pw_aff(b, space))
        later = expr_to_pw_aff(prim.Variable("__kc_p"), space).gt_set(
            expr_to_pw_aff(prim.Variable("__kc_q"), space))
    except NotAffineError:
        return True         # an index kernelcore cannot analyse: assume a conflict
    return not (both & later).is_empty()


def _prevents_fusion(knl: LoopKernel, sites: _Sites, context: frozenset[str],
                     u: str, v: str) -> bool:
    """Whether loops *u* (running first) and *v* access an element in an order
    that fusing them would reverse."""
    def loop_accesses(cand):
        out = []
        for insn in knl.instructions:
            for acc in sites.accesses[insn.id]:
                around = frozenset(insn.within_inames) | acc.bound
                if cand in around:
                    out.append((cand, around, acc))
        return out

    for first in loop_accesses(u):
        for second in loop_accesses(v):
            if first[2].name != second[2].name or not (first[2].write or second[2].write):
                continue
            if _carried_conflict(knl, context, first, second):
                return True
    return False


def _fuse_group(knl: LoopKernel, sites: _Sites, context: frozenset[str],
                cands: list[str]) -> list[list[str]]:
    """Greedy fusion of the loops *cands* (same context and bounds)."""
    in_context = [s for s, enc in sites.enclosing.items() if context <= enc]

    def vertex(site):
        for c in cands:
            if c in sites.enclosing[site]:
                return c
        return site

    base: dict[Any, set[Any]] = {}
    for a, b in sites.edges:
        if a in sites.enclosing and b in sites.enclosing and \
                context <= sites.enclosing[a] and context <= sites.enclosing[b]:
            va, vb = vertex(a), vertex(b)
            if va != vb:
                base.setdefault(va, set()).add(vb)
    for s in in_context:
        base.setdefault(vertex(s), set())

    def first_site(c):
        return min(sites.order[s[0]] for s in sites.sites_of(c))

    groups: list[list[str]] = []
    for cand in sorted(cands, key=first_site):
        for group in groups:
            merged = {**{k: set(v) for k, v in base.items()}}
            rep = group[0]
            members = set(group) | {cand}
            contracted: dict[Any, set[Any]] = {}
            for k, vs in merged.items():
                kk = rep if k in members else k
                contracted.setdefault(kk, set()).update(
                    rep if x in members else x for x in vs)
            for k in contracted:
                contracted[k].discard(k)
            if not _is_acyclic(contracted):
                continue
            ok = True
            for other in group:
                u, w = other, cand
                if _has_path(base, w, u) or (not _has_path(base, u, w)
                                             and first_site(w) < first_site(u)):
                    u, w = w, u
                if _prevents_fusion(knl, sites, context, u, w):
                    ok = False
                    break
            if ok:
                group.append(cand)
                break
        else:
            groups.append([cand])
    return groups


def get_kennedy_unweighted_fusion_candidates(kernel: LoopKernel, candidates: Iterable[str],
                                             prefix: str = "ifused") -> dict[str, str]:
    """Which loops among the inames *candidates* can be fused: a mapping from
    each fused iname to its new name (starting with *prefix*), for
    :func:`rename_inames_in_batch`. Raises :class:`KernelcoreError` if two
    candidates can be nested within one another."""
    knl = kernel
    cands = sorted(set(candidates))
    knl.check_inames(cands, "get_kennedy_unweighted_fusion_candidates")
    sites = _Sites(knl)
    for k, a in enumerate(cands):
        for b in cands[k + 1:]:
            if any(a in enc and b in enc for enc in sites.enclosing.values()):
                raise KernelcoreError(
                    f"loops '{a}' and '{b}' can be nested within one another; "
                    "fusion candidates must be loops side by side")
    classes: list[tuple[frozenset[str], isl.Set, list[str]]] = []
    for c in cands:
        ctx = _context(sites, c)
        if ctx is None:
            continue
        bounds = _bounds_key(knl, c)
        for cls_ctx, cls_bounds, members in classes:
            if cls_ctx == ctx and cls_bounds.is_equal(bounds):
                members.append(c)
                break
        else:
            classes.append((ctx, bounds, [c]))
    taken = set(knl.all_inames()) | set(knl.all_params()) | set(knl.arg_dict) \
        | set(knl.temporary_variables)
    result: dict[str, str] = {}
    counter = 0
    for ctx, _, members in classes:
        for group in _fuse_group(knl, sites, ctx, members):
            if len(group) < 2:
                continue
            while f"{prefix}_{counter}" in taken:
                counter += 1
            new = f"{prefix}_{counter}"
            taken.add(new)
            result.update(dict.fromkeys(group, new))
    return result


@for_each_kernel
def rename_inames_in_batch(kernel: LoopKernel, renames: Mapping[str, str]) -> LoopKernel:
    """Rename inames by *renames* (old name -> new name); inames given the
    same new name are merged into one loop (they must have the same bounds)."""
    by_new: dict[str, list[str]] = {}
    for old, new in renames.items():
        if old != new:
            by_new.setdefault(new, []).append(old)
    for new, olds in by_new.items():
        kernel = rename_inames(kernel, olds, new, existing_ok=new in kernel.all_inames())
    return kernel
