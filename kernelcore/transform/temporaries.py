"""Where temporaries live: private, local (per work-group) or global memory.

Public names: set_temporary_scope, set_temporary_address_space, set_temporary_alignment,
choose_temporary_scopes, allocate_temporaries_for_base_storage, alias_temporaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import (
    KernelcoreError,
    UnknownNameError,
    WriteRaceConditionWarning,
    is_silenced,
    warn_with_kernel,
)
from kernelcore.ir.data import AddressSpace, auto
from kernelcore.ir.expr import get_dependencies, substitute
from kernelcore.ir.instruction import Assignment, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag
from kernelcore.transform.instruction import _ancestors
from kernelcore.translation_unit import TranslationUnit, for_each_kernel

_SCOPES = {"private": AddressSpace.PRIVATE, "local": AddressSpace.LOCAL,
           "global": AddressSpace.GLOBAL}


@for_each_kernel
def set_temporary_scope(knl: LoopKernel, temp_var_names: Iterable[str], scope: Any) -> LoopKernel:
    """Place temporaries in ``"private"``, ``"local"`` or ``"global"`` memory."""
    names = [s.strip() for s in temp_var_names.split(",")] \
        if isinstance(temp_var_names, str) else list(temp_var_names)
    if isinstance(scope, str):
        if scope not in _SCOPES:
            raise KernelcoreError(f"set_temporary_scope: unknown scope {scope!r} "
                                  "(private, local, global)")
        scope = _SCOPES[scope]
    temps = dict(knl.temporary_variables)
    for name in names:
        if name not in temps:
            raise UnknownNameError(f"set_temporary_scope: no temporary called '{name}' "
                                   f"(temporaries: {', '.join(sorted(temps)) or 'none'})")
        temps[name] = temps[name].copy(address_space=AddressSpace(scope))
    return knl.copy(temporary_variables=temps)


@for_each_kernel
def set_temporary_alignment(knl: LoopKernel, temp_var_names: Iterable[str], alignment: int | None
                            ) -> LoopKernel:
    """Declare the temporaries *temp_var_names* aligned to *alignment* bytes (a
    power of two; None: the type's own alignment)."""
    names = [s.strip() for s in temp_var_names.split(",")] \
        if isinstance(temp_var_names, str) else list(temp_var_names)
    temps = dict(knl.temporary_variables)
    for name in names:
        if name not in temps:
            raise UnknownNameError(f"set_temporary_alignment: no temporary called '{name}' "
                                   f"(temporaries: {', '.join(sorted(temps)) or 'none'})")
        temps[name] = temps[name].copy(alignment=alignment)
    return knl.copy(temporary_variables=temps)


def _local_inames(knl) -> set[str]:
    return {n for n, t in knl.iname_tags.items() if isinstance(t, LocalIndexTag)}


def set_temporary_address_space(kernel: LoopKernel | TranslationUnit, temp_var_names: Iterable[str],
                                address_space: Any) -> LoopKernel | TranslationUnit:
    """loopy's name of :func:`set_temporary_scope`: put the temporaries
    *temp_var_names* into *address_space* (an :class:`AddressSpace` or
    ``"private"``, ``"local"``, ``"global"``); takes and returns a kernel or
    a translation unit."""
    return for_each_kernel(lambda k: set_temporary_scope(
        k, temp_var_names, address_space.name.lower()
        if isinstance(address_space, AddressSpace) else address_space))(kernel)


def choose_temporary_scopes(knl: LoopKernel) -> LoopKernel:
    """Temporaries without a scope become global when some instruction writes
    them in parallel across work-groups (the subscript uses a group index), local
    when across the work-items of a group (a local index), else private. A local
    temporary written without all the work-group's local indices in its subscript
    would race and is reported."""
    local = _local_inames(knl)
    groups = {n for n, t in knl.iname_tags.items() if isinstance(t, GroupIndexTag)}
    lanes = {n: knl.iname_tags[n].axis for n in local
             if any(n in i.within_inames for i in knl.instructions)}
    temps = dict(knl.temporary_variables)
    for name, tv in temps.items():
        writers = [i for i in knl.instructions
                   if isinstance(i, Assignment) and name in i.assignee_names()]
        sub_inames = [set().union(*(get_dependencies(s) for s in assignee_subscript(
            w.assignee))) if assignee_subscript(w.assignee) else set() for w in writers]
        chosen = tv.address_space is auto
        if chosen:
            is_global = any(used & groups or any(v.startswith("gid(") for v in used)
                            for used in sub_inames)
            is_local = any(used & local or any(v.startswith("lid(") for v in used)
                           for used in sub_inames)
            tv = tv.copy(address_space=AddressSpace.GLOBAL if is_global
                         else AddressSpace.LOCAL if is_local else AddressSpace.PRIVATE)
            temps[name] = tv
        if tv.address_space == AddressSpace.LOCAL:
            for w, used in zip(writers, sub_inames):
                # every work-group axis in use must pick a different element
                covered = {knl.iname_tags[n].axis for n in used & local}
                covered |= {int(v[4]) for v in used if v.startswith("lid(")}
                missing = sorted(n for n, axis in lanes.items() if axis not in covered)
                if not missing or is_silenced(knl, f"write_race_local({w.id})"):
                    continue
                warn_with_kernel(
                    knl, f"write_race_local({w.id})",
                    f"instruction '{w.id}' looks invalid: it assigns to indices based on "
                    f"local IDs, but its temporary '{name}' cannot be made local because "
                    f"a write race across the iname(s) "
                    f"{', '.join(repr(m) for m in missing)} would emerge. (Do you need to "
                    "add an extra iname to your prefetch?)", WriteRaceConditionWarning)
                if chosen:      # as loopy: the temporary stays private instead
                    temps[name] = tv.copy(address_space=AddressSpace.PRIVATE)
                break
    return knl.copy(temporary_variables=temps)


@for_each_kernel
def allocate_temporaries_for_base_storage(knl: LoopKernel, only_address_space: Any = None,
                                          aliased: bool = True, max_nbytes: int | None = None,
                                          _implicitly_run: bool = False) -> LoopKernel:
    """Give the temporaries that name one ``base_storage`` one allocation (loopy's
    transformation; kernelcore also does this when preprocessing): the first of
    them by name stays, the others' uses name it. They must agree in dtype,
    shape, strides and address space (kernelcore does not reinterpret memory).
    *only_address_space*, *aliased* and *max_nbytes* are accepted for loopy
    compatibility."""
    groups: dict[str, list[str]] = {}
    for name, tv in sorted(knl.temporary_variables.items()):
        if tv.base_storage is not None:
            groups.setdefault(tv.base_storage, []).append(name)
    temps = dict(knl.temporary_variables)
    renames: dict[str, prim.Variable] = {}
    for base, (keep, *others) in groups.items():
        for other in others:
            a, b = temps[keep], temps.pop(other)
            if (a.dtype, a.shape, a.element_strides(), a.address_space) != (
                    b.dtype, b.shape, b.element_strides(), b.address_space):
                raise KernelcoreError(
                    f"in kernel {knl.name}: temporaries '{keep}' and '{other}' share base "
                    f"storage '{base}' but differ in dtype, shape, strides or address "
                    "space; kernelcore shares storage only between like temporaries: "
                    "give them equal declarations or separate base storages")
            renames[other] = prim.Variable(keep)
    if not renames:
        return knl
    insns = tuple(i.with_transformed_expressions(lambda e: substitute(e, renames))
                  for i in knl.instructions)
    return knl.copy(instructions=insns, temporary_variables=temps)


@for_each_kernel
def alias_temporaries(knl: LoopKernel, names: Iterable[str], base_name_prefix: str | None = None,
                      synchronize_for_exclusive_use: bool = True) -> LoopKernel:
    """Back the temporaries *names* by one piece of storage (a new
    ``base_storage`` named from *base_name_prefix*). With
    *synchronize_for_exclusive_use*, each temporary's instructions come after
    all those of the one before it in *names*, so that only one is live at a
    time (kernelcore orders them: it has no instruction groups)."""
    names = [s.strip() for s in names.split(",") if s.strip()] \
        if isinstance(names, str) else list(names)
    temps = dict(knl.temporary_variables)
    for name in names:
        if name not in temps:
            raise UnknownNameError(f"alias_temporaries: no temporary called '{name}' "
                                   f"(temporaries: {', '.join(sorted(temps)) or 'none'})")
    taken = set(temps) | set(knl.arg_dict) | set(knl.all_inames()) | set(knl.all_params())
    taken |= {tv.base_storage for tv in temps.values() if tv.base_storage is not None}
    base = UniqueNameGenerator(taken)(base_name_prefix or "temp_storage")
    for name in names:
        temps[name] = temps[name].copy(base_storage=base)
    knl = knl.copy(temporary_variables=temps)
    if not synchronize_for_exclusive_use:
        return knl
    users = [{i.id for i in knl.instructions
              if name in i.assignee_names() | i.read_dependency_names()} for name in names]
    for k, (before, after) in enumerate(zip(users, users[1:])):
        both = before & after
        if both:
            raise KernelcoreError(f"alias_temporaries: instruction '{min(both)}' uses both "
                                  f"'{names[k]}' and '{names[k + 1]}'; they cannot share "
                                  "storage")
        for insn_id in before:
            if _ancestors(knl, insn_id) & after:
                raise KernelcoreError(
                    f"alias_temporaries: '{insn_id}' (using '{names[k]}') depends on a "
                    f"use of '{names[k + 1]}'; list the temporaries in the order the "
                    "kernel uses them")
    insns = []
    for insn in knl.instructions:
        extra = set().union(*(users[k - 1] for k in range(1, len(users)) if insn.id in users[k]))
        insns.append(insn.copy(depends_on=insn.depends_on | extra) if extra else insn)
    return knl.copy(instructions=tuple(insns))
