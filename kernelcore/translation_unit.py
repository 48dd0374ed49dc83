"""Several kernels and the functions they call: translation units.

Public names: TranslationUnit, make_program, merge,
make_function, rename_callable, for_each_kernel, resolve_callables, as_kernel,
register_callable (callable kernels: :mod:`kernelcore.callable_kernel`),
CallablesInferenceContext (from :mod:`kernelcore.callables`, where loopy has it).

A :class:`TranslationUnit` maps names to callables
(:attr:`TranslationUnit.callables_table`); the names in
:attr:`TranslationUnit.entrypoints` are the kernels callable from the host,
the others are only called from inside the unit. :func:`make_kernel
<kernelcore.make_kernel>` returns a unit whose only entry point is the new
kernel; the built-in math functions its instructions call (``sin``, ``max``,
``atan2``, ...) enter the table as :class:`~kernelcore.callables.MathCallable`
(they are *resolved*). Transformations accept a unit or a kernel and return
the same kind (:func:`for_each_kernel`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.callable_kernel import CallableKernel, kernel_called_names
from kernelcore.callables import CallablesInferenceContext as CallablesInferenceContext
from kernelcore.callables import (
    InKernelCallable,
    MathCallable,
)
from kernelcore.diagnostic import KernelcoreError, UnknownNameError
from kernelcore.functions import is_known_function
from kernelcore.ir.expr import IdentityMapper, ResolvedFunction
from kernelcore.ir.kernel import KernelState, LoopKernel
from kernelcore.ir.stages import stage

#: kernel attributes a translation unit reads from its default entry point,
#: for programs written when ``make_kernel`` returned a kernel
_DELEGATED = frozenset({
    "name", "args", "arg_dict", "instructions", "id_to_insn", "temporary_variables",
    "domains", "all_inames", "all_params", "iname_tags", "substitutions", "options",
    "linearization", "get_var", "get_written_variables", "writer_map", "index_dtype",
    "assumptions", "loop_priority", "silenced_warnings", "stringify", "callables",
    "get_grid_size_upper_bounds", "get_grid_size_upper_bounds_as_exprs",
    "get_inames_domain", "get_insn_domain", "space", "device_arguments", "iname_slabs"})


class TranslationUnit:
    """Callables by name (:attr:`callables_table`) and the names of the
    kernels callable from the host (:attr:`entrypoints`). Immutable: change
    it through :meth:`copy`, :meth:`with_kernel` and the transformations."""

    def __init__(self, entrypoints: Iterable[str] = frozenset(),
                 callables_table: Mapping[str, InKernelCallable] | None = None,
                 target: Any = None, func_id_to_in_knl_callable_mappers: Any = None):
        table = dict(callables_table or {})
        entrypoints = frozenset(entrypoints)
        unknown = sorted(entrypoints - set(table))
        if unknown:
            raise KernelcoreError(f"entry point(s) {', '.join(unknown)} are not in the "
                                  "translation unit")
        if target is None:
            target = next((c.subkernel.target for c in table.values()
                           if isinstance(c, CallableKernel)), None)
        self._fields = {"entrypoints": entrypoints, "callables_table": _resolve(table),
                        "target": target, "func_id_to_in_knl_callable_mappers":
                        func_id_to_in_knl_callable_mappers or []}
        self._executable: dict[Any, LoopKernel] = {}

    entrypoints = property(lambda self: self._fields["entrypoints"],
                           doc="Names of the kernels callable from the host.")
    callables_table = property(lambda self: self._fields["callables_table"],
                               doc="``{name: InKernelCallable}``: the unit's callables.")
    target = property(lambda self: self._fields["target"],
                      doc="The target of the unit's kernels.")
    func_id_to_in_knl_callable_mappers = property(
        lambda self: self._fields["func_id_to_in_knl_callable_mappers"])

    def copy(self, **kwargs: Any) -> TranslationUnit:
        """A copy with *entrypoints*, *callables_table* or *target* replaced
        (a new target is given to every kernel)."""
        unknown = sorted(set(kwargs) - set(self._fields))
        if unknown:
            raise TypeError(f"TranslationUnit.copy: unknown field(s) {', '.join(unknown)}")
        values = {**self._fields, **kwargs}
        if "target" in kwargs:
            values["callables_table"] = {
                n: (c.copy(subkernel=c.subkernel.copy(target=kwargs["target"]))
                    if isinstance(c, CallableKernel) else c)
                for n, c in values["callables_table"].items()}
        return TranslationUnit(**values)

    @classmethod
    def for_kernel(cls, knl: LoopKernel) -> TranslationUnit:
        """A translation unit whose only kernel and entry point is *knl*."""
        return cls(frozenset([knl.name]), {knl.name: CallableKernel(knl)})

    def with_entrypoints(self, entrypoints: str | Iterable[str]) -> TranslationUnit:
        """A copy whose entry points are *entrypoints* (names, or one string
        of comma-separated names)."""
        if isinstance(entrypoints, str):
            entrypoints = [e.strip() for e in entrypoints.split(",") if e.strip()]
        return self.copy(entrypoints=frozenset(entrypoints))

    @property
    def state(self) -> KernelState:
        """The least advanced state of the unit's kernels."""
        return min((k.state for k in self._kernels().values()),
                   default=KernelState.INITIAL)

    def _kernels(self) -> dict[str, LoopKernel]:
        return {n: c.subkernel for n, c in self.callables_table.items()
                if isinstance(c, CallableKernel)}

    def kernel_names(self) -> list[str]:
        return list(self._kernels())

    def __getitem__(self, name: str) -> Any:
        """The kernel called *name*, or the callable if it is not a kernel."""
        clbl = self.callables_table.get(name)
        if clbl is None:
            raise _NoSuchCallable(
                f"no kernel named '{name}' in the translation unit (kernels: "
                f"{', '.join(sorted(self.kernel_names()))})")
        return clbl.subkernel if isinstance(clbl, CallableKernel) else clbl

    @property
    def default_entrypoint(self) -> LoopKernel:
        """The entry-point kernel, when there is exactly one."""
        if len(self.entrypoints) != 1:
            raise _AmbiguousEntrypoint(
                f"the translation unit has {len(self.entrypoints)} entry points "
                f"({', '.join(sorted(self.entrypoints))}); pick one with tu[name]")
        return self[next(iter(self.entrypoints))]

    def with_kernel(self, knl: LoopKernel) -> TranslationUnit:
        """A copy in which the kernel named ``knl.name`` is *knl* (added if
        the unit has none of that name)."""
        old = self.callables_table.get(knl.name)
        clbl = (old.copy(subkernel=knl) if isinstance(old, CallableKernel)
                else CallableKernel(knl))
        return self.copy(callables_table={**self.callables_table, knl.name: clbl})

    def executable_kernel(self, name: str | None = None) -> LoopKernel:
        """The entry point *name* (default: the only one), ready for code
        generation: the kernels of the unit it calls are registered as its
        callables and become device functions (inlined instead where one
        cannot be: a global barrier, a local or global temporary)."""
        if name is not None and name not in self.entrypoints:
            raise KernelcoreError(f"'{name}' is not an entry point of the translation "
                                  f"unit (entry points: {', '.join(sorted(self.entrypoints))})")
        knl = self[name] if name is not None else self.default_entrypoint
        done = self._executable.get(knl.name)
        if done is None:
            done = stage("link_callees")(knl, self._kernels())
            if done is None:        # a callee that cannot be a device function
                done = self.inlined_kernel(knl.name)
            self._executable[knl.name] = done
        return done

    def inlined_kernel(self, name: str | None = None) -> LoopKernel:
        """The entry point *name* (default: the only one) with the kernels of
        the unit it calls inlined into it (statistics count this one)."""
        knl = self[name] if name is not None else self.default_entrypoint
        key = ("inlined", knl.name)
        done = self._executable.get(key)
        if done is None:
            done = stage("inline_calls")(knl, self._kernels())
            self._executable[key] = done
        return done

    def __call__(self, *args: Any, entrypoint: str | None = None, **kwargs: Any):
        """Run the entry point *entrypoint* (default: the only one)."""
        return self.executable_kernel(entrypoint)(*args, **kwargs)

    def executor(self, *args: Any, entrypoint: str | None = None) -> Callable[..., Any]:
        """A callable running the entry point *entrypoint* (default: the only
        one) as ``executor(queue, **arguments)``; *args* (a context or a queue,
        as loopy takes) are not needed by kernelcore's executors."""
        if entrypoint is None:
            if not self.entrypoints:
                raise ValueError(f"the translation unit has no entry points but "
                                 f"{len(self.callables_table)} callables: pick some with "
                                 "with_entrypoints")
            entrypoint = self.default_entrypoint.name
        elif entrypoint not in self.entrypoints:
            raise KernelcoreError(f"'{entrypoint}' is not an entry point of the "
                                  f"translation unit (entry points: "
                                  f"{', '.join(sorted(self.entrypoints))})")
        unit, name = self, entrypoint

        def run(queue: Any, **kwargs: Any) -> Any:
            return unit(queue, entrypoint=name, **kwargs)
        return run

    def __getattr__(self, name: str) -> Any:
        # a unit of one entry point answers its kernel's read-only members
        if name in _DELEGATED and not name.startswith("_") \
                and len(self._fields["entrypoints"]) == 1:
            return getattr(self.default_entrypoint, name)
        raise AttributeError(f"'TranslationUnit' object has no attribute '{name}'")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TranslationUnit) and self._fields == other._fields

    def __hash__(self) -> int:
        return hash((self.entrypoints, tuple(sorted(self.callables_table))))

    def __repr__(self) -> str:
        return (f"TranslationUnit(entrypoints={sorted(self.entrypoints)}, "
                f"callables={sorted(self.callables_table)})")

    def __str__(self) -> str:
        return "\n".join(str(k) for k in self._kernels().values())


