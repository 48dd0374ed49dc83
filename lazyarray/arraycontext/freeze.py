"""Freezing several lazy arrays together: work that their graphs share is
computed once, and then each array is computed reading it.

Computing the leaves of a container one by one would inline a shared
subexpression (say the flux of a DG operator read by every component of the
right-hand side) into each leaf's kernel, computing it once per leaf.
:func:`shared_roots` finds, across all the leaves' graphs, the topmost
uncomputed nodes that two or more leaves read (and that cost something to
compute); :func:`compute_together` computes those first (they are then
stored values the leaves' kernels read), then the leaves.

Public names: shared_roots, compute_together, SHARED_MIN_OPERATIONS.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyopencl as cl
import pyopencl.array as cla

from lazyarray.graph import (
    Concat, Const, Gather, Input, Iota, Map, Node, Param, Reduce, Reshape, Scan, View,
    computed, walk)
from lazyarray.run import DEVICE_LOCK, evaluate, using_queue

#: a node shared by several leaves is stored when its uncomputed graph holds
#: at least this many operations (cheaper ones are recomputed in each leaf's
#: kernel: a kernel launch and a round trip through memory cost more); shared
#: reductions, scans and gathers are always stored
SHARED_MIN_OPERATIONS = 3

_FREE = (View, Reshape, Const, Input, Param, Iota)


def _operations(root: Node, limit: int) -> int:
    """The operations (maps, concatenations) of *root*'s uncomputed graph,
    counted up to *limit*."""
    count = 0
    for n in walk(root, computed):
        if not computed(n) and isinstance(n, (Map, Concat)):
            count += 1
            if count >= limit:
                break
    return count


def _worth_storing(node: Node) -> bool:
    if isinstance(node, (Reduce, Scan, Gather)):
        return True
    return _operations(node, SHARED_MIN_OPERATIONS) >= SHARED_MIN_OPERATIONS


def shared_roots(roots: Sequence[Node]) -> list[Node]:
    """The nodes to compute before *roots* so that work their graphs share is
    done once: uncomputed nodes reached from two or more roots whose readers
    are reached from fewer (or that are roots themselves), past re-indexings
    (a shared view's argument is stored instead), worth a stored value
    (:data:`SHARED_MIN_OPERATIONS`). Children come before parents."""
    reached: dict[int, set[int]] = {}
    nodes: dict[int, Node] = {}
    parents: dict[int, set[int]] = {}
    root_ids = {id(r) for r in roots}
    for k, root in enumerate(roots):
        for n in walk(root, computed):
            if computed(n):
                continue
            reached.setdefault(id(n), set()).add(k)
            nodes[id(n)] = n
            for c in n.children():
                parents.setdefault(id(c), set()).add(id(n))
    chosen: dict[int, Node] = {}

    def choose(n: Node) -> None:
        if computed(n) or id(n) in chosen:
            return
        if isinstance(n, _FREE):
            for c in n.children():
                if len(reached.get(id(c), ())) >= 2:
                    choose(c)
            return
        if _worth_storing(n):
            chosen[id(n)] = n

    for nid, node in nodes.items():
        mine = reached[nid]
        if len(mine) < 2:
            continue
        if nid in root_ids or any(len(reached[p]) < len(mine) for p in parents.get(nid, ())):
            choose(node)
    order = {id(n): k for k, n in enumerate(walk_all(roots))}
    return sorted(chosen.values(), key=lambda n: order[id(n)])


def walk_all(roots: Sequence[Node]) -> list[Node]:
    """The uncomputed nodes of all *roots*' graphs, children before parents."""
    seen: set[int] = set()
    result: list[Node] = []
    for root in roots:
        for n in walk(root, computed):
            if id(n) not in seen:
                seen.add(id(n))
                result.append(n)
    return result


def compute_together(roots: Sequence[Node], queue: cl.CommandQueue | None = None
                     ) -> list[cla.Array]:
    """The values of *roots* on the device (on *queue*; None: lazyarray's),
    computed together: shared work (:func:`shared_roots`) runs once."""
    with using_queue(queue), DEVICE_LOCK:
        if len(roots) > 1:
            for node in shared_roots(roots):
                evaluate(node)
        return [evaluate(r) for r in roots]


__all__ = ["shared_roots", "compute_together", "walk_all", "SHARED_MIN_OPERATIONS"]
