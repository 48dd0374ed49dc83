"""Expressions of elementwise subgraphs, in kernelcore's instruction language.

A kernel computes one stored node; the nodes between it and its stored
inputs are inlined into its expression. A value the kernel reads more than
once at the same index, or one deep in a long chain, becomes a private
temporary computed once, so that a kernel's code grows with the number of
values it computes, not with the number of ways they are read.

Public names: Expr, Ix, accesses, operand_uses, out_index, row_operands,
TEMP_DEPTH.
"""

from __future__ import annotations

from dataclasses import dataclass

import kernelcore as lp
from lazyarray.lower_reduction import COMBINE, kernel_reduction
from lazyarray.graph import (
    Concat, Const, Gather, Iota, Map, Node, Reduce, Reshape, View)
from lazyarray.ops.elementwise import ELEMENTWISE

#: a computed value whose expression would nest deeper than this many
#: operations is held in a private temporary (deeply nested text is slow to
#: process and overflows recursive parsers)
TEMP_DEPTH = 16


@dataclass(frozen=True)
class Ix:
    """The index ``scale*var + offset``, where *var* (an iname, or a row
    position) takes the values ``0 .. extent - 1``."""

    var: str
    extent: int
    scale: int = 1
    offset: int = 0

    def __str__(self) -> str:
        term = self.var if self.scale == 1 else f"{self.scale}*{self.var}"
        if self.offset == 0:
            return term
        return f"({self.offset} + {term})" if self.offset > 0 else f"({term} - {-self.offset})"

    def bounds(self) -> tuple[int, int]:
        """The smallest and the largest value this index takes."""
        ends = (self.offset, self.offset + self.scale * (self.extent - 1))
        return min(ends), max(ends)


def _affine(start: int, step: int, var) -> Ix | str:
    """``start + step*var``."""
    if isinstance(var, Ix):
        if step == 0:
            return str(start)
        return Ix(var.var, var.extent, step * var.scale, start + step * var.offset)
    term = var if step == 1 else f"{step}*{var}"
    return term if start == 0 else f"({start} + {term})"


def _within(index: list, shape: tuple) -> bool:
    """Whether *index* lies inside *shape* wherever it is evaluated."""
    for entry, extent in zip(index, shape):
        if isinstance(entry, Ix):
            low, high = entry.bounds()
        elif isinstance(entry, str) and entry.isdigit():
            low = high = int(entry)
        else:
            return False
        if low < 0 or high >= extent:
            return False
    return True


def _flatten(index: list, shape: tuple) -> str:
    """The C-order flat offset of *index* in *shape*."""
    flat = "0"
    for var, extent in zip(index, shape):
        flat = str(var) if flat == "0" else f"({flat})*{extent} + {var}"
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


def _broadcast(index: list, arg_shape: tuple, shape: tuple) -> list:
    offset = len(shape) - len(arg_shape)
    return ["0" if arg_shape[k] == 1 and shape[k + offset] != 1 else index[k + offset]
            for k in range(len(arg_shape))]


def out_index(node: Node) -> list[Ix]:
    """The index of a kernel computing *node* elementwise (inames ``i0, i1, ...``)."""
    return [Ix(f"i{k}", n) for k, n in enumerate(node.shape)]


def _viewed(node: Node, index: list) -> tuple[Node, list]:
    """The node that views of *node* read at *index*, and where."""
    while isinstance(node, View):
        [(node, index, _)] = accesses(node, index)
    return node, index


