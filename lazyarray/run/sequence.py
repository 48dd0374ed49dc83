"""A small compiled program's kernels as one kernel: one launch per call.

A compiled function (``actx.compile``) is a list of steps, each a kernel
launch. When the work of all of them is small, the launches cost more than
the work: a DG right-hand side on a 2-core CPU is some twenty kernels of a
few microseconds of arithmetic each, and each launch costs tens of
microseconds of the OpenCL runtime. Such a program runs as one kernel
instead, writing the same arrays the steps would: on a CPU device the
steps' loops one after another in one work-item (meshmode's pytato context
runs its programs so), the device's other cores left to the Python that
drives it; on a GPU one work-group, its work-items sharing each step's
output elements, with a barrier between steps. A call allocates only the
results it returns (or that later work reads); the intermediates live in
arrays of the launch, reused call after call (an in-order queue runs one
call's kernel after the last), and arguments unchanged since the last call
are not set again.

Array arguments are named by their place in the program's list of values
(``v<k>``: the call's arrays, then the constants, then the steps' results),
scalar parameters by slot (``p<j>``), constant scalars by step and name.

Public names: SEQUENCE_WORK, SEQUENCE_GROUP, program_work, sequence_runs,
constant_ranges, one_kernels, OneKernel, sequence_kernel, SequenceLaunch.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import Any

import islpy as isl
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp
from kernelcore import (
    INDEX_LIMIT,
    KernelcoreError,
    compile_program,
    memory_pool,
    set_kernel_argument,
)
from lazyarray.errors import device_memory_error
from lazyarray.graph import Node
from lazyarray.lower.flat import SIZE_ARGUMENTS
from lazyarray.lower.intervals import Range
from lazyarray.lower.ir import bounds, box, domain
from lazyarray.lower.kernel import NotApplicable, kernel_region, sequential_kernel
from lazyarray.mapper import is_kind
from lazyarray.plan.inputs import KernelInput
from lazyarray.run.cache import Recipe, load_recipe, recipe_key, store_recipe
from lazyarray.run.launch import new_array, template_of, with_data
from lazyarray.target import Target

logger = logging.getLogger(__name__)

#: the most work (:func:`program_work`) per step, on average, of a run of
#: steps computed as one kernel, per device kind: about what a launch costs
#: (tens of microseconds of PoCL, a few of a GPU) in the work of one
#: work-item (a CPU) or one work-group (a GPU: one of its multiprocessors).
#: simple-dg's right-hand side (16x16x2 triangles, order 3) is about 15,000
#: per step.
SEQUENCE_WORK = {"cpu": 1 << 16, "gpu": 1 << 15}
#: the work-items of that kernel's one work-group, per device kind (None:
#: one work-item, the loops sequential; a CPU's cores are better left to the
#: Python driving it than shared through barriers). On the H200 simple-dg's
#: right-hand sides took 1.84, 1.64 and 1.62 ms per step with 256, 512 and
#: 1024 work-items.
SEQUENCE_GROUP: dict[str, int | None] = {"cpu": None, "gpu": 512}


def _size(node: Node) -> int:
    return int(np.prod(node.shape, dtype=np.int64))


def program_work(steps: Sequence[Any]) -> int:
    """The element evaluations of *steps* (planned steps): per step its
    result's elements, and for each reduction it computes, the elements
    reduced for each of the result's elements."""
    work = 0
    for step in steps:
        node = step.node
        inputs = {n for _, n in step.args}
        reduced = [int(np.prod([n.arg.shape[a] for a in n.axes], dtype=np.int64))
                   for n in kernel_region(node, inputs) if is_kind(n, "reduce")]
        work += _size(node) * max([1, *reduced])
    return work


def sequence_runs(steps: Sequence[Any], single: bool | None, kind: str
                  ) -> list[tuple[int, int]]:
    """``(start, stop)`` of each run of consecutive planned *steps* to
    compute as one kernel: the longest runs of two steps or more that can be
    part of one (no external call, no empty value), whose work per step is
    at most :data:`SEQUENCE_WORK` for the device *kind* (any work with
    *single* true; none with *single* false)."""
    if single is False:
        return []
    runs, start = [], None
    for j, step in enumerate([*steps, None]):
        if step is not None and _eligible(step):
            start = j if start is None else start
            continue
        if start is not None and j - start >= 2:
            runs.append((start, j))
        start = None
    return [(a, b) for a, b in runs
            if single or program_work(steps[a:b]) <= SEQUENCE_WORK[kind] * (b - a)]


