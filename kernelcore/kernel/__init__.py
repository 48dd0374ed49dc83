"""The kernel object at loopy's module path (``loopy.kernel``).

Public names: LoopKernel, KernelState. The submodules
:mod:`~kernelcore.kernel.data`, :mod:`~kernelcore.kernel.instruction` and
:mod:`~kernelcore.kernel.function_interface` hold loopy's names for arguments
and temporaries, instructions and callables.
"""

from kernelcore.ir.kernel import KernelState, LoopKernel

__all__ = ["LoopKernel", "KernelState"]
