"""LazyarrayMPIArrayContext on two MPI ranks through ``mpiexec`` (bounded in
time): exchanges and reductions inside the lazy graph of a compiled step
(tests/arraycontext_mpi_program.py), against NumPy. Each rank gets its own
PoCL cache and one PoCL thread. Skipped, saying why, without arraycontext,
mpi4py or mpiexec."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytest.importorskip(
    "arraycontext", reason="arraycontext is not installed (the 'pde' extra plus "
    "arraycontext from its repository, docs/pde-backend.md): the context's tests did not run")
pytest.importorskip("mpi4py", reason="mpi4py is not installed (the 'scale' extra)")

MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
    "mpiexec")


@pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")
def test_compiled_step_exchanges_and_reduces_on_two_ranks(tmp_path):
    env = dict(os.environ, POCL_CACHE_DIR=str(tmp_path), POCL_MAX_PTHREAD_COUNT="1",
               POCL_CPU_MAX_CU_NUM="1", OMP_NUM_THREADS="1")
    assert MPIEXEC is not None
    proc = subprocess.run([MPIEXEC, "-n", "2", sys.executable,
                           str(ROOT / "tests" / "lazyarray" / "arraycontext" / "mpi_program.py")],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.split() == ["OK", "0", "1"]


def test_the_context_keeps_its_communicator():
    from mpi4py import MPI

    from lazyarray.arraycontext import LazyarrayMPIArrayContext
    actx = LazyarrayMPIArrayContext(MPI.COMM_SELF)
    assert actx.mpi_communicator == MPI.COMM_SELF and actx.mpi_communicator.comm is MPI.COMM_SELF
    clone = actx.clone()
    assert type(clone) is LazyarrayMPIArrayContext and clone.mpi_communicator.comm is MPI.COMM_SELF
    assert "rank 0 of 1" in repr(actx)


def test_grudge_sees_a_distributed_context():
    pytest.importorskip("grudge", reason="grudge is not installed (docs/pde-backend.md)")
    import numpy as np
    from grudge import op
    from grudge.array_context import MPIBasedArrayContext
    from grudge.discretization import make_discretization_collection
    from meshmode.mesh.generation import generate_box_mesh
    from mpi4py import MPI

    from lazyarray.arraycontext import LazyarrayMPIArrayContext
    actx = LazyarrayMPIArrayContext(MPI.COMM_SELF)
    assert isinstance(actx, MPIBasedArrayContext)
    mesh = generate_box_mesh((np.linspace(0, 1, 5),))
    dcoll = make_discretization_collection(actx, mesh, order=2)
    x = actx.thaw(dcoll.nodes())
    # grudge's distributed reductions go through actx.mpi_communicator
    total = actx.to_numpy(op.nodal_sum(dcoll, "vol", x[0]))
    assert total == pytest.approx(actx.to_numpy(actx.np.sum(x[0][0])))
    assert actx.to_numpy(op.nodal_max(dcoll, "vol", x[0])) == pytest.approx(1.0)