def _eligible(step: Any) -> bool:
    """Whether *step* can be part of a sequential kernel: lowered by lazyarray
    (not an external call), with elements."""
    node = step.node
    if getattr(node, "external", False) or _size(node) == 0:
        return False
    return step.compiled is not None or (step.fill is not None and node.dtype.kind != "c")


def constant_ranges(consts: Sequence[cla.Array], first: int) -> dict[int, Range]:
    """The smallest and largest value of each nonempty integer array of
    *consts* (a program's constants, the first at value *first*), by its
    place among the program's values (read back once, when planning)."""
    ranges = {}
    for k, value in enumerate(consts):
        if value.dtype.kind in "iu" and value.size:
            host = value.get()
            ranges[first + k] = (int(host.min()), int(host.max()))
    return ranges


def _placed_names(steps: Sequence[tuple[Any, tuple]], first: int) -> list[dict[str, Any]]:
    """Per step: its arguments' names in the sequential kernel (``v<k>``,
    ``p<j>`` or ``c<step>_<name>``) by argument name."""
    names = []
    for j, (_, sources) in enumerate(steps):
        named: dict[str, Any] = {}
        for name, where in sources:
            if isinstance(where, int):
                named[name] = f"v{where}"
            elif where[0] == "param":
                named[name] = f"p{where[1]}"
            else:
                named[name] = f"c{j}_{name}"
        names.append(named)
    return names


def _structure(steps: Sequence[tuple[Any, tuple]], first: int,
               ranges: dict[int, Range]) -> tuple:
    """What the sequential kernel of *steps* depends on: each step's kernel
    structure (or fill), shape and dtype and where its arguments come from,
    and the value ranges of the constant tables it reads."""
    parts = []
    for step, sources in steps:
        node = step.node
        kernel = step.compiled.key if step.compiled is not None else ("fill", step.fill)
        where = tuple((name, w if isinstance(w, int) else (w[0], w[1] if w[0] == "param"
                                                           else type(w[1]).__name__))
                      for name, w in sources)
        parts.append((kernel, node.shape, node.dtype.str, where))
    return (first, tuple(parts), tuple(sorted(ranges.items())))


@dataclass
class OneKernel:
    """A program's steps as one kernel: its disk *key*, the constant scalar
    arguments it takes by name (*constants*), and what lowers it when no
    recipe of it exists (:meth:`kernel`)."""

    key: str
    constants: dict[str, Any]
    steps: Sequence[tuple[Any, tuple]]
    first: int
    target: Target
    ranges: dict[int, Range]
    group: int | None

    def kernel(self) -> lp.LoopKernel:
        """The sequential kernel (lowered now)."""
        return sequence_kernel(self.steps, self.first, self.target, self.ranges, self.group)


def one_kernels(steps: Sequence[tuple[Any, tuple]], runs: Sequence[tuple[int, int]],
                first: int, target: Target, device: cl.Device,
                ranges: dict[int, Range] | None = None) -> dict[int, OneKernel]:
    """The *runs* of a program's steps (``(step, sources)``, sources placed as
    in :class:`~lazyarray.arraycontext.program.Program`; the first step's
    result is value *first*; runs from :func:`sequence_runs`) as one kernel
    each for *device*, by their first step. *ranges*: the value ranges of the
    program's constant integer arrays, by place (:func:`constant_ranges`)."""
    ranges = ranges or {}
    group = SEQUENCE_GROUP[target.kind]
    if group is not None:
        group = min(group, device.max_work_group_size)      # (some GPUs allow 256)
    found = {}
    for start, stop in runs:
        part = steps[start:stop]
        constants: dict[str, Any] = {}
        for named, (_, sources) in zip(_placed_names(part, first + start), part):
            for arg, where in sources:
                if not isinstance(where, int) and where[0] == "value" \
                        and arg not in SIZE_ARGUMENTS:
                    constants[named[arg]] = where[1]
        key = recipe_key(("sequence", group, _structure(part, first + start, ranges)),
                         device, astuple(target))
        found[start] = OneKernel(key, constants, part, first + start, target, ranges, group)
    return found


