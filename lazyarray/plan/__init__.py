"""Planning: which values of a graph are stored, and why (``storage``).

Submodules load when first read from the package (``_plan.storage``): they
need kernelcore.
"""

from typing import TYPE_CHECKING

from lazyarray.deferred import submodule_getattr

if TYPE_CHECKING:
    from lazyarray.plan import storage  # noqa: F401

__getattr__ = submodule_getattr(__name__)
