"""Computed values of graph nodes, kept apart from the nodes (which stay
immutable values): a value lives as long as its node.

Public names: on_device, keep_on_device, on_host, keep_on_host.
"""

from __future__ import annotations

import weakref
from typing import Any

_DEVICE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HOST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def on_device(node) -> Any:
    """The device array computed for *node*, or None."""
    return _DEVICE.get(node)


def keep_on_device(node, value) -> None:
    """Record *value* (a device array) as *node*'s value."""
    _DEVICE[node] = value


def on_host(node) -> Any:
    """The host copy kept for *node*, or None."""
    return _HOST.get(node)


def keep_on_host(node, value) -> None:
    """Record *value* (a NumPy array) as *node*'s host copy."""
    _HOST[node] = value
