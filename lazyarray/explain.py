"""Showing what lazyarray will do: the planned kernels and the graph, and
(``explain(x, profile=True)``) how close each kernel comes to the device's
roofline.

Public names: explain, to_dot, kernel_profiles, KernelProfile.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

import lazyarray.plan as _plan
import lazyarray.run as _run
from lazyarray.calls import CallOutput, ExternalCall
from lazyarray.deferred import deferred
from lazyarray.graph import (
    Concat,
    Const,
    Gather,
    Input,
    Iota,
    Map,
    Node,
    Param,
    Reduce,
    Reshape,
    Scan,
    View,
    walk,
)
from lazyarray.handle import asarray
from lazyarray.host import HostArray
from lazyarray.mapper import NodeMapper, is_kind
from lazyarray.values import host_origin

if TYPE_CHECKING:
    import shutil
    import statistics
    import subprocess

    import pyopencl as cl

    import kernelcore as lp
    import lazyarray.roofline as _roofline
    from lazyarray.run.launch import BoundLaunch
else:
    # (kernelcore, OpenCL and the roofline's measurements load when first used)
    cl, lp = deferred("pyopencl"), deferred("kernelcore")
    _roofline = deferred("lazyarray.roofline")
    # (the tools that measure and show kernels load when first used: cold start)
    shutil, statistics, subprocess = (deferred(name) for name in ("shutil", "statistics",
                                                                  "subprocess"))


def _jitted_tiers(jitted: Any, trials: dict, show_code: bool) -> str:
    """Which tier runs the calls of the jitted function *jitted*, by
    signature, and whether its host replay runs as a native loop (with
    *show_code*, the loop's C code)."""
    name = getattr(jitted, "name", "function")
    lines = [f"la.jit({name}): {len(jitted.programs)} compiled program(s); "
             f"{len(trials)} signature(s) of small host arrays (lazyarray.host.trial)"]
    replays = getattr(jitted, "_replays", {})
    for key, trial in trials.items():
        arrays = ", ".join(f"{spec[0]} {spec[1]}" if isinstance(spec, tuple) else spec.__name__
                           for spec in key[-1])
        lines.append(f"  ({arrays}): {trial.describe()}")
        replay = replays.get(trial)
        if replay is not None:
            native = replay.native_state
            state, source = ("no native loop", None) if native is None else native.describe()
            lines.append(f"    host replay: {state} (lazyarray.host.native)")
            if show_code and source:
                lines.append(source)
    return "\n".join(lines)


class Labels(NodeMapper[str]):
    """What a node computes, in words, for ``explain`` and ``to_dot``."""

    def map_input(self, node: Input) -> str:
        return "input"

    def map_const(self, node: Const) -> str:
        return f"const {node.value.item()!r}"

    def map_param(self, node: Param) -> str:
        return f"scalar argument {node.slot} of the jitted function"

    def map_map(self, node: Map) -> str:
        return node.op

    def map_reduce(self, node: Reduce) -> str:
        return f"{node.op} over axes {list(node.axes)}"

    def map_scan(self, node: Scan) -> str:
        return f"running {node.op} along axis {node.axis}"

    def map_concat(self, node: Concat) -> str:
        return f"concatenate along axis {node.axis}"

    def map_iota(self, node: Iota) -> str:
        return f"index along axis {node.axis}"

    def map_view(self, node: View) -> str:
        return "view"

    def map_reshape(self, node: Reshape) -> str:
        return "reshape"

    def map_gather(self, node: Gather) -> str:
        return f"gather along axis {node.axis}"

    def map_external_call(self, node: ExternalCall) -> str:
        return "external call"

    def map_call_output(self, node: CallOutput) -> str:
        return f"output {node.name} of an external call"


_LABELS = Labels()


def _label(node: Node) -> str:
    return f"{_LABELS(node)} {node.shape} {node.dtype}"


def explain(x: Any, show_code: bool = False, print_it: bool = True, profile: bool = False,
            repeat: int = 10) -> str:
    """The kernels that computing *x* will run: what each stores, the rule
    that decided it, what it reads, and (with *show_code*) its OpenCL code.
    Printed unless *print_it* is false; returned as text.

    With *profile*, each kernel is also run (*repeat* times, on a profiling
    queue; *x* itself is not computed) and its report says the bytes it
    moves and the floating point operations it does, counted exactly from
    kernelcore's statistics, its measured time, and the fraction of the
    device's roofline it reaches (see :func:`kernel_profiles`).

    For a function under ``la.jit``: which tier runs its calls on small host
    arrays, by signature, the timed calls that decided it, and whether its
    host replay runs as a native loop (with *show_code*, its C code)."""
    trials = getattr(x, "tier_trials", None)
    if trials is not None and callable(x):
        text = _jitted_tiers(x, trials, show_code)
        if print_it:
            print(text)
        return text
    if isinstance(x, HostArray):
        text = (f"0 kernel(s): a host array {x.shape} {x.dtype}, computed by NumPy on the "
                "host tier (every array of the operations that made it was small; see "
                "la.set_tier and docs/performance.md)")
        if print_it:
            print(text)
        return text
    node = asarray(x).node
    profiles = {p.index: p for p in kernel_profiles(x, repeat)} if profile else {}
    steps = _run.plan([node])
    reasons = {n: r for n, r in _plan.storage.storage_plan(node)}
    index = {st.node: k for k, st in enumerate(steps)}
    lines = [f"{len(steps)} kernel(s) for {_label(node)}"]
    if not steps:
        lines[0] += ": already computed"
    for k, step in enumerate(steps):
        lines.append(f"kernel {k}: stores {_label(step.node)}  "
                     f"[{reasons.get(step.node, 'stored')}]")
        if step.fill is not None:
            lines.append(f"  no launch: filled with {step.fill!r}")
        elif step.kernel is None and getattr(step.node, "external", False):
            lines.append("  no kernel of lazyarray's: "
                         + ("an output of the call it reads" if hasattr(step.node, "call")
                            else "an external call (lazyarray.calls)"))
        elif step.kernel is None:
            lines.append("  no launch: no elements")
        for name, n in step.args:
            source = (f"kernel {index[n]}" if n in index else
                      f"computed on the host by {host_origin(n)}, copied to the device"
                      if host_origin(n) else
                      "device data" if is_kind(n, "input") else
                      "a kernel argument" if is_kind(n, "const", "param") else
                      "computed earlier")
            lines.append(f"  reads {name}: {_label(n)} ({source})")
        if k in profiles:
            lines += ["  " + line for line in profiles[k].describe()]
        if show_code and step.kernel is not None:
            code = lp.generate_code_v2(step.kernel).device_code()
            lines += ["  | " + line for line in code.rstrip().splitlines()]
    if profiles:
        lines += _profile_summary(list(profiles.values()))
    text = "\n".join(lines)
    if print_it:
        print(text)
    return text


def to_dot(x: Any, path: str | Path | None = None) -> str:
    """Graphviz source of *x*'s graph (stored values drawn as boxes). With
    *path* ending in ``.svg`` or ``.png``, also renders it (needs graphviz's
    ``dot``); other paths get the source."""
    node = asarray(x).node
    stored = {n: r for n, r in _plan.storage.storage_plan(node)}
    ids: dict[Node, str] = {}
    lines = ["digraph lazyarray {", "  rankdir=BT;"]
    for n in walk(node):
        ids[n] = f"n{len(ids)}"
        shape = "box, style=bold" if n in stored else "ellipse"
        label = _label(n).replace('"', "'")
        lines.append(f'  {ids[n]} [label="{label}", shape={shape}];')
        for child in n.children():
            lines.append(f"  {ids[child]} -> {ids[n]};")
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


# {{{ profiles: counted work, measured time, roofline

@dataclass(frozen=True)
class KernelProfile:
    """One planned kernel, measured: kernel *index* of the plan storing
    *label*; *seconds*: the median device time of its launches (profiling
    events); *flops*: floating point operations (each ``+ - * /``, power and
    function call once, per element and reduction step; index arithmetic
    not counted), of *flop_dtype*; *accessed_bytes*: global memory bytes
    read and written, each array reference counted per execution;
    *moved_bytes*: per array and direction the accessed bytes capped at the
    array's size (what a cache that holds the repeats leaves to memory);
    *peak_bandwidth* (bytes/s) and *peak_flops* (of *flop_dtype*; None if not
    measured) from :func:`lazyarray.roofline.device_peaks`."""

    index: int
    label: str
    seconds: float
    flops: int
    flop_dtype: str | None
    accessed_bytes: int
    moved_bytes: int
    peak_bandwidth: float
    peak_flops: float | None
    launches: int = 1

    @property
    def bandwidth(self) -> float:
        """Bytes moved per second."""
        return self.moved_bytes / self.seconds if self.seconds else 0.0

    @property
    def flop_rate(self) -> float:
        return self.flops / self.seconds if self.seconds else 0.0

    @property
    def roofline_seconds(self) -> float:
        """The least time the roofline allows: moving the bytes at the peak
        bandwidth or doing the operations at the peak rate, the longer."""
        memory = self.moved_bytes / self.peak_bandwidth
        compute = self.flops / self.peak_flops if self.peak_flops else 0.0
        return max(memory, compute)

    @property
    def bound(self) -> str:
        """``"memory"`` or ``"compute"``: the roof that limits this kernel."""
        compute = self.flops / self.peak_flops if self.peak_flops else 0.0
        return "compute" if compute > self.moved_bytes / self.peak_bandwidth else "memory"

    @property
    def fraction(self) -> float:
        """The roofline's time over the measured time (1: at the roof)."""
        return self.roofline_seconds / self.seconds if self.seconds else 0.0

    def describe(self) -> list[str]:
        """The report's lines for this kernel."""
        lines = [f"profile: {_si(self.seconds, 's')} ({self.launches} launch"
                 f"{'es' if self.launches > 1 else ''}); {_si(self.moved_bytes, 'B')} moved "
                 f"({_si(self.accessed_bytes, 'B')} accessed), "
                 + (f"{_si(self.flops, 'FLOP')} {self.flop_dtype}" if self.flops
                    else "no floating point operations")]
        lines.append(f"  {_si(self.bandwidth, 'B/s')} = "
                     f"{100 * self.bandwidth / self.peak_bandwidth:.1f}% of the peak "
                     f"{_si(self.peak_bandwidth, 'B/s')}"
                     + (f"; {_si(self.flop_rate, 'FLOP/s')} = "
                        f"{100 * self.flop_rate / self.peak_flops:.1f}% of the peak "
                        f"{_si(self.peak_flops, 'FLOP/s')}" if self.flops and self.peak_flops
                        else ""))
        lines.append(f"  roofline: {self.bound}-bound, {100 * self.fraction:.1f}% of the "
                     f"roofline ({_si(self.roofline_seconds, 's')} at the roof): "
                     + self.why())
        return lines

    def why(self) -> str:
        """What keeps this kernel from its roof, in words."""
        if self.fraction > 1.05:
            return ("above the roof: its data stays in a cache (the peak bandwidth is "
                    "measured on arrays larger than the caches)")
        if self.fraction >= 0.8:
            return "near its limit"
        reasons = []
        if self.seconds < 20e-6:
            reasons.append("a short kernel: launch latency and the ramp-up of the "
                           "device weigh")
        if self.accessed_bytes > 2 * self.moved_bytes:
            reasons.append(f"reads each byte {self.accessed_bytes / self.moved_bytes:.0f} "
                           "times over (the caches must serve the repeats)")
        if self.bound == "memory" and not reasons:
            reasons.append("the memory accesses do not reach the copy bandwidth "
                           "(access pattern, too few bytes in flight, or idle work-items)")
        if self.bound == "compute" and not reasons:
            reasons.append("the arithmetic does not reach the peak rate (dependent "
                           "operations, no vectorization, or idle work-items)")
        return "; ".join(reasons)


def _si(value: float, unit: str) -> str:
    """*value* with an SI prefix (``1.5 MB``, ``12.3 us``)."""
    if unit == "s":
        for scale, prefix in ((1, ""), (1e-3, "m"), (1e-6, "u")):
            if value >= scale:
                return f"{value / scale:.3g} {prefix}s"
        return f"{value * 1e9:.3g} ns"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _profile_summary(profiles: list[KernelProfile]) -> list[str]:
    if not profiles:
        return []
    total = sum(p.seconds for p in profiles)
    ideal = sum(p.roofline_seconds for p in profiles)
    worst = min(profiles, key=lambda p: p.fraction)
    lines = [f"profiled: {_si(total, 's')} on the device in all, "
             f"{100 * ideal / total:.1f}% of the roofline" if total else "profiled"]
    if len(profiles) > 1:
        lines.append(f"furthest from its roof: kernel {worst.index} "
                     f"({100 * worst.fraction:.1f}%, {worst.bound}-bound)")
    return lines


def kernel_counts(knl: lp.LoopKernel | lp.TranslationUnit
                  ) -> tuple[int, str | None, int, dict[tuple[str, str], int]]:
    """``(flops, flop dtype, accessed bytes, accessed bytes by (array,
    direction))`` of a kernelcore kernel, from kernelcore's statistics:
    floating point operations and global memory references of each
    instruction (as :func:`kernelcore.statistics.get_op_map` and
    :func:`~kernelcore.statistics.get_mem_access_map` find them), times the
    points of the instruction's domain: per work-item, exact (no rounding to
    whole work-groups or sub-groups)."""
    totals = lp.get_work_item_totals(knl)
    accesses = totals.bytes_by_access
    return totals.flops, totals.flop_dtype, totals.bytes, accesses


def _has_c_code(knl) -> bool:
    """Whether *knl* has C instructions (code kernelcore's statistics do not
    count: the tensor-core product)."""
    if isinstance(knl, lp.TranslationUnit):
        knl = knl.default_entrypoint
    return any(isinstance(insn, lp.CInstruction) for insn in knl.instructions)


def c_code_counts(knl: lp.LoopKernel | lp.TranslationUnit, node: Node
                  ) -> tuple[int, str | None, int, dict[tuple[str, str], int]]:
    """:func:`kernel_counts` of a kernel of C instructions computing *node*:
    for a matrix product (the tensor-core kernel), two operations per term
    of the graph's sum, counted as ``tf32`` (whose peak the roofline does not
    measure); otherwise no operations. Every global array counts once,
    whole: the operands as read, ``out`` as written."""
    if isinstance(knl, lp.TranslationUnit):
        knl = knl.default_entrypoint
    flops, dtype = 0, None
    if is_kind(node, "reduce") and is_kind(node.arg, "map") and node.arg.op == "multiply":
        flops, dtype = 2 * int(np.prod(node.arg.shape, dtype=np.int64)), "tf32"
    accesses = {}
    for arg in knl.args:
        size = _array_nbytes(knl, arg.name)
        if size is not None:
            accesses[(arg.name, "store" if arg.name == "out" else "load")] = size
    return flops, dtype, sum(accesses.values()), accesses


def _array_nbytes(knl, name: str) -> int | None:
    """The bytes of global array *name* of kernel *knl* (None if unknown)."""
    if isinstance(knl, lp.TranslationUnit):
        knl = knl.default_entrypoint
    var = next((a for a in knl.args if a.name == name), None) \
        or knl.temporary_variables.get(name)
    shape = getattr(var, "shape", None)
    dtype = getattr(var, "dtype", None)
    if var is None or dtype is None or not isinstance(shape, tuple) or not all(
            isinstance(n, (int, np.integer)) for n in shape):
        return None
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(
        getattr(dtype, "numpy_dtype", dtype)).itemsize


def kernel_profiles(x: Any, repeat: int = 10) -> list[KernelProfile]:
    """Per kernel of *x*'s plan that launches, a :class:`KernelProfile`:
    the kernels are run (each once to warm up, then *repeat* times) on a
    profiling queue of lazyarray's device, on the values they read; *x* is
    not computed (its handle keeps its graph). The device's peaks are
    measured on first use and cached on disk (:mod:`lazyarray.roofline`)."""
    node = asarray(x).node
    base = _run.default_queue()
    peaks = _roofline.device_peaks(base)
    profiles = []
    with _run.DEVICE_LOCK:
        base.finish()
        queue = cl.CommandQueue(base.context, base.device,
                                properties=cl.command_queue_properties.PROFILING_ENABLE)
        with _run.using_queue(queue):
            values: dict[Node, Any] = {}
            for k, step in enumerate(_run.plan([node])):
                args = {}
                for name, n in step.args:
                    value = n.value if is_kind(n, "const") else values.get(n)
                    if value is None:
                        value = _run.evaluate(n)
                    if getattr(value, "offset", 0):
                        value = value.copy(queue=queue)      # (as run_step does)
                    args[name] = value
                values[step.node] = _run.run_step(step, queue, args)     # (warm-up)
                compiled = step.compiled
                # (the kernels profiled are bound launches: called, with their launches)
                bound = None if compiled is None else cast(
                    "BoundLaunch | None", compiled.bound_on(queue, step.node))
                if bound is None:
                    continue                # (a fill, or no elements: no kernel)
                samples = []
                for _ in range(max(1, repeat)):
                    events: list = []
                    bound(queue, args, events)
                    queue.finish()
                    samples.append(1e-9 * sum(e.profile.end - e.profile.start
                                              for e in events))
                knl = step.kernel
                assert knl is not None          # (a step that launches has a kernel)
                flops, dtype, accessed, by_array = kernel_counts(knl) \
                    if not _has_c_code(knl) else c_code_counts(knl, step.node)
                moved = 0
                for (name, _), nbytes in by_array.items():
                    size = _array_nbytes(step.kernel, name)
                    moved += nbytes if size is None else min(nbytes, size)
                profiles.append(KernelProfile(
                    k, _label(step.node), statistics.median(samples), flops, dtype,
                    accessed, moved, peaks.bandwidth,
                    peaks.flop_rate(dtype) if dtype else None, len(bound.launches)))
            queue.finish()
    return profiles

# }}}
