"""Launches of kernels generic over the element count (flat elementwise
kernels, :mod:`lazyarray.lower.flat`): the grid and the result's shape come
with each run, the rest is a :class:`~lazyarray.run.launch.BoundLaunch`'s.

Public names: SizedLaunch.
"""

from __future__ import annotations

import threading

import pyopencl as cl
import pyopencl.array as cla

from kernelcore import set_kernel_argument
from lazyarray.graph import Node
from lazyarray.lower.flat import BOX_ROWS, SIZE_ARGUMENT
from lazyarray.run.launch import BoundLaunch, new_array


class SizedLaunch:
    """*bound* (one launch of a flat kernel, work-groups of *group*) run on
    any element count: its grid is rounded up from the count each run (a
    reduction's, *single*, is one work-group)."""

    def __init__(self, bound: BoundLaunch, group: int, single: bool = False):
        [(self._kernel, _, self._local, self._slots)] = bound.launches
        self.bound = bound
        self.recipe = bound.recipe
        self.group = group
        self.single = single
        self._dtype = bound.template.dtype
        #: a box kernel's grid of rows times the last axis (BOX_ROWS)
        self._rows = any(name == BOX_ROWS for _, name, _ in self._slots)
        self._lock = threading.Lock()
        #: a flat kernel has no global temporaries: its single launch is all
        assert not bound.kept

    def on_queue(self, queue: cl.CommandQueue, node: Node) -> SizedLaunch:
        """This launch on another *queue* (rebuilt from its recipe)."""
        return SizedLaunch(BoundLaunch.from_recipe(self.recipe, queue, node), self.group,
                           self.single)

    def at_positions(self, positions: dict[str, int]) -> None:
        """No runs by position (a jitted call's kernels are never flat)."""
        return None

    def run(self, queue: cl.CommandQueue, args: dict, shape: tuple, events: list | None = None
            ) -> cla.Array:
        """The result of *shape* computed from *args* (by name)."""
        count = int(args[SIZE_ARGUMENT])
        out = new_array(queue, shape, self._dtype)
        grid: tuple[int, ...] = (
            self.group if self.single else -(-count // self.group) * self.group,)
        if self._rows:
            grid += (int(args[BOX_ROWS]),)
        with self._lock:
            for k, name, scalar in self._slots:
                if scalar:
                    set_kernel_argument(self._kernel, k, args[name])
                else:
                    self._kernel.set_arg(k, (out if name == "out" else args[name]).base_data)
            event = cl.enqueue_nd_range_kernel(queue, self._kernel, grid, self._local)
        if events is not None:
            events.append(event)
        return out
