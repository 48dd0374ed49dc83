"""Steps: the kernel of each stored node, planned once per graph structure
(scalars and inputs by position, not value), and run on its inputs.

Threads may plan at the same time: the kernel of a structure is planned once
(threads that need it meanwhile wait; other kernels are planned
concurrently).

Public names: plan, plan_graph, plan_map, graph_structure, run_step, Step, STATS,
timing_kernels.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import astuple, dataclass
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from kernelcore import KeyedLocks, LoopKernel, get_executor, made_once
from lazyarray.calls import launch_of
from lazyarray.graph import Const, Map, Node, computed
from lazyarray.lower.boxes import box_plan, build_box_kernel
from lazyarray.lower.flat import (
    SIZE_ARGUMENTS,
    build_flat_kernel,
    flat_group,
    flat_key,
    flat_sizes,
    is_flat,
    is_single,
)
from lazyarray.lower.kernel import build_kernel
from lazyarray.mapper import is_kind
from lazyarray.plan.inputs import KernelInput, kernel_inputs, kernel_scalar
from lazyarray.plan.storage import stored_nodes
from lazyarray.plan.structure import FIELDS_BY_KIND, kernel_structure
from lazyarray.run.cache import load_recipe, recipe_key, store_recipe
from lazyarray.run.device import default_queue
from lazyarray.run.launch import BoundLaunch, kernel_arguments, new_array
from lazyarray.run.sized import SizedLaunch
from lazyarray.run.tune import candidates, tune, tuning_enabled
from lazyarray.target import Target
from lazyarray.tracing import TRACING
from lazyarray.values import NAMED_DEPTH, holder, on_device

logger = logging.getLogger(__name__)
_KERNELS: dict = {}
#: the most compiled kernels kept by structure (the oldest go first: plans
#: that used them plan again; kernels whose programs the disk caches hold
#: cost a lookup, not a build)
KERNELS_KEPT = 512
_PLANNING = KeyedLocks()

#: the result of reducing nothing (max and min refuse empty input earlier)
_EMPTY_REDUCTION = {"sum": 0, "product": 1, "any": False, "all": True}

#: kernels launched by this process, and kernel structures planned (lowered,
#: or loaded from a disk recipe): tests read them to check fusion and reuse
#: (approximate when several threads launch at once)
STATS = {"launches": 0, "planned": 0}


class _Compiled:
    """The kernel planned for one structure: the kernelcore kernel (None when
    the step came from a disk recipe, until something needs it) and, once it
    ran or was loaded, its :class:`~lazyarray.run.launch.BoundLaunch` for each
    queue it runs on (*bound*: the first one's; the others are rebuilt from
    its recipe, without lowering again); laid out for *target*."""

    def __init__(self, kernel, bound: BoundLaunch | SizedLaunch | None, disk_key: str,
                 target: Target, queue=None, group: int | None = None,
                 scalars: frozenset[str] = frozenset()):
        self.kernel = kernel
        #: the names of the arguments passed by value
        self.scalars = scalars
        #: a flat kernel's work-group size (generic over the element count:
        #: launched by a SizedLaunch), else None
        self.group = group
        #: seconds spent planning (lowering, or loading the recipe)
        self.planning_s = 0.0
        self.disk_key = disk_key
        self.target = target
        #: the key of this kernel in the table of planned kernels
        self.key: tuple | None = None
        self._by_queue: dict[int, BoundLaunch | SizedLaunch] = {}
        self.bound = bound
        if bound is not None and queue is not None:
            self._by_queue[queue.int_ptr] = bound

    def bind(self, queue, bound: BoundLaunch | SizedLaunch) -> None:
        """Keep *bound* as the launch on *queue* (and as :attr:`bound` if first)."""
        self._by_queue[queue.int_ptr] = bound
        if self.bound is None:
            self.bound = bound

    def bound_on(self, queue, node: Node) -> BoundLaunch | SizedLaunch | None:
        """The launch of this kernel on *queue*: made from the recipe of the
        first queue's launch when another queue asks (None before any run)."""
        found = self._by_queue.get(queue.int_ptr)
        if found is None:
            if self.bound is None:
                return None
            found = self.bound.on_queue(queue, node) if isinstance(self.bound, SizedLaunch) \
                else BoundLaunch.from_recipe(self.bound.recipe, queue, node)
            self._by_queue.setdefault(queue.int_ptr, found)
        return found


