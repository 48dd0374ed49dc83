"""``actx.call_loopy``: running a loopy translation unit on the context's
queue.

The call is eager: lazy array arguments are computed (together, as a freeze
does), the program runs on the queue through loopy's executor (one per
translation unit, per OpenCL context), and its outputs come back as lazy
arrays holding the results, ready for further lazy work. Inside
``actx.compile`` the arguments are placeholders without values, so a loopy
call cannot run there: an error says so.

Public names: LoopyCaller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from lazyarray.arraycontext.freeze import compute_together
from lazyarray.errors import LazyArrayError
from lazyarray.handle import LazyArray
from lazyarray.run import DEVICE_LOCK
from lazyarray.tracing import TRACING


class LoopyCaller:
    """Runs loopy programs on *queue* (with *allocator*); *wrap* turns each
    pyopencl output into the context's array."""

    def __init__(self, queue: cl.CommandQueue, allocator: Any,
                 wrap: Callable[[cla.Array], Any]):
        self.queue = queue
        self.allocator = allocator
        self._wrap = wrap
        self._executors: dict[int, tuple[Any, Any]] = {}

    def _executor(self, t_unit: Any) -> Any:
        entry = self._executors.get(id(t_unit))
        if entry is None or entry[0] is not t_unit:
            entry = (t_unit, t_unit.executor(self.queue.context))
            self._executors[id(t_unit)] = entry
        return entry[1]

    def __call__(self, t_unit: Any, **kwargs: Any) -> Mapping[str, Any]:
        if TRACING.names:
            raise LazyArrayError(
                "call_loopy inside a compiled function: loopy programs run eagerly, "
                "on values; call it outside actx.compile")
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


__all__ = ["LoopyCaller"]
