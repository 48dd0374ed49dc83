"""lazyarray as an arraycontext ``ArrayContext``: the array backend of PDE
codes written against arraycontext (meshmode, grudge, pytential, mirgecom).

``LazyarrayArrayContext(queue=None, allocator=None)`` needs arraycontext
(``pip install lazyarray[pde]`` plus arraycontext from its repository, see
docs/pde-backend.md); it is imported on first use, as is
``LazyarrayMPIArrayContext(mpi_communicator, queue=None)`` (one MPI rank,
grudge's ``MPIBasedArrayContext`` contract; mpi4py too). The pieces it is built
from import without arraycontext:

- :mod:`~lazyarray.arraycontext.namespace`: ``actx.np``'s functions;
- :mod:`~lazyarray.arraycontext.freeze`: computing several arrays together;
- :mod:`~lazyarray.arraycontext.tags`: tags beside the graph;
- :mod:`~lazyarray.arraycontext.compile`: ``actx.compile`` on ``la.jit``;
- :mod:`~lazyarray.arraycontext.traversal`: walking containers;
- :mod:`~lazyarray.arraycontext.sparse`: CSR products on the device;
- :mod:`~lazyarray.arraycontext.loopy_call`: loopy programs as graph nodes
  (needs loopy).

Importing :mod:`lazyarray.arraycontext.pytest` registers the context with
arraycontext's pytest machinery as ``lazyarray``.

Public names: LazyarrayArrayContext, LazyarrayMPIArrayContext (lazily),
arraycontext_available.
"""

from __future__ import annotations

from typing import Any


def arraycontext_available() -> bool:
    """Whether arraycontext (and so the context class) can be imported."""
    try:
        import arraycontext  # noqa: F401  (arraycontext is optional)
    except ImportError:
        return False
    return True


def __getattr__(name: str) -> Any:
    if name in ("LazyarrayArrayContext", "LazyarrayFakeNumpyNamespace"):
        from lazyarray.arraycontext import context  # (needs arraycontext: optional)
        return getattr(context, name)
    if name == "LazyarrayMPIArrayContext":
        from lazyarray.arraycontext import mpi  # (needs arraycontext, mpi4py: optional)
        return mpi.LazyarrayMPIArrayContext
    raise AttributeError(f"module 'lazyarray.arraycontext' has no attribute '{name}'")


__all__ = ["LazyarrayArrayContext", "LazyarrayMPIArrayContext", "arraycontext_available"]
