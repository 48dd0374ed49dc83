"""Naming, splitting (along with the inames that index them) and
concatenating array axes, and padding array strides (loopy's
``set_array_axis_names``, ``split_array_dim``, ``concatenate_arrays``,
``find_padding_multiple``, ``add_padding`` and
``add_padding_to_avoid_bank_conflicts``).

As in loopy, strides are counted in elements and compared with the
alignment as given (*align_bytes*).

Public names: set_array_axis_names, split_array_dim, concatenate_arrays,
find_padding_multiple, add_padding,
add_padding_to_avoid_bank_conflicts.
"""

from __future__ import annotations

import math
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, UnknownNameError
from kernelcore.ir.data import AddressSpace, strides_for_order
from kernelcore.ir.expr import IdentityMapper
from kernelcore.ir.kernel import LoopKernel
from kernelcore.transform.iname import split_iname
from kernelcore.translation_unit import TranslationUnit, for_each_kernel


def _variable(knl: LoopKernel, name: str) -> Any:
    if name in knl.arg_dict:
        return knl.arg_dict[name]
    if name in knl.temporary_variables:
        return knl.temporary_variables[name]
    raise UnknownNameError(f"no array called '{name}' in kernel '{knl.name}'")


def _with_variable(knl: LoopKernel, var: Any) -> LoopKernel:
    if var.name in knl.arg_dict:
        return knl.copy(args=tuple(var if a.name == var.name else a for a in knl.args))
    return knl.copy(temporary_variables={**knl.temporary_variables, var.name: var})


def _fixed_stride(var: Any, axis: int, what: str) -> int:
    if not isinstance(var.shape, tuple) or not 0 <= axis < len(var.shape):
        raise KernelcoreError(f"{what}: '{var.name}' has no axis {axis}")
    stride = var.element_strides()[axis]
    if not isinstance(stride, int):
        raise KernelcoreError(f"{what}: the stride of axis {axis} of '{var.name}' is not a "
                              f"known integer ({stride})")
    return stride


@for_each_kernel
def set_array_axis_names(knl: LoopKernel, ary_names: Any, dim_names: Any) -> LoopKernel:
    """Name the axes of the arrays *ary_names* (names or one comma-separated
    string) *dim_names* (likewise); the names change no code."""
    names = [n.strip() for n in ary_names.split(",")] if isinstance(ary_names, str) \
        else list(ary_names)
    axes = tuple(n.strip() for n in dim_names.split(",")) if isinstance(dim_names, str) \
        else tuple(dim_names)
    for name in names:
        var = _variable(knl, name)
        if not isinstance(var.shape, tuple) or len(var.shape) != len(axes):
            raise KernelcoreError(f"set_array_axis_names: '{name}' has shape {var.shape}, "
                                  f"{len(axes)} axis names given")
        knl = _with_variable(knl, var.copy(dim_names=axes))
    return knl


# {{{ split_array_dim

class _IndexSplitter(IdentityMapper):
    """Accesses ``a[..., i, ...]`` of the split arrays become
    ``a[..., i_outer, i_inner, ...]`` (or the other way round in "F" order)."""

    def __init__(self, splits: dict[str, tuple[int, str]], iname_pairs: dict,
                 names: UniqueNameGenerator) -> None:
        self.splits = splits
        self.iname_pairs = iname_pairs
        self.names = names

    def map_subscript(self, expr: prim.Subscript) -> Any:
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        index = tuple(self.rec(i) for i in index)
        agg = expr.aggregate
        if isinstance(agg, prim.Variable) and agg.name in self.splits:
            axis, order = self.splits[agg.name]
            idx = index[axis]
            if not isinstance(idx, prim.Variable):
                raise KernelcoreError(f"split_array_dim: axis {axis} of '{expr}' is not "
                                      "indexed by an iname; cannot split it")
            if idx.name not in self.iname_pairs:
                self.iname_pairs[idx.name] = (self.names(f"{idx.name}_outer"),
                                              self.names(f"{idx.name}_inner"))
            outer, inner = (prim.Variable(n) for n in self.iname_pairs[idx.name])
            pair = (outer, inner) if order == "C" else (inner, outer)
            index = index[:axis] + pair + index[axis + 1:]
        return prim.Subscript(agg, index)

    def map_constant(self, expr: Any) -> Any:
        return expr