@dataclass(frozen=True)
class Step:
    """Computing one stored *node*: a planned kernel (*compiled*) with its
    inputs (argument name, node) in *args*, or a *fill* value for empty
    reductions (neither: a node with no elements)."""

    node: Node
    compiled: _Compiled | None = None
    fill: Any = None
    args: tuple = ()

    @property
    def kernel(self) -> LoopKernel | None:
        """The kernelcore kernel (lowered now if the step came from disk)."""
        if self.compiled is None:
            return None
        if self.compiled.kernel is None and not getattr(self.node, "external", False):
            scalars = self.compiled.scalars
            inputs = {n: KernelInput(n, name, name in scalars)
                      for name, n in self.args if name not in SIZE_ARGUMENTS}
            target = self.compiled.target
            self.compiled.kernel = (
                _generic_kernel(_structure_of(self.compiled), self.node, inputs, target)
                if self.compiled.group else build_kernel(self.node, inputs, target=target))
        return self.compiled.kernel


def plan(roots: list[Node], literals: bool = False, named: frozenset[Node] = frozenset(),
         generic: bool = False, boxes: bool = True) -> list[Step]:
    """The steps computing the stored nodes of *roots* not computed yet,
    producers first. With *literals* (a jitted function's trace, which fixes
    the constants written in the function), finite nonzero constants are
    written into the kernels (the compiler folds them) instead of being
    arguments. The nodes in *named* are stored too. With
    *generic* (eager evaluation), elementwise values get flat kernels generic
    over the element count where :func:`~lazyarray.lower.flat.is_flat`, and
    (with *boxes*) box kernels generic over shapes and offsets where
    :func:`~lazyarray.lower.boxes.box_plan` finds one."""
    steps: list[Step] = []
    seen: set[Node] = set()
    target = Target.of_queue(default_queue())
    for root in roots:
        if computed(root) or is_kind(root, "param"):
            continue
        stored = stored_nodes(root, target, named)
        stored_set = set(stored)
        for node in stored:
            if on_device(node) is None and node not in seen:
                seen.add(node)
                steps.append(_step_for(node, stored_set, target, literals, generic, boxes))
    return steps


#: plans of evaluated graphs by structure (see :func:`plan_graph`)
_PLANS: dict = {}
#: the most plans kept (then the table starts afresh)
PLAN_CACHE_SIZE = 1024
#: a plan with box kernels (generic over shapes and offsets: on PoCL 0.7-1.5x
#: as long as kernels built for the shape) run more often than this on a CPU
#: device is planned again with kernels of its shapes: a long loop's step is
#: specialized (a build of some 0.3-1 s with empty caches, against up to 0.7
#: ms a step at a million elements), a short one, a window at new places or
#: a grid of a new size never waits for a build. (On an H200 box kernels ran
#: 0.93-1.12x as long as shaped ones: GPU plans keep them.)
SPECIALIZE_RUNS = 100


def graph_structure(root: Node) -> tuple[list[Node], tuple, tuple[Node, ...]]:
    """The nodes of *root*'s graph not computed yet with the computed values
    it reads (children before parents), a key of its structure, and the
    nodes of it that array handles hold (:data:`~lazyarray.values.NAMED_DEPTH`
    or more operations deep, outside a trace; stored by its plan). Nodes
    equal in everything the planner reads (operations, shapes, dtypes, which
    values are computed or held, constants written into code) and sharing
    the same subexpressions have equal keys, whatever the values of the
    inputs and of the scalar arguments."""
    number: dict[Node, int] = {}
    order: list[Node] = []
    entries: list[tuple] = []
    named: list[Node] = []
    deep = root.depth >= NAMED_DEPTH and not TRACING.names
    fields_of = FIELDS_BY_KIND
    # (postorder: a node is pushed expanded, then its children not numbered
    # yet; when it is popped again every child has its number)
    stack: list = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, expanded = pop()
        if node in number:
            continue
        entry: tuple
        if expanded:
            children = node.children()
            entry = (node.mapper_method, node.shape, node.dtype,
                     tuple([number[c] for c in children]), fields_of[node.kind](node))
            if deep and node.depth >= NAMED_DEPTH and node is not root \
                    and holder(node) is not None:
                named.append(node)
                entry += ("held",)
        else:
            kind = node.kind
            if kind == "input":
                entry = ("in", False, node.dtype, node.shape)
            elif on_device(node) is not None:
                entry = ("in", kernel_scalar(node), node.dtype, node.shape)
            elif kind == "const" or kind == "param":
                entry = ((node.dtype, kernel_scalar(node)) if kernel_scalar(node)
                         else node._key)
            else:
                push((node, True))
                for c in reversed(node.children()):
                    if c not in number:
                        push((c, False))
                continue
        number[node] = len(order)
        order.append(node)
        entries.append(entry)
    return order, tuple(entries), tuple(named)


