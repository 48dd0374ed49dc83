"""Kernel options: how a kernel is run and what is shown while doing it.

Public names: Options, make_options.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from kernelcore.diagnostic import ParseError, UnknownNameError

_ALIASES = {"write_cl": "write_code"}


@dataclass(frozen=True)
class Options:
    """Per-kernel options.

    *write_code*: print the generated device code when it is built;
    *write_wrapper*: print the generated Python invoker; *return_dict*: calls
    return ``{name: array}`` instead of a tuple; *no_numpy*: do not accept or
    return numpy arrays (skip the host-transfer checks); *skip_arg_checks*: skip
    shape/dtype/stride checks of passed arrays; *allow_terminal_colors*: accepted
    for compatibility (output is never colored);
    *enforce_array_accesses_within_bounds*: an array access that may leave its
    array raises (True), warns (False), or is not looked for (``"no_check"``);
    *enforce_variable_access_ordered*: a write not ordered by dependencies
    against another access to its variable raises (True), warns (False), or is
    not looked for (``"no_check"``);
    *trace_assignments*: the generated code prints (``printf``) the place of
    each assignment as it runs, *trace_assignment_values* the value too;
    *annotate_inames*: accepted for compatibility (no effect);
    *build_options*: extra flags for the compiler of the C targets.
    """

    write_code: bool = False
    write_wrapper: bool = False
    return_dict: bool = False
    no_numpy: bool = False
    skip_arg_checks: bool = False
    allow_terminal_colors: bool = False
    enforce_array_accesses_within_bounds: bool | str = True
    enforce_variable_access_ordered: bool | str = True
    trace_assignments: bool = False
    trace_assignment_values: bool = False
    annotate_inames: bool = False
    build_options: tuple[str, ...] = ()

    def __post_init__(self):
        if isinstance(self.build_options, str) or not all(
                isinstance(o, str) for o in self.build_options):
            raise ParseError("option 'build_options' must be a list of strings, got "
                             f"{self.build_options!r}")
        object.__setattr__(self, "build_options", tuple(self.build_options))
        for name in ("enforce_array_accesses_within_bounds",
                     "enforce_variable_access_ordered"):
            if getattr(self, name) not in (True, False, "no_check"):
                raise ParseError(f"option '{name}' must be True, False or 'no_check', "
                                 f"got {getattr(self, name)!r}")

    def with_updates(self, *names: str, **values: object) -> Options:
        """A copy with the given flags set (positional names mean True; names
        may also be given as one comma-separated string)."""
        updates: dict[str, Any] = {}
        for spec in names:
            for name in spec.split(","):
                name = name.strip()
                if name:
                    updates[_ALIASES.get(name, name)] = True
        for name, value in values.items():
            updates[_ALIASES.get(name, name)] = value
        known = {f.name for f in fields(self)}
        for name in updates:
            if name not in known:
                raise UnknownNameError(
                    f"unknown kernel option '{name}' (known: {', '.join(sorted(known))})")
        return replace(self, **updates)
