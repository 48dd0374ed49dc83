"""Operations on lazy arrays, one module per family.

Submodules load when first read from the package (``_ops.sort``): sorting
builds its own kernels, with kernelcore and OpenCL.
"""

from typing import TYPE_CHECKING

from lazyarray.deferred import submodule_getattr

if TYPE_CHECKING:
    from lazyarray.ops import sort  # noqa: F401

__getattr__ = submodule_getattr(__name__)