@for_each_kernel
def split_array_dim(knl: LoopKernel, arrays_and_axes: Any, count: int,
                    auto_split_inames: bool = True, split_kwargs: dict | None = None
                    ) -> LoopKernel:
    """Split axis *axis* of each ``(array, axis)`` or ``(array, axis, order)``
    of *arrays_and_axes* in two (outer of ``ceil(n/count)``, inner of *count*;
    *order* "F" puts the inner one first), and split the inames indexing them
    the same way (with *split_kwargs* for :func:`split_iname`)."""
    if count == 1:
        return knl
    if not auto_split_inames:
        raise KernelcoreError("split_array_dim: auto_split_inames=False is not supported; "
                              "use split_array_axis")
    if isinstance(arrays_and_axes, tuple):
        arrays_and_axes = [arrays_and_axes]
    splits: dict[str, tuple[int, str]] = {}
    for spec in arrays_and_axes:
        name, axis, *rest = spec
        if name in splits:
            raise KernelcoreError(f"split_array_dim: '{name}' is split twice")
        splits[name] = (axis, rest[0] if rest else "C")
    for name, (axis, order) in splits.items():
        var = _variable(knl, name)
        stride = _fixed_stride(var, axis, "split_array_dim")
        extent = var.shape[axis]
        outer_len = -(-extent // count) if isinstance(extent, int) \
            else prim.FloorDiv(extent + (count - 1), count)
        strides = var.element_strides()
        shape: tuple[Any, Any]
        if order == "C":
            shape, new_strides = (outer_len, count), (stride * count, stride)
        else:
            shape, new_strides = (count, outer_len), (stride, stride * count)
        dim_names = var.dim_names
        if dim_names is not None:
            pair = (f"{dim_names[axis]}_outer", f"{dim_names[axis]}_inner")
            dim_names = dim_names[:axis] + (pair if order == "C" else pair[::-1]) \
                + dim_names[axis + 1:]
        knl = _with_variable(knl, var.copy(
            shape=var.shape[:axis] + shape + var.shape[axis + 1:],
            strides=tuple(strides[:axis]) + new_strides + tuple(strides[axis + 1:]),
            dim_names=dim_names))
    names = UniqueNameGenerator(set(knl.all_inames()) | set(knl.all_params())
                                | set(knl.arg_dict) | set(knl.temporary_variables))
    pairs: dict[str, tuple[str, str]] = {}
    mapper = _IndexSplitter(splits, pairs, names)
    knl = knl.copy(instructions=tuple(i.with_transformed_expressions(mapper)
                                      for i in knl.instructions))
    for iname, (outer, inner) in pairs.items():
        knl = split_iname(knl, iname, count, outer_iname=outer, inner_iname=inner,
                          **(split_kwargs or {}))
    return knl

# }}}


# {{{ concatenate_arrays

class _Concatenator(IdentityMapper):
    def __init__(self, offsets: dict[str, int], axis: int, new_name: str) -> None:
        self.offsets, self.axis, self.new_name = offsets, axis, new_name

    def map_subscript(self, expr: prim.Subscript) -> Any:
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        index = tuple(self.rec(i) for i in index)
        agg = expr.aggregate
        if isinstance(agg, prim.Variable) and agg.name in self.offsets:
            shifted: list[Any] = list(index)
            shifted[self.axis] = shifted[self.axis] + self.offsets[agg.name]
            return prim.Subscript(prim.Variable(self.new_name), tuple(shifted))
        return prim.Subscript(agg, index)

    def map_constant(self, expr: Any) -> Any:
        return expr


@for_each_kernel
def concatenate_arrays(knl: LoopKernel, array_names: Any, new_name: str | None = None,
                       axis_nr: int = 0) -> LoopKernel:
    """Merge the temporaries *array_names* (alike but for their length along
    *axis_nr*) into one temporary *new_name*, one after the other along that
    axis."""
    names = [n.strip() for n in array_names.split(",")] if isinstance(array_names, str) \
        else list(array_names)
    new_name = new_name or UniqueNameGenerator(
        set(knl.arg_dict) | set(knl.temporary_variables) | set(knl.all_inames())
        | set(knl.all_params()))("concatenated_array")
    offsets: dict[str, int] = {}
    length = 0
    alike = []
    for name in names:
        if name not in knl.temporary_variables:
            raise UnknownNameError(f"concatenate_arrays: no temporary called '{name}'")
        tv = knl.temporary_variables[name]
        if not isinstance(tv.shape, tuple) or not 0 <= axis_nr < len(tv.shape):
            raise KernelcoreError(f"concatenate_arrays: '{name}' has no axis {axis_nr}")
        extent = tv.shape[axis_nr]
        if not isinstance(extent, int):
            raise KernelcoreError(f"concatenate_arrays: axis {axis_nr} of '{name}' has no "
                                  f"constant length ({extent})")
        offsets[name] = length
        length += extent
        one = list(tv.shape)
        one[axis_nr] = 1
        alike.append(tv.copy(name=new_name, shape=tuple(one)))
    if any(a != alike[0] for a in alike[1:]):
        raise KernelcoreError("concatenate_arrays: the arrays differ in more than their "
                              f"length along axis {axis_nr}")
    shape = list(alike[0].shape)
    shape[axis_nr] = length
    temps = {n: t for n, t in knl.temporary_variables.items() if n not in offsets}
    temps[new_name] = alike[0].copy(shape=tuple(shape), strides=None)
    mapper = _Concatenator(offsets, axis_nr, new_name)
    return knl.copy(temporary_variables=temps,
                    instructions=tuple(i.with_transformed_expressions(mapper)
                                       for i in knl.instructions))

# }}}


# {{{ padding

def find_padding_multiple(kernel: Any, variable: str, axis: int, align_bytes: int,
                          allowed_waste: float = 0.1) -> int:
    """The smallest multiple of the stride of *axis* of *variable* that padding
    to a multiple of *align_bytes* enlarges by at most *allowed_waste*."""
    if isinstance(kernel, TranslationUnit):
        kernel = kernel.default_entrypoint
    stride = _fixed_stride(_variable(kernel, variable), axis, "find_padding_multiple")
    multiple = 1
    while True:
        size = multiple * stride
        padded = -(-size // align_bytes) * align_bytes
        if (padded - size) / size <= allowed_waste:
            return multiple
        multiple += 1


@for_each_kernel
def add_padding(knl: LoopKernel, variable: str, axis: int, align_bytes: int) -> LoopKernel:
    """Round the stride of *axis* of *variable* up to a multiple of *align_bytes*."""
    var = _variable(knl, variable)
    stride = _fixed_stride(var, axis, "add_padding")
    strides = list(var.element_strides())
    strides[axis] = -(-stride // align_bytes) * align_bytes
    return _with_variable(knl, var.copy(strides=tuple(strides)))


@for_each_kernel
def add_padding_to_avoid_bank_conflicts(knl: LoopKernel, device: Any) -> LoopKernel:
    """Lengthen the last axis of the storage of local temporaries where that
    avoids bank conflicts of *device*'s local memory (a
    :class:`pyopencl.Device`); nothing changes where local memory is global
    memory (CPUs)."""
    # (pyopencl is only needed for this device query)
    import pyopencl as cl
    import pyopencl.characterize as cl_char

    if device.local_mem_type != cl.device_local_mem_type.LOCAL:
        return knl
    local_size = cl_char.usable_local_mem_size(device)
    temps = dict(knl.temporary_variables)
    for name, tv in knl.temporary_variables.items():
        if tv.address_space != AddressSpace.LOCAL or not tv.shape or tv.dtype is None \
                or not all(isinstance(n, int) for n in tv.shape):
            continue
        itemsize = tv.dtype.itemsize
        others = sum(t.dtype.itemsize * math.prod(t.shape)
                     for t in temps.values() if t.name != name and t.dtype is not None
                     and t.address_space == AddressSpace.LOCAL and t.shape
                     and all(isinstance(n, int) for n in t.shape))
        best, best_mult = list(tv.shape), cl_char.local_memory_bank_count(device)
        for increment in range(tv.shape[-1] // 2):
            storage = [*tv.shape[:-1], tv.shape[-1] + increment]
            mult, _why = cl_char.why_not_local_access_conflict_free(
                device, itemsize, tv.shape, storage)
            if mult < best_mult and others + itemsize * math.prod(storage) \
                    < local_size:
                best, best_mult = storage, mult
            if mult == 1:
                break
        if best != list(tv.shape):
            temps[name] = tv.copy(strides=strides_for_order(tuple(best), tv.order))
    return knl.copy(temporary_variables=temps)

# }}}
