"""``actx.compile``: a function of array containers traced once per argument
signature, planned, then replayed as its kernels.

The arguments are flattened by the context's container walker into leaves:
arrays (lazy, or frozen pyopencl arrays, thawed first) and scalars. Python
numbers and NumPy's numeric scalars are traced as values (scalar parameters
of the kernels), so an RK stage's new time ``t`` or a new ``dt`` runs the
same kernels, whether ``t`` is a float or, as a time loop that starts from
``t = np.float64(0)`` passes it, a NumPy scalar (which keeps its dtype in
the trace: NumPy scalars are not weak, NEP 50). Other leaves are part of the
signature. The signature (the compile key) is the containers' structures,
each leaf's kind (array shape and dtype, number type, or a static value) and
the keyword names.

The function sees a traced number as a :class:`TracedScalar`, a 0-d lazy
array that arraycontext's containers broadcast as they broadcast numbers:
``state + dt / 2 * k1`` works in a compiled RK step as it does eagerly with
a float ``dt``.

The trace is planned (:func:`plan_program`) as ``freeze`` computes several
arrays together: work the outputs share, and operands asked to be stored
first (an einsum's broadcast operand), are stored once; work that depends
on no argument (index arithmetic on arrays the function captured) is
computed once, when tracing. A call then runs the planned kernels' bound
launches, arguments set by position, without walking any graph and without
waiting for the device (:class:`Program`).

Public names: CompiledFunction, Program, TracedScalar, compile_key, plan_program,
invariant_frontier, flatten_call, unflatten_call.
"""

from __future__ import annotations

import logging
import numbers
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, cast

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from lazyarray.arraycontext.freeze import (
    FREE_KINDS,
    computed_on_host,
    plan_ahead,
    stage_roots,
    stand_in,
    walk_all,
)
from lazyarray.arraycontext.pending import plan_pending, settle
from lazyarray.arraycontext.program import Program, _label
from lazyarray.arraycontext.tags import TaggedArray, axes_of, tags_of
from lazyarray.arraycontext.traversal import Structure, Walker
from lazyarray.graph import Const, Input, Map, Node, Param, computed, is_weak
from lazyarray.handle import LazyArray, asarray
from lazyarray.mapper import is_kind
from lazyarray.run import (
    DEVICE_LOCK,
    default_queue,
    evaluate,
    plan,
    progress,
    using_queue,
)
from lazyarray.run.prebuild import build_new_kernels, example_arguments
from lazyarray.run.sequence import constant_ranges, one_kernels, sequence_runs
from lazyarray.run.steps import Step
from lazyarray.target import default_target
from lazyarray.tracing import TRACING, tracing
from lazyarray.values import _DEVICE, keep_on_device, on_device

logger = logging.getLogger(__name__)

#: per trace under way (innermost last): its argument placeholders
TRACED_INPUTS: list[set[Node]] = []


def depends_on_trace(node: Node) -> bool:
    """Whether *node* reads an argument or a scalar parameter of a trace
    under way (its value differs from call to call)."""
    variant = set().union(*TRACED_INPUTS) if TRACED_INPUTS else set()
    return any(n in variant or is_kind(n, "param") for n in walk_all([node]))


class TracedScalar(LazyArray):
    """A Python number passed to a compiled function, as the trace sees it:
    a 0-d lazy array (a scalar parameter of the kernels) that counts as a
    :class:`numbers.Number`, so arraycontext's containers broadcast it over
    their arrays as they broadcast numbers (``dt * state``). Arithmetic
    between traced scalars and numbers gives a traced scalar again
    (``dt / 2``); with arrays it gives lazy arrays."""


def _as_scalar(x: Any, numbers_only: bool = False) -> Any:
    """*x* as a :class:`TracedScalar` if it is a 0-d lazy array computed
    from numbers only (traced or written): Python numbers (a weak result),
    or *numbers_only*, which the caller knows (its operands were traced
    scalars and numbers)."""
    if type(x) is LazyArray and x.ndim == 0 and (numbers_only or is_weak(x.node)):
        return TracedScalar(x.node)
    return x


