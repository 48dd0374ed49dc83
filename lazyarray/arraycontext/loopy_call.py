"""``actx.call_loopy``: a loopy translation unit as a node of the lazy graph.

The program's entry kernel is re-created in kernelcore (loopy's API, see
docs/loopy-compat.md): its domains (as isl text), instructions (loopy's
expressions rewritten into kernelcore's: reductions, type casts, resolved
functions), arguments, temporaries and iname tags. A kernel that tags no
iname for the device gets one: the outermost loop that all instructions
share and that every written array is indexed by, as its own axis, is
split over work-groups and work-items.

Each call becomes a :class:`lazyarray.calls.ExternalCall` on the arrays it
reads, with one :class:`~lazyarray.calls.CallOutput` per written argument:
lazy arrays that later work reads, planned and run with everything else
(when a value is needed, or as a step of ``actx.compile``'s program, which
replays it). The output shapes and dtypes are worked out when the call is
made, from the arguments' shapes and dtypes (domain parameters are solved
from array extents, as loopy's executor does).

Programs that cannot be re-created (other instruction kinds than
assignments, calls of other kernels, non-C layouts, ...) run eagerly through
loopy's own executor, outside ``actx.compile`` (inside, an error names what
was not translated).

Public names: LoopyCaller, LoopyCallee, translate, Untranslatable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pymbolic.primitives as prim
import pyopencl as cl
import pyopencl.array as cla
from pymbolic import evaluate

import kernelcore as lp2
from kernelcore.ir.expr import IdentityMapper, Reduction, TypeCast, WalkMapper, get_dependencies
from kernelcore.runtime.invoke import get_executor
from kernelcore.version import MOST_RECENT_LANGUAGE_VERSION

import lazyarray as la
from lazyarray.arraycontext.freeze import compute_together
from lazyarray.arraycontext.tags import TaggedArray
from lazyarray.calls import call
from lazyarray.errors import LazyArrayError
from lazyarray.graph import Input, Node
from lazyarray.handle import LazyArray
from lazyarray.run import DEVICE_LOCK, adopt, using_queue
from lazyarray.run.launch import new_array
from lazyarray.tracing import TRACING

logger = logging.getLogger(__name__)

#: the work-items of a work-group of the loop a translated kernel spreads
#: over the device (when the loopy kernel tags none)
GROUP_SIZE = 64


class Untranslatable(LazyArrayError):
    """A loopy program that kernelcore cannot re-create (the message says why)."""


# {{{ loopy -> kernelcore

def _np_dtype(t: Any) -> np.dtype | None:
    """The NumPy dtype of a loopy type (None: not known yet)."""
    import loopy as lp
    if t is None or t is lp.auto:
        return None
    dtype = getattr(t, "numpy_dtype", None)
    if dtype is None:
        raise Untranslatable(f"type {t!r} is not a NumPy type")
    return np.dtype(dtype)


class _FromLoopy(IdentityMapper):
    """Loopy's expressions as kernelcore's (pymbolic's own nodes are shared)."""

    def map_reduction(self, expr, *args, **kwargs):
        name = str(expr.operation)
        if name not in ("sum", "product", "max", "min", "any", "all"):
            raise Untranslatable(f"reduction '{name}' (several results or user-defined)")
        return Reduction(name, tuple(expr.inames), self.rec(expr.expr))

    def map_type_cast(self, expr, *args, **kwargs):
        return TypeCast(_np_dtype(expr.type), self.rec(expr.child))

    def map_resolved_function(self, expr, *args, **kwargs):
        return prim.Variable(expr.name)

    def map_tagged_variable(self, expr, *args, **kwargs):
        return prim.Variable(expr.name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("map_"):
            def refuse(expr, *args, **kwargs):
                raise Untranslatable(f"loopy expression {type(expr).__name__} ({expr})")
            return refuse
        raise AttributeError(name)


def _shape(shape: Any, conv: _FromLoopy) -> Any:
    import loopy as lp
    if shape is None or shape is lp.auto:
        return lp2.auto
    return tuple(conv(e) for e in shape)


def _check_layout(arg: Any) -> None:
    """Refuse arrays not in C order (lazy arrays are stored in C order)."""
    import loopy as lp
    from loopy.kernel.array import FixedStrideArrayDimTag
    if getattr(arg, "offset", 0) not in (0, None, lp.auto):
        raise Untranslatable(f"argument '{arg.name}' has an offset argument")
    tags = getattr(arg, "dim_tags", None)
    if tags is None:
        return
    n = len(tags)
    for k, tag in enumerate(tags):
        if not isinstance(tag, FixedStrideArrayDimTag) or tag.layout_nesting_level != n - 1 - k:
            raise Untranslatable(f"argument '{arg.name}' is not laid out in C order")


def _argument(arg: Any, conv: _FromLoopy) -> Any:
    import loopy as lp
    from loopy.kernel.data import ArrayArg, ConstantArg
    if isinstance(arg, lp.ValueArg):
        return lp2.ValueArg(arg.name, _np_dtype(arg.dtype))
    if isinstance(arg, (ArrayArg, ConstantArg)):
        _check_layout(arg)
        make = lp2.ConstantArg if isinstance(arg, ConstantArg) else lp2.GlobalArg
        return make(arg.name, _np_dtype(arg.dtype), shape=_shape(arg.shape, conv))
    raise Untranslatable(f"argument '{arg.name}' is a {type(arg).__name__}")


def _temporary(t: Any, conv: _FromLoopy) -> Any:
    import loopy as lp
    from loopy.kernel.data import AddressSpace
    space = t.address_space
    aspace: Any
    if space is lp.auto or space is None:
        aspace = lp2.auto
    else:
        aspace = lp2.AddressSpace[AddressSpace.stringify(space).upper()]
    if getattr(t, "base_storage", None) is not None:
        raise Untranslatable(f"temporary '{t.name}' shares storage")
    return lp2.TemporaryVariable(t.name, _np_dtype(t.dtype), shape=_shape(t.shape, conv) or (),
                                 address_space=aspace, initializer=t.initializer,
                                 read_only=bool(t.read_only))


def _instruction(insn: Any, conv: _FromLoopy) -> Any:
    import loopy as lp
    common = dict(id=insn.id, depends_on=frozenset(insn.depends_on),
                  within_inames=frozenset(insn.within_inames), priority=insn.priority,
                  no_sync_with=frozenset(insn.no_sync_with),
                  predicates=frozenset(conv(p) for p in insn.predicates))
    if isinstance(insn, lp.Assignment):
        if insn.atomicity:
            raise Untranslatable(f"instruction '{insn.id}' is atomic")
        return lp2.Assignment(assignee=conv(insn.assignee), expression=conv(insn.expression),
                              **common)
    if isinstance(insn, lp.NoOpInstruction):
        return lp2.NoOpInstruction(**common)
    raise Untranslatable(f"instruction '{insn.id}' is a {type(insn).__name__}")


class _Accesses(WalkMapper):
    """The subscripts of each variable in an expression, and its bare reads."""

    def __init__(self) -> None:
        self.subscripts: dict[str, list[tuple]] = {}
        self.bare: set[str] = set()

    def map_subscript(self, expr, *args, **kwargs):
        if isinstance(expr.aggregate, prim.Variable):
            index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            self.subscripts.setdefault(expr.aggregate.name, []).append(index)
            for i in index:
                self.rec(i)
        else:
            super().map_subscript(expr, *args, **kwargs)

    def map_variable(self, expr, *args, **kwargs):
        self.bare.add(expr.name)


def _spread_iname(knl: Any, insns: list) -> str | None:
    """The loop of the (kernelcore) instructions *insns* of loopy kernel *knl*
    that can run in parallel: every instruction is inside it and every array
    written (argument or temporary with a shape) is indexed by it alone, on
    the same axis, wherever it is accessed (so its iterations touch disjoint
    parts). The outermost such loop, or None."""
    import islpy as isl
    if not insns or not all(isinstance(i, lp2.Assignment) for i in insns):
        return None
    common = frozenset.intersection(*(frozenset(i.within_inames) for i in insns))
    if not common:
        return None
    seen = _Accesses()
    written = set()
    for insn in insns:
        seen(insn.assignee)
        seen(insn.expression)
        for p in insn.predicates:
            seen(p)
        target: Any = insn.assignee
        if isinstance(target, prim.Subscript):
            target = target.aggregate
        written.add(getattr(target, "name", str(target)))
    scalars = {t.name for t in knl.temporary_variables.values() if not t.shape}
    arrays = written - scalars

    def disjoint(g: str) -> bool:
        for name in arrays:
            if name in seen.bare:
                return False
            indices = seen.subscripts.get(name, [])
            axes = set(range(min((len(ix) for ix in indices), default=0)))
            for ix in indices:
                axes &= {k for k, e in enumerate(ix) if e == prim.Variable(g)}
            if not axes:
                return False
        return True

    order = [n for d in knl.domains for n in d.get_var_names(isl.dim_type.set)]
    for g in sorted(common, key=lambda n: order.index(n) if n in order else len(order)):
        if disjoint(g):
            return g
    return None


class Translation:
    """A loopy program's entry kernel re-created in kernelcore: *kernel* as
    written, *spread* with a loop spread over the device (None: the kernel
    tags its own, or no loop can be)."""

    def __init__(self, kernel: Any, spread: Any, name: str):
        self.kernel = kernel
        self.spread = spread
        self.name = name


def _entry(k: Any) -> Any:
    """The kernel of a kernelcore translation unit (or the kernel itself)."""
    return getattr(k, "default_entrypoint", k)


def _assumptions(knl: Any) -> Any:
    """The loopy kernel's assumptions on its parameters (None: none)."""
    import islpy as isl
    a = knl.assumptions
    if a is None or a.is_universe():
        return None
    return isl.Set.from_basic_set(a) if isinstance(a, isl.BasicSet) else a


def translate(t_unit: Any) -> Translation:
    """*t_unit*'s entry kernel as a kernelcore kernel (raises
    :class:`Untranslatable`)."""
    import loopy as lp
    from loopy.kernel.data import InameImplementationTag
    knl = getattr(t_unit, "default_entrypoint", t_unit)
    if knl.substitutions:
        knl = lp.expand_subst(knl)
    conv = _FromLoopy()
    data = [_argument(a, conv) for a in knl.args]
    data += [_temporary(t, conv) for t in knl.temporary_variables.values()]
    insns = [_instruction(i, conv) for i in knl.instructions]
    tags = {name: str(tag) for name, iname in knl.inames.items() for tag in iname.tags
            if isinstance(tag, InameImplementationTag)}
    try:
        made = lp2.make_kernel(
            [str(d) for d in knl.domains], insns, data, name=knl.name,
            assumptions=_assumptions(knl),
            options=lp2.Options(return_dict=True, no_numpy=True),
            lang_version=MOST_RECENT_LANGUAGE_VERSION,
            silenced_warnings=list(knl.silenced_warnings) or None,
            index_dtype=_np_dtype(knl.index_dtype) or np.int32)
        if tags:
            made = lp2.tag_inames(made, tags)
    except Untranslatable:
        raise
    except Exception as e:
        raise Untranslatable(f"kernelcore refused the kernel: {type(e).__name__}: {e}") from e
    spread = None
    parallel = any(t.startswith(("g.", "l.")) for t in tags.values())
    g = None if parallel else _spread_iname(knl, insns)
    if g is not None:
        try:
            spread = lp2.split_iname(made, g, GROUP_SIZE, outer_tag="g.0", inner_tag="l.0")
        except Exception as e:          # (then the kernel runs as written)
            logger.info("call_loopy: kept loop %s of %s sequential: %s", g, knl.name, e)
    return Translation(made, spread, knl.name)

# }}}


# {{{ callee

class _Described:
    """An argument known by its shape and dtype (for typing the kernel)."""

    def __init__(self, shape: tuple, dtype: np.dtype):
        self.shape = shape
        self.dtype = dtype


def _solve(typed: Any, arrays: Mapping[str, tuple], known: dict[str, Any]) -> dict[str, Any]:
    """The kernel's parameters: *known* ones, and those an array extent in
    *arrays* (name -> (shape, dtype)) gives as a linear function of one
    unknown parameter."""
    params = dict(known)
    names = [a.name for a in typed.args if isinstance(a, lp2.ValueArg)]
    progress = True
    while progress:
        progress = False
        for name, (shape, _) in arrays.items():
            arg = typed.arg_dict.get(name)
            ashape = getattr(arg, "shape", None)
            if not isinstance(ashape, tuple) or len(ashape) != len(shape):
                continue
            for extent, n in zip(ashape, shape):
                unknown = [d for d in get_dependencies(extent) if d not in params]
                if len(unknown) != 1 or unknown[0] not in names:
                    continue
                v = unknown[0]
                d = evaluate(extent, {**params, v: 0})
                c = evaluate(extent, {**params, v: 1}) - d
                if c and evaluate(extent, {**params, v: 2}) == d + 2 * c and (n - d) % c == 0:
                    params[v] = (n - d) // c
                    progress = True
    return params


class LoopyCallee:
    """A translated loopy kernel typed for one signature of a call: what a
    :class:`~lazyarray.calls.ExternalCall` runs (see there)."""

    def __init__(self, translation: Translation, arrays: Mapping[str, tuple],
                 scalars: Mapping[str, Any], traced: Mapping[str, np.dtype]):
        kwargs: dict[str, Any] = {n: _Described(s, d) for n, (s, d) in arrays.items()}
        kwargs.update(scalars)
        kwargs.update({n: d.type(0) for n, d in traced.items()})
        self.executor = None
        for knl in (translation.spread, translation.kernel):
            if knl is None:
                continue
            try:
                executor = get_executor(_entry(knl), kwargs)
                executor.code       # (code generation happens here)
            except Exception as e:
                if knl is translation.kernel:
                    raise Untranslatable(f"kernelcore could not generate the kernel: "
                                         f"{type(e).__name__}: {e}") from e
                logger.info("call_loopy: %s runs sequentially: %s", translation.name, e)
                continue
            self.executor = executor
            break
        assert self.executor is not None
        typed = self.executor.knl
        #: the typed kernelcore kernel (``la.explain`` shows its code)
        self.kernel = typed
        values = {a.name for a in typed.args if isinstance(a, lp2.ValueArg)}
        self.params = _solve(typed, arrays, {n: v for n, v in scalars.items() if n in values})
        self.value_args = values
        written = set(typed.get_written_variables())
        self.outputs: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for arg in typed.args:
            if arg.name not in written or isinstance(arg, lp2.ValueArg):
                continue
            try:
                shape = tuple(int(evaluate(e, self.params)) for e in arg.shape)
            except Exception as e:
                raise Untranslatable(f"the shape {arg.shape} of output '{arg.name}' is not "
                                     "known from the arguments' shapes") from e
            dtype = getattr(arg.dtype, "numpy_dtype", arg.dtype)
            self.outputs[arg.name] = (shape, np.dtype(dtype))
        #: outputs the caller also passes (the kernel updates a copy)
        self.updated = frozenset(self.outputs) & frozenset(arrays)

    def run(self, queue: cl.CommandQueue, values: Mapping[str, Any],
            events: list | None) -> dict[str, cla.Array]:
        args: dict[str, Any] = dict(self.params)
        for name, v in values.items():
            if name in self.value_args:
                args[name] = v.get(queue=queue)[()] if isinstance(v, cla.Array) else v
            elif name in self.updated:
                copy = new_array(queue, v.shape, v.dtype)
                source: Any = v.base_data
                dest: Any = copy.base_data
                if v.nbytes:
                    cl.enqueue_copy(queue, dest, source, byte_count=v.nbytes,
                                    src_offset=v.offset)
                args[name] = copy
            else:
                args[name] = v
        for name, (shape, dtype) in self.outputs.items():
            if name not in args:
                args[name] = new_array(queue, shape, dtype)
        assert self.executor is not None
        evt, result = self.executor(queue, args)
        if events is not None:
            events.append(evt)
        return {name: result[name] for name in self.outputs}

# }}}


class LoopyCaller:
    """Calls of loopy programs for an array context computing on *queue*:
    lazy outputs through a translation into kernelcore, else (programs that
    do not translate, outside a compiled function) run eagerly by loopy with
    *allocator*, their results wrapped by *wrap*."""

    def __init__(self, queue: cl.CommandQueue, allocator: Any,
                 wrap: Callable[[cla.Array], Any]):
        self.queue = queue
        self.allocator = allocator
        self._wrap = wrap
        self._executors: dict[int, tuple[Any, Any]] = {}
        self._translations: dict[int, tuple[Any, Translation | Untranslatable]] = {}
        self._callees: dict[tuple, tuple[Any, LoopyCallee | Untranslatable]] = {}

    def translation(self, t_unit: Any) -> Translation:
        """*t_unit* re-created in kernelcore (once per translation unit)."""
        entry = self._translations.get(id(t_unit))
        if entry is None or entry[0] is not t_unit:
            try:
                made: Translation | Untranslatable = translate(t_unit)
            except Untranslatable as e:
                made = e
            entry = (t_unit, made)
            self._translations[id(t_unit)] = entry
        if isinstance(entry[1], Untranslatable):
            raise entry[1]
        return entry[1]

    def __call__(self, t_unit: Any, **kwargs: Any) -> Mapping[str, Any]:
        options = getattr(getattr(t_unit, "default_entrypoint", t_unit), "options", None)
        if options is not None and not options.return_dict:
            raise LazyArrayError("call_loopy needs a program with return_dict set "
                                 "(arraycontext's make_loopy_program sets it)")
        try:
            return self._lazy(t_unit, kwargs)
        except Untranslatable as e:
            if TRACING.names:
                raise LazyArrayError(
                    f"call_loopy inside a compiled function: this loopy program was not "
                    f"translated into the lazy graph ({e}); call it outside "
                    "actx.compile") from e
            logger.warning("call_loopy: running %s eagerly (%s)",
                           getattr(t_unit, "name", "the program"), e)
            return self._eager(t_unit, kwargs)

    # {{{ lazy

    def _lazy(self, t_unit: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        translation = self.translation(t_unit)
        nodes: dict[str, Node] = {}
        arrays: dict[str, tuple] = {}
        scalars: dict[str, Any] = {}
        traced: dict[str, np.dtype] = {}
        with using_queue(self.queue):
            for name, v in kwargs.items():
                if isinstance(v, (int, float, complex, np.generic)) and not isinstance(
                        v, np.ndarray):
                    scalars[name] = v
                    continue
                node = self._node(v)
                nodes[name] = node
                if node.ndim == 0 and name in _value_names(translation):
                    traced[name] = node.dtype
                else:
                    arrays[name] = (node.shape, node.dtype)
            key = (id(t_unit), tuple(sorted((n, s, d.str) for n, (s, d) in arrays.items())),
                   tuple(sorted((n, type(v).__name__, repr(v)) for n, v in scalars.items())),
                   tuple(sorted((n, d.str) for n, d in traced.items())))
            entry = self._callees.get(key)
            if entry is None or entry[0] is not t_unit:
                try:
                    made: LoopyCallee | Untranslatable = LoopyCallee(
                        translation, arrays, scalars, traced)
                except Untranslatable as e:
                    made = e
                entry = (t_unit, made)
                self._callees[key] = entry
            callee = entry[1]
            if isinstance(callee, Untranslatable):
                raise callee
            outputs = call(callee, nodes)
        return {name: TaggedArray(node) for name, node in outputs.items()}

    def _node(self, v: Any) -> Node:
        """The graph node of an argument (arrays of this or another context,
        NumPy arrays)."""
        if isinstance(v, LazyArray):
            return v.node
        if isinstance(v, cla.Array):
            thawed = self._wrap(v)
            if isinstance(thawed, LazyArray):
                return thawed.node
            return Input(adopt(v))
        if isinstance(v, np.ndarray):
            return la.asarray(v).node
        raise TypeError(f"call_loopy: cannot pass a {type(v).__name__}")

    # }}}

    # {{{ eager

    def _executor(self, t_unit: Any) -> Any:
        entry = self._executors.get(id(t_unit))
        if entry is None or entry[0] is not t_unit:
            entry = (t_unit, t_unit.executor(self.queue.context))
            self._executors[id(t_unit)] = entry
        return entry[1]

    def _eager(self, t_unit: Any, kwargs: dict[str, Any]) -> Mapping[str, Any]:
        lazy = [k for k, v in kwargs.items() if isinstance(v, LazyArray)]
        values = compute_together([kwargs[k].node for k in lazy], self.queue)
        args = dict(kwargs)
        for k, v in zip(lazy, values):
            args[k] = v.with_queue(self.queue) if v.queue is not self.queue else v
        for k, v in args.items():
            if isinstance(v, cla.Array) and v.queue is not self.queue:
                args[k] = v.with_queue(self.queue)
            elif isinstance(v, np.ndarray) and v.ndim:
                args[k] = cla.to_device(self.queue, v)
        with DEVICE_LOCK:
            _, result = self._executor(t_unit)(self.queue, allocator=self.allocator, **args)
        if not isinstance(result, Mapping):
            raise LazyArrayError("call_loopy needs a program with return_dict set "
                                 "(arraycontext's make_loopy_program sets it)")
        return {name: self._wrap(ary) for name, ary in result.items()}

    # }}}


def _value_names(translation: Translation) -> frozenset[str]:
    """The names of the scalar (value) arguments of a translated kernel."""
    return frozenset(a.name for a in _entry(translation.kernel).args
                     if isinstance(a, lp2.ValueArg))


__all__ = ["LoopyCaller", "LoopyCallee", "Translation", "translate", "Untranslatable"]
