"""``la.random``: random numbers as lazy arrays.

NumPy's streams by default: the legacy functions (``seed``, ``rand``,
``randn``, ``randint``, ``uniform``, ``normal``, ``choice``, ``shuffle``...,
on NumPy's own global state), :class:`RandomState` and
:func:`default_rng` draw with NumPy's generators on the host, so a script
gives the same numbers as under NumPy, bit for bit; arrays come back as lazy
arrays. Inside ``la.jit`` the same calls draw on the device, with new numbers
at each call (a different stream).

The device stream: :func:`device_rng` returns a :class:`DeviceGenerator`
(Philox4x32-10) whose numbers are computed on the device and fuse with the
kernels that read them (fast for large draws); they are not NumPy's numbers.

NumPy's bit generators and ``SeedSequence`` are here under their names.
"""

import numpy as _np

from lazyarray.random.device import DeviceGenerator, device_rng, philox4x32
from lazyarray.random.numpy_streams import LEGACY_FUNCTIONS as _LEGACY_FUNCTIONS
from lazyarray.random.numpy_streams import Generator, RandomState, default_rng

BitGenerator = _np.random.BitGenerator
SeedSequence = _np.random.SeedSequence
MT19937 = _np.random.MT19937
PCG64 = _np.random.PCG64
PCG64DXSM = _np.random.PCG64DXSM
Philox = _np.random.Philox
SFC64 = _np.random.SFC64

globals().update(_LEGACY_FUNCTIONS)

__all__ = [
    "BitGenerator", "DeviceGenerator", "Generator", "MT19937", "PCG64", "PCG64DXSM",
    "Philox", "RandomState", "SFC64", "SeedSequence", "default_rng", "device_rng",
    "philox4x32"]
__all__ += sorted(_LEGACY_FUNCTIONS)


def __dir__() -> list[str]:
    return sorted(__all__)
