"""Halo exchange as a step of a lazyarray program, overlapped with the
interior of a stencil update.

:class:`HaloExchange` holds one block's exchange schedule, made once: the
faces (edges and corners too) that go to each neighbour, packed on the device
by one jitted kernel into one contiguous buffer, host buffers, and persistent
MPI requests (``Send_init``/``Recv_init``) that each step only starts and
waits for. What arrives is uploaded in one copy and read by the boundary
kernels straight from that buffer (no padded copy of the block is made).

:class:`HaloStep` splits a stencil update ``fn(padded block) -> new block``
(the contract of ``dask.array.map_overlap``: the input carries *halo* extra
cells on each side, the output has the block's shape) into

1. the interior, ``fn`` on the block alone (it reads no halo), and the packing
   of the faces, both enqueued before any message is sent;
2. the exchange, on the host, while the device computes the interior;
3. the boundary strips, computed from the block and the received halos, and
   joined with the interior into the new block.

Each part is a ``la.jit`` function: it is traced on the first step and its
kernels are replayed on later ones, as the MPI requests are.

Public names: HaloExchange, HaloStep.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import lazyarray as la
from lazyarray.distributed.decomposition import CartesianDecomposition
from lazyarray.errors import LazyArrayError
from lazyarray.jit import jit
from lazyarray.run import default_queue, evaluate
from lazyarray.tracing import TRACING

Box = tuple[tuple[int, int], ...]


def _buffer(array: cla.Array) -> Any:
    """The device buffer of *array* (pooled or not)."""
    assert array.data is not None and not array.offset
    return array.data


def _face(n: int, h: int, side: int) -> slice:
    """The cells of an axis of length *n* sent towards *side*."""
    return slice(0, h) if side < 0 else slice(n - h, n) if side > 0 else slice(0, n)


class HaloExchange:
    """The halo exchange of one rank's block of *decomp* for arrays of *dtype*.
    Past a boundary that does not wrap, the halo holds *fill*.

    ``start(u)`` packs the faces of the block *u* and queues their copy to the
    host; ``finish()`` exchanges them and returns the received halos on the
    device as one flat array (see :meth:`halo_pieces`).
    """

    def __init__(self, decomp: CartesianDecomposition, dtype=np.float64, fill=0):
        from mpi4py import MPI  # (mpi4py is optional)

        self.decomp = decomp
        self.dtype = np.dtype(dtype)
        h, n = decomp.halo, decomp.local_shape
        self.offsets = decomp.offsets
        index = {o: k for k, o in enumerate(self.offsets)}
        self.send_slices = [tuple(_face(m, h, s) for m, s in zip(n, o)) for o in self.offsets]
        #: the shape of the halo on each side (the same cells as the face sent there)
        self.shapes = [tuple(h if s else m for m, s in zip(n, o)) for o in self.offsets]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.starts = [int(x) for x in np.cumsum([0, *sizes])]
        total = self.starts[-1]
        self.host_send = np.empty(total, self.dtype)
        self.host_recv = np.full(total, fill, self.dtype)
        self.device_recv = cla.to_device(default_queue(), self.host_recv)
        self.requests = []
        for k, o in enumerate(self.offsets):
            a, b = self.starts[k], self.starts[k + 1]
            # the neighbour at offset o receives our face o as its halo -o: tags
            # name the direction of travel, so that one rank that is our
            # neighbour on several sides (few ranks, periodic) is not confused
            self.requests.append(decomp.cart.Recv_init(
                self.host_recv[a:b], source=decomp.neighbors[o],
                tag=index[tuple(-s for s in o)]))
            self.requests.append(decomp.cart.Send_init(
                self.host_send[a:b], dest=decomp.neighbors[o], tag=k))
        self._pack = jit(self._pack_faces)
        self._read: cl.Event | None = None
        self._uploads: cl.CommandQueue | None = None
        self._mpi = MPI

    def _pack_faces(self, u):
        return la.concatenate([u[s].reshape(-1) for s in self.send_slices])

    def start(self, u: la.LazyArray) -> None:
        """Enqueue the packing of *u*'s faces and their copy to the host."""
        packed = evaluate(self._pack(u).node)
        self._read = cl.enqueue_copy(default_queue(), self.host_send, _buffer(packed),
                                     is_blocking=False)

    def finish(self) -> cla.Array:
        """Wait for the packed faces, exchange them, and enqueue the upload of
        the halos; the flat array of halos (valid for the work queued next)."""
        if self._read is not None:
            default_queue().flush()
            self._read.wait()
            self._read = None
        self._mpi.Prequest.Startall(self.requests)
        self._mpi.Request.Waitall(self.requests)
        # the upload goes through a queue of its own, which the lazyarray queue
        # waits for (PoCL's in-order queue held the host in a write queued
        # behind the interior); the next step's start() is queued after that
        # wait, and the host buffer is written again only once it completed
        queue = default_queue()
        if self._uploads is None:
            self._uploads = cl.CommandQueue(queue.context, queue.device)
        upload = cl.enqueue_copy(self._uploads, _buffer(self.device_recv), self.host_recv,
                                 is_blocking=False)
        self._uploads.flush()
        cl.enqueue_barrier(queue, wait_for=[upload])
        return self.device_recv

    def exchange(self, u: la.LazyArray) -> cla.Array:
        """:meth:`start` and :meth:`finish`, without overlap."""
        self.start(u)
        return self.finish()

    def halo_pieces(self, recv: cla.Array) -> dict:
        """The halo on each side (offset -> array of the halo's shape), as
        views of the flat array *recv* that :meth:`finish` returned."""
        return {o: recv[self.starts[k]:self.starts[k + 1]].reshape(self.shapes[k])
                for k, o in enumerate(self.offsets)}

    def padded_region(self, u: la.LazyArray, halos: dict, lo: Sequence[int], hi: Sequence[int]
                      ) -> la.LazyArray | cla.Array:
        """The cells ``[lo, hi)`` of the block *u* padded by the halos (indices
        of the padded block: 0 is the first halo cell), joined from *u* and the
        halo pieces they overlap."""
        h, n = self.decomp.halo, self.decomp.local_shape
        segments = []
        for a, b, m in zip(lo, hi, n):
            parts = []
            for side, (p, q) in ((-1, (0, h)), (0, (h, h + m)), (1, (h + m, 2 * h + m))):
                x, y = max(a, p), min(b, q)
                if x < y:
                    parts.append((side, slice(x - p, y - p)))
            segments.append(parts)

        return _joined(u, halos, segments, 0, (), ())


