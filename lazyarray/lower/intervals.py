"""The range of values of integer index arrays, from the ranges of stored
arrays whose values are fixed (a compiled program's constants): where a
gather's positions provably lie in ``[0, n)``, its kernel reads them as they
are, without the remainder that wraps negative or changed indices.

Public names: value_range.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np

from lazyarray.graph import Map, Node
from lazyarray.mapper import is_kind

Range = tuple[int, int]


def value_range(node: Node, known: Mapping[Node, Range]) -> Range | None:
    """The smallest and largest value *node* can take, an integer array
    computed from the arrays of *known* ranges by views, integer casts,
    gathers, sums, products and NumPy's negative-index wrap
    (``where(x < 0, x + n, x)``); None when that does not follow."""
    if node in known:
        return known[node]
    if node.dtype.kind not in "iu":
        return None
    if is_kind(node, "const"):
        value = int(node.value)             # type: ignore[attr-defined]
        return value, value
    if is_kind(node, "view", "reshape", "gather"):
        return value_range(node.arg, known)  # type: ignore[attr-defined]
    if not is_kind(node, "map"):
        return None
    node = cast(Map, node)
    if node.op == "astype":
        inner = value_range(node.args[0], known)
        if inner is None:
            return None
        info = np.iinfo(node.dtype)
        return inner if info.min <= inner[0] and inner[1] <= info.max else None
    if node.op == "where":
        return _where_range(node, known)
    if node.op in ("add", "multiply"):
        parts = [value_range(a, known) for a in node.args]
        if any(p is None for p in parts):
            return None
        (a, b), (c, d) = parts                  # type: ignore[misc]
        if node.op == "add":
            return a + c, b + d
        corners = [a * c, a * d, b * c, b * d]
        return min(corners), max(corners)
    return None


def _where_range(node: Map, known: Mapping[Node, Range]) -> Range | None:
    """``where(x < c, yes, no)``: the range of the branch taken when *x*'s
    range decides the test, else of both."""
    test, yes, no = node.args
    if is_kind(test, "map") and test.op == "less" \
            and is_kind(test.args[1], "const"):             # type: ignore[attr-defined]
        tested = value_range(test.args[0], known)            # type: ignore[attr-defined]
        bound = int(test.args[1].value)                      # type: ignore[attr-defined]
        if tested is not None and tested[0] >= bound:
            return value_range(no, known)
        if tested is not None and tested[1] < bound:
            return value_range(yes, known)
    parts = [value_range(yes, known), value_range(no, known)]
    if parts[0] is None or parts[1] is None:
        return None
    return min(parts[0][0], parts[1][0]), max(parts[0][1], parts[1][1])


__all__ = ["value_range"]
