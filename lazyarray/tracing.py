"""What ``la.jit`` is tracing in each thread, and the refusal of work that
needs array values while it does.

Public names: TRACING, tracing, refuse_while_tracing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Tracing(threading.local):
    """What ``la.jit`` is tracing in the current thread."""

    def __init__(self) -> None:
        #: names of the jitted functions being traced (innermost last)
        self.names: list[str] = []


#: the jitted functions each thread is tracing
TRACING = _Tracing()


@contextmanager
def tracing(name: str) -> Iterator[None]:
    """Mark the jitted function *name* as traced by this thread for the block."""
    TRACING.names.append(name)
    try:
        yield
    finally:
        TRACING.names.pop()


def refuse_while_tracing(what: str) -> None:
    """Raise if this thread is tracing a function for ``la.jit``: *what*
    depends on array values, which a trace must not bake in."""
    if TRACING.names:
        from lazyarray.errors import LazyArrayError
        raise LazyArrayError(
            f"{what} depends on the values of arrays, so it cannot be used inside "
            f"la.jit (tracing {TRACING.names[-1]}); call it outside the jitted function")
