"""lazyarray: lazily evaluated NumPy-style arrays compiled to fused OpenCL kernels.

The array API is being built on top of :mod:`kernelcore`; this package currently
provides only its version.
"""

__version__ = "0.1.0"
