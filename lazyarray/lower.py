"""Lowering graph nodes to kernelcore kernels.

Elementwise operations fuse into their consumer: a kernel computes one stored
node (a reduction or the requested result) from stored inputs, inlining every
elementwise operation and broadcast between them.

Public names: build_kernel, stored_nodes, storage_plan, RECOMPUTE_LIMIT.
"""

from __future__ import annotations

import numpy as np

import kernelcore as lp
from kernelcore.index_width import INDEX_LIMIT
from lazyarray.lower_reduction import (
    COMBINE, CPU_LANES, MAX_GROUP, ROW_SLOTS, cpu_row_kernel_schedule, device_profile,
    kernel_reduction, reduction_kernel, row_group, row_kernel_schedule)
from lazyarray.lower_contraction import contraction_schedule, cpu_contraction_schedule
from lazyarray.lower_tiles import (
    TILE, blocked_transpose_schedule, tiled_transpose_schedule, transposed_inputs)
from lazyarray.tune import NotApplicable
from lazyarray.graph import (
    Concat, Const, Gather, Input, Iota, Map, Node, Reduce, Reshape, Scan, View, walk)
from lazyarray.ops.elementwise import ELEMENTWISE


#: per device kind: a computed node that would be evaluated this many times
#: per element of a stored value is stored itself (e.g. each step of an
#: unrolled stencil loop on a CPU). GPUs have compute to spare for memory
#: traffic saved: there a stencil step is recomputed inside the next one
#: (ten 5-point steps of 8192^2 on an H100: 5 kernels, 1.7 ms; 10 kernels,
#: 2.7 ms), on PoCL that is slower (2.7 against 2.5 ms for 768^2)
RECOMPUTE_LIMIT = {"cpu": 4, "gpu": 6}


def storage_plan(root: Node) -> list[tuple[Node, str]]:
    """The nodes whose values are stored, children before parents, each with
    the rule that stores it.

    Stored are: the root, every reduction, and every elementwise or
    concatenation node that fusing would evaluate at least the device kind's
    :data:`RECOMPUTE_LIMIT` times (on average) per element of the value that
    reads it. Reads of one node at the same index in one kernel count once
    (the kernel computes the value once, see :class:`_Expr`). All other nodes
    are recomputed inside the kernel of the stored value that reads them.
    """
    if all(isinstance(c, (Input, Const)) for c in root.children()):
        return [(root, "result")]       # one operation on inputs (eager calls)
    kind = device_profile(lp.default_queue().device)[0]
    limit = RECOMPUTE_LIMIT[kind]
    order = walk(root)
    # per node: the (kernel, index) pairs it is evaluated at, and the number of
    # evaluations that are never shared (conditional, or inside a reduction)
    at: dict[int, set] = {}
    unshared: dict[int, float] = {}
    reasons: dict[int, str] = {}
    _evaluate_as_root(root, at, unshared)
    for node in reversed(order):            # consumers before producers
        count = len(at.get(id(node), ())) + unshared.get(id(node), 0)
        if node is root:
            reasons[id(node)] = "result"
        elif isinstance(node, Reduce):
            reasons[id(node)] = "reduction"
        elif isinstance(node, Scan):
            reasons[id(node)] = "scan"
        elif isinstance(node, (Map, Concat)) and count >= limit:
            reasons[id(node)] = (f"recompute rule: read {count:.3g} times per element "
                                 f"(limit {limit})")
        if id(node) in reasons and node is not root:
            _evaluate_as_root(node, at, unshared)
        for kernel, index in at.get(id(node), ()):
            for child, child_index, share in _accesses(node, list(index)):
                if child_index is None:
                    unshared[id(child)] = unshared.get(id(child), 0) + share
                else:
                    at.setdefault(id(child), set()).add((kernel, tuple(child_index)))
        times = unshared.get(id(node), 0)
        if times:
            for child, _, share in _accesses(node, _out_index(node)):
                unshared[id(child)] = unshared.get(id(child), 0) + times * share
    absorbed = row_reductions(root, {k for k in reasons if k != id(root)}, ROW_LIMIT[kind])
    if absorbed:
        ops = ", ".join(n.op for n in order if id(n) in absorbed)
        reasons[id(root)] += f" (row kernel: {ops} per row)"
    return [(n, reasons[id(n)]) for n in order
            if id(n) in reasons and id(n) not in absorbed]


