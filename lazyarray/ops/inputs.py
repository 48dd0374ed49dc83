"""The values operations are given, as graph nodes: a lazy array's node,
Python and NumPy scalars as constants, NumPy and pyopencl arrays as device
inputs.

Operations and the methods' mixins work below :mod:`lazyarray.handle`: they
know lazy arrays as :class:`ArrayHandle`, the base class of
:class:`~lazyarray.handle.LazyArray`, and make new ones with its ``_of_node``.

Public names: ArrayHandle, node_of, input_node.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

import lazyarray.run as _run
from lazyarray.deferred import deferred, is_cl_array
from lazyarray.errors import device_memory_error, unsupported_dtype_error
from lazyarray.graph import Const, Input, Node
from lazyarray.ops.elementwise import HugeInt

if TYPE_CHECKING:
    import pyopencl as cl
else:
    cl = deferred("pyopencl")       # (read only when an upload fails)


class ArrayHandle:
    """A lazy array as the stages below its class see it: a handle on the
    graph node of its current value."""

    node: Node

    if TYPE_CHECKING:
        # what LazyArray, the class built on this one, provides

        @property
        def shape(self) -> tuple: ...

        @property
        def dtype(self) -> np.dtype: ...

        def __setitem__(self, key: Any, value: Any) -> None: ...

    @staticmethod
    def _of_node(node: Node) -> Any:
        """A new lazy array whose value is *node* (the class defines it)."""
        raise NotImplementedError


#: the dtype NumPy gives each Python scalar type (integers in int64's range)
_PYTHON_DTYPES = {float: np.dtype(np.float64), int: np.dtype(np.int64),
                  bool: np.dtype(np.bool_), complex: np.dtype(np.complex128)}


#: the constant nodes of recent Python ints and nonzero floats, by (type, value):
#: kept alive so that a loop's scalars are not made again each step (a nonzero
#: float equals only itself; 0.0 and -0.0 are equal but differ, so are not kept)
_SCALARS: dict[tuple[type, Any], Const] = {}


def node_of(x: Any) -> Node:
    """*x* as a graph node: a lazy array's node, a scalar as a constant (with
    NumPy's types: Python scalars weak), anything else uploaded as an array."""
    if isinstance(x, ArrayHandle):
        return x.node
    kind = type(x)
    kept = (kind is float and x) or kind is int
    if kept:
        node = _SCALARS.get((kind, x))
        if node is not None:
            return node
    dtype = _PYTHON_DTYPES.get(kind)
    if dtype is not None and (kind is not int or -2**63 <= x < 2**63):
        node = Const(x, dtype, True)
        if kept:
            if len(_SCALARS) >= 1024:
                _SCALARS.clear()
            _SCALARS[(kind, x)] = node
        return node
    if isinstance(x, int) and not isinstance(x, bool) and not -2**63 <= x < 2**64:
        return HugeInt(x)  # type: ignore[return-value]  # (elementwise operations resolve it)
    if isinstance(x, (bool, numbers.Number)) and not isinstance(x, np.generic):
        return Const(x, np.result_type(x), True)  # type: ignore[arg-type]  # (a Number is a scalar)
    if isinstance(x, np.generic):
        return Const(x, x.dtype, False)
    return input_node(x)


def input_node(data: Any, dtype: Any = None) -> Input:
    """A graph input holding *data* (a pyopencl array, adopted; else NumPy's
    array of it, copied to the device) as *dtype*."""
    if is_cl_array(data):
        if dtype is not None and np.dtype(dtype) != data.dtype:
            data = data.astype(dtype)
        # a new graph input per call (inputs are not interned): the caller may
        # change the buffer's contents between calls, so values computed from
        # an earlier call's array are not reused for this one
        return Input(_run.adopt(data))
    host = np.asarray(data, dtype=dtype)
    if host.dtype.kind not in "biufc" or host.dtype == np.float16:
        raise unsupported_dtype_error(host.dtype)
    try:
        value = _run.to_device(host)
    except cl.Error as error:
        raise device_memory_error(error, host.nbytes, _run.default_queue().device) from None
    return Input(value, owned=True)
