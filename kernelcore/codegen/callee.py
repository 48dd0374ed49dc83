"""Kernels called by kernels, emitted as device functions.

Public names: link_callees, callee_function_problem, kernel_arg_descriptor,
kernel_call_statement (the device functions come from
:func:`kernelcore.codegen.generator.generate_callee_function`).

A call ``[j]: y[i, j] = child([j]: x[i, j])`` of a kernel of the same
translation unit stays a call: the callee becomes a ``static void`` function
of the generated source taking its arguments in its own argument order (arrays
as pointers to the first element of the sub-array passed, scalars by value),
and the call instruction calls it. The callee is specialized per call site
(:meth:`~kernelcore.callable_kernel.CallableKernel.with_types`, then
:meth:`~kernelcore.callable_kernel.CallableKernel.with_descrs` with the
shapes, strides and address spaces of the sub-arrays passed); a stride that
reads a caller's variable (``x[:, i]`` of an ``(m, n)`` array has stride
``n``) becomes an extra scalar argument of the callee. The callee's parallel
inames keep their hardware axes: the caller's launch grows to cover them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pymbolic.primitives as prim

from kernelcore.callable_kernel import CallableKernel, kernel_called_names
from kernelcore.callables import (
    ArrayArgDescriptor,
    CallablesInferenceContext,
    FixedStrideArrayDimTag,
    NumpyType,
    ValueArgDescriptor,
    get_kw_pos_association,
)
from kernelcore.check_bounds import check_bounds
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, ArrayArg, TemporaryVariable, ValueArg, auto
from kernelcore.ir.domain import affine_simplify
from kernelcore.ir.expr import SubstitutionMapper
from kernelcore.ir.instruction import BarrierInstruction, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.stages import provide
from kernelcore.ir.tags import is_hw_parallel
from kernelcore.transform.inline import inline_calls, slice_bounds


def callee_function_problem(callee: LoopKernel, target: Any) -> str | None:
    """Why *callee* cannot become a device function for *target* (None: it
    can): a global barrier, a local or global temporary, or parallel inames
    on a target that runs work-items as loops."""
    if any(isinstance(i, BarrierInstruction) and "global" in (
            i.synchronization_kind, i.mem_kind) for i in callee.instructions):
        return "it has a global barrier"
    for tv in callee.temporary_variables.values():
        if tv.address_space in (AddressSpace.LOCAL, AddressSpace.GLOBAL):
            return f"its temporary '{tv.name}' is {tv.address_space}"
    if getattr(target, "sequential", False) and any(
            is_hw_parallel(t) for t in callee.iname_tags.values()):
        return "it uses hardware axes, which this target runs as loops"
    return None


def link_callees(knl: LoopKernel, kernels: Mapping[str, LoopKernel]) -> LoopKernel | None:
    """*knl* with the kernels of *kernels* it calls (and those they call)
    registered as its callables, to be emitted as device functions; None if
    one of them cannot be a device function (see :func:`callee_function_problem`)."""
    def link(k: LoopKernel, stack: tuple[str, ...]) -> LoopKernel | None:
        called = sorted((kernel_called_names(k) & set(kernels)) - {k.name})
        if not called:
            return k
        added = {}
        for name in called:
            if name in stack:
                raise KernelcoreError(f"kernel '{name}' calls itself (recursion is not "
                                      "supported)")
            callee = kernels[name]
            if callee.index_dtype != k.index_dtype:
                raise KernelcoreError(
                    f"kernel '{k.name}' (index type {k.index_dtype}) calls kernel '{name}' "
                    f"(index type {callee.index_dtype}): make their index_dtype the same")
            if callee_function_problem(callee, knl.target) is not None:
                return None
            linked = link(callee, (*stack, name))
            if linked is None:
                return None
            added[name] = CallableKernel(linked)
        return k.copy(callables={**k.callables, **added})

    linked = link(knl, (knl.name,))
    if linked is not None and linked is not knl:
        # the callees' accesses, with the caller's arrays and parameter values
        # (``arange(N)`` writing ``Y`` of 20 elements needs ``N <= 20``)
        check_bounds(inline_calls(knl, dict(kernels)))
    return linked


def _positions(callee: LoopKernel) -> dict[int, str]:
    return get_kw_pos_association(callee)[1]


def kernel_arg_descriptor(caller: LoopKernel, expr: Any, wants_array: bool) -> Any:
    """The descriptor of *expr* passed to a callee kernel's argument (an
    array argument if *wants_array*): shape, element strides and address
    space of the sub-array (``x[i, :4]``: shape ``(4,)``), or
    :class:`ValueArgDescriptor` for a scalar."""
    if not wants_array:
        return ValueArgDescriptor()
    if isinstance(expr, prim.Variable):
        var = caller.get_var(expr.name)
        if not isinstance(var, (ArrayArg, TemporaryVariable)):
            raise KernelcoreError(f"'{expr.name}' is passed for an array but is a scalar")
        return ArrayArgDescriptor(tuple(var.shape), _aspace(var), tuple(
            FixedStrideArrayDimTag(s) for s in var.element_strides()))
    if not isinstance(expr, prim.Subscript) or not isinstance(expr.aggregate, prim.Variable):
        raise KernelcoreError(f"{expr} is passed for an array: pass an array, a slice "
                              "of one or one of its elements")
    var = caller.get_var(expr.aggregate.name)
    shape, strides = [], []
    for axis, (ix, stride) in enumerate(zip(assignee_subscript(expr),
                                            var.element_strides())):
        if isinstance(ix, prim.Slice):
            start, stop, step = slice_bounds(ix, var.shape[axis])
            length = affine_simplify(stop - start, caller.space)
            if step == 1:
                shape.append(length)
            else:
                shape.append(-(-length // step) if isinstance(length, int) else
                             prim.FloorDiv(length + step - (1 if step > 0 else -1), step))
            strides.append(FixedStrideArrayDimTag(stride * step))
    return ArrayArgDescriptor(tuple(shape), _aspace(var), tuple(strides))


def _aspace(var: Any) -> AddressSpace:
    aspace = getattr(var, "address_space", AddressSpace.GLOBAL)
    return AddressSpace.PRIVATE if aspace is auto else aspace


def _first_element(caller: LoopKernel, expr: Any) -> Any:
    """The caller's first element of the sub-array *expr*."""
    if not isinstance(expr, prim.Subscript) or not isinstance(expr.aggregate, prim.Variable):
        return expr
    shape = caller.get_var(expr.aggregate.name).shape
    index = tuple(slice_bounds(ix, shape[axis])[0] if isinstance(ix, prim.Slice) else ix
                  for axis, ix in enumerate(assignee_subscript(expr)))
    return prim.Subscript(expr.aggregate, index)


