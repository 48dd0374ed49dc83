"""What the counters share: preparing kernels, domains of instructions, the
launch grid and the granularity of counts.
"""


from __future__ import annotations

import warnings

import islpy as isl
import numpy as np

from kernelcore.callable_kernel import callee_kernels
from kernelcore.diagnostic import KernelcoreError, KernelcoreWarning
from kernelcore.ir.domain import project_to
from kernelcore.ir.grid import grid_sizes
from kernelcore.ir.instruction import CallInstruction
from kernelcore.ir.kernel import KernelState
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag
from kernelcore.preprocess import preprocess_kernel
from kernelcore.statistics.counts import Count, CountGranularity, _eval_factor, _involves_params
from kernelcore.statistics.footprint import point_count
from kernelcore.transform.inline import inline_calls
from kernelcore.translation_unit import TranslationUnit

dim_type = isl.dim_type


# {{{ helpers: kernels, domains, granularity

def _prepare(knl):
    if isinstance(knl, TranslationUnit):
        knl = knl.inlined_kernel()
    callees = callee_kernels(knl)
    if callees:          # callees emitted as functions are counted where called
        knl = inline_calls(knl, callees)
    opaque = sorted(i.id for i in knl.instructions if isinstance(i, CallInstruction))
    if opaque:
        raise KernelcoreError(
            f"cannot count the work of call instruction(s) {', '.join(opaque)}: the "
            "called function is opaque to kernelcore (inline kernel calls first)")
    if knl.state < KernelState.PREPROCESSED:
        knl = preprocess_kernel(knl)
    return knl


def _domain_of(knl, inames) -> isl.Set:
    """The points of *inames* (only those dims) over the kernel's parameters."""
    inames = list(inames)
    dom = knl.get_inames_domain(inames)
    return project_to(dom, inames).coalesce()


def _local_inames(knl, inames) -> set[str]:
    return {i for i in inames if isinstance(knl.iname_tags.get(i), LocalIndexTag)}


class _Grid:
    """Work-group size and group counts of a kernel, evaluated lazily."""

    def __init__(self, knl, subgroup_size):
        self.knl = knl
        self.subgroup_size = subgroup_size
        self._sizes = None

    @property
    def sizes(self):
        if self._sizes is None:
            self._sizes = grid_sizes(self.knl, constant_local=False)
        return self._sizes

    def local_size_total(self) -> int:
        total = 1
        for pw in self.sizes[1]:
            if _involves_params(pw):
                raise KernelcoreError("cannot count per sub-group: the work-group size "
                                      f"is not a constant ({pw})")
            total *= _eval_factor(pw, {})
        return total

    def subgroups_per_group(self) -> int:
        total = self.local_size_total()
        if total == 1:
            return 1
        sg = self.subgroup_size
        if sg is None:
            raise ValueError(
                "counting per sub-group needs the sub-group size: pass "
                "subgroup_size=<int> (or subgroup_size='guess' to assume 32)")
        return -(-total // sg)

    def unused_axes_factors(self, used_inames, disregard_local: bool) -> tuple:
        """Sizes (PwAffs) of the hardware axes the instruction does not use."""
        groups, local = self.sizes
        used_g = {self.knl.iname_tags[i].axis for i in used_inames
                  if isinstance(self.knl.iname_tags.get(i), GroupIndexTag)}
        used_l = {self.knl.iname_tags[i].axis for i in used_inames
                  if isinstance(self.knl.iname_tags.get(i), LocalIndexTag)}
        factors = [pw for axis, pw in enumerate(groups) if axis not in used_g]
        if not disregard_local:
            factors += [pw for axis, pw in enumerate(local) if axis not in used_l]
        return tuple(factors)


def _process_subgroup_size(subgroup_size):
    if subgroup_size is None or isinstance(subgroup_size, (int, np.integer)):
        if subgroup_size is not None and subgroup_size < 1:
            raise ValueError(f"subgroup_size must be positive, got {subgroup_size}")
        return None if subgroup_size is None else int(subgroup_size)
    if subgroup_size == "guess":
        warnings.warn("subgroup_size='guess': assuming sub-groups of 32 work-items",
                      KernelcoreWarning, stacklevel=3)
        return 32
    raise ValueError(f"subgroup_size must be an int, 'guess' or None, got "
                     f"{subgroup_size!r}")


class _InsnCounter:
    """How many times an instruction's events happen, per granularity."""

    def __init__(self, knl, grid: _Grid, count_redundant_work: bool,
                 exact: bool | None = None):
        self.knl = knl
        self.exact = exact
        self.grid = grid
        self.count_redundant_work = count_redundant_work
        self._cache: dict = {}

    def __call__(self, insn, granularity) -> Count:
        key = (insn.id, granularity)
        if key in self._cache:
            return self._cache[key]
        inames = set(insn.within_inames)
        disregard_local = granularity != CountGranularity.WORKITEM
        if disregard_local:
            kept = inames - _local_inames(self.knl, inames)
            dom = project_to(self.knl.get_inames_domain(list(inames)), kept).coalesce()
        else:
            dom = _domain_of(self.knl, inames)
        count = point_count(dom, self.exact) if inames else Count.constant(1)
        if self.count_redundant_work:
            for pw in self.grid.unused_axes_factors(inames, disregard_local):
                count = count * pw
        if granularity == CountGranularity.SUBGROUP:
            count = count * self.grid.subgroups_per_group()
        self._cache[key] = count
        return count

# }}}
