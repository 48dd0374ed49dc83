"""Lowering graph nodes to kernelcore kernels.

Elementwise operations fuse into their consumer: a kernel computes one stored
node (a reduction or the requested result) from stored inputs, inlining every
elementwise operation and broadcast between them.

Public names: build_kernel, stored_nodes, storage_plan, RECOMPUTE_LIMIT.
"""

from __future__ import annotations

import kernelcore as lp
from lazyarray.graph import Concat, Const, Iota, Map, Node, Reduce, Reshape, View, walk
from lazyarray.ops.elementwise import ELEMENTWISE

_REDUCE = {"sum": "sum", "product": "product", "max": "max", "min": "min",
           "any": "any", "all": "all", "argmax": "argmax", "argmin": "argmin"}


#: a computed node that would be recomputed this many times per element of a
#: stored value is stored itself (e.g. each step of an unrolled stencil loop)
RECOMPUTE_LIMIT = 4


def storage_plan(root: Node) -> list[tuple[Node, str]]:
    """The nodes whose values are stored, children before parents, each with
    the rule that stores it.

    Stored are: the root, every reduction, and every elementwise or
    concatenation node that fusing would recompute at least
    :data:`RECOMPUTE_LIMIT` times (on average) per element of the value that
    reads it. All other nodes are recomputed inside the kernel of the stored
    value that reads them.
    """
    order = walk(root)
    uses: dict[int, float] = {id(root): 1}
    reasons: dict[int, str] = {}
    for node in reversed(order):            # consumers before producers
        count = uses.get(id(node), 0)
        if node is root:
            reasons[id(node)] = "result"
        elif isinstance(node, Reduce):
            reasons[id(node)] = "reduction"
        elif isinstance(node, (Map, Concat)) and count >= RECOMPUTE_LIMIT:
            reasons[id(node)] = (f"recompute rule: read {count:.3g} times per element "
                                 f"(limit {RECOMPUTE_LIMIT})")
        if id(node) in reasons:
            count = 1
        for child, share in _shares(node):
            uses[id(child)] = uses.get(id(child), 0) + count * share
    return [(n, reasons[id(n)]) for n in order if id(n) in reasons]


def stored_nodes(root: Node) -> list[Node]:
    """The nodes of :func:`storage_plan`."""
    return [n for n, _ in storage_plan(root)]


def _shares(node: Node) -> list[tuple[Node, float]]:
    """How often *node* evaluates each child per element, on average: once per
    reference, except that a concatenation evaluates each part only for its
    own elements."""
    if isinstance(node, Concat):
        total = node.shape[node.axis] or 1
        return [(a, a.shape[node.axis] / total) for a in node.args]
    return [(child, 1) for child in node.children()]


def _literal(c: Const) -> str:
    v = c.value.item()
    if isinstance(v, bool):
        return "True" if v else "False"
    if c.weak:
        return repr(v)
    return f"{c.dtype.name}({v!r})"


class _Expr:
    """Instruction-language text for elementwise subgraphs."""

    def __init__(self, inputs: dict[int, tuple[Node, str]]):
        self.inputs = inputs        # stored node id -> (node, argument name)

    def __call__(self, node: Node, index: list[str]) -> str:
        if id(node) in self.inputs:
            name = self.inputs[id(node)][1]
            return f"{name}[0]" if node.ndim == 0 else f"{name}[{', '.join(index)}]"
        if isinstance(node, Const):
            return _literal(node)
        if isinstance(node, View):
            arg_index = [str(m[1]) if m[0] == "const" else
                         _affine(m[2], m[3], index[m[1]]) for m in node.axis_map]
            return self(node.arg, arg_index)
        if isinstance(node, Reshape):
            return self(node.arg, _unflatten(_flatten(index, node.shape), node.arg.shape))
        if isinstance(node, Iota):
            return f"int64({index[node.axis]})"
        if isinstance(node, Concat):
            return self._concat(node, index)
        if isinstance(node, Map):
            if node.op == "astype":
                return f"{node.dtype.name}({self(node.args[0], index)})"
            parts = [self(a, _broadcast(index, a.shape, node.shape)) for a in node.args]
            return f"{node.dtype.name}({ELEMENTWISE[node.op].format(*parts)})"
        raise AssertionError(f"unstored {type(node).__name__}")

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
                parts.append((offset + extent, f"{node.dtype.name}({self(arg, idx)})"))
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


def build_kernel(node: Node, inputs: dict[int, tuple[Node, str]]):
    """A kernelcore kernel computing *node* into ``out`` from the stored nodes
    in *inputs* (node id -> (node, argument name)), parallelized for the device."""
    expr = _Expr(inputs)
    if isinstance(node, Reduce):
        arg = node.arg
        index = [f"i{k}" for k in range(arg.ndim)]
        red = [index[a] for a in node.axes]
        kept = [index[k] for k in range(arg.ndim) if k not in node.axes]
        out_index = [index[k] if k not in node.axes else "0"
                     for k in range(arg.ndim)] if node.keepdims else kept
        body = expr(arg, index)
        red_spec = red[0] if len(red) == 1 else f"({', '.join(red)})"
        rhs = f"{_REDUCE[node.op]}({red_spec}, {body})" if red else body
        domains = [f"{{ [{i}]: 0 <= {i} < {arg.shape[k]} }}" for k, i in enumerate(index)]
    else:
        out_index = [f"i{k}" for k in range(node.ndim)]
        rhs = expr(node, out_index)
        domains = [f"{{ [{i}]: 0 <= {i} < {node.shape[k]} }}"
                   for k, i in enumerate(out_index)]
    lhs = f"out[{', '.join(out_index)}]" if out_index else "out[0]"
    data = [lp.GlobalArg("out", node.dtype, shape=node.shape or (1,))]
    for stored_node, name in sorted(inputs.values(), key=lambda p: p[1]):
        data.append(lp.GlobalArg(name, stored_node.dtype, shape=stored_node.shape or (1,)))
    knl = lp.make_kernel(domains or ["{ [z]: 0 <= z < 1 }"], f"{lhs} = {rhs}", data,
                         name="lazyarray_kernel")
    # lazyarray passes device arrays only
    knl = lp.set_options(knl, no_numpy=True)
    return lp.auto_parallelize(knl)
