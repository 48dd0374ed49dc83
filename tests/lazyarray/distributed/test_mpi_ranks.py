"""lazyarray.distributed on several MPI ranks, through ``mpiexec`` (each run
bounded in time): examples/heat_mpi.py on 1 and 2 ranks (4 in the slow
tests) gives the same bits as the single-process lazyarray run and NumPy's
values; reductions and corner halos on 2 ranks (tests/distributed_program.py).

Each rank gets its own PoCL cache and one PoCL thread (two cores)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import ROOT

pytest.importorskip("mpi4py", reason="mpi4py is not installed (the 'scale' extra)")

MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
    "mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")

sys.path.insert(0, str(ROOT / "examples"))
import heat_mpi  # noqa: E402


@pytest.fixture(scope="module")
def pocl_base(tmp_path_factory) -> Path:
    """The PoCL caches of this test process's ranks (rank<k> below it: one
    per rank; the runs of one test process do not overlap)."""
    return tmp_path_factory.mktemp("pocl")


def mpiexec(ranks: int, args: list, pocl_base: Path, timeout: float = 120) -> str:
    env = dict(os.environ, POCL_CACHE_DIR=str(pocl_base), POCL_MAX_PTHREAD_COUNT="1",
               POCL_CPU_MAX_CU_NUM="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def single_process(n: int, steps: int, bc: str) -> np.ndarray:
    from mpi4py import MPI
    decomp, u, _ = heat_mpi.run(MPI.COMM_SELF, n, steps, bc)
    return u.get()


@pytest.mark.parametrize("bc,ranks", [("periodic", (1, 2)), ("dirichlet", (2,))])
def test_heat_mpi_bitwise_across_ranks(bc, ranks, tmp_path, pocl_base):
    n, steps = 24, 6
    reference = single_process(n, steps, bc)
    np.testing.assert_allclose(reference, heat_mpi.numpy_heat(n, steps, bc), rtol=0,
                               atol=1e-12)
    for p in ranks:
        out = tmp_path / f"heat{p}.npy"
        text = mpiexec(p, [ROOT / "examples" / "heat_mpi.py", "--n", n, "--steps", steps,
                           "--bc", bc, "--out", out, "--check"], pocl_base)
        assert f'"ranks": {p}' in text
        assert np.array_equal(np.load(out), reference), f"{p} ranks differ from one"


def test_reductions_and_corners_on_two_ranks(pocl_base):
    text = mpiexec(2, [ROOT / "tests" / "lazyarray" / "distributed" / "mpi_program.py"], pocl_base)
    assert sorted(text.split()) == sorted("OK 0 OK 1".split())


@pytest.mark.slow
@pytest.mark.parametrize("bc", ["periodic", "dirichlet"])
def test_heat_mpi_four_ranks(bc, tmp_path, pocl_base):
    n, steps = 31, 9
    reference = single_process(n, steps, bc)
    out = tmp_path / "heat4.npy"
    mpiexec(4, [ROOT / "examples" / "heat_mpi.py", "--n", n, "--steps", steps, "--bc", bc,
                "--out", out, "--check"], pocl_base, timeout=300)
    assert np.array_equal(np.load(out), reference)