def _is_number(x: Any) -> bool:
    return isinstance(x, (TracedScalar, int, float, complex, np.number))


def _scalar_operator(name: str) -> Callable[..., Any]:
    base = getattr(LazyArray, name)

    def op(self: Any, *other: Any) -> Any:
        result = base(self, *other)
        if result is NotImplemented:
            return result
        return _as_scalar(result, all(_is_number(o) for o in other))

    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    for _dunder in (f"__{_name}__", f"__r{_name}__"):
        setattr(TracedScalar, _dunder, _scalar_operator(_dunder))
for _dunder in ("__neg__", "__pos__", "__abs__"):
    setattr(TracedScalar, _dunder, _scalar_operator(_dunder))
numbers.Number.register(TracedScalar)


#: NumPy scalar types not traced as values (no Python number holds them)
_UNTRACED = (np.longdouble, np.clongdouble, np.float16)


def _traced_numpy_scalar(leaf: Any) -> bool:
    """Whether *leaf* is a NumPy scalar traced as a value: numeric, not a
    bool, of a type kernels take."""
    return isinstance(leaf, np.number) and not isinstance(leaf, _UNTRACED)


def _leaf_key(leaf: Any) -> Hashable:
    if isinstance(leaf, LazyArray) or hasattr(leaf, "shape") and hasattr(leaf, "dtype") \
            and not isinstance(leaf, np.generic):
        return ("array", tuple(leaf.shape), np.dtype(leaf.dtype).str)
    if isinstance(leaf, (int, float, complex)) and not isinstance(leaf, (bool, np.generic)) \
            or _traced_numpy_scalar(leaf):
        return ("number", type(leaf))
    try:
        hash(leaf)
    except TypeError:
        raise TypeError(f"cannot pass a {type(leaf).__name__} to a compiled function "
                        "(arrays, numbers and containers of them)") from None
    return ("static", type(leaf), leaf)


def compile_key(leaves: list[Any], structure: Structure, keywords: tuple[str, ...]
                ) -> tuple:
    """The signature of a call: container structure, keyword names, and per
    leaf its shape and dtype, Python number type, or static value."""
    return (structure.key, keywords, tuple(_leaf_key(x) for x in leaves))


