"""Reductions inside a precomputed value: their own inames, bounded by the
storage indices.

A rule ``r(i_outer) := sum(i_inner, a[i_inner + 128*i_outer])`` over a domain
where ``i_inner``'s bounds depend on ``i_outer`` (``i_inner < n -
128*i_outer``) is computed, per storage index ``i_outer_0``, by a reduction
whose iname must keep that bound with ``i_outer_0`` in place of ``i_outer``:
the fetch gets copies of the reduction inames, in a domain of their own
where the storage index stands for the swept iname (loopy keeps the
coupling by adding the storage index to the domain of the sweep).

Public names: localize_reduction_inames.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.ir.domain import expr_to_pw_aff, move_names_to_params, project_to
from kernelcore.ir.expr import find_reductions
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.iname import _InameRewriter

dim_type = isl.dim_type


def localize_reduction_inames(knl: LoopKernel, expr: Any, sweep_values: Mapping[str, Any],
                              storage_names: list[str], outer: set[str],
                              new_name: Callable[[str], str]
                              ) -> tuple[Any, isl.Set | isl.BasicSet | None, dict[str, Any]]:
    """*expr* (a precomputed value) with its reduction inames replaced by
    copies, the domain of the copies (the swept inames given by
    *sweep_values*, expressions of *storage_names*; these and the *outer*
    inames are its parameters), and their tags; *expr* unchanged and no
    domain when it reduces over nothing tied to a swept iname."""
    reduced = {n for r in find_reductions(expr) for n in r.inames}
    swept = set(sweep_values) & set(knl.all_inames())
    if not reduced or not swept:
        return expr, None, {}
    names = sorted(reduced | swept | (outer - reduced), key=knl.all_inames().index)
    dom = move_names_to_params(project_to(knl.get_inames_domain(names), names),
                               sorted(outer - reduced))
    if project_to(dom, sorted(reduced)).is_equal(project_to(
            move_names_to_params(dom, sorted(swept)), sorted(reduced))):
        return expr, None, {}      # (the reductions' bounds do not involve the sweep)
    copies = {n: new_name(n) for n in sorted(reduced)}
    # the storage indices: parameters; each swept iname fixed by its value
    base = dom.insert_dims(dim_type.param, dom.dim(dim_type.param), len(storage_names))
    for k, s in enumerate(storage_names):
        base = base.set_dim_name(dim_type.param, dom.dim(dim_type.param) + k, s)
    for s in sorted(swept):
        base = base & expr_to_pw_aff(prim.Variable(s), base.space).eq_set(
            expr_to_pw_aff(sweep_values[s], base.space))
    local = project_to(base, sorted(reduced))
    for old, new in copies.items():
        local = local.set_dim_name(dim_type.set, local.get_var_dict()[old][1], new)
    rewriter = _InameRewriter({o: prim.Variable(n) for o, n in copies.items()},
                              {o: (n,) for o, n in copies.items()})
    tags = {new: knl.iname_tags.get(old) for old, new in copies.items()}
    bsets = local.coalesce().get_basic_sets()
    return rewriter(expr), (bsets[0] if len(bsets) == 1 else local), tags
