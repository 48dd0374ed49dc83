"""Preprocessing: everything between a user's kernel and linearization.

Public names: preprocess_kernel.
"""

from __future__ import annotations

import logging

from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.check import check_kernel
from kernelcore.index_width import widen_index_dtype
from kernelcore.transform.ilp import expand_ilp_temporaries
from kernelcore.transform.reduction import realize_reduction, split_group_reductions
from kernelcore.transform.subst import expand_subst
from kernelcore.transform.temporaries import choose_temporary_scopes
from kernelcore.types import infer_types

logger = logging.getLogger(__name__)


def preprocess_kernel(knl: LoopKernel) -> LoopKernel:
    """Expand substitution rules, widen indices that fixed sizes need
    (:func:`~kernelcore.index_width.widen_index_dtype`), infer types, check
    for races, realize reductions, choose temporary scopes and expand ilp
    temporaries."""
    if knl.state >= KernelState.PREPROCESSED:
        return knl
    knl = expand_subst(knl)
    if knl.substitutions:
        knl = knl.copy(substitutions={})
    knl = infer_types(widen_index_dtype(knl))
    check_kernel(knl)
    knl = realize_reduction(split_group_reductions(knl))
    knl = choose_temporary_scopes(knl)
    knl = expand_ilp_temporaries(knl)
    logger.debug("preprocessed %s", knl.name)
    return knl.copy(state=KernelState.PREPROCESSED)
