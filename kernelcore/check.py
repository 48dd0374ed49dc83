"""Checks of a preprocessed kernel that catch wrong programs before they run:
two loops of one instruction on one hardware axis, array accesses outside
their arrays (:mod:`kernelcore.check_bounds`), write races and missing global
barriers.

Public names: check_kernel, check_hw_axes_unique.
"""

from __future__ import annotations

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.check_bounds import affine_condition, affine_pw_aff, check_bounds, kernel_params
from kernelcore.check_ordering import Reachable
from kernelcore.check_overlap import accesses_may_meet_across
from kernelcore.diagnostic import (
    KernelcoreError,
    MissingBarrierError,
    WriteRaceConditionWarning,
    warn_with_kernel,
)
from kernelcore.ir.data import AddressSpace, ArrayArg, ValueArg
from kernelcore.ir.data_params import data_dependent_inames
from kernelcore.ir.domain import NotAffineError, align_to, project_to
from kernelcore.ir.expr import WalkMapper, find_reductions, get_dependencies
from kernelcore.ir.instruction import (
    Assignment,
    BarrierInstruction,
    assignee_subscript,
    assignee_var_name,
)
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import LocalIndexTag, is_hw_parallel

dim_type = isl.dim_type


class _Reads(WalkMapper):
    def __init__(self, name: str):
        self.name = name
        self.indices: list[tuple] = []

    def map_subscript(self, expr):
        agg = expr.aggregate
        if getattr(agg, "name", None) == self.name:
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            self.indices.append(idx)
        for i in (expr.index if isinstance(expr.index, tuple) else (expr.index,)):
            self.rec(i)

    def map_constant(self, expr):
        pass

    map_nan = map_constant


def _silenced(knl, kind: str, insn_id: str) -> bool:
    return f"{kind}({insn_id})" in knl.silenced_warnings or kind in knl.silenced_warnings


def check_data_dependent_bounds(knl: LoopKernel) -> None:
    """Raise if an iname whose bounds the kernel computes runs on a hardware
    axis (the launch size must be known before the kernel runs)."""
    for iname, params in data_dependent_inames(knl).items():
        for insn in knl.instructions:
            written = insn.assignee_names() & params
            if written and iname in insn.within_inames:
                raise KernelcoreError(
                    f"kernel {knl.name}: temporary '{sorted(written)[0]}' bounds loop "
                    f"'{iname}' but instruction '{insn.id}' writes it inside that loop; "
                    "compute a loop bound before the loop (or rename the temporary if it "
                    "should not be the domain parameter of that name)")
        if is_hw_parallel(knl.iname_tags.get(iname)):
            raise KernelcoreError(
                f"kernel {knl.name}: iname '{iname}' is tagged {knl.iname_tags[iname]} but "
                f"its bounds depend on {', '.join(sorted(params))}, computed by the "
                "kernel; only sequential loops may have data-dependent bounds")


