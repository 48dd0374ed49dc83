"""Array axis tags at loopy's module path (``loopy.kernel.array``).

Public names: FixedStrideArrayDimTag.
"""

from kernelcore.callables import FixedStrideArrayDimTag

__all__ = ["FixedStrideArrayDimTag"]
