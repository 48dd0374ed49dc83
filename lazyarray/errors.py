"""Exceptions of lazyarray (each also the built-in type a NumPy user expects).

Public names: LazyArrayError, ShapeError, DTypeError, IndexingError.
"""


class LazyArrayError(Exception):
    """Base class of lazyarray's errors."""


class ShapeError(LazyArrayError, ValueError):
    """Shapes that do not broadcast or do not fit an operation."""


class DTypeError(LazyArrayError, TypeError):
    """A dtype an operation does not support."""


class IndexingError(LazyArrayError, IndexError):
    """An index outside an array, or more indices than axes."""
