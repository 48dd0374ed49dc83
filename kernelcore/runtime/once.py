"""Filling caches from several threads: each missing value is made once.

A cache is a mapping (a dict, a WeakKeyDictionary, ...). :func:`made_once`
returns its value for a key, making it when missing while other threads that
want the same key wait for it; threads that want other keys go on (so
different kernels compile at the same time). Reading a value that is there
takes no lock. A cache given a limit keeps at most that many values (a
process that meets ever new kernels keeps only the recent ones in memory).

Public names: KeyedLocks, made_once, kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from itertools import islice
from typing import Any, TypeVar

V = TypeVar("V")


class KeyedLocks:
    """One re-entrant lock per key, there while a thread holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Any, list] = {}       # key -> [lock, holders and waiters]

    @contextmanager
    def hold(self, key: Any) -> Iterator[None]:
        """Hold the lock of *key* for the block."""
        with self._guard:
            entry = self._locks.get(key)
            if entry is None:
                entry = self._locks[key] = [threading.RLock(), 0]
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if not entry[1]:
                    del self._locks[key]


def made_once(table: MutableMapping, key: Any, make: Callable[[], V],
              locks: KeyedLocks, limit: int | None = None) -> V:
    """``table[key]``, made by *make* and stored if missing (None counts as
    missing); threads asking for one key at once make it once. A *limit*
    bounds the table: when a new value finds it full, the oldest quarter of
    its entries goes first (those in use elsewhere stay alive there)."""
    value = table.get(key)
    if value is not None:
        return value
    with locks.hold(key):
        value = table.get(key)
        if value is None:
            value = make()
            kept(table, key, value, limit)
    return value


def kept(table: MutableMapping, key: Any, value: Any, limit: int | None) -> None:
    """Store *value* at *key*; a *table* with a *limit* that is full first
    loses its oldest entries, a quarter of the limit."""
    if limit is not None and len(table) >= limit and key not in table:
        excess = len(table) - limit + max(1, limit // 4)
        for old in list(islice(table, excess)):
            table.pop(old, None)
    table[key] = value
