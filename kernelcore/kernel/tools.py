"""Kernel helpers at loopy's module path (``loopy.kernel.tools``), defined in
:mod:`kernelcore.transform.instruction` and :mod:`kernelcore.creation`.

Public names: get_global_barrier_order, find_most_recent_global_barrier,
make_copy_kernel, SetTrie.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from kernelcore.creation import make_copy_kernel
from kernelcore.transform.instruction import (
    find_most_recent_global_barrier,
    get_global_barrier_order,
)


class SetTrie:
    """Sets that nest like loops, kept as a tree: each node holds some items,
    and the sets added are the item sets along paths from the root. Adding a
    set splits nodes it covers in part; a set that would need one item under
    two branches, or an item below a node it does not cover, raises
    :class:`ValueError`."""

    def __init__(self, items: Iterable[Hashable] = ()):
        self.items: frozenset = frozenset(items)
        self.children: list[SetTrie] = []

    def all_items(self) -> frozenset:
        """The items of this node and of every node below it."""
        return self.items.union(*(c.all_items() for c in self.children))

    def add_or_update(self, key: Iterable[Hashable]) -> None:
        """Add the set *key* (see the class docstring)."""
        rest = frozenset(key) - self.items
        if not rest:
            return
        touched = [c for c in self.children if c.all_items() & rest]
        if not touched:
            self.children.append(SetTrie(rest))
            return
        if len(touched) > 1:
            raise ValueError(f"{set(key)} spans several branches of the set trie")
        child = touched[0]
        common = child.items & rest
        if not common:
            raise ValueError(f"{set(key)} reaches below items it does not hold in the "
                             "set trie")
        if common != child.items:       # split: the shared items become a parent
            lower = SetTrie(child.items - common)
            lower.children = child.children
            child.items, child.children = common, [lower]
        child.add_or_update(rest)

    def descend(self, on_found: Callable[[list], None]) -> None:
        """Call *on_found* with the (sorted) items of each node below this one,
        parents before children."""
        for child in self.children:
            on_found(sorted(child.items))
            child.descend(on_found)


__all__ = ["get_global_barrier_order", "find_most_recent_global_barrier",
           "make_copy_kernel", "SetTrie"]
