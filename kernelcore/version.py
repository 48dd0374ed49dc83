"""Package version, and a fingerprint of the sources (part of every cache key,
so a changed code generator never reuses stale cached code)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

VERSION = "0.1.0"


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """A digest of kernelcore's own Python sources."""
    digest = hashlib.sha256(VERSION.encode())
    root = Path(__file__).parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