def plan_graph(root: Node, graph: tuple | None = None) -> list[Step]:
    """:func:`plan` of ``[root]`` (no literals), remembered per graph structure
    (*graph*: :func:`graph_structure` of *root*, computed if not given):
    evaluating an expression of the same structure again (an eager loop's
    body, on new arrays) skips storage planning and the kernels' structure
    keys."""
    target = Target.of_queue(default_queue())
    order, structure, named = graph if graph is not None else graph_structure(root)
    key = (structure, target, tuning_enabled())
    entry = _PLANS.get(key)
    hot = False
    if entry is not None and entry[2] is not None:
        # (a plan with box kernels, run once more: specialized once hot)
        entry[2][0] += 1
        hot = entry[2][0] > SPECIALIZE_RUNS
    if not hot and entry is not None and entry[0] is _KERNELS:
        # (kernels by their keys: a plan keeps no kernel the table let go)
        kernels = [_KERNELS.get(k) if k is not None else None for _, k, _ in entry[1]]
        if all(c is not None or k is None for c, (_, k, _) in zip(kernels, entry[1])):
            steps = []
            for (i, _, args), compiled in zip(entry[1], kernels):
                node = order[i]
                steps.append(_quick_step(node, compiled,
                                         tuple([(name, order[j] if type(j) is int else j)
                                                for name, j in args]))
                             if compiled is not None else _step_for(node, set(), target))
            return steps
    steps = plan([root], named=frozenset(named), generic=True, boxes=not hot)
    if hot:
        logger.info("specializing a plan run %d times with kernels generic over shapes",
                    SPECIALIZE_RUNS)
    index = {n: k for k, n in enumerate(order)}
    if all(st.node in index and all(n in index or name in SIZE_ARGUMENTS
                                        for name, n in st.args)
           and (st.compiled is None or _KERNELS.get(st.compiled.key) is st.compiled)
           for st in steps):
        if len(_PLANS) >= PLAN_CACHE_SIZE:
            _PLANS.clear()
        # (arguments by position in the graph; a flat kernel's sizes, the
        # same for every graph of this structure, as their nodes, even where
        # a constant of the graph is the same node: x ** 2 of 2 elements)
        _PLANS[key] = (_KERNELS, tuple(
            (index[st.node], st.compiled.key if st.compiled is not None else None,
             tuple((name, n if name in SIZE_ARGUMENTS else index.get(n, n))
                   for name, n in st.args))
            for st in steps),
            [0] if target.kind == "cpu" and any(_is_box(st) for st in steps) else None)
    return steps


def _is_box(step: Step) -> bool:
    """Whether *step* runs a box kernel (generic over shapes and offsets)."""
    compiled = step.compiled
    return type(compiled) is _Compiled and compiled.group is not None \
        and _structure_of(compiled)[0][0] == "box"


def _structure_of(compiled: _Compiled) -> tuple:
    """The structure key *compiled* was made for (without the target)."""
    key = compiled.key
    assert key is not None
    return key[0]


#: plans of elementwise operations on computed arrays (see :func:`plan_map`)
_MAP_PLANS: dict = {}


