"""Code for calls of registered callables (see :mod:`kernelcore.callables`).

Public names: RegisteredCallEmitter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper.c_code import CCodeMapper

from kernelcore.callables import (
    ArrayArgDescriptor,
    FixedStrideArrayDimTag,
    InKernelCallable,
    ValueArgDescriptor,
    not_ready_error,
    result_dtype,
    specialize_call,
)
from kernelcore.diagnostic import CodeGenerationError
from kernelcore.ir.data import ArrayArg, TemporaryVariable
from kernelcore.ir.instruction import CallInstruction, assignee_subscript


@dataclass(frozen=True)
class _TargetExpression:
    """What the expression-to-code mapper handed to callables returns."""

    expr: object


def _whole_array(expr) -> str | None:
    """The array name if *expr* is ``x[:, ..., :]``, None if it has no slices."""
    if not isinstance(expr, prim.Subscript):
        return None
    index = assignee_subscript(expr)
    if not any(isinstance(i, prim.Slice) for i in index):
        return None
    for i in index:
        if not (isinstance(i, prim.Slice) and i.start is None and i.stop is None
                and i.step is None):
            raise CodeGenerationError(
                f"{expr}: only whole-array slices ('x[:, :]') may be passed to calls")
    return expr.aggregate.name  # type: ignore[union-attr]


class RegisteredCallEmitter:
    """Specializes and emits calls to the callables registered in a kernel."""

    def __init__(self, knl, target, types, helpers,
                 render: Callable[[object, np.dtype | None], str]):
        """*render* turns a kernel expression into C code of the given dtype."""
        self.knl = knl
        self.target = target
        self.types = types
        self.helpers = helpers
        self.render = render

    def _descriptor(self, expr):
        name = _whole_array(expr)
        if name is None:
            return ValueArgDescriptor()
        var = self.knl.get_var(name)
        if not isinstance(var, (ArrayArg, TemporaryVariable)):
            raise CodeGenerationError(f"'{name}' in {expr} is not an array")
        if len(assignee_subscript(expr)) != len(var.shape):
            raise CodeGenerationError(f"{expr}: '{name}' has {len(var.shape)} axes")
        return ArrayArgDescriptor(
            shape=tuple(var.shape), address_space=var.address_space,
            dim_tags=tuple(FixedStrideArrayDimTag(s) for s in var.element_strides()))

    def specialize(self, call: Any, assignees: tuple = ()) -> InKernelCallable:
        """The callable for *call*, specialized for its argument types and shapes."""
        name = call.function.name
        dtypes = {i: self.types(p).dtype for i, p in enumerate(call.parameters)}
        descrs = {i: self._descriptor(p) for i, p in enumerate(call.parameters)}
        for k, a in enumerate(assignees):
            dtypes[-k - 1] = self.types(a).dtype
            descrs[-k - 1] = self._descriptor(a)
        clbl, ctx = specialize_call(self.knl.callables[name], dtypes, self.knl.callables,
                                    descrs)
        if not clbl.is_ready_for_codegen():
            raise not_ready_error(name)
        # (what the callable registered in the context, then its own preambles)
        for used in (*(ctx[n] for n in ctx.added), clbl):
            for key, code in used.generate_preambles(self.target):
                self.helpers.preambles.setdefault(key, code)
        return clbl

    def _mapper(self, clbl, params):
        """The expression-to-code mapper callables use: whole arrays become their
        base pointers, scalars their C code in the callable's argument type."""
        ids = {id(p): i for i, p in enumerate(params)}

        def ecm(expr):
            name = _whole_array(expr)
            if name is not None:
                return _TargetExpression(prim.Variable(name))
            want = None
            t = (clbl.arg_id_to_dtype or {}).get(ids.get(id(expr)))
            if t is not None:
                want = np.dtype(getattr(t, "numpy_dtype", t))
            return _TargetExpression(prim.Variable(self.render(expr, want)))
        return ecm

    def call_expression(self, call: Any) -> str:
        """C code for a registered call inside an expression."""
        clbl = self.specialize(call)
        if result_dtype(clbl) is None:
            raise not_ready_error(call.function.name)
        expr = clbl.emit_call(self._mapper(clbl, call.parameters), call,
                              self.target)
        return CCodeMapper()(expr)

    def call_statement(self, insn: CallInstruction) -> str:
        """The C statement for a call instruction."""
        clbl = self.specialize(insn.expression, insn.assignees)
        expr, returns_value = clbl.emit_call_insn(
            insn, self.target, self._mapper(clbl, insn.expression.parameters))
        code = CCodeMapper()(expr)
        if not returns_value or insn.assignee is None:     # (or a call without results)
            return f"{code};"
        if _whole_array(insn.assignee) is not None:
            raise CodeGenerationError(
                f"instruction '{insn.id}': a call returning a value cannot assign to "
                f"the array slice {insn.assignee}")
        return f"{self.render(insn.assignee, None)} = {code};"
