"""Several kernels that call each other: translation units.

Public names: CallableKernel, TranslationUnit, merge, make_function, kernel_called_names,
for_each_kernel.

A :class:`TranslationUnit` maps names to callables; the names in
:attr:`TranslationUnit.entrypoints` are the kernels callable from the host,
the others are only called from inside the unit. Calls between kernels are
inlined (:func:`~kernelcore.transform.inline.inline_callable_kernel`) before
code generation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernelcore.callables import InKernelCallable
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import called_names
from kernelcore.ir.kernel import LoopKernel


class CallableKernel(InKernelCallable):
    """A kernel as a callable of a translation unit (*subkernel*)."""

    init_arg_names = ("subkernel", "arg_id_to_dtype", "arg_id_to_descr")

    def __init__(self, subkernel: LoopKernel, arg_id_to_dtype: Mapping | None = None,
                 arg_id_to_descr: Mapping | None = None):
        super().__init__(subkernel.name, arg_id_to_dtype, arg_id_to_descr, subkernel.name)
        self._set(subkernel=subkernel)


def kernel_called_names(knl: LoopKernel) -> frozenset[str]:
    """The names of the functions *knl* calls."""
    return frozenset().union(*(called_names(e) for insn in knl.instructions
                               for e in insn.expressions()))


@dataclass(frozen=True)
class TranslationUnit:
    """Callables by name, and the names of the kernels callable from the host."""

    callables_table: Mapping[str, InKernelCallable] = field(default_factory=dict)
    entrypoints: frozenset[str] = frozenset()

    def __post_init__(self):
        unknown = sorted(set(self.entrypoints) - set(self.callables_table))
        if unknown:
            raise KernelcoreError(f"entry point(s) {', '.join(unknown)} are not in the "
                                  "translation unit")

    @classmethod
    def for_kernel(cls, knl: LoopKernel) -> TranslationUnit:
        """A translation unit whose only callable and entry point is *knl*."""
        return cls({knl.name: CallableKernel(knl)}, frozenset([knl.name]))

    def __getitem__(self, name: str) -> LoopKernel:
        clbl = self.callables_table.get(name)
        if not isinstance(clbl, CallableKernel):
            raise KernelcoreError(
                f"no kernel named '{name}' in the translation unit (kernels: "
                f"{', '.join(sorted(self.kernel_names()))})")
        return clbl.subkernel

    def kernel_names(self) -> list[str]:
        return [n for n, c in self.callables_table.items() if isinstance(c, CallableKernel)]

    @property
    def default_entrypoint(self) -> LoopKernel:
        """The entry-point kernel, when there is exactly one."""
        if len(self.entrypoints) != 1:
            raise KernelcoreError(
                f"the translation unit has {len(self.entrypoints)} entry points "
                f"({', '.join(sorted(self.entrypoints))}); pick one with tu[name]")
        return self[next(iter(self.entrypoints))]

    def with_kernel(self, knl: LoopKernel) -> TranslationUnit:
        """A copy in which the kernel named ``knl.name`` is *knl*."""
        return TranslationUnit({**self.callables_table, knl.name: CallableKernel(knl)},
                               self.entrypoints)

    def executable_kernel(self, name: str | None = None) -> LoopKernel:
        """The entry point *name* (default: the only one), checked to call no
        other kernel of the unit that still needs inlining."""
        if name is not None and name not in self.entrypoints:
            raise KernelcoreError(f"'{name}' is not an entry point of the translation "
                                  f"unit (entry points: {', '.join(sorted(self.entrypoints))})")
        knl = self[name] if name is not None else self.default_entrypoint
        pending = sorted(kernel_called_names(knl) & set(self.kernel_names()))
        if pending:
            raise KernelcoreError(
                f"kernel '{knl.name}' calls kernel(s) {', '.join(pending)} of the "
                "translation unit; inline them first with "
                f"lp.inline_callable_kernel(tu, '{pending[0]}')")
        return knl

    def __call__(self, *args: Any, **kwargs: Any):
        return self.executable_kernel()(*args, **kwargs)

    def __str__(self) -> str:
        return "\n".join(str(self[n]) for n in self.kernel_names())


def for_each_kernel(knl: Any, transform: Any) -> Any:
    """*transform* (kernel -> kernel) applied to *knl*, or to every kernel of
    the translation unit *knl* (a translation unit comes back)."""
    if isinstance(knl, TranslationUnit):
        table = {n: (CallableKernel(transform(c.subkernel))
                     if isinstance(c, CallableKernel) else c)
                 for n, c in knl.callables_table.items()}
        return TranslationUnit(table, knl.entrypoints)
    return transform(knl)


def make_function(*args: Any, **kwargs: Any) -> LoopKernel:
    """A kernel meant to be called by other kernels; takes :func:`make_kernel`'s
    arguments. (:func:`merge` makes the kernels that others call non-entry
    points.)"""
    from kernelcore.creation import make_kernel
    return make_kernel(*args, **kwargs)


def merge(items: Iterable[LoopKernel | TranslationUnit]) -> TranslationUnit:
    """One translation unit holding every kernel of *items*. Kernels given
    directly are entry points unless another kernel of the unit calls them."""
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
            if name in table and table[name] is not clbl:
                raise KernelcoreError(f"merge: two different callables are named '{name}'")
            table[name] = clbl
        entry |= entry_here
    called: set[str] = set()
    for clbl in table.values():
        if isinstance(clbl, CallableKernel):
            called |= kernel_called_names(clbl.subkernel)
    entry |= {n for n in plain if n not in called}
    return TranslationUnit(table, frozenset(entry))
