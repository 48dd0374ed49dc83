"""An immutable rooted tree of hashable nodes, at loopy's module path
(``loopy.schedule.tree``).

Public names: Tree.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tree:
    """A tree: its *root* and each node's parent and children (in the order
    they were added). Changes return a new tree."""

    root: Any
    _parent: tuple[tuple[Any, Any], ...] = ()
    _children: tuple[tuple[Any, tuple[Any, ...]], ...] = ()

    @classmethod
    def from_root(cls, root: Hashable) -> Tree:
        return cls(root, (), ((root, ()),))

    def _parents(self) -> dict:
        return dict(self._parent)

    def _kids(self) -> dict:
        return dict(self._children)

    def __contains__(self, node: Hashable) -> bool:
        return node in self._kids()

    def parent(self, node: Hashable) -> Any:
        """The parent of *node* (None for the root)."""
        self._check(node)
        return self._parents().get(node)

    def children(self, node: Hashable) -> tuple[Any, ...]:
        self._check(node)
        return self._kids()[node]

    def ancestors(self, node: Hashable) -> tuple[Any, ...]:
        """The nodes from *node*'s parent up to the root."""
        parents, result = self._parents(), []
        while node in parents:
            node = parents[node]
            result.append(node)
        return tuple(result)

    def depth(self, node: Hashable) -> int:
        """The number of edges between *node* and the root."""
        self._check(node)
        return len(self.ancestors(node))

    def add_node(self, node: Hashable, parent: Hashable) -> Tree:
        """The tree with *node* a new child (the last) of *parent*."""
        self._check(parent)
        if node in self:
            raise ValueError(f"'{node}' is already in the tree")
        kids = self._kids()
        kids[parent] += (node,)
        kids[node] = ()
        return Tree(self.root, (*self._parent, (node, parent)), tuple(kids.items()))

    def replace_node(self, node: Hashable, new_node: Hashable) -> Tree:
        """The tree with *node* renamed *new_node* (same place, same children)."""
        self._check(node)
        if new_node in self:
            raise ValueError(f"'{new_node}' is already in the tree")

        def swap(n):
            return new_node if n == node else n
        return Tree(swap(self.root), tuple((swap(c), swap(p)) for c, p in self._parent),
                    tuple((swap(n), tuple(swap(c) for c in cs)) for n, cs in self._children))

    def move_node(self, node: Hashable, new_parent: Hashable) -> Tree:
        """The tree with *node* (and what is below it) under *new_parent*."""
        self._check(node)
        self._check(new_parent)
        if node == self.root or node == new_parent or node in self.ancestors(new_parent):
            raise ValueError(f"cannot move '{node}' below '{new_parent}'")
        parents, kids = self._parents(), self._kids()
        old = parents[node]
        kids[old] = tuple(c for c in kids[old] if c != node)
        kids[new_parent] += (node,)
        parents[node] = new_parent
        return Tree(self.root, tuple(parents.items()), tuple(kids.items()))

    def _check(self, node: Hashable) -> None:
        if node not in self:
            raise ValueError(f"'{node}' is not in the tree")
