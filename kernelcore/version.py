"""Package version, the language versions kernels may ask for (loopy's
``lang_version=``), and a fingerprint of the sources (part of every cache key,
so a changed code generator never reuses stale cached code).

Public names: VERSION, VERSION_STATUS, VERSION_TEXT, KERNELCORE_VERSION,
LOOPY_USE_LANGUAGE_VERSION_2017_2, LOOPY_USE_LANGUAGE_VERSION_2018_1,
LOOPY_USE_LANGUAGE_VERSION_2018_2, MOST_RECENT_LANGUAGE_VERSION, FALLBACK_LANGUAGE_VERSION,
LANGUAGE_VERSION_SYMBOLS, DATA_MODEL_VERSION, tree_fingerprint,
source_fingerprint.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

VERSION = "0.1.0"
#: the version as a tuple of ints, loopy-style
KERNELCORE_VERSION = tuple(int(p) for p in VERSION.split("."))
VERSION_STATUS = ""
VERSION_TEXT = VERSION + VERSION_STATUS

# {{{ language versions (loopy's names; all of them select today's semantics)

#: the language versions a kernel may request with ``make_kernel(lang_version=...)``
LOOPY_USE_LANGUAGE_VERSION_2017_2 = (2017, 2)
LOOPY_USE_LANGUAGE_VERSION_2018_1 = (2018, 1)
LOOPY_USE_LANGUAGE_VERSION_2018_2 = (2018, 2)
LANGUAGE_VERSION_SYMBOLS = ["LOOPY_USE_LANGUAGE_VERSION_2018_2",
                            "LOOPY_USE_LANGUAGE_VERSION_2018_1",
                            "LOOPY_USE_LANGUAGE_VERSION_2017_2"]
MOST_RECENT_LANGUAGE_VERSION = LOOPY_USE_LANGUAGE_VERSION_2018_2
FALLBACK_LANGUAGE_VERSION = LOOPY_USE_LANGUAGE_VERSION_2017_2
#: bumped when the layout of pickled kernels changes
DATA_MODEL_VERSION = f"kernelcore-{VERSION}"

# }}}


def tree_fingerprint(root: Path, seed: str = "") -> str:
    """A digest of the Python files below *root*: their paths, sizes and
    modification times (reading their contents would cost a few milliseconds
    at every process start)."""
    entries = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        relative = os.path.relpath(folder, root)
        for name in files:
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                entries.append(f"{relative}/{name} {stat.st_size} {stat.st_mtime_ns}\n")
    digest = hashlib.sha256(seed.encode())
    digest.update("".join(sorted(entries)).encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """A digest of kernelcore's own Python sources."""
    return tree_fingerprint(Path(__file__).parent, VERSION)