def _evaluate_as_root(node: Node, at: dict, unshared: dict) -> None:
    """Record that *node* is computed once per element by a kernel of its own."""
    if isinstance(node, (Reduce, Scan)):
        at[id(node)], unshared[id(node)] = set(), 1
    else:
        at[id(node)], unshared[id(node)] = {(id(node), tuple(_out_index(node)))}, 0


def _out_index(node: Node) -> list[str]:
    """The inames of a kernel computing *node* elementwise."""
    return [f"i{k}" for k in range(node.ndim)]


def _accesses(node: Node, index: list[str]) -> list[tuple[Node, list[str] | None, float]]:
    """The children that computing *node* at *index* reads: each with the index
    it is read at (``None`` where the read is never shared: a part of a
    concatenation, which is read conditionally, gathered data, or inside a
    reduction) and how often per element it is read on average."""
    if isinstance(node, View):
        return [(node.arg, [str(m[1]) if m[0] == "const" else _affine(m[2], m[3], index[m[1]])
                            for m in node.axis_map], 1)]
    if isinstance(node, Reshape):
        return [(node.arg, _unflatten(_flatten(index, node.shape), node.arg.shape), 1)]
    if isinstance(node, Map):
        return [(a, _broadcast(index, a.shape, node.shape), 1) for a in node.args]
    if isinstance(node, Concat):
        total = node.shape[node.axis] or 1
        return [(a, None, a.shape[node.axis] / total) for a in node.args]
    if isinstance(node, Gather):
        k, m = node.axis, node.indices.ndim
        return [(node.indices, index[k:k + m], 1), (node.arg, None, 1)]
    return [(child, None, 1) for child in node.children()]


#: per device kind: rows up to this many elements are reduced inside the
#: kernel that uses them (GPUs: as many as a row kernel's registers hold)
ROW_LIMIT = {"cpu": 8192, "gpu": MAX_GROUP * ROW_SLOTS}
#: ... when there are at least this many rows to spread over work-items
MIN_ROWS = 64


def row_reductions(root: Node, stored: set[int], limit: int) -> set[int]:
    """Reductions that the kernel of *root* computes itself, once per row, into
    private temporaries (``x / x.sum(axis=-1, keepdims=True)``: one kernel).

    On CPUs one work-item computes a row; on GPUs a work-group does
    (:func:`~lazyarray.lower_reduction.row_kernel_schedule`).

    A reduction qualifies when it reduces the last axis and keeps its
    dimensions, its kept axes have
    *root*'s extents, its rows are at most *limit* long and many
    (:data:`MIN_ROWS`), and *root* reads it only through elementwise
    operations (possibly inside other such reductions).
    """
    if isinstance(root, (Reduce, Scan)) or root.ndim == 0:
        return set()

    def fits(d: Reduce) -> bool:
        row = int(np.prod([d.arg.shape[a] for a in d.axes], dtype=np.int64))
        rows = int(np.prod([root.shape[k] for k in range(root.ndim) if k not in d.axes],
                           dtype=np.int64))
        return (d.keepdims and d.ndim == root.ndim and d.op in _ROW_OPS
                and d.axes == (root.ndim - 1,)
                and d.arg.shape == root.shape and 0 < row <= limit
                and rows >= MIN_ROWS)

    region: set[int] = set()
    found: dict[int, Reduce] = {}

    def visit(node: Node) -> None:
        if id(node) in region:
            return
        region.add(id(node))
        for child in node.children():
            if id(child) in stored and not (isinstance(child, Reduce) and fits(child)):
                continue
            if isinstance(child, Map) or (isinstance(child, Reduce) and fits(child)):
                if isinstance(child, Reduce):
                    found[id(child)] = child
                visit(child)

    visit(root)
    # every reader of an absorbed reduction must be inside the kernel, and no
    # other stored value's kernel may read it (it would not be stored)
    parents: dict[int, list[int]] = {}
    nodes = walk(root)
    for n in nodes:
        for child in n.children():
            parents.setdefault(id(child), []).append(id(n))
    absorbed = {k for k in found if all(p in region for p in parents.get(k, []))}
    for other in nodes:
        if id(other) in stored and id(other) not in absorbed and absorbed:
            absorbed -= _read_by(other, stored)
    return absorbed


