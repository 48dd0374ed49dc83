"""A host replay compiled: the elementwise part of a jitted step as one C
loop, built through kernelcore's C target and called with the host arrays.

A host replay (:mod:`lazyarray.host.replay`) runs a trace's graph as NumPy
calls, one pass over memory per operation. Where that graph is slices of
the arguments and arithmetic on them (a stencil update: ``u[1:-1] + r *
(u[2:] - 2 * u[1:-1] + u[:-2])``), a hot replay gets a native step: one
loop computing every element of every result in one pass, compiled in the
background by the system C compiler (kernelcore's ``ExecutableCTarget``, its
libraries cached on disk) while the NumPy calls go on answering.

Its answers are NumPy's, bit for bit: it computes only operations that IEEE
arithmetic rounds exactly once (``+ - * /``, square root, negation, absolute
value, squares and reciprocals, conversions between float32 and float64) on
float32 and float64 values, one operation per C statement, in the graph's
order (C99 mode: no contraction into fused multiply-adds), with each
Python number converted to the operation's dtype as NumPy converts it.
Anything else (reductions, integer arithmetic, transcendental functions,
broadcasting of arrays, views of computed values) leaves the replay to NumPy.

``LAZYARRAY_NATIVE=0`` turns native steps off; ``LAZYARRAY_NATIVE=sync``
compiles them in the calling thread (tests).

Public names: NativeStep, NativeState, native_step, NATIVE_AFTER.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lazyarray.host.cloop import (
    FLOATS,
    FUNCTIONS,
    OPERATIONS,
    c_expression,
    c_target,
    checked_function,
    errors_now,
    native_mode,
    plain_errors,
    start_build,
)
from lazyarray.mapper import is_kind

logger = logging.getLogger(__name__)

#: replay calls after which a replay gets its native step
NATIVE_AFTER = 500
class NativeStep:
    """The compiled loop of a replay's elementwise values (``None`` until its
    build ends). Called with the replay's numbered values: computes the
    results it owns into them and the views the replay needs after it, and
    says True, or says False (not built, an argument not C-contiguous, a
    call in another thread) and leaves the replay to NumPy."""

    __slots__ = ("function", "source", "operations", "_arrays", "_held", "_pointers",
                 "_fresh", "_scratch", "_params", "_views", "_lock", "failed")

    def __init__(self, arrays: tuple, roots: tuple, params: tuple, views: tuple,
                 operations: int):
        self.function: Callable | None = None
        #: the C code of the loop (once generated), and its operation count
        self.source: str | None = None
        self.operations = operations
        #: ``(value number, shape, dtype)`` of each array argument read
        self._arrays = arrays
        #: the array of each argument at the last call, and the addresses
        #: passed (arguments', then results')
        self._held: list = [None] * len(arrays)
        self._pointers: list = [0] * (len(arrays) + len(roots))
        #: ``(pointer slot, value number, shape, dtype)`` of the results
        #: returned (a new array at each call)
        self._fresh: tuple = ()
        #: ``(value number, array)`` of the other results: arrays reused by
        #: every call (the replay copies them into the arguments it writes)
        self._scratch: tuple = ()
        fresh, scratch = [], []
        for slot, (number, shape, dtype, returned) in enumerate(roots, len(arrays)):
            if returned:
                fresh.append((slot, number, shape, dtype))
            else:
                out = np.empty(shape, dtype)
                scratch.append((number, out))
                self._pointers[slot] = out.ctypes.data
        self._fresh, self._scratch = tuple(fresh), tuple(scratch)
        #: value numbers of the Python numbers passed
        self._params = params
        #: ``(value number, NumPy step)`` of the views and joins needed after the loop
        self._views = views
        self._lock = threading.Lock()
        #: why the build failed, if it did
        self.failed: str | None = None

    def describe(self) -> str:
        """The loop's state, in words."""
        if self.function is not None:
            return f"a native loop of {self.operations} operations (C, built)"
        if self.failed is not None:
            return f"no native loop: its build failed ({self.failed})"
        return f"a native loop of {self.operations} operations (being built)"

    def __call__(self, values: list) -> bool:
        function = self.function
        if function is None or not plain_errors(errors_now()) \
                or not self._lock.acquire(False):
            return False
        try:
            pointers, held = self._pointers, self._held
            for slot, (number, shape, dtype) in enumerate(self._arrays):
                array = values[number]
                if array is not held[slot]:
                    if type(array) is not np.ndarray or array.shape != shape \
                            or array.dtype != dtype or not array.flags.c_contiguous:
                        return False
                    held[slot], pointers[slot] = array, array.ctypes.data
            for slot, number, shape, dtype in self._fresh:
                out = values[number] = np.empty(shape, dtype)
                pointers[slot] = out.ctypes.data
            if self._params:
                raised = function(*pointers, *[values[number] for number in self._params])
            else:
                raised = function(*pointers)
            if raised:
                # (NumPy's run warns or raises as its error settings say)
                return False
            for number, out in self._scratch:
                values[number] = out
            for number, step in self._views:
                values[number] = step(values)
            return True
        finally:
            self._lock.release()


