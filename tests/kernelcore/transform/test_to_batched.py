"""to_batched: a kernel run over a batch in one launch; the batch-varying
arrays (and temporaries computed from them) get a leading batch axis, the
other data stays shared. Results compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
from tests.helpers import host


def _matvec():
    knl = lp.make_kernel(
        "{[i, j]: 0<=i, j<n}",
        """
        <> scale = 2*s[0]
        <> row = sum(j, a[i, j]*x[j])
        out[i] = scale*row
        """)
    return lp.add_and_infer_dtypes(knl, {"a,x,s": np.float64})


@pytest.mark.parametrize("sequential", [False, True])
def test_batched_matvec_matches_numpy(queue, sequential):
    # (a private temporary with a batch axis needs a constant batch count)
    nbatches = "nb" if sequential else 3
    bknl = lp.to_batched(_matvec(), nbatches, "x,out", sequential=sequential)
    entry = bknl.default_entrypoint
    assert entry.temporary_variables["scale"].shape == ()
    if not sequential:
        assert len(entry.temporary_variables["row"].shape) == 1
    rng = np.random.default_rng(6)
    a, x, s = rng.random((5, 5)), rng.random((3, 5)), np.array([1.5])
    _, (out,) = bknl(queue, a=a, x=x, s=s)
    np.testing.assert_allclose(host(out), 3.0 * x @ a.T)


def test_batch_of_fixed_size():
    bknl = lp.to_batched(_matvec(), 4, ["x", "out"], batch_iname_prefix="b")
    entry = bknl.default_entrypoint
    assert "b" in entry.all_inames()
    assert all("b" in insn.within_inames for insn in entry.instructions)


def test_scalar_argument_cannot_vary():
    knl = lp.make_kernel("{[i]: 0<=i<n}", "out[i] = c*x[i]",
                         [lp.ValueArg("c", np.float64), ...])
    with pytest.raises(lp.LoopyError, match="scalar"):
        lp.to_batched(knl, "nb", "c")
