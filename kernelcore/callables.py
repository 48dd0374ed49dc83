"""User-supplied functions callable from kernels, and their specialization.

Public names: NumpyType, ValueArgDescriptor, FixedStrideArrayDimTag,
ArrayArgDescriptor, InKernelCallable, ScalarCallable, MathCallable,
get_kw_pos_association, get_arg_descriptor_for_expression, specialize_call,
CallablesInferenceContext,
result_dtype, not_ready_error (the callables registered with
:func:`~kernelcore.translation_unit.register_callable`).

A call ``f(a, b)`` in a kernel starts out untyped. Before code generation the
callable registered under ``f`` is asked for a specialized copy twice: once
with the argument types (:meth:`InKernelCallable.with_types`), once with the
argument shapes and layouts (:meth:`InKernelCallable.with_descrs`). Arguments
are numbered 0, 1, ... in call order; results -1, -2, ... in assignee order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Self, cast

import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import CodeGenerationError, KernelcoreError
from kernelcore.functions import MATH_FUNCTIONS, function_result_dtype
from kernelcore.ir.data import AddressSpace
from kernelcore.ir.domain import static_range
from kernelcore.ir.expr import SubArrayRef, get_dependencies

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class NumpyType:
    """A dtype as callables see it (``.numpy_dtype`` is the NumPy dtype)."""

    numpy_dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "numpy_dtype", np.dtype(self.numpy_dtype))

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype (loopy's second name for :attr:`numpy_dtype`)."""
        return self.numpy_dtype

    @property
    def itemsize(self) -> int:
        return self.numpy_dtype.itemsize

    def is_integral(self) -> bool:
        return self.numpy_dtype.kind in "iu"

    def is_complex(self) -> bool:
        return self.numpy_dtype.kind == "c"

    def involves_complex(self) -> bool:
        return self.is_complex()

    def with_target(self, target: Any) -> NumpyType:
        return self

    def __str__(self) -> str:
        return f"np:{self.numpy_dtype!r}"


@dataclass(frozen=True)
class ValueArgDescriptor:
    """Describes a scalar argument or result of a call."""

    def map_expr(self, f: Callable[[Any], Any]) -> ValueArgDescriptor:
        """Itself: a scalar's descriptor holds no expressions."""
        return self

    def depends_on(self) -> frozenset[str]:
        """No variable names."""
        return frozenset()

    def copy(self, **kwargs: Any) -> ValueArgDescriptor:
        return self


@dataclass(frozen=True)
class FixedStrideArrayDimTag:
    """One array axis: *stride* in elements."""

    stride: Any

    def map_expr(self, f: Callable[[Any], Any]) -> FixedStrideArrayDimTag:
        """A copy with *f* applied to the stride."""
        return FixedStrideArrayDimTag(f(self.stride))

    def depends_on(self) -> frozenset[str]:
        """The variable names the stride reads."""
        return _names_in(self.stride)


def _names_in(expr: Any) -> frozenset[str]:
    if expr is None or isinstance(expr, (int, np.integer)):
        return frozenset()
    return frozenset(get_dependencies(expr))


@dataclass(frozen=True)
class ArrayArgDescriptor:
    """An array passed to a call: its *shape*, *address_space* and one
    :class:`FixedStrideArrayDimTag` per axis in *dim_tags*."""

    shape: tuple
    address_space: AddressSpace | None
    dim_tags: tuple

    def copy(self, **kwargs: Any) -> ArrayArgDescriptor:
        """A copy with *shape*, *address_space* or *dim_tags* replaced."""
        return replace(self, **kwargs)

    def map_expr(self, f: Callable[[Any], Any]) -> ArrayArgDescriptor:
        """A copy with *f* applied to every extent of the shape and every stride."""
        shape = None if self.shape is None else tuple(f(s) for s in self.shape)
        dim_tags = None if self.dim_tags is None else tuple(
            t.map_expr(f) if hasattr(t, "map_expr") else t for t in self.dim_tags)
        return ArrayArgDescriptor(shape, self.address_space, dim_tags)

    def depends_on(self) -> frozenset[str]:
        """The variable names the shape and the strides read."""
        result: frozenset[str] = frozenset()
        for s in self.shape or ():
            result |= _names_in(s)
        for t in self.dim_tags or ():
            if hasattr(t, "depends_on"):
                result |= t.depends_on()
        return result