class NativeState:
    """A replay's native step as it comes: made by *make* (a NativeStep, or
    why there is none) once the replay ran *calls* times without it; shared
    by the replay's reorderings."""

    __slots__ = ("step", "calls", "_make", "why")

    def __init__(self, make: Callable[[], NativeStep | str], calls: int):
        #: the NativeStep (None: not made yet, False: none)
        self.step: NativeStep | bool | None = None
        self.calls = calls
        self._make = make
        self.why = ""

    def count(self) -> None:
        """One more call without the step (the last makes it)."""
        self.calls -= 1
        if self.calls <= 0:
            made = self._make()
            if isinstance(made, str):
                self.step, self.why = False, made
            else:
                self.step = made

    def make_now(self) -> NativeStep | None:
        """The step, made now where it was not yet (its build started), or
        None where there is none."""
        if self.step is None:
            self.calls = 1
            self.count()
        return self.step if isinstance(self.step, NativeStep) else None

    def describe(self) -> tuple[str, str | None]:
        """Whether the replay runs as a native loop, in words, and the loop's
        C code (None before it is generated)."""
        step = self.step
        if step is None:
            return f"a native loop is tried after {self.calls} more calls", None
        if not isinstance(step, NativeStep):
            return f"no native loop: {self.why}", None
        return step.describe(), step.source


def native_step(steps: Sequence[tuple[int, Callable]], nodes: Mapping[int, Any],
                numbering: Mapping[Any, int], arrays: Mapping[int, Any], params: Mapping[int, Any],
                constants: Mapping[int, Any], kept: set[int], returned: set[int]
                ) -> NativeStep | str:
    """The native step of a replay's *steps* (its build started), or why there
    is none (the graph has a part it does not compute, native steps are off).

    *nodes*: the node of each value number, *numbering* the number of each
    node; *arrays*: the array arguments'
    placeholders and *params* the Python numbers', by value number;
    *constants*: the values known when the replay was made; *kept*: the
    values the replay needs after its steps, *returned* those it returns."""
    if native_mode() == "off":
        return "native loops are off (LAZYARRAY_NATIVE, or no C compiler: CC or cc)"
    plan = _Plan(nodes, numbering, arrays, params, constants)
    try:
        for number, step in steps:
            plan.add(number, step)
        roots = plan.roots(kept, returned)
    except _NotNative as why:
        logger.debug("no native step: %s", why)
        return f"the graph has {why}"
    native = NativeStep(tuple((n, arrays[n].shape, arrays[n].dtype) for n in plan.read),
                        roots, tuple(plan.params_read), plan.moves_needed(kept),
                        len(plan.statements))
    start_build(lambda: _build(native, plan, roots))
    return native


class _NotNative(Exception):
    """The graph has a part a native step does not compute exactly as NumPy."""


