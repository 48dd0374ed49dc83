"""Joining, splitting, reshaping and other views."""

from __future__ import annotations

import inspect as _inspect
from typing import Any

import numpy as _np

from lazyarray.errors import ShapeError
from lazyarray.fallback import host_call
from lazyarray.handle import LazyArray, asarray
from lazyarray.mapper import is_kind as _is_kind
from lazyarray.ops import construct as _construct
from lazyarray.ops import manipulate as _manipulate
from lazyarray.ops import shape as _shape_ops
from lazyarray.ops.elementwise import broadcast_shapes


def _flipped(x: LazyArray, axis=None) -> LazyArray:
    flip = _manipulate.flip(x.node, axis)
    return x[tuple(slice(None, None, -1) if m[3] < 0 else slice(None)
                   for m in flip.axis_map)] if _is_kind(flip, "view") else x[...]


#: NumPy functions that return views, as views of lazy arrays (the
#: namespace's versions of them)
_VIEW_FUNCTIONS = {
    "squeeze": lambda x, axis=None: x.squeeze(axis),
    "expand_dims": lambda x, axis: x._reshaped(_manipulate.expand_dims(x.node, axis).shape),
    "swapaxes": lambda x, axis1, axis2: x.swapaxes(axis1, axis2),
    "moveaxis": lambda x, source, destination: x._permuted(
        _shape_ops.permutation_of(_manipulate.moveaxis(x.node, source, destination))),
    "flip": _flipped,
    # (read-only, as NumPy's: the elements repeated along broadcast axes are one)
    "broadcast_to": lambda x, shape, subok=False: LazyArray(
        _manipulate.broadcast_to(x.node, shape))._read_only(),
}


# {{{ joining

def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> LazyArray:
    """*arrays* joined along *axis* (NumPy's concatenate); no copies until used."""
    return LazyArray(_construct.concatenate([asarray(a).node for a in arrays], axis, dtype))


def concat(arrays: Any, /, *, axis: int | None = 0) -> LazyArray:
    """*arrays* joined along *axis* (the Array API's concat; ``None``: flattened)."""
    return concatenate(arrays, axis=axis)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[LazyArray, ...]:
    """Views of *x* split along *axis* into its slices (the Array API's unstack)."""
    x = asarray(x)
    if x.ndim == 0:
        raise ShapeError("unstack needs an array of at least 1 dimension")
    axis = _manipulate._one_axis(axis, x.ndim)
    head = (slice(None),) * axis
    return tuple(x[head + (k,)] for k in range(x.shape[axis]))


def stack(arrays: Any, axis: int = 0) -> LazyArray:
    """*arrays* of one shape joined along a new *axis* (NumPy's stack)."""
    return LazyArray(_construct.stack([asarray(a).node for a in arrays], axis))


