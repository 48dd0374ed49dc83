"""The arguments of :func:`~kernelcore.testing.auto_test_vs_ref`'s runs:
deterministic random inputs of each array's declared dtype and shape,
sentinel-filled outputs (NaN, the largest integer, True) that show entries a
kernel forgets to write, and the same logical data placed in each kernel's
layout.

Public names: ArgData, make_ref_args, make_args, random_data, sentinel_value,
is_sentinel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl.array as cla
from pymbolic import evaluate

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import ArrayArg, ValueArg, strides_for_order

if TYPE_CHECKING:
    import pyopencl as cl

    from kernelcore.ir.kernel import LoopKernel

#: Seed of the random input data (the same for every call, so runs repeat).
RANDOM_SEED = 0x5EED


# {{{ argument data

def sentinel_value(dtype: np.dtype) -> float | int | bool:
    """The value unwritten output entries hold."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    if dtype.kind == "b":
        return True
    raise KernelcoreError(f"auto_test_vs_ref: cannot make data of dtype {dtype}")


def is_sentinel(ary: np.ndarray) -> np.ndarray:
    """Where *ary* still holds :func:`sentinel_value`."""
    if ary.dtype.kind in "fc":
        return np.isnan(ary)
    return ary == sentinel_value(ary.dtype)


