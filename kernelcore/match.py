"""Selecting instructions: the *within* argument of transformations.

A match is None (every instruction), a callable ``(kernel, insn) -> bool``, or a
string: terms ``id:GLOB``, ``tag:GLOB``, ``writes:NAME``, ``reads:NAME``,
``iname:NAME``, ``in_kernel:GLOB`` (the instructions of the kernels so named),
``*`` (every instruction) or a bare id glob, combined with ``and``, ``or`` (also
written ``,``), ``not`` and parentheses, as in loopy.

Public names: parse_match, ObjTagged.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernelcore.diagnostic import ParseError

Match = Callable[..., bool]
_TOKEN = re.compile(r"\s*(\(|\)|,|[^\s(),]+)")


def _one(term: str) -> Match:
    if term == "*":
        return lambda knl, insn: True
    kind, sep, value = term.partition(":")
    if not sep:
        kind, value = "id", term
    kind, value = kind.strip(), value.strip()
    if kind == "id":
        return lambda knl, insn: fnmatch.fnmatchcase(insn.id, value)
    if kind == "tag":
        return lambda knl, insn: any(fnmatch.fnmatchcase(t, value) for t in insn.tags)
    if kind == "writes":
        return lambda knl, insn: any(fnmatch.fnmatchcase(n, value)
                                     for n in insn.assignee_names())
    if kind == "reads":
        return lambda knl, insn: any(fnmatch.fnmatchcase(n, value)
                                     for n in insn.read_dependency_names())
    if kind == "iname":
        return lambda knl, insn: any(fnmatch.fnmatchcase(n, value)
                                     for n in insn.within_inames)
    if kind == "in_kernel":
        return lambda knl, insn: fnmatch.fnmatchcase(knl.name, value)
    raise ParseError(f"unknown match kind '{kind}' in {term!r} "
                     "(known: id, tag, writes, reads, iname, in_kernel)")


@dataclass(frozen=True)
class ObjTagged:
    """Matches the objects (instructions) whose tags include *tag*."""

    tag: Any

    def __call__(self, knl: Any, obj: Any) -> bool:
        return self.tag in obj.tags


class _Parser:
    """``or`` of ``and`` of (``not``) terms or parenthesized matches."""

    def __init__(self, spec: str):
        self.spec = spec
        self.tokens = _TOKEN.findall(spec)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ParseError(f"instruction match {self.spec!r} ends too early")
        self.pos += 1
        return token

    def parse(self) -> Match:
        match = self.alternatives()
        if self.peek() is not None:
            raise ParseError(f"unexpected '{self.peek()}' in instruction match {self.spec!r}")
        return match

    def alternatives(self) -> Match:
        parts = [self.conjunction()]
        while self.peek() in ("or", ","):
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else (
            lambda knl, insn: any(p(knl, insn) for p in parts))

    def conjunction(self) -> Match:
        parts = [self.negation()]
        while self.peek() == "and":
            self.take()
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else (
            lambda knl, insn: all(p(knl, insn) for p in parts))

    def negation(self) -> Match:
        token = self.take()
        if token == "not":
            inner = self.negation()
            return lambda knl, insn: not inner(knl, insn)
        if token == "(":
            inner = self.alternatives()
            if self.take() != ")":
                raise ParseError(f"unbalanced parentheses in instruction match {self.spec!r}")
            return inner
        if token in (")", "and", "or", ","):
            raise ParseError(f"unexpected '{token}' in instruction match {self.spec!r}")
        return _one(token)


def parse_match(spec: Match | str | None) -> Match:
    """A predicate ``(kernel, insn) -> bool`` for *spec*."""
    if spec is None:
        return lambda knl, insn: True
    if callable(spec):
        return spec
    if not isinstance(spec, str):
        raise ParseError(f"invalid instruction match {spec!r}")
    return _Parser(spec).parse()
