"""Flat kernels, generic over the number of elements: a stored elementwise
value whose operands all have its shape (or are scalars) is computed over
its elements in C order, ``out[k] = f(in0[k], in1[k], ...)``, and a
reduction of all the elements of such an expression (up to
:data:`FLAT_REDUCTION_LIMIT` of them; argmax and argmin of real values too)
by one work-group, each work-item reducing every ``group``-th element and the
group combining their results;
the kernel takes the element count as an argument. A new length (a window,
a shorter series, another grid) reuses the kernel.

On a CPU the running sums and products of a one-dimensional such
expression (``cumsum``, ``cumprod``) are flat too: one work-item walks
them in order, as NumPy adds.

A one-dimensional such value may also read ranges of one-dimensional inputs
(``x[1:] - x[:-1]``, ``x[::2]``, ``x[::-1]``), pick elements of them by
index arrays (``x[idx]``, ``x[x > t]``) and compute positions (``arange``,
``linspace``): each range's start and each such input's length are
arguments too (a range's step is written in the code: a step of 1 reads
vectors), so a new length or offset of a stencil, or a new count of
picked elements, reuses the kernel.

A reduction of such an expression along its trailing axes (*rows*: the
leading axes kept) or its leading axes (*columns*: the trailing axes kept)
is a flat kernel too, up to :data:`AXIS_REDUCTION_LIMIT` elements (and
:data:`AXIS_REDUCED_LIMIT` per output) on a CPU:
the operand seen as a matrix (kept axes merged, reduced axes merged), one
work-item per output walking its row or column, the number of outputs and
the reduced length as arguments.

Public names: is_flat, flat_key, flat_sizes, is_single, flat_group, build_flat_kernel,
SIZE_ARGUMENT, REDUCED_ARGUMENT, SIZE_ARGUMENTS, FLAT_GROUP, FLAT_REDUCTION_LIMIT,
AXIS_REDUCTION_LIMIT, AXIS_REDUCED_LIMIT, FLAT_VIEWS, FLAT_RANGE_LIMIT, BOX_ROWS,
BOX_PREFIX, BOX_ARGUMENTS.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pymbolic.primitives as prim
from numpy.lib.stride_tricks import as_strided

import kernelcore as lp
from kernelcore import INDEX_LIMIT, Reduction, TypeCast, make_loop_kernel
from lazyarray.graph import Gather, Input, Map, Node, Reduce, Scan, walk
from lazyarray.lower.expr import Expr
from lazyarray.lower.ir import assignment, domain
from lazyarray.lower.reduction import kernel_reduction, reduction_of
from lazyarray.mapper import is_kind
from lazyarray.plan.indexing import Ix, index_expr
from lazyarray.plan.inputs import KernelInput
from lazyarray.plan.layouts import has_narrow_rows
from lazyarray.plan.structure import kernel_structure
from lazyarray.target import Target

#: the scalar argument holding the element count (of an axis reduction: its
#: number of outputs, one work-item each)
SIZE_ARGUMENT = "sn"
#: ... and an axis reduction's reduced length (its elements per output)
REDUCED_ARGUMENT = "sr"
#: the most input ranges a flat kernel reads (see :func:`flat_views`)
FLAT_VIEWS = 8
#: the most elements a flat kernel reading ranges or gathering computes: on
#: PoCL's CPU device a generic 1-D stencil ran 1.3-1.8x as long as one built
#: for its length (10^5 to 10^7 elements); up to 2^20 elements that is a few
#: tenths of a millisecond a run, less than a build (some 0.3 s) for a
#: thousand runs, beyond it the build pays for itself sooner
FLAT_RANGE_LIMIT = 1 << 20
#: the first letters of the arguments of a range's start (``so0``) and of
#: the length of an input read through ranges (``sl0``)
_START, _LENGTH = "so", "sl"
#: a box kernel's (:mod:`lazyarray.lower.boxes`) number of rows (the
#: elements of its value's leading axes), the first letters of its other
#: size arguments (extents, starts, the places where joined parts begin) and
#: the most of those it takes
BOX_ROWS, BOX_PREFIX, BOX_ARGUMENTS = "sw", "sb", 128
#: the scalar arguments holding sizes and positions (not values of the graph)
SIZE_ARGUMENTS = frozenset([SIZE_ARGUMENT, REDUCED_ARGUMENT, BOX_ROWS, *(
    f"{prefix}{k}" for prefix in (_START, _LENGTH) for k in range(FLAT_VIEWS)), *(
    f"{BOX_PREFIX}{k}" for k in range(BOX_ARGUMENTS))])
#: work-items per group, per device kind (kernelcore's elementwise defaults)
FLAT_GROUP = {"gpu": 256, "cpu": 64}
#: the most elements a flat reduction reads (one work-group; larger
#: reductions get layouts of their size, spread over the device)
FLAT_REDUCTION_LIMIT = 1 << 16
#: the most elements a flat axis reduction reads (larger ones get the
#: layouts of their shape: vectors of lanes, parts spread over the device)
AXIS_REDUCTION_LIMIT = 1 << 16
#: ... and the most elements per output (a work-item walks them in order:
#: longer rows or columns, as (1, 65536) ones, keep the layouts that split
#: them into lanes and parts, faster and rounding less)
AXIS_REDUCED_LIMIT = 1 << 12
#: the reductions a work-group combines (positions of all the elements too:
#: argmax and argmin of real values, see :func:`_arg_kernel`)
_FLAT_REDUCTIONS = frozenset({"sum", "product", "max", "min", "any", "all"})
_FLAT_ARG_REDUCTIONS = {"argmax": "max", "argmin": "min"}
#: float32 functions with a vector version on CPUs (those kernels keep their layout)
_VECTOR_FUNCTIONS = ("sin", "cos")


def _region(node: Node, inputs: dict) -> list[Node]:
    """The nodes a kernel computing *node* evaluates, operands first."""
    return [n for n in walk(node, lambda n: n in inputs) if n not in inputs]


def _range(node: Node, inputs: dict[Node, KernelInput]) -> tuple[Node, int, int] | None:
    """The input *node* reads and the start and step it reads it at, where
    *node* is a range of a one-dimensional input (``x[a:b:c]``, or a range
    of such a range); else None."""
    start, step = 0, 1
    while is_kind(node, "view") and node.ndim == 1 and node.arg.ndim == 1 \
            and node.axis_map[0][0] == "axis":  # type: ignore[attr-defined]
        [(_, _, first, stride)] = node.axis_map  # type: ignore[attr-defined]
        start, step = first + stride * start, stride * step
        node = node.arg  # type: ignore[attr-defined]
        read = inputs.get(node)
        if read is not None:
            return (node, start, step) if not read.scalar else None
    return None


def _flat_region(body: Node, inputs: dict[Node, KernelInput]) -> list[Node]:
    """:func:`_region` of *body*, ranges of inputs (see :func:`_range`)
    taken whole, as leaves, without the views gathers read through."""
    def leaf(n: Node) -> bool:
        return n in inputs or (n is not body and _range(n, inputs) is not None)
    region = [n for n in walk(body, leaf) if n not in inputs]
    # (a view of a whole input that a gather picks from is read through it)
    picked = {n.arg for n in region if _gathered(n, inputs) is not None}  # type: ignore[attr-defined]
    if picked:
        operands = {a for n in region if is_kind(n, "map") for a in n.args}  # type: ignore[attr-defined]
        region = [n for n in region if n not in picked or n in operands]
    return region


def _gathered(node: Node, inputs: dict[Node, KernelInput]) -> Node | None:
    """The one-dimensional input *node* picks elements of by a
    one-dimensional index array (``x[idx]``; the input itself or a view of
    all of it), or None."""
    if not is_kind(node, "gather") or node.ndim != 1:
        return None
    arg = node.arg  # type: ignore[attr-defined]
    read = inputs.get(arg)
    if read is not None:
        return arg if not read.scalar and arg.ndim == 1 else None
    found = _range(arg, inputs)
    return found[0] if found is not None and found[1:] == (0, 1) \
        and found[0].shape == arg.shape else None


def flat_views(node: Node, inputs: dict[Node, KernelInput]
               ) -> tuple[list[tuple[Node, int, int]], list[Node]]:
    """The ranges of inputs *node*'s flat kernel reads, in a fixed order,
    as (the view, its start, its step), and the inputs they and its gathers
    read (which have lengths of their own), each once."""
    body = node.arg if is_kind(node, "reduce") else node  # type: ignore[attr-defined]
    views, bases = [], []
    for n in _flat_region(body, inputs):
        found = _range(n, inputs) if is_kind(n, "view") else None
        if found is not None:
            views.append((n, found[1], found[2]))
            bases.append(found[0])
        elif is_kind(n, "gather"):
            bases.append(_gathered(n, inputs))  # type: ignore[arg-type]
    return views, list(dict.fromkeys(bases))


def _direction(node: Reduce) -> str | None:
    """How axis reduction *node* sees its operand as a matrix: ``"rows"``
    (it reduces the trailing axes), ``"columns"`` (the leading ones), or None
    (all of them, or others)."""
    axes, ndim = tuple(node.axes), node.arg.ndim
    if not 0 < len(axes) < ndim:
        return None
    if axes == tuple(range(ndim - len(axes), ndim)):
        return "rows"
    return "columns" if axes == tuple(range(len(axes))) else None


def is_flat(node: Node, inputs: dict[Node, KernelInput], target: Target) -> bool:
    """Whether *node*'s kernel (reading *inputs*) is elementwise over operands
    of its own shape and scalars, or a reduction of all the elements of such
    an expression, or (on a CPU) of its rows or columns (see
    :func:`_direction`), so that a flat kernel generic over the sizes
    computes it as fast as one of its size: not where the device gets a
    layout of its own for the shape (GPU rows of 2 to 4 elements; CPU vector
    ``sin``/``cos`` of float32), nor for reductions of more than
    :data:`FLAT_REDUCTION_LIMIT` (all elements) or
    :data:`AXIS_REDUCTION_LIMIT` (rows, columns: and more than
    :data:`AXIS_REDUCED_LIMIT` per output) elements."""
    body = node
    if is_kind(node, "scan"):
        # (a CPU's running sum or product of a 1-D flat expression, walked in
        # order by one work-item, as NumPy adds: a GPU's scans keep their
        # parallel layouts)
        body = node.arg  # type: ignore[attr-defined]
        if target.kind != "cpu" or node.ndim != 1 or node.dtype.kind == "c" \
                or node.shape[0] > FLAT_RANGE_LIMIT:
            return False
        if body in inputs:
            return inputs[body][0].shape == body.shape
    elif is_kind(node, "reduce"):
        body = node.arg
        # (complex products overflow to other infinities and NaNs in another
        # order of multiplication: complex reductions keep their layouts)
        if node.op in _FLAT_ARG_REDUCTIONS:
            if body.dtype.kind not in "iuf" or len(node.axes) != body.ndim:
                return False
        elif node.dtype.kind == "c" or node.op not in _FLAT_REDUCTIONS:
            return False
        if len(node.axes) == body.ndim:
            if np.prod(body.shape) > FLAT_REDUCTION_LIMIT:
                return False
        elif target.kind != "cpu" or _direction(node) is None \
                or np.prod(body.shape) > AXIS_REDUCTION_LIMIT \
                or np.prod([body.shape[a] for a in node.axes]) > AXIS_REDUCED_LIMIT:
            return False
        if body in inputs:
            return inputs[body][0].shape == body.shape and bool(body.shape)
        if not is_kind(body, "map", "gather"):
            return False
    if not (is_kind(body, "map") or _gathered(body, inputs) is not None) or not body.shape \
            or not 0 < np.prod(body.shape) <= INDEX_LIMIT:
        return False
    if target.kind == "gpu" and body is node and has_narrow_rows(node.shape):
        return False
    views = 0
    direct: set[Node] = {body}
    for n in (_flat_region if body.ndim == 1 else _region)(body, inputs):
        if is_kind(n, "const"):
            continue
        if body.ndim == 1 and n.shape == body.shape and _range(n, inputs) is not None:
            views += 1
            continue
        if body.ndim == 1 and is_kind(n, "iota") and n.shape == body.shape:
            continue                    # (arange, linspace: the element's position)
        if body.ndim == 1 and _gathered(n, inputs) is not None:
            views += 1
            direct.add(n.indices)  # type: ignore[attr-defined]
            continue
        if not is_kind(n, "map") or n.shape != body.shape:
            return False
        if target.kind == "cpu" and n.op in _VECTOR_FUNCTIONS and n.dtype == np.float32:  # type: ignore[attr-defined]
            return False
        direct.update(n.args)  # type: ignore[attr-defined]
    # (an input read through ranges only has a length of its own: within
    # 32-bit positions too, as the body)
    if views and (np.prod(body.shape) > FLAT_RANGE_LIMIT or any(
            np.prod(n.shape) > INDEX_LIMIT for n, _, scalar in inputs.values() if not scalar)):
        return False
    return views <= FLAT_VIEWS and all(
        n.shape == (() if scalar else body.shape) for n, _, scalar in inputs.values()
        if scalar or n in direct)


def is_single(node: Node) -> bool:
    """Whether *node*'s flat kernel is one work-group (a reduction of all
    the elements, a scan), not one work-item per element or output."""
    return is_kind(node, "scan") or (
        is_kind(node, "reduce") and len(node.axes) == node.arg.ndim)  # type: ignore[attr-defined]


def flat_group(node: Node, target: Target) -> int:
    """The work-group size of *node*'s flat kernel: one work-item for a scan."""
    return 1 if is_kind(node, "scan") else FLAT_GROUP[target.kind]


