"""The values a kernel reads: its array inputs and its scalar arguments.

Public names: KernelInput, kernel_inputs, kernel_scalar, written_in.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lazyarray.graph import Node, computed, walk
from lazyarray.mapper import is_kind

#: the first letters of the names of scalar arguments (``s0``) and of array
#: arguments (``in1``): names only; what an argument is, :class:`KernelInput`
#: says
SCALAR_PREFIX, ARRAY_PREFIX = "s", "in"


class KernelInput(NamedTuple):
    """A value a kernel reads: its *node*, its argument *name*, and whether it
    is passed by value (*scalar*) rather than as an array."""

    node: Node
    name: str
    scalar: bool


def kernel_scalar(node: Node) -> bool:
    """Whether *node* is a kernel's scalar argument (a new value reuses the
    kernel): a jit's scalar parameter, or a constant other than a bool (OpenCL
    kernels take none) or a Python integer kept as written (compared outside
    its operand's range)."""
    return is_kind(node, "param") or (
        is_kind(node, "const") and not node.weak and node.dtype.kind != "b")


def written_in(node: Node) -> bool:
    """Whether the constant *node* can be written into a kernel's code: an
    integer, or a finite nonzero float (kernelcore would fold ``x * 0.0``)."""
    return is_kind(node, "const") and (node.dtype.kind in "iu" or (
        node.dtype.kind == "f" and bool(np.isfinite(node.value)) and node.value != 0))


def kernel_inputs(root: Node, stored: set[Node],
                  literals: bool = False) -> dict[Node, KernelInput]:
    """The values *root*'s kernel reads, by node: inputs, computed values
    and stored nodes (arrays), and scalar arguments (with *literals*,
    constants :func:`written_in` the code are not arguments)."""
    inputs: dict[Node, KernelInput] = {}

    def scalar(node: Node) -> bool:
        return kernel_scalar(node) and not (literals and written_in(node))

    def read(node: Node) -> bool:
        return node is not root and (computed(node) or node in stored
                                     or scalar(node))

    for node in walk(root, read):
        if node is not root and read(node):
            by_value = scalar(node)
            prefix = SCALAR_PREFIX if by_value else ARRAY_PREFIX
            inputs[node] = KernelInput(node, f"{prefix}{len(inputs)}", by_value)
    return inputs
