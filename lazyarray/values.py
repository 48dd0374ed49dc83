"""Computed values of graph nodes, kept apart from the nodes (which stay
immutable values): a value lives as long as its node.

Also which array handle (``LazyArray``) holds a node as its value: a value a
user named, which later work will read again.

Also which inputs NumPy computed on the host (a host fallback), for ``explain``.

Public names: on_device, keep_on_device, on_host, keep_on_host, hold, holder,
made_on_host, host_origin, computed_count, NAMED_DEPTH.
"""

from __future__ import annotations

import weakref
from typing import Any

_DEVICE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HOST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HOST_ORIGIN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


#: the tables of _DEVICE and _HOST (WeakKeyDictionary.get without its Python frame:
#: asked several times per eager evaluation)
_DEVICE_DATA, _HOST_DATA = _DEVICE.data, _HOST.data  # type: ignore[attr-defined]
_ref = weakref.ref


def on_device(node: object) -> Any:
    """The device array computed for *node*, or None."""
    return _DEVICE_DATA.get(_ref(node))


#: how many values were computed in this process (see :func:`computed_count`)
_COMPUTED = [0]


def keep_on_device(node: object, value: Any) -> None:
    """Record *value* (a device array) as *node*'s value."""
    _DEVICE[node] = value
    _COMPUTED[0] += 1


def computed_count() -> int:
    """How many values were computed so far: work recorded between two
    computations (one expression, a stencil's reads) sees one count."""
    return _COMPUTED[0]


def on_host(node: object) -> Any:
    """The host copy kept for *node*, or None."""
    return _HOST_DATA.get(_ref(node))


def keep_on_host(node: object, value: Any) -> None:
    """Record *value* (a NumPy array) as *node*'s host copy."""
    _HOST[node] = value


#: a value that an array handle holds, NAMED_DEPTH or more operations deep in
#: work not computed yet, is computed (and stored) when work reading it is
#: (:mod:`lazyarray.run.evaluation`): a loop that tests a value each step
#: (``while float(err) > tol``) would otherwise compute the named arrays'
#: growing graphs anew each step.
NAMED_DEPTH = 16


def hold(node: Any, handle: Any) -> None:
    """Record that *handle* (an array handle) now holds *node* as its value
    (the latest handle given a node is its holder)."""
    node._holder = _ref(handle)


def holder(node: Any) -> Any:
    """The live handle holding *node* as its value, or None."""
    try:
        handle = node._holder()
    except AttributeError:          # (never held: inputs, nodes made for planning)
        return None
    return handle if handle is not None and handle._node is node else None


def made_on_host(node: object, what: str) -> None:
    """Record that NumPy computed *node*'s value on the host (*what*: the
    function, as ``np.median``)."""
    _HOST_ORIGIN[node] = what


def host_origin(node: object) -> str | None:
    """The NumPy function that computed *node*'s value on the host, if one did."""
    return _HOST_ORIGIN.get(node)
