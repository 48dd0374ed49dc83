"""Write docs/compatibility.md: for every public function of NumPy's main
namespace, ``numpy.linalg``, ``numpy.fft`` and ``numpy.random`` (its
module-level functions), and every public attribute of ``numpy.ndarray``,
where lazyarray computes it, read from lazyarray's code (see
``scripts/compat_walk.py``), and what the host tier does with small arrays.
The results of the Array API client runs (``scripts/array_api_clients.py
--write``, kept in ``docs/compatibility-clients.json``) are rendered at the end.

Run from the checkout: ``python scripts/compatibility.py`` (``--check``: exit
1 if the committed page is not current).
"""

from __future__ import annotations

import inspect
import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import numpy as np  # noqa: E402
from compat_walk import _MEMO as walk_memo  # noqa: E402
from compat_walk import reach, unwrap  # noqa: E402

import lazyarray as la  # noqa: E402
from lazyarray import protocols  # noqa: E402
from lazyarray.api.ufuncs import Ufunc  # noqa: E402
from lazyarray.fallback import MUTATING  # noqa: E402
from lazyarray.host import namespace as host_namespace  # noqa: E402

PAGE = ROOT / "docs" / "compatibility.md"
CLIENTS = ROOT / "docs" / "compatibility-clients.json"

DEVICE, DESIGN, FALLBACK, NONE = "device", "host by design", "host fallback", "not at all"
WHERE = (DEVICE, DESIGN, FALLBACK, NONE)


@dataclass(frozen=True)
class Entry:
    """One NumPy function or array attribute and where lazyarray computes it."""
    name: str
    where: str
    detail: str
    host_tier: str


# {{{ what NumPy has

#: NumPy's classes listed with the functions (the others are scalar types,
#: dtypes and exceptions)
_CLASSES = frozenset(["broadcast", "busdaycalendar", "errstate", "finfo", "iinfo",
                      "ndenumerate", "ndindex", "nditer", "poly1d", "vectorize"])


def numpy_functions(module: types.ModuleType) -> dict[str, Any]:
    """*module*'s public functions and ufuncs (and, in ``numpy``, its
    function-like classes), by name."""
    found = {}
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_") or name == "test" or isinstance(obj, types.ModuleType):
            continue
        if isinstance(obj, type):
            if module is np and name in _CLASSES:
                found[name] = obj
            continue
        if callable(obj):
            found[name] = obj
    return found


def ndarray_attributes() -> list[str]:
    """The public attributes of NumPy arrays."""
    return [n for n in dir(np.ndarray) if not n.startswith("_")]

# }}}


# {{{ classification

def _own(namespace: Any, name: str) -> Any:
    """*namespace*'s own attribute *name* (not one its ``__getattr__`` makes)."""
    return vars(namespace).get(name)


def _kind(obj: Any) -> tuple[str, str]:
    """How lazyarray's *obj* computes, from the code it reaches."""
    if isinstance(obj, Ufunc):
        return DEVICE, "lazyarray's ufunc (an elementwise kernel)"
    if isinstance(obj, type):
        call = vars(obj).get("__call__")
        if call is not None and reach(call).host and not reach(call).kernels:
            return DESIGN, f"NumPy on the host (`{obj.__qualname__}.__call__`)"
        return DEVICE, f"lazyarray's class `{obj.__module__}.{obj.__qualname__}`"
    found = reach(obj)
    if found.host and not found.kernels:
        return DESIGN, f"NumPy on the host ({found.host[0]})"
    if found.host:
        return DEVICE, f"kernels ({found.kernels[0]}); some arguments on the host " \
                       f"({found.host[0]})"
    if found.kernels:
        return DEVICE, f"kernels ({found.kernels[0]})"
    if (getattr(unwrap(obj), "__module__", "") or "").startswith("lazyarray.random"):
        return DESIGN, "NumPy's random state on the host"
    return DEVICE, "no kernel needed (shapes, dtypes or views)"


def _module_label(module: types.ModuleType) -> str:
    return "np" if module is np else module.__name__.replace("numpy", "np", 1)