def check_kernel(knl: LoopKernel) -> None:
    """Raise if an instruction runs two loops on one hardware axis, an array
    access may leave its array, the kernel would race, or it moves data between
    work-items without a global barrier."""
    check_write_destinations(knl)
    check_hw_axes_unique(knl)
    check_data_dependent_bounds(knl)
    check_bounds(knl)
    hw = {n for n in knl.all_inames() if is_hw_parallel(knl.iname_tags.get(n))
          and any(n in i.within_inames for i in knl.instructions)}
    if not hw:
        return
    # a global barrier ends a device kernel: only the parallel inames of the
    # instructions after the same global barriers share a launch
    reach = Reachable(knl)
    stretch = {i.id: frozenset(a for a in reach[i.id]
                               if _is_global_barrier(knl.id_to_insn[a]))
               for i in knl.instructions}
    launch_axes: dict[frozenset, set] = {}
    for i in knl.instructions:
        launch_axes.setdefault(stretch[i.id], set()).update(
            _axis(knl, n) for n in i.within_inames & hw)
    for insn in knl.instructions:
        axes = launch_axes[stretch[insn.id]]
        if not isinstance(insn, Assignment):
            continue
        name = assignee_var_name(insn.assignee)
        var = knl.arg_dict.get(name) or knl.temporary_variables.get(name)
        if not (isinstance(var, ArrayArg) or getattr(var, "address_space", None)
                == AddressSpace.GLOBAL):
            continue
        if insn.atomic:
            if not getattr(var, "for_atomic", False):
                raise KernelcoreError(
                    f"instruction '{insn.id}' updates '{name}' atomically, but '{name}' is "
                    f"not declared for atomics: use lp.GlobalArg('{name}', ..., "
                    "for_atomic=True)")
            continue
        sub = assignee_subscript(insn.assignee)
        used = set().union(*(get_dependencies(s) for s in sub)) if sub else set()
        if not _silenced(knl, "write_race", insn.id):
            race = _write_race(knl, insn, name, sub, axes, hw)
            if race is not None:
                warn_with_kernel(
                    knl, f"write_race({insn.id})",
                    f"instruction '{insn.id}' writes '{name}' {race}, so several "
                    "work-items write the same element", WriteRaceConditionWarning)
        # reads of the same array at other elements, ordered by a dependency,
        # move data between work-items: that needs a global barrier between them
        for other in knl.instructions:
            reads = _Reads(name)
            for e in other.expressions():
                if isinstance(other, Assignment) and e is other.assignee:
                    continue
                reads(e)
            if other.id == insn.id:
                pair = None
            elif insn.id in reach[other.id]:
                pair = (other.id, insn.id)        # read after write
            elif other.id in reach[insn.id]:
                pair = (insn.id, other.id)        # write after read
            else:
                continue
            for idx in reads.indices:
                if tuple(idx) == tuple(sub):
                    continue
                crossing = sorted((set().union(*(get_dependencies(i) for i in idx))
                                   | used) & hw)
                if not crossing or not accesses_may_meet_across(knl, insn, tuple(sub), other,
                                                                tuple(idx), crossing):
                    continue
                if pair is None:
                    raise KernelcoreError(
                        f"in kernel {knl.name}: instruction '{insn.id}' reads '{name}' at "
                        f"[{', '.join(map(str, idx))}] and writes it at "
                        f"[{', '.join(map(str, sub))}]: other work-items (parallel "
                        f"iname(s) {', '.join(crossing)}) may read what it overwrites")
                later, earlier = pair
                if _separated_by_global_barrier(knl, reach, later, earlier) or \
                        _nosync(knl, later, earlier):
                    continue
                raise MissingBarrierError(
                    f"Dependency '{later} depends on {earlier}' (for variable '{name}') "
                    "requires synchronization by a global barrier (add a '... gbarrier' "
                    "between them, or a 'nosync' instruction option (no_sync_with) to state "
                    "that no synchronization is needed)")


def check_write_destinations(knl: LoopKernel) -> None:
    """Raise if an instruction writes a loop index, a domain parameter or an
    argument passed by value (loopy's rule: these are read-only)."""
    params = set(knl.all_params())
    by_value = {a.name for a in knl.args if isinstance(a, ValueArg)}
    for insn in knl.instructions:
        for name in sorted(insn.assignee_names()):
            if name in knl.all_inames():
                what = "the loop index"
            elif name in params and name not in knl.temporary_variables:
                what = "the domain parameter"
            elif name in by_value:
                what = "the by-value argument"
            else:
                continue
            raise KernelcoreError(
                f"in kernel {knl.name}: instruction '{insn.id}' writes {what} '{name}', "
                "which the kernel may only read: write the value to a temporary "
                f"('<> {name}_new = ...') or to an array argument instead")


def check_hw_axes_unique(knl: LoopKernel) -> None:
    """Raise if two loops of one instruction that run at the same time (its
    inames, and those of the reductions around each point of its expression)
    are on the same hardware axis: that axis would walk only their diagonal."""
    tags = [knl.iname_tags.get(n) for n in knl.all_inames()]
    hw_tags = [t for t in tags if is_hw_parallel(t)]
    if len(set(hw_tags)) == len(hw_tags):
        return
    for insn in knl.instructions:
        for inames in _active_inames(insn):
            seen: dict = {}
            for iname in sorted(inames):
                tag = knl.iname_tags.get(iname)
                if not is_hw_parallel(tag):
                    continue
                if tag in seen:
                    raise KernelcoreError(
                        f"in kernel {knl.name}: instruction '{insn.id}' has inames "
                        f"'{seen[tag]}' and '{iname}' both tagged '{tag}': one hardware "
                        "axis can run only one loop of an instruction (tag one of them "
                        "with another axis, or make it a sequential loop)")
                seen[tag] = iname


def _active_inames(insn) -> list[frozenset[str]]:
    """The sets of inames of *insn* that run together: its own, with those of
    each chain of nested reductions (sibling reductions run one after the other)."""
    result = [frozenset(insn.within_inames)]
    todo = [(red, result[0]) for e in insn.expressions() for red in _outer_reductions(e)]
    while todo:
        red, outer = todo.pop()
        active = outer | frozenset(red.inames)
        result.append(active)
        todo += [(inner, active) for inner in _outer_reductions(red.expr)]
    return result


def _outer_reductions(expr) -> list:
    """The reductions in *expr* that no other reduction in it encloses."""
    found = find_reductions(expr)
    inner = {id(r) for red in found for r in find_reductions(red.expr)}
    return [r for r in found if id(r) not in inner]


