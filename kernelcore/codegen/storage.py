"""Storage in generated code: sizes, initial values and declarations of
temporaries, and whether arguments may be declared restrict.

Public names: storage_size, variable_storage_size, initial_values, check_definitions,
check_definitions_across_global_barriers, constant_declarations, shares_globals,
temporary_declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper.stringifier import PREC_NONE

from kernelcore.check_ordering import Reachable
from kernelcore.codegen import cast
from kernelcore.codegen.vector import vector_ctype
from kernelcore.diagnostic import CodeGenerationError, MissingDefinitionError
from kernelcore.ir.data import AddressSpace, TemporaryVariable
from kernelcore.ir.instruction import BarrierInstruction
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.simplify import simplify


def variable_storage_size(tv: TemporaryVariable) -> Any:
    """The elements a private temporary of parametric shape spans, as an
    expression of the parameters (for a C99 variable-length array, as loopy
    declares it; OpenCL C has none, so such a kernel builds on the C target
    only); None when its shape and strides are constants."""
    shape, strides = tuple(tv.shape), tuple(tv.element_strides())
    if all(isinstance(s, (int, np.integer)) for s in (*shape, *strides)):
        return None
    if tv.strides is None:          # the default dense layout: the product
        return simplify(prim.Product(shape))
    return simplify(prim.Sum((1, *(prim.Product((prim.Sum((n, -1)), st))
                                   for n, st in zip(shape, strides)))))


def storage_size(name: str, tv: TemporaryVariable) -> int:
    """Elements a temporary spans: its shape times its strides (padded
    strides, such as a tile with one spare column, span more than the shape)."""
    extents = []
    for s in (*tv.shape, *tv.element_strides()):
        if not isinstance(s, (int, np.integer)):
            raise CodeGenerationError(
                f"{tv.address_space} temporary '{name}' needs a constant shape and "
                f"strides, got shape {tv.shape}")
        extents.append(int(s))
    shape, strides = extents[:len(tv.shape)], extents[len(tv.shape):]
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * abs(st) for n, st in zip(shape, strides))


def initial_values(tv: TemporaryVariable, size: int, emit: Callable[..., str]) -> str:
    """The C initializer list of *tv*'s storage (its initializer's values placed
    by its strides; *emit(value, context, prec, dtype)* writes one value)."""
    values = np.asarray(tv.initializer, dtype=tv.dtype)
    if values.shape != tuple(tv.shape):
        raise CodeGenerationError(f"temporary '{tv.name}': its initializer has shape "
                                  f"{values.shape}, the temporary {tuple(tv.shape)}")
    flat = np.zeros(size, dtype=tv.dtype)
    index = np.indices(values.shape).reshape(values.ndim, -1)
    flat[np.array([int(s) for s in tv.element_strides()], dtype=np.int64) @ index] = \
        values.reshape(-1)
    return ", ".join(emit(v, None, PREC_NONE, tv.dtype) for v in flat)


def constant_declarations(knl: LoopKernel, target) -> list[str]:
    """The program-scope declarations of *knl*'s global temporaries with an
    initializer (constants: the host allocates nothing for them; loopy's
    read-only global temporaries)."""
    used: set[str] = set()
    written: set[str] = set()
    for insn in knl.instructions:
        used |= insn.read_dependency_names() | insn.assignee_names()
        written |= insn.assignee_names()
    decls = []
    for name, tv in sorted(knl.temporary_variables.items()):
        if tv.address_space != AddressSpace.GLOBAL or tv.initializer is None \
                or name not in used:
            continue
        if name in written:
            raise CodeGenerationError(
                f"global temporary '{name}' of kernel {knl.name} has an initializer, "
                "which makes it a constant, but the kernel writes it")
        assert tv.dtype is not None
        size = max(storage_size(name, tv), 1)
        values = initial_values(tv, size, lambda v, _c, _p, dt: target.literal(v, dt))
        decls.append(f"{target.constant_array_qualifier()} "
                     f"{target.dtype_to_ctype(tv.dtype)} {name}[{size}] = {{ {values} }};")
    return decls


def check_definitions(knl: LoopKernel, kernel_name: str, insn_ids: Collection[str]) -> None:
    """Private and local temporaries do not survive between device kernels:
    each one read by the instructions *insn_ids* of device kernel
    *kernel_name* must be written there, by an instruction the reader
    depends on if it depends on a writer at all (a reduction's update
    reads the value its initialization wrote)."""
    insns = [knl.id_to_insn[i] for i in insn_ids]
    here = set(insn_ids)
    written = set().union(*(i.assignee_names() for i in insns)) if insns else set()
    for insn in insns:
        for name in sorted(insn.read_dependency_names()):
            tv = knl.temporary_variables.get(name)
            if tv is None or tv.address_space == AddressSpace.GLOBAL \
                    or tv.initializer is not None:
                continue
            writers = {d for d in insn.depends_on
                       if name in knl.id_to_insn[d].assignee_names()}
            if name not in written or (writers and not writers & here):
                raise MissingDefinitionError(
                    f"temporary variable '{name}' gets used in subkernel "
                    f"'{kernel_name}' without a definition (maybe you forgot to call "
                    "save_and_reload_temporaries?)")


def check_definitions_across_global_barriers(knl: LoopKernel) -> None:
    """A private or local temporary does not keep its value across a global
    barrier (loopy ends a device kernel there, whatever this kernel's launch
    makes of it): refuse a read of one whose every earlier writer (by
    dependencies) comes before a global barrier the read comes after, unless
    :func:`~kernelcore.transform.save.save_and_reload_temporaries` handled
    that barrier."""
    barriers = [i.id for i in knl.instructions if isinstance(i, BarrierInstruction)
                and i.synchronization_kind == "global" and not i.values_saved]
    if not barriers:
        return
    reach = Reachable(knl)
    writers = knl.writer_map
    for insn in knl.instructions:
        before = reach[insn.id]
        crossed = [b for b in barriers if b in before]
        if not crossed:
            continue
        for name in sorted(insn.read_dependency_names()):
            tv = knl.temporary_variables.get(name)
            if tv is None or tv.initializer is not None or tv.address_space not in (
                    AddressSpace.PRIVATE, AddressSpace.LOCAL):
                continue
            earlier = writers.get(name, frozenset()) & before
            if earlier and any(earlier <= reach[b] for b in crossed):
                raise MissingDefinitionError(
                    f"in kernel {knl.name}: {tv.address_space} temporary '{name}' is read "
                    f"by '{insn.id}' after a global barrier but written only before it, "
                    "and such temporaries do not keep their values across global "
                    "barriers: call save_and_reload_temporaries, or make it a global "
                    "temporary")


def shares_globals(knl: LoopKernel) -> bool:
    """Whether *knl*'s work-items pass global memory to each other through
    work-group barriers with a global fence (its written global arrays must
    then not be declared restrict: a compiler may keep their loads across
    the barrier, as NVIDIA's does)."""
    return any(isinstance(i, BarrierInstruction) and i.mem_kind == "global"
               and i.synchronization_kind == "local" for i in knl.instructions)


def temporary_declarations(knl: LoopKernel, insn_ids: Collection[str], target: Any,
                           emit: Callable[[Any, Any], str], vector_temps: dict[str, int],
                           spaces: tuple[AddressSpace, ...]) -> list:
    """The declarations (:mod:`~kernelcore.codegen.cast` statements) of the
    temporaries in address *spaces* that the instructions *insn_ids* of *knl*
    use; *emit* writes an expression in C, *vector_temps* gives the lane
    counts of temporaries held as vectors."""
    decls = []
    used: set[str] = set()
    for iid in insn_ids:
        insn = knl.id_to_insn[iid]
        used |= insn.assignee_names() | insn.read_dependency_names()
    local_qual = target.address_space_qualifier(AddressSpace.LOCAL)
    for name, tv in sorted(knl.temporary_variables.items()):
        if tv.initializer is not None and name in used and \
                tv.address_space == AddressSpace.LOCAL and local_qual:
            raise CodeGenerationError(
                f"temporary '{name}' of kernel {knl.name} has an initializer "
                f"but lives in {tv.address_space} memory: kernelcore initializes "
                "private and global (constant) temporaries only (on the C target "
                "also local ones; set_temporary_address_space(knl, "
                f"'{name}', 'private'))")
        if tv.address_space not in spaces or name not in used:
            continue          # globals are arguments, allocated by the runtime
        assert tv.dtype is not None
        ctype = target.dtype_to_ctype(tv.dtype)
        variable = variable_storage_size(tv) if tv.address_space == \
            AddressSpace.PRIVATE and tv.initializer is None else None
        if variable is not None:        # a variable-length array, as loopy's
            decls.append(cast.Statement(f"{ctype} {name}[{emit(variable, None)}];"))
            continue
        size = storage_size(name, tv)
        if size == 0:
            continue          # nothing reads or writes an empty array (C has none)
        if tv.initializer is not None:     # (local ones only where local is plain C)
            decls.append(cast.Statement(
                f"{ctype} {name}[{size}] = {{ {initial_values(tv, size, emit)} }};"))
            continue
        if tv.address_space == AddressSpace.LOCAL:
            qual = f"{local_qual} " if local_qual else ""
            align = "" if tv.alignment is None else \
                f" __attribute__ ((aligned ({tv.alignment})))"
            decls.append(cast.Statement(f"{qual}{ctype} {name}[{size}]{align};"))
        elif tv.shape == ():
            decls.append(cast.Statement(f"{ctype} {name};"))
        elif name in vector_temps:
            vtype = vector_ctype(target, tv.dtype, vector_temps[name])
            count = int(np.prod(tv.shape[:-1]))
            decls.append(cast.Statement(f"{vtype} {name}[{count}];" if len(tv.shape) > 1
                                        else f"{vtype} {name};"))
        else:
            decls.append(cast.Statement(f"{ctype} {name}[{size}];"))
    return decls



__all__ = ["storage_size", "variable_storage_size", "initial_values", "check_definitions",
           "check_definitions_across_global_barriers",
           "constant_declarations", "shares_globals", "temporary_declarations"]
