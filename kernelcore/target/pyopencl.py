"""The pyopencl target at loopy's module path (``loopy.target.pyopencl``).

Public names: PyOpenCLTarget.
"""

from kernelcore.target.opencl import PyOpenCLTarget

__all__ = ["PyOpenCLTarget"]