def _write_race(knl, insn, name: str, sub: tuple, axes: set, hw: set) -> str | None:
    """How *insn*, a write of global *name* at *sub*, lets two work-items of the
    launch (parallel over *axes*) write one element, or None if it does not.

    Every axis of the launch must be one the instruction loops over, or
    reduces over (the reduction combines into one value). For the parallel
    inames it loops over, the written index must differ between any two
    work-items at the same point of the instruction's sequential loops (where
    its affine predicates hold): ISL decides that for a quasi-affine index;
    otherwise each parallel iname must at least appear in the index."""
    own = insn.within_inames & hw
    missing = axes - {_axis(knl, n) for n in own}
    if missing:
        reduced = {n for e in insn.expressions() for r in find_reductions(e)
                   for n in r.inames}
        missing = missing - {_axis(knl, n) for n in reduced
                             if is_hw_parallel(knl.iname_tags.get(n))}
    missing = sorted(f"{kind}.{axis}" for kind, axis in missing)  # type: ignore[assignment]
    if missing:
        return (f"at an index that does not vary along parallel axis(es) "
                f"{', '.join(missing)}, on which the instruction does not run")
    if not own:
        return None
    try:
        collision = _colliding_writes(knl, insn, name, sub, own)
        if collision is None:
            return None
    except NotAffineError:
        collision = None
    loose = sorted(own - set().union(*(get_dependencies(s) for s in sub)))
    if loose:
        return (f"at an index that does not vary along parallel axis(es) "
                f"{', '.join(str(knl.iname_tags[n]) for n in loose)} (iname(s) "
                f"{', '.join(loose)} are not in its subscript)")
    return collision


def _colliding_writes(knl, insn, name: str, sub: tuple, parallel: set) -> str | None:
    """Two points of *insn* that differ in the *parallel* inames, agree in its
    other inames and write the same element, described; None if there are none.
    Raises :class:`NotAffineError` if the index is not quasi-affine."""
    inames = sorted(insn.within_inames)
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=inames,
                                        params=kernel_params(knl))
    dom = align_to(project_to(knl.get_insn_domain(insn), inames), isl.Set.universe(space))
    if knl.assumptions is not None:
        dom = dom & align_to(knl.assumptions, dom)
    for pred in insn.predicates:
        try:
            dom = dom & affine_condition(pred, lambda e: affine_pw_aff(e, space))
        except NotAffineError:
            pass        # (a data-dependent guard may hold for several work-items)
    # point -> (its sequential inames, the written element): injective unless
    # two work-items write one element at one point of the sequential loops
    index = [affine_pw_aff(s, space) for s in sub]
    sequential = [affine_pw_aff(prim.Variable(n), space) for n in inames if n not in parallel]
    graph = isl.Map.from_domain(dom)
    for part in sequential + index:
        graph = graph.flat_range_product(isl.Map.from_pw_aff(part))
    if graph.is_injective():
        return None
    same = graph.apply_range(graph.reverse()).subtract(
        isl.Map.identity(space.map_from_set()))
    point = same.wrap().sample_point()
    value = [point.get_coordinate_val(dim_type.set, k).to_python()
             for k in range(2 * len(inames))]
    one = ", ".join(f"{n} = {value[k]}" for k, n in enumerate(inames) if n in parallel)
    other = ", ".join(f"{n} = {value[len(inames) + k]}" for k, n in enumerate(inames)
                      if n in parallel)
    first = isl.Set.from_point(point).unwrap().domain().sample_point()
    element = ", ".join(str(aff.eval(first)) for aff in index)
    tags = ", ".join(f"{n} ({knl.iname_tags[n]})" for n in sorted(parallel))
    return (f"at [{', '.join(map(str, sub))}], which does not differ between all work-items "
            f"of parallel iname(s) {tags}: e.g. the work-items {one} and {other} "
            f"both write {name}[{element}]")


def _is_global_barrier(insn) -> bool:
    return isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global"


def _nosync(knl, a: str, b: str) -> bool:
    return bool({(b, "any"), (b, "global")} & knl.id_to_insn[a].no_sync_with
                or {(a, "any"), (a, "global")} & knl.id_to_insn[b].no_sync_with)


def _separated_by_global_barrier(knl, reach: Reachable, later: str, earlier: str) -> bool:
    for bid in reach[later]:
        if _is_global_barrier(knl.id_to_insn[bid]) and earlier in reach[bid]:
            return True
    return False


def _axis(knl, iname: str) -> tuple[str, int]:
    tag = knl.iname_tags[iname]
    return ("l" if isinstance(tag, LocalIndexTag) else "g", tag.axis)
