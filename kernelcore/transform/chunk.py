"""Splitting a loop into a fixed number of contiguous chunks.

Public names: chunk_iname.
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.domain import NotAffineError, expr_to_pw_aff, project_to, pw_aff_to_expr
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.iname import prepare_split, split_in_body
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


def _iname_bounds(s: isl.BasicSet | isl.Set, iname: str):
    """(lower, size) of *iname* in the set *s* as pymbolic expressions in the
    parameters; raises unless the bounds are independent of the other set dims."""
    full = isl.Set.from_basic_set(s) if isinstance(s, isl.BasicSet) else s
    dt, idx = full.get_var_dict()[iname]
    own = project_to(full, [iname])
    rest = full.project_out(dt, idx, 1).insert_dims(dt, idx, 1).set_dim_name(dt, idx, iname)
    if not (rest & isl.align_spaces(own, rest)).is_equal(full):
        raise KernelcoreError(f"chunk_iname: the bounds of '{iname}' depend on other loop "
                              f"indices; it must range over a box")
    lower = pw_aff_to_expr(own.dim_min(0))
    upper = pw_aff_to_expr(own.dim_max(0))
    return lower, upper - lower + 1


def _chunk_set(s, old: str, outer: str, inner: str, num_chunks: int, lower):
    """*s* with *old* replaced by (*outer*, *inner*): the pairs with
    ``0 <= outer < num_chunks`` and ``old = lower + num_chunks*inner + outer`` in
    range (the same count of points; the chunked index is a different order of them)."""
    dt, idx = s.get_var_dict()[old]
    s = s.insert_dims(dt, idx + 1, 2)
    s = s.set_dim_name(dt, idx + 1, outer).set_dim_name(dt, idx + 2, inner)
    space = s.space
    s = s.add_constraint(isl.Constraint.ineq_from_names(space, {outer: 1}))
    s = s.add_constraint(isl.Constraint.ineq_from_names(space, {outer: -1, 1: num_chunks - 1}))
    affs = isl.affs_from_space(space)
    try:
        low = expr_to_pw_aff(lower, space)
    except NotAffineError as err:
        raise KernelcoreError(f"chunk_iname: the lower bound {lower} of '{old}' is not "
                              f"affine") from err
    rel = (affs[old] - low - num_chunks * affs[inner] - affs[outer]).zero_set()
    was_basic = isinstance(s, isl.BasicSet)
    result = (isl.Set.from_basic_set(s) if was_basic else s) & rel
    result = result.project_out(dt, idx, 1)
    pieces = result.get_basic_sets()
    return pieces[0] if was_basic and len(pieces) == 1 else result


@for_each_kernel
def chunk_iname(knl: LoopKernel, split_iname: str, num_chunks: int, *,
                outer_iname: str | None = None, inner_iname: str | None = None,
                outer_tag: Any = None, inner_tag: Any = None, within: Any = None) -> LoopKernel:
    """Split the loop over *split_iname* into *num_chunks* contiguous chunks of
    nearly equal length (the first ``size % num_chunks`` chunks one longer):
    the outer index numbers the chunk, the inner one the position in it."""
    knl, split_iname, outer, inner = prepare_split(
        knl, split_iname, "chunk_iname", num_chunks, "number of chunks", outer_iname,
        inner_iname, within)
    domains = []
    lower = size = None
    for d in knl.domains:
        if split_iname in d.get_var_dict():
            lower, size = _iname_bounds(d, split_iname)
            d = _chunk_set(d, split_iname, outer, inner, num_chunks, lower)
        domains.append(d)
    assert lower is not None and size is not None
    # chunk c starts at c*floor(size/k) + min(c, size % k)
    short: Any
    longer: Any
    if isinstance(size, int):
        short, longer = size // num_chunks, size % num_chunks
    else:
        short, longer = prim.FloorDiv(size, num_chunks), prim.Remainder(size, num_chunks)
    start = prim.Sum((lower, prim.Product((prim.Variable(outer), short)),
                      prim.Min((prim.Variable(outer), longer))))
    new_expr = prim.Sum((start, prim.Variable(inner)))
    return knl.copy(domains=tuple(domains),
                    **split_in_body(knl, split_iname, new_expr, outer, inner, outer_tag,
                                    inner_tag))
