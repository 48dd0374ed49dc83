"""Helpers shared by the tests of every component: the checkout's root
folder, host copies of results, counting what lazyarray launches and builds."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def host(ary):
    """*ary* (a pyopencl array, a lazy array or a NumPy value) as a NumPy array."""
    return ary.get() if hasattr(ary, "get") else np.asarray(ary)


class Counts:
    """What lazyarray did since a :func:`counting` block began: ``launches``,
    ``planned`` or any other key of ``lazyarray.run.STATS``, as attributes
    (read inside the block or after it)."""

    def __init__(self, stats):
        self._stats = stats
        self._start = dict(stats)

    def __getattr__(self, key):
        return self._stats[key] - self._start[key]


@contextmanager
def counting():
    """``with counting() as n: ...``, then ``n.launches``, ``n.planned``."""
    from lazyarray.run import STATS
    yield Counts(STATS)


def launches_of(fn):
    """*fn*'s result and the number of kernels lazyarray launched for it."""
    with counting() as n:
        result = fn()
    return result, n.launches
