"""Transformations of kernel data: argument names, layouts, the argument list.

Public names: tag_array_axes, rename_argument, remove_unused_arguments, set_argument_order,
reduction_arg_to_subst_rule, and (loopy's module path) add_padding_to_avoid_bank_conflicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, ParseError, UnknownNameError
from kernelcore.ir.data import ArrayArg, ValueArg, parse_shape
from kernelcore.ir.expr import IdentityMapper, Reduction, get_dependencies, substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.subst import SubstitutionRule
from kernelcore.ir.tags import VECTOR_WIDTHS
from kernelcore.match import parse_match
from kernelcore.transform.padding import add_padding_to_avoid_bank_conflicts  # noqa: F401
from kernelcore.translation_unit import for_each_kernel


def _strides_from_tags(shape: tuple, tags: list[str]):
    """Element strides for per-axis tags: 'c'/'f' (C/Fortran nesting), 'N<k>'
    (k-th fastest axis), or 'stride:EXPR'."""
    n = len(shape)
    if len(tags) != n:
        raise ParseError(f"tag_array_axes: {len(tags)} tag(s) for {n} axes")
    vec = [k for k, t in enumerate(tags) if t.lower() == "vec"]
    if len(vec) > 1:
        raise ParseError("tag_array_axes: at most one axis may be tagged 'vec'")
    if vec:
        return _vec_strides(shape, tags, vec[0])
    if all(t.startswith("stride:") for t in tags):
        return parse_shape(tuple(t[len("stride:"):] for t in tags))
    low = [t.lower() for t in tags]
    if all(t == "c" for t in low):
        levels = list(range(n - 1, -1, -1))
    elif all(t == "f" for t in low):
        levels = list(range(n))
    elif all(re.fullmatch(r"n\d+", t) for t in low):
        levels = [int(t[1:]) for t in low]
        if sorted(levels) != list(range(n)):
            raise ParseError(f"tag_array_axes: N-tags must number the axes 0..{n-1}")
    else:
        raise ParseError(f"tag_array_axes: unsupported tags {tags} (use all 'c', all 'f', "
                         "'N0,N1,...' or 'stride:EXPR' for every axis)")
    strides: list = [None] * n
    stride = 1
    for level in range(n):
        axis = levels.index(level)
        strides[axis] = stride
        stride = shape[axis] if stride == 1 else stride * shape[axis]
    return tuple(strides)


def _vec_strides(shape: tuple, tags: list[str], axis: int) -> tuple:
    """Strides for tags with a ``vec`` axis: it holds the lanes of OpenCL
    vector values (contiguous, as ``vloadN``/``vstoreN`` access them; 3
    lanes are packed, not padded to 4), the others nest outside it as their
    own tags say."""
    lanes = shape[axis]
    if not isinstance(lanes, int) or lanes not in VECTOR_WIDTHS:
        raise ParseError(f"tag_array_axes: a 'vec' axis needs a fixed length in "
                         f"{VECTOR_WIDTHS}, got {lanes}")
    if len(shape) == 1:
        return (1,)
    outer = [s * lanes for s in _strides_from_tags(shape[:axis] + shape[axis + 1:],
                                                    tags[:axis] + tags[axis + 1:])]
    return tuple(outer[:axis]) + (1,) + tuple(outer[axis:])


@for_each_kernel
def tag_array_axes(knl: LoopKernel, array_names: Iterable[str], dim_tags: Any) -> LoopKernel:
    """Set the memory layout of arrays: ``"c"``/``"f"`` (all axes), ``"c,c"``,
    ``"f,f"``, ``"N0,N1"`` or ``"stride:1,stride:n"``; a tag ``vec`` (``"c,vec"``,
    ``"vec,c,c"``) makes its axis the contiguous lanes of vector values."""
    names = [s.strip() for s in array_names.split(",")] if isinstance(array_names, str) \
        else list(array_names)
    tags = [t.strip() for t in dim_tags.split(",")] if isinstance(dim_tags, str) \
        else list(dim_tags)

    low = [t.lower() for t in tags]
    plain_order = "C" if all(t == "c" for t in low) else (
        "F" if all(t == "f" for t in low) else None)

    def update(var):
        if not isinstance(var.shape, tuple):
            raise KernelcoreError(f"tag_array_axes: '{var.name}' has no known shape")
        if plain_order is not None and len(tags) == 1:
            return var.copy(order=plain_order, strides=None)
        if plain_order is not None and len(tags) == len(var.shape):
            return var.copy(order=plain_order, strides=None)
        return var.copy(strides=_strides_from_tags(var.shape, tags))

    args = list(knl.args)
    temps = dict(knl.temporary_variables)
    for name in names:
        if name in knl.arg_dict and isinstance(knl.arg_dict[name], ArrayArg):
            args = [update(a) if a.name == name else a for a in args]
        elif name in temps:
            temps[name] = update(temps[name])
        else:
            raise UnknownNameError(f"tag_array_axes: no array called '{name}'")
    return knl.copy(args=tuple(args), temporary_variables=temps)


@for_each_kernel
def rename_argument(knl: LoopKernel, old_name: str, new_name: str) -> LoopKernel:
    """Rename an argument everywhere it is used."""
    if old_name not in knl.arg_dict:
        raise UnknownNameError(f"rename_argument: no argument called '{old_name}' "
                               f"(arguments: {', '.join(knl.arg_dict)})")
    taken = set(knl.arg_dict) | set(knl.temporary_variables) | set(knl.all_inames())
    if new_name in taken:
        raise KernelcoreError(f"rename_argument: name '{new_name}' is already in use")
    var = prim.Variable(new_name)

    def subst(expr):
        return substitute(expr, {old_name: var})

    def fix_shape(v):
        if isinstance(getattr(v, "shape", None), tuple):
            v = v.copy(shape=tuple(subst(s) for s in v.shape))
        if isinstance(getattr(v, "strides", None), tuple):
            v = v.copy(strides=tuple(subst(s) for s in v.strides))
        return v

    args = tuple(fix_shape(a.copy(name=new_name) if a.name == old_name else a)
                 for a in knl.args)
    insns = tuple(i.with_transformed_expressions(subst) for i in knl.instructions)
    domains = []
    for dom in knl.domains:
        v = dom.get_var_dict()
        if old_name in v:
            dt, idx = v[old_name]
            dom = dom.set_dim_name(dt, idx, new_name)
        domains.append(dom)
    assumptions = knl.assumptions
    if assumptions is not None and old_name in assumptions.get_var_dict():
        dt, idx = assumptions.get_var_dict()[old_name]
        assumptions = assumptions.set_dim_name(dt, idx, new_name)
    return knl.copy(args=args, instructions=insns, domains=tuple(domains),
                    assumptions=assumptions)


@for_each_kernel
def remove_unused_arguments(knl: LoopKernel) -> LoopKernel:
    """Drop arguments no instruction, domain or shape refers to."""
    used: set[str] = set(knl.all_params())
    for insn in knl.instructions:
        used |= insn.assignee_names() | insn.read_dependency_names()
    for var in list(knl.args) + list(knl.temporary_variables.values()):
        for attr in ("shape", "strides"):
            value = getattr(var, attr, None)
            if isinstance(value, tuple):
                for s in value:
                    used |= get_dependencies(s)
    args = tuple(a for a in knl.args if a.name in used or (
        isinstance(a, ValueArg) and a.name in knl.all_params()))
    return knl.copy(args=args)


@for_each_kernel
def set_argument_order(knl: LoopKernel, arg_names: Iterable[str]) -> LoopKernel:
    """The kernel with its arguments in the order *arg_names* (a list, or one
    comma-separated string) gives; every argument must be named once."""
    names = [s.strip() for s in arg_names.split(",")] if isinstance(arg_names, str) \
        else list(arg_names)
    if sorted(names) != sorted(knl.arg_dict):
        raise KernelcoreError(f"set_argument_order: kernel {knl.name} has the arguments "
                              f"{', '.join(knl.arg_dict)}; name each once, got "
                              f"{', '.join(names)}")
    return knl.copy(args=tuple(knl.arg_dict[n] for n in names))


class _ReductionArgToRule(IdentityMapper):
    """Moves the reduced expression of each reduction over exactly *inames*
    into a new substitution rule taking those inames."""

    def __init__(self, inames: tuple[str, ...], rule_name: Any,
                 rules: dict[str, SubstitutionRule]):
        self.inames = inames
        self.rule_name = rule_name
        self.rules = rules

    def map_reduction(self, expr: Reduction) -> Reduction:
        if frozenset(expr.inames) != frozenset(self.inames):
            return Reduction(expr.operation, expr.inames, self.rec(expr.expr),
                             expr.allow_simultaneous)
        name = self.rule_name()
        if name in self.rules:
            raise KernelcoreError(f"reduction_arg_to_subst_rule: substitution rule "
                                  f"'{name}' already exists")
        self.rules[name] = SubstitutionRule(name, self.inames, expr.expr)
        call = prim.Variable(name)(*(prim.Variable(n) for n in self.inames))
        return Reduction(expr.operation, expr.inames, call, expr.allow_simultaneous)

    def map_constant(self, expr: Any) -> Any:
        return expr


@for_each_kernel
def reduction_arg_to_subst_rule(knl: LoopKernel, inames: Iterable[str] | str,
                                insn_match: Any = None,
                                subst_rule_name: str | None = None) -> LoopKernel:
    """*knl* where the reduced expression of every reduction over exactly
    *inames* (in the instructions *insn_match* matches) is a substitution rule
    of those inames (named *subst_rule_name*, or ``red_<inames>_arg``
    made unique), which the reduction calls."""
    names = tuple(n.strip() for n in inames.split(",")) if isinstance(inames, str) \
        else tuple(inames)
    gen = UniqueNameGenerator(set(knl.all_inames()) | set(knl.all_params())
                              | set(knl.arg_dict) | set(knl.temporary_variables)
                              | set(knl.substitutions))
    rules = dict(knl.substitutions)
    mapper = _ReductionArgToRule(
        names, (lambda: subst_rule_name) if subst_rule_name is not None
        else (lambda: gen(f"red_{'_'.join(names)}_arg")), rules)
    match = parse_match(insn_match)
    insns = tuple(i.with_transformed_expressions(mapper) if match(knl, i) else i
                  for i in knl.instructions)
    return knl.copy(instructions=insns, substitutions=rules)
