"""Helpers shared by the tests of every component: the checkout's root
folder, host copies of results, counting what lazyarray launches and builds."""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def host(ary):
    """*ary* (a pyopencl array, a lazy array or a NumPy value) as a NumPy array."""
    return ary.get() if hasattr(ary, "get") else np.asarray(ary)
