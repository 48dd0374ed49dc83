"""Selecting instructions: the *within* argument of transformations.

A match is None (every instruction), a callable ``(kernel, insn) -> bool``, or a
string of alternatives separated by ``or`` or ``,``; each alternative is
``id:GLOB``, ``tag:GLOB``, ``writes:NAME``, ``reads:NAME``, ``iname:NAME`` or a
bare id glob.

Public names: parse_match.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from kernelcore.diagnostic import ParseError


def _one(term: str) -> Callable:
    kind, sep, value = term.partition(":")
    if not sep:
        kind, value = "id", term
    kind, value = kind.strip(), value.strip()
    if kind == "id":
        return lambda knl, insn: fnmatch.fnmatchcase(insn.id, value)
    if kind == "tag":
        return lambda knl, insn: any(fnmatch.fnmatchcase(t, value) for t in insn.tags)
    if kind == "writes":
        return lambda knl, insn: value in insn.assignee_names()
    if kind == "reads":
        return lambda knl, insn: value in insn.read_dependency_names()
    if kind == "iname":
        return lambda knl, insn: value in insn.within_inames
    raise ParseError(f"unknown match kind '{kind}' in {term!r} "
                     "(known: id, tag, writes, reads, iname)")


def parse_match(spec) -> Callable:
    """A predicate ``(kernel, insn) -> bool`` for *spec*."""
    if spec is None:
        return lambda knl, insn: True
    if callable(spec):
        return spec
    if not isinstance(spec, str):
        raise ParseError(f"invalid instruction match {spec!r}")
    terms = [t for t in re.split(r"\s+or\s+|,", spec) if t.strip()]
    preds = [_one(t.strip()) for t in terms]
    return lambda knl, insn: any(p(knl, insn) for p in preds)