def sequence_kernel(steps: Sequence[tuple[Any, tuple]], first: int, target: Target,
                    ranges: dict[int, Range], group: int | None = None) -> lp.LoopKernel:
    """One kernel computing the results of *steps* (see :func:`one_kernels`)
    in sequential loops, its arrays named by place; with *group*, one
    work-group of that many work-items sharing each step's largest output
    loop, with a barrier between steps. NotApplicable if a step cannot be
    lowered so."""
    parts: list[lp.LoopKernel] = []
    flow: list[tuple[str, int, int]] = []
    for j, ((step, sources), named) in enumerate(zip(steps, _placed_names(steps, first))):
        placed = dict(sources)
        scalars = step.compiled.scalars if step.compiled is not None else frozenset()
        inputs: dict[Node, KernelInput] = {}
        fixed: dict[Node, Range] = {}
        for name, node in step.args:
            if name in SIZE_ARGUMENTS:
                continue
            where = placed[name]
            inputs[node] = KernelInput(node, named[name],
                                       name in scalars if isinstance(where, int) else True)
            if isinstance(where, int):
                if where in ranges:
                    fixed[node] = ranges[where]
                if where >= first:
                    flow.append((f"v{where}", where - first, j))
        part = sequential_kernel(step.node, inputs, f"v{first + j}", fixed)
        prefix = f"s{j}_"
        part = _prefixed_ids(
            lp.rename_inames_in_batch(part, {i: prefix + i for i in part.all_inames()}), prefix)
        if group is not None:
            part = _spread(part, step.node, prefix, f"v{first + j}", group)
        parts.append(part)
    fused = lp.fuse_kernels(parts, suffixes=[f"_s{j}" for j in range(len(parts))],
                            data_flow=flow)
    if group is not None:
        fused = _with_barriers(fused, [[i.id for i in part.instructions] for part in parts])
    logger.info("%d kernels of a compiled program as one kernel (work %d, %s)",
                len(parts), program_work([step for step, _ in steps]),
                f"{group} work-items" if group else "one work-item")
    wide = any(_size(step.node) > INDEX_LIMIT for step, _ in steps)
    fused = fused.copy(name="lazyarray_program",
                       target=lp.PyOpenCLTarget(fp_contract=False, math_f32=target.math_f32,
                                                math_f64=target.math_f64),
                       index_dtype=np.dtype(np.int64 if wide else np.int32))
    return lp.set_options(fused, no_numpy=True)


def _prefixed_ids(part: lp.LoopKernel, prefix: str) -> lp.LoopKernel:
    """*part* with its instruction ids prefixed (unique among the steps)."""
    ids = {i.id: prefix + i.id for i in part.instructions}
    return part.copy(instructions=tuple(
        i.copy(id=ids[i.id], depends_on=frozenset(ids.get(d, d) for d in i.depends_on),
               no_sync_with=frozenset((ids.get(a, a), scope) for a, scope in i.no_sync_with))
        for i in part.instructions))


def _spread(part: lp.LoopKernel, node: Node, prefix: str, out: str, group: int
            ) -> lp.LoopKernel:
    """Step *part* (inames renamed with *prefix*) with its output loops (not
    a scan's own axis) joined into one that *group* work-items share (where
    they cannot be joined, the largest of them; where there is none, the
    result written by the first)."""
    if is_kind(node, "reduce"):
        loops = [(f"{prefix}i{k}", n) for k, n in enumerate(node.arg.shape)  # type: ignore[attr-defined]
                 if k not in node.axes]                                   # type: ignore[attr-defined]
    else:
        # (a scan's own axis stays sequential in each work-item)
        scanned = node.axis if is_kind(node, "scan") else None       # type: ignore[attr-defined]
        loops = [(f"{prefix}i{k}", n) for k, n in enumerate(node.shape) if k != scanned]
    loops = [loop for loop in loops if loop[0] in part.all_inames()]
    boxed = _one_box(part, loops) if len(loops) > 1 else None
    if boxed is not None:
        # (every output element its own work: the work-items share them all)
        flat = f"{prefix}flat"
        part = lp.join_inames(boxed, [name for name, _ in loops], flat)
        return lp.split_iname(part, flat, group, inner_tag="l.0")
    if loops:
        iname = max(loops, key=lambda loop: loop[1])[0]
        return lp.split_iname(part, iname, group, inner_tag="l.0")
    unit = f"{prefix}unit"
    insns = tuple(i.copy(within_inames=i.within_inames | {unit}) if out in i.assignee_names()
                  else i for i in part.instructions)
    return lp.tag_inames(part.copy(domains=(*part.domains, box(unit, 1)), instructions=insns),
                         {unit: "l.0"})


