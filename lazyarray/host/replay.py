"""A jitted function's host replay: the graph its trace recorded, computed by
NumPy on each call's host arrays without running the function again.

Calls of a function under ``la.jit`` on small host arrays run on the host
tier (see :mod:`lazyarray.host.trial`). Running the function itself there
pays lazyarray's dispatch of every operation (a few tenths of a microsecond
each, as much as NumPy's own work on a hundred elements); the replay pays
none: a list of NumPy calls on numbered values, prepared once from the
trace. What it computes is NumPy's answer, by NumPy's functions: each
elementwise operation, reduction, scan and join of the graph is the NumPy
call computing it; views are NumPy views (basic slicing, transposes and new
axes; index arrays only for diagonals); a sum of a broadcast product is
``np.matmul`` of its factors (NumPy's answer for ``a @ b``; a product
spelled ``(a[:, None] * b).sum(1)`` may differ from it by a rounding, as
between NumPy's own spellings); constant parts of the graph are computed
once, when the replay is made; the first call checks that NumPy's
dtype and shape of every value are the graph's, else the function keeps
running itself.

Writes into arguments (``u[1:-1] = ...; u[0] = 0``), which the graph holds
as joins of the new parts with the argument's old elements, are written
into the argument's buffer part by part, as the function's own assignments
would: the parts left as they were are not copied, parts that read the
buffer itself are copied first.

Public names: HostReplay, host_replay.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarray.graph import Concat, Gather, Iota, Map, Node, Reduce, Reshape, Scan, View, walk
from lazyarray.handle import LazyArray
from lazyarray.host.dispatch import SMALL, mutated, wrap
from lazyarray.host.fusion import PENDING, flush
from lazyarray.host.native import NATIVE_AFTER, NativeState, native_step
from lazyarray.host.reuse import Write, reuse_memory
from lazyarray.mapper import is_kind
from lazyarray.pytree import flatten, unflatten
from lazyarray.run.host_graph import ARG_REDUCTIONS, HOST_OPERATIONS, REDUCTIONS, view_index

logger = logging.getLogger(__name__)
_ndarray = np.ndarray
#: the structure of a result that is one array
_SINGLE = flatten(0)[1]
#: ufuncs whose ``reduce`` is NumPy's own reduction of that name (the others
#: are computed by NumPy's function)
_UFUNC_REDUCTIONS: dict[str, Any] = {
    "sum": np.add.reduce, "product": np.multiply.reduce, "max": np.maximum.reduce,
    "min": np.minimum.reduce}
_ACCUMULATIONS = {"sum": np.add.accumulate, "product": np.multiply.accumulate}
#: node kinds the replay computes
_KINDS = frozenset(["map", "reduce", "view", "reshape", "concat", "iota", "scan", "gather",
                    "const", "input", "param"])


class _NoReplay(Exception):
    """The graph has a part the replay does not compute as NumPy would."""


class HostReplay:
    """The NumPy calls computing a trace's outputs and the new values of the
    arguments it wrote into, from a call's leaves (its arrays and numbers in
    the order the trace flattened them)."""

    __slots__ = ("_template", "_arrays", "_numbers", "_steps", "_before", "_outputs",
                 "_writes", "structure", "_single", "_native")

    def __init__(self, template: list, arrays: tuple, numbers: tuple, steps: tuple,
                 before: tuple, outputs: tuple, writes: tuple, structure: Any,
                 native: tuple | None = None):
        #: the numbered values with the constants filled in
        self._template = template
        #: ``(leaf position, value number)`` of the array and number leaves
        self._arrays = arrays
        self._numbers = numbers
        #: ``(value number, function of the values)`` in order
        self._steps = steps
        #: the values copied before any write (they read a written buffer)
        self._before = before
        #: per output: ``(True, leaf position)`` (an argument returned as it
        #: is) or ``(False, value number)``
        self._outputs = outputs
        #: per written argument: ``(leaf position, ((index, value number,
        #: index into the value or None), ...))``
        self._writes = writes
        #: the structure of the function's result (see lazyarray.pytree)
        self.structure = structure
        self._single = structure == _SINGLE
        #: ``(its NativeState, shared with the reorderings of this replay, the
        #: writes of every part)`` (see lazyarray.host.native)
        self._native = native

    def __call__(self, leaves: Sequence) -> Any:
        """The call's result (host arrays in the function's structure), its
        arguments written."""
        values = self._start(leaves)
        native = self._native
        if native is not None:
            state = native[0]
            step = state.step
            if step:
                if step(values):
                    return self._finish(leaves, values, native[1])
            elif step is None:
                state.count()
        for number, step in self._steps:
            values[number] = step(values)
        return self._finish(leaves, values, self._writes)

    @property
    def native_state(self) -> Any:
        """The replay's NativeState, or None (see lazyarray.host.native)."""
        return None if self._native is None else self._native[0]

    def _start(self, leaves: Sequence) -> list:
        """The numbered values with the call's arrays and numbers filled in."""
        values = self._template[:]
        for position, number in self._arrays:
            values[number] = leaves[position]._hv
        for position, number in self._numbers:
            values[number] = leaves[position]
        return values

    def _finish(self, leaves: Sequence, values: list, writes: tuple) -> Any:
        if writes and PENDING:
            flush()
        for number in self._before:
            values[number] = values[number].copy()
        for position, pieces in writes:
            buffer = leaves[position]._buffer()
            for index, number, part in pieces:
                value = values[number]
                buffer[index] = value if part is None else value[part]
            mutated()
        if self._single:
            returned, what = self._outputs[0]
            return leaves[what] if returned else wrap(values[what])
        return unflatten(self.structure, [leaves[what] if returned else wrap(values[what])
                                          for returned, what in self._outputs])

    def checked_call(self, leaves: Sequence, nodes: dict[int, Node]) -> Any:
        """A call that checks each computed value against its node in *nodes*
        (by value number): NumPy's dtype and shape must be the graph's."""
        values = self._start(leaves)
        for number, step in self._steps:
            values[number] = value = step(values)
            _check(nodes[number], value)
        return self._finish(leaves, values, self._writes)

    def reordered(self, order: Sequence[int]) -> HostReplay:
        """This replay taking the leaf at position *p* from ``leaves[order[p]]``
        (a jitted function's positional arguments, in the order of its
        parameters instead of the order of flattening)."""
        return HostReplay(
            self._template, tuple((order[p], n) for p, n in self._arrays),
            tuple((order[p], n) for p, n in self._numbers), self._steps, self._before,
            tuple((True, order[w]) if returned else (False, w) for returned, w in self._outputs),
            tuple((order[p], pieces) for p, pieces in self._writes), self.structure,
            None if self._native is None else (self._native[0], tuple(
                (order[p], pieces) for p, pieces in self._native[1])))


