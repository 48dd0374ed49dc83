"""Arithmetic on large host arrays deferred until it is read, then computed
in one pass: by one native loop per expression, or by NumPy's calls.

On the host tier each operator is one NumPy call: a stencil update of a
grid, ``p[1:-1, 1:-1] = (pn[1:-1, 2:] + pn[1:-1, :-2]) * a - b[1:-1, 1:-1] * c``,
makes and fills a temporary grid per operator and copies the last into
``p``. For arrays of :data:`DEFER_ELEMENTS` elements or more, ``+ - * /``,
negation, squares, absolute values and square roots of float arrays of one
shape and dtype (and Python numbers) are recorded instead (an :class:`Expr`, held by a pending host
array); the expression is computed when anything reads it, in one loop
over the elements, written straight into the assigned part of ``p`` where
it reads none of it. A structure computed a few times gets its loop
compiled in the background (kernelcore's C target, as the native steps of
:mod:`lazyarray.host.native`); until then, and where a loop raises a
floating point exception (NumPy then warns or raises as its settings at
the operator said), NumPy's calls compute it.

The answers are NumPy's, bit for bit: the same operations on the same
operands, one rounding each (no reassociation, no fused multiply-adds),
Python numbers converted to the array's dtype as NumPy converts them.
Deferral changes only when values are computed: every write into host
memory (assignments, in-place operators, NumPy functions writing into host
arrays, jitted calls writing their arguments) first computes every pending
expression (:func:`flush`), so none reads memory written after it was made.

Public names: Expr, DEFER_ELEMENTS, PENDING, expression, scalar_expression, materialize,
write_into, flush, note_pending.
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import Any

import numpy as np

from lazyarray.host.cloop import (
    ERRORS,
    FLOATS,
    address_reader,
    c_expression,
    c_target,
    checked_function,
    errors_now,
    native_mode,
    plain_errors,
    start_build,
)

logger = logging.getLogger(__name__)

#: the fewest elements an expression of host arrays is deferred for (below,
#: NumPy's call per operator costs less than a loop's call)
DEFER_ELEMENTS = 8192
#: the most operations of one expression's tree (shared parts counted as
#: often as they are read: an expression recomputes them)
MOST_OPERATIONS = 48
#: computations of one structure after which its loop is built
BUILD_AFTER = 4
#: the most loops kept (a table of more starts again)
LOOPS_KEPT = 256
#: the NumPy functions of the operations deferred
UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "true_divide": np.true_divide, "negative": np.negative, "square": np.square,
          "absolute": np.absolute, "sqrt": np.sqrt}
#: weak references to the pending host arrays made since the last flush
PENDING: list = []


class Expr:
    """A deferred NumPy operation *op* (a key of :data:`UFUNCS`) of *args*:
    NumPy arrays (read when computed), Python numbers and expressions, all
    of the result's *shape* and *dtype*; *errors*: NumPy's error settings
    when it was made. *structure* is what its loop depends on (operations,
    the arrays' strides in elements; None where NumPy's calls compute it),
    *leaves* and *numbers* the arrays and numbers it reads, in order."""

    __slots__ = ("op", "args", "shape", "dtype", "errors", "structure", "leaves", "numbers",
                 "operations", "uses", "value")

    def __init__(self, op: str, args: tuple, shape: tuple, dtype: np.dtype, errors: Any):
        self.op, self.args, self.shape, self.dtype, self.errors = op, args, shape, dtype, errors
        parts: list[Any] = [op]
        leaves: tuple = ()
        numbers: tuple = ()
        #: the operations of its tree (one read twice counts twice)
        self.operations = 1
        #: the expressions reading it, and its value once NumPy's calls
        #: computed it where that is more than one (see _numpy)
        self.uses = 0
        self.value: np.ndarray | None = None
        for a in args:
            kind = type(a)
            if kind is Expr:
                parts.append(a.structure)
                leaves += a.leaves
                numbers += a.numbers
                self.operations += a.operations
                a.uses += 1
            elif kind is _ndarray:
                part = _STRUCTURES.get((a.strides, a.itemsize), _UNKNOWN)
                parts.append(_array_structure(a) if part is _UNKNOWN else part)
                leaves += (a,)
            else:
                parts.append("n")
                numbers += (a,)
        # (under NumPy's other error settings NumPy's calls compute it: a loop
        # does not raise, nor report underflow)
        self.structure = tuple(parts) if None not in parts and plain_errors(errors) \
            else None
        self.leaves, self.numbers = leaves, numbers


_ndarray = np.ndarray
_UNKNOWN = object()
#: the structure of arrays of each strides and item size (see _array_structure)
_STRUCTURES: dict[tuple, tuple | None] = {}


def _array_structure(a: np.ndarray) -> tuple | None:
    """An array's strides in elements, or None where they are negative, not
    whole elements or not in C order (NumPy's result would not be C-ordered:
    a transpose); remembered in :data:`_STRUCTURES`."""
    size = a.itemsize
    strides = a.strides
    structure = None if any(s < 0 or s % size for s in strides) or any(
        strides[k] < strides[k + 1] for k in range(len(strides) - 1)) \
        else tuple(s // size for s in strides)
    if len(_STRUCTURES) >= 1024:
        _STRUCTURES.clear()
    _STRUCTURES[strides, size] = structure
    return structure


def expression(op: str, args: tuple) -> Expr | None:
    """The deferred *op* of *args* (NumPy arrays, expressions, Python
    numbers), or None where it is computed at once: an array below the size,
    not a float32 or float64 array, two shapes or dtypes (broadcasting and
    promotion stay NumPy's own), another kind of operand, or a tree of more
    than :data:`MOST_OPERATIONS` operations (its operands are computed
    first: a long chain or a graph sharing its parts stays linear work)."""
    shape = dtype = None
    operations = 1
    for a in args:
        kind = type(a)
        if kind is _ndarray:
            if a.size < DEFER_ELEMENTS or a.dtype not in FLOATS:
                return None
        elif kind is Expr:
            operations += a.operations
            if operations > MOST_OPERATIONS:
                return None
        elif kind is float or (kind is int and -2**24 < a < 2**24):
            continue
        else:
            return None
        if shape is None:
            shape, dtype = a.shape, a.dtype
        elif a.shape != shape or (a.dtype is not dtype and a.dtype != dtype):
            return None
    if shape is None or dtype is None:
        return None
    return Expr(op, args, shape, dtype, errors_now())


def scalar_expression(op: str, array: np.ndarray, number: Any, reflected: bool
                      ) -> Expr | None:
    """The deferred *op* of a large host buffer and a Python number (a power
    only as ``x ** 2``, NumPy's square), or None (see :func:`expression`)."""
    if op == "power":
        return expression("square", (array,)) if number == 2 and not reflected else None
    return expression(op, (number, array) if reflected else (array, number))


def flush(keep: Any = None) -> None:
    """Compute every pending host array but *keep* (before a write into
    host memory)."""
    pending = PENDING[:]
    PENDING.clear()
    for ref in pending:
        handle = ref()
        if handle is not None and handle is not keep:
            _ = handle._hv              # (computes it)


def note_pending(handle: Any) -> None:
    """Remember the pending host array *handle* for :func:`flush` (called
    where over 128 of 256 remembered ones live: the expressions held stay
    bounded, and the table is pruned at most every 128 calls)."""
    if len(PENDING) >= 256:
        PENDING[:] = [ref for ref in PENDING if ref() is not None]
        if len(PENDING) > 128:
            flush()
    PENDING.append(weakref.ref(handle))


# {{{ computing

class _Loop:
    """The native loop of one structure (None until built: a function of the
    arrays, the result and the numbers, true where a floating point
    exception happened) and how often the structure was computed."""

    __slots__ = ("function", "count")

    def __init__(self) -> None:
        self.function: Any = None
        self.count = 0


_LOOPS: dict[tuple, _Loop] = {}


def materialize(expr: Expr, out: np.ndarray | None = None) -> np.ndarray:
    """The value of *expr*, written into *out* where given (of its shape and
    dtype, sharing no memory with the arrays it reads)."""
    structure, leaves, numbers = expr.structure, expr.leaves, expr.numbers
    if structure is None or expr.value is not None or Expr not in map(type, expr.args):
        # (one operation, whose NumPy call is the loop, or a value computed before)
        return _numpy(expr, out)
    key = (structure, expr.shape, expr.dtype.char, None if out is None else out.strides)
    loop = _LOOPS.get(key)
    if loop is None:
        if len(_LOOPS) >= LOOPS_KEPT:
            _LOOPS.clear()
        loop = _LOOPS[key] = _Loop()
    function = loop.function
    if function is None:
        loop.count += 1
        if loop.count == BUILD_AFTER and native_mode() != "off":
            start_build(lambda: _build(loop, expr, out, len(leaves), len(numbers)))
        return _numpy(expr, out)
    result = np.empty(expr.shape, expr.dtype) if out is None else out
    if function(leaves, result, numbers):
        return _numpy(expr, out)        # (a floating point exception: NumPy's warning)
    return result


def write_into(destination: np.ndarray, expr: Expr) -> bool:
    """Compute *expr* into *destination* (the part of an array assigned),
    where it has the expression's shape and dtype and shares no memory with
    what the expression reads; else False."""
    if destination.shape != expr.shape or destination.dtype != expr.dtype \
            or expr.structure is None:
        return False
    overlaps = np.may_share_memory
    for a in expr.leaves:
        if overlaps(destination, a):
            return False
    materialize(expr, destination)
    return True


def _numpy(expr: Expr, out: np.ndarray | None = None) -> np.ndarray:
    """*expr* computed by NumPy's calls, each under the error settings of
    its operator; a part that several expressions read computed once (its
    value kept: until every expression reading it is computed, which a write
    into host memory forces first, nothing writes into it)."""
    value = expr.value
    if value is not None:
        if out is None:
            return value
        np.copyto(out, value)
        return out
    if out is None and expr.uses > 1:
        expr.value = value = _numpy_call(expr, None)
        return value
    return _numpy_call(expr, out)


def _numpy_call(expr: Expr, out: np.ndarray | None) -> np.ndarray:
    """*expr*'s operation by NumPy's call, of its operands computed by
    :func:`_numpy`."""
    args = [_numpy(a) if type(a) is Expr else a for a in expr.args]
    ufunc = UFUNCS[expr.op]
    state = ERRORS
    if state is None or expr.errors is None or state.get() is expr.errors:
        return ufunc(*args) if out is None else ufunc(*args, out=out)
    token = state.set(expr.errors)
    try:
        return ufunc(*args) if out is None else ufunc(*args, out=out)
    finally:
        state.reset(token)

# }}}


# {{{ the loops

def _build(loop: _Loop, expr: Expr, out: np.ndarray | None, arrays: int, numbers: int
           ) -> None:
    """Compile the loop of *expr*'s structure into *loop* (a failure leaves
    NumPy computing it)."""
    started = time.perf_counter()
    try:
        compiled = checked_function(_kernel(expr, out), arrays + 1, [expr.dtype] * numbers)
        address = address_reader()
        loop.function = lambda leaves, result, values: compiled(
            *[address(a) for a in leaves], address(result), *values)
    except Exception as error:          # (NumPy goes on computing it)
        logger.info("fused loop not built: %s", error)
        loop.count = -10**9
        return
    logger.info("fused loop of %s built in %.0f ms", expr.shape,
                1e3 * (time.perf_counter() - started))


def _kernel(expr: Expr, out: np.ndarray | None) -> Any:
    """kernelcore's kernel of the loop computing *expr* (into an array of
    *out*'s strides, else a new C-ordered one): one C statement per
    operation, in the expression's order."""
    from pymbolic import var
    from pymbolic.primitives import Subscript

    import kernelcore as lp

    inames = [var(f"i{k}") for k in range(len(expr.shape))]
    names = ", ".join(i.name for i in inames)
    bounds = " and ".join(f"0 <= {i.name} < {n}" for i, n in zip(inames, expr.shape))
    dtype = expr.dtype
    data: list[Any] = []
    scalars: list[Any] = []
    instructions: list[Any] = []

    def offset(strides: tuple) -> Any:
        total: Any = 0
        for index, stride in zip(inames, strides):
            total = total + stride * index
        return total

    def extent(strides: tuple) -> int:
        return 1 + sum((n - 1) * s for n, s in zip(expr.shape, strides))

    def emit(x: Any) -> Any:
        if type(x) is Expr:
            operands = [emit(a) for a in x.args]
            value = c_expression(x.op, operands)
            temp = var(f"t{len(instructions)}")
            instructions.append(lp.Assignment(
                temp, value, id=f"s{len(instructions)}",
                depends_on=frozenset([f"s{len(instructions) - 1}"]) if instructions
                else frozenset(), temp_var_type=lp.Optional(dtype)))
            return temp
        if type(x) is np.ndarray:
            strides = tuple(s // x.itemsize for s in x.strides)
            name = f"a{len(data)}"
            data.append(lp.GlobalArg(name, dtype, shape=(extent(strides),)))
            return Subscript(var(name), offset(strides))
        name = f"n{len(scalars)}"
        scalars.append(lp.ValueArg(name, dtype))
        return var(name)

    result = emit(expr)
    strides = (tuple(s // dtype.itemsize for s in out.strides) if out is not None
               else tuple(int(np.prod(expr.shape[k + 1:])) for k in range(len(expr.shape))))
    data.append(lp.GlobalArg("out", dtype, shape=(extent(strides),)))
    instructions.append(lp.Assignment(Subscript(var("out"), offset(strides)), result,
                                      id="write", depends_on=frozenset(
                                          [f"s{len(instructions) - 1}"])))
    return lp.make_kernel(f"{{[{names}]: {bounds}}}", instructions, data + scalars,
                          target=c_target(), name="fused_loop", lang_version=(2018, 2))

# }}}


__all__ = ["DEFER_ELEMENTS", "PENDING", "Expr", "expression", "flush", "materialize",
           "note_pending", "scalar_expression", "write_into"]
