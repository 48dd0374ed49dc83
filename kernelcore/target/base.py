"""The root of the target hierarchy, under loopy's names.

Public names: TargetBase, CFamilyTarget, ASTBuilderBase.

A target decides the language of the generated code and how kernels run. The
concrete targets are :class:`~kernelcore.target.opencl.OpenCLTarget`,
:class:`~kernelcore.target.opencl.PyOpenCLTarget`,
:class:`~kernelcore.target.c.CTarget` and
:class:`~kernelcore.target.c.ExecutableCTarget`.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class TargetBase:
    """What every target answers: its name, how it spells types, and whether
    device kernels are split at global barriers."""

    name = "base"
    #: a host program launching several device kernels (split at global barriers)
    split_kernel_at_global_barriers_flag = True
    #: fields that make two targets generate the same code
    hash_fields: tuple[str, ...] = ()
    comparison_fields: tuple[str, ...] = ()

    def split_kernel_at_global_barriers(self) -> bool:
        """Whether a global barrier ends one device kernel and starts the next."""
        return self.split_kernel_at_global_barriers_flag

    def dtype_to_typename(self, dtype: Any) -> str:
        """The name of *dtype* in the generated code."""
        return self.dtype_to_ctype(np.dtype(getattr(dtype, "numpy_dtype", dtype)))

    def dtype_to_ctype(self, dtype: np.dtype) -> str:
        """The name of *dtype* in the generated code (implemented by targets)."""
        raise NotImplementedError

    def is_vector_dtype(self, dtype: Any) -> bool:
        """Whether *dtype* is one of the target's vector types (none here)."""
        return False

    def get_device_ast_builder(self) -> ASTBuilderBase:
        """The object that spells device code for this target."""
        return ASTBuilderBase(self)

    def get_host_ast_builder(self) -> ASTBuilderBase:
        """The object that spells host code for this target."""
        return ASTBuilderBase(self)

    def with_types(self, *args: Any, **kwargs: Any) -> TargetBase:
        """The target, unchanged (kept for loopy's API)."""
        return self


class CFamilyTarget(TargetBase):
    """Targets generating a C-like language (C99, OpenCL C)."""


class ASTBuilderBase:
    """Spells code for a target: here a thin handle on the target itself
    (:attr:`target`), giving access to its type names."""

    def __init__(self, target: TargetBase):
        self.target = target

    def get_function_declaration(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("kernelcore generates declarations itself")


__all__ = ["TargetBase", "CFamilyTarget", "ASTBuilderBase"]
