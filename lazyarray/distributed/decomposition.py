"""Cartesian domain decomposition: which block of a global grid each MPI rank
owns, who its neighbours are, and moving whole fields between rank 0 and the
blocks.

Public names: CartesianDecomposition, block_range, OFFSETS.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from lazyarray.handle import LazyArray


def block_range(n: int, parts: int, k: int) -> tuple[int, int]:
    """``(start, stop)`` of part *k* of ``range(n)`` cut into *parts* nearly
    equal parts (the first ``n % parts`` parts one longer)."""
    size, extra = divmod(n, parts)
    start = k * size + min(k, extra)
    return start, start + size + (1 if k < extra else 0)


def offsets(ndim: int) -> tuple[tuple[int, ...], ...]:
    """The directions to the neighbours of a block in *ndim* dimensions (faces,
    edges and corners: each axis -1, 0 or +1, not all 0), in a fixed order."""
    return tuple(o for o in itertools.product((-1, 0, 1), repeat=ndim) if any(o))


#: :func:`offsets` of 1, 2 and 3 dimensions
OFFSETS = {d: offsets(d) for d in (1, 2, 3)}


class CartesianDecomposition:
    """A global array of *global_shape* cut into blocks on a Cartesian grid of
    the ranks of *comm* (``MPI.Compute_dims`` chooses the grid unless *dims*
    is given). *periods*: per axis (or one bool for all), whether the axis
    wraps around. *halo*: the width of the ghost layer each block needs from
    its neighbours (the stencil's reach).

    Attributes: ``cart`` (the Cartesian communicator, ranks not reordered),
    ``rank``, ``size``, ``dims``, ``coords``, ``start``/``stop`` (this rank's
    block in global indices), ``local_shape``, ``neighbors`` (offset ->
    rank, ``MPI.PROC_NULL`` past a boundary that does not wrap).
    """

    def __init__(self, comm, global_shape: Sequence[int], periods=True, halo: int = 1,
                 dims: Sequence[int] | None = None):
        from mpi4py import MPI  # (mpi4py is optional)

        self.global_shape = tuple(int(n) for n in global_shape)
        ndim = len(self.global_shape)
        if isinstance(periods, (bool, np.bool_)):
            periods = (bool(periods),) * ndim
        self.periods = tuple(bool(p) for p in periods)
        if len(self.periods) != ndim:
            raise ValueError(f"periods {periods!r} for a {ndim}-d grid")
        self.halo = int(halo)
        if self.halo < 0:
            raise ValueError("halo must be >= 0")
        self.dims = tuple(MPI.Compute_dims(comm.Get_size(), list(dims or [0] * ndim)))
        self.cart = comm.Create_cart(list(self.dims), list(self.periods), reorder=False)
        self.rank = self.cart.Get_rank()
        self.size = self.cart.Get_size()
        self.coords = tuple(self.cart.Get_coords(self.rank))
        ranges = [block_range(n, p, c)
                  for n, p, c in zip(self.global_shape, self.dims, self.coords)]
        self.start = tuple(r[0] for r in ranges)
        self.stop = tuple(r[1] for r in ranges)
        self.local_shape = tuple(b - a for a, b in ranges)
        if self.halo and min(self.local_shape) < self.halo:
            raise ValueError(
                f"rank {self.rank}'s block {self.local_shape} is thinner than the halo "
                f"({self.halo}): use fewer ranks or a larger grid")
        self.offsets = offsets(ndim)
        self.neighbors = {o: self._neighbor(o) for o in self.offsets}

    @property
    def ndim(self) -> int:
        return len(self.global_shape)

    def _neighbor(self, offset: tuple[int, ...]) -> int:
        from mpi4py import MPI  # (mpi4py is optional)

        coords = []
        for c, o, p, d in zip(self.coords, offset, self.periods, self.dims):
            c += o
            if not 0 <= c < d:
                if not p:
                    return MPI.PROC_NULL
                c %= d
            coords.append(c)
        return self.cart.Get_cart_rank(coords)

    def at_boundary(self, axis: int, side: int) -> bool:
        """Whether this block touches the global boundary on *side* (-1 or +1)
        of *axis* (whether or not the axis wraps)."""
        return (self.coords[axis] == 0) if side < 0 else (
            self.coords[axis] == self.dims[axis] - 1)

    def local_slices(self) -> tuple[slice, ...]:
        """This rank's block as slices of the global array."""
        return tuple(slice(a, b) for a, b in zip(self.start, self.stop))

    def global_indices(self) -> tuple[np.ndarray, ...]:
        """Open-mesh global indices of this rank's block (as ``np.ogrid``),
        to compute initial values where they live."""
        return tuple(np.arange(a, b).reshape([-1 if k == j else 1 for k in range(self.ndim)])
                     for j, (a, b) in enumerate(zip(self.start, self.stop)))

    def scatter(self, global_array: np.ndarray | None, root: int = 0) -> np.ndarray:
        """This rank's block of *global_array* (given on *root* only)."""
        blocks = None
        if self.rank == root:
            assert global_array is not None, "the global array is given on the root"
            blocks = [np.ascontiguousarray(global_array[self._slices_of(r)])
                      for r in range(self.size)]
        return self.cart.scatter(blocks, root=root)

    def gather(self, local: np.ndarray | LazyArray, root: int = 0) -> np.ndarray | None:
        """The global array on *root* (None elsewhere) from each rank's block
        *local* (a NumPy or lazy array)."""
        local = np.asarray(local.get() if hasattr(local, "get") else local)
        if local.shape != self.local_shape:
            raise ValueError(f"block of shape {local.shape}, expected {self.local_shape}")
        # typed messages, in pieces of at most 2**27 elements: MPI counts are
        # 32-bit, and a pickled block of 2 GiB or more overflows them
        piece = 1 << 27
        if self.rank != root:
            flat = np.ascontiguousarray(local).reshape(-1)
            for start in range(0, flat.size, piece):
                self.cart.Send(flat[start:start + piece], dest=root, tag=7)
            return None
        out = np.empty(self.global_shape, local.dtype)
        for r in range(self.size):
            if r == root:
                out[self._slices_of(r)] = local
                continue
            block = np.empty(tuple(s.stop - s.start for s in self._slices_of(r)), local.dtype)
            flat = block.reshape(-1)
            for start in range(0, flat.size, piece):
                self.cart.Recv(flat[start:start + piece], source=r, tag=7)
            out[self._slices_of(r)] = block
        return out

    def _slices_of(self, rank: int) -> tuple[slice, ...]:
        coords = self.cart.Get_coords(rank)
        return tuple(slice(*block_range(n, p, c))
                     for n, p, c in zip(self.global_shape, self.dims, coords))

    def __repr__(self) -> str:
        return (f"CartesianDecomposition(rank {self.rank}/{self.size}, dims={self.dims}, "
                f"global {self.global_shape}, block {self.start}:{self.stop}, "
                f"periods={self.periods}, halo={self.halo})")
