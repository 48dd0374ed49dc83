"""Index widths: whether 32-bit indices reach every element and loop value.

A kernel indexes with :attr:`~kernelcore.ir.kernel.LoopKernel.index_dtype`:
int32 unless made with ``index_dtype=np.int64``. With 32-bit indices, loop
indices and element offsets must stay below :data:`INDEX_LIMIT` (a loop
``i <= 2**31 - 1`` would never end). Where they may not:

* sizes fixed in the kernel (every allowed parameter value exceeds the
  limit) switch it to 64-bit indices when it is preprocessed
  (:func:`widen_index_dtype`), as a user would want: the results are
  right, and kernels that fit keep their 32-bit code;
* sizes that depend on parameters are checked each time the kernel is called
  (:func:`emit_index_checks`): exceeding the limit raises
  :class:`~kernelcore.diagnostic.InvocationError`, telling to make the kernel
  with ``index_dtype=np.int64``.

Public names: INDEX_LIMIT, IndexOverflow, index_overflows, widen_index_dtype,
emit_index_checks, raise_index_overflow.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import InvocationError
from kernelcore.ir.data import AddressSpace, ArrayArg, ValueArg
from kernelcore.ir.domain import NotAffineError, aff_to_expr, expr_to_pw_aff, set_to_cond_expr
from kernelcore.ir.expr import get_dependencies, substitute
from kernelcore.ir.kernel import LoopKernel

logger = logging.getLogger(__name__)

#: loop indices and element offsets of kernels with 32-bit indices stay below this
INDEX_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class IndexOverflow:
    """An array or loop index that 32-bit indices may not reach: *what* it
    is, and *condition*: a boolean expression in the parameters, true where
    they do not (None: for every parameter value)."""

    what: str
    condition: object | None


def index_overflows(knl: LoopKernel) -> list[IndexOverflow]:
    """What of *knl* reaches offsets or loop values of :data:`INDEX_LIMIT`
    or more, for some parameter value its assumptions and the parameters'
    types allow (found once per kernel object: preprocessing and the
    invoker both ask)."""
    # (kept beside the kernel's cached properties; the kernel is immutable)
    known = knl.__dict__.get("_index_overflows")
    if known is None:
        known = knl.__dict__["_index_overflows"] = tuple(_find_overflows(knl))
    return list(known)


def _find_overflows(knl: LoopKernel) -> list[IndexOverflow]:
    affs = isl.affs_from_space(knl.space)
    context = knl.assumptions_set
    for p in knl.ordered_params():
        arg = knl.arg_dict.get(p)
        dtype = arg.dtype if arg is not None and arg.dtype is not None else knl.index_dtype
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            context = context & affs[p].ge_set(affs[0] + int(info.min)) \
                & affs[p].le_set(affs[0] + int(info.max))
    allowed = context.params()
    limits = (affs[0] + INDEX_LIMIT, affs[0] - INDEX_LIMIT)
    found = []

    def note(what: str, points: isl.Set) -> None:
        bad = (points & context).params()
        if bad.is_empty():
            return
        found.append(IndexOverflow(what, None if (allowed - bad).is_empty()
                                   else set_to_cond_expr(bad.coalesce())))

    for var in _global_arrays(knl):
        shape, strides = var.shape, var.element_strides()
        what = (f"array '{var.name}' of shape ({', '.join(str(n) for n in shape)}) spans "
                "2**31 - 1 or more elements")
        # one past the largest element offset
        span = prim.Sum((1, *(prim.Product((prim.Sum((n, -1)), _magnitude(st)))
                              for n, st in zip(shape, strides))))
        nonempty = [prim.Comparison(n, ">", 0) for n in shape]
        try:
            points = expr_to_pw_aff(span, knl.space).gt_set(limits[0])
            for n in shape:
                points = points & expr_to_pw_aff(n, knl.space).gt_set(affs[0])
        except NotAffineError:      # (products of parameters: checked when called)
            found.append(IndexOverflow(what, prim.LogicalAnd(
                (*nonempty, prim.Comparison(span, ">", INDEX_LIMIT)))))
            continue
        note(what, points)
    for k, dom in enumerate(knl.domains):
        own = [dom.get_dim_name(isl.dim_type.set, i) for i in range(dom.dim(isl.dim_type.set))]
        outer = {dom.get_dim_name(isl.dim_type.param, i)
                 for i in range(dom.dim(isl.dim_type.param))} & set(knl.all_inames())
        points = knl.get_inames_domain(set(own) | outer)
        for iname in own:
            note(f"loop index '{iname}' of domain {dom} reaches +-(2**31 - 1)",
                 points & _beyond(affs[iname], limits))
        # combinations that guards and loop bounds compute (256*io + ii of a split)
        for form in _combined_forms(knl.aligned_domains[k]):
            pw = isl.PwAff.from_aff(form)
            note(f"index expression {aff_to_expr(form)} of domain {dom} reaches "
                 "+-(2**31 - 1)", points & _beyond(pw, limits))
    return found


def _beyond(value: isl.PwAff, limits: tuple[isl.PwAff, isl.PwAff]) -> isl.Set:
    """Where *value* is out of the reach of 32-bit indices (*limits*: the
    constants +-INDEX_LIMIT)."""
    return value.ge_set(limits[0]) | value.le_set(limits[1])


def _combined_forms(dom: isl.Set) -> list[isl.Aff]:
    """The loop-index parts (without parameters and constants) of *dom*'s
    constraints that combine several loop indices or scale one."""
    forms: dict[str, isl.Aff] = {}
    for bs in dom.get_basic_sets():
        for c in bs.get_constraints():
            aff = c.get_aff()
            if aff.dim(isl.dim_type.div) and aff.involves_dims(
                    isl.dim_type.div, 0, aff.dim(isl.dim_type.div)):
                continue
            zero = isl.Val.zero(aff.get_ctx())
            aff = aff.set_constant_val(zero)
            for i in range(aff.dim(isl.dim_type.param)):
                aff = aff.set_coefficient_val(isl.dim_type.param, i, zero)
            coefficients = [aff.get_coefficient_val(isl.dim_type.in_, i).to_python()
                            for i in range(aff.dim(isl.dim_type.in_))]
            used = [x for x in coefficients if x]
            if len(used) > 1 or (used and abs(used[0]) != 1):
                aff = aff.neg() if used[0] < 0 else aff
                forms.setdefault(str(aff), aff)
    return list(forms.values())


def _global_arrays(knl: LoopKernel) -> list:
    """The arguments and global temporaries that have a shape."""
    arrays = [a for a in knl.args if isinstance(a, ArrayArg)] + [
        tv for tv in knl.temporary_variables.values()
        if tv.address_space == AddressSpace.GLOBAL]
    return [a for a in arrays if isinstance(a.shape, tuple) and a.shape]


def _magnitude(stride):
    """The absolute value of *stride* (an expression where it is not a number)."""
    if isinstance(stride, (int, np.integer)):
        return abs(int(stride))
    return prim.Call(prim.Variable("abs"), (stride,))


def widen_index_dtype(knl: LoopKernel) -> LoopKernel:
    """*knl* with 64-bit indices if some of its fixed sizes need them, else
    *knl* itself."""
    if knl.index_dtype.itemsize == 8:
        return knl
    fixed = [o.what for o in index_overflows(knl) if o.condition is None]
    if not fixed:
        return knl
    logger.info("kernel '%s' gets 64-bit indices: %s", knl.name, "; ".join(fixed))
    return knl.copy(index_dtype=np.dtype(np.int64))


def emit_index_checks(w: Callable[[str], None], knl: LoopKernel) -> None:
    """Write (through *w*) invoker lines, run once the parameters are known,
    that raise where 32-bit indices of *knl* would not reach its sizes."""
    if knl.index_dtype.itemsize == 8:
        return
    overflows = index_overflows(knl)
    if any(o.condition is None for o in overflows):
        return          # preprocessing gives the kernel 64-bit indices
    scalars = {a.name for a in knl.args if isinstance(a, ValueArg)}
    for o in overflows:
        names = sorted(get_dependencies(o.condition))
        if not set(names) <= scalars:
            continue        # (names the caller cannot pass)
        # (in Python integers: numpy ones could overflow in the test itself)
        as_ints = {p: prim.Call(prim.Variable("int"), (prim.Variable(p),)) for p in names}
        values = "{" + ", ".join(f"{p!r}: {p}" for p in names) + "}"
        w(f"    if {substitute(o.condition, as_ints)}:")
        w("        from kernelcore.index_width import raise_index_overflow")
        w(f"        raise_index_overflow({knl.name!r}, {o.what!r}, {values})")


def raise_index_overflow(kernel: str, what: str, params: dict) -> None:
    """Raise the error of a call whose *params* take *what* of *kernel* out of
    the reach of 32-bit indices."""
    values = ", ".join(f"{k}={v}" for k, v in params.items())
    raise InvocationError(
        f"kernel '{kernel}': with {values}, {what}, beyond the reach of its "
        "32-bit indices (they would compute wrong offsets); make the kernel "
        "with index_dtype=np.int64 (lp.make_kernel(..., index_dtype=np.int64))")