def _read_by(node: Node, stored: set[int]) -> set[int]:
    """Ids of the stored values that the kernel computing *node* reads."""
    found: set[int] = set()
    seen: set[int] = set()
    stack = list(node.children())
    while stack:
        child = stack.pop()
        if id(child) in seen:
            continue
        seen.add(id(child))
        if id(child) in stored:
            found.add(id(child))
        else:
            stack.extend(child.children())
    return found


_ROW_OPS = ("sum", "product", "max", "min")


def stored_nodes(root: Node) -> list[Node]:
    """The nodes of :func:`storage_plan`."""
    return [n for n, _ in storage_plan(root)]


def _literal(c: Const) -> str:
    v = c.value.item()
    if isinstance(v, bool):
        return "True" if v else "False"
    if c.weak:
        # (parenthesized: ``-2 ** x`` would read as ``-(2 ** x)``)
        return f"({v!r})" if str(v).startswith("-") else repr(v)
    return f"{c.dtype.name}({v!r})"


class _Expr:
    """Instruction-language text for elementwise subgraphs.

    Once told what it computes (:meth:`compute`), a non-scalar value the kernel
    reads more than once at the same index becomes a private temporary computed
    once (scalars are loop-invariant: the OpenCL compiler hoists them). With
    *row_lanes* (CPUs), a value that a row reduction reduces and the result
    also reads (softmax's exponentials) is computed once per element into a
    private row array. With *row_group* (GPUs: the work-items sharing a row),
    such values and the inputs read that way are held in registers: each
    work-item keeps the row's elements it owns (every *row_group*-th), so
    that the row is read from memory once.
    """

    def __init__(self, inputs: dict[int, tuple[Node, str]], row_lanes: int | None = None,
                 row_group: int | None = None):
        self.inputs = inputs        # stored node id -> (node, argument name)
        self.shared: dict = {}
        self.out_index: tuple = ()
        self.inames = ""
        self.row_arrays: dict[int, str] = {}    # node id -> its private row array
        self.row_insns: list[str] = []          # row temporaries' instructions, in order
        self.row_temps: dict[int, str] = {}     # reduction id -> private temporary
        self.cse_insns: list[str] = []          # shared values' instructions, in order
        self.row_domains: list[str] = []
        self.row_lanes = row_lanes
        self.row_group = row_group
        self._positions: dict[str, tuple] = {}  # GPU row position -> (slot, work-item) inames
        self._row_count = 0
        self._filling: set[int] = set()         # ids of row arrays being filled
        self.row_tags: dict[str, str] = {}      # iname tags of the row reductions
        self.row_temporaries: list = []         # their lanes and row arrays
        self.row_splits: list[str] = []         # row array inames to walk in lanes
        self.reduced: set[int] = set()          # ids of what row reductions read per element
        self.shape_of_out: tuple | None = None
        self._temps: dict[tuple, str] = {}
        self._unshared = 0                      # > 0: inside a conditional or a reduction

    def __call__(self, node: Node, index: list[str]) -> str:
        held = self._held(node, index)
        if held is not None:
            return held
        if id(node) in self.inputs:
            name = self.inputs[id(node)][1]
            return f"{name}[0]" if node.ndim == 0 else f"{name}[{', '.join(index)}]"
        key = (id(node), tuple(index))
        if self._unshared or node.ndim == 0 or self.shared.get(key, 0) < 2:
            return self._text(node, index)
        name = self._temps.get(key)
        if name is None:
            text = self._text(node, index)
            name = self._temps[key] = f"cse{len(self._temps)}"
            within = f" {{inames={self.inames}}}" if self.inames else ""
            self.cse_insns.append(f"<{node.dtype.name}> {name} = {text}{within}")
        return name

    def _text(self, node: Node, index: list[str]) -> str:
        if isinstance(node, Const):
            return _literal(node)
        if isinstance(node, (View, Reshape)):
            [(arg, arg_index, _)] = _accesses(node, index)
            return self(arg, arg_index)
        if isinstance(node, Iota):
            return f"int64({index[node.axis]})"
        if isinstance(node, Concat):
            return self._concat(node, index)
        if isinstance(node, Gather):
            return self._gather(node, index)
        if isinstance(node, Reduce):
            return self._row_reduction(node, index)
        if isinstance(node, Map):
            parts = [self(a, a_index) for a, a_index, _ in _accesses(node, index)]
            if node.op == "astype":
                return f"{node.dtype.name}({parts[0]})"
            return f"{node.dtype.name}({ELEMENTWISE[node.op].format(*parts)})"
        raise AssertionError(f"unstored {type(node).__name__}")

    def _unshared_read(self, node: Node, index: list[str]) -> str:
        self._unshared += 1
        try:
            return self(node, index)
        finally:
            self._unshared -= 1

    def _held(self, node: Node, index: list[str]) -> str | None:
        """*node* at *index* read from its row array, if it has (or, read
        at the output's index, gets) one and this work-item holds that
        element; else None."""
        if not index or len(index) != len(self.out_index) \
                or list(index[:-1]) != list(self.out_index[:-1]) or id(node) in self._filling:
            return None
        position = index[-1]
        at_output = not self._unshared and tuple(index) == self.out_index
        if id(node) not in self.row_arrays and not (
                (at_output or position in self._positions) and self._in_row_array(node)):
            return None
        if self.row_group is not None and position not in self._positions:
            return None
        return f"{self._row_array(node)}[{self._slot(position)}]"

    def _slot(self, position: str) -> str:
        """The index of the element at *position* in a row array: the position
        on a CPU, the work-item's slot on a GPU."""
        return self._positions[position][0] if position in self._positions else position

    def _in_row_array(self, node: Node) -> bool:
        """Whether *node* is kept in a row array: it is computed (a Map; on a
        GPU also an input), a row reduction of this kernel reads it per element
        (:attr:`reduced`), and the result reads it at its own index."""
        if id(node) in self.row_arrays:
            return True
        if self.row_group is not None:
            kept = isinstance(node, Map) or id(node) in self.inputs
        else:
            kept = self.row_lanes is not None and isinstance(node, Map)
        return (kept and node.shape == self.shape_of_out and id(node) in self.reduced
                and self.shared.get((id(node), self.out_index), 0) > 0)

    def row_position(self, outer: str, inner: str, extent: int) -> str:
        """A GPU row kernel's position ``group*outer + inner`` along a row of
        *extent* elements: *inner* are the work-items of the row, *outer* (a
        loop unrolled, so that row arrays stay in registers) the slot of each
        work-item's row arrays."""
        group = self.row_group
        self.row_domains.append(f"{{ [{outer}, {inner}]: 0 <= {inner} < {group} and "
                                f"0 <= {outer} and {group}*{outer} + {inner} < {extent} }}")
        self.row_tags.update({inner: "l.0", outer: "unr"})
        position = f"({group}*{outer} + {inner})"
        self._positions[position] = (outer, inner)
        return position

    def compute(self, node: Node, index: list[str], reduced: set[int]) -> None:
        """Prepare to compute *node* elementwise at *index* (inames, or row
        positions), whose region's row reductions reduce the nodes *reduced*."""
        self.out_index = tuple(index)
        self.shared = _shared_values(node, self.inputs, index)
        self.inames = ":".join(i for k in index for i in self._positions.get(k, (k,)))
        self.shape_of_out = node.shape
        self.reduced = reduced

    def _row_array(self, node: Node) -> str:
        """The private row array holding *node* along the current row (on a
        GPU, the elements this work-item owns)."""
        name = self.row_arrays.get(id(node))
        if name is None:
            k = self._row_count
            self._row_count += 1
            name = f"rowvals{k}"
            extent = node.shape[-1]
            if self.row_group is None:
                j = slot = f"rv{k}"
                self.row_domains.append(f"{{ [{j}]: 0 <= {j} < {extent} }}")
                self.row_splits.append(j)
                shape = (extent,)
            else:
                slot = f"rv{k}_o"
                j = self.row_position(slot, f"rv{k}_l", extent)
                shape = (-(-extent // self.row_group),)
            self.row_temporaries.append(lp.TemporaryVariable(
                name, node.dtype, shape=shape, address_space="private"))
            self._filling.add(id(node))     # the fill reads *node* itself
            body = self._unshared_read(node, [*self.out_index[:-1], j])
            self._filling.remove(id(node))
            self.row_arrays[id(node)] = name
            self.row_insns.append(f"{name}[{slot}] = {body}")
        return name

    def _row_reduction(self, node: Reduce, index: list[str]) -> str:
        """A reduction absorbed into this kernel (see :func:`row_reductions`):
        a private temporary computed once per row; with *row_lanes*, the row
        is walked in that many interleaved lanes (vector registers on a CPU)
        and a sequential tail."""
        name = self.row_temps.get(id(node))
        if name is not None:
            return name
        k = len(self.row_temps)
        name = self.row_temps[id(node)] = f"row{k}"
        [axis] = node.axes
        extent, op = node.arg.shape[axis], kernel_reduction(node)

        in_array = (list(index[:-1]) == list(self.out_index[:-1])
                    and self._in_row_array(node.arg))

        def body(position: str) -> str:
            if in_array:
                return f"{self._row_array(node.arg)}[{self._slot(position)}]"
            return self._unshared_read(node.arg, [position if a == axis else index[a]
                                                  for a in range(node.arg.ndim)])

        def box(iname: str, n: int) -> str:
            self.row_domains.append(f"{{ [{iname}]: 0 <= {iname} < {n} }}")
            return iname

        if self.row_group is not None:
            o, v = f"r{k}_o", f"r{k}_l"
            position = self.row_position(o, v, extent)
            self.row_insns.append(
                f"<{node.dtype.name}> {name} = {op}(({o}, {v}), {body(position)})")
            return name
        lanes = self.row_lanes
        if not lanes or extent < 2 * lanes:
            r = box(f"r{k}_{axis}", extent)
            self.row_insns.append(f"<{node.dtype.name}> {name} = {op}({r}, {body(r)})")
            return name
        count = extent // lanes
        o, v, w = box(f"r{k}_o", count), box(f"r{k}_v", lanes), box(f"r{k}_w", lanes)
        self.row_tags[v] = "vec"
        part = f"{name}_lanes"
        self.row_temporaries.append(
            lp.TemporaryVariable(part, node.dtype, shape=(lanes,), address_space="private"))
        self.row_insns.append(f"{part}[{v}] = {op}({o}, {body(f'({lanes}*{o} + {v})')})")
        total = f"{op}({w}, {part}[{w}])"
        if count * lanes < extent:
            t = box(f"r{k}_t", extent - count * lanes)
            self.row_insns += [
                f"<{node.dtype.name}> {name}_body = {total}",
                f"<{node.dtype.name}> {name}_tail = "
                f"{op}({t}, {body(f'({count * lanes} + {t})')})"]
            total = COMBINE[op].format(a=f"{name}_body", b=f"{name}_tail")
        self.row_insns.append(f"<{node.dtype.name}> {name} = {total}")
        return name

    def _gather(self, node: Gather, index: list[str]) -> str:
        """*arg* read at the gathered position (negative indices count from
        the end, as in NumPy). The indices were checked when the gather was
        made; the clamp only keeps a changed index array (a jitted function's
        argument) from reading outside the array."""
        k, m = node.axis, node.indices.ndim
        extent = node.arg.shape[k]
        picked = f"int64({self(node.indices, index[k:k + m])})"
        wrapped = f"if({picked} < 0, {picked} + {extent}, {picked})"
        position = f"min(max({wrapped}, 0), {extent - 1})"
        return self._unshared_read(node.arg, index[:k] + [position] + index[k + m:])

    def _concat(self, node: Concat, index: list[str]) -> str:
        """Each part read where the index along the axis falls into it."""
        var = index[node.axis]
        parts = []
        offset = 0
        for arg in node.args:
            extent = arg.shape[node.axis]
            if extent:
                idx = list(index)
                idx[node.axis] = var if offset == 0 else f"({var} - {offset})"
                parts.append((offset + extent,
                              f"{node.dtype.name}({self._unshared_read(arg, idx)})"))
            offset += extent
        expr = parts[-1][1]
        for bound, part in reversed(parts[:-1]):
            expr = f"if({var} < {bound}, {part}, {expr})"
        return expr


def _affine(start: int, step: int, var: str) -> str:
    term = var if step == 1 else f"{step}*{var}"
    return term if start == 0 else f"({start} + {term})"


def _flatten(index: list[str], shape: tuple) -> str:
    """The C-order flat offset of *index* in *shape*."""
    flat = "0"
    for var, extent in zip(index, shape):
        flat = var if flat == "0" else f"({flat})*{extent} + {var}"
    return flat


def _unflatten(flat: str, shape: tuple) -> list[str]:
    """The index in *shape* of C-order flat offset *flat*."""
    result = []
    stride = 1
    for extent in reversed(shape):
        part = f"({flat})" if stride == 1 else f"(({flat}) // {stride})"
        result.append(f"({part} % {extent})" if extent != 1 else "0")
        stride *= extent
    return list(reversed(result))


def _broadcast(index: list[str], arg_shape: tuple, shape: tuple) -> list[str]:
    offset = len(shape) - len(arg_shape)
    return ["0" if arg_shape[k] == 1 and shape[k + offset] != 1 else index[k + offset]
            for k in range(len(arg_shape))]


def _row_operands(reductions: list[Reduce], inputs: dict) -> set[int]:
    """Ids of the values that row *reductions* read at their own positions:
    their arguments, and the inputs they read through elementwise operations
    of the same shape (``x`` in ``(x*x).sum(axis=-1)``)."""
    found = {id(r.arg) for r in reductions}
    seen: set[int] = set()
    stack = [r.arg for r in reductions]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in inputs:
            found.add(id(node))
        elif isinstance(node, Map):
            stack.extend(c for c in node.args if c.shape == node.shape)
    return found


def _region(root: Node, inputs: dict) -> list[Node]:
    """The nodes a kernel computing *root* evaluates (up to its inputs)."""
    seen: set[int] = set()
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in inputs:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(node.children())
    return found


def _shared_values(root: Node, inputs: dict, index: list[str]) -> dict[tuple, int]:
    """How many times computing *root* at *index* reads each (node id, index)
    pair that could be shared (see :func:`_accesses`)."""
    counts: dict[tuple, int] = {}

    def visit(node: Node, at: list[str]) -> None:
        key = (id(node), tuple(at))
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 1 and id(node) not in inputs:
            for child, child_index, _ in _accesses(node, at):
                if child_index is not None:
                    visit(child, child_index)

    visit(root, index)
    return counts


def build_kernel(node: Node, inputs: dict[int, tuple[Node, str]],
                 choice: tuple[str, tuple] | None = None) -> lp.LoopKernel:
    """A kernelcore kernel computing *node* into ``out`` from the stored nodes
    in *inputs* (node id -> (node, argument name)), parallelized for the device;
    *choice* (knob, values) overrides one of the schedule's sizes, as
    :mod:`lazyarray.tune` describes. Kernels reaching element offsets beyond
    ``2**31 - 1`` index with int64."""
    knl = _scheduled_kernel(node, inputs, choice)
    # NumPy rounds every operation: no fused multiply-adds, except in matrix
    # products (which add in another order than NumPy's BLAS anyway)
    product = isinstance(node, Reduce) and _is_product_sum(node)
    knl = knl.copy(target=lp.PyOpenCLTarget(fp_contract=product))
    if _needs_wide_indices(node, inputs):
        knl = knl.copy(index_dtype=np.dtype(np.int64))
    return knl


def _needs_wide_indices(node: Node, inputs: dict[int, tuple[Node, str]]) -> bool:
    """Whether a kernel computing *node* from *inputs* has more than
    ``2**31 - 1`` elements in an array it reads or writes, or in a value it
    computes (a reshape's flat offsets, a broadcast)."""
    values = _region(node, inputs) + [n for n, _ in inputs.values()]
    return any(int(np.prod(n.shape, dtype=np.int64)) > INDEX_LIMIT for n in values)


def _scheduled_kernel(node: Node, inputs: dict[int, tuple[Node, str]],
                      choice: tuple[str, tuple] | None):
    """:func:`build_kernel`'s kernel, for the default target and index type."""
    sizes = dict([choice]) if choice else {}
    device = lp.default_queue().device
    kind = device_profile(device)[0]
    if isinstance(node, (Reduce, Scan)):
        expr = _Expr(inputs)
    else:
        reductions = [n for n in _region(node, inputs) if isinstance(n, Reduce)]
        reduced = {id(n.arg) for n in reductions}
        group = row_group(node.shape[-1]) if kind == "gpu" and reduced else None
        if group is not None:
            reduced = _row_operands(reductions, inputs)
        expr = _Expr(inputs, row_lanes=CPU_LANES if kind == "cpu" else None, row_group=group)
        index = _out_index(node)
        if group is not None:
            index[-1] = expr.row_position(f"{index[-1]}_o", f"{index[-1]}_l", node.shape[-1])
        expr.compute(node, index, reduced)
    data = [lp.GlobalArg("out", node.dtype, shape=node.shape or (1,))]
    for stored_node, name in sorted(inputs.values(), key=lambda p: p[1]):
        data.append(lp.GlobalArg(name, stored_node.dtype, shape=stored_node.shape or (1,)))
    if isinstance(node, Reduce):
        if _is_product_sum(node):
            knl, out_index = _plain_kernel(node, expr, data)
            extents = {f"i{k}": n for k, n in enumerate(node.arg.shape)}
            schedule = contraction_schedule if kind == "gpu" else cpu_contraction_schedule
            blocked = schedule(knl, out_index, f"i{node.axes[0]}", extents,
                               *sizes.get("contraction", ()))
            if blocked is not None:
                return blocked
            if "contraction" in sizes:
                # (another layout would add the terms in another order)
                raise NotApplicable(f"the blocking {sizes['contraction']} does not "
                                    "apply to this product")
        laid_out = reduction_kernel(node, expr, data, device)
        if laid_out is not None:
            return laid_out
    knl, out_index = _plain_kernel(node, expr, data)
    if expr.row_temps:
        if kind == "gpu":
            return row_kernel_schedule(knl, node.shape, expr.row_tags)
        return cpu_row_kernel_schedule(knl, node.shape, expr.row_tags, expr.row_splits)
    if not isinstance(node, (Reduce, Scan)) and not expr.row_temps \
            and min(node.shape[-2:], default=0) >= TILE:
        transposed = transposed_inputs(knl, out_index)
        tile = sizes.get("transpose", ())
        if transposed and kind == "cpu":
            return blocked_transpose_schedule(knl, out_index, node.shape, *tile)
        tiled = transposed and tiled_transpose_schedule(knl, out_index, node.shape,
                                                        transposed, *tile)
        if tiled:
            return tiled
    return lp.auto_parallelize(knl, group_size=sizes.get("group_size", (None,))[0])


def _is_product_sum(node: Reduce) -> bool:
    """Whether *node* sums a product over one axis (a matrix product's shape)."""
    arg = node.arg
    if isinstance(arg, Map) and arg.op == "astype":
        arg = arg.args[0]
    return (node.op == "sum" and len(node.axes) == 1 and not node.keepdims
            and isinstance(arg, Map) and arg.op == "multiply" and node.ndim >= 2)


def _plain_kernel(node: Node, expr: _Expr, data: list) -> tuple[lp.LoopKernel, list[str]]:
    """The unscheduled kernel computing *node*, and the inames of its output."""
    if isinstance(node, Reduce):
        arg = node.arg
        index = [f"i{k}" for k in range(arg.ndim)]
        red = [index[a] for a in node.axes]
        kept = [index[k] for k in range(arg.ndim) if k not in node.axes]
        out_index = [index[k] if k not in node.axes else "0"
                     for k in range(arg.ndim)] if node.keepdims else kept
        body = expr(arg, index)
        red_spec = red[0] if len(red) == 1 else f"({', '.join(red)})"
        rhs = f"{kernel_reduction(node)}({red_spec}, {body})" if red else body
        domains = [f"{{ [{i}]: 0 <= {i} < {arg.shape[k]} }}" for k, i in enumerate(index)]
    elif isinstance(node, Scan):
        out_index = [f"i{k}" for k in range(node.ndim)]
        running = list(out_index)
        running[node.axis] = "s"
        rhs = f"{node.op}(s, {expr(node.arg, running)})"
        domains = [f"{{ [{i}]: 0 <= {i} < {node.shape[k]} }}"
                   for k, i in enumerate(out_index)]
        # the running index depends on the output's: a scan, computed in O(n)
        domains.append(f"{{ [s]: 0 <= s <= {out_index[node.axis]} }}")
    else:
        out_index = list(expr.out_index)
        rhs = expr(node, out_index)
        # (a GPU row kernel's row position has its domain among the rows')
        domains = [f"{{ [{i}]: 0 <= {i} < {node.shape[k]} }}"
                   for k, i in enumerate(out_index) if i.isidentifier()]
    lhs = f"out[{', '.join(out_index)}]" if out_index else "out[0]"
    instructions = "\n".join([*expr.row_insns, *expr.cse_insns, f"{lhs} = {rhs}"])
    knl = lp.make_kernel((domains or ["{ [z]: 0 <= z < 1 }"]) + expr.row_domains,
                         instructions, data + expr.row_temporaries, name="lazyarray_kernel")
    # lazyarray passes device arrays only
    return lp.set_options(knl, no_numpy=True), out_index