class CompiledFunction:
    """*f* compiled for the context: traced once per signature
    (:func:`compile_key`) and planned into a :class:`Program`, whose kernels
    every later call launches on *queue* (None: lazyarray's default queue).
    *thaw* turns frozen leaves into lazy arrays; *wrap_result*
    post-processes the rebuilt result (attaching the array context to
    containers). *single_launch*: whether a program runs as one sequential
    kernel (:mod:`lazyarray.run.sequence`) where it can (None: when its work
    is small, on CPU devices)."""

    def __init__(self, f: Callable[..., Any], walker: Walker,
                 queue: cl.CommandQueue | None,
                 thaw: Callable[[Any], Any] = lambda x: x,
                 wrap_result: Callable[[Any], Any] = lambda x: x,
                 single_launch: bool | None = None):
        self.f = f
        self.single_launch = single_launch
        self._walker = walker
        self._queue = queue
        self._thaw = thaw
        self._wrap = wrap_result
        #: the program of each signature traced
        self.programs: dict[tuple, Program] = {}
        self._lock = threading.Lock()
        #: how many signatures were traced
        self.trace_count = 0
        self.__name__ = getattr(f, "__name__", "compiled")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = tuple(sorted(kwargs))
        leaves, structure = flatten_call(self._walker, [*args, *(kwargs[n] for n in names)])
        leaves = [self._thaw(x) if hasattr(x, "shape") and not isinstance(x, LazyArray)
                  and not isinstance(x, np.generic) else x for x in leaves]
        if TRACING.names:
            # called by a function being traced: part of that trace
            rebuilt = unflatten_call(self._walker, structure, leaves)
            positional = rebuilt[:len(rebuilt) - len(names)]
            return self.f(*positional, **dict(zip(names, rebuilt[len(positional):])))
        key = compile_key(leaves, structure, names)
        with using_queue(self._queue):
            queue = default_queue()
            data = []
            numbers_ = []
            for x, kind in zip(leaves, key[2]):
                if kind[0] == "array":
                    d = _device_data(x)
                    data.append(d.copy(queue=queue) if d.offset else d)
                elif kind[0] == "number":
                    numbers_.append(x)
            program = self.programs.get(key)
            if program is None:
                with self._lock:
                    program = self.programs.get(key)
                    if program is None:
                        statics = [x for x, k in zip(leaves, key[2]) if k[0] == "static"]
                        program = self._trace(key, structure, leaves, statics, data)
                        self.programs[key] = program
                        self.trace_count += 1
            out = program.run(queue, data, numbers_)
        return self._wrap(self._walker.unflatten(program.structure, out))

    def _trace(self, key: tuple, structure: Structure, leaves: list[Any], statics: list[Any],
               data: list[cla.Array]) -> Program:
        started = time.perf_counter()
        logger.info("tracing %s for actx.compile (trace %d)", self.__name__,
                    self.trace_count + 1)
        # fresh placeholders: nothing computed for earlier arrays is mistaken
        # for this trace's values
        placeholders = [Input(d.reshape(d.shape)) for d in data]
        it_p, it_s = iter(placeholders), iter(statics)
        params: list[Param] = []
        traced = []
        for x, kind in zip(leaves, key[2]):
            if kind[0] == "array":
                node = next(it_p)
                traced.append(TaggedArray(node, tags_of(x), axes_of(x))
                              if isinstance(x, TaggedArray) else LazyArray(node))
            elif kind[0] == "number":
                params.append(Param(len(params), np.dtype(kind[1]) if issubclass(
                    kind[1], np.generic) else np.result_type(x)))
                traced.append(_traced(LazyArray(params[-1]), kind[1]))
            else:
                traced.append(next(it_s))
        names = key[1]
        rebuilt = unflatten_call(self._walker, structure, traced)
        positional = rebuilt[:len(rebuilt) - len(names)]
        TRACED_INPUTS.append(set(placeholders))
        try:
            try:
                with tracing(self.__name__, len(params)) as trace:
                    result = self.f(*positional, **dict(zip(names, rebuilt[len(positional):])))
            finally:
                TRACED_INPUTS.pop()
            params += trace.params
            out_leaves, out_structure = self._walker.flatten(result)
            out_nodes = [(x if isinstance(x, LazyArray) else asarray(x)).node
                         for x in out_leaves]
            program = plan_program(out_nodes, placeholders, params, tuple(trace.supplies),
                                   out_structure, self.__name__, started,
                                   self.single_launch)
        finally:
            settle()        # (freezes put off while tracing: computed whatever happened)
        for p in placeholders:
            p.data = None       # (the program keeps no array of the call that traced it)
        return program


