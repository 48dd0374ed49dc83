"""LazyarrayMPIArrayContext: the lazy array context on one MPI rank.

grudge's contract for distributed array contexts is a context that is an
instance of ``grudge.array_context.MPIBasedArrayContext`` and carries the
communicator of its ranks as ``mpi_communicator``: grudge's distributed
reductions (``nodal_sum``, ``nodal_max``, norms) and its exchange of rank
boundary traces use it. This context has the attribute, and when grudge is
installed it counts as such a context (registered as a virtual subclass);
``clone`` keeps the communicator.

Beyond grudge's contract, the context exchanges and reduces inside the lazy
graph (:mod:`lazyarray.calls`), so that the work runs inside
``actx.compile`` (recorded once, replayed each call, as the kernels around
it):

* :meth:`LazyarrayMPIArrayContext.exchange`: arrays sent to other ranks and
  arrays received from them (nonblocking sends and receives, waited for
  together);
* :meth:`LazyarrayMPIArrayContext.allreduce`: a container's arrays combined
  over the ranks elementwise, the same value on every rank
  (:func:`lazyarray.distributed.allreduce`: exact, in rank order).

Public names: LazyarrayMPIArrayContext.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import lazyarray as la
from lazyarray.arraycontext.context import LazyarrayArrayContext
from lazyarray.arraycontext.mpi_trace import TracedHost, TracingCommunicator, traced_host_copies
from lazyarray.arraycontext.tags import TaggedArray
from lazyarray.calls import call
from lazyarray.distributed.reductions import _OPS, allreduce
from lazyarray.handle import LazyArray
from lazyarray.run import using_queue
from lazyarray.run.launch import new_array
from lazyarray.tracing import TRACING


def _upload(queue: cl.CommandQueue, host: np.ndarray) -> cla.Array:
    """*host* in a new lazyarray array on *queue*."""
    out = new_array(queue, host.shape or (1,), host.dtype)
    if host.size:
        out.set(np.ascontiguousarray(host).reshape(out.shape), queue=queue)
    return out if host.shape else out.reshape(())


class _Exchange:
    """An exchange between ranks: what an external call of the graph runs.
    Inputs ``to<r>``: the array sent to rank r; outputs ``from<r>``: the array
    received from rank r (of the shape and dtype given)."""

    kernel = None

    def __init__(self, comm: Any, dests: tuple[int, ...],
                 receives: Mapping[int, tuple[tuple[int, ...], np.dtype]], tag: int):
        self.comm = comm
        self.dests = dests
        self.receives = dict(receives)
        self.tag = tag
        self.outputs = {f"from{r}": (tuple(shape), np.dtype(dtype))
                        for r, (shape, dtype) in self.receives.items()}

    def run(self, queue: cl.CommandQueue, values: Mapping[str, Any],
            events: list | None) -> dict[str, cla.Array]:
        from mpi4py import MPI  # (mpi4py is optional)
        requests = []
        buffers = []
        for r, (shape, dtype) in self.receives.items():
            buf = np.empty(shape, dtype)
            buffers.append((r, buf))
            requests.append(self.comm.Irecv(buf, source=r, tag=self.tag))
        sent = []
        for r in self.dests:
            host = np.ascontiguousarray(values[f"to{r}"].get(queue=queue))
            sent.append(host)          # (kept until the sends are done)
            requests.append(self.comm.Isend(host, dest=r, tag=self.tag))
        MPI.Request.Waitall(requests)
        return {f"from{r}": _upload(queue, buf) for r, buf in buffers}


class _AllReduce:
    """An array combined elementwise over the ranks: input ``x``, output
    ``result`` (same shape and dtype)."""

    kernel = None

    def __init__(self, comm: Any, op: str, shape: tuple[int, ...], dtype: np.dtype):
        self.comm = comm
        self.op = op
        self.outputs = {"result": (tuple(shape), np.dtype(dtype))}

    def run(self, queue: cl.CommandQueue, values: Mapping[str, Any],
            events: list | None) -> dict[str, cla.Array]:
        local = values["x"].get(queue=queue)
        combined = np.asarray(allreduce(local, self.op, self.comm), dtype=local.dtype)
        return {"result": _upload(queue, combined.reshape(local.shape))}


class LazyarrayMPIArrayContext(LazyarrayArrayContext):
    """The lazy array context (see :class:`LazyarrayArrayContext`) of one
    rank of *mpi_communicator*, computing on *queue*."""

    def __init__(self, mpi_communicator: Any, queue: cl.CommandQueue | None = None, *,
                 allocator: Any = None, single_launch: bool | None = None):
        super().__init__(queue, allocator, single_launch)
        #: the communicator of the ranks (grudge's ``MPIBasedArrayContext``),
        #: which also takes traced host copies (see :mod:`.mpi_trace`)
        self.mpi_communicator = TracingCommunicator(mpi_communicator, self)
        # exchanges are told apart by tags, counted alike on every rank
        # (ranks run the same program)
        self._tags = itertools.count(0x4C41)

    def __repr__(self) -> str:
        comm = self.mpi_communicator
        return (f"<LazyarrayMPIArrayContext rank {comm.Get_rank()} of {comm.Get_size()} "
                f"on {self.queue.device.name.strip()!r}>")

    def clone(self) -> LazyarrayMPIArrayContext:
        return type(self)(self.mpi_communicator.comm, self.queue, allocator=self.allocator,
                          single_launch=self.single_launch)

    def to_numpy(self, array: Any) -> Any:
        # while tracing: placeholders that only this context's communicator takes
        traced = traced_host_copies(self, array) if TRACING.names else None
        return super().to_numpy(array) if traced is None else traced

    def from_numpy(self, array: Any) -> Any:
        if isinstance(array, TracedHost):
            return self.mpi_communicator.received(array)
        return super().from_numpy(array)

    def _lazy(self, x: Any) -> LazyArray:
        """*x* (an array of this context, a frozen one, or a NumPy array) as a
        lazy array of this context."""
        if isinstance(x, (LazyArray, cla.Array)):
            return self._thaw_leaf(x)
        with using_queue(self.queue):
            return la.asarray(np.asarray(x))

    def exchange(self, sends: Mapping[int, Any],
                 receives: Mapping[int, tuple[tuple[int, ...], Any]], tag: int | None = None
                 ) -> dict[int, Any]:
        """Send ``sends[r]`` (an array of this context) to rank r, and receive
        from each rank r of *receives* an array of shape and dtype
        ``receives[r]``; the received arrays by rank. Lazy: the exchange is a
        node of the graph, run when a received value is needed (inside
        ``actx.compile``: at each call). Every rank must make its matching
        exchanges in the same order (or give the same *tag*)."""
        dests = tuple(sorted(sends))
        callee = _Exchange(self.mpi_communicator.comm, dests,
                           {int(r): (tuple(s), np.dtype(d)) for r, (s, d) in receives.items()},
                           next(self._tags) if tag is None else tag)
        nodes = {f"to{r}": self._lazy(sends[r]).node for r in dests}
        outputs = call(callee, nodes)
        return {int(name[4:]): TaggedArray(node) for name, node in outputs.items()}

    def allreduce(self, ary: Any, op: str = "sum") -> Any:
        """The arrays of the container *ary* combined elementwise over the
        ranks by *op* (``"sum"``, ``"max"``, ``"min"``, ``"prod"``): the same
        values on every rank, lazily (a node of the graph, inside
        ``actx.compile`` too)."""
        if op not in _OPS:
            raise ValueError(f"op must be one of {_OPS}, got {op!r}")

        def leaf(x: Any) -> Any:
            x = self._lazy(x)
            callee = _AllReduce(self.mpi_communicator.comm, op, x.shape, x.dtype)
            return TaggedArray(call(callee, {"x": x.node})["result"])

        return self._walker.map(leaf, ary)


def _register_with_grudge() -> None:
    """Make the context an ``MPIBasedArrayContext`` for grudge, if installed."""
    try:
        from grudge.array_context import MPIBasedArrayContext  # (grudge is optional)
    except Exception:       # (grudge is optional; a broken install is not ours)
        return
    MPIBasedArrayContext.register(LazyarrayMPIArrayContext)


_register_with_grudge()

__all__ = ["LazyarrayMPIArrayContext"]
