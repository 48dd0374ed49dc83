"""A loopy program re-created in kernelcore, for ``actx.call_loopy``.

The program's entry kernel (and every kernel it calls) is re-created in
kernelcore (loopy's API, see docs/loopy-compat.md): its domains (as isl
text), instructions (loopy's expressions rewritten into kernelcore's:
reductions, type casts, resolved functions, sub-array references as slices),
arguments, temporaries and iname tags. Assignments (atomic ones too), calls
of other kernels of the program, two-output ``argmax``/``argmin``
reductions (as a ``max`` and an ``argmax`` instruction), global and local
barriers and no-ops are re-created; anything else raises
:class:`Untranslatable`.

A kernel that tags no iname for the device gets some: in each part between
global barriers, the outermost loop that all its instructions share and
that every array written there is indexed by, as its own axis (arrays only
updated atomically aside), or that meshmode's ``ConcurrentElementInameTag``
declares free of dependencies between iterations, is split over
work-groups and work-items.

Public names: GROUP_SIZE, entry_kernel, Translation, translate, Untranslatable.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp2
from kernelcore import (
    MOST_RECENT_LANGUAGE_VERSION,
    BarrierInstruction,
    IdentityMapper,
    Reduction,
    TypeCast,
    WalkMapper,
)
from lazyarray.deferred import deferred
from lazyarray.errors import LazyArrayError

logger = logging.getLogger(__name__)

# loopy is optional: it loads when a loopy program is first translated
lp = deferred("loopy")
_lp_array, _lp_data = deferred("loopy.kernel.array"), deferred("loopy.kernel.data")
_lp_symbolic = deferred("loopy.symbolic")
_lp_interface = deferred("loopy.kernel.function_interface")

#: the work-items of a work-group of the loop a translated kernel spreads
#: over the device (when the loopy kernel tags none)
GROUP_SIZE = 64


class Untranslatable(LazyArrayError):
    """A loopy program that kernelcore cannot re-create (the message says why)."""


def _np_dtype(t: Any) -> np.dtype | None:
    """The NumPy dtype of a loopy type (None: not known yet)."""
    if t is None or t is lp.auto:
        return None
    dtype = getattr(t, "numpy_dtype", None)
    if dtype is None:
        raise Untranslatable(f"type {t!r} is not a NumPy type")
    return np.dtype(dtype)


class _FromLoopy(IdentityMapper):
    """loopy's expressions in kernel *knl* as kernelcore's (pymbolic's own
    nodes are shared)."""

    def __init__(self, knl: Any):
        self.knl = knl

    def map_reduction(self, expr, *args, **kwargs):
        name = str(expr.operation)
        if name not in ("sum", "product", "max", "min", "any", "all"):
            raise Untranslatable(f"reduction '{name}' (user-defined, or with several "
                                 "results outside a two-output assignment)")
        return Reduction(name, tuple(expr.inames), self.rec(expr.expr))

    def map_type_cast(self, expr, *args, **kwargs):
        return TypeCast(_np_dtype(expr.type), self.rec(expr.child))

    def map_resolved_function(self, expr, *args, **kwargs):
        return prim.Variable(expr.name)

    def map_tagged_variable(self, expr, *args, **kwargs):
        return prim.Variable(expr.name)

    def map_sub_array_ref(self, expr, *args, **kwargs):
        """``[j]: a[i, j]`` as the slice kernelcore's calls take, ``a[i, lo:hi+1]``."""
        swept = [v.name for v in expr.swept_inames]
        sub = expr.subscript
        index = sub.index if isinstance(sub.index, tuple) else (sub.index,)
        used = [ix.name for ix in index if isinstance(ix, prim.Variable) and ix.name in swept]
        if used != swept:
            raise Untranslatable(f"sub-array reference {expr}: swept inames must each be "
                                 "a whole subscript, in axis order")
        return prim.Subscript(sub.aggregate, tuple(
            self._slice(ix.name) if isinstance(ix, prim.Variable) and ix.name in swept
            else self.rec(ix) for ix in index))

    def _slice(self, iname: str) -> prim.Slice:
        dom = self.knl.get_inames_domain(iname).project_out_except([iname], [isl.dim_type.set])
        if isinstance(dom, isl.BasicSet):
            dom = dom.to_set()          # (islpy 2026's basic sets have no dim_min)
        lo, hi = dom.dim_min(0), dom.dim_max(0)
        if not (lo.is_cst() and hi.is_cst()):
            raise Untranslatable(f"sub-array reference over '{iname}': its range is "
                                 "not constant")
        low = int(lo.get_pieces()[0][1].get_constant_val().to_python())
        high = int(hi.get_pieces()[0][1].get_constant_val().to_python())
        return prim.Slice((None if low == 0 else low, high + 1))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("map_"):
            def refuse(expr, *args, **kwargs):
                raise Untranslatable(f"loopy expression {type(expr).__name__} ({expr})")
            return refuse
        raise AttributeError(name)