def accesses(node: Node, index: list) -> list[tuple[Node, list | None, float]]:
    """The children that computing *node* at *index* reads: each with the index
    it is read at (``None`` where the read is never shared: gathered data, a
    part of a concatenation computed only where it applies, or inside a
    reduction) and the share of *node*'s elements that read it.

    Views of one value that a concatenation joins in place (the untouched
    parts of ``x`` in ``x[:, 3] = v``: each element read where it is) are
    one read of that value, shared."""
    if isinstance(node, View):
        return [(node.arg, [str(m[1]) if m[0] == "const" else _affine(m[2], m[3], index[m[1]])
                            for m in node.axis_map], 1)]
    if isinstance(node, Reshape):
        return [(node.arg, _unflatten(_flatten(index, node.shape), node.arg.shape), 1)]
    if isinstance(node, Map):
        return [(a, _broadcast(index, a.shape, node.shape), 1) for a in node.args]
    if isinstance(node, Concat):
        total = node.shape[node.axis] or 1
        return [(read, read_index if shared else None, sum(b - a for a, b in ranges) / total)
                for read, read_index, shared, ranges in _concat_sources(node, index)]
    if isinstance(node, Gather):
        k, m = node.axis, node.indices.ndim
        return [(node.indices, index[k:k + m], 1), (node.arg, None, 1)]
    return [(child, None, 1) for child in node.children()]


def _concat_sources(node: Concat, index: list) -> list[tuple[Node, list, bool, list]]:
    """What computing *node* at *index* reads, in order: the node read, its
    index, whether the read may be shared (a view of a value read inside its
    bounds), and the ranges along the axis where it applies. Parts viewing one
    value at the same index are one source."""
    sources: list = []
    found: dict[tuple, list] = {}
    offset = 0
    for arg in node.args:
        extent = arg.shape[node.axis]
        if extent:
            part_index = list(index)
            part_index[node.axis] = _affine(-offset, 1, index[node.axis])
            base, base_index = _viewed(arg, part_index)
            if base is not arg and _within(base_index, base.shape):
                key = (id(base), tuple(base_index))
                if key not in found:
                    found[key] = [base, base_index, True, []]
                    sources.append(found[key])
                found[key][3].append((offset, offset + extent))
            else:
                sources.append([arg, part_index, False, [(offset, offset + extent)]])
        offset += extent
    return [tuple(source) for source in sources]


def _conditional_parts(node: Node, index) -> list[tuple[Node, list]]:
    """The parts of concatenation *node* read only where they apply, each
    with its index (none for other nodes)."""
    if not isinstance(node, Concat):
        return []
    return [(read, read_index) for read, read_index, shared, _
            in _concat_sources(node, list(index)) if not shared]


def operand_uses(node: Node) -> list[int]:
    """How many times the text of *node* repeats each read of :func:`accesses`."""
    if isinstance(node, Map) and node.op != "astype":
        template = ELEMENTWISE[node.op]
        return [max(1, template.count(f"{{{k}}}")) for k in range(len(node.args))]
    return [1] * len(node.children())


def _literal(c: Const) -> str:
    v = c.value.item()
    if isinstance(v, bool):
        return "True" if v else "False"
    if c.weak:
        # (parenthesized: ``-2 ** x`` would read as ``-(2 ** x)``)
        return f"({v!r})" if str(v).startswith("-") else repr(v)
    return f"{c.dtype.name}({v!r})"


def row_operands(reductions: list[Reduce], inputs: dict) -> set[int]:
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