def plan_program(out_nodes: list[Node], placeholders: list[Input], params: list[Param],
                 supplies: tuple, structure: Structure, name: str = "compiled",
                 started: float = 0.0, single_launch: bool | None = None) -> Program:
    """The :class:`Program` computing *out_nodes* from the call's arrays
    (*placeholders*) and scalar parameters (*params*):

    - work that reads neither (index arithmetic on the discretization's
      arrays a closure captured, say) is computed now, once
      (:func:`invariant_frontier`; by NumPy where it is small and new, see
      :func:`~lazyarray.arraycontext.freeze.numpy_values`), and read by
      every call;
    - what several outputs share and what was asked to be stored first
      (:func:`~lazyarray.arraycontext.freeze.stage_roots`) is planned first,
      each as a stored value the later kernels read, as ``freeze`` computes
      several arrays together;
    - then the outputs.

    The new kernels of the freezes put off while tracing
    (:mod:`~lazyarray.arraycontext.pending`), of the hoisted work and of the
    program are built as one OpenCL program (:mod:`lazyarray.run.prebuild`)
    before the put-off freezes and the hoisted work run. Runs of steps
    computed as one kernel each (*single_launch*: see
    :class:`CompiledFunction`) build that kernel at the first call instead
    of their steps' kernels."""
    variant: set[Node] = set(placeholders)
    hoisted = invariant_frontier(out_nodes, variant)
    # (small hoisted work met for the first times: computed by NumPy now, see
    # freeze.numpy_values; the program reads its values as computed ones)
    if hoisted and computed_on_host(hoisted, default_queue()) is not None:
        hoisted = []
    # (under the device lock: no other thread evaluates while stand-ins hold
    # values)
    with DEVICE_LOCK:
        # (the freezes put off while tracing: built with the rest, computed first)
        early = plan_pending()
        ahead, steps = _plan_staged(out_nodes, hoisted)
    target = default_target()
    runs = sequence_runs(steps, single_launch, target.kind)
    inside = {j for start, stop in runs for j in range(start, stop)}
    # the kernels of the put-off freezes, the hoisted work and the program
    # (its steps outside the runs computed as one kernel each): one build
    built = [*early, *ahead, *(st for j, st in enumerate(steps) if j not in inside)]
    with progress.watch(built, started, lambda: _label(name)):
        build_new_kernels(default_queue(), [(st, example_arguments(st)) for st in built])
        settle()
        for node in hoisted:
            evaluate(node)
    position = {p: k for k, p in enumerate(placeholders)}
    step_index = {st.node: j for j, st in enumerate(steps)}
    consts: list[cla.Array] = []
    const_index: dict[Node, int] = {}
    first_step = len(placeholders)       # (moved past the constants below)

    def source(node: Node) -> Any:
        if node in position:
            return ("arg", position[node])
        if is_kind(node, "param"):
            return ("param", cast(Param, node).slot)
        if node in step_index:
            return ("step", step_index[node])
        if is_kind(node, "const"):
            return ("value", cast(Const, node).value)
        if node not in const_index:
            const_index[node] = len(consts)
            consts.append(evaluate(node))
        return ("const", const_index[node])

    raw_steps = [(st, tuple((arg, source(n)) for arg, n in st.args)) for st in steps]
    raw_outputs = [source(n) for n in out_nodes]
    first_step = len(placeholders) + len(consts)

    def placed(src: tuple) -> Any:
        kind, what = src
        if kind == "arg":
            return what
        if kind == "const":
            return len(placeholders) + what
        if kind == "step":
            return first_step + what
        return src

    planned = tuple((st, tuple((arg, placed(src)) for arg, src in sources))
                    for st, sources in raw_steps)
    outputs = tuple(("step", placed(src)) if src[0] == "step"
                    else ("arg", placed(src)) if src[0] in ("arg", "const") else src
                    for src in raw_outputs)
    sequences = one_kernels(planned, runs, first_step, target, default_queue().device,
                            constant_ranges(consts, len(placeholders)) if runs else {})
    program = Program(planned, outputs, structure, tuple(params), supplies, tuple(consts),
                      len(placeholders), name, len(hoisted), sequences)
    program.built_for.add(default_queue().context.int_ptr)
    return program


