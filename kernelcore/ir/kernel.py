"""The kernel: domains, instructions, data, tags and options in one immutable object.

Public names: LoopKernel, KernelState.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

import islpy as isl
import numpy as np

from kernelcore.diagnostic import UnknownNameError
from kernelcore.ir.data import AddressSpace, ArrayArg, TemporaryVariable, ValueArg
from kernelcore.ir.domain import align_to, project_to, pw_aff_to_expr
from kernelcore.ir.grid import grid_sizes
from kernelcore.ir.instruction import InstructionBase
from kernelcore.ir.stages import stage
from kernelcore.ir.tags import Iname, InameTagTable, filter_iname_tags_by_type
from kernelcore.options import Options

dim_type = isl.dim_type
_RULE = "-" * 75


class KernelState(enum.IntEnum):
    INITIAL = 0
    PREPROCESSED = 1
    LINEARIZED = 2


@dataclass(frozen=True, eq=False)
class LoopKernel:
    """A loop-domain kernel. Transformations return modified copies
    (:meth:`copy`); nothing mutates a kernel in place.

    *index_dtype* (int32 or int64) is the type of loop indices, hardware
    indices, domain parameters of unknown type and the element offsets
    computed from them.
    """

    name: str
    domains: tuple
    instructions: list[InstructionBase]
    args: tuple
    temporary_variables: Mapping[str, TemporaryVariable] = field(default_factory=dict)
    iname_tags: Mapping[str, Any] = field(default_factory=dict)
    loop_priority: tuple[tuple[str, ...], ...] = ()
    iname_slabs: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    silenced_warnings: frozenset[str] = frozenset()
    substitutions: Mapping[str, Any] = field(default_factory=dict)
    callables: Mapping[str, Any] = field(default_factory=dict)
    assumptions: isl.Set | None = None
    options: Options = field(default_factory=Options)
    target: Any = None
    index_dtype: np.dtype = np.dtype(np.int32)
    state: KernelState = KernelState.INITIAL
    linearization: tuple | None = None
    tags: frozenset = frozenset()
    #: loopy's hook: ``f(insn_ids, callables_table)`` -> (group counts, work-group
    #: sizes) replacing those the domains give (entries PwAffs or integers)
    overridden_get_grid_sizes_for_insn_ids: Any = None
    #: (key, C code) put before the code, in the order of their keys, each key once
    preambles: tuple[tuple[str, str], ...] = ()
    #: functions of a :class:`~kernelcore.codegen.preambles.PreambleInfo` giving
    #: (key, C code) pairs, as loopy's preamble generators
    preamble_generators: tuple = ()
    #: metadata tags (:class:`pytools.tag.Tag`) by iname; they change no code
    iname_metadata: Mapping[str, frozenset] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a list, as loopy's (callers may take a copy and extend it)
        if not isinstance(self.instructions, list):
            object.__setattr__(self, "instructions", list(self.instructions))
        object.__setattr__(self, "iname_tags",
                           InameTagTable(self.iname_tags, self.iname_metadata))

    def copy(self, **kwargs: Any) -> LoopKernel:
        if "iname_slab_increments" in kwargs:       # (loopy's name)
            kwargs["iname_slabs"] = kwargs.pop("iname_slab_increments")
        return replace(self, **kwargs)

    @property
    def iname_slab_increments(self) -> Mapping[str, tuple[int, int]]:
        """loopy's name of :attr:`iname_slabs`."""
        return self.iname_slabs

    def __eq__(self, other: object) -> bool:
        """Structural equality (as loopy's): the same domains, instructions,
        data, tags and options."""
        if self is other:
            return True
        if not isinstance(other, LoopKernel):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self))

    # identity hashing: kernels key caches by object (equal kernels built
    # separately simply get separate entries)
    __hash__ = object.__hash__

    def tagged(self, tags: Any) -> LoopKernel:
        """A copy of the kernel with *tags* (a tag or an iterable of them) added."""
        return replace(self, tags=self.tags | _tag_set(tags))

    def without_tags(self, tags: Any, verify_existence: bool = True) -> LoopKernel:
        """A copy of the kernel without *tags* (a tag or an iterable of them)."""
        tags = _tag_set(tags)
        if verify_existence and not tags <= self.tags:
            raise ValueError(f"kernel '{self.name}' does not have the tag(s) "
                             f"{', '.join(map(str, tags - self.tags))}")
        return replace(self, tags=self.tags - tags)

    # {{{ names

    @cached_property
    def _iname_order(self) -> tuple[str, ...]:
        names: list[str] = []
        for dom in self.domains:
            for i in range(dom.dim(dim_type.set)):
                name = dom.get_dim_name(dim_type.set, i)
                if name not in names:
                    names.append(name)
        return tuple(names)

    def all_inames(self) -> tuple[str, ...]:
        """Every loop index, in order of first appearance in the domains."""
        return self._iname_order

    @cached_property
    def inames(self) -> dict[str, Iname]:
        """Each loop index with its tags (loopy's ``kernel.inames``)."""
        return {n: Iname.of(self, n) for n in self._iname_order}

    def iname_tags_of_type(self, iname: str, tag_type: Any, max_num: int | None = None,
                           min_num: int | None = None) -> set:
        """The tags of *iname* that are instances of *tag_type*."""
        return filter_iname_tags_by_type(Iname.of(self, iname).tags, tag_type, max_num,
                                         min_num)

    @cached_property
    def _param_order(self) -> tuple[str, ...]:
        inames = set(self._iname_order)
        names: list[str] = []
        for dom in self.domains:
            for i in range(dom.dim(dim_type.param)):
                name = dom.get_dim_name(dim_type.param, i)
                if name not in inames and name not in names:
                    names.append(name)
        return tuple(names)

    def all_params(self) -> frozenset[str]:
        """Domain parameters that are not loop indices (a set, as loopy's)."""
        return frozenset(self._param_order)

    def ordered_params(self) -> tuple[str, ...]:
        """:meth:`all_params` in order of first appearance in the domains."""
        return self._param_order

    @cached_property
    def arg_dict(self) -> dict[str, ArrayArg | ValueArg]:
        return {a.name: a for a in self.args}

    @cached_property
    def id_to_insn(self) -> dict[str, InstructionBase]:
        return {insn.id: insn for insn in self.instructions}

    def get_var(self, name: str) -> Any:
        """The argument or temporary called *name*."""
        if name in self.arg_dict:
            return self.arg_dict[name]
        if name in self.temporary_variables:
            return self.temporary_variables[name]
        raise UnknownNameError(f"kernel '{self.name}' has no variable '{name}'")

    def check_inames(self, names: Iterable[str], context: str) -> None:
        unknown = [n for n in names if n not in self._iname_order]
        if unknown:
            raise UnknownNameError(
                f"{context}: unknown iname(s) {', '.join(repr(u) for u in unknown)} "
                f"(kernel inames: {', '.join(self._iname_order) or 'none'})")

    @cached_property
    def writer_map(self) -> dict[str, frozenset[str]]:
        """Variable name -> ids of instructions writing it."""
        result: dict[str, set[str]] = {}
        for insn in self.instructions:
            for v in insn.assignee_names():
                result.setdefault(v, set()).add(insn.id)
        return {k: frozenset(v) for k, v in result.items()}

    def device_arguments(self) -> list:
        """What device kernels receive: the arguments, then global temporaries
        (but those with an initializer: constants of the program)."""
        return list(self.args) + [
            tv for _, tv in sorted(self.temporary_variables.items())
            if tv.address_space == AddressSpace.GLOBAL and tv.initializer is None]

    def get_written_variables(self) -> frozenset[str]:
        return frozenset(self.writer_map)

    # }}}

    # {{{ domains

    @cached_property
    def space(self) -> isl.Space:
        """The space holding every iname (set dims) and parameter."""
        return isl.Space.create_from_names(
            isl.DEFAULT_CONTEXT, set=list(self._iname_order), params=list(self._param_order))

    @cached_property
    def _universe(self) -> isl.Set:
        return isl.Set.universe(self.space)

    @cached_property
    def aligned_domains(self) -> tuple[isl.Set, ...]:
        result = []
        for dom in self.domains:
            s = dom.to_set() if isinstance(dom, isl.BasicSet) else dom
            result.append(align_to(s, self._universe))
        return tuple(result)

    @cached_property
    def _iname_to_domain(self) -> dict[str, int]:
        result: dict[str, int] = {}
        for k, dom in enumerate(self.domains):
            for i in range(dom.dim(dim_type.set)):
                result.setdefault(dom.get_dim_name(dim_type.set, i), k)
        return result

    def parents_per_domain(self) -> list[int | None]:
        """For each domain, the index of the domain it nests in (the latest one
        defining an iname its parameters use, directly or, for a temporary used
        as a parameter, through the loops of the instructions writing it), or None."""
        result: list[int | None] = []
        for k, dom in enumerate(self.domains):
            owners: set[int] = set()
            for i in range(dom.dim(dim_type.param)):
                p = dom.get_dim_name(dim_type.param, i)
                around = {p} if p in self._iname_to_domain else set().union(
                    *(insn.within_inames for insn in self.instructions
                      if p in self.temporary_variables and p in insn.assignee_names()))
                owners |= {self._iname_to_domain[n] for n in around} - {k}
            result.append(max(owners) if owners else None)
        return result

    def domain_param_names(self, iname: str) -> frozenset[str]:
        """The parameters of the domain *iname* is declared in."""
        dom = self.domains[self._iname_to_domain[iname]]
        return frozenset(dom.get_dim_name(dim_type.param, i)
                         for i in range(dom.dim(dim_type.param)))

    def domain_parent_inames(self, iname: str) -> frozenset[str]:
        """Inames that bound *iname* (appear as parameters of its domain)."""
        dom = self.domains[self._iname_to_domain[iname]]
        inames = set(self._iname_order)
        own = {dom.get_dim_name(dim_type.set, i) for i in range(dom.dim(dim_type.set))}
        parents = {dom.get_dim_name(dim_type.param, i) for i in range(dom.dim(dim_type.param))}
        return frozenset((parents & inames) - own)

    def get_inames_domain(self, inames: Iterable[str]) -> isl.Set:
        """The points of *inames* (other inames projected out), in :attr:`space`.

        Projection means an instruction runs only where the inames it does not use
        have values too: with one domain ``{[i,k]: 0<=i<n and 0<=k<i}`` an
        instruction in ``i`` skips ``i = 0``. Declare independent loops in
        separate domains (``["{[i]: ...}", "{[k]: ...}"]``) to avoid that.
        Found once per set of inames (code generation asks for each loop and
        each unrolled copy; islpy's sets are immutable, so one is shared).
        """
        key = frozenset(inames)
        known = self._inames_domains.get(key)
        if known is None:
            known = self._inames_domains[key] = self._find_inames_domain(key)
        return known

    @cached_property
    def _inames_domains(self) -> dict[frozenset[str], isl.Set]:
        return {}

    def _find_inames_domain(self, inames: frozenset[str]) -> isl.Set:
        needed: set[int] = set()
        todo = [self._iname_to_domain[i] for i in inames]
        while todo:
            k = todo.pop()
            if k in needed:
                continue
            needed.add(k)
            dom = self.domains[k]
            for i in range(dom.dim(dim_type.param)):
                p = dom.get_dim_name(dim_type.param, i)
                if p in self._iname_to_domain:
                    todo.append(self._iname_to_domain[p])
        result = self._universe
        for k in sorted(needed):
            result = result & self.aligned_domains[k]
        result = project_to(result, inames)
        return align_to(result, self._universe)

    def insn_inames(self, insn: InstructionBase | str) -> frozenset[str]:
        """The inames instruction *insn* (or its id) runs in."""
        return (self.id_to_insn[insn] if isinstance(insn, str) else insn).within_inames

    def get_insn_domain(self, insn: InstructionBase) -> isl.Set:
        """The points an instruction runs for: the domain of its inames."""
        return self.get_inames_domain(insn.within_inames)

    @cached_property
    def assumptions_set(self) -> isl.Set:
        """The assumptions as a set in :attr:`space` (parameters only constrained)."""
        if self.assumptions is None:
            return self._universe
        return align_to(isl.Set.from_params(self.assumptions.params())
                        if self.assumptions.is_params() else self.assumptions,
                        self._universe)

    # }}}

    # {{{ printing

    def stringify(self, with_dependencies: bool = False) -> str:
        lines = [_RULE, f"KERNEL: {self.name}", _RULE, "ARGUMENTS:"]
        lines += [str(a) for a in sorted(self.args, key=lambda a: a.name)]
        lines += [_RULE, "DOMAINS:"]
        lines += [str(d) for d in self.domains]
        lines += [_RULE, "INAME IMPLEMENTATION TAGS:"]
        lines += [f"{i}: {self.iname_tags.get(i)}" for i in sorted(self._iname_order)]
        if self.temporary_variables:
            lines += [_RULE, "TEMPORARIES:"]
            lines += [str(t) for _, t in sorted(self.temporary_variables.items())]
        if self.substitutions:
            lines += [_RULE, "SUBSTITUTION RULES:"]
            lines += [str(r) for _, r in sorted(self.substitutions.items())]
        lines += [_RULE, "INSTRUCTIONS:"]
        lines += _nested_instruction_lines(self)
        if with_dependencies:
            lines += [_RULE, "DEPENDENCIES: (dependent : prerequisites)"]
            for insn in self.instructions:
                if insn.depends_on:
                    lines.append(f"{insn.id} : {', '.join(sorted(insn.depends_on))}")
        if self.linearization is not None:
            lines += [_RULE, "SCHEDULE:"]
            lines += stage("schedule_lines")(self)
        lines.append(_RULE)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.stringify()

    # }}}

    def get_grid_sizes_for_insn_ids(self, insn_ids: Any, callables_table: Any = None,
                                    ignore_auto: bool = False) -> tuple[Any, Any]:
        """``(group counts, work-group sizes)`` of the device kernel running the
        instructions *insn_ids*, as tuples of :class:`islpy.PwAff` of the
        parameters (those the domains give, even where they are overridden)."""
        return grid_sizes(self.copy(overridden_get_grid_sizes_for_insn_ids=None),
                          frozenset(insn_ids))

    def get_grid_size_upper_bounds(self, callables_table: Any = None,
                                   ignore_auto: bool = False, return_dict: bool = False
                                   ) -> tuple[Any, Any]:
        """``(global_size, local_size)``: a grid that can run every
        instruction, as tuples of :class:`islpy.PwAff` of the parameters (the
        number of work-groups and the work-group size per axis), or dicts
        ``{axis: PwAff}`` with *return_dict*. *callables_table* and
        *ignore_auto* are taken for loopy's signature."""
        groups, local = grid_sizes(self)
        if return_dict:
            return dict(enumerate(groups)), dict(enumerate(local))
        return groups, local

    def get_grid_size_upper_bounds_as_exprs(self, callables_table: Any = None,
                                            ignore_auto: bool = False,
                                            return_dict: bool = False) -> tuple[Any, Any]:
        """:meth:`get_grid_size_upper_bounds` as pymbolic expressions."""
        groups, local = self.get_grid_size_upper_bounds(callables_table, ignore_auto,
                                                        return_dict=True)
        gexprs = {k: pw_aff_to_expr(v) for k, v in groups.items()}
        lexprs = {k: pw_aff_to_expr(v) for k, v in local.items()}
        if return_dict:
            return gexprs, lexprs
        return tuple(gexprs.values()), tuple(lexprs.values())

    def __call__(self, queue=None, **kwargs):
        """Run the kernel on *queue* (a C target needs none); see
        :func:`kernelcore.runtime.invoke.invoke` (which registers itself as
        the stage ``invoke``)."""
        target_invoke = getattr(self.target, "invoke", None)
        if target_invoke is not None:      # a target running code its own way (C)
            return target_invoke(self, queue, kwargs)
        return stage("invoke")(self, queue, kwargs)


def _tag_set(tags: Any) -> frozenset:
    return frozenset(tags) if isinstance(tags, (set, frozenset, list, tuple)) else frozenset([tags])


def _nested_instruction_lines(knl: LoopKernel) -> list[str]:
    lines: list[str] = []
    open_loops: list[str] = []
    order = {name: k for k, name in enumerate(knl.all_inames())}
    for insn in knl.instructions:
        wanted = sorted(insn.within_inames, key=lambda n: order.get(n, 0))
        common = 0
        while (common < len(open_loops) and common < len(wanted)
               and open_loops[common] == wanted[common]):
            common += 1
        while len(open_loops) > common:
            lines.append("  " * (len(open_loops) - 1) + f"end {open_loops.pop()}")
        for name in wanted[common:]:
            lines.append("  " * len(open_loops) + f"for {name}")
            open_loops.append(name)
        lines.append("  " * len(open_loops) + str(insn))
    while open_loops:
        lines.append("  " * (len(open_loops) - 1) + f"end {open_loops.pop()}")
    return lines
