"""Whether a reduction is a scan: loopy's rule for ``realize_reduction(force_scan=True)``.

A reduction over one iname ``j`` in an instruction running in a sweep iname
``i`` is a scan when its domain is triangular: ``i`` runs over a range,
``j`` starts at the same value for every ``i``, takes one value at the first
``i`` and ``stride`` (a constant >= 1) more at each next ``i``, and no other
iname of the domain constrains ``i`` or ``j``.

Public names: check_scans.
"""

from __future__ import annotations

import islpy as isl

from kernelcore.diagnostic import ReductionIsNotTriangularError
from kernelcore.ir.domain import move_names_to_params, project_to
from kernelcore.ir.expr import find_reductions
from kernelcore.ir.instruction import Assignment
from kernelcore.ir.kernel import LoopKernel

dim_type = isl.dim_type


def _bound_by(knl: LoopKernel, sweep: str, scan: str) -> bool:
    """Whether the range of *scan* changes with *sweep*."""
    m = _sweep_map(project_to(knl.get_inames_domain([sweep, scan]), [sweep, scan]),
                   sweep, scan)
    return not m.is_equal(isl.Map.from_domain_and_range(m.domain(), m.range()))


def _sweep_map(dom: isl.Set, sweep: str, scan: str) -> isl.Map:
    """*dom* (set dims *sweep* and *scan*) as the map sweep -> scan."""
    m = isl.Map.from_range(dom)
    return m.move_dims(dim_type.in_, 0, dim_type.out, dom.get_var_dict()[sweep][1], 1)


def _basic_sets(dom) -> list:
    return [dom] if isinstance(dom, isl.BasicSet) else dom.get_basic_sets()


def _single_constant(s: isl.Set) -> int | None:
    """The one constant value of the one-dimensional *s*, else None."""
    lo, hi = s.dim_min(0).get_pieces(), s.dim_max(0).get_pieces()
    if len(lo) != 1 or len(hi) != 1 or not (lo[0][1].is_cst() and hi[0][1].is_cst()):
        return None
    low, high = lo[0][1].get_constant_val(), hi[0][1].get_constant_val()
    return low.get_num_si() if low.eq(high) and low.is_int() else None


def check_triangular(knl: LoopKernel, insn: Assignment, scan: str,
                     sweep: str | None = None) -> str:
    """The sweep iname of the scan over *scan* in *insn* (*sweep* if given);
    raises :class:`ReductionIsNotTriangularError` if the domain is not triangular."""
    def fail(why: str) -> ReductionIsNotTriangularError:
        return ReductionIsNotTriangularError(
            f"in kernel {knl.name}: the reduction over '{scan}' in instruction "
            f"'{insn.id}' is not a scan: {why}")

    within = insn.within_inames
    if sweep is None:
        candidates = [i for i in sorted(within) if _bound_by(knl, i, scan)] or (
            sorted(within) if len(within) == 1 else [])   # one sweep value: one candidate
        if len(candidates) != 1:
            raise fail(f"{'several' if candidates else 'no'} inames of the instruction "
                       f"bound '{scan}' ({', '.join(candidates)}): name the sweep iname "
                       "with force_outer_iname_for_scan")
        (sweep,) = candidates
    outside = set(knl.all_inames()) - within - {scan}
    holding = {knl.domains[knl._iname_to_domain[n]] for n in (sweep, scan)}
    for basic in (b for dom in holding for b in _basic_sets(dom)):
        for constraint in basic.get_constraints():
            names = {n for n, c in constraint.get_coefficients_by_name().items()
                     if n != 1 and not c.is_zero()}
            if names & {sweep, scan} and names & outside:
                raise fail(f"other inames constrain '{sweep}' or '{scan}' ({constraint})")
    others = sorted(within - {sweep})
    dom = project_to(move_names_to_params(knl.get_inames_domain(within | {scan}), others),
                     [sweep, scan])
    m = _sweep_map(dom, sweep, scan)
    first, last = m.lexmin(), m.lexmax()
    sweeps = m.domain()
    starts = first.range()
    if not first.is_equal(isl.Map.from_domain_and_range(sweeps, starts)):
        raise fail(f"'{scan}' does not start at the same value for every '{sweep}'")
    if not last.intersect_domain(sweeps.lexmin()).range().is_equal(starts):
        raise fail(f"'{scan}' takes more than one value at the first '{sweep}'")
    step = isl.Map(f"{{ [{sweep}] -> [{sweep} + 1] }}").align_params(m.space)
    step = step.intersect_domain(sweeps).intersect_range(sweeps)
    growth = last.reverse().apply_range(step.apply_range(last)).deltas()
    if not growth.is_empty():
        stride = _single_constant(growth)
        if stride is None or stride < 1:
            raise fail(f"'{scan}' does not grow by a constant stride with '{sweep}'")
    return sweep


def check_scans(knl: LoopKernel, insn_ids: set[str] | None = None,
                sweep: str | None = None) -> None:
    """Raise :class:`ReductionIsNotTriangularError` unless every reduction (in
    the instructions *insn_ids*, if given) is a scan (see the module docstring)."""
    for insn in knl.instructions:
        if not isinstance(insn, Assignment) or (insn_ids is not None
                                                and insn.id not in insn_ids):
            continue
        for red in find_reductions(insn.expression):
            if len(red.inames) != 1:
                raise ReductionIsNotTriangularError(
                    f"in kernel {knl.name}: instruction '{insn.id}' reduces over "
                    f"{', '.join(red.inames)}: a scan reduces over one iname")
            check_triangular(knl, insn, red.inames[0], sweep)


__all__ = ["check_scans"]