def _one_box(part: lp.LoopKernel, loops: list[tuple[str, int]]) -> lp.LoopKernel | None:
    """*part* with the domains ``0 <= i < n`` of its *loops* (``(i, n)``) as
    one domain, or None where some loop's domain is not such a box alone."""
    extents = dict(loops)
    places = []
    for k, dom in enumerate(part.domains):
        declared = dom.get_var_names(isl.dim_type.set)
        if set(declared) & extents.keys():
            if len(declared) != 1 or not dom.is_equal(box(declared[0],
                                                          extents[declared[0]])):
                return None
            places.append(k)
    if len(places) != len(loops):
        return None
    merged = domain([name for name, _ in loops],
                    *(b for name, n in loops for b in bounds(name, n)))
    kept = [d for k, d in enumerate(part.domains) if k not in places]
    kept.insert(places[0], merged)
    return part.copy(domains=tuple(kept))


def _with_barriers(knl: lp.LoopKernel, stages: list[list[str]]) -> lp.LoopKernel:
    """*knl* with a work-group barrier (global memory fence) between each
    step's instructions (*stages*: their ids, in order) and the next's; the
    steps' reads of what earlier steps wrote then need no other
    synchronization (one work-group: no global barrier)."""
    barriers = []
    after: dict[str, str] = {}
    earlier: set[str] = set()
    quiet: dict[str, frozenset] = {}
    for j in range(1, len(stages)):
        name = f"step_barrier_{j}"
        barriers.append(lp.BarrierInstruction(
            id=name, depends_on=frozenset(stages[j - 1]), synchronization_kind="local",
            mem_kind="global"))
        earlier |= set(stages[j - 1])
        for insn_id in stages[j]:
            after[insn_id] = name
            quiet[insn_id] = frozenset((e, "any") for e in earlier)
    insns = tuple(i.copy(depends_on=i.depends_on | {after[i.id]},
                         no_sync_with=i.no_sync_with | quiet[i.id])
                  if i.id in after else i for i in knl.instructions)
    return knl.copy(instructions=(*insns, *barriers))


#: the sequential kernels built, by (disk key, queue)
_LAUNCHES: dict[tuple[str, int], SequenceLaunch] = {}
#: the most sequential kernels kept (then the table starts afresh: programs
#: that keep their launch keep it alive, others load it from its recipe)
LAUNCHES_KEPT = 256


