"""Contractions: einsum and the products built on it (matmul, dot, tensordot,
inner, outer, vdot). Each is a broadcast elementwise product summed over the
contracted axes, which the lowering fuses into one kernel.

Public names: einsum, matmul, tensordot, dot, inner, outer, vdot, vecdot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarray.errors import ShapeError
from lazyarray.graph import Map, Node, View
from lazyarray.mapper import is_kind
from lazyarray.ops.elementwise import broadcast_shapes, cast, elementwise
from lazyarray.ops.reductions import reduce
from lazyarray.ops.shape import getitem, reshape
from lazyarray.precision import get_matmul_precision


def _product_operands(*nodes: Node) -> tuple[Node, ...]:
    """*nodes*, the operands of a sum of products, each rounded to TF32 where
    the user allows TF32 products and every operand is float32 (see
    :mod:`lazyarray.precision`)."""
    if get_matmul_precision() != "tf32" or any(n.dtype != np.float32 for n in nodes):
        return nodes
    return tuple(Map("_round_tf32", (n,), n.shape, n.dtype) for n in nodes)


def _base(node: Node) -> Node:
    """The node *node* re-indexes (through views and reshapes), or itself."""
    while is_kind(node, "view", "reshape"):
        node = node.arg
    return node


def _second_reading(a: Node, b: Node) -> Node:
    """*b*, a product's second operand, as a value of its own (stored: see
    lazyarray.plan.storage) where it reads the array *a* reads (X.T @ X), so
    that the product is a blocked contraction of two arrays, not a generic
    reduction."""
    if _base(a) is _base(b) and not is_kind(_base(a), "const"):
        return Map("_stored", (b,), b.shape, b.dtype)
    return b


def _transposed(node: Node) -> bool:
    """Whether *node* is a view reading its argument's last axis along
    another of its own axes (a transpose)."""
    if not is_kind(node, "view") or node.ndim < 2:
        return False
    last = node.axis_map[-1]
    return last[0] == "axis" and last[1] != node.ndim - 1


def _expand_ellipsis(spec: str, ndims: list[int]) -> tuple[str, str]:
    """*spec* with each ``...`` replaced by letters of its own (aligned from
    the right, as NumPy broadcasts) and the output spelled out (NumPy's
    implicit output: the ellipsis, then the labels used once, sorted), and
    the ellipsis letters."""
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ShapeError(f"einsum: the subscripts name {len(terms)} operand(s) but "
                         f"{len(ndims)} were given")
    for t in terms + [output]:
        if t.replace("...", "", 1).count(".") or t.count("...") > 1:
            raise ShapeError(f"einsum: invalid subscript '{t}' (one '...' at most)")
    widths = []
    for k, (t, nd) in enumerate(zip(terms, ndims)):
        width = nd - (len(t) - 3) if "..." in t else 0
        if width < 0:
            raise ShapeError(f"einsum: operand {k} has {nd} dimension(s) but "
                             f"subscript '{t}' names more")
        widths.append(width)
    used = set(spec)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    ellipsis = "".join(free[:max(widths, default=0)])
    terms = [t.replace("...", ellipsis[len(ellipsis) - w:]) for t, w in zip(terms, widths)]
    if arrow:
        if ellipsis and "..." not in output:
            raise ShapeError("einsum: the operands' '...' dimensions must appear in the "
                             "output (write '...' there), as in NumPy")
        output = output.replace("...", ellipsis)
    else:
        counts: dict[str, int] = {}
        for c in "".join(terms):
            counts[c] = counts.get(c, 0) + 1
        output = ellipsis + "".join(sorted(c for c, n in counts.items()
                                           if n == 1 and c not in ellipsis))
    return ",".join(terms) + "->" + output, ellipsis


def _check(spec: str) -> tuple[list[str], str]:
    """The operand terms and the output of an expanded *spec* (``a,b->c``)."""
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    for t in terms + [output]:
        if not all(c.isalpha() for c in t):
            raise ShapeError(f"einsum: invalid subscript '{t}' (letters only)")
    if len(set(output)) != len(output):
        raise ShapeError(f"einsum: output subscript '{output}' repeats a label")
    unknown = set(output) - set(inputs)
    if unknown:
        raise ShapeError(f"einsum: output label(s) {', '.join(sorted(unknown))} do not "
                         "appear in the inputs")
    return terms, output


def einsum(spec: str, *nodes: Node) -> Node:
    """NumPy's einsum (``...`` broadcasts as in NumPy)."""
    spec, ellipsis = _expand_ellipsis(spec.replace(" ", ""), [n.ndim for n in nodes])
    terms, output = _check(spec)
    sizes: dict[str, int] = {}
    for k, (term, node) in enumerate(zip(terms, nodes)):
        if len(term) != node.ndim:
            raise ShapeError(f"einsum: operand {k} has {node.ndim} dimension(s) but "
                             f"subscript '{term}' names {len(term)}")
        for label, extent in zip(term, node.shape):
            known = sizes.setdefault(label, extent)
            if known != extent:
                if 1 not in (known, extent):
                    raise ShapeError(f"einsum: label '{label}' has sizes {known} and "
                                     f"{extent}")
                sizes[label] = max(known, extent)      # size 1 broadcasts, as in NumPy
    contracted = [c for c in dict.fromkeys("".join(terms)) if c not in output]
    labels = list(output) + contracted
    if contracted:
        nodes = _product_operands(*nodes)
        if len(nodes) == 2 and nodes[0].ndim >= 2:
            nodes = (nodes[0], _second_reading(*nodes))
    dtype = np.result_type(*(n.dtype for n in nodes))
    product: Node | None = None
    for term, node in zip(terms, nodes):
        axis_map = [("const", 0) if extent != sizes[c] else ("axis", labels.index(c), 0, 1)
                    for c, extent in zip(term, node.shape)]
        shape = [sizes[c] if c in term else 1 for c in labels]
        view = View(node, axis_map, shape)
        product = view if product is None else elementwise("multiply", product, view)
    assert product is not None
    if product.dtype != dtype:
        product = cast(product, dtype)
    if not contracted:
        return product
    return reduce("sum", product, tuple(range(len(output), len(labels))), dtype=dtype)