def plan_map(root: Map, target: Target) -> tuple[Step, tuple[int, ...]] | None:
    """:func:`plan_graph` of an elementwise operation whose operands are all
    computed arrays (not constants or parameters; the caller checked): the
    one step computing it and, for each of its arguments, the position of
    its operand in ``root.args``. Remembered per operation, shapes, dtypes
    and repeated operands, so that the eager ``a + b`` of a loop's body skips
    the graph's structure key; None where the plan is not one kernel reading
    the operands (the caller evaluates *root* as any other node). A position
    that is not an integer is a scalar's node (a flat kernel's element count)."""
    args = root.args
    key = (root.op, root.shape, root.dtype,
           tuple([(a.shape, a.dtype, args.index(a)) for a in args]), target, tuning_enabled())
    entry = _MAP_PLANS.get(key)
    compiled = None
    if entry is None or entry[0] is not _KERNELS or (
            entry[1] is not None and (compiled := _KERNELS.get(entry[1])) is None):
        entry = _MAP_PLANS[key] = _map_plan_entry(root)
        compiled = _KERNELS.get(entry[1]) if entry[1] is not None else None
    names, positions = entry[2:]
    if compiled is None:
        return None
    return _quick_step(root, compiled, tuple([(name, args[k] if type(k) is int else k)
                                              for name, k in names])), positions


def _map_plan_entry(root: Map) -> tuple:
    """The entry of :data:`_MAP_PLANS` for *root*'s structure: the table of
    kernels it is valid for, the planned kernel's key in it (kept by key, so
    that the entry holds no kernel the table let go), its arguments' names
    with their operands' positions, and those positions (None, (), (): no
    single kernel reading the operands)."""
    steps = plan_graph(root)
    if len(_MAP_PLANS) >= PLAN_CACHE_SIZE:
        _MAP_PLANS.clear()
    args = root.args
    step = steps[0] if len(steps) == 1 else None
    compiled = step.compiled if step is not None else None
    if step is None or step.node is not root or type(compiled) is not _Compiled \
            or _KERNELS.get(compiled.key) is not compiled or not all(
            any(n is a for a in args) for name, n in step.args if name not in SIZE_ARGUMENTS):
        return _KERNELS, None, (), ()
    assert compiled is not None
    # (an operand by its position; a flat kernel's element count as its node)
    names = tuple((name, n if name in SIZE_ARGUMENTS else args.index(n))
                  for name, n in step.args)
    return _KERNELS, compiled.key, names, tuple(k for _, k in names)


def _quick_step(node: Node, compiled: _Compiled, args: tuple) -> Step:
    """``Step(node, compiled=compiled, args=args)`` made without the frozen
    dataclass's checked ``__init__`` (a quarter of a plan's reuse)."""
    step = object.__new__(Step)
    step.__dict__.update(node=node, compiled=compiled, fill=None, args=args)
    return step


def _step_for(node: Node, stored: set[Node], target: Target, literals: bool = False,
              generic: bool = False, boxes: bool = True) -> Step:
    if is_kind(node, "reduce") and 0 in [node.arg.shape[a] for a in node.axes]:
        return Step(node, fill=_EMPTY_REDUCTION[node.op])
    if 0 in node.shape:
        return Step(node)
    if getattr(node, "external", False):
        # a kernel lazyarray did not write (lazyarray.calls): run as it is
        inputs = kernel_inputs(node, stored, literals)
        return Step(node, compiled=launch_of(node, inputs),
                    args=tuple((i.name, i.node) for i in inputs.values()))
    if node.dtype.kind != "c" and (is_kind(node, "const") or (
            is_kind(node, "view") and is_kind(node.arg, "const"))):
        # one value everywhere: a fill (pyopencl fills no complex values)
        return Step(node, fill=(node if is_kind(node, "const") else node.arg).value)
    inputs = kernel_inputs(node, stored, literals)
    flat = generic and not tuning_enabled() and is_flat(node, inputs, target)
    # tuned kernels are kept apart: turning tuning on tunes kernels run before
    key = None if flat else (kernel_structure(node, inputs), tuning_enabled())
    if generic and not tuning_enabled():
        found = ((flat_key(node, inputs), flat_sizes(node, inputs)) if key is None
                 else _box_plan(node, inputs, target, key) if boxes else None)
        if found is not None:
            generic_key = (found[0], False)
            compiled = made_once(_KERNELS, (generic_key, target),
                                 lambda: _compile(generic_key, node, inputs, target, True),
                                 _PLANNING, KERNELS_KEPT)
            sizes = tuple((name, Const(n, np.int64, False)) for name, n in found[1])
            return Step(node, compiled=compiled, args=tuple(
                (i.name, i.node) for i in inputs.values()) + sizes)
    assert key is not None              # (a flat kernel was returned above)
    shaped = key
    compiled = made_once(_KERNELS, (shaped, target),
                         lambda: _compile(shaped, node, inputs, target), _PLANNING,
                         KERNELS_KEPT)
    return Step(node, compiled=compiled, args=tuple((i.name, i.node) for i in inputs.values()))


