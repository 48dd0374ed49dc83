"""Walking array containers: mapping a function over their leaves, several
containers of one structure together, reducing over leaves, and flattening
a container into leaves and a structure that rebuilds it.

Two walkers share one interface: :class:`ContainerWalker` walks
arraycontext's containers (dataclass containers, object arrays, anything
registered with ``serialize_container``); :class:`PlainWalker` walks
tuples, lists, dicts and NumPy object arrays, so the namespace and the
compile machinery are usable (and tested) without arraycontext.

Public names: Walker, PlainWalker, ContainerWalker, Structure.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np


@dataclass(frozen=True, eq=False)
class Structure:
    """How a container was built: its *key* (hashable: container types, their
    child names, and ``None`` at each leaf) and the *template* object that
    rebuilds it (for arraycontext's ``deserialize_container``)."""

    key: Hashable
    template: Any
    children: tuple[Structure, ...] | None      # None: a leaf
    #: the children's names (as :meth:`Walker.split` gave them)
    names: tuple[Hashable, ...] = ()

    @property
    def leaf_count(self) -> int:
        """The number of leaves."""
        if self.children is None:
            return 1
        return sum(c.leaf_count for c in self.children)


_LEAF = Structure(key=None, template=None, children=None)


class Walker:
    """Container traversal: subclasses say how a container splits into named
    children (:meth:`split`) and how it is rebuilt (:meth:`join`)."""

    def split(self, x: Any) -> list[tuple[Hashable, Any]] | None:
        """``[(name, child), ...]`` of a container, None for a leaf."""
        raise NotImplementedError

    def join(self, template: Any, children: list[tuple[Hashable, Any]]) -> Any:
        """A container like *template* with *children*."""
        raise NotImplementedError

    def _start(self) -> None:
        """Called before each walk (see :class:`ContainerWalker`)."""

    def map(self, f: Callable[[Any], Any], x: Any) -> Any:
        """*x* with every leaf (array or scalar) replaced by ``f(leaf)``."""
        self._start()
        return self._map(f, x)

    def _map(self, f: Callable[[Any], Any], x: Any) -> Any:
        parts = self.split(x)
        if parts is None:
            return f(x)
        return self.join(x, [(k, self._map(f, c)) for k, c in parts])

    def multimap(self, f: Callable[..., Any], *xs: Any) -> Any:
        """``f`` applied leaf by leaf to containers of one structure; leaves
        (arrays, scalars) among *xs* are passed to every call (broadcast)."""
        self._start()
        return self._multimap(f, *xs)

    def _multimap(self, f: Callable[..., Any], *xs: Any) -> Any:
        split = [self.split(x) for x in xs]
        containers = [k for k, s in enumerate(split) if s is not None]
        if not containers:
            return f(*xs)
        first = split[containers[0]]
        assert first is not None
        names = [k for k, _ in first]
        for k in containers[1:]:
            other = split[k]
            assert other is not None
            if [n for n, _ in other] != names:
                raise ValueError("containers of different structure: "
                                 f"{type(xs[containers[0]]).__name__} and {type(xs[k]).__name__}")
        children = []
        for j, name in enumerate(names):
            args = [s[j][1] if s is not None else x for s, x in zip(split, xs)]
            children.append((name, self._multimap(f, *args)))
        return self.join(xs[containers[0]], children)

    def map_reduce(self, reduce: Callable[[list[Any]], Any], f: Callable[[Any], Any],
                   x: Any) -> Any:
        """``reduce`` of ``f`` over the leaves of *x*, container by container."""
        self._start()
        return self._map_reduce(reduce, f, x)

    def _map_reduce(self, reduce: Callable[[list[Any]], Any], f: Callable[[Any], Any],
                    x: Any) -> Any:
        parts = self.split(x)
        if parts is None:
            return f(x)
        return reduce([self._map_reduce(reduce, f, c) for _, c in parts])

    def flatten(self, x: Any) -> tuple[list[Any], Structure]:
        """The leaves of *x* (depth first) and its :class:`Structure`."""
        self._start()
        leaves: list[Any] = []
        return leaves, self._walk(x, leaves)

    def _walk(self, y: Any, leaves: list[Any]) -> Structure:
        """The structure of *y*, its leaves appended to *leaves* (a method, not
        a closure: a recursive closure's cell would keep the leaves alive
        until the cycle collector ran)."""
        parts = self.split(y)
        if parts is None:
            leaves.append(y)
            return _LEAF
        children = tuple(self._walk(c, leaves) for _, c in parts)
        names = tuple(k for k, _ in parts)
        key = (type(y), names, tuple(c.key for c in children),
               getattr(y, "shape", None) if isinstance(y, np.ndarray) else None)
        return Structure(key, y, children, names)

    def unflatten(self, structure: Structure, leaves: list[Any]) -> Any:
        """The container of *structure* with *leaves* (as :meth:`flatten` gave)."""
        self._start()
        return self._build(structure, iter(leaves))

    def _build(self, s: Structure, it: Iterator[Any]) -> Any:
        if s.children is None:
            return next(it)
        return self.join(s.template, [(k, self._build(c, it))
                                      for k, c in zip(s.names, s.children)])


class PlainWalker(Walker):
    """Tuples, lists, dicts and NumPy object arrays are containers."""

    def split(self, x: Any) -> list[tuple[Hashable, Any]] | None:
        if isinstance(x, (tuple, list)):
            return list(enumerate(x))
        if isinstance(x, dict):
            return list(x.items())
        if isinstance(x, np.ndarray) and x.dtype == object:
            return [(i, x[i]) for i in np.ndindex(x.shape)]
        return None

    def join(self, template: Any, children: list[tuple[Hashable, Any]]) -> Any:
        if isinstance(template, dict):
            return dict(children)
        if isinstance(template, np.ndarray):
            result = np.empty(template.shape, dtype=object)
            for i, c in children:
                result[cast(tuple, i)] = c
            return result
        values = [c for _, c in children]
        if isinstance(template, tuple) and hasattr(template, "_fields"):
            return type(template)(*values)
        return type(template)(values)


class ContainerWalker(Walker):
    """arraycontext's containers (its ``serialize_container`` and
    ``deserialize_container``), each class's implementations looked up once
    (until another class is registered)."""

    def __init__(self) -> None:
        from arraycontext import (  # (arraycontext is optional)
            NotAnArrayContainerError,
            deserialize_container,
            serialize_container,
        )
        self._serialize = serialize_container
        self._deserialize = deserialize_container
        self._not_container = NotAnArrayContainerError
        #: the implementation for classes that are no containers
        self._leaf = serialize_container.registry[object]
        #: class -> (its serializer, its deserializer), for registrations so many
        self._impls: dict[type, tuple[Callable, Callable]] = {}
        self._registered = -1

    def _start(self) -> None:
        registered = len(self._serialize.registry) + len(self._deserialize.registry)
        if registered != self._registered:
            self._impls.clear()
            self._registered = registered

    def _impl(self, cls: type) -> tuple[Callable, Callable]:
        impl = self._impls.get(cls)
        if impl is None:
            impl = self._impls[cls] = (self._serialize.dispatch(cls),
                                       self._deserialize.dispatch(cls))
        return impl

    def split(self, x: Any) -> list[tuple[Hashable, Any]] | None:
        serialize = self._impl(type(x))[0]
        if serialize is self._leaf:
            return None
        try:
            return list(serialize(x))
        except self._not_container:
            return None

    def join(self, template: Any, children: list[tuple[Hashable, Any]]) -> Any:
        return self._impl(type(template))[1](template, children)


__all__ = ["Walker", "PlainWalker", "ContainerWalker", "Structure"]
