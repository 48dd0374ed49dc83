"""The statistics map: keys to counts, with filtering, grouping and evaluation.

Public names: ToCountMap, stringify_stats_mapping.
"""


from __future__ import annotations

import contextlib
from collections.abc import Callable, ItemsView, KeysView, ValuesView
from typing import Any

import islpy as isl
import numpy as np

from kernelcore.statistics.counts import Count
from kernelcore.statistics.keys import Sync, _Key, _norm_dtype

dim_type = isl.dim_type


# {{{ the map

def _matches(value, allowed, field: str) -> bool:
    if field == "dtype":
        with contextlib.suppress(TypeError):
            allowed = [_norm_dtype(a) for a in allowed]
    return value in allowed


class ToCountMap:
    """A mapping from keys to counts (:class:`Count` objects or numbers) with
    helpers to filter, group and evaluate them. Looking up a missing key raises
    :class:`KeyError` (as in loopy) unless the map has a *zero*."""

    def __init__(self, count_map=None, zero=None):
        self.count_map: dict = dict(count_map or {})
        #: what a missing key counts (a zero :class:`Count` unless given)
        self.zero = zero

    # mapping protocol

    def _wildcard(self, key) -> list:
        """The stored keys *key* stands for when it names no kernel."""
        if getattr(key, "kernel_name", "") is not None or not hasattr(key, "matches"):
            return []
        return [k for k in self.count_map if key.matches(k)]

    def __getitem__(self, key):
        try:
            return self.count_map[key]
        except KeyError:
            pass
        found = self._wildcard(key)
        if not found:
            if self.zero is None:
                raise KeyError(key)
            return self.zero
        total = self.count_map[found[0]]
        for k in found[1:]:
            total = total + self.count_map[k]
        return total

    def __setitem__(self, key, value) -> None:
        self.count_map[key] = value

    def __contains__(self, key) -> bool:
        return key in self.count_map or bool(self._wildcard(key))

    def __len__(self) -> int:
        return len(self.count_map)

    def __iter__(self):
        return iter(self.count_map)

    def keys(self) -> KeysView:
        return self.count_map.keys()

    def values(self) -> ValuesView:
        return self.count_map.values()

    def items(self) -> ItemsView:
        return self.count_map.items()

    def get(self, key: Any, default: Any = None) -> Any:
        return self.count_map.get(key, default)

    def copy(self, count_map: Any = None) -> ToCountMap:
        return ToCountMap(self.count_map if count_map is None else count_map)

    # arithmetic

    def __add__(self, other) -> ToCountMap:
        if isinstance(other, (int, float)) and other == 0:
            return self.copy()
        if not isinstance(other, ToCountMap):
            return NotImplemented
        result = dict(self.count_map)
        for k, v in other.count_map.items():
            result[k] = result[k] + v if k in result else v
        return ToCountMap(result)

    __radd__ = __add__

    def __mul__(self, other) -> ToCountMap:
        return ToCountMap({k: v * other for k, v in self.count_map.items()})

    __rmul__ = __mul__

    # queries

    def filter_by(self, **kwargs: Any) -> ToCountMap:
        """The entries whose key fields take one of the given values, e.g.
        ``filter_by(dtype=[np.float32], direction=["load"])`` (a single value
        may be given without a list); keys without one of the fields are left out."""
        def ok(key):
            for field, allowed in kwargs.items():
                if not isinstance(allowed, (list, tuple, set, frozenset)):
                    allowed = [allowed]
                if not hasattr(key, field):
                    return False
                if not _matches(getattr(key, field), list(allowed), field):
                    return False
            return True
        return ToCountMap({k: v for k, v in self.count_map.items() if ok(k)})

    def filter_by_func(self, func: Callable[[Any], bool]) -> ToCountMap:
        """The entries whose key satisfies *func*."""
        return ToCountMap({k: v for k, v in self.count_map.items() if func(k)})

    def group_by(self, *fields: str) -> ToCountMap:
        """Counts summed over keys that agree on *fields*; the new keys keep only
        those fields (the rest None). Without fields, everything is summed under
        one key of each key type."""
        result: dict = {}
        for k, v in self.count_map.items():
            if isinstance(k, (_Key, Sync)):
                for f in fields:
                    if f not in k.fields:
                        raise AttributeError(f"group_by: {type(k).__name__} has no "
                                             f"field '{f}'")
                new_key = type(k)(**{f: getattr(k, f) for f in fields})
            else:
                if fields:
                    raise AttributeError(f"group_by: key {k!r} has no fields")
                new_key = k
            result[new_key] = result[new_key] + v if new_key in result else v
        return ToCountMap(result)

    def to_bytes(self) -> ToCountMap:
        """Counts multiplied by the item size of each key's dtype."""
        result = {}
        for k, v in self.count_map.items():
            dtype = getattr(k, "dtype", None)
            if dtype is None:
                raise ValueError(f"to_bytes: key {k!r} has no dtype")
            result[k] = v * int(np.dtype(dtype).itemsize)
        return ToCountMap(result)

    def sum(self) -> Any:
        """All counts added up."""
        total: Any = Count.zero()
        for v in self.count_map.values():
            total = total + v
        return total

    def eval(self, params: dict[str, Any] | None = None) -> ToCountMap:
        """A map of the same keys to numbers, for the parameter values *params*."""
        return ToCountMap({k: _eval(v, params) for k, v in self.count_map.items()},
                          zero=0)

    def eval_and_sum(self, params: dict[str, Any] | None = None) -> Any:
        """The sum of all counts evaluated at *params*."""
        return sum((_eval(v, params) for v in self.count_map.values()), 0)

    def __str__(self) -> str:
        return stringify_stats_mapping(self)

    def __repr__(self) -> str:
        return f"ToCountMap({self.count_map!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, ToCountMap) and self.count_map == other.count_map

    __hash__ = None  # type: ignore[assignment]  # mutable, so unhashable


def _eval(v, params):
    if isinstance(v, Count):
        return v.eval_with_dict(params or {})
    if hasattr(v, "eval_with_dict"):
        return v.eval_with_dict(params or {})
    return v


def stringify_stats_mapping(m: Any) -> str:
    """One ``key : count`` line per entry, sorted by the key's text."""
    items = m.items() if hasattr(m, "items") else m
    lines = [f"{k} : {v}\n" for k, v in sorted(items, key=lambda kv: str(kv[0]))]
    return "".join(lines)

# }}}