def _check(node: Any, value: Any) -> None:
    if is_kind(node, "map") and node.weak:
        return                          # (a Python scalar, as NumPy's operand)
    if not isinstance(value, (_ndarray, np.generic)) or value.dtype != node.dtype \
            or value.shape != node.shape:
        raise _NoReplay(f"NumPy gives {getattr(value, 'dtype', type(value))} "
                        f"{getattr(value, 'shape', '')} for a {node.kind} node of "
                        f"{node.dtype} {node.shape}")


def host_replay(leaves: Sequence, arrays: Sequence[tuple[int, Node]],
                numbers: Sequence[tuple[int, Node]], outputs: Sequence[tuple[Node, int | None]],
                written: Sequence[tuple[int, Node]], structure: Any
                ) -> tuple[HostReplay, Any] | None:
    """The replay of a trace and the result of its first call (on *leaves*),
    or None where the graph has a part it does not compute (the call then
    did nothing).

    *arrays*: ``(leaf position, placeholder)`` of each array argument;
    *numbers*: ``(leaf position, Param)`` of each traced number; *outputs*:
    ``(node, leaf position)`` per output, the position where the function
    returned that argument itself, else None; *written*: ``(leaf position,
    new value)`` of each argument the function wrote into."""
    try:
        replay, nodes = _Builder(arrays, numbers).build(outputs, written, structure)
        return replay, replay.checked_call(leaves, nodes)
    except _NoReplay as why:
        logger.info("no host replay: %s", why)
        return None
    except (ValueError, TypeError, ArithmeticError, IndexError) as error:
        # (NumPy refuses a part: the function's own operations say so)
        logger.info("no host replay: NumPy says %s", error)
        return None


