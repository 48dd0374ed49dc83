"""Preprocessing: everything between a user's kernel and linearization.

Public names: preprocess_kernel, realize_reduction.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kernelcore.check import check_kernel
from kernelcore.diagnostic import KernelcoreError
from kernelcore.index_width import widen_index_dtype
from kernelcore.ir.data_params import add_bound_dependencies
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.transform.group_reduction import split_group_reductions
from kernelcore.transform.ilp import expand_ilp_temporaries
from kernelcore.transform.reduction import realize_reduction as _realize_typed
from kernelcore.transform.scan_check import check_scans
from kernelcore.transform.subst import expand_subst
from kernelcore.transform.temporaries import (
    allocate_temporaries_for_base_storage,
    choose_temporary_scopes,
)
from kernelcore.translation_unit import for_each_kernel
from kernelcore.types import _Unknown as UnknownType
from kernelcore.types import infer_types

if TYPE_CHECKING:
    from kernelcore.translation_unit import TranslationUnit

logger = logging.getLogger(__name__)


@for_each_kernel
def preprocess_kernel(knl: LoopKernel) -> LoopKernel:
    """Expand substitution rules, widen indices that fixed sizes need
    (:func:`~kernelcore.index_width.widen_index_dtype`), infer types, give
    temporaries sharing a base storage one allocation, check
    for races, realize reductions, choose temporary scopes and expand ilp
    temporaries."""
    if knl.state >= KernelState.PREPROCESSED:
        return knl
    knl = expand_subst(knl)
    if knl.substitutions:
        knl = knl.copy(substitutions={})
    knl = allocate_temporaries_for_base_storage(infer_types(widen_index_dtype(knl)))
    check_kernel(knl)
    knl = add_bound_dependencies(_realize_typed(split_group_reductions(knl)))
    knl = choose_temporary_scopes(knl)
    knl = expand_ilp_temporaries(knl)
    logger.debug("preprocessed %s", knl.name)
    return knl.copy(state=KernelState.PREPROCESSED)


def realize_reduction(program: LoopKernel | TranslationUnit, insn_id_filter: Any = None,
                      unknown_types_ok: bool = True, automagic_scans_ok: bool = False,
                      force_scan: bool = False, force_outer_iname_for_scan: str | None = None
                      ) -> LoopKernel | TranslationUnit:
    """The kernel (or translation unit) with its reductions turned into
    accumulator temporaries and the instructions that initialize and update
    them, as loopy's ``realize_reduction``. *insn_id_filter* (an instruction
    id or a list of ids) limits this to those instructions. Types are
    inferred first; with *unknown_types_ok* False every type must be known.
    Reductions over triangular domains (``{[i,j]: 0<=i<n and 0<=j<=i}``) are
    realized as scans where the sweep
    steps by one (a running value along a sequential or ``l.N`` sweep), else as a
    reduction per sweep value; *force_scan* raises
    :class:`~kernelcore.diagnostic.ReductionIsNotTriangularError` for a
    reduction that is not a scan (*force_outer_iname_for_scan* names the
    sweep iname where several could be). A kernel whose reduced values' types
    are not known yet (*unknown_types_ok*) is returned as it is: its
    reductions are realized when it is preprocessed."""

    def realize(knl: LoopKernel) -> LoopKernel:
        if force_scan:
            check_scans(knl, wanted, force_outer_iname_for_scan)  # type: ignore[name-defined]  # (bound below, before the call)
        try:
            return realize_typed(infer_types(expand_subst(knl),  # type: ignore[name-defined]
                                             require_all=not unknown_types_ok))
        except UnknownType:
            if not unknown_types_ok:
                raise
            return knl      # realized when preprocessed, once the types are given

    wanted = None if insn_id_filter is None else (
        {insn_id_filter} if isinstance(insn_id_filter, str) else set(insn_id_filter))

    def realize_typed(typed: LoopKernel) -> LoopKernel:
        if wanted is None:
            return _realize_typed(split_group_reductions(typed))
        missing = wanted - {i.id for i in typed.instructions}
        if missing:
            raise KernelcoreError("realize_reduction: no instruction(s) "
                                  + ", ".join(f"'{m}'" for m in sorted(missing)))
        others = [i for i in typed.instructions if i.id not in wanted]
        only = typed.copy(instructions=tuple(i for i in typed.instructions
                                             if i.id in wanted))
        done = _realize_typed(split_group_reductions(only))
        return done.copy(instructions=[*others, *done.instructions])

    return for_each_kernel(realize)(program)
