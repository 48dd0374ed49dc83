"""Questions about a linearization, under loopy's module path
(``loopy.schedule.tools``).

Public names: get_return_from_kernel_mapping, get_block_boundaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelcore.schedule.items import CallKernel, EnterLoop, LeaveLoop, ReturnFromKernel


def _linearization(kernel: Any) -> list:
    if kernel.linearization is None:
        raise ValueError(f"kernel '{kernel.name}' is not linearized (call lp.linearize)")
    return list(kernel.linearization)


def get_return_from_kernel_mapping(kernel: Any) -> Mapping[int, int | None]:
    """For each index of *kernel*'s linearization, the index of the
    :class:`ReturnFromKernel` ending the device kernel the item belongs to
    (None for items between device kernels)."""
    result: dict[int, int | None] = {}
    current: int | None = None
    items = _linearization(kernel)
    for k in range(len(items) - 1, -1, -1):
        item = items[k]
        if isinstance(item, ReturnFromKernel):
            current = k
        result[k] = current
        if isinstance(item, CallKernel):
            current = None
    return result


def get_block_boundaries(linearization: Any) -> Mapping[int, int]:
    """The index of the matching end for each start of a block (loop or
    device kernel) of *linearization*, and of the matching start for each end."""
    result: dict[int, int] = {}
    open_blocks: list[int] = []
    for k, item in enumerate(linearization):
        if isinstance(item, (EnterLoop, CallKernel)):
            open_blocks.append(k)
        elif isinstance(item, (LeaveLoop, ReturnFromKernel)):
            start = open_blocks.pop()
            result[start], result[k] = k, start
    return result
