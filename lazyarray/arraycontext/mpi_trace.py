"""Host exchanges written for eager contexts, recorded lazily while
``actx.compile`` traces.

grudge exchanges rank-boundary traces for contexts other than pytato's by
copying each to the host (``actx.to_numpy``), posting ``comm.Isend`` and
``comm.Irecv`` on NumPy buffers, waiting, and reading the received buffer
back (``actx.from_numpy``). Inside a compiled function those host values
do not exist yet. While a trace runs, :class:`LazyarrayMPIArrayContext`
therefore answers ``to_numpy`` with :class:`TracedHost` placeholders, and
its communicator (:func:`TracingCommunicator`: the same MPI communicator,
whose ``Isend`` and ``Irecv`` also take placeholders) records the sends
and receives; the first ``from_numpy`` of a received placeholder makes
one lazy exchange (``actx.exchange``, an external call of the graph) of
everything posted with its tag, and the received arrays become its
outputs. Replayed, each call exchanges the new values, with no host value
read while tracing.

A placeholder refuses to be read (NumPy functions other than ``empty_like``
raise): a trace that reads values on the host fails as it did before.

Public names: TracedHost, TracingCommunicator, traced_host_copies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarray.arraycontext.compile import depends_on_trace
from lazyarray.handle import LazyArray


class TracedHost(np.ndarray):
    """The host copy of a lazy array while tracing (*lazy*: the array; None
    for a receive buffer): shape and dtype only, not to be read."""

    lazy: Any = None

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.empty_like:
            return _placeholder(self.shape, self.dtype, None)
        raise TypeError("a host copy of a lazy array made while tracing a compiled "
                        "function is not a value: only an MPI send of the context's "
                        "communicator takes it")

    def __array_ufunc__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__array_function__(None, (), args, kwargs)


def _placeholder(shape: tuple, dtype: Any, lazy: Any) -> TracedHost:
    out = np.zeros(shape, dtype).view(TracedHost)
    out.lazy = lazy
    return out


def traced_host_copies(actx: Any, array: Any) -> Any:
    """``to_numpy`` while tracing: a placeholder for each leaf of *array*
    that depends on the call (its arguments or numbers), the host values of
    the others (captured arrays: the same at every call)."""
    leaves, _ = actx._walker.flatten(array)
    if not any(isinstance(x, LazyArray) and depends_on_trace(x.node) for x in leaves):
        return None

    def leaf(x: Any) -> Any:
        if isinstance(x, LazyArray):
            return _placeholder(tuple(x.shape), x.dtype, x)
        return x

    return actx._walker.map(leaf, array)


class _Done:
    """The request of a recorded send or receive (nothing to wait for)."""

    def Wait(self, status: Any = None) -> bool:
        return True

    def Test(self, status: Any = None) -> bool:
        return True


_CLASSES: dict[type, type] = {}


def TracingCommunicator(comm: Any, actx: Any) -> Any:
    """*comm* (an ``mpi4py`` intracommunicator) as an object of a subclass of
    its class on the same MPI communicator, whose ``Isend``/``Irecv`` record
    placeholders for *actx* (see the module documentation); ``.comm`` is
    *comm*."""
    base = type(comm)
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type(f"Tracing{base.__name__}", (_Recording, base), {})
    wrapped = cls(comm)
    wrapped.comm = comm
    wrapped.actx = actx
    wrapped.pending = []
    wrapped.results = {}
    return wrapped


class _Recording:
    """The methods :func:`TracingCommunicator` adds to a communicator class."""

    comm: Any
    actx: Any
    #: posted and not yet exchanged: ("send" | "recv", rank, tag, placeholder)
    pending: list
    #: received placeholders by id: (placeholder, lazy array)
    results: dict

    def Isend(self, buf: Any, dest: int, tag: int = 0) -> Any:
        if isinstance(buf, TracedHost):
            self.pending.append(("send", dest, tag, buf))
            return _Done()
        return super().Isend(buf, dest, tag)      # type: ignore[misc]

    def Irecv(self, buf: Any, source: int = -1, tag: int = -1) -> Any:
        if isinstance(buf, TracedHost):
            self.pending.append(("recv", source, tag, buf))
            return _Done()
        return super().Irecv(buf, source, tag)    # type: ignore[misc]

    def received(self, buf: TracedHost) -> Any:
        """The lazy array received into the placeholder *buf*: the posted
        sends and receives of its tag exchanged first (one lazy exchange)."""
        found = self.results.get(id(buf))
        if found is None:
            tag = next((t for kind, _, t, b in self.pending if b is buf), None)
            if tag is None:
                raise TypeError("from_numpy of a traced host copy that no receive was "
                                "posted into")
            mine = [p for p in self.pending if p[2] == tag]
            self.pending = [p for p in self.pending if p[2] != tag]
            sends = {rank: b.lazy for kind, rank, _, b in mine if kind == "send"}
            receives = {rank: b for kind, rank, _, b in mine if kind == "recv"}
            got = self.actx.exchange(
                sends, {rank: (b.shape, b.dtype) for rank, b in receives.items()}, tag=tag)
            for rank, b in receives.items():
                self.results[id(b)] = (b, got[rank])
            found = self.results[id(buf)]
        return found[1]


__all__ = ["TracedHost", "TracingCommunicator", "traced_host_copies"]