class Expr:
    """Instruction-language text for elementwise subgraphs.

    Once told what it computes (:meth:`compute`), a value the kernel reads
    more than once at the same index (counting the repeats of an operand in
    an operation's spelling, as in NaN-propagating ``maximum``), or one whose
    expression would nest deeper than :data:`TEMP_DEPTH`, becomes a private
    temporary computed once. With *row_lanes* (CPUs), a value that a row
    reduction reduces and the result also reads (softmax's exponentials) is
    computed once per element into a private row array. With *row_group*
    (GPUs: the work-items sharing a row), such values and the inputs read
    that way are held in registers: each work-item keeps the row's elements
    it owns (every *row_group*-th), so that the row is read from memory once.
    """

    def __init__(self, inputs: dict[int, tuple[Node, str]], row_lanes: int | None = None,
                 row_group: int | None = None):
        self.inputs = inputs        # stored node id -> (node, argument name)
        self.shared: dict = {}      # (node id, index) -> reads in shareable places
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
        self._temps: dict[tuple, str] = {}      # (node id, index) -> temporary, once made
        self._temp_keys: set[tuple] = set()     # the (node id, index) pairs to hold
        self._unshared = 0                      # > 0: inside a conditional or a reduction
        self._in_rows = 0                       # > 0: inside a row temporary's instruction

    def __call__(self, node: Node, index: list) -> str:
        held = self._held(node, index)
        if held is not None:
            return held
        if id(node) in self.inputs:
            name = self.inputs[id(node)][1]
            if node.ndim == 0 and name.startswith("s"):     # a scalar argument
                return name
            return f"{name}[0]" if node.ndim == 0 else f"{name}[{', '.join(map(str, index))}]"
        key = (id(node), tuple(index))
        if key in self._temps and not self._in_rows:
            return self._temps[key]     # (computed for every element, also where conditional)
        if self._unshared or key not in self._temp_keys:
            return self._text(node, index)
        name = self._temps[key] = self._private(node.dtype.name, self._text(node, index))
        return name

    def _private(self, dtype: str, text: str) -> str:
        """A private temporary of type *dtype* holding *text*, computed once
        per element of the output."""
        name = f"cse{len(self.cse_insns)}"
        within = f" {{inames={self.inames}}}" if self.inames else ""
        self.cse_insns.append(f"<{dtype}> {name} = {text}{within}")
        return name

    def _text(self, node: Node, index: list) -> str:
        if isinstance(node, Const):
            return _literal(node)
        if isinstance(node, (View, Reshape)):
            [(arg, arg_index, _)] = accesses(node, index)
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
            parts = [self(a, a_index) for a, a_index, _ in accesses(node, index)]
            if node.op == "astype":
                return f"{node.dtype.name}({parts[0]})"
            return f"{node.dtype.name}({ELEMENTWISE[node.op].format(*parts)})"
        raise AssertionError(f"unstored {type(node).__name__}")

    def _unshared_read(self, node: Node, index: list, rows: bool = False) -> str:
        """*node* at *index* where values are not shared: conditionally, or
        (*rows*) in the instruction of a row temporary, outside the loops of
        the output's elements."""
        self._unshared += 1
        self._in_rows += rows
        try:
            return self(node, index)
        finally:
            self._unshared -= 1
            self._in_rows -= rows

    def _held(self, node: Node, index: list[str]) -> str | None:
        """*node* at *index* read from its row array, if it has (or, read
        at the output's index, gets) one and this work-item holds that
        element; else None."""
        if not index or len(index) != len(self.out_index) \
                or list(index[:-1]) != list(self.out_index[:-1]) or id(node) in self._filling:
            return None
        position = str(index[-1])
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
        position = str(position)
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

    def compute(self, node: Node, index: list, reduced: set[int]) -> None:
        """Prepare to compute *node* elementwise at *index* (inames, or row
        positions), whose region's row reductions reduce the nodes *reduced*:
        decide which values become temporaries, and compute them (producers
        first, so that no expression nests deeper than :data:`TEMP_DEPTH`)."""
        self.out_index = tuple(index)
        self.inames = ":".join(i for k in index for i in self._positions.get(str(k), (str(k),)))
        self.shape_of_out = node.shape
        self.reduced = reduced
        order, reads, counts = self._shared_reads(node, index)
        depth: dict[tuple, int] = {}
        for key, value, at in order:
            below = max((depth.get(r, 0) for r in reads[key] if r not in self._temp_keys),
                        default=0)
            depth[key] = below + 1
            if self._may_hold(value, at) and (
                    counts[key] >= 2 or depth[key] > TEMP_DEPTH):
                self._temp_keys.add(key)
        for key, value, at in order:
            if key in self._temp_keys:
                self(value, list(at))

    def _may_hold(self, node: Node, index: tuple) -> bool:
        """Whether *node* at *index* may become a temporary: a computed value
        that is not read from a row array."""
        return (isinstance(node, (Map, Concat, Gather, View, Reshape))
                and id(node) not in self.inputs
                and not (index == self.out_index and self._in_row_array(node)))

    def _shared_reads(self, root: Node, index: list) -> tuple[list, dict, dict]:
        """Which (node, index) pairs that could be shared (see
        :func:`accesses`) computing *root* at *index* reaches (kept in
        :attr:`shared`), and, apart from those reached only through row
        arrays: the pairs producers first, as ``(key, node, index)``, the
        keys each one reads, and how many times each is read."""
        self.shared = reached = {}
        counts: dict[tuple, int] = {}
        reads: dict[tuple, list] = {}
        order: list = []
        stack: list = [(root, tuple(index), 1, True, False)]
        while stack:
            node, at, times, direct, done = stack.pop()
            key = (id(node), at)
            if done:
                order.append((key, node, at))
                continue
            first = key not in reached
            reached[key] = reached.get(key, 0) + times
            first_direct = direct and key not in counts
            if direct:
                counts[key] = counts.get(key, 0) + times
            if id(node) in self.inputs or isinstance(node, Const) \
                    or not (first or first_direct):
                continue
            # (a value read from a row array is computed where the array is filled)
            below = first_direct and not (at == self.out_index and self._in_row_array(node))
            if first_direct:
                reads[key] = []
                stack.append((node, at, 0, True, True))
            for (child, child_index, _), uses in zip(accesses(node, list(at)),
                                                     operand_uses(node)):
                if child_index is None:
                    continue
                if below:
                    reads[key].append((id(child), tuple(child_index)))
                if below or first:
                    stack.append((child, tuple(child_index), uses, below, False))
        # a value also read where a concatenation's part applies is computed
        # once for both (the part's expression reads the temporary)
        pending = [read for _, node, at in order for read in _conditional_parts(node, at)]
        seen: set[tuple] = set()
        while pending:
            node, at = pending.pop()
            key = (id(node), tuple(at))
            if key in counts:
                counts[key] += 1
            elif key not in seen:
                seen.add(key)
                pending += [(child, child_index) for child, child_index, _
                            in accesses(node, list(at)) if child_index is not None]
                pending += _conditional_parts(node, at)
        return order, reads, counts

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
            body = self._unshared_read(node, [*self.out_index[:-1], j], rows=True)
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
                                                  for a in range(node.arg.ndim)], rows=True)

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
        the end, as in NumPy: the index modulo the extent, which also keeps a
        changed index array, a jitted function's argument, from reading
        outside the array; the indices were checked when the gather was
        made)."""
        k, m = node.axis, node.indices.ndim
        extent = max(node.arg.shape[k], 1)
        position = f"(int64({self(node.indices, index[k:k + m])}) % {extent})"
        if not self._unshared:
            position = self._private("int64", position)
        return self._unshared_read(node.arg, index[:k] + [position] + index[k + m:])

    def _concat(self, node: Concat, index: list) -> str:
        """Each part read where the index along the axis falls into it (by
        bisection, so that the choices nest as deep as the logarithm of their
        number, where each source is one part)."""
        var = index[node.axis]
        extent = node.shape[node.axis]
        sources = []
        for read, read_index, shared, ranges in _concat_sources(node, index):
            text = self(read, read_index) if shared else self._unshared_read(read, read_index)
            sources.append((f"{node.dtype.name}({text})", ranges))
        if all(len(ranges) == 1 for _, ranges in sources):
            def choice(low: int, high: int) -> str:
                if high - low == 1:
                    return sources[low][0]
                middle = (low + high) // 2
                return (f"if({var} < {sources[middle][1][0][0]}, {choice(low, middle)}, "
                        f"{choice(middle, high)})")

            return choice(0, len(sources))
        # (joined views of one value, as after x[:, 3] = v: the value most of
        # the elements read is the last choice)
        last = max(range(len(sources)), key=lambda k: sum(b - a for a, b in sources[k][1]))
        expr = sources[last][0]
        for text, ranges in reversed([s for k, s in enumerate(sources) if k != last]):
            expr = f"if({_ranges_test(var, ranges, extent)}, {text}, {expr})"
        return expr


def _ranges_test(var, ranges: list[tuple[int, int]], extent: int) -> str:
    """A test that *var* (from 0 to *extent*) falls into one of *ranges*."""
    tests = []
    for low, high in ranges:
        bounds = ([f"{var} >= {low}"] if low > 0 else []) + (
            [f"{var} < {high}"] if high < extent else [])
        tests.append(" and ".join(bounds) or "True")
    return " or ".join(f"({t})" for t in tests) if len(tests) > 1 else tests[0]
