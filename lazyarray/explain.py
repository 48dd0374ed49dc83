"""Showing what lazyarray will do: the planned kernels and the graph.

Public names: explain, to_dot.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import kernelcore as lp
from lazyarray.handle import asarray
from lazyarray.graph import (
    Concat, Const, Input, Iota, Map, Node, Param, Reduce, Scan, View, walk)
from lazyarray.plan.storage import storage_plan
from lazyarray.run import plan
from lazyarray.values import host_origin


def _label(node: Node) -> str:
    if isinstance(node, Input):
        kind = "input"
    elif isinstance(node, Const):
        kind = f"const {node.value.item()!r}"
    elif isinstance(node, Param):
        kind = f"scalar argument {node.slot} of the jitted function"
    elif isinstance(node, Map):
        kind = node.op
    elif isinstance(node, Reduce):
        kind = f"{node.op} over axes {list(node.axes)}"
    elif isinstance(node, Scan):
        kind = f"running {node.op} along axis {node.axis}"
    elif isinstance(node, Concat):
        kind = f"concatenate along axis {node.axis}"
    elif isinstance(node, Iota):
        kind = f"index along axis {node.axis}"
    elif isinstance(node, View):
        kind = "view"
    else:
        kind = type(node).__name__.lower()
    return f"{kind} {node.shape} {node.dtype}"


def explain(x, show_code: bool = False, print_it: bool = True) -> str:
    """The kernels that computing *x* will run: what each stores, the rule
    that decided it, what it reads, and (with *show_code*) its OpenCL code.
    Printed unless *print_it* is false; returned as text."""
    node = asarray(x).node
    steps = plan([node])
    reasons = {id(n): r for n, r in storage_plan(node)}
    index = {id(st.node): k for k, st in enumerate(steps)}
    lines = [f"{len(steps)} kernel(s) for {_label(node)}"]
    if not steps:
        lines[0] += ": already computed"
    for k, step in enumerate(steps):
        lines.append(f"kernel {k}: stores {_label(step.node)}  "
                     f"[{reasons.get(id(step.node), 'stored')}]")
        if step.fill is not None:
            lines.append(f"  no launch: filled with {step.fill!r}")
        elif step.kernel is None:
            lines.append("  no launch: no elements")
        for name, n in step.args:
            source = (f"kernel {index[id(n)]}" if id(n) in index else
                      f"computed on the host by {host_origin(n)}, copied to the device"
                      if host_origin(n) else
                      "device data" if isinstance(n, Input) else
                      "a kernel argument" if isinstance(n, (Const, Param)) else
                      "computed earlier")
            lines.append(f"  reads {name}: {_label(n)} ({source})")
        if show_code and step.kernel is not None:
            code = lp.generate_code_v2(step.kernel).device_code()
            lines += ["  | " + line for line in code.rstrip().splitlines()]
    text = "\n".join(lines)
    if print_it:
        print(text)
    return text


def to_dot(x, path: str | Path | None = None) -> str:
    """Graphviz source of *x*'s graph (stored values drawn as boxes). With
    *path* ending in ``.svg`` or ``.png``, also renders it (needs graphviz's
    ``dot``); other paths get the source."""
    node = asarray(x).node
    stored = {id(n): r for n, r in storage_plan(node)}
    ids = {}
    lines = ["digraph lazyarray {", "  rankdir=BT;"]
    for n in walk(node):
        ids[id(n)] = f"n{len(ids)}"
        shape = "box, style=bold" if id(n) in stored else "ellipse"
        label = _label(n).replace('"', "'")
        lines.append(f'  {ids[id(n)]} [label="{label}", shape={shape}];')
        for child in n.children():
            lines.append(f"  {ids[id(child)]} -> {ids[id(n)]};")
    lines.append("}")
    source = "\n".join(lines) + "\n"
    if path is not None:
        path = Path(path)
        if path.suffix in (".svg", ".png"):
            dot = shutil.which("dot")
            if dot is None:
                raise RuntimeError("to_dot: rendering needs graphviz's 'dot' program; "
                                   "install graphviz or write the source (a .dot path)")
            subprocess.run([dot, f"-T{path.suffix[1:]}", "-o", str(path)],
                           input=source, text=True, check=True)
        else:
            path.write_text(source)
    return source
