"""Nested containers of arrays ("pytrees"): flattening to leaves and back.

Public names: flatten, unflatten.

Tuples, lists, dicts (in sorted key order) and dataclass instances are
containers; ``None`` is an empty container; anything else is a leaf. The
structure returned by :func:`flatten` is hashable, so it can be part of a
cache key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any


def flatten(tree: Any) -> tuple[list, tuple]:
    """``(leaves, structure)`` of *tree*."""
    leaves: list = []
    return leaves, _structure(tree, leaves)


def _structure(x: Any, leaves: list) -> tuple:
    """The structure of *x*, its leaves appended to *leaves* (a function of
    the module, not a closure: a recursive closure's cell would keep the
    leaves alive until the cycle collector ran)."""
    if x is None:
        return ("none",)
    if isinstance(x, (tuple, list)):
        kind = "tuple" if isinstance(x, tuple) else "list"
        return (kind, type(x), tuple(_structure(v, leaves) for v in x))
    if isinstance(x, dict):
        keys = sorted(x)
        return ("dict", tuple(keys), tuple(_structure(x[k], leaves) for k in keys))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = tuple(f.name for f in dataclasses.fields(x))
        return ("dataclass", type(x), names,
                tuple(_structure(getattr(x, n), leaves) for n in names))
    leaves.append(x)
    return ("leaf",)


def unflatten(structure: tuple, leaves: list) -> Any:
    """The tree of *structure* holding *leaves* (in :func:`flatten`'s order)."""
    return _build(structure, iter(leaves))


def _build(s: tuple, it: Iterator) -> Any:
    kind = s[0]
    if kind == "none":
        return None
    if kind == "leaf":
        return next(it)
    if kind in ("tuple", "list"):
        items = [_build(c, it) for c in s[2]]
        cls = s[1]
        if kind == "tuple" and hasattr(cls, "_fields"):   # namedtuple
            return cls(*items)
        return cls(items)
    if kind == "dict":
        return {k: _build(c, it) for k, c in zip(s[1], s[2])}
    values = {n: _build(c, it) for n, c in zip(s[2], s[3])}
    return s[1](**values)
