"""Code generation targets, at loopy's module path (``loopy.target``).

Public names: TargetBase, CFamilyTarget, ASTBuilderBase, OpenCLTarget,
PyOpenCLTarget, CTarget, ExecutableCTarget.
"""

from kernelcore.target.base import ASTBuilderBase, CFamilyTarget, TargetBase
from kernelcore.target.c import CTarget, ExecutableCTarget
from kernelcore.target.opencl import OpenCLTarget, PyOpenCLTarget

__all__ = ["TargetBase", "CFamilyTarget", "ASTBuilderBase", "OpenCLTarget",
           "PyOpenCLTarget", "CTarget", "ExecutableCTarget"]
