"""Instruction forms that :func:`~kernelcore.make_kernel` rewrites into
kernelcore's own: reductions and casts written as calls, loopy's sub-array
references, segmented scans, ``make_tuple`` and two-output arg-reductions.

Public names: ReductionResolver, SubArrayLowering, split_arg_reductions, slice_ends,
slice_accesses,
add_inames_from_temporaries; as_options and apply_queries (make_kernel's options and
its instructions' dep_query/nosync_query).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError, ParseError, UnknownNameError
from kernelcore.ir.domain import (
    NotAffineError,
    aff_to_expr,
    expr_to_pw_aff,
    project_to,
    static_range,
)
from kernelcore.ir.expr import (
    IdentityMapper,
    Reduction,
    TypeCast,
    get_dependencies,
    is_reduction_name,
)
from kernelcore.ir.instruction import assignee_subscript, assignee_var_name
from kernelcore.ir.kernel import LoopKernel
from kernelcore.match import parse_match
from kernelcore.options import Options
from kernelcore.parse import ParsedInstruction


class ReductionResolver(IdentityMapper):
    """Calls ``sum(k, e)``, ``reduce(sum, k, e)``, ``simul_reduce(sum, k, e)`` (and
    ``max/min(k, e)`` with k an iname) -> Reduction;
    ``float32(e)`` and the other dtype names -> TypeCast."""

    def __init__(self, inames: set[str]):
        self.inames = inames

    def _reduction_inames(self, arg):
        if isinstance(arg, prim.Variable):
            names = (arg.name,)
        elif isinstance(arg, (tuple, list)) and all(
                isinstance(a, prim.Variable) for a in arg):     # (none: the value itself)
            names = tuple(a.name for a in arg)
        else:
            return None
        return names

    def map_call(self, expr: prim.Call) -> Any:
        fn = expr.function
        params = expr.parameters
        if isinstance(fn, prim.Variable) and fn.name in ("reduce", "simul_reduce") \
                and len(params) == 3 and isinstance(params[0], prim.Variable):
            # reduce(op, inames, expr); simul_reduce: the same, allow_simultaneous
            red = self.map_call(prim.Call(params[0], params[1:]))
            if not isinstance(red, Reduction):
                raise ParseError(f"{expr}: '{params[0].name}' is not a reduction over "
                                 f"inames {params[1]}")
            return dataclasses.replace(red, allow_simultaneous=fn.name == "simul_reduce")
        segmented = _segmented_op(expr)
        if segmented is not None:       # reduce(segmented(op), inames, value, flag)
            names = self._reduction_inames(params[1])
            if names is None or any(n not in self.inames for n in names):
                raise ParseError(f"{expr}: the second argument must name inames")
            return Reduction(segmented, names, (self.rec(params[2]), self.rec(params[3])))
        if isinstance(fn, prim.Variable) and fn.name in ("argmax", "argmin") \
                and len(params) == 3:     # argmax(k, value, index): index at the largest
            names = self._reduction_inames(params[0])
            if names is None or len(names) != 1 or names[0] not in self.inames:
                raise ParseError(f"{expr}: {fn.name}() reduces over exactly one iname")
            return Reduction(fn.name, names, (self.rec(params[1]), self.rec(params[2])))
        if isinstance(fn, prim.Variable) and is_reduction_name(fn.name) and len(params) == 2:
            names = self._reduction_inames(params[0])
            is_reduction = names is not None and (
                fn.name not in ("max", "min") or all(n in self.inames for n in names))
            if is_reduction:
                unknown = [n for n in names if n not in self.inames]
                if unknown:
                    raise UnknownNameError(
                        f"reduction {fn.name}() over unknown iname(s) "
                        f"{', '.join(unknown)}: declare them in a domain")
                return Reduction(fn.name, names, self.rec(params[1]))
            if fn.name.startswith("arg") and names is not None and len(names) != 1:
                raise ParseError(f"{fn.name}() reduces over exactly one iname")
            if fn.name not in ("max", "min"):
                raise ParseError(f"{fn.name}() needs an iname or a tuple of inames as "
                                 f"first argument, got {params[0]}")
        if isinstance(fn, prim.Variable) and fn.name in _CAST_NAMES:
            if len(params) != 1:
                raise ParseError(f"cast {fn.name}() takes one argument, got {len(params)}")
            return TypeCast(np.dtype(fn.name), self.rec(params[0]))
        return prim.Call(fn, tuple(self.rec(p) for p in params))

    def map_constant(self, expr: Any) -> Any:
        return expr


_CAST_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "complex64", "complex128", "bool"}


class SubArrayLowering(IdentityMapper):
    """loopy's sub-array references as the slices calls take:
    ``[j]: a[i, j]`` becomes ``a[i, lo:hi+1]`` (the range of *j*), and
    ``[j]: a[c*j + d]`` (c a positive integer, d free of *j*) the slice
    ``a[c*lo + d : c*hi + d + 1 : c]``. Each swept iname must appear in
    one subscript, in the order of the axes; a reference that is no such slice
    goes to *packer* (a :class:`~kernelcore.sub_array_pack.SubArrayPacker`),
    if given, and is refused otherwise."""

    def __init__(self, proto: LoopKernel, arrays: dict[str, Any] | None = None,
                 packer: Any = None):
        self.proto = proto
        self.arrays = arrays or {}
        self.packer = packer

    def map_subscript(self, expr: prim.Subscript, *args: Any, **kwargs: Any) -> Any:
        if isinstance(expr.index, list):
            return self._linear(expr)
        return super().map_subscript(expr, *args, **kwargs)

    def _linear(self, expr: prim.Subscript) -> Any:
        """loopy's linear subscript ``a[[e]]``: element *e* of *a* counted in
        memory order (for a declared multi-axis array, contiguous in its order)."""
        given: Any = expr.index
        if len(given) != 1:
            raise ParseError(f"linear subscript {expr}: expected one index, a[[e]]")
        flat: Any = self.rec(given[0])
        var: Any = self.arrays.get(str(getattr(expr.aggregate, "name", "")))
        shape = getattr(var, "shape", None)
        if var is None or not isinstance(shape, tuple) or len(shape) <= 1:
            return prim.Subscript(expr.aggregate, (flat,))
        if var.strides is not None:
            raise ParseError(f"linear subscript {expr}: '{var.name}' has explicit "
                             "strides; kernelcore takes linear subscripts of arrays "
                             "contiguous in C or F order only")
        axes = list(range(len(shape)))
        if var.order == "F":
            axes.reverse()
        index: list[Any] = [None] * len(shape)
        inner: Any = 1
        for k in reversed(axes):
            scaled = flat if inner == 1 else prim.FloorDiv(flat, inner)
            index[k] = scaled if k == axes[0] else prim.Remainder(scaled, shape[k])
            inner = shape[k] if inner == 1 else prim.Product((inner, shape[k]))
        return prim.Subscript(expr.aggregate, tuple(index))

    def map_sub_array_ref(self, expr: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._as_slices(expr)
        except UnknownNameError:
            raise
        except ParseError as refused:
            if self.packer is None or not isinstance(expr.subscript, prim.Subscript):
                raise
            try:
                return self.packer.pack(expr, self.rec(expr.subscript))
            except KernelcoreError:
                raise refused from None

    def _as_slices(self, expr: Any) -> Any:
        swept = [v.name for v in expr.swept_inames]
        sub = expr.subscript
        if not isinstance(sub, prim.Subscript):
            raise ParseError(f"sub-array reference {expr}: expected an array access")
        used: list[str] = []
        index = []
        for ix in assignee_subscript(sub):
            names = get_dependencies(ix) & set(swept)
            if not names:
                index.append(self.rec(ix))
                continue
            if len(names) != 1:
                raise ParseError(f"sub-array reference {expr}: kernelcore takes one swept "
                                 f"iname per subscript, got {ix}")
            (name,) = names
            used.append(name)
            index.append(self._slice(expr, name, ix))
        if used != swept:
            raise ParseError(f"sub-array reference {expr}: the swept inames must each "
                             "index one axis, in the order of the axes")
        return prim.Subscript(sub.aggregate, tuple(index))

    def _slice(self, expr: Any, iname: str, ix: Any) -> prim.Slice:
        if iname not in self.proto.all_inames():
            raise UnknownNameError(f"sub-array reference over unknown iname '{iname}'")
        try:
            lo, hi = static_range(self.proto, iname)
        except KernelcoreError:
            try:
                lo, hi = _parametric_range(self.proto, iname, expr)
            except ParseError:
                if ix == prim.Variable(iname):
                    return prim.Slice((None, None))     # the whole axis
                raise
        if ix == prim.Variable(iname):
            return prim.Slice((None if lo == 0 else lo, _simplify_sum(hi, 1)))
        step, offset = _affine_in(self.proto, ix, iname)
        if step is None or step <= 0:
            raise ParseError(f"sub-array reference {expr}: the subscript {ix} must be "
                             f"c*{iname} + d with c a positive integer and d free of {iname}")
        first = _simplify_sum(offset, step * lo)
        return prim.Slice((first, _simplify_sum(_simplify_sum(offset, step * hi), 1), step))


def _parametric_range(proto: LoopKernel, iname: str, expr: Any) -> tuple[Any, Any]:
    """The smallest and largest value of *iname* as expressions in the
    parameters."""
    dom = project_to(proto.get_inames_domain([iname]), [iname])
    ends = []
    for pw in (dom.dim_min(0), dom.dim_max(0)):
        pieces = pw.get_pieces()
        if len(pieces) != 1:
            raise ParseError(f"sub-array reference {expr}: the range of '{iname}' is not "
                             "one affine expression in the parameters")
        ends.append(aff_to_expr(pieces[0][1]))
    return ends[0], ends[1]


def _affine_in(proto: LoopKernel, ix: Any, iname: str) -> tuple[int | None, Any]:
    """(c, d) with *ix* = c*iname + d, d free of *iname*; (None, None) if
    there are none."""
    space = proto.space
    try:
        aff_pieces = expr_to_pw_aff(ix, space).get_pieces()
    except NotAffineError:
        return None, None
    if len(aff_pieces) != 1:
        return None, None
    aff = aff_pieces[0][1]
    pos = list(proto.all_inames()).index(iname)
    coeff = aff.get_coefficient_val(isl.dim_type.in_, pos)
    if not coeff.is_int():
        return None, None
    step = coeff.to_python()
    rest = aff.set_coefficient_val(isl.dim_type.in_, pos, 0)
    if rest.involves_dims(isl.dim_type.in_, pos, 1):
        return None, None
    return int(step), aff_to_expr(rest)


def _simplify_sum(a: Any, b: Any) -> Any:
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) + int(b)
    if isinstance(b, (int, np.integer)) and b == 0:
        return a
    if isinstance(a, (int, np.integer)) and a == 0:
        return b
    return prim.Sum((a, b))


def add_inames_from_temporaries(insns: list, final: set[str], temporaries: set[str],
                                proto: LoopKernel) -> list:
    """loopy's iname inference through temporaries: an instruction (whose
    inames are not final: not in *final*, the ids of instructions inside
    ``for`` blocks, nor marked so) that reads a temporary runs in the loops every
    writer of that temporary runs in (but does not index it with), and in
    those of the writers of temporaries that bound its loops (data-dependent
    domains); repeated until nothing changes."""
    params_of = {n: proto.domain_param_names(n) for n in proto.all_inames()}
    inames = {i.id: frozenset(i.within_inames) for i in insns}
    writers: dict[str, list] = {}
    for insn in insns:
        for name in insn.assignee_names() & temporaries:
            writers.setdefault(name, []).append(insn)

    def implicit(name: str) -> frozenset[str]:
        found = None
        for w in writers.get(name, ()):
            targets = getattr(w, "assignees", ())
            targets = targets() if callable(targets) else targets
            indexed = frozenset().union(*(
                get_dependencies(ix) for a in targets if assignee_var_name(a) == name
                for ix in assignee_subscript(a)))
            own = inames[w.id] - indexed
            found = own if found is None else found & own
        return found or frozenset()

    changed = True
    while changed:
        changed = False
        for insn in insns:
            if insn.within_inames_is_final or insn.id in final:
                continue
            new = set(inames[insn.id])
            for name in insn.read_dependency_names() & temporaries:
                new |= implicit(name)
            for iname in list(new):
                for par in params_of.get(iname, ()):
                    if par in temporaries:
                        new |= implicit(par)
            new -= insn.reduction_inames()
            new |= inames[insn.id]
            if new != inames[insn.id]:
                inames[insn.id] = frozenset(new)
                changed = True
    return [i if inames[i.id] == i.within_inames else i.copy(within_inames=inames[i.id])
            for i in insns]


def slice_ends(index: tuple) -> list[tuple]:
    """For an array subscript with slices, the subscripts of its lowest and
    highest elements (slices with an explicit stop; none if a slice runs to
    the end of its axis, whose extent it does not tell); *index* itself if it
    has no slices."""
    return [ends for ends, _ in slice_accesses(index)]


def slice_accesses(index: tuple) -> list[tuple[tuple, tuple]]:
    """:func:`slice_ends`, each with the expressions that are >= 0 where the
    slices are not empty (where their elements are accessed)."""
    if not any(isinstance(i, prim.Slice) for i in index):
        return [(index, ())]
    low, high, nonempty = [], [], []
    for ix in index:
        if not isinstance(ix, prim.Slice):
            low.append(ix)
            high.append(ix)
            continue
        start, stop, step = (list(ix.children) + [None] * 3)[:3]
        step = 1 if step is None else step
        if stop is None or not isinstance(step, int) or step == 0:
            return []
        start = (0 if step > 0 else None) if start is None else start
        if start is None:
            return []
        if isinstance(start, int) and isinstance(stop, int):
            count = max(0, -((start - stop) // step))
            if count == 0:
                return []
            last: Any = start + step * (count - 1)
        else:
            last = stop - 1 if step > 0 else stop + 1
            nonempty.append(last - start if step > 0 else start - last)
        low.append(start if step > 0 else last)
        high.append(last if step > 0 else start)
    return [(tuple(low), tuple(nonempty)), (tuple(high), tuple(nonempty))]


def _segmented_op(expr) -> str | None:
    """``segmented(op)`` (or ``segmented_flag(op)``) for a call
    ``reduce(segmented(op), inames, value, flag)``, else None."""
    if not (isinstance(expr, prim.Call) and expr.function == prim.Variable("reduce")
            and len(expr.parameters) == 4):
        return None
    kind = expr.parameters[0]
    if (isinstance(kind, prim.Call) and isinstance(kind.function, prim.Variable)
            and kind.function.name in ("segmented", "segmented_flag")
            and len(kind.parameters) == 1 and isinstance(kind.parameters[0], prim.Variable)
            and kind.parameters[0].name in ("sum", "product", "max", "min")):
        return f"{kind.function.name}({kind.parameters[0].name})"
    raise ParseError(f"{expr}: a four-argument reduce() is a segmented scan, "
                     "reduce(segmented(sum|product|max|min), inames, value, flag)")


def _second_output(pi: ParsedInstruction, expression, suffix: str) -> ParsedInstruction:
    """The instruction computing the second of *pi*'s two outputs from *expression*
    (its id: *pi*'s with *suffix*; its temporary declaration: the one written
    before the second assignee)."""
    declared = pi.extra.get("assignee_types", {}).get(1)
    return dataclasses.replace(
        pi, assignee=pi.assignee[1], expression=expression,
        temp_var_type=declared if declared is not None else None,
        id=None if pi.id is None else f"{pi.id}_{suffix}",
        extra={**pi.extra, "inames_of": pi.assignee[0]})   # runs where the first one does


def _split_segmented(pi: ParsedInstruction) -> list:
    """``v[i], f[i] = reduce(segmented(op), j, value, flag)`` as one instruction
    for the values and one for the flags (id suffix ``_flag``)."""
    if len(pi.assignee) != 2:
        raise ParseError(f"{pi.source!r}: a segmented reduction has two outputs "
                         "(the values and the segment flags)")
    e = pi.expression
    op = e.parameters[0]
    flag_expr = prim.Call(e.function, (prim.Variable("segmented_flag")(*op.parameters),)
                          + e.parameters[1:])
    return [dataclasses.replace(pi, assignee=pi.assignee[0]),
            _second_output(pi, flag_expr, "flag")]


def _split_make_tuple(pi: ParsedInstruction) -> list:
    """``a, b = make_tuple(x, y)`` as ``a = x`` and ``b = y`` (ids: the
    instruction's, then with ``_1``, ``_2``, ...)."""
    values = pi.expression.parameters
    if len(values) != len(pi.assignee):
        raise ParseError(f"{pi.source!r}: make_tuple() of {len(values)} values assigned "
                         f"to {len(pi.assignee)} places")
    written = {assignee_var_name(a) for a in pi.assignee}
    if any(get_dependencies(v) & written for v in values):
        raise ParseError(f"{pi.source!r}: the values of make_tuple() read what it assigns; "
                         "copy them to temporaries first")
    return [dataclasses.replace(pi, assignee=a, expression=v, extra=dict(pi.extra),
                                id=pi.id if k == 0 or pi.id is None else f"{pi.id}_{k}")
            for k, (a, v) in enumerate(zip(pi.assignee, values))]


def split_arg_reductions(parsed: list) -> list:
    """loopy's two-output reductions ``m[i], idx[i] = argmax(k, a[i, k], k)``
    as two instructions: ``m[i] = max(k, a[i, k])`` and ``idx[i] =
    argmax(k, a[i, k])`` (the second id gets ``_index``); ``make_tuple``
    assignments as one instruction per value (:func:`_split_make_tuple`)."""
    out: list = []
    for pi in parsed:
        e = getattr(pi, "expression", None)
        if (isinstance(pi, ParsedInstruction) and isinstance(pi.assignee, tuple)
                and isinstance(e, prim.Call) and e.function == prim.Variable("make_tuple")):
            out += _split_make_tuple(pi)
            continue
        if isinstance(pi, ParsedInstruction) and isinstance(pi.assignee, tuple) \
                and _segmented_op(e) is not None:
            out += _split_segmented(pi)
            continue
        if not (isinstance(pi, ParsedInstruction) and isinstance(pi.assignee, tuple)
                and isinstance(e, prim.Call) and isinstance(e.function, prim.Variable)
                and e.function.name in ("argmax", "argmin")):
            out.append(pi)
            continue
        if len(pi.assignee) != 2 or len(e.parameters) != 3:
            raise ParseError(f"{pi.source!r}: a two-output {e.function.name} is written "
                             f"'m[i], idx[i] = {e.function.name}(k, a[i, k], k)'")
        over, value, index = e.parameters
        names = [v.name for v in (over if isinstance(over, tuple) else (over,))
                 if isinstance(v, prim.Variable)]
        if len(names) != 1:
            raise ParseError(f"{pi.source!r}: {e.function.name} reduces over exactly one "
                             "iname")
        op = "max" if e.function.name == "argmax" else "min"
        out.append(dataclasses.replace(pi, assignee=pi.assignee[0],
                                       expression=prim.Variable(op)(over, value)))
        # the index reported: the iname itself, or any expression at that iteration
        second = e.function(over, value) if index == prim.Variable(names[0]) \
            else e.function(over, value, index)
        out.append(_second_output(pi, second, "index"))
    return out


def as_options(options: Any) -> Options:
    """*options* as :class:`Options`: also loopy's forms, a dict of flags or a
    string of flag names (``"write_code, return_dict"``)."""
    if options is None:
        return Options()
    if isinstance(options, dict):
        return Options().with_updates(**options)
    if isinstance(options, str):
        return Options().with_updates(options)
    return options


def apply_queries(knl: LoopKernel, queries: Any) -> LoopKernel:
    """The instruction options ``dep_query=MATCH`` (depend on the instructions
    matched) and ``nosync_query=MATCH[@SCOPE]`` (need no synchronization with them)."""
    insns = dict(knl.id_to_insn)
    for insn_id, dep_query, nosync_query in queries:
        insn = insns[insn_id]
        if dep_query:
            match = parse_match(dep_query)
            insn = insn.copy(depends_on=insn.depends_on | {
                i.id for i in knl.instructions if i.id != insn_id and match(knl, i)})
        if nosync_query:
            query, _, scope = nosync_query.partition("@")
            match = parse_match(query)
            insn = insn.copy(no_sync_with=insn.no_sync_with | {
                (i.id, scope or "any") for i in knl.instructions
                if i.id != insn_id and match(knl, i)})
        insns[insn_id] = insn
    return knl.copy(instructions=tuple(insns[i.id] for i in knl.instructions))
