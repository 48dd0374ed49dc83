"""PoCL's loop-vectorizer remarks for the math-helper tests: whether this
machine has a PoCL CPU device, and the remarks of a child process that
builds and runs kernels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def pocl_cpu() -> bool:
    """Whether a PoCL CPU device is here."""
    import pyopencl as cl
    return any("Portable Computing Language" in p.name and p.get_devices(cl.device_type.CPU)
               for p in cl.get_platforms())


def vectorizer_remarks(child: str, cache: Path, built: int) -> str:
    """Run the program *child* (which builds and runs *built* kernels,
    printing "built" for each on stderr) with PoCL's vectorizer remarks on
    and its own cache folder *cache*; its output, after checking that it
    built them all."""
    env = dict(os.environ, POCL_VECTORIZER_REMARKS="1", POCL_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", child], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("built") == built
    return done.stdout + done.stderr           # (PoCL prints its remarks on stdout)
