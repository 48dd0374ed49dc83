"""Flat elementwise kernels, generic over the number of elements: a stored
elementwise value whose operands all have its shape (or are scalars) is
computed over its elements in C order, ``out[k] = f(in0[k], in1[k], ...)``,
by a kernel that takes the element count as an argument. A new length (a
window, a shorter series, another grid) reuses the kernel.

Public names: is_flat, flat_key, build_flat_kernel, SIZE_ARGUMENT, FLAT_GROUP.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim
from numpy.lib.stride_tricks import as_strided

import kernelcore as lp
from kernelcore.creation import make_loop_kernel
from kernelcore.index_width import INDEX_LIMIT
from lazyarray.graph import Const, Input, Map, Node, walk
from lazyarray.lower.expr import Expr
from lazyarray.lower.ir import assignment, domain
from lazyarray.mapper import is_kind
from lazyarray.plan.indexing import Ix
from lazyarray.plan.layouts import has_narrow_rows
from lazyarray.plan.structure import structure_fields
from lazyarray.target import Target

#: the scalar argument holding the element count
SIZE_ARGUMENT = "sn"
#: work-items per group, per device kind (kernelcore's elementwise defaults)
FLAT_GROUP = {"gpu": 256, "cpu": 64}
#: float32 functions with a vector version on CPUs (those kernels keep their layout)
_VECTOR_FUNCTIONS = ("sin", "cos")


def _region(node: Node, inputs: dict) -> list[Node]:
    """The nodes a kernel computing *node* evaluates, operands first."""
    return [n for n in walk(node, lambda n: id(n) in inputs) if id(n) not in inputs]


def is_flat(node: Node, inputs: dict[int, tuple[Node, str]], target: Target) -> bool:
    """Whether *node*'s kernel (reading *inputs*) is elementwise over operands
    of its own shape and scalars, so that a flat kernel generic over the
    element count computes it as fast as one of its size: not where the
    device gets a layout of its own for the shape (GPU rows of 2 to 4
    elements; CPU vector ``sin``/``cos`` of float32)."""
    if not is_kind(node, "map") or not node.shape or not 0 < np.prod(node.shape) <= INDEX_LIMIT:
        return False
    if target.kind == "gpu" and has_narrow_rows(node.shape):
        return False
    for n in _region(node, inputs):
        if is_kind(n, "const"):
            continue
        if not is_kind(n, "map") or n.shape != node.shape:
            return False
        if target.kind == "cpu" and n.op in _VECTOR_FUNCTIONS and n.dtype == np.float32:
            return False
    return all(n.shape == (node.shape if not name.startswith("s") else ())
               for n, name in inputs.values())


def flat_key(node: Node, inputs: dict[int, tuple[Node, str]]) -> tuple:
    """The structure of a flat kernel: its operations and dtypes, inputs and
    scalars by position, no shapes (every array has the element count)."""
    position = {nid: k for k, nid in enumerate(inputs)}
    number: dict[int, int] = {}
    entries: list[tuple] = [("flat",)]
    for n in walk(node, lambda n: id(n) in position):
        if id(n) in position:
            entry: tuple = ("in", inputs[id(n)][1][0], position[id(n)], n.dtype.str)
        elif is_kind(n, "const"):
            entry = n._key
        else:
            entry = (n.mapper_method, n.dtype.str, structure_fields(n),
                     tuple(number[id(c)] for c in n.children()))
        number[id(n)] = len(entries)
        entries.append(entry)
    return tuple(entries)


def _stand_in(node: Node, length: int) -> Input:
    """An input of *node*'s dtype and *length* elements holding no memory
    (the lowering reads only shapes and dtypes of inputs)."""
    return Input(as_strided(np.zeros(1, node.dtype), (length,), (0,), writeable=False))


def build_flat_kernel(node: Node, inputs: dict[int, tuple[Node, str]],
                      target: Target) -> lp.LoopKernel:
    """The flat kernel of *node* (see :func:`is_flat`): one work-item per
    element, the element count in :data:`SIZE_ARGUMENT`."""
    length = int(np.prod(node.shape))
    flat: dict[int, Node] = {}
    flat_inputs: dict[int, tuple[Node, str]] = {}
    for n, name in inputs.values():
        stand_in = n if name.startswith("s") else _stand_in(n, length)
        flat[id(n)], flat_inputs[id(stand_in)] = stand_in, (stand_in, name)
    for n in _region(node, inputs):
        flat[id(n)] = n if isinstance(n, Const) else Map(
            n.op, tuple(flat[id(a)] for a in n.args), (length,), n.dtype, n.weak)
    root = flat[id(node)]
    expr = Expr(flat_inputs)
    index = [Ix(prim.Variable("i0"), length)]
    expr.compute(root, index, set())
    rhs = expr(root, index)
    size = prim.Variable(SIZE_ARGUMENT)
    data = [lp.GlobalArg("out", node.dtype, shape=(size,)),
            lp.ValueArg(SIZE_ARGUMENT, np.int64)]
    for n, name in sorted(inputs.values(), key=lambda pair: pair[1]):
        data.append(lp.ValueArg(name, n.dtype) if name.startswith("s")
                    else lp.GlobalArg(name, n.dtype, shape=(size,)))
    points = domain(["i0"], {"i0": 1}, {SIZE_ARGUMENT: 1, "i0": -1, 1: -1})
    instructions = [*expr.cse_insns,
                    assignment(prim.Subscript(prim.Variable("out"), (prim.Variable("i0"),)), rhs)]
    knl = make_loop_kernel([points], instructions, data, name="lazyarray_kernel")
    knl = lp.set_options(knl, no_numpy=True)
    knl = lp.split_iname(knl, "i0", FLAT_GROUP[target.kind], outer_tag="g.0", inner_tag="l.0")
    return knl.copy(target=lp.PyOpenCLTarget(fp_contract=False, math_f32=target.math_f32))
