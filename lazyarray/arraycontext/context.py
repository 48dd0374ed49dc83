"""LazyarrayArrayContext: arraycontext's ``ArrayContext`` on lazy arrays.

Arrays are :class:`~lazyarray.LazyArray` handles (tagged ones are
:class:`~lazyarray.arraycontext.tags.TaggedArray`); work recorded on them is
planned into fused kernels when a value is needed: by :meth:`freeze`,
:meth:`to_numpy`, a scalar conversion, or a compiled function's call. All of
it runs on the context's queue (:func:`lazyarray.run.using_queue`).

Frozen arrays are arraycontext's ``TaggableCLArray`` (a ``pyopencl.array.Array``
carrying tags) on the context's queue, so arraycontext's eager
``PyOpenCLArrayContext`` thaws them, and this context thaws what it froze.

This module imports arraycontext; :mod:`lazyarray.arraycontext` loads it on
first use.

Public names: LazyarrayArrayContext, LazyarrayFakeNumpyNamespace.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from arraycontext import ArrayContext, with_array_context
from arraycontext.fake_numpy import BaseFakeNumpyNamespace
from arraycontext.impl.pyopencl.taggable_cl_array import Axis as CLAxis
from arraycontext.impl.pyopencl.taggable_cl_array import TaggableCLArray, to_tagged_cl_array

import lazyarray as la
from lazyarray.arraycontext.compile import TRACED_INPUTS, CompiledFunction
from lazyarray.arraycontext.freeze import (
    compute_together,
    computed_on_host,
    numpy_values,
    store_broadcast_operands,
    walk_all,
)
from lazyarray.arraycontext.loopy_call import LoopyCaller
from lazyarray.arraycontext.namespace import LazyNumpyFunctions
from lazyarray.arraycontext.pending import defer, is_pending, settle
from lazyarray.arraycontext.sparse import csr_matmul
from lazyarray.arraycontext.tags import (
    Axis,
    TaggedArray,
    axes_of,
    normalize_tags,
    tagged,
    tags_of,
    with_axis_tagged,
)
from lazyarray.arraycontext.traversal import ContainerWalker
from lazyarray.graph import Input, Node, computed
from lazyarray.handle import LazyArray
from lazyarray.mapper import is_kind
from lazyarray.run import adopt, default_queue, using_queue
from lazyarray.run.launch import NO_EVENTS, template_of, with_data


class LazyarrayFakeNumpyNamespace(LazyNumpyFunctions, BaseFakeNumpyNamespace):
    """``actx.np``: lazyarray's functions over arraycontext's containers,
    with arraycontext's ``linalg`` (norms)."""

    def __init__(self, array_context: LazyarrayArrayContext):
        object.__setattr__(self, "_walker", array_context._walker)
        object.__setattr__(self, "_queue", array_context.queue)
        super().__init__(array_context)