#: box structures (see :func:`_box_plan`) by the first kernel structure
#: of their shapes planned
_BOX_SEEN: dict = {}


def _box_plan(node: Node, inputs: dict, target: Target, shaped: tuple
              ) -> tuple[tuple, tuple] | None:
    """:func:`~lazyarray.lower.boxes.box_plan` of *node*, where another shape
    or place of its box structure was planned before (the first gets a
    kernel of its shapes, *shaped*: a loop at one shape builds as before,
    the second window, grid or shift builds the generic kernel, and the
    others nothing); else None."""
    found = box_plan(node, inputs, target)
    if found is None:
        return None
    first = _BOX_SEEN.get((found[0], target))
    if first is None:
        if len(_BOX_SEEN) >= PLAN_CACHE_SIZE:
            _BOX_SEEN.clear()
        _BOX_SEEN[(found[0], target)] = shaped
        return None
    return None if first == shaped else found


def _generic_kernel(key: tuple, node: Node, inputs: dict, target: Target) -> LoopKernel:
    """The kernel generic over sizes of *node*'s structure *key*: a box
    kernel's or a flat kernel's."""
    if key[0][0] == "box":
        return build_box_kernel(node, inputs, target)
    return build_flat_kernel(node, inputs, target)


def _compile(key: tuple, node: Node, inputs: dict, target: Target, flat: bool = False
             ) -> _Compiled:
    """The kernel of *node*'s structure *key* for *target*: from its disk
    recipe, else lowered (*flat*: a flat kernel generic over the element
    count)."""
    start = time.perf_counter()
    STATS["planned"] += 1
    queue = default_queue()
    # (the whole target: kind, units, tensor cores, math helpers)
    disk_key = recipe_key(key, queue.device, astuple(target))
    recipe = load_recipe(disk_key)
    group = flat_group(node, target) if flat else None
    bound: BoundLaunch | SizedLaunch | None = None
    if recipe is not None:
        try:
            loaded = BoundLaunch.from_recipe(recipe, queue, node)
            bound = SizedLaunch(loaded, group, is_single(node)) if group else loaded
        except cl.Error as e:
            logger.warning("rebuilding a kernel whose stored recipe failed: %s", e)
    knl = None if bound is not None else _generic_kernel(key, node, inputs, target) if flat \
        else build_kernel(node, inputs, target=target)
    compiled = _Compiled(knl, bound, disk_key, target, queue, group,
                         frozenset(i.name for i in inputs.values() if i.scalar))
    compiled.key = (key, target)
    compiled.planning_s = time.perf_counter() - start
    if knl is None:
        logger.info("loaded the recipe of %s%s %s in %.1f ms", type(node).__name__,
                    node.shape, node.dtype, 1e3 * compiled.planning_s)
    return compiled


def _log_lowered(step: Step, args: dict, out: cla.Array) -> None:
    """Generate the code of *step*'s new kernel now (its first run reuses it)
    and log one line with planning + code generation time (info level)."""
    assert step.compiled is not None
    knl = step.kernel
    assert knl is not None
    start = time.perf_counter()
    get_executor(knl, kernel_arguments(args, out))
    codegen = time.perf_counter() - start
    node = step.node
    logger.info("lowered %s%s %s in %.1f ms (planning %.1f ms, code generation %.1f ms)",
                type(node).__name__, node.shape, node.dtype,
                1e3 * (step.compiled.planning_s + codegen), 1e3 * step.compiled.planning_s,
                1e3 * codegen)


