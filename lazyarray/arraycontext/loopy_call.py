"""``actx.call_loopy``: a loopy translation unit as a node of the lazy graph.

The program is re-created in kernelcore (:mod:`.loopy_translate`). Each
call becomes a :class:`lazyarray.calls.ExternalCall` on the arrays it
reads, with one :class:`~lazyarray.calls.CallOutput` per written argument:
lazy arrays that later work reads, planned and run with everything else
(when a value is needed, or as a step of ``actx.compile``'s program, which
replays it). The output shapes and dtypes are worked out when the call is
made, from the arguments' shapes and dtypes (domain parameters are solved
from array extents, as loopy's executor does).

Programs that cannot be re-created (C instructions, user-defined
reductions, non-C layouts, ...) run eagerly through loopy's own executor,
outside ``actx.compile`` (inside, an error names what was not translated).

Public names: LoopyCaller, LoopyCallee.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pymbolic import evaluate

import kernelcore as lp2
import lazyarray as la
from kernelcore import get_dependencies, get_executor
from lazyarray.arraycontext.freeze import compute_together
from lazyarray.arraycontext.loopy_translate import (
    Translation,
    Untranslatable,
    entry_kernel,
    translate,
)
from lazyarray.arraycontext.tags import TaggedArray
from lazyarray.calls import call
from lazyarray.errors import LazyArrayError
from lazyarray.graph import Input, Node
from lazyarray.handle import LazyArray
from lazyarray.run import DEVICE_LOCK, adopt, using_queue
from lazyarray.run.launch import new_array
from lazyarray.tracing import TRACING

logger = logging.getLogger(__name__)


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
                executor = get_executor(knl, kwargs)
                _ = executor.code   # (code generation happens here)
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
            logger.warning("call_loopy: running %s eagerly (%s)", entry_kernel(t_unit).name, e)
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
    return frozenset(a.name for a in entry_kernel(translation.kernel).args
                     if isinstance(a, lp2.ValueArg))


__all__ = ["LoopyCaller", "LoopyCallee"]
