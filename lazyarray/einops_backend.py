"""einops' backend for lazy arrays: ``einops.rearrange``, ``reduce``,
``repeat``, ``pack``/``unpack`` and ``einsum`` on lazyarray's arrays, as
lazy views and reductions.

einops looks for backends among the subclasses of its ``AbstractBackend``
whose framework is imported; :mod:`lazyarray.einops_hook` imports this
module when einops is imported (or at once, if einops was first), so that
``import lazyarray`` is all a program needs.

Public names: LazyArrayBackend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from einops._backends import AbstractBackend

import lazyarray as la
from lazyarray.handle import LazyArray


class LazyArrayBackend(AbstractBackend):
    """einops' operations on :class:`~lazyarray.LazyArray` values."""

    framework_name = "lazyarray"

    def is_appropriate_type(self, tensor: Any) -> bool:
        """Whether *tensor* is a lazy array."""
        return isinstance(tensor, LazyArray)

    def from_numpy(self, x: np.ndarray) -> LazyArray:
        """*x* as a lazy array."""
        return la.asarray(x)

    def to_numpy(self, x: LazyArray) -> np.ndarray:
        """*x*'s value on the host."""
        return x.get()

    def arange(self, start: int, stop: int) -> LazyArray:
        """The integers from *start* up to *stop*."""
        return la.arange(start, stop)

    def shape(self, x: LazyArray) -> tuple:
        """*x*'s shape."""
        return x.shape

    def reshape(self, x: LazyArray, shape: tuple) -> LazyArray:
        """*x* in *shape*."""
        return x.reshape(shape)

    def transpose(self, x: LazyArray, axes: tuple) -> LazyArray:
        """*x* with its axes permuted."""
        return x.transpose(axes)

    def reduce(self, x: LazyArray, operation: str, axes: tuple) -> LazyArray:
        """einops' reduction *operation* (sum, mean, max, ...) over *axes*."""
        return getattr(la, operation)(x, axis=axes)

    def stack_on_zeroth_dimension(self, tensors: list) -> LazyArray:
        """*tensors* stacked along a new first axis."""
        return la.stack(tensors)

    def add_axis(self, x: LazyArray, new_position: int) -> LazyArray:
        """*x* with a new axis of length 1 at *new_position*."""
        return la.expand_dims(x, new_position)

    def add_axes(self, x: LazyArray, n_axes: int, pos2len: dict) -> LazyArray:
        """*x* with new axes at the positions of *pos2len*, repeated to its
        lengths (a broadcast: no copy)."""
        for position in sorted(pos2len):
            x = la.expand_dims(x, position)
        return la.broadcast_to(x, tuple(pos2len.get(k, x.shape[k]) for k in range(n_axes)))

    def tile(self, x: LazyArray, repeats: tuple) -> LazyArray:
        """*x* tiled *repeats* times along each axis."""
        return la.tile(x, repeats)

    def concat(self, tensors: list, axis: int) -> LazyArray:
        """*tensors* joined along *axis*."""
        return la.concatenate(tensors, axis=axis)

    def is_float_type(self, x: LazyArray) -> bool:
        """Whether *x* holds real floating-point numbers (einops' mean needs them)."""
        return x.dtype.kind == "f"

    def einsum(self, pattern: str, *x: LazyArray) -> LazyArray:
        """NumPy's einsum of the operands *x*."""
        return la.einsum(pattern, *x)


__all__ = ["LazyArrayBackend"]
