"""The storage inames of a precomputed temporary: an existing loop reused
as one must range over the storage, and ``"l.auto"`` maps them onto the
kernel's work-group axes.

Public names: check_reused_inames, tag_storage.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import islpy as isl

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.domain import project_to, static_range
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import LocalIndexTag, parse_tag
from kernelcore.transform.iname import split_iname, tag_inames


def check_reused_inames(knl: LoopKernel, base_name: str, storage_dom: Any,
                        dim_names: Iterable[str]) -> None:
    """Raise unless each of *dim_names* that is already a loop of *knl* ranges
    over what the storage needs (an existing loop is reused, not redefined)."""
    for d in dim_names:
        if d not in knl.all_inames():
            continue
        have = project_to(knl.get_inames_domain([d]), [d])
        need = project_to(storage_dom, [d])
        if isinstance(need, isl.BasicSet):
            need = isl.Set.from_basic_set(need)
        have, need = isl.align_two(have, need)
        have, need = have.intersect_params(need.params()), need.intersect_params(have.params())
        if not have.is_equal(need):
            raise KernelcoreError(f"{base_name}: storage index '{d}' is an existing loop "
                                  f"over {have}, the storage needs {need}; name the "
                                  "storage indices differently")


def tag_storage(knl: LoopKernel, dim_names: list[str], extents: list, default_tag: str | None,
                outer: Iterable[str] = ()) -> LoopKernel:
    """*knl* with the storage inames *dim_names* (of *extents*) tagged
    *default_tag*; ``"l.auto"`` maps them, innermost first, onto the
    work-group axes the kernel uses and the loops *outer* do not (splitting
    one longer than its axis); one of a length known only when called stays
    a loop."""
    if default_tag is None:
        return knl
    if default_tag != "l.auto":
        tag = parse_tag(default_tag)
        return tag_inames(knl, {d: tag for d in dim_names})
    axes: dict[int, int] = {}
    for n, t in knl.iname_tags.items():
        if isinstance(t, LocalIndexTag) and n not in dim_names:
            lo, hi = static_range(knl, n)
            axes[t.axis] = max(axes.get(t.axis, 0), hi - lo + 1)
    # the axes of the loops the fetch runs in are taken
    taken = {t.axis for n in outer if isinstance(t := knl.iname_tags.get(n), LocalIndexTag)}
    free = sorted(set(axes) - taken)
    for d, extent in zip(reversed(dim_names), reversed(extents)):
        if not free:
            break
        if not isinstance(extent, int):
            continue        # (of a length known only when called: a loop)
        axis = free.pop(0)
        if extent <= axes[axis]:
            knl = tag_inames(knl, {d: f"l.{axis}"})
        else:
            knl = split_iname(knl, d, axes[axis], inner_tag=f"l.{axis}")
    return knl
