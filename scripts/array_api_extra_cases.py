"""Runs array-api-extra's functions on lazyarray (its default tier, and the
device tier, where every operation builds kernels) and on array_api_strict
arrays and compares each result with the same call on NumPy arrays
(array-api-extra's wheel has no tests of its own, so the cases are here:
each public function, with the common arguments).

Usage: python scripts/array_api_extra_cases.py [--record]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the cases: name -> a function of the namespace (with ``xpx``) giving the result
CASES: dict[str, Callable[[Any, Any], Any]] = {}


def case(name: str) -> Callable:
    """Register the case *name*."""
    def register(function: Callable) -> Callable:
        CASES[name] = function
        return function
    return register


_X = [[1.5, -2.0, 3.25], [0.0, 4.0, -1.0]]
_V = [3.0, 1.0, 2.0, 3.0, 5.0, 1.0]
_N = [1.0, float("nan"), 3.0, -2.0]


def _f(xp, data=_X):
    return xp.asarray(data, dtype=xp.float64)


def _i(xp, data=(2, 0, 1, 3, 1)):
    return xp.asarray(list(data), dtype=xp.int64)


case("angle")(lambda xp, x: x.angle(xp.asarray([1 + 1j, -2.0 + 0j, -1j])))
case("apply_where")(lambda xp, x: x.apply_where(
    _f(xp) > 0, (_f(xp),), lambda a: xp.sqrt(a), fill_value=-1.0))
case("apply_where f2")(lambda xp, x: x.apply_where(
    _f(xp) > 0, (_f(xp),), lambda a: xp.sqrt(a), lambda a: -a))
case("at set")(lambda xp, x: x.at(_f(xp))[0, 1:].set(7.0))
case("at add")(lambda xp, x: x.at(_f(xp))[:, 0].add(1.0))
case("at multiply")(lambda xp, x: x.at(_f(xp))[_f(xp) > 0].multiply(3.0))
case("at min")(lambda xp, x: x.at(_f(xp))[1, ...].min(0.5))
case("at max")(lambda xp, x: x.at(_f(xp))[1, ...].max(0.5))
case("at power")(lambda xp, x: x.at(_f(xp))[0, ...].power(2.0))
case("at divide")(lambda xp, x: x.at(_f(xp))[0, ...].divide(2.0))
case("at subtract")(lambda xp, x: x.at(_f(xp))[..., 2].subtract(1.0))
case("atleast_nd")(lambda xp, x: x.atleast_nd(_f(xp, _V), ndim=3))
case("broadcast_shapes")(lambda xp, x: x.broadcast_shapes((2, 1), (1, 3), (3,)))
case("cov")(lambda xp, x: x.cov(_f(xp)))
case("create_diagonal")(lambda xp, x: x.create_diagonal(_f(xp, _V), offset=1))
case("default_dtype")(lambda xp, x: str(x.default_dtype(xp)).rpartition(".")[2])
case("deg2rad")(lambda xp, x: x.deg2rad(_f(xp)))
case("rad2deg")(lambda xp, x: x.rad2deg(_f(xp)))
case("diag_indices")(lambda xp, x: x.diag_indices(3, ndim=2, xp=xp))
case("expand_dims")(lambda xp, x: x.expand_dims(_f(xp), axis=(0, 3)))
case("isclose")(lambda xp, x: x.isclose(_f(xp), _f(xp) + 1e-9))
case("isin")(lambda xp, x: x.isin(_i(xp), xp.asarray([1, 3])))
case("kron")(lambda xp, x: x.kron(_f(xp), _f(xp, [[1.0, 0.0], [0.0, 2.0]])))
case("lazy_apply")(lambda xp, x: x.lazy_apply(lambda a: np.cumsum(a, axis=0), _f(xp),
                                              shape=(2, 3), dtype=xp.float64))
case("nan_to_num")(lambda xp, x: x.nan_to_num(_f(xp, _N), fill_value=0.0))
case("nanmax")(lambda xp, x: x.nanmax(_f(xp, _N)))
case("nanmean")(lambda xp, x: x.nanmean(_f(xp, _N)))
case("nanmin")(lambda xp, x: x.nanmin(_f(xp, _N)))
case("nansum")(lambda xp, x: x.nansum(_f(xp, _N)))
case("nunique")(lambda xp, x: x.nunique(_f(xp, _V)))
case("one_hot")(lambda xp, x: x.one_hot(_i(xp), 4))
case("pad")(lambda xp, x: x.pad(_f(xp), 2))
case("pad constant")(lambda xp, x: x.pad(_f(xp), ((1, 0), (0, 2)), constant_values=9.0))
case("partition")(lambda xp, x: x.partition(_f(xp, _V), 2)[2])
case("argpartition")(lambda xp, x: _f(xp, _V)[x.argpartition(_f(xp, _V), 2)][2])
case("searchsorted")(lambda xp, x: x.searchsorted(_f(xp, sorted(_V)), _f(xp, [2.0, 4.5])))
case("setdiff1d")(lambda xp, x: x.setdiff1d(_f(xp, _V), _f(xp, [1.0, 5.0])))
case("union1d")(lambda xp, x: x.union1d(_f(xp, _V), _f(xp, [7.0, 1.0])))
case("sinc")(lambda xp, x: x.sinc(_f(xp)))
case("tril_indices")(lambda xp, x: x.tril_indices(3, xp=xp))
case("triu_indices")(lambda xp, x: x.triu_indices(3, offset=1, xp=xp))
case("unravel_index")(lambda xp, x: x.unravel_index(_i(xp, (0, 5, 7)), (2, 4)))


def _host(value: Any) -> Any:
    """*value* with arrays as NumPy arrays."""
    if isinstance(value, (tuple, list)):
        return [_host(v) for v in value]
    if isinstance(value, (str, int, float)):
        return value
    try:
        return np.asarray(value)
    except (TypeError, ValueError, RuntimeError):
        return np.from_dlpack(value)


def _same(got: Any, expected: Any) -> None:
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), "not the same structure"
        for g, e in zip(got, expected):
            _same(g, e)
        return
    if isinstance(expected, (str, int, float)):
        assert got == expected, f"{got!r} != {expected!r}"
        return
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)


def run(namespace: Any) -> dict[str, object]:
    """Every case on *namespace* against NumPy: counts and failed cases."""
    import array_api_extra as xpx
    counts: dict[str, object] = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures = []
    for name, function in sorted(CASES.items()):
        try:
            expected = _host(function(np, xpx))
        except Exception as error:
            counts["skipped"] = int(counts["skipped"]) + 1           # type: ignore
            failures.append(f"{name}: skipped, NumPy too raises {type(error).__name__}: "
                            f"{str(error).splitlines()[0][:120] if str(error) else ''}")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = _host(function(namespace, xpx))
            except Exception as error:
                counts["errors"] = int(counts["errors"]) + 1         # type: ignore
                failures.append(f"{name}: {type(error).__name__}: "
                                f"{str(error).splitlines()[0][:200] if str(error) else ''}")
                continue
        try:
            _same(got, expected)
        except AssertionError as error:
            counts["failed"] = int(counts["failed"]) + 1             # type: ignore
            failures.append(f"{name}: wrong result: {str(error).strip().splitlines()[0][:200]}")
            continue
        counts["passed"] = int(counts["passed"]) + 1                 # type: ignore
    counts["failures"] = failures
    return counts


def main() -> None:
    """Run the cases on each namespace and print (and write) the counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true",
                        help="keep the counts in docs/compatibility-clients.json")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import array_api_extra
    import array_api_strict

    import lazyarray
    results = {"lazyarray": run(lazyarray)}
    with lazyarray.tier("device"):
        results["lazyarray (device tier)"] = run(lazyarray)
    results["array_api_strict"] = run(array_api_strict)
    print(f"array-api-extra {array_api_extra.__version__}: {len(CASES)} cases")
    for name, counts in results.items():
        print(f"{name:<24} {counts['passed']:>4} passed {counts['failed']:>3} failed "
              f"{counts['errors']:>3} errors {counts['skipped']:>3} skipped")
        for line in counts["failures"]:                             # type: ignore
            print(f"    {line}")
    if args.record:
        from array_api_report import record
        record("array-api-extra", {
            "version": array_api_extra.__version__, "results": results,
            "command": "python scripts/array_api_extra_cases.py",
            "date": time.strftime("%Y-%m-%d"),
            "tests": f"{len(CASES)} calls of its functions, compared with the same calls "
                     "on NumPy arrays",
            "notes": ["array-api-extra's wheel has no tests; each of its public functions "
                      "is called in `scripts/array_api_extra_cases.py` with common arguments "
                      "and its result compared with NumPy's (shape, dtype, values)."]})

if __name__ == "__main__":
    main()
