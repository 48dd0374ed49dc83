"""Which tier runs a jitted function's calls on small host arrays, measured
per signature: its compiled program, or the function itself on NumPy.

A function under ``la.jit`` called with host arrays (whose elements together
fit the host tier, :func:`~lazyarray.host.policy.host_limit`) under the
``"auto"`` tier runs the first calls of a signature compiled (the first one
traces and builds, so a function that cannot be traced says so at once; the
results are read back into host arrays), then as many calls eagerly on the
host tier (NumPy), each timed; the tier of the faster call (the best of
each tier's, so that a pause of the machine does not decide) runs the
signature's later calls. A function that draws random numbers stays compiled,
so that its stream does not depend on the tier chosen. ``LAZYARRAY_TIER``,
:func:`~lazyarray.host.policy.set_tier` and ``la.tier`` blocks force a tier.

Public names: TierTrial, COMPILED_TRIALS, HOST_TRIALS, host_arguments, to_host.
"""

from __future__ import annotations

from typing import Any

from lazyarray.handle import LazyArray
from lazyarray.host.array import HostArray
from lazyarray.host.dispatch import holding
from lazyarray.host.policy import host_limit

#: timed compiled calls of a signature (after its first, which traces and builds)
COMPILED_TRIALS = 3
#: timed calls of a signature on the host tier
HOST_TRIALS = 3


class TierTrial:
    """The calls of one signature so far, by tier, and the tier chosen."""

    __slots__ = ("compiled_calls", "compiled_best", "host_calls", "host_best", "choice")

    def __init__(self) -> None:
        self.compiled_calls = 0
        #: seconds of the fastest timed call, by tier
        self.compiled_best = float("inf")
        self.host_calls = 0
        self.host_best = float("inf")
        #: ``"compiled"`` or ``"host"`` once chosen, else None
        self.choice: str | None = None

    def next_tier(self) -> str:
        """The tier the next call runs on."""
        if self.choice is not None:
            return self.choice
        return "compiled" if self.compiled_calls <= COMPILED_TRIALS else "host"

    def record(self, tier: str, seconds: float) -> None:
        """Count a call on *tier* that took *seconds* (a signature's first
        compiled call, which traced and built, is not timed); after the last
        trial call, choose the faster tier."""
        if tier == "compiled":
            if self.compiled_calls:
                self.compiled_best = min(self.compiled_best, seconds)
            self.compiled_calls += 1
            return
        self.host_calls += 1
        self.host_best = min(self.host_best, seconds)
        if self.host_calls >= HOST_TRIALS:
            self.choice = "host" if self.host_best <= self.compiled_best else "compiled"


def host_arguments(leaves: list[Any], is_array: Any) -> list[HostArray] | None:
    """The host arrays among a call's *leaves* when every array leaf
    (``is_array``) is one and together they fit the host tier, else None."""
    arrays = []
    total = 0
    for leaf in leaves:
        if is_array(leaf):
            if type(leaf) is not HostArray:
                return None
            arrays.append(leaf)
            total += leaf.size
    limit = host_limit()
    if not arrays or (limit is not None and total > limit):
        return None
    return arrays


def to_host(value: Any) -> Any:
    """*value* (an array, or a list, tuple or dict of them) with its device
    arrays read back into host arrays."""
    if type(value) is LazyArray:
        return holding(value._host())
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_host(v) for v in value)
    if isinstance(value, dict):
        return {k: to_host(v) for k, v in value.items()}
    return value