def classify(module: types.ModuleType, la_module: Any, name: str, func: Any) -> Entry:
    """Where lazyarray computes NumPy's *func* (``module.name``), called as
    ``la_module.name`` on lazy arrays."""
    label = f"{_module_label(module)}.{name}"
    own = _own(la_module, name)
    if own is not None and (getattr(own, "__module__", "") or "").startswith("lazyarray"):
        where, detail = _kind(own)
        if not isinstance(func, (type, np.ufunc)) and module is not np.random \
                and protocols.implementation(func) is None:
            detail += f"; `{label}(lazy)` runs NumPy on the host"
    elif own is not None:
        where, detail = FALLBACK, f"NumPy's own object (`la` re-exports `{label}`)"
    elif isinstance(func, np.ufunc):
        where, detail = FALLBACK, "NumPy's ufunc on the host"
    elif isinstance(func, type):
        where = NONE
        detail = (f"`la.{name}` raises AttributeError: lazyarray does not re-export "
                  f"NumPy's classes (`{label}` itself takes lazy arrays as NumPy arrays)")
    elif name in MUTATING:
        where = NONE
        detail = f"raises LazyArrayError: `{name}` writes into its argument, which NumPy " \
                 "would do in a host copy"
    else:
        where, detail = FALLBACK, "NumPy on the host, with a LazyArrayHostFallbackWarning"
    return Entry(name, where, detail, host_tier(la_module, name, func, where))


def host_tier(la_module: Any, name: str, func: Any, where: str) -> str:
    """What the host tier does with *name* of host (small) arrays."""
    own = _own(la_module, name)
    if where == NONE:
        return "as above"
    if name in host_namespace._OWN:
        made = "sorted values" if name.startswith("unique_") else "a list"
        return f"lazyarray's answer by NumPy ({made})"
    if own is None or isinstance(own, Ufunc) or getattr(own, "_host_tier", False):
        return "NumPy"
    if name in host_namespace._KEEP:
        return "lazyarray's (no array computation)"
    if la_module is la.random:
        return "NumPy (the same draws)"
    return "lazyarray's, as on the device"


def classify_attribute(name: str) -> Entry:
    """Where lazyarray computes the array attribute ``x.name``."""
    from lazyarray.host import HostArray
    value = inspect.getattr_static(la.LazyArray, name, None)
    if value is None:
        function = getattr(np, name, None)
        instead = f"; `la.{name}(x)` runs" if callable(function) else ""
        return Entry(name, NONE, f"LazyArray has no `{name}` (AttributeError): use it on "
                                 f"`x.get()`, a NumPy array{instead}", "as above")
    if isinstance(value, property):
        where, detail = _kind(value.fget) if value.fget is not None else (DEVICE, "")
    elif callable(value) or isinstance(value, (staticmethod, classmethod)):
        where, detail = _kind(value)
    else:
        where, detail = DEVICE, "an attribute"
    tier = "NumPy" if name in vars(HostArray) and name not in ("get", "compute") \
        else "lazyarray's, as on the device"
    if isinstance(unwrap(value if not isinstance(value, property) else value.fget),
                  types.FunctionType) and name in ("shape", "dtype", "ndim", "size",
                                                   "strides", "item", "tolist"):
        tier = "NumPy"
    return Entry(name, where, detail, tier)


MODULES: list[tuple[str, types.ModuleType, Any]] = [
    ("numpy", np, la), ("numpy.linalg", np.linalg, la.linalg), ("numpy.fft", np.fft, la.fft),
    ("numpy.random", np.random, la.random)]


def entries() -> dict[str, list[Entry]]:
    """Every entry of the page, by section."""
    walk_memo.clear()                   # (each listing walks afresh, in the same order)
    sections = {}
    for title, module, la_module in MODULES:
        functions = numpy_functions(module)
        if module is np.random:
            functions = {n: f for n, f in functions.items() if not isinstance(f, type)}
        sections[title] = [classify(module, la_module, n, f) for n, f in sorted(functions.items())]
    sections["numpy.ndarray"] = [classify_attribute(n) for n in ndarray_attributes()]
    return sections

# }}}


# {{{ the page