class InKernelCallable:
    """A function kernels may call. Subclasses specialize it per call site.

    .. attribute:: name

        the name calls use.

    .. attribute:: arg_id_to_dtype

        ``{arg id: NumpyType}`` once types are known, else None.

    .. attribute:: arg_id_to_descr

        ``{arg id: descriptor}`` once shapes are known, else None.

    .. attribute:: name_in_target

        the function's name in the generated code, once known.
    """

    name: str
    arg_id_to_dtype: Mapping | None
    arg_id_to_descr: Mapping | None
    name_in_target: str | None

    #: the constructor arguments, which :meth:`copy` carries over
    init_arg_names: tuple[str, ...] = (
        "name", "arg_id_to_dtype", "arg_id_to_descr", "name_in_target")

    def __init__(self, name: str, arg_id_to_dtype: Mapping | None = None,
                 arg_id_to_descr: Mapping | None = None,
                 name_in_target: str | None = None):
        self._set(name=name, arg_id_to_dtype=arg_id_to_dtype,
                  arg_id_to_descr=arg_id_to_descr, name_in_target=name_in_target)

    def _set(self, **values) -> None:
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable: use copy({key}=...)")

    def copy(self, **kwargs: Any) -> Self:
        """A copy with the given constructor arguments replaced."""
        unknown = sorted(set(kwargs) - set(self.init_arg_names))
        if unknown:
            raise TypeError(f"{type(self).__name__}.copy: unknown field(s) "
                            f"{', '.join(unknown)}")
        values = {n: getattr(self, n) for n in self.init_arg_names}
        values.update(kwargs)
        return type(self)(**values)

    def __eq__(self, other: object) -> bool:
        """Equal when of one type with equal constructor arguments."""
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.init_arg_names)

    # identity hashing, as for kernels (equal callables may be separate keys)
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.init_arg_names)
        return f"{type(self).__name__}({fields})"

    def with_types(self, arg_id_to_dtype: Mapping, callables_table: Mapping
                   ) -> tuple[InKernelCallable, Mapping]:
        """``(specialized copy, callables_table)`` for these argument types; a
        callable that cannot decide yet returns itself unchanged."""
        return self, callables_table

    def with_descrs(self, arg_id_to_descr: Mapping, callables_table: Mapping
                    ) -> tuple[InKernelCallable, Mapping]:
        """``(specialized copy, callables_table)`` for these argument shapes."""
        return self.copy(arg_id_to_descr=dict(arg_id_to_descr)), callables_table

    def is_ready_for_codegen(self) -> bool:
        return self.arg_id_to_dtype is not None and self.name_in_target is not None

    def is_type_specialized(self) -> bool:
        """Whether the types of the arguments and results are known."""
        return self.arg_id_to_dtype is not None and all(
            t is not None for t in self.arg_id_to_dtype.values())

    def with_name(self, name: str) -> InKernelCallable:
        """A copy that a callables table holds under *name*."""
        return self.copy(name=name)

    def with_target(self, target: Any) -> InKernelCallable:
        """A copy for *target* (the types are target-independent here)."""
        return self

    def get_hw_axes_sizes(self, arg_id_to_arg: Mapping, space: Any, callables_table: Any
                          ) -> tuple[dict, dict]:
        """``(group sizes, local sizes)`` as ``{axis: PwAff}``: the hardware
        axes the callable needs (none for a scalar function)."""
        return {}, {}

    def get_used_hw_axes(self, callables_table: Any) -> tuple[frozenset, frozenset]:
        """``(group axes, local axes)`` the callable uses (none for a scalar
        function)."""
        return frozenset(), frozenset()

    def get_called_callables(self, callables_table: Mapping, recursive: bool = True
                             ) -> frozenset[str]:
        """The names of *callables_table*'s entries this callable calls."""
        return frozenset()

    def generate_preambles(self, target: Any) -> Iterator[tuple[str, str]]:
        """``(sort key, code)`` pairs the generated source needs (includes,
        helper functions)."""
        return iter(())

    def emit_call(self, expression_to_code_mapper: Any, expression: Any, target: Any) -> Any:
        """The target expression for a call used inside an expression."""
        ecm = expression_to_code_mapper
        params = tuple(ecm(p).expr for p in expression.parameters)
        return prim.Variable(self.name_in_target)(*params)  # type: ignore[arg-type]

    def emit_call_insn(self, insn: Any, target: Any, expression_to_code_mapper: Any
                       ) -> tuple[Any, bool]:
        """``(expression, returns_value)`` for a call instruction: with
        *returns_value* the call's value is stored in the first assignee."""
        return self.emit_call(expression_to_code_mapper, insn.expression, target), True


