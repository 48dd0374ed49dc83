"""Nested containers of arrays ("pytrees"): flattening to leaves and back.

Public names: flatten, unflatten.

Tuples, lists, dicts (in sorted key order) and dataclass instances are
containers; ``None`` is an empty container; anything else is a leaf. The
structure returned by :func:`flatten` is hashable, so it can be part of a
cache key.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def flatten(tree: Any) -> tuple[list, tuple]:
    """``(leaves, structure)`` of *tree*."""
    leaves: list = []

    def rec(x):
        if x is None:
            return ("none",)
        if isinstance(x, (tuple, list)):
            kind = "tuple" if isinstance(x, tuple) else "list"
            return (kind, type(x), tuple(rec(v) for v in x))
        if isinstance(x, dict):
            keys = sorted(x)
            return ("dict", tuple(keys), tuple(rec(x[k]) for k in keys))
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            names = tuple(f.name for f in dataclasses.fields(x))
            return ("dataclass", type(x), names, tuple(rec(getattr(x, n)) for n in names))
        leaves.append(x)
        return ("leaf",)

    return leaves, rec(tree)


def unflatten(structure: tuple, leaves: list) -> Any:
    """The tree of *structure* holding *leaves* (in :func:`flatten`'s order)."""
    it = iter(leaves)

    def rec(s):
        kind = s[0]
        if kind == "none":
            return None
        if kind == "leaf":
            return next(it)
        if kind in ("tuple", "list"):
            items = [rec(c) for c in s[2]]
            cls = s[1]
            if kind == "tuple" and hasattr(cls, "_fields"):   # namedtuple
                return cls(*items)
            return cls(items)
        if kind == "dict":
            return {k: rec(c) for k, c in zip(s[1], s[2])}
        values = {n: rec(c) for n, c in zip(s[2], s[3])}
        return s[1](**values)

    return rec(structure)
