"""Mappers over graph nodes: one method per node kind.

A mapper defines a ``map_<kind>`` method for each kind of node it handles
(``map_map``, ``map_reduce``, ``map_view``, ...: the node class's
``mapper_method``); calling the mapper on a node calls its kind's method. A
kind the mapper has no method for raises :class:`UnhandledNodeKind` naming
both: adding a node kind lists, by these errors, every mapper that must
learn it. This module is the one place that tells node kinds apart by class.

Public names: NodeMapper, CachedMapper, UnhandledNodeKind, is_kind, is_node,
node_base.
"""

from __future__ import annotations

from typing import Any, Generic, TypeGuard, TypeVar

from lazyarray.errors import LazyArrayError

R = TypeVar("R")


class UnhandledNodeKind(LazyArrayError, TypeError):
    """A mapper was called on a kind of node it has no method for."""


class NodeMapper(Generic[R]):
    """Calls ``self.map_<kind>(node, *args)`` for a node of that kind."""

    def __call__(self, node: Any, *args: Any) -> R:
        method = getattr(self, node.mapper_method, None)
        if method is None:
            raise UnhandledNodeKind(
                f"{type(self).__name__} has no method {node.mapper_method} for "
                f"{type(node).__name__} nodes")
        return method(node, *args)


class CachedMapper(NodeMapper[R]):
    """A :class:`NodeMapper` of one argument that computes each node's result
    once, remembered by the (interned) node itself for the mapper's life."""

    def __init__(self) -> None:
        self._results: dict[Any, R] = {}

    def __call__(self, node: Any, *args: Any) -> R:
        try:
            return self._results[node]
        except KeyError:
            result = self._results[node] = super().__call__(node)
            return result


def is_kind(node: Any, *kinds: str) -> TypeGuard[Any]:
    """Whether *node* is of one of the kinds named (``"map"``, ``"view"``, ...:
    its mapper method without ``map_``); where it is, a type checker lets the
    code read that kind's fields."""
    return node.kind in kinds


#: the base class of graph nodes (registered by :func:`node_base`)
_NODE_BASES: list[type] = []


def node_base(cls: type) -> type:
    """Registers *cls* as the base class of graph nodes (a class decorator)."""
    _NODE_BASES.append(cls)
    return cls


def is_node(value: Any) -> TypeGuard[Any]:
    """Whether *value* is a graph node, of any kind."""
    return isinstance(value, tuple(_NODE_BASES))