def _shape(shape: Any, conv: _FromLoopy) -> Any:
    if shape is None or shape is lp.auto:
        return lp2.auto
    return tuple(conv(e) for e in shape)


def _check_layout(arg: Any) -> None:
    """Refuse arrays not in C order (lazy arrays are stored in C order)."""
    FixedStrideArrayDimTag = _lp_array.FixedStrideArrayDimTag
    if getattr(arg, "offset", 0) not in (0, None, lp.auto):
        raise Untranslatable(f"argument '{arg.name}' has an offset argument")
    tags = getattr(arg, "dim_tags", None)
    if tags is None:
        return
    n = len(tags)
    for k, tag in enumerate(tags):
        if not isinstance(tag, FixedStrideArrayDimTag) or tag.layout_nesting_level != n - 1 - k:
            raise Untranslatable(f"argument '{arg.name}' is not laid out in C order")


def _argument(arg: Any, conv: _FromLoopy) -> Any:
    ArrayArg, ConstantArg = _lp_data.ArrayArg, _lp_data.ConstantArg
    if isinstance(arg, lp.ValueArg):
        return lp2.ValueArg(arg.name, _np_dtype(arg.dtype))
    if isinstance(arg, (ArrayArg, ConstantArg)):
        _check_layout(arg)
        if isinstance(arg, ConstantArg):
            return lp2.ConstantArg(arg.name, _np_dtype(arg.dtype), shape=_shape(arg.shape, conv))
        return lp2.GlobalArg(arg.name, _np_dtype(arg.dtype), shape=_shape(arg.shape, conv),
                             for_atomic=isinstance(arg.dtype, lp.types.AtomicType))
    raise Untranslatable(f"argument '{arg.name}' is a {type(arg).__name__}")


def _temporary(t: Any, conv: _FromLoopy) -> Any:
    AddressSpace = _lp_data.AddressSpace
    space = t.address_space
    aspace: Any
    if space is lp.auto or space is None:
        aspace = lp2.auto
    else:
        aspace = lp2.AddressSpace[AddressSpace.stringify(space).upper()]
    if getattr(t, "base_storage", None) is not None:
        raise Untranslatable(f"temporary '{t.name}' shares storage")
    return lp2.TemporaryVariable(t.name, _np_dtype(t.dtype), shape=_shape(t.shape, conv) or (),
                                 address_space=aspace, initializer=t.initializer,
                                 read_only=bool(t.read_only))


def _atomic(insn: Any) -> bool:
    """Whether a loopy assignment is atomic (an atomic update or store)."""
    for a in insn.atomicity:
        if not isinstance(a, (lp.AtomicUpdate, lp.AtomicInit)):
            raise Untranslatable(f"instruction '{insn.id}': atomicity {type(a).__name__}")
    return bool(insn.atomicity)


def _arg_extremum(insn: Any, conv: _FromLoopy, common: dict) -> list:
    """``m, i = argmax(k, a[k], k)`` as kernelcore's ``m = max(k, a[k])``
    (id kept) and ``i = argmax(k, a[k])`` (id ``<id>_index``)."""
    red = insn.expression
    name = str(red.operation)
    value, index = red.expr if isinstance(red.expr, tuple) else (red.expr, None)
    if len(insn.assignees) != 2 or len(red.inames) != 1 or index != prim.Variable(
            red.inames[0]):
        raise Untranslatable(f"instruction '{insn.id}': {name} reporting other than its "
                             "one reduction iname")
    inames = tuple(red.inames)
    value = conv(value)
    extremum = lp2.Assignment(assignee=conv(insn.assignees[0]),
                              expression=Reduction(name[3:], inames, value), **common)
    # (the index has the kernel's index type, as in loopy)
    index_dtype = _np_dtype(conv.knl.index_dtype) or np.dtype(np.int32)
    at = lp2.Assignment(assignee=conv(insn.assignees[1]),
                        expression=TypeCast(index_dtype, Reduction(name, inames, value)),
                        **{**common, "id": f"{insn.id}_index"})
    return [extremum, at]


