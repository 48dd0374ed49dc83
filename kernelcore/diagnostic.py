"""Exception and warning classes of kernelcore.

Every error kernelcore raises derives from :class:`KernelcoreError` and from the
built-in exception type a Python user would expect for that kind of problem.

Public names: KernelcoreError, LoopyError, ParseError, UnsatisfiableDomainError,
UnknownNameError, TypeInferenceFailure, StaticValueFindingError, InvocationError,
OpenCLBuildError, SchedulingError, MissingBarrierError, CodeGenerationError,
MissingDefinitionError, AccessOutOfBoundsError, KernelcoreWarning, LoopyWarning,
WriteRaceConditionWarning, and the rest of loopy's names: LoopyWarningBase,
LoopyAdvisory, ParameterFinderWarning, CannotBranchDomainTree,
AutomaticTestFailure, DependencyTypeInferenceFailure, UnscheduledInstructionError,
ReductionIsNotTriangularError, LoopyTypeError, LoopyIndexError, LoopyKeyError,
ExpressionNotAffineError, ExpressionToAffineConversionError,
VariableAccessNotOrdered, DependencyCycleFound, UnableToDetermineAccessRangeError,
ScheduleDebugInputError; and warn_with_kernel.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fnmatch import fnmatchcase
from typing import Any


class KernelcoreError(RuntimeError):
    """Base class of all kernelcore errors (a RuntimeError, as loopy's LoopyError)."""


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


class OpenCLBuildError(KernelcoreError):
    """The device compiler rejected the generated code."""


class SchedulingError(KernelcoreError):
    """No valid ordering of loops and instructions exists."""


class MissingBarrierError(SchedulingError):
    """Data moves between work-items without the global barrier that would order it."""


class CodeGenerationError(KernelcoreError):
    """Code for a construct could not be generated (e.g. an unknown function)."""


class MissingDefinitionError(CodeGenerationError):
    """A temporary is read in a device kernel that does not write it."""


class LoopyIndexError(KernelcoreError, IndexError):
    """An index outside the range it must lie in."""


class AccessOutOfBoundsError(LoopyIndexError):
    """An array access may fall outside the array's shape for parameter values
    the kernel accepts (see :mod:`kernelcore.check_bounds`)."""


class CannotBranchDomainTree(KernelcoreError):
    """The loop domains do not nest as a tree."""


class AutomaticTestFailure(KernelcoreError):
    """:func:`~kernelcore.testing.auto_test_vs_ref` found results that differ
    from the reference."""


class DependencyTypeInferenceFailure(TypeInferenceFailure):
    """A type depends on a variable whose type is not known yet; *symbol*
    names it."""

    def __init__(self, message: str, symbol: str | None = None):
        super().__init__(message)
        self.symbol = symbol


class UnscheduledInstructionError(SchedulingError):
    """An instruction is missing from the linearization."""


class ReductionIsNotTriangularError(KernelcoreError, ValueError):
    """A reduction's domain is not of the (triangular) shape a transformation needs."""


class LoopyTypeError(KernelcoreError, TypeError):
    """An argument of the wrong type."""


class LoopyKeyError(KernelcoreError, KeyError):
    """A name or identifier that is not there."""


class ExpressionNotAffineError(KernelcoreError, ValueError):
    """An expression is not quasi-affine in the loop indices and parameters."""


class ExpressionToAffineConversionError(KernelcoreError, ValueError):
    """An expression cannot be turned into an isl affine function."""


class VariableAccessNotOrdered(KernelcoreError):
    """Two instructions touching one variable are not ordered by dependencies."""


class DependencyCycleFound(SchedulingError):
    """The instruction dependencies form a cycle."""


class UnableToDetermineAccessRangeError(KernelcoreError):
    """The range of indices an access touches could not be found."""


class ScheduleDebugInputError(KernelcoreError):
    """Bad interactive input to the linearization debugger."""


class KernelcoreWarning(UserWarning):
    """Base class of kernelcore's warnings."""


LoopyWarningBase = KernelcoreWarning
LoopyWarning = KernelcoreWarning


class LoopyAdvisory(KernelcoreWarning):
    """A hint about performance, not about correctness."""


class ParameterFinderWarning(KernelcoreWarning):
    """A kernel parameter could not be deduced from the arguments."""


class WriteRaceConditionWarning(KernelcoreWarning):
    """Several work-items would write the same element. A warning (filter it
    with :mod:`warnings` or silence it with the kernel's
    ``silenced_warnings``); code is generated anyway."""


def is_silenced(kernel: Any, id: str) -> bool:
    """Whether warning *id* matches one of the patterns in the kernel's
    ``silenced_warnings`` (fnmatch-style; a bare kind such as ``write_race``
    silences every ``write_race(...)``)."""
    kind = id.split("(", 1)[0]
    return any(fnmatchcase(id, pattern) or pattern == kind
               for pattern in kernel.silenced_warnings)


def warn_with_kernel(kernel: Any, id: str, text: str,
                     type: type[Warning] = KernelcoreWarning) -> None:
    """Issue warning *type* about *kernel* unless *id* is silenced
    (:func:`is_silenced`)."""
    if is_silenced(kernel, id):
        return
    message = (f"in kernel {kernel.name}: {text} (add '{id}' to silenced_warnings "
               "kernel attribute to disable)")
    recorded = _RECORDED.get()
    if recorded is not None:
        recorded.append((type, message))
    warnings.warn(message, type, stacklevel=3)


_RECORDED: ContextVar[list | None] = ContextVar("kernelcore_recorded_warnings", default=None)


@contextmanager
def recording_warnings() -> Iterator[list[tuple[type[Warning], str]]]:
    """Collect ``(category, message)`` of the warnings :func:`warn_with_kernel`
    issues in the block (they are issued as well), so that code taken from a
    cache can issue them again (:func:`reissue_warnings`)."""
    outer = _RECORDED.get()
    recorded: list[tuple[type[Warning], str]] = []
    token = _RECORDED.set(recorded)
    try:
        yield recorded
    finally:
        _RECORDED.reset(token)
        if outer is not None:
            outer.extend(recorded)


def reissue_warnings(recorded: Iterable[tuple[type[Warning], str]]) -> None:
    """Issue again the warnings *recorded* by :func:`recording_warnings`."""
    for category, message in recorded:
        warnings.warn(message, category, stacklevel=3)
