"""Exception and warning classes of kernelcore.

Every error kernelcore raises derives from :class:`KernelcoreError` and from the
built-in exception type a Python user would expect for that kind of problem.

Public names: KernelcoreError, LoopyError, ParseError, UnsatisfiableDomainError,
UnknownNameError, TypeInferenceFailure, StaticValueFindingError, InvocationError,
OpenCLBuildError, SchedulingError, MissingBarrierError, CodeGenerationError,
MissingDefinitionError, AccessOutOfBoundsError, KernelcoreWarning, LoopyWarning,
WriteRaceConditionWarning.
"""

from __future__ import annotations


class KernelcoreError(Exception):
    """Base class of all kernelcore errors."""


LoopyError = KernelcoreError


class ParseError(KernelcoreError, ValueError):
    """Malformed domain, instruction or option text."""


class UnsatisfiableDomainError(KernelcoreError, ValueError):
    """A loop domain is empty for every parameter value the assumptions allow."""


class UnknownNameError(KernelcoreError, NameError):
    """A name (iname, variable, argument) that the kernel does not know."""


class TypeInferenceFailure(KernelcoreError, TypeError):
    """Types could not be determined, or conflict."""


class StaticValueFindingError(KernelcoreError, ValueError):
    """No static (parameter-affine) bound could be found for an extent."""


class InvocationError(KernelcoreError, ValueError):
    """Arguments passed to a kernel call are missing or inconsistent."""


class OpenCLBuildError(KernelcoreError, RuntimeError):
    """The device compiler rejected the generated code."""


class SchedulingError(KernelcoreError, RuntimeError):
    """No valid ordering of loops and instructions exists."""


class MissingBarrierError(SchedulingError):
    """Data moves between work-items without the global barrier that would order it."""


class CodeGenerationError(KernelcoreError, RuntimeError):
    """Code for a construct could not be generated (e.g. an unknown function)."""


class MissingDefinitionError(CodeGenerationError):
    """A temporary is read in a device kernel that does not write it."""


class AccessOutOfBoundsError(KernelcoreError, IndexError):
    """An array access may fall outside the array's shape for parameter values
    the kernel accepts (see :mod:`kernelcore.check_bounds`)."""


class KernelcoreWarning(UserWarning):
    """Base class of kernelcore's warnings."""


LoopyWarning = KernelcoreWarning


class WriteRaceConditionWarning(KernelcoreWarning, KernelcoreError):
    """Several work-items would write the same element. Raised as an error unless
    silenced with the kernel's ``silenced_warnings``."""
