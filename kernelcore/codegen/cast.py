"""A tiny C syntax tree and its printer (braces only where needed).

Public names: Block, For, If, Statement, Comment, hoist_guard, merge_guards, print_nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Statement:
    text: str


@dataclass
class Comment:
    text: str


@dataclass
class Block:
    children: list = field(default_factory=list)


@dataclass
class For:
    header: str
    body: list


@dataclass
class If:
    condition: str
    body: list


def hoist_guard(nodes: list, iname: str, written: set[str]) -> list:
    """*nodes*, when they are one loop over *iname* whose whole body is one
    ``if``, as that ``if`` around the loop, provided its condition neither
    names *iname* nor any of the *written* variables (the loop's body cannot
    change it) and reads no memory (a loop that runs zero times must not
    read out of bounds): loopy's placement of conditions, tested once."""
    if len(nodes) != 1 or not isinstance(nodes[0], For):
        return nodes
    loop = nodes[0]
    if len(loop.body) != 1 or not isinstance(loop.body[0], If):
        return nodes
    guard = loop.body[0]
    names = set(re.findall(r"[A-Za-z_]\w*", guard.condition))
    if iname in names or names & written or "[" in guard.condition:
        return nodes
    return [If(guard.condition, [For(loop.header, guard.body)])]


def merge_guards(nodes: list) -> list:
    """Adjacent ``if`` nodes with the same condition become one, and so do an
    ``if`` and the only ``if`` in its body when they test the same condition."""
    result: list = []
    for node in nodes:
        if isinstance(node, If):
            node = _guard(node.condition, node.body)
        if (isinstance(node, If) and result and isinstance(result[-1], If)
                and result[-1].condition == node.condition):
            result[-1] = _guard(node.condition, merge_guards(result[-1].body + node.body))
        else:
            result.append(node)
    return result


def _guard(condition: str, body: list) -> If:
    """``if (condition) body``, the ``if`` nodes of *body* that test the same
    condition (outside loops, which may rebind its names) opened."""
    return If(condition, _opened(condition, body))


def _opened(condition: str, body: list) -> list:
    nodes: list = []
    for node in body:
        if isinstance(node, If) and node.condition == condition:
            nodes += _opened(condition, node.body)
        elif isinstance(node, If):
            nodes.append(If(node.condition, _opened(condition, node.body)))
        else:
            nodes.append(node)
    return nodes


def _single(body: list) -> bool:
    if len(body) != 1:
        return False
    node = body[0]
    if isinstance(node, Statement):
        return True
    if isinstance(node, (For, If)):
        return _single(node.body)
    return False


def print_nodes(nodes: list, indent: int = 1) -> list[str]:
    """Source lines for *nodes* at *indent* levels (two spaces each)."""
    pad = "  " * indent
    lines: list[str] = []
    for node in nodes:
        if isinstance(node, Statement):
            lines.append(pad + node.text)
        elif isinstance(node, Comment):
            lines.append(pad + f"/* {node.text} */")
        elif isinstance(node, Block):
            lines += [pad + "{"] + print_nodes(node.children, indent + 1) + [pad + "}"]
        else:
            head = (f"for ({node.header})" if isinstance(node, For)
                    else f"if ({node.condition})")
            lines.append(pad + head)
            if _single(node.body):
                lines += print_nodes(node.body, indent + 1)
            else:
                lines += [pad + "{"] + print_nodes(node.body, indent + 1) + [pad + "}"]
    return lines
