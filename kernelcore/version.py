"""Package version, and a fingerprint of the sources (part of every cache key,
so a changed code generator never reuses stale cached code)."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

VERSION = "0.1.0"


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
