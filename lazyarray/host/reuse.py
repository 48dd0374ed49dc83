"""Where a host replay's NumPy calls put their results: over temporaries no
later call reads, and straight into the part of an argument they are
written to.

A replay (:mod:`lazyarray.host.replay`) runs the graph of a jitted function's
trace as NumPy calls. Run as the function is written, each ufunc call makes a
new array; the replay knows every value's last reader, so a ufunc call whose
operand is a temporary made by an earlier ufunc call, read by nothing after
it, writes its result over that operand (``out=``), and a value that is only
written into an argument (``u[1:-1] = ...``) is computed into that part of the
argument's buffer. NumPy's answers are the same (the same loops on the same
operands; NumPy copies an operand that overlaps the output first); the call
allocates less, copies less and works in memory still in the cache.

Public names: Step, Write, reuse_memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

#: a replay step: the number of the value it computes, and the function of
#: the numbered values computing it
Step = tuple[int, Callable]


class Write(NamedTuple):
    """An argument the function writes into, as the replay sees it."""

    #: the number of the argument's value (its buffer)
    number: int
    dtype: np.dtype
    #: the numbers of the values that may share the argument's memory (its views)
    aliases: frozenset[int]
    #: ``(basic index, value number, index into the value or None)`` per part
    pieces: tuple[tuple[tuple, int, Any], ...]


def reuse_memory(steps: Sequence[Step], ufuncs: Mapping[int, tuple[np.ufunc, list[int]]],
                 operands: Mapping[int, set[int]], nodes: Mapping[int, Any],
                 kept: set[int], returned: set[int], writes: Sequence[Write],
                 copied_first: bool) -> tuple[tuple[Step, ...], tuple[Write, ...]]:
    """*steps* with their results placed as the module says, and *writes*
    without the parts those steps now compute in place.

    *ufuncs*: the steps that are one ufunc call of the numbered operands,
    giving a new array; *operands*: the numbers each step reads; *kept*: the
    values the call returns or writes, *returned* those it returns;
    *copied_first*: whether some written part is a copy of a value read
    before the writes (then nothing is written early)."""
    position = {number: k for k, (number, _) in enumerate(steps)}
    last_reader: dict[int, int] = {}
    viewed: set[int] = set()        # (read by a step whose result may be a view)
    for k, (number, _) in enumerate(steps):
        for operand in operands[number]:
            last_reader[operand] = k
            if number not in ufuncs:
                viewed.add(operand)
    direct = {} if copied_first else _direct(writes, ufuncs, operands, nodes, returned,
                                              position, last_reader, steps)
    placed = list(steps)
    for k, (number, _) in enumerate(steps):
        spec = ufuncs.get(number)
        if spec is None:
            continue
        function, numbers = spec
        if number in direct:
            buffer, index = direct[number]
            placed[k] = (number, _call_into_part(function, numbers, buffer, index))
            continue
        node = nodes[number]
        for operand in numbers:
            if operand in ufuncs and operand not in viewed and operand not in kept \
                    and operand not in direct and last_reader[operand] == k \
                    and nodes[operand].shape == node.shape \
                    and nodes[operand].dtype == node.dtype:
                placed[k] = (number, _call_into(function, numbers, operand))
                break
    kept_writes = tuple(w._replace(pieces=tuple(p for p in w.pieces if p[1] not in direct))
                        for w in writes)
    return tuple(placed), kept_writes


def _direct(writes: Sequence[Write], ufuncs: Mapping, operands: Mapping[int, set[int]],
            nodes: Mapping[int, Any], returned: set[int], position: Mapping[int, int],
            last_reader: Mapping[int, int], steps: Sequence[Step]
            ) -> dict[int, tuple[int, tuple]]:
    """``{value number: (argument number, index)}`` of the written parts a
    ufunc step may compute into the argument's buffer: the whole value is
    written there and nowhere else, no step reads it, and no later step
    reads the argument's memory."""
    uses: dict[int, int] = {}
    for write in writes:
        for _, number, _ in write.pieces:
            uses[number] = uses.get(number, 0) + 1
    direct: dict[int, tuple[int, tuple]] = {}
    for write in writes:
        for index, number, part in write.pieces:
            if part is not None or number not in ufuncs or uses[number] != 1 \
                    or number in returned or number in last_reader:
                continue
            node = nodes[number]
            if node.dtype != write.dtype \
                    or node.shape != tuple(s.stop - s.start for s in index):
                continue
            later = steps[position[number] + 1:]
            if any(operands[n] & write.aliases for n, _ in later):
                continue
            direct[number] = (write.number, index)
    return direct


def _call_into(function: np.ufunc, numbers: list[int], into: int) -> Callable:
    """The ufunc ``function`` of the values numbered *numbers*, written over
    the value numbered *into* (one of them)."""
    if len(numbers) == 1:
        (a,) = numbers
        return lambda v: function(v[a], out=v[into])
    a, b = numbers
    return lambda v: function(v[a], v[b], out=v[into])


def _call_into_part(function: np.ufunc, numbers: list[int], buffer: int, index: tuple
                    ) -> Callable:
    """The ufunc ``function`` of the values numbered *numbers*, written into
    the part *index* of the buffer numbered *buffer*."""
    if len(numbers) == 1:
        (a,) = numbers
        return lambda v: function(v[a], out=v[buffer][index])
    a, b = numbers
    return lambda v: function(v[a], v[b], out=v[buffer][index])


__all__ = ["Step", "Write", "reuse_memory"]