class _Builder:
    """Numbers the values of a graph and makes the NumPy call of each."""

    def __init__(self, arrays: Sequence[tuple[int, Node]],
                 numbers: Sequence[tuple[int, Node]]):
        self.template: list = []
        self.number: dict[Node, int] = {}
        #: the numbers of constant values (known when the replay is made)
        self.constant: set[int] = set()
        self.steps: list[tuple[int, Callable]] = []
        self.nodes: dict[int, Any] = {}
        #: ``(ufunc, operand numbers)`` of the values made by one NumPy ufunc
        #: call giving a new array (not a Python number); constants included
        self.ufunc_steps: dict[int, tuple[np.ufunc, list[int]]] = {}
        #: the placeholder of each array argument, by its leaf position
        self.placeholders = dict(arrays)
        self.arrays = tuple((position, self._slot(node)) for position, node in arrays)
        self.numbers = tuple((position, self._slot(node)) for position, node in numbers)

    def _slot(self, node: Node, value: Any = None, constant: bool = False) -> int:
        number = self.number[node] = len(self.template)
        self.template.append(value)
        self.nodes[number] = node
        if constant:
            self.constant.add(number)
        return number

    def build(self, outputs, written, structure) -> tuple[HostReplay, dict[int, Node]]:
        writes = []
        for position, node in written:
            pieces: list = []
            full = tuple((0, n) for n in node.shape)
            self._place(node, full, full, self.placeholders[position], pieces)
            writes.append((position, pieces))
        needed = [node for node, returned in outputs if returned is None]
        needed += [node for _, pieces in writes for _, node, _ in pieces]
        # (a product summed, a contraction, needs its factors, not the product)
        for root in needed:
            for node in walk(root, self.number.__contains__, _operands):
                if node not in self.number:
                    self._add(node)
        # (an output sharing memory with an argument is copied: the caller
        # owns it; a part written that reads a written buffer is copied
        # before the writes)
        shared = self._aliases(set(self.placeholders.values()))
        read = self._aliases({self.placeholders[position] for position, _ in written})
        before = {self.number[node] for node, returned in outputs
                  if returned is None and node in shared}
        before |= {self.number[node] for _, pieces in writes for _, node, _ in pieces
                   if node in read}
        # (a constant output is copied at every call: the caller owns it)
        before |= {self.number[node] for node, returned in outputs
                   if returned is None and self.number[node] in self.constant}
        results = {self.number[node] for node, returned in outputs if returned is None}
        kept = before | results | {self.number[node] for _, pieces in writes
                                   for _, node, _ in pieces}
        computed = {number for number, _ in self.steps}
        written = [self._write(position, pieces) for position, pieces in writes]
        steps, placed = reuse_memory(
            self.steps, {n: spec for n, spec in self.ufunc_steps.items() if n in computed},
            {n: {self.number[c] for c in _operands(self.nodes[n])} for n in computed},
            self.nodes, kept, results, written, bool(before))
        replay = HostReplay(
            self.template, self.arrays, self.numbers, steps, tuple(sorted(before)),
            tuple((True, returned) if returned is not None else (False, self.number[node])
                  for node, returned in outputs),
            tuple((position, write.pieces) for (position, _), write in zip(writes, placed)),
            structure, self._native(kept, results, tuple(
                (position, write.pieces) for (position, _), write in zip(writes, written))))
        return replay, self.nodes

    def _native(self, kept: set[int], results: set[int], writes: tuple) -> tuple:
        """The replay's native state (see HostReplay): its NativeStep made
        after NATIVE_AFTER calls, from these steps, and *writes* (every part)."""
        arrays = {self.number[node]: node for node in self.placeholders.values()}
        params = {number: self.nodes[number] for _, number in self.numbers}
        constants = {number: self.template[number] for number in self.constant}
        make = functools.partial(native_step, tuple(self.steps), self.nodes, self.number,
                                 arrays, params, constants, kept, results)
        return NativeState(make, NATIVE_AFTER), writes

    def _write(self, position: int, pieces: list) -> Write:
        """The argument at leaf *position* written with *pieces*, as
        :func:`~lazyarray.host.reuse.reuse_memory` reads it."""
        target = self.placeholders[position]
        aliases = self._aliases({target})
        return Write(self.number[target], target.dtype,
                     frozenset(self.number[n] for n in aliases if n in self.number),
                     tuple((_index(dest), self.number[node], part)
                           for dest, node, part in pieces))

    # {{{ writes

    def _place(self, node: Any, box: tuple, dest: tuple, target: Node, pieces: list) -> None:
        """The writes giving the argument *target*'s elements *dest* the
        elements *box* of *node* (a join is written part by part, a box of
        a join is the box of its parts, the argument's own elements in place
        are left as they are)."""
        if node is target and box == dest:
            return
        if is_kind(node, "concat"):
            axis = node.axis
            start = 0
            for part in node.args:
                end = start + part.shape[axis]
                lo, hi = max(box[axis][0], start), min(box[axis][1], end)
                if lo < hi:
                    inner = (*box[:axis], (lo - start, hi - start), *box[axis + 1:])
                    shift = dest[axis][0] - box[axis][0]
                    into = (*dest[:axis], (lo + shift, hi + shift), *dest[axis + 1:])
                    self._place(part, inner, into, target, pieces)
                start = end
            return
        if is_kind(node, "view"):
            if not node.arg.shape and not node.axis_map:
                pieces.append((dest, node.arg, None))      # (a scalar written over a box)
                return
            starts = _box_starts(node)
            if starts is not None:
                self._place(node.arg, tuple((lo + s, hi + s) for (lo, hi), s in zip(box, starts)),
                            dest, target, pieces)
                return
        whole = all(lo == 0 and hi == n for (lo, hi), n in zip(box, node.shape))
        pieces.append((dest, node, None if whole else _index(box)))

    def _aliases(self, inputs: set) -> set:
        """The values that may share memory with the buffers of *inputs*."""
        aliased = set(inputs)
        for number in range(len(self.template)):
            node = self.nodes[number]
            if (is_kind(node, "view", "reshape") and node.arg in aliased) or (
                    is_kind(node, "map") and node.op == "_identity" and node.args[0] in aliased):
                aliased.add(node)
        return aliased

    # }}}

    # {{{ values

    def _add(self, node: Any) -> None:
        kind = node.kind
        if kind not in _KINDS:
            raise _NoReplay(f"a {kind} node")
        if math.prod(node.shape) > SMALL:
            raise _NoReplay(f"a value of {math.prod(node.shape)} elements")
        if kind == "const":
            self._slot(node, node.value.item() if node.weak else np.asarray(node.value), True)
            return
        if kind in ("input", "param"):
            if kind == "param":
                raise _NoReplay("a number the trace added")
            # (an array the function reads from its closure: its value now)
            self._slot(node, LazyArray(node)._host(), True)
            return
        step = getattr(self, f"_{kind}")(node)
        children = _operands(node)
        if all(self.number[c] in self.constant for c in children):
            value = step(self.template)
            _check(node, value)
            if kind == "map" and node.weak:
                value = np.asarray(value).item()
            self._slot(node, value, True)
            return
        self.steps.append((self._slot(node), step))

    def _map(self, node: Map) -> Callable:
        numbers = [self.number[a] for a in node.args]
        if node.op == "astype":
            (a,) = numbers
            dtype = node.dtype
            return lambda v: np.asarray(v[a]).astype(dtype)
        function = HOST_OPERATIONS.get(node.op)
        if function is None:
            function = getattr(np, node.op, None)
            if not isinstance(function, np.ufunc):
                raise _NoReplay(f"the operation {node.op}")
        if node.weak:
            inner = _call(function, numbers)
            return lambda v: np.asarray(inner(v)).item()
        if isinstance(function, np.ufunc) and function.nout == 1 and node.shape \
                and len(numbers) <= 2:
            self.ufunc_steps[len(self.template)] = (function, numbers)
        return _call(function, numbers)

    def _reduce(self, node: Reduce) -> Callable:
        factors = _factors(node)
        if factors is not None:
            return self._contraction(node, factors)
        a = self.number[node.arg]
        axes, keepdims, dtype = node.axes, node.keepdims, node.dtype
        if node.op in ARG_REDUCTIONS:
            (axis,) = axes
            function = ARG_REDUCTIONS[node.op]
            return lambda v: function(v[a], axis=axis, keepdims=keepdims)
        if node.op in ("sum", "product"):
            reduce = _UFUNC_REDUCTIONS[node.op]
            return lambda v: reduce(v[a], axes, dtype, None, keepdims)
        if node.op in _UFUNC_REDUCTIONS:
            reduce = _UFUNC_REDUCTIONS[node.op]
            return lambda v: reduce(v[a], axes, None, None, keepdims)
        if node.op not in REDUCTIONS:
            raise _NoReplay(f"the reduction {node.op}")
        named = REDUCTIONS[node.op]
        return lambda v: named(v[a], axis=axes, keepdims=keepdims)

    def _contraction(self, node: Reduce, factors: tuple[Node, Node]) -> Callable:
        """``np.matmul`` of the factors of a product summed over some axes (a
        matrix product, ``dot``, ``einsum``, ``(a[:, None] * b).sum(1)``: the
        graph does not say which), the factors' axes ordered as batch, rows
        and summed ones, summed ones and columns: ``a @ b`` is that call
        itself; other spellings may differ from NumPy's by a rounding."""
        shape, summed = node.arg.shape, node.axes
        x, y = ((1,) * (len(shape) - len(f.shape)) + f.shape for f in factors)
        if any(x[d] != shape[d] or y[d] != shape[d] for d in summed):
            raise _NoReplay("a sum over an axis a factor broadcasts")
        kept = [d for d in range(len(shape)) if d not in summed]
        batch = [d for d in kept if x[d] != 1 and y[d] != 1]
        rows = [d for d in kept if x[d] != 1 and y[d] == 1]
        columns = [d for d in kept if x[d] == 1 and y[d] != 1]
        ones = [d for d in kept if x[d] == 1 and y[d] == 1]
        sizes = [shape[d] for d in batch]
        depth = math.prod(shape[d] for d in summed)
        x_plan = _regroup(x, batch + rows + list(summed) + columns + ones,
                          sizes + ([math.prod(shape[d] for d in rows)] if rows else []) + [depth])
        y_plan = _regroup(y, batch + list(summed) + columns + rows + ones,
                          sizes + [depth] + ([math.prod(shape[d] for d in columns)]
                                             if columns else []))
        order = batch + rows + columns + ones
        out_plan = _regroup(tuple(shape[d] for d in order), [order.index(d) for d in kept],
                            node.shape)
        a, b = (self.number[f] for f in factors)
        matmul = np.matmul
        return lambda v: out_plan(matmul(x_plan(v[a]), y_plan(v[b])))

    def _view(self, node: View) -> Callable:
        a = self.number[node.arg]
        view = _basic_view(node)
        if view is not None:
            return lambda v: view(v[a])
        shape, picks = node.shape, view_index(node)
        return lambda v: np.broadcast_to(np.asarray(v[a][picks]), shape)

    def _reshape(self, node: Reshape) -> Callable:
        a = self.number[node.arg]
        shape = node.shape
        return lambda v: v[a].reshape(shape)

    def _concat(self, node: Concat) -> Callable:
        numbers = [self.number[a] for a in node.args]
        axis, dtype = node.axis, node.dtype
        return lambda v: np.concatenate([v[k] for k in numbers], axis, dtype=dtype,
                                        casting="unsafe")

    def _iota(self, node: Iota) -> Callable:
        shape = [1] * len(node.shape)
        shape[node.axis] = node.shape[node.axis]
        value = np.broadcast_to(np.arange(node.shape[node.axis], dtype=np.int64
                                          ).reshape(shape), node.shape)
        return lambda v: value

    def _scan(self, node: Scan) -> Callable:
        accumulate = _ACCUMULATIONS.get(node.op)
        if accumulate is None:
            raise _NoReplay(f"the scan {node.op}")
        a, axis, dtype = self.number[node.arg], node.axis, node.dtype
        return lambda v: accumulate(v[a], axis, dtype)

    def _gather(self, node: Gather) -> Callable:
        a, i, axis = self.number[node.arg], self.number[node.indices], node.axis
        # (positions modulo the extent, as the kernels read them: see host_graph)
        return lambda v: np.take(v[a], v[i], axis=axis, mode="wrap")

    # }}}


