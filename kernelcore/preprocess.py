"""Preprocessing: everything between a user's kernel and linearization.

Public names: preprocess_kernel.
"""

from __future__ import annotations

import logging

from kernelcore.ir.data import AddressSpace, auto
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.check import check_kernel
from kernelcore.transform.ilp import expand_ilp_temporaries
from kernelcore.transform.reduction import realize_reduction
from kernelcore.types import infer_types

logger = logging.getLogger(__name__)


def _default_temporary_scopes(knl: LoopKernel) -> LoopKernel:
    temps = {name: (tv.copy(address_space=AddressSpace.PRIVATE)
                    if tv.address_space is auto else tv)
             for name, tv in knl.temporary_variables.items()}
    return knl.copy(temporary_variables=temps)


def preprocess_kernel(knl: LoopKernel) -> LoopKernel:
    """Infer types, check for races, realize reductions, choose temporary scopes
    and expand ilp temporaries."""
    if knl.state >= KernelState.PREPROCESSED:
        return knl
    knl = infer_types(knl)
    check_kernel(knl)
    knl = realize_reduction(knl)
    knl = _default_temporary_scopes(knl)
    knl = expand_ilp_temporaries(knl)
    logger.debug("preprocessed %s", knl.name)
    return knl.copy(state=KernelState.PREPROCESSED)
