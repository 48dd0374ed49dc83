"""Sorting on the device: a bitonic sorting network over (value, index) pairs,
so that every sort is stable (ties keep their original order) and agrees
with NumPy's ``kind="stable"`` exactly.

The network is the variant whose first step in each block compares mirrored
positions (``i`` with ``i ^ (2j - 1)``) and whose later steps compare ``i``
with ``i + j``: every comparison puts the smaller pair first, so positions
past the end of a row (the row's length padded to a power of two) act as
``+infinity`` and are never stored or read. All rows of a value (every
position of the other axes) are sorted by the same launches.

One kernelcore kernel per dtype (and index width) does everything, its
*phase* a kernel argument: phase 0 copies the input into row order (the
sorted axis last) and numbers the positions, phase 1 is one compare-exchange
stage (which stage, the row length and the number of rows are kernel
arguments too), phase 2 writes the rows back along the sorted axis. Sorting
a new length or shape compiles nothing.

The order is NumPy's: NaN after every number (all NaNs equal), ``-0.0``
equal to ``0.0``, complex values by real part then imaginary part, with
NumPy's order of the ones holding NaNs (``R + Rj < R + nanj < nan + Rj <
nan + nanj``). *descending* reverses the order of the values (NaN first) and
keeps equal values in their original order (the Array API's stable
descending sort).

On a CPU device the call sorts with NumPy instead, in the host memory the
device shares (the same order by construction; PoCL runs the network's
launches 10-20 times slower).

The sort is an external call of the graph (:mod:`lazyarray.calls`): its
input is computed and stored first, and ``la.jit`` records and replays it.

Public names: sort_nodes, stage_kernel, stages, STAGE_KERNELS, GROUP_SIZE.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp
from kernelcore import compile_program, make_loop_kernel, set_kernel_argument
from lazyarray.calls import call
from lazyarray.graph import Node
from lazyarray.run.launch import new_array
from lazyarray.target import Target

#: work-items per work-group of the sort kernel
GROUP_SIZE = 256

#: the sort kernels built so far, by (dtype, wide indices): the kernelcore
#: kernel (tests count them: one per dtype, whatever the lengths)
STAGE_KERNELS: dict[tuple[str, bool], lp.LoopKernel] = {}
#: the kernels compiled for a context, by (context, dtype, wide): the OpenCL
#: kernel and the lock its arguments are set under
_PROGRAMS: dict[tuple[int, str, bool], tuple[cl.Kernel, threading.Lock]] = {}
_BUILD_LOCK = threading.Lock()

#: the kernel's arguments in order: arrays, then positions (int32, int64
#: for wide kernels)
_ARRAYS = ("x", "xw", "iw", "vout", "iout")
_VALUES = ("phase", "m", "n", "total", "inner", "hp", "lh", "s", "j", "mask", "desc")

#: dtypes sorted as another of the same size (booleans as bytes)
_WORK_DTYPE = {np.dtype(np.bool_): np.dtype(np.uint8)}


# {{{ the kernel

def _key_temporaries(name: str, kind: str) -> list[str]:
    """Statements computing the sort key of the temporary *name* (complex
    values: their NaN class and two real parts)."""
    if kind != "c":
        return []
    return [f"<> {name}r = real({name})  {{id={name}r, if=phase == 1 and l < n}}",
            f"<> {name}i = imag({name})  {{id={name}i, if=phase == 1 and l < n}}",
            f"<> {name}c = if(isnan({name}r), 2, 0) + if(isnan({name}i), 1, 0)  "
            f"{{id={name}c, if=phase == 1 and l < n}}",
            f"<> {name}1 = if(isnan({name}r), if(isnan({name}i), 0, {name}i), {name}r)  "
            f"{{id={name}1, if=phase == 1 and l < n}}",
            f"<> {name}2 = if(isnan({name}r) or isnan({name}i), 0, {name}i)  "
            f"{{id={name}2, if=phase == 1 and l < n}}"]


def _before(b: str, a: str, kind: str) -> str:
    """The condition "value *b* sorts strictly before value *a*"."""
    if kind == "f":
        return f"({b} < {a} or (isnan({a}) and not isnan({b})))"
    if kind == "c":
        return (f"({b}c < {a}c or ({b}c == {a}c and ({b}1 < {a}1 or "
                f"({b}1 == {a}1 and {b}2 < {a}2))))")
    return f"({b} < {a})"


def _same(a: str, b: str, kind: str) -> str:
    """The condition "values *a* and *b* are equal in the sort's order"."""
    if kind == "f":
        return f"({a} == {b} or (isnan({a}) and isnan({b})))"
    if kind == "c":
        return f"({a}c == {b}c and {a}1 == {b}1 and {a}2 == {b}2)"
    return f"({a} == {b})"


def _build(dtype: np.dtype, wide: bool) -> lp.LoopKernel:
    """The sort kernel for values of *dtype* (see the module documentation);
    *wide*: int64 work-item numbers (more than ``2**31`` work-items)."""
    kind = dtype.kind
    key_deps = ""
    stage = "phase == 1 and l < n"
    p = "int64" if wide else "int32"
    insns = [
        # phases 0 and 2: position t of the row-ordered work arrays, and its
        # offset in the C-ordered value (row = outer * inner + in)
        f"<{p}> r0 = t // n  {{id=r0, if=phase != 1}}",
        f"<{p}> k0 = t - r0 * n  {{id=k0, dep=r0, if=phase != 1}}",
        f"<{p}> o0 = r0 // inner  {{id=o0, dep=r0, if=phase != 1}}",
        f"<{p}> src = (o0 * n + k0) * inner + (r0 - o0 * inner)  {{id=src, dep=o0:k0, "
        "if=phase != 1}",
        "xw[t] = x[src]  {id=init_v, dep=src, if=phase == 0}",
        "iw[t] = k0  {id=init_i, dep=k0, if=phase == 0}",
        "vout[src] = xw[t]  {id=back_v, dep=src, if=phase == 2}",
        "iout[src] = iw[t]  {id=back_i, dep=src, if=phase == 2}",
        # phase 1: the t-th pair (i, l) of a stage, i < l, in row t >> lh
        f"<{p}> tt = t  {{id=tt}}",
        f"<{p}> row = tt >> lh  {{id=row, dep=tt}}",
        f"<{p}> q = tt & (hp - 1)  {{id=q, dep=tt}}",
        f"<{p}> i = ((q >> s) << (s + 1)) | (q & (j - 1))  {{id=i, dep=q}}",
        f"<{p}> l = i ^ mask  {{id=l, dep=i}}",
        f"<{p}> base = row * n  {{id=base, dep=row}}",
        f"<> a = xw[base + i]  {{id=ra, dep=base:l, if={stage}}}",
        f"<> b = xw[base + l]  {{id=rb, dep=base:l, if={stage}}}",
        f"<> ia = iw[base + i]  {{id=ria, dep=base:l, if={stage}}}",
        f"<> ib = iw[base + l]  {{id=rib, dep=base:l, if={stage}}}",
    ]
    if kind == "c":
        insns += [line.replace("}", ", dep=ra:rb}") for line in
                  _key_temporaries("a", kind) + _key_temporaries("b", kind)]
        key_deps = ":ac:a1:a2:bc:b1:b2"
    swap = (f"(desc == 0 and {_before('b', 'a', kind)}) or "
            f"(desc != 0 and {_before('a', 'b', kind)}) or "
            f"({_same('a', 'b', kind)} and ib < ia)")
    insns += [
        f"<> sw = {swap}  {{id=sw, dep=ra:rb:ria:rib{key_deps}, if={stage}}}",
        f"xw[base + i] = b  {{id=w1, dep=sw, if={stage} and sw}}",
        f"xw[base + l] = a  {{id=w2, dep=sw:w1, if={stage} and sw}}",
        f"iw[base + i] = ib  {{id=w3, dep=sw, if={stage} and sw}}",
        f"iw[base + l] = ia  {{id=w4, dep=sw:w3, if={stage} and sw}}",
    ]
    insns = [line.replace("{", "{inames=t, ", 1) for line in insns]
    int64 = np.dtype(np.int64)
    data: list[Any] = [lp.GlobalArg("x", dtype, shape=("m",)),
                       lp.GlobalArg("xw", dtype, shape=("m",)),
                       lp.GlobalArg("iw", int64, shape=("m",)),
                       lp.GlobalArg("vout", dtype, shape=("m",)),
                       lp.GlobalArg("iout", int64, shape=("m",))]
    # (int32 positions where they fit: cheaper arithmetic)
    position = int64 if wide else np.dtype(np.int32)
    data += [lp.ValueArg(name, position) for name in _VALUES]
    written = ("init_v", "init_i", "back_v", "back_i", "w1", "w2", "w3", "w4")
    knl = make_loop_kernel(
        "{ [t]: 0 <= t < total }", "\n".join(insns), data, name="lazyarray_bitonic",
        silenced_warnings=[f"write_race({w})" for w in written],
        index_dtype=np.int64 if wide else np.int32)
    knl = lp.split_iname(knl, "t", GROUP_SIZE, outer_tag="g.0", inner_tag="l.0")
    return lp.set_options(knl, no_numpy=True)


def stage_kernel(dtype: np.dtype, wide: bool) -> lp.LoopKernel:
    """The kernelcore sort kernel of *dtype* (built once)."""
    key = (dtype.str, wide)
    with _BUILD_LOCK:
        knl = STAGE_KERNELS.get(key)
        if knl is None:
            knl = STAGE_KERNELS[key] = _build(dtype, wide)
    return knl


def _compiled(context: cl.Context, dtype: np.dtype, wide: bool
              ) -> tuple[cl.Kernel, threading.Lock]:
    """The OpenCL kernel of :func:`stage_kernel` built for *context*."""
    key = (context.int_ptr, dtype.str, wide)
    entry = _PROGRAMS.get(key)
    if entry is None:
        knl = stage_kernel(dtype, wide)
        source = lp.generate_code_v2(knl).device_code()
        program = compile_program(context, source)
        with _BUILD_LOCK:
            entry = _PROGRAMS.setdefault(key, (cl.Kernel(program, knl.name),
                                               threading.Lock()))
    return entry

# }}}


# {{{ the call

def _padded(length: int) -> int:
    """The power of two a row of *length* is sorted as (at least 1)."""
    return 1 << max(length - 1, 0).bit_length()


def stages(length: int) -> list[tuple[int, int]]:
    """The compare-exchange stages sorting rows of *length*: (distance j,
    xor mask) per stage, in order."""
    padded = _padded(length)
    result = []
    block = 2
    while block <= padded:
        j = block // 2
        result.append((j, 2 * j - 1))
        j //= 2
        while j >= 1:
            result.append((j, j))
            j //= 2
        block *= 2
    return result


class _Sort:
    """Sorting a C-ordered value of *shape* and *dtype* along *axis*: what an
    external call of the graph runs (input ``x``; outputs ``values``, the
    sorted value, and ``indices``, int64 positions along the axis)."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, axis: int,
                 descending: bool):
        self.shape = shape
        self.dtype = dtype
        self.axis = axis
        self.descending = descending
        self.length = shape[axis]
        self.inner = math.prod(shape[axis + 1:])
        self.size = math.prod(shape)
        self.rows = self.size // self.length
        self.pairs = max(_padded(self.length) // 2, 1)
        self.work_dtype = _WORK_DTYPE.get(dtype, dtype)
        self.wide = max(self.size, self.rows * self.pairs) + GROUP_SIZE >= 2 ** 31
        self.outputs = {"values": (shape, dtype), "indices": (shape, np.dtype(np.int64))}

    def _key(self) -> tuple:
        return (self.shape, self.dtype.str, self.axis, self.descending)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Sort) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def kernel(self) -> lp.LoopKernel:
        """The kernelcore kernel this call runs (``la.explain`` shows it)."""
        return stage_kernel(self.work_dtype, self.wide)

    def sorts_on_host(self, queue: cl.CommandQueue) -> bool:
        """Whether NumPy sorts on *queue*'s device (a CPU device's memory
        is the host's) rather than the network's launches."""
        return Target.of_queue(queue).kind == "cpu"

    def _on_host(self, queue: cl.CommandQueue, x: cla.Array) -> dict[str, cla.Array]:
        """NumPy's stable sort in the host memory that a CPU device shares:
        on PoCL faster than the network's launches (a 200 x 800 argsort:
        60 ms in 56 launches, 3 ms with NumPy)."""
        host = x.get(queue=queue)
        values, order = _host_sorted(host, self.axis, self.descending)
        result = {"values": values, "indices": order}
        arrays = {}
        for name, value in result.items():
            arrays[name] = new_array(queue, self.shape, value.dtype)
            arrays[name].set(np.ascontiguousarray(value), queue=queue)
        return arrays

    def run(self, queue: cl.CommandQueue, values: Mapping[str, Any],
            events: list | None) -> dict[str, cla.Array]:
        """Sort the value ``x`` in *values* on *queue*."""
        x = values["x"]
        if self.sorts_on_host(queue):
            return self._on_host(queue, x)
        return self.on_device(queue, x, events)

    def on_device(self, queue: cl.CommandQueue, x: cla.Array,
                  events: list | None) -> dict[str, cla.Array]:
        """Sort *x* with the network's launches on *queue*."""
        kernel, lock = _compiled(queue.context, self.work_dtype, self.wide)
        shape = (self.size,)
        work = new_array(queue, shape, self.work_dtype)
        index = new_array(queue, shape, np.int64)
        if self.inner == 1:
            out_v, out_i = work, index
        else:
            out_v, out_i = new_array(queue, shape, self.work_dtype), new_array(
                queue, shape, np.int64)
        if x.offset:
            x = x.copy(queue=queue)
        source = x.base_data
        buffers: tuple[Any, ...] = (source, work.base_data, index.base_data, out_v.base_data,
                                    out_i.base_data)
        common = {"m": self.size, "n": self.length, "inner": self.inner,
                  "hp": self.pairs, "lh": self.pairs.bit_length() - 1, "desc": int(
                      self.descending)}
        launches = [dict(common, phase=0, total=self.size, s=0, j=1, mask=1)]
        for j, mask in stages(self.length):
            launches.append(dict(common, phase=1, total=self.rows * self.pairs,
                                 s=j.bit_length() - 1, j=j, mask=mask))
        if self.inner != 1:
            launches.append(dict(common, phase=2, total=self.size, s=0, j=1, mask=1))
        position = np.int64 if self.wide else np.int32
        with lock:
            for k, buf in enumerate(buffers):
                kernel.set_arg(k, buf)
            for launch in launches:
                for k, name in enumerate(_VALUES):
                    set_kernel_argument(kernel, len(buffers) + k, position(launch[name]))
                groups = -(-launch["total"] // GROUP_SIZE)
                event = cl.enqueue_nd_range_kernel(queue, kernel, (groups * GROUP_SIZE,),
                                                   (GROUP_SIZE,))
                if events is not None:
                    events.append(event)
        result_v = out_v.reshape(self.shape)
        if self.work_dtype != self.dtype:
            result_v = result_v.view(self.dtype)
        return {"values": result_v, "indices": out_i.reshape(self.shape)}


def _host_sorted(host: np.ndarray, axis: int,
                 descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """*host* sorted stably along *axis* (largest first with *descending*,
    equal values still in their original order) and the positions that
    sort it."""
    if descending:
        # (ascending over the reversed axis, reversed back: ties stay in order)
        values, order = _host_sorted(np.flip(host, axis), axis, False)
        return np.flip(values, axis), np.flip(host.shape[axis] - 1 - order, axis)
    if host.dtype.kind in "fc":
        # NumPy's default sort is several times faster than its stable one;
        # its order is the stable order wherever no two sorted neighbours tie
        order = np.argsort(host, axis=axis)
        values = np.take_along_axis(host, order, axis)
        if not _neighbours_tie(values, axis):
            return values, order
    # (integers and booleans tie often: stable at once)
    order = np.argsort(host, axis=axis, kind="stable")
    return np.take_along_axis(host, order, axis), order


def _neighbours_tie(values: np.ndarray, axis: int) -> bool:
    """Whether two neighbours along *axis* of sorted *values* are equal or
    both NaN."""
    ahead = [slice(None)] * values.ndim
    behind = list(ahead)
    ahead[axis], behind[axis] = slice(None, -1), slice(1, None)
    first, second = values[tuple(ahead)], values[tuple(behind)]
    with np.errstate(invalid="ignore"):
        if np.any(first == second):
            return True
    return bool(np.any(np.isnan(first) & np.isnan(second)))


def sort_nodes(x: Node, axis: int, descending: bool = False) -> dict[str, Node]:
    """The nodes of *x* (a non-empty value with a positive-length *axis*,
    normalized) sorted along *axis* on the device: ``values`` and
    ``indices`` (int64 positions along *axis*, stable)."""
    callee = _Sort(tuple(x.shape), np.dtype(x.dtype), axis, bool(descending))
    return call(callee, {"x": x})

# }}}


__all__ = ["sort_nodes", "stage_kernel", "stages", "STAGE_KERNELS", "GROUP_SIZE"]
