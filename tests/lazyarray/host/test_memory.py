"""The allocator setting of lazyarray.host.memory: a loop's temporaries reuse
freed pages instead of faulting in new ones."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lazyarray.host.memory import tune_allocator

#: page faults per step of Conway's Game of Life on a 256 x 256 board (int64:
#: 512 KiB temporaries), in a new process importing lazyarray
_FAULTS = """
import resource
import numpy
import lazyarray as la
def step(grid, np=la):
    n = sum(np.roll(np.roll(grid, i, axis=0), j, axis=1)
            for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
    return ((n == 3) | ((grid == 1) & (n == 2))).astype(int)
start = numpy.random.default_rng(0).random((256, 256)) < 0.3
grid, expected = la.asarray(start).astype(int), start.astype(int)
for _ in range(5):
    grid = step(grid)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    grid = step(grid)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
for _ in range(25):
    expected = step(expected, numpy)
assert (grid.get() == expected).all()
"""


def _faults_per_step(**environ: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(environ, LAZYARRAY_TIER="auto")      # (the suite's default is "device")
    out = subprocess.run([sys.executable, "-c", _FAULTS], env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    return float(out.stdout.strip().splitlines()[-1])


def test_loop_temporaries_reuse_pages() -> None:
    tuned = _faults_per_step()
    system = _faults_per_step(LAZYARRAY_HOST_MALLOC="system")
    assert tuned < 5, tuned
    # (glibc left alone faults in pages of the temporaries: about 900 a step here)
    assert system > 50, system


@pytest.mark.parametrize("environ", [{"LAZYARRAY_HOST_MALLOC": "system"},
                                     {"LAZYARRAY_HOST_MALLOC": " System "},
                                     {"MALLOC_ARENA_MAX": "2"}])
def test_setting_and_users_own_tuning_leave_malloc_alone(environ: dict) -> None:
    assert tune_allocator(environ) is False


def test_set_on_glibc() -> None:
    assert tune_allocator({}) is True