class _Plan:
    """The loop's values: C expressions of the loop indices, one statement
    per operation."""

    def __init__(self, nodes: Mapping[int, Any], numbering: Mapping[Any, int],
                 arrays: Mapping[int, Any], params: Mapping[int, Any],
                 constants: Mapping[int, Any]):
        self.nodes, self.arrays, self.params, self.constants = nodes, arrays, params, constants
        self.number = numbering
        self.shape: tuple | None = None
        #: ``(value number, its C statement's expression)`` per operation
        self.statements: list[tuple[int, Any]] = []
        #: ``(value number, NumPy step)`` of the views and joins of arguments
        self.moves: list[tuple[int, Callable]] = []
        self.read: list[int] = []           # (array arguments read, in order)
        self.params_read: list[int] = []
        #: the numbers of scalar conversions (of an argument or a constant)
        self.scalars: set[int] = set()

    def add(self, number: int, step: Callable) -> None:
        node = self.nodes[number]
        if is_kind(node, "view", "concat"):
            self._readable(node)    # (arguments' elements: read through their indices)
            self.moves.append((number, step))
            return
        if not is_kind(node, "map") or node.weak or node.dtype not in FLOATS:
            raise _NotNative(f"a {node.kind} node of {node.dtype}")
        if not node.shape and node.op == "astype":
            # (a Python number converted to float32: converted in the loop)
            self._check_operand(node.args[0], node)
            self.scalars.add(number)
            return
        if self.shape is None:
            if not node.shape or 0 in node.shape:
                raise _NotNative(f"a loop of shape {node.shape}")
            self.shape = node.shape
        elif node.shape != self.shape:
            raise _NotNative("values of two shapes")
        if node.op == "astype":
            if node.args[0].dtype not in FLOATS:
                raise _NotNative(f"a conversion from {node.args[0].dtype}")
        elif node.op not in OPERATIONS and node.op not in FUNCTIONS:
            raise _NotNative(f"the operation {node.op}")
        for operand in node.args:
            self._check_operand(operand, node)
        self.statements.append((number, node))

    def _check_operand(self, operand: Any, node: Any) -> None:
        number = self.number.get(operand)
        if number is None:
            raise _NotNative("an operand the replay does not number")
        if not operand.shape:
            if number in self.scalars:
                return
            if number in self.params:
                if operand.dtype.kind not in "fi" or (operand.dtype.kind == "i"
                                                      and node.dtype != np.float64):
                    raise _NotNative(f"a {operand.dtype} argument in {node.dtype} arithmetic")
                if number not in self.params_read:
                    self.params_read.append(number)
                return
            value = self.constants.get(number)
            if value is None or np.ndim(value) != 0 or np.iscomplexobj(value):
                raise _NotNative("a scalar computed at each call, or a complex one")
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**24:
                raise _NotNative("a large integer in float arithmetic")
            return
        if operand.shape != node.shape:
            raise _NotNative("an operand broadcast")
        if not any(n == number for n, _ in self.statements):
            self._readable(operand)

    def _readable(self, node: Any) -> None:
        """Check that *node* is elements of arguments (their views and joins
        of those), and note the arguments read."""
        if is_kind(node, "view"):
            self._readable(node.arg)
            return
        if is_kind(node, "concat"):
            for part in node.args:
                self._readable(part)
            return
        number = self.number.get(node)
        if number is None or number not in self.arrays:
            raise _NotNative(f"elements of a {node.kind} node read at other indices")
        if node.dtype not in FLOATS or not node.shape:
            raise _NotNative(f"an argument of {node.dtype} {node.shape}")
        if number not in self.read:
            self.read.append(number)

    def moves_needed(self, kept: set[int]) -> tuple:
        """The view and join steps computing those in *kept* (and the ones
        they read), in order."""
        needed = set(kept)
        for number, _ in reversed(self.moves):
            if number in needed:
                needed.update(self.number[c] for c in self.nodes[number].children())
        return tuple((n, step) for n, step in self.moves if n in needed)

    def roots(self, kept: set[int], returned: set[int]) -> tuple:
        computed = {number for number, _ in self.statements}
        if not computed:
            raise _NotNative("no arithmetic")
        return tuple((n, self.nodes[n].shape, self.nodes[n].dtype, n in returned)
                     for n, _ in self.statements if n in kept)

    # {{{ the kernel

    def kernel(self, roots: tuple) -> Any:
        """kernelcore's kernel of the loop (C target)."""
        from pymbolic import var
        from pymbolic.primitives import Comparison, If, Subscript

        import kernelcore as lp

        assert self.shape is not None
        inames = [var(f"i{k}") for k in range(len(self.shape))]
        names = ", ".join(i.name for i in inames)
        bounds = " and ".join(f"0 <= {i.name} < {n}" for i, n in zip(inames, self.shape))
        domain = f"{{[{names}]: {bounds}}}"
        temps = {number: var(f"t{number}") for number, _ in self.statements}

        def flat(indices: Sequence[Any], shape: tuple) -> Any:
            total: Any = 0
            for index, extent in zip(indices, shape):
                total = total * extent + index
            return total

        def read(operand: Any, dtype: np.dtype) -> Any:
            number = self.number[operand]
            if number in temps:
                return temps[number]
            if not operand.shape:
                if number in self.scalars:
                    return lp.TypeCast(dtype, read(operand.args[0], operand.dtype))
                if number in self.params:
                    return lp.TypeCast(dtype, var(f"p{number}"))
                return dtype.type(self.constants[number])
            return element(operand, list(inames))

        def element(node: Any, indices: list) -> Any:
            """The element of *node* (views and joins of arguments) at *indices*."""
            if is_kind(node, "view"):
                inner = []
                for entry in node.axis_map:
                    if entry[0] == "const":
                        inner.append(entry[1])
                    else:
                        _, k, start, step = entry
                        inner.append(start + step * indices[k])
                return element(node.arg, inner)
            if is_kind(node, "concat"):
                axis, start = node.axis, 0
                choices = []
                for part in node.args:
                    shifted = [*indices[:axis], indices[axis] - start, *indices[axis + 1:]]
                    start += part.shape[axis]
                    choices.append((start, element(part, shifted)))
                chosen = choices[-1][1]
                for end, value in reversed(choices[:-1]):
                    chosen = If(Comparison(indices[axis], "<", end), value, chosen)
                return chosen
            return Subscript(var(f"a{self.number[node]}"), flat(indices, node.shape))

        instructions = []
        for position, (number, node) in enumerate(self.statements):
            dtype = node.dtype
            operands = [read(a, dtype) for a in node.args]
            expression: Any
            if node.op == "astype":
                expression = lp.TypeCast(dtype, operands[0])
            else:
                expression = c_expression(node.op, operands)
            instructions.append(lp.Assignment(
                temps[number], expression, id=f"s{position}",
                depends_on=frozenset([f"s{position - 1}"]) if position else frozenset(),
                temp_var_type=lp.Optional(dtype)))
        last = len(instructions)
        for position, (number, shape, _, _) in enumerate(roots):
            instructions.append(lp.Assignment(
                Subscript(var(f"o{number}"), flat(inames, shape)), temps[number],
                id=f"w{position}", depends_on=frozenset([f"s{last - 1}"])))
        data: list[Any] = [lp.GlobalArg(f"a{n}", self.arrays[n].dtype,
                             shape=(int(np.prod(self.arrays[n].shape)),)) for n in self.read]
        data += [lp.GlobalArg(f"o{n}", dtype, shape=(int(np.prod(shape)),))
                 for n, shape, dtype, _ in roots]
        data += [lp.ValueArg(f"p{n}", self.params[n].dtype) for n in self.params_read]
        return lp.make_kernel(domain, instructions, data, target=c_target(),
                              name="native_step", lang_version=(2018, 2))

    # }}}


def _build(native: NativeStep, plan: _Plan, roots: tuple) -> None:
    """Compile *native*'s loop and set its function (or mark it failed)."""
    started = time.perf_counter()
    try:
        import kernelcore as lp
        knl = plan.kernel(roots)
        native.source = lp.generate_code_v2(knl).device_code()
        function = checked_function(knl, len(plan.read) + len(roots),
                                    [plan.params[n].dtype for n in plan.params_read])
    except Exception as error:          # (a build that fails leaves NumPy answering)
        native.failed = str(error).splitlines()[0] if str(error) else type(error).__name__
        logger.info("native step not built: %s", error)
        return
    native.function = function
    logger.info("native step of %d operations built in %.0f ms", len(plan.statements),
                1e3 * (time.perf_counter() - started))


__all__ = ["NATIVE_AFTER", "NativeState", "NativeStep", "native_step"]
