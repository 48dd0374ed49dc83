"""HostArray's commonest operations in C (``cdispatch.c``): arithmetic,
in-place arithmetic and comparisons with host arrays and Python numbers,
negation and absolute values, indexing and assignment by integers and
slices, ``copy()``, lazyarray's ufuncs (``la.sqrt(x)``) of host arrays
and numbers, and the common call of lazyarray's other NumPy functions
(positional host arrays and scalars, :data:`lazyarray.host.dispatch.C_CALL`).

A small time step on the host tier is a dozen NumPy calls of a microsecond
or less each; the Python around each call (HostArray's operator, its tests,
a new handle) costs nearly as much again. The C methods do what their
Python twins in :mod:`lazyarray.host.array` do in the plainest case (arrays
below the deferral and elision sizes, no ``la.jit`` trace, no ``"device"``
tier) and call the twin for everything else, so answers and errors are the
same with either.

The module is compiled once per Python, NumPy and source version into the
folder next to the kernel cache (in a background thread: the Python twins
serve until it is ready; ``LAZYARRAY_NATIVE=sync`` builds at once and
``off`` not at all, as the native loops) and installed over the twins.
``LAZYARRAY_CDISPATCH=0`` keeps the Python methods. No compiler, no Python
headers: the Python methods stay, and ``LAZYARRAY_LOG=info`` says why.

Public names: install, uninstall, installed, wait, calls_of.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

import lazyarray.host.array as _array
from lazyarray.host.cloop import native_mode
from lazyarray.host.dispatch import (
    _NO,
    _SCALARS,
    C_CALL,
    MUTATION,
    NUMPY_SCALARS,
    SMALL,
    WIDE,
    wrap,
)
from lazyarray.host.elision import ELIDE_BYTES
from lazyarray.host.fusion import DEFER_ELEMENTS, PENDING
from lazyarray.host.policy import _MODES, cache_folder
from lazyarray.tracing import ACTIVE_TRACES

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("cdispatch.c")
#: the extension module's name (its init function's)
MODULE = "_lazyarray_cdispatch"
#: the folder of built modules, next to the kernel cache
DISK_FOLDER = "lazyarray-cdispatch-v1"
#: the methods replaced, by name
NAMES = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
         "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__lt__", "__le__",
         "__gt__", "__ge__", "__eq__", "__ne__", "__getitem__", "__setitem__", "copy",
         "__neg__", "__pos__", "__abs__", "__invert__", "__iadd__", "__isub__", "__imul__",
         "__itruediv__")

#: the Python twins, by name (kept while the C methods are installed)
_TWINS: dict[str, Any] = {}
#: the classes whose ``__call__`` is a ufunc's of host arrays (see :func:`calls_of`)
_CALLERS: list[type] = []
#: the Python ``__call__`` of each, by class (while the C one is installed)
_CALL_TWINS: dict[type, Any] = {}
_MODULE: list[Any] = []
_BUILDING: list[threading.Thread] = []


def installed() -> bool:
    """Whether HostArray's C methods are in place."""
    return bool(_TWINS)


def _enabled() -> bool:
    return os.environ.get("LAZYARRAY_CDISPATCH", "1").strip().lower() not in (
        "0", "off", "false", "no") and native_mode() != "off"


def _library() -> Path:
    """Where the module built from this source for this Python and NumPy is
    kept (a temporary folder where the disk cache is off)."""
    import sysconfig

    key = hashlib.sha256(SOURCE.read_bytes() + repr((
        sys.version, np.__version__, sys.platform, sysconfig.get_config_var("EXT_SUFFIX"))
    ).encode()).hexdigest()[:24]
    folder = cache_folder(DISK_FOLDER)
    if folder is None:
        import tempfile

        folder = Path(tempfile.gettempdir()) / (
            f"{DISK_FOLDER}-{os.getuid() if hasattr(os, 'getuid') else 0}")
    return folder / f"{MODULE}-{key}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"


def _compile(target: Path) -> None:
    """Compile the module into *target* (whole or absent, for other processes)."""
    import shutil
    import subprocess
    import sysconfig

    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("no C compiler (cc, gcc or $CC)")
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").exists():
        raise RuntimeError(f"no Python headers in {include}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}")
    command = [*compiler.split(), "-O2", "-shared", "-fPIC", f"-I{include}",
               f"-I{np.get_include()}", str(SOURCE), "-o", str(partial)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    os.replace(partial, target)


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _put_in_place(module: Any) -> None:
    host = _array.HostArray
    twins = {name: host.__dict__[name] for name in NAMES}
    methods = module.install(host, twins, _MODES, ACTIVE_TRACES, WIDE, PENDING, MUTATION,
                             NUMPY_SCALARS, wrap, SMALL, DEFER_ELEMENTS, ELIDE_BYTES)
    for name, method in methods.items():
        setattr(host, name, method)
    module.fast_subscripts()            # (x[i] without the method lookup)
    _TWINS.update(twins)
    _MODULE[:] = [module]
    module.install_call(_SCALARS, _NO)
    C_CALL[:] = [module.call]
    for cls in _CALLERS:
        _put_call_in_place(cls)


def _put_call_in_place(cls: type) -> None:
    twin = cls.__dict__["__call__"]
    cls.__call__ = _MODULE[0].install_ufunc_call(cls, twin, np.add)  # type: ignore[method-assign]
    _CALL_TWINS[cls] = twin


def calls_of(cls: type) -> None:
    """Give the calls of *cls* (lazyarray's ufunc class: NumPy's ufunc in the
    attribute ``_ufunc``) the C path for host arrays and Python numbers, now
    or when the C methods are installed."""
    if cls not in _CALLERS:
        _CALLERS.append(cls)
        if _MODULE and installed():
            _put_call_in_place(cls)


def _build_and_install(path: Path) -> None:
    try:
        if _MODULE:
            module = _MODULE[0]         # (installed again after uninstall())
        elif path.exists():
            try:
                module = _load(path)
            except (ImportError, OSError):
                # (a damaged or foreign file in the cache: built again)
                path.unlink(missing_ok=True)
                _compile(path)
                module = _load(path)
        else:
            _compile(path)
            module = _load(path)
    except Exception as error:          # (the Python methods stay)
        logger.info("HostArray's C methods not built: %s", error)
        return
    _put_in_place(module)
    logger.info("HostArray's C methods installed from %s", path)


def install() -> None:
    """Install HostArray's C methods: at once where the module is built,
    else after building it (in the background, see the module's notes)."""
    if not _enabled():
        return
    if _BUILDING and native_mode() == "sync":
        wait()
    if installed() or _BUILDING:
        return
    path = _library()
    if path.exists() or native_mode() == "sync":
        _build_and_install(path)
        return
    thread = threading.Thread(target=_build_and_install, args=(path,), daemon=True,
                              name="lazyarray-cdispatch-build")
    _BUILDING.append(thread)
    thread.start()


def wait() -> None:
    """Wait for a build in progress (tests, benchmarks)."""
    while _BUILDING:
        _BUILDING.pop().join()


def uninstall() -> None:
    """Put the Python twins back (the C module stays loaded)."""
    wait()
    host = _array.HostArray
    for name, twin in _TWINS.items():
        setattr(host, name, twin)
    _TWINS.clear()
    for cls, call in _CALL_TWINS.items():
        cls.__call__ = call  # type: ignore[method-assign]
    _CALL_TWINS.clear()
    C_CALL.clear()


__all__ = ["calls_of", "install", "installed", "uninstall", "wait"]