class _NoSuchCallable(KernelcoreError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class _AmbiguousEntrypoint(KernelcoreError, ValueError):
    pass


def _resolve(table: dict[str, InKernelCallable]) -> dict[str, InKernelCallable]:
    """*table* with the callables its kernels call added: functions registered
    in a kernel, then the built-in math functions."""
    for clbl in list(table.values()):
        if not isinstance(clbl, CallableKernel):
            continue
        knl = clbl.subkernel
        for name in sorted(kernel_called_names(knl)):
            if name in table:
                continue
            if name in knl.callables:
                table[name] = knl.callables[name]
            elif is_known_function(name):
                table[name] = MathCallable(name)
    return table


def resolve_callables(program: TranslationUnit) -> TranslationUnit:
    """*program* with every function its kernels call that kernelcore knows
    (registered callables, built-in math functions, kernels of the unit) in
    its callables table, and the calls to them rewritten as calls of
    :class:`~kernelcore.ir.expr.ResolvedFunction` nodes."""
    program = program.copy()
    table = program.callables_table

    class _Resolver(IdentityMapper):
        def map_call(self, expr, *args, **kwargs):
            fn = expr.function
            if isinstance(fn, prim.Variable) and fn.name in table:
                fn = ResolvedFunction(fn)
            return prim.Call(fn, tuple(self.rec(p) for p in expr.parameters))

    resolver = _Resolver()
    new = {n: (c.copy(subkernel=c.subkernel.copy(instructions=tuple(
        i.with_transformed_expressions(resolver) for i in c.subkernel.instructions)))
        if isinstance(c, CallableKernel) else c) for n, c in table.items()}
    return program.copy(callables_table=new)


def make_program(knl: LoopKernel) -> TranslationUnit:
    """A translation unit with *knl* as its only entry point, calls resolved."""
    return TranslationUnit.for_kernel(knl)


T = TypeVar("T")
#: a kernel or a translation unit (a function taking one returns the same kind)
_Program = TypeVar("_Program", LoopKernel, TranslationUnit)


def for_each_kernel(transform: Callable[..., LoopKernel]) -> Callable[..., Any]:
    """Decorator: *transform* (a kernel as first argument, a kernel back)
    then also accepts a translation unit, and is applied to each of its
    kernels (a translation unit comes back). In a unit of several kernels,
    a kernel for which the transformation names an unknown iname, variable
    or instruction is left as it is, so that a transformation meant for one
    kernel of a merged unit can be applied to the unit."""
    @functools.wraps(transform)
    def wrapper(program: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(program, TranslationUnit):
            return transform(program, *args, **kwargs)
        kernels = program._kernels()
        new: dict[str, LoopKernel] = {}
        errors: list[Exception] = []
        for name, knl in kernels.items():
            try:
                new[name] = transform(knl, *args, **kwargs)
            except UnknownNameError as e:
                if len(kernels) == 1:
                    raise
                errors.append(e)
                new[name] = knl
        if errors and len(errors) == len(kernels):
            raise errors[0]
        table = {n: (c.copy(subkernel=new[n]) if n in new else c)
                 for n, c in program.callables_table.items()}
        for name, knl in new.items():
            if knl.name != name:           # a transformation that renamed the kernel
                del table[name]
                table[knl.name] = CallableKernel(knl)
        entry = frozenset(new[e].name if e in new else e for e in program.entrypoints)
        return program.copy(entrypoints=entry, callables_table=table)
    wrapper.__wrapped__ = transform  # type: ignore[attr-defined]
    return wrapper


def as_kernel(program: Any, entrypoint: str | None = None) -> LoopKernel:
    """The kernel code generation and execution work on: *program* itself if
    it is a kernel, else the entry point *entrypoint* (default: the only one)
    of the translation unit, with the kernels it calls inlined."""
    if isinstance(program, TranslationUnit):
        return program.executable_kernel(entrypoint)
    return program


def rename_callable(program: TranslationUnit, old_name: str,
                    new_name: str | None = None, existing_ok: bool = False
                    ) -> TranslationUnit:
    """*program* with its callable *old_name* (a kernel or a function) called
    *new_name*, calls and entry points renamed with it."""
    if old_name not in program.callables_table:
        raise KernelcoreError(f"rename_callable: no callable named '{old_name}'")
    if new_name is None:
        new_name = UniqueNameGenerator(set(program.callables_table))(old_name)
    if new_name in program.callables_table and not existing_ok:
        raise KernelcoreError(f"rename_callable: a callable is already named '{new_name}'")

    class _Renamer(IdentityMapper):
        def map_call(self, expr, *args, **kwargs):
            fn = expr.function
            if isinstance(fn, prim.Variable) and fn.name == old_name:
                fn = prim.Variable(new_name)
            elif isinstance(fn, ResolvedFunction) and fn.name == old_name:
                fn = ResolvedFunction(prim.Variable(new_name))
            return prim.Call(fn, tuple(self.rec(p) for p in expr.parameters))

    renamer = _Renamer()
    table: dict[str, InKernelCallable] = {}
    for name, clbl in program.callables_table.items():
        if isinstance(clbl, CallableKernel):
            knl = clbl.subkernel.copy(instructions=tuple(
                i.with_transformed_expressions(renamer)
                for i in clbl.subkernel.instructions))
            clbl = clbl.copy(subkernel=knl)
        if name == old_name:
            name, clbl = new_name, clbl.with_name(new_name)
        table[name] = clbl
    entry = frozenset(new_name if e == old_name else e for e in program.entrypoints)
    return program.copy(entrypoints=entry, callables_table=table)


def make_function(*args: Any, **kwargs: Any) -> TranslationUnit:
    """A translation unit holding a kernel meant to be called by other
    kernels (no entry point); takes :func:`make_kernel`'s arguments."""
    knl = stage("make_loop_kernel")(*args, **kwargs)
    return TranslationUnit(frozenset(), {knl.name: CallableKernel(knl)})


def merge(items: Iterable[LoopKernel | TranslationUnit]) -> TranslationUnit:
    """One translation unit holding every kernel and callable of *items*; its
    entry points are those of the units given. A kernel given directly is an
    entry point unless another kernel of the unit calls it."""
    table: dict[str, InKernelCallable] = {}
    entry: set[str] = set()
    plain: list[str] = []
    for item in items:
        if isinstance(item, TranslationUnit):
            clbls, entry_here = item.callables_table, set(item.entrypoints)
        elif isinstance(item, LoopKernel):
            clbls, entry_here = {item.name: CallableKernel(item)}, set()
            plain.append(item.name)
        else:
            raise KernelcoreError(f"merge: expected kernels or translation units, "
                                  f"got {type(item).__name__}")
        for name, clbl in clbls.items():
            if name in table and table[name] is not clbl and not (
                    isinstance(clbl, MathCallable) and type(table[name]) is MathCallable):
                raise KernelcoreError(f"merge: two different callables are named '{name}'")
            table.setdefault(name, clbl)
        entry |= entry_here
    called: set[str] = set()
    for clbl in table.values():
        if isinstance(clbl, CallableKernel):
            called |= kernel_called_names(clbl.subkernel)
    entry |= {n for n in plain if n not in called}
    return TranslationUnit(frozenset(entry), table)


def register_callable(knl: _Program, name: str, callable: InKernelCallable) -> _Program:
    """A copy of *knl* (a kernel or a translation unit: then each of its
    kernels) in which calls to *name* go to *callable*."""
    if not isinstance(callable, InKernelCallable):
        raise KernelcoreError(
            f"register_callable: expected an InKernelCallable for '{name}', "
            f"got {type(callable).__name__}")
    if isinstance(knl, TranslationUnit):
        if isinstance(callable, CallableKernel):     # a kernel called by the others
            return knl.copy(callables_table={**knl.callables_table,
                                             name: callable.with_name(name)})
        table = {n: (c.copy(subkernel=register_callable(c.subkernel, name, callable))
                     if isinstance(c, CallableKernel) else c)
                 for n, c in knl.callables_table.items()}
        return knl.copy(callables_table={**table, name: callable})
    return knl.copy(callables={**knl.callables, name: callable})