def _instruction(insn: Any, conv: _FromLoopy) -> list:
    """The kernelcore instructions of a loopy instruction."""
    LoopyReduction, SubArrayRef = _lp_symbolic.Reduction, _lp_symbolic.SubArrayRef
    common = dict(id=insn.id, depends_on=frozenset(insn.depends_on),
                  within_inames=frozenset(insn.within_inames), priority=insn.priority,
                  no_sync_with=frozenset(insn.no_sync_with),
                  predicates=frozenset(conv(p) for p in insn.predicates))
    if isinstance(insn, lp.Assignment):
        return [lp2.Assignment(assignee=conv(insn.assignee), expression=conv(insn.expression),
                               atomic=_atomic(insn), **common)]
    if isinstance(insn, lp.CallInstruction):
        expr = insn.expression
        if isinstance(expr, LoopyReduction) and str(expr.operation) in ("argmax", "argmin"):
            return _arg_extremum(insn, conv, common)
        if not isinstance(expr, prim.Call):
            raise Untranslatable(f"instruction '{insn.id}' assigns several values of {expr}")
        swept = {v.name for e in (*insn.assignees, *expr.parameters)
                 if isinstance(e, SubArrayRef) for v in e.swept_inames}
        common["within_inames"] = common["within_inames"] - swept
        return [lp2.CallInstruction(tuple(conv(a) for a in insn.assignees), conv(expr),
                                    **common)]
    if isinstance(insn, lp.BarrierInstruction):
        return [BarrierInstruction(synchronization_kind=insn.synchronization_kind,
                               mem_kind=insn.mem_kind, **common)]
    if isinstance(insn, lp.NoOpInstruction):
        return [lp2.NoOpInstruction(**common)]
    raise Untranslatable(f"instruction '{insn.id}' is a {type(insn).__name__}")


def _instructions(knl: Any, conv: _FromLoopy) -> list:
    """The kernelcore instructions of loopy kernel *knl*, dependencies on
    an instruction that became two naming both."""
    insns = [new for insn in knl.instructions for new in _instruction(insn, conv)]
    ids = {i.id for i in insns}
    split = {i.id[:-len("_index")]: i.id for i in insns
             if i.id.endswith("_index") and i.id[:-len("_index")] in ids}
    if not split:
        return insns
    return [i.copy(depends_on=frozenset(i.depends_on) | {split[d] for d in i.depends_on
                                                         if d in split and d != i.id})
            for i in insns]


class _Accesses(WalkMapper):
    """The subscripts of each variable in an expression, and its bare reads."""

    def __init__(self) -> None:
        self.subscripts: dict[str, list[tuple]] = {}
        self.bare: set[str] = set()

    def map_subscript(self, expr, *args, **kwargs):
        if isinstance(expr.aggregate, prim.Variable):
            index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            self.subscripts.setdefault(expr.aggregate.name, []).append(index)
            for i in index:
                self.rec(i)
        else:
            super().map_subscript(expr, *args, **kwargs)

    def map_variable(self, expr, *args, **kwargs):
        self.bare.add(expr.name)


def _name(assignee: Any) -> str:
    target = assignee.aggregate if isinstance(assignee, prim.Subscript) else assignee
    return getattr(target, "name", str(target))


def _phases(insns: list) -> list[list]:
    """The assignments of *insns* (kernelcore instructions) grouped by the
    global barriers they come after (each group runs as device kernels of
    its own); no groups when a local barrier is among them."""
    by_id = {i.id: i for i in insns}
    barriers: dict[str, frozenset[str]] = {}

    def after(insn: Any) -> frozenset[str]:
        if insn.id not in barriers:
            barriers[insn.id] = frozenset()         # (a cycle: kernelcore refuses it)
            found: frozenset[str] = frozenset()
            for d in insn.depends_on:
                if d in by_id:
                    found |= after(by_id[d])
                    if isinstance(by_id[d], BarrierInstruction):
                        found |= {d}
            barriers[insn.id] = found
        return barriers[insn.id]

    groups: dict[frozenset[str], list] = {}
    for insn in insns:
        if isinstance(insn, BarrierInstruction) and insn.synchronization_kind != "global":
            return []
        if isinstance(insn, lp2.Assignment):
            groups.setdefault(after(insn), []).append(insn)
    return list(groups.values())


def _declared_concurrent(knl: Any) -> frozenset[str]:
    """The inames of loopy kernel *knl* that meshmode's
    ``ConcurrentElementInameTag`` declares free of dependencies between
    iterations (none without meshmode)."""
    meshmode = sys.modules.get("meshmode.transform_metadata")   # (tags of it: imported)
    if meshmode is None:
        return frozenset()
    return frozenset(name for name, iname in knl.inames.items()
                     if any(isinstance(t, meshmode.ConcurrentElementInameTag)
                            for t in iname.tags))