def _plan_staged(out_nodes: list[Node], hoisted: list[Node]) -> tuple[list[Step], list[Step]]:
    """The steps computing *hoisted* (as evaluated eagerly), then those of
    :func:`plan_program`'s program: what is stored first, then the outputs.
    Each planned value is held by a stand-in while the later work is
    planned."""
    steps: list[Step] = []
    marked: list[Node] = []
    try:
        # (the hoisted work planned as it is evaluated, see freeze.plan_ahead)
        ahead = plan_ahead(hoisted, marked)
        for node in stage_roots(out_nodes):
            if computed(node) or is_kind(node, "param", "const"):
                continue
            planned_now = plan([node], literals=True)
            steps += planned_now
            # planned: the later plans read these values as computed ones
            for st in planned_now:
                if on_device(st.node) is None:
                    keep_on_device(st.node, stand_in(st.node))
                    marked.append(st.node)
        steps += plan(out_nodes, literals=True)
    finally:
        for node in marked:
            _DEVICE.pop(node, None)
    return ahead, steps


def invariant_frontier(roots: list[Node], variant: set[Node]) -> list[Node]:
    """The uncomputed nodes of *roots*' graphs that depend neither on the
    nodes of *variant* (a call's arrays) nor on scalar parameters nor on
    external calls, that read computed arrays (not only constants), and
    that work depending on a call reads: computed once, they are the same
    at every call. Past re-indexings (a view of such a node: the node
    itself). Children before parents."""
    order = walk_all(roots)
    varies: dict[Node, bool] = {}
    reads_data: dict[Node, bool] = {}
    for n in order:
        v = is_kind(n, "param") or bool(getattr(n, "external", False))
        r = False
        for c in n.children():
            if c in variant:
                v = True
            elif computed(c):
                r = True
            else:
                v = v or varies.get(c, False)
                r = r or reads_data.get(c, False)
        varies[n] = v
        reads_data[n] = r
    chosen: dict[Node, Node] = {}

    def choose(n: Node) -> None:
        if computed(n) or n in chosen or not reads_data.get(n, False):
            return
        if is_kind(n, *FREE_KINDS):
            for c in n.children():
                choose(c)
            return
        chosen[n] = n

    for n in order:
        if varies[n]:
            for c in n.children():
                if not varies.get(c, c in variant):
                    choose(c)
    for root in roots:
        if not computed(root) and not varies.get(root, True):
            choose(root)
    rank = {n: k for k, n in enumerate(order)}
    return sorted(chosen.values(), key=lambda n: rank[n])


def _device_data(x: Any) -> cla.Array:
    if isinstance(x, LazyArray):
        node = x.node
        if is_kind(node, "input") and cast(Input, node).data is not None:
            return cast(Input, node).data
        return evaluate(node)
    node = asarray(x).node
    assert is_kind(node, "input")
    return cast(Input, node).data


def _traced(value: LazyArray, kind: type) -> TracedScalar:
    """The traced scalar of a number of type *kind* whose value the trace
    sees as *value* (a scalar parameter, weak as Python numbers are): a
    NumPy scalar's converted to its dtype, not weak."""
    if issubclass(kind, np.generic):
        return TracedScalar(Map("astype", (value.node,), (), np.dtype(kind)))
    return TracedScalar(value.node)


def flatten_call(walker: Walker, args: list[Any]) -> tuple[list[Any], Structure]:
    """The leaves of a call's arguments (each flattened by *walker*) and
    their structure."""
    leaves: list[Any] = []
    children = []
    for a in args:
        mine, structure = walker.flatten(a)
        leaves.extend(mine)
        children.append(structure)
    return leaves, Structure(("call", tuple(c.key for c in children)), None, tuple(children))


def unflatten_call(walker: Walker, structure: Structure, leaves: list[Any]) -> list[Any]:
    """The arguments of :func:`flatten_call`'s *structure* with *leaves*."""
    args = []
    start = 0
    assert structure.children is not None
    for child in structure.children:
        n = child.leaf_count
        args.append(walker.unflatten(child, leaves[start:start + n]))
        start += n
    return args


__all__ = ["CompiledFunction", "Program", "TracedScalar", "compile_key", "flatten_call",
           "invariant_frontier", "plan_program", "unflatten_call"]