class ScalarCallable(InKernelCallable):
    """A callable whose code is a single function call in the target language."""


class MathCallable(ScalarCallable):
    """A built-in math function (``sin``, ``max``, ``atan2``, ...: see
    :data:`kernelcore.functions.MATH_FUNCTIONS`), as calls resolve it. Its
    result type follows NumPy's rules for the argument types."""

    def with_types(self, arg_id_to_dtype: Mapping, callables_table: Any
                   ) -> tuple[InKernelCallable, Any]:
        nargs = MATH_FUNCTIONS[self.name][2]
        known = [arg_id_to_dtype.get(i) for i in range(nargs)]
        if any(t is None for t in known):
            return self, callables_table
        dtypes = [np.dtype(getattr(t, "numpy_dtype", t)) for t in known]
        result = function_result_dtype(self.name, dtypes)
        types = {i: NumpyType(d) for i, d in enumerate(dtypes)}
        types[-1] = NumpyType(result)
        return self.copy(arg_id_to_dtype=types, name_in_target=self.name), callables_table


def get_kw_pos_association(kernel: Any) -> tuple[dict[str, int], dict[int, str]]:
    """``(kw_to_pos, pos_to_kw)`` of a callee kernel: its inputs (the arguments
    it reads) are numbered 0, 1, ... in argument order, its outputs (those it
    writes) -1, -2, ... in argument order."""
    written = kernel.get_written_variables()
    read = frozenset().union(*(i.read_dependency_names() for i in kernel.instructions))
    kw_to_pos: dict[str, int] = {}
    pos_to_kw: dict[int, str] = {}
    read_count, write_count = 0, -1
    for arg in kernel.args:
        if arg.name in written:
            kw_to_pos[arg.name], pos_to_kw[write_count] = write_count, arg.name
            write_count -= 1
        is_input = getattr(arg, "is_input", None)
        if arg.name not in written or is_input or (is_input is None and arg.name in read):
            # an argument read and written (updated in place) is an input and an
            # output; by name, its input position
            kw_to_pos[arg.name], pos_to_kw[read_count] = read_count, arg.name
            read_count += 1
    return kw_to_pos, pos_to_kw


def get_arg_descriptor_for_expression(kernel: Any, expr: Any) -> Any:
    """The descriptor of *expr* passed as an argument of a call in *kernel*:
    :class:`ArrayArgDescriptor` for a sub-array reference, else
    :class:`ValueArgDescriptor`."""
    if isinstance(expr, SubArrayRef):
        sub = expr.subscript
        name = (cast(prim.Variable, sub.aggregate).name if isinstance(sub, prim.Subscript)
                else sub.name)
        var = kernel.arg_dict.get(name) or kernel.temporary_variables.get(name)
        if var is None:
            raise KernelcoreError(f"unknown array '{name}' in a sub-array reference")
        index = sub.index if isinstance(sub.index, tuple) else (sub.index,)
        strides = var.element_strides()
        swept = [i.name for i in expr.swept_inames]
        dim_strides = []
        for iname in swept:
            stride: Any = 0
            for idx, s in zip(index, strides):
                if iname in get_dependencies(idx):
                    stride = s if stride == 0 else stride + s
            dim_strides.append(stride)
        shape = tuple(_extent(kernel, n) for n in swept)
        return ArrayArgDescriptor(shape, var.address_space if hasattr(
            var, "address_space") else None,
            tuple(FixedStrideArrayDimTag(s) for s in dim_strides))
    return ValueArgDescriptor()