def _factors(node: Any) -> tuple[Node, Node] | None:
    """The two factors of the product a sum *node* reduces, where one of
    them is broadcast along an axis the sum keeps (a matrix product: the
    product is larger than the factors), else None."""
    if not (is_kind(node, "reduce") and node.op == "sum" and is_kind(node.arg, "map")
            and node.arg.op == "multiply" and len(node.arg.args) == 2):
        return None
    shape = node.arg.shape
    x, y = ((1,) * (len(shape) - len(f.shape)) + f.shape for f in node.arg.args)
    if any(shape[d] != 1 and (x[d] == 1) != (y[d] == 1)
           for d in range(len(shape)) if d not in node.axes):
        return node.arg.args
    return None


def _regroup(full: tuple, order: list[int], shape: Sequence[int]) -> Callable:
    """The function taking a value (of *full*'s shape, or that shape with
    leading axes of one left out) to its axes in *order* read into
    *shape*."""
    if order == sorted(order):
        return lambda value: value.reshape(shape)
    order_ = tuple(order)
    return lambda value: value.reshape(full).transpose(order_).reshape(shape)


def _operands(node: Node) -> tuple[Node, ...]:
    """The values the replay computes *node* from."""
    factors = _factors(node)
    return factors if factors is not None else node.children()


