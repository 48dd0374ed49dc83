"""Fusing several kernels into one (loopy's ``fuse_kernels``).

Public names: fuse_kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.translation_unit import TranslationUnit


def _rename_temporary(knl: LoopKernel, old: str, new: str) -> LoopKernel:
    var = prim.Variable(new)
    insns = tuple(i.with_transformed_expressions(lambda e: substitute(e, {old: var}))
                  for i in knl.instructions)
    temps = {(new if n == old else n): (t.copy(name=new) if n == old else t)
             for n, t in knl.temporary_variables.items()}
    return knl.copy(instructions=insns, temporary_variables=temps)


def _rename_insn_ids(knl: LoopKernel, mapping: dict[str, str]) -> LoopKernel:
    def fix(insn):
        return insn.copy(id=mapping.get(insn.id, insn.id),
                         depends_on=frozenset(mapping.get(d, d) for d in insn.depends_on),
                         no_sync_with=frozenset((mapping.get(a, a), s)
                                                for a, s in insn.no_sync_with))
    return knl.copy(instructions=tuple(fix(i) for i in knl.instructions))


def _set_names(dom: isl.Set) -> list[str]:
    return [dom.get_dim_name(isl.dim_type.set, k)  # type: ignore[misc]
            for k in range(dom.dim(isl.dim_type.set))]


def _merge_two(prev: isl.Set, dom: isl.Set) -> isl.Set:
    """One set over the inames of both (constraints of both)."""
    extra = [n for n in _set_names(dom) if n not in _set_names(prev)]
    start = prev.dim(isl.dim_type.set)
    bigger = prev.add_dims(isl.dim_type.set, len(extra))
    for k, name in enumerate(extra):
        bigger = bigger.set_dim_name(isl.dim_type.set, start + k, name)
    bigger, other = isl.align_two(bigger, dom)
    return bigger.intersect(isl.align_spaces(other, bigger))


def _merge_domains(domains: Sequence[isl.Set]) -> tuple:
    """Domains sharing inames become one (inames of the same name are one iname)."""
    result: list[isl.Set] = []
    for dom in domains:
        names = set(_set_names(dom))
        for k, prev in enumerate(result):
            if names & set(_set_names(prev)):
                result[k] = _merge_two(prev, dom)
                break
        else:
            result.append(dom)
    return tuple(result)


def _check_same_arg(a: Any, b: Any) -> None:
    if type(a) is not type(b) or (a.dtype is not None and b.dtype is not None
                                  and a.dtype != b.dtype) or \
            getattr(a, "shape", None) != getattr(b, "shape", None) and \
            isinstance(getattr(a, "shape", None), tuple) and \
            isinstance(getattr(b, "shape", None), tuple):
        raise KernelcoreError(f"fuse_kernels: the kernels declare argument '{a.name}' "
                              f"differently ({a} / {b})")


def fuse_kernels(kernels: Sequence[Any], suffixes: Sequence[str] | None = None,
                 data_flow: Sequence[tuple[str, int, int]] | None = None) -> Any:
    """One kernel doing the work of all of *kernels*, one after another.

    Arguments of the same name are the same argument, and inames of the same
    name are one iname (rename them first with :func:`rename_iname` if that
    is not wanted). Temporaries and instruction ids that two kernels both use
    are renamed in the later kernel with its suffix (*suffixes*, default
    ``_1``, ``_2``, ...).
    *data_flow* lists ``(variable, from_index, to_index)``: the
    instructions of kernel *to_index* reading or writing *variable* then wait for the
    ones of kernel *from_index* writing it. Kernels or translation units
    (their default entry points) may be given; the result has the kind of
    the first."""
    as_tu = isinstance(kernels[0], TranslationUnit)
    knls = [k.default_entrypoint if isinstance(k, TranslationUnit) else k for k in kernels]
    if suffixes is None:
        suffixes = [""] + [f"_{k}" for k in range(1, len(knls))]
    if len(suffixes) != len(knls):
        raise KernelcoreError("fuse_kernels: one suffix per kernel")
    used_temps: set[str] = set()
    used_ids: set[str] = set()
    renamed: list[LoopKernel] = []
    for knl, suffix in zip(knls, suffixes):
        if knl.linearization is not None:
            raise KernelcoreError("fuse_kernels: the kernels must not be linearized")
        for name in list(knl.temporary_variables):
            if name in used_temps:
                knl = _rename_temporary(knl, name, name + (suffix or "_f"))
        clash = {i.id: i.id + (suffix or "_f") for i in knl.instructions if i.id in used_ids}
        if clash:
            knl = _rename_insn_ids(knl, clash)
        used_temps |= set(knl.temporary_variables)
        used_ids |= {i.id for i in knl.instructions}
        renamed.append(knl)
    args: dict[str, Any] = {}
    for knl in renamed:
        for a in knl.args:
            if a.name in args:
                _check_same_arg(args[a.name], a)
                if args[a.name].dtype is None and a.dtype is not None:
                    args[a.name] = a
            else:
                args[a.name] = a
    insns = [list(k.instructions) for k in renamed]
    for var, src, dst in data_flow or ():
        writers = frozenset(i.id for i in insns[src] if var in i.assignee_names())
        if not writers:
            raise KernelcoreError(f"fuse_kernels: kernel {src} does not write '{var}'")
        # (as loopy: every instruction of the later kernel touching it waits)
        insns[dst] = [i.copy(depends_on=i.depends_on | writers)
                      if var in i.read_dependency_names() | i.assignee_names() else i
                      for i in insns[dst]]
    first = renamed[0]
    assumptions = None
    for k in renamed:
        if k.assumptions is not None:
            a = k.assumptions.params() if isinstance(k.assumptions, isl.Set) else k.assumptions
            assumptions = a if assumptions is None else assumptions.align_params(
                a.get_space()).intersect(a.align_params(assumptions.get_space()))
    fused = first.copy(
        domains=_merge_domains([d for k in renamed for d in k.domains]),
        instructions=tuple(i for group in insns for i in group),
        args=tuple(args.values()),
        temporary_variables={n: t for k in renamed for n, t in k.temporary_variables.items()},
        iname_tags={n: t for k in renamed for n, t in k.iname_tags.items()},
        loop_priority=tuple(p for k in renamed for p in k.loop_priority),
        iname_slabs={n: s for k in renamed for n, s in k.iname_slabs.items()},
        silenced_warnings=frozenset().union(*(k.silenced_warnings for k in renamed)),
        substitutions={n: r for k in renamed for n, r in k.substitutions.items()},
        callables={n: c for k in renamed for n, c in k.callables.items()},
        assumptions=assumptions)
    return TranslationUnit.for_kernel(fused) if as_tu else fused


__all__ = ["fuse_kernels"]