def random_data(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Random values of *dtype*: uniform in [0, 1) for inexact types, small
    integers in [0, 64) for integer types."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.random(shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 64, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    raise KernelcoreError(f"auto_test_vs_ref: cannot make random data of dtype {dtype}")


def _eval_int(expr, parameters: dict, what: str) -> int:
    try:
        return int(evaluate(expr, parameters))
    except Exception as e:
        raise KernelcoreError(
            f"auto_test_vs_ref: cannot evaluate {what} = {expr} with parameters "
            f"{parameters} ({e}); pass every parameter it uses in 'parameters'") from None


def _arg_shape(arg: ArrayArg, parameters: dict) -> tuple[int, ...]:
    if not isinstance(arg.shape, tuple):
        raise KernelcoreError(f"auto_test_vs_ref: argument '{arg.name}' has no known "
                              "shape; declare it")
    return tuple(_eval_int(s, parameters, f"the shape of '{arg.name}'")
                 for s in arg.shape)


def _arg_strides(arg: ArrayArg, parameters: dict) -> tuple[int, ...]:
    return tuple(_eval_int(s, parameters, f"a stride of '{arg.name}'")
                 for s in arg.element_strides())


@dataclass
class ArgData:
    """One array argument's data for a test: logical host values before the run,
    and the device storage each kernel gets."""

    name: str
    dtype: np.dtype
    shape: tuple
    needs_checking: bool
    pre_run: np.ndarray
    sentinel_filled: bool = False
    ref: _DeviceArray | None = None
    test: _DeviceArray | None = None


@dataclass
class _DeviceArray:
    """A device array in some layout, with the storage that holds it (the array
    itself when contiguous, else a flat buffer it is a strided view of)."""

    array: cla.Array
    storage: cla.Array
    shape: tuple
    byte_strides: tuple | None = None

    def logical(self) -> np.ndarray:
        """The values on the host, in C order."""
        host = self.storage.get()
        if self.byte_strides is None:
            return np.ascontiguousarray(host)
        if 0 in self.shape:
            return np.empty(self.shape, host.dtype)
        view = np.lib.stride_tricks.as_strided(host, self.shape, self.byte_strides)
        return np.ascontiguousarray(view)


def _same_strides(shape, a, b) -> bool:
    return all(x == y for n, x, y in zip(shape, a, b) if n > 1)


def _to_device_layout(queue, arg: ArrayArg, values: np.ndarray, parameters: dict
                      ) -> _DeviceArray:
    """*values* (logical) on the device, laid out as *arg* declares."""
    shape = values.shape
    dtype = values.dtype
    strides = _arg_strides(arg, parameters)
    for order in (arg.order, "F" if arg.order == "C" else "C"):
        standard = tuple(_eval_int(s, parameters, f"a stride of '{arg.name}'")
                         for s in strides_for_order(arg.shape, order))
        if _same_strides(shape, strides, standard):
            # (np.ascontiguousarray would turn a 0-d array into one of shape (1,))
            host = np.array(values, order="F" if order == "F" else "C")
            ary = cla.to_device(queue, host)
            return _DeviceArray(ary, ary, shape)
    if any(s <= 0 for s, n in zip(strides, shape) if n > 1):
        raise KernelcoreError(f"auto_test_vs_ref: argument '{arg.name}' has non-positive "
                              f"strides {strides}")
    size = 0 if 0 in shape else 1 + sum(s * (n - 1) for s, n in zip(strides, shape))
    byte_strides = tuple(s * dtype.itemsize for s in strides)
    storage_host = np.zeros(size, dtype)
    if size:
        np.lib.stride_tricks.as_strided(storage_host, shape, byte_strides)[...] = values
    storage = cla.to_device(queue, storage_host)
    ary = cla.as_strided(storage, shape, byte_strides)
    return _DeviceArray(ary, storage, shape, byte_strides)


def _value_arg(arg: ValueArg, parameters: dict):
    if arg.name not in parameters:
        raise KernelcoreError(f"auto_test_vs_ref: no value for scalar argument "
                              f"'{arg.name}': pass it in 'parameters'")
    value = parameters[arg.name]
    return arg.dtype.type(value) if arg.dtype is not None else value


def _read_names(knl) -> frozenset[str]:
    result: frozenset[str] = frozenset()
    for insn in knl.instructions:
        result |= insn.read_dependency_names()
    return result


def make_ref_args(knl: LoopKernel, queue: cl.CommandQueue, parameters: dict, *,
                  fills_entire_output: bool = True, seed: int = RANDOM_SEED
                  ) -> tuple[dict, list[ArgData]]:
    """Keyword arguments for the (typed) reference kernel *knl* on *queue*, and
    the :class:`ArgData` of its array arguments."""
    rng = np.random.default_rng(seed)
    written = knl.get_written_variables()
    read = _read_names(knl)
    kwargs: dict[str, Any] = {}
    arg_data: list[ArgData] = []
    for arg in knl.args:
        if isinstance(arg, ValueArg):
            kwargs[arg.name] = _value_arg(arg, parameters)
            continue
        shape = _arg_shape(arg, parameters)
        is_written = arg.name in written
        sentinel_filled = is_written and arg.name not in read and fills_entire_output
        if sentinel_filled:
            values = np.full(shape, sentinel_value(arg.dtype), dtype=arg.dtype)
        else:
            values = random_data(rng, shape, arg.dtype)
        desc = ArgData(arg.name, arg.dtype, shape, is_written, values, sentinel_filled)
        desc.ref = _to_device_layout(queue, arg, values, parameters)
        kwargs[arg.name] = desc.ref.array
        arg_data.append(desc)
    return kwargs, arg_data


def make_args(knl: LoopKernel, queue: cl.CommandQueue, ref_arg_data: list[ArgData],
              parameters: dict) -> dict:
    """Keyword arguments for the (typed) test kernel *knl* on *queue*, holding the
    same data as the reference kernel's (see :func:`make_ref_args`)."""
    by_name = {d.name: d for d in ref_arg_data}
    kwargs: dict[str, Any] = {}
    for arg in knl.args:
        if isinstance(arg, ValueArg):
            kwargs[arg.name] = _value_arg(arg, parameters)
            continue
        desc = by_name[arg.name]
        shape = _arg_shape(arg, parameters)
        if shape == desc.shape:
            values = desc.pre_run
        else:
            # a differently shaped (e.g. padded) array: share the leading entries
            values = np.zeros(shape, desc.dtype)
            n = min(values.size, desc.pre_run.size)
            values.reshape(-1)[:n] = desc.pre_run.reshape(-1)[:n]
        desc.test = _to_device_layout(queue, arg, values, parameters)
        kwargs[arg.name] = desc.test.array
    return kwargs

# }}}