def _joined(u, halos: dict, segments: list, axis: int, sides: tuple, slices: tuple):
    """The part of the padded block along *segments* from *axis* on (see
    :meth:`HaloExchange.padded_region`): a function of the module, not a
    recursive closure, whose cell would keep the arrays alive until the cycle
    collector ran."""
    if axis == len(segments):
        piece = u if not any(sides) else halos[sides]
        return piece[slices]
    parts = [_joined(u, halos, segments, axis + 1, (*sides, side), (*slices, s))
             for side, s in segments[axis]]
    return parts[0] if len(parts) == 1 else la.concatenate(parts, axis=axis)


class HaloStep:
    """One update ``u -> fn(padded u, *aux)`` of a block of *decomp*, with
    its halo exchange overlapped by the interior (see the module's
    documentation). *fn* takes the block padded by ``decomp.halo`` cells on
    each side and returns the new block (the padded shape less ``2 * halo``
    on each axis); *aux* are arrays of the block's shape that *fn* reads at
    the output's cells (masks, coefficients), cut to each part as the output
    is. *fill*: the halo past a boundary that does not wrap.

    *overlap=False* waits for the interior before exchanging (the baseline
    that the overlap is measured against). With *trace* set, each call
    appends ``(seconds waiting for the packed faces, seconds in MPI, whether
    the interior was still running when the exchange ended)`` to
    :attr:`trace`.

    Calls are made outside ``la.jit``: each part is jitted already.
    """

    def __init__(self, decomp: CartesianDecomposition, fn: Callable, dtype=np.float64,
                 fill=0, overlap: bool = True, trace: bool = False):
        self.decomp = decomp
        self.fn = fn
        self.exchange = HaloExchange(decomp, dtype, fill)
        self.overlap = overlap
        self.trace: list[tuple[float, float, bool]] | None = [] if trace else None
        h, n = decomp.halo, decomp.local_shape
        self.has_interior = all(m > 2 * h for m in n)
        self._interior = jit(self._interior_part)
        self._boundary = jit(self._boundary_part)
        self._whole = jit(self._whole_part)

    # {{{ the parts (traced by la.jit)

    def _apply(self, padded, aux: tuple, box: Box):
        h = self.decomp.halo
        cut = tuple(slice(a, b) for a, b in box)
        out = self.fn(padded, *[a[cut] for a in aux])
        want = tuple(b - a for a, b in box)
        if tuple(out.shape) != want:
            raise LazyArrayError(
                f"the stencil function returned shape {tuple(out.shape)} for a padded "
                f"input of shape {tuple(padded.shape)}: it must return the input's shape "
                f"less {2 * h} on each axis ({want})")
        return out

    def _interior_part(self, u, aux):
        h, n = self.decomp.halo, self.decomp.local_shape
        return self._apply(u, aux, tuple((h, m - h) for m in n))

    def _boundary_part(self, u, recv, inner, aux):
        h, n = self.decomp.halo, self.decomp.local_shape
        ex = self.exchange
        halos = ex.halo_pieces(recv)

        # (the slabs along the last axis first: each axis's middle holds the next's)
        middle = inner
        for axis in reversed(range(len(n))):
            m = n[axis]
            prefix = tuple((h, k - h) for k in n[:axis])
            rest = tuple((0, k) for k in n[axis + 1:])
            low, high = (self._piece(u, halos, aux, (*prefix, cut, *rest))
                         for cut in ((0, h), (m - h, m)))
            middle = la.concatenate([low, middle, high], axis=axis)
        return middle

    def _piece(self, u, halos, aux, box: Box):
        """The new values of the cells of *box* (from the padded region around it)."""
        h = self.decomp.halo
        lo = [a for a, _ in box]
        hi = [b + 2 * h for _, b in box]
        return self._apply(self.exchange.padded_region(u, halos, lo, hi), aux, box)

    def _whole_part(self, u, recv, aux):
        """The new block of a block too thin to have an interior."""
        h, n = self.decomp.halo, self.decomp.local_shape
        ex = self.exchange
        padded = ex.padded_region(u, ex.halo_pieces(recv), [0] * len(n),
                                  [m + 2 * h for m in n])
        return self._apply(padded, aux, tuple((0, m) for m in n))

    # }}}

    def __call__(self, u, *aux):
        """The new block (a lazy array, its kernels queued)."""
        if TRACING.names:
            raise LazyArrayError(
                "a HaloStep exchanges messages between its kernels: call it outside "
                "la.jit (its parts are jitted already)")
        ex = self.exchange
        queue = default_queue()
        ex.start(u)
        inner = self._interior(u, aux) if self.has_interior else None
        marker = cl.enqueue_marker(queue) if self.trace is not None else None
        if not self.overlap:
            queue.finish()
        t0 = time.perf_counter()
        queue.flush()
        if ex._read is not None:
            ex._read.wait()
            ex._read = None
        t1 = time.perf_counter()
        recv = ex.finish()
        t2 = time.perf_counter()
        if marker is not None and self.trace is not None:
            running = marker.command_execution_status != cl.command_execution_status.COMPLETE
            self.trace.append((t1 - t0, t2 - t1, running))
        if inner is None:
            return self._whole(u, recv, aux)
        return self._boundary(u, recv, inner, aux)

    def run(self, u: la.LazyArray, steps: int, *aux: Any) -> la.LazyArray:
        """*steps* updates of *u*."""
        for _ in range(steps):
            u = self(u, *aux)
        return u
