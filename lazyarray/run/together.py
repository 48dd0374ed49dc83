"""Building several kernels' OpenCL programs as one.

PoCL spends most of a cold program build in work done once per program
(starting the compiler, its kernel library), not per kernel: twenty small
programs built one by one take several times as long as one program holding
the twenty. A compiled function's first run builds the programs of all its
new kernels together (:func:`build_together`, see
:mod:`lazyarray.run.prebuild`).

These programs are built from source and no binary is asked of them
(:func:`build_program`): on PoCL, asking for a program's binary compiles
every kernel of it once more (about twice the build), while PoCL's own
cache of source builds serves a later process as well (its source build of
a cached program takes tens of milliseconds).

The merged source is the programs' sources one after the other, each
kernel renamed with the suffix of its program's place (``name__k3``),
repeated top-level text (the same macro, the same helper function) kept
once, but each program's floating-point contraction pragma stated again
before its code (a merged program's kernels compute as they would built
alone; programs of different settings sharing a floating-point helper are
merged per setting). A program that merges badly (two different definitions of one
helper) fails the build: nothing is merged then, each program is built
alone as before.

A later process meets these kernels one by one (from their disk recipes,
:meth:`~lazyarray.run.launch.BoundLaunch.from_recipe`); the disk store
:data:`_MEMBERS` says which merged program each source was part of, so
:func:`member_kernels` builds that program once (from source, which
PoCL's cache serves) and hands each recipe its kernels.

Public names: build_together, build_program, member_kernels, recipe_name,
merged_source, SettingsClash.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading

import pyopencl as cl

from kernelcore import DiskStore, KeyedLocks, compile_program, default_cache_dir, made_once
from lazyarray.run.cache import _enabled

logger = logging.getLogger(__name__)

#: what a kernel's name gets in a merged program, before its program's place
SUFFIX = "__k"
_RENAMED = re.compile(re.escape(SUFFIX) + r"\d+$")
#: the pragma setting floating-point contraction for the code after it
_CONTRACT = re.compile(r"\s*#\s*pragma\s+OPENCL\s+FP_CONTRACT\b")
#: OpenCL C's setting where a program states none
_DEFAULT_CONTRACT = "#pragma OPENCL FP_CONTRACT ON"
#: a floating-point type: code using it computes under the contraction setting
_FLOATING = re.compile(r"\b(half|float|double)\d*\b")
#: merged programs built by this process, by context and merged source digest
_BUILT: dict[tuple, cl.Program] = {}
#: the most programs built together kept in memory (see kernelcore's PROGRAMS_KEPT)
BUILT_KEPT = 128
_BUILDING = KeyedLocks()
_STORE: dict[str, DiskStore] = {}
_STORE_LOCK = threading.Lock()


def recipe_name(function_name: str) -> str:
    """The name a kernel has in its own program's source (without the
    suffix a merged program gave it)."""
    return _RENAMED.sub("", function_name)


def _chunks(source: str) -> list[str]:
    """*source*'s top-level pieces: preprocessor lines, conditional blocks
    (``#if``/``#ifdef``/``#ifndef`` to their ``#endif``, whole: a helper's
    include guard) and declarations or definitions (up to the ``;`` or ``}``
    closing them at brace depth 0)."""
    chunks: list[str] = []
    current: list[str] = []
    depth = 0
    block: list[str] = []
    nesting = 0
    for line in source.splitlines():
        directive = line.lstrip()
        if block or (not current and directive.startswith("#if")):
            block.append(line)
            if directive.startswith("#if"):
                nesting += 1
            elif directive.startswith("#endif"):
                nesting -= 1
            if nesting == 0:
                chunks.append("\n".join(block))
                block = []
            continue
        if not current and directive.startswith("#"):
            chunks.append(line)
            continue
        if not current and not line.strip():
            continue
        current.append(line)
        depth += line.count("{") - line.count("}")
        if depth == 0 and line.rstrip().endswith(("}", ";")):
            chunks.append("\n".join(current))
            current = []
    if current or block:
        chunks.append("\n".join(current or block))
    return chunks


class SettingsClash(ValueError):
    """Programs of different floating-point contraction settings share a
    function computing in floating point (kept once, it would compute
    under one setting for both)."""


def merged_source(programs: list[tuple[str, list[str]]]) -> str:
    """One source holding *programs* (each its source and kernel names),
    kernels renamed by place, repeated top-level text kept once. Each
    program's code is compiled under its own floating-point contraction
    setting (its ``FP_CONTRACT`` pragma, else the default, ``ON``), whatever
    the programs before it set; :class:`SettingsClash` where a function kept
    once would compute in floating point under another program's setting."""
    seen: dict[str, str] = {}          # (kept text: the setting it is under)
    out: list[str] = []
    for place, (source, names) in enumerate(programs):
        renaming = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b(?=\s*\()")
        contract = _DEFAULT_CONTRACT
        out.append(contract)
        for chunk in _chunks(source):
            if "__kernel" in chunk:
                out.append(renaming.sub(
                    lambda m: f"{m.group(1)}{SUFFIX}{place}", chunk))  # noqa: B023
            elif _CONTRACT.match(chunk):
                contract = chunk.strip()
                out.append(contract)
            elif chunk not in seen:
                seen[chunk] = contract
                out.append(chunk)
            elif seen[chunk] != contract and _FLOATING.search(chunk) \
                    and not (chunk.lstrip().startswith("#") and "\n" not in chunk):
                raise SettingsClash(chunk.splitlines()[0])
    return "\n".join(out) + "\n"


def _setting(source: str) -> str:
    """The contraction setting *source* ends with."""
    found = [c.strip() for c in _chunks(source) if _CONTRACT.match(c)]
    return found[-1] if found else _DEFAULT_CONTRACT


def _by_setting(ctx: cl.Context, programs: list[tuple[str, list[str]]]
                ) -> list[list[cl.Kernel]] | None:
    """:func:`build_together` of the programs of each contraction setting
    apart (None: one setting, or a part that did not merge)."""
    parts: dict[str, list[int]] = {}
    for k, (source, _) in enumerate(programs):
        parts.setdefault(_setting(source), []).append(k)
    if len(parts) < 2:
        return None
    result: list[list[cl.Kernel]] = [[] for _ in programs]
    for places in parts.values():
        kernels = build_together(ctx, [programs[k] for k in places])
        if kernels is None:
            return None
        for k, mine in zip(places, kernels):
            result[k] = mine
    return result


def _members() -> DiskStore:
    with _STORE_LOCK:
        if "store" not in _STORE:
            # (beside lazyarray's recipes, see lazyarray.run.cache)
            directory = os.environ.get("LAZYARRAY_CACHE_DIR") or default_cache_dir()
            _STORE["store"] = DiskStore("lazyarray-merged-v2", directory)
        return _STORE["store"]


def _digest(ctx: cl.Context, source: str) -> str:
    device = ctx.devices[0]
    identity = (device.platform.name, device.platform.version, device.name,
                device.driver_version)
    return hashlib.sha256(repr(identity).encode() + b"\0" + source.encode()).hexdigest()


def build_program(ctx: cl.Context, source: str) -> cl.Program:
    """*source* built for *ctx* with kernelcore's build options, from
    source: the platform's cache of source builds (PoCL's, NVIDIA's) or
    pyopencl's serves later builds."""
    return compile_program(ctx, source, keep_binary=False)


def _build_merged(ctx: cl.Context, source: str, digest: str) -> cl.Program:
    return made_once(_BUILT, (ctx.int_ptr, digest), lambda: build_program(ctx, source),
                     _BUILDING, BUILT_KEPT)


def build_together(ctx: cl.Context, programs: list[tuple[str, list[str]]]
                   ) -> list[list[cl.Kernel]] | None:
    """The kernels of each of *programs* (source, kernel names) built as one
    program for *ctx* (one program alone too: see the module documentation
    for the binary it is not asked for), each program's in its order of
    names; None when they do not merge (the caller builds them alone).
    Where the disk cache is on, a later process finds each source's merged
    program (:func:`member_kernels`)."""
    if not programs or len(ctx.devices) != 1:
        return None
    try:
        source = merged_source(programs)
    except SettingsClash:
        return _by_setting(ctx, programs)
    digest = _digest(ctx, source)
    try:
        program = _build_merged(ctx, source, digest)
    except cl.Error as error:
        logger.info("building %d programs as one failed, building them alone: %s",
                    len(programs), str(error).splitlines()[0])
        return None
    if _enabled():
        store = _members()
        store.put(digest, source)
        for place, (member, _) in enumerate(programs):
            store.put(_digest(ctx, member), (digest, place))
    return [[cl.Kernel(program, f"{name}{SUFFIX}{place}") for name in names]
            for place, (_, names) in enumerate(programs)]


def member_kernels(ctx: cl.Context, source: str, names: list[str]) -> list[cl.Kernel] | None:
    """The kernels *names* of *source* from the merged program that an
    earlier process built it in (built once in this process), or None."""
    if not _enabled() or len(ctx.devices) != 1:
        return None
    store = _members()
    entry = store.get(_digest(ctx, source), lambda v: isinstance(v, tuple) and len(v) == 2)
    if entry is None:
        return None
    digest, place = entry
    merged = store.get(digest, lambda v: isinstance(v, str))
    if merged is None or _digest(ctx, merged) != digest:
        return None
    program = _build_merged(ctx, merged, digest)
    return [cl.Kernel(program, f"{name}{SUFFIX}{place}") for name in names]


__all__ = ["SettingsClash", "build_program", "build_together", "member_kernels", "merged_source",
           "recipe_name"]
