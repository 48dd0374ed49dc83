"""Helpers shared by the tests of every component: the checkout's root
folder, host copies of results, counting what lazyarray launches and builds,
and what a test expects of the tier that computes (NumPy's own errors and no
fallback warning on the host tier, lazyarray's on the device tier)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

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


# {{{ the tier that computes

# (lazyarray is imported inside the helpers, as in counting(): importing it
# here would import kernelcore before conftest points its cache directory away)

def numpy_computes(*arrays) -> bool:
    """Whether NumPy itself computes on *arrays* here: the tier in force is
    not ``"device"`` and each of them is a host array (``la.HostArray``)."""
    import lazyarray as la
    return la.get_tier() != "device" and all(isinstance(a, la.HostArray) for a in arrays)


def error_match(device: str, numpy_call: Callable, *arrays) -> str:
    """The pattern an error's message must match: where NumPy computes on
    *arrays*, exactly the message of the error ``numpy_call()`` raises; else
    the pattern *device* of lazyarray's own message."""
    if not numpy_computes(*arrays):
        return device
    try:
        numpy_call()
    except Exception as e:
        return re.escape(str(e))
    raise AssertionError("NumPy raised no error")


@contextmanager
def host_fallback(*arrays, match: str | None = None) -> Iterator[None]:
    """Where the device computes on *arrays*: the block must warn with a
    LazyArrayHostFallbackWarning (matching *match*), lazyarray running NumPy
    for what it has no kernel of; where NumPy computes on them (the host
    tier), NumPy runs as it is and the block must not warn so."""
    import lazyarray as la
    if numpy_computes(*arrays):
        with warnings.catch_warnings():
            warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
            yield
    else:
        with pytest.warns(la.LazyArrayHostFallbackWarning, match=match):
            yield

# }}}