def hstack(arrays: Any) -> LazyArray:
    """The arrays joined along their second axis (the first for 1-D arrays)."""
    arrays = [asarray(a) for a in arrays]
    return concatenate(arrays, axis=0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(arrays: Any) -> LazyArray:
    """The arrays joined along their first axis (1-D arrays as rows)."""
    arrays = [asarray(a) for a in arrays]
    return concatenate([a.reshape(1, -1) if a.ndim == 1 else a for a in arrays], axis=0)

# }}}



# {{{ shape manipulation

def _manipulation(name):
    impl = getattr(_manipulate, name)
    signature = _signature_of(getattr(_np, name))
    first = next(iter(signature.parameters)) if signature is not None else "x"

    def f(*args, **kwargs):
        if not args and first in kwargs:
            args = (kwargs.pop(first),)         # (NumPy's name of the array argument)
        x, *args = args
        if name in _VIEW_FUNCTIONS:
            return _VIEW_FUNCTIONS[name](asarray(x), *args, **kwargs)
        return LazyArray(impl(asarray(x).node, *args, **kwargs))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's {name}, as a view (no copy until used)."
    f.__signature__ = signature                               # type: ignore[attr-defined]
    return f


def _signature_of(numpy_fn):
    try:
        return _inspect.signature(numpy_fn)
    except (TypeError, ValueError):
        return None


(broadcast_to, expand_dims, squeeze, moveaxis, swapaxes, flip, roll, tile, repeat) = (
    _manipulation(n) for n in ("broadcast_to", "expand_dims", "squeeze", "moveaxis",
                               "swapaxes", "flip", "roll", "tile", "repeat"))

#: the keywords each of pad's device modes takes
_PAD_KEYWORDS = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
                 "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}, "empty": set()}


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> LazyArray:
    """NumPy's pad, every mode: ``constant``, ``edge``, ``wrap``, ``reflect``
    and ``symmetric`` (even reflections) lazily, as views joined; ``empty``
    as zeros; the modes that compute values from the array (``linear_ramp``,
    ``maximum``, ``mean``, ``median``, ``minimum``, odd reflections, a
    function) with NumPy on the host."""
    x = asarray(array)
    allowed = _PAD_KEYWORDS.get(mode) if isinstance(mode, str) else None
    if allowed is None or kwargs.get("reflect_type", "even") != "even":
        return host_call(_np.pad, (x, pad_width, mode), kwargs, "np.pad")
    if set(kwargs) - allowed:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': "
                         f"{set(kwargs) - allowed}")
    if mode == "empty":
        mode = "constant"
    return LazyArray(_manipulate.pad(x.node, pad_width, mode, kwargs.get("constant_values", 0)))


def broadcast_arrays(*arrays: Any) -> list[LazyArray]:
    """The arrays broadcast against each other, a list as the Array API
    2024.12 specifies (NumPy 2 returns a tuple): views, read-only where an
    array was broadcast."""
    arrays = [asarray(a) for a in arrays]  # type: ignore[assignment]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [a[...] if a.shape == shape else broadcast_to(a, shape) for a in arrays]


def fliplr(m: Any) -> LazyArray:
    """The columns in reverse order (NumPy's fliplr): a view."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m: Any) -> LazyArray:
    """The rows in reverse order (NumPy's flipud): a view."""
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> LazyArray:
    """*a* as an array of at least one axis (NumPy's ascontiguousarray: a
    lazy array's value is contiguous, so *a* itself where no conversion is asked)."""
    x = asarray(a, dtype)
    return x if x.ndim else x.reshape(1)


def take(x: Any, indices: Any, axis: int | None = None, out: None = None,
         mode: str = "raise") -> LazyArray:
    """NumPy's take: elements at integer *indices* along *axis*; *mode*
    ``"wrap"`` or ``"clip"`` brings indices out of bounds inside."""
    return asarray(x).take(indices, axis, out, mode)


def transpose(x: Any, axes: Any = None) -> LazyArray:
    """The axes permuted by *axes* (reversed by default): a view."""
    return asarray(x).transpose(axes)


permute_dims = transpose


def reshape(x: Any, shape: Any, order: str = "C", *, copy: bool | None = None) -> LazyArray:
    """NumPy's reshape (in *order*): a view where NumPy's is one."""
    return asarray(x).reshape(shape, order=order, copy=copy)


def ravel(x: Any, order: str = "C") -> LazyArray:
    """The elements in *order* (NumPy's), one axis (a view where NumPy's is one)."""
    return asarray(x).ravel(order)

# }}}


def shape(a: Any) -> tuple:
    """NumPy's shape (no computation)."""
    return asarray(a).shape


def ndim(a: Any) -> int:
    """NumPy's ndim (no computation)."""
    return asarray(a).ndim


def size(a: Any, axis: int | tuple[int, ...] | None = None) -> int:
    """NumPy's size (no computation)."""
    a = asarray(a)
    return a.size if axis is None else a.shape[axis]


__all__ = ["shape", "ndim", "size", "concatenate", "concat", "unstack", "stack", "hstack", "vstack",
           "broadcast_to", "expand_dims", "squeeze", "moveaxis", "swapaxes", "flip",
           "roll", "tile", "repeat", "pad", "broadcast_arrays", "take",
           "transpose", "permute_dims", "reshape", "ravel", "fliplr", "flipud",
           "ascontiguousarray"]
