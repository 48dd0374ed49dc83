"""Where lazyarray computes a function, read from its code: the functions,
modules and objects its code names (globals, closures and imports inside
the function, methods of lazy arrays and of the function's own class by
their names, followed through lazyarray's own functions) are searched for
lazyarray's kernel builders and for its host entry points.

* kernel builders: the modules of ``lazyarray.ops`` (but ``lazyarray.ops.inputs``
  and the views of ``lazyarray.ops.shape``) and ``lazyarray.random.device``,
  their functions, and lazyarray's ufunc objects;
* host entry points: ``lazyarray.fallback.host_call``, ``host_version`` and
  ``_note`` (every host computation warns through them) and the NumPy
  streams' ``_host_call``.

Another public function of lazyarray counts as kernels where it builds
kernels, else as the host where it reaches the host (its own host paths for
some arguments do not make its callers' host paths).

Not followed: the host tier (``lazyarray.host``, which is described on its
own), the run-time (``lazyarray.run``, ``values``, ``tracing``), making and
reading values (``asarray``, ``get``, ``item``, ``__array__``, ...), the
draws made only while ``la.jit`` traces (``lazyarray.random.traced``) and
``device_or_host`` (NumPy for the dtypes kernels do not compute, long doubles).

Public names: Reach, reach, unwrap.
"""

from __future__ import annotations

import dis
import importlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any

#: names whose call computes on the host with NumPy
HOST_ENTRIES = frozenset(["host_call", "_note", "_host_call", "host_version"])
#: modules whose functions build device kernels
KERNEL_MODULES = ("lazyarray.ops.", "lazyarray.random.device")
#: modules of ``lazyarray.ops`` that make views, not kernels
VIEW_MODULES = ("lazyarray.ops.inputs", "lazyarray.ops.shape")
#: modules not followed
UNFOLLOWED = ("lazyarray.host", "lazyarray.run", "lazyarray.values",
              "lazyarray.tracing", "lazyarray.random.traced", "lazyarray.errors",
              "lazyarray.graph", "lazyarray.lower", "lazyarray.plan")
#: functions not followed (see the module's docstring)
UNFOLLOWED_FUNCTIONS = frozenset(["device_or_host", "asarray"])
#: methods (of any class) not followed: reading values
UNFOLLOWED_METHODS = frozenset([
    "get", "_host", "__array__", "item", "tolist",
    "__float__", "__int__", "__bool__", "__index__", "__complex__", "_refuse_value", "compute",
    "block_until_ready", "__repr__", "__str__", "__format__"])


@dataclass
class Reach:
    """What a function's code reaches: kernel builders and host entry points,
    each with the chain of names that leads to it (the first found)."""
    kernels: list[str] = field(default_factory=list)
    host: list[str] = field(default_factory=list)


def unwrap(func: Any) -> Any:
    """lazyarray's own function behind the host tier's wrappers of *func*."""
    for _ in range(8):
        wrapped = getattr(func, "__wrapped__", None)
        if wrapped is not None:
            func = wrapped
            continue
        module = getattr(func, "__module__", "") or ""
        closure = getattr(func, "__closure__", None)
        if module.startswith("lazyarray.host") and closure:
            cells = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in closure)))
            inner = cells.get("device") or cells.get("impl")
            if inner is not None:
                func = inner
                continue
        break
    return func