def _call(function: Callable, numbers: list[int]) -> Callable:
    """``function`` of the values numbered *numbers*."""
    if len(numbers) == 1:
        (a,) = numbers
        return lambda v: function(v[a])
    if len(numbers) == 2:
        a, b = numbers
        return lambda v: function(v[a], v[b])
    if len(numbers) == 3:
        a, b, c = numbers
        return lambda v: function(v[a], v[b], v[c])
    return lambda v: function(*[v[k] for k in numbers])


def _index(box: tuple) -> tuple:
    """The basic index of the elements *box* (``(start, stop)`` per axis)."""
    return tuple(slice(lo, hi) for lo, hi in box)


def _box_starts(node: View) -> tuple | None:
    """The start per axis where the view *node* is a box of its argument
    (each axis of the argument read along the view's axis of the same place,
    by steps of one), else None."""
    entries = node.axis_map
    if len(entries) != len(node.shape):
        return None
    starts = []
    for k, entry in enumerate(entries):
        if entry[0] != "axis" or entry[1] != k or entry[3] != 1:
            return None
        starts.append(entry[2])
    return tuple(starts)


def _basic_view(node: View) -> Callable | None:
    """The function taking the argument of the view *node* to its value by
    basic indexing (integers and slices), a transpose where the view
    reorders axes, new axes and a broadcast; None where the view reads an
    axis twice (a diagonal)."""
    key: list = []
    axes: list[int] = []            # (the view's axis of each axis the key leaves)
    shape = node.shape
    for entry in node.axis_map:
        if entry[0] == "const":
            key.append(entry[1])
            continue
        _, k, start, step = entry
        if k in axes:
            return None
        n = shape[k]
        if step == 0:
            key.append(slice(start, start + 1))
        elif step > 0:
            key.append(slice(start, start + step * (n - 1) + 1 if n else start, step))
        else:
            stop = start + step * (n - 1) - 1 if n else start
            key.append(slice(start, stop if stop >= 0 else None, step))
        axes.append(k)
    key_ = tuple(key)
    order = sorted(range(len(axes)), key=lambda j: axes[j])
    transpose = tuple(order) if order != list(range(len(axes))) else None
    widen: tuple | None = tuple(slice(None) if k in axes else None for k in range(len(shape)))
    if all(w is not None for w in widen or ()):
        widen = None
    broadcast = any(n != 1 and (k not in axes or node.axis_map[_entry_of(node, k)][3] == 0)
                    for k, n in enumerate(shape))

    if transpose is None and widen is None and not broadcast:
        return lambda value: value[key_]

    def view(value: Any) -> Any:
        value = value[key_]
        if transpose is not None:
            value = value.transpose(transpose)
        if widen is not None:
            value = value[widen]
        return np.broadcast_to(value, shape) if broadcast else value
    return view


def _entry_of(node: View, k: int) -> int:
    """The position of the entry of the view *node* that reads along its axis *k*."""
    return next(j for j, e in enumerate(node.axis_map) if e[0] == "axis" and e[1] == k)


__all__ = ["HostReplay", "host_replay"]
