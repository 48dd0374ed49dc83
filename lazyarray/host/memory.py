"""The host tier's allocator setting: the memory of freed arrays is kept for
the next ones.

NumPy takes each array's memory from the C library's ``malloc``. glibc serves
a large block (above a threshold that it moves between 128 KiB and 32 MiB as
blocks are freed) with freshly mapped pages, and hands the free memory at the
top of its heap back to the system beyond a trim threshold (twice that). A
loop of operations on arrays of a few hundred kilobytes then faults in every
page of every temporary: three NumPy operations on a 256 x 256 float64 array
took 352 page faults per step here, and a Game of Life or Gray-Scott step at
that size ran two to three times slower than with the memory kept.

When lazyarray is imported it sets glibc's thresholds so that blocks up to
:data:`MMAP_THRESHOLD` come from the heap and up to :data:`TRIM_THRESHOLD` of
free memory stay there: a loop's temporaries reuse the same pages (0 faults
per step). The setting holds for the whole process (NumPy's arrays made
without lazyarray too); the price is that a process keeps up to
:data:`TRIM_THRESHOLD` of freed memory resident.

``LAZYARRAY_HOST_MALLOC=system`` leaves ``malloc`` as it is, as do the
``MALLOC_*`` variables of glibc's own tuning when the user has set them, and
a C library other than glibc.

Public names: MMAP_THRESHOLD, TRIM_THRESHOLD, tune_allocator.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

logger = logging.getLogger(__name__)

#: the largest block glibc serves from its heap (its own upper bound for this setting)
MMAP_THRESHOLD = 32 << 20
#: the free memory at the top of glibc's heap that it keeps
TRIM_THRESHOLD = 128 << 20
#: mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError, AttributeError):
        return False


def tune_allocator(environ: Mapping[str, str] = os.environ) -> bool:
    """Set glibc's heap thresholds (see the module's text) unless *environ*
    asks otherwise or the C library is not glibc; whether they were set."""
    if environ.get("LAZYARRAY_HOST_MALLOC", "").strip().lower() == "system":
        return False
    if any(name.startswith("MALLOC_") for name in environ) or not _glibc():
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        done = (libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    except (OSError, AttributeError):
        done = False
    logger.debug("glibc malloc: blocks up to %d bytes from the heap, %d bytes of free "
                 "memory kept: %s", MMAP_THRESHOLD, TRIM_THRESHOLD, "set" if done else "refused")
    return done


__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune_allocator"]
