"""Draws of NumPy's streams inside ``la.jit``: on the device.

A NumPy stream draws on the host, which a trace cannot repeat: the numbers of
the call that traced would be frozen into every later call. While ``la.jit``
traces, ``la.random.rand(n)``, ``rng.normal(size=n)`` and the other draws
listed in :data:`ON_DEVICE` build their numbers with the device stream (the
Philox generator of :mod:`lazyarray.random.device`) instead: the key, stream
and offset of each draw are arguments of every call of the jitted function,
taken at the call from a device stream that stands for the NumPy stream. That
device stream is made from the NumPy stream's state (a new one when the
state changes: a new seed, ``set_state``, draws on the host) and its offset
advances over the calls, so each call draws new numbers, and a script that
seeds gets the same numbers on every run. They are not NumPy's numbers.

Public names: ON_DEVICE, draw_on_device, refuse_on_host.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from lazyarray.errors import ConcretizationError, user_line
from lazyarray.handle import LazyArray
from lazyarray.random.device import DeviceGenerator
from lazyarray.tracing import TRACING

__all__ = ["ON_DEVICE", "draw_on_device", "refuse_on_host"]

#: NumPy's names that draw the same kind of numbers as a device method
_SAME_AS = {"rand": "random", "random_sample": "random", "ranf": "random",
            "sample": "random", "randn": "standard_normal", "randint": "integers"}

#: the draws of NumPy's streams that ``la.jit`` makes on the device
ON_DEVICE = frozenset({
    *_SAME_AS, "random", "uniform", "standard_normal", "normal", "exponential",
    "standard_exponential", "integers", "random_integers", "choice", "lognormal",
    "laplace", "logistic", "gumbel", "rayleigh", "weibull", "pareto", "power",
    "standard_cauchy", "geometric"})


class _Standin(DeviceGenerator):
    """The device stream of the NumPy stream *owner* in a trace: each call of
    the jitted function draws from *owner*'s device stream as it is then."""

    def __init__(self, owner: Any) -> None:      # (no state of its own)
        self._owner = owner

    def _draw_state(self, n: int) -> tuple[int, int, int, int, int]:
        return self._owner._device_stream()._draw_state(n)


def refuse_on_host(name: str) -> None:
    """Raise for the draw *name* of a NumPy stream inside ``la.jit``, which
    only NumPy makes (on the host)."""
    raise ConcretizationError(
        f"la.random {name}() draws with NumPy's stream on the host, which la.jit "
        f"cannot repeat at each call of {TRACING.names[-1]}() (a trace would freeze "
        f"its first call's numbers into every later call).\n  at {user_line()}\n"
        f"Draw it outside the jitted function and pass the array in. Inside la.jit "
        f"these draw on the device instead (a different stream, new numbers at each "
        f"call): {', '.join(sorted(ON_DEVICE))}; choice only with replacement and "
        f"without p.")


def draw_on_device(owner: Any, name: str, bound: inspect.BoundArguments) -> LazyArray:
    """The draw ``name(...)`` of the NumPy stream *owner* (its arguments bound
    to NumPy's signature, ``self`` first) made on the device, inside a trace."""
    if name not in ON_DEVICE:
        refuse_on_host(name)
    bound.apply_defaults()
    args = dict(list(bound.arguments.items())[1:])
    device = _Standin(owner)
    if name in ("rand", "randn"):
        args = {"size": args["dims"]}
    elif name == "random_integers":
        low, high = (1, args["low"]) if args["high"] is None else (args["low"], args["high"])
        return device.integers(low, high, args["size"], endpoint=True)
    if args.pop("out", None) is not None:
        raise ConcretizationError(f"la.random {name}(out=...) inside la.jit: use the "
                                  f"array it returns\n  at {user_line()}")
    method = getattr(device, _SAME_AS.get(name, name))
    accepted = inspect.signature(method).parameters
    result = method(**{k: v for k, v in args.items() if k in accepted})
    dtype = args.get("dtype")
    if "dtype" not in accepted and dtype is not None and np.dtype(dtype) != result.dtype:
        result = result.astype(dtype)
    return result
