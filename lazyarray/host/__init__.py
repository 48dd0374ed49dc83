"""The host tier: small or cold work computed at once by NumPy on the host
(its answers are NumPy's by construction), large or repeated work recorded
lazily and compiled for the device.

Public names: HostArray, PendingArray, set_tier, get_tier, tier, host_call.
"""

from lazyarray.host import cdispatch, reading  # noqa: F401  (reading: LazyArray's methods)
from lazyarray.host.array import HostArray
from lazyarray.host.dispatch import host_call
from lazyarray.host.pending import PendingArray
from lazyarray.host.policy import get_tier, set_tier, tier

cdispatch.install()

__all__ = ["HostArray", "PendingArray", "get_tier", "host_call", "set_tier", "tier"]