HEADER = """# Compatibility with NumPy

Generated by `scripts/compatibility.py` from lazyarray's code (the test suite
checks that this page is current): every public function of NumPy's main
namespace (with its ufuncs and function-like classes), of `numpy.linalg`,
`numpy.fft` and `numpy.random` (the module's legacy functions), and every
public attribute of `numpy.ndarray`, each as `la.<name>` (or `x.<name>`)
would compute it on lazy arrays. `np.<name>(lazy)` does the same
through NumPy's protocols, except where a row says otherwise.

- **device**: lazyarray has its own version, whose code builds kernels
  (lazy, fused with its neighbours). "some arguments on the host" names the
  path by which some arguments (a mode, an order, weights) run NumPy instead.
- **host by design**: lazyarray's own version computes with NumPy on the host
  (sets, searches, factorizations, NumPy's random streams): the inputs are
  computed and copied, the result comes back as a lazy array, with a
  `LazyArrayHostFallbackWarning` the first time.
- **host fallback**: lazyarray has no version of it; NumPy runs it on the host
  values, with the same warning (`lazyarray.fallback`).
- **not at all**: it raises, for the reason given.

How a row is decided: `scripts/compat_walk.py` follows the names each
function's code uses (globals, closures, imports inside functions, methods
of lazy arrays) through lazyarray's own functions, and looks for the kernel
builders (`lazyarray.ops`, the device random stream, lazyarray's ufuncs) and
the host entry points (`lazyarray.fallback.host_call` and its warning,
NumPy's random streams). Paths taken only inside `la.jit` and NumPy's
versions for long doubles are not counted. The chain in parentheses is the
first path found.

The Array API clients run with lazyarray (scikit-learn, SciPy,
array-api-extra), with their versions, counts next to `array_api_strict`'s
and each failing case, are at the [end of the page](#array-api-clients-tested).

*host tier*: what happens to host arrays (`LAZYARRAY_TIER=host`, or small
arrays under `auto`, see [What runs where](where-it-runs.md)): NumPy itself
computes every function NumPy has, so its answers are NumPy's by construction.
"""


def _table(rows: list[Entry]) -> list[str]:
    lines = ["| name | runs | how | host tier |", "|---|---|---|---|"]
    lines += [f"| `{e.name}` | {e.where} | {e.detail.replace('|', '/')} | {e.host_tier} |"
              for e in rows]
    return lines


def _counts(sections: dict[str, list[Entry]]) -> list[str]:
    lines = ["| module | " + " | ".join(WHERE) + " | all |",
             "|---|" + "---:|" * (len(WHERE) + 1)]
    totals = dict.fromkeys(WHERE, 0)
    for title, rows in sections.items():
        counts = {w: sum(e.where == w for e in rows) for w in WHERE}
        for w in WHERE:
            totals[w] += counts[w]
        lines.append(f"| `{title}` | " + " | ".join(str(counts[w]) for w in WHERE)
                     + f" | {len(rows)} |")
    lines.append("| **all** | " + " | ".join(f"**{totals[w]}**" for w in WHERE)
                 + f" | **{sum(totals.values())}** |")
    rows = [e for section in sections.values() for e in section if e.where == DEVICE]
    plain = sum(e.detail.startswith("no kernel needed") for e in rows)
    mixed = sum("some arguments on the host" in e.detail for e in rows)
    lines += ["", f"Of the {len(rows)} device entries, {plain} need no kernel (shapes, "
              f"dtypes, views) and {mixed} run some of their arguments on the host."]
    return lines


def clients_section() -> list[str]:
    """The section on the Array API clients, from their recorded runs."""
    if not CLIENTS.exists():
        return []
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from array_api_report import render
    return render(json.loads(CLIENTS.read_text()))


def page() -> str:
    """The text of docs/compatibility.md."""
    sections = entries()
    lines = [HEADER, f"Generated with NumPy {np.__version__}.", "", "## Counts", "",
             *_counts(sections), ""]
    for title, rows in sections.items():
        lines += [f"## `{title}`", "", *_table(rows), ""]
    lines += clients_section()
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    """Write the page (or with ``--check``, compare it)."""
    text = page()
    if "--check" in sys.argv:
        sys.exit(0 if PAGE.read_text() == text else 1)
    PAGE.write_text(text)
    rows = [e for section in entries().values() for e in section]
    print(", ".join(f"{sum(e.where == w for e in rows)} {w}" for w in WHERE))


if __name__ == "__main__":
    main()

# }}}