class SequenceLaunch:
    """A program's sequential kernel built for one queue, with its argument
    slots by position: a run allocates the steps' results, sets the
    arguments and enqueues one work-item. Programs of one structure share it."""

    @classmethod
    def build(cls, one: OneKernel, queue: cl.CommandQueue, values: list,
              params: Sequence[Any], results: Sequence[Node]) -> SequenceLaunch | None:
        """The launch of *one* on *queue* for a call whose arrays and
        constants are *values*, whose steps compute *results*: built before
        (in this process, or from its disk recipe), else lowered, generated
        and built now; None (logged) if it cannot be built."""
        found = _LAUNCHES.get((one.key, queue.int_ptr))
        if found is not None:
            return found
        try:
            recipe = load_recipe(one.key)
            if recipe is None:
                knl = one.kernel()
                example = [*values, *(new_array(queue, n.shape, n.dtype) for n in results)]
                compiled = lp.compile_launches(knl, queue, _arguments(knl, example, params,
                                                                      one.constants))
                recipe = Recipe(compiled.source, tuple(
                    (launch.function_name, launch.global_size, launch.local_size,
                     launch.slots) for launch in compiled.launches))
                if len(recipe.launches) != 1:
                    raise NotApplicable("a sequential program is one launch")
                store_recipe(one.key, recipe)
            program = compile_program(queue.context, recipe.source)
            launch = cls(program, recipe.launches[0], queue, one.constants, results)
        except (KernelcoreError, NotApplicable, cl.Error) as error:
            logger.warning("a compiled program runs kernel by kernel: its one-kernel "
                           "form failed (%s)", error)
            return None
        if len(_LAUNCHES) >= LAUNCHES_KEPT:
            _LAUNCHES.clear()
        return _LAUNCHES.setdefault((one.key, queue.int_ptr), launch)

    def __init__(self, program: cl.Program, launch: tuple, queue: cl.CommandQueue,
                 constants: dict[str, Any], results: Sequence[Node]):
        name, self.global_size, self.local_size, arguments = launch
        kernel: Any = cl.Kernel(program, name)
        self.kernel = kernel
        self.kept: list[cla.Array] = []
        slots: list[tuple[int, Any]] = []
        for k, spec in enumerate(arguments):
            if spec[0] == "array":
                slots.append((k, int(spec[1][1:])))
            elif spec[0] == "scalar":
                name = spec[1]
                slots.append((k, ("param", int(name[1:])) if name[0] == "p"
                              else ("value", constants[name])))
            elif spec[0] == "temporary":
                temp = cla.empty(queue, (max(spec[2], 1),), np.uint8)
                self.kept.append(temp)
                kernel.set_arg(k, temp.base_data)
            else:
                kernel.set_arg(k, spec[1])
        self.slots = tuple(slots)
        self._lock = threading.Lock()
        self.pool = memory_pool(queue)
        self.device = queue.device
        self.results = [(node.shape, node.dtype) for node in results]
        self.templates = [template_of(queue, shape or (1,), dtype)
                          for shape, dtype in self.results]
        #: the buffer or number each argument was last set to (an argument
        #: that has not changed since the last call is not set again)
        self._set: list[Any] = [None] * len(arguments)
        #: by result, the array that holds it in every call where only the
        #: kernel reads it (None: a new array each call): an in-order queue
        #: runs one call's kernel after the last one's
        in_order = not (queue.properties
                        & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self._scratch: list[cla.Array | None] | None = (
            [None] * len(self.results) if in_order else None)

    def _new_result(self, k: int) -> cla.Array:
        template = self.templates[k]
        try:
            data = self.pool(template.nbytes or 1)
        except cl.Error as error:
            raise device_memory_error(error, template.nbytes, self.device) from None
        array = with_data(template, data)
        return array if self.results[k][0] else array.reshape(())

    def results_for(self, read_after: frozenset[int] | None = None) -> list[cla.Array]:
        """Arrays for the steps' results: new ones for the results in
        *read_after* (positions among the results: those the call returns or
        later work reads; None: all), the launch's own for the others."""
        scratch = self._scratch
        if scratch is None or read_after is None:
            return [self._new_result(k) for k in range(len(self.results))]
        arrays = []
        for k in range(len(self.results)):
            if k in read_after:
                arrays.append(self._new_result(k))
                continue
            own = scratch[k]
            if own is None:
                own = scratch[k] = self._new_result(k)
            arrays.append(own)
        return arrays

    def run(self, queue: cl.CommandQueue, values: list, params: Sequence[Any],
            read_after: frozenset[int] | None = None) -> None:
        """Append the steps' results to *values* (the call's arrays and the
        constants), computed by one launch; *read_after*: see
        :meth:`results_for`."""
        kernel = self.kernel
        last = self._set
        with self._lock:
            values.extend(self.results_for(read_after))
            for k, where in self.slots:
                if where.__class__ is int:
                    value = values[where].base_data
                else:
                    value = params[where[1]] if where[0] == "param" else where[1]
                if value is not last[k]:
                    set_kernel_argument(kernel, k, value)
                    last[k] = value
            cl.enqueue_nd_range_kernel(queue, kernel, self.global_size, self.local_size)


def _arguments(knl: lp.LoopKernel, values: list, params: Sequence[Any],
               constants: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call of the sequential kernel *knl* by name: the
    arrays of *values* (0-d ones as one element), parameters, constants."""
    arguments: dict[str, Any] = {}
    for arg in knl.args:
        name = arg.name
        if name[0] == "v":
            array = values[int(name[1:])]
            arguments[name] = array if array.shape else array.reshape(1)
        elif name[0] == "p":
            arguments[name] = params[int(name[1:])]
        else:
            arguments[name] = constants[name]
    return arguments


__all__ = ["SEQUENCE_WORK", "SEQUENCE_GROUP", "program_work", "sequence_runs",
           "constant_ranges", "one_kernels", "OneKernel", "sequence_kernel", "SequenceLaunch"]
