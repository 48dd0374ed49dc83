"""Default parallelization: map a kernel's independent loops onto the device.

Heuristic (used by lazyarray for every kernel it generates):

1. Candidates are inames that are not reduction inames, that every instruction
   writing a global array runs in and indexes that array with (so no two
   work-items write one element), that no private temporary carries
   across (a temporary written inside the loop is read only inside it), and
   that no temporary computed outside the loop is read inside it (a parallel
   loop would recompute it in every work-item: e.g. a row's maximum computed
   once per row and used for each element of the row), and that bound no
   reduction's loop (a running sum ``sum(j, ...)`` over ``0 <= j <= i``
   stays sequential in ``i``, so it is computed as an O(n) scan).
2. The *fast* candidate is the one that walks the written array contiguously
   (coefficient 1 in its last subscript); it is split by the work-group size,
   outer part ``g.0``, inner part ``l.0``, so neighbouring work-items touch
   neighbouring elements (coalesced on GPUs, vectorizable on PoCL).
3. Up to two further candidates become ``g.1`` and ``g.2``.
4. Work-group size: 256 on GPUs, 64 on CPUs (PoCL runs one work-group per core
   task and vectorizes across its work-items); smaller when the fast extent
   is known to be smaller. A fast loop of at most ``SHORT_FAST`` iterations
   (``CPU_SHORT_FAST`` on a CPU) is ``l.0`` whole and the next candidate is
   split into ``l.1`` (as many as fill the group) and ``g.0``: work-groups
   stay full.
5. On a GPU, a kernel of at least ``ITEMS_FROM`` iterations whose fast loop
   fills ``GPU_ITEMS`` work-groups gives each work-item ``GPU_ITEMS``
   elements, a work-group's width apart (an unrolled loop between ``g.0``
   and ``l.0``: accesses stay coalesced, and each work-item has several
   independent chains of work and loads in flight).

Kernels that already use ``l.N``/``g.N`` tags are returned unchanged.

Public names: auto_parallelize.
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import pymbolic.primitives as prim
import pyopencl as cl

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import ArrayArg
from kernelcore.ir.domain import project_to
from kernelcore.ir.expr import find_reductions, get_dependencies
from kernelcore.ir.instruction import Assignment, assignee_subscript, assignee_var_name
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import is_hw_parallel
from kernelcore.transform.iname import split_iname, tag_inames
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


#: on a GPU, a fast loop this short or shorter shares its work-groups with
#: the next loop (``l.1``): a group of a few work-items leaves the device idle
#: (and groups of 64 or 128 work-items, one per short row, run far from a
#: copy's bandwidth)
SHORT_FAST = 128
#: ... on a CPU, where PoCL runs every work-group as a call of its own (ten
#: heat steps on two cores, groups along the fast loop alone / sharing it:
#: 262144x4 float32 20 / 10 ms, 349525x3 13 / 8 ms, 131072x8 15 / 9 ms; from
#: 16, a float32 vector's width, sharing was as fast or slower: 65536x16 5 /
#: 9 ms)
CPU_SHORT_FAST = 8
#: elements per work-item of a long fast loop on a GPU, and the shortest loop
#: that gets them (kernel time on an H200, % of a copy's bandwidth, with 1 /
#: 2 / 4 / 8: 2*x over 2^28 float32 65 / 90 / 99 / 96; a+b over 2^27 83 /
#: 103 / 104 / 103; W2's chain of eight correctly rounded square roots over
#: 2^28 36 / 39 / 42 / 43)
GPU_ITEMS = 4
ITEMS_FROM = 1 << 20


def _global_writes(knl):
    return [i for i in knl.instructions if isinstance(i, Assignment)
            and isinstance(knl.arg_dict.get(assignee_var_name(i.assignee)), ArrayArg)]


def _candidates(knl) -> list[str]:
    writes = _global_writes(knl)
    if not writes:
        return []
    red: set[str] = set()
    for insn in knl.instructions:
        for e in insn.expressions():
            for r in find_reductions(e):
                red |= set(r.inames)
    result = []
    for iname in knl.all_inames():
        if iname in red:
            continue
        if not all(iname in w.within_inames and any(
                iname in get_dependencies(s) for s in assignee_subscript(w.assignee))
                for w in writes):
            continue
        if _carries_temporary(knl, iname) or _shares_temporary(knl, iname) \
                or _bounds_reduction(knl, iname, red):
            continue
        result.append(iname)
    return result


def _carries_temporary(knl, iname: str) -> bool:
    for name in knl.temporary_variables:
        writers = [i for i in knl.instructions if name in i.assignee_names()]
        if not any(iname in w.within_inames for w in writers):
            continue
        readers = [i for i in knl.instructions if name in i.read_dependency_names()]
        if any(iname not in r.within_inames for r in readers):
            return True
    return False


def _bounds_reduction(knl, iname: str, reduction_inames: set[str]) -> bool:
    """Whether *iname* bounds a reduction's loop (``sum(j, ...)`` over
    ``0 <= j <= i``): kept sequential, that is an O(n) scan."""
    for dom in knl.domains:
        dims = dom.get_var_dict()
        if iname in dims and dims[iname][0] == dim_type.param and any(
                r in dims and dims[r][0] == dim_type.set for r in reduction_inames):
            return True
    return False


def _shares_temporary(knl, iname: str) -> bool:
    for name in knl.temporary_variables:
        writers = [i for i in knl.instructions if name in i.assignee_names()]
        if any(iname in w.within_inames for w in writers):
            continue
        if any(iname in r.within_inames for r in knl.instructions
               if name in r.read_dependency_names()):
            return True
    return False


def _is_contiguous(iname: str, subscript: tuple) -> bool:
    if not subscript:
        return False
    last = subscript[-1]
    if isinstance(last, prim.Variable):
        return last.name == iname
    if isinstance(last, prim.Sum):
        return any(isinstance(c, prim.Variable) and c.name == iname for c in last.children)
    return False


def _static_bounds(knl, iname: str) -> tuple[int, int] | None:
    """(first, last) value of *iname* where both are constants."""
    dom = project_to(knl.get_inames_domain([iname]), [iname])
    idx = dom.get_var_dict()[iname][1]
    lo, hi = dom.dim_min_val(idx), dom.dim_max_val(idx)
    if lo.is_int() and hi.is_int():
        return lo.get_num_si(), hi.get_num_si()
    return None


def _static_extent(knl, iname: str) -> int | None:
    bounds = _static_bounds(knl, iname)
    return None if bounds is None else bounds[1] - bounds[0] + 1


def _is_gpu(device) -> bool:
    if device is None:
        return False
    if isinstance(device, str):
        if device not in ("gpu", "cpu"):
            raise KernelcoreError(f"auto_parallelize: device must be a pyopencl Device, "
                                  f"'gpu' or 'cpu', got {device!r}")
        return device == "gpu"
    return bool(device.type & cl.device_type.GPU)


@for_each_kernel
def auto_parallelize(knl: LoopKernel, device: Any = None, *, group_size: int | None = None,
                     items: int | None = None) -> LoopKernel:
    """*knl* with its independent loops tagged for *device*: a
    :class:`pyopencl.Device`, or the kind of device, ``"gpu"`` or ``"cpu"``
    (default: ``"cpu"``'s work-group size, which GPUs run too; no device is
    looked up). *group_size* and *items* (elements of the fast loop per
    work-item) replace the heuristic's. See the module documentation for
    the heuristic."""
    if any(is_hw_parallel(t) for t in knl.iname_tags.values()):
        return knl
    candidates = _candidates(knl)
    if not candidates:
        return knl
    is_gpu = _is_gpu(device)
    first = _global_writes(knl)[0]
    sub = assignee_subscript(first.assignee)
    fast = next((c for c in reversed(candidates) if _is_contiguous(c, sub)), candidates[-1])
    slow = [c for c in candidates if c != fast][-2:]
    size = group_size or (256 if is_gpu else 64)
    extent = _static_extent(knl, fast)
    partner = _static_extent(knl, slow[-1]) if slow else None
    if extent is not None and extent <= (SHORT_FAST if is_gpu else CPU_SHORT_FAST) and partner \
            and partner > 1 and size // extent > 1:
        # a short fast loop: a work-group is the whole of it by many of the next loop
        rows = size // extent
        knl = tag_inames(knl, {fast: "l.0"})
        knl = split_iname(knl, slow[-1], rows, outer_tag="g.0", inner_tag="l.1")
        for axis, name in enumerate(reversed(slow[:-1]), start=1):
            knl = tag_inames(knl, {name: f"g.{axis}"})
        return knl
    if extent is not None:
        while size > 16 and size // 2 >= extent:
            size //= 2
    if items is None:
        rows = 1
        for name in slow:
            rows *= _static_extent(knl, name) or 1
        # (from 0: the unrolled loop of a split starting elsewhere has no
        # constant bounds)
        long = (is_gpu and extent is not None and extent * rows >= ITEMS_FROM
                and extent >= size * GPU_ITEMS
                and _static_bounds(knl, fast)[0] == 0)  # type: ignore[index]
        items = GPU_ITEMS if long else 1
    if items > 1:
        knl = split_iname(knl, fast, size * items, outer_tag="g.0")
        knl = split_iname(knl, f"{fast}_inner", size, outer_tag="unr", inner_tag="l.0")
    else:
        knl = split_iname(knl, fast, size, outer_tag="g.0", inner_tag="l.0")
    for axis, name in enumerate(reversed(slow), start=1):
        knl = tag_inames(knl, {name: f"g.{axis}"})
    return knl
