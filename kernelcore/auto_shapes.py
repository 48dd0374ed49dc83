"""Shapes of arrays declared with ``shape=auto``: the extent of their accesses;
strides declared ``auto``: arguments of the kernel.

Public names: find_auto_shapes, strides_as_arguments.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError, StaticValueFindingError
from kernelcore.ir.data import ArrayArg, ValueArg, auto
from kernelcore.ir.domain import (
    NotAffineError,
    aff_to_expr,
    align_to,
    expr_to_pw_aff,
    project_to,
    static_max_of_pw_aff,
)
from kernelcore.ir.instruction import InstructionBase
from kernelcore.ir.kernel import LoopKernel


def find_auto_shapes(knl: LoopKernel,
                     access_list: Iterable[tuple[str, Any, tuple]]) -> LoopKernel:
    """Replace ``auto`` shapes of arrays by the extent of their accesses: each of
    *access_list* is (array, where, subscript), where *where* is an instruction or
    a set of inames (the subscript is taken over their domain), or a pair of one
    of those and expressions that must be >= 0 where the access happens."""
    by_name: dict[str, list] = {}
    for arr, inames, idx in access_list:
        by_name.setdefault(arr, []).append((inames, idx))
    new_args = []
    for arg in knl.args:
        if isinstance(arg, ArrayArg) and arg.shape is auto:
            arg = arg.copy(shape=_access_footprint_shape(knl, arg.name, by_name.get(arg.name, [])))
        new_args.append(arg)
    new_temps = {}
    for tname, tv in knl.temporary_variables.items():
        if tv.shape is auto:
            tv = tv.copy(shape=_access_footprint_shape(knl, tname, by_name.get(tname, [])))
        new_temps[tname] = tv
    return knl.copy(args=tuple(new_args), temporary_variables=new_temps)


def _access_footprint_shape(knl: LoopKernel, name: str, accesses) -> tuple | None:
    """Shape covering every access to *name*: max index + 1 per axis, as
    expressions; None (no shape) for a one-axis array with an access that is not
    affine in the loop indices and parameters, as loopy does."""
    ndim = None
    unbounded = False       # a 1D access not affine in the loop indices and parameters
    maxima: list[isl.PwAff | None] = []
    space = knl.space
    for where, idx in accesses:
        if ndim is None:
            ndim = len(idx)
            maxima = [None] * ndim
        elif len(idx) != ndim:
            raise KernelcoreError(f"'{name}' is indexed with {ndim} and with {len(idx)} "
                                  "subscripts")
        nonempty: tuple = ()
        if isinstance(where, tuple):
            where, nonempty = where
        dom = (knl.get_insn_domain(where) if isinstance(where, InstructionBase)
               else knl.get_inames_domain(where))
        for cond in nonempty:
            try:
                holds = expr_to_pw_aff(cond, space).nonneg_set()
            except NotAffineError:
                continue
            names = [n for n in dom.get_var_names(isl.dim_type.set) if n is not None]
            dom = dom & align_to(project_to(holds, names), dom)
        for axis, ix in enumerate(idx):
            try:
                aff: Any = expr_to_pw_aff(ix, space)  # (a PwAff here, an Aff below)
            except NotAffineError as e:
                if len(idx) == 1:       # loopy's: a 1D array of unknown extent
                    unbounded = True
                    continue
                raise StaticValueFindingError(
                    f"cannot find the shape of '{name}' automatically: its index "
                    f"'{ix}' along axis {axis} is not an affine function of loop "
                    f"indices and parameters ({e}); kernelcore needs a static bound "
                    "on the index range. Declare the shape explicitly, e.g. "
                    f"lp.GlobalArg('{name}', shape=...).") from None
            img = _max_over(dom, aff)
            maxima[axis] = img if maxima[axis] is None else maxima[axis].union_max(img)  # type: ignore[union-attr]
    if unbounded:
        return None         # a plain pointer (see ArrayArg)
    shape = []
    ctx = knl.assumptions_set.params()
    for axis, mx in enumerate(maxima):
        assert mx is not None
        try:
            aff = static_max_of_pw_aff(mx, ctx)
        except StaticValueFindingError:
            raise StaticValueFindingError(
                f"while finding shape axis {axis} of '{name}': a static maximum was not "
                f"found for PwAff '{mx}' (the largest index differs between parameter "
                "ranges); declare the shape, or state assumptions about the parameters "
                "(e.g. assumptions=\"n>=1\")") from None
        shape.append(aff_to_expr(aff.add_constant_val(1)))
    return tuple(shape)


def _max_over(dom: isl.Set, aff: isl.PwAff) -> isl.PwAff:
    """max of *aff* over the points of *dom*, as a function of the parameters."""
    graph = aff.as_map() if hasattr(aff, "as_map") else isl.Map.from_pw_aff(aff)
    dom_aligned = align_to(dom, graph.domain())
    img = dom_aligned.apply(graph)
    if img.is_empty():
        return isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(img.params().space)) - 1
    return img.dim_max(0)


__all__ = ["find_auto_shapes"]


def strides_as_arguments(knl: LoopKernel, any_order: Iterable[str] = ()) -> LoopKernel:
    """*knl* with each ``auto`` stride of an array argument (and every stride of
    the arrays *any_order* names) a new integer argument ``<array>_stride<axis>``
    (loopy's names), found from the array passed when the kernel is called."""
    any_order = set(any_order)
    taken = {a.name for a in knl.args} | set(knl.temporary_variables) \
        | set(knl.all_inames()) | set(knl.all_params())
    args, added = [], []
    for a in knl.args:
        if isinstance(a, ArrayArg) and isinstance(a.shape, tuple) and (
                a.name in any_order or (isinstance(a.strides, tuple)
                                        and any(s is auto for s in a.strides))):
            given = a.strides if isinstance(a.strides, tuple) else (auto,) * len(a.shape)
            strides = []
            for k, stride in enumerate(given):
                if stride is auto or a.name in any_order:
                    name = f"{a.name}_stride{k}"
                    while name in taken:
                        name += "_"
                    taken.add(name)
                    added.append(ValueArg(name, knl.index_dtype))
                    stride = prim.Variable(name)
                strides.append(stride)
            a = a.copy(strides=tuple(strides))
        args.append(a)
    return knl.copy(args=tuple(args) + tuple(added)) if added else knl
