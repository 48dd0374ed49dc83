"""Differential fuzzing of lazyarray against NumPy (see ``fuzz_graphs.py``).

* ``test_fuzz_fast``: a fixed seed, 40 random graphs (the next 80 ``slow``);
* ``test_fuzz_many``: 10^4 graphs over ten seeds (``slow``; ``-k fuzz_many``
  and the seed id split it);
* both once with the device's own layouts and once with a GPU's, run on the
  device at hand (the GPU's first 20 graphs by default);
* the oracle itself is checked without OpenCL: NumPy against itself gives no
  mismatch, and bugs injected into a NumPy stand-in are found.

Run the fuzzer by hand with ``python -m tests.fuzz_graphs --seed S --n N``.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from tests import fuzz_graphs as F


def _report(mismatches, limit=15):
    by = {}
    for mm in mismatches:
        by.setdefault(f"{mm.kind} {mm.signature}", []).append(mm)
    lines = [f"{len(mismatches)} mismatches in {len(by)} classes:"]
    for key, mms in sorted(by.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(mms):4d}  {key}  (graphs {[m.index for m in mms[:8]]})")
    lines.append("")
    for mms in list(by.values())[:limit]:
        lines.append(str(mms[0]))
    return "\n".join(lines)


@pytest.fixture(params=["cpu", "gpu"], ids=["cpu-layouts", "gpu-layouts"])
def layouts(request, monkeypatch):
    """The device's own layouts, or a GPU's (work-group rows and trees,
    tiles, stencils, narrow rows) run on the device at hand."""
    if request.param == "gpu":
        from lazyarray import target
        monkeypatch.setattr(target, "device_profile", lambda device: ("gpu", 4))
    return request.param


#: graphs 0-39 of the fixed seed by default (0-19 with a GPU's layouts);
#: graphs 40-119 are ``slow`` (each graph compiles kernels of its own: 120
#: graphs took a minute of the suite)
@pytest.mark.parametrize("start, n_graphs", [
    (0, 40), pytest.param(40, 80, marks=pytest.mark.slow)])
def test_fuzz_fast(layouts, start, n_graphs):
    if layouts == "gpu" and start == 0:
        n_graphs = 20
    mms = F.run_fuzz(seed=20240601, n_graphs=n_graphs, start=start)
    assert not mms, _report(mms)


@pytest.mark.slow
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("seed", range(1000, 1010))
def test_fuzz_many(layouts, seed):
    mms = F.run_fuzz(seed=seed, n_graphs=1000)
    assert not mms, _report(mms)


def test_float16_refused():
    import lazyarray as la
    with la.tier("device"):     # (on the host tier NumPy computes float16)
        with pytest.raises(la.DTypeError, match="float16"):
            la.asarray(np.ones(3, np.float16))
        x = la.asarray(np.arange(3, dtype=np.int8))
        with pytest.raises(la.DTypeError, match="float16"):
            np.sin(x)
        with pytest.raises(la.DTypeError, match="float16"):
            x.astype(np.float16)


# {{{ the oracle, on NumPy stand-ins (no OpenCL)

class _Dummy:
    pass


def _numpy_namespace(array_class=None):
    """A stand-in for ``lazyarray``: NumPy's namespace, arrays of *array_class*."""
    ns = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    if array_class is not None:
        ns.asarray = lambda a: np.asarray(a).view(array_class)
    ns.LazyArray = _Dummy
    return ns


def test_oracle_numpy_against_itself():
    """NumPy checked against NumPy: the oracle's bounds give no false positive."""
    bad = []
    for index in range(250):
        prog = F.generate(7, index)
        if prog.expect_float16:       # NumPy computes it; lazyarray must refuse
            continue
        mm = F.check_program(prog, localize=False, la=_numpy_namespace())
        if mm is not None:
            bad.append(mm)
    assert not bad, _report(bad)


def _bugged(ufunc_name, method, change):
    class Bugged(np.ndarray):
        def __array_ufunc__(self, ufunc, meth, *inputs, **kwargs):
            inputs = [np.asarray(i) if isinstance(i, Bugged) else i for i in inputs]
            out = getattr(ufunc, meth)(*inputs, **kwargs)
            if ufunc.__name__ == ufunc_name and meth == method:
                out = change(inputs, out)
            if isinstance(out, np.ndarray) and out.ndim:
                return out.view(Bugged)
            return out
    return Bugged


def _next_up_f32(inputs, out):
    out = np.asarray(out)
    if out.dtype == np.float32:
        out = np.where(out != 0, np.nextafter(out, np.float32(np.inf)), out).astype(np.float32)
    return out


def _max_ignores_nan(inputs, out):
    x = np.asarray(inputs[0])
    if x.dtype.kind == "f" and x.size and np.isnan(out).any():
        return np.fmax.reduce(x, axis=None)
    return out


def _no_wrap_u8(inputs, out):
    out = np.asarray(out)
    if out.dtype == np.uint8:
        return out.astype(np.uint16)
    return out


@pytest.mark.parametrize("bug", [("add", "__call__", _next_up_f32),
                                 ("maximum", "reduce", _max_ignores_nan),
                                 ("multiply", "__call__", _no_wrap_u8)],
                         ids=["f32-add-1ulp", "max-ignores-nan", "u8-mul-dtype"])
def test_oracle_finds_injected_bugs(bug):
    la = _numpy_namespace(_bugged(*bug))
    found = []
    for index in range(600):
        prog = F.generate(3, index)
        mm = F.check_program(prog, localize=False, la=la)
        if mm is not None:
            found.append(mm)
            if len(found) >= 2:
                break
    assert found, f"injected bug {bug[0]}.{bug[1]} not found"

# }}}