def kernel_call_statement(caller: LoopKernel, insn: Any, clbl: Any, types: Any,
                          render: Callable[[Any, Any], str], helpers: Any,
                          generate_function: Callable[[LoopKernel, Any], str]) -> str:
    """The C statement calling the callee kernel *clbl* for *insn*; its device
    function, from ``generate_function(callee, helpers)``, is added to
    *helpers*."""
    callee = clbl.subkernel
    positions = _positions(callee)
    params = list(insn.expression.parameters)
    assignees = list(insn.assignees) if hasattr(insn, "assignees") else [insn.assignee]
    given = {**dict(enumerate(params)), **{-k - 1: a for k, a in enumerate(assignees)}}
    missing = sorted(set(positions) - set(given))
    if missing or len(given) != len(positions):
        ins = [positions[p] for p in sorted(p for p in positions if p >= 0)]
        outs = [positions[p] for p in sorted((p for p in positions if p < 0), reverse=True)]
        raise KernelcoreError(
            f"call '{insn.id}' of kernel '{callee.name}': it takes the inputs "
            f"({', '.join(ins)}) and returns ({', '.join(outs)}); the call passes "
            f"{len(params)} and assigns {len(assignees)}")
    dtypes, descrs = {}, {}
    for pos, expr in given.items():
        arg = callee.arg_dict[positions[pos]]
        dtypes[pos] = types(_first_element(caller, expr)).dtype
        descrs[pos] = kernel_arg_descriptor(caller, expr, not isinstance(arg, ValueArg))
    clbl, _ = clbl.with_types({p: NumpyType(d) for p, d in dtypes.items()},
                             CallablesInferenceContext({}))
    # strides reading caller variables become scalar arguments of the callee
    deps = sorted(frozenset().union(*(d.depends_on() for d in descrs.values())))
    renames = {}
    for dep in deps:
        clbl, callee_name = clbl.with_added_arg(NumpyType(caller.get_var(dep).dtype),
                                                ValueArgDescriptor())
        renames[dep] = prim.Variable(callee_name)
    if renames:
        mapper = SubstitutionMapper(lambda name: renames.get(name))
        descrs = {p: d.map_expr(mapper) for p, d in descrs.items()}
    clbl, _ = clbl.with_descrs(descrs, CallablesInferenceContext({}))
    fname = _function_for(clbl.subkernel, helpers, generate_function)
    callee = clbl.subkernel
    positions = _positions(callee)
    by_name = {positions[p]: e for p, e in given.items()}
    by_name.update({str(v): prim.Variable(k) for k, v in renames.items()})
    args = []
    for arg in callee.args:
        expr = by_name[arg.name]
        if isinstance(arg, ValueArg):
            args.append(render(expr, arg.dtype))
            continue
        first = _first_element(caller, expr)
        if isinstance(first, prim.Variable) and caller.get_var(first.name).shape != ():
            args.append(first.name)            # a whole array: its pointer
            continue
        code = render(first, None)
        args.append(code[:-3] if code.endswith("[0]") and isinstance(first, prim.Variable)
                    else f"&{code}")
    return f"{fname}({', '.join(args)});"


def _function_for(callee: LoopKernel, helpers: Any,
                  generate_function: Callable[[LoopKernel, Any], str]) -> str:
    """The name of the device function of the specialized *callee*, generated
    into *helpers* once per distinct specialization."""
    table = helpers.__dict__.setdefault("callee_functions", {})
    key = callee.stringify() + "\n" + "\n".join(
        f"{a.name}: {a.dtype} {getattr(a, 'strides', None)} {getattr(a, 'address_space', '')}"
        for a in callee.args)
    if key in table:
        return table[key]
    used = set(table.values())
    name, k = callee.name, 0
    while name in used:
        k += 1
        name = f"{callee.name}_{k}"
    table[key] = name
    helpers.helpers[f"kc_callee_{name}"] = generate_function(
        callee.copy(name=name), helpers)
    return name


__all__ = ["link_callees", "callee_function_problem", "kernel_arg_descriptor",
           "kernel_call_statement"]

provide("link_callees", link_callees)