class LazyarrayArrayContext(ArrayContext):
    """An array context computing lazily with lazyarray on *queue* (None:
    lazyarray's default queue); *allocator* is used by :meth:`call_loopy`.
    *single_launch*: whether a compiled function runs as one sequential
    kernel where it can (None: when its work is small, on CPU devices; see
    :mod:`lazyarray.run.sequence`)."""

    array_types = (LazyArray,)

    def __init__(self, queue: cl.CommandQueue | None = None, allocator: Any = None,
                 single_launch: bool | None = None):
        if queue is None:
            queue = default_queue()
        self.queue = queue
        self.context = queue.context
        self.allocator = allocator
        self.single_launch = single_launch
        self._walker = ContainerWalker()
        #: per frozen array thawed (by id, with a weak reference to it): its
        #: node, so that thawing it again gives the same value (see thaw)
        self._thawed: dict[int, tuple[weakref.ref, Input]] = {}
        #: the frozen arrays copied by freeze, by shape, dtype, strides, axes, tags
        self._frozen_templates: dict[tuple, TaggableCLArray] = {}
        super().__init__()
        self._loopy = LoopyCaller(queue, allocator, self._thaw_leaf)

    def _get_fake_numpy_namespace(self) -> BaseFakeNumpyNamespace:
        return LazyarrayFakeNumpyNamespace(self)

    def __repr__(self) -> str:
        return f"<LazyarrayArrayContext on {self.queue.device.name.strip()!r}>"

    # {{{ host transfers

    def from_numpy(self, array: Any) -> Any:
        def leaf(x: Any) -> Any:
            if isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)):
                with using_queue(self.queue):
                    return TaggedArray(la.asarray(np.asarray(x)).node)
            raise TypeError(f"from_numpy: cannot convert a {type(x).__name__}")

        return with_array_context(self._walker.map(leaf, array), actx=self)

    def to_numpy(self, array: Any) -> Any:
        leaves, structure = self._walker.flatten(array)
        for x in leaves:
            if isinstance(x, np.ndarray):
                raise TypeError("to_numpy: a NumPy array is not an array of this context")
        lazy = [k for k, x in enumerate(leaves) if isinstance(x, LazyArray)]
        nodes = [leaves[k].node for k in lazy]
        out = list(leaves)
        on_host = numpy_values(nodes, self.queue) if _untraced(nodes) else None
        with using_queue(self.queue):
            if on_host is not None:
                for k, h in zip(lazy, on_host):
                    out[k] = h
            else:
                for k, v in zip(lazy, compute_together(nodes, self.queue)):
                    out[k] = v.get(queue=self.queue)
            for k, x in enumerate(out):
                if isinstance(x, cla.Array):
                    if is_pending(x):
                        settle()
                    out[k] = _host_copy(x, self.queue)
        return with_array_context(self._walker.unflatten(structure, out), actx=None)

    # }}}

    # {{{ freeze and thaw

    def freeze(self, array: Any) -> Any:
        leaves, structure = self._walker.flatten(array)
        lazy = [k for k, x in enumerate(leaves) if isinstance(x, LazyArray)]
        nodes = [leaves[k].node for k in lazy]
        # (while tracing, work that no call changes is computed later, with
        # the traced program: see lazyarray.arraycontext.pending)
        values = computed_on_host(nodes, self.queue) if _untraced(nodes) else None
        if values is None:
            values = defer(nodes, self.queue) if _deferrable(nodes) \
                else compute_together(nodes, self.queue)
        out = list(leaves)
        for k, v in zip(lazy, values):
            x = leaves[k]
            out[k] = self._frozen(v, tuple(CLAxis(a.tags) for a in axes_of(x)), tags_of(x))
        for k, x in enumerate(out):
            if isinstance(x, cla.Array) and not isinstance(x, TaggableCLArray):
                out[k] = to_tagged_cl_array(x)
        return with_array_context(self._walker.unflatten(structure, out), actx=None)

    def _frozen(self, v: cla.Array, axes: tuple, tags: frozenset) -> TaggableCLArray:
        """The frozen array of the value *v* with *axes* and *tags*: a copy
        of a template made once per shape, dtype, strides, axes and tags,
        holding *v*'s buffer (a third of building one)."""
        data = v.base_data
        if v.offset or not isinstance(data, cl.MemoryObjectHolder):
            return to_tagged_cl_array(v.with_queue(self.queue), axes=axes, tags=tags)
        key = (v.shape, v.dtype, v.strides, axes, tags)
        template = self._frozen_templates.get(key)
        if template is None:
            made = to_tagged_cl_array(v.with_queue(self.queue), axes=axes, tags=tags)
            made.events = NO_EVENTS          # (one in-order queue orders its work)
            _ = made.flags                   # (computed once for the copies)
            made.base_data = None            # (the template holds no buffer)
            if len(self._frozen_templates) >= _TEMPLATES_KEPT:
                self._frozen_templates.clear()
            template = self._frozen_templates[key] = made
        return with_data(template, data)

    def _thaw_leaf(self, x: Any) -> Any:
        if isinstance(x, LazyArray):
            return x
        if not isinstance(x, cla.Array):
            return x
        node = self._thawed_node(x)
        return TaggedArray(node, tags_of(x), tuple(Axis(frozenset(a.tags))
                                                   for a in axes_of(x)))

    def _thawed_node(self, x: cla.Array) -> Input:
        """The node of the frozen array *x*: the same one each time *x* is
        thawed while it lives (frozen arrays do not change), so the work on
        it is recognized as the same (an index array's bounds are checked
        once, see ``lazyarray.ops.shape``)."""
        entry = self._thawed.get(id(x))
        if entry is not None and entry[0]() is x:
            return entry[1]
        if x.context != self.context:
            # another OpenCL context's buffer: through the host
            if is_pending(x):
                settle()
            data = cla.to_device(self.queue, _host_copy(x, x.queue or x.context))
        elif not _c_order(x):
            data = cla.to_device(self.queue, _host_copy(x, self.queue))
        elif not x.offset and isinstance(x.base_data, cl.MemoryObjectHolder):
            # (a copy of lazyarray's template of its shape and dtype: its
            # flags computed once, no events kept)
            data = with_data(template_of(self.queue, x.shape, x.dtype), x.base_data)
        else:
            data = x.with_queue(self.queue)
        with using_queue(self.queue):
            node = Input(adopt(data))
        key = id(x)
        thawed = self._thawed
        self._thawed[key] = (weakref.ref(x, lambda _: thawed.pop(key, None)), node)
        return node

    def thaw(self, array: Any) -> Any:
        return with_array_context(self._walker.map(self._thaw_leaf, array), actx=self)

    # }}}

    # {{{ tags

    def tag(self, tags: Any, array: Any) -> Any:
        tags = normalize_tags(tags)
        return self._walker.map(
            lambda x: tagged(x, tags) if isinstance(x, LazyArray) else x, array)

    def tag_axis(self, iaxis: int, tags: Any, array: Any) -> Any:
        tags = normalize_tags(tags)
        return self._walker.map(
            lambda x: with_axis_tagged(x, iaxis, tags) if isinstance(x, LazyArray) else x,
            array)

    # }}}

    # {{{ products, loopy

    def einsum(self, spec: str, *args: Any, arg_names: tuple[str, ...] | None = None,
               tagged: Any = ()) -> Any:
        if arg_names is not None and len(arg_names) != len(args):
            raise ValueError(f"{len(arg_names)} argument names for {len(args)} arguments")
        with using_queue(self.queue):
            operands = tuple(self._thaw_leaf(a) for a in args)
            # (an operand the product reads many times is stored first)
            store_broadcast_operands(spec, operands)
            result = la.einsum(spec, *operands)
        tags = normalize_tags(tagged)
        return self.tag(tags, result) if tags else result

    def sparse_matmul(self, x1: Any, x2: Any) -> Any:
        shape = tuple(x1.shape)

        def leaf(x: Any) -> Any:
            with using_queue(self.queue):
                return csr_matmul(shape, x1.elem_values, x1.elem_col_indices,
                                  x1.row_starts, x)

        return self._walker.map(leaf, x2)

    def call_loopy(self, t_unit: Any, **kwargs: Any) -> Mapping[str, Any]:
        return self._loopy(t_unit, **kwargs)

    # }}}

    # {{{ compiling

    def compile(self, f: Callable[..., Any]) -> Callable[..., Any]:
        return CompiledFunction(f, self._walker, self.queue, thaw=self._thaw_leaf,
                                wrap_result=lambda r: with_array_context(r, actx=self),
                                single_launch=self.single_launch)

    def outline(self, f: Callable[..., Any], *, id: Hashable | None = None
                ) -> Callable[..., Any]:
        # lazyarray plans the whole graph anyway: an outlined function is
        # inlined into the caller's graph
        return f

    # }}}

    def clone(self) -> LazyarrayArrayContext:
        return type(self)(self.queue, self.allocator, self.single_launch)

    @property
    def permits_inplace_modification(self) -> bool:
        return False

    @property
    def supports_nonscalar_broadcasting(self) -> bool:
        return True

    @property
    def permits_advanced_indexing(self) -> bool:
        return True