def _module_of(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return getattr(obj, "__module__", None) or ""


def _is_kernel(obj: Any) -> bool:
    module = _module_of(obj)
    if module in VIEW_MODULES:
        return False
    if any(module == m.rstrip(".") or module.startswith(m) for m in KERNEL_MODULES):
        return True
    from lazyarray.api.ufuncs import Ufunc
    return isinstance(obj, Ufunc)


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """*code* and the code objects nested in it."""
    found, stack = [], [code]
    while stack:
        c = stack.pop()
        found.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return found


def _imported(code: types.CodeType) -> dict[str, Any]:
    """The names ``from module import name`` inside *code* binds, resolved."""
    names: dict[str, Any] = {}
    module = None
    for instruction in dis.get_instructions(code):
        if instruction.opname == "IMPORT_NAME":
            module = instruction.argval
        elif instruction.opname == "IMPORT_FROM" and module is not None:
            try:
                value = getattr(importlib.import_module(module), instruction.argval)
            except (ImportError, AttributeError):
                continue
            names[instruction.argval] = value
    return names


def _named(func: Any) -> list[tuple[str, Any]]:
    """The objects *func*'s code names, with the names."""
    code = getattr(func, "__code__", None)
    if code is None:
        return []
    scope: dict[str, Any] = dict(getattr(func, "__globals__", {}))
    if func.__closure__:
        for name, cell in zip(code.co_freevars, func.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:
                continue
    owners = _owners(func)
    found = []
    for c in _codes(code):
        scope.update(_imported(c))
        attributes = {i.argval for i in dis.get_instructions(c) if "ATTR" in i.opname
                      or i.opname == "LOAD_METHOD"}
        for name in (*c.co_names, *c.co_freevars):
            if name in HOST_ENTRIES:
                found.append((name, HOST_ENTRIES))
            elif name in attributes:
                for owner in owners:
                    value = inspect.getattr_static(owner, name, None)
                    if value is not None:
                        found.append((name, value))
            elif name in scope:
                found.append((name, scope[name]))
    return found


def _owners(func: Any) -> list[Any]:
    """Where *func*'s attribute names are looked up: its own class, lazy
    arrays' class and, where its code names it, the ``lazyarray`` namespace."""
    import lazyarray
    from lazyarray.handle import LazyArray
    owners: list[Any] = []
    qualname = getattr(func, "__qualname__", "")
    if "." in qualname and "<locals>" not in qualname:
        owner = getattr(sys.modules.get(func.__module__), qualname.split(".")[0], None)
        if isinstance(owner, type):
            owners.append(owner)
    names = {n for c in _codes(func.__code__) for n in c.co_names}
    return [*owners, LazyArray, *([lazyarray] if names & {"lazyarray", "_namespace"} else [])]


def _callables(obj: Any) -> list[Any]:
    """The functions to follow for *obj* (a class's methods are not followed)."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        return [f for f in (obj.fget,) if f is not None]
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return [obj]
    return []


def _unfollowed(obj: Any) -> bool:
    qualname = getattr(obj, "__qualname__", "") or ""
    owner, _, name = qualname.rpartition(".")
    return qualname in UNFOLLOWED_FUNCTIONS or (bool(owner) and name in UNFOLLOWED_METHODS)


def _public() -> dict[int, str]:
    """lazyarray's public functions (by id), with their names."""
    import lazyarray
    found = {}
    for namespace in (lazyarray, lazyarray.linalg, lazyarray.fft, lazyarray.random):
        for name, value in vars(namespace).items():
            if not name.startswith("_") and callable(value):
                found[id(unwrap(value))] = name
    return found


_MEMO: dict[int, Reach] = {}


def reach(func: Any, limit: int = 400) -> Reach:
    """What *func* reaches (see the module's docstring). Another public
    function of lazyarray reached counts as kernels where it builds kernels
    (whatever host path it has for some of its arguments), else as the host
    where it reaches the host."""
    func = unwrap(func)
    if id(func) in _MEMO:
        return _MEMO[id(func)]
    _MEMO[id(func)] = Reach()                   # (a recursion finds nothing more)
    public = _public()
    found = Reach()
    seen: set[int] = set()
    queue: list[tuple[Any, tuple[str, ...]]] = [(f, (getattr(f, "__name__", "?"),))
                                               for f in _callables(func)]
    while queue and len(seen) < limit:
        current, chain = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        for name, obj in _named(current):
            path = " → ".join((*chain[1:], name))
            obj = unwrap(obj)
            if obj is HOST_ENTRIES:
                found.host = found.host or [path]
                continue
            if _is_kernel(obj):
                found.kernels = found.kernels or [path]
                continue
            module = _module_of(obj)
            if not module.startswith("lazyarray") or module.startswith(UNFOLLOWED) \
                    or _unfollowed(obj):
                continue
            if id(obj) in public and obj is not func:
                other = reach(obj, limit)
                if other.kernels:
                    found.kernels = found.kernels or [f"{path} → {other.kernels[0]}"]
                elif other.host:
                    found.host = found.host or [f"{path} → {other.host[0]}"]
                continue
            for f in _callables(obj):
                queue.append((unwrap(f), (*chain, name)))
    _MEMO[id(func)] = found
    return found


if __name__ == "__main__":              # (a look at one function: python compat_walk.py pad)
    import lazyarray
    target: Any = lazyarray
    for part in sys.argv[1].split("."):
        target = getattr(target, part)
    print(reach(target))
