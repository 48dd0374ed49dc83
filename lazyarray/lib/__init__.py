"""NumPy's ``numpy.lib`` for lazy arrays: ``la.lib.stride_tricks``
(``sliding_window_view`` and ``as_strided``, as lazy re-indexings)."""

from __future__ import annotations

from lazyarray.lib import stride_tricks

__all__ = ["stride_tricks"]


def __dir__() -> list[str]:
    """The namespace's API."""
    return sorted(__all__)
