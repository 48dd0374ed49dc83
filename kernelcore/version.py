"""Package version, and a fingerprint of the sources (part of every cache key,
so a changed code generator never reuses stale cached code)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

VERSION = "0.1.0"


def tree_fingerprint(root: Path, seed: str = "") -> str:
    """A digest of the Python files below *root*: their paths, sizes and
    modification times (reading their contents would cost a few milliseconds
    at every process start)."""
    digest = hashlib.sha256(seed.encode())
    for path in sorted(root.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()} {stat.st_size} "
                      f"{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """A digest of kernelcore's own Python sources."""
    return tree_fingerprint(Path(__file__).parent, VERSION)
