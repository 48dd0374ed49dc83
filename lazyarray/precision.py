"""The precision of float32 matrix products: float32 (the default) or TF32.

With ``"tf32"`` (allowed by the user, as ``torch.backends.cuda.matmul.
allow_tf32`` or JAX's ``precision="high"`` allow it), float32 products
(``matmul``/``@``, ``dot``, ``tensordot``, ``einsum``, ``inner``, ``vecdot``)
round each operand element to TF32 (10 mantissa bits, ties away from zero)
and add the products in float32: on NVIDIA GPUs with tensor cores, products
of row-major matrices that are whole tiles run on the tensor cores; every
other device computes the same roundings (which costs time there and gains
nothing, so leave the default on them). The setting is read when a product
is recorded, per thread and task (a :class:`contextvars.ContextVar`);
``LAZYARRAY_MATMUL_PRECISION`` gives the default.

Public names: matmul_precision, set_matmul_precision, get_matmul_precision, PRECISIONS.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

#: accepted names -> the precision they select
PRECISIONS = {"float32": "float32", "highest": "float32", "tf32": "tf32", "high": "tf32"}


def _checked(precision: str) -> str:
    chosen = PRECISIONS.get(str(precision).lower()) if isinstance(precision, str) else None
    if chosen is None:
        raise ValueError(f"matmul precision {precision!r} is not one of "
                         f"{', '.join(repr(p) for p in PRECISIONS)}")
    return chosen


_PRECISION: contextvars.ContextVar[str] = contextvars.ContextVar(
    "lazyarray_matmul_precision",
    default=_checked(os.environ.get("LAZYARRAY_MATMUL_PRECISION", "float32")))  # noqa: B039


def get_matmul_precision() -> str:
    """The precision of float32 products recorded now: ``"float32"`` or ``"tf32"``."""
    return _PRECISION.get()


def set_matmul_precision(precision: str) -> str:
    """Record float32 products with *precision* (``"float32"``/``"highest"`` or
    ``"tf32"``/``"high"``) from now on in this thread or task; returns the
    previous precision."""
    previous = _PRECISION.get()
    _PRECISION.set(_checked(precision))
    return previous


@contextlib.contextmanager
def matmul_precision(precision: str) -> Iterator[None]:
    """Record float32 products with *precision* inside the ``with`` block."""
    token = _PRECISION.set(_checked(precision))
    try:
        yield
    finally:
        _PRECISION.reset(token)
