"""Flat kernels, generic over the number of elements: a stored elementwise
value whose operands all have its shape (or are scalars) is computed over
its elements in C order, ``out[k] = f(in0[k], in1[k], ...)``, and a
reduction of all the elements of such an expression (up to
:data:`FLAT_REDUCTION_LIMIT` of them) by one work-group, each work-item
reducing every ``group``-th element and the group combining their results;
the kernel takes the element count as an argument. A new length (a window,
a shorter series, another grid) reuses the kernel.

Public names: is_flat, flat_key, flat_size, build_flat_kernel, SIZE_ARGUMENT, FLAT_GROUP,
FLAT_REDUCTION_LIMIT.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pymbolic.primitives as prim
from numpy.lib.stride_tricks import as_strided

import kernelcore as lp
from kernelcore import INDEX_LIMIT, Reduction, make_loop_kernel
from lazyarray.graph import Input, Map, Node, Reduce, walk
from lazyarray.lower.expr import Expr
from lazyarray.lower.ir import assignment, domain
from lazyarray.lower.reduction import kernel_reduction
from lazyarray.mapper import is_kind
from lazyarray.plan.indexing import Ix
from lazyarray.plan.inputs import KernelInput
from lazyarray.plan.layouts import has_narrow_rows
from lazyarray.plan.structure import kernel_structure
from lazyarray.target import Target

#: the scalar argument holding the element count
SIZE_ARGUMENT = "sn"
#: work-items per group, per device kind (kernelcore's elementwise defaults)
FLAT_GROUP = {"gpu": 256, "cpu": 64}
#: the most elements a flat reduction reads (one work-group; larger
#: reductions get layouts of their size, spread over the device)
FLAT_REDUCTION_LIMIT = 1 << 16
#: the reductions a work-group combines (positions, as argmax's, are not)
_FLAT_REDUCTIONS = frozenset({"sum", "product", "max", "min", "any", "all"})
#: float32 functions with a vector version on CPUs (those kernels keep their layout)
_VECTOR_FUNCTIONS = ("sin", "cos")


def _region(node: Node, inputs: dict) -> list[Node]:
    """The nodes a kernel computing *node* evaluates, operands first."""
    return [n for n in walk(node, lambda n: n in inputs) if n not in inputs]


def is_flat(node: Node, inputs: dict[Node, KernelInput], target: Target) -> bool:
    """Whether *node*'s kernel (reading *inputs*) is elementwise over operands
    of its own shape and scalars, or a reduction of all the elements of such
    an expression, so that a flat kernel generic over the element count
    computes it as fast as one of its size: not where the device gets a
    layout of its own for the shape (GPU rows of 2 to 4 elements; CPU vector
    ``sin``/``cos`` of float32), nor for reductions of more than
    :data:`FLAT_REDUCTION_LIMIT` elements."""
    body = node
    if is_kind(node, "reduce"):
        body = node.arg
        # (complex products overflow to other infinities and NaNs in another
        # order of multiplication: complex reductions keep their layouts)
        if node.keepdims or len(node.axes) != body.ndim or node.dtype.kind == "c" \
                or node.op not in _FLAT_REDUCTIONS or np.prod(body.shape) > FLAT_REDUCTION_LIMIT:
            return False
        if body in inputs:
            return inputs[body][0].shape == body.shape and bool(body.shape)
        if not is_kind(body, "map"):
            return False
    if not is_kind(body, "map") or not body.shape \
            or not 0 < np.prod(body.shape) <= INDEX_LIMIT:
        return False
    if target.kind == "gpu" and body is node and has_narrow_rows(node.shape):
        return False
    for n in _region(body, inputs):
        if is_kind(n, "const"):
            continue
        if not is_kind(n, "map") or n.shape != body.shape:
            return False
        if target.kind == "cpu" and n.op in _VECTOR_FUNCTIONS and n.dtype == np.float32:  # type: ignore[attr-defined]
            return False
    return all(n.shape == (() if scalar else body.shape) for n, _, scalar in inputs.values())


def flat_key(node: Node, inputs: dict[Node, KernelInput]) -> tuple:
    """The structure of a flat kernel: its operations and dtypes, inputs and
    scalars by position, no shapes (every array has the element count)."""
    return ("flat", *kernel_structure(node, inputs, shapes=False))


def flat_size(node: Node) -> int:
    """The element count a flat kernel of *node* runs over (a reduction's:
    its operand's)."""
    return int(np.prod((node.arg if is_kind(node, "reduce") else node).shape))  # type: ignore[attr-defined]


def _stand_in(node: Node, length: int) -> Input:
    """An input of *node*'s dtype and *length* elements holding no memory
    (the lowering reads only shapes and dtypes of inputs)."""
    return Input(as_strided(np.zeros(1, node.dtype), (length,), (0,), writeable=False))


def build_flat_kernel(node: Node, inputs: dict[Node, KernelInput],
                      target: Target) -> lp.LoopKernel:
    """The flat kernel of *node* (see :func:`is_flat`): one work-item per
    element (a reduction: one work-group), the element count in
    :data:`SIZE_ARGUMENT`."""
    reduction = is_kind(node, "reduce")
    body = node.arg if reduction else node  # type: ignore[attr-defined]
    length = int(np.prod(body.shape))
    flat: dict[Node, Node] = {}
    flat_inputs: dict[Node, KernelInput] = {}
    for n, name, scalar in inputs.values():
        stand_in = n if scalar else _stand_in(n, length)
        flat[n], flat_inputs[stand_in] = stand_in, KernelInput(stand_in, name, scalar)
    for n in _region(body, inputs):
        m = cast(Map, n)    # (the region of a flat kernel: maps and constants)
        flat[n] = n if is_kind(n, "const") else Map(
            m.op, tuple(flat[a] for a in m.args), (length,), m.dtype, m.weak)
    root = flat[body]
    expr = Expr(flat_inputs)
    size = prim.Variable(SIZE_ARGUMENT)
    data = [lp.GlobalArg("out", node.dtype, shape=(1,) if reduction else (size,)),
            lp.ValueArg(SIZE_ARGUMENT, np.int64)]
    for n, name, scalar in sorted(inputs.values(), key=lambda read: read.name):
        data.append(lp.ValueArg(name, n.dtype) if scalar
                    else lp.GlobalArg(name, n.dtype, shape=(size,)))
    group = FLAT_GROUP[target.kind]
    if is_kind(node, "reduce"):
        knl = _reduction_kernel(node, root, expr, data, group)
    else:
        index = [Ix(prim.Variable("i0"), length)]
        expr.compute(root, index, set())
        rhs = expr(root, index)
        points = domain(["i0"], {"i0": 1}, {SIZE_ARGUMENT: 1, "i0": -1, 1: -1})
        out = prim.Subscript(prim.Variable("out"), (prim.Variable("i0"),))
        knl = make_loop_kernel([points], [*expr.cse_insns, assignment(out, rhs)], data,
                               name="lazyarray_kernel")
        knl = lp.split_iname(knl, "i0", group, outer_tag="g.0", inner_tag="l.0")
    knl = lp.set_options(knl, no_numpy=True)
    return knl.copy(target=lp.PyOpenCLTarget(fp_contract=False, math_f32=target.math_f32))


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