def matmul(a: Node, b: Node) -> Node:
    """NumPy's matmul: batched over leading axes, 1-D operands promoted."""
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: input operand does not have enough dimensions "
                         "(scalars are not allowed; use *)")
    dtype = np.result_type(a.dtype, b.dtype)
    inner = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != inner:
        raise ShapeError(f"matmul: input operand 1 has a mismatch in its core dimension "
                         f"0 (size {inner} is different from {a.shape[-1]}); "
                         f"shapes {a.shape} and {b.shape}")
    if a.ndim == 1 or b.ndim == 1:
        # (a vector's products summed along the rows it is read by: einsum's
        # row reductions, split over the device as a dot product is)
        spec = ("i,i->" if a.ndim == b.ndim else "i,...ij->...j" if a.ndim == 1
                else "...ij,j->...i")
        return einsum(spec, a, b)
    a, b = _product_operands(a, b)
    b = _second_reading(a, b)
    if _transposed(b):              # (not where b became a value of its own)
        # (A @ U.T: CPUs read B's rows as vectors, so B is stored in the
        # order the product reads it; GPUs stage it transposed themselves)
        b = Map("_packed", (b,), b.shape, b.dtype)
    left = getitem(a, (Ellipsis, slice(None), slice(None), None))
    right = getitem(b, (Ellipsis, None, slice(None), slice(None)))
    return reduce("sum", elementwise("multiply", left, right), -2, dtype=dtype)


