"""Operation, memory-access and synchronization statistics of kernels.

The counting functions return a :class:`ToCountMap` from descriptive keys
(:class:`Op`, :class:`MemAccess`, or strings such as ``"barrier_local"``) to
:class:`Count` objects. A count depends on the domain parameters; without
barvinok islpy cannot build a closed-form polynomial for a parametric set, so a
:class:`Count` keeps the integer sets whose points are being counted and counts
them exactly once parameter values are given (:meth:`Count.eval_with_dict`).
As loopy does without barvinok, the counters estimate a domain that is not a
box by its bounding box unless ``exact_counts=True`` (see :mod:`.footprint`).

Conventions (those of loopy's statistics):

* arithmetic is counted per instruction over the points of its domain, after
  preprocessing (so a reduction counts its accumulator updates); ``a - b`` is
  ``a + (-1)*b`` and the multiplication by -1 is free; index arithmetic inside
  subscripts counts too unless ``count_within_subscripts=False``;
* arithmetic counts have sub-group granularity;
* global memory accesses are counted per array reference (no common
  subexpressions are assumed); accesses whose address varies along local axis 0
  are counted per work-item, uniform ones per sub-group; local memory accesses
  per sub-group;
* synchronization counts are per work-item: each barrier is counted once per
  iteration of the sequential loops around it, each device kernel once.

Public names: CountGranularity, Count, Op, MemAccess, Sync, ToCountMap, get_op_map,
get_mem_access_map, get_synchronization_map, stringify_stats_mapping,
WorkItemTotals, get_work_item_totals, count, gather_access_footprints.

The package's modules: :mod:`.counts` (Count, granularities), :mod:`.keys`
(Op, MemAccess, Sync), :mod:`.countmap` (ToCountMap), :mod:`.footprint`
(access footprints, loopy's point counts), :mod:`.common` (what
the counters share), :mod:`.ops`, :mod:`.memory` and :mod:`.sync` (the three
counters), :mod:`.totals` (operations and bytes summed over the work-items).
"""

from kernelcore.statistics.countmap import ToCountMap, stringify_stats_mapping
from kernelcore.statistics.counts import Count, CountGranularity
from kernelcore.statistics.footprint import count, gather_access_footprints
from kernelcore.statistics.keys import MemAccess, Op, Sync
from kernelcore.statistics.memory import get_mem_access_map
from kernelcore.statistics.ops import get_op_map
from kernelcore.statistics.sync import get_synchronization_map
from kernelcore.statistics.totals import WorkItemTotals, get_work_item_totals

__all__ = ["CountGranularity", "Count", "Op", "MemAccess", "Sync", "ToCountMap",
           "get_op_map", "get_mem_access_map", "get_synchronization_map",
           "stringify_stats_mapping", "WorkItemTotals", "get_work_item_totals",
           "count", "gather_access_footprints"]