def run_step(step: Step, queue: cl.CommandQueue, args: dict) -> cla.Array:
    """Run *step* with its inputs' values in *args* (by argument name)."""
    node = step.node
    compiled = step.compiled
    for a in args.values():
        if getattr(a, "offset", 0):
            # views starting inside their buffer (pyopencl slices): kernels take
            # whole buffers, so such an input is read through a copy
            args = {name: a.copy(queue=queue) if getattr(a, "offset", 0) else a
                    for name, a in args.items()}
            break
    bound = compiled.bound_on(queue, node) if compiled is not None else None
    if bound is not None:
        STATS["launches"] += 1
        events: list | None = [] if timing_kernels() else None
        with _kernel_time(node, queue, events):
            if isinstance(bound, SizedLaunch):
                return bound.run(queue, args, node.shape, events)
            return bound(queue, args, events)
    out = new_array(queue, node.shape or (1,), node.dtype)
    if compiled is not None and tuning_enabled() and not is_kind(node, "scan") and out.size:
        _tune_step(step, queue, args, out)
    if step.fill is not None:
        # (pyopencl has no fill for bools: their bytes are filled as uint8)
        if out.dtype == np.bool_:
            out.view(np.uint8).fill(np.uint8(step.fill))
        else:
            out.fill(step.fill)
    elif compiled is not None:
        if compiled.group:
            # (a flat kernel reads and writes its arrays as vectors)
            args = {name: a.reshape(a.size) if isinstance(a, cla.Array) else a
                    for name, a in args.items()}
            out = out.reshape(out.size)
        if compiled.bound is None and logger.isEnabledFor(logging.INFO):
            _log_lowered(step, args, out)
        knl = step.kernel
        assert knl is not None              # (a step with a compiled kernel)
        with _kernel_time(node, queue, None):
            knl(queue, **kernel_arguments(args, out))
        STATS["launches"] += 1
    result = out.reshape(node.shape) if node.shape else out.reshape(())
    # later runs (in this process and, through the disk recipe, in others) skip
    # lowering and the checks of a kernel call; not for kernels with nothing
    # to rebind (empty values)
    if compiled is not None and out.size and all(a.size for a in args.values()
                                                 if isinstance(a, cla.Array)):
        knl = step.kernel
        assert knl is not None
        bound = BoundLaunch.from_run(knl, queue, args, out if compiled.group else result)
        compiled.bind(queue, SizedLaunch(bound, compiled.group, is_single(node))
                      if compiled.group else bound)
        store_recipe(compiled.disk_key, bound.recipe)
    return result


def timing_kernels() -> bool:
    """Whether kernel runs are timed and logged: when lazyarray's own logger
    (or one of its children) is set to info or below (``LAZYARRAY_LOG=info``,
    or ``setLevel``). An application's root logger at info does not turn it
    on: timing without profiling waits for the device after every launch."""
    if not logger.isEnabledFor(logging.INFO):
        return False                    # (the common case, without the walk)
    log: logging.Logger | None = logger
    while log is not None and log.name != "root":
        if log.level:
            return log.level <= logging.INFO
        log = log.parent
    return False


@contextmanager
def _kernel_time(node: Node, queue, events: list | None) -> Iterator[None]:
    """Log the device time of the kernel launched in the block (when
    :func:`timing_kernels`: from profiling *events* on a profiling queue,
    else by waiting for the device, which synchronizes)."""
    if not timing_kernels():
        yield
        return
    queue.finish()
    start = time.perf_counter()
    yield
    queue.finish()
    profiling = events is not None and bool(
        queue.properties & cl.command_queue_properties.PROFILING_ENABLE)
    seconds = (sum(e.profile.end - e.profile.start for e in events) * 1e-9
               if events is not None and profiling else time.perf_counter() - start)
    logger.info("ran %s%s %s in %.3f ms (%s)", type(node).__name__, node.shape, node.dtype,
                1e3 * seconds, "profiled" if profiling else "waited for")


def _tune_step(step: Step, queue, args: dict, out: cla.Array) -> None:
    """Replace *step*'s kernel by its fastest version on *args*
    (``LAZYARRAY_TUNE=1``, see :mod:`lazyarray.run.tune`)."""
    node = step.node
    assert step.compiled is not None
    inputs = {n: KernelInput(n, name, name in step.compiled.scalars)
              for name, n in step.args}
    flat = kernel_arguments(args, out)

    def run(knl) -> None:
        knl(queue, **flat)
        queue.finish()

    target = step.compiled.target
    choices = candidates(target.kind, is_kind(node, "reduce"))
    default = step.kernel
    assert default is not None
    step.compiled.kernel, _ = tune(default,
                                   lambda choice: build_kernel(node, inputs, choice, target),
                                   choices, run)