def _extent(kernel: Any, iname: str) -> Any:
    lo, hi = static_range(kernel, iname)
    return hi - lo + 1


class CallablesInferenceContext(Mapping):
    """The callables a callable being specialized may see and add to (loopy's
    ``clbl_inf_ctx``): a read-only mapping from function ids to callables;
    :meth:`with_callable` returns a new context with a callable registered.
    Immutable: every change is a new context."""

    def __init__(self, callables: Mapping[str, InKernelCallable],
                 added: tuple[str, ...] = ()):
        self._callables = dict(callables)
        #: ids registered through :meth:`with_callable`, in order
        self.added = added

    def __getitem__(self, function_id: str) -> InKernelCallable:
        return self._callables[function_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._callables)

    def __len__(self) -> int:
        return len(self._callables)

    def with_callable(self, old_function_id: Any, new_clbl: InKernelCallable,
                      is_entrypoint: bool = False) -> tuple[str, CallablesInferenceContext]:
        """``(function id, new context)`` with *new_clbl* registered: under
        *old_function_id* (a name or a ``Variable``/``ResolvedFunction``) when
        that id is free or holds an equal callable, else under a fresh id
        derived from it (a second specialization of one function)."""
        name = str(getattr(old_function_id, "name", old_function_id))
        new_id, k = name, 0
        while new_id in self._callables and self._callables[new_id] != new_clbl:
            new_id, k = f"{name}_{k}", k + 1
        if self._callables.get(new_id) == new_clbl:
            return new_id, self
        return new_id, CallablesInferenceContext({**self._callables, new_id: new_clbl},
                                                 (*self.added, new_id))

    def finish_program(self, program: Any) -> Any:
        """*program* (a translation unit) with the callables this context
        added in its table."""
        return program.copy(callables_table={
            **program.callables_table, **{n: self._callables[n] for n in self.added}})


def specialize_call(callable: InKernelCallable, arg_dtypes: Mapping[int, np.dtype],
                    callables: Mapping, arg_descrs: Mapping | None = None
                    ) -> tuple[InKernelCallable, CallablesInferenceContext]:
    """*callable* specialized for *arg_dtypes* (and *arg_descrs*, if given),
    and the callables context after that (with what the specialization
    registered: :meth:`CallablesInferenceContext.with_callable`)."""
    typed = {k: NumpyType(v) for k, v in arg_dtypes.items() if v is not None}
    ctx: Mapping = callables if isinstance(callables, CallablesInferenceContext) else \
        CallablesInferenceContext(callables)
    result, ctx = callable.with_types(typed, ctx)
    if arg_descrs is not None:
        result, ctx = result.with_descrs(arg_descrs, ctx)
    if not isinstance(ctx, CallablesInferenceContext):
        raise KernelcoreError(
            f"with_types/with_descrs of {type(callable).__name__} returned "
            f"{type(ctx).__name__} as the callables context: return the context it "
            "was given (or the one its with_callable returned)")
    return result, ctx


def result_dtype(callable: InKernelCallable, index: int = -1) -> np.dtype | None:
    """The dtype a specialized callable returns as result *index*, if known."""
    dtypes = callable.arg_id_to_dtype or {}
    t = dtypes.get(index)
    if t is None:
        return None
    return t.numpy_dtype if isinstance(t, NumpyType) else np.dtype(t)


def not_ready_error(name: str) -> CodeGenerationError:
    return CodeGenerationError(
        f"the callable registered as '{name}' did not specialize for this call "
        "(with_types must set name_in_target and arg_id_to_dtype, including -1 "
        "for the result)")
