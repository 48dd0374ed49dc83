"""Giving each reduction inames of its own.

Public names: make_reduction_inames_unique.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import IdentityMapper, Reduction, substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.match import parse_match
from kernelcore.transform.iname import _duplicate_in_set, _names
from kernelcore.translation_unit import for_each_kernel


class _Uniquifier(IdentityMapper):
    """Renames the inames of each reduction that an earlier reduction
    (in the order met) already reduced over."""

    def __init__(self, wanted: frozenset[str] | None, new_name: Callable[[str], str]):
        self.wanted = wanted
        self.new_name = new_name
        self.seen: set[str] = set()
        #: (original iname, its copy), in the order made
        self.copies: list[tuple[str, str]] = []

    def map_reduction(self, expr: Reduction) -> Reduction:
        rename = {}
        for name in expr.inames:
            if name in self.seen and (self.wanted is None or name in self.wanted):
                rename[name] = self.new_name(name)
                self.copies.append((name, rename[name]))
        self.seen.update(expr.inames)
        body = substitute(expr.expr, {o: prim.Variable(n) for o, n in rename.items()})
        return Reduction(expr.operation, tuple(rename.get(n, n) for n in expr.inames),
                         self.rec(body), expr.allow_simultaneous)

    def map_constant(self, expr: Any) -> Any:
        return expr


@for_each_kernel
def make_reduction_inames_unique(knl: LoopKernel, inames: Iterable[str] | str | None = None,
                                 within: Any = None) -> LoopKernel:
    """*knl* where no two reductions (of the instructions *within* matches)
    reduce over the same iname: the second and later reductions over an
    iname (of *inames*, if given) get a copy of it, with the same bounds."""
    wanted = None if inames is None else frozenset(_names(inames))
    match = parse_match(within)
    gen = UniqueNameGenerator(set(knl.all_inames()) | set(knl.all_params())
                              | set(knl.arg_dict) | set(knl.temporary_variables)
                              | set(knl.substitutions))
    mapper = _Uniquifier(wanted, gen)
    insns = tuple(i.with_transformed_expressions(mapper) if match(knl, i) else i
                  for i in knl.instructions)
    if not mapper.copies:
        return knl
    domains = list(knl.domains)
    for old, new in mapper.copies:
        if any(old in knl.domain_parent_inames(i) for i in knl.all_inames()):
            raise KernelcoreError(f"make_reduction_inames_unique: '{old}' bounds other "
                                  "inames; copying it is not supported")
        domains = [_duplicate_in_set(d, old, new) for d in domains]
    return knl.copy(domains=tuple(domains), instructions=insns)