def _deferrable(nodes: list[Node]) -> bool:
    """Whether a freeze of *nodes* is put off (:mod:`.pending`): inside a
    trace, none computed, a constant or empty, and none reading the trace's
    arguments, its scalar parameters or an external call."""
    if not TRACED_INPUTS or not nodes or any(
            computed(n) or is_kind(n, "const") or 0 in n.shape for n in nodes):
        return False
    return _untraced(nodes)


def _untraced(nodes: list[Node]) -> bool:
    """Whether no value of *nodes*' graphs reads a trace's placeholders,
    its scalar parameters or an external call (outside a trace: always)."""
    if not TRACED_INPUTS:
        return True
    variant = set().union(*TRACED_INPUTS)
    return not any(n in variant or is_kind(n, "param") or getattr(n, "external", False)
                   for n in walk_all(nodes))


#: the most frozen-array templates a context keeps (then it starts again)
_TEMPLATES_KEPT = 1024


def _c_order(x: cla.Array) -> bool:
    """Whether *x*'s elements lie in C order, without pyopencl's flags
    (computed anew for every array object)."""
    expected = x.dtype.itemsize
    for n, stride in zip(reversed(x.shape), reversed(x.strides)):
        if n != 1 and stride != expected:
            return False
        expected *= n
    return True


def _host_copy(x: cla.Array, queue: Any) -> np.ndarray:
    """*x* on the host (any strides)."""
    if not isinstance(queue, cl.CommandQueue):
        queue = cl.CommandQueue(queue)
    if x.flags.forc:
        return x.get(queue=queue)
    buffer: Any = x.base_data
    base = cla.Array(queue, (buffer.size // x.dtype.itemsize,), x.dtype, data=buffer)
    flat = base.get(queue=queue)
    return np.lib.stride_tricks.as_strided(flat[x.offset // x.dtype.itemsize:], x.shape,
                                           x.strides).copy()


__all__ = ["LazyarrayArrayContext", "LazyarrayFakeNumpyNamespace"]
