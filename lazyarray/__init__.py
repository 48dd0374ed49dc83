"""lazyarray: lazily evaluated NumPy-style arrays compiled to fused OpenCL kernels.

The ``la`` namespace mirrors NumPy's: ``asarray``, creation functions, ufuncs
(also as ``np.sin(x)`` through ``__array_ufunc__``/``__array_function__``)
with NumPy's broadcasting and type promotion, reductions and scans, views
(slicing, reshapes, transposes, concatenation, padding, ...), array indexing,
contractions (``einsum``, ``matmul``), sorting (on the device) and host-side
searching and set functions. Elementwise work
and views fuse into the kernel of the value that reads them; reductions,
results and values that would be recomputed too often are stored. ``jit``
traces a function once per argument signature and replays its kernels;
``explain`` shows the plan.
"""

from __future__ import annotations

import importlib as _importlib
import logging as _logging
import os as _os
import sys as _sys

import numpy as _np

from lazyarray.api.creation import *
from lazyarray.api.dtypes import *
from lazyarray.api.elementwise import *
from lazyarray.api.linalg import *
from lazyarray.api.manipulation import *
from lazyarray.api.reductions import *
from lazyarray.api.ufuncs import *
from lazyarray.api.statistics import *
from lazyarray.api.numeric import *
from lazyarray.api.histograms import *
from lazyarray.api.joining import *
from lazyarray.api.inplace import *
from lazyarray.api.sorting import *
from lazyarray.api.sets import *
from lazyarray.api.searching import *
from lazyarray.api.numpy_helpers import *
from lazyarray.handle import LazyArray, asarray, copy
from lazyarray.target import Device
from lazyarray.errors import (
    ConcretizationError, DeviceMemoryError, DTypeError, IndexingError, LazyArrayError,
    NotTraceableWarning, ShapeError, ViewWriteError)
from lazyarray.explain import explain, to_dot
from lazyarray.fallback import LazyArrayHostFallbackWarning
from lazyarray.fallback import host_version as _host_version
from lazyarray.jit import jit
from lazyarray.deferred import submodule_getattr as _submodule_getattr
from lazyarray.precision import get_matmul_precision, matmul_precision, set_matmul_precision
import lazyarray.run as _run
from lazyarray.run.progress import set_progress

__version__ = "0.1.0"


# LAZYARRAY_LOG=info (or debug) shows planning, lowering and kernel runs with
# their timings on stderr (kernelcore's records too, once it is imported)
if _os.environ.get("LAZYARRAY_LOG"):
    _logger = _logging.getLogger("lazyarray")
    _logger.setLevel(_os.environ["LAZYARRAY_LOG"].upper())
    if not _logger.handlers:
        _handler = _logging.StreamHandler()
        _handler.setFormatter(_logging.Formatter("[%(name)s] %(message)s"))
        _logger.addHandler(_handler)


def synchronize() -> None:
    """Wait until the device has finished all queued work (nothing to wait
    for before the first device operation)."""
    if "lazyarray.run.device" in _sys.modules:
        _run.synchronize()

__array_api_version__ = "2024.12"

float32, float64, int32, int64, bool_ = (_np.float32, _np.float64, _np.int32, _np.int64,
                                         _np.bool_)
complex64, complex128, uint8, int8, int16, uint32 = (
    _np.complex64, _np.complex128, _np.uint8, _np.int8, _np.int16, _np.uint32)
uint16, uint64 = _np.uint16, _np.uint64

e = _np.e  # type: ignore[misc]  # (mypy reports a deleted "e" from the star imports above: a false report)
pi, inf, nan, newaxis = _np.pi, _np.inf, _np.nan, None

from lazyarray.api import (
    creation as _creation, dtypes as _dtypes, elementwise as _elementwise,
    histograms as _histograms, inplace as _inplace, joining as _joining, linalg as _linalg,
    manipulation as _manipulation, numeric as _numeric, numpy_helpers as _numpy_helpers,
    reductions as _reductions,
    searching as _searching, sets as _sets, sorting as _sorting, statistics as _statistics,
    ufuncs as _ufuncs)

__all__ = sorted({
    "LazyArray", "asarray", "copy", "jit", "synchronize", "set_progress", "explain", "to_dot",
    "Device",
    "matmul_precision", "set_matmul_precision", "get_matmul_precision",
    "LazyArrayError", "ShapeError", "DTypeError", "IndexingError", "ConcretizationError",
    "ViewWriteError", "DeviceMemoryError", "LazyArrayHostFallbackWarning", "NotTraceableWarning",
    "__version__",
    "__array_api_version__",
    "float32", "float64", "int32", "int64", "bool_", "complex64", "complex128", "uint8", "int8",
    "int16", "uint32", "uint16", "uint64", "bool", "e", "pi", "inf", "nan", "newaxis",
    *_creation.__all__, *_dtypes.__all__, *_elementwise.__all__, *_linalg.__all__,
    *_manipulation.__all__, *_reductions.__all__, *_ufuncs.__all__, *_statistics.__all__,
    *_numeric.__all__, *_histograms.__all__, *_joining.__all__, *_inplace.__all__,
    *_sorting.__all__, *_sets.__all__, *_searching.__all__, *_numpy_helpers.__all__})


#: submodules loaded when first read (PEP 562): NumPy's namespaces (``la.random``
#: and ``la.fft`` import NumPy's random and fft modules), ``distributed`` and
#: ``dask`` their optional engines
_ON_FIRST_USE = frozenset(["random", "fft", "linalg", "lib", "distributed", "dask"])
_load_submodule = _submodule_getattr(__name__)
#: NumPy's submodules lazyarray has no version of, NumPy's own under its names
_NUMPY_MODULES = frozenset(["ma", "polynomial", "testing", "emath", "exceptions", "char",
                            "strings", "rec", "dtypes", "typing", "ctypeslib"])


def __getattr__(name: str):
    """A submodule of :data:`_ON_FIRST_USE`, loaded now (those of
    :data:`_NUMPY_MODULES`: NumPy's); else NumPy's
    function of that name, which lazyarray has no version of: run on the host
    (:mod:`lazyarray.fallback`), with a warning the first time."""
    if name in _ON_FIRST_USE:
        return _load_submodule(name)
    if name in _NUMPY_MODULES:
        # (NumPy's own, on the host: np.testing.assert_allclose(x, y) and
        # np.polynomial.Polynomial.fit(x, y, 4) read lazy arrays' values)
        return getattr(_np, name)
    func = getattr(_np, name, None)
    if name.startswith("_") or func is None or not callable(func) or isinstance(func, type):
        raise AttributeError(f"module 'lazyarray' has no attribute {name!r}")
    return _host_version(func, f"np.{name}")


# the Array API's name of the boolean dtype (last: the module uses the builtin above)
bool = _np.bool_

# the host tier in front of the namespace's functions (small work runs by NumPy)
from lazyarray.host import HostArray, get_tier, set_tier, tier
from lazyarray.host.memory import tune_allocator as _tune_allocator
from lazyarray.host.namespace import install as _install_host_tier

_install_host_tier(globals(), _np, __all__)
# freed array memory kept for the next arrays (LAZYARRAY_HOST_MALLOC=system: not)
_tune_allocator()
__all__ += ["HostArray", "get_tier", "set_tier", "tier"]

# NumPy's protocols and the namespace's methods (x.nonzero(), ...) on lazy
# arrays, answered by this module now that it is complete
from lazyarray import protocols as _protocols

_protocols.install(_sys.modules[__name__])
# einops finds lazyarray's backend (once einops is imported; einops is optional)
from lazyarray import einops_hook as _einops_hook

_einops_hook.register()