def flat_key(node: Node, inputs: dict[Node, KernelInput]) -> tuple:
    """The structure of a flat kernel: its operations and dtypes, inputs and
    scalars by position, no shapes (every array has the element count; an
    axis reduction's operand is a matrix of rows or columns)."""
    if is_kind(node, "reduce") and not is_single(node):
        return ("flat", _direction(node), *kernel_structure(node, inputs, shapes=False))
    steps = tuple(step for _, _, step in flat_views(node, inputs)[0])
    return ("flat", *kernel_structure(node, inputs, shapes=False, positions=False), steps)


def flat_sizes(node: Node, inputs: dict[Node, KernelInput]) -> tuple[tuple[str, int], ...]:
    """The size arguments of *node*'s flat kernel by name: the element count
    it runs over (a full reduction's: its operand's), an axis reduction's
    number of outputs and reduced length; the start of each range it reads
    and the length of each input those read (see :func:`flat_views`)."""
    if not is_kind(node, "reduce"):
        sizes = ((SIZE_ARGUMENT, int(np.prod(node.shape))),)
    elif is_single(node):
        sizes = ((SIZE_ARGUMENT, int(np.prod(node.arg.shape))),)  # type: ignore[attr-defined]
    else:
        shape = node.arg.shape  # type: ignore[attr-defined]
        reduced = int(np.prod([shape[a] for a in node.axes]))  # type: ignore[attr-defined]
        return ((SIZE_ARGUMENT, int(np.prod(shape)) // reduced), (REDUCED_ARGUMENT, reduced))
    views, bases = flat_views(node, inputs)
    if not bases:
        return sizes
    starts = ((f"{_START}{k}", int(start)) for k, (_, start, _) in enumerate(views))
    return (*sizes, *starts, *((f"{_LENGTH}{k}", base.shape[0]) for k, base in enumerate(bases)))


class _FlatReads(Expr):
    """:class:`Expr` reading the stand-ins of ranges of inputs (*ranges*:
    stand-in -> (the input's argument name, start, step)) at ``start +
    step*i``, and gathers from inputs (*gathers*: gather -> (the input's
    argument name, its length)) at the index modulo the length."""

    def __init__(self, inputs: dict[Node, KernelInput],
                 ranges: dict[Node, tuple[str, prim.Expression, int]],
                 gathers: dict[Node, tuple[str, prim.Expression]]):
        super().__init__(inputs)
        self.ranges = ranges
        self.gathers = gathers

    def __call__(self, node: Node, index: list) -> prim.Expression:
        read = self.ranges.get(node)
        if read is not None:
            name, start, step = read
            i = index_expr(index[0])
            position = prim.Sum((start, i if step == 1 else prim.Product((step, i))))
            return prim.Subscript(prim.Variable(name), (position,))
        picked = self.gathers.get(node)
        if picked is not None:
            # (negative indices count from the end: checked to lie in [-n, n))
            name, length = picked
            at = TypeCast(np.dtype(np.int64), self(node.indices, index))  # type: ignore[attr-defined]
            return prim.Subscript(prim.Variable(name), (prim.Remainder(at, length),))
        return super().__call__(node, index)


def _stand_in(node: Node, length: int) -> Input:
    """An input of *node*'s dtype and *length* elements holding no memory
    (the lowering reads only shapes and dtypes of inputs)."""
    return Input(as_strided(np.zeros(1, node.dtype), (length,), (0,), writeable=False))


def build_flat_kernel(node: Node, inputs: dict[Node, KernelInput],
                      target: Target) -> lp.LoopKernel:
    """The flat kernel of *node* (see :func:`is_flat`): one work-item per
    element (a reduction: one work-group), the element count in
    :data:`SIZE_ARGUMENT`."""
    scan = is_kind(node, "scan")
    reduction = is_single(node) and not scan
    axis = is_kind(node, "reduce") and not reduction
    body = node.arg if is_kind(node, "reduce", "scan") else node  # type: ignore[attr-defined]
    length = int(np.prod(body.shape))
    flat: dict[Node, Node] = {}
    flat_inputs: dict[Node, KernelInput] = {}
    for n, name, scalar in inputs.values():
        stand_in = n if scalar else _stand_in(n, length)
        flat[n], flat_inputs[stand_in] = stand_in, KernelInput(stand_in, name, scalar)
    views, bases = flat_views(node, inputs)
    ranges: dict[Node, tuple[str, prim.Expression, int]] = {}
    for k, (view, _, step) in enumerate(views):
        flat[view] = stand_in = _stand_in(view, length)
        name = inputs[_range(view, inputs)[0]].name  # type: ignore[index]
        flat_inputs[stand_in] = KernelInput(stand_in, name, False)
        ranges[stand_in] = (name, prim.Variable(f"{_START}{k}"), step)
    gathers: dict[Node, tuple[str, prim.Expression]] = {}
    for n in (_flat_region if body.ndim == 1 else _region)(body, inputs):
        if n in flat or is_kind(n, "iota"):
            # (a range's stand-in; a one-dimensional body's positions, which
            # have its length already)
            flat.setdefault(n, n)
            continue
        if is_kind(n, "gather"):
            g, base = cast(Gather, n), cast(Node, _gathered(n, inputs))
            flat[n] = picked = Gather(flat[base], flat[g.indices], 0)
            gathers[picked] = (inputs[base].name,
                               prim.Variable(f"{_LENGTH}{bases.index(base)}"))
            continue
        m = cast(Map, n)    # (the rest of a flat kernel: maps and constants)
        flat[n] = n if is_kind(n, "const") else Map(
            m.op, tuple(flat[a] for a in m.args), (length,), m.dtype, m.weak)
    root = flat[body]
    expr = _FlatReads(flat_inputs, ranges, gathers) if bases else Expr(flat_inputs)
    size = prim.Variable(SIZE_ARGUMENT)
    data = [lp.GlobalArg("out", node.dtype, shape=(1,) if reduction else (size,)),
            lp.ValueArg(SIZE_ARGUMENT, np.int64)]
    if axis:
        data.append(lp.ValueArg(REDUCED_ARGUMENT, np.int64))
    data += [lp.ValueArg(f"{_START}{k}", np.int64) for k in range(len(views))]
    data += [lp.ValueArg(f"{_LENGTH}{k}", np.int64) for k in range(len(bases))]
    elements = prim.Product((size, prim.Variable(REDUCED_ARGUMENT))) if axis else size
    for n, name, scalar in sorted(inputs.values(), key=lambda read: read.name):
        shape = (prim.Variable(f"{_LENGTH}{bases.index(n)}"),) if n in bases else (elements,)
        data.append(lp.ValueArg(name, n.dtype) if scalar
                    else lp.GlobalArg(name, n.dtype, shape=shape))
    group = flat_group(node, target)
    if axis:
        knl = _axis_kernel(cast(Reduce, node), root, expr, data, group)
    elif scan:
        knl = _scan_kernel(cast(Scan, node), root, expr, data)
    elif reduction and node.op in _FLAT_ARG_REDUCTIONS:  # type: ignore[attr-defined]
        knl = _arg_kernel(cast(Reduce, node), root, expr, data, group)
    elif reduction:
        knl = _reduction_kernel(cast(Reduce, node), root, expr, data, group)
    else:
        index = [Ix(prim.Variable("i0"), length)]
        expr.compute(root, index, set())
        rhs = expr(root, index)
        points = domain(["i0"], {"i0": 1}, {SIZE_ARGUMENT: 1, "i0": -1, 1: -1})
        out = prim.Subscript(prim.Variable("out"), (prim.Variable("i0"),))
        knl = make_loop_kernel([points], [*expr.cse_insns, assignment(out, rhs)], data,
                               name="lazyarray_kernel")
        knl = lp.split_iname(knl, "i0", group, outer_tag="g.0", inner_tag="l.0")
    # (reads of ranges and gathers are in bounds by construction: the view's
    # range and the indices were checked when they were made; with symbolic
    # starts and lengths that cannot be proven here)
    knl = lp.set_options(knl, no_numpy=True, **(
        {"enforce_array_accesses_within_bounds": "no_check"} if bases else {}))
    return knl.copy(target=lp.PyOpenCLTarget(fp_contract=False, math_f32=target.math_f32,
                                          math_f64=target.math_f64))


def _reduction_kernel(node: Reduce, body: Node, expr: Expr, data: list, group: int
                      ) -> lp.LoopKernel:
    """A work-group of *group* work-items reducing *body* (flat, the element
    count in :data:`SIZE_ARGUMENT`) into ``out[0]``: work-item ``l`` reduces
    elements ``l, l + group, ...`` into ``part[l]``, then the group reduces
    ``part``."""
    v = prim.Variable
    op = kernel_reduction(node)
    element = prim.Sum((v("l"), prim.Product((group, v("j")))))
    # (every work-item holds a part: those past the element count reduce
    # nothing, and hold the reduction's neutral value)
    items = domain(["l"], {"l": 1}, {"l": -1, 1: group - 1})
    strided = domain(["j"], {"j": 1}, {SIZE_ARGUMENT: 1, "l": -1, "j": -group, 1: -1})
    parts = domain(["m"], {"m": 1}, {"m": -1, 1: group - 1})
    part = lp.TemporaryVariable("part", node.dtype, shape=(group,),
                                address_space=lp.AddressSpace.LOCAL)
    instructions = [
        *expr.cse_insns,
        assignment(prim.Subscript(v("part"), (v("l"),)),
                   Reduction(op, ("j",), expr(body, [element])), id="parts"),
        assignment(prim.Subscript(v("out"), (0,)),
                   Reduction(op, ("m",), prim.Subscript(v("part"), (v("m"),))),
                   depends_on=("parts",))]
    knl = make_loop_kernel([items, strided, parts], instructions, data + [part],
                           name="lazyarray_kernel")
    return lp.tag_inames(knl, {"l": "l.0", "m": "l.0"})


def _scan_kernel(node: Scan, body: Node, expr: Expr, data: list) -> lp.LoopKernel:
    """One work-item writing the running sums (products) of *body* (flat, the
    element count in :data:`SIZE_ARGUMENT`) in order."""
    v = prim.Variable
    points = domain(["i0"], {"i0": 1}, {SIZE_ARGUMENT: 1, "i0": -1, 1: -1})
    running = domain(["s"], {"s": 1}, {"i0": 1, "s": -1})
    out = prim.Subscript(v("out"), (v("i0"),))
    rhs = Reduction(node.op, ("s",), expr(body, [v("s")]))
    return make_loop_kernel([points, running], [*expr.cse_insns, assignment(out, rhs)], data,
                            name="lazyarray_kernel")


def _arg_kernel(node: Reduce, body: Node, expr: Expr, data: list, group: int
                ) -> lp.LoopKernel:
    """A work-group of *group* work-items finding the first position of the
    largest (argmax) or smallest (argmin) element of *body* (flat, the
    element count in :data:`SIZE_ARGUMENT`; NaN beats any number, the first
    NaN wins, as in NumPy): work-item ``l`` finds the best value of elements
    ``l, l + group, ...`` and its first position among them, the group the
    best value of all, then the least position of the work-items holding it."""
    v = prim.Variable
    value_op = reduction_of(_FLAT_ARG_REDUCTIONS[node.op], body.dtype)
    element = prim.Sum((v("l"), prim.Product((group, v("j")))))
    items = domain(["l"], {"l": 1}, {"l": -1, 1: group - 1})
    strided = domain(["j"], {"j": 1}, {SIZE_ARGUMENT: 1, "l": -1, "j": -group, 1: -1})
    parts = [domain([m], {m: 1}, {m: -1, 1: group - 1}) for m in ("m", "k")]
    temporaries = [
        lp.TemporaryVariable("part", body.dtype, shape=(group,),
                             address_space=lp.AddressSpace.LOCAL),
        lp.TemporaryVariable("place", np.int64, shape=(group,),
                             address_space=lp.AddressSpace.LOCAL),
        lp.TemporaryVariable("best", body.dtype, shape=(),
                             address_space=lp.AddressSpace.PRIVATE)]
    value = expr(body, [element])
    part, place, best = (prim.Subscript(v("part"), (v("k"),)),
                         prim.Subscript(v("place"), (v("k"),)), v("best"))
    holds: prim.Expression = prim.Comparison(part, "==", best)
    if body.dtype.kind == "f":
        isnan = v("isnan")
        holds = prim.LogicalOr((holds, prim.LogicalAnd((prim.Call(isnan, (part,)),
                                                        prim.Call(isnan, (best,))))))
    # (work-items past the element count hold no position)
    holds = prim.LogicalAnd((prim.Comparison(v("k"), "<", v(SIZE_ARGUMENT)), holds))
    instructions = [
        *expr.cse_insns,
        assignment(prim.Subscript(v("part"), (v("l"),)),
                   Reduction(value_op, ("j",), value), id="parts"),
        assignment(prim.Subscript(v("place"), (v("l"),)),
                   Reduction(node.op, ("j",), (value, element)), id="places"),
        assignment(best, Reduction(value_op, ("m",), prim.Subscript(v("part"), (v("m"),))),
                   id="best", depends_on=("parts",)),
        assignment(prim.Subscript(v("out"), (0,)),
                   Reduction("min", ("k",), prim.If(holds, place, v(SIZE_ARGUMENT))),
                   depends_on=("best", "places"))]
    knl = make_loop_kernel([items, strided, *parts], instructions, data + temporaries,
                           name="lazyarray_kernel")
    return lp.tag_inames(knl, {"l": "l.0", "m": "l.0", "k": "l.0"})


def _axis_kernel(node: Reduce, body: Node, expr: Expr, data: list, group: int
                 ) -> lp.LoopKernel:
    """One work-item per output of axis reduction *node* (work-groups of
    *group*), reducing *body* (flat: :data:`SIZE_ARGUMENT` outputs times
    :data:`REDUCED_ARGUMENT` elements) along its row (``i*sr + j``) or its
    column (``j*sn + i``)."""
    v = prim.Variable
    i, j = v("i0"), v("j")
    element = prim.Sum((prim.Product((i, v(REDUCED_ARGUMENT))), j)) \
        if _direction(node) == "rows" else prim.Sum((prim.Product((j, v(SIZE_ARGUMENT))), i))
    outputs = domain(["i0"], {"i0": 1}, {SIZE_ARGUMENT: 1, "i0": -1, 1: -1})
    walk = domain(["j"], {"j": 1}, {REDUCED_ARGUMENT: 1, "j": -1, 1: -1})
    instructions = [*expr.cse_insns, assignment(
        prim.Subscript(v("out"), (i,)),
        Reduction(kernel_reduction(node), ("j",), expr(body, [element])))]
    knl = make_loop_kernel([outputs, walk], instructions, data, name="lazyarray_kernel")
    return lp.split_iname(knl, "i0", group, outer_tag="g.0", inner_tag="l.0")