def _spread_iname(knl: Any, insns: list, declared: frozenset[str]) -> str | None:
    """The loop of the (kernelcore) assignments *insns* of loopy kernel
    *knl* that can run in parallel: every instruction is inside it and
    either *declared* names it or every array written (argument or temporary
    with a shape) is indexed by it alone, on the same axis, wherever it is
    accessed (so its iterations touch disjoint parts; arrays only ever
    accessed by atomic instructions aside). The outermost such loop, or
    None."""
    common = frozenset.intersection(*(frozenset(i.within_inames) for i in insns))
    if not common:
        return None
    seen = _Accesses()
    written: set[str] = set()
    plain: set[str] = set()         # (variables non-atomic instructions access)
    for insn in insns:
        for e in insn.expressions():
            seen(e)
        names = {_name(a) for a in insn.assignees}
        written |= names
        if not insn.atomic:
            plain |= names | insn.read_dependency_names()
    scalars = {t.name for t in knl.temporary_variables.values() if not t.shape}
    arrays = {n for n in written - scalars if n in plain}

    def disjoint(g: str) -> bool:
        for name in arrays:
            if name in seen.bare:
                return False
            indices = seen.subscripts.get(name, [])
            axes = set(range(min((len(ix) for ix in indices), default=0)))
            for ix in indices:
                axes &= {k for k, e in enumerate(ix) if e == prim.Variable(g)}
            if not axes:
                return False
        return True

    order = [n for d in knl.domains for n in d.get_var_names(isl.dim_type.set)]
    for g in sorted(common, key=lambda n: order.index(n) if n in order else len(order)):
        if g in declared or disjoint(g):
            return g
    return None


class Translation:
    """A loopy program's entry kernel re-created in kernelcore: *kernel* as
    written, *spread* with a loop spread over the device (None: the kernel
    tags its own, or no loop can be)."""

    def __init__(self, kernel: Any, spread: Any, name: str):
        self.kernel = kernel
        self.spread = spread
        self.name = name


def entry_kernel(k: Any) -> Any:
    """The kernel of a kernelcore translation unit (or the kernel itself)."""
    return getattr(k, "default_entrypoint", k)


def _assumptions(knl: Any) -> Any:
    """The loopy kernel's assumptions on its parameters (None: none)."""
    a = knl.assumptions
    if a is None or a.is_universe():
        return None
    return isl.Set.from_basic_set(a) if isinstance(a, isl.BasicSet) else a


def _kernel(knl: Any, make: Callable[..., Any]) -> Any:
    """Loopy kernel *knl* re-created in kernelcore by *make*
    (``make_kernel`` or ``make_function``), and its instructions."""
    InameImplementationTag = _lp_data.InameImplementationTag
    if knl.substitutions:
        knl = lp.expand_subst(knl)
    conv = _FromLoopy(knl)
    data = [_argument(a, conv) for a in knl.args]
    data += [_temporary(t, conv) for t in knl.temporary_variables.values()]
    insns = _instructions(knl, conv)
    tags = {name: str(tag) for name, iname in knl.inames.items() for tag in iname.tags
            if isinstance(tag, InameImplementationTag)}
    try:
        made = make(
            [str(d) for d in knl.domains], insns, data, name=knl.name,
            assumptions=_assumptions(knl),
            options=lp2.Options(return_dict=True, no_numpy=True),
            lang_version=MOST_RECENT_LANGUAGE_VERSION,
            silenced_warnings=list(knl.silenced_warnings) or None,
            index_dtype=_np_dtype(knl.index_dtype) or np.int32)
        if tags:
            made = lp2.tag_inames(made, tags)
    except Untranslatable:
        raise
    except Exception as e:
        raise Untranslatable(f"kernelcore refused kernel '{knl.name}': "
                             f"{type(e).__name__}: {e}") from e
    return made, insns, tags


def translate(t_unit: Any) -> Translation:
    """*t_unit*'s entry kernel, and the kernels it calls, in kernelcore
    (raises :class:`Untranslatable`)."""
    CallableKernel = _lp_interface.CallableKernel
    knl = getattr(t_unit, "default_entrypoint", t_unit)
    made, insns, tags = _kernel(knl, lp2.make_kernel)
    callees = [_kernel(c.subkernel, lp2.make_function)[0]
               for name, c in getattr(t_unit, "callables_table", {}).items()
               if isinstance(c, CallableKernel) and name != knl.name]
    if callees:
        try:
            made = lp2.merge([made, *callees])
        except Exception as e:
            raise Untranslatable(f"kernelcore refused the calls of '{knl.name}': "
                                 f"{type(e).__name__}: {e}") from e
    if any(t.startswith(("g.", "l.")) for t in tags.values()):
        return Translation(made, None, knl.name)
    declared = _declared_concurrent(knl)
    spread = None
    for phase in _phases(insns):
        g = _spread_iname(knl, phase, declared)
        if g is None:
            continue
        try:
            spread = lp2.split_iname(made if spread is None else spread, g, GROUP_SIZE,
                                     outer_tag="g.0", inner_tag="l.0")
        except Exception as e:          # (then the kernel runs as written)
            logger.info("call_loopy: kept loop %s of %s sequential: %s", g, knl.name, e)
            return Translation(made, None, knl.name)
    return Translation(made, spread, knl.name)


__all__ = ["GROUP_SIZE", "entry_kernel", "Translation", "translate", "Untranslatable"]