def tensordot(a: Node, b: Node, axes: Any = 2) -> Node:
    """Sum of products over *axes* of *a* and *b* (NumPy's tensordot)."""
    if isinstance(axes, (int, np.integer)):
        axes_a = list(range(a.ndim - int(axes), a.ndim))
        axes_b = list(range(int(axes)))
    else:
        axes_a, axes_b = ([x] if isinstance(x, (int, np.integer)) else list(x)  # type: ignore[assignment]
                          for x in axes)
    if len(axes_a) != len(axes_b):
        raise ShapeError("tensordot: the two axis lists differ in length")
    axes_a = [np.lib.array_utils.normalize_axis_index(int(x), a.ndim) for x in axes_a]
    axes_b = [np.lib.array_utils.normalize_axis_index(int(y), b.ndim) for y in axes_b]
    if any(a.shape[int(x)] != b.shape[int(y)] for x, y in zip(axes_a, axes_b)):
        # (no broadcasting of contracted axes, as in NumPy)
        raise ShapeError("shape-mismatch for sum")
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la_ = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for x, y in zip(axes_a, axes_b):
        lb[int(y) % b.ndim] = la_[int(x) % a.ndim]
    out = [c for c in la_ if c not in lb] + [c for c in lb if c not in la_]
    return einsum(f"{''.join(la_)},{''.join(lb)}->{''.join(out)}", a, b)


def dot(a: Node, b: Node) -> Node:
    """NumPy's dot."""
    if a.ndim == 0 or b.ndim == 0:
        return elementwise("multiply", a, b)
    return tensordot(a, b, _aligned(a, b, a.ndim - 1, max(b.ndim - 2, 0)))


def inner(a: Node, b: Node) -> Node:
    """Sum of products over the last axes (NumPy's inner)."""
    if a.ndim == 0 or b.ndim == 0:
        return elementwise("multiply", a, b)
    return tensordot(a, b, _aligned(a, b, a.ndim - 1, b.ndim - 1))


def _aligned(a: Node, b: Node, x: int, y: int) -> tuple[list[int], list[int]]:
    """The axes *x* of *a* and *y* of *b* that a product contracts, which
    must have one length (NumPy's message where they do not)."""
    if a.shape[x] != b.shape[y]:
        raise ShapeError(f"shapes {_shape_text(a.shape)} and {_shape_text(b.shape)} not "
                         f"aligned: {a.shape[x]} (dim {x}) != {b.shape[y]} (dim {y})")
    return [x], [y]


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def outer(a: Node, b: Node) -> Node:
    """All products of the flattened operands."""
    return elementwise("multiply", getitem(reshape(a, -1), (slice(None), None)),
                       getitem(reshape(b, -1), (None, slice(None))))


def vdot(a: Node, b: Node) -> Node:
    """Dot product of the flattened operands, the first conjugated."""
    fa, fb = reshape(a, -1), reshape(b, -1)
    if fa.shape != fb.shape:
        raise ShapeError(f"vdot: vectors of sizes {fa.shape[0]} and {fb.shape[0]}")
    if fa.dtype.kind == "c":
        fa = elementwise("conjugate", fa)
    return einsum("i,i->", fa, fb)


def vecdot(a: Node, b: Node, axis: int = -1) -> Node:
    """Sums over *axis* of ``conj(a) * b``, broadcast over the other axes
    (NumPy's vecdot; the contracted axis must have one length in both)."""
    ndim = max(a.ndim, b.ndim)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"vecdot: axis {axis} is out of bounds for the operands of "
                         f"shapes {a.shape} and {b.shape}")
    back = axis % ndim - ndim              # the same axis counted from the end
    if -back > a.ndim or -back > b.ndim or a.shape[back] != b.shape[back]:
        raise ShapeError(f"vecdot: the contracted axis {axis} differs in length: shapes "
                         f"{a.shape} and {b.shape}")
    broadcast_shapes(a.shape, b.shape)
    dtype = np.result_type(a.dtype, b.dtype)
    if a.dtype.kind == "c":
        a = elementwise("conjugate", a)
    a, b = _product_operands(a, b)
    return reduce("sum", elementwise("multiply", a, b), back % ndim, dtype=dtype)
